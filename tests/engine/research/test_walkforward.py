"""Walk-forward: window layout, choices by the in-sample best, stitched out-of-sample equity, and
the proof that no out-of-sample candle influences a choice."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import svc_engine as sv
from svc_engine.executors import SerialExecutor
from svc_engine.research import sweep, walk_forward
from svc_engine.research.demo import random_walk
from svc_engine.research.walkforward import plan_windows

STRATEGY = {"entry": "RSI({n}) crosses above {level}", "tp": "{tp}%", "sl": "2%"}
GRID = {"n": [7, 14, 21], "level": [30, 40], "tp": [2, 4]}
SETTINGS = {"spread_pct": 0.05, "min_candles_between_signals": 2}
H = 3_600_000


@pytest.fixture(scope="module")
def klines() -> pl.DataFrame:
    return random_walk(2_400, seed=21)


@pytest.fixture(scope="module")
def wf(klines):
    return walk_forward(
        STRATEGY,
        GRID,
        {"X": klines},
        "1h",
        in_sample=800,
        out_of_sample=400,
        by="total_return_pct",
        executor=SerialExecutor(),
        **SETTINGS,
    )


def test_rolling_and_anchored_windows_in_candles_and_time() -> None:
    t = np.arange(20) * H
    assert plan_windows(t, 8, 4, H) == [(0, 7, 8, 11), (4, 11, 12, 15), (8, 15, 16, 19)]
    assert plan_windows(t, 8, 4, H, anchored=True) == [(0, 7, 8, 11), (0, 11, 12, 15), (0, 15, 16, 19)]
    assert plan_windows(t, "8h", "4h", H) == plan_windows(t, 8, 4, H)
    gappy = np.delete(t, [9, 10])  # two missing hours: a time window holds fewer candles
    assert plan_windows(gappy, "8h", "4h", H)[0] == (0, 7, 8, 9)


def test_each_choice_is_the_in_sample_best_and_runs_out_of_sample(wf, klines) -> None:
    w = wf.windows
    assert w.height == 4 and w["window"].to_list() == [0, 1, 2, 3]
    assert w.schema["is_start"] == pl.Datetime("ms", "UTC")
    for row in w.iter_rows(named=True):
        is_lo, is_hi = (int(row[k].timestamp() * 1000) for k in ("is_start", "is_end"))
        past = klines.filter(pl.col("open_time") <= row["is_end"])
        cells = sweep(STRATEGY, GRID, {"X": past}, "1h", is_lo / 1000, is_hi / 1000, **SETTINGS).cells(
            "total_return_pct"
        )
        assert row["is_value"] == cells["total_return_pct"].max()
        assert (row["n"], row["level"], row["tp"]) == tuple(
            cells.sort("total_return_pct", descending=True).select("n", "level", "tp").row(0)
        )
        oos_lo, oos_hi = (int(row[k].timestamp() * 1000) for k in ("oos_start", "oos_end"))
        text = {
            "entry_condition": f"RSI({row['n']}) crosses above {row['level']}",
            "tp_condition": f"{row['tp']}%",
            "sl_condition": "2%",
        }
        alone = sv.backtest(
            sv.compile_strategy(**text),
            klines.filter(pl.col("open_time") <= row["oos_end"]),
            "1h",
            oos_lo / 1000,
            oos_hi / 1000,
            **SETTINGS,
        )
        assert row["oos_value"] == alone.summary["total_return_pct"]


def test_stitched_equity_chains_the_out_of_sample_windows(wf) -> None:
    eq = wf.equity
    finals = [1 + r / 100 for r in wf.windows["oos_return_pct"].to_list()]
    assert eq["equity"][-1] == pytest.approx(100 * np.prod(finals), rel=1e-12)
    assert wf.summary["oos_total_return_pct"] == pytest.approx((np.prod(finals) - 1) * 100, rel=1e-12)
    assert eq["open_time"].is_sorted() and eq["open_time"].n_unique() == eq.height
    assert set(wf.trades["window"].unique().to_list()) <= {0, 1, 2, 3}
    assert wf.gap()["gap"].to_list() == (wf.windows["is_value"] - wf.windows["oos_value"]).to_list()


def test_future_candles_never_change_an_earlier_choice(wf, klines) -> None:
    """Rewrite every candle after the second in-sample window: the first two windows' choices and
    in-sample figures stay the same; the later ones may change."""
    cut = wf.windows["is_end"][1]
    rng = np.random.default_rng(99)
    later = klines["open_time"] > cut
    scale = np.where(later.to_numpy(), np.exp(rng.normal(0, 0.05, klines.height)), 1.0)
    changed = klines.with_columns([(pl.col(c) * scale).alias(c) for c in ("open", "high", "low", "close")])
    other = walk_forward(
        STRATEGY,
        GRID,
        {"X": changed},
        "1h",
        in_sample=800,
        out_of_sample=400,
        by="total_return_pct",
        executor=SerialExecutor(),
        **SETTINGS,
    )
    keep = ["n", "level", "tp", "combo", "is_value", "is_start", "is_end"]
    assert other.windows.head(2).select(keep).equals(wf.windows.head(2).select(keep))
    assert not other.windows.select("oos_value").equals(wf.windows.select("oos_value"))


def test_anchored_walk_forward_grows_its_in_sample_window(klines, tmp_path) -> None:
    a = walk_forward(
        STRATEGY,
        {"n": [7, 14], "level": [30], "tp": [2]},
        {"X": klines},
        "1h",
        in_sample="30d",
        out_of_sample="20d",
        anchored=True,
        by="total_return_pct",
        **SETTINGS,
    )
    starts = a.windows["is_start"].unique().to_list()
    assert len(starts) == 1 and a.windows.height == 4  # 100 days: 30 in sample, then 20 + 20 + 20 + 10
    fig = a.plot(tmp_path / "wf.html", plotlyjs="cdn")
    assert len(fig.data) == 3 and (tmp_path / "wf.html").stat().st_size < 200_000
