"""The Probability of Backtest Overfitting by combinatorially symmetric cross-validation (Bailey,
Borwein, López de Prado and Zhu, "The Probability of Backtest Overfitting", 2015).

The T per-period returns of N cells (strategies, or a sweep's combinations) are split into S even
blocks of consecutive periods. For each of the C(S, S/2) ways to call half the blocks in sample
and the other half out of sample, the cell with the best in-sample Sharpe ratio is picked, and its
out-of-sample Sharpe ratio ranked among all cells: ``w = rank / (N + 1)`` and the logit
``lambda = ln(w / (1 - w))``. PBO is the share of combinations where the pick ranks at or below
the median out of sample (``lambda <= 0``): near 0.5 a selection is worth nothing, near 0 it
carries over. The *performance degradation* is the least-squares line of the pick's
out-of-sample Sharpe on its in-sample one (a slope below zero: the higher in sample, the worse
out of sample), and ``prob_oos_loss`` the share of picks with a negative out-of-sample Sharpe.

The loop over combinations runs in :func:`~svc_engine.research.overfitting_nb.cscv_nb` on block
moments (sums of the returns' powers per block), so it reads N x S numbers, never the returns.

Example:
    >>> rng = np.random.default_rng(0)
    >>> noise = pbo(rng.normal(0, 0.01, (800, 40)), blocks=8)
    >>> noise.combinations, 0.3 < noise.pbo < 0.8
    (70, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from svc_engine.research.overfitting_nb import cscv_nb, returns_block_moments_nb

#: Default number of blocks (the paper's S = 16: 12,870 combinations).
BLOCKS = 16


@dataclass(frozen=True, slots=True)
class PBOResult:
    """PBO, the logit of every combination, and the in/out-of-sample Sharpe ratios (per period) of
    each combination's in-sample pick."""

    pbo: float
    logits: np.ndarray
    is_sharpe: np.ndarray
    oos_sharpe: np.ndarray
    chosen: np.ndarray
    slope: float
    intercept: float
    prob_oos_loss: float
    cells: int
    blocks: int

    @property
    def combinations(self) -> int:
        """How many half/half splits were evaluated: C(S, S/2)."""
        return int(self.logits.shape[0])

    def histogram(self, bins: int = 20) -> pl.DataFrame:
        """The logit distribution as a table: ``left``, ``right`` edges and ``share`` of combinations.

        Example:
            >>> r = PBOResult(0.5, np.array([-1.0, 1.0]), np.zeros(2), np.zeros(2), np.zeros(2, np.int64),
            ...               0.0, 0.0, 0.0, 3, 2)
            >>> r.histogram(2)["share"].to_list()
            [0.5, 0.5]
        """
        lo, hi = float(self.logits.min()), float(self.logits.max())
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        counts, edges = np.histogram(self.logits, bins=bins, range=(lo, hi))
        return pl.DataFrame({"left": edges[:-1], "right": edges[1:], "share": counts / counts.sum()})

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON values (without the per-combination arrays)."""
        return {
            "pbo": self.pbo,
            "slope": self.slope,
            "intercept": self.intercept,
            "prob_oos_loss": self.prob_oos_loss,
            "cells": self.cells,
            "blocks": self.blocks,
            "combinations": self.combinations,
            "logit_median": float(np.median(self.logits)),
        }


def block_moments(returns: np.ndarray, blocks: int = BLOCKS) -> np.ndarray:
    """Moments ``(N, S, 5)`` of the columns of a ``(T, N)`` return matrix over ``blocks`` blocks of
    consecutive rows (see :mod:`~svc_engine.research.overfitting_nb`).

    Example:
        >>> block_moments(np.array([[0.1], [0.3]]), 2)[0, :, :2].tolist()
        [[1.0, 0.1], [1.0, 0.3]]
    """
    r = np.asarray(returns, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"returns must be a (periods, cells) matrix, got shape {r.shape}")
    if r.shape[0] < blocks:
        raise ValueError(f"{r.shape[0]} periods cannot fill {blocks} blocks")
    out = np.zeros((r.shape[1], blocks, 5))
    for c in range(r.shape[1]):  # one kernel call per cell; the loop over periods is in the kernel
        returns_block_moments_nb(np.ascontiguousarray(r[:, c]), out[c])
    return out


def merge_blocks(moments: np.ndarray, blocks: int) -> np.ndarray:
    """Moments of ``blocks`` blocks from moments of a multiple of that many (neighbours summed).

    Example:
        >>> merge_blocks(np.ones((1, 4, 5)), 2)[0, :, 0].tolist()
        [2.0, 2.0]
    """
    have = moments.shape[1]
    if have == blocks:
        return moments
    if blocks < 2 or have % blocks:
        raise ValueError(f"moments of {have} blocks cannot be merged into {blocks}")
    return moments.reshape(moments.shape[0], blocks, have // blocks, moments.shape[2]).sum(axis=2)


def pbo_from_moments(moments: np.ndarray, blocks: int | None = None) -> PBOResult:
    """:func:`pbo` from cells' block moments ``(N, S, 5)`` (as a sweep keeps them); ``blocks``
    merges them into fewer blocks first.

    Example:
        >>> m = block_moments(np.random.default_rng(1).normal(0, 1, (64, 5)), 4)
        >>> pbo_from_moments(m).combinations
        6
    """
    m = np.ascontiguousarray(moments if blocks is None else merge_blocks(moments, blocks), dtype=np.float64)
    n_cells, s = m.shape[0], m.shape[1]
    if s < 2 or s % 2 or s > 24:
        raise ValueError(f"CSCV needs an even number of blocks between 2 and 24, got {s}")
    if n_cells < 2:
        raise ValueError(f"PBO compares cells: it needs at least 2, got {n_cells}")
    total = math.comb(s, s // 2)
    logits, is_sr, oos_sr = np.empty(total), np.empty(total), np.empty(total)
    chosen = np.empty(total, np.int64)
    cscv_nb(m, s // 2, logits, is_sr, oos_sr, chosen)
    slope, intercept = _line(is_sr, oos_sr)
    return PBOResult(
        pbo=float(np.mean(logits <= 0.0)),
        logits=logits,
        is_sharpe=is_sr,
        oos_sharpe=oos_sr,
        chosen=chosen,
        slope=slope,
        intercept=intercept,
        prob_oos_loss=float(np.mean(oos_sr < 0.0)),
        cells=n_cells,
        blocks=s,
    )


def pbo(returns: np.ndarray, blocks: int = BLOCKS) -> PBOResult:
    """PBO by CSCV of a ``(T, N)`` matrix of per-period returns of N cells (see the module
    docstring). ``blocks`` is S, even; C(S, S/2) combinations are evaluated.

    Example:
        >>> edge = np.random.default_rng(2).normal(0, 0.01, (800, 10)) + 0.004 * (np.arange(10) == 3)
        >>> r = pbo(edge, blocks=8)
        >>> r.pbo, set(r.chosen.tolist())
        (0.0, {3})
    """
    return pbo_from_moments(block_moments(returns, blocks))


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope and intercept of ``y`` on ``x`` (slope 0 when ``x`` does not vary)."""
    dx = x - x.mean()
    sxx = float(dx @ dx)
    slope = float(dx @ (y - y.mean())) / sxx if sxx > 0 else 0.0
    return slope, float(y.mean() - slope * x.mean())
