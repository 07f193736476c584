"""A backtest's equity frame is built when first read (`EquityCurve`): its drawdown column must be
the one the equity pass would have written, bit for bit, and the result must travel (pickle, Ray)
before and after it is read."""

from __future__ import annotations

import pickle

import numpy as np
from sim_helpers import gappy_walk

import svc_engine as sv
from svc_engine.sim import nb
from svc_engine.sim.results import EquityCurve
from svc_engine.strategy import compile_strategy


def _result() -> sv.BacktestResult:
    strategy = compile_strategy("RSI(14) crosses above 40", "3%", "2%")
    return sv.backtest(strategy, gappy_walk(5_000), "1h", spread_pct=0.05)


def test_the_drawdown_read_later_is_the_one_of_the_equity_pass() -> None:
    result = _result()
    assert isinstance(result.equity_curve, EquityCurve)  # nothing built yet
    curve = result.equity_curve
    assert result.summary["total_trades"] > 10
    eq, dd = np.empty(curve.equity.size), np.empty(curve.equity.size)
    worst = nb.equity_drawdown_nb(*_equity_inputs(), eq, dd)
    frame = result.equity
    assert result.equity is frame  # built once
    assert np.array_equal(frame["equity"].to_numpy(), eq)
    assert np.array_equal(frame["drawdown_pct"].to_numpy().view(np.int64), dd.view(np.int64))
    assert frame["drawdown_pct"].max() == worst == result.summary["max_drawdown_pct"]


def _equity_inputs() -> tuple:
    from svc_engine.sim.inputs import prepare_signals
    from svc_engine.sim.single import prepare, run_kernels

    p = prepare(gappy_walk(5_000), timeframe="1h", spread_pct=0.05)
    signals = compile_strategy("RSI(14) crosses above 40", "3%", "2%").evaluate(gappy_walk(5_000))
    run = run_kernels(p, prepare_signals(signals, p.candles, p.window), p.settings)
    s = p.settings
    return p.window.c, run.trades, s.initial_balance, s.commission_pct / 100, s.leverage, p.hs


def test_a_result_pickles_before_and_after_its_equity_is_read() -> None:
    result = _result()
    early = pickle.loads(pickle.dumps(result))
    frame = result.equity
    late = pickle.loads(pickle.dumps(result))
    assert early.equity.equals(frame) and late.equity.equals(frame)
    assert isinstance(late.equity_curve, type(frame))
