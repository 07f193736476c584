"""Sizing a job without running it: mode, candles, chunks, credits and duration, with the
400-style checks of the API's ``estimate``.

Example:
    >>> estimate_cost_credits(250_000, 3, "range")
    6
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from svc_engine.data import Catalog, load_klines
from svc_engine.sim.chunks import as_strategy, plan_chunks

#: Credits: one per chunk dispatched plus one per started block of this many candles.
CREDIT_CANDLES = 100_000

#: Duration model: fixed overhead plus candles at this rate on each worker (measured, see docs).
OVERHEAD_SECONDS = 0.5

CANDLES_PER_SECOND_PER_WORKER = 1_500_000.0

MODES = ("range", "full_range", "portfolio")


def coin_list(coins: Sequence[str] | str) -> list[str]:
    """The symbols of a request as a list: one name or several, none twice.

    Example:
        >>> coin_list("BTCUSDT"), coin_list(["A", "B"])
        (['BTCUSDT'], ['A', 'B'])
    """
    listed = [coins] if isinstance(coins, str) else list(coins)
    if not listed:
        raise ValueError("coins is empty: name at least one symbol")
    duplicates = sorted({c for c in listed if listed.count(c) > 1})
    if duplicates:
        raise ValueError(f"coins lists {', '.join(duplicates)} more than once")
    return listed


def estimate_cost_credits(total_candles: int, chunks: int, mode: str) -> int:
    """Credits a job costs: ``chunks + ceil(total_candles / 100_000)``, plus 2 for a portfolio's
    ``recommended_divide`` search; at least 1.

    Example:
        >>> estimate_cost_credits(250_000, 3, "range"), estimate_cost_credits(5_000, 2, "portfolio")
        (6, 5)
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    extra = 2 if mode == "portfolio" else 0
    return max(1, chunks + math.ceil(total_candles / CREDIT_CANDLES) + extra)


def estimate_duration_seconds(total_candles: int, chunks: int, workers: int) -> float:
    """Seconds a job should take: ``0.5 + ceil(chunks / workers) * (total_candles / chunks) / 1.5e6``,
    i.e. chunks run ``workers`` at a time at 1.5 M candles per second each (load, evaluate, simulate).

    Example:
        >>> estimate_duration_seconds(3_000_000, 4, 2)  # two waves of 750 000 candles
        1.5
    """
    if chunks < 1 or workers < 1:
        raise ValueError(f"chunks and workers must be at least 1, got {chunks} and {workers}")
    waves = math.ceil(chunks / workers)
    return round(OVERHEAD_SECONDS + waves * (total_candles / chunks) / CANDLES_PER_SECOND_PER_WORKER, 3)


def estimate(
    strategy: Any,
    coins: Sequence[str] | str,
    timeframe: str,
    start_ts: float | None = None,
    end_ts: float | None = None,
    *,
    market: str | None = None,
    catalog: Catalog | None = None,
    workers: int = 1,
) -> dict[str, Any]:
    """Size a job without running it: ``mode``, ``total_candles``, ``chunks``, cost and duration.

    No timestamps: mode ``full_range`` over every coin's whole history, one chunk per coin. Both
    timestamps: mode ``range`` for exactly one coin, clipped to its data (the clipped ``start_ts``
    and ``end_ts`` are returned), in :func:`plan_chunks` chunks. Anything else raises ``ValueError``.

    Example:
        >>> estimate("close > open", ["BTCUSDT"], "1h", start_ts=0)
        Traceback (most recent call last):
        ...
        ValueError: give both start_ts and end_ts (range mode) or neither (full_range mode); got only start_ts
    """
    _check_range_request(coins, start_ts, end_ts)
    coins = coin_list(coins)
    as_strategy(strategy)
    catalog = catalog if catalog is not None else Catalog()
    ranges = {coin: catalog.data_range(coin, timeframe, market) for coin in coins}
    if start_ts is None or end_ts is None:
        per_coin = {coin: int(r["total_candles"]) for coin, r in ranges.items()}
        out: dict[str, Any] = {"mode": "full_range", "chunks": len(coins)}
    else:
        coin = coins[0]
        lo, hi = max(start_ts, ranges[coin]["first_ts"]), min(end_ts, ranges[coin]["last_ts"])
        if lo > hi:
            raise ValueError(
                f"range [{start_ts}, {end_ts}] selects no candle of {coin} {timeframe}; the data covers"
                f" {ranges[coin]['first_date']} .. {ranges[coin]['last_date']}"
            )
        klines = load_klines(coin, timeframe, lo, hi, market, store=catalog.store)
        per_coin = {coin: klines.height}
        out = {"mode": "range", "chunks": plan_chunks(klines.height), "start_ts": lo, "end_ts": hi}
    total = sum(per_coin.values())
    out |= {
        "total_candles": total,
        "candles_by_coin": per_coin,
        "estimated_cost_credits": estimate_cost_credits(total, out["chunks"], out["mode"]),
        "estimated_duration_seconds": estimate_duration_seconds(total, out["chunks"], workers),
    }
    return out


def _check_range_request(coins: Sequence[str] | str, start_ts: float | None, end_ts: float | None) -> None:
    if (start_ts is None) != (end_ts is None):
        given = "start_ts" if end_ts is None else "end_ts"
        raise ValueError(
            f"give both start_ts and end_ts (range mode) or neither (full_range mode); got only {given}"
        )
    if start_ts is not None and end_ts is not None:
        if start_ts > end_ts:
            raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
        if not isinstance(coins, str) and len(coins) > 1:
            raise ValueError(f"range mode takes exactly one coin, got {len(coins)}: {', '.join(coins)}")
