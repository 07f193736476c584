"""Which market a backtest's candles belong to, when the caller did not say: it sets the year used
for annualising (``calendars.CALENDARS``) and the default spread.

In order: the market given; the market of a known instrument (``symbol``); else the candles'
calendar: a candle on a Saturday means a market open every day (crypto, 365.25 days a year); none
over at least two weeks means a weekday market: forex (260 days of 24 h) when the days have
candles around the clock or on Sunday evenings, else stocks (252 sessions of 6.5 h). A series too
short to tell is taken as crypto. Whatever was not given is stated in the summary
(``market``, ``market_note``).

Example:
    >>> week = np.arange(0, 21 * 86_400_000, 86_400_000, dtype=np.int64)  # every day, 1970-01-01 on
    >>> market_of(None, None, week, 86_400_000)[1]
    'inferred from the candles: some fall on a Saturday (open every day, 365.25 days a year)'
"""

from __future__ import annotations

import numpy as np
from numba import njit

DAY_MS = 86_400_000
_TWO_WEEKS_MS = 14 * DAY_MS


@njit(cache=True, nogil=True)
def _calendar_nb(t):
    """(a candle on a Saturday, a candle on a Sunday, most candles opened in one UTC day); stops
    at the first Saturday (then the rest does not matter)."""
    sunday, most, count, day = False, 0, 0, -(2**62)
    for k in range(t.shape[0]):
        d = t[k] // DAY_MS
        weekday = (d + 3) % 7  # 1970-01-01 was a Thursday; Monday = 0
        if weekday == 5:
            return True, sunday, most
        sunday |= weekday == 6
        count = count + 1 if d == day else 1
        day = d
        most = max(most, count)
    return False, sunday, most


def market_of(market: str | None, symbol: str | None, t: np.ndarray, tf_ms: int) -> tuple[str, str | None]:
    """(market, note): the note says how a market not given was chosen (None when given).

    Example:
        >>> market_of("forex", None, np.zeros(0, np.int64), 60_000)
        ('forex', None)
        >>> market_of(None, "AAPL", np.zeros(0, np.int64), 60_000)[0]
        'us_stocks'
    """
    if market is not None:
        return market, None
    if symbol is not None:
        from svc_engine.instruments import UnknownInstrumentError, resolve

        try:
            return resolve(symbol=symbol).market, None
        except UnknownInstrumentError:
            pass
    if t.shape[0] < 2 or t[-1] - t[0] < _TWO_WEEKS_MS:
        return "crypto", "assumed (too few candles to tell a calendar): 365.25 days a year; pass market="
    saturday, sunday, most = _calendar_nb(t)
    if saturday:
        return (
            "crypto",
            "inferred from the candles: some fall on a Saturday (open every day, 365.25 days a year)",
        )
    around_the_clock = tf_ms < DAY_MS and most * tf_ms > 12 * 3_600_000
    if sunday or around_the_clock:
        return (
            "forex",
            "inferred from the candles: weekdays around the clock (260 days of 24 h a year); pass market=",
        )
    return (
        "us_stocks",
        "inferred from the candles: weekday sessions (252 sessions of 6.5 h a year); pass market=",
    )
