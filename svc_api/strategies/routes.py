"""``/user`` strategy operations: generate, detail, edit, versions, rollback, delete, visibility.

Each handler hands the request's fields to a use case of :mod:`svc_api.strategies.service` and
returns its reply; only the versions list reads its cursor here. See docs/strategies-api.md for the
fields and errors.

Example:
    >>> sorted(USER)[:3]
    ['strategy_delete', 'strategy_detail', 'strategy_edit']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import Invalid
from svc_api.core.fields import position_int
from svc_api.strategies import service as strategies


def _cap(call: Call) -> int:
    return int(call.services.settings.max_concurrent_generations)


def _generate(call: Call) -> dict[str, Any]:
    return strategies.create_strategy(
        call.store, call.svc_id, call.params, max_generations=_cap(call), now=call.now
    )


def _edit(call: Call) -> dict[str, Any]:
    return strategies.edit_strategy(
        call.store, call.svc_id, call.params, max_generations=_cap(call), now=call.now
    )


def _detail(call: Call) -> dict[str, Any]:
    return strategies.strategy_detail(call.store, call.svc_id, call.params.get("strategy_name"))


def _versions(call: Call) -> dict[str, Any]:
    limit = call.page(25, 1, 100)
    position = call.cursor("strategy_versions")
    before = None if position is None else position_int(position, "v")
    name = call.params.get("strategy_name")
    if position is not None and position.get("n") != name:
        raise Invalid("cursor belongs to another strategy")
    body, more = strategies.strategy_versions(call.store, call.svc_id, name, limit=limit, before=before)
    last = {"v": body["versions"][-1]["version"], "n": name} if more else None
    return body | call.user_page("strategy_versions", "versions", body["versions"], more, last)


def _rollback(call: Call) -> dict[str, Any]:
    p = call.params
    return strategies.rollback_strategy(
        call.store, call.svc_id, p.get("strategy_name"), p.get("target_version"), now=call.now
    )


def _delete(call: Call) -> dict[str, Any]:
    p = call.params
    return strategies.delete_strategy(
        call.store, call.svc_id, p.get("strategy_name"), p.get("confirm_name"), now=call.now
    )


def _visibility(call: Call) -> dict[str, Any]:
    return strategies.change_visibility(call.store, call.svc_id, call.params, now=call.now)


USER: dict[str, Operation] = {
    "strategy_generate": Operation(_generate, idempotent=True),
    "strategy_detail": Operation(_detail),
    "strategy_edit": Operation(_edit, idempotent=True),
    "strategy_versions": Operation(_versions),
    "strategy_rollback": Operation(_rollback, idempotent=True),
    "strategy_delete": Operation(_delete),
    "strategy_visibility": Operation(_visibility),
}
