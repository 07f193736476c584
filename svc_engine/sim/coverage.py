"""What a result says about its inputs: the range of candles it actually covered (a requested
range that misses the data is refused naming both, one that only partly lies in it warns), and
which costs and filters applied, with a warning when the signal filter skipped more than a
quarter of the signals (docs/sim.md, "Ranges, costs and filters").

Example:
    >>> covered(np.array([0, 3_600_000], np.int64), 3_600_000, None, None)["candles"]
    2
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from typing import Any

import numpy as np

#: The filter counters of `../shared/design/engine-semantics.md` section 2 (clamp or reject).
FILTER_COUNTERS: tuple[str, ...] = (
    "skipped_tp_below_min",
    "skipped_tp_above_max",
    "skipped_sl_below_min",
    "skipped_sl_above_max",
)
#: The share of the signals the filter may skip before a result warns.
FILTER_WARN_SHARE = 0.25


class RangeWarning(UserWarning):
    """A requested range that lies only partly in the data: the run covers less than was asked."""


class FilterWarning(UserWarning):
    """The signal filter (minimum/maximum take-profit and stop distances) skipped many signals."""


def iso(ms: int | float) -> str:
    """A Unix-ms time as ``YYYY-MM-DD HH:MM`` UTC.

    Example:
        >>> iso(0)
        '1970-01-01 00:00'
    """
    return datetime.fromtimestamp(float(ms) / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _n(x: float | None) -> Any:
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _asked(start_ts: float | None, end_ts: float | None) -> str:
    a = "the start" if start_ts is None else iso(start_ts * 1000)
    b = "the end" if end_ts is None else iso(end_ts * 1000)
    return f"[{_n(start_ts)}, {_n(end_ts)}] ({a} .. {b} UTC)"


def no_candle_message(
    t: np.ndarray, tf_ms: int, start_ts: float | None, end_ts: float | None, what: str
) -> str:
    """The error of a range that selects no candle: both ranges named.

    Example:
        >>> no_candle_message(np.array([0], np.int64), 60_000, 3600, None, "the series").split(": ")
        ['the range [3600, None] selects no candle of the series', 'asked 1970-01-01 01:00 .. the end UTC, \
the data covers 1970-01-01 00:00 .. 1970-01-01 00:01 UTC']
    """
    held = f"{iso(t[0])} .. {iso(t[-1] + tf_ms)} UTC" if t.size else "no candles"
    a = "the start" if start_ts is None else iso(start_ts * 1000)
    b = "the end" if end_ts is None else iso(end_ts * 1000)
    return (
        f"the range [{_n(start_ts)}, {_n(end_ts)}] selects no candle of {what}: asked {a} .. {b} UTC, "
        f"the data covers {held}"
    )


def partial_message(
    t: np.ndarray,
    window: np.ndarray,
    tf_ms: int,
    start_ts: float | None,
    end_ts: float | None,
    what: str,
    span: tuple[int, int] | None = None,
) -> str | None:
    """The warning of a requested range that reaches beyond the data ``t`` by more than the data's
    own largest step between candles (so a weekend or a holiday at either end of a stock's range is
    no missing coverage), naming what the run (``window``) covers; None when the data holds it.
    ``span`` = (first, last open time) of the whole data when ``t`` is a cut of it.

    Example:
        >>> t = np.arange(10, dtype=np.int64) * 3_600_000
        >>> partial_message(t, t[5:], 3_600_000, 5 * 3600, 50 * 3600, "X")[:64]
        'the range [18000, 180000] (1970-01-01 05:00 .. 1970-01-03 02:00 '
        >>> partial_message(t, t, 3_600_000, 0, 9 * 3600, "X") is None
        True
    """
    lo = None if start_ts is None else start_ts * 1000
    hi = None if end_ts is None else end_ts * 1000
    first, last = (int(t[0]), int(t[-1])) if span is None else span
    head = lo is not None and first - lo > tf_ms
    tail = hi is not None and hi - last > tf_ms
    if not (head or tail):
        return None
    slack = max(tf_ms, int(np.max(np.diff(t))) if t.size > 1 else 0)
    head = lo is not None and first - lo > slack
    tail = hi is not None and hi - last > slack
    if not (head or tail):
        return None
    return (
        f"the range {_asked(start_ts, end_ts)} lies only partly in the data of {what} "
        f"({iso(first)} .. {iso(last + tf_ms)} UTC): the run covers "
        f"{iso(window[0])} .. {iso(window[-1] + tf_ms)} UTC"
    )


def warn_partial(
    t: np.ndarray,
    window: np.ndarray,
    tf_ms: int,
    start_ts: float | None,
    end_ts: float | None,
    what: str,
    span: tuple[int, int] | None = None,
) -> None:
    """:func:`partial_message` as a :class:`RangeWarning`."""
    message = partial_message(t, window, tf_ms, start_ts, end_ts, what, span)
    if message is not None:
        warnings.warn(message, RangeWarning, stacklevel=4)


def covered(
    window_t: np.ndarray,
    tf_ms: int,
    start_ts: float | None,
    end_ts: float | None,
    series_t: np.ndarray | None = None,
    what: str = "the series",
    span: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The range a run covered: first candle's open and last candle's close (Unix ms), the number of
    candles, the range that was asked (Unix seconds, None: that end of the data), and the
    :func:`partial_message` against the whole ``series_t`` (None: the data held the range).

    Example:
        >>> covered(np.array([0, 3_600_000], np.int64), 3_600_000, 0, None)["end"]
        7200000
    """
    whole = window_t if series_t is None else series_t
    return {
        "start": int(window_t[0]),
        "end": int(window_t[-1]) + int(tf_ms),
        "candles": int(window_t.shape[0]),
        "requested_start_ts": start_ts,
        "requested_end_ts": end_ts,
        "warning": partial_message(whole, window_t, tf_ms, start_ts, end_ts, what, span),
    }


