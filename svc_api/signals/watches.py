"""Which coins each active strategy watches, kept in step with the strategies.

A strategy watches (ours, in ``docs/api.md``): the coins of its active marketplace listing, then its
public coins, then the coins of its latest completed ``full_range`` backtest on its timeframe, up to
its owner's plan's coins per strategy, each where the data store can serve its timeframe: stored, or
resampled from a stored finer series exactly as backtests load it (a 4h or 1d strategy over 1h
candles is watched like any other). A new watch
starts at the next candle to close (it never replays the past); a new version of the strategy starts
its watches afresh; a coin no longer wanted is dropped.

Example:
    >>> wanted_order(["ETH"], ["BTC", "ETH"], ["SOL"], cap=2)
    ['ETH', 'BTC']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.backtests import service as backtests
from svc_api.core.errors import NotFound
from svc_api.market import service as market
from svc_api.signals import queries
from svc_api.strategies import service as strategies
from svc_engine.data import timeframe_ms


def wanted_order(
    listed: Sequence[str], public: Sequence[str], tested: Sequence[str], *, cap: int
) -> list[str]:
    """The coins to watch, first come first kept, at most ``cap``; see the module example."""
    out: list[str] = []
    for coin in (*listed, *public, *tested):
        if coin not in out and len(out) < cap:
            out.append(coin)
    return out


def sync(
    conn: Connection,
    catalog: Any,
    now_ms: int,
    *,
    now: int,
    listed_coins: Callable[[Connection, str, str], list[str]],
) -> list[tuple[Any, Any]]:
    """Bring the watches in line with the live strategies; returns ``(watch, strategy)`` pairs.

    ``listed_coins(conn, svc_id, strategy_name)`` gives the coins of the strategy's active listing.
    """
    live = {(s.svc_id, s.name): s for s in strategies.live_within_plans(conn, now=now_ms // 1000)}
    have = {(w.svc_id, w.strategy_name, w.coin): w for w in queries.watches(conn)}
    keep: set[tuple[str, str, str]] = set()
    series: dict[str, tuple[str, str, str] | None] = {}  # coin -> (market, symbol, display), once a pass
    frames: dict[tuple[str, str, str], bool] = {}  # (market, symbol, tf) -> servable, once a pass
    for (svc_id, name), strat in live.items():
        found = _coins(conn, catalog, strat, listed_coins(conn, svc_id, name), series, frames, now=now)
        for coin, (mkt, symbol) in found.items():
            key = (svc_id, name, coin)
            keep.add(key)
            old = have.get(key)
            if old is not None and old.version == strat.version:
                continue
            if old is not None:
                queries.drop_watch(conn, *key)
            tf = timeframe_ms(strat.timeframe)
            seen = market.last_closed_open(now_ms, tf)
            queries.add_watch(
                conn,
                {
                    "svc_id": svc_id,
                    "strategy_name": name,
                    "coin": coin,
                    "symbol": symbol,
                    "market": mkt,
                    "timeframe": strat.timeframe,
                    "version": strat.version,
                    "anchor_ms": seen + tf,
                    "evaluated_ms": seen,
                    "updated_at": now,
                },
            )
    for key in set(have) - keep:
        queries.drop_watch(conn, *key)
    return [(w, live[(w.svc_id, w.strategy_name)]) for w in queries.watches(conn)]


def _coins(
    conn: Connection,
    catalog: Any,
    strat: Any,
    listed: list[str],
    series: dict[str, tuple[str, str, str] | None],
    frames: dict[tuple[str, str, str], bool],
    *,
    now: int,
) -> dict[str, tuple[str, str]]:
    tested = backtests.full_range_returns(conn, strat.svc_id, strat.name, strat.timeframe) or {}
    plan = accounts.current_plan(conn, strat.svc_id, now=now)
    cap = strategies.MAX_COINS.get(plan, 0)
    order = wanted_order(listed, json.loads(strat.public_coins), sorted(tested), cap=max(cap, len(listed)))
    found: dict[str, tuple[str, str]] = {}
    for coin in order:
        if coin not in series:
            series[coin] = _resolve(catalog, coin)
        hit = series[coin]
        if hit is None:
            continue
        served = (hit[0], hit[1], strat.timeframe)
        if served not in frames:
            frames[served] = market.serves_timeframe(catalog, *served)
        if frames[served]:
            found[hit[2]] = (hit[0], hit[1])
    return found


def _resolve(catalog: Any, coin: str) -> tuple[str, str, str] | None:
    try:
        mkt, symbol = market.find_series(catalog, coin)
    except NotFound:
        return None
    return mkt, symbol, market.display_of(mkt, symbol)
