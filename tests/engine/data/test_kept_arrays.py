"""Arrays of a frame already seen and series already loaded (issue #32) are reused only while the
data is the same: a column replaced or edited in place, a file rewritten, gives fresh values."""

from __future__ import annotations

import tempfile

import numpy as np
import polars as pl
import pytest

import svc_engine as sv
from svc_engine.data import arrays, loaded
from svc_engine.data.schema import KlineValidationError


def chunked(n: int = 400, parts: int = 4) -> pl.DataFrame:
    t = np.arange(n, dtype=np.int64) * 3_600_000
    close = 100 + np.sin(np.arange(n) / 7.0) * 5
    frame = pl.DataFrame(
        {
            "open_time": t,
            "open": close,
            "high": close + 1,
            "low": close - 1,
            "close": close,
            "volume": np.ones(n),
        }
    )
    step = n // parts
    return pl.concat([frame.slice(i * step, step) for i in range(parts)], rechunk=False)


def test_a_multi_chunk_column_is_converted_once_and_again_after_a_change() -> None:
    k = chunked()
    assert k["close"].n_chunks() == 4
    first = arrays.column(k, "close")
    assert arrays.column(k, "close") is first and not first.flags.writeable
    k[3, "close"] = 1234.0  # in place: polars gives the column new buffers while the old are held
    assert arrays.column(k, "close")[3] == 1234.0
    k.replace_column(4, pl.Series("close", np.full(k.height, 7.0)))
    assert arrays.column(k, "close").tolist() == [7.0] * k.height


def test_validation_is_kept_per_version_and_a_broken_edit_is_still_refused() -> None:
    k = chunked()
    s = sv.compile_strategy("close crosses above SMA(10)", "2%", "1%")
    want = sv.simulate(k, s.evaluate(k), spread_pct=0)
    assert sv.simulate(k, s.evaluate(k), spread_pct=0).summary == want.summary
    k[5, "high"] = 1.0  # below the low: the kept validation must not hide it
    with pytest.raises(KlineValidationError, match="row 5"):
        sv.simulate(k, s.evaluate(k), spread_pct=0)


def test_a_stored_series_is_read_once_per_file_version() -> None:
    loaded.clear()
    store = sv.DataStore(tempfile.mkdtemp(prefix="kept-"))
    k = chunked().rechunk()
    store.write_klines("crypto", "BTCUSDT", "1h", k)
    first = sv.load_klines("BTCUSDT", "1h", store=store)
    assert sv.load_klines("BTCUSDT", "1h", store=store) is first
    assert sv.load_klines("BTCUSDT", "1h", start_ts=3600, store=store) is not first  # another request
    later = k.with_columns(pl.col("open_time") + k.height * 3_600_000, pl.col("close"))
    store.write_klines("crypto", "BTCUSDT", "1h", later)  # the file changes: read again
    again = sv.load_klines("BTCUSDT", "1h", store=store)
    assert again is not first and again.height == 2 * k.height
