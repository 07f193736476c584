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
from collections.abc import Callable
from typing import Any

from svc_api.core.dispatch import Call, Operation, lookups_as_404
from svc_api.core.fields import position_int, position_str
from svc_api.market import service as market
from svc_api.trends import contract as c
from svc_api.trends import service as trends

TRACKED = "tracked_trend_break_signals"

clock: Callable[[], float] = time.time
"""The wall clock (replaceable in tests); trend signals age in market time, at most this."""


def _trend_signals(call: Call, req: c.TrendSignalsRequest) -> dict[str, Any]:
    return trends.signals_page(
        call.services,
        plan=call.principal.plan,
        page=req.page,
        limit=req.limit,
        wall_now=market.horizon(call.services, int(clock())),
    )


def _trend_signal_detail(call: Call, req: c.TrendSignalDetailRequest) -> dict[str, Any]:
    item = trends.signal_detail(call.services, req.coin_name, req.graph_type, req.timestamp, req.way)
    return {"item": item}


def _trend_indicator(call: Call, req: c.TrendIndicatorRequest) -> dict[str, Any]:
    return trends.indicator(call.services, req.market_key)


def _trend_indicator_history(call: Call, req: c.TrendIndicatorHistoryRequest) -> dict[str, Any]:
    return trends.indicator_history(call.services, req.market_key, limit=req.limit, before=req.before)


def _track(call: Call, req: c.TrendTrackRequest) -> dict[str, Any]:
    wall_now = market.horizon(call.services, int(clock()))
    return trends.track_signal(call.services, call.svc_id, req.key(), wall_now=wall_now)


def _untrack(call: Call, req: c.TrendTrackRequest) -> dict[str, Any]:
    return trends.untrack_signal(call.store, call.svc_id, req.key())


def _tracked(call: Call, req: c.TrackedSignalsRequest) -> dict[str, Any]:
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
    items, last = trends.tracked_signals(call.services, call.svc_id, limit=req.limit, after=after)
    position = None if last is None else {"s": last.symbol, "t": last.timeframe, "ts": last.ts, "w": last.way}
    return {"items": items, "last_key": call.next_cursor(TRACKED, position)}


TRADINGDATA: dict[str, Operation] = {
    "trend_signals": Operation(
        _trend_signals,
        access="public",
        request=c.TrendSignalsRequest,
        reply=c.TrendSignalsPage,
        summary="One page of the live trend break signals, newest first.",
        errors=c.LICENSE_ERRORS,
    ),
    "trend_signal_detail": Operation(
        lookups_as_404(_trend_signal_detail),
        access="public",
        request=c.TrendSignalDetailRequest,
        reply=c.TrendSignalDetail,
        summary="One trend break signal with its lines and chart.",
        errors=c.DETAIL_ERRORS,
    ),
    "trend_indicator": Operation(
        lookups_as_404(_trend_indicator),
        access="public",
        request=c.TrendIndicatorRequest,
        reply=c.TrendIndicator,
        summary="The latest sentiment of a series.",
        errors=c.SERIES_ERRORS,
    ),
    "trend_indicator_history": Operation(
        lookups_as_404(_trend_indicator_history),
        access="public",
        request=c.TrendIndicatorHistoryRequest,
        reply=c.TrendIndicatorHistory,
        summary="The sentiment of a series' last candles, newest first.",
        errors=c.SERIES_ERRORS,
    ),
    "track_trend_break_signal": Operation(
        _track,
        request=c.TrendTrackRequest,
        reply=c.Tracked,
        summary="Track a live trend break signal.",
        errors=c.TRACK_ERRORS,
    ),
    "untrack_trend_break_signal": Operation(
        _untrack, request=c.TrendTrackRequest, reply=c.Tracked, summary="Stop tracking a trend break signal."
    ),
    TRACKED: Operation(
        _tracked,
        request=c.TrackedSignalsRequest,
        reply=c.TrackedPage,
        summary="A page of the caller's tracked trend break signals.",
    ),
}
