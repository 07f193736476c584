"""The portfolio sweep with ``divide`` slots (section 6) and its figures, on hand-made coins."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from sim_helpers import DATASETS, H, bars, real, sigs

from svc_engine.data.times import ms_columns
from svc_engine.sim import simulate, simulate_portfolio

FREE = {"commission_pct": 0.0, "spread_pct": 0.0, "min_candles_between_signals": 0}
A = bars(
    [
        (10, 10, 10, 10),
        (10, 10.2, 9.9, 10.1),
        (10.5, 11.5, 10.4, 11.2),
        (11, 11.1, 10.9, 11),
        (11, 11.1, 10.9, 11),
    ]
)
B = bars(
    [
        (20, 20, 20, 20),
        (20, 20.2, 19.9, 20.1),
        (20.5, 23, 20.4, 22.4),
        (22, 22.1, 21.9, 22),
        (22, 22.1, 21.9, 22),
    ]
)
SIG_A = sigs([(0, "long", 10.0, 11.0, 9.0)])
SIG_B = sigs([(0, "long", 20.0, 22.0, 18.0)])


def run(coins: list[str], divide: int, sig_b: pl.DataFrame = SIG_B, **kw: object):
    return simulate_portfolio(
        {"A": A, "B": B}, {"A": SIG_A, "B": sig_b}, coins=coins, divide=divide, **(FREE | kw)
    )


def test_fills_follow_the_coin_order_and_a_full_book_cancels() -> None:
    r = run(["A", "B"], 1)
    assert r.all_positions["fate"].to_list() == ["traded", "skipped_no_slot"]
    assert r.trades["coin"].to_list() == ["A"]
    assert (r.summary["skipped_no_slot"], r.summary["total_signals"]) == (1, 2)
    assert r.summary["final_balance"] == pytest.approx(110.0, rel=1e-12)
    r = run(["B", "A"], 1)
    assert r.all_positions.filter(pl.col("fate") == "traded")["coin"].to_list() == ["B"]


def test_two_slots_split_the_balance() -> None:
    r = run(["A", "B"], np.int64(2))
    s = r.summary
    assert r.trades["pnl"].to_list() == pytest.approx([5.0, 5.0], rel=1e-12)
    assert s["final_balance"] == pytest.approx(110.0, rel=1e-12)
    assert (s["max_concurrent_positions"], s["buy_count"], s["sell_count"]) == (2, 2, 2)
    assert (s["avg_target_pct"], s["avg_stop_loss_pct"]) == pytest.approx((10.0, 10.0), rel=1e-12)
    assert r.per_coin_contribution == pytest.approx({"A": 5.0, "B": 5.0}, rel=1e-12)
    a = r.coin_results["A"]
    assert (a["total_trades"], a["total_signals"], a["win_rate"]) == (1, 1, 100.0)
    assert (a["total_return_pct"], a["final_balance"]) == pytest.approx((5.0, 105.0), rel=1e-12)
    assert r.trades["balance"].to_list() == pytest.approx([105.0, 110.0], rel=1e-12)  # B still open after A
    np.testing.assert_allclose(r.equity["equity"].to_numpy(), [100, 100.75, 110, 110, 110], rtol=1e-12)


def test_the_stake_is_balance_over_divide_capped_by_free_cash() -> None:
    # A trades 1 -> 2 (+10% of 50), then B fills at 3 with 105 / 2 = 52.5 and ends at 4 (close 22 = entry)
    late_b = sigs([(2 * H, "long", 22.0, 24.0, 20.0)])
    r = run(["A", "B"], 2, sig_b=late_b)
    assert r.trades["coin"].to_list() == ["A", "B"]
    assert ms_columns(r.trades)["fill_time"].to_list() == [H, 3 * H]
    b = r.trades.row(1, named=True)
    assert (b["exit_reason"], b["pnl"]) == ("end", 0.0)
    np.testing.assert_allclose(r.equity["equity"].to_numpy()[-2:], [105, 105], rtol=1e-12)


def test_a_trade_that_exits_on_its_fill_candle_frees_its_slot_at_once() -> None:
    a = bars(
        [(10, 10, 10, 10), (10.5, 10.6, 8.9, 9.5), (9.5, 9.6, 9.4, 9.5)]
    )  # intrabar fill at 10, sl 9 on it
    b = bars([(20, 20, 20, 20), (20, 20.2, 19.9, 20.1), (20.1, 20.2, 20.0, 20.1)])
    r = simulate_portfolio({"A": a, "B": b}, {"A": SIG_A, "B": SIG_B}, coins=["A", "B"], divide=1, **FREE)
    assert r.all_positions["fate"].to_list() == ["traded", "traded"]
    assert r.trades["exit_reason"].to_list() == ["sl", "end"]
    assert r.trades["pnl"].to_list() == pytest.approx([-10.0, 90 * (20.1 / 20 - 1)], rel=1e-12)
    assert r.summary["max_concurrent_positions"] == 1


def test_a_busy_coin_skips_its_new_signals() -> None:
    two = sigs(
        [(0, "long", 10.0, 11.0, 9.0), (1 * H, "long", 10.0, 11.0, 9.0), (2 * H, "long", 11.0, 12.0, 10.0)]
    )
    r = simulate_portfolio({"A": A}, {"A": two}, divide=1, **FREE)
    assert r.all_positions["fate"].to_list() == ["traded", "skipped_coin_busy", "traded"]
    assert r.signal_counts["skipped_coin_busy"] == 1 and "skipped_busy" not in r.signal_counts


def test_coins_with_their_own_ranges_share_the_union_of_times() -> None:
    late = B.with_columns(open_time=pl.col("open_time") + 2 * H)
    r = simulate_portfolio(
        {"A": A, "B": late}, {"A": SIG_A, "B": SIG_B.with_columns(open_time=pl.lit(2 * H))}, divide=2, **FREE
    )
    assert ms_columns(r.equity)["open_time"].to_list() == [k * H for k in range(7)]
    assert r.trades["coin"].to_list() == ["A", "B"]
    assert ms_columns(r.trades)["fill_time"].to_list() == [H, 3 * H]
    assert r.summary["avg_signals_per_month"] == pytest.approx(2 / (7 / 24 / 30.4375), rel=1e-12)


def test_recommended_divide_scores_and_ties() -> None:
    r = run(["A", "B"], 2)
    rec = r.recommended_divide
    assert [c["divide"] for c in rec["candidates"]] == [1, 2]
    assert [c["final_balance"] for c in rec["candidates"]] == pytest.approx([110.0, 110.0], rel=1e-12)
    assert [c["skipped_no_slot"] for c in rec["candidates"]] == [1, 0]
    assert rec["candidates"][0]["score"] == pytest.approx(
        110 * (1 - rec["candidates"][0]["max_drawdown_pct"] / 200)
    )
    assert (rec["method"], rec["max_concurrent_signals"]) == ("return_dd_score", 2)
    empty = simulate_portfolio({"A": A, "B": B}, {}, **FREE).recommended_divide
    assert (empty["divide"], empty["value"], empty["final_balance"]) == (1, 1, 100.0)  # a tie: the smaller


def test_recommended_divide_prefers_less_drawdown() -> None:
    crash = bars(
        [(20, 20, 20, 20), (20, 20.2, 19.9, 20.1), (20, 20.1, 15, 16), (16, 23, 15.9, 22.5), (22, 22, 22, 22)]
    )
    r = simulate_portfolio(
        {"A": A, "B": crash}, {"A": SIG_A, "B": sigs([(0, "long", 20.0, 22.0, 10.0)])}, **FREE
    )
    scores = {c["divide"]: c["score"] for c in r.recommended_divide["candidates"]}
    assert r.recommended_divide["divide"] == max(scores, key=scores.get)
    d2 = r.recommended_divide["candidates"][1]
    assert d2["max_drawdown_pct"] == pytest.approx((100.75 - (55 + 50 * 0.8)) / 100.75 * 100, rel=1e-12)


def test_to_dict_keeps_the_first_trades_and_flags_the_rest() -> None:
    r = run(["A", "B"], 2)
    d = r.to_dict(trades_limit=1)
    json.dumps(d, allow_nan=False)
    assert (len(d["trades"]), d["trades_truncated"], d["total_trades"]) == (1, True, 2)
    assert d["trades"][0]["coin"] == "A" and set(d["summary"]) >= {"initial_balance", "skipped_coin_busy"}
    assert r.to_dict()["trades_truncated"] is False


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"divide": 0}, r"divide must be a whole number >= 1 \(got 0\)"),
        ({"coins": ["A", "A"]}, r"coins must be distinct"),
        ({"coins": ["A", "Z"]}, r"no klines for coin 'Z'"),
        ({"coins": []}, r"a portfolio needs at least one coin"),
        ({"start_ts": 10 * 3600}, r"coin 'A': the range \[36000, None\] selects no candle of the series"),
        ({"coins": ["B"], "signals": {"A": SIG_A}}, r"signals for coins that are not in the portfolio"),
    ],
)
def test_bad_portfolios_are_refused(kw: dict, message: str) -> None:
    signals = kw.pop("signals", {})
    with pytest.raises(ValueError, match=message):
        simulate_portfolio({"A": A, "B": B}, signals, **(FREE | kw))


def test_coins_must_share_a_timeframe() -> None:
    slow = B.with_columns(open_time=pl.col("open_time") * 4)
    with pytest.raises(ValueError, match="share one timeframe"):
        simulate_portfolio({"A": A, "B": slow}, {}, **FREE)


@pytest.mark.skipif(not (DATASETS / "crypto").is_dir(), reason="real datasets not found")
@pytest.mark.parametrize("side", ["long", "short"])
def test_one_coin_with_divide_1_equals_the_single_coin_run(side: str) -> None:
    k = real("crypto/ETHUSDT-1h").slice(100, 800)
    rng = np.random.default_rng(3)
    at = np.sort(rng.choice(800, 120, replace=False))
    c = k["close"].to_numpy()[at]
    up = 1 if side == "long" else -1
    s = pl.DataFrame(
        {
            "open_time": k["open_time"].to_numpy()[at],
            "side": [side] * 120,
            "limit_price": c * (1 - up * 0.004),
            "tp_price": c * (1 + up * 0.02),
            "sl_price": c * (1 - up * 0.015),
        }
    )
    kw = {"spread_pct": 0.05, "commission_pct": 0.1, "market_type": "futures", "leverage": 3}
    one = simulate(k, s, **kw)
    port = simulate_portfolio({"ETH": k}, {"ETH": s}, divide=1, **kw)
    assert port.trades.drop("coin").equals(one.trades)
    renamed = port.all_positions["fate"].replace("skipped_coin_busy", "skipped_busy")
    assert renamed.to_list() == one.all_positions["fate"].to_list()
    assert port.equity.equals(one.equity)
    stated = ("market", "market_note")  # how the single run chose its market (no market given)
    assert {k: port.summary[k] for k in one.summary if k not in stated} == {
        k: v for k, v in one.summary.items() if k not in stated
    }
    assert port.coin_results["ETH"]["final_balance"] == pytest.approx(one.summary["final_balance"], rel=1e-12)


def test_each_coin_pays_its_own_markets_default_spread() -> None:
    from svc_engine.instruments import spread_pct_for

    markets = {"A": "forex", "B": "crypto"}
    r = simulate_portfolio(
        {"A": A, "B": B},
        {"A": SIG_A, "B": SIG_B},
        divide=2,
        market=markets,
        commission_pct=0.0,
        min_candles_between_signals=0,
    )
    for coin, limit in (("A", 10.0), ("B", 20.0)):
        h = spread_pct_for(markets[coin], {"A": A, "B": B}[coin], "1h") / 200
        entry = r.trades.filter(pl.col("coin") == coin)["entry_price"][0]
        assert entry == pytest.approx(limit * (1 + h), rel=1e-15)


def test_recommended_divide_always_tries_the_callers_divide() -> None:
    """Seven coins: the fixed candidates stop at 6; a caller's divide of 7 is tried too, and the
    recommendation scores at least as well as it."""
    frames = {c: A for c in "ABCDEFG"}
    r = simulate_portfolio(frames, {"A": SIG_A}, divide=7, **FREE)
    rec = r.recommended_divide
    assert [c["divide"] for c in rec["candidates"]] == [1, 2, 3, 4, 5, 6, 7]
    mine = next(c for c in rec["candidates"] if c["divide"] == 7)
    best = next(c for c in rec["candidates"] if c["divide"] == rec["divide"])
    assert best["score"] >= mine["score"]
    assert mine["final_balance"] == pytest.approx(r.summary["final_balance"])
