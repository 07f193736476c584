"""Purging and embargo (López de Prado, Advances in Financial Machine Learning, chapter 7): no
training candle may belong to a trade that overlaps the test window.

A trade is an observation that spans candles (fill to exit). Training candles just before a test
window carry trades whose outcome is decided inside it; *purging* drops them. Training candles
just after a test window share its serial correlation; the *embargo* drops those as well.

- Walk-forward (:func:`~svc_engine.research.walk_forward` with ``purge=``, ``embargo=``): training
  always precedes its test, so both are a gap: each in-sample window ends ``purge + embargo``
  candles before its out-of-sample window. The in-sample sweep is a range run, whose trades are
  closed by its last candle; with ``purge`` at least the longest holding time, a trade that would
  straddle the split has none of its candles in training (tested).
- k-fold (:func:`purged_kfold`): test folds of consecutive candles; training = every other candle,
  less those within ``purge`` before a fold (or, given the trades' spans, less the candles of every
  trade that overlaps the fold) and ``embargo`` after it.

Example:
    >>> [(tr.tolist(), te.tolist()) for tr, te in purged_kfold(6, 3, purge=1)][1]
    ([0, 4, 5], [2, 3])
"""

from __future__ import annotations

import itertools
import re
from datetime import timedelta

import numpy as np

_UNITS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}


def window_ms(size: int | str | timedelta, tf_ms: int) -> tuple[int | None, int | None]:
    """(candles, milliseconds) of a window size: a whole number counts candles, ``"90d"``, ``"12h"``,
    ``"2w"``, ``"30m"`` or a ``timedelta`` is a duration.

    Example:
        >>> window_ms(500, 3_600_000), window_ms("2d", 3_600_000)
        ((500, None), (None, 172800000))
    """
    if isinstance(size, timedelta):
        return None, int(size.total_seconds() * 1000)
    if isinstance(size, str):
        m = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", size)
        if not m:
            raise ValueError(f"window size {size!r}: write candles (500) or a duration such as '90d'")
        return None, int(m.group(1)) * _UNITS[m.group(2)]
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
        raise ValueError(f"window size must be a positive number of candles or a duration, got {size!r}")
    return int(size), None


def gap_candles(size: int | str | timedelta, tf_ms: int) -> int:
    """A purge or embargo in candles: a count, or a duration (``"2d"``, a ``timedelta``) rounded up.

    Example:
        >>> gap_candles(5, 3_600_000), gap_candles("90m", 3_600_000), gap_candles(0, 1)
        (5, 2, 0)
    """
    if isinstance(size, int) and not isinstance(size, bool) and size == 0:
        return 0
    count, ms = window_ms(size, tf_ms)
    return int(count) if count is not None else -(-int(ms) // tf_ms)  # type: ignore[arg-type]


def purge_windows(plan: list[tuple[int, int, int, int]], gap: int) -> list[tuple[int, int, int, int]]:
    """Window pairs with each in-sample window ending ``gap`` candles before its out-of-sample one;
    pairs left with no in-sample candle are refused.

    Example:
        >>> purge_windows([(0, 9, 10, 14)], 3)
        [(0, 6, 10, 14)]
    """
    if gap < 0:
        raise ValueError(f"purge and embargo cannot be negative (gap {gap})")
    out = []
    for a, _, c, d in plan:
        if c - 1 - gap < a:
            raise ValueError(
                f"a purge and embargo of {gap} candles leave the window at {c} no in-sample candle"
            )
        out.append((a, c - 1 - gap, c, d))
    return out


def purged_kfold(
    n: int,
    k: int = 5,
    *,
    purge: int = 0,
    embargo: int = 0,
    spans: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(training candles, test candles) of ``k`` folds of ``n`` consecutive candles. Training leaves
    out the ``purge`` candles before each test fold and the ``embargo`` after it; with ``spans``
    (trades as ``(first, last)`` candle pairs, e.g. fill and exit candles) every candle of a trade
    that overlaps the fold is left out too.

    Example:
        >>> tr, te = purged_kfold(10, 2, spans=np.array([[3, 6]]))[1]
        >>> tr.tolist(), te.tolist()
        ([0, 1, 2], [5, 6, 7, 8, 9])
    """
    if k < 2 or k > n:
        raise ValueError(f"k must be between 2 and the number of candles ({n}), got {k}")
    edges = np.linspace(0, n, k + 1).round().astype(np.int64)
    idx = np.arange(n)
    out = []
    for lo, hi in itertools.pairwise(edges.tolist()):
        keep = (idx < lo - purge) | (idx >= hi + embargo)
        if spans is not None and len(spans):
            s = np.asarray(spans, dtype=np.int64)
            over = s[(s[:, 0] < hi) & (s[:, 1] >= lo)]  # trades that touch the fold
            if len(over):
                cover = np.zeros(n + 1, np.int64)  # candles covered by any of them, by difference array
                np.add.at(cover, over[:, 0].clip(0, n), 1)
                np.add.at(cover, (over[:, 1] + 1).clip(0, n), -1)
                keep &= np.cumsum(cover[:n]) == 0
        out.append((idx[keep], idx[lo:hi]))
    return out
