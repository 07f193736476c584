"""Research-to-live parity: the live evaluator, fed a real series a few candles at a time, places,
fills, expires and closes exactly the positions ``backtest`` gives over the same range.

Random programs of the strategy language (entries from the grammar's families, limit and market
orders, percent / ATR / risk-reward / no take-profit, percent / ATR / trailing / no stop, exit
conditions, holding times, break-even moves, long and short, futures leverage) and random settings
(minimum gap, expiry, clamp or reject, spread, sizing) on real candles of ``../shared/datasets``
(with candles dropped to make gaps), several programs on two coins in one watchlist: every placed
position of every pair is compared field by field with the backtest of that pair.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import svc_engine as sv
from svc_engine import live
from svc_engine.strategy import ast as A
from svc_engine.strategy import compile_strategy
from svc_engine.strategy.errors import StrategyCompileError

REPO = Path(__file__).resolve().parents[3]
DATASETS = Path(os.environ.get("SVC_SHARED_DATASETS", REPO.parent / "shared" / "datasets"))
pytestmark = pytest.mark.skipif(
    not (DATASETS / "crypto").is_dir(),
    reason=f"real datasets not found at {DATASETS} (set SVC_SHARED_DATASETS)",
)
COINS = {"1h": ("ETHUSDT", "SOLUSDT", "LINKUSDT"), "4h": ("BTCUSDT", "AVAXUSDT")}
TF_MS = {"1h": 3_600_000, "4h": 14_400_000}
HYP = settings(
    max_examples=int(os.environ.get("LIVE_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

periods = st.integers(2, 30)
prices = st.one_of(
    st.sampled_from(["close", "open", "high", "low", "typical"]).map(A.Field),
    st.builds(lambda k, n: A.Ind(k, (n,)), st.sampled_from(["sma", "ema", "wma"]), periods),
    st.builds(lambda n, o: A.Ind("bb", (n, 2.0), o), periods, st.sampled_from(["upper", "middle", "lower"])),
    st.builds(lambda n, o: A.Ind("donchian", (n,), o), periods, st.sampled_from(["upper", "lower"])),
)
oscillators = st.one_of(
    st.builds(lambda n: A.Ind("rsi", (n,)), periods),
    st.just(A.Ind("stoch", (14, 3, 3), "%k")),
    st.builds(lambda n: A.Ind("cci", (n,)), periods),
)
predicates = st.one_of(
    st.builds(A.Cross, st.sampled_from(["above", "below"]), prices, prices),
    st.builds(A.Compare, st.sampled_from([">", "<"]), prices, prices),
    st.builds(
        A.Cross, st.sampled_from(["above", "below"]), oscillators, st.integers(20, 80).map(float).map(A.Num)
    ),
    st.builds(A.Compare, st.sampled_from([">", "<"]), oscillators, st.integers(20, 80).map(float).map(A.Num)),
    st.builds(A.Streak, st.sampled_from(["rise", "fall"]), st.integers(1, 3), prices),
    st.builds(A.Candles, st.sampled_from(["green", "red"]), st.integers(1, 3)),
    st.builds(A.NewExtreme, st.sampled_from(["high", "low"]), st.integers(2, 30), st.just(A.Field("close"))),
    st.builds(lambda p: A.Pattern(p), st.sampled_from(["hammer", "doji", "bullish engulfing"])),
    st.builds(lambda c: A.TfCond(c, "1d"), st.builds(A.Candles, st.just("green"), st.just(1))),
)
# The families of issue 29: statistics, change over a span of time, gaps, multiples, calendar.
volume = A.Field("volume")
new_predicates = st.one_of(
    st.builds(
        lambda op, n, k: A.Compare(
            op,
            A.Field("close"),
            A.Arith(
                "-" if op == "<" else "+", A.Ind("sma", (n,)), A.Arith("*", A.Num(k), A.Ind("stddev", (n,)))
            ),
        ),
        st.sampled_from([">", "<"]),
        periods,
        st.sampled_from([1.0, 1.5, 2.0]),
    ),
    st.builds(
        lambda op, n, v: A.Compare(op, A.Ind("zscore", (n,)), A.Num(v)),
        st.sampled_from([">", "<"]),
        periods,
        st.sampled_from([-1.5, 0.0, 1.5]),
    ),
    st.builds(
        lambda op, n, v: A.Compare(op, A.Ind("prank", (n,)), A.Num(v)),
        st.sampled_from([">", "<"]),
        periods,
        st.sampled_from([10.0, 50.0, 90.0]),
    ),
    st.builds(
        lambda op, m, v: A.Compare(op, A.Ind("roct", (m,)), A.Num(v)),
        st.sampled_from([">=", "<="]),
        st.sampled_from([60, 240, 1440, 10_080]),
        st.sampled_from([-2.0, 0.0, 2.0]),
    ),
    st.builds(
        lambda pct: A.Compare(">=", A.Field("open"), A.PctOff(pct, A.Lag(A.Field("close"), 1))),
        st.sampled_from([0.05, 0.2]),
    ),
    st.builds(
        lambda k: A.Compare(">=", volume, A.Arith("*", A.Num(k), A.Ind("sma", (20,), "", volume))),
        st.sampled_from([1.5, 2.0]),
    ),
    st.builds(lambda h: A.Compare(">=", A.Ind("hour", ()), A.Num(h)), st.integers(0, 23).map(float)),
    st.builds(lambda d: A.Compare("=", A.Ind("weekday", ()), A.Num(d)), st.integers(1, 7).map(float)),
    st.just(A.DayStart()),
    st.builds(
        lambda n, v: A.Held(A.Compare("<", A.Ind("rsi", (14,)), A.Num(v)), n),
        st.integers(2, 5),
        st.sampled_from([40.0, 50.0]),
    ),
    st.builds(lambda n: A.Compare("<", A.Lag(A.Ind("rsi", (5,)), n), A.Num(50.0)), st.integers(1, 4)),
)
predicates = st.one_of(predicates, new_predicates)
conditions = st.recursive(
    predicates,
    lambda inner: st.one_of(
        st.builds(lambda items: A.And(tuple(items)), st.lists(inner, min_size=2, max_size=2)),
        st.builds(lambda items: A.Or(tuple(items)), st.lists(inner, min_size=2, max_size=2)),
        st.builds(A.Not, inner),
    ),
    max_leaves=3,
)
TPS = ["2%", "0.6%", "5%", "1.5 x ATR(14)", "risk reward 2", "no take profit", "40%"]
SLS = [
    "1%",
    "3%",
    "2 x ATR(10)",
    "trailing stop 1.5%",
    "trailing stop of 2 x ATR(14)",
    "trailing stop 2% after 1% profit",
    "no stop loss",
    "0.05%",
]
EXITS = [
    None,
    None,
    "exit when close crosses below SMA(10)",
    "exit when RSI(14) rises above 65 or after 12 candles",
    "after 6 candles",
    "move the stop to break-even after 0.5% profit",
    "exit at the end of the day",
    "move the stop to break-even after 1% profit, exit when close drops for 2 candles",
]


@st.composite
def programs(draw: st.DrawFn, entries: Any = conditions) -> Any:
    side = draw(st.sampled_from(["long", "short"]))
    market = draw(st.booleans())
    entry_price = (
        None
        if market or draw(st.booleans())
        else draw(
            st.sampled_from(
                [A.PctOff(-0.5, A.Field("close")), A.PctOff(0.3, A.Field("close")), A.Ind("ema", (5,))]
            )
        )
    )
    try:
        return compile_strategy(
            draw(entries),
            draw(st.sampled_from(TPS)),
            draw(st.sampled_from(SLS)),
            market_type="futures" if side == "short" or draw(st.booleans()) else "spot",
            position_side=side,
            exit_condition=draw(st.sampled_from(EXITS)),
            entry_price=entry_price,
            entry_order="market" if market else None,
            hold=draw(st.sampled_from([0, 0, 3, 20])),
        )
    except StrategyCompileError:
        return compile_strategy("close crosses above SMA(20)", "2%", "1%", position_side="long")


@st.composite
def sim_settings(draw: st.DrawFn, tf: str, futures: bool) -> dict[str, Any]:
    wait = draw(st.sampled_from([1, 3, 10, 500]))
    sizing = draw(st.sampled_from(["fraction", "fraction", "risk", "quantity"]))
    return {
        "commission_pct": draw(st.sampled_from([0.0, 0.1])),
        "position_size_pct": draw(st.sampled_from([100.0, 50.0])),
        "min_candles_between_signals": draw(st.integers(0, 6)),
        "max_wait_days": wait * TF_MS[tf] / 86_400_000,
        "min_profit_pct": draw(st.sampled_from([0.1, 0.5])),
        "max_profit_pct": draw(st.sampled_from([3.0, 30.0])),
        "min_loss_pct": draw(st.sampled_from([0.1, 0.5])),
        "max_loss_pct": draw(st.sampled_from([2.0, 50.0])),
        "signal_filter_mode": draw(st.sampled_from(["clamp", "reject"])),
        "spread_pct": draw(st.sampled_from([0.0, 0.05])),
        "market_type": "futures" if futures else "spot",
        "leverage": draw(st.sampled_from([1.0, 3.0, 40.0])) if futures else 1.0,
        "sizing": sizing,
        **({"risk_pct": 1.0} if sizing == "risk" else {}),
        **({"quantity": 0.01} if sizing == "quantity" else {}),
    }


_CACHE: dict[tuple[str, str], pl.DataFrame] = {}


def series(coin: str, tf: str, first: int, n: int, holes: int, seed: int) -> pl.DataFrame:
    key = (coin, tf)
    if key not in _CACHE:
        _CACHE[key] = pl.read_parquet(DATASETS / "crypto" / f"{coin}-{tf}.parquet")
    whole = _CACHE[key]
    frame = whole.slice(min(first, whole.height - n), n)  # a young coin: its last candles
    if holes:  # data gaps of 1 to 6 candles: a missing candle counts as nothing, an order may outlive one
        rng = np.random.default_rng(seed)
        starts = rng.choice(np.arange(5, frame.height - 12), size=holes, replace=False)
        drop = np.concatenate([np.arange(a, a + rng.integers(1, 7)) for a in starts])
        frame = frame.filter(~pl.Series(np.isin(np.arange(frame.height), drop)))
    return frame


def backtest_positions(
    strategy: Any, klines: pl.DataFrame, tf: str, cfg: dict[str, Any]
) -> list[dict[str, Any]]:
    """Placed positions of ``backtest`` over the whole frame, in time order, as plain dicts."""
    result = sv.backtest(strategy, klines, tf, **cfg)
    ms = {c: pl.col(c).dt.epoch("ms") for c in ("signal_time", "fill_time", "exit_time")}
    trades = {t["signal_time"]: t for t in result.trades.with_columns(**ms).to_dicts()}
    out = []
    for p in result.all_positions.with_columns(signal_time=pl.col("signal_time").dt.epoch("ms")).to_dicts():
        if p["fate"] not in ("traded", "expired", "skipped_no_slot"):
            continue
        row = {k: p[k] for k in ("signal_time", "side", "limit_price", "tp_price", "sl_price", "fate")}
        trade = trades.get(p["signal_time"]) if p["fate"] == "traded" else None
        if trade is not None:
            row |= {
                k: trade[k]
                for k in (
                    "fill_time",
                    "exit_time",
                    "entry_price",
                    "exit_price",
                    "exit_reason",
                    "return_pct",
                    "pnl",
                )
            }
        out.append(row)
    return out


def live_positions(events: pl.DataFrame) -> dict[int, list[dict[str, Any]]]:
    """The positions each pair's events describe, as ``backtest_positions`` names them."""
    out: dict[int, list[dict[str, Any]]] = {}
    for e in events.to_dicts():
        mine = out.setdefault(e["pair"], [])
        if e["event"] == "placed":
            mine.append(
                {
                    "signal_time": e["signal_time"],
                    "side": e["side"],
                    "limit_price": e["limit_price"],
                    "tp_price": e["tp_price"],
                    "sl_price": e["sl_price"],
                    "fate": "waiting",
                }
            )
            continue
        pos = mine[-1]
        assert pos["signal_time"] == e["signal_time"]
        if e["event"] == "filled":
            pos |= {"fate": "open", "fill_time": e["time"], "entry_price": e["price"]}
        elif e["event"] == "closed":
            pos |= {
                "fate": "traded",
                "exit_time": e["time"],
                "exit_price": e["price"],
                "exit_reason": e["reason"],
                "return_pct": e["return_pct"],
                "pnl": e["profit"],
            }
        else:
            pos["fate"] = {"expired": "expired", "no_slot": "skipped_no_slot"}[e["event"]]
    return out


