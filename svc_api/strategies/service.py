"""User strategies: create from words, read, edit, version, roll back, delete, make public.

A strategy belongs to one account and is named uniquely within it. Each generation (create or
edit) adds a version in status ``generating``, charges :data:`GENERATION_COST` credit upfront and
is compiled by the background worker (:mod:`svc_api.strategies.generation`) into ``active`` or
``failed`` (then refunded in full). The strategy's status is the status of its current version.

Mutations lock the caller's account row first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite
serialises writers anyway), so the plan limit, the generation cap and the name check hold under
concurrent requests.

Example:
    >>> check_name("rsidip1")
    'rsidip1'
    >>> MAX_ACTIVE["plus"], MAX_COINS["plus"]
    (2, 10)
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.accounts.service import ACCOUNTS as accounts
from svc_api.accounts.service import add_account_section, current_plan
from svc_api.core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound
from svc_api.core.prepared import Prepared
from svc_api.core.store import StoreUnavailable
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_api.strategies.tables import strategies, strategy_versions
from svc_engine.data.schema import TIMEFRAMES
from svc_engine.instruments import UnknownInstrumentError, resolve
from svc_engine.strategy import Strategy

logger = logging.getLogger("svc_api.strategies")

GENERATION_COST = 1
#: Default per-user cap on generations in progress (``Settings.max_concurrent_generations``; the
#: route passes the setting as ``max_generations``).
MAX_GENERATIONS = Settings.max_concurrent_generations
MAX_ACTIVE = {"free": 0, "starter": 1, "plus": 2, "pro": 5, "investor": 10}
MAX_COINS = {"free": 0, "starter": 5, "plus": 10, "pro": 25, "investor": 50}
MARKET_TYPES = ("spot", "futures")
SIGNAL_MODES = ("signal_orders", "signal_only", "full")
POSITION_SIDES = ("long", "short")
LIVE = ("generating", "active")
MAX_CONDITION_CHARS = 1000
GENERATION_RETRY_AFTER = 5
_NAME = re.compile(r"[a-z0-9]{4,20}")
_COIN = re.compile(r"[A-Z0-9][A-Z0-9._/\-]{0,29}")


class StrategyNotActive(Conflict):
    """The strategy exists but its current version is not ``active`` (still generating, or failed)."""

    error = "strategy_not_active"


class GenerationBusy(DomainError):
    """The caller already has the maximum number of generations running (429 with Retry-After).

    Example:
        >>> busy = GenerationBusy(2, 2)
        >>> busy.status, busy.in_progress, busy.retry_after
        (429, 2, 5)
    """

    status = 429
    error = "too_many_requests"
    reason = "strategy_generation_in_progress"

    def __init__(self, in_progress: int, max_concurrent: int) -> None:
        super().__init__(
            f"{in_progress} strategy generation(s) already in progress (maximum {max_concurrent}); "
            "retry when one finishes",
            retry_after=GENERATION_RETRY_AFTER,
            extra={"in_progress": in_progress, "max_concurrent": max_concurrent},
        )
        self.in_progress = in_progress
        self.max_concurrent = max_concurrent


class DeleteUnavailable(DomainError):
    """A store needed to delete a strategy's backtests failed: nothing was deleted (503)."""

    status = 503
    error = "service_unavailable"


class NotEligible(Invalid):
    """No requested coin qualifies for ``public``; ``rejected_coins`` says why for each."""

    def __init__(self, message: str, rejected_coins: dict[str, str]) -> None:
        super().__init__(message, extra={"eligible_coins": [], "rejected_coins": rejected_coins})
        self.rejected_coins = rejected_coins


@dataclass(frozen=True)
class StrategyRecord:
    """One version of a strategy as the engine needs it (see :func:`load_strategy`).

    Example:
        >>> from svc_engine.strategy import compile_strategy
        >>> s = compile_strategy("close is above SMA(50)")
        >>> rec = StrategyRecord("smaup", 1, "active", "1h", "spot", "long", "signal_orders",
        ...                      s.candle_count, s.to_json())
        >>> rec.compiled() == s
        True
    """

    name: str
    version: int
    status: str
    timeframe: str
    market_type: str
    position_side: str
    signal_mode: str
    candle_count: int
    program_json: str
    entry_condition: str = ""
    tp_condition: str | None = None
    sl_condition: str | None = None

    def compiled(self) -> Strategy:
        """The engine's compiled program of this version."""
        return Strategy.from_json(self.program_json)


