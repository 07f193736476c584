"""The performance statistics against backtesting.py's ``compute_stats`` and empyrical, fed the same
equity (one value per candle close) and the same trades.

Where the definitions agree the figures agree to 1e-9 relative. Where they differ by design, the
test says how:

- backtesting.py annualises *daily* returns (equity resampled to days) with a geometric mean; we
  annualise the per-candle returns with the arithmetic mean and ``sqrt(periods)``, as empyrical does.
  So our volatility, Sharpe and Sortino match empyrical's, not backtesting.py's ``Return (Ann.)``,
  ``Volatility (Ann.)``, ``Sharpe Ratio``, ``Sortino Ratio``, ``Calmar Ratio``.
- empyrical's ``cagr`` counts years as ``len(returns) / annualization``; ours counts calendar time
  (as backtesting.py's ``CAGR [%]``). On a gapless crypto series with ``annualization`` = candles
  per 365.25 days both agree; on a series with gaps they differ by the missing candles.
- backtesting.py's ``Profit Factor`` sums trade *returns*; ours sums money profits (section 7 of
  the semantics). They agree only when every trade stakes the same amount.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from sim_helpers import H, gappy_walk

import svc_engine as sv
from svc_engine.data.times import ms_columns
from svc_engine.sim import perf

empyrical = pytest.importorskip("empyrical", reason="empyrical-reloaded is a test-only dependency")
bt_stats = pytest.importorskip("backtesting._stats", reason="backtesting.py is a test-only dependency")

PPY = 365.25 * 24  # 1h crypto candles


@pytest.fixture(scope="module")
def run() -> sv.BacktestResult:
    klines = gappy_walk(3_000, seed=11)
    strategy = sv.compile_strategy("RSI(14) crosses above 35", "3%", "2%")
    result = sv.backtest(strategy, klines, "1h", spread_pct=0.05, min_candles_between_signals=2)
    assert result.summary["total_trades"] > 20  # enough trades for every figure to mean something
    return result


def _returns(result: sv.BacktestResult) -> np.ndarray:
    eq = result.equity["equity"].to_numpy()
    return eq[1:] / eq[:-1] - 1


def test_volatility_sharpe_sortino_calmar_cagr_match_empyrical(run) -> None:
    s, r = run.summary, _returns(run)
    assert s["annual_volatility_pct"] == pytest.approx(
        empyrical.annual_volatility(r, annualization=PPY) * 100, rel=1e-9
    )
    assert s["sharpe_ratio"] == pytest.approx(empyrical.sharpe_ratio(r, annualization=PPY), rel=1e-9)
    assert s["sortino_ratio"] == pytest.approx(empyrical.sortino_ratio(r, annualization=PPY), rel=1e-9)
    assert s["max_drawdown_pct"] == pytest.approx(-empyrical.max_drawdown(r) * 100, rel=1e-9)
    assert s["cagr_pct"] == pytest.approx(empyrical.cagr(r, annualization=PPY) * 100, rel=1e-9)
    assert s["calmar_ratio"] == pytest.approx(empyrical.calmar_ratio(r, annualization=PPY), rel=1e-9)


def test_risk_free_rate_matches_empyrical_per_period_rate(run) -> None:
    klines = gappy_walk(3_000, seed=11)
    strategy = sv.compile_strategy("RSI(14) crosses above 35", "3%", "2%")
    s = sv.backtest(
        strategy, klines, "1h", spread_pct=0.05, min_candles_between_signals=2, risk_free_rate=0.04
    ).summary
    rf = 1.04 ** (1 / PPY) - 1
    r = _returns(run)
    assert s["sharpe_ratio"] == pytest.approx(
        empyrical.sharpe_ratio(r, risk_free=rf, annualization=PPY), rel=1e-9
    )
    assert s["sortino_ratio"] == pytest.approx(
        empyrical.sortino_ratio(r, required_return=rf, annualization=PPY), rel=1e-9
    )


def _backtesting_py(result: sv.BacktestResult, klines: pl.DataFrame) -> pd.Series:
    t = ms_columns(result.equity)["open_time"].to_numpy()
    index = pd.DatetimeIndex(pd.to_datetime(t, unit="ms"))
    ohlc = pd.DataFrame({"Close": klines.filter(pl.col("open_time").is_in(t))["close"].to_numpy()}, index)
    tr = ms_columns(result.trades)
    entry_bar = np.searchsorted(t, tr["fill_time"].to_numpy())
    exit_bar = np.searchsorted(t, tr["exit_time"].to_numpy())
    trades = pd.DataFrame(
        {
            "EntryBar": entry_bar,
            "ExitBar": exit_bar,
            "PnL": tr["pnl"].to_numpy(),
            "ReturnPct": tr["return_pct"].to_numpy() / 100,
            "EntryTime": index[entry_bar],
            "ExitTime": index[exit_bar],
        }
    )
    trades["Duration"] = trades["ExitTime"] - trades["EntryTime"]
    with warnings.catch_warnings():  # backtesting.py uses pandas names deprecated for pandas 4
        warnings.simplefilter("ignore")
        return bt_stats.compute_stats(trades, result.equity["equity"].to_numpy(), ohlc, None)


def test_trade_and_equity_figures_match_backtesting_py(run) -> None:
    ref = _backtesting_py(run, gappy_walk(3_000, seed=11))
    s = run.summary
    hours = pd.Timedelta(hours=1)
    agree = {
        "total_return_pct": ref["Return [%]"],
        "buy_and_hold_return_pct": ref["Buy & Hold Return [%]"],
        "exposure_pct": ref["Exposure Time [%]"],
        "cagr_pct": ref["CAGR [%]"],
        "max_drawdown_pct": -ref["Max. Drawdown [%]"],  # theirs is negative
        "max_drawdown_duration_days": ref["Max. Drawdown Duration"] / pd.Timedelta(days=1),
        "win_rate": ref["Win Rate [%]"],
        "best_trade_pct": ref["Best Trade [%]"],
        "worst_trade_pct": ref["Worst Trade [%]"],
        "expectancy_pct": ref["Expectancy [%]"],
        "sqn": ref["SQN"],
        "longest_trade_duration_hours": ref["Max. Trade Duration"] / hours,
    }
    for name, value in agree.items():
        assert s[name] == pytest.approx(float(value), rel=1e-9), name
    # backtesting.py rounds the mean duration up to the candle; ours is exact
    assert math.ceil(s["avg_trade_duration_hours"] - 1e-9) == ref["Avg. Trade Duration"] / hours
    # by design: their Sharpe annualises daily geometric returns (see the module docstring)
    assert s["sharpe_ratio"] != pytest.approx(float(ref["Sharpe Ratio"]), rel=1e-3)


def test_statistics_on_a_series_with_gaps_count_calendar_time() -> None:
    """Drop a day of candles: CAGR stays calendar time (backtesting.py's), empyrical's ``cagr`` counts
    returns and so differs by the missing day's share."""
    k = gappy_walk(1_000, seed=5)
    k = k.filter(~pl.col("open_time").is_between(400 * H, 423 * H))
    r = sv.backtest("RSI(14) crosses above 35", k, "1h", spread_pct=0.0)
    eq, t = r.equity["equity"].to_numpy(), ms_columns(r.equity)["open_time"].to_numpy()
    years = (t[-1] - t[0]) / (365.25 * 86_400_000)
    assert r.summary["cagr_pct"] == pytest.approx(((eq[-1] / 100) ** (1 / years) - 1) * 100, rel=1e-12)
    theirs = empyrical.cagr(_returns(r), annualization=PPY) * 100
    assert r.summary["cagr_pct"] != pytest.approx(theirs, rel=1e-6)


def test_periods_per_year_follows_the_market_calendar() -> None:
    assert perf.periods_per_year(60_000) == 365.25 * 1440
    assert perf.periods_per_year(3_600_000, "us_stocks") == 252 * 7  # 6.5 h session: 7 hourly bars
    assert perf.periods_per_year(86_400_000, "us_stocks") == 252
    assert perf.periods_per_year(86_400_000, "forex") == 260
    assert perf.periods_per_year(7 * 86_400_000) == pytest.approx(365.25 / 7)


def test_portfolio_and_full_range_rows_carry_every_statistic() -> None:
    a, b = gappy_walk(600, seed=1), gappy_walk(600, seed=2)
    strategy = sv.compile_strategy("RSI(14) crosses above 35", "3%", "2%")
    signals = {c: strategy.evaluate(k) for c, k in (("A", a), ("B", b))}
    p = sv.simulate_portfolio({"A": a, "B": b}, signals, spread_pct=0.0)
    assert set(perf.FIGURES) <= set(p.summary)
    holds = [(k["close"][-1] - k["close"][0]) / k["close"][0] * 100 for k in (a, b)]
    assert p.summary["buy_and_hold_return_pct"] == pytest.approx(sum(holds) / 2, rel=1e-12)
    eq = p.equity["equity"].to_numpy()
    r = eq[1:] / eq[:-1] - 1
    assert p.summary["sharpe_ratio"] == pytest.approx(empyrical.sharpe_ratio(r, annualization=PPY), rel=1e-9)
    one = sv.simulate(a, signals["A"], spread_pct=0.0)
    assert set(perf.FIGURES) <= set(one.summary) and one.to_dict()["summary"]["sqn"] == one.summary["sqn"]
    for coin, hold in zip("AB", holds, strict=True):  # each coin's part of the portfolio has them too
        part = p.coin_results[coin]
        assert set(perf.FIGURES) <= set(part)
        assert part["buy_and_hold_return_pct"] == pytest.approx(hold, rel=1e-12)
        assert part["total_trades"] == p.trades.filter(pl.col("coin") == coin).height


@pytest.mark.parametrize("rf", [0.0, 0.05])
def test_the_one_pass_kernel_equals_the_function_of_each_figure(rf: float) -> None:
    rng = np.random.default_rng(3)
    eq = 100 * np.cumprod(1 + rng.normal(0, 0.01, 5_000))
    eq[:10] = 100.0
    t = np.arange(5_000, dtype=np.int64) * H
    z = np.zeros(0)
    s = perf.statistics(
        equity=eq,
        times_ms=t,
        tf_ms=H,
        initial=100.0,
        max_drawdown_pct=10.0,
        trade_returns=z,
        trade_profits=z,
        fill_ms=z,
        exit_ms=z,
        fill_idx=np.array([5, 7, 100]),
        exit_idx=np.array([8, 9, 4_999]),
        buy_and_hold_pct=None,
        risk_free_rate=rf,
    )
    r = perf.period_returns(eq)
    assert s["annual_volatility_pct"] == pytest.approx(perf.annual_volatility_pct(r, PPY), rel=1e-12)
    assert s["sharpe_ratio"] == pytest.approx(perf.sharpe_ratio(r, PPY, rf), rel=1e-12)
    assert s["sortino_ratio"] == pytest.approx(perf.sortino_ratio(r, PPY, rf), rel=1e-12)
    assert s["exposure_pct"] == perf.exposure_pct(5_000, np.array([5, 7, 100]), np.array([8, 9, 4_999]))
    one = perf.statistics(
        equity=eq[:1],
        times_ms=t[:1],
        tf_ms=H,
        initial=100.0,
        max_drawdown_pct=0.0,
        trade_returns=z,
        trade_profits=z,
        fill_ms=z,
        exit_ms=z,
        fill_idx=z,
        exit_idx=z,
        buy_and_hold_pct=None,
    )
    assert (one["sharpe_ratio"], one["sortino_ratio"], one["annual_volatility_pct"]) == (None, None, None)


def test_exposure_from_merged_spans_equals_counting_candles() -> None:
    rng = np.random.default_rng(1)
    for _ in range(300):
        n, m = int(rng.integers(1, 200)), int(rng.integers(0, 20))
        fill = rng.integers(0, n, m).astype(np.int64)
        exit_ = np.minimum(fill + rng.integers(0, 30, m), n - 1).astype(np.int64)
        assert perf.exposure_nb(n, fill, exit_) / n * 100 == perf.exposure_pct(n, fill, exit_)
        order = np.argsort(fill, kind="stable")  # in fill order: merged without the sort
        assert perf.exposure_nb(n, fill[order], exit_[order]) == perf.exposure_nb(n, fill, exit_)
    assert perf.exposure_nb(100, np.array([5, 7, 40]), np.array([8, 9, 41])) == 7


def test_trade_figures_from_one_pass_equal_the_section_7_functions() -> None:
    from svc_engine.sim import stats

    rng = np.random.default_rng(2)
    cases = [np.zeros(0), np.array([0.1]), np.array([-0.1, -0.2]), np.array([0.0, 0.1, -0.1])]
    cases += [rng.normal(0, 0.02, int(rng.integers(2, 400))) for _ in range(50)]
    for ret in cases:
        profit = ret * rng.uniform(50, 150, ret.shape[0])
        fast, slow = perf.trade_summary(ret, profit), stats.trade_summary(ret, profit)
        assert fast.keys() == slow.keys()
        for name, value in slow.items():
            if value is None or isinstance(value, int):
                assert fast[name] == value, name
            else:
                assert fast[name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_trade_moments_equal_the_per_figure_functions() -> None:
    rng = np.random.default_rng(5)
    for m in (0, 1, 2, 37):
        ret, pnl = rng.normal(0, 0.02, m), rng.normal(0, 3, m)
        fill = np.sort(rng.integers(0, 10**9, m)).astype(np.int64)
        exit_ = fill + rng.integers(0, 10**8, m)
        z = np.zeros(0)
        s = perf.statistics(
            equity=np.array([100.0]),
            times_ms=np.array([0]),
            tf_ms=H,
            initial=100.0,
            max_drawdown_pct=0.0,
            trade_returns=ret,
            trade_profits=pnl,
            fill_ms=fill,
            exit_ms=exit_,
            fill_idx=z,
            exit_idx=z,
            buy_and_hold_pct=None,
        )
        for name, fn, args in (
            ("expectancy_pct", perf.expectancy_pct, (ret,)),
            ("sqn", perf.sqn, (pnl,)),
            ("avg_trade_duration_hours", perf.avg_trade_duration_hours, (fill, exit_)),
            ("longest_trade_duration_hours", perf.longest_trade_duration_hours, (fill, exit_)),
        ):
            want = fn(*args)
            assert s[name] == (None if want is None else pytest.approx(want, rel=1e-12)), (m, name)