def assert_same(live_rows: list[dict[str, Any]], bt_rows: list[dict[str, Any]], last_ms: int) -> None:
    """Every finished live position equals the backtest's; one still open or waiting is the backtest's
    ``end`` trade or an order it expired at the range's end (after which it may place one more)."""
    assert len(bt_rows) >= len(live_rows)
    for k, (mine, theirs) in enumerate(zip(live_rows, bt_rows, strict=False)):
        if mine["fate"] == "open":
            assert k == len(live_rows) - 1 and theirs["fate"] == "traded" and theirs["exit_reason"] == "end"
            assert theirs["exit_time"] == last_ms
            assert {c: theirs[c] for c in mine} | {"fate": "open"} == mine
        elif mine["fate"] == "waiting":
            assert k == len(live_rows) - 1 and theirs["fate"] == "expired"
            assert {c: theirs[c] for c in mine} | {"fate": "waiting"} == mine
        else:
            assert mine == theirs, f"position {k}"
    unfinished = live_rows and live_rows[-1]["fate"] in ("open", "waiting")
    assert len(bt_rows) == len(live_rows) or (unfinished and len(bt_rows) == len(live_rows) + 1)


@HYP
@given(data=st.data())
def test_live_positions_equal_the_backtest_candle_by_candle(data: st.DataObject) -> None:
    tf = data.draw(st.sampled_from(["1h", "1h", "4h"]))
    coins = data.draw(st.lists(st.sampled_from(COINS[tf]), min_size=2, max_size=2, unique=True))
    first, n = data.draw(st.integers(0, 4_000)), data.draw(st.integers(250, 500))
    holes = data.draw(st.sampled_from([0, 0, 3, 12]))
    frames = {c: series(c, tf, first, n, holes, seed=k) for k, c in enumerate(coins)}
    strategies = data.draw(st.lists(programs(), min_size=1, max_size=3))
    futures = any(s.market_type == "futures" for s in strategies)
    cfg = data.draw(sim_settings(tf, futures))
    pairs = [(p, c) for p in range(len(strategies)) for c in coins]
    watch = live.watchlist(strategies, pairs, tf, **cfg)
    state = live.new_state(watch)
    times = np.unique(np.concatenate([f["open_time"].to_numpy() for f in frames.values()]))
    cut = data.draw(st.integers(1, 60))
    parts = []
    while True:  # a first batch (a replay), then closes of one to a few candles each
        upto = times[min(cut, times.size) - 1]
        given_now = {c: f.filter(pl.col("open_time") <= upto) for c, f in frames.items()}
        parts.append(live.events_frame(watch, live.advance(watch, state, given_now)))
        if cut >= times.size:
            break
        cut += data.draw(st.integers(1, 4))
    events = pl.concat(parts)
    found = live_positions(events)
    for pair, (p, coin) in enumerate(pairs):
        expected = backtest_positions(strategies[p], frames[coin], tf, cfg)
        assert_same(found.get(pair, []), expected, int(frames[coin]["open_time"][-1]))