def check_name(value: Any, field: str = "strategy_name") -> str:
    """A valid strategy name: 4-20 lowercase letters and digits, at least one letter.

    Example:
        >>> check_name("1234")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name must contain at least one letter
    """
    if value is None or value == "":
        raise Invalid(f"{field} is required")
    if not isinstance(value, str) or _NAME.fullmatch(value) is None:
        raise Invalid(f"{field} must be 4-20 lowercase letters or digits (no spaces), got {value!r}")
    if not any(ch.isalpha() for ch in value):
        raise Invalid(f"{field} must contain at least one letter")
    return value


def load_strategy(
    conn: Connection, svc_id: str, strategy_name: str, *, version: int | None = None
) -> StrategyRecord:
    """The current (or the given) version of a strategy of ``svc_id``, ready to run.

    Raises:
        NotFound: no such strategy (or version) for this account (another user's is not found either).
        StrategyNotActive: (409, ``strategy_not_active``) the version is ``generating`` or ``failed``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     load_strategy(conn, "NOPE00", "rsidip")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' not found
    """
    head = _strategy(conn, svc_id, strategy_name)
    row = _version(conn, svc_id, strategy_name, head.current_version if version is None else version)
    if row.status != "active":
        detail = "is still generating" if row.status == "generating" else "failed to generate"
        raise StrategyNotActive(
            f"strategy {strategy_name!r} version {row.version} {detail}; only an active strategy can be used"
        )
    return StrategyRecord(
        name=row.name,
        version=int(row.version),
        status=row.status,
        timeframe=row.timeframe,
        market_type=row.market_type,
        position_side=row.position_side,
        signal_mode=row.signal_mode,
        candle_count=int(row.candle_count),
        program_json=row.program_json,
        entry_condition=row.entry_condition,
        tp_condition=row.tp_condition,
        sl_condition=row.sl_condition,
    )


def generate(
    conn: Connection, svc_id: str, params: Mapping[str, Any], *, now: int | None = None,
    max_generations: int = MAX_GENERATIONS,
) -> dict[str, Any]:
    """Create a strategy (version 1, private, ``generating``) and charge the generation upfront.

    Checks, in order: fields (400), plan limit on active strategies (403), name taken (409),
    generations in progress (``max_generations``, from ``SVC_MAX_CONCURRENT_GENERATIONS``;
    :class:`GenerationBusy`, 429), credits (402).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     generate(conn, "NOPE00", {"strategy_name": "rsidip"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: market_type is required: 'spot' or 'futures', got None
    """
    now = _now(now)
    name = check_name(params.get("strategy_name"))
    spec = _generation_fields(params)
    _lock_account(conn, svc_id)
    _check_plan_limit(conn, svc_id, exclude=None)
    if _find(conn, svc_id, name) is not None:
        raise Conflict(f"you already have a strategy named {name!r}")
    _check_generation_cap(conn, svc_id, max_generations)
    conn.execute(
        strategies.insert().values(
            svc_id=svc_id, name=name, current_version=1, created_at=now, updated_at=now
        )
    )
    _add_generation(conn, svc_id, name, 1, spec, now)
    return {
        "strategy_name": name,
        "version": 1,
        "signal_mode": spec["signal_mode"],
        "status": "generating",
        "cost_upfront": GENERATION_COST,
        "cost_refunded_on_failure": True,
    }


