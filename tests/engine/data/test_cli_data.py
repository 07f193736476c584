"""`svc data`: import, list, info, validate and init through click's runner; errors are one line."""

from __future__ import annotations

import zipfile
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import svc_api.cli.data as cli
from svc_engine.data import DataStore

M = 60_000
T0 = 1_704_067_200_000


def dump(path: Path, n: int = 3, unit: int = 1, high: float = 2.0) -> Path:
    rows = [
        f"{(T0 + i * M) * unit},1.0,{high},0.5,1.5,10.0,{(T0 + i * M + M - 1) * unit},15,3,5,7.5,0"
        for i in range(n)
    ]
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(path.with_suffix(".csv").name, "\n".join(rows) + "\n")
    return path


def run(root: Path, *args: str):
    return CliRunner().invoke(cli.command, ["--data-dir", str(root), *args])


def test_import_then_list_then_info(tmp_path):
    root = tmp_path / "store"
    res = run(root, "import", str(dump(tmp_path / "BTCUSDT-1m-2024-01.zip", n=130)))
    assert res.exit_code == 0, res.output
    assert "crypto/BTCUSDT 1m: 1 file(s), 130 candles read, 130 added" in res.output
    assert "0 added" in run(root, "import", str(tmp_path / "BTCUSDT-1m-2024-01.zip")).output

    listing = run(root, "list")
    assert listing.exit_code == 0
    assert "BTCUSDT" in listing.output and "2024-01-01" in listing.output and "130" in listing.output
    assert "crypto/BTCUSDT/1m.parquet" in listing.output

    info = run(root, "info", "btcusdt")
    assert info.exit_code == 0, info.output
    assert "crypto/BTCUSDT in" in info.output
    assert "also loadable by resampling 1m: 3m, 5m" in info.output


def test_import_generic_csv_with_a_mapping(tmp_path):
    src = tmp_path / "prices.csv"
    src.write_text("Day,O,H,L,C\n2024-01-02,1,2,0.5,1.5\n2024-01-03,1.5,2.5,1,2\n")
    res = run(
        tmp_path / "store",
        "import",
        str(src),
        "--market",
        "forex",
        "--symbol",
        "eurusd",
        "--timeframe",
        "1d",
        "--map",
        "open_time=Day",
        "--time-unit",
        "iso",
    )
    assert res.exit_code == 0, res.output
    assert "forex/EURUSD 1d: 1 file(s), 2 candles read, 2 added" in res.output
    stored = pl.read_parquet(DataStore(tmp_path / "store").path("forex", "EURUSD", "1d"))
    assert stored["close"].to_list() == [1.5, 2.0]


def test_import_errors_are_one_line_with_a_non_zero_exit(tmp_path):
    bad = dump(tmp_path / "BTCUSDT-1m-2024-02.zip", high=0.9)  # high below open
    res = run(tmp_path / "store", "import", str(bad))
    assert res.exit_code == 1
    assert res.output.strip().count("\n") == 0
    assert res.output.startswith(f"Error: {bad}:BTCUSDT-1m-2024-02.csv: row 0: high_below_open_close")

    missing = run(tmp_path / "store", "import", str(tmp_path / "nope.csv"))
    assert missing.exit_code == 1
    assert missing.output.strip() == f"Error: no such file or directory: {tmp_path}/nope.csv"

    unnamed = tmp_path / "data.csv"
    unnamed.write_text("time,open,high,low,close\n1,1,1,1,1\n")
    res = run(tmp_path / "store", "import", str(unnamed))
    assert res.exit_code == 1
    assert "cannot tell the market and symbol and timeframe from the file name" in res.output

    assert run(tmp_path / "store", "import", str(unnamed), "--map", "open_time").exit_code == 2


def test_validate_store_symbol_and_file(tmp_path):
    root = tmp_path / "store"
    run(root, "import", str(dump(tmp_path / "BTCUSDT-1m-2024-01.zip")))
    whole = run(root, "validate")
    assert whole.exit_code == 0
    assert whole.output.startswith(f"ok {root}/crypto/BTCUSDT/1m.parquet: 3 candles, 0 gaps (0 missing)")
    assert run(root, "validate", "BTCUSDT").exit_code == 0

    bad = dump(tmp_path / "ETHUSDT-1m-2024-01.zip", high=0.9)
    res = run(root, "validate", str(bad))
    assert res.exit_code == 1
    assert f"INVALID {bad}:ETHUSDT-1m-2024-01.csv: row 0: high_below_open_close" in res.output
    assert res.output.strip().endswith("Error: 1 of 1 series are invalid")


def test_validate_and_info_of_unknown_symbol(tmp_path):
    root = tmp_path / "store"
    run(root, "import", str(dump(tmp_path / "BTCUSDT-1m-2024-01.zip")))
    for args in (("validate", "DOGEUSDT"), ("info", "DOGEUSDT")):
        res = run(root, *args)
        assert res.exit_code == 1
        assert res.output.strip() == f"Error: no market holds symbol 'DOGEUSDT' in {root} (markets: crypto)"
    res = run(root, "info", "BTCUSDT", "--market", "forex")
    assert res.exit_code == 1
    assert res.output.strip() == f"Error: no data for BTCUSDT in market 'forex' of {root}"
    res = run(root, "validate", str(tmp_path / "missing.zip"))
    assert res.exit_code == 1
    assert res.output.strip() == f"Error: no such file or directory: {tmp_path}/missing.zip"


def test_list_of_an_empty_store(tmp_path):
    res = run(tmp_path, "list")
    assert res.exit_code == 0 and f"no data in {tmp_path}" in res.output


def test_init_if_missing_does_nothing_on_a_filled_store(tmp_path, monkeypatch):
    root = tmp_path / "store"
    run(root, "import", str(dump(tmp_path / "BTCUSDT-1m-2024-01.zip")))
    synthetic = pytest.importorskip("svc_engine.data.synthetic")
    monkeypatch.setattr(synthetic, "generate_market", lambda *a, **k: pytest.fail("must not generate"))
    res = run(root, "init", "--if-missing")
    assert res.exit_code == 0 and "already holds 1 series; nothing to do" in res.output


def test_init_passes_seed_small_and_progress_to_the_generator(tmp_path, monkeypatch):
    synthetic = pytest.importorskip("svc_engine.data.synthetic")
    calls = []

    def fake(store, *, seed=0, progress=None, small=False):
        calls.append((store.root, seed, small))
        progress(1, 1, "crypto/BTCUSDT")
        return {"instruments": 1, "files": 1, "candles": 3, "seconds": 0.1}

    monkeypatch.setattr(synthetic, "generate_market", fake)
    res = run(tmp_path, "init", "--small", "--seed", "7")
    assert res.exit_code == 0, res.output
    assert calls == [(tmp_path, 7, True)]
    assert "instruments 1, files 1, candles 3, seconds 0.1" in res.output


def test_init_small_writes_a_store_that_lists_and_validates(tmp_path):
    pytest.importorskip("svc_engine.data.synthetic")
    res = run(tmp_path, "init", "--small", "--seed", "3")
    assert res.exit_code == 0, res.output
    assert f"synthetic market written to {tmp_path}: instruments " in res.output
    assert "crypto/BTCUSDT/1h.parquet" in run(tmp_path, "list").output
    assert run(tmp_path, "validate").exit_code == 0
