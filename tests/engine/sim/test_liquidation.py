"""Liquidation at any leverage (engine-semantics section 4): at 1x a short's level is ``2E``, so a
futures short without a stop (or with one beyond ``2E``) on a series that more than doubles closes
with reason ``liquidation`` at ``2E`` and -100 %, and frees the coin for a later signal; checked by
hand in the single-coin kernel, the portfolio kernel and its divide search, and intrabar detail."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from sim_helpers import H, bars, sigs

from svc_engine.data.times import ms_columns
from svc_engine.sim import simulate, simulate_portfolio

#: A short fills at the open of candle 1 (E = 10, so Q = 20); the high of candle 5 first reaches 20.
PUMP = [
    (10, 10, 10, 10),
    (10, 12, 9.8, 12),
    (12, 14.2, 11.9, 14),
    (14, 16.3, 13.8, 16),
    (16, 18.4, 15.9, 18),
    (18, 20.5, 17.7, 20.2),
    (20.2, 22, 19.5, 21.5),
    (21.5, 23, 21, 22),
    (22, 22.5, 21.2, 22.4),
    (22.4, 24, 22, 23.5),
]
FUTURES_1X = {
    "market_type": "futures",
    "leverage": 1.0,
    "commission_pct": 0.0,
    "spread_pct": 0.0,
    "min_candles_between_signals": 0,
    "timeframe": "1h",
}


#: The long after the liquidation: signal 6 -> open of 7 (21.5), ends at the close of 9 (23.5) with a
#: stake of 250: +2/21.5 = +9.302325581 %, +23.255813953, balance 523.255813953.
LATER_LONG = (
    "long",
    7,
    9,
    21.5,
    23.5,
    "end",
    round(200 / 21.5, 9),
    round(500 / 21.5, 9),
    round(500 + 500 / 21.5, 9),
)


def open_levels(rows: list[tuple[int, str]]) -> pl.DataFrame:
    """Market orders without TP or stop (the rule columns make an infinite level on its own side
    mean none): short TP -inf / SL +inf, long TP +inf / SL -inf."""
    out = []
    for at, side in rows:
        up = 1.0 if side == "long" else -1.0
        out.append(
            {
                "open_time": at * H,
                "side": side,
                "limit_price": None,
                "tp_price": up * math.inf,
                "sl_price": -up * math.inf,
                "order": "market",
                "max_candles": None,
            }
        )
    return pl.DataFrame(
        out,
        schema={
            "open_time": pl.Int64,
            "side": pl.Utf8,
            "limit_price": pl.Float64,
            "tp_price": pl.Float64,
            "sl_price": pl.Float64,
            "order": pl.Utf8,
            "max_candles": pl.Int64,
        },
    )


def rows(trades: pl.DataFrame) -> list[tuple]:
    t = ms_columns(trades)
    return [
        (
            r["side"],
            r["fill_time"] // H,
            r["exit_time"] // H,
            r["entry_price"],
            r["exit_price"],
            r["exit_reason"],
            round(r["return_pct"], 9),
            round(r["pnl"], 9),
            round(r["balance"], 9),
        )
        for r in t.iter_rows(named=True)
    ]


def test_a_1x_short_without_a_stop_is_liquidated_at_twice_its_entry_and_a_later_signal_is_taken() -> None:
    k = bars(PUMP)
    s = open_levels([(0, "short"), (6, "long")])
    r = simulate(k, s, initial_balance=1000.0, position_size_pct=50.0, **FUTURES_1X)
    # short: E = 10 (open of 1), high of 5 reaches Q = 2E = 20 -> exit at 20, -100 %: the stake 500
    # is gone; the coin is free again, so the long signal of candle 6 is taken (LATER_LONG)
    assert rows(r.trades) == [
        ("short", 1, 5, 10.0, 20.0, "liquidation", -100.0, -500.0, 500.0),
        LATER_LONG,
    ]
    assert r.all_positions["fate"].to_list() == ["traded", "traded"]


def test_an_open_beyond_twice_the_entry_liquidates_at_that_open_and_costs_do_not_go_below_the_stake() -> None:
    gap = [*PUMP[:5], (21, 21.5, 20.8, 21.2), *PUMP[6:]]
    cfg = FUTURES_1X | {"commission_pct": 0.1}
    r = simulate(bars(gap), open_levels([(0, "short")]), initial_balance=1000.0, **cfg)
    # the open of 5 (21) is beyond Q = 20: the gap rule exits there; a liquidation loses the stake
    # exactly (100 % of 1000), commission and all.
    assert rows(r.trades) == [("short", 1, 5, 10.0, 21.0, "liquidation", -100.0, -1000.0, 0.0)]


def test_a_stop_beyond_twice_the_entry_gives_way_to_the_liquidation_level_and_one_nearer_stays() -> None:
    k = bars(PUMP)
    cfg = FUTURES_1X | {"max_loss_pct": 1000.0, "initial_balance": 1000.0}
    # limit 10 fills at the open of 1 (10); SL 30 lies beyond Q = 20, SL 19 before it
    far = simulate(k, sigs([(0, "short", 10.0, 5.0, 30.0)]), **cfg)
    near = simulate(k, sigs([(0, "short", 10.0, 5.0, 19.0)]), **cfg)
    assert rows(far.trades) == [("short", 1, 5, 10.0, 20.0, "liquidation", -100.0, -1000.0, 0.0)]
    assert rows(near.trades) == [("short", 1, 5, 10.0, 19.0, "sl", -90.0, -900.0, 100.0)]


def test_a_1x_long_without_a_stop_is_never_liquidated() -> None:
    # a long's level at 1x is 0, which no valid price reaches: a fall to 0.5 ends as `end` (-95 %)
    fall = bars([(10, 10, 10, 10), (10, 10, 5, 5), (5, 5, 0.5, 0.5), (0.5, 0.6, 0.5, 0.5)])
    r = simulate(fall, open_levels([(0, "long")]), initial_balance=1000.0, **FUTURES_1X)
    assert rows(r.trades) == [("long", 1, 3, 10.0, 0.5, "end", -95.0, -950.0, 50.0)]


def test_the_portfolio_kernel_and_its_divide_search_liquidate_the_1x_short() -> None:
    k = {"X": bars(PUMP), "Y": bars(PUMP)}
    s = {"X": open_levels([(0, "short"), (6, "long")]), "Y": open_levels([])}
    cfg = {c: v for c, v in FUTURES_1X.items() if c != "timeframe"}
    r = simulate_portfolio(k, s, divide=2, initial_balance=1000.0, timeframe="1h", **cfg)
    # two slots: the short stakes 500 and loses it at Q = 20; the long then stakes 250
    assert rows(r.trades) == [
        ("short", 1, 5, 10.0, 20.0, "liquidation", -100.0, -500.0, 500.0),
        LATER_LONG,
    ]
    assert r.all_positions["fate"].to_list() == ["traded", "traded"]
    # divide 1 stakes all 1000 on the short: the long finds no money (skipped_no_slot) and 0 is left;
    # divide 2 keeps 523.26, so the search recommends 2
    assert r.recommended_divide["divide"] == 2
    one = simulate_portfolio(k, s, divide=1, initial_balance=1000.0, timeframe="1h", **cfg)
    assert one.all_positions["fate"].to_list() == ["traded", "skipped_no_slot"]
    assert one.summary["final_balance"] == 0.0


def test_intrabar_detail_replays_a_candle_touching_the_take_profit_and_the_liquidation_level() -> None:
    m15 = 15 * 60_000
    flat = [(10, 10, 10, 10)] * 4
    tp_first = [(10, 10.2, 7.9, 8), (8, 20.5, 8, 20), (20, 20.2, 19.8, 20), (20, 20.1, 19.9, 20)]
    q_first = [(10, 20.5, 10, 20), (20, 20.2, 7.9, 8), (8, 8.2, 7.9, 8), (8, 8.1, 7.9, 8)]
    cfg = FUTURES_1X | {"max_loss_pct": 1000.0, "initial_balance": 1000.0}
    cfg.pop("timeframe")
    s = sigs([(0, "short", 10.0, 8.0, 50.0)])  # SL 50 lies beyond Q = 20
    got = {}
    for name, hour in (("tp_first", tp_first), ("q_first", q_first)):
        fine = bars([*flat, *flat, *hour], step=m15)
        coarse = bars([(10, 10, 10, 10), (10, 10, 10, 10), (10, 20.5, 7.9, hour[-1][3])])
        conservative = rows(simulate(coarse, s, **cfg).trades)
        detail = rows(simulate(coarse, s, intrabar="detail", detail_klines=fine, **cfg).trades)
        got[name] = (conservative, detail)
    liq = [("short", 1, 2, 10.0, 20.0, "liquidation", -100.0, -1000.0, 0.0)]
    tp = [("short", 1, 2, 10.0, 8.0, "tp", 20.0, 200.0, 1200.0)]
    # conservatively the level wins inside the candle; on the fine candles whichever came first
    assert got == {"tp_first": (liq, tp), "q_first": (liq, liq)}
    assert np.isfinite(simulate(coarse, s, **cfg).equity["equity"].to_numpy()).all()
