"""The engine agrees with the plain reference (tests/reference_sim.py) trade for trade, on slices
of real series with generated signals and settings: long and short, clamp and reject, gaps,
expiry, end of data, ranges, leverage (a drifting walk on which 1x shorts with far stops reach their
liquidation level 2E); single coin and portfolio."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import polars as pl
import pytest
import reference_sim as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_helpers import DATASETS, candle_tuples, real, signal_dicts

from svc_engine.data.times import ms_columns
from svc_engine.sim import simulate, simulate_portfolio

pytestmark = pytest.mark.skipif(not (DATASETS / "crypto").is_dir(), reason="real datasets not found")

SERIES = (
    "crypto/ETHUSDT-1h",
    "crypto/SOLUSDT-1h",
    "crypto/BTCUSDT-1m",
    "crypto/BTCUSDT-4h",
    "synthetic/gappy-1h",
    "synthetic/pump-1h",
)
TF = {
    "synthetic/gappy-1h": 3_600_000,
    "synthetic/pump-1h": 3_600_000,
    "crypto/ETHUSDT-1h": 3_600_000,
    "crypto/SOLUSDT-1h": 3_600_000,
    "crypto/BTCUSDT-1m": 60_000,
    "crypto/BTCUSDT-4h": 14_400_000,
}
START = {"crypto/BTCUSDT-4h": 1_800}  # around real gaps of the 4h file
HYP = settings(
    max_examples=int(os.environ.get("SIM_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def series(draw: st.DrawFn) -> tuple[str, pl.DataFrame]:
    name = draw(st.sampled_from(SERIES))
    full = real(name)
    n = draw(st.integers(20, 400))
    first = START.get(name, 0) + draw(st.integers(0, min(len(full) - n, 1500)))
    return name, full.slice(first, n)


@st.composite
def signal_frame(draw: st.DrawFn, k: pl.DataFrame) -> pl.DataFrame:
    n = draw(st.integers(0, 40))
    times, closes = k["open_time"].to_list(), k["close"].to_list()
    rows = []
    for _ in range(n):
        at = draw(st.integers(0, len(times) - 1))
        side = draw(st.sampled_from(["long", "short"]))
        base = closes[at]
        limit = draw(st.one_of(st.none(), st.floats(-0.03, 0.03).map(lambda u, b=base: b * (1 + u))))
        ref_price = base if limit is None else limit
        up = 1 if side == "long" else -1
        tp = ref_price * (
            1 + up * draw(st.sampled_from([-0.01, 0.0005, 0.001, 0.004, 0.01, 0.02, 0.05, 0.4]))
        )
        # 1.5 and 3: a short's stop beyond 2E, where at 1x the liquidation level takes its place
        sl_frac = draw(st.sampled_from([-0.01, 0.0005, 0.001, 0.003, 0.01, 0.03, 0.3, 0.7, 1.5, 3.0]))
        sl = ref_price * (1 - up * sl_frac)
        if draw(st.integers(0, 30)) == 0:
            tp = draw(st.sampled_from([None, math.nan, -1.0]))
        rows.append((times[at], side, limit, tp, sl))
    return pl.DataFrame(
        rows,
        schema={
            "open_time": pl.Int64,
            "side": pl.Utf8,
            "limit_price": pl.Float64,
            "tp_price": pl.Float64,
            "sl_price": pl.Float64,
        },
        orient="row",
    )


@st.composite
def sim_settings(draw: st.DrawFn, tf_ms: int) -> dict:
    futures = draw(st.booleans())
    wait_candles = draw(st.sampled_from([1, 3, 10, 50, 500]))
    s = {
        "commission_pct": draw(st.sampled_from([0.0, 0.1, 0.2])),
        "position_size_pct": draw(st.sampled_from([100.0, 50.0, 10.0])),
        "min_candles_between_signals": draw(st.integers(0, 6)),
        "max_wait_days": wait_candles * tf_ms / 86_400_000,
        "min_profit_pct": draw(st.sampled_from([0.1, 0.5])),
        "max_profit_pct": draw(st.sampled_from([3.0, 30.0])),
        "min_loss_pct": draw(st.sampled_from([0.1, 0.5])),
        "max_loss_pct": draw(st.sampled_from([2.0, 50.0, 400.0])),
        "signal_filter_mode": draw(st.sampled_from(["clamp", "reject"])),
        "spread_pct": draw(st.sampled_from([0.0, 0.05, 0.3])),
        "initial_balance": draw(st.sampled_from([100.0, 1000.0])),
        "market_type": "futures" if futures else "spot",
        "leverage": draw(st.sampled_from([1.0, 3.0, 50.0])) if futures else 1.0,
    }
    return s


def close(a: float, b: float, tol: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def assert_same_trades(engine: pl.DataFrame, reference: list[ref.Trade], balance_tol: float = 1e-10) -> None:
    assert engine.height == len(reference)
    for row, t in zip(engine.iter_rows(named=True), reference, strict=True):
        got = (row["signal_time"], row["fill_time"], row["exit_time"], row["side"], row["exit_reason"])
        assert got == (t.signal_time, t.fill_time, t.exit_time, t.side, t.reason)
        assert close(row["entry_price"], t.entry_price) and close(row["exit_price"], t.exit_price)
        assert close(row["return_pct"] / 100, t.return_frac)
        assert close(row["pnl"], t.pnl, balance_tol) and close(row["balance"], t.balance, balance_tol)


def run_both(k: pl.DataFrame, s: pl.DataFrame, cfg: dict, tf_ms: int, rng: tuple | None):
    start_ts, end_ts = rng if rng else (None, None)
    engine = simulate(k, s, start_ts=start_ts, end_ts=end_ts, **cfg)
    other = {x: v for x, v in cfg.items() if x not in ("spread_pct", "market_type")}
    reference = ref.run_single(
        candle_tuples(k),
        signal_dicts(s),
        other,
        tf_ms=tf_ms,
        half_spread=cfg["spread_pct"] / 200,
        start_ts=start_ts,
        end_ts=end_ts,
    )
    return engine, reference


@HYP
@given(data=st.data())
def test_single_coin_matches_reference(data: st.DataObject) -> None:
    name, k = data.draw(series())
    s = data.draw(signal_frame(k))
    cfg = data.draw(sim_settings(TF[name]))
    rng = None
    if data.draw(st.booleans()):
        t = k["open_time"].to_list()
        a = data.draw(st.integers(0, len(t) - 1))
        b = data.draw(st.integers(a, len(t) - 1))
        rng = (t[a] // 1000, t[b] // 1000 + 1)
    engine, reference = run_both(k, s, cfg, TF[name], rng)
    json.dumps(engine.to_dict(), allow_nan=False)
    assert_same_trades(ms_columns(engine.trades), reference.trades)
    assert engine.all_positions["fate"].to_list() == reference.fates
    eq = engine.equity["equity"].to_numpy()
    np.testing.assert_allclose(eq, reference.equity, rtol=1e-10, atol=1e-10)
    assert close(engine.summary["final_balance"], reference.final_balance, 1e-10)
    assert close(engine.summary["max_drawdown_pct"], reference.max_drawdown_pct, 1e-9)
    assert engine.summary["total_signals"] == sum(
        f in ("traded", "expired", "skipped_no_slot") for f in reference.fates
    )
    counts = engine.signal_counts
    assert counts["placed"] == counts["filled"] + counts["expired"] + counts["skipped_no_slot"]
    assert sum(v for name, v in counts.items() if name != "placed") == engine.all_positions.height


@HYP
@given(data=st.data())
def test_portfolio_matches_reference(data: st.DataObject) -> None:
    n_coins = data.draw(st.integers(1, 4))
    pool = data.draw(
        st.sampled_from(
            [
                ("crypto/ETHUSDT-1h", "crypto/SOLUSDT-1h", "synthetic/gappy-1h"),
                ("crypto/BTCUSDT-1m",),
                ("synthetic/pump-1h", "crypto/ETHUSDT-1h"),
            ]
        )
    )
    tf_ms = TF[pool[0]]
    klines, signals = {}, {}
    for n in range(n_coins):
        full = real(pool[n % len(pool)])
        size = data.draw(st.integers(20, 250))
        first = data.draw(st.integers(0, min(len(full) - size, 1500)))
        klines[f"C{n}"] = full.slice(first, size)
        signals[f"C{n}"] = data.draw(signal_frame(klines[f"C{n}"]))
    coins = data.draw(st.permutations(list(klines)))
    divide = data.draw(st.integers(1, n_coins + 1))
    cfg = data.draw(sim_settings(tf_ms))
    cfg.pop("position_size_pct")
    initial = cfg.pop("initial_balance")
    start_ts = None
    if data.draw(st.booleans()):  # each coin clipped to its own part of [start_ts, end of data]
        t = klines["C0"]["open_time"].to_list()
        start_ts = t[data.draw(st.integers(0, len(t) - 1))] // 1000
        if any(k["open_time"][-1] < start_ts * 1000 for k in klines.values()):
            start_ts = None
    engine = simulate_portfolio(
        klines, signals, coins=coins, divide=divide, initial_balance=initial, start_ts=start_ts, **cfg
    )
    json.dumps(engine.to_dict(), allow_nan=False)
    other = {x: v for x, v in cfg.items() if x not in ("spread_pct", "market_type")} | {
        "initial_balance": initial
    }
    kw = {"tf_ms": tf_ms, "half_spread": dict.fromkeys(coins, cfg["spread_pct"] / 200), "start_ts": start_ts}
    by_coin = {c: candle_tuples(k) for c, k in klines.items()}
    sig_by_coin = {c: signal_dicts(s) for c, s in signals.items()}
    reference = ref.run_portfolio(by_coin, sig_by_coin, other, coins=coins, divide=divide, **kw)
    by_key = sorted(reference.trades, key=lambda t: (t.fill_time, coins.index(t.coin)))
    assert engine.trades["coin"].to_list() == [t.coin for t in by_key]
    assert_same_trades(ms_columns(engine.trades), by_key)
    assert engine.all_positions["fate"].to_list() == reference.fates
    np.testing.assert_allclose(engine.equity["equity"].to_numpy(), reference.equity, rtol=1e-10, atol=1e-10)
    assert engine.summary["max_concurrent_positions"] == reference.max_open
    best, conc = ref.recommended_divide(by_coin, sig_by_coin, other, coins=coins, **kw)
    assert engine.recommended_divide["divide"] == best
    assert engine.recommended_divide["max_concurrent_signals"] == conc


def test_1x_shorts_on_a_doubling_walk_are_liquidated_as_in_the_reference() -> None:
    # the draws above reach a 1x liquidation only now and then; here every short's stop (4x the
    # limit, or none at 400 % allowed) lies beyond 2E, on a walk that doubles in about 70 candles
    k = real("synthetic/pump-1h").slice(100, 400)
    t, c = k["open_time"].to_list(), k["close"].to_list()
    s = pl.DataFrame(
        [(t[n], "short", None, c[n] * 0.7, c[n] * 4.0) for n in range(0, 400, 9)],
        schema=["open_time", "side", "limit_price", "tp_price", "sl_price"],
        orient="row",
    )
    cfg = {
        "commission_pct": 0.1,
        "position_size_pct": 10.0,
        "min_candles_between_signals": 0,
        "max_wait_days": 1.0,
        "min_profit_pct": 0.1,
        "max_profit_pct": 50.0,
        "min_loss_pct": 0.1,
        "max_loss_pct": 400.0,
        "signal_filter_mode": "clamp",
        "spread_pct": 0.05,
        "initial_balance": 1000.0,
        "market_type": "futures",
        "leverage": 1.0,
    }
    engine, reference = run_both(k, s, cfg, TF["synthetic/pump-1h"], None)
    assert_same_trades(ms_columns(engine.trades), reference.trades)
    # five shorts liquidated at 2E, each losing its 10 % stake; the sixth still open at the end
    assert engine.trades["exit_reason"].to_list() == ["liquidation"] * 5 + ["end"]
    assert engine.all_positions["fate"].to_list() == reference.fates


@st.composite
def reversing(draw: st.DrawFn, k: pl.DataFrame) -> pl.DataFrame:
    """Signals of stop-and-reverse (docs/sim.md): market or limit orders, most of them reversing,
    some without a take-profit or a stop (infinite on their own side)."""
    s = draw(signal_frame(k))
    n = s.height
    market = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    rev = draw(st.lists(st.sampled_from([True, True, True, False]), min_size=n, max_size=n))
    open_tp = draw(st.lists(st.sampled_from([False, False, True]), min_size=n, max_size=n))
    open_sl = draw(st.lists(st.sampled_from([False, False, True]), min_size=n, max_size=n))
    up = pl.when(pl.col("side") == "long").then(1.0).otherwise(-1.0)
    return s.with_columns(
        pl.Series("order", ["market" if m else "limit" for m in market], dtype=pl.Utf8),
        pl.Series("reverse", rev, dtype=pl.Boolean),
        pl.when(pl.Series(open_tp, dtype=pl.Boolean))
        .then(up * np.inf)
        .otherwise(pl.col("tp_price"))
        .alias("tp_price"),
        pl.when(pl.Series(open_sl, dtype=pl.Boolean))
        .then(-up * np.inf)
        .otherwise(pl.col("sl_price"))
        .alias("sl_price"),
    )


@HYP
@given(data=st.data())
def test_stop_and_reverse_matches_reference(data: st.DataObject) -> None:
    name, k = data.draw(series())
    s = data.draw(reversing(k))
    cfg = data.draw(sim_settings(TF[name])) | {"market_type": "futures"}
    engine, reference = run_both(k, s, cfg, TF[name], None)
    assert_same_trades(ms_columns(engine.trades), reference.trades)
    assert engine.all_positions["fate"].to_list() == reference.fates
    np.testing.assert_allclose(engine.equity["equity"].to_numpy(), reference.equity, rtol=1e-10, atol=1e-10)
    assert close(engine.summary["max_drawdown_pct"], reference.max_drawdown_pct, 1e-9)
    # a portfolio of these coins, each with its own reversing signals
    coins = {"A": k, "B": real("synthetic/gappy-1h").slice(0, 300) if TF[name] == 3_600_000 else k}
    signals = {"A": s, "B": data.draw(reversing(coins["B"]))}
    divide = data.draw(st.integers(1, 2))
    pcfg = {x: v for x, v in cfg.items() if x != "position_size_pct"}
    initial = pcfg.pop("initial_balance")
    p = simulate_portfolio(coins, signals, divide=divide, initial_balance=initial, **pcfg)
    other = {x: v for x, v in pcfg.items() if x not in ("spread_pct", "market_type")} | {
        "initial_balance": initial
    }
    kw = {"tf_ms": TF[name], "half_spread": dict.fromkeys(coins, cfg["spread_pct"] / 200)}
    by_coin = {c: candle_tuples(x) for c, x in coins.items()}
    sig_by_coin = {c: signal_dicts(x) for c, x in signals.items()}
    pref = ref.run_portfolio(by_coin, sig_by_coin, other, coins=["A", "B"], divide=divide, **kw)
    by_key = sorted(pref.trades, key=lambda t: (t.fill_time, ["A", "B"].index(t.coin)))
    assert_same_trades(ms_columns(p.trades), by_key)
    assert p.all_positions["fate"].to_list() == pref.fates
    np.testing.assert_allclose(p.equity["equity"].to_numpy(), pref.equity, rtol=1e-10, atol=1e-10)
