"""``intrabar="detail"``: the fill candle and candles touching both levels replayed on a finer
series; checked by hand and against the reference on real 1m candles under 15m; exit rules
(docs/exits.md) under detail by hand and on real minutes."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import reference_sim as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_helpers import DATASETS, H, aggregate, bars, candle_tuples, real, signal_dicts, sigs

from svc_engine.data.times import ms_columns
from svc_engine.sim import simulate, simulate_portfolio

FREE = {"commission_pct": 0.0, "spread_pct": 0.0}
M15 = 15 * 60_000


def fine_bars(rows: list[tuple], start: int) -> list[tuple]:
    return [(start + n * M15, *r) for n, r in enumerate(rows)]


def coarse_and_fine(fine_rows: list[list[tuple]]):
    """Hourly candles built from four 15m candles each."""
    fine = bars([r for hour in fine_rows for r in hour], step=M15)
    return aggregate(fine, H), fine


def test_a_candle_touching_both_levels_takes_the_level_reached_first() -> None:
    hours = [
        [(10, 10, 10, 10)] * 4,
        [(10, 10.1, 9.95, 10), (10, 10.1, 9.95, 10), (10, 10.1, 9.95, 10), (10, 10.1, 9.95, 10)],
        [(10, 11.2, 10, 11.1), (11.1, 11.1, 8.5, 9), (9, 9.5, 8.8, 9.2), (9.2, 9.3, 9.1, 9.2)],  # tp first
    ]
    coarse, fine = coarse_and_fine(hours)
    s = sigs([(0, "long", 10.0, 11.0, 9.0)])
    conservative = ms_columns(simulate(coarse, s, **FREE).trades).row(0, named=True)
    detail = simulate(coarse, s, intrabar="detail", detail_klines=fine, **FREE)
    detail = ms_columns(detail.trades).row(0, named=True)
    assert (conservative["exit_reason"], conservative["exit_price"]) == ("sl", 9.0)
    assert (detail["exit_reason"], detail["exit_price"], detail["exit_time"]) == ("tp", 11.0, 2 * H)


def test_the_fill_candle_is_replayed_from_the_fine_fill_on() -> None:
    hours = [
        [(10, 10, 10, 10)] * 4,
        [
            (10.5, 10.6, 10.2, 10.3),
            (10.3, 10.4, 9.9, 10.0),
            (10.0, 11.5, 10.0, 11.2),
            (11.2, 11.2, 10.2, 10.3),
        ],
        [(10.3, 10.4, 10.2, 10.3)] * 4,
    ]
    coarse, fine = coarse_and_fine(hours)
    s = sigs([(0, "long", 10.0, 11.0, 9.0)])
    conservative = ms_columns(simulate(coarse, s, **FREE).trades).row(0, named=True)
    detail = simulate(coarse, s, intrabar="detail", detail_klines=fine, **FREE)
    detail = ms_columns(detail.trades).row(0, named=True)
    assert (
        conservative["exit_reason"] == "end"
    )  # the coarse close (10.3) is below TP: no tp on the fill candle
    assert (detail["exit_reason"], detail["exit_price"], detail["exit_time"]) == ("tp", 11.0, H)


def test_a_gap_between_fine_candles_improves_the_fill_price() -> None:
    hours = [
        [(10, 10, 10, 10)] * 4,
        [(10.5, 10.6, 10.2, 10.3), (9.8, 9.9, 9.7, 9.8), (9.8, 9.9, 9.7, 9.8), (9.8, 9.9, 9.7, 9.8)],
        [(9.8, 9.9, 9.7, 9.8)] * 4,
    ]
    coarse, fine = coarse_and_fine(hours)
    s = sigs([(0, "long", 10.0, 11.0, 9.0)])
    assert simulate(coarse, s, **FREE).trades["entry_price"][0] == 10.0
    assert simulate(coarse, s, intrabar="detail", detail_klines=fine, **FREE).trades["entry_price"][0] == 9.8


def test_detail_needs_a_finer_series_and_a_single_coin() -> None:
    coarse, _ = coarse_and_fine([[(10, 10, 10, 10)] * 4] * 2)
    with pytest.raises(ValueError, match="detail_klines must be finer than the series"):
        simulate(coarse, sigs([]), intrabar="detail", detail_klines=coarse, **FREE)
    with pytest.raises(ValueError, match="intrabar='detail' is not supported by this engine here"):
        simulate_portfolio({"A": coarse}, {}, intrabar="detail", **FREE)


@pytest.mark.skipif(not (DATASETS / "crypto").is_dir(), reason="real datasets not found")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_detail_matches_reference(data: st.DataObject) -> None:
    minutes = real("crypto/BTCUSDT-1m")
    first = data.draw(st.integers(0, 1400))
    fine = minutes.slice(first, data.draw(st.integers(200, 600)))
    coarse = aggregate(fine, M15)
    times, closes = coarse["open_time"].to_list(), coarse["close"].to_list()
    rows = []
    for _ in range(data.draw(st.integers(1, 15))):
        at = data.draw(st.integers(0, len(times) - 1))
        side = data.draw(st.sampled_from(["long", "short"]))
        up = 1 if side == "long" else -1
        limit = closes[at] * (1 + data.draw(st.floats(-0.002, 0.002)))
        d_tp, d_sl = (
            data.draw(st.sampled_from([0.001, 0.002, 0.004])),
            data.draw(st.sampled_from([0.001, 0.002])),
        )
        rows.append((times[at], side, limit, limit * (1 + up * d_tp), limit * (1 - up * d_sl)))
    s = sigs(rows)
    lev = data.draw(st.sampled_from([1.0, 200.0]))
    cfg = {
        "min_candles_between_signals": data.draw(st.integers(0, 3)),
        "max_wait_days": 0.1,
        "leverage": lev,
        "commission_pct": 0.1,
    }
    engine = simulate(
        coarse, s, intrabar="detail", detail_klines=fine, spread_pct=0.0, market_type="futures", **cfg
    )
    reference = ref.run_single(
        candle_tuples(coarse), signal_dicts(s), cfg, tf_ms=M15, half_spread=0.0, fine=candle_tuples(fine)
    )
    got = list(ms_columns(engine.trades).select("fill_time", "exit_time", "exit_reason").iter_rows())
    assert got == [(t.fill_time, t.exit_time, t.reason) for t in reference.trades]
    for row, t in zip(ms_columns(engine.trades).iter_rows(named=True), reference.trades, strict=True):
        assert math.isclose(row["entry_price"], t.entry_price, rel_tol=1e-12)
        assert math.isclose(row["exit_price"], t.exit_price, rel_tol=1e-12)
        assert math.isclose(row["return_pct"] / 100, t.return_frac, rel_tol=1e-12, abs_tol=1e-12)
    assert engine.all_positions["fate"].to_list() == reference.fates
    np.testing.assert_allclose(engine.equity["equity"].to_numpy(), reference.equity, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- exit rules (docs/exits.md)

RULES = {"order": pl.Utf8, "max_candles": pl.Int64, "trail_pct": pl.Float64, "breakeven_pct": pl.Float64}


def rule_sigs(entry: tuple, exits: list[int], **rules: object) -> pl.DataFrame:
    """One long signal (candle, limit, tp, sl) with rule columns, and ``exit`` rows at ``exits``."""
    at, limit, tp, sl = entry
    row = {"open_time": at * H, "side": "long", "limit_price": limit, "tp_price": tp, "sl_price": sl}
    rows = [row | {"order": "limit"} | rules] + [{"open_time": i * H, "side": "exit"} for i in exits]
    return pl.DataFrame(rows, schema=dict(sigs([]).schema) | RULES)


def both(coarse: pl.DataFrame, fine: pl.DataFrame, s: pl.DataFrame) -> list[tuple]:
    """(fill hour, exit hour, entry, exit, reason) of the conservative and the detail run."""
    out = []
    for kw in ({}, {"intrabar": "detail", "detail_klines": fine}):
        t = ms_columns(
            simulate(coarse, s, timeframe="1h", min_candles_between_signals=1, **FREE, **kw).trades
        )
        cols = t.select("fill_time", "exit_time", "entry_price", "exit_price", "exit_reason").iter_rows()
        out.append([(f // H, x // H, round(e, 10), round(p, 10), why) for f, x, e, p, why in cols])
    return out


HOURS = [
    [(10, 10, 10, 10)] * 4,
    [(10.5, 10.6, 10.3, 10.4), (10.4, 10.4, 9.9, 10.0), (10.0, 10.8, 10.0, 10.7), (10.7, 10.7, 10.5, 10.6)],
    [
        (10.6, 10.6, 10.2, 10.3),
        (10.3, 10.4, 10.25, 10.35),
        (10.35, 10.4, 10.3, 10.4),
        (10.4, 10.4, 10.3, 10.35),
    ],
    [(10.35, 10.4, 10.3, 10.35)] * 4,
    [(10.5, 10.6, 10.4, 10.5)] * 4,
]


def test_detail_runs_market_entries_and_exit_conditions_as_the_conservative_rules() -> None:
    coarse, fine = coarse_and_fine(HOURS)
    # market at 0 fills at the open of 1 (10.5); the exit condition at the close of 2 leaves at the
    # open of 3 (10.35); no level to replay, so both runs agree
    market = rule_sigs((0, None, np.inf, -np.inf), [2], order="market")
    assert both(coarse, fine, market) == [[(1, 3, 10.5, 10.35, "signal")]] * 2
    held = rule_sigs((0, None, np.inf, -np.inf), [], order="market", max_candles=3)
    assert both(coarse, fine, held) == [[(1, 4, 10.5, 10.5, "time")]] * 2


def test_detail_moves_a_trailing_stop_from_the_fine_fill_on() -> None:
    coarse, fine = coarse_and_fine(HOURS)
    # limit 10 fills inside hour 1 (at its second 15m candle). Conservative: only the hour's close
    # 10.6 counts, so the 5% trailing stop for hour 2 is 10.07 and the trade leaves by the exit
    # condition at the open of 4. Detail: the fine highs after the fill reach 10.8, so the stop for
    # hour 2 is 10.26, which that hour's low 10.2 hits.
    s = rule_sigs((0, 10.0, np.inf, 9.5), [3], trail_pct=5.0)
    conservative, detail = both(coarse, fine, s)
    assert conservative == [(1, 4, 10.0, 10.5, "signal")]
    assert detail == [(1, 2, 10.0, 10.26, "trailing_stop")]


def test_detail_replays_a_candle_touching_a_moved_stop_and_the_take_profit() -> None:
    hours = [
        [(10, 10, 10, 10)] * 4,
        [
            (10, 10.2, 10, 10.1),
            (10.1, 10.4, 10.1, 10.35),
            (10.35, 10.4, 10.3, 10.35),
            (10.35, 10.35, 10.3, 10.3),
        ],
        [(10.3, 11.1, 10.3, 11.0), (11, 11, 9.9, 10), (10, 10.1, 9.95, 10), (10, 10.05, 9.95, 10)],
        [(10, 10, 10, 10)] * 4,
    ]
    coarse, fine = coarse_and_fine(hours)
    # market fill at 10 (open of 1); hour 1 reaches 10.4 (+4%), which moves the stop to the entry.
    # Hour 2 touches both the moved stop (10) and the take-profit (11): the conservative rule takes the
    # stop, the fine candles show the take-profit first.
    s = rule_sigs((0, None, 11.0, 9.0), [], order="market", breakeven_pct=3.0)
    conservative, detail = both(coarse, fine, s)
    assert conservative == [(1, 2, 10.0, 10.0, "breakeven")]
    assert detail == [(1, 2, 10.0, 11.0, "tp")]


@pytest.mark.skipif(not (DATASETS / "crypto").is_dir(), reason="real datasets not found")
def test_detail_of_exit_rules_on_real_minutes() -> None:
    from svc_engine.strategy import compile_strategy

    fine = real("crypto/ADABTC-1m")
    coarse = aggregate(fine, M15)
    kw = {"timeframe": "15m", "commission_pct": 0.1, "spread_pct": 0.0, "min_candles_between_signals": 1}
    rule = "exit when SMA(5) crosses below SMA(20) or after 12 candles"
    words = compile_strategy(
        "SMA(5) crosses above SMA(20), buy at market", "no take profit", "no stop loss", exit_condition=rule
    )
    plain = simulate(coarse, words.evaluate(coarse), **kw)
    fined = simulate(coarse, words.evaluate(coarse), intrabar="detail", detail_klines=fine, **kw)
    # no level to reach inside a candle: the fine candles change nothing
    assert plain.trades.height > 20 and fined.trades.equals(plain.trades)
    # limit entries at the close fill inside candles, and 1% / 0.5% trailing levels are reached inside
    trail = compile_strategy(
        "SMA(5) crosses above SMA(20)",
        "1%",
        "trailing stop 0.5%",
        exit_condition="exit when SMA(5) crosses below SMA(20)",
    )
    a = simulate(coarse, trail.evaluate(coarse), **kw).trades
    b = simulate(coarse, trail.evaluate(coarse), intrabar="detail", detail_klines=fine, **kw).trades
    assert a.height == b.height > 20 and {"trailing_stop", "signal", "tp"} <= set(b["exit_reason"])
    assert (a["exit_price"] != b["exit_price"]).sum() == 1  # the fine candles decide one trade otherwise
