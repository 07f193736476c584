"""Money on the wire of ``/education/v1``: ``{amount_minor: integer, currency: "USD"}``; a decimal
or a string amount is a 400.

Example:
    >>> money(1999, "USD")
    {'amount_minor': 1999, 'currency': 'USD'}
"""

from __future__ import annotations

import re
from typing import Any

from svc_api.core.errors import Invalid

_CURRENCY = re.compile(r"[A-Z]{3}")
_DIGITS = re.compile(r"[0-9]{1,13}")


def money(amount_minor: int, currency: str) -> dict[str, Any]:
    """The one shape of money on the wire."""
    return {"amount_minor": int(amount_minor), "currency": currency}


def parse_money(value: object, field: str) -> tuple[int, str]:
    """``{amount_minor, currency}`` from a request: an integer amount of at least 0 and an ISO 4217
    code; a decimal, a string amount or any other shape is a 400 naming ``field``.

    Example:
        >>> parse_money({"amount_minor": 500, "currency": "USD"}, "price")
        (500, 'USD')
        >>> try:
        ...     parse_money({"amount_minor": 5.5, "currency": "USD"}, "price")
        ... except Invalid as exc:
        ...     print(exc.status, exc.message[:29])
        400 price.amount_minor must be an
    """
    if not isinstance(value, dict) or set(value) != {"amount_minor", "currency"}:
        raise Invalid(f"{field} must be an object {{amount_minor, currency}}")
    amount, currency = value["amount_minor"], value["currency"]
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise Invalid(f"{field}.amount_minor must be an integer of minor units (no decimals), got {amount!r}")
    if amount < 0 or amount > 10**12:
        raise Invalid(f"{field}.amount_minor must be between 0 and 10^12, got {amount}")
    if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
        raise Invalid(f"{field}.currency must be an ISO 4217 code such as USD, got {currency!r}")
    return amount, currency


def minor_units(value: str | None, field: str) -> int | None:
    """A query amount in minor units: digits only (``12.50`` or ``-1`` is a 400).

    Example:
        >>> minor_units("1500", "max_price"), minor_units(None, "max_price")
        (1500, None)
    """
    if value is None:
        return None
    if not _DIGITS.fullmatch(value):
        raise Invalid(f"{field} must be a whole number of minor units (no decimals), got {value!r}")
    return int(value)
