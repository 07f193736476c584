"""Turn the user's frames into the kernels' arrays, refusing bad input with a clear message.

Candles become contiguous arrays after the series rules of `../shared/design/engine-semantics.md` section 1
are checked in one numba pass (`svc_engine.sim.series_nb`); signals are mapped to candle indices, sorted
stably by time, and duplicates on one candle flagged (section 2). A range ``[start_ts, end_ts]`` (seconds,
inclusive) cuts both. ``open_time`` of candles and signals may be integer Unix milliseconds or any datetime
column (naive = UTC, ``times.as_time``); the kernels read int64 Unix milliseconds.

Example:
    >>> import polars as pl
    >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
    ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
    >>> Candles.from_frame(k, timeframe=None).tf_ms
    60000
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from numba import njit

from svc_engine.data import arrays as kept
from svc_engine.data.frames import as_klines
from svc_engine.data.schema import COLUMNS, PRICE_RULES, TIMEFRAMES, KlineValidationError, timeframe_ms
from svc_engine.data.times import ms_array
from svc_engine.sim import coverage, nb
from svc_engine.sim.series_nb import first_bad_row, locate_sorted_nb

SIGNAL_COLUMNS: tuple[str, ...] = ("open_time", "side", "limit_price", "tp_price", "sl_price")
#: Optional signal columns of the exit rules (docs/exits.md): ``order`` ("limit" or "market") and
#: ``max_candles`` (most candles held, null for no limit); rows with side ``exit`` mark the candles
#: at whose close an exit condition fired. With these columns, an infinite TP or SL on its own side
#: (long: TP +inf, SL -inf) means the trade has none.
RULE_COLUMNS: tuple[str, ...] = (
    "order",
    "max_candles",
    "trail_pct",
    "trail_distance",
    "trail_after_pct",
    "breakeven_pct",
    "reverse",
)
# ``reverse`` (bool, docs/sim.md): the trade of this signal stops and reverses on the next valid
# opposite signal.
_NO_BOOLS = np.zeros(0, np.bool_)
_NO_INTS = np.zeros(0, np.int64)
# The candle rules of the import (names and messages kept once, in the data layer), after the time rule.
_RULES: tuple[tuple[str, str], ...] = (
    ("ok", ""),
    ("unsorted_or_duplicate_time", "open_time is not strictly increasing"),
    *PRICE_RULES,
)


@dataclass(frozen=True, slots=True)
class Candles:
    """A validated candle series as contiguous arrays, with its timeframe in milliseconds."""

    t: np.ndarray
    o: np.ndarray
    h: np.ndarray
    lo: np.ndarray
    c: np.ndarray
    v: np.ndarray
    tf_ms: int

    @classmethod
    def from_frame(cls, klines: Any, *, timeframe: str | None, source: str = "klines") -> Candles:
        """Validate a kline frame (section 1) and take its columns as arrays.

        ``klines`` is any frame `svc_engine.data.frames.as_klines` takes (polars or pandas, any
        case, times as datetimes, Unix ms or s). The arrays and the validation of a frame already
        seen are reused (`svc_engine.data.arrays`). A ``timeframe`` that disagrees with the
        spacing of the candles is refused with the spacing measured.

        Example:
            >>> Candles.from_frame(pl.DataFrame({c: [] for c in COLUMNS}), timeframe="1h")
            Traceback (most recent call last):
            ...
            svc_engine.data.schema.KlineValidationError: klines: empty: the series has no candle
        """
        klines = as_klines(klines, source)
        if klines.height == 0:
            raise KlineValidationError(source, None, "empty", "the series has no candle")
        arrays, step = kept.derived(klines, ("candles", source), COLUMNS, lambda: _validated(klines, source))
        t, o, h, lo, c, v = arrays
        return cls(t, o, h, lo, c, v, tf_ms=_timeframe_ms(t, timeframe, step, source))

    def __len__(self) -> int:
        return int(self.t.shape[0])

    def slice(self, start: int, stop: int) -> Candles:
        """Candles ``start .. stop - 1`` (views, no copy).

        Example:
            >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
            ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
            >>> len(Candles.from_frame(k, timeframe="1m").slice(1, 2))
            1
        """
        cut = slice(start, stop)
        return Candles(
            self.t[cut], self.o[cut], self.h[cut], self.lo[cut], self.c[cut], self.v[cut], self.tf_ms
        )

    def in_range(
        self,
        start_ts: int | None,
        end_ts: int | None,
        *,
        what: str = "the series",
        span: tuple[int, int] | None = None,
    ) -> Candles:
        """The candles whose open time lies in ``[start_ts, end_ts]`` (seconds, inclusive). A range
        that selects no candle is refused naming both ranges; one that reaches beyond the data warns
        (``svc_engine.sim.coverage.RangeWarning``); ``span`` = (first, last open time, ms) of the
        whole data when these candles are a cut of it.

        Example:
            >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
            ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
            >>> len(Candles.from_frame(k, timeframe="1m").in_range(60, None))
            1
        """
        if start_ts is None and end_ts is None:
            return self
        lo_ms = -(2**62) if start_ts is None else int(start_ts) * 1000
        hi_ms = 2**62 if end_ts is None else int(end_ts) * 1000
        if lo_ms > hi_ms:
            raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
        a, b = np.searchsorted(self.t, [lo_ms, hi_ms + 1])
        if a >= b:
            raise ValueError(coverage.no_candle_message(self.t, self.tf_ms, start_ts, end_ts, what))
        coverage.warn_partial(self.t, self.t[a:b], self.tf_ms, start_ts, end_ts, what, span)
        return self.slice(int(a), int(b))


def _validated(klines: pl.DataFrame, source: str) -> tuple[list[np.ndarray], int]:
    """The six columns as arrays and the smallest time step, or the first rule a row breaks."""
    arrays = [_column(klines, col) for col in COLUMNS]
    row, rule, step = first_bad_row(*arrays)
    if row >= 0:
        name, detail = _RULES[rule]
        raise KlineValidationError(source, int(row), name, detail)
    return arrays, spacing(arrays[0], int(step))


@njit(cache=True, nogil=True)
def _count_gaps_nb(t, step):
    count = 0
    for k in range(1, t.shape[0]):
        count += t[k] - t[k - 1] == step
    return count


def spacing(t: np.ndarray, step: int) -> int:
    """The candles' spacing: the smallest time step when at least half the steps are that (one
    pass), else the most common step (a few stray candles 2 h apart in a 4 h series, as some
    exchange files have, do not make it a 2 h series).

    Example:
        >>> spacing(np.array([0, 2, 4, 5, 7, 9]), 1), spacing(np.array([0, 4, 8, 10, 14]), 2)
        (2, 4)
    """
    if t.shape[0] < 2 or 2 * _count_gaps_nb(t, step) >= t.shape[0] - 1:
        return step
    gaps, counts = np.unique(np.diff(t), return_counts=True)
    return int(gaps[np.argmax(counts)])


def _column(df: pl.DataFrame, name: str) -> np.ndarray:
    if name == "open_time":  # TIME after as_klines: int64 Unix ms underneath
        return kept.column(df, name, ms_array)
    if df.schema[name] == pl.Float64:
        return kept.column(df, name)
    return np.ascontiguousarray(df[name].cast(pl.Float64).to_numpy(), dtype=np.float64)


def _timeframe_ms(t: np.ndarray, timeframe: str | None, step: int, source: str = "klines") -> int:
    """The timeframe given, checked against the candles' spacing (`spacing`), or that spacing."""
    if t.shape[0] < 2:
        if timeframe is None:
            raise ValueError("cannot infer the timeframe of a single candle; pass timeframe=")
        return timeframe_ms(timeframe)
    if timeframe is None:
        return step
    given = timeframe_ms(timeframe)
    if given != step:
        name = timeframe_name(step)
        apart = name or f"{step:,} ms"
        head = f"{source}: timeframe {timeframe!r} disagrees with the data: its candles are {apart} apart"
        tail = (
            f"pass timeframe={name!r} or leave it out to use the data's"
            if name
            else "which is no supported timeframe"
        )
        raise ValueError(f"{head} (spacing measured {step:,} ms, {t.shape[0]:,} candles); {tail}")
    return given


