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
from collections.abc import Mapping, Sequence
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
    listed: Mapping[tuple[str, str], list[str]],
) -> list[tuple[Any, Any]]:
    """Bring the watches in line with the live strategies; returns ``(watch, strategy)`` pairs.

    ``listed`` holds the coins of each listed strategy's active listing by ``(svc_id, name)``. Each
    lookup is one query for every strategy at once: a pass over 100,000 watches costs a few round
    trips, not a few per strategy.
    """
    live = {(s.svc_id, s.name): s for s in strategies.live_within_plans(conn, now=now_ms // 1000)}
    owners = sorted({svc_id for svc_id, _ in live})
    plans = accounts.current_plans(conn, owners, now=now)
    tested = backtests.full_range_returns_of(conn, owners)
    have = {(w.svc_id, w.strategy_name, w.coin): w for w in queries.watches(conn)}
    wanted: dict[tuple[str, str, str], dict[str, Any]] = {}
    resolve = _Resolver(catalog)
    for (svc_id, name), strat in live.items():
        cap = strategies.MAX_COINS.get(plans.get(svc_id, "free"), 0)
        own = listed.get((svc_id, name), [])
        coins = tested.get((svc_id, name, strat.timeframe), {})
        order = wanted_order(own, json.loads(strat.public_coins), sorted(coins), cap=max(cap, len(own)))
        for coin in order:
            hit = resolve(coin, strat.timeframe)
            if hit is not None:
                wanted[(svc_id, name, hit[2])] = {"strat": strat, "market": hit[0], "symbol": hit[1]}
    stale = [k for k, w in have.items() if k not in wanted or w.version != wanted[k]["strat"].version]
    gone = set(stale)
    fresh = [_new_watch(k, found, now_ms, now) for k, found in wanted.items() if k not in have or k in gone]
    queries.drop_watches(conn, stale)
    queries.add_watches(conn, fresh)
    rows = queries.watches(conn) if stale or fresh else list(have.values())
    return [(w, live[(w.svc_id, w.strategy_name)]) for w in rows]


def _new_watch(key: tuple[str, str, str], found: Mapping[str, Any], now_ms: int, now: int) -> dict[str, Any]:
    """A watch that starts at the next candle to close."""
    strat = found["strat"]
    tf = timeframe_ms(strat.timeframe)
    seen = market.last_closed_open(now_ms, tf)
    return {
        "svc_id": key[0],
        "strategy_name": key[1],
        "coin": key[2],
        "symbol": found["symbol"],
        "market": found["market"],
        "timeframe": strat.timeframe,
        "version": strat.version,
        "anchor_ms": seen + tf,
        "evaluated_ms": seen,
        "updated_at": now,
    }


class _Resolver:
    """A coin's series, and whether it serves a timeframe, each looked up once a pass."""

    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog
        self.series: dict[str, tuple[str, str, str] | None] = {}
        self.frames: dict[tuple[str, str, str], bool] = {}

    def __call__(self, coin: str, timeframe: str) -> tuple[str, str, str] | None:
        """``(market, symbol, display)`` of ``coin`` when its data serves ``timeframe``, else None."""
        if coin not in self.series:
            self.series[coin] = _resolve(self.catalog, coin)
        hit = self.series[coin]
        if hit is None:
            return None
        served = (hit[0], hit[1], timeframe)
        if served not in self.frames:
            self.frames[served] = market.serves_timeframe(self.catalog, *served)
        return hit if self.frames[served] else None


def _resolve(catalog: Any, coin: str) -> tuple[str, str, str] | None:
    try:
        mkt, symbol = market.find_series(catalog, coin)
    except NotFound:
        return None
    return mkt, symbol, market.display_of(mkt, symbol)
