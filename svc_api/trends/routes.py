"""Trend data over HTTP (``/tradingdata``): ``trend_signals``, ``trend_signal_detail``,
``trend_indicator``, ``trend_indicator_history`` (guest-accessible) and, for identified callers,
``track_trend_break_signal``, ``untrack_trend_break_signal``, ``tracked_trend_break_signals``.

Parameter names and reply shapes are listed in ``docs/market-api.md``.

Example:
    >>> sorted(TRADINGDATA)[:3]
    ['track_trend_break_signal', 'tracked_trend_break_signals', 'trend_indicator']
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from svc_api.core.dispatch import Call, Operation, lookups_as_404
from svc_api.core.errors import Forbidden, Invalid, NotFound
from svc_api.core.fields import check_name, last_page, page_number, parse_seconds
from svc_api.market.service import catalog_of
from svc_api.trends import service as trends

LIST_TTL = 5.0
DETAIL_TTL = 60.0
SENTIMENT_TTL = 30.0
TRACKED = "tracked_trend_break_signals"
FREE_PLANS = ("guest", "free")

clock: Callable[[], float] = time.time
"""The wall clock (replaceable in tests); trend signals age in market time, at most this."""


class LicenseRequired(Forbidden):
    """A page of ``trend_signals`` after the first without a paid plan (403)."""

    code = "license_required"


def _now(call: Call) -> int:
    return trends.market_now(catalog_of(call.services), int(clock()))


def _trend_signals(call: Call) -> dict[str, Any]:
    page = page_number(call.params.get("page"))
    if page > 0 and call.principal.plan in FREE_PLANS:
        raise LicenseRequired("pages of trend_signals after page 0 need a license (a paid plan)")
    limit = call.page(50, 1, 50, clamp=True)

    def compute() -> dict[str, Any]:
        now = _now(call)
        with call.store.read() as conn:
            items, total = trends.list_signals(conn, page=page, limit=limit, now=now)
        return {"items": items, "page": page, "count": len(items), "last_page": last_page(total, limit)}

    if page == 0:  # the page every guest asks for; later pages are few and per licensed user
        return call.services.cached(f"trends:list:{limit}", LIST_TTL, compute)
    return compute()


def _timeframe(value: object, field: str) -> str:
    from svc_engine.data import TIMEFRAMES

    if value not in TIMEFRAMES:
        raise Invalid(f"{field} must be a timeframe as in the list ({', '.join(TIMEFRAMES)}), got {value!r}")
    return str(value)


def _trend_signal_detail(call: Call) -> dict[str, Any]:
    p = call.params
    missing = [f for f in ("coin_name", "graph_type", "timestamp") if p.get(f) in (None, "")]
    if missing:
        raise Invalid(f"missing required fields: {', '.join(missing)}")
    symbol = check_name(p["coin_name"], "coin_name") or ""
    timeframe = _timeframe(p["graph_type"], "graph_type")
    ts = parse_seconds(p["timestamp"], "timestamp")
    way = None if p.get("way") in (None, "") else str(p["way"]).upper()
    if way is not None and way not in trends.WAYS:
        raise Invalid(f"way must be BUY or SELL, got {p['way']!r}")
    return {"item": _detail(call, symbol, timeframe, ts, way)}


class RecentDetails:
    """The last ``size`` signal details, each for ``ttl`` seconds: new signals keep coming, so the
    cache of an app that runs for months must forget (the app's general cache never does).

    Example:
        >>> cache = RecentDetails(size=2, ttl=60)
        >>> [cache.get(k, lambda k=k: k * 10) for k in (1, 2, 1, 3)], sorted(cache._items)
        ([10, 20, 10, 30], [1, 3])
    """

    def __init__(self, size: int = 512, ttl: float = DETAIL_TTL) -> None:
        self.size, self.ttl = size, ttl
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        """The value of ``key``, computed when absent or older than ``ttl``."""
        now = time.monotonic()
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] > now:
                self._items.move_to_end(key)
                return hit[1]
        value = compute()
        with self._lock:
            self._items[key] = (now + self.ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


def _detail(call: Call, symbol: str, timeframe: str, ts: int, way: str | None) -> dict[str, Any]:
    """The engine's detail of one signal, reused for ``DETAIL_TTL`` seconds (lists ask for many)."""
    store = catalog_of(call.services).store
    cache: RecentDetails = call.services.cached("trends:details", math.inf, RecentDetails)
    return cache.get((symbol, timeframe, ts, way), lambda: trends.detail(store, symbol, timeframe, ts, way))


def _trend_indicator(call: Call) -> dict[str, Any]:
    from svc_engine.trend import sentiment_item

    catalog = catalog_of(call.services)
    key, found_market, symbol, timeframe = trends.parse_market_key(catalog, call.params.get("market_key"))

    def compute() -> dict[str, Any]:
        scores = trends.sentiment_scores(catalog, found_market, symbol, timeframe, count=1, before=None)
        item = sentiment_item(key, scores.row(-1, named=True)) if scores.height else None
        return {"market_key": key, "item": item, "count": int(item is not None)}

    return call.services.cached(f"trends:indicator:{key}", SENTIMENT_TTL, compute)


def _trend_indicator_history(call: Call) -> dict[str, Any]:
    from svc_engine.trend import sentiment_history

    p = call.params
    catalog = catalog_of(call.services)
    key, found_market, symbol, timeframe = trends.parse_market_key(catalog, p.get("market_key"))
    limit = call.page(200, 1, 200, clamp=True)
    raw = p.get("before")
    before = None if raw in (None, "") else parse_seconds(raw, "before")
    scores = trends.sentiment_scores(catalog, found_market, symbol, timeframe, count=limit, before=before)
    return sentiment_history(key, scores, limit=limit, before=before)


def _track(call: Call) -> dict[str, Any]:
    key = trends.signal_key(call.params)
    now = _now(call)
    with call.store.write() as conn:
        return trends.track(conn, call.svc_id, key, now=now)


def _untrack(call: Call) -> dict[str, Any]:
    key = trends.signal_key(call.params)
    with call.store.write() as conn:
        return trends.untrack(conn, call.svc_id, key)


def _after(position: dict[str, Any] | None) -> trends.SignalKey | None:
    if position is None:
        return None
    s, t, ts, w = (position.get(k) for k in ("s", "t", "ts", "w"))
    if not (isinstance(s, str) and isinstance(t, str) and isinstance(w, str) and isinstance(ts, int)):
        raise Invalid("cursor is not valid for this list")
    return trends.SignalKey(s, t, ts, w)


def _tracked(call: Call) -> dict[str, Any]:
    limit = call.page(20, 1, 50)
    after = _after(call.cursor(TRACKED))
    with call.store.read() as conn:
        page, more = trends.tracked_page(conn, call.svc_id, limit=limit, after=after)
    items = []
    for key, is_return in page:
        try:
            items.append(_detail(call, key.symbol, key.timeframe, key.ts, key.way))
        except NotFound:  # its candles left the data store: the record without chart
            row = {"symbol": key.symbol, "timeframe": key.timeframe, "ts": key.ts, "way": key.way,
                   "is_return_to_trend": is_return}
            items.append({**trends.summary(row), "trend_data": {}})
    last = page[-1][0] if more else None
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
