"""The HTML report of a sweep: the top combinations, the heatmap of two parameters, the robustness
of the best cell and how far it can be trusted (PBO, deflated Sharpe, bootstrap intervals).

It reads a :class:`~svc_engine.research.results.SweepResult` only through its methods, so
``SweepResult.report`` can call it without an import circle.

Example:
    >>> import polars as pl
    >>> from svc_engine.research.results import SweepResult
    >>> rows = pl.DataFrame({"combo": [0], "n": [5], "coin": ["A"], "timeframe": ["1h"], "s": [1.0]})
    >>> page = report_html(SweepResult(rows, ["n"], rows.select("combo", "n")), {"by": "s"})
    >>> page.startswith("<!DOCTYPE html>"), "<table>" in page
    (True, True)
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

import polars as pl

_STYLE = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc}"


def _table(frame: pl.DataFrame, digits: int = 4) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.iter_rows():
        cells = []
        for v in row:
            text = f"{v:.{digits}g}" if isinstance(v, float) else ("" if v is None else str(v))
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def report_html(result: Any, report: Mapping[str, Any], *, title: str = "sweep") -> str:
    """A standalone page: the top combinations by ``report["by"]``, the heatmap of the two
    ``report["heatmap"]`` parameters (default: the first two) and the robustness of the best cell.

    Example:
        >>> from svc_engine.research.results import SweepResult
        >>> rows = pl.DataFrame({"combo": [0], "n": [5], "coin": ["A"], "timeframe": ["1h"], "s": [1.0]})
        >>> "<table>" in report_html(SweepResult(rows, ["n"], rows.select("combo", "n")), {"by": "s"})
        True
    """
    by = report.get("by", "sharpe_ratio")
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{result.rows.height} rows: {result.combos.height} combinations x "
        f"{result.rows['coin'].n_unique()} coins x {result.rows['timeframe'].n_unique()} timeframes</p>",
        f"<h2>Top {int(report.get('top', 20))} by {html.escape(by)} (mean over coins)</h2>",
        _table(result.top(int(report.get("top", 20)), by)),
    ]
    pair = report.get("heatmap") or result.params[:2]
    if len(pair) == 2 and len(result.params) >= 2:
        fig = result.plot_heatmap(pair[0], pair[1], by)
        js = report.get("plotlyjs", True)
        parts += ["<h2>Heatmap</h2>", fig.to_html(full_html=False, include_plotlyjs=js)]
    try:
        rob = result.robustness(by)
        text = html.escape(json.dumps(rob, indent=1, default=str))
        parts += ["<h2>Robustness of the best cell</h2>", f"<pre>{text}</pre>"]
    except ValueError as error:
        parts += [f"<p>robustness: {html.escape(str(error))}</p>"]
    parts += _trust_section(result, by, report)
    head = f"<meta charset='utf-8'><title>{html.escape(title)}</title><style>{_STYLE}</style>"
    return f"<!DOCTYPE html><html><head>{head}</head><body>{''.join(parts)}</body></html>"


def _trust_section(result: Any, by: str, report: Mapping[str, Any]) -> list[str]:
    """PBO with its logit histogram, the deflated Sharpe of the top cells and the best cell's
    bootstrap intervals, in plain words; a sweep without block moments says so."""
    if result.moments is None or result.combos.height < 2:
        return ["<p>overfitting: needs a sweep of two or more combinations with block moments</p>"]
    p = result.pbo()
    out = [
        "<h2>How far the best cell can be trusted</h2>",
        f"<p>Probability of backtest overfitting (CSCV, {p.blocks} blocks, {p.combinations:,} splits of"
        f" {p.cells:,} cells): <b>{p.pbo:.0%}</b>. In {p.pbo:.0%} of the splits the best cell in sample"
        f" ranked at or below the median out of sample; {p.prob_oos_loss:.0%} of the picks lost out of"
        f" sample; out-of-sample Sharpe falls by {-p.slope:.2f} per unit of in-sample Sharpe.</p>",
        "<h3>Logit of the pick's out-of-sample rank</h3>",
        _table(p.histogram(20)),
    ]
    d = result.deflated(int(report.get("top", 20)), "sharpe_ratio")
    if d.height:
        best = d.row(0, named=True)
        if best["dsr"] is not None:
            out.append(
                f"<p>The best cell's Sharpe {best['sharpe_ratio']:.2f} has a {best['dsr']:.0%} probability of"
                f" being above 0 after {best['trials']:,} trials ({best['psr']:.0%} as if it were the only"
                " trial).</p>"
            )
        keep = ["combo", *result.params, "sharpe_ratio", "returns", "skew", "kurtosis", "psr", "dsr"]
        out += ["<h3>Deflated Sharpe of the top cells</h3>", _table(d.select(keep))]
    n_boot = int(report.get("bootstrap", 1000))
    if n_boot and result.source is not None:
        ci = result.confidence(1, "sharpe_ratio", n=n_boot, seed=int(report.get("seed", 0)))
        out += [f"<h3>Bootstrap intervals of the best cell (95%, {n_boot:,} resamples)</h3>", _table(ci)]
    return out
