"""Market calendars of the performance statistics: how many candles of a timeframe make a year of
a market's trading (crypto 365.25 days of 24 h, stocks and ETFs 252 sessions of 6.5 h, forex and
commodities 260 days of 24 h), and a yearly rate as the rate of one candle.

Example:
    >>> periods_per_year(86_400_000, "forex")
    260.0
"""

from __future__ import annotations

import functools
import math

MS_PER_DAY = 86_400_000
MS_PER_HOUR = 3_600_000
DAYS_PER_YEAR = 365.25

#: Market prefix -> (trading days per year, trading hours per day).
CALENDARS: dict[str, tuple[float, float]] = {
    "crypto": (365.25, 24.0),
    "us_stocks": (252.0, 6.5),
    "stocks": (252.0, 6.5),
    "etfs": (252.0, 6.5),
    "index": (252.0, 6.5),
    "forex": (260.0, 24.0),
    "commodities": (260.0, 24.0),
    "cfd": (260.0, 24.0),
    "futures": (252.0, 23.0),
}


def calendar_of(market: str | None) -> tuple[float, float]:
    """(trading days per year, trading hours per day) of a market, by its name's prefix
    (``crypto_futures`` is crypto, ``us_stocks_yahoo`` stocks); crypto's for an unknown market.

    Example:
        >>> calendar_of("us_stocks_yahoo"), calendar_of("crypto_futures")
        ((252.0, 6.5), (365.25, 24.0))
    """
    name = market or "crypto"
    for prefix in sorted(CALENDARS, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + "_"):
            return CALENDARS[prefix]
    return CALENDARS["crypto"]


@functools.lru_cache(maxsize=256)
def periods_per_year(tf_ms: int, market: str | None = "crypto") -> float:
    """Candles of ``tf_ms`` in a year of the market's calendar.

    Intraday candles: trading days x ``ceil(hours per day / candle length)``; a candle of one day or
    more: trading days / its length in days (a weekly crypto candle: 365.25 / 7).

    Example:
        >>> hour, day = 3_600_000, 86_400_000
        >>> periods_per_year(hour), periods_per_year(hour, "us_stocks"), periods_per_year(day)
        (8766.0, 1764.0, 365.25)
    """
    if tf_ms <= 0:
        raise ValueError(f"timeframe length must be positive, got {tf_ms} ms")
    days, hours = calendar_of(market)
    if tf_ms < MS_PER_DAY:
        return days * math.ceil(hours * MS_PER_HOUR / tf_ms - 1e-9)
    return days / (tf_ms / MS_PER_DAY)


def period_rate(annual_rate: float, periods: float) -> float:
    """A yearly rate as the compounding rate of one period.

    Example:
        >>> round(period_rate(0.21, 2), 12)
        0.1
    """
    return (1.0 + annual_rate) ** (1.0 / periods) - 1.0
