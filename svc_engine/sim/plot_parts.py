"""The parts of the report `svc_engine.sim.plot` draws below the candles: the volume row, each
trade from fill to exit, the equity and drawdown rows and the statistics table, with the thinning
that keeps candles and lines to a page's worth of points (``max_points``).

Example:
    >>> stats_rows({"total_return_pct": 12.3456, "total_trades": 7, "other": 1})
    [('total return %', '12.35'), ('trades', '7')]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.times import ms_array


def to_datetimes(times: pl.Series | np.ndarray) -> np.ndarray:
    """A time column (datetimes, or a user's integer Unix ms) or Unix ms, as ``datetime64[ms]``.

    Example:
        >>> to_datetimes(np.array([0])).tolist()
        [datetime.datetime(1970, 1, 1, 0, 0)]
    """
    if isinstance(times, pl.Series):
        times = ms_array(times)
    return np.asarray(times, dtype="int64").astype("datetime64[ms]")


#: The summary figures the statistics table shows, in this order, with their labels.
STATS = (
    ("total_return_pct", "total return %"),
    ("buy_and_hold_return_pct", "buy and hold %"),
    ("cagr_pct", "CAGR %"),
    ("max_drawdown_pct", "max drawdown %"),
    ("max_drawdown_duration_days", "max drawdown days"),
    ("sharpe_ratio", "Sharpe"),
    ("sortino_ratio", "Sortino"),
    ("calmar_ratio", "Calmar"),
    ("total_trades", "trades"),
    ("win_rate", "win rate %"),
    ("profit_factor", "profit factor"),
    ("avg_profit_per_trade_pct", "average trade %"),
    ("best_trade_pct", "best trade %"),
    ("worst_trade_pct", "worst trade %"),
    ("exposure_pct", "exposure %"),
    ("final_balance", "final balance"),
)


def stats_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The statistics table's rows: the known summary figures present in ``summary``, formatted.

    Example:
        >>> stats_rows({"total_return_pct": 12.3456, "total_trades": 7, "other": 1})
        [('total return %', '12.35'), ('trades', '7')]
    """
    out = []
    for key, label in STATS:
        value = summary.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            out.append((label, str(value)))
        elif isinstance(value, float):
            out.append((label, "" if value != value else f"{value:.2f}"))
    return out


def stats_table(fig: Any, summary: dict[str, Any], row: int) -> None:
    """Add the summary figures (:data:`STATS`) as a two-column table in ``row`` of ``fig``."""
    import plotly.graph_objects as go

    rows = stats_rows(summary)
    half = -(-len(rows) // 2)
    left, right = rows[:half], rows[half:] + [("", "")] * (half - len(rows[half:]))
    cells = [[r[0] for r in left], [r[1] for r in left], [r[0] for r in right], [r[1] for r in right]]
    fig.add_trace(
        go.Table(
            header={"values": ["figure", "value", "figure", "value"]},
            cells={"values": cells, "align": ["left", "right", "left", "right"]},
            name="statistics",
        ),
        row,
        1,
    )


def volume_row(fig: Any, coarse: pl.DataFrame) -> None:
    """Add the volume bars of the (coarsened) candles, green up and red down, to ``fig``."""
    import plotly.graph_objects as go

    up = (coarse["close"] >= coarse["open"]).to_numpy()
    fig.add_trace(
        go.Bar(
            x=to_datetimes(coarse["open_time"]),
            y=coarse["volume"],
            name="volume",
            # 0/1 on a two-colour scale: one byte a bar on the page, not a colour's name
            marker={
                "color": up.astype(np.uint8),
                "colorscale": [[0, "#ef5350"], [1, "#26a69a"]],
                "cmin": 0,
                "cmax": 1,
            },
            showlegend=False,
        ),
        2,
        1,
    )


def trade_lines(fig: Any, trades: pl.DataFrame) -> None:
    """Each trade from its fill to its exit: one trace of winners (green), one of losers (red), the
    P&L and return of each on hover."""
    import plotly.graph_objects as go

    if trades.height == 0:
        return
    pnl = trades["pnl"].to_numpy()
    for name, rows, color in (("winning trades", pnl > 0, "#2ca02c"), ("losing trades", pnl <= 0, "#d62728")):
        chosen = trades.filter(pl.Series(rows))
        n = chosen.height
        if n == 0:
            continue
        x = np.empty(3 * n, dtype="datetime64[ms]")
        y = np.full(3 * n, np.nan)
        x[0::3], x[1::3] = to_datetimes(chosen["fill_time"]), to_datetimes(chosen["exit_time"])
        x[2::3] = x[1::3]
        y[0::3], y[1::3] = chosen["entry_price"].to_numpy(), chosen["exit_price"].to_numpy()
        hover = [
            f"{side} {reason}: P&L {p:+.2f} ({r:+.2f} %)"
            for side, reason, p, r in zip(
                chosen["side"], chosen["exit_reason"], chosen["pnl"], chosen["return_pct"], strict=True
            )
        ]
        text = np.repeat(np.array(hover, dtype=object), 3)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=name,
                connectgaps=False,
                line={"color": color, "width": 2},
                text=text,
                hovertemplate="%{text}<extra></extra>",
            ),
            1,
            1,
        )


