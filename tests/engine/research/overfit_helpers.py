"""Strategies with and without an edge for the overfitting tests, simulated by the engine, and
their rows and block moments as a sweep keeps them."""

from __future__ import annotations

import numpy as np
import polars as pl

from svc_engine.research.overfitting_nb import equity_block_moments_nb
from svc_engine.research.results import SweepResult
from svc_engine.sim.single import prepare, simulate_prepared

HOUR = 3_600_000


def klines(n: int, seed: int, planted: np.ndarray | None = None, drift: float = 0.005) -> pl.DataFrame:
    """A random walk (0.5 % a candle); after each planted candle the next 5 closes rise ``drift``."""
    rng = np.random.default_rng(seed)
    step = rng.normal(0, 0.005, n)
    if planted is not None:
        for s in planted:
            step[s + 1 : s + 6] += drift
    close = 100 * np.exp(np.cumsum(step))
    open_ = np.concatenate([[100.0], close[:-1]])
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * HOUR,
            "open": open_,
            "high": np.maximum(open_, close) * 1.001,
            "low": np.minimum(open_, close) * 0.999,
            "close": close,
            "volume": np.ones(n),
        }
    )


def run_cells(
    k: pl.DataFrame, entries: list[np.ndarray], tp: list[float], sl: float = 0.015, blocks: int = 16
) -> SweepResult:
    """Each cell: market entries at its candles with take-profit ``tp`` and stop ``sl`` (fractions)."""
    p = prepare(k, timeframe="1h", spread_pct=0, commission_pct=0)
    close = k["close"].to_numpy()
    rows, moments = [], np.zeros((len(entries), blocks, 5))
    for c, (idx, up) in enumerate(zip(entries, tp, strict=True)):
        sig = pl.DataFrame(
            {
                "open_time": idx.astype(np.int64) * HOUR,
                "side": ["long"] * len(idx),
                "limit_price": pl.Series([None] * len(idx), dtype=pl.Float64),
                "tp_price": close[idx] * (1 + up),
                "sl_price": close[idx] * (1 - sl),
            }
        )
        r = simulate_prepared(p, sig)
        equity_block_moments_nb(r.equity_curve.equity, 100.0, moments[c])
        sharpe = r.summary["sharpe_ratio"]
        rows.append({"combo": c, "cell": c, "coin": "X", "timeframe": "1h", "sharpe_ratio": sharpe})
    frame = pl.DataFrame(rows)
    return SweepResult(frame, ["cell"], frame.select("combo", "cell"), moments=moments)
