"""The arithmetic of payouts, in integers of minor units only: periods (calendar months, UTC),
percentages as basis points rounded half up per ledger entry, statement figures, and currency
conversion at a rate held as an integer of millionths.

Deductions of a statement (ours):

- ``refunds``: every refund entry of the period (refunds of earlier months' sales included);
- ``commission``: the platform's ``EDU_COMMISSION_PCT`` of each sale, rounded half up per sale and
  given back exactly on that order's refund (the refund entry carries minus the same amount);
- ``payment_fees``: ``EDU_PAYMENT_FEE_PCT`` of each paid sale, rounded half up per sale, kept on refund
  (the provider does not return it).

``net = gross - refunds - commission - payment_fees``, and the sum of the figures of the entries.

Example:
    >>> period_bounds("2026-10")
    (1790812800, 1793491200)
    >>> share(4900, 2000), share(1500, 250), share(1, 5000)
    (980, 38, 1)
    >>> convert(2000, "USD", "TRY", 41_250_000)
    82500
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

_PERIOD = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
MICROS = 1_000_000
ZERO_DECIMAL = frozenset(
    {
        "BIF",
        "CLP",
        "DJF",
        "GNF",
        "ISK",
        "JPY",
        "KMF",
        "KRW",
        "PYG",
        "RWF",
        "UGX",
        "VND",
        "VUV",
        "XAF",
        "XOF",
        "XPF",
    }
)
THREE_DECIMALS = frozenset({"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"})


def exponent(currency: str) -> int:
    """Digits of the minor unit of an ISO 4217 currency (2 unless listed otherwise).

    Example:
        >>> exponent("USD"), exponent("JPY"), exponent("KWD")
        (2, 0, 3)
    """
    return 0 if currency in ZERO_DECIMAL else 3 if currency in THREE_DECIMALS else 2


def parse_period(text: str) -> tuple[int, int]:
    """(year, month) of ``YYYY-MM``; ValueError otherwise.

    Example:
        >>> parse_period("2026-11")
        (2026, 11)
    """
    match = _PERIOD.fullmatch(text or "")
    if match is None:
        raise ValueError(f"a period is a month written YYYY-MM, got {text!r}")
    return int(match.group(1)), int(match.group(2))


def period_bounds(period: str) -> tuple[int, int]:
    """[start, end) of a period in Unix seconds (UTC)."""
    year, month = parse_period(period)
    start = dt.datetime(year, month, 1, tzinfo=dt.UTC)
    end = dt.datetime(year + month // 12, month % 12 + 1, 1, tzinfo=dt.UTC)
    return int(start.timestamp()), int(end.timestamp())


def period_of(at: int) -> str:
    """The period holding the instant ``at``.

    Example:
        >>> period_of(1_790_812_800), period_of(1_790_812_799)
        ('2026-10', '2026-09')
    """
    return dt.datetime.fromtimestamp(int(at), dt.UTC).strftime("%Y-%m")


def previous_period(at: int) -> str:
    """The last period that closed before the instant ``at``.

    Example:
        >>> previous_period(1_795_600_000)  # 2026-11-25
        '2026-10'
    """
    return period_of(period_bounds(period_of(at))[0] - 1)


def day_of(at: int) -> int:
    """The day of the month (UTC) of the instant ``at``."""
    return dt.datetime.fromtimestamp(int(at), dt.UTC).day


def basis_points(pct: float) -> int:
    """A percentage as whole basis points.

    Example:
        >>> basis_points(20), basis_points(2.9)
        (2000, 290)
    """
    return round(float(pct) * 100)


def share(amount_minor: int, bp: int) -> int:
    """``bp`` basis points of a non-negative amount, rounded half up to the minor unit."""
    return (2 * int(amount_minor) * int(bp) + 10_000) // 20_000


@dataclass(frozen=True)
class Figures:
    """A statement's figures in minor units of one currency."""

    orders: int = 0
    refunded_orders: int = 0
    gross: int = 0
    refunds: int = 0
    commission: int = 0
    fees: int = 0

    @property
    def net(self) -> int:
        return self.gross - self.refunds - self.commission - self.fees


def statement_figures(entries: Iterable[Any], commission_bp: int, fee_bp: int) -> Figures:
    """The figures of ledger entries (``kind``, ``amount_minor``) of one seller, period and currency.

    Example:
        >>> from types import SimpleNamespace as E
        >>> f = statement_figures([E(kind="sale", amount_minor=4900), E(kind="sale", amount_minor=1500),
        ...                        E(kind="refund", amount_minor=-4900)], 2000, 300)
        >>> (f.gross, f.refunds, f.commission, f.fees, f.net)
        (6400, 4900, 300, 192, 1008)
    """
    orders = refunded = gross = refunds = commission = fees = 0
    for entry in entries:
        amount = int(entry.amount_minor)
        if entry.kind == "sale":
            orders, gross = orders + 1, gross + amount
            commission += share(amount, commission_bp)
            fees += share(amount, fee_bp) if amount > 0 else 0
        elif entry.kind == "refund":
            refunded, refunds = refunded + 1, refunds - amount
            commission -= share(-amount, commission_bp)
    return Figures(orders, refunded, gross, refunds, commission, fees)


def parse_rate(text: str) -> int:
    """A positive exchange rate with at most six decimals, as millionths; ValueError otherwise.

    Example:
        >>> parse_rate("41.25")
        41250000
    """
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"a rate is a positive decimal number such as 41.25, got {text!r}") from None
    micros = value * MICROS
    if not value.is_finite() or value <= 0 or micros != micros.to_integral_value() or micros > 10**15:
        raise ValueError(f"a rate is a positive number with at most six decimals, got {text!r}")
    return int(micros)


def convert(amount_minor: int, base: str, quote: str, rate_micros: int, *, inverse: bool = False) -> int:
    """``amount_minor`` of ``base`` in ``quote`` at ``rate_micros`` (quote per base, or base per quote
    when ``inverse``), rounded half up to the quote's minor unit (amounts of at least 0)."""
    num = int(amount_minor) * 10 ** exponent(quote)
    den = 10 ** exponent(base)
    if inverse:
        num, den = num * MICROS, den * int(rate_micros)
    else:
        num, den = num * int(rate_micros), den * MICROS
    return (2 * num + den) // (2 * den)
