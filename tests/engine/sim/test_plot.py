"""Charts of results: the traces each kind of result gets, and the standalone HTML page."""

from __future__ import annotations

import base64
import gzip
import pickle
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import svc_engine.sim as sim
from svc_engine.sim.drivers import FullRangeResult
from svc_engine.sim.page import page_json, unpack8
from svc_engine.sim.plot import plot_result

pytest.importorskip("plotly")


@pytest.fixture(scope="module")
def klines(shared_datasets: Path) -> pl.DataFrame:
    return pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet").head(400)


@pytest.fixture(scope="module")
def result(klines: pl.DataFrame) -> sim.BacktestResult:
    signals = klines.filter(pl.col("close") > pl.col("open") * 1.01).select(
        "open_time",
        side=pl.lit("long"),
        limit_price=pl.lit(None, pl.Float64),
        tp_price=pl.col("close") * 1.03,
        sl_price=pl.col("close") * 0.98,
    )
    out = sim.simulate(klines, signals, timeframe="1h", symbol="ETHUSDT", spread_pct=0.0)
    assert out.trades.height >= 5
    return out


def test_single_result_has_candles_trades_levels_equity_and_drawdown(
    result: sim.BacktestResult, klines: pl.DataFrame
) -> None:
    fig = plot_result(result, klines)
    names = [t.name for t in fig.data]
    assert names == [
        "candles",
        "entries",
        "exits",
        "take-profit",
        "stop-loss",
        "volume",
        "winning trades",
        "losing trades",
        "equity",
        "drawdown",
        "statistics",
    ]
    traces = {t.name: t for t in fig.data}
    n = result.trades.height
    assert len(traces["candles"].x) == 400
    assert list(traces["entries"].y) == result.trades["entry_price"].to_list()
    assert list(traces["exits"].customdata) == result.trades["exit_reason"].to_list()
    tp = np.asarray(traces["take-profit"].y, dtype=float)
    assert len(tp) == 3 * n and np.isnan(tp[2::3]).all()
    assert tp[0::3].tolist() == result.trades["tp_price"].to_list()
    assert list(traces["equity"].y) == result.equity["equity"].to_list()
    assert list(traces["drawdown"].y) == (-result.equity["drawdown_pct"]).to_list()
    assert (traces["equity"].yaxis, traces["drawdown"].yaxis, traces["entries"].yaxis) == ("y3", "y4", "y")


def test_a_report_shows_volume_trades_by_profit_the_strategy_lines_statistics_and_words(
    klines: pl.DataFrame,
) -> None:
    # Issue 29: what a quant looks for on one page.
    from svc_engine import backtest
    from svc_engine.strategy import compile_strategy

    strategy = compile_strategy(
        "SMA(10) crosses above SMA(30) and close is below the upper Bollinger band", "3%", "2%"
    )
    run = backtest(strategy, klines, "1h")
    fig = plot_result(run, klines, strategy=strategy)
    traces = {t.name: t for t in fig.data}
    assert {"SMA(10)", "SMA(30)", "upper Bollinger band(20, 2)"} <= set(traces)
    sma = klines["close"].rolling_mean(10).to_numpy()
    assert np.allclose(np.asarray(traces["SMA(10)"].y, float)[9:], sma[9:])  # the line the rule reads
    assert list(traces["volume"].y) == klines["volume"].to_list() and traces["volume"].yaxis == "y2"
    trades = run.trades
    wins = trades.filter(pl.col("pnl") > 0)
    won = traces["winning trades"]
    assert won.line.color == "#2ca02c" and traces["losing trades"].line.color == "#d62728"
    assert np.asarray(won.y, float)[0::3].tolist() == wins["entry_price"].to_list()
    assert np.asarray(won.y, float)[1::3].tolist() == wins["exit_price"].to_list()
    first = wins.row(0, named=True)
    assert (
        won.text[0] == f"long {first['exit_reason']}: P&L {first['pnl']:+.2f} ({first['return_pct']:+.2f} %)"
    )
    table = traces["statistics"]
    labels = list(table.cells.values[0]) + list(table.cells.values[2])
    values = list(table.cells.values[1]) + list(table.cells.values[3])
    assert values[labels.index("total return %")] == f"{run.summary['total_return_pct']:.2f}"
    assert values[labels.index("trades")] == str(run.summary["total_trades"])
    assert strategy.describe() in fig.layout.title.text


def test_a_backtest_result_plots_its_own_strategy_without_being_told(klines: pl.DataFrame) -> None:
    from svc_engine import backtest
    from svc_engine.strategy import compile_strategy

    run = backtest(compile_strategy("SMA(10) crosses above SMA(30)", "3%", "2%"), klines, "1h")
    fig = run.plot()
    assert {"SMA(10)", "SMA(30)"} <= {t.name for t in fig.data}
    words = "long when SMA(10) crosses above SMA(30); take profit 3% above entry; stop loss 2% below entry"
    assert fig.layout.title.text.endswith(f"<br><sup>{words}</sup>")
    assert pickle.loads(pickle.dumps(run)).strategy == run.strategy  # it travels with the result
    plain = run.plot(strategy=None)  # asked for none: none drawn
    assert "SMA(10)" not in {t.name for t in plain.data}