def timeframe_name(tf_ms: int) -> str | None:
    """The name of a timeframe length, or None when it is no standard timeframe.

    Example:
        >>> timeframe_name(3_600_000)
        '1h'
    """
    return next((name for name, ms in TIMEFRAMES.items() if ms == tf_ms), None)


@dataclass(frozen=True, slots=True)
class Signals:
    """Signals as arrays in time order (stable); ``row`` is the input row of each, ``dup`` marks a
    signal that shares its candle with an earlier one of the input."""

    row: np.ndarray
    sidx: np.ndarray
    side: np.ndarray
    limit: np.ndarray
    tp: np.ndarray
    sl: np.ndarray
    dup: np.ndarray
    exit_flag: np.ndarray = field(default_factory=lambda: _NO_BOOLS)
    """Per candle of the window: an exit condition fired at its close (empty: no exit rows)."""
    market: np.ndarray = field(default_factory=lambda: _NO_BOOLS)
    """Per signal: a market entry, filled at the next open (empty: all limit orders)."""
    hold: np.ndarray = field(default_factory=lambda: _NO_INTS)
    """Per signal: the most candles a trade may be held, 0 for no limit (empty: none)."""
    moves: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    """Per signal: trailing fraction, trailing distance, trailing activation and break-even
    activation (fractions; NaN: none), ``nb.NO_MOVES`` (empty: none)."""

    open_levels: bool = False
    """The frame carried the rule columns: an infinite TP/SL on its own side means none."""
    reverse: np.ndarray = field(default_factory=lambda: _NO_BOOLS)
    """Per signal: its trade stops and reverses on the next valid opposite signal (empty: none)."""

    @property
    def has_rules(self) -> bool:
        """Whether exit rows, market entries, holding times or reversals are present (docs/exits.md)."""
        return bool(
            self.exit_flag.size or self.market.size or self.hold.size or self.moves.size or self.reverse.size
        )

    def __len__(self) -> int:
        return int(self.sidx.shape[0])


