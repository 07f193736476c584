"""Honest ranges and visible defaults (docs/sim.md, "Ranges, costs and filters"): a range that
misses the data is refused naming both ranges, one partly outside it warns, every result carries
the range each coin covered and the costs and filters that applied, a filter that skipped more than
a quarter of the signals warns; walk-forward windows without an out-of-sample trade are null."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import svc_engine as sv
from svc_engine.research.demo import random_walk
from svc_engine.sim import simulate, simulate_portfolio
from svc_engine.sim.coverage import FilterWarning, RangeWarning

H = 3_600_000
K = random_walk(500, seed=3).with_columns(pl.Series("open_time", np.arange(500) * H))  # 1h from 1970-01-01
NONE = pl.DataFrame(
    schema={
        "open_time": pl.Int64,
        "side": pl.Utf8,
        "limit_price": pl.Float64,
        "tp_price": pl.Float64,
        "sl_price": pl.Float64,
    }
)


def test_a_range_outside_the_data_is_refused_naming_both_ranges() -> None:
    both = (
        r"selects no candle of the series: asked 1970-02-01 00:00 .. the end UTC, "
        r"the data covers 1970-01-01 00:00 .. 1970-01-21 20:00 UTC"
    )
    with pytest.raises(ValueError, match=both):
        simulate(K, NONE, timeframe="1h", start_ts=31 * 86_400, spread_pct=0)
    with pytest.raises(
        ValueError, match=r"selects no candle of the series; the data covers 1970-01-01 00:00"
    ):
        sv.backtest("close > open", K, "1h", "1971-01-01", "1971-02-01", spread_pct=0)


def test_a_partial_overlap_warns_and_every_result_says_what_it_covered() -> None:
    partly = (
        r"lies only partly in the data of the series \(1970-01-01 00:00 .. 1970-01-21 20:00 UTC\): "
        r"the run covers 1970-01-11 00:00 .. 1970-01-21 20:00"
    )
    with pytest.warns(RangeWarning, match=partly):
        r = sv.backtest("close > open", K, "1h", "1970-01-11", "1970-03-01", spread_pct=0)
    assert r.coverage["start"] == 240 * H and r.coverage["end"] == 500 * H and r.coverage["candles"] == 260
    assert r.coverage["warning"].startswith("the range [864000, 5097600]")
    assert r.to_dict()["coverage"] == r.coverage
    # inside the data: no warning, and the coverage says the range
    with warnings.catch_warnings():
        warnings.simplefilter("error", RangeWarning)
        inside = sv.backtest("close > open", K, "1h", "1970-01-03", "1970-01-05", spread_pct=0)
    assert (inside.coverage["candles"], inside.coverage["warning"]) == (49, None)
    # a stock's range starting on a weekend is no missing coverage: gaps as large are in the data
    stock = K.head(30).with_columns(pl.Series("open_time", [d * 86_400_000 for d in range(30)]))
    stock = stock.filter((pl.col("open_time") // 86_400_000 + 3) % 7 < 5)  # 1970-01-01 was a Thursday
    with warnings.catch_warnings():
        warnings.simplefilter("error", RangeWarning)
        weekend = simulate(stock, NONE, timeframe="1d", start_ts=3 * 86_400, spread_pct=0)  # Sunday the 4th
    assert weekend.coverage["start"] == 4 * 86_400_000


def test_portfolio_full_range_and_sweep_carry_each_coins_range() -> None:
    short = K.tail(200)
    with pytest.warns(RangeWarning, match="the series of B"):
        p = simulate_portfolio({"A": K, "B": short}, {}, timeframe="1h", start_ts=100 * 3600, spread_pct=0)
    assert (p.coverage["A"]["start"], p.coverage["B"]["start"]) == (100 * H, 300 * H)
    assert (
        p.coverage["A"]["warning"] is None and "the run covers 1970-01-13 12:00" in p.coverage["B"]["warning"]
    )
    assert p.to_dict()["coverage"] == p.coverage
    unequal = (
        r"the coins of 1h cover different ranges \(A 1970-01-01 00:00 .. "
        r"1970-01-21 20:00; B 1970-01-13 12:00 .. 1970-01-21 20:00 UTC\)"
    )
    with pytest.warns(RangeWarning, match=unequal):
        res = sv.sweep("close > SMA({n})", {"n": [5, 9]}, {"A": K, "B": short}, "1h", spread_pct=0, blocks=0)
    got = res.rows.select("combo", "coin", "covered_candles").rows()
    assert got == [(0, "A", 500), (0, "B", 200), (1, "A", 500), (1, "B", 200)]
    assert res.rows["covered_from"].dt.epoch("ms").to_list() == [0, 300 * H] * 2


def test_a_result_says_which_costs_and_filters_applied_and_warns_when_the_filter_skipped_many() -> None:
    r = simulate(K, NONE, timeframe="1h", commission_pct=0.1, spread_pct=0.04)
    assert r.applied | {"skipped": None} == {
        "commission_pct": 0.1,
        "spread_pct": 0.04,
        "spread_from": "given",
        "min_candles_between_signals": 4,
        "signal_filter_mode": "clamp",
        "min_profit_pct": 0.1,
        "max_profit_pct": 30.0,
        "min_loss_pct": 0.1,
        "max_loss_pct": 50.0,
        "signals": 0,
        "skipped": None,
        "warning": None,
    }
    tier = simulate(K, NONE, timeframe="1h", symbol="BTCUSDT")
    assert tier.applied["spread_from"] == "volume tier" and tier.applied["spread_pct"] > 0
    # take-profits of 0.05 %, under the 0.1 % minimum, on 3 of 4 signals: a warning names the counts
    t, c = K["open_time"], K["close"]
    rows = [
        (t[n], "long", None, c[n] * (1.0005 if (n // 10) % 4 else 1.02), c[n] * 0.98)
        for n in range(0, 400, 10)
    ]
    sig = pl.DataFrame(
        rows, schema=["open_time", "side", "limit_price", "tp_price", "sl_price"], orient="row"
    )
    many = (
        r"the series: the signal filter \(clamp, take-profit 0.1..30.0%, stop 0.1..50.0%\) "
        r"skipped 30 of 40 signals \(skipped_tp_below_min 30\)"
    )
    with pytest.warns(FilterWarning, match=many):
        r = simulate(K, sig, timeframe="1h", spread_pct=0, min_candles_between_signals=0)
    assert r.applied["skipped"] == {"filter": 30, "invalid": 0, "min_gap": 0}
    assert r.signal_counts["skipped_tp_below_min"] == 30
    with warnings.catch_warnings():  # a quarter or less: no warning
        warnings.simplefilter("error", FilterWarning)
        simulate(
            K,
            sig.head(4).vstack(sig.slice(4, 36).filter(pl.col("tp_price") > pl.col("sl_price") * 1.03)),
            timeframe="1h",
            spread_pct=0,
        )


def test_walk_forward_windows_without_an_out_of_sample_trade_are_null_throughout() -> None:
    k = random_walk(3000, seed=5)
    # the walk stays far below a million: no window trades out of sample
    wf = sv.walk_forward(
        "close crosses above {level}",
        {"level": [1_000_000, 2_000_000]},
        {"X": k},
        "1h",
        in_sample="40d",
        out_of_sample="20d",
        spread_pct=0,
    )
    w = wf.windows
    quiet = w.filter(pl.col("oos_trades") == 0)
    assert quiet.height == w.height >= 1
    assert quiet["oos_value"].null_count() == quiet.height
    assert quiet["oos_return_pct"].null_count() == quiet.height
    assert len(wf.coverage["X"]) == w.height and all(c["candles"] > 0 for c in wf.coverage["X"])


def test_progress_true_writes_plain_lines_where_no_bar_can_be_drawn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from svc_engine.executors import SerialExecutor

    sv.sweep(
        "close > SMA({n})",
        {"n": [3, 4, 5]},
        {"X": K},
        "1h",
        spread_pct=0,
        blocks=0,
        progress=True,
        chunk_combos=1,
        executor=SerialExecutor(),
    )
    lines = capsys.readouterr().err.splitlines()
    assert (
        lines[0] == "sweep: 1/3 chunks (33%), X 1h #0-0"
        and lines[-1] == "sweep: 3/3 chunks (100%), X 1h #2-2"
    )
    assert np.all([line.startswith("sweep: ") for line in lines])


@pytest.mark.slow
def test_progress_true_shows_in_a_notebook(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    code = (
        "import svc_engine as sv\n"
        "from svc_engine.research.demo import random_walk\n"
        "from svc_engine.executors import SerialExecutor\n"
        'sv.sweep("close > SMA({n})", {"n": [3, 4]}, {"X": random_walk(300, seed=1)}, "1h", spread_pct=0,\n'
        "         blocks=0, progress=True, chunk_combos=1, executor=SerialExecutor())\n"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3").execute(cwd=str(tmp_path))
    shown = "".join(o.get("text", "") for o in notebook.cells[0].outputs if o.get("output_type") == "stream")
    assert "sweep: 1/2 chunks (50%), X 1h #0-0\nsweep: 2/2 chunks (100%), X 1h #1-1\n" in shown
