"""Results of a simulation as plain dataclasses, with ``to_dict()`` in the API's JSON shape.

Example:
    >>> import polars as pl
    >>> r = FullRangeResult(results={})
    >>> r.to_dict()["coins"], r.to_dict()["results"]
    ([], {})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.times import ms_columns, time_series, with_time
from svc_engine.sim import nb, stats
from svc_engine.sim.result_frames import (  # noqa: F401  (single and multi import them from here)
    positions_frame,
    signal_counts,
    trades_frame,
)
from svc_engine.sim.settings import Settings
from svc_engine.sim.stats import finite

API_TRADES_LIMIT = 500
"""A portfolio's ``to_dict()`` keeps this many trades (flag ``trades_truncated``)."""


def _records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return finite(ms_columns(frame).to_dicts())


def _plot(result: Any, path: str | Path | None, klines: pl.DataFrame | None, **options: Any) -> Any:
    try:
        from svc_engine.sim.plot import plot_result
    except ImportError as exc:
        raise ImportError(f"plotting needs svc_engine.sim.plot and the 'plot' extra: {exc}") from exc
    return plot_result(result, klines, path, **options)


@dataclass(frozen=True, slots=True)
class EquityCurve:
    """A coin's equity at every candle close, of which `BacktestResult.equity` is built when first
    read: the drawdown column (a fresh array as long as the series, 35 MB for 4.35 M candles) is
    computed then, not by every backtest (the summary's figures do not need it).

    Example:
        >>> curve = EquityCurve(np.array([0, 60_000]), np.array([100.0, 90.0]), 100.0)
        >>> curve.frame()["drawdown_pct"].to_list()
        [0.0, 10.0]
    """

    times: np.ndarray
    equity: np.ndarray
    initial: float

    def frame(self) -> pl.DataFrame:
        """Columns ``open_time``, ``equity`` and ``drawdown_pct`` (below the running peak, which
        starts at the initial balance)."""
        dd, _ = nb.drawdown_nb(self.equity, self.initial)
        return pl.DataFrame(
            {"open_time": time_series("open_time", self.times), "equity": self.equity, "drawdown_pct": dd}
        )


@dataclass(slots=True)
class BacktestResult:
    """One coin's backtest: summary figures, trades, every signal's fate, and equity per candle.

    Example:
        >>> import svc_engine.sim as sim
        >>> k = pl.DataFrame({"open_time": [0, 3_600_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
        >>> s = k.head(0).select("open_time").with_columns(side=pl.lit("long"), limit_price=pl.lit(1.0),
        ...                                                  tp_price=pl.lit(2.0), sl_price=pl.lit(0.5))
        >>> sim.simulate(k, s, spread_pct=0).summary["final_balance"]
        100.0
    """

    summary: dict[str, Any]
    trades: pl.DataFrame
    signal_counts: dict[str, int]
    all_positions: pl.DataFrame
    equity_curve: pl.DataFrame | EquityCurve = field(repr=False)
    """`equity` as given, or the curve it is built from when first read."""
    settings: Settings
    symbol: str | None = None
    timeframe: str | None = None
    klines: pl.DataFrame | None = field(default=None, repr=False, compare=False)
    """The candles the run saw (a reference, not a copy), so that :meth:`plot` can draw them."""
    coverage: dict[str, Any] | None = None
    """The range the run covered (``svc_engine.sim.coverage.covered``: first open, last close,
    candles, the range asked, a warning)."""
    applied: dict[str, Any] | None = None
    """The costs and filters that applied and what they skipped (``svc_engine.sim.coverage.applied``)."""
    strategy: Any = field(default=None, repr=False, compare=False)
    """The compiled strategy that made the signals, when :func:`svc_engine.sim.backtest` ran it, so
    that :meth:`plot` shows its price lines and words."""

    @property
    def equity(self) -> pl.DataFrame:
        """Equity and drawdown per candle: ``open_time``, ``equity``, ``drawdown_pct``."""
        if isinstance(self.equity_curve, EquityCurve):
            self.equity_curve = self.equity_curve.frame()  # built once
        return self.equity_curve

    def __getstate__(self) -> tuple[Any, ...]:
        # Results cross process boundaries (Ray); the candles stay where they were loaded.
        return tuple(None if f == "klines" else getattr(self, f) for f in self.__slots__)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        """The API's result shape (no NaN or infinity: ``None`` instead); equity is left out."""
        return finite(
            {
                "coin": self.symbol,
                "timeframe": self.timeframe,
                "summary": self.summary,
                "signal_counts": self.signal_counts,
                "all_positions": _records(self.all_positions),
                "trades": _records(self.trades),
                "total_positions": self.all_positions.height,
                "total_trades": self.trades.height,
                "coverage": self.coverage,
                "applied": self.applied,
            }
        )

    def confidence(self, n: int = 1000, seed: int = 0, **options: Any) -> Any:
        """Bootstrap intervals of the total return, Sharpe ratio and maximum drawdown, and the
        trade-order drawdown distribution (:func:`svc_engine.research.bootstrap.confidence`;
        ``options``: ``level``, ``mean_block``); seeded, so the same seed gives the same intervals.

        Example:
            >>> BacktestResult.confidence.__name__
            'confidence'
        """
        from svc_engine.research.bootstrap import confidence  # research builds on sim, on request only

        return confidence(self, n=n, seed=seed, **options)

    def plot(self, path: str | Path | None = None, klines: pl.DataFrame | None = None, **options: Any) -> Any:
        """Candles with entries, exits and levels, equity and drawdown below; written to ``path``
        when given (needs the ``plot`` extra). The candles default to those of the run. ``options``:
        ``plotlyjs`` (``True``, ``"cdn"`` or a ``.js`` path), ``max_points`` per line and
        ``strategy`` (defaults to the one the run used)."""
        if self.strategy is not None:
            options.setdefault("strategy", self.strategy)
        if klines is None and self.klines is not None and self.equity.height:
            span = self.equity["open_time"]
            klines = with_time(self.klines).filter(pl.col("open_time").is_between(span[0], span[-1]))
        return _plot(self, path, klines, **options)


