"""Purged walk-forward and k-fold: trades that straddle a split have no candle in training."""

from __future__ import annotations

import numpy as np
import polars as pl

import svc_engine as sv
from svc_engine.research.demo import random_walk
from svc_engine.research.purged import purged_kfold
from svc_engine.strategy import compile_strategy

STRATEGY = {
    "entry": "RSI({n}) crosses above 50, buy at market",
    "tp": "no take profit",
    "sl": "no stop loss",
    "exit": "exit after 20 candles",
}


def test_walk_forward_purge_keeps_straddling_trades_out_of_training() -> None:
    k = random_walk(1_200, seed=9)
    wf = sv.walk_forward(
        STRATEGY,
        {"n": [5, 9]},
        {"X": k},
        "1h",
        in_sample=400,
        out_of_sample=200,
        by="total_return_pct",
        spread_pct=0,
        purge=22,
    )
    times = k["open_time"]
    straddling = 0
    for n in (5, 9):  # every candidate's trades over the whole series, as if nothing were cut
        words = STRATEGY["entry"].format(n=n), STRATEGY["tp"], STRATEGY["sl"]
        run = sv.backtest(compile_strategy(*words, exit_condition=STRATEGY["exit"]), k, "1h", spread_pct=0)
        for w in wf.windows.iter_rows(named=True):
            split = w["oos_start"]
            cross = run.trades.filter((pl.col("fill_time") < split) & (pl.col("exit_time") >= split))
            straddling += cross.height
            assert (cross["fill_time"] > w["is_end"]).all()  # none of their candles is in training
    assert straddling > 0
    gap = (wf.windows["oos_start"] - wf.windows["is_end"]).dt.total_hours().to_list()
    assert gap == [23, 23, 23, 23]
    assert times.len() == 1_200
    unpurged = sv.walk_forward(
        STRATEGY,
        {"n": [5, 9]},
        {"X": k},
        "1h",
        in_sample=400,
        out_of_sample=200,
        by="total_return_pct",
        spread_pct=0,
    )
    assert (unpurged.windows["oos_start"] - unpurged.windows["is_end"]).dt.total_hours().to_list() == [1] * 4


def test_purged_kfold_drops_trades_overlapping_the_fold_and_the_embargo() -> None:
    spans = np.array([[15, 22], [40, 45], [55, 61]])
    folds = purged_kfold(100, 5, spans=spans, embargo=3)
    train, test = folds[1]  # test 20 .. 39
    assert test.tolist() == list(range(20, 40))
    assert not set(range(15, 23)) & set(train.tolist())  # the trade straddling its start
    assert not set(range(40, 43)) & set(train.tolist())  # the embargo after it
    assert set(range(0, 15)) | set(range(43, 100)) == set(train.tolist())