def edit(
    conn: Connection, svc_id: str, params: Mapping[str, Any], *, now: int | None = None,
    max_generations: int = MAX_GENERATIONS,
) -> dict[str, Any]:
    """A new version with changed conditions, regenerated (and charged) like a new strategy.

    Conditions not given are copied from the current version; at least one must be given.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     edit(conn, "NOPE00", {"strategy_name": "rsidip"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: give at least one of entry_condition, tp_condition, sl_condition
    """
    now = _now(now)
    name = check_name(params.get("strategy_name"))
    fields = ("entry_condition", "tp_condition", "sl_condition")
    changes = {f: params[f] for f in fields if params.get(f) is not None}
    if not changes:
        raise Invalid(f"give at least one of {', '.join(fields)}")
    _lock_account(conn, svc_id)
    head = _strategy(conn, svc_id, name)
    current = _version(conn, svc_id, name, head.current_version)
    spec = {
        "market_type": current.market_type,
        "position_side": current.position_side,
        "signal_mode": current.signal_mode,
        "timeframe": current.timeframe,
        "entry_condition": current.entry_condition,
        "tp_condition": current.tp_condition,
        "sl_condition": current.sl_condition,
    }
    spec.update(_conditions({**spec, **changes}, spec["signal_mode"]))
    if current.status not in LIVE:
        _check_plan_limit(conn, svc_id, exclude=name)
    _check_generation_cap(conn, svc_id, max_generations)
    version = _next_version(conn, svc_id, name)
    _add_generation(conn, svc_id, name, version, spec, now)
    _set_head(conn, svc_id, name, current_version=version, updated_at=now)
    return {
        "strategy_name": name,
        "version": version,
        "status": "generating",
        "copiers_cancelled": 0,
        "cost_upfront": GENERATION_COST,
        "cost_refunded_on_failure": True,
    }


def detail(conn: Connection, svc_id: str, strategy_name: Any) -> dict[str, Any]:
    """The Strategy resource (current version); ``error`` is added when it failed to generate.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     detail(conn, "NOPE00", None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name is required
    """
    name = check_name(strategy_name)
    head = _strategy(conn, svc_id, name)
    row = _version(conn, svc_id, name, head.current_version)
    out = {
        "strategy_name": name,
        "status": row.status,
        "version": int(row.version),
        "market_type": row.market_type,
        "position_side": row.position_side,
        "signal_mode": row.signal_mode,
        "timeframe": row.timeframe,
        "entry_condition": row.entry_condition,
        "tp_condition": row.tp_condition,
        "sl_condition": row.sl_condition,
        "visibility": head.visibility,
        "credits_per_signal": credits.from_units(head.credits_per_signal),
        "public_coins": json.loads(head.public_coins),
        "candle_count": int(row.candle_count or 0),
        "leverage": int(head.leverage),
        "created_at": int(head.created_at),
        "updated_at": int(max(head.updated_at, row.updated_at)),
    }
    if row.status == "failed" and row.error:
        out["error"] = json.loads(row.error)
    return out


def versions(
    conn: Connection, svc_id: str, strategy_name: Any, *, limit: int, before: int | None = None
) -> tuple[dict[str, Any], bool]:
    """The versions of a strategy, newest first, keyset-paged below version ``before``.

    Returns ``({strategy_name, current_version, versions}, has_more)``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     versions(conn, "NOPE00", "rsidip", limit=25)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' not found
    """
    name = check_name(strategy_name)
    head = _strategy(conn, svc_id, name)
    query = sa.select(strategy_versions).where(
        strategy_versions.c.svc_id == svc_id, strategy_versions.c.name == name
    )
    if before is not None:
        query = query.where(strategy_versions.c.version < before)
    rows = conn.execute(query.order_by(strategy_versions.c.version.desc()).limit(limit + 1)).all()
    page = [
        {
            "version": int(r.version),
            "created_at": int(r.created_at),
            "status": r.status,
            "candle_count": int(r.candle_count or 0),
            "entry_condition": r.entry_condition,
            "tp_condition": r.tp_condition,
            "sl_condition": r.sl_condition,
            "rolled_back_from": r.rolled_back_from,
        }
        for r in rows[:limit]
    ]
    body = {"strategy_name": name, "current_version": int(head.current_version), "versions": page}
    return body, len(rows) > limit


