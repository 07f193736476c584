"""A long run's chart stays small: candles merged, equity kept at its extremes, trades exact; the
plotly script embedded, from the CDN or from one shared file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import svc_engine as sv
from svc_engine.research.demo import random_walk
from svc_engine.sim.plot import extremes

pytest.importorskip("plotly")


@pytest.fixture(scope="module")
def six_years() -> sv.BacktestResult:
    klines = random_walk(6 * 8766, seed=5, vol=0.004)
    return sv.backtest("RSI(14) crosses above 30", klines, "1h", spread_pct=0.05)


def test_a_six_year_hourly_chart_is_a_small_page(six_years, tmp_path: Path) -> None:
    fig = six_years.plot(tmp_path / "cdn.html", plotlyjs="cdn")
    candles = next(t for t in fig.data if t.name == "candles")
    assert len(candles.x) <= 4_000 and six_years.equity.height > 50_000
    entries = next(t for t in fig.data if t.name == "entries")
    assert len(entries.x) == six_years.trades.height  # every trade drawn
    assert (tmp_path / "cdn.html").stat().st_size < 1_500_000
    six_years.plot(tmp_path / "embedded.html")
    assert (tmp_path / "embedded.html").stat().st_size < 6_000_000  # was 12.5 MB
    six_years.plot(tmp_path / "shared.html", plotlyjs="plotly.min.js")
    assert 'src="plotly.min.js"' in (tmp_path / "shared.html").read_text()


def test_equity_keeps_its_highest_and_lowest_points(six_years) -> None:
    eq = six_years.equity["equity"].to_numpy()
    keep = extremes(eq, 4_000)
    assert keep.shape[0] <= 4_002 and eq[keep].max() == eq.max() and eq[keep].min() == eq.min()
    assert keep[0] == 0 and keep[-1] == eq.shape[0] - 1 and np.all(np.diff(keep) > 0)


def test_full_range_result_plots(tmp_path: Path) -> None:
    frames = {"A": random_walk(500, seed=1), "B": random_walk(500, seed=2)}
    results = {c: sv.backtest("RSI(14) crosses above 30", k, "1h", spread_pct=0) for c, k in frames.items()}
    fig = sv.FullRangeResult(results=results, timeframe="1h").plot(tmp_path / "fr.html", plotlyjs="cdn")
    assert list(fig.data[0].x) == ["A", "B"] and (tmp_path / "fr.html").exists()
