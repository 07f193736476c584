"""The hot tail: appends validated like imports, idempotent, conflicts refused; readers see appends at
once (in this process and another); higher timeframes appear when complete; compaction and crashes
lose nothing and never show a candle twice."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from svc_engine.data import Catalog, DataStore, KlineValidationError, load_klines, resample
from svc_engine.data import tail as tails

H = 3_600_000


def hours(n: int, start: int = 0, base: float = 100.0) -> pl.DataFrame:
    t = start + np.arange(n, dtype=np.int64) * H
    close = base + np.arange(n) + start / H
    return pl.DataFrame(
        {
            "open_time": t,
            "open": close - 0.5,
            "high": close + 1.0,
            "low": close - 1.0,
            "close": close,
            "volume": np.full(n, 2.0),
        }
    )


@pytest.fixture
def store(tmp_path: Path) -> DataStore:
    s = DataStore(tmp_path)
    s.write_klines("crypto", "BTCUSDT", "1h", hours(8))
    return s


def test_an_append_is_read_at_once_and_a_repeat_changes_nothing(store: DataStore) -> None:
    nxt = hours(2, start=8 * H)
    assert store.append_klines("crypto", "BTCUSDT", "1h", nxt) == 2
    assert store.append_klines("crypto", "BTCUSDT", "1h", nxt) == 0
    assert store.append_klines("crypto", "BTCUSDT", "1h", hours(3, start=8 * H)) == 1  # only the new one
    assert store.newest_open("crypto", "BTCUSDT", "1h") == 10 * H
    loaded = load_klines("BTCUSDT", "1h", store=store)
    assert loaded.height == 11 and loaded["close"].to_list() == [100.0 + i for i in range(11)]
    assert Catalog(store).data_range("BTCUSDT", "1h")["total_candles"] == 11
    assert tails.read(store.tail_path("crypto/BTCUSDT/1h.parquet"))[0].size == 3  # no Parquet rewrite


def test_a_conflicting_candle_is_refused_with_both_values_and_nothing_is_written(store: DataStore) -> None:
    store.append_klines("crypto", "BTCUSDT", "1h", hours(1, start=8 * H))
    other = hours(2, start=8 * H).with_columns(
        pl.when(pl.col("open_time") == 8 * H).then(109.0).otherwise(pl.col("close")).alias("close")
    )
    with pytest.raises(
        KlineValidationError,
        match=r"conflicting_candle: open_time 28800000 is stored as "
        r"\(107.5, 109.0, 107.0, 108.0, 2.0\); the new candle is \(107.5, 109.0, 107.0, 109.0",
    ):
        store.append_klines("crypto", "BTCUSDT", "1h", other)
    assert store.newest_open("crypto", "BTCUSDT", "1h") == 8 * H  # the 09:00 candle was not appended
    history = hours(1, start=3 * H).with_columns(close=pl.lit(50.0), low=pl.lit(49.0))
    with pytest.raises(KlineValidationError, match="conflicting_candle: open_time 10800000"):
        store.append_klines("crypto", "BTCUSDT", "1h", history)  # also against the Parquet history


@pytest.mark.parametrize(
    ("column", "value", "rule"),
    [
        ("close", 0.0, "nonpositive_price"),
        ("high", 1.0, "high_below_open_close"),
        ("volume", -1.0, "negative_volume"),
        ("open", float("nan"), "nonfinite_price"),
    ],
)
def test_appends_obey_the_import_rules(store: DataStore, column: str, value: float, rule: str) -> None:
    bad = hours(1, start=8 * H).with_columns(pl.lit(value).alias(column))
    with pytest.raises(KlineValidationError, match=rule):
        store.append_klines("crypto", "BTCUSDT", "1h", bad)
    assert store.newest_open("crypto", "BTCUSDT", "1h") == 7 * H


def test_a_4h_candle_appears_once_its_four_hours_have_closed(store: DataStore) -> None:
    assert load_klines("BTCUSDT", "4h", store=store).height == 2
    store.append_klines("crypto", "BTCUSDT", "1h", hours(3, start=8 * H))
    assert load_klines("BTCUSDT", "4h", store=store).height == 2  # 08:00-12:00 still open
    store.append_klines("crypto", "BTCUSDT", "1h", hours(1, start=11 * H))
    four = load_klines("BTCUSDT", "4h", store=store)
    assert four.height == 3
    assert four.equals(resample(load_klines("BTCUSDT", "1h", store=store), "4h"))
    assert Catalog(store).data_range("BTCUSDT", "4h")["total_candles"] == 3


def test_compaction_moves_the_tail_into_parquet_and_reads_do_not_change(store: DataStore) -> None:
    store.append_klines("crypto", "BTCUSDT", "1h", hours(5, start=8 * H))
    before = load_klines("BTCUSDT", "1h", store=store)
    assert store.compact("crypto", "BTCUSDT", "1h") == 5
    assert tails.read(store.tail_path("crypto/BTCUSDT/1h.parquet"))[0].size == 0
    assert pl.read_parquet(store.path("crypto", "BTCUSDT", "1h")).height == 13
    assert load_klines("BTCUSDT", "1h", store=store).equals(before)


def test_a_compaction_stopped_before_it_emptied_the_tail_shows_each_candle_once(store: DataStore) -> None:
    store.append_klines("crypto", "BTCUSDT", "1h", hours(4, start=8 * H))
    key = "crypto/BTCUSDT/1h.parquet"
    store._write(key, store._read(key).to_arrow())  # the Parquet replaced, the process died here
    assert load_klines("BTCUSDT", "1h", store=store).height == 12
    assert Catalog(store).data_range("BTCUSDT", "1h")["total_candles"] == 12
    store.append_klines("crypto", "BTCUSDT", "1h", hours(1, start=12 * H))
    assert load_klines("BTCUSDT", "1h", store=store)["open_time"].dt.epoch("ms").to_list() == [
        i * H for i in range(13)
    ]


def test_a_torn_record_loses_only_that_candle_and_the_next_append_follows_the_valid_ones(
    store: DataStore,
) -> None:
    store.append_klines("crypto", "BTCUSDT", "1h", hours(2, start=8 * H))
    path = store.tail_path("crypto/BTCUSDT/1h.parquet")
    with open(path, "ab") as f:
        f.write(tails.encode(np.array([10 * H]), np.ones((1, 5)))[:30])  # the write a crash cut short
    assert load_klines("BTCUSDT", "1h", store=store).height == 10
    assert store.append_klines("crypto", "BTCUSDT", "1h", hours(1, start=10 * H)) == 1
    assert load_klines("BTCUSDT", "1h", store=store).height == 11
    assert path.stat().st_size == 3 * tails.RECORD


def test_another_process_sees_an_append_as_soon_as_it_returns(store: DataStore) -> None:
    code = textwrap.dedent(f"""
        import numpy as np, polars as pl
        from svc_engine.data import DataStore
        t = np.array([8 * {H}], dtype=np.int64)
        df = pl.DataFrame({{"open_time": t, "open": [107.5], "high": [109.0], "low": [107.0],
                            "close": [108.0], "volume": [2.0]}})
        print(DataStore({str(store.root)!r}).append_klines("crypto", "BTCUSDT", "1h", df))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "1"
    assert load_klines("BTCUSDT", "1h", store=store)["close"][-1] == 108.0