def rollback(
    conn: Connection, svc_id: str, strategy_name: Any, target_version: Any, *, now: int | None = None
) -> dict[str, Any]:
    """A new version copying ``target_version`` (program included, no charge); the strategy goes private.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     rollback(conn, "NOPE00", "rsidip", "2")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: target_version must be a positive integer
    """
    now = _now(now)
    name = check_name(strategy_name)
    if not isinstance(target_version, int) or isinstance(target_version, bool) or target_version < 1:
        raise Invalid("target_version must be a positive integer")
    _lock_account(conn, svc_id)
    head = _strategy(conn, svc_id, name)
    target = _version(conn, svc_id, name, target_version)
    if target.status == "generating":
        raise Conflict(f"version {target_version} is still generating; roll back once it has finished")
    if target.status == "active" and _version(conn, svc_id, name, head.current_version).status not in LIVE:
        _check_plan_limit(conn, svc_id, exclude=name)
    version = _next_version(conn, svc_id, name)
    copied = {c.name: getattr(target, c.name) for c in strategy_versions.columns}
    copied.update(
        version=version,
        generation_id=uuid.uuid4().hex,
        cost_units=0,
        refunded=False,
        attempts=0,
        claimed_by=None,
        claimed_at=None,
        rolled_back_from=target_version,
        created_at=now,
        updated_at=now,
    )
    conn.execute(strategy_versions.insert().values(**copied))
    _set_head(
        conn,
        svc_id,
        name,
        current_version=version,
        visibility="private",
        credits_per_signal=0,
        public_coins="[]",
        public_timeframe=None,
        updated_at=now,
    )
    return {
        "strategy_name": name,
        "new_version": version,
        "rolled_back_to": target_version,
        "status": target.status,
        "visibility": "private",
        "credits_per_signal": 0,
        "marketplace_subscriptions_cancelled": 0,
    }


def delete(conn: Connection, svc_id: str, strategy_name: Any, confirm_name: Any) -> dict[str, Any]:
    """Delete a strategy, its versions and its backtests; ``confirm_name`` must equal the name.

    ``deleted_objects`` counts the versions and the backtest records removed.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     delete(conn, "NOPE00", "rsidip", "rsidlp")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: confirm_name must exactly equal strategy_name to delete 'rsidip'
    """
    name = check_name(strategy_name)
    if confirm_name is None or confirm_name == "":
        raise Invalid(f"confirm_name is required: repeat the strategy name {name!r} to delete it")
    if confirm_name != name:
        raise Invalid(f"confirm_name must exactly equal strategy_name to delete {name!r}")
    _lock_account(conn, svc_id)
    _strategy(conn, svc_id, name)
    backtests = _delete_backtests(conn, svc_id, name)
    removed = conn.execute(
        strategy_versions.delete().where(
            strategy_versions.c.svc_id == svc_id, strategy_versions.c.name == name
        )
    ).rowcount
    conn.execute(strategies.delete().where(strategies.c.svc_id == svc_id, strategies.c.name == name))
    return {"strategy_name": name, "deleted": True, "deleted_objects": int(removed) + backtests}


def set_visibility(
    conn: Connection, svc_id: str, params: Mapping[str, Any], *, now: int | None = None
) -> dict[str, Any]:
    """Make a strategy ``public`` (coins with a positive latest ``full_range`` return) or ``private``.

    Raises:
        Invalid: missing or bad fields; no completed ``full_range`` backtest; :class:`NotEligible`
            when no requested coin has a positive return.
        Forbidden: more coins than the plan allows per strategy.
        StrategyNotActive: the strategy is not ``active``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     set_visibility(conn, "NOPE00", {"strategy_name": "rsidip", "visibility": "open"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: visibility must be 'public' or 'private', got 'open'
    """
    now = _now(now)
    name = check_name(params.get("strategy_name"))
    visibility = params.get("visibility")
    if visibility not in ("public", "private"):
        raise Invalid(f"visibility must be 'public' or 'private', got {visibility!r}")
    if visibility == "private":
        _lock_account(conn, svc_id)
        _strategy(conn, svc_id, name)
        _set_head(conn, svc_id, name, visibility="private", credits_per_signal=0, public_coins="[]")
        return {"strategy_name": name, "visibility": "private"}
    price, timeframe, coins = _public_fields(params)
    _lock_account(conn, svc_id)
    load_strategy(conn, svc_id, name)
    limit = MAX_COINS[current_plan(conn, svc_id, now=now)]
    if len(coins) > limit:
        raise Forbidden(f"your plan allows at most {limit} coins per strategy; {len(coins)} requested")
    returns = _full_range_returns(conn, svc_id, name, timeframe)
    if returns is None:
        raise Invalid(f"strategy {name!r} has no completed full_range backtest on {timeframe}; run one first")
    eligible, rejected = _eligibility(coins, returns)
    if not eligible:
        raise NotEligible("no requested coin has a positive full_range return", rejected)
    _set_head(
        conn,
        svc_id,
        name,
        visibility="public",
        credits_per_signal=price,
        public_coins=json.dumps(eligible),
        public_timeframe=timeframe,
        updated_at=now,
    )
    return {
        "strategy_name": name,
        "visibility": "public",
        "credits_per_signal": credits.from_units(price),
        "timeframe": timeframe,
        "eligible_coins": eligible,
        "rejected_coins": rejected,
    }


