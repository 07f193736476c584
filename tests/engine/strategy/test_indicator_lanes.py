"""The chained kernels (EMA, RSI, ATR, SMA) run in stretches side by side (indicators/lanes.py)
and give the one-pass values bit for bit: compared with the one-pass kernels they replaced, on long
series with gaps, flat stretches and NaN, and with warm-ups too short to forget a seed (every seam
recomputed)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from svc_engine import indicators as K
from svc_engine.indicators import lanes as L
from svc_engine.indicators.numeric import add_exact_nb

SIZE = 300_000


@njit(cache=True)
def one_pass_sma(x: np.ndarray, n: int) -> np.ndarray:
    out = np.full(x.size, np.nan)
    start = K.first_valid_nb(x)
    if start < 0 or x.size - start < n:
        return out
    hi, lo, missing = 0.0, 0.0, 0
    for i in range(start, x.size):
        if np.isnan(x[i]):
            missing += 1
        else:
            hi, lo = add_exact_nb(hi, lo, x[i])
        if i < start + n - 1:
            continue
        if missing == 0:
            out[i] = hi / n
        old = x[i - n + 1]
        if np.isnan(old):
            missing -= 1
        else:
            hi, lo = add_exact_nb(hi, lo, -old)
    return out


@njit(cache=True)
def one_pass_ema(x: np.ndarray, n: int, k: float, seed_offset: int) -> np.ndarray:
    out = np.full(x.size, np.nan)
    start = K.first_valid_nb(x)
    seed = start + seed_offset
    if start < 0 or seed >= x.size or seed - n + 1 < start:
        return out
    total = 0.0
    for i in range(seed - n + 1, seed + 1):
        total += x[i]
    prev = total / n
    out[seed] = prev
    for i in range(seed + 1, x.size):
        prev = ((x[i] - prev) * k) + prev
        out[i] = prev
    return out


@njit(cache=True)
def one_pass_rsi(x: np.ndarray, n: int) -> np.ndarray:
    gain, loss = K.wilder_gain_loss_nb(x, n)
    out = np.full(x.size, np.nan)
    for i in range(x.size):
        if not np.isnan(gain[i]):
            total = gain[i] + loss[i]
            out[i] = 0.0 if -1e-8 < total < 1e-8 else 100.0 * (gain[i] / total)
    return out


@njit(cache=True)
def one_pass_atr(high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int) -> np.ndarray:
    out = np.full(high.size, np.nan)
    if high.size <= n:
        return out
    total = 0.0
    for i in range(1, n + 1):
        total += L.true_range_value_nb(high[i], low[i], close[i - 1])
    prev = total / n
    out[n] = prev
    for i in range(n + 1, high.size):
        prev *= n - 1
        prev += L.true_range_value_nb(high[i], low[i], close[i - 1])
        prev /= n
        out[i] = prev
    return out


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    # NaN against NaN whatever the payload; every other value to the bit (-0.0 differs from 0.0)
    nan = np.isnan(a)
    return bool(
        np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan].view(np.int64), b[~nan].view(np.int64))
    )


def _series(kind: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    x = 100.0 * np.exp(np.cumsum(rng.normal(0, 0.002, SIZE)))
    if kind == "flat":  # long runs without a move (RSI's 1e-8 convention), rounded prices
        x = np.round(x, 1)
        x[50_000:90_000] = x[50_000]
    if kind == "gaps":  # missing values here and there (a volume with holes)
        x = rng.exponential(5.0, SIZE)
        x[rng.integers(0, SIZE, 40)] = np.nan
    if kind == "leading-nan":
        x[:1234] = np.nan
    return np.ascontiguousarray(x)


@pytest.mark.parametrize("kind", ["walk", "flat", "gaps", "leading-nan"])
@pytest.mark.parametrize("n", [2, 14, 200])
def test_chained_kernels_equal_one_pass_bit_for_bit(kind: str, n: int) -> None:
    x = _series(kind)
    assert _bits_equal(K.sma_nb(x, n), one_pass_sma(x, n))
    assert _bits_equal(K.ema_nb(x, n), one_pass_ema(x, n, 2.0 / (n + 1), n - 1))
    assert _bits_equal(K.rsi_nb(x, n), one_pass_rsi(x, n))
    high, low = x * 1.001, x * 0.998
    assert _bits_equal(K.atr_nb(high, low, x, n), one_pass_atr(high, low, x, n))


def test_a_seed_not_forgotten_is_recomputed_from_the_stretch_before() -> None:
    # 256 candles cannot make an EMA(200) or a Wilder(200) forget a seed: every seam differs, every
    # stretch after the first is recomputed, and the values are still the one pass's.
    x = _series("walk")
    k = 2.0 / 201.0
    reference = one_pass_ema(x, 200, k, 199)
    out = np.full(x.size, np.nan)
    out[199] = reference[199]
    L.ema_from_nb(x, out, 199, reference[199], k, 1)
    assert L.plan_nb(200, x.size, 1)[0].size == L.LANES
    assert _bits_equal(out, reference)

    rsi = one_pass_rsi(x, 200)
    gain, loss = K.wilder_gain_loss_nb(x, 200)
    out = np.full(x.size, np.nan)
    out[200] = rsi[200]
    L.rsi_from_nb(x, out, 200, gain[200], loss[200], 200, 1)
    assert _bits_equal(out, rsi)

    atr = one_pass_atr(x + 1.0, x - 1.0, x, 200)
    out = np.full(x.size, np.nan)
    out[200] = atr[200]
    L.atr_from_nb(x + 1.0, x - 1.0, x, out, 200, atr[200], 200, 1)
    assert _bits_equal(out, atr)


def test_a_nan_inside_a_smoothing_stays_nan_to_the_end_as_in_one_pass() -> None:
    x = _series("walk")
    x[200_000] = np.nan
    ema, rsi = K.ema_nb(x, 20), K.rsi_nb(x, 14)
    assert np.isnan(ema[200_000:]).all() and np.isnan(rsi[200_001:]).all()
    assert _bits_equal(ema, one_pass_ema(x, 20, 2.0 / 21.0, 19))
    assert _bits_equal(rsi, one_pass_rsi(x, 14))


def test_short_series_run_in_one_pass() -> None:
    assert L.plan_nb(0, 8_760, 1_400)[0].size == 0
    x = _series("walk")[:8_760]
    assert _bits_equal(K.rsi_nb(x, 14), one_pass_rsi(x, 14))