@dataclass(slots=True)
class PortfolioResult:
    """A portfolio run with ``divide`` slots, its per-coin figures and the recommended divide."""

    summary: dict[str, Any]
    trades: pl.DataFrame
    signal_counts: dict[str, int]
    all_positions: pl.DataFrame
    equity: pl.DataFrame
    coin_results: dict[str, dict[str, Any]]
    per_coin_contribution: dict[str, float]
    recommended_divide: dict[str, Any]
    coins: list[str]
    divide: int
    settings: Settings
    timeframe: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per coin, the range it covered (``svc_engine.sim.coverage.covered``)."""
    applied: dict[str, Any] | None = None
    """The costs and filters that applied (``svc_engine.sim.coverage.applied``; ``spread_pct`` per coin)."""

    def to_dict(self, trades_limit: int = API_TRADES_LIMIT) -> dict[str, Any]:
        """The API's portfolio shape: the first ``trades_limit`` trades and ``trades_truncated``.

        Example:
            >>> PortfolioResult.__name__
            'PortfolioResult'
        """
        return finite(
            {
                "coins": self.coins,
                "divide": self.divide,
                "timeframe": self.timeframe,
                "initial_balance": self.summary["initial_balance"],
                "summary": self.summary,
                "signal_counts": self.signal_counts,
                "coin_results": self.coin_results,
                "per_coin_contribution": self.per_coin_contribution,
                "recommended_divide": self.recommended_divide,
                "coverage": self.coverage,
                "applied": self.applied,
                "trades": _records(self.trades.head(trades_limit)),
                "trades_truncated": self.trades.height > trades_limit,
                "total_trades": self.trades.height,
                "coin": ",".join(self.coins),
                "all_positions": _records(self.all_positions.head(trades_limit)),
                "positions_truncated": self.all_positions.height > trades_limit,
                "total_positions": self.all_positions.height,
            }
        )

    def plot(self, path: str | Path | None = None, **options: Any) -> Any:
        """Equity and drawdown of the portfolio (needs the ``plot`` extra); ``options`` as for
        :meth:`BacktestResult.plot`."""
        return _plot(self, path, None, **options)


@dataclass(slots=True)
class FullRangeResult:
    """One ``BacktestResult`` per coin over its whole history (``full_range``), the coins that could
    not run, and an aggregate.

    ``errors`` maps a coin to its error message. ``summary`` aggregates the coins that ran:
    ``coins``, ``completed``, ``failed``, ``total_trades``, ``total_signals``, ``profitable_coins``,
    ``avg_return_pct``, ``best_coin``, ``worst_coin``.

    Example:
        >>> r = FullRangeResult(results={}, errors={"XUSDT": "DataNotFoundError: no data"})
        >>> r.summary["failed"], r.to_dict()["errors"]
        (1, {'XUSDT': 'DataNotFoundError: no data'})
    """

    results: dict[str, BacktestResult]
    timeframe: str | None = None
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def coverage(self) -> dict[str, dict[str, Any] | None]:
        """Per coin that ran, the range it covered (``BacktestResult.coverage``): coins of unequal
        histories are averaged in ``summary`` as they are.

        Example:
            >>> FullRangeResult(results={}).coverage
            {}
        """
        return {coin: getattr(r, "coverage", None) for coin, r in self.results.items()}

    @property
    def summary(self) -> dict[str, Any]:
        """The aggregate over coins (see the class docstring)."""
        returns = {coin: float(r.summary["total_return_pct"]) for coin, r in self.results.items()}
        return {
            "coins": len(self.results) + len(self.errors),
            "completed": len(self.results),
            "failed": len(self.errors),
            "total_trades": sum(int(r.summary["total_trades"]) for r in self.results.values()),
            "total_signals": sum(int(r.summary["total_signals"]) for r in self.results.values()),
            "profitable_coins": sum(v > 0 for v in returns.values()),
            "avg_return_pct": sum(returns.values()) / len(returns) if returns else None,
            "best_coin": max(returns, key=returns.__getitem__) if returns else None,
            "worst_coin": min(returns, key=returns.__getitem__) if returns else None,
        }

    def combined(self) -> dict[str, Any]:
        """The figures of a single-coin summary over every coin that ran, the coins taken as one book
        of independent runs: counts and trade figures over all their trades, ``final_balance`` the
        sum of the coins' final balances and ``total_return_pct`` its return on the sum of their
        initial balances (the mean of the coins' returns for equal balances), ``max_drawdown_pct``
        the worst coin's, ``avg_signals_per_month`` the sum of the coins' rates.

        Example:
            >>> empty = FullRangeResult(results={}).combined()
            >>> empty["total_trades"], empty["win_rate"], empty["final_balance"]
            (0, 0.0, 0)
        """
        runs = list(self.results.values())
        returns = [np.asarray(r.trades["return_pct"], dtype=np.float64) / 100.0 for r in runs]
        profits = [np.asarray(r.trades["pnl"], dtype=np.float64) for r in runs]
        initial = sum(float(r.settings.initial_balance) for r in runs)
        final = sum(float(r.summary["final_balance"]) for r in runs)
        empty = np.zeros(0)
        figures = stats.trade_summary(
            np.concatenate(returns) if returns else empty, np.concatenate(profits) if profits else empty
        )
        return finite(
            {
                "total_signals": sum(int(r.summary["total_signals"]) for r in runs),
                **figures,
                "final_balance": final,
                "total_return_pct": stats.total_return_pct(final, initial) if initial else 0.0,
                "max_drawdown_pct": max((float(r.summary["max_drawdown_pct"]) for r in runs), default=0.0),
                "avg_signals_per_month": sum(float(r.summary["avg_signals_per_month"] or 0.0) for r in runs),
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """The API's Backtest result over several coins: ``coin`` (the coins, comma-separated),
        ``timeframe``, ``summary`` (:meth:`combined`, plus the per-coin aggregate of
        :attr:`summary`), ``all_positions`` and ``trades`` of every coin, each tagged with its
        ``coin``, ``total_positions``, ``total_trades``; and as additions ``coins``, ``results``
        (each coin's own result) and ``errors``.
        """
        per_coin = {k: r.to_dict() for k, r in self.results.items()}
        positions = [{"coin": k, **p} for k, d in per_coin.items() for p in d["all_positions"]]
        trades = [{"coin": k, **t} for k, d in per_coin.items() for t in d["trades"]]
        return {
            "coin": ",".join(self.results),
            "timeframe": self.timeframe,
            "summary": {**self.combined(), **self.summary},
            "all_positions": positions,
            "trades": trades,
            "total_positions": len(positions),
            "total_trades": len(trades),
            "coins": list(self.results),
            "results": per_coin,
            "errors": dict(self.errors),
            "coverage": self.coverage,
        }

    def plot(self, path: str | Path | None = None, **options: Any) -> Any:
        """The total return of each coin as bars (needs the ``plot`` extra); written to ``path``
        when given; ``options`` as for :meth:`BacktestResult.plot`.

        Example:
            >>> FullRangeResult(results={}).plot().data[0].type
            'bar'
        """
        return _plot(self, path, None, **options)

    def summaries(self) -> pl.DataFrame:
        """One row per coin with its summary figures.

        Example:
            >>> FullRangeResult(results={}).summaries().height
            0
        """
        rows = [{"coin": coin, **r.summary} for coin, r in self.results.items()]
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()
