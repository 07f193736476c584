"""scan_trends over a small universe: injected loader, a real DataStore, executors."""

from __future__ import annotations

import functools
import pickle
from pathlib import Path

import polars as pl
import pytest
from trend_helpers import random_walk

from svc_engine.data import DataStore
from svc_engine.data.times import ms_columns
from svc_engine.executors import LocalExecutor
from svc_engine.trend import detect_trends, scan_trends, signal_detail, signal_to_api
from svc_engine.trend.scan import StoreLoader, scan_one

SERIES = {("AAAUSDT", "1h"): 1, ("AAAUSDT", "4h"): 2, ("BBBUSDT", "1h"): 3, ("BBBUSDT", "4h"): 4}


def loader(symbol: str, timeframe: str) -> pl.DataFrame:
    if (symbol, timeframe) not in SERIES:
        raise LookupError(f"no {symbol} {timeframe}")
    return random_walk(SERIES[symbol, timeframe], 1500, 0.01)


def expected() -> pl.DataFrame:
    parts = [detect_trends(loader(s, tf), symbol=s, timeframe=tf) for s, tf in SERIES]
    return pl.concat(parts)


def test_scan_equals_the_detector_per_series_newest_first() -> None:
    out = scan_trends(["aaausdt", "BBBUSDT", "CCCUSDT"], ["1h", "4h"], loader=loader)
    want = expected()
    assert out.height == want.height == 169
    assert out["market"].unique().to_list() == ["crypto"]
    assert out.drop("market").sort(out.columns[1:]).equals(want.sort(want.columns))
    times = out["open_time"].to_list()
    assert times == sorted(times, reverse=True)
    assert out.row(0, named=True)["open_time"] == want["open_time"].max()


def test_since_keeps_later_signals_and_params_reach_the_detector() -> None:
    cut = 1000 * 60  # seconds
    out = ms_columns(scan_trends(["AAAUSDT", "BBBUSDT"], ["1h", "4h"], since=cut, loader=loader))
    assert out["open_time"].min() >= cut * 1000
    assert out.height == ms_columns(expected()).filter(pl.col("open_time") >= cut * 1000).height == 63
    wide = scan_trends(["AAAUSDT"], ["1h"], loader=loader, window=60)
    assert wide.height != scan_trends(["AAAUSDT"], ["1h"], loader=loader).height


def test_executors_give_the_same_frame() -> None:
    serial = scan_trends(["AAAUSDT", "BBBUSDT"], ["1h", "4h"], loader=loader)
    with LocalExecutor(max_workers=2) as ex:
        threaded = scan_trends(["AAAUSDT", "BBBUSDT"], ["1h", "4h"], loader=loader, executor=ex)
    assert threaded.equals(serial)


def test_default_loader_reads_the_store_with_warmup(tmp_path: Path, shared_datasets: Path) -> None:
    store = DataStore(tmp_path)
    k = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1h.parquet").head(6000)
    store.write_klines("crypto", "BTCUSDT", "1h", k)
    full = scan_trends(["BTCUSDT"], ["1h"], store=store)
    assert full.drop("market").equals(detect_trends(k, symbol="BTCUSDT", timeframe="1h").reverse())
    since = int(k["open_time"][4000]) // 1000
    recent = scan_trends(["BTCUSDT"], ["1h"], store=store, since=since)
    assert recent.height == 59
    same = full.filter(pl.col("open_time").dt.epoch("ms") >= since * 1000)
    # Indices count from the first candle loaded: 1000 warm-up candles before candle 4000.
    indices = [c for c in full.columns if c.endswith("index")]
    assert recent.drop(indices).equals(same.drop(indices))
    shifted = recent.select(pl.col(indices) + 3000)
    assert shifted.equals(same.select(indices))
    after_end = int(k["open_time"][-1]) // 1000 + 3600
    assert scan_trends(["BTCUSDT"], ["1h"], store=store, since=after_end).height == 0
    assert scan_trends(["ETHUSDT"], ["1h"], store=store).height == 0  # no such series: skipped


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown timeframe '7m'"):
        scan_trends(["AAAUSDT"], ["7m"], loader=loader)
    with pytest.raises(ValueError, match="unknown trend parameter"):
        scan_trends(["AAAUSDT"], ["1h"], loader=loader, lenght=2)


def test_signal_detail_from_the_store(tmp_path: Path, shared_datasets: Path) -> None:
    store = DataStore(tmp_path)
    k = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1h.parquet").head(6000)
    store.write_klines("crypto", "BTCUSDT", "1h", k)
    row = detect_trends(k, symbol="BTCUSDT", timeframe="1h").filter(pl.col("index") > 5000).row(0, named=True)
    ts = row["open_time"].timestamp()
    assert ts == int(ts)
    ts = int(ts)
    detail = signal_detail("btcusdt", "1h", str(ts), store=store)
    assert detail == signal_to_api(row, k)
    assert len(detail["klines_data"]) == 200 and detail["klines_data"][-1][0] == ts * 1000
    with pytest.raises(LookupError, match=f"no trend signal of BTCUSDT 1h at timestamp {ts + 3600}"):
        signal_detail("BTCUSDT", "1h", ts + 3600, store=store)
    with pytest.raises(LookupError):
        signal_detail("ETHUSDT", "1h", ts, store=store)


def test_scan_task_pickles_for_ray_workers() -> None:
    task = functools.partial(
        scan_one,
        loader=StoreLoader(market="crypto", since=10),
        since=10,
        market="crypto",
        params={"window": 50},
    )
    again = pickle.loads(pickle.dumps(task))
    assert again.keywords["loader"] == StoreLoader(market="crypto", since=10)
