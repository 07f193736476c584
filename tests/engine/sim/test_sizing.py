"""Position sizing: a fraction of the balance (``position_size_pct``), a risk per trade from the
stop distance, and a fixed quantity; each capped at the balance."""

from __future__ import annotations

import pytest
from sim_helpers import H, bars, sigs

import svc_engine as sv
from svc_engine.sim import simulate

ROWS = [
    (10, 10, 10, 10),  # 0: signal long L=10
    (10, 10.2, 9.9, 10.1),  # 1: fills at the open, 10
    (10.5, 11.5, 9.7, 11.2),  # 2: low 9.7 reaches a stop at 9.8 (the stop wins)
    (11, 11.2, 10.9, 11.1),
]
FREE = {"commission_pct": 0.0, "spread_pct": 0.0}


def stop_trade(**settings) -> sv.BacktestResult:
    return simulate(bars(ROWS), sigs([(0, "long", 10.0, 12.0, 9.8)]), **FREE, **settings)  # SL 2 %


def tp_trade(**settings) -> sv.BacktestResult:
    return simulate(
        bars([*ROWS[:2], (10.5, 11.5, 10.4, 11.2)]), sigs([(0, "long", 10.0, 11.0, 9.0)]), **FREE, **settings
    )


def test_fraction_is_position_size_pct() -> None:
    assert stop_trade(position_size_pct=50).trades["pnl"].to_list() == pytest.approx([-1.0], rel=1e-12)


def test_risk_sizing_loses_the_risk_at_the_stop() -> None:
    r = stop_trade(sizing="risk", risk_pct=1)
    # stake = 100 * 1 % / 2 % = 50; the stop at -2 % loses 1, i.e. 1 % of the balance
    assert r.trades["pnl"].to_list() == pytest.approx([-1.0], rel=1e-12)
    assert r.summary["final_balance"] == pytest.approx(99.0, rel=1e-12)


def test_risk_sizing_is_capped_at_the_balance_and_scales_with_leverage() -> None:
    capped = stop_trade(sizing="risk", risk_pct=5)  # 250 wanted, 100 available
    assert capped.trades["pnl"].to_list() == pytest.approx([-2.0], rel=1e-12)
    lev = stop_trade(sizing="risk", risk_pct=1, market_type="futures", leverage=4)
    # stake = 100 * 1 % / (4 * 2 %) = 12.5; the stop loses 12.5 * 4 * 2 % = 1
    assert lev.trades["pnl"].to_list() == pytest.approx([-1.0], rel=1e-12)


def test_quantity_sizing_buys_that_many_units() -> None:
    r = tp_trade(sizing="quantity", quantity=3)  # 3 units at 10 = 30 committed, +10 %
    assert r.trades["pnl"].to_list() == pytest.approx([3.0], rel=1e-12)
    big = tp_trade(sizing="quantity", quantity=50)  # 500 wanted, the balance is 100
    assert big.trades["pnl"].to_list() == pytest.approx([10.0], rel=1e-12)
    lev = tp_trade(sizing="quantity", quantity=3, market_type="futures", leverage=3)
    assert lev.trades["pnl"].to_list() == pytest.approx([3.0], rel=1e-12)  # margin 10, 3x: the same 3 units


def test_sizing_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="needs risk_pct"):
        stop_trade(sizing="risk")
    with pytest.raises(ValueError, match="needs quantity"):
        stop_trade(sizing="quantity")
    with pytest.raises(ValueError, match="sizing must be one of"):
        stop_trade(sizing="kelly")
    with pytest.raises(ValueError, match="risk_pct must be"):
        stop_trade(sizing="risk", risk_pct=0)


def test_backtest_and_sweep_take_sizing() -> None:
    from svc_engine.research.demo import random_walk

    k = random_walk(800, seed=8)
    one = sv.backtest("RSI(14) crosses above 35", k, "1h", sizing="risk", risk_pct=0.5, spread_pct=0)
    rows = sv.sweep(
        "RSI(14) crosses above {level}",
        {"level": [35], "risk_pct": [0.5, 1.0]},
        {"X": k},
        "1h",
        sizing="risk",
        spread_pct=0,
    ).rows
    assert rows["final_balance"][0] == one.summary["final_balance"]
    assert rows["final_balance"][1] != rows["final_balance"][0]
    assert H == 3_600_000


def test_portfolio_sizing_by_risk_and_quantity() -> None:
    from svc_engine.sim import simulate_portfolio

    k = bars(ROWS)
    stop = {"A": sigs([(0, "long", 10.0, 12.0, 9.8)]), "B": sigs([(0, "long", 10.0, 12.0, 9.8)])}
    split = simulate_portfolio({"A": k, "B": k}, stop, divide=2, **FREE)  # 50 each, -2 % each
    assert split.trades["pnl"].to_list() == pytest.approx([-1.0, -1.0], rel=1e-12)
    risk = simulate_portfolio({"A": k, "B": k}, stop, divide=2, sizing="risk", risk_pct=0.5, **FREE)
    # each stake = 100 * 0.5 % / 2 % = 25: each stop loses 0.5 % of the balance
    assert risk.trades["pnl"].to_list() == pytest.approx([-0.5, -0.5], rel=1e-12)
    qty = simulate_portfolio({"A": k, "B": k}, stop, divide=2, sizing="quantity", quantity=7, **FREE)
    # A takes 70 of the cash, B what is left (30): stakes are capped at the free cash
    assert qty.trades["pnl"].to_list() == pytest.approx([-1.4, -0.6], rel=1e-12)
    assert {c["divide"] for c in qty.recommended_divide["candidates"]} == {1, 2}
