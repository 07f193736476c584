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

import re
from typing import Any

from svc_api.core.dispatch import Call, Operation, Reply
from svc_api.core.errors import Invalid
from svc_api.core.fields import position_int, position_str
from svc_api.economic import service as economic

NEWS = "economic_news"
LIMIT = (20, 1, 50)
HORIZON = (7, 1, 90)
_INTEGER = re.compile(r"[0-9]{1,6}")


def _after(call: Call, kind: str) -> tuple[int, str] | None:
    position = call.cursor(kind, personal=False)
    return None if position is None else (position_int(position, "t"), position_str(position, "k"))


def horizon_days(value: object) -> int:
    """``horizon_days``: default 7; an integer (or a string of digits) from 1 to 90, else 400.

    Example:
        >>> horizon_days(None), horizon_days("30")
        (7, 30)
        >>> horizon_days(91)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: horizon_days must be an integer from 1 to 90, got 91
    """
    default, lo, hi = HORIZON
    if value is None or value == "":
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        number = None
    if number is None or not lo <= number <= hi:
        raise Invalid(f"horizon_days must be an integer from {lo} to {hi}, got {value!r}")
    return number


def mode_of(value: object) -> str:
    """``mode``: ``upcoming`` (default) or ``recent``, else 400.

    Example:
        >>> mode_of(None), mode_of("recent")
        ('upcoming', 'recent')
        >>> mode_of("past")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: mode must be one of upcoming, recent, got 'past'
    """
    if value is None or value == "":
        return "upcoming"
    if value not in economic.MODES:
        raise Invalid(f"mode must be one of {', '.join(economic.MODES)}, got {value!r}")
    return str(value)


def _news(call: Call) -> Reply:
    limit = call.page(*LIMIT, clamp=True)
    items, last = economic.news_page(call.store, limit=limit, after=_after(call, NEWS))
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


def _calendar(call: Call) -> Reply:
    limit = call.page(*LIMIT, clamp=True)
    mode = mode_of(call.params.get("mode"))
    horizon = horizon_days(call.params.get("horizon_days"))
    kind = f"economic_calendar:{mode}"
    now = call.now
    items, last = economic.calendar_page(
        call.store, mode=mode, now=now, horizon_days=horizon, limit=limit, after=_after(call, kind)
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
    "economic_news": Operation(_news),
    "economic_calendar": Operation(_calendar),
}
