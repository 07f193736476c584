"""Every fill and exit rule of sections 3-4 on tiny hand-made series (no costs unless stated)."""

from __future__ import annotations

import pytest
from sim_helpers import H, bars, sigs

from svc_engine.data.times import ms_columns
from svc_engine.sim import simulate

FREE = {"commission_pct": 0.0, "spread_pct": 0.0}
SIGNAL = (10, 10, 10, 10)


def one_trade(
    rows: list[tuple],
    side: str = "long",
    limit: float | None = 10.0,
    tp: float = 11.0,
    sl: float = 9.0,
    **kw: object,
) -> dict:
    r = simulate(bars(rows), sigs([(0, side, limit, tp, sl)]), **(FREE | kw))
    assert r.trades.height == 1, r.all_positions
    return ms_columns(r.trades).row(0, named=True)


@pytest.mark.parametrize(
    ("rows", "fill", "exit_", "reason", "entry", "price"),
    [
        # open fill at 10, high reaches 11 next candle
        ([SIGNAL, (10, 10.2, 9.9, 10.1), (10.5, 11.5, 10.4, 11.2)], 1, 2, "tp", 10.0, 11.0),
        # low reaches the stop
        ([SIGNAL, (10, 10.2, 9.9, 10.1), (9.8, 9.9, 8.5, 9.0)], 1, 2, "sl", 10.0, 9.0),
        # opens below the stop: exit at the open
        ([SIGNAL, (10, 10.2, 9.9, 10.1), (8.5, 8.7, 8.0, 8.6)], 1, 2, "sl_gap", 10.0, 8.5),
        # opens above the target: exit at the open
        ([SIGNAL, (10, 10.2, 9.9, 10.1), (11.5, 11.9, 11.4, 11.6)], 1, 2, "tp_gap", 10.0, 11.5),
        # both levels inside one candle: the stop wins
        ([SIGNAL, (10, 10.2, 9.9, 10.1), (10.0, 11.5, 8.9, 10.0)], 1, 2, "sl", 10.0, 9.0),
        # no exit by the last candle: its close
        ([SIGNAL, (10, 10.2, 9.9, 10.1), (10.0, 10.5, 9.5, 10.3)], 1, 2, "end", 10.0, 10.3),
        # intrabar fill (open above L), then the stop on the same candle: no guess, the price crossed L
        ([SIGNAL, (10.5, 10.6, 9.0, 9.5), (9.5, 9.6, 9.4, 9.5)], 1, 1, "sl", 10.0, 9.0),
        # intrabar fill, high above TP but close below: the high may have printed first -> no tp
        ([SIGNAL, (10.5, 11.5, 9.8, 10.2), (10.2, 10.4, 10.0, 10.3)], 1, 2, "end", 10.0, 10.3),
        # intrabar fill with the close above TP: tp on the fill candle
        ([SIGNAL, (10.5, 11.5, 9.8, 11.2), (11.2, 11.3, 11.1, 11.2)], 1, 1, "tp", 10.0, 11.0),
        # open fill at or below the stop: ends at once at E
        ([SIGNAL, (8.8, 9.5, 8.5, 9.2), (9.2, 9.3, 9.1, 9.2)], 1, 1, "sl_gap", 8.8, 8.8),
        # a long limit above the market fills at the next open (open fill), gap rules apply at once
        ([SIGNAL, (9.8, 9.9, 9.7, 9.85), (10.6, 10.7, 10.5, 10.6)], 1, 2, "end", 9.8, 10.6),
        # waits for the price: fills at candle 2, not 1
        (
            [SIGNAL, (10.2, 10.4, 10.1, 10.3), (10.3, 10.4, 9.95, 10.2), (10.2, 11.1, 10.1, 11.0)],
            2,
            3,
            "tp",
            10.0,
            11.0,
        ),
    ],
)
def test_long_exit_rules(
    rows: list[tuple], fill: int, exit_: int, reason: str, entry: float, price: float
) -> None:
    t = one_trade(rows)
    assert (t["fill_time"], t["exit_time"], t["exit_reason"]) == (fill * H, exit_ * H, reason)
    assert (t["entry_price"], t["exit_price"]) == (entry, price)
    assert t["return_pct"] == pytest.approx((price / entry - 1) * 100, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("rows", "reason", "entry", "price"),
    [
        ([SIGNAL, (10, 10.1, 9.95, 10.0), (9.5, 9.6, 8.9, 9.0)], "tp", 10.0, 9.0),
        ([SIGNAL, (10, 10.1, 9.95, 10.0), (10.5, 11.2, 10.4, 11.0)], "sl", 10.0, 11.0),
        ([SIGNAL, (10, 10.1, 9.95, 10.0), (11.5, 11.6, 11.3, 11.4)], "sl_gap", 10.0, 11.5),
        ([SIGNAL, (10, 10.1, 9.95, 10.0), (8.5, 8.6, 8.4, 8.5)], "tp_gap", 10.0, 8.5),
        ([SIGNAL, (10, 10.1, 9.95, 10.0), (10.0, 11.2, 8.8, 10.0)], "sl", 10.0, 11.0),
        # intrabar fill (open below L); low below TP but close above it: no tp on the fill candle
        ([SIGNAL, (9.5, 10.2, 8.8, 9.8), (9.8, 9.9, 9.7, 9.8)], "end", 10.0, 9.8),
        # a short limit below the market fills at the next open
        ([SIGNAL, (10.4, 10.5, 10.3, 10.4), (10.4, 10.5, 10.3, 10.35)], "end", 10.4, 10.35),
    ],
)
def test_short_mirrors_every_rule(rows: list[tuple], reason: str, entry: float, price: float) -> None:
    t = one_trade(rows, side="short", tp=9.0, sl=11.0)
    assert (t["exit_reason"], t["entry_price"], t["exit_price"]) == (reason, entry, price)
    assert t["return_pct"] == pytest.approx((entry - price) / entry * 100, rel=1e-12)


