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

from svc_engine.indicators import core
from svc_engine.indicators.core import *  # noqa: F403  (the package's names are core's)

__all__ = list(core.__all__)
