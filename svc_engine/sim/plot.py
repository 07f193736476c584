"""Charts of a result with plotly (the optional ``plot`` extra): trades on candles, equity, drawdown.

A single-coin result gives five rows: candles (when given) with entries, exits, each trade's
take-profit and stop-loss levels, each trade from fill to exit coloured by its profit and the
strategy's own price lines (``strategy=``); volume; equity; drawdown; a statistics table. A
portfolio gives equity and drawdown; a full range gives the total return of each coin. ``path``
ending in ``.html`` writes a standalone page. The rows below the candles and the thinning to
``max_points`` live in `svc_engine.sim.plot_parts`.

Example:
    >>> import polars as pl, svc_engine.sim as sim
    >>> k = pl.DataFrame({"open_time": [0, 3_600_000], "open": [1.0, 1.0], "high": [1.1, 1.1],
    ...                   "low": [0.9, 0.9], "close": [1.0, 1.0], "volume": [1.0, 1.0]})
    >>> s = pl.DataFrame({"open_time": [0], "side": ["long"], "limit_price": [None],
    ...                   "tp_price": [1.05], "sl_price": [0.95]})
    >>> fig = plot_result(sim.simulate(k, s, spread_pct=0), k)
    >>> [t.name for t in fig.data]  # doctest: +NORMALIZE_WHITESPACE
    ['candles', 'entries', 'exits', 'take-profit', 'stop-loss', 'volume', 'losing trades', 'equity',
     'drawdown', 'statistics']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.times import with_time
from svc_engine.sim.plot_parts import (  # noqa: F401  (STATS, stats_rows, extremes: imported from here)
    STATS,
    coarser_candles,
    equity_rows,
    extremes,
    segments,
    stats_rows,
    stats_table,
    to_datetimes,
    trade_lines,
    volume_row,
)

#: Points per line a chart keeps by default (candles merged, equity at its extremes).
MAX_POINTS = 4_000

EXIT_COLORS = {
    "tp": "#2ca02c",
    "tp_gap": "#2ca02c",
    "sl": "#d62728",
    "sl_gap": "#d62728",
    "liquidation": "#7f0000",
    "end": "#7f7f7f",
}


def plot_result(
    result: Any,
    klines: pl.DataFrame | str | os.PathLike[str] | None = None,
    path: str | os.PathLike[str] | None = None,
    *,
    plotlyjs: str | bool = True,
    max_points: int = MAX_POINTS,
    strategy: Any = None,
) -> Any:
    """A plotly figure of ``result``; written to ``path`` (``.html``: standalone page) when given.

    With the candles, a single-coin result also gets a volume panel and each trade drawn from its
    fill to its exit, green when it made money and red when it lost, its P&L on hover; ``strategy``
    (the compiled program the run used) adds its own price lines (the SMAs of an SMA cross, the
    bands of a Bollinger rule) and puts its words in the title.

    ``klines`` (the candles the result ran on) adds the candle panel of a single-coin result; a
    path in its place is taken as ``path``, so ``plot_result(result, "report.html")`` works too.
    Long series are drawn with at most ``max_points`` points per line: candles merged into
    coarser ones, equity and drawdown kept at each bucket's low and high (trades stay exact), so
    a six-year hourly run is a page of a few hundred kB. ``plotlyjs``: ``True`` writes
    one page that works offline with plotly.js and the figure gzipped inside (1.5 MB plus the
    figure, under 2 MB for six years of hourly candles; ``svc_engine.sim.page``); ``"cdn"``
    (plotly's own page) loads the script from the CDN, a path ending in ``.js`` one shared file.

    Example:
        >>> plot_result(object())
        Traceback (most recent call last):
        ...
        TypeError: cannot plot object: want a BacktestResult, PortfolioResult or FullRangeResult
    """
    if isinstance(klines, str | os.PathLike):
        klines, path = None, klines
    fig = _figure(result, klines, max_points, strategy)
    if path is not None:
        _write(fig, Path(path), plotlyjs)
    return fig


def _figure(result: Any, klines: pl.DataFrame | None, max_points: int = 0, strategy: Any = None) -> Any:
    if hasattr(result, "results"):
        return _full_range_figure(result)
    if not hasattr(result, "equity") or not hasattr(result, "trades"):
        raise TypeError(
            f"cannot plot {type(result).__name__}: want a BacktestResult, PortfolioResult or FullRangeResult"
        )
    portfolio = hasattr(result, "coin_results")
    panel = not portfolio
    fig = _rows(panel)
    if panel:
        clipped = _clip(klines, result.equity)
        coarse = coarser_candles(clipped, max_points)
        _trades_panel(fig, result.trades, coarse)
        if clipped is not None and strategy is not None:
            _indicator_lines(fig, strategy, clipped, coarse)
        if coarse is not None and "volume" in coarse.columns:
            volume_row(fig, coarse)
        trade_lines(fig, result.trades)
    equity_rows(fig, result.equity, first_row=3 if panel else 1, max_points=max_points)
    if panel:
        stats_table(fig, result.summary, row=5)
    title = f"portfolio of {len(result.coins)} coins, divide {result.divide}" if portfolio else _name(result)
    if strategy is not None and hasattr(strategy, "describe"):
        title = f"{title}<br><sup>{strategy.describe()}</sup>"
    fig.update_layout(title=title, xaxis_rangeslider_visible=False, height=1100 if panel else 550)
    return fig


def _name(result: Any) -> str:
    bits = [getattr(result, "symbol", None), getattr(result, "timeframe", None)]
    ret = result.summary.get("total_return_pct")
    label = " ".join(b for b in bits if b) or "backtest"
    return f"{label}: {ret:+.2f} %" if isinstance(ret, int | float) else label


def _rows(panel: bool) -> Any:
    from plotly.subplots import make_subplots

    if panel:
        return make_subplots(
            rows=5,
            cols=1,
            shared_xaxes=True,
            row_heights=[0.42, 0.1, 0.19, 0.12, 0.17],
            vertical_spacing=0.03,
            specs=[[{}], [{}], [{}], [{}], [{"type": "table"}]],
            subplot_titles=("trades", "volume", "equity", "drawdown %", "statistics"),
        )
    return make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.7, 0.3],
        vertical_spacing=0.05,
        subplot_titles=("equity", "drawdown %"),
    )


def _clip(klines: pl.DataFrame | None, equity: pl.DataFrame) -> pl.DataFrame | None:
    if klines is None or equity.height == 0:
        return klines
    span = equity["open_time"]
    return with_time(klines).filter(pl.col("open_time").is_between(span[0], span[-1]))


def _trades_panel(fig: Any, trades: pl.DataFrame, klines: pl.DataFrame | None) -> None:
    import plotly.graph_objects as go

    if klines is not None:
        fig.add_trace(
            go.Candlestick(
                x=to_datetimes(klines["open_time"]),
                open=klines["open"],
                high=klines["high"],
                low=klines["low"],
                close=klines["close"],
                name="candles",
            ),
            1,
            1,
        )
    long = (trades["side"] == "long").to_numpy()
    fig.add_trace(
        go.Scatter(
            x=to_datetimes(trades["fill_time"]),
            y=trades["entry_price"],
            mode="markers",
            name="entries",
            marker={
                "symbol": np.where(long, "triangle-up", "triangle-down"),
                "size": 10,
                "color": np.where(long, "#1f77b4", "#9467bd"),
            },
            customdata=trades["side"],
            hovertemplate="%{customdata} entry %{y}<extra></extra>",
        ),
        1,
        1,
    )
    reasons = trades["exit_reason"].to_list()
    fig.add_trace(
        go.Scatter(
            x=to_datetimes(trades["exit_time"]),
            y=trades["exit_price"],
            mode="markers",
            name="exits",
            marker={"symbol": "x", "size": 9, "color": [EXIT_COLORS.get(r, "#000000") for r in reasons]},
            customdata=reasons,
            hovertemplate="exit (%{customdata}) %{y}<extra></extra>",
        ),
        1,
        1,
    )
    for column, name, color in (("tp_price", "take-profit", "#2ca02c"), ("sl_price", "stop-loss", "#d62728")):
        x, y = segments(trades, column)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=name,
                connectgaps=False,
                line={"color": color, "width": 1, "dash": "dot"},
            ),
            1,
            1,
        )


#: Indicator lines drawn on the price panel: those on the price's own scale.
PRICE_LINES = {
    "sma",
    "ema",
    "wma",
    "dema",
    "tema",
    "hma",
    "vwap",
    "bb",
    "keltner",
    "donchian",
    "sar",
    "supertrend",
    "ichimoku",
    "max",
    "min",
}


def _price_lines(strategy: Any) -> list[Any]:
    """The price-scale indicators of a program's entry, exit and levels, each once."""
    from svc_engine.strategy import ast as A

    found: dict[Any, None] = {}
    roots = [getattr(strategy, k, None) for k in ("entry", "exit", "entry_price", "tp", "sl")]
    for root in roots:
        for node in root.walk() if isinstance(root, A.Node) else ():
            if not (isinstance(node, A.Ind) and node.name in PRICE_LINES):
                continue
            if node.source is not None and not (
                isinstance(node.source, A.Field) and node.source.name != "volume"
            ):
                continue
            if node.name == "bb" and node.output not in ("upper", "middle", "lower"):
                continue
            if node.name == "supertrend" and node.output != "line":
                continue
            found[node] = None
    return list(found)


def _indicator_lines(fig: Any, strategy: Any, klines: pl.DataFrame, coarse: pl.DataFrame | None) -> None:
    """Each price line of the program over the candles drawn (its value at each drawn candle's last
    underlying candle, so a merged candle shows where the line ended)."""
    import plotly.graph_objects as go

    from svc_engine.strategy.compiler import Context
    from svc_engine.strategy.wording import render

    nodes = _price_lines(strategy)
    if not nodes:
        return
    ctx = Context(klines)
    step = 1 if coarse is None or coarse.height == klines.height else -(-klines.height // coarse.height)
    last = np.minimum(np.arange(step - 1, step * (klines.height // step + 1), step), klines.height - 1)
    last = last[: (coarse.height if coarse is not None else klines.height)]
    x = to_datetimes(klines["open_time"].to_numpy()[last - (step - 1) if step > 1 else last])
    for node in nodes:
        values = np.asarray(ctx.values(node), dtype=float)[last]
        fig.add_trace(go.Scatter(x=x, y=values, mode="lines", name=render(node), line={"width": 1}), 1, 1)


def _full_range_figure(result: Any) -> Any:
    import plotly.graph_objects as go

    coins = list(result.results)
    returns = [float(result.results[c].summary["total_return_pct"]) for c in coins]
    fig = go.Figure(
        go.Bar(
            x=coins,
            y=returns,
            name="total return %",
            marker_color=["#2ca02c" if r > 0 else "#d62728" for r in returns],
        )
    )
    fig.update_layout(
        title=f"full range: total return per coin ({result.timeframe or ''})", yaxis_title="total return %"
    )
    return fig


def _write(fig: Any, path: Path, plotlyjs: str | bool = True) -> None:
    if path.suffix.lower() in {".html", ".htm"} and plotlyjs is True:
        from svc_engine.sim.page import write_page

        write_page(fig, path)
    elif path.suffix.lower() in {".html", ".htm"}:
        fig.write_html(path, include_plotlyjs=plotlyjs, full_html=True)
    else:  # an image format: needs kaleido, which plotly names in its error
        fig.write_image(path)
