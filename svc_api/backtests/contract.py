"""The request models of the backtest operations (``/backtest`` and ``/user`` ``backtest_history``).

Fields are declared in the order the service checks them. A field the service checks after a
look-up (the strategy after the instruments, a launch's settings after the strategy, a portfolio's
``divide`` after its coins) is documented :func:`~svc_api.core.params.AsSent`; a rule that reads other
fields (coin or symbol, the settings of a ``run``, the legacy delete pair) receives a :class:`Sent`.
The reply models are in :mod:`svc_api.backtests.replies`.

Example:
    >>> BacktestEstimateQuery(timeframe="1h", coins=["BTC"], market="crypto").metadata()
    {'market': 'crypto'}
    >>> RunLaunch.model_validate({"timeframe": "1h", "start_ts": 1, "end_ts": 2, "leverage": 500})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: leverage must be a number in (1, 125], got '500'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from svc_api.backtests import fields as f
from svc_api.backtests.fields import Sent
from svc_api.core.contract import Check, ErrorDoc, Fields
from svc_api.core.params import AsSent, Limit
from svc_engine.data import TIMEFRAMES
from svc_engine.sim.settings import FILTER_MODES

_TIMEFRAME = {"enum": list(TIMEFRAMES)}
_NAME = {"type": "string", "minLength": 1, "maxLength": 64, "description": "One of the caller's strategies."}
_META = {"type": ["string", "null"]}
_NUMBER = {"type": "number"}
SETTING_SCHEMAS: dict[str, dict[str, Any]] = {
    "commission_pct": {**_NUMBER, "minimum": 0, "maximum": 100, "description": "Percent per fill."},
    "position_size_pct": {**_NUMBER, "exclusiveMinimum": 0, "maximum": 100},
    "min_candles_between_signals": {"type": "integer", "minimum": 0},
    "max_wait_days": {**_NUMBER, "exclusiveMinimum": 0},
    "min_profit_pct": {**_NUMBER, "exclusiveMinimum": 0},
    "max_profit_pct": {**_NUMBER, "exclusiveMinimum": 0},
    "min_loss_pct": {**_NUMBER, "exclusiveMinimum": 0},
    "max_loss_pct": {**_NUMBER, "exclusiveMinimum": 0},
    "signal_filter_mode": {"enum": list(FILTER_MODES)},
    "initial_balance": {**_NUMBER, "exclusiveMinimum": 0, "maximum": 1e12},
    "leverage": {**_NUMBER, "minimum": 1, "maximum": 125},
}
"""The schema of each simulation setting (the engine's ``Settings`` checks them together)."""

Timeframe = Annotated[str, Check(f.timeframe, _TIMEFRAME, required=True)]
Start = Annotated[float | None, Check(f.timestamp, {**_NUMBER, "description": "Unix seconds."})]
End = Annotated[float | None, Check(f.timestamp, {**_NUMBER, "description": "Unix seconds."})]
RangeStart = Annotated[
    float,
    Check(f.timestamp, {**_NUMBER, "description": "Unix seconds."}, required=True, kwargs={"required": True}),
]
RangeEnd = RangeStart
Meta = Annotated[str | None, Check(f.metadata, _META)]
StrategyName = AsSent(_NAME, required=True)
"""Checked once the instruments are found (an unknown coin answers first)."""
Coin = Annotated[
    Any, Check(f.named, {"type": ["string", "null"], "description": "A coin (`BTC`); or give `symbol`."})
]
Symbol = Annotated[
    str | None,
    Check(f.named_types, {"type": ["string", "null"], "description": "A data symbol (`BTCUSDT`)."}),
]
JobId = Annotated[str, Check(f.job_id_of, {"type": "string", "minLength": 1, "maxLength": 40}, required=True)]


def Coins(lo: int) -> Any:
    """The required ``coins`` list, ``lo``-50 coin names."""
    schema = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": lo, "maxItems": 50}
    return Annotated[list[str], Check(f.coin_list, schema, required=True, kwargs={"lo": lo})]


def Setting(name: str) -> Any:
    """A simulation setting the service checks with the others (after the strategy is found)."""
    return AsSent(SETTING_SCHEMAS[name])


class _Backtest(Fields):
    """What the backtest models share: the fields handed over as :class:`Sent`, the metadata and
    settings sent."""

    SENT: ClassVar[tuple[str, ...]] = ()
    SETTINGS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The fields of :attr:`SENT` see the request (see the module docstring)."""
        return super().prepare(data) | {name: Sent(data.get(name), data) for name in cls.SENT}

    def metadata(self) -> dict[str, str]:
        """The instrument metadata sent (checked strings), by name; see the module example."""
        return {n: v for n in f.METADATA if (v := getattr(self, n, None)) is not None}

    def named(self) -> tuple[Any, Any, dict[str, str]]:
        """The ``coin``, ``symbol`` (checked strings or None) and metadata an instrument request sent."""
        return getattr(self, "coin", None), getattr(self, "symbol", None), self.metadata()

    def settings(self) -> dict[str, Any]:
        """The simulation settings sent (not null), by name, as sent."""
        return {n: v for n in self.SETTINGS if (v := getattr(self, n, None)) is not None}


class BacktestEstimateQuery(_Backtest):
    """``estimate``: the cost and duration of a ``full_range`` (no timestamps) or ``range`` job."""

    timeframe: Timeframe
    start_ts: Start
    end_ts: End
    coins: Coins(1)
    asset_class: Meta
    provider: Meta
    market: Meta
    exchange: Meta
    strategy_name: StrategyName


class BacktestInfoQuery(_Backtest):
    """``info``: an instrument's data range, the strategy and a full-range price."""

    SENT = ("coin", "symbol")
    timeframe: Timeframe
    coin: Coin
    asset_class: Meta
    provider: Meta
    market: Meta
    exchange: Meta
    symbol: Symbol
    strategy_name: StrategyName


class BacktestTimeframesQuery(_Backtest):
    """``list_timeframes``: the timeframes an instrument has, stored or derived."""

    SENT = ("coin", "symbol")
    coin: Coin
    asset_class: Meta
    provider: Meta
    market: Meta
    exchange: Meta
    symbol: Symbol


class RunLaunch(_Backtest):
    """``run``: one coin over a time range (its settings are checked before any look-up)."""

    SENT = ("commission_pct", "coin", "symbol")
    SETTINGS = f.SETTINGS
    timeframe: Timeframe
    start_ts: RangeStart
    end_ts: RangeEnd
    # its rule checks every setting sent, together, before any look-up
    commission_pct: Annotated[Any, Check(f.run_settings, SETTING_SCHEMAS["commission_pct"])]
    position_size_pct: Setting("position_size_pct")
    min_candles_between_signals: Setting("min_candles_between_signals")
    max_wait_days: Setting("max_wait_days")
    min_profit_pct: Setting("min_profit_pct")
    max_profit_pct: Setting("max_profit_pct")
    min_loss_pct: Setting("min_loss_pct")
    max_loss_pct: Setting("max_loss_pct")
    signal_filter_mode: Setting("signal_filter_mode")
    initial_balance: Setting("initial_balance")
    leverage: Setting("leverage")
    coin: Coin
    asset_class: Meta
    provider: Meta
    market: Meta
    exchange: Meta
    symbol: Symbol
    strategy_name: StrategyName


class FullRangeLaunch(_Backtest):
    """``full_range``: each coin over its whole history."""

    SETTINGS = f.SETTINGS
    timeframe: Timeframe
    coins: Coins(1)
    asset_class: Meta
    provider: Meta
    market: Meta
    exchange: Meta
    strategy_name: StrategyName
    commission_pct: Setting("commission_pct")
    position_size_pct: Setting("position_size_pct")
    min_candles_between_signals: Setting("min_candles_between_signals")
    max_wait_days: Setting("max_wait_days")
    min_profit_pct: Setting("min_profit_pct")
    max_profit_pct: Setting("max_profit_pct")
    min_loss_pct: Setting("min_loss_pct")
    max_loss_pct: Setting("max_loss_pct")
    signal_filter_mode: Setting("signal_filter_mode")
    initial_balance: Setting("initial_balance")
    leverage: Setting("leverage")


class PortfolioLaunch(_Backtest):
    """``portfolio``: the coins sharing one balance split ``divide`` ways."""

    SETTINGS = f.PORTFOLIO_SETTINGS
    timeframe: Timeframe
    start_ts: Start
    coins: Coins(2)
    asset_class: Meta
    provider: Meta
    market: Meta
    exchange: Meta
    divide: AsSent(
        {
            "type": "integer",
            "minimum": 1,
            "maximum": f.MAX_DIVIDE,
            "description": "Default: the coins, at most 20.",
        }
    )
    initial_balance: AsSent({**_NUMBER, "exclusiveMinimum": 0, "default": 100})
    strategy_name: StrategyName
    commission_pct: Setting("commission_pct")


class BacktestJobRef(_Backtest):
    """``status`` and ``result``: one of the caller's jobs."""

    job_id: JobId


class BacktestCoinRef(_Backtest):
    """``coin_result``: one coin of the caller's completed multi-coin job."""

    job_id: JobId
    coin: AsSent({"type": "string", "description": "A coin of the job; or give `symbol`."})
    """Checked once the job is found."""
    symbol: AsSent({"type": "string"})


class DeleteBacktest(_Backtest):
    """``delete_backtest``: a finished job, by ``job_id`` or the legacy ``strategy_name`` and
    ``backtest_key``."""

    SENT = ("strategy_name",)
    job_id: Annotated[
        str | None, Check(f.deleted_job, {"type": "string", "maxLength": 40, "description": "The job."})
    ]
    strategy_name: Annotated[
        str | None, Check(f.legacy_pair, {"type": "string", "description": "Legacy, with `backtest_key`."})
    ]
    backtest_key: AsSent({"type": "string", "description": "Legacy: a job id or a result object key."})


class BacktestHistoryQuery(_Backtest):
    """``backtest_history``: the caller's jobs, newest first (the filters are checked after the cursor)."""

    limit: Limit(25, 1, 100)
    cursor: AsSent({"type": ["string", "null"], "description": "The previous page's cursor."})
    strategy_name: AsSent({"type": ["string", "null"], "description": "Only this strategy's jobs."})
    timeframe: AsSent({**_TIMEFRAME, "description": "Only jobs of this timeframe."})
    coin: AsSent({"type": ["string", "null"], "description": "Only jobs of this coin."})
    asset_class: AsSent(_META)
    provider: AsSent(_META)
    market: AsSent(_META)
    exchange: AsSent(_META)

    def sent_metadata(self) -> dict[str, Any]:
        """The metadata fields as sent (checked with the coin)."""
        return {n: getattr(self, n) for n in f.METADATA}


NOT_FOUND = ErrorDoc(404, "not_found", "the caller has no such job (or strategy)")
NOT_ACTIVE = ErrorDoc(409, "strategy_not_active", "the strategy is still generating or failed")
LAUNCH_ERRORS = (
    ErrorDoc(402, "insufficient_credits", "the balance does not cover the job"),
    ErrorDoc(404, "not_found", "the caller has no such strategy"),
    NOT_ACTIVE,
    ErrorDoc(429, "backtest_concurrency_limit", "the caller's running jobs are at the limit"),
    ErrorDoc(429, "backtest_capacity_exceeded", "the queue is full (`Retry-After`)"),
)
PREVIEW_ERRORS = (ErrorDoc(404, "not_found", "the caller has no such strategy"), NOT_ACTIVE)
RESULT_ERRORS = (NOT_FOUND, ErrorDoc(409, "conflict", "the job has not completed"))
DELETE_ERRORS = (NOT_FOUND, ErrorDoc(409, "conflict", "the job is running"))