def segments(trades: pl.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """One horizontal segment per trade, from fill to exit at its level, separated by gaps."""
    n = trades.height
    x = np.empty(3 * n, dtype="datetime64[ms]")
    y = np.full(3 * n, np.nan)
    x[0::3], x[1::3] = to_datetimes(trades["fill_time"]), to_datetimes(trades["exit_time"])
    x[2::3] = x[1::3]
    y[0::3] = y[1::3] = trades[column].to_numpy()
    return x, y


def equity_rows(fig: Any, equity: pl.DataFrame, first_row: int, max_points: int = 0) -> None:
    """Add the equity line and the drawdown area from ``first_row`` of ``fig``, thinned to their
    extremes when ``max_points`` is set."""
    import plotly.graph_objects as go

    keep = extremes(equity["equity"].to_numpy(), max_points)
    keep = np.union1d(keep, extremes(equity["drawdown_pct"].to_numpy(), max_points))
    equity = equity[keep] if keep.shape[0] < equity.height else equity
    x = to_datetimes(equity["open_time"])
    fig.add_trace(
        go.Scatter(x=x, y=equity["equity"], mode="lines", name="equity", line={"color": "#1f77b4"}),
        first_row,
        1,
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=-equity["drawdown_pct"],
            mode="lines",
            name="drawdown",
            fill="tozeroy",
            line={"color": "#d62728"},
        ),
        first_row + 1,
        1,
    )


def coarser_candles(klines: pl.DataFrame | None, max_points: int) -> pl.DataFrame | None:
    """At most ``max_points`` candles: runs of ``ceil(n / max_points)`` candles merged into one
    (first open, highest high, lowest low, last close); ``max_points <= 0`` keeps them all.

    Example:
        >>> k = pl.DataFrame({"open_time": [0, 1, 2, 3], "open": [1.0, 2.0, 3.0, 4.0],
        ...                   "high": [2.0, 5.0, 4.0, 6.0], "low": [0.5, 1.0, 2.0, 3.0],
        ...                   "close": [2.0, 3.0, 4.0, 5.0]})
        >>> coarser_candles(k, 2).rows()
        [(0, 1.0, 5.0, 0.5, 3.0), (2, 3.0, 6.0, 2.0, 5.0)]
    """
    if klines is None or max_points <= 0 or klines.height <= max_points:
        return klines
    step = -(-klines.height // max_points)
    return (
        klines.with_row_index("_row")
        .group_by(pl.col("_row") // step, maintain_order=True)
        .agg(
            pl.col("open_time").first(),
            pl.col("open").first(),
            pl.col("high").max(),
            pl.col("low").min(),
            pl.col("close").last(),
            *([pl.col("volume").sum()] if "volume" in klines.columns else []),
        )
        .drop("_row")
    )


def extremes(values: np.ndarray, max_points: int) -> np.ndarray:
    """Row indices that keep a line's shape in at most about ``max_points`` points: the first and
    last row, and each bucket's lowest and highest; every row when it is short enough.

    Example:
        >>> extremes(np.array([1.0, 5.0, 2.0, 0.0, 3.0, 4.0]), 4).tolist()
        [0, 1, 3, 5]
    """
    n = values.shape[0]
    if max_points <= 0 or n <= max_points:
        return np.arange(n)
    buckets = max(1, max_points // 2)
    step = -(-n // buckets)
    pad = step * buckets - n
    v = np.concatenate([values, np.full(pad, values[-1])]).reshape(buckets, step)
    base = np.arange(buckets) * step
    rows = np.concatenate([[0, n - 1], base + v.argmin(axis=1), base + v.argmax(axis=1)])
    return np.unique(np.minimum(rows, n - 1))
