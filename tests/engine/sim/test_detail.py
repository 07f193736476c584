"""``intrabar="detail"``: the fill candle and candles touching both levels replayed on a finer
series; checked by hand and against the reference on real 1m candles under 15m."""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference_sim as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_helpers import DATASETS, H, aggregate, bars, candle_tuples, real, signal_dicts, sigs

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
    conservative = simulate(coarse, s, **FREE).trades.row(0, named=True)
    detail = simulate(coarse, s, intrabar="detail", detail_klines=fine, **FREE).trades.row(0, named=True)
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
    conservative = simulate(coarse, s, **FREE).trades.row(0, named=True)
    detail = simulate(coarse, s, intrabar="detail", detail_klines=fine, **FREE).trades.row(0, named=True)
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
    got = list(engine.trades.select("fill_time", "exit_time", "exit_reason").iter_rows())
    assert got == [(t.fill_time, t.exit_time, t.reason) for t in reference.trades]
    for row, t in zip(engine.trades.iter_rows(named=True), reference.trades, strict=True):
        assert math.isclose(row["entry_price"], t.entry_price, rel_tol=1e-12)
        assert math.isclose(row["exit_price"], t.exit_price, rel_tol=1e-12)
        assert math.isclose(row["return_pct"] / 100, t.return_frac, rel_tol=1e-12, abs_tol=1e-12)
    assert engine.all_positions["fate"].to_list() == reference.fates
    np.testing.assert_allclose(engine.equity["equity"].to_numpy(), reference.equity, rtol=1e-10, atol=1e-10)
