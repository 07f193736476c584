"""The deflated Sharpe ratio against the paper's own worked example, and E[max SR] by hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from svc_engine.research.deflated import (
    EULER_GAMMA,
    deflated_sharpe,
    expected_max_sharpe,
    moments_of,
    per_period,
    probabilistic_sharpe,
)


def test_paper_example_dsr_0_90() -> None:
    # Bailey & López de Prado (2014), numerical example: SR 2.5 a year over 5 years of daily returns
    # (T = 1,250, 250 a year), N = 100 trials whose annual SRs have variance 0.5, skew -3, kurtosis 10.
    sr = per_period(2.5, 250)  # 0.158114
    v = 0.5 / 250  # per-day variance of the trials' SRs: 0.002
    sr0 = expected_max_sharpe(100, v)
    # by hand: sqrt(0.002) * (0.422784 * 2.326348 + 0.577216 * 2.680210) = 0.044721 * 2.530656
    assert sr0 == pytest.approx(0.113172, abs=1e-6)
    assert sr0 * math.sqrt(250) == pytest.approx(1.7894, abs=1e-4)  # annualised: the bar to clear
    # z = (0.158114 - 0.113172) * sqrt(1249) / sqrt(1 + 3 * 0.158114 + 9/4 * 0.025) = 1.588300 / 1.237171
    dsr = deflated_sharpe(sr, 1250, trials=100, variance=v, skew=-3, kurtosis=10)
    assert dsr == pytest.approx(0.9004, abs=1e-4)
    assert dsr == pytest.approx(NormalDist().cdf(1.283816), abs=1e-6)


def test_expected_max_sharpe_by_hand_and_by_simulation() -> None:
    # N = 10, V = 1: (1 - g) * z(0.9) + g * z(1 - 1/(10e)) = 0.422784 * 1.281552 + 0.577216 * 1.789242
    by_hand = (1 - EULER_GAMMA) * 1.2815516 + EULER_GAMMA * 1.7892418
    assert expected_max_sharpe(10, 1.0) == pytest.approx(by_hand, abs=1e-6)
    assert by_hand == pytest.approx(1.574598, abs=1e-6)
    # the approximation against the mean maximum of 10 and of 1,000 standard normals
    rng = np.random.default_rng(0)
    for n, tol in ((10, 0.03), (1000, 0.01)):
        simulated = rng.standard_normal((4000, n)).max(axis=1).mean()
        assert expected_max_sharpe(n, 4.0) == pytest.approx(2 * simulated, rel=tol)  # scales with sqrt(V)


def test_psr_of_normal_returns_and_moments() -> None:
    assert probabilistic_sharpe(0.1, 101) == pytest.approx(NormalDist().cdf(1 / math.sqrt(1.005)))
    assert probabilistic_sharpe(0.1, 101, benchmark=0.1) == 0.5
    r = np.random.default_rng(3).standard_t(5, 200_000) * 0.01 + 0.001
    sr, _, g4, t = moments_of(r)
    assert t == 200_000 and sr == pytest.approx(0.001 / (0.01 * math.sqrt(5 / 3)), abs=0.008)  # 3.5 s.e.
    assert g4 == pytest.approx(9.0, rel=0.25)  # Student t(5): kurtosis 3 + 6 / (5 - 4)
