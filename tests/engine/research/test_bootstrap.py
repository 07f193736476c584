"""Bootstrap intervals: coverage of a known mean, reproducibility, agreement with the backtest."""

from __future__ import annotations

import numpy as np
import pytest

import svc_engine as sv
from svc_engine.research.bootstrap import bootstrap
from svc_engine.research.demo import random_walk
from svc_engine.strategy import compile_strategy


def test_95_interval_covers_a_known_mean_in_93_to_97_percent() -> None:
    hits = 0
    for rep in range(400):
        r = np.random.default_rng(1000 + rep).normal(0.0005, 0.01, 1_000)
        lo, hi = bootstrap(r, n=400, seed=rep).interval("mean_return")
        hits += lo <= 0.0005 <= hi
    assert 0.93 * 400 <= hits <= 0.97 * 400, hits


def test_seeded_and_reproducible_and_equal_to_the_backtest() -> None:
    k = random_walk(3_000, seed=2)
    r = sv.backtest(compile_strategy("RSI(14) crosses above 30", "3%", "2%"), k, "1h", spread_pct=0)
    a, b = r.confidence(n=300, seed=5), r.confidence(n=300, seed=5)
    assert a.intervals.equals(b.intervals)
    assert not a.intervals.equals(r.confidence(n=300, seed=6).intervals)
    value = dict(zip(a.intervals["statistic"], a.intervals["value"], strict=True))
    assert value["total_return_pct"] == pytest.approx(r.summary["total_return_pct"], abs=1e-9)
    assert value["max_drawdown_pct"] == pytest.approx(r.summary["max_drawdown_pct"], abs=1e-9)
    q = a.trade_drawdown_quantiles((0.0, 1.0))
    assert 0 < q[0.0] <= q[1.0] < 100
    for lo, hi in a.intervals.select("lower", "upper").iter_rows():
        assert lo < hi


def test_sweep_rows_keep_the_block_moments_of_their_backtest() -> None:
    from svc_engine.research.overfitting_nb import equity_block_moments_nb

    k = random_walk(2_000, seed=4)
    res = sv.sweep({"entry": "RSI({n}) crosses above 30", "tp": "2%", "sl": "2%"}, {"n": [7, 14]}, {"X": k},
                   "1h", spread_pct=0)  # fmt: skip
    assert res.moments.shape == (2, 16, 5) and "_moments" not in res.rows.columns
    run = sv.backtest(compile_strategy("RSI(14) crosses above 30", "2%", "2%"), k, "1h", spread_pct=0)
    want = np.zeros((16, 5))
    equity_block_moments_nb(run.equity["equity"].to_numpy(), 100.0, want)
    np.testing.assert_allclose(res.moments[1], want, rtol=1e-12)
    assert want[:, 0].sum() == 2_000 and want[:, 0].tolist() == [125.0] * 16
    ci = res.confidence(1, n=100)
    assert ci.height == 4 and ci["combo"].n_unique() == 1
