"""``/user`` strategy operations: generate, detail, edit, versions, rollback, delete, visibility.

Each handler hands the checked request (its model in :mod:`svc_api.strategies.contract`) to a use
case of :mod:`svc_api.strategies.service` and returns its reply; only the versions list reads its
cursor here. See docs/strategies-api.md for the fields and errors.

Example:
    >>> sorted(USER)[:3]
    ['strategy_delete', 'strategy_detail', 'strategy_edit']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import Invalid
from svc_api.core.fields import position_int
from svc_api.strategies import contract as c
from svc_api.strategies import service as strategies


def _cap(call: Call) -> int:
    return int(call.services.settings.max_concurrent_generations)


def _generate(call: Call, req: c.NewStrategy) -> dict[str, Any]:
    return strategies.create_strategy(call.store, call.svc_id, req, max_generations=_cap(call), now=call.now)


def _edit(call: Call, req: c.StrategyChange) -> dict[str, Any]:
    return strategies.edit_strategy(
        call.store, call.svc_id, req.strategy_name, req.changes(), max_generations=_cap(call), now=call.now
    )


def _detail(call: Call, req: c.StrategyRef) -> dict[str, Any]:
    return strategies.strategy_detail(call.store, call.svc_id, req.strategy_name)


def _versions(call: Call, req: c.StrategyVersions) -> dict[str, Any]:
    position = call.cursor("strategy_versions")
    before = None if position is None else position_int(position, "v")
    name = req.strategy_name
    if position is not None and position.get("n") != name:
        raise Invalid("cursor belongs to another strategy")
    body, more = strategies.strategy_versions(call.store, call.svc_id, name, limit=req.limit, before=before)
    last = {"v": body["versions"][-1]["version"], "n": name} if more else None
    return body | call.user_page("strategy_versions", "versions", body["versions"], more, last)


def _rollback(call: Call, req: c.StrategyRollback) -> dict[str, Any]:
    return strategies.rollback_strategy(
        call.store, call.svc_id, req.strategy_name, req.target_version, now=call.now
    )


def _delete(call: Call, req: c.StrategyDelete) -> dict[str, Any]:
    return strategies.delete_strategy(call.store, call.svc_id, req.strategy_name, now=call.now)


def _visibility(call: Call, req: c.VisibilityChange) -> dict[str, Any]:
    public = None
    if req.visibility == "public":
        assert req.credits_per_signal is not None and req.timeframe is not None and req.coins is not None
        public = (req.credits_per_signal, req.timeframe, req.coins)
    return strategies.change_visibility(call.store, call.svc_id, req.strategy_name, public, now=call.now)


USER: dict[str, Operation] = {
    "strategy_generate": Operation(
        _generate,
        idempotent=True,
        request=c.NewStrategy,
        reply=c.StrategyGenerated,
        summary="Create a strategy from conditions in words (1 credit, refunded if generation fails).",
        errors=c.GENERATE_ERRORS,
    ),
    "strategy_detail": Operation(
        _detail,
        request=c.StrategyRef,
        reply=c.StrategyDetail,
        summary="One of the caller's strategies (its current version).",
        errors=c.NOT_FOUND,
    ),
    "strategy_edit": Operation(
        _edit,
        idempotent=True,
        request=c.StrategyChange,
        reply=c.StrategyEdited,
        summary="Change a strategy's conditions: a new version, regenerated and charged like a new one.",
        errors=c.EDIT_ERRORS,
    ),
    "strategy_versions": Operation(
        _versions,
        request=c.StrategyVersions,
        reply=c.StrategyVersionsPage,
        summary="A strategy's versions, newest first.",
        errors=c.NOT_FOUND,
    ),
    "strategy_rollback": Operation(
        _rollback,
        idempotent=True,
        request=c.StrategyRollback,
        reply=c.StrategyRolledBack,
        summary="A new version copying an earlier one (no charge); the strategy goes private.",
        errors=c.ROLLBACK_ERRORS,
    ),
    "strategy_delete": Operation(
        _delete,
        request=c.StrategyDelete,
        reply=c.StrategyDeleted,
        summary="Delete a strategy, its versions and its backtests.",
        errors=c.DELETE_ERRORS,
    ),
    "strategy_visibility": Operation(
        _visibility,
        request=c.VisibilityChange,
        reply=c.StrategyVisibility,
        summary="Publish a strategy on its profitable coins, or make it private.",
        errors=c.VISIBILITY_ERRORS,
    ),
}
