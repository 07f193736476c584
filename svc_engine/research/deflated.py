"""How far a Sharpe ratio can be trusted: the Probabilistic Sharpe Ratio, the expected maximum
Sharpe ratio of N independent trials, and the Deflated Sharpe Ratio.

- PSR (Bailey and López de Prado, "The Sharpe Ratio Efficient Frontier", 2012): the probability
  that the true Sharpe ratio exceeds a benchmark ``SR*``, given the estimate ``SR^`` from ``T``
  returns of skewness ``g3`` and (non-excess) kurtosis ``g4``::

      PSR(SR*) = Phi( (SR^ - SR*) sqrt(T - 1) / sqrt(1 - g3 SR^ + (g4 - 1) / 4 SR^2) )

- Expected maximum of N independent trials whose Sharpe ratios have variance ``V`` and mean 0
  (Bailey and López de Prado, "The Deflated Sharpe Ratio", 2014, eq. 2; ``g`` = Euler-Mascheroni)::

      E[max SR] = sqrt(V) ((1 - g) Phi^-1(1 - 1/N) + g Phi^-1(1 - 1/(N e)))

- DSR = PSR(E[max SR]): the probability that the best of N trials has a true Sharpe above zero
  once the selection is accounted for.

All Sharpe ratios here are per period (not annualised): ``T`` counts those periods, and ``V`` is the
variance of the trials' per-period Sharpe ratios. :func:`per_period` converts an annual figure.

Example:
    >>> round(deflated_sharpe(2.5 / 250 ** 0.5, 1250, trials=100, variance=0.5 / 250,
    ...                       skew=-3, kurtosis=10), 4)
    0.9004
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

#: The Euler-Mascheroni constant.
EULER_GAMMA = 0.5772156649015329
_N = NormalDist()


def per_period(annual_sharpe: float, periods_per_year: float) -> float:
    """An annualised Sharpe ratio as a per-period one (``SR / sqrt(periods)``).

    Example:
        >>> round(per_period(2.0, 252), 6)
        0.125988
    """
    return annual_sharpe / math.sqrt(periods_per_year)


def probabilistic_sharpe(
    sharpe: float, n_returns: int, *, benchmark: float = 0.0, skew: float = 0.0, kurtosis: float = 3.0
) -> float:
    """PSR: the probability that the true per-period Sharpe ratio exceeds ``benchmark``, given the
    estimate ``sharpe`` from ``n_returns`` returns of that ``skew`` and (non-excess) ``kurtosis``
    (3 for normal returns).

    Example:
        >>> round(probabilistic_sharpe(0.1, 101), 6)  # normal returns: Phi(0.1 * 10 / sqrt(1.005))
        0.840741
    """
    if n_returns < 2:
        raise ValueError(f"the PSR needs at least 2 returns, got {n_returns}")
    # non-normal returns widen (or narrow) the standard error of the estimate (Mertens, 2002)
    spread = 1.0 - skew * sharpe + (kurtosis - 1.0) / 4.0 * sharpe * sharpe
    if not spread > 0:
        raise ValueError(f"skew {skew} and kurtosis {kurtosis} give no positive variance at SR {sharpe}")
    return _N.cdf((sharpe - benchmark) * math.sqrt(n_returns - 1) / math.sqrt(spread))


def expected_max_sharpe(trials: int, variance: float, mean: float = 0.0) -> float:
    """The expected maximum of ``trials`` independent Sharpe ratios of ``mean`` and ``variance``
    (the false-positive level a selection of the best trial must beat).

    Example:
        >>> round(expected_max_sharpe(100, 1.0), 4), expected_max_sharpe(1, 0.3)
        (2.5306, 0.0)
    """
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    if variance < 0:
        raise ValueError(f"a variance cannot be negative, got {variance}")
    if trials == 1:  # one trial is no selection: nothing to deflate
        return mean
    z1 = _N.inv_cdf(1.0 - 1.0 / trials)
    z2 = _N.inv_cdf(1.0 - 1.0 / (trials * math.e))
    return mean + math.sqrt(variance) * ((1.0 - EULER_GAMMA) * z1 + EULER_GAMMA * z2)


def deflated_sharpe(
    sharpe: float,
    n_returns: int,
    *,
    trials: int,
    variance: float,
    skew: float = 0.0,
    kurtosis: float = 3.0,
) -> float:
    """DSR: the probability that the true Sharpe ratio of the best of ``trials`` is above zero,
    i.e. the PSR of ``sharpe`` against :func:`expected_max_sharpe` of the trials (per period).

    Example:
        >>> deflated_sharpe(0.05, 1000, trials=1, variance=0.0) == probabilistic_sharpe(0.05, 1000)
        True
    """
    sr0 = expected_max_sharpe(trials, variance)
    return probabilistic_sharpe(sharpe, n_returns, benchmark=sr0, skew=skew, kurtosis=kurtosis)


def moments_of(returns: np.ndarray) -> tuple[float, float, float, int]:
    """(per-period Sharpe ratio, skewness, non-excess kurtosis, count) of a return series, with the
    population moments the papers use (ddof 0); a series without variation has Sharpe 0.

    Example:
        >>> sr, g3, g4, t = moments_of(np.array([0.01, -0.01, 0.02, 0.0]))
        >>> round(sr, 6), round(g3, 6), round(g4, 6), t
        (0.447214, 0.0, 1.64, 4)
    """
    r = np.asarray(returns, dtype=np.float64)
    t = int(r.shape[0])
    if t < 2:
        raise ValueError(f"moments need at least 2 returns, got {t}")
    d = r - r.mean()
    var = float(np.mean(d * d))
    if not var > 0:
        return 0.0, 0.0, 3.0, t
    sd = math.sqrt(var)
    return float(r.mean()) / sd, float(np.mean(d**3)) / sd**3, float(np.mean(d**4)) / var**2, t
