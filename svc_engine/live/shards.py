"""Advancing many watchlists at once on an executor (``svc_engine.executors``): threads by default
(the kernels release the GIL), Ray tasks when the caller passes a :class:`RayExecutor`. Each item
is one watchlist with its state and its coins' candles; a worker splits its pairs by coin into such
shards, so a shard holds every program of its coins and indicators are still computed once per coin.

Example:
    >>> from svc_engine import live
    >>> from svc_engine.executors import SerialExecutor
    >>> w = live.watchlist(["close > open"], [(0, "X")], "1h", spread_pct=0.1)
    >>> [e.size for e in advance_all([(w, live.new_state(w), {"X": _candles()})], SerialExecutor())]
    [3]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from svc_engine.executors import Executor, LocalExecutor
from svc_engine.live.evaluator import Watchlist, advance

Shard = tuple[Watchlist, np.ndarray, Mapping[str, Any]]
"""A watchlist, its state (``STATE_DTYPE``, advanced in place) and its coins' candles."""


def advance_all(shards: Sequence[Shard], executor: Executor | None = None) -> list[np.ndarray]:
    """:func:`~svc_engine.live.advance` of every shard, on ``executor`` (threads when None); each
    shard's state is updated in place (a Ray task's copy is written back), and the events of each
    shard are returned in order. The result equals advancing the shards one after another."""
    if executor is None:
        with LocalExecutor() as pool:
            return advance_all(shards, pool)
    results = executor.map(_advance_shard, list(shards))
    out = []
    for (_, state, _), (after, events) in zip(shards, results, strict=True):
        if after is not state:
            state[:] = after  # a task in another process advanced a copy
        out.append(events)
    return out


def _advance_shard(shard: Shard) -> tuple[np.ndarray, np.ndarray]:
    watch, state, candles = shard
    return state, advance(watch, state, candles)


def _candles() -> Any:
    import polars as pl

    return pl.DataFrame(
        {
            "open_time": [0, 3_600_000],
            "open": [1.0, 1.0],
            "high": [2.0, 2.0],
            "low": [0.5, 0.5],
            "close": [1.5, 1.5],
            "volume": [1.0, 1.0],
        }
    )
