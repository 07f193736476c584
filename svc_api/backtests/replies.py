"""The reply models of the backtest operations (what the handlers of :mod:`svc_api.backtests.routes`
return), named as the API description has always named them.

Example:
    >>> BacktestDeleted.model_validate({"action": "delete_backtest", "success": True}).success
    True
"""

from __future__ import annotations

from typing import Any, Literal

from svc_api.core.contract import Shape
from svc_api.core.params import UserPage

Kind = Literal["run", "full_range", "portfolio"]
_STAT = "A statistic; null when undefined (e.g. a win rate without trades)."


class BacktestEntrySummary(Shape):
    """Numbers, 0 until the job has completed (its status says which)."""

    total_trades: int
    win_rate: float
    total_return_pct: float


class BacktestEntry(Shape):
    """One job of the history."""

    job_id: str
    strategy_name: str
    kind: Kind
    status: str
    coin: str
    """The coin as requested; several comma-separated."""
    coins: list[str] | None = None
    symbol: str | None = None
    timeframe: str
    cost_credits: float
    created_at: int
    """Unix seconds."""
    summary: BacktestEntrySummary


class BacktestHistoryPage(UserPage):
    """A page of the caller's jobs, newest first."""

    backtests: list[BacktestEntry]


class BacktestInstrument(Shape):
    """An instrument's metadata."""

    asset_class: str
    provider: str
    market: str
    symbol: str


class BacktestDataRange(Shape):
    """The candles an instrument has on a timeframe."""

    first_ts: int
    """Unix seconds."""
    last_ts: int
    """Unix seconds."""
    first_date: str
    last_date: str
    total_candles: int


class BacktestEstimate(Shape):
    """The cost and duration of a job, and whether the balance covers it."""

    action: Literal["estimate"]
    mode: str | None = None
    """``full_range`` (no timestamps) or ``range`` (both)."""
    total_candles: int
    estimated_cost_credits: float
    estimated_duration_seconds: float | None = None
    chunks: int
    current_credits: float
    can_afford: bool
    coins: list[str] | None = None
    symbols: list[str] | None = None
    timeframe: str | None = None
    start_ts: int | None = None
    """Unix seconds (range mode, clipped to the data)."""
    end_ts: int | None = None
    """Unix seconds (range mode, clipped to the data)."""


class BacktestInfo(Shape):
    """An instrument's data range, the strategy and a full-range price."""

    action: Literal["info"]
    coin: str | None = None
    symbol: str
    instrument: BacktestInstrument
    timeframe: str
    data_range: BacktestDataRange
    strategy: dict[str, Any] | None = None
    cost_preview: dict[str, Any] | None = None
    current_credits: float | None = None


class BacktestTimeframe(Shape):
    """A timeframe an instrument has."""

    timeframe: str
    suffix: str | None = None
    s3_key: str | None = None
    stored: bool
    """Stored as such (else derived from a finer one)."""


class BacktestTimeframes(Shape):
    """The timeframes an instrument has, stored or derived."""

    action: Literal["list_timeframes"]
    symbol: str
    instrument: BacktestInstrument
    timeframes: list[BacktestTimeframe]


class BacktestPollActions(Shape):
    """Where to follow a launched job."""

    status: str
    result: str


class BacktestLaunch(Shape):
    """A launched job (charged, running)."""

    action: Kind
    mode: str | None = None
    job_id: str
    cost_credits: float
    remaining_credits: float | None = None
    chunks: int | None = None
    status: str
    poll_actions: BacktestPollActions
    idempotent_replay: bool | None = None


class BacktestCoinProgress(Shape):
    """One coin's progress."""

    status: str
    progress_pct: float


class BacktestStatus(Shape):
    """A job's status and progress."""

    action: Literal["status"]
    job_id: str
    status: str
    progress_pct: float
    elapsed_seconds: float | None = None
    estimated_remaining_seconds: float | None = None
    coin_progress: dict[str, BacktestCoinProgress] | None = None


