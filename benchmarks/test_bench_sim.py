"""Speed of the simulation kernels against vectorbt, backtesting.py and a bare numba loop.

On the 4.35 M-row BTCUSDT 1m file: ``simulate`` with 50,000 random signals (long and short, limit
at the signal close, TP/SL 1 %), JIT cached and warmed; the same entries, TP and SL through
vectorbt's ``Portfolio.from_signals`` (market entries at the close: vectorbt has no waiting limit
order) and through backtesting.py on a slice (it runs a Python call per candle; the time is scaled
to the full file and the report says so); a bare numba loop of the same rules with no bookkeeping
is the machine's practical limit. Also the ``recommended_divide`` search over 24 coins, in ms
beyond the per-coin work. Every figure and ratio is printed in the same run.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_sim.py --benchmark-only -s``
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from numba import njit

from svc_engine.sim import simulate, simulate_portfolio
from svc_engine.sim.divide import divide_candidates, recommend_divide
from svc_engine.sim.multi import build_book
from svc_engine.sim.single import resolve_settings

BTC_1M = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "crypto" / "BTCUSDT-1m.parquet"
N_SIGNALS = 50_000
BT_SLICE = 300_000  # candles given to backtesting.py (a Python call per candle)
DIST = 0.01

pytestmark = pytest.mark.skipif(not BTC_1M.exists(), reason="BTCUSDT 1m dataset not found")


def best_of(fn: Callable[[], Any], rounds: int = 3) -> tuple[float, Any]:
    """Fastest wall time of ``rounds`` calls, after one warm-up call (JIT and caches)."""
    out = fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


@pytest.fixture(scope="module")
def market() -> dict[str, Any]:
    klines = pl.read_parquet(BTC_1M).rechunk()
    n = klines.height
    rng = np.random.default_rng(20261122)
    at = np.sort(rng.choice(n - 1, N_SIGNALS, replace=False))
    close = klines["close"].to_numpy()[at]
    long = rng.random(N_SIGNALS) < 0.5
    up = np.where(long, 1.0, -1.0)
    signals = pl.DataFrame(
        {
            "open_time": klines["open_time"].to_numpy()[at],
            "side": np.where(long, "long", "short"),
            "limit_price": close,
            "tp_price": close * (1 + up * DIST),
            "sl_price": close * (1 - up * DIST),
        }
    )
    return {"klines": klines, "signals": signals, "at": at, "long": long, "n": n}


# ------------------------------------------------------------------ the bare loop


@njit(cache=True, nogil=True)
def bare_loop(o, h, lo, c, at, up, limit, tp, sl, gap, wait, comm):
    """The same fill/exit rules (sections 3-4), one position at a time, balance only: no records,
    no equity, no filter, no validation."""
    n, balance, free_at, anchor = c.shape[0], 100.0, -1, -(10**9)
    for k in range(at.shape[0]):
        s, d = at[k], up[k]
        if s - anchor < gap or s < free_at:
            continue
        anchor = s
        i, last_live = s + 1, min(s + wait, n - 1)
        while i <= last_live and not ((d > 0 and lo[i] <= limit[k]) or (d < 0 and h[i] >= limit[k])):
            i += 1
        if i > last_live:
            free_at = last_live
            continue
        e = min(o[i], limit[k]) if d > 0 else max(o[i], limit[k])
        open_fill = (d > 0 and o[i] <= limit[k]) or (d < 0 and o[i] >= limit[k])
        j, x = i, c[n - 1]
        while j < n:
            if (j > i or open_fill) and (d * (o[j] - sl[k]) <= 0 or d * (o[j] - tp[k]) >= 0):
                x = o[j]
                break
            if (d > 0 and lo[j] <= sl[k]) or (d < 0 and h[j] >= sl[k]):
                x = sl[k]
                break
            if ((d > 0 and h[j] >= tp[k]) or (d < 0 and lo[j] <= tp[k])) and (
                j > i or open_fill or d * (c[i] - tp[k]) >= 0
            ):
                x = tp[k]
                break
            j += 1
        j = min(j, n - 1)
        r = x * (1 - comm) / (e * (1 + comm)) - 1 if d > 0 else (e * (1 - comm) - x * (1 + comm)) / e
        balance *= 1 + r
        free_at = j
    return balance


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise OSError(field)


def _extra_peak_bytes(fn: Callable[[], Any]) -> int | None:
    """Peak resident memory that ``fn`` adds above the resident memory before it (Linux: reset
    the high-water mark, run, read it); None where /proc does not allow it."""
    try:
        before = _status_kib("VmRSS:")
        Path("/proc/self/clear_refs").write_text("5")
        fn()
        return (_status_kib("VmHWM:") - before) * 1024
    except OSError:
        return None


def test_bench_simulate_vs_references(benchmark: Any, market: dict[str, Any]) -> None:
    k, s, n = market["klines"], market["signals"], market["n"]
    settings = {"spread_pct": 0.0, "commission_pct": 0.02}
    result = benchmark.pedantic(lambda: simulate(k, s, **settings), rounds=3, iterations=1, warmup_rounds=1)
    sim_t = benchmark.stats.stats.min

    arrays = [np.ascontiguousarray(k[col].to_numpy()) for col in ("open", "high", "low", "close")]
    up = np.where(market["long"], 1, -1).astype(np.int8)
    lim, tp, sl = (s[col].to_numpy() for col in ("limit_price", "tp_price", "sl_price"))
    wait = 30 * 24 * 60
    bare_t, bare_bal = best_of(lambda: bare_loop(*arrays, market["at"], up, lim, tp, sl, 4, wait, 0.0002))
    try:
        vbt_t = _vectorbt_time(k, market)
    except ImportError as exc:  # the comparison is reported as missing, the rest still measured
        print(f"\n  vectorbt not importable here ({exc}); its row and ratio are left out")
        vbt_t = float("nan")
    bt_t, bt_n = _backtesting_time(k, market)

    print(f"\n  candles {n:,}, signals {N_SIGNALS:,}, trades {result.summary['total_trades']:,}")
    print(f"  simulate (all bookkeeping)  {sim_t * 1e3:9.1f} ms  {n / sim_t / 1e6:8.1f} M candles/s")
    print(f"  bare numba loop             {bare_t * 1e3:9.1f} ms  {n / bare_t / 1e6:8.1f} M candles/s")
    print(f"  vectorbt from_signals       {vbt_t * 1e3:9.1f} ms  {n / vbt_t / 1e6:8.1f} M candles/s")
    print(f"  backtesting.py (run on {bt_n:,} candles, time scaled to {n:,})")
    print(f"                              {bt_t * 1e3:9.1f} ms  {n / bt_t / 1e6:8.2f} M candles/s")
    print(
        f"  ratios: simulate / bare {sim_t / bare_t:.1f}x; vectorbt / simulate {vbt_t / sim_t:.1f}x; "
        f"backtesting.py / simulate {bt_t / sim_t:.0f}x"
    )
    candles_bytes = k.estimated_size()
    extra = _extra_peak_bytes(lambda: simulate(k, s, **settings))
    if extra is not None:
        print(
            f"  memory: simulate adds at most {extra / 2**20:,.0f} MiB to the loaded candles "
            f"({candles_bytes / 2**20:,.0f} MiB): peak = {1 + extra / candles_bytes:.1f}x the candles"
        )
    print(f"  final balance: simulate {result.summary['final_balance']:.4f}, bare loop {bare_bal:.4f}")
    assert result.summary["total_trades"] > 0


def _vectorbt_time(k: pl.DataFrame, market: dict[str, Any]) -> float:
    import pandas as pd
    import vectorbt as vbt

    n, at, long = market["n"], market["at"], market["long"]
    index = pd.DatetimeIndex(k["open_time"].to_numpy().astype("datetime64[ms]"))
    close = pd.Series(k["close"].to_numpy(), index=index)
    entries, short = np.zeros(n, bool), np.zeros(n, bool)
    entries[at[long]] = True
    short[at[~long]] = True
    ohl = {c: k[c].to_numpy() for c in ("open", "high", "low")}

    def run() -> Any:
        return vbt.Portfolio.from_signals(
            close,
            entries=entries,
            short_entries=short,
            sl_stop=DIST,
            tp_stop=DIST,
            fees=0.0002,  # commission_pct=0.02 of simulate: the same cost on both sides
            init_cash=100.0,
            freq="1min",
            **ohl,
        )

    t, _ = best_of(run, rounds=1)
    return t


def _backtesting_time(k: pl.DataFrame, market: dict[str, Any]) -> tuple[float, int]:
    from backtesting import Backtest, Strategy

    part = k.head(BT_SLICE)
    frame = part.select(
        pl.col("open").alias("Open"),
        pl.col("high").alias("High"),
        pl.col("low").alias("Low"),
        pl.col("close").alias("Close"),
        pl.col("volume").alias("Volume"),
    ).to_pandas()
    import pandas as pd

    frame.index = pd.DatetimeIndex(part["open_time"].to_numpy().astype("datetime64[ms]"))
    at = market["at"][market["at"] < BT_SLICE]
    sides = dict(zip(at.tolist(), market["long"][: at.shape[0]].tolist(), strict=True))

    class Signals(Strategy):
        def init(self) -> None:
            pass

        def next(self) -> None:
            bar = len(self.data) - 1
            if bar in sides and not self.position and not self.orders:
                px = self.data.Close[-1]
                if sides[bar]:
                    self.buy(limit=px, tp=px * (1 + DIST), sl=px * (1 - DIST))
                else:
                    self.sell(limit=px, tp=px * (1 - DIST), sl=px * (1 + DIST))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt = Backtest(frame, Signals, cash=1e12, commission=0.0002)
        t0 = time.perf_counter()
        bt.run()
        elapsed = time.perf_counter() - t0
    return elapsed * market["n"] / BT_SLICE, BT_SLICE


# ------------------------------------------------------------------ divide search


def _walk(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, n)))
    open_ = np.concatenate([[100.0], close[:-1]])
    high = np.maximum(open_, close) * (1 + np.abs(rng.normal(0, 0.004, n)))
    low = np.minimum(open_, close) * (1 - np.abs(rng.normal(0, 0.004, n)))
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * 3_600_000,
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "volume": np.ones(n),
        }
    )


def _walk_signals(k: pl.DataFrame, seed: int, count: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    at = np.sort(rng.choice(k.height - 1, count, replace=False))
    c = k["close"].to_numpy()[at]
    return pl.DataFrame(
        {
            "open_time": k["open_time"].to_numpy()[at],
            "side": ["long"] * count,
            "limit_price": c * 0.995,
            "tp_price": c * 1.03,
            "sl_price": c * 0.98,
        }
    )


def test_bench_divide_search(benchmark: Any) -> None:
    coins = [f"C{n:02d}" for n in range(24)]
    klines = {c: _walk(20_000, n) for n, c in enumerate(coins)}
    signals = {c: _walk_signals(klines[c], 100 + n, 800) for n, c in enumerate(coins)}
    settings = resolve_settings({"spread_pct": 0.05})
    t0 = time.perf_counter()
    book = build_book(
        klines, signals, coins, settings, timeframe="1h", start_ts=None, end_ts=None, market="crypto"
    )
    build_t = time.perf_counter() - t0
    t0 = time.perf_counter()
    recommend_divide(book, settings)  # computes each placed order's outcome once (the per-coin work)
    first_t = time.perf_counter() - t0
    rec = benchmark.pedantic(lambda: recommend_divide(book, settings), rounds=5, iterations=1)
    search_t = benchmark.stats.stats.min
    cpu = []
    for _ in range(5):  # CPU time of this process: steadier than wall time on a shared machine
        c0 = time.process_time()
        recommend_divide(book, settings)
        cpu.append(time.process_time() - c0)
    total_t, _ = best_of(lambda: simulate_portfolio(klines, signals, coins=coins, spread_pct=0.05), rounds=1)
    candles = sum(k.height for k in klines.values())
    sweeps = len(divide_candidates(len(coins))) + 1
    n_signals = sum(s.height for s in signals.values())
    print(f"\n  {len(coins)} coins x 20,000 1h candles ({candles:,}), {n_signals:,} signals")
    print(f"  build (validate, filter)   {build_t * 1e3:8.1f} ms")
    print(f"  first search (+ outcomes)  {first_t * 1e3:8.1f} ms")
    print(
        f"  divide search, {sweeps} sweeps  {search_t * 1e3:8.1f} ms beyond the per-coin work "
        f"({search_t / sweeps * 1e3:.1f} ms per sweep; CPU {min(cpu) * 1e3:.1f} ms)"
    )
    print(f"  whole simulate_portfolio   {total_t * 1e3:8.1f} ms; recommended divide {rec['divide']}")
    assert rec["method"] == "return_dd_score"
