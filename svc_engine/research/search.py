"""Searches for grids too large to enumerate: a random sample of a grid, or Optuna's Bayesian
search (the optional ``optuna`` extra). Both run through :func:`~svc_engine.research.sweep`, so
every trial is a row with every statistic, equal to a backtest of that combination.

Example:
    >>> random_combinations({"n": range(5, 50), "level": range(20, 45)}, 3, seed=1)
    [{'n': 26, 'level': 27}, {'n': 28, 'level': 20}, {'n': 38, 'level': 44}]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from svc_engine.research.results import SweepResult
from svc_engine.research.sweeper import sweep


def random_combinations(grid: Mapping[str, Sequence[Any]], n: int, *, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` distinct combinations drawn uniformly from a grid (all of them when it holds fewer),
    without building the grid; the same seed draws the same combinations.

    Example:
        >>> len(random_combinations({"n": [1, 2]}, 5))
        2
    """
    names = list(grid)
    values = [list(grid[k]) for k in names]
    sizes = [len(v) for v in values]
    if any(s == 0 for s in sizes):
        raise ValueError("every parameter needs at least one value")
    total = math.prod(sizes)
    rng = np.random.default_rng(seed)
    if n >= total:
        picks = list(range(total))
    else:
        seen: dict[int, None] = {}
        while len(seen) < n:
            for x in rng.integers(0, total, size=2 * (n - len(seen))).tolist():
                if len(seen) < n:
                    seen.setdefault(int(x), None)
        picks = list(seen)
    out = []
    for flat in picks:
        combo, rest = {}, flat
        for name, vs, size in zip(reversed(names), reversed(values), reversed(sizes), strict=True):
            rest, at = divmod(rest, size)
            combo[name] = vs[at]
        out.append({k: _plain(combo[k]) for k in names})
    return out


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") and not isinstance(v, str) else v


def optimize(
    strategy: str | Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    coins: Any,
    timeframe: str = "1h",
    start_ts: float | None = None,
    end_ts: float | None = None,
    *,
    n_trials: int = 50,
    by: str = "sharpe_ratio",
    seed: int = 0,
    **kwargs: Any,
) -> SweepResult:
    """Optuna's TPE search over ``grid`` (each parameter one of its values), maximising the mean
    of ``by`` over ``coins``; a trial without a value of ``by`` (say, no trade) scores ``-inf``.
    Returns the rows of every trial, in trial order (``combo`` = trial number). Needs ``optuna``.

    Example:
        >>> optimize.__name__
        'optimize'
    """
    try:
        import optuna
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError("optimize needs the 'optuna' extra: pip install 'svc[optuna]'") from exc

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = list(grid)
    choices = {k: [_plain(v) for v in grid[k]] for k in names}
    parts: list[pl.DataFrame] = []

    def objective(trial: Any) -> float:
        combo = {k: trial.suggest_categorical(k, choices[k]) for k in names}
        result = sweep(strategy, [combo], coins, timeframe, start_ts, end_ts, **kwargs)
        rows = result.rows.with_columns(pl.lit(trial.number, dtype=pl.Int64).alias("combo"))
        parts.append(rows)
        value = rows[by].mean()
        return float(value) if value is not None else -math.inf  # type: ignore[arg-type]

    sampler = optuna.samplers.TPESampler(seed=seed)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(objective, n_trials=n_trials)
    rows = pl.concat(parts, how="diagonal_relaxed")
    combos = rows.select("combo", *names).unique("combo", maintain_order=True)
    return SweepResult(rows=rows, params=names, combos=combos)
