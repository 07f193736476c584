"""Random and Bayesian search: samples of a grid, run through the sweep."""

from __future__ import annotations

import pytest

from svc_engine.research import sweep
from svc_engine.research.demo import random_walk
from svc_engine.research.search import optimize, random_combinations

GRID = {"n": list(range(5, 40)), "level": list(range(20, 46)), "tp": [1.5, 2.0, 3.0, 4.0]}
STRATEGY = {"entry": "RSI({n}) crosses above {level}", "tp": "{tp}%", "sl": "2%"}


def test_random_combinations_are_distinct_members_of_the_grid_and_repeatable() -> None:
    picks = random_combinations(GRID, 200, seed=3)
    assert len(picks) == 200 and len({tuple(p.values()) for p in picks}) == 200
    assert all(p["n"] in GRID["n"] and p["level"] in GRID["level"] and p["tp"] in GRID["tp"] for p in picks)
    assert picks == random_combinations(GRID, 200, seed=3) != random_combinations(GRID, 200, seed=4)
    assert len(random_combinations({"n": [1, 2, 3]}, 10)) == 3


def test_a_random_search_is_a_sweep_of_a_list() -> None:
    k = {"X": random_walk(1_000, seed=6)}
    picks = random_combinations(GRID, 12, seed=1)
    rows = sweep(STRATEGY, picks, k, "1h", spread_pct=0).rows
    assert rows.height == 12 and rows.select("n", "level", "tp").to_dicts() == picks


def test_optuna_search_keeps_every_trial_and_finds_the_best_it_saw() -> None:
    pytest.importorskip("optuna")
    k = {"X": random_walk(1_500, seed=9)}
    result = optimize(STRATEGY, GRID, k, "1h", n_trials=15, by="total_return_pct", seed=2, spread_pct=0)
    assert result.rows.height == 15 and result.rows["combo"].to_list() == list(range(15))
    best = result.top(1, "total_return_pct").row(0, named=True)
    again = sweep(STRATEGY, [{p: best[p] for p in ("n", "level", "tp")}], k, "1h", spread_pct=0).rows
    assert again["total_return_pct"][0] == best["total_return_pct"]
