"""ATR, EMA, RSI kernels against TA-Lib, and the parameter checks."""

from __future__ import annotations

import numpy as np
import pytest
import talib

from svc_engine.indicators import atr_nb, ema_nb, rsi_nb
from svc_engine.trend import TrendParams
from svc_engine.trend.pivots import pivot_flags_nb


def walk(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    close = 100.0 + np.cumsum(rng.normal(size=n))
    return close + rng.random(n), close - rng.random(n), close


@pytest.mark.parametrize("n", [0, 5, 14, 15, 50, 600])
def test_indicators_match_talib(n: int) -> None:
    high, low, close = walk(n)
    for ours, theirs in (
        (atr_nb(high, low, close, 14), talib.ATR(high, low, close, 14)),
        (ema_nb(close, 50), talib.EMA(close, 50)),
        (rsi_nb(close, 14), talib.RSI(close, 14)),
    ):
        assert np.array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(ours[~np.isnan(ours)], theirs[~np.isnan(theirs)], rtol=1e-12)


def test_pivots_need_left_candles_strictly_lower_and_right_candles_not_higher() -> None:
    high = np.array([1, 2, 3, 9, 3, 9, 2, 1, 1, 1], dtype=float)
    flags = pivot_flags_nb(high, high - 1, 3, 2)
    # 3 is a pivot (9 is not below the 9 at 5); 5 is not (the 9 at 3 is not strictly lower).
    assert flags[0].nonzero()[0].tolist() == [3]
    assert pivot_flags_nb(high, high - 1, 4, 2)[0].nonzero()[0].tolist() == []  # 3 has only 3 before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"left": 0}, "left must be >= 1, got 0"),
        ({"min_touches": 1}, "min_touches must be >= 2, got 1"),
        ({"touch_tol": -0.1}, "touch_tol must be a finite number >= 0"),
        ({"break_tol": float("inf")}, "break_tol must be a finite number >= 0"),
        ({"window": 4}, "window must be >= min_gap \\(5\\), got 4"),
        ({"right": 2.5}, "right must be >= 1, got 2.5"),
    ],
)
def test_parameter_checks(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrendParams.from_kwargs(**kwargs)


def test_one_rsi_for_strategy_and_trend_reads_0_on_a_flat_series_as_talib_does() -> None:
    import svc_engine.strategy.compiler as compiler
    import svc_engine.trend.signals as signals

    flat = np.full(30, 5.0)
    assert rsi_nb(flat, 14)[14:].tolist() == [0.0] * 16 == talib.RSI(flat, 14)[14:].tolist()
    # Both packages use the very same kernels.
    assert compiler.K.rsi_nb is rsi_nb and signals.atr_nb is atr_nb
