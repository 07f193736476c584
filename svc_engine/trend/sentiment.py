"""The trend sentiment indicator: an integer score in [-100, 100] per candle close, and its API items.

The score is the sum of five parts, each 0 while its inputs are still undefined (warm-up):

=================  ==============================================================  ==========
part               value                                                           range
=================  ==============================================================  ==========
price vs EMA 50    +20 above, -20 below, 0 on it                                   [-20, 20]
price vs EMA 200   +20 above, -20 below, 0 on it                                   [-20, 20]
EMA 50 slope       15 * clip((EMA50[t] - EMA50[t-10]) / ATR14[t], -1, 1)           [-15, 15]
momentum           25 * (RSI14[t] - 50) / 50, RSI 50 where no move at all yet         [-25, 25]
latest signal      20 * way * max(0, 1 - age / 50); way +1 BUY, -1 SELL, age in    [-20, 20]
                   candles since the latest trend signal (break or return)
=================  ==============================================================  ==========

rounded half away from zero. RSI 14 is Wilder's from the shared kernels; where its average gain and
loss are both exactly 0 (no move since the series began) momentum is neutral, where TA-Lib's RSI
would read 0 (as it does below 1e-8, which on coins priced in millionths is a moving market).
``direction`` is ``BULLISH`` when the score is >= 20, ``BEARISH`` when <= -20, else ``NEUTRAL``.
Every part uses candles up to ``t`` only, so the history never changes.

Example:
    >>> direction_of(25), direction_of(-20), direction_of(19)
    ('BULLISH', 'BEARISH', 'NEUTRAL')
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.times import TIME, epoch_ms, ms_array
from svc_engine.indicators import atr_nb, ema_nb, wilder_gain_loss_nb
from svc_engine.trend.signals import detect_trends, kline_arrays

SLOPE_LAG = 10
"""Candles over which the EMA 50 slope is measured."""
SIGNAL_DECAY = 50
"""Candles after which a trend signal no longer counts."""
HISTORY_LIMIT = 200
"""Most items in one page of the score history."""
SCORE_SCHEMA: dict[str, pl.DataType] = {"open_time": TIME, "score": pl.Int64(), "direction": pl.Utf8()}
"""Columns of ``trend_indicator``."""
_KEY = re.compile(r"^[A-Z0-9._-]+#[0-9]+[mhdwM]$")


def direction_of(score: int) -> str:
    """``BULLISH`` (>= 20), ``BEARISH`` (<= -20) or ``NEUTRAL``.

    Example:
        >>> direction_of(0)
        'NEUTRAL'
    """
    return "BULLISH" if score >= 20 else "BEARISH" if score <= -20 else "NEUTRAL"


def trend_indicator(
    klines: pl.DataFrame, *, breaks: pl.DataFrame | None = None, **params: object
) -> pl.DataFrame:
    """The score and direction at every candle close (``open_time``, ``score``, ``direction``).

    ``open_time`` is the candle's open as ``Datetime("ms", "UTC")``, like the times of ``detect_trends``.

    ``breaks`` is the ``detect_trends`` frame of the same klines if already computed (else it is,
    with ``params``).

    Example:
        >>> import numpy as np
        >>> up = np.linspace(100.0, 200.0, 300)
        >>> k = pl.DataFrame({"open_time": np.arange(300) * 60_000, "high": up + 1, "low": up - 1,
        ...                   "close": up})
        >>> last = trend_indicator(k).row(-1)
        >>> last[0].isoformat(), last[1:]
        ('1970-01-01T04:59:00+00:00', (80, 'BULLISH'))
    """
    arr = kline_arrays(klines)
    if breaks is None:
        breaks = detect_trends(klines, **params)
    raw = raw_scores(arr, breaks)
    score = (np.sign(raw) * np.floor(np.abs(raw) + 0.5)).astype(np.int64)
    score = np.clip(score, -100, 100)
    labels = np.where(score >= 20, "BULLISH", np.where(score <= -20, "BEARISH", "NEUTRAL"))
    return pl.DataFrame(
        {"open_time": arr["open_time"], "score": score, "direction": labels}, schema=SCORE_SCHEMA
    )


def raw_scores(arr: dict[str, np.ndarray], breaks: pl.DataFrame) -> np.ndarray:
    """The unrounded sum of the five parts for each candle (see the module docstring).

    Example:
        >>> flat = {"open_time": np.arange(5), "high": np.ones(5), "low": np.ones(5), "close": np.ones(5)}
        >>> raw_scores(flat, pl.DataFrame({"open_time": [], "way": []})).tolist()
        [0.0, 0.0, 0.0, 0.0, 0.0]
    """
    close = arr["close"]
    ema50, ema200 = ema_nb(close, 50), ema_nb(close, 200)
    atr, rsi = atr_nb(arr["high"], arr["low"], close, 14), _momentum_rsi(close, 14)
    with np.errstate(invalid="ignore", divide="ignore"):
        lagged = np.r_[np.full(min(SLOPE_LAG, close.size), np.nan), ema50[:-SLOPE_LAG]]
        slope = np.clip((ema50 - lagged) / atr, -1.0, 1.0)
        parts = (
            20.0 * np.sign(close - ema50),
            20.0 * np.sign(close - ema200),
            15.0 * slope,
            25.0 * (rsi - 50.0) / 50.0,
            _signal_part(arr["open_time"], breaks),
        )
    return np.sum([np.nan_to_num(p, nan=0.0, posinf=0.0, neginf=0.0) for p in parts], axis=0)


def _momentum_rsi(close: np.ndarray, period: int) -> np.ndarray:
    gain, loss = wilder_gain_loss_nb(close, period)
    total = gain + loss
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total == 0.0, 50.0, 100.0 * gain / total)


def _signal_part(times: np.ndarray, breaks: pl.DataFrame) -> np.ndarray:
    n = times.size
    at = np.full(n, -1, dtype=np.int64)
    way = np.zeros(n)
    if breaks.height:
        # Unix ms whether the times are datetimes (``detect_trends``) or integers.
        opens = ms_array(breaks["open_time"])
        idx = np.searchsorted(times, opens)
        ok = (idx < n) & (times[np.minimum(idx, n - 1)] == opens)
        signs = np.where(breaks["way"].to_numpy() == "BUY", 1.0, -1.0)
        # Signals come oldest first: on a candle with several, the last one is its latest.
        rows = idx[ok][::-1]
        candles, last = np.unique(rows, return_index=True)
        at[candles] = candles
        way[candles] = signs[ok][::-1][last]
    latest = np.maximum.accumulate(at) if n else at
    age = np.arange(n) - latest
    weight = np.where(latest >= 0, np.maximum(0.0, 1.0 - age / SIGNAL_DECAY), 0.0)
    return 20.0 * way[np.maximum(latest, 0)] * weight


def market_key(symbol: str, timeframe: str) -> str:
    """The API key of a series, ``<SYMBOL>#<timeframe>``.

    Example:
        >>> market_key("btcusdt", "1h")
        'BTCUSDT#1h'
    """
    key = f"{symbol.upper()}#{timeframe}"
    _check_key(key)
    return key


def _check_key(key: str) -> None:
    if not _KEY.match(key):
        raise ValueError(f"market_key must look like 'BTCUSDT#1h' (<SYMBOL>#<timeframe>), got {key!r}")


def sentiment_item(market_key: str, row: dict[str, Any]) -> dict[str, Any]:
    """The API Sentiment item of one ``trend_indicator`` row; ``timestamp`` is the candle's open, in seconds.

    ``open_time`` is a datetime (as ``trend_indicator`` gives it) or Unix milliseconds.

    Example:
        >>> sentiment_item("BTCUSDT#1h", {"open_time": 3_600_000, "score": -42, "direction": "BEARISH"})
        {'market_key': 'BTCUSDT#1h', 'timestamp': 3600, 'score': -42, 'direction': 'BEARISH'}
    """
    _check_key(market_key)
    return {
        "market_key": market_key,
        "timestamp": epoch_ms(row["open_time"]) // 1000,
        "score": int(row["score"]),
        "direction": str(row["direction"]),
    }


def sentiment_history(
    market_key: str, scores: pl.DataFrame, *, limit: int = HISTORY_LIMIT, before: int | None = None
) -> dict[str, Any]:
    """One page of the score history, newest first, in the ``trend_indicator_history`` shape.

    ``before`` (seconds, exclusive) pages backwards; ``limit`` is clamped to 1..200.

    Example:
        >>> s = pl.DataFrame({"open_time": [0, 60_000, 120_000], "score": [0, 30, -25],
        ...                   "direction": ["NEUTRAL", "BULLISH", "BEARISH"]})
        >>> page = sentiment_history("BTCUSDT#1m", s, limit=2)
        >>> [i["score"] for i in page["items"]], page["has_more"], page["next_before_timestamp"]
        ([-25, 30], True, 60)
    """
    limit = max(1, min(int(limit), HISTORY_LIMIT))
    opens = pl.col("open_time").cast(pl.Int64)  # Unix ms, from datetimes or integers
    older = scores if before is None else scores.filter(opens < int(before) * 1000)
    page = older.sort("open_time", descending=True).head(limit)
    items = [sentiment_item(market_key, r) for r in page.iter_rows(named=True)]
    has_more = older.height > page.height
    oldest = items[-1]["timestamp"] if items else None
    return {
        "market_key": market_key,
        "items": items,
        "count": len(items),
        "limit": limit,
        "has_more": has_more,
        "oldest_timestamp": oldest,
        "next_before_timestamp": oldest if has_more else None,
    }