class BacktestSummary(Shape):
    """Besides the spec's figures, every summary carries the research statistics (definitions in
    docs/statistics.md): CAGR, annualised volatility, Sharpe, Sortino and Calmar ratios (risk-free
    rate 0, annualised per timeframe and market calendar), max drawdown duration, exposure,
    expectancy, SQN, average and longest trade duration, and buy-and-hold return of the same coin
    and range; null where undefined. Each figure but the counts is a statistic, null when undefined
    (e.g. a win rate without trades)."""

    total_signals: int | None = None
    total_trades: int
    win_rate: float | None = None
    profit_factor: float | None = None
    total_return_pct: float | None = None
    max_drawdown_pct: float | None = None
    final_balance: float | None = None
    cagr_pct: float | None = None
    annual_volatility_pct: float | None = None
    sharpe_ratio: float | None = None
    sortino_ratio: float | None = None
    calmar_ratio: float | None = None
    max_drawdown_duration_days: float | None = None
    exposure_pct: float | None = None
    expectancy_pct: float | None = None
    sqn: float | None = None
    avg_trade_duration_hours: float | None = None
    longest_trade_duration_hours: float | None = None
    buy_and_hold_return_pct: float | None = None


class BacktestResultSummary(BacktestSummary):
    """The summary of a Backtest result; every kind has the spec's 15 figures."""

    total_signals: int
    gain_count: Any
    loss_count: Any
    total_trades: int
    win_rate: float | None
    final_balance: float | None
    total_return_pct: float | None
    max_drawdown_pct: float | None
    profit_factor: float | None
    avg_profit_per_trade_pct: Any
    avg_signals_per_month: Any
    avg_win_return_pct: Any
    avg_loss_return_pct: Any
    best_trade_pct: Any
    worst_trade_pct: Any


class BacktestTrade(Shape):
    """One trade (prices and P&L null where undefined)."""

    coin: str | None = None
    signal_time: int
    fill_time: int | None = None
    exit_time: int | None = None
    side: str
    limit_price: float | None = None
    entry_price: float
    exit_price: float
    tp_price: float | None = None
    sl_price: float | None = None
    exit_reason: str
    return_pct: float
    pnl: float | None = None
    balance: float | None = None


class BacktestResult(Shape):
    """The spec's Backtest result for every kind. Coins read as the request named them (`BTC`, not
    the data store's `BTCUSDT`) in every coin field: `coin`, `coins`, each trade's and position's
    `coin`, `best_coin`/`worst_coin`, and the keys of `results`, `coin_results`,
    `per_coin_contribution` and `errors` (and of `coin_progress` in `status`). For `full_range`,
    `coin` lists the coins comma-separated, `trades` and `all_positions` hold every coin's, tagged
    with their coin, and `summary` has the 15 single-coin figures over all of them (the coins as one
    book of independent runs: `final_balance` is the sum of theirs, `total_return_pct` its return on
    the sum of their initial balances, `max_drawdown_pct` the worst coin's) plus the per-coin
    aggregate (`coins`, `completed`, `failed`, `profitable_coins`, `avg_return_pct`, `best_coin`,
    `worst_coin`); `results` keeps each coin's own result. A portfolio keeps its first 500 trades
    and positions (`trades_truncated`, `positions_truncated`)."""

    action: Literal["result"]
    job_id: str
    kind: Kind
    strategy_name: str
    timeframe: str
    cost_credits: float
    coin: str
    coins: list[str] | None = None
    summary: BacktestResultSummary
    signal_counts: dict[str, int] | None = None
    trades: list[BacktestTrade]
    all_positions: list[dict[str, Any]]
    trades_truncated: bool | None = None
    positions_truncated: bool | None = None
    results: dict[str, dict[str, Any]] | None = None
    """`full_range`: each coin's own single-coin result, by coin."""
    errors: dict[str, str] | None = None
    coin_results: dict[str, BacktestSummary] | None = None
    coverage: dict[str, Any] | None = None
    """The range the run covered (`run`: `start`, the first candle's open, and `end`, the last
    candle's close, in Unix ms, `candles`, `requested_start_ts`, `requested_end_ts`, and `warning`
    when the requested range reached beyond the data); `full_range` and `portfolio`: the same by
    coin."""
    applied: dict[str, Any] | None = None
    """The costs and filters that applied: `commission_pct`, `spread_pct` (by coin in a portfolio)
    and `spread_from` (`given` or `volume tier`), `min_candles_between_signals`,
    `signal_filter_mode` and its four limits, `signals`, `skipped` (`filter`, `invalid`, `min_gap`)
    and `warning` when the filter skipped more than a quarter of the signals."""
    total_trades: int
    total_positions: int


class BacktestCoinResult(Shape):
    """One coin of a multi-coin job."""

    action: Literal["coin_result"]
    job_id: str
    coin: str
    timeframe: str | None = None
    summary: BacktestSummary
    trades: list[BacktestTrade]
    total_trades: int | None = None


class BacktestDeleted(Shape):
    """The job and its result objects are deleted."""

    action: Literal["delete_backtest"]
    success: Literal[True]
    job_id: str | None = None
    deleted_objects: int | None = None