def applied(settings: Any, half_spread: float, counts: dict[str, int], *, what: str) -> dict[str, Any]:
    """The costs and filters a run applied (``commission_pct``, ``spread_pct`` and where it came from,
    ``min_candles_between_signals``, the filter's mode and limits) with what each skipped; warns
    (:class:`FilterWarning`) when the filter skipped more than a quarter of the signals.

    Example:
        >>> from svc_engine.sim.settings import Settings
        >>> a = applied(Settings(), 0.0005, {"skipped_min_gap": 3}, what="X")
        >>> a["spread_pct"], a["spread_from"], a["skipped"]["min_gap"]
        (0.1, 'volume tier', 3)
    """
    total = sum(v for k, v in counts.items() if k.startswith("skipped_")) + counts.get("placed", 0)
    by_filter = sum(counts.get(k, 0) for k in FILTER_COUNTERS)
    out = {
        "commission_pct": settings.commission_pct,
        "spread_pct": half_spread * 200.0,
        "spread_from": "given" if settings.spread_pct is not None else "volume tier",
        "min_candles_between_signals": settings.min_candles_between_signals,
        "signal_filter_mode": settings.signal_filter_mode,
        "min_profit_pct": settings.min_profit_pct,
        "max_profit_pct": settings.max_profit_pct,
        "min_loss_pct": settings.min_loss_pct,
        "max_loss_pct": settings.max_loss_pct,
        "signals": total,
        "skipped": {
            "filter": by_filter,
            "invalid": counts.get("skipped_invalid", 0),
            "min_gap": counts.get("skipped_min_gap", 0),
        },
    }
    out["warning"] = None
    if total and by_filter > FILTER_WARN_SHARE * total:
        detail = ", ".join(f"{k} {counts[k]}" for k in FILTER_COUNTERS if counts.get(k))
        out["warning"] = (
            f"{what}: the signal filter ({settings.signal_filter_mode}, take-profit "
            f"{settings.min_profit_pct}..{settings.max_profit_pct}%, stop {settings.min_loss_pct}.."
            f"{settings.max_loss_pct}%) skipped {by_filter} of {total} signals ({detail})"
        )
        warnings.warn(out["warning"], FilterWarning, stacklevel=4)
    return out
