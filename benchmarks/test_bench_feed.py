"""The live store's hot tail: one closed candle appended to each of 500 series x 3 timeframes (what
the market feed does at a close), and the last 500 candles of a live series read back as the API's
``get_klines`` reads them (``load_klines`` over the Parquet history plus its tail).

Targets (issue 27): all 1,500 appends under 250 ms; a tail read of 500 candles under 5 ms.
Run with ``make bench`` or ``pytest benchmarks/test_bench_feed.py -s``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from svc_engine.data import DataStore, load_klines

SERIES, FRAMES = 500, {"1m": 60_000, "5m": 300_000, "1h": 3_600_000}
HISTORY = 2_000


def _candles(start: int, step: int, n: int) -> pl.DataFrame:
    t = start + np.arange(n, dtype=np.int64) * step
    c = 100.0 + np.sin(np.arange(n) / 10.0)
    return pl.DataFrame(
        {"open_time": t, "open": c, "high": c + 1.0, "low": c - 1.0, "close": c, "volume": np.ones(n)}
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> DataStore:
    s = DataStore(tmp_path_factory.mktemp("feed-store"))
    for k in range(SERIES):
        for tf, step in FRAMES.items():
            s.write_klines("crypto", f"C{k:03d}USDT", tf, _candles(0, step, HISTORY))
    return s


def test_append_one_candle_to_1500_series(benchmark, store: DataStore) -> None:
    nxt = {"k": HISTORY}
    one = {
        tf: [_candles(i * step, step, 1) for i in range(HISTORY, HISTORY + 64)] for tf, step in FRAMES.items()
    }

    def close() -> int:
        i = nxt["k"] - HISTORY
        nxt["k"] += 1
        return sum(
            store.append_klines("crypto", f"C{k:03d}USDT", tf, one[tf][i])
            for k in range(SERIES)
            for tf in FRAMES
        )

    added = benchmark.pedantic(close, rounds=20, iterations=1, warmup_rounds=1)
    assert added == SERIES * len(FRAMES)
    mean, best = benchmark.stats.stats.mean, benchmark.stats.stats.min
    n = SERIES * len(FRAMES)
    print(
        f"\nappend one candle to {n:,} series: {mean * 1000:.1f} ms mean (best {best * 1000:.1f} ms), "
        f"{n / mean:,.0f} appends/s; target < 250 ms: {'met' if mean < 0.25 else 'NOT met'}"
    )


def test_read_the_last_500_candles_of_a_live_series(benchmark, store: DataStore, tmp_path: Path) -> None:
    for i in range(HISTORY, HISTORY + 100):  # a tail of 100 live candles beside the history
        store.append_klines("crypto", "C000USDT", "1h", _candles(i * 3_600_000, 3_600_000, 1))
    last = store.newest_open("crypto", "C000USDT", "1h")
    assert last is not None

    def read() -> int:
        return load_klines(
            "C000USDT", "1h", (last - 499 * 3_600_000) / 1000, last / 1000, market="crypto", store=store
        ).height

    assert benchmark.pedantic(read, rounds=50, iterations=1, warmup_rounds=2) == 500
    mean = benchmark.stats.stats.mean
    print(
        f"\nlast 500 candles of a live series (history + tail): {mean * 1000:.2f} ms mean; "
        f"target < 5 ms: {'met' if mean < 0.005 else 'NOT met'}"
    )
