"""``/user`` live signal operations: ``active_signals`` and ``signal_history``.

Example:
    >>> sorted(USER)
    ['active_signals', 'signal_history']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import position_int, position_str
from svc_api.signals import contract as c
from svc_api.signals import service as signals


def _after(call: Call, kind: str) -> tuple[int, str] | None:
    position = call.cursor(kind)
    return None if position is None else (position_int(position, "t"), position_str(position, "k"))


def _reply(call: Call, kind: str, page: list[dict[str, Any]], last: tuple[int, str] | None) -> dict[str, Any]:
    position = None if last is None else {"t": last[0], "k": last[1]}
    return call.user_page(kind, "signals", page, last is not None, position)


def _active_signals(call: Call, req: c.ActiveSignalsRequest) -> dict[str, Any]:
    page, last = signals.active_signals(
        call.store, call.svc_id, req.strategy_name, limit=req.limit, after=_after(call, "active")
    )
    return _reply(call, "active", page, last)


def _signal_history(call: Call, req: c.SignalHistoryRequest) -> dict[str, Any]:
    page, last = signals.signal_history(
        call.store, call.svc_id, req.filters, limit=req.page_size, after=_after(call, "history")
    )
    return _reply(call, "history", page, last)


USER: dict[str, Operation] = {
    "active_signals": Operation(
        _active_signals,
        inline=True,
        request=c.ActiveSignalsRequest,
        reply=c.SignalsPage,
        summary="The caller's live signals (own and subscribed strategies), newest first.",
    ),
    "signal_history": Operation(
        _signal_history,
        request=c.SignalHistoryRequest,
        reply=c.SignalsPage,
        summary="The caller's closed signals, newest first, optionally filtered.",
    ),
}
