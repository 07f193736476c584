"""The request and reply models of the strategy operations (``/user`` ``strategy_*``).

Fields are declared in the order the service checks them; a rule that reads other fields of the
request (the position side, the conditions, the public terms) receives a :class:`Sent` from
:meth:`Fields.prepare`, so it runs at its own place in that order.

Example:
    >>> NewStrategy.model_validate({"strategy_name": "rsidip", "market_type": "spot",
    ...     "signal_mode": "signal_only", "timeframe": "1h", "entry_condition": " RSI(14) < 30 "}).spec()
    ... # doctest: +NORMALIZE_WHITESPACE
    {'market_type': 'spot', 'position_side': 'long', 'signal_mode': 'signal_only', 'timeframe': '1h',
     'entry_condition': 'RSI(14) < 30', 'tp_condition': None, 'sl_condition': None, 'exit_condition': None}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.core.params import AsSent, Limit, UserPage
from svc_api.strategies import fields as f
from svc_api.strategies.fields import Sent
from svc_engine.data.schema import TIMEFRAMES

_TIMEFRAMES = list(TIMEFRAMES)
_NAME_SCHEMA = {
    "type": "string",
    "pattern": "^(?=.*[a-z])[a-z0-9]{4,20}$",
    "description": "The strategy's name.",
}
_CONDITION = {"type": ["string", "null"], "maxLength": f.MAX_CONDITION_CHARS}

StrategyName = Annotated[str, Check(f.check_name, _NAME_SCHEMA, required=True)]
"""A strategy name: 4-20 lowercase letters and digits, at least one letter."""


def _condition(description: str, *, required: bool = False) -> Any:
    schema = {**_CONDITION, "description": description}
    return Annotated[str | None, Check(f.condition, schema, required=required)]


def _with_request(data: Mapping[str, Any], names: tuple[str, ...], out: dict[str, Any]) -> dict[str, Any]:
    """``out`` with the fields ``names`` handed over as :class:`Sent` (their rules read the request)."""
    return out | {name: Sent(data.get(name), data) for name in names}


class NewStrategy(Fields):
    """``strategy_generate``: a new strategy from conditions in words (version 1, private)."""

    strategy_name: StrategyName
    market_type: Annotated[str, Check(f.market_type, {"enum": list(f.MARKET_TYPES)}, required=True)]
    signal_mode: Annotated[str, Check(f.signal_mode, {"enum": list(f.SIGNAL_MODES)}, required=True)]
    timeframe: Annotated[str, Check(f.timeframe, {"enum": _TIMEFRAMES}, required=True)]
    position_side: Annotated[
        str,
        Check(
            f.position_side,
            {
                "enum": list(f.POSITION_SIDES),
                "default": "long",
                "description": "Required for futures `signal_orders`; a spot strategy is long.",
            },
        ),
    ]
    entry_condition: _condition("When to enter, in words.", required=True)
    tp_condition: _condition("Take profit, in words; required for `signal_orders`.")
    sl_condition: _condition("Stop loss, in words; required for `signal_orders`.")
    exit_condition: _condition("When an open position leaves besides its TP/SL (docs/exits.md).")

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The side and the conditions read the request's market type and signal mode."""
        return _with_request(data, ("position_side", *f.CONDITIONS), super().prepare(data))

    def spec(self) -> dict[str, Any]:
        """The version's market type, side, signal mode, timeframe and conditions (see the module
        example)."""
        names = ("market_type", "position_side", "signal_mode", "timeframe", *f.CONDITIONS)
        return {name: getattr(self, name) for name in names}


class StrategyRef(Fields):
    """``strategy_detail``: one of the caller's strategies."""

    strategy_name: StrategyName


class StrategyChange(Fields):
    """``strategy_edit``: new conditions (at least one; the others are kept), regenerated."""

    strategy_name: StrategyName
    entry_condition: Annotated[
        Any,
        Check(
            f.some_condition,
            {**_CONDITION, "description": "Give at least one condition; each is checked with the version's."},
        ),
    ]
    tp_condition: AsSent(_CONDITION)
    sl_condition: AsSent(_CONDITION)
    exit_condition: AsSent({**_CONDITION, "description": "An empty string removes the exit rule."})

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The first condition's rule asks for at least one condition."""
        return _with_request(data, ("entry_condition",), super().prepare(data))

    def changes(self) -> dict[str, Any]:
        """The conditions sent (not null), by name; checked with the current version's after the
        look-up.

        Example:
            >>> StrategyChange.model_validate({"strategy_name": "rsidip", "tp_condition": "2%"}).changes()
            {'tp_condition': '2%'}
        """
        return {name: getattr(self, name) for name in f.CONDITIONS if getattr(self, name) is not None}


class StrategyVersions(Fields):
    """``strategy_versions``: a strategy's versions, newest first."""

    limit: Limit(25, 1, 100)
    cursor: AsSent({"type": ["string", "null"], "description": "The previous page's cursor."})
    strategy_name: AsSent(_NAME_SCHEMA, required=True)
    """Checked after the cursor (a cursor of another strategy answers first)."""


class StrategyRollback(Fields):
    """``strategy_rollback``: a new version copying an earlier one."""

    strategy_name: StrategyName
    target_version: Annotated[int, Check(f.target_version, {"type": "integer", "minimum": 1}, required=True)]