def prepare_signals(signals: pl.DataFrame, candles: Candles, window: Candles | None = None) -> Signals:
    """Map signals to candle indices of ``window`` (default: all candles), refusing bad ones.

    A signal time that is no candle of ``candles`` is refused; one outside ``window`` is left out.
    A null limit price means the close of the signal candle.

    Example:
        >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 2.0],
        ...                   "low": [1.0, 1.0], "close": [1.0, 2.0], "volume": [0.0, 0.0]})
        >>> s = pl.DataFrame({"open_time": [60_000], "side": ["long"], "limit_price": [None],
        ...                   "tp_price": [3.0], "sl_price": [1.5]})
        >>> prepare_signals(s, Candles.from_frame(k, timeframe="1m")).limit.tolist()
        [2.0]
    """
    window = candles if window is None else window
    missing = [col for col in SIGNAL_COLUMNS if col not in signals.columns]
    if missing:
        raise ValueError(f"signals frame is missing columns {missing}; expected {list(SIGNAL_COLUMNS)}")
    exit_flag = _NO_BOOLS
    if signals.height and (signals["side"] == "exit").any():
        exits = signals.filter(pl.col("side") == "exit")
        signals = signals.filter(pl.col("side") != "exit")
        at = locate_sorted_nb(candles.t, np.sort(_signal_times(exits)))
        _check_on_candles(np.sort(_signal_times(exits)), np.arange(at.size), at)
        first_exit = int(np.searchsorted(candles.t, window.t[0]))
        exit_flag = np.zeros(len(window), np.bool_)
        local = at - first_exit
        exit_flag[local[(local >= 0) & (local < len(window))]] = True
    times = _signal_times(signals)
    side = _sides(signals)
    order = np.argsort(times, kind="stable")
    pos = locate_sorted_nb(candles.t, times[order])
    _check_on_candles(times, order, pos)
    first = int(np.searchsorted(candles.t, window.t[0]))
    inside = (pos >= first) & (pos < first + len(window))
    rows, sidx = order[inside], pos[inside] - first
    limit = _prices(signals, "limit_price")[rows]
    null_limit = signals["limit_price"].is_null().to_numpy()[rows]
    limit[null_limit] = window.c[sidx[null_limit]]
    dup = np.zeros(rows.shape[0], np.bool_)
    dup[1:] = sidx[1:] == sidx[:-1]
    market = _NO_BOOLS
    if "order" in signals.columns:
        market = (signals["order"].cast(pl.Utf8) == "market").fill_null(False).to_numpy()[rows]
    hold = _NO_INTS
    if "max_candles" in signals.columns:
        hold = signals["max_candles"].cast(pl.Int64).fill_null(0).to_numpy()[rows].astype(np.int64)
    moves = np.zeros((0, 4))
    move_columns = ("trail_pct", "trail_distance", "trail_after_pct", "breakeven_pct")
    if any(c in signals.columns for c in move_columns):
        moves = np.full((rows.shape[0], 4), np.nan)
        for m, col in enumerate(move_columns):
            if col in signals.columns:
                values = signals[col].cast(pl.Float64).fill_null(np.nan).to_numpy()[rows]
                moves[:, m] = values / 100.0 if col.endswith("_pct") else values
    reverse = _NO_BOOLS
    if "reverse" in signals.columns:
        reverse = signals["reverse"].cast(pl.Boolean).fill_null(False).to_numpy()[rows]
    return Signals(
        rows.astype(np.int64),
        sidx,
        side[rows],
        limit,
        _prices(signals, "tp_price")[rows],
        _prices(signals, "sl_price")[rows],
        dup,
        exit_flag,
        np.ascontiguousarray(market, dtype=np.bool_),
        np.ascontiguousarray(hold),
        np.ascontiguousarray(moves),
        any(c in signals.columns for c in RULE_COLUMNS),
        np.ascontiguousarray(reverse, dtype=np.bool_),
    )


