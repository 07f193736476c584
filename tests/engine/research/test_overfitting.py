"""PBO by CSCV and the deflated Sharpe ratio on strategies simulated by the engine: pure noise looks
overfit and undeflatable, a planted edge survives both."""

from __future__ import annotations

import numpy as np
import pytest

from tests.engine.research.overfit_helpers import klines, run_cells


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_noise_500_random_entry_strategies_look_overfit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3_000
    k = klines(n, seed)
    entries = [np.sort(rng.choice(n - 10, 40, replace=False)) for _ in range(500)]
    res = run_cells(k, entries, tp=[0.015] * 500)  # symmetric exits on a random walk: no edge
    p = res.pbo()
    assert p.combinations == 12_870 and p.cells == 500
    assert p.pbo >= 0.4
    d = res.deflated(10)
    assert d["trials"][0] == 500
    assert d["dsr"].max() < 0.95  # no top cell is believed after 500 trials
    assert d["psr"].max() > d["dsr"].max()  # the best alone looks better than it is


def test_planted_edge_survives_cscv_and_deflation() -> None:
    rng = np.random.default_rng(7)
    n = 4_000
    planted = np.arange(50, n - 20, 25)
    k = klines(n, 7, planted)
    edge = [planted] * 20
    noise = [np.sort(rng.choice(n - 10, len(planted), replace=False)) for _ in range(30)]
    tps = [0.008 + 0.0005 * i for i in range(20)] + [0.015] * 30
    res = run_cells(k, edge + noise, tp=tps)
    p = res.pbo()
    assert p.pbo <= 0.1
    assert set(p.chosen.tolist()) <= set(range(20))  # every split picks an edge cell
    best = res.deflated(1).row(0, named=True)
    assert best["combo"] < 20 and best["dsr"] > 0.95
