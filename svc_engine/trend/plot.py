"""A static chart of one trend signal: its 200-candle snapshot, the pivots, the lines, the break.

matplotlib is imported when a chart is drawn (it is an optional dependency, ``svc[plot]``) and used
through its object API on the Agg canvas, so no global backend or pyplot state is touched.

Example:
    >>> CHART_SIZE
    (10.0, 5.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from svc_engine.trend.params import TrendParams
from svc_engine.trend.payloads import signal_to_api
from svc_engine.trend.pivots import pivot_flags_nb
from svc_engine.trend.signals import kline_arrays

CHART_SIZE = (10.0, 5.0)
"""Width and height of the chart in inches (at 100 dpi)."""
_UP, _DOWN, _RES, _SUP = "#26a69a", "#ef5350", "#d81b60", "#1e88e5"


def plot_trend_signal(
    klines: pl.DataFrame,
    row: Mapping[str, Any] | pl.DataFrame,
    path: str | Path,
    *,
    title: str | None = None,
    dpi: int = 100,
    **params: object,
) -> Path:
    """Draw one ``detect_trends`` row on its snapshot and write it to ``path`` (PNG, SVG, ... by suffix).

    ``params`` are the detector's (for the pivots drawn). Returns the path written.

    Example:
        >>> import numpy as np, tempfile
        >>> from svc_engine.trend import detect_trends
        >>> high = np.r_[np.linspace(20, 10, 40), [30.0]]
        >>> high[[12, 25]] += 5
        >>> k = pl.DataFrame({"open_time": np.arange(41) * 60_000, "open": high - 0.5, "high": high,
        ...                   "low": high - 1, "close": high - 0.5, "volume": np.ones(41)})
        >>> plot_trend_signal(k, detect_trends(k), tempfile.mkdtemp() + "/b.png").stat().st_size > 0
        True
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    p = TrendParams.from_kwargs(**params)
    api = signal_to_api(row, klines)
    snap = np.asarray(api["klines_data"], dtype=float)
    fig = Figure(figsize=CHART_SIZE, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    _candles(ax, snap)
    _pivots(ax, klines, snap, p)
    for name, colour in (("high_trend", _RES), ("low_trend", _SUP)):
        if name in api["trend_data"]:
            _line(ax, api["trend_data"][name], len(snap) - 1, colour, name.replace("_", " "))
    _marker(ax, snap, api)
    _axes(ax, snap, title or _title(api))
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    return out


def _candles(ax: Any, snap: np.ndarray) -> None:
    x = np.arange(len(snap))
    o, h, lo, c = snap[:, 1], snap[:, 2], snap[:, 3], snap[:, 4]
    colours = np.where(c >= o, _UP, _DOWN)
    ax.vlines(x, lo, h, colors=colours, linewidth=0.7)
    body = np.maximum(np.abs(c - o), (h.max() - lo.min()) * 0.002)
    ax.bar(x, body, bottom=np.minimum(o, c), width=0.7, color=colours, linewidth=0)


def _pivots(ax: Any, klines: pl.DataFrame, snap: np.ndarray, p: TrendParams) -> None:
    # Pivots near the snapshot's left edge need the candles before it; those after the signal candle
    # are not read, so only pivots confirmed by then are drawn.
    arr = kline_arrays(klines)
    end = int(np.searchsorted(arr["open_time"], snap[-1, 0]))
    lo = max(0, end - len(snap) + 1 - p.left)
    flags = pivot_flags_nb(arr["high"][lo : end + 1], arr["low"][lo : end + 1], p.left, p.right)
    flags = flags[:, flags.shape[1] - len(snap) :]
    for side, column, marker, colour in ((0, 2, "v", _RES), (1, 3, "^", _SUP)):
        idx = np.flatnonzero(flags[side])
        offset = (snap[:, 2].max() - snap[:, 3].min()) * (0.015 if side == 0 else -0.015)
        ax.scatter(
            idx,
            snap[idx, column] + offset,
            marker=marker,
            s=14,
            color=colour,
            alpha=0.55,
            label="pivot highs" if side == 0 else "pivot lows",
            zorder=3,
        )


def _line(ax: Any, anchors: list[list[float]], end: int, colour: str, label: str) -> None:
    (_, i1, y1), (_, i2, y2) = anchors
    slope = (y2 - y1) / (i2 - i1)
    ax.plot([i1, end], [y1, y1 + slope * (end - i1)], color=colour, linewidth=1.4, label=label, zorder=4)
    ax.scatter([i1, i2], [y1, y2], s=40, facecolors="none", edgecolors=colour, linewidths=1.5, zorder=5)


def _marker(ax: Any, snap: np.ndarray, api: dict[str, Any]) -> None:
    end = len(snap) - 1
    buy = api["way"] == "BUY"
    kind = "return to trend" if api["is_return_to_trend"] else "break"
    ax.annotate(
        f"{api['way']} {kind}",
        xy=(end, snap[end, 4]),
        xytext=(-70, 40 if buy else -40),
        textcoords="offset points",
        arrowprops={"arrowstyle": "->", "color": "black"},
        fontsize=9,
        ha="center",
    )
    ax.scatter(
        [end], [snap[end, 4]], marker="*", s=140, color=_UP if buy else _DOWN, edgecolors="black", zorder=6
    )


def _axes(ax: Any, snap: np.ndarray, title: str) -> None:
    ticks = np.linspace(0, len(snap) - 1, min(6, len(snap))).astype(int)
    ax.set_xticks(ticks)
    ax.set_xticklabels([_date(snap[i, 0]) for i in ticks], fontsize=8)
    ax.set_xlim(-1, len(snap) + 1)
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.25)
    ax.legend(loc="best", fontsize=8)


def _date(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _title(api: dict[str, Any]) -> str:
    when = _date(int(api["timestamp"]) * 1000)
    name = " ".join(x for x in (api["coin_name"], api["graph_type"]) if x)
    return f"{name}  {api['way']} at {when} UTC".strip()
