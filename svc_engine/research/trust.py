"""How far a sweep's best cells can be trusted: PBO over its cells, the deflated Sharpe ratio of its
top cells, and bootstrap intervals of their backtests.

The sweep keeps, per row, the moments of its per-candle returns over S blocks of candles
(:mod:`~svc_engine.research.overfitting_nb`). A cell's moments are the sums over its rows (its
coins and timeframes pooled), so its Sharpe ratio here is that of all its rows' per-candle returns
together (for one coin, the row's own). For the deflated Sharpe the number of returns is the mean
number of candles per row, not the pooled count: coins move together, and counting every coin's
candles as independent evidence would overstate the confidence. The number of trials is the number
of cells with returns, and their variance that of the cells' per-candle Sharpe ratios.

Example:
    >>> central(np.array([[4.0, 0.0, 4.0, 0.0, 4.0]]))[0].round(6).tolist()
    [0.0, 1.0, 0.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from svc_engine.research.deflated import expected_max_sharpe, probabilistic_sharpe
from svc_engine.research.overfitting import PBOResult, pbo_from_moments


def central(m: np.ndarray) -> np.ndarray:
    """(mean, variance, skewness, non-excess kurtosis) per row of summed moments ``(..., 5)``
    (count and sums of r .. r^4); no variation gives skewness 0 and kurtosis 3 (normal).

    Example:
        >>> central(np.array([[2.0, 0.2, 0.02, 0.002, 0.0002]]))[0].round(6).tolist()
        [0.1, 0.0, 0.0, 3.0]
    """
    n = np.maximum(m[..., 0], 1.0)
    mu = m[..., 1] / n
    e2, e3, e4 = m[..., 2] / n, m[..., 3] / n, m[..., 4] / n
    var = np.maximum(e2 - mu**2, 0.0)
    c3 = e3 - 3 * mu * e2 + 2 * mu**3
    c4 = e4 - 4 * mu * e3 + 6 * mu**2 * e2 - 3 * mu**4
    flat = var <= 1e-300 + 1e-12 * mu**2  # a constant series: round-off is all its variance
    safe = np.where(flat, 1.0, var)
    skew = np.where(flat, 0.0, c3 / safe**1.5)
    kurt = np.where(flat, 3.0, c4 / safe**2)
    return np.stack([mu, np.where(flat, 0.0, var), skew, kurt], axis=-1)


def cell_moments(result: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(combo of each cell, the cell's moments (cells, S, 5), rows per cell) from a sweep's rows.

    Example:
        >>> cell_moments.__name__
        'cell_moments'
    """
    if result.moments is None:
        raise ValueError("this sweep kept no block moments: run it with blocks=16 (the default)")
    combo = result.rows["combo"].to_numpy()
    cells, inverse, counts = np.unique(combo, return_inverse=True, return_counts=True)
    out = np.zeros((cells.shape[0], *result.moments.shape[1:]))
    np.add.at(out, inverse, result.moments)
    return cells, out, counts


def sweep_pbo(result: Any, blocks: int | None = None) -> PBOResult:
    """PBO by CSCV over a sweep's cells (``chosen`` holds combos; ``blocks`` merges blocks first).

    Example:
        >>> sweep_pbo.__name__
        'sweep_pbo'
    """
    cells, m, _ = cell_moments(result)
    res = pbo_from_moments(m, blocks)
    object.__setattr__(res, "chosen", cells[res.chosen])  # cell index -> the sweep's combo
    return res


def deflated_cells(result: Any, top: int = 10, by: str = "sharpe_ratio") -> pl.DataFrame:
    """The ``top`` cells by ``by`` with their per-candle Sharpe ratio, skewness, kurtosis, number of
    returns, ``psr`` (probability that the true Sharpe is above 0, as if the cell were the only
    trial), ``sr0`` (the expected maximum per-candle Sharpe of the trials) and ``dsr`` (the
    probability that its true Sharpe is above 0 after all the trials).

    Example:
        >>> deflated_cells.__name__
        'deflated_cells'
    """
    cells, m, rows = cell_moments(result)
    whole = central(m.sum(axis=1))
    sd = np.sqrt(whole[:, 1])
    sr = np.where(sd > 0, whole[:, 0] / np.where(sd > 0, sd, 1.0), 0.0)
    n_ret = m[:, :, 0].sum(axis=1) / rows  # candles per row (see the module docstring)
    live = sd > 0
    trials = int(live.sum())
    variance = float(np.var(sr[live], ddof=1)) if trials > 1 else 0.0
    sr0 = expected_max_sharpe(max(trials, 1), variance)
    stats = pl.DataFrame(
        {
            "combo": cells,
            "sharpe_per_candle": sr,
            "skew": whole[:, 2],
            "kurtosis": whole[:, 3],
            "returns": n_ret.round().astype(np.int64),
        }
    )
    best = result.top(top, by).join(stats, on="combo", how="left")

    def prob(row: dict[str, Any], benchmark: float) -> float | None:
        try:
            sr, t = row["sharpe_per_candle"], max(int(row["returns"]), 2)
            g3, g4 = row["skew"], row["kurtosis"]
            return probabilistic_sharpe(sr, t, benchmark=benchmark, skew=g3, kurtosis=g4)
        except ValueError:  # moments that admit no standard error: no probability to state
            return None

    rows_ = best.to_dicts()
    return best.with_columns(
        pl.Series("psr", [prob(r, 0.0) for r in rows_], dtype=pl.Float64),
        pl.lit(sr0).alias("sr0"),
        pl.Series("dsr", [prob(r, sr0) for r in rows_], dtype=pl.Float64),
        pl.lit(trials).alias("trials"),
    )


def top_confidence(
    result: Any, top: int = 3, by: str = "sharpe_ratio", *, n: int = 1000, seed: int = 0, level: float = 0.95
) -> pl.DataFrame:
    """Bootstrap intervals of the ``top`` cells' backtests (each row of those cells is backtested
    again: a row equals its backtest), one row per (cell, coin, timeframe, statistic).

    Example:
        >>> top_confidence.__name__
        'top_confidence'
    """
    from svc_engine.research.compiling import compile_combinations
    from svc_engine.research.params import split_settings
    from svc_engine.sim.drivers import backtest

    src = result.source
    if src is None:
        raise ValueError("this sweep result does not know its strategy and data (made by sweep() it does)")
    out = []
    for combo in result.top(top, by)["combo"].to_list():
        values = src["combos"][combo]
        strategies, _ = compile_combinations(src["template"], [values], src["settings"])
        _, settings = split_settings(src["template"], values, src["settings"])
        for row in result.rows.filter(pl.col("combo") == combo).select("coin", "timeframe").iter_rows():
            coin, tf = row
            data = src["frames"][coin] if src["frames"] is not None else coin
            run = backtest(
                strategies[0],
                data,
                tf,
                src["start_ts"],
                src["end_ts"],
                market=src["market"],
                store=src["store"],
                **settings,
            )
            ci = run.confidence(n=n, seed=seed, level=level).intervals
            out.append(
                ci.with_columns(
                    pl.lit(combo).alias("combo"), pl.lit(coin).alias("coin"), pl.lit(tf).alias("timeframe")
                )
            )
    return pl.concat(out).select(
        "combo", "coin", "timeframe", "statistic", "value", "lower", "upper", "median"
    )