def test_a_process_killed_during_appends_and_compactions_leaves_a_valid_series(store: DataStore) -> None:
    code = textwrap.dedent(f"""
        import sys
        import numpy as np, polars as pl
        from svc_engine.data import DataStore
        store = DataStore({str(store.root)!r})
        k = 8
        while True:
            c = 100.0 + k
            df = pl.DataFrame({{"open_time": [k * {H}], "open": [c - 0.5], "high": [c + 1.0],
                                "low": [c - 1.0], "close": [c], "volume": [2.0]}})
            store.append_klines("crypto", "BTCUSDT", "1h", df)
            print(k, flush=True)
            if k % 7 == 0:
                store.compact("crypto", "BTCUSDT", "1h")
            k += 1
    """)
    for delay in (0.8, 1.3, 1.9):  # three kills at different points of the loop
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        proc.stdout.readline()  # running
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        printed = [int(line) for line in proc.stdout.read().split()]
        proc.wait()
        loaded = load_klines("BTCUSDT", "1h", store=store)
        got = loaded["open_time"].dt.epoch("ms").to_numpy() // H
        assert got.tolist() == list(range(got.size))  # every candle once, in order, no gap
        assert loaded["close"].to_list() == [100.0 + i for i in range(got.size)]
        # at most the candle being written when it died is lost
        assert got.size >= (printed[-1] + 1 if printed else 9)


@pytest.mark.parametrize("how", ["append", "appender"])
def test_a_short_write_of_a_full_disk_is_cut_back_and_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    path = tmp_path / "s" / "1m.bin"
    tails.append(path, np.array([0, 60_000]), np.ones((2, 5)))
    real = os.write

    def full_disk(fd: int, data: bytes) -> int:  # what a nearly full disk does: takes what fits
        return real(fd, data[:100])

    monkeypatch.setattr(tails.os, "write", full_disk)
    more = (np.array([120_000, 180_000, 240_000]), np.ones((3, 5)) * 2)
    with pytest.raises(OSError) as full:
        if how == "append":
            tails.append(path, *more)
        else:
            with tails.Appender(path) as out:
                out.write(*more)
    assert full.value.errno == errno.ENOSPC
    assert path.stat().st_size == 2 * tails.RECORD  # nothing of the failed write is left
    monkeypatch.setattr(tails.os, "write", real)
    tails.append(path, *more)
    assert tails.read(path)[0].tolist() == [0, 60_000, 120_000, 180_000, 240_000]
