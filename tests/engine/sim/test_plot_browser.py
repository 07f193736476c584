"""The standalone report in a real browser: six years of hourly candles, under 2 MB, offline.

Opens the page in headless Chromium (Debian's ``chromium``; the set-up installs it when missing
and it can, else the test skips with the reason) with no network, and reads the DOM after load:
the chart drew (the page marks ``data-rendered``), no script error was raised (an ``onerror``
hook put in front of the page's scripts writes any into the DOM), and each panel is there.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("plotly")

HOOK = (
    b"<script>window.__errors = [];"
    b"function __note(m) { window.__errors.push(String(m));"
    b" document.documentElement.setAttribute('data-script-errors', window.__errors.join(' | ')); }"
    b"window.onerror = function (m) { __note(m); };"
    b"window.addEventListener('unhandledrejection', function (e) { __note(e.reason); });</script>"
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("chromium is not installed and cannot be installed here (not root, or no apt-get)")
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    # xdist workers may all get here at once: one installs, the others wait for it
    with open(Path(tempfile.gettempdir()) / "svc-chromium-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(install, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:  # an old package list: refresh it once and try again
            subprocess.run(["apt-get", "update"], capture_output=True, timeout=900)
            done = subprocess.run(install, capture_output=True, text=True, timeout=900)
    found = shutil.which("chromium")
    if done.returncode != 0 or not found:
        pytest.skip(f"apt-get could not install chromium: {done.stderr.strip()[-300:]}")
    return found


@pytest.fixture(scope="module")
def chromium() -> str:
    return _chromium()


@pytest.fixture(scope="module")
def report(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from svc_engine import backtest
    from svc_engine.strategy import compile_strategy

    klines = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1h.parquet").tail(52_560)  # six years
    strategy = compile_strategy(
        "SMA(10) crosses above SMA(30) and close is below the upper Bollinger band", "3%", "2%"
    )
    run = backtest(strategy, klines, "1h")
    assert run.trades.height > 500
    page = tmp_path_factory.mktemp("report") / "report.html"
    run.plot(page, strategy=strategy)
    return page


def _dom(chromium: str, page: Path) -> str:
    text = page.read_bytes()
    head = text.index(b"</title>") + len(b"</title>")
    hooked = page.with_name("hooked.html")
    hooked.write_bytes(text[:head] + HOOK + text[head:])
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--user-data-dir=" + str(page.parent / "profile"),
            # no network at all: the page must carry everything it needs
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--virtual-time-budget=20000",
            "--dump-dom",
            hooked.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_six_years_of_hourly_candles_make_a_page_under_2_mb(report: Path) -> None:
    assert report.stat().st_size < 2_000_000
    assert b"<script src=" not in report.read_bytes()  # nothing fetched


def test_the_report_renders_offline_without_script_errors_and_with_every_panel(
    chromium: str, report: Path
) -> None:
    dom = _dom(chromium, report)
    assert 'data-script-errors="' not in dom, dom[dom.find('data-script-errors="') :][:500]
    assert 'data-rendered="1"' in dom and "data-error=" not in dom
    # trades (candles), volume, equity, drawdown: four cartesian panels, then the statistics table
    for panel in (
        'class="subplot xy"',
        'class="subplot x2y2"',
        'class="subplot x3y3"',
        'class="subplot x4y4"',
    ):
        assert panel in dom
    assert 'class="table"' in dom and ">total return %<" in dom
    # candles, volume bars and eleven lines (markers, levels, indicators, trades, equity, drawdown)
    assert dom.count('class="trace boxes"') == 1 and dom.count('class="trace bars"') == 1
    assert len(re.findall(r'class="trace scatter trace[0-9a-f]+"', dom)) == 11
    legend = re.findall(r'class="legendtext"[^>]*data-unformatted="([^"]*)"', dom)
    assert legend[:3] == ["candles", "entries", "exits"] and "SMA(10)" in legend and "losing trades" in legend
    # the times went as Unix ms on a date axis: the ticks read as years, not as 1.6e12
    years = re.findall(r'<g class="x\d*tick">.{0,400}?data-unformatted="([^"]*)"', dom)
    assert years and all(2019 <= int(y) <= 2026 for y in years), years
    assert "1h:" in dom and "SMA(10) crosses above SMA(30)" in dom  # the title and its words


def test_a_broken_page_is_caught(chromium: str, report: Path) -> None:
    # the check itself: a page whose packed script is cut short reports its error, not a pass
    text = report.read_bytes()
    start = text.index(b'id="svc-plotlyjs"')
    broken = report.with_name("broken.html")
    broken.write_bytes(text[: start + 5000] + text[text.index(b"</script>", start) :])
    dom = _dom(chromium, broken)
    assert 'data-rendered="1"' not in dom and "data-error=" in dom
