"""The numba kernels of the synthetic market generator (:mod:`svc_engine.data.synthetic`): regime
chains, log-price paths and the aggregation of fine steps into candles.

Example:
    >>> import numpy as np
    >>> regimes_nb(np.array([0.5, 0.5]), 0.9, 0.9, 0.3).shape
    (2,)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def regimes_nb(u: np.ndarray, stay_range: float, stay_trend: float, reverse: float) -> np.ndarray:
    """Markov chain over bars: 0 range, 1 trend up, -1 trend down, driven by uniforms ``u``."""
    out = np.empty(u.size, np.int8)
    state = 0
    for k in range(u.size):
        out[k] = state
        if state == 0 and u[k] > stay_range:
            state = 1 if u[k] > (1.0 + stay_range) / 2.0 else -1
        elif state != 0 and u[k] > stay_trend:
            state = -state if u[k] > 1.0 - (1.0 - stay_trend) * reverse else 0
    return out


@njit(cache=True, nogil=True)
def log_path_nb(
    z: np.ndarray,
    profile: np.ndarray,
    steps: int,
    sigma: float,
    regime: np.ndarray,
    trend: float,
    kappa: float,
    alpha: float,
    beta: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Log-price path of ``z.size`` steps (``x[0] = 0``) and each step's standard deviation.

    ``sigma`` is the long-run step deviation, scaled per bar by the GARCH variance ``h`` (fed by
    the bar's standardised shock) and per step by ``profile[i % profile.size]``.
    """
    n_bars = z.size // steps
    x = np.empty(z.size + 1)
    sd = np.empty(z.size)
    x[0] = 0.0
    h, anchor, root = 1.0, 0.0, math.sqrt(steps)
    omega = 1.0 - alpha - beta
    period = profile.size
    for k in range(n_bars):
        start = k * steps
        s = sigma * math.sqrt(h)
        if regime[k] == 0:
            if k == 0 or regime[k - 1] != 0:
                anchor = x[start]
            drift = -kappa * (x[start] - anchor) / steps
        else:
            drift = regime[k] * trend * s / root
        u = 0.0
        for i in range(start, start + steps):
            sd[i] = s * profile[i % period]
            x[i + 1] = x[i] + drift + sd[i] * z[i]
            u += z[i]
        u /= root
        h = min(omega + (alpha * u * u + beta) * h, 50.0)
    return x, sd


@njit(cache=True, nogil=True)
def aggregate_nb(
    o: np.ndarray, hi: np.ndarray, lo: np.ndarray, c: np.ndarray, v: np.ndarray, steps: int, first: int
) -> np.ndarray:
    """OHLCV of consecutive bars of ``steps`` fine steps, skipping the first ``first`` of each."""
    n = o.size // steps
    out = np.empty((5, n))
    for k in range(n):
        a, b = k * steps + first, (k + 1) * steps
        top, bottom, vol = hi[a], lo[a], 0.0
        for i in range(a, b):
            top = max(top, hi[i])
            bottom = min(bottom, lo[i])
            vol += v[i]
        out[0, k], out[1, k], out[2, k], out[3, k], out[4, k] = o[a], top, bottom, c[b - 1], vol
    return out


# ---- simulation ----------------------------------------------------------------------------------
