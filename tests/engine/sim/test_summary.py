"""Every summary figure, the equity curve and the result's JSON on a hand-computed series."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sim_helpers import H, bars, sigs

from svc_engine.data.times import ms_columns
from svc_engine.sim import perf, simulate

ROWS = [
    (10, 10, 10, 10),  # 0: signal A long L=10 TP=11 SL=9
    (10, 10.2, 9.9, 10.1),  # 1: A fills at the open, 10
    (10.5, 11.5, 10.4, 11.2),  # 2: A exits tp 11 (+10%); signal B long L=11 TP=12.1 SL=9.9
    (11, 11.2, 10.9, 11.1),  # 3: B fills at the open, 11
    (10.5, 10.6, 9.8, 10.0),  # 4: B exits sl 9.9 (-10%); signal C short L=10 TP=8 SL=11
    (10.2, 10.3, 10.0, 10.1),  # 5: C fills at the open, 10.2 (a short fills at max(open, L))
    (9.0, 9.5, 8.5, 9.0),  # 6: last candle: C closes at 9.0 (end)
]
SIGNALS = [(0, "long", 10.0, 11.0, 9.0), (2 * H, "long", 11.0, 12.1, 9.9), (4 * H, "short", 10.0, 8.0, 11.0)]
FREE = {"commission_pct": 0.0, "spread_pct": 0.0, "min_candles_between_signals": 2}
C_RET = (10.2 - 9.0) / 10.2


@pytest.fixture(scope="module")
def result():
    return simulate(bars(ROWS), sigs(SIGNALS), symbol="TEST", **FREE)


def test_trades(result) -> None:
    t = ms_columns(result.trades)
    assert t["exit_reason"].to_list() == ["tp", "sl", "end"]
    assert t["fill_time"].to_list() == [H, 3 * H, 5 * H]
    assert t["exit_time"].to_list() == [2 * H, 4 * H, 6 * H]
    assert t["entry_price"].to_list() == [10.0, 11.0, 10.2]
    assert t["exit_price"].to_list() == [11.0, 9.9, 9.0]
    np.testing.assert_allclose(t["return_pct"].to_numpy(), [10.0, -10.0, C_RET * 100], rtol=1e-12)
    np.testing.assert_allclose(t["pnl"].to_numpy(), [10.0, -11.0, 99 * C_RET], rtol=1e-12)
    np.testing.assert_allclose(t["balance"].to_numpy(), [110.0, 99.0, 99 * (1 + C_RET)], rtol=1e-12)
    assert t.columns == [
        "signal_time",
        "fill_time",
        "exit_time",
        "side",
        "limit_price",
        "entry_price",
        "exit_price",
        "tp_price",
        "sl_price",
        "exit_reason",
        "return_pct",
        "pnl",
        "balance",
    ]


def test_equity_marks_open_positions_at_each_close(result) -> None:
    expected = [100, 101, 110, 111, 99, 99 * (1 + 0.1 / 10.2), 99 * (1 + C_RET)]
    np.testing.assert_allclose(result.equity["equity"].to_numpy(), expected, rtol=1e-12)
    dd = result.equity["drawdown_pct"].to_numpy()
    assert dd[4] == pytest.approx(12 / 111 * 100, rel=1e-12) and dd[:4].tolist() == [0, 0, 0, 0]


def test_every_summary_figure(result) -> None:
    s = result.summary
    final = 99 * (1 + C_RET)
    expected = {
        "total_signals": 3,
        "total_trades": 3,
        "gain_count": 2,
        "loss_count": 1,
        "win_rate": 200 / 3,
        "final_balance": final,
        "total_return_pct": final - 100,
        "max_drawdown_pct": 12 / 111 * 100,
        "profit_factor": (10 + 99 * C_RET) / 11,
        "avg_profit_per_trade_pct": C_RET * 100 / 3,
        "avg_win_return_pct": (10 + C_RET * 100) / 2,
        "avg_loss_return_pct": -10.0,
        "best_trade_pct": C_RET * 100,
        "worst_trade_pct": -10.0,
        "avg_signals_per_month": 3 / (7 / 24 / 30.4375),
    }
    # no market given and 'TEST' no known instrument: the market taken is stated (sim.markets)
    assert set(s) == set(expected) | set(perf.FIGURES) | {"market", "market_note"}
    assert s["market"] == "crypto" and s["market_note"].startswith("assumed")
    for name, value in expected.items():
        assert s[name] == pytest.approx(value, rel=1e-12), name


def test_every_performance_statistic_by_hand(result) -> None:
    """The statistics of ``svc_engine.sim.perf`` on the same run, each worked out from its
    definition on the hand-computed equity (1h crypto candles: 8766 per year)."""
    s = result.summary
    final = 99 * (1 + C_RET)
    eq = np.array([100, 101, 110, 111, 99, 99 * (1 + 0.1 / 10.2), final])
    r = eq[1:] / eq[:-1] - 1
    mean, sd = r.sum() / 6, np.sqrt(((r - r.sum() / 6) ** 2).sum() / 5)
    down = np.sqrt((np.minimum(r, 0) ** 2).sum() / 6)
    pnl = np.array([10.0, -11.0, 99 * C_RET])
    pnl_sd = np.sqrt(((pnl - pnl.mean()) ** 2).sum() / 2)
    cagr = ((final / 100) ** (365.25 * 24 / 6) - 1) * 100
    expected = {
        "cagr_pct": cagr,  # 6 hours from the first open to the last
        "annual_volatility_pct": sd * np.sqrt(8766) * 100,
        "sharpe_ratio": mean / sd * np.sqrt(8766),
        "sortino_ratio": mean / down * np.sqrt(8766),
        "calmar_ratio": cagr / (12 / 111 * 100),
        "max_drawdown_duration_days": 3 / 24,  # peak 111 at 3h, never regained by 6h
        "exposure_pct": 6 / 7 * 100,  # candles 1-2, 3-4 and 5-6 hold a position; candle 0 none
        "expectancy_pct": C_RET * 100 / 3,
        "sqn": np.sqrt(3) * pnl.mean() / pnl_sd,
        "avg_trade_duration_hours": 1.0,
        "longest_trade_duration_hours": 1.0,
        "buy_and_hold_return_pct": -10.0,  # close 10 -> 9
    }
    for name, value in expected.items():
        assert s[name] == pytest.approx(value, rel=1e-9), name


def test_risk_free_rate_and_periods_settings(result) -> None:
    rf = simulate(bars(ROWS), sigs(SIGNALS), risk_free_rate=0.05, periods_per_year=100, **FREE).summary
    r = result.equity["equity"].to_numpy()
    ex = r[1:] / r[:-1] - 1 - (1.05 ** (1 / 100) - 1)
    assert rf["sharpe_ratio"] == pytest.approx(ex.mean() / ex.std(ddof=1) * 10, rel=1e-12)
    assert rf["cagr_pct"] == result.summary["cagr_pct"]  # calendar time, not periods
    with pytest.raises(ValueError, match="risk_free_rate"):
        simulate(bars(ROWS), sigs(SIGNALS), risk_free_rate=2, **FREE)


def test_signal_counts_and_positions(result) -> None:
    assert result.signal_counts == {
        "placed": 3,
        "filled": 3,
        "expired": 0,
        "skipped_invalid": 0,
        "skipped_tp_below_min": 0,
        "skipped_tp_above_max": 0,
        "skipped_sl_below_min": 0,
        "skipped_sl_above_max": 0,
        "skipped_min_gap": 0,
        "skipped_busy": 0,
        "skipped_no_slot": 0,
    }
    assert result.all_positions["fate"].to_list() == ["traded"] * 3


def test_to_dict_is_strict_json(result) -> None:
    d = result.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert (
        d["total_trades"] == 3
        and d["total_positions"] == 3
        and d["coin"] == "TEST"
        and d["timeframe"] == "1h"
    )
    assert d["summary"]["profit_factor"] == pytest.approx((10 + 99 * C_RET) / 11, rel=1e-12)
    assert d["trades"][0]["exit_reason"] == "tp" and "NaN" not in text


def test_no_trades_gives_nulls_never_nan() -> None:
    r = simulate(bars(ROWS), sigs([(0, "long", 10.0, None, 9.0)]), **FREE)
    s = r.summary
    assert (s["total_trades"], s["win_rate"], s["final_balance"], s["total_return_pct"]) == (
        0,
        0.0,
        100.0,
        0.0,
    )
    for name in (
        "sharpe_ratio",
        "sortino_ratio",
        "calmar_ratio",
        "expectancy_pct",
        "sqn",
        "avg_trade_duration_hours",
        "profit_factor",
        "avg_profit_per_trade_pct",
        "avg_win_return_pct",
        "avg_loss_return_pct",
        "best_trade_pct",
        "worst_trade_pct",
    ):
        assert s[name] is None
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["all_positions"][0]["tp_price"] is None  # NaN of a missing TP becomes null


def test_profit_factor_is_null_without_losses_and_zero_without_gains() -> None:
    win = simulate(bars(ROWS[:3]), sigs(SIGNALS[:1]), **FREE)
    assert win.summary["profit_factor"] is None and win.summary["loss_count"] == 0
    lose = simulate(bars(ROWS[2:5]), sigs([(0, "long", 11.0, 12.1, 9.9)]), **FREE)
    assert lose.summary["profit_factor"] == 0.0 and lose.summary["win_rate"] == 0.0


def test_position_size_keeps_the_rest_in_cash() -> None:
    r = simulate(bars(ROWS[:3]), sigs(SIGNALS[:1]), position_size_pct=50, **FREE)
    assert r.trades["pnl"].to_list() == pytest.approx([5.0], rel=1e-12)
    np.testing.assert_allclose(r.equity["equity"].to_numpy(), [100, 100.5, 105], rtol=1e-12)


def test_a_range_run_starts_flat_and_ends_at_its_last_candle() -> None:
    # range = candles 2..5: A (candle 0) is outside; B trades; C is still open at 5 and closes there
    r = simulate(bars(ROWS), sigs(SIGNALS), start_ts=2 * 3600, end_ts=5 * 3600, **FREE)
    assert ms_columns(r.all_positions)["signal_time"].to_list() == [2 * H, 4 * H]
    t = ms_columns(r.trades)
    assert t["exit_reason"].to_list() == ["sl", "end"] and t["exit_time"].to_list() == [4 * H, 5 * H]
    assert t["exit_price"].to_list() == [9.9, 10.1]
    assert ms_columns(r.equity)["open_time"].to_list() == [2 * H, 3 * H, 4 * H, 5 * H]
    assert r.summary["final_balance"] == pytest.approx(90 * (1 + 0.1 / 10.2), rel=1e-12)


def test_the_busy_rule_and_a_signal_on_the_exit_candle() -> None:
    s = sigs([*SIGNALS[:1], (1 * H, "long", 10.0, 11.0, 9.0), (2 * H, "long", 11.0, 12.1, 9.9)])
    r = simulate(bars(ROWS), s, **(FREE | {"min_candles_between_signals": 0}))
    assert r.all_positions["fate"].to_list() == ["traded", "skipped_busy", "traded"]


def test_min_gap_is_anchored_on_orders_placed() -> None:
    s = sigs(
        [
            (0, "long", 10.0, 11.0, 9.0),
            (1 * H, "long", 10.0, 10.001, 9.0),
            (2 * H, "long", 11.0, 12.1, 9.9),
            (3 * H, "long", 11.0, 12.1, 9.9),
        ]
    )
    # 1 is filtered out (tp below min) and anchors nothing; 2 is only 2 candles after 0; 3 is 3 after 0
    r = simulate(bars(ROWS), s, **(FREE | {"min_candles_between_signals": 3}))
    assert r.all_positions["fate"].to_list() == [
        "traded",
        "skipped_tp_below_min",
        "skipped_min_gap",
        "traded",
    ]


def test_a_liquidated_balance_cancels_later_fills() -> None:
    rows = [
        (10, 10, 10, 10),
        (10, 10.2, 9.9, 10.1),
        (9.5, 9.6, 7.9, 8.2),
        (8.2, 8.3, 8.0, 8.1),
        (8.1, 8.2, 8.0, 8.1),
    ]
    s = sigs([(0, "long", 10.0, 11.0, 7.0), (2 * H, "long", None, 9.0, 7.5)])
    r = simulate(
        bars(rows),
        s,
        market_type="futures",
        leverage=5,
        commission_pct=0,
        spread_pct=0,
        min_candles_between_signals=1,
    )
    assert r.all_positions["fate"].to_list() == ["traded", "skipped_no_slot"]
    assert r.signal_counts["skipped_no_slot"] == 1 and r.summary["total_signals"] == 2
