"""Credits as exact integers: amounts cross the API as JSON numbers or decimal strings and are kept
in integer units of 1/``CREDIT_SCALE`` credit, never as floats.

Example:
    >>> from_units(to_units("2.5"))
    2.5
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from svc_api.core.errors import Invalid

CREDIT_SCALE = 10_000
Amount = int | str | Decimal | float


def to_units(amount: Amount) -> int:
    """Credits (number or decimal string) to integer units; more than 4 decimals is an error.

    Example:
        >>> to_units("1.25"), to_units(3), to_units(Decimal("0.0001"))
        (12500, 30000, 1)
    """
    try:
        value = Decimal(str(amount)) if isinstance(amount, float) else Decimal(amount)
    except (InvalidOperation, TypeError, ValueError):
        raise Invalid(f"amount must be a number, got {amount!r}") from None
    if not value.is_finite():
        raise Invalid(f"amount must be finite, got {amount!r}")
    units = value * CREDIT_SCALE
    if units != units.to_integral_value():
        raise Invalid(f"amount {amount!r} has more than 4 decimals")
    return int(units)


def from_units(units: int) -> int | float:
    """Integer units to the JSON number of credits (an int when whole).

    Example:
        >>> from_units(12500), from_units(30000)
        (1.25, 3)
    """
    whole, rest = divmod(int(units), CREDIT_SCALE)
    return whole if rest == 0 else float(Decimal(int(units)) / CREDIT_SCALE)
