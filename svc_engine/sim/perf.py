"""Performance statistics of a run: one small function per figure, on the equity sampled at every
candle close and on the trades.

Definitions (``docs/statistics.md`` says the same in prose, with the comparison to backtesting.py
and empyrical):

- Period returns are the equity's simple returns candle to candle: ``r[k] = eq[k] / eq[k-1] - 1``
  (0 after an equity of 0). The first candle's equity is the initial balance (no trade can fill on
  a run's first candle), so every figure starts from the initial balance.
- ``periods_per_year`` comes from the timeframe and the market's calendar (:data:`CALENDARS`):
  crypto trades 365.25 days of 24 h, stocks and ETFs 252 sessions of 6.5 h, forex and commodities
  260 days of 24 h; a candle of a day or longer counts as ``length / 1 day`` days.
- The risk-free rate is a yearly rate (default 0), turned into a per-candle rate by compounding:
  ``(1 + rf) ** (1 / periods_per_year) - 1``.
- CAGR counts calendar time: from the first candle's open to the last candle's open, in years of
  365.25 days (as backtesting.py does).

Every function returns ``None`` (JSON ``null``) where the figure is undefined, never NaN.
The calendars are in `calendars`, the numba kernels in `perf_nb`; both are re-exported here.

Example:
    >>> eq = np.array([100.0, 110.0, 99.0, 108.9])
    >>> round(sharpe_ratio(period_returns(eq), periods_per_year=365.25), 6)
    5.517019
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from svc_engine.sim.calendars import (
    CALENDARS,  # noqa: F401  (re-exported: perf.CALENDARS)
    DAYS_PER_YEAR,
    MS_PER_DAY,
    MS_PER_HOUR,
    calendar_of,  # noqa: F401  (re-exported: perf.calendar_of)
    period_rate,
    periods_per_year,
)
from svc_engine.sim.perf_flat import equity_moments
from svc_engine.sim.perf_nb import (
    drawdown_duration_nb,
    exposure_nb,
    period_returns_nb,
    trade_counts_nb,
    trade_moments_nb,
)

#: The figures this module adds to a summary, in order.
FIGURES: tuple[str, ...] = (
    "cagr_pct",
    "annual_volatility_pct",
    "sharpe_ratio",
    "sortino_ratio",
    "calmar_ratio",
    "max_drawdown_duration_days",
    "exposure_pct",
    "expectancy_pct",
    "sqn",
    "avg_trade_duration_hours",
    "longest_trade_duration_hours",
    "buy_and_hold_return_pct",
)


def period_returns(equity: np.ndarray) -> np.ndarray:
    """Candle-to-candle simple returns of the equity.

    Example:
        >>> period_returns(np.array([100.0, 110.0, 0.0, 0.0])).round(6).tolist()
        [0.1, -1.0, 0.0]
    """
    return period_returns_nb(np.ascontiguousarray(equity, dtype=np.float64))


def cagr_pct(initial: float, final: float, first_ms: int, last_ms: int) -> float | None:
    """Compound annual growth rate in percent over calendar time from ``first_ms`` to ``last_ms``
    (years of 365.25 days); None over no time, or where it exceeds the float range (a large gain
    over a few hours).

    Example:
        >>> round(cagr_pct(100.0, 121.0, 0, int(2 * 365.25 * 86_400_000)), 9)
        10.0
    """
    years = (last_ms - first_ms) / (DAYS_PER_YEAR * MS_PER_DAY)
    if years <= 0 or initial <= 0:
        return None
    if final <= 0:
        return -100.0
    exponent = math.log(final / initial) / years
    return math.expm1(exponent) * 100.0 if exponent < 700.0 else None


def annual_volatility_pct(returns: np.ndarray, periods: float) -> float | None:
    """Standard deviation of the period returns (ddof 1) times ``sqrt(periods)``, in percent.

    Example:
        >>> round(annual_volatility_pct(np.array([0.01, -0.01]), 4), 9)
        2.828427125
    """
    if returns.shape[0] < 2:
        return None
    return float(np.std(returns, ddof=1) * math.sqrt(periods) * 100.0)


def sharpe_ratio(returns: np.ndarray, periods_per_year: float, risk_free_rate: float = 0.0) -> float | None:
    """Mean excess period return over its standard deviation (ddof 1), times ``sqrt(periods)``;
    None with fewer than two returns or no variation.

    Example:
        >>> round(sharpe_ratio(np.array([0.02, 0.0]), 4), 9)
        1.414213562
    """
    if returns.shape[0] < 2:
        return None
    excess = returns - period_rate(risk_free_rate, periods_per_year)
    sd = float(np.std(excess, ddof=1))
    if not sd > 0:
        return None
    return float(np.mean(excess) / sd * math.sqrt(periods_per_year))


def sortino_ratio(returns: np.ndarray, periods_per_year: float, risk_free_rate: float = 0.0) -> float | None:
    """Mean excess period return over the downside deviation ``sqrt(mean(min(excess, 0)^2))``,
    times ``sqrt(periods)``; None with no return or no loss.

    Example:
        >>> round(sortino_ratio(np.array([0.03, -0.01]), 4), 9)
        2.828427125
    """
    if returns.shape[0] < 1:
        return None
    excess = returns - period_rate(risk_free_rate, periods_per_year)
    down = math.sqrt(float(np.mean(np.minimum(excess, 0.0) ** 2)))
    if not down > 0:
        return None
    return float(np.mean(excess) / down * math.sqrt(periods_per_year))


def calmar_ratio(cagr: float | None, max_drawdown_pct: float) -> float | None:
    """CAGR over the maximum drawdown (both in percent); None without a drawdown.

    Example:
        >>> calmar_ratio(12.0, 6.0), calmar_ratio(12.0, 0.0)
        (2.0, None)
    """
    if cagr is None or not max_drawdown_pct > 0:
        return None
    return cagr / max_drawdown_pct


def max_drawdown_duration_days(equity: np.ndarray, times_ms: np.ndarray, initial: float) -> float:
    """Longest drawdown in days: from a peak (the running maximum, starting at ``initial``) to the
    candle where the equity is back at that peak, or to the last candle.

    Example:
        >>> max_drawdown_duration_days(np.array([100.0, 90.0, 100.0, 95.0]),
        ...                            np.array([0, 1, 2, 3]) * 86_400_000, 100.0)
        2.0
    """
    t, eq = np.ascontiguousarray(times_ms, dtype=np.int64), np.ascontiguousarray(equity, dtype=np.float64)
    return drawdown_duration_nb(eq, t, float(initial)) / MS_PER_DAY if eq.shape[0] else 0.0


def exposure_pct(n_candles: int, fill_idx: np.ndarray, exit_idx: np.ndarray) -> float:
    """Share of candles, in percent, with a position open at some time within them: candles
    ``fill .. exit`` of every trade, inclusive, overlapping trades counted once.

    Example:
        >>> exposure_pct(10, np.array([1, 2]), np.array([3, 4]))
        40.0
    """
    if n_candles <= 0:
        return 0.0
    delta = np.zeros(n_candles + 1, np.int64)
    np.add.at(delta, np.asarray(fill_idx, np.int64), 1)
    np.add.at(delta, np.asarray(exit_idx, np.int64) + 1, -1)
    return float(np.count_nonzero(np.cumsum(delta[:-1]) > 0) / n_candles * 100.0)


def expectancy_pct(returns: np.ndarray) -> float | None:
    """Mean trade return in percent (win rate x mean win + loss rate x mean loss).

    Example:
        >>> expectancy_pct(np.array([0.04, -0.02]))
        1.0
    """
    return float(np.mean(returns) * 100.0) if returns.shape[0] else None


def sqn(profits: np.ndarray) -> float | None:
    """System quality number: ``sqrt(trades) * mean(profit) / std(profit)`` (ddof 1), on money
    profits as backtesting.py computes it; None with fewer than two trades or no variation.

    Example:
        >>> round(sqn(np.array([2.0, 0.0, 1.0, 1.0])), 9)
        2.449489743
    """
    if profits.shape[0] < 2:
        return None
    sd = float(np.std(profits, ddof=1))
    return float(math.sqrt(profits.shape[0]) * np.mean(profits) / sd) if sd > 0 else None


def avg_trade_duration_hours(fill_ms: np.ndarray, exit_ms: np.ndarray) -> float | None:
    """Mean time from a trade's fill candle to its exit candle (open times), in hours.

    Example:
        >>> avg_trade_duration_hours(np.array([0, 0]), np.array([3_600_000, 10_800_000]))
        2.0
    """
    if fill_ms.shape[0] == 0:
        return None
    return float(np.mean(exit_ms - fill_ms) / MS_PER_HOUR)


def longest_trade_duration_hours(fill_ms: np.ndarray, exit_ms: np.ndarray) -> float | None:
    """Longest time from a trade's fill candle to its exit candle, in hours.

    Example:
        >>> longest_trade_duration_hours(np.array([0, 0]), np.array([3_600_000, 10_800_000]))
        3.0
    """
    if fill_ms.shape[0] == 0:
        return None
    return float(np.max(exit_ms - fill_ms) / MS_PER_HOUR)


def buy_and_hold_return_pct(close: np.ndarray) -> float | None:
    """Return of buying at the first candle's close and selling at the last one's, no costs.

    Example:
        >>> buy_and_hold_return_pct(np.array([100.0, 90.0, 125.0]))
        25.0
    """
    if close.shape[0] == 0:
        return None
    return float((close[-1] - close[0]) / close[0] * 100.0)


def trade_summary(returns: np.ndarray, profits: np.ndarray) -> dict[str, Any]:
    """``stats.trade_summary`` (the same figures and definitions, section 7 of the semantics) from
    one kernel pass: what every result and every sweep row computes.

    Example:
        >>> trade_summary(np.array([0.1, -0.05]), np.array([10.0, -5.0]))["profit_factor"]
        2.0
    """
    r = np.ascontiguousarray(returns, dtype=np.float64)
    p = np.ascontiguousarray(profits, dtype=np.float64)
    n = int(r.shape[0])
    gains, losses, gp, lp, sr, sg, sl, best, worst = trade_counts_nb(r, p)
    return {
        "total_trades": n,
        "gain_count": int(gains),
        "loss_count": int(losses),
        "win_rate": gains / n * 100.0 if n else 0.0,
        "profit_factor": float(gp / abs(lp)) if losses else None,
        "avg_profit_per_trade_pct": float(sr / n * 100.0) if n else None,
        "avg_win_return_pct": float(sg / gains * 100.0) if gains else None,
        "avg_loss_return_pct": float(sl / losses * 100.0) if losses else None,
        "best_trade_pct": float(best * 100.0) if n else None,
        "worst_trade_pct": float(worst * 100.0) if n else None,
    }


def statistics(
    *,
    equity: np.ndarray,
    times_ms: np.ndarray,
    tf_ms: int,
    initial: float,
    max_drawdown_pct: float,
    trade_returns: np.ndarray,
    trade_profits: np.ndarray,
    fill_ms: np.ndarray,
    exit_ms: np.ndarray,
    fill_idx: np.ndarray,
    exit_idx: np.ndarray,
    buy_and_hold_pct: float | None,
    market: str | None = "crypto",
    risk_free_rate: float = 0.0,
    periods: float | None = None,
    sequential: bool = False,
    moments: tuple[int, float, float, float, float, int] | None = None,
) -> dict[str, Any]:
    """Every figure of :data:`FIGURES` for one run (``periods`` overrides the calendar's), with
    the equity figures from one kernel pass (:func:`moments_nb`; the same definitions as the
    functions above, which the tests hold it to), or ``moments`` when given (``perf_fused``).

    ``sequential``: the equity moves only from a trade's fill candle to its exit candle (one coin's
    run), so the equity figures skip the stretches between trades (``perf_flat``, bit for bit).

    Example:
        >>> z = np.zeros(0)
        >>> s = statistics(equity=np.array([100.0, 100.0]), times_ms=np.array([0, 3_600_000]),
        ...     tf_ms=3_600_000, initial=100.0, max_drawdown_pct=0.0, trade_returns=z, trade_profits=z,
        ...     fill_ms=z, exit_ms=z, fill_idx=z, exit_idx=z, buy_and_hold_pct=5.0)
        >>> s["cagr_pct"], s["sharpe_ratio"], s["exposure_pct"], s["buy_and_hold_return_pct"]
        (0.0, None, 0.0, 5.0)
    """
    ppy = periods if periods is not None else periods_per_year(tf_ms, market)
    eq = np.ascontiguousarray(equity, dtype=np.float64)
    n, sd, mean_ex, sd_ex, down, longest_ms = moments or equity_moments(
        eq, times_ms, initial, period_rate(risk_free_rate, ppy), fill_idx, exit_idx, sequential=sequential
    )
    root = math.sqrt(ppy)
    final = float(equity[-1]) if equity.shape[0] else initial
    first, last = (int(times_ms[0]), int(times_ms[-1])) if times_ms.shape[0] else (0, 0)
    cagr = cagr_pct(initial, final, first, last)
    candles = int(equity.shape[0])
    n_tr = int(trade_returns.shape[0])
    mean_ret, mean_pnl, dev, mean_dur, longest = trade_moments_nb(
        np.ascontiguousarray(trade_returns, dtype=np.float64),
        np.ascontiguousarray(trade_profits, dtype=np.float64),
        np.ascontiguousarray(fill_ms, dtype=np.int64),
        np.ascontiguousarray(exit_ms, dtype=np.int64),
    )
    inside = exposure_nb(candles, np.asarray(fill_idx, np.int64), np.asarray(exit_idx, np.int64))
    return {
        "cagr_pct": cagr,
        "annual_volatility_pct": float(sd * root * 100.0) if n >= 2 else None,
        "sharpe_ratio": float(mean_ex / sd_ex * root) if n >= 2 and sd_ex > 0 else None,
        "sortino_ratio": float(mean_ex / down * root) if n >= 1 and down > 0 else None,
        "calmar_ratio": calmar_ratio(cagr, max_drawdown_pct),
        "max_drawdown_duration_days": longest_ms / MS_PER_DAY,
        "exposure_pct": inside / candles * 100.0 if candles else 0.0,
        "expectancy_pct": float(mean_ret * 100.0) if n_tr else None,
        "sqn": float(math.sqrt(n_tr) * mean_pnl / dev) if n_tr >= 2 and dev > 0 else None,
        "avg_trade_duration_hours": float(mean_dur / MS_PER_HOUR) if n_tr else None,
        "longest_trade_duration_hours": float(longest / MS_PER_HOUR) if n_tr else None,
        "buy_and_hold_return_pct": buy_and_hold_pct,
    }


def run_figures(
    trades: Any,
    equity: np.ndarray,
    times_ms: np.ndarray,
    tf_ms: int,
    initial: float,
    max_drawdown_pct: float,
    closes: list[np.ndarray],
    *,
    market: str | None = "crypto",
    risk_free_rate: float = 0.0,
    periods: float | None = None,
    sequential: bool = False,
    moments: tuple[int, float, float, float, float, int] | None = None,
) -> dict[str, Any]:
    """:func:`statistics` of a run from its trades (a frame or a mapping of arrays with
    ``return_pct``, ``pnl``, ``fill_time``, ``exit_time``; a mapping may add ``fill_candle`` and
    ``exit_candle``, indices in ``times_ms``), its equity at ``times_ms`` and the closes of its
    coins over the run (the buy-and-hold return of several coins is the mean of theirs: equal
    weights). ``sequential`` and ``moments`` as for :func:`statistics`.

    Example:
        >>> import polars as pl
        >>> day = 86_400_000
        >>> tr = pl.DataFrame({"return_pct": [10.0], "pnl": [10.0],
        ...                    "fill_time": [day], "exit_time": [2 * day]})
        >>> f = run_figures(tr, np.array([100.0, 100.0, 110.0]), np.array([0, 1, 2]) * day, day, 100.0, 0.0,
        ...                 [np.array([1.0, 1.0, 1.2])])
        >>> round(f["exposure_pct"], 9), round(f["buy_and_hold_return_pct"], 9)
        (66.666666667, 20.0)
    """
    fill_ms, exit_ms = _ms(trades["fill_time"]), _ms(trades["exit_time"])
    t = np.ascontiguousarray(times_ms, dtype=np.int64)
    holds = [buy_and_hold_return_pct(c) for c in closes if c.shape[0]]
    known = isinstance(trades, dict) and "fill_candle" in trades
    return statistics(
        equity=equity,
        times_ms=t,
        tf_ms=tf_ms,
        initial=initial,
        max_drawdown_pct=max_drawdown_pct,
        trade_returns=np.asarray(trades["return_pct"]) / 100.0,
        trade_profits=np.asarray(trades["pnl"]),
        fill_ms=fill_ms,
        exit_ms=exit_ms,
        fill_idx=trades["fill_candle"] if known else np.searchsorted(t, fill_ms),
        exit_idx=trades["exit_candle"] if known else np.searchsorted(t, exit_ms),
        buy_and_hold_pct=float(np.mean(holds)) if holds else None,  # type: ignore[arg-type]
        market=market,
        risk_free_rate=risk_free_rate,
        periods=periods,
        sequential=sequential,
        moments=moments,
    )


def _ms(times: Any) -> np.ndarray:
    """Unix milliseconds of a datetime column (a result frame's) or of an array of them."""
    if isinstance(times, pl.Series) and times.dtype == pl.Datetime:
        times = times.dt.epoch("ms")
    return np.asarray(times, dtype=np.int64)
