"""Whole backtests on the shared real datasets, bit for bit: the digest of each run's trades (every
column), equity and drawdown (every candle) and summary (floats by their bits) was recorded before
the speed work of issue #32 (commit 313c8c1) and must not move with it. The same run from a pandas
frame in backtesting.py's form and from a stored symbol gives the same digest. A change that moves
one on purpose (a semantics change) records the new digest in the same commit and says why."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import svc_engine as sv

DATASETS = Path(__file__).resolve().parents[4] / "shared" / "datasets"
pytestmark = pytest.mark.skipif(not DATASETS.exists(), reason="shared datasets not found")
MACD_BB_RSI = (
    "RSI(14) < 70 and MACD line crosses above MACD signal line and close > lower Bollinger band (20, 2)",
    "2 x ATR(14) above entry",
    "1 x ATR(14) below entry",
)
BB_MACD_EMA = (
    "close crosses above the upper Bollinger band (20, 2) and MACD histogram > 0 and close > EMA(200)",
    "3 x ATR(14) above entry",
    "1.5 x ATR(14) below entry",
)
BTC = "crypto/BTCUSDT-1m"
# name: (file, timeframe, market, words, settings, digest recorded at 313c8c1, trades)
CASES: dict[str, tuple[str, str, str, tuple[Any, ...], dict[str, Any], str, int]] = {
    "btc1m_macd_bb_rsi": (BTC, "1m", "crypto", MACD_BB_RSI, {}, "86f751ef6a00ad60332a4a56", 89634),
    "btc1m_bb_macd_ema": (BTC, "1m", "crypto", BB_MACD_EMA, {}, "0ce5b169b3f070695af5322d", 50069),
    "btc1m_rsi_ema": (
        BTC,
        "1m",
        "crypto",
        ("RSI(14) crosses above 30 and close is above EMA 200", "2%", "1%"),
        {"commission_pct": 0.1},
        "f1da4f49c4da2f065d84f475",
        2413,
    ),
    "eth1h_ema_volume": (
        "crypto/ETHUSDT-1h",
        "1h",
        "crypto",
        (
            "the 50 EMA crosses over the 200 EMA while volume is above its 20-candle average",
            "risk reward 2",
            "stop loss below the lowest low of the last 10 candles",
        ),
        {},
        "e1b6042130a45d92f65e977e",
        8,
    ),
    "aapl1d_bollinger": (
        "us_stocks/AAPL-1d",
        "1d",
        "us_stocks",
        (
            "close breaks above the upper Bollinger band (20, 2) after 3 red candles in a row",
            "take profit at 2 x ATR(14)",
            "stop loss at the middle band",
        ),
        {},
        "257011fa033ceed11d41f559",
        61,
    ),
    "eurusd1h_macd": (
        "forex/EURUSD-1h",
        "1h",
        "forex",
        ("MACD histogram turns positive and price is within 2% of the 100-day SMA", None, None),
        {"spread_pct": 0.01},
        "8ed4955e7305fe9ce215aec0",
        460,
    ),
}


def digest(r: sv.BacktestResult) -> str:
    """sha256 (24 hex) of every trade column, the equity and drawdown arrays and the summary."""

    def f64(x: Any) -> bytes:
        return np.ascontiguousarray(np.asarray(x, dtype=np.float64)).tobytes()

    h = hashlib.sha256()
    for name in r.trades.columns:
        col = r.trades[name]
        col = col.dt.epoch("ms") if col.dtype.is_temporal() else col
        h.update(name.encode())
        h.update(str(col.to_list()).encode() if col.dtype == pl.Utf8 else f64(col.to_numpy()))
    h.update(f64(r.equity["equity"].to_numpy()))
    h.update(f64(r.equity["drawdown_pct"].to_numpy()))
    summary = {k: (float(v).hex() if isinstance(v, float) else v) for k, v in sorted(r.summary.items())}
    h.update(json.dumps(summary, sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


@pytest.fixture(scope="module")
def frames() -> dict[str, pl.DataFrame]:
    return {}


def _frame(frames: dict[str, pl.DataFrame], name: str) -> pl.DataFrame:
    if name not in frames:
        frames[name] = pl.read_parquet(DATASETS / f"{name}.parquet")  # as read: several chunks
    return frames[name]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_whole_backtest_is_bit_for_bit_the_recorded_one(frames: dict[str, pl.DataFrame], case: str) -> None:
    name, tf, market, words, settings, want, trades = CASES[case]
    k = _frame(frames, name)
    s = sv.compile_strategy(*words)
    first = sv.simulate(k, s.evaluate(k), timeframe=tf, market=market, **settings)
    again = sv.simulate(k, s.evaluate(k), timeframe=tf, market=market, **settings)  # arrays kept
    assert (first.summary["total_trades"], digest(first), digest(again)) == (trades, want, want)


@pytest.mark.slow
def test_pandas_frame_and_stored_symbol_give_the_same_bits(frames: dict[str, pl.DataFrame]) -> None:
    pd = pytest.importorskip("pandas")
    name, tf, market, words, settings, want, _ = CASES["btc1m_macd_bb_rsi"]
    k = _frame(frames, name)
    p = pd.DataFrame({c.capitalize(): k[c].to_numpy() for c in ("open", "high", "low", "close", "volume")})
    p.index = pd.DatetimeIndex(k["open_time"].to_numpy().astype("datetime64[ms]"))
    s = sv.compile_strategy(*words)
    assert digest(sv.simulate(p, s.evaluate(p), timeframe=tf, market=market, **settings)) == want
    store = sv.DataStore(tempfile.mkdtemp(prefix="bits-"))
    store.write_klines("crypto", "BTCUSDT", "1m", k)
    assert digest(sv.backtest(s, "BTCUSDT", "1m", store=store, **settings)) == want
