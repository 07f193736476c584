"""Indicator kernels: numba functions over contiguous float64 arrays, shared by the strategy
language and the trend detector. The core kernels live in one module per family (``numeric``,
``averages``, ``momentum``, ``ranges``, ``events``, ``vwap``); this module states their contract
and re-exports them, so ``from svc_engine.indicators.core import sma_nb`` works as before.

Contract: every kernel takes 1-D float64 arrays of one length and returns new float64 arrays of that
length, NaN where the value is not yet defined (the warm-up). Every kernel is causal: the value at
index ``t`` reads only indices ``<= t``, so a prefix of the input gives a prefix of the output,
bit for bit. Where TA-Lib has the indicator, the seeding and the order of floating-point operations
follow TA-Lib so that values agree to round-off.

Example:
    >>> import numpy as np
    >>> sma_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, 1.5, 2.5, 3.5]
"""

from __future__ import annotations

from svc_engine.indicators.averages import (
    difference_nb,
    ema_nb,
    ema_seeded_nb,
    macd_line_nb,
    sma_nb,
    wma_nb,
)
from svc_engine.indicators.events import (
    cross_level_nb,
    cross_nb,
    run_length_nb,
)
from svc_engine.indicators.momentum import (
    cci_nb,
    roc_nb,
    rsi_nb,
    stoch_nb,
    typical_price_nb,
    wilder_gain_loss_nb,
    willr_nb,
)
from svc_engine.indicators.numeric import (
    add_exact_nb,
    first_valid_nb,
    two_prod_nb,
    two_sum_nb,
)
from svc_engine.indicators.ranges import (
    atr_nb,
    band_nb,
    rolling_band_nb,
    rolling_max_nb,
    rolling_min_nb,
    rolling_std_nb,
    true_range_nb,
)
from svc_engine.indicators.vwap import (
    DAY_MS,
    vwap_rolling_nb,
    vwap_session_nb,
)

__all__ = [
    "DAY_MS",
    "add_exact_nb",
    "atr_nb",
    "band_nb",
    "cci_nb",
    "cross_level_nb",
    "cross_nb",
    "difference_nb",
    "ema_nb",
    "ema_seeded_nb",
    "first_valid_nb",
    "macd_line_nb",
    "roc_nb",
    "rolling_band_nb",
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