@add_account_section
def account_section(conn: Connection, svc_id: str) -> dict[str, Any]:
    """The ``strategies`` map and ``active_own_strategies`` count of ``account_info``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     account_section(conn, "NOPE00")
        {'strategies': {}, 'active_own_strategies': 0}
    """
    rows = _ACCOUNT_SECTION.all(conn, {"svc_id": svc_id})
    mapping = {
        r.name: {
            "name": r.name,
            "status": r.status,
            "candle_count": int(r.candle_count or 0),
            "market_type": r.market_type,
            "leverage": int(r.leverage),
        }
        for r in rows
    }
    return {"strategies": mapping, "active_own_strategies": sum(r.status in LIVE for r in rows)}


def _generation_fields(params: Mapping[str, Any]) -> dict[str, Any]:
    market_type = params.get("market_type")
    if market_type not in MARKET_TYPES:
        raise Invalid(f"market_type is required: 'spot' or 'futures', got {market_type!r}")
    signal_mode = params.get("signal_mode")
    if signal_mode not in SIGNAL_MODES:
        raise Invalid(f"signal_mode is required: one of {', '.join(SIGNAL_MODES)}, got {signal_mode!r}")
    timeframe = params.get("timeframe")
    if not isinstance(timeframe, str) or timeframe not in TIMEFRAMES:
        raise Invalid(f"timeframe is required: one of {', '.join(TIMEFRAMES)}, got {timeframe!r}")
    side = params.get("position_side")
    if side is None and market_type == "futures" and signal_mode == "signal_orders":
        raise Invalid("position_side is required for futures signal_orders: 'long' or 'short'")
    side = "long" if side is None else side
    if side not in POSITION_SIDES:
        raise Invalid(f"position_side must be 'long' or 'short', got {side!r}")
    if market_type == "spot" and side == "short":
        raise Invalid("a spot strategy cannot go short; use market_type 'futures'")
    spec = {
        "market_type": market_type,
        "position_side": side,
        "signal_mode": signal_mode,
        "timeframe": timeframe,
    }
    return spec | _conditions(params, signal_mode)


