"""``/user`` live signal operations: ``active_signals`` and ``signal_history``.

Example:
    >>> sorted(USER)
    ['active_signals', 'signal_history']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.cursors import page_size
from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import Invalid
from svc_api.core.fields import position_int, position_str
from svc_api.signals import service as signals

HISTORY_FILTERS = ("coin", "strategy_name", "owner")
OWNERS = ("me", "subscribed")


def _names(value: Any) -> list[str] | None:
    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise Invalid("strategy_name must be a strategy name or a non-empty list of them")
    return names


def _after(call: Call, kind: str) -> tuple[int, str] | None:
    position = call.cursor(kind)
    return None if position is None else (position_int(position, "t"), position_str(position, "k"))


def _active_signals(call: Call) -> dict[str, Any]:
    names = _names(call.params.get("strategy_name"))
    limit = call.page(25, 1, 50)
    page, last = signals.active_signals(
        call.store, call.svc_id, names, limit=limit, after=_after(call, "active")
    )
    return call.user_page(
        "active", "signals", page, last is not None, None if last is None else {"t": last[0], "k": last[1]}
    )


def _filters(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or any(k not in HISTORY_FILTERS for k in value):
        raise Invalid(f"filters must be an object of {', '.join(HISTORY_FILTERS)}")
    if not all(isinstance(v, str) and v for v in value.values()):
        raise Invalid("each filter must be a non-empty string")
    if "owner" in value and value["owner"] not in OWNERS:
        raise Invalid(f"filters.owner must be one of {', '.join(OWNERS)}, got {value['owner']!r}")
    return dict(value)


def _signal_history(call: Call) -> dict[str, Any]:
    filters = _filters(call.params.get("filters"))
    limit = page_size(call.params.get("page_size"), 20, 1, 50)
    page, last = signals.signal_history(
        call.store, call.svc_id, filters, limit=limit, after=_after(call, "history")
    )
    return call.user_page(
        "history", "signals", page, last is not None, None if last is None else {"t": last[0], "k": last[1]}
    )


USER: dict[str, Operation] = {
    "active_signals": Operation(_active_signals, inline=True),
    "signal_history": Operation(_signal_history),
}
