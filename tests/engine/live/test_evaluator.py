"""The live evaluator's contract beyond parity: a late expiry after a data gap, the rebuild of a
state from an anchor, indicators shared per coin, and the refusals of bad input."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import svc_engine as sv
from svc_engine import live
from svc_engine.strategy import ast as A
from svc_engine.strategy import compile_strategy
from svc_engine.strategy import values as V

H = 3_600_000


def bars(rows: list[tuple[int, float, float, float, float]]) -> pl.DataFrame:
    """Candles from (hour, open, high, low, close)."""
    return pl.DataFrame(
        {
            "open_time": [r[0] * H for r in rows],
            "open": [r[1] for r in rows],
            "high": [r[2] for r in rows],
            "low": [r[3] for r in rows],
            "close": [r[4] for r in rows],
            "volume": [1.0] * len(rows),
        }
    )


def walk(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, n)))
    open_ = np.r_[close[0], close[:-1]]
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * H,
            "open": open_,
            "high": np.maximum(open_, close) * 1.003,
            "low": np.minimum(open_, close) * 0.997,
            "close": close,
            "volume": np.ones(n),
        }
    )


def replay(watch: live.Watchlist, frames: dict[str, pl.DataFrame], state: np.ndarray) -> pl.DataFrame:
    """Advance candle by candle through every frame (they share their times)."""
    first = int(state["last_ms"].min())
    times = [t for t in frames[next(iter(frames))]["open_time"].to_list() if t > first]
    parts = []
    for upto in times:
        given = {c: f.filter(pl.col("open_time") <= upto) for c, f in frames.items()}
        parts.append(live.events_frame(watch, live.advance(watch, state, given)))
    return pl.concat(parts)


def test_an_order_that_outlives_a_data_gap_expires_on_its_last_live_candle_freeing_that_candle() -> None:
    # The order of 01:00 (limit 10% under the close) is live until 05:00: on 02:00 and 03:00, then
    # the data jumps to 06:00. It expired at 03:00, which frees that candle: the signal at 03:00
    # (close crosses above 100 again) places its order, live until 07:00, as the backtest does,
    # although live learns it only at 06:00; that order fills at 06:00.
    k = bars(
        [
            (0, 99.0, 99.5, 98.5, 99.0),
            (1, 99.0, 101.5, 98.9, 101.0),
            (2, 101.0, 101.2, 98.0, 99.0),
            (3, 99.0, 101.5, 98.8, 101.0),
            (6, 101.0, 101.5, 90.0, 95.0),
            (7, 95.0, 99.0, 94.0, 98.0),
        ]
    )
    s = compile_strategy(
        A.Cross("above", A.Field("close"), A.Num(100.0)),
        "5%",
        "20%",
        entry_price=A.PctOff(-10.0, A.Field("close")),
    )
    cfg = {
        "max_wait_days": 3 / 24,
        "min_candles_between_signals": 1,
        "spread_pct": 0.0,
        "commission_pct": 0.0,
    }
    watch = live.watchlist([s], [(0, "X")], "1h", **cfg)
    events = replay(watch, {"X": k}, live.new_state(watch))
    seen = [(e["event"], e["signal_time"] // H, e["time"] // H) for e in events.to_dicts()]
    assert seen == [
        ("placed", 1, 1),
        ("expired", 1, 3),
        ("placed", 3, 3),
        ("filled", 3, 6),
        ("closed", 3, 7),
    ]
    fill = events.filter(pl.col("event") == "filled").row(0, named=True)
    assert fill["price"] == pytest.approx(90.9)  # min(open, 0.9 x 101)
    bt = sv.backtest(s, k, "1h", **cfg).all_positions
    assert bt["fate"].to_list() == ["expired", "traded"]
    assert (bt["signal_time"].dt.epoch("ms") // H).to_list() == [1, 3]
    closed = events.filter(pl.col("event") == "closed").row(0, named=True)
    trade = sv.backtest(s, k, "1h", **cfg).trades.row(0, named=True)
    assert (closed["reason"], closed["price"], closed["return_pct"]) == (
        trade["exit_reason"],
        trade["exit_price"],
        trade["return_pct"],
    )


def test_a_state_rebuilt_from_an_anchor_continues_as_the_one_kept_candle_by_candle() -> None:
    programs = [
        compile_strategy("close crosses above SMA(10)", "2%", "trailing stop 1.5%"),
        compile_strategy(
            "RSI(7) crosses below 40",
            "1.5 x ATR(14)",
            "2%",
            market_type="futures",
            position_side="short",
            exit_condition="after 5 candles",
        ),
    ]
    frames = {"A": walk(400, 1), "B": walk(400, 2)}
    pairs = [(p, c) for p in range(2) for c in frames]
    cfg = {"spread_pct": 0.05, "sizing": "quantity", "quantity": 1.0, "min_candles_between_signals": 2}
    watch = live.watchlist(programs, pairs, "1h", **cfg)
    kept = live.new_state(watch)
    head = {c: f[:300] for c, f in frames.items()}
    replay(watch, head, kept)
    # the worker restarts: each pair from its own anchor (its last order's signal, or where it was flat)
    rebuilt = []
    for pair in range(len(watch)):
        anchor = int(kept["signal_ms"][pair]) if kept["phase"][pair] else int(kept["last_ms"][pair]) + H
        one = live.watchlist([programs[watch.program[pair]]], [(0, pairs[pair][1])], "1h", **cfg)
        state, _ = live.rebuild_state(one, {pairs[pair][1]: head[pairs[pair][1]]}, anchor, chunk=17)
        rebuilt.append(state)
    again = np.concatenate(rebuilt)
    # what a phase reads (the rest is left over from earlier orders); money restarts at the anchor
    always = ("phase", "due", "last_ms", "seen")
    order = ("signal_index", "signal_ms", "deadline_ms", "limit", "tp", "sl", "tp_dist", "sl_dist", "moves")
    trade = (
        "fill_index",
        "fill_ms",
        "entry_raw",
        "open_fill",
        "best",
        "stop",
        "stop_reason",
        "gap_reason",
        "armed",
        "be_armed",
        "stake",
    )
    busy, open_ = kept["phase"] != 0, kept["phase"] == 2
    for names, rows in ((always, slice(None)), (order, busy), (trade, open_)):
        for name in names:
            assert np.array_equal(again[name][rows], kept[name][rows], equal_nan=True), name
    assert busy.any()
    tail_kept = replay(watch, frames, kept).filter(pl.col("time") >= 300 * H)
    tail_again = replay(watch, frames, again).filter(pl.col("time") >= 300 * H)
    assert tail_kept.drop("profit").equals(tail_again.drop("profit"))
    assert tail_kept.height > 10


def test_an_indicator_is_computed_once_per_coin_for_every_program_that_uses_it(monkeypatch: Any) -> None:
    calls: list[A.Node] = []
    inner = V.VALUE[A.Ind]

    def counted(ctx: Any, node: A.Ind) -> np.ndarray:
        calls.append(node)
        return inner(ctx, node)

    monkeypatch.setitem(V.VALUE, A.Ind, counted)
    programs = [
        compile_strategy("close crosses above SMA(20)"),
        compile_strategy("close crosses below SMA(20)", "2 x ATR(14)"),
        compile_strategy("SMA(20) crosses above EMA(50) and close > SMA(20)", "3%", "2 x ATR(14)"),
    ]
    frames = {"A": walk(600, 3), "B": walk(600, 4), "C": walk(600, 5)}
    watch = live.watchlist(programs, [(p, c) for p in range(3) for c in frames], "1h", spread_pct=0)
    live.rebuild_state(watch, frames, int(frames["A"]["open_time"][-50]))
    closes = 50 // 64 + 1  # the replay's advances
    nodes = {"sma": A.Ind("sma", (20,)), "ema": A.Ind("ema", (50,)), "atr": A.Ind("atr", (14,))}
    counts = {name: calls.count(node) for name, node in nodes.items()}
    assert counts == {"sma": 3 * closes, "ema": 3 * closes, "atr": 3 * closes}  # once per coin and advance


def test_bad_input_is_refused_with_the_reason() -> None:
    watch = live.watchlist(["close > open"], [(0, "X")], "1h", spread_pct=0)
    state = live.new_state(watch)
    k = walk(50, 6)
    with pytest.raises(ValueError, match="no candles for X"):
        live.advance(watch, state, {})
    with pytest.raises(ValueError, match="STATE_DTYPE"):
        live.advance(watch, np.zeros(1), {"X": k})
    live.advance(watch, state, {"X": k[:40]})
    with pytest.raises(ValueError, match="do not include"):
        live.advance(watch, state, {"X": k[42:]})
    with pytest.raises(ValueError, match="twice"):
        live.watchlist(["close > open"], [(0, "X"), (0, "X")], "1h")
    with pytest.raises(ValueError, match="spread_pct"):
        live.new_state(live.watchlist(["close > open"], [(0, "X")], "1h"))
