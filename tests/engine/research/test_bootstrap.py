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
    res = sv.sweep(
        {"entry": "RSI({n}) crosses above 30", "tp": "2%", "sl": "2%"},
        {"n": [7, 14]},
        {"X": k},
        "1h",
        spread_pct=0,
    )
    assert res.moments.shape == (2, 16, 5) and "_moments" not in res.rows.columns
    run = sv.backtest(compile_strategy("RSI(14) crosses above 30", "2%", "2%"), k, "1h", spread_pct=0)
    want = np.zeros((16, 5))
    equity_block_moments_nb(run.equity["equity"].to_numpy(), 100.0, want)
    np.testing.assert_allclose(res.moments[1], want, rtol=1e-12)
    assert want[:, 0].sum() == 2_000 and want[:, 0].tolist() == [125.0] * 16
    ci = res.confidence(1, n=100)
    assert ci.height == 4 and ci["combo"].n_unique() == 1


def _reference(r: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[float, float, float, float]:
    """Candle by candle: build the resampled path, then its sums, log growth and log drawdown."""
    idx = np.concatenate([(s + np.arange(k)) % r.shape[0] for s, k in zip(starts, lengths, strict=True)])
    path = r[idx]
    level = np.concatenate([[0.0], np.cumsum(np.log1p(path))])
    return (
        float(path.sum()),
        float((path * path).sum()),
        float(level[-1]),
        float(np.max(np.maximum.accumulate(level) - level)),
    )


@pytest.mark.parametrize(
    ("n", "crash"),
    [(5, False), (16, False), (47, False), (1000, False), (1000, True), (5003, False), (5003, True)],
)
def test_kernel_equals_a_candle_by_candle_path_of_the_same_blocks(n: int, crash: bool) -> None:
    from svc_engine.research.bootstrap_nb import CHUNK, SUPER, path_figures_nb

    r = np.random.default_rng(n).normal(0.0, 0.02, n)
    if crash:  # a steady rise with its one deep fall inside a chunk: the drawdown is the chunk's own
        r = np.full(n, 0.01)
        r[2 * CHUNK + 3 : 2 * CHUNK + 9] = -0.05
    rng = np.random.default_rng(7)
    # short blocks inside a chunk, blocks on chunk bounds, long ones and ones that wrap the end
    starts = np.concatenate([[n - 3, 0, CHUNK % n, n - 1], rng.integers(0, n, 40)])
    # and, past 5,000 candles, blocks over whole super-chunks and ones that end in the last
    # candles, which no whole chunk or super-chunk holds
    drawn = [rng.geometric(1 / 9, 20), rng.geometric(1 / 90, 20), rng.geometric(1 / 900, 4)]
    lengths = np.concatenate([[5, CHUNK, 3 * CHUNK + 1, n], *drawn])
    lengths = np.minimum(lengths, n)
    starts = np.concatenate([starts, rng.integers(0, n, 4)])
    assert np.any(starts + lengths > n) and np.any(lengths < CHUNK)
    got = path_figures_nb(r, starts.astype(np.int64), lengths.astype(np.int64))
    np.testing.assert_allclose(got[:4], _reference(r, starts, lengths), rtol=0, atol=1e-9)
    # blocks that cannot move the peak or the drawdown are not walked (a steady rise walks all)
    assert got[4] > 0 and (got[4] < len(starts) or crash or n < SUPER)


def test_each_resample_is_the_path_of_its_drawn_blocks() -> None:
    from svc_engine.research.bootstrap_nb import draw_blocks_nb, stationary_bootstrap_nb

    r = np.random.default_rng(3).normal(0.0, 0.01, 2_003)
    out = np.zeros((3, 4))
    stationary_bootstrap_nb(r, 40.0, 11, out, np.zeros((r.shape[0] + 1, 4)))
    for k in range(3):
        starts, lengths = draw_blocks_nb(r.shape[0], 40.0, 11, k)
        assert lengths.sum() == r.shape[0] and 20 < np.mean(lengths) < 60
        s1, s2, growth, dd = _reference(r, starts, lengths)
        mean = s1 / r.shape[0]
        std = np.sqrt((s2 - r.shape[0] * mean**2) / (r.shape[0] - 1))
        np.testing.assert_allclose(out[k], [mean, std, growth, dd], rtol=0, atol=1e-9)
