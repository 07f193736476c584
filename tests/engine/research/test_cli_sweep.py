"""``svc sweep spec.toml``: Parquet results and an HTML report; killed mid-run (SIGKILL, a real
process) and started again, it computes only the missing chunks and ends with the same Parquet as
an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from svc_api.cli import main
from svc_engine.research.demo import random_walk

ROOT = Path(__file__).resolve().parents[3]
SPEC = """
timeframes = "1h"
start = "2024-01-10"
end = "2024-04-01"
chunk_combos = 1

[files]
AAA = "AAA.parquet"
BBB = "BBB.parquet"

[strategy]
entry = "RSI({n}) crosses above {level}"
tp = "{tp}%"
sl = "2%"

[grid]
n = [6, 9, 12, 15, 18, 21]
level = [25, 30, 35, 40]
tp = [2, 4]

[settings]
commission_pct = 0.1
spread_pct = 0.05

[report]
by = "total_return_pct"
top = 5
heatmap = ["n", "level"]
plotlyjs = "cdn"
"""
CHUNKS = 6 * 4 * 2 * 2


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    random_walk(2_400, seed=31).write_parquet(tmp_path / "AAA.parquet")
    random_walk(2_400, seed=32, vol=0.02).write_parquet(tmp_path / "BBB.parquet")
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    return path


def _parts(out: Path) -> list[Path]:
    return sorted((out / "parts").glob("part-*.parquet"))


def test_results_and_report(spec: Path) -> None:
    res = CliRunner().invoke(main, ["sweep", str(spec), "--workers", "2", "--quiet"])
    assert res.exit_code == 0, res.output
    out = spec.with_name("spec-results")
    rows = pl.read_parquet(out / "results.parquet")
    assert rows.height == 48 * 2 and {"n", "level", "tp", "coin", "sharpe_ratio", "cagr_pct"} <= set(
        rows.columns
    )
    page = (out / "report.html").read_text()
    assert "Top 5 by total_return_pct" in page and "Robustness" in page and "cdn.plot.ly" in page
    assert f"{rows.height} rows" in res.output


def test_a_killed_sweep_resumes_to_the_same_parquet(spec: Path, tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "from svc_api.cli import main; main()"
    cmd = [sys.executable, "-c", code, "sweep", str(spec), "--out", str(killed), "--workers", "1", "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(_parts(killed)) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_at_kill = _parts(killed)
    assert 3 <= len(done_at_kill) < CHUNKS, "the run must be killed part-way"
    assert not (killed / "results.parquet").exists()
    stamps = {p.name: p.stat().st_mtime_ns for p in done_at_kill}

    res = CliRunner().invoke(main, ["sweep", str(spec), "--out", str(killed), "--workers", "1", "--quiet"])
    assert res.exit_code == 0, res.output
    assert {p.name: p.stat().st_mtime_ns for p in done_at_kill} == stamps  # not computed again
    assert len(_parts(killed)) == CHUNKS

    whole = tmp_path / "whole"
    res = CliRunner().invoke(main, ["sweep", str(spec), "--out", str(whole), "--workers", "2", "--quiet"])
    assert res.exit_code == 0, res.output
    assert pl.read_parquet(killed / "results.parquet").equals(pl.read_parquet(whole / "results.parquet"))


def test_a_bad_spec_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('coins = ["X"]\n[strategy]\nentry = "close > open"\n')
    res = CliRunner().invoke(main, ["sweep", str(bad)])
    assert res.exit_code == 1 and "exactly one of [grid] or [[combos]]" in res.output


def test_a_sample_of_a_large_grid(spec: Path) -> None:
    big = SPEC.replace("n = [6, 9, 12, 15, 18, 21]", "n = [" + ", ".join(map(str, range(5, 60))) + "]")
    spec.write_text(big + "\n[sample]\nn = 10\nseed = 4\n")
    res = CliRunner().invoke(main, ["sweep", str(spec), "--workers", "1", "--quiet"])
    assert res.exit_code == 0, res.output
    rows = pl.read_parquet(spec.with_name("spec-results") / "results.parquet")
    assert rows.height == 10 * 2 and rows.select("n", "level", "tp").unique().height == 10


def test_a_spec_with_exit_rules_equals_the_sweep(spec: Path) -> None:
    import svc_engine as sv

    ruled = SPEC.replace(
        'tp = "{tp}%"\nsl = "2%"', 'tp = "{tp}%"\nsl = "trailing stop 2%"\nexit = "after {hold} candles"'
    )
    ruled = ruled.replace("tp = [2, 4]", "tp = [2, 4]\nhold = [6, 24]").replace(
        "n = [6, 9, 12, 15, 18, 21]", "n = [9]"
    )
    spec.write_text(ruled)
    res = CliRunner().invoke(main, ["sweep", str(spec), "--workers", "1", "--quiet"])
    assert res.exit_code == 0, res.output
    rows = pl.read_parquet(spec.with_name("spec-results") / "results.parquet")
    frames = {c: pl.read_parquet(spec.with_name(f"{c}.parquet")) for c in ("AAA", "BBB")}
    strategy = {
        "entry": "RSI({n}) crosses above {level}",
        "tp": "{tp}%",
        "sl": "trailing stop 2%",
        "exit": "after {hold} candles",
    }
    grid = {"n": [9], "level": [25, 30, 35, 40], "tp": [2, 4], "hold": [6, 24]}
    direct = sv.sweep(
        strategy, grid, frames, "1h", "2024-01-10", "2024-04-01", commission_pct=0.1, spread_pct=0.05
    ).rows
    assert rows.height == 16 * 2 and rows.equals(direct)