def test_without_klines_there_is_no_candle_trace(result: sim.BacktestResult) -> None:
    assert next(t.name for t in plot_result(result).data) == "entries"


def test_html_path_writes_a_standalone_page(result: sim.BacktestResult, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    plot_result(result, None, page)
    text = page.read_bytes()
    assert text.startswith(b"<!doctype html>") and text.rstrip().endswith(b"</html>")
    assert b"<script src=" not in text and 1_400_000 < len(text) < 1_700_000  # plotly.js packed in
    figure = page_json(page)
    assert [t["name"] for t in figure["data"]] == [t.name for t in plot_result(result).data]
    # times go as Unix ms in plotly's binary arrays, on axes typed date
    entries = next(t for t in figure["data"] if t["name"] == "entries")
    assert entries["x"]["dtype"] == "f8"
    ms = np.frombuffer(base64.b64decode(entries["x"]["bdata"]), "<f8")
    assert ms.tolist() == result.trades["fill_time"].cast(pl.Int64).cast(pl.Float64).to_list()
    assert figure["layout"]["xaxis"]["type"] == "date" and figure["layout"]["xaxis4"]["type"] == "date"


def test_the_packed_page_script_is_plotly_js_byte_for_byte(
    result: sim.BacktestResult, tmp_path: Path
) -> None:
    import plotly

    page = tmp_path / "report.html"
    plot_result(result, None, page)
    text = page.read_bytes()
    start = text.index(b">", text.index(b'id="svc-plotlyjs"')) + 1
    script = gzip.decompress(unpack8(text[start : text.index(b"</script>", start)]))
    assert script == (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    # none of the bytes the HTML parser would change is left in the packed text
    packed = text[start : text.index(b"</script>", start)]
    assert b"\x00" not in packed and b"\r" not in packed and b"<" not in packed


def test_cdn_pages_are_plotlys_own(result: sim.BacktestResult, tmp_path: Path) -> None:
    page = tmp_path / "cdn.html"
    plot_result(result, None, page, plotlyjs="cdn")
    assert 'src="https://cdn.plot.ly/plotly-' in page.read_text() and page.stat().st_size < 200_000


def test_a_path_in_place_of_klines_is_the_path_and_result_plot_writes_it(
    result: sim.BacktestResult, tmp_path: Path
) -> None:
    plot_result(result, str(tmp_path / "a.html"))
    assert (tmp_path / "a.html").stat().st_size > 100_000
    fig = result.plot(tmp_path / "b.html")
    assert (tmp_path / "b.html").exists()
    assert [t.name for t in fig.data][-3:] == ["equity", "drawdown", "statistics"]


def test_result_plot_draws_the_candles_of_its_own_run(
    result: sim.BacktestResult, klines: pl.DataFrame
) -> None:
    fig = result.plot()
    candles = next(t for t in fig.data if t.name == "candles")
    assert len(candles.x) == 400
    assert list(candles.close) == klines["close"].to_list()


def test_a_range_run_plots_only_the_candles_of_its_range(klines: pl.DataFrame) -> None:
    times = klines["open_time"]
    run = sim.simulate(
        klines,
        klines.head(0).select(
            "open_time",
            side=pl.lit("long"),
            limit_price=pl.lit(None, pl.Float64),
            tp_price=pl.lit(1.0),
            sl_price=pl.lit(1.0),
        ),
        timeframe="1h",
        start_ts=times[100] // 1000,
        end_ts=times[199] // 1000,
        spread_pct=0,
    )
    candles = next(t for t in run.plot().data if t.name == "candles")
    assert len(candles.x) == 100


def test_portfolio_gets_equity_and_drawdown(klines: pl.DataFrame) -> None:
    signals = klines.filter(pl.col("close") > pl.col("open") * 1.01).select(
        "open_time",
        side=pl.lit("long"),
        limit_price=pl.lit(None, pl.Float64),
        tp_price=pl.col("close") * 1.03,
        sl_price=pl.col("close") * 0.98,
    )
    later = klines.slice(50)
    b_signals = signals.filter(pl.col("open_time") >= later["open_time"][0])
    result = sim.simulate_portfolio({"A": klines, "B": later}, {"A": signals, "B": b_signals})
    fig = plot_result(result)
    assert [t.name for t in fig.data] == ["equity", "drawdown"]
    assert fig.layout.title.text == "portfolio of 2 coins, divide 2"


def test_full_range_gets_one_bar_per_coin(result: sim.BacktestResult) -> None:
    both = FullRangeResult(results={"ETHUSDT": result, "COPY": result}, timeframe="1h")
    fig = plot_result(both)
    assert list(fig.data[0].x) == ["ETHUSDT", "COPY"]
    assert list(fig.data[0].y) == [result.summary["total_return_pct"]] * 2


def test_something_else_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot plot dict: want a BacktestResult"):
        plot_result({})


def test_a_pickled_result_leaves_its_candles_behind(result: sim.BacktestResult) -> None:
    # results come back from Ray workers by pickling: no candles on the way
    copy = pickle.loads(pickle.dumps(result))
    assert result.klines is not None and copy.klines is None
    assert copy.summary == result.summary and copy.trades.equals(result.trades)
    assert copy.to_dict() == result.to_dict()