new_conditions = st.one_of(
    new_predicates,
    st.builds(lambda a, b: A.And((a, b)), new_predicates, predicates),
    st.builds(lambda a, b: A.Or((a, b)), new_predicates, new_predicates),
)


@settings(HYP, max_examples=max(5, HYP.max_examples // 2))
@given(data=st.data())
def test_new_families_live_equal_the_backtest(data: st.DataObject) -> None:
    # Every program here uses one of the families of issue 29 (their values are history nodes,
    # evaluated per coin over a settled window; the calendar and spans read the candles' times).
    tf = data.draw(st.sampled_from(["1h", "4h"]))
    coins = data.draw(st.lists(st.sampled_from(COINS[tf]), min_size=2, max_size=2, unique=True))
    first, n = data.draw(st.integers(0, 4_000)), data.draw(st.integers(250, 400))
    holes = data.draw(st.sampled_from([0, 3, 12]))
    frames = {c: series(c, tf, first, n, holes, seed=k) for k, c in enumerate(coins)}
    strategies = data.draw(st.lists(programs(new_conditions), min_size=1, max_size=3))
    futures = any(s.market_type == "futures" for s in strategies)
    cfg = data.draw(sim_settings(tf, futures))
    replay_and_compare(strategies, frames, tf, cfg, lambda: data.draw(st.integers(1, 4)))


def replay_and_compare(
    strategies: list[Any], frames: dict[str, pl.DataFrame], tf: str, cfg: dict[str, Any], steps: Any
) -> None:
    """Feed ``frames`` to one watchlist of every program on every coin, ``steps()`` candles at a
    time after a first batch, and compare each pair's positions with its backtest."""
    coins = list(frames)
    pairs = [(p, c) for p in range(len(strategies)) for c in coins]
    watch = live.watchlist(strategies, pairs, tf, **cfg)
    state = live.new_state(watch)
    times = np.unique(np.concatenate([f["open_time"].to_numpy() for f in frames.values()]))
    cut, parts = steps(), []
    while True:
        upto = times[min(cut, times.size) - 1]
        given_now = {c: f.filter(pl.col("open_time") <= upto) for c, f in frames.items()}
        parts.append(live.events_frame(watch, live.advance(watch, state, given_now)))
        if cut >= times.size:
            break
        cut += steps()
    found = live_positions(pl.concat(parts))
    for pair, (p, coin) in enumerate(pairs):
        expected = backtest_positions(strategies[p], frames[coin], tf, cfg)
        assert_same(found.get(pair, []), expected, int(frames[coin]["open_time"][-1]))


@settings(HYP, max_examples=max(5, HYP.max_examples // 3))
@given(data=st.data())
def test_orders_that_outlive_data_gaps_expire_as_in_the_backtest(data: st.DataObject) -> None:
    # Frequent signals, limits under the market that rarely fill, short waits and many long gaps:
    # an order expires during a gap and frees its last live candle for that candle's own signal.
    often = st.sampled_from(
        [A.Candles("green", 1), A.Candles("red", 1), A.Streak("rise", 1, A.Field("close"))]
    )
    strategies = [
        compile_strategy(
            data.draw(often),
            "1%",
            "1%",
            entry_price=A.PctOff(data.draw(st.sampled_from([-0.3, -1.0])), A.Field("close")),
            entry_order=None,
        )
        for _ in range(2)
    ]
    first = data.draw(st.integers(0, 4_000))
    frames = {c: series(c, "1h", first, 400, 25, seed=k) for k, c in enumerate(("ETHUSDT", "SOLUSDT"))}
    cfg = {
        "max_wait_days": data.draw(st.sampled_from([2, 3, 4])) / 24,
        "spread_pct": 0.0,
        "min_candles_between_signals": data.draw(st.integers(0, 2)),
    }
    replay_and_compare(strategies, frames, "1h", cfg, lambda: data.draw(st.integers(1, 3)))


def test_a_1x_short_without_a_stop_is_liquidated_live_as_in_the_backtest() -> None:
    # Every green candle signals a market short; the price rises 3 % a candle for 40 candles, so
    # the 1x short reaches its liquidation level 2E about 24 candles after its fill, closes there
    # at -100 % and frees the coin: the next green candle's short is taken, live as in the backtest.
    n = np.arange(70)
    close = 10 * np.exp(0.03 * np.minimum(n, 40) - 0.02 * np.maximum(n - 40, 0))
    open_ = np.concatenate([[10.0], close[:-1]])
    frame = pl.DataFrame(
        {
            "open_time": n.astype(np.int64) * TF_MS["1h"],
            "open": open_,
            "high": np.maximum(open_, close) * 1.002,
            "low": np.minimum(open_, close) * 0.998,
            "close": close,
            "volume": np.ones(n.size),
        }
    )
    short = compile_strategy(
        "close > open",
        "no take profit",
        "no stop loss",
        market_type="futures",
        position_side="short",
        entry_order="market",
    )
    cfg = {
        "market_type": "futures",
        "leverage": 1.0,
        "position_size_pct": 50.0,
        "spread_pct": 0.0,
        "commission_pct": 0.0,
        "min_candles_between_signals": 0,
    }
    expected = backtest_positions(short, frame, "1h", cfg)
    hour = TF_MS["1h"]
    got = [
        (p["fill_time"] // hour, p["exit_time"] // hour, p["exit_reason"], round(p["return_pct"], 6))
        for p in expected
    ]
    # E = open of 2 = 10 e^0.03; the high of 25 (10 e^0.75 * 1.002) first reaches 2E = 20.609
    assert got == [(2, 25, "liquidation", -100.0), (26, 69, "end", 12.190457)]
    assert expected[0]["exit_price"] == 2 * expected[0]["entry_price"] == 20 * np.exp(0.03)
    replay_and_compare([short], {"PUMPUSDT": frame}, "1h", cfg, lambda: 1)
    replay_and_compare([short], {"PUMPUSDT": frame}, "1h", cfg, lambda: 7)
