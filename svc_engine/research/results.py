"""The result of a sweep: one row per combination, coin and timeframe, and the helpers a quant
reaches for next: the top N by a statistic, a two-parameter heatmap, and robustness (how the
statistic holds up on the neighbours of the best cell).

A *cell* is one combination of parameters; a statistic of a cell is its mean over the coins and
timeframes of the sweep (nulls, such as a Sharpe ratio without trades, are left out of the mean).

Example:
    >>> rows = pl.DataFrame({"combo": [0, 1, 2], "n": [5, 10, 15], "coin": ["A"] * 3,
    ...                      "timeframe": ["1h"] * 3, "sharpe_ratio": [0.5, 1.5, 1.0]})
    >>> r = SweepResult(rows=rows, params=["n"], combos=rows.select("combo", "n"))
    >>> r.top(1)["n"].to_list(), r.robustness()["neighbour_mean"]
    ([10], 0.75)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl


@dataclass(slots=True)
class SweepResult:
    """Rows of a sweep (``combo``, the parameters, ``coin``, ``timeframe``, every summary figure)."""

    rows: pl.DataFrame
    params: list[str]
    combos: pl.DataFrame
    moments: np.ndarray | None = None
    """Per row, the moments of its per-candle returns over S blocks (rows, S, 5); see `trust`."""
    source: dict[str, Any] | None = None
    """What ``sweep`` ran (template, combinations, data, settings), to backtest top cells again."""

    def pbo(self, blocks: int | None = None) -> Any:
        """Probability of backtest overfitting by CSCV over the cells
        (:func:`svc_engine.research.trust.sweep_pbo`)."""
        from svc_engine.research.trust import sweep_pbo

        return sweep_pbo(self, blocks)

    def deflated(self, top: int = 10, by: str = "sharpe_ratio") -> pl.DataFrame:
        """The top cells with their deflated Sharpe ratio
        (:func:`svc_engine.research.trust.deflated_cells`)."""
        from svc_engine.research.trust import deflated_cells

        return deflated_cells(self, top, by)

    def confidence(
        self, top: int = 3, by: str = "sharpe_ratio", *, n: int = 1000, seed: int = 0
    ) -> pl.DataFrame:
        """Bootstrap intervals of the top cells' backtests
        (:func:`svc_engine.research.trust.top_confidence`)."""
        from svc_engine.research.trust import top_confidence

        return top_confidence(self, top, by, n=n, seed=seed)

    def report(
        self, path: str | os.PathLike[str], *, by: str = "sharpe_ratio", top: int = 20, **options: Any
    ) -> Path:
        """A standalone HTML page: top cells, heatmap, robustness, and how far the best can be
        trusted (PBO with its logit histogram, deflated Sharpe, bootstrap intervals)."""
        from svc_engine.research.report import report_html

        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report_html(self, {"by": by, "top": top, **options}))
        return out

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas), for users who prefer it."""
        return self.rows.to_pandas()

    def cells(self, by: str = "sharpe_ratio") -> pl.DataFrame:
        """One row per combination: its parameters, the mean, min and max of ``by`` over coins and
        timeframes, and how many rows had a value.

        Example:
            >>> rows = pl.DataFrame({"combo": [0, 0], "n": [5, 5], "coin": ["A", "B"],
            ...                      "timeframe": ["1h"] * 2, "x": [1.0, None]})
            >>> SweepResult(rows, ["n"], rows.select("combo", "n").unique()).cells("x").row(0)
            (0, 5, 1.0, 1.0, 1.0, 1)
        """
        _check_column(self.rows, by)
        return (
            self.rows.group_by("combo", *self.params, maintain_order=True)
            .agg(
                pl.col(by).mean().alias(by),
                pl.col(by).min().alias(f"{by}_min"),
                pl.col(by).max().alias(f"{by}_max"),
                pl.col(by).count().alias("rows_with_value"),
            )
            .sort("combo")
        )

    def top(
        self, n: int = 10, by: str = "sharpe_ratio", *, descending: bool = True, cells: bool = True
    ) -> pl.DataFrame:
        """The best ``n`` combinations by ``by`` (mean over coins and timeframes; nulls last), or
        with ``cells=False`` the best ``n`` rows (a combination on one coin).

        Example:
            >>> rows = pl.DataFrame({"combo": [0, 1], "n": [5, 10], "coin": ["A", "A"],
            ...                      "timeframe": ["1h"] * 2, "cagr_pct": [3.0, 7.0]})
            >>> SweepResult(rows, ["n"], rows.select("combo", "n")).top(1, "cagr_pct")["n"].item()
            10
        """
        frame = self.cells(by) if cells else self.rows
        _check_column(frame, by)
        return frame.sort(by, descending=descending, nulls_last=True).head(n)

    def heatmap(self, x: str, y: str, by: str = "sharpe_ratio", *, coin: str | None = None) -> pl.DataFrame:
        """``by`` as a table: one row per value of ``y``, one column per value of ``x`` (both
        sorted), each the mean over the other parameters, coins and timeframes (or one ``coin``).

        Example:
            >>> rows = pl.DataFrame({"combo": [0, 1], "a": [1, 2], "b": [7, 7], "coin": ["A", "A"],
            ...                      "timeframe": ["1h"] * 2, "s": [0.5, 0.25]})
            >>> SweepResult(rows, ["a", "b"], rows.select("combo", "a", "b")).heatmap("a", "b", "s").rows()
            [(7, 0.5, 0.25)]
        """
        for name in (x, y):
            if name not in self.params:
                raise ValueError(f"{name!r} is not a parameter of this sweep ({', '.join(self.params)})")
        if x == y:
            raise ValueError("a heatmap needs two different parameters")
        _check_column(self.rows, by)
        rows = self.rows if coin is None else self.rows.filter(pl.col("coin") == coin)
        means = rows.group_by(y, x).agg(pl.col(by).mean()).sort(y, x)
        xs = sorted(means[x].unique().to_list())
        table = means.pivot(on=x, index=y, values=by, sort_columns=False).sort(y)
        return table.select(y, *[str(v) for v in xs])

    def plot_heatmap(
        self,
        x: str,
        y: str,
        by: str = "sharpe_ratio",
        path: str | os.PathLike[str] | None = None,
        *,
        coin: str | None = None,
        plotlyjs: str | bool = True,
    ) -> Any:
        """A plotly heatmap of :meth:`heatmap`; written to ``path`` (``.html``) when given, with
        plotly's script embedded (``plotlyjs=True``), from a CDN (``"cdn"``) or a shared file
        (a path ending in ``.js``, as plotly's ``include_plotlyjs`` takes it).

        Example:
            >>> rows = pl.DataFrame({"combo": [0, 1], "a": [1, 2], "b": [7, 7], "coin": ["A", "A"],
            ...                      "timeframe": ["1h"] * 2, "s": [0.5, 0.25]})
            >>> r = SweepResult(rows, ["a", "b"], rows.select("combo", "a", "b"))
            >>> r.plot_heatmap("a", "b", "s").data[0].type
            'heatmap'
            >>> r.plot_heatmap("a", "b", "s").data[0].text  # each cell's value, shown in the cell
            (['0.5', '0.25'],)
        """
        import plotly.graph_objects as go

        table = self.heatmap(x, y, by, coin=coin)
        z = table.drop(y).to_numpy()
        # Each cell shows its value (an empty cell: no run there), so a printed page reads alone.
        text = [["" if v is None or v != v else f"{v:.3g}" for v in row] for row in z.tolist()]
        fig = go.Figure(
            go.Heatmap(
                z=z,
                x=table.columns[1:],
                y=[str(v) for v in table[y].to_list()],
                text=text,
                texttemplate="%{text}",
                colorscale="RdYlGn",
                colorbar={"title": by},
                hovertemplate=f"{x}=%{{x}}<br>{y}=%{{y}}<br>{by}=%{{z:.4g}}<extra></extra>",
            )
        )
        fig.update_layout(
            title=f"{by} by {x} and {y}" + (f" ({coin})" if coin else ""),
            xaxis_title=x,
            yaxis_title=y,
            xaxis_type="category",
            yaxis_type="category",
            width=720,
            height=520,
        )
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            fig.write_html(path, include_plotlyjs=plotlyjs, full_html=True)
        return fig

    def robustness(self, by: str = "sharpe_ratio", params: list[str] | None = None) -> dict[str, Any]:
        """How ``by`` holds up around the best cell: its neighbours are the cells one grid step away
        on any of ``params`` (default all; steps over each parameter's sorted distinct values) and
        equal on the others, diagonals included. Returns the best cell's parameters and value, the
        neighbours' count, mean and min, and ``ratio`` = neighbour mean / best value.

        Example:
            >>> rows = pl.DataFrame({"combo": [0, 1, 2], "n": [5, 10, 15], "coin": ["A"] * 3,
            ...                      "timeframe": ["1h"] * 3, "s": [0.5, 2.0, 1.0]})
            >>> SweepResult(rows, ["n"], rows.select("combo", "n")).robustness("s")["ratio"]
            0.375
        """
        names = self.params if params is None else params
        cells = self.cells(by).filter(pl.col(by).is_not_null())
        if cells.height == 0:
            raise ValueError(f"no combination has a value of {by!r}")
        best = cells.sort(by, descending=True).row(0, named=True)
        steps = {n: {v: i for i, v in enumerate(sorted(cells[n].unique().to_list()))} for n in names}
        others = [p for p in self.params if p not in names]
        near = cells.filter(pl.col("combo") != best["combo"])
        for p in others:
            near = near.filter(pl.col(p) == best[p])
        for n in names:
            pos = pl.col(n).replace_strict(steps[n], return_dtype=pl.Int64)
            near = near.filter((pos - steps[n][best[n]]).abs() <= 1)
        values = near[by]
        mean = float(values.mean()) if values.len() else None  # type: ignore[arg-type]
        return {
            "by": by,
            "best": {n: best[n] for n in self.params},
            "best_value": best[by],
            "neighbours": int(values.len()),
            "neighbour_mean": mean,
            "neighbour_min": float(values.min()) if values.len() else None,  # type: ignore[arg-type]
            "ratio": mean / best[by] if mean is not None and best[by] else None,
        }


def _check_column(frame: pl.DataFrame, name: str) -> None:
    if name not in frame.columns:
        raise ValueError(f"no column {name!r}; columns: {', '.join(frame.columns)}")