def test_liquidation_replaces_a_farther_stop_and_loses_the_stake() -> None:
    rows = [SIGNAL, (10, 10.2, 9.9, 10.1), (9.5, 9.6, 7.9, 8.2)]
    r = simulate(bars(rows), sigs([(0, "long", 10.0, 11.0, 7.0)]), market_type="futures", leverage=5, **FREE)
    t = ms_columns(r.trades).row(0, named=True)
    assert (t["exit_reason"], t["exit_price"], t["return_pct"], t["pnl"]) == (
        "liquidation",
        8.0,
        -100.0,
        -100.0,
    )
    assert r.summary["final_balance"] == 0.0


def test_liquidation_on_a_gap_and_for_a_short() -> None:
    rows = [SIGNAL, (10, 10.1, 9.95, 10.0), (12.5, 12.6, 12.4, 12.5)]
    r = simulate(bars(rows), sigs([(0, "short", 10.0, 9.0, 14.0)]), market_type="futures", leverage=4, **FREE)
    t = ms_columns(r.trades).row(0, named=True)
    assert (t["exit_reason"], t["exit_price"], t["return_pct"]) == ("liquidation", 12.5, -100.0)


def test_a_nearer_stop_wins_over_liquidation_and_leverage_scales_the_return() -> None:
    rows = [SIGNAL, (10, 10.2, 9.9, 10.1), (9.8, 9.9, 8.5, 9.0)]
    r = simulate(bars(rows), sigs([(0, "long", 10.0, 11.0, 9.5)]), market_type="futures", leverage=5, **FREE)
    t = ms_columns(r.trades).row(0, named=True)
    assert (t["exit_reason"], t["exit_price"]) == ("sl", 9.5)
    assert t["return_pct"] == pytest.approx(-25.0, rel=1e-12)
    assert r.summary["final_balance"] == pytest.approx(75.0, rel=1e-12)


def test_costs_commission_and_spread() -> None:
    rows = [SIGNAL, (10, 10.2, 9.9, 10.1), (10.5, 11.5, 10.4, 11.2)]
    t = one_trade(rows, commission_pct=0.2, spread_pct=0.1)
    e, x = 10 * 1.0005, 11 * 0.9995
    assert (t["entry_price"], t["exit_price"]) == pytest.approx((e, x), rel=1e-15)
    assert t["return_pct"] == pytest.approx((x * 0.998 / (e * 1.002) - 1) * 100, rel=1e-12)
    short = one_trade(
        [SIGNAL, (10, 10.1, 9.95, 10.0), (9.5, 9.6, 8.9, 9.0)],
        side="short",
        tp=9.0,
        sl=11.0,
        commission_pct=0.2,
        spread_pct=0.1,
    )
    e, x = 10 * 0.9995, 9 * 1.0005
    assert (short["entry_price"], short["exit_price"]) == pytest.approx((e, x), rel=1e-15)
    assert short["return_pct"] == pytest.approx((e * 0.998 - x * 1.002) / e * 100, rel=1e-12)


