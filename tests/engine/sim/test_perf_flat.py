"""The equity figures that skip the flat stretches between trades equal the full-pass kernels bit
for bit (``svc_engine.sim.perf_flat``)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from svc_engine.sim.perf_flat import drawdown_duration_spans_nb, moments_spans_nb, repeat_add_nb
from svc_engine.sim.perf_nb import drawdown_duration_nb, moments_nb


def _bits(x: float) -> bytes:
    return struct.pack("d", float(x))


def _added(x: float, c: float, m: int) -> float:
    for _ in range(m):
        x += c
    return x


def test_repeat_add_rounds_as_one_addition_at_a_time() -> None:
    rng = np.random.default_rng(19)
    for trial in range(4_000):
        x = float(rng.standard_normal() * 10.0 ** rng.integers(-20, 5))
        c = float(rng.standard_normal() * 10.0 ** rng.integers(-25, 3))
        if trial % 4 == 1:
            x, c = abs(x), abs(c)
        if trial % 4 == 2:  # ties: c an odd number of half ulps of x
            x = abs(x) + 1.0
            c = math.ldexp(float(rng.integers(1, 64)) + 0.5, math.frexp(x)[1] - 53)
        if trial % 50 == 3:
            x, c = float(rng.choice([0.0, -0.0, np.inf, np.nan])), float(rng.choice([0.0, -0.0, 1e-9]))
        m = int(rng.integers(0, 3_000))
        got, want = repeat_add_nb(x, c, m), _added(x, c, m)
        assert _bits(got) == _bits(want) or (math.isnan(got) and math.isnan(want)), (x, c, m)


def _flat_between(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An equity flat outside sorted, disjoint spans, like one coin's run."""
    eq, lo, hi = np.empty(n), [], []
    value = 100.0 if rng.random() < 0.9 else float(rng.choice([0.0, -5.0, np.inf]))
    eq[0], k = value, 1
    while k < n:
        flat = int(rng.integers(0, 30))
        eq[k : k + flat] = value
        k += flat
        if k >= n:
            break
        a, b = k, min(n - 1, k + int(rng.integers(0, 10)))
        eq[a : b + 1] = value * (1 + rng.standard_normal(b - a + 1) * 0.01)
        value = eq[b]
        lo.append(a)
        hi.append(b)
        k = b + 1
    return eq, np.array(lo, np.int64), np.array(hi, np.int64)


@pytest.mark.parametrize("rf", [0.0, 1e-6, -1e-7, 0.3])
def test_moments_and_duration_over_spans_equal_the_full_pass(rf: float) -> None:
    rng = np.random.default_rng(int(rf * 1e7) + 5)
    for _ in range(500):
        eq, lo, hi = _flat_between(rng, int(rng.integers(1, 400)))
        got, want = moments_spans_nb(eq, rf, lo, hi), moments_nb(eq, rf)
        assert [_bits(x) for x in got] == [_bits(x) for x in want] or np.isnan(want[1])
        t = np.cumsum(rng.integers(1, 5, eq.shape[0])).astype(np.int64)
        initial = 101.0 if rng.random() < 0.5 else float(eq[0])
        assert drawdown_duration_spans_nb(eq, t, initial, lo, hi) == drawdown_duration_nb(eq, t, initial)


def test_long_flat_stretches_cross_binades_exactly() -> None:
    """A million flat candles between two trades: the variance sums cross many binades."""
    eq = np.full(1_000_003, 100.0)
    eq[1] = 103.0
    eq[-1] = 97.5
    lo, hi = np.array([1, 1_000_002]), np.array([2, 1_000_002])
    eq[2:-1] = 101.0
    for rf in (0.0, 2e-8):
        got, want = moments_spans_nb(eq, rf, lo, hi), moments_nb(eq, rf)
        assert [_bits(x) for x in got] == [_bits(x) for x in want]
