"""The one-pass equity statistics of a sequential run (``svc_engine.sim.perf_fused``) equal the
separate kernels they replace bit for bit: the equity of ``equity_drawdown_nb``, its max drawdown,
the moments of ``moments_spans_nb`` and the duration of ``drawdown_duration_spans_nb``."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from svc_engine.sim import nb
from svc_engine.sim.kernels.records import LONG, SHORT, TRADE_DTYPE
from svc_engine.sim.perf_flat import drawdown_duration_spans_nb, moments_spans_nb
from svc_engine.sim.perf_fused import equity_stats, fusable


def _bits(values: tuple) -> list[bytes]:
    return [struct.pack("d", float(v)) for v in values]


def _trades(rng: np.random.Generator, n: int, c: np.ndarray) -> np.ndarray:
    """Sorted, disjoint trades like one coin's run: gaps of 0 to 30 candles, lengths 0 to 40."""
    rows, k, cash = [], int(rng.integers(0, 3)), 100.0
    while True:
        k += int(rng.integers(0, 30))
        j = k + int(rng.integers(0, 40))
        if j >= n:
            break
        stake = cash * float(rng.uniform(0.1, 1.0))
        ret = float(rng.normal(0.0, 0.05))
        rows.append(
            (
                k,
                j,
                LONG if rng.random() < 0.6 else SHORT,
                c[k] * (1 + rng.normal(0, 1e-3)),
                stake,
                stake * ret,
            )
        )
        cash += stake * ret
        k = j + 1
    tr = np.zeros(len(rows), TRADE_DTYPE)
    for x, (i, j, side, entry, stake, profit) in enumerate(rows):
        tr[x]["fill_candle"], tr[x]["exit_candle"], tr[x]["side"] = i, j, side
        tr[x]["entry"], tr[x]["stake"], tr[x]["profit"] = entry, stake, profit
    return tr


@pytest.mark.parametrize("seed", range(40))
def test_one_pass_equals_the_separate_kernels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3_000))
    c = 100.0 * np.exp(np.cumsum(rng.normal(0, 0.01, n)))
    trades = _trades(rng, n, c)
    t = np.arange(n, dtype=np.int64) * 60_000 + int(rng.integers(0, 10**12))
    comm, lev, hs = 0.001, float(rng.choice([1.0, 3.0, 20.0])), 0.0005
    rf = float(rng.choice([0.0, 1e-7, -1e-7]))  # a positive rate: the downside of flat candles
    lo, hi = np.ascontiguousarray(trades["fill_candle"]), np.ascontiguousarray(trades["exit_candle"])
    assert fusable(lo, hi, n)

    want_eq = np.empty(n)
    want_dd = nb.equity_drawdown_nb(c, trades, 100.0, comm, lev, hs, want_eq)
    want = (*moments_spans_nb(want_eq, rf, lo, hi), drawdown_duration_spans_nb(want_eq, t, 100.0, lo, hi))
    eq = np.empty(n)
    worst, got = equity_stats(c, trades, 100.0, comm, lev, hs, eq, t, rf)

    assert eq.view(np.int64).tolist() == want_eq.view(np.int64).tolist()
    assert _bits((worst, *got)) == _bits((want_dd, *want))
    assert got[0] == n - 1 and got[5] == want[5]


def test_the_edges_of_the_series() -> None:
    c = np.array([100.0, 90.0, 80.0, 120.0])
    t = np.arange(4, dtype=np.int64) * 1_000
    tr = np.zeros(1, TRADE_DTYPE)
    tr[0]["fill_candle"], tr[0]["exit_candle"], tr[0]["side"] = (
        0,
        3,
        LONG,
    )  # from the first candle to the last
    tr[0]["entry"], tr[0]["stake"], tr[0]["profit"] = 100.0, 100.0, 20.0
    eq = np.empty(4)
    worst, moments = equity_stats(c, tr, 100.0, 0.0, 1.0, 0.0, eq, t, 0.0)
    assert eq.tolist() == [100.0, 90.0, 80.0, 120.0]
    assert worst == 20.0
    assert moments[0] == 3 and moments[5] == 3_000  # under water from candle 0 to candle 3
    eq = np.empty(4)
    assert equity_stats(c, tr[:0], 100.0, 0.0, 1.0, 0.0, eq, t, 0.0) == (0.0, (3, 0.0, 0.0, 0.0, 0.0, 0))


def test_what_it_does_not_take() -> None:
    # a reversal's successor fills on the exit candle of its predecessor; a single candle has no return
    assert not fusable(np.array([1, 4]), np.array([4, 6]), 10)
    assert not fusable(np.zeros(0, np.int64), np.zeros(0, np.int64), 1)
    assert fusable(np.zeros(0, np.int64), np.zeros(0, np.int64), 2)
