"""Indicator kernels shared by the strategy language and the trend detector: one implementation of
each indicator, equal to TA-Lib where TA-Lib has it.

Every kernel is a numba function over contiguous float64 arrays that returns arrays of the same
length, NaN during its warm-up, and reads only candles up to its own (causal).

Example:
    >>> import numpy as np
    >>> from svc_engine import indicators as K
    >>> K.ema_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, 1.5, 2.5, 3.5]
"""

from svc_engine.indicators.core import (
    DAY_MS,
    add_exact_nb,
    atr_nb,
    cci_nb,
    cross_level_nb,
    cross_nb,
    ema_nb,
    ema_seeded_nb,
    first_valid_nb,
    roc_nb,
    rolling_max_nb,
    rolling_min_nb,
    rolling_std_nb,
    rsi_nb,
    run_length_nb,
    sma_nb,
    stoch_nb,
    true_range_nb,
    two_prod_nb,
    two_sum_nb,
    typical_price_nb,
    vwap_rolling_nb,
    vwap_session_nb,
    wilder_gain_loss_nb,
    willr_nb,
    wma_nb,
)

__all__ = [
    "DAY_MS",
    "add_exact_nb",
    "atr_nb",
    "cci_nb",
    "cross_level_nb",
    "cross_nb",
    "ema_nb",
    "ema_seeded_nb",
    "first_valid_nb",
    "roc_nb",
    "rolling_max_nb",
    "rolling_min_nb",
    "rolling_std_nb",
    "rsi_nb",
    "run_length_nb",
    "sma_nb",
    "stoch_nb",
    "true_range_nb",
    "two_prod_nb",
    "two_sum_nb",
    "typical_price_nb",
    "vwap_rolling_nb",
    "vwap_session_nb",
    "wilder_gain_loss_nb",
    "willr_nb",
    "wma_nb",
]