def _conditions(params: Mapping[str, Any], signal_mode: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for field in ("entry_condition", "tp_condition", "sl_condition"):
        value = params.get(field)
        required = field == "entry_condition" or signal_mode == "signal_orders"
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                why = "" if field == "entry_condition" else " for signal_orders"
                raise Invalid(f"{field} is required{why}")
            out[field] = None
            continue
        if not isinstance(value, str):
            raise Invalid(f"{field} must be a string (the condition in words)")
        if len(value) > MAX_CONDITION_CHARS:
            raise Invalid(f"{field} must be at most {MAX_CONDITION_CHARS} characters")
        out[field] = value.strip()
    return out


def _public_fields(params: Mapping[str, Any]) -> tuple[int, str, list[str]]:
    missing = [f for f in ("credits_per_signal", "timeframe", "coins") if params.get(f) in (None, "", [])]
    if missing:
        raise Invalid(f"visibility public needs {', '.join(missing)}")
    raw_price = params["credits_per_signal"]
    if isinstance(raw_price, bool) or not isinstance(raw_price, int | float | str):
        raise Invalid("credits_per_signal must be a number from 0.01 to 10")
    price = credits.to_units(raw_price)
    if not credits.to_units("0.01") <= price <= credits.to_units(10):
        raise Invalid(f"credits_per_signal must be from 0.01 to 10, got {raw_price!r}")
    timeframe = params["timeframe"]
    if not isinstance(timeframe, str) or timeframe not in TIMEFRAMES:
        raise Invalid(f"timeframe must be one of {', '.join(TIMEFRAMES)}, got {timeframe!r}")
    coins = params["coins"]
    if not isinstance(coins, list) or not all(isinstance(c, str) for c in coins):
        raise Invalid("coins must be a list of coin names")
    names = list(dict.fromkeys(c.strip().upper() for c in coins))
    bad = [c for c in names if _COIN.fullmatch(c) is None]
    if bad:
        raise Invalid(f"invalid coin name(s): {', '.join(bad)}")
    return price, timeframe, names


def _eligibility(coins: list[str], returns: Mapping[str, float]) -> tuple[list[str], dict[str, str]]:
    by_key = {_coin_key(c): float(r) for c, r in returns.items()}
    eligible: list[str] = []
    rejected: dict[str, str] = {}
    for coin in coins:
        found = by_key.get(_coin_key(coin))
        if found is None:
            rejected[coin] = "no_backtest"
        elif found > 0:
            eligible.append(coin)
        else:
            rejected[coin] = "negative_return"
    return eligible, rejected


def _coin_key(coin: str) -> tuple[str, str]:
    """The instrument a coin names (``BTC`` and ``BTCUSDT`` are one), else the name itself."""
    try:
        found = resolve(coin)
    except (UnknownInstrumentError, ValueError):
        return ("", coin.strip().upper())
    return (found.market, found.symbol)


ReturnsSource = Callable[[Connection, str, str, str], "dict[str, float] | None"]
DeleteHook = Callable[[Connection, str, str], int]
_HOOKS: dict[str, Any] = {}


def register_backtest_hooks(*, full_range_returns: ReturnsSource, delete_for_strategy: DeleteHook) -> None:
    """Let the backtests domain answer for a strategy's results without strategies importing it.

    ``full_range_returns(conn, svc_id, name, timeframe)`` gives the per-coin returns of the latest
    full-range backtest (public visibility needs them); ``delete_for_strategy(conn, svc_id, name)``
    deletes a strategy's backtests inside the deleting transaction. Without hooks a strategy has no
    backtests.

    Example:
        >>> register_backtest_hooks(full_range_returns=lambda *a: None, delete_for_strategy=lambda *a: 0)
        >>> _delete_backtests(None, "AB12CD", "mystrat")
        0
    """
    _HOOKS["returns"] = full_range_returns
    _HOOKS["delete"] = delete_for_strategy


def _full_range_returns(
    conn: Connection, svc_id: str, strategy_name: str, timeframe: str
) -> dict[str, float] | None:
    source = _HOOKS.get("returns")
    return None if source is None else source(conn, svc_id, strategy_name, timeframe)


def _delete_backtests(conn: Connection, svc_id: str, strategy_name: str) -> int:
    hook = _HOOKS.get("delete")
    if hook is None:
        return 0
    try:
        return int(hook(conn, svc_id, strategy_name))
    except (DomainError, StoreUnavailable, sa.exc.SQLAlchemyError):
        raise
    except Exception as exc:
        # The object store failed: raising rolls the transaction back, so no row is deleted.
        logger.exception("deleting the backtests of strategy %r failed", strategy_name)
        raise DeleteUnavailable(
            f"strategy {strategy_name!r} could not be deleted safely (result store unavailable); "
            "nothing was deleted, retry shortly"
        ) from exc


def _add_generation(
    conn: Connection, svc_id: str, name: str, version: int, spec: Mapping[str, Any], now: int
) -> None:
    generation_id = uuid.uuid4().hex
    credits.spend_credits(
        conn,
        svc_id,
        GENERATION_COST,
        "strategy_generate",
        f"Strategy generation: {name} v{version}",
        idempotency_key=f"strategy-generate-{generation_id}",
    )
    conn.execute(
        strategy_versions.insert().values(
            svc_id=svc_id,
            name=name,
            version=version,
            generation_id=generation_id,
            status="generating",
            cost_units=credits.to_units(GENERATION_COST),
            created_at=now,
            updated_at=now,
            **spec,
        )
    )


def _check_plan_limit(conn: Connection, svc_id: str, *, exclude: str | None) -> None:
    plan = current_plan(conn, svc_id)
    limit = MAX_ACTIVE[plan]
    if limit == 0:
        raise Forbidden(
            "the free plan includes no strategies; upgrade to starter (1 active strategy), "
            "plus (2), pro (5) or investor (10)"
        )
    query = (
        sa.select(sa.func.count())
        .select_from(strategies.join(strategy_versions, _current_join()))
        .where(strategies.c.svc_id == svc_id, strategy_versions.c.status.in_(LIVE))
    )
    if exclude is not None:
        query = query.where(strategies.c.name != exclude)
    active = int(conn.execute(query).scalar_one())
    if active >= limit:
        raise Forbidden(
            f"your {plan} plan allows {limit} active strategies and you have {active}; "
            "delete one or upgrade your plan"
        )


def _check_generation_cap(conn: Connection, svc_id: str, cap: int) -> None:
    running = int(
        conn.execute(
            sa.select(sa.func.count()).where(
                strategy_versions.c.svc_id == svc_id, strategy_versions.c.status == "generating"
            )
        ).scalar_one()
    )
    if running >= cap:
        raise GenerationBusy(running, cap)


def _current_join() -> sa.ColumnElement[bool]:
    return sa.and_(
        strategy_versions.c.svc_id == strategies.c.svc_id,
        strategy_versions.c.name == strategies.c.name,
        strategy_versions.c.version == strategies.c.current_version,
    )


# Built once: account_info (one of the most frequent reads) runs it on every call, and building
# the select cost more than running it.
_ACCOUNT_SECTION = Prepared(
    sa.select(
        strategies.c.name,
        strategies.c.leverage,
        strategy_versions.c.status,
        strategy_versions.c.candle_count,
        strategy_versions.c.market_type,
    )
    .join(strategy_versions, _current_join())
    .where(strategies.c.svc_id == sa.bindparam("svc_id"))
    .order_by(strategies.c.name)
)


def _lock_account(conn: Connection, svc_id: str) -> None:
    found = conn.execute(
        sa.select(accounts.c.svc_id).where(accounts.c.svc_id == svc_id).with_for_update()
    ).first()
    if found is None:
        raise NotFound(f"unknown account {svc_id}")


def _find(conn: Connection, svc_id: str, name: str) -> Any:
    return conn.execute(
        sa.select(strategies).where(strategies.c.svc_id == svc_id, strategies.c.name == name)
    ).first()


def _strategy(conn: Connection, svc_id: str, name: str) -> Any:
    row = _find(conn, svc_id, name)
    if row is None:
        raise NotFound(f"strategy {name!r} not found")
    return row


def _version(conn: Connection, svc_id: str, name: str, version: int) -> Any:
    row = conn.execute(
        sa.select(strategy_versions).where(
            strategy_versions.c.svc_id == svc_id,
            strategy_versions.c.name == name,
            strategy_versions.c.version == version,
        )
    ).first()
    if row is None:
        raise NotFound(f"strategy {name!r} has no version {version}")
    return row


def _next_version(conn: Connection, svc_id: str, name: str) -> int:
    top = conn.execute(
        sa.select(sa.func.max(strategy_versions.c.version)).where(
            strategy_versions.c.svc_id == svc_id, strategy_versions.c.name == name
        )
    ).scalar()
    return int(top or 0) + 1


def _set_head(conn: Connection, svc_id: str, name: str, **values: Any) -> None:
    conn.execute(
        strategies.update().where(strategies.c.svc_id == svc_id, strategies.c.name == name).values(**values)
    )


def _now(now: int | None) -> int:
    return int(time.time()) if now is None else now