def _signal_times(signals: pl.DataFrame) -> np.ndarray:
    col = signals["open_time"]
    if not (col.dtype.is_integer() or isinstance(col.dtype, pl.Datetime)) or col.null_count():
        raise ValueError("signals open_time must be integer Unix milliseconds or a datetime, without nulls")
    return ms_array(col)


def _sides(signals: pl.DataFrame) -> np.ndarray:
    side = signals["side"].cast(pl.Utf8)
    bad = side.is_null() | ~side.is_in(["long", "short"])
    if bad.any():
        row = int(bad.arg_true()[0])
        raise ValueError(f"signal row {row}: side must be 'long' or 'short' (got {side[row]!r})")
    return np.where((side == "long").to_numpy(), nb.LONG, nb.SHORT).astype(np.int8)


def _check_on_candles(times: np.ndarray, order: np.ndarray, pos: np.ndarray) -> None:
    off = np.flatnonzero(pos < 0)
    if off.size:
        row = int(order[off].min())
        raise ValueError(
            f"signal row {row}: open_time {int(times[row])} is no candle of the series "
            f"({off.size} signal(s) off the candles)"
        )


def _prices(signals: pl.DataFrame, name: str) -> np.ndarray:
    col = signals[name]
    if not (col.dtype.is_numeric() or col.dtype == pl.Null):
        raise ValueError(f"signals {name} must be numeric (got {col.dtype})")
    return np.ascontiguousarray(col.cast(pl.Float64).fill_null(np.nan).to_numpy(), dtype=np.float64).copy()
