"""plot_trend_signal writes a chart of the right size for a real break."""

from __future__ import annotations

import struct
from pathlib import Path

import polars as pl

from svc_engine.trend import detect_trends
from svc_engine.trend.plot import plot_trend_signal


def test_chart_of_a_real_break(tmp_path: Path, shared_datasets: Path) -> None:
    k = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-4h.parquet").tail(600)
    signals = detect_trends(k, symbol="BTCUSDT", timeframe="4h")
    sell = signals.filter(pl.col("way") == "SELL").row(0, named=True)
    out = plot_trend_signal(k, sell, tmp_path / "charts" / "sell.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1000, 500)
    assert 10_000 < len(data) < 200_000
    svg = plot_trend_signal(k, sell, tmp_path / "sell.svg", title="a title").read_text()
    assert "a title" in svg


def test_committed_readme_chart_is_small() -> None:
    png = Path(__file__).resolve().parents[3] / "docs" / "img" / "trend_break.png"
    assert png.stat().st_size < 200_000
