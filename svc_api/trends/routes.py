"""Trend data over HTTP (``/tradingdata``): ``trend_signals``, ``trend_signal_detail``,
``trend_indicator``, ``trend_indicator_history`` (guest-accessible) and, for identified callers,
``track_trend_break_signal``, ``untrack_trend_break_signal``, ``tracked_trend_break_signals``.

Parameter names and reply shapes are listed in ``docs/market-api.md``.

Example:
    >>> sorted(TRADINGDATA)[:3]
    ['track_trend_break_signal', 'tracked_trend_break_signals', 'trend_indicator']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from svc_api.core.dispatch import Call, Operation, lookups_as_404
from svc_api.core.errors import Invalid
from svc_api.core.fields import (
    check_name,
    listed_timeframe,
    page_number,
    parse_seconds,
    parse_timeframe,
    position_int,
    position_str,
    require,
)
from svc_api.market import service as market
from svc_api.trends import service as trends

TRACKED = "tracked_trend_break_signals"

clock: Callable[[], float] = time.time
"""The wall clock (replaceable in tests); trend signals age in market time, at most this."""


def _signal_key(params: Mapping[str, Any]) -> trends.SignalKey:
    """The signal named by ``coin_name``, ``timeframe`` (minutes or name), ``way`` and ``timestamp``."""
    require(params, "coin_name", "timeframe", "way", "timestamp")
    way = str(params["way"]).strip().upper()
    if way not in trends.WAYS:
        raise Invalid(f"way must be BUY or SELL, got {params['way']!r}")
    return trends.SignalKey(
        check_name(params["coin_name"], "coin_name") or "",
        parse_timeframe(params["timeframe"]),
        parse_seconds(params["timestamp"], "timestamp"),
        way,
    )


def _trend_signals(call: Call) -> dict[str, Any]:
    page = page_number(call.params.get("page"))
    limit = call.page(50, 1, 50, clamp=True)
    return trends.signals_page(
        call.services,
        plan=call.principal.plan,
        page=page,
        limit=limit,
        wall_now=market.horizon(call.services, int(clock())),
    )


def _trend_signal_detail(call: Call) -> dict[str, Any]:
    p = call.params
    require(p, "coin_name", "graph_type", "timestamp")
    symbol = check_name(p["coin_name"], "coin_name") or ""
    timeframe = listed_timeframe(p["graph_type"], "graph_type")
    ts = parse_seconds(p["timestamp"], "timestamp")
    way = None if p.get("way") in (None, "") else str(p["way"]).upper()
    if way is not None and way not in trends.WAYS:
        raise Invalid(f"way must be BUY or SELL, got {p['way']!r}")
    return {"item": trends.signal_detail(call.services, symbol, timeframe, ts, way)}


def _trend_indicator(call: Call) -> dict[str, Any]:
    return trends.indicator(call.services, call.params.get("market_key"))


def _trend_indicator_history(call: Call) -> dict[str, Any]:
    p = call.params
    limit = call.page(200, 1, 200, clamp=True)
    before = None if p.get("before") in (None, "") else parse_seconds(p["before"], "before")
    return trends.indicator_history(call.services, p.get("market_key"), limit=limit, before=before)


def _track(call: Call) -> dict[str, Any]:
    key = _signal_key(call.params)
    return trends.track_signal(
        call.services, call.svc_id, key, wall_now=market.horizon(call.services, int(clock()))
    )


def _untrack(call: Call) -> dict[str, Any]:
    return trends.untrack_signal(call.store, call.svc_id, _signal_key(call.params))


def _tracked(call: Call) -> dict[str, Any]:
    limit = call.page(20, 1, 50, clamp=True)
    position = call.cursor(TRACKED)
    after = (
        None
        if position is None
        else trends.SignalKey(
            position_str(position, "s"),
            position_str(position, "t"),
            position_int(position, "ts"),
            position_str(position, "w"),
        )
    )
    items, last = trends.tracked_signals(call.services, call.svc_id, limit=limit, after=after)
    position = None if last is None else {"s": last.symbol, "t": last.timeframe, "ts": last.ts, "w": last.way}
    return {"items": items, "last_key": call.next_cursor(TRACKED, position)}


TRADINGDATA: dict[str, Operation] = {
    "trend_signals": Operation(_trend_signals, access="public"),
    "trend_signal_detail": Operation(lookups_as_404(_trend_signal_detail), access="public"),
    "trend_indicator": Operation(lookups_as_404(_trend_indicator), access="public"),
    "trend_indicator_history": Operation(lookups_as_404(_trend_indicator_history), access="public"),
    "track_trend_break_signal": Operation(_track),
    "untrack_trend_break_signal": Operation(_untrack),
    TRACKED: Operation(_tracked),
}