class StrategyDelete(Fields):
    """``strategy_delete``: delete a strategy, its versions and its backtests."""

    strategy_name: StrategyName
    confirm_name: Annotated[
        str,
        Check(
            f.confirm_name,
            {"type": "string", "description": "The strategy name again, exactly."},
            required=True,
        ),
    ]

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The confirmation is compared with the name."""
        return _with_request(data, ("confirm_name",), super().prepare(data))


class VisibilityChange(Fields):
    """``strategy_visibility``: publish on the coins whose latest ``full_range`` made money, or go private."""

    strategy_name: StrategyName
    visibility: Annotated[str, Check(f.visibility, {"enum": list(f.VISIBILITIES)}, required=True)]
    credits_per_signal: Annotated[
        int | None,
        Check(
            f.public_price,
            {
                "type": "number",
                "minimum": 0.01,
                "maximum": 10,
                "description": "Public: the credits a subscriber pays per signal.",
            },
        ),
    ]
    """Credit units once checked (the reply gives credits)."""
    timeframe: Annotated[
        str | None,
        Check(f.public_timeframe, {"enum": _TIMEFRAMES, "description": "Public: the backtests' timeframe."}),
    ]
    coins: Annotated[
        list[str] | None,
        Check(
            f.public_coins,
            {"type": "array", "items": {"type": "string"}, "description": "Public: the coins to offer."},
        ),
    ]

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The public terms are read only when going public."""
        return _with_request(data, f.PUBLIC_FIELDS, super().prepare(data))


# ----------------------------------------------------------------------------------------------------
# Replies


class StrategyGenerated(Shape):
    """The new strategy, generating (1 credit charged, refunded if it fails)."""

    strategy_name: str
    version: int
    signal_mode: str | None = None
    status: str
    cost_upfront: float
    cost_refunded_on_failure: bool


class StrategyEdited(Shape):
    """The new version, generating; its marketplace copiers are cancelled."""

    strategy_name: str
    version: int
    status: str
    copiers_cancelled: int
    cost_upfront: float
    cost_refunded_on_failure: bool


class StrategyDetail(Shape):
    """A strategy (its current version); ``error`` says why it failed to generate."""

    strategy_name: str
    status: str
    version: int
    market_type: str
    position_side: str
    signal_mode: str
    timeframe: str
    entry_condition: str
    tp_condition: str | None
    sl_condition: str | None
    exit_condition: str | None = None
    visibility: str
    credits_per_signal: float | None = None
    public_coins: list[str] | None = None
    candle_count: int | None
    leverage: int
    created_at: int
    """Unix seconds."""
    updated_at: int
    """Unix seconds."""


class StrategyVersion(Shape):
    """One version of a strategy."""

    version: int
    created_at: int
    """Unix seconds."""
    status: str
    candle_count: int | None = None
    entry_condition: str
    tp_condition: str | None = None
    sl_condition: str | None = None
    exit_condition: str | None = None
    rolled_back_from: int | None = None
    """The version a rollback copied."""


class StrategyVersionsPage(UserPage):
    """A page of a strategy's versions, newest first."""

    strategy_name: str
    current_version: int
    versions: list[StrategyVersion]


class StrategyRolledBack(Shape):
    """The copy, a new version; the strategy is private again."""

    strategy_name: str
    new_version: int
    rolled_back_to: int
    status: str
    visibility: str | None = None
    credits_per_signal: float | None = None
    marketplace_subscriptions_cancelled: int | None = None


class StrategyDeleted(Shape):
    """The strategy is deleted."""

    strategy_name: str
    deleted: Literal[True]
    deleted_objects: int | None = None
    """The versions and backtest records removed."""


class StrategyVisibility(Shape):
    """The new visibility (public: the price and the coins kept and rejected)."""

    strategy_name: str
    visibility: str
    credits_per_signal: float | None = None
    timeframe: str | None = None
    eligible_coins: list[str] | None = None
    rejected_coins: dict[str, Literal["no_backtest", "negative_return"]] | None = None


GENERATE_ERRORS = (
    ErrorDoc(402, "insufficient_credits", "the balance does not cover the generation (1 credit)"),
    ErrorDoc(403, "forbidden", "the plan's active strategies are in use"),
    ErrorDoc(409, "conflict", "the caller has a strategy of this name"),
    ErrorDoc(
        429, "too_many_requests", "too many generations run now (reason `strategy_generation_in_progress`)"
    ),
)
NOT_FOUND = (ErrorDoc(404, "not_found", "the caller has no such strategy (or version)"),)
EDIT_ERRORS = NOT_FOUND + GENERATE_ERRORS[:2] + GENERATE_ERRORS[3:]
ROLLBACK_ERRORS = (
    *NOT_FOUND,
    ErrorDoc(403, "forbidden", "the plan's active strategies are in use"),
    ErrorDoc(409, "conflict", "the target version is still generating"),
)
DELETE_ERRORS = (
    *NOT_FOUND,
    ErrorDoc(409, "conflict", "the strategy is listed on the marketplace (unpublish first)"),
)
VISIBILITY_ERRORS = (
    *NOT_FOUND,
    ErrorDoc(
        400, "invalid_request", "no requested coin has a positive `full_range` return (`rejected_coins`)"
    ),
    ErrorDoc(403, "forbidden", "more coins than the plan allows per strategy"),
    ErrorDoc(409, "strategy_not_active", "the strategy is not active"),
)
