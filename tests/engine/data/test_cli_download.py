"""`svc data download` against the loopback kline fake: spot and futures, the URL from the option or
the environment, chunked writes that lose no candle, idempotent re-runs, one-line errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

import svc_api.cli.data as cli
from svc_engine.data import DataStore, load_klines
from tests.api.fakes.binance_klines import KlineFake, as_frame, make_candles, running_klines

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC


@pytest.fixture
def fake() -> Iterator[KlineFake]:
    with running_klines() as served:  # the wall clock: every candle below closed long ago
        served.add("BTCUSDT", "1h", make_candles(T0, 120, H))
        served.add("ETHUSDT", "1h", make_candles(T0, 120, H, base=2000.0), futures=True)
        yield served


def run(root: Path, *args: str):
    return CliRunner().invoke(cli.command, ["--data-dir", str(root), "download", *args])


def test_download_writes_the_closed_candles_and_a_second_run_adds_nothing(tmp_path, fake):
    args = (
        "btcusdt",
        "--timeframe",
        "1h",
        "--start",
        "2024-01-01",
        "--end",
        "2024-01-05",
        "--base-url",
        fake.url,
    )
    res = run(tmp_path, *args)
    assert res.exit_code == 0, res.output
    assert res.output == f"crypto/BTCUSDT 1h: 96 closed candles from {fake.url}, 96 added\n"
    stored = load_klines("BTCUSDT", "1h", market="crypto", store=DataStore(tmp_path))
    assert_frame_equal(stored, as_frame(fake.held("BTCUSDT", "1h")[:96]))
    again = run(tmp_path, *args)
    assert again.output.endswith("96 closed candles from " + fake.url + ", 0 added\n")
    assert [path for path, _ in fake.calls] == ["/api/v3/klines"] * 2


def test_futures_from_the_environment_go_to_crypto_futures_up_to_now(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("BINANCE_FUTURES_URL", fake.url)
    res = run(tmp_path, "ETHUSDT", "--futures", "--start", "2024-01-01")
    assert res.exit_code == 0, res.output
    assert res.output == f"crypto_futures/ETHUSDT 1h: 120 closed candles from {fake.url}, 120 added\n"
    assert [path for path, _ in fake.calls] == ["/fapi/v1/time", "/fapi/v1/klines"]
    stored = pl.read_parquet(DataStore(tmp_path).path("crypto_futures", "ETHUSDT", "1h"))
    assert stored["open"][0] == 2000.0 and stored.height == 120


def test_chunks_start_on_the_grid_so_no_candle_is_lost_between_them(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(cli, "DOWNLOAD_CHUNK_CANDLES", 7)
    res = run(
        tmp_path,
        "BTCUSDT",
        "--start",
        "2024-01-01T00:30",
        "--end",
        "2024-01-03 12:00",
        "--base-url",
        fake.url,
    )
    assert res.exit_code == 0, res.output
    assert "59 closed candles" in res.output and "59 added" in res.output  # 01:00 .. 11:00 on the 3rd
    stored = load_klines("BTCUSDT", "1h", market="crypto", store=DataStore(tmp_path))
    assert_frame_equal(stored, as_frame(fake.held("BTCUSDT", "1h")[1:60]))
    starts = [int(p["startTime"]) for _, p in fake.calls]
    assert starts == [T0 + H + i * 7 * H for i in range(9)]


def test_errors_are_one_line_with_a_non_zero_exit(tmp_path, fake):
    res = run(tmp_path, "NOPE", "--start", "2024-01-01", "--end", "2024-01-02", "--base-url", fake.url)
    assert res.exit_code == 1
    assert res.output == "Error: GET /api/v3/klines: 400 -1121 Invalid symbol.\n"
    backwards = run(tmp_path, "BTCUSDT", "--start", "2024-01-02", "--end", "2024-01-01")
    assert backwards.exit_code == 2 and "is not after --start" in backwards.output
    assert not (tmp_path / "crypto").exists()
