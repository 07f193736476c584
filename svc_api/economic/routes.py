"""Economic data operations on ``/user``: ``economic_news`` and ``economic_calendar``.

Both need an identity (session token or API key; 401 without), cost nothing (``cost_credits``
0.0) and page with ``limit`` (default 20; 1-50, a larger value is clamped to 50, as the spec's
"max 50" lists do; 0, negative or not an integer is a 400) and ``cursor`` (the previous
``next_cursor``, also given as ``last_evaluated_key``; one made for another list or tampered with
is a 400). The reply carries ``timestamp`` (the service's time, Unix seconds) at the top level.

``economic_calendar`` takes ``mode``: ``upcoming`` (default; events from now through now +
``horizon_days`` days, default 7, 1-90, soonest first) or ``recent`` (events before now, newest
first; ``horizon_days`` is checked but not used). Another mode is a 400.

Example:
    >>> sorted(USER)
    ['economic_calendar', 'economic_news']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation, Reply
from svc_api.core.fields import position_int, position_str
from svc_api.economic import contract as c
from svc_api.economic import service as economic

NEWS = "economic_news"


def _after(call: Call, kind: str) -> tuple[int, str] | None:
    position = call.cursor(kind, personal=False)
    return None if position is None else (position_int(position, "t"), position_str(position, "k"))


def _news(call: Call, req: c.News) -> Reply:
    items, last = economic.news_page(call.store, limit=req.limit, after=_after(call, NEWS))
    cursor = call.next_cursor(NEWS, last, personal=False)
    data = {
        "news": items,
        "count": len(items),
        "has_more": last is not None,
        "next_cursor": cursor,
        "last_evaluated_key": cursor,
        "cost_credits": 0.0,
    }
    return Reply(data, timestamp=call.now)


def _calendar(call: Call, req: c.Calendar) -> Reply:
    mode, horizon = req.mode, req.horizon_days
    kind = f"economic_calendar:{mode}"
    now = call.now
    items, last = economic.calendar_page(
        call.store, mode=mode, now=now, horizon_days=horizon, limit=req.limit, after=_after(call, kind)
    )
    cursor = call.next_cursor(kind, last, personal=False)
    data: dict[str, Any] = {
        "calendar": items,
        "count": len(items),
        "mode": mode,
        "has_more": last is not None,
        "next_cursor": cursor,
        "last_evaluated_key": cursor,
        "cost_credits": 0.0,
    }
    if mode == "upcoming":
        data["horizon_days"] = horizon
    return Reply(data, timestamp=now)


USER: dict[str, Operation] = {
    "economic_news": Operation(
        _news, request=c.News, reply=c.NewsPage, summary="Economic news, newest first (no credits)."
    ),
    "economic_calendar": Operation(
        _calendar,
        request=c.Calendar,
        reply=c.CalendarPage,
        summary="Economic calendar events ahead or past (no credits).",
    ),
}