def test_open_fill_at_the_stop_loses_exactly_the_costs() -> None:
    t = one_trade([SIGNAL, (8.8, 9.5, 8.5, 9.2), (9.2, 9.3, 9.1, 9.2)], commission_pct=0.2)
    assert t["return_pct"] == pytest.approx((0.998 / 1.002 - 1) * 100, rel=1e-12)


def test_expiry_after_max_wait_and_on_the_last_candle() -> None:
    rows = [SIGNAL, (10.5, 10.6, 10.4, 10.5), (10.5, 10.6, 10.4, 10.5), (10.5, 10.6, 9.0, 10.0)]
    # live candles: open before close(0) + 2h = 3h -> candles 1, 2; the dip at 3 is too late
    r = simulate(
        bars(rows),
        sigs([(0, "long", 10.0, 11.0, 9.5), (3 * H, "long", None, 11.0, 9.5)]),
        max_wait_days=2 / 24,
        min_candles_between_signals=0,
        **FREE,
    )
    assert r.all_positions["fate"].to_list() == ["expired", "expired"]
    assert r.signal_counts["expired"] == 2 and r.signal_counts["placed"] == 2
    assert r.summary["total_signals"] == 2 and r.summary["total_trades"] == 0


def test_expiry_frees_the_coin_at_its_last_live_candle() -> None:
    rows = [SIGNAL] + [(10.5, 10.6, 10.4, 10.5)] * 3 + [(10.5, 10.6, 10.05, 10.5), (10.5, 11.5, 10.4, 11)]
    s = sigs(
        [
            (0, "long", 10.0, 11.0, 9.5),
            (1 * H, "long", 10.0, 11.0, 9.5),
            (2 * H, "long", 10.0, 11.0, 9.5),
            (4 * H, "long", 10.5, 11.0, 9.5),
        ]
    )
    r = simulate(bars(rows), s, max_wait_days=2 / 24, min_candles_between_signals=0, **FREE)
    assert r.all_positions["fate"].to_list() == ["expired", "skipped_busy", "expired", "traded"]


def test_no_spread_setting_takes_the_markets_default() -> None:
    from svc_engine.instruments import spread_pct_for

    k = bars([SIGNAL, (10, 10.2, 9.9, 10.1), (10.5, 11.5, 10.4, 11.2)])
    h = spread_pct_for("forex", k, "1h") / 200
    r = simulate(k, sigs([(0, "long", 10.0, 11.0, 9.0)]), market="forex", commission_pct=0)
    assert (r.trades["entry_price"][0], r.trades["exit_price"][0]) == (10 * (1 + h), 11 * (1 - h))
    assert h > 0


def test_each_candidates_outcome_is_computed_independently() -> None:
    from svc_engine.sim import nb
    from svc_engine.sim.inputs import Candles, prepare_signals
    from svc_engine.sim.single import filter_signals, resolve_settings

    rows = [
        SIGNAL,
        (10, 10.2, 9.9, 10.1),
        (10.5, 11.5, 10.4, 11.2),
        (11.2, 11.3, 8.0, 8.5),
        (8.5, 8.6, 8.4, 8.5),
    ]
    k = bars(rows)
    # the second signal overlaps the first: the sweep skips it, its own outcome still exists
    s = sigs(
        [
            (0, "long", 10.0, 11.0, 9.0),
            (1 * H, "long", 10.2, 11.5, 9.5),
            (2 * H, "short", 11.2, 9.0, 12.0),
            (3 * H, "long", 7.0, 8.0, 6.0),
        ]
    )
    candles = Candles.from_frame(k, timeframe="1h")
    sig = prepare_signals(s, candles)
    fate, tp, sl, _, _ = filter_signals(sig, resolve_settings(FREE))
    memo = nb.outcomes_nb(
        candles.t,
        candles.o,
        candles.h,
        candles.lo,
        candles.c,
        sig.sidx,
        sig.side,
        sig.limit,
        tp,
        sl,
        fate,
        H,
        30 * 86_400_000,
        1.0,
    )
    got = [
        (
            m["fill_candle"],
            m["exit_candle"],
            float(m["entry_raw"]),
            float(m["exit_raw"]),
            nb.REASONS[m["reason"]],
        )
        for m in memo
    ]
    assert got[:3] == [(1, 2, 10.0, 11.0, "tp"), (3, 3, 10.2, 9.5, "sl"), (3, 3, 11.2, 9.0, "tp")]
    # expires at the last candle
    assert (memo[3]["fill_candle"], memo[3]["expiry_candle"], memo[3]["done"]) == (-1, 4, 1)
