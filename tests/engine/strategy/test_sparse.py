"""An AND reads its per-candle comparisons at the few candidates its other parts leave
(`svc_engine.strategy.sparse`): the signals must be the ones of the whole-series evaluation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from svc_engine.indicators.averages import sma_at_nb, sma_nb
from svc_engine.strategy import compile_strategy
from svc_engine.strategy import sparse as P
from svc_engine.strategy.compiler import Context


def _klines(n: int = 20_000, seed: int = 7) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0, 0.01, n)))
    volume = rng.lognormal(3.0, 2.0, n)  # values spread over many powers of two
    volume[rng.choice(n, 40, replace=False)] = np.nan  # missing volumes: NaN windows
    volume[:5] = np.nan
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * 60_000,
            "open": close * (1 + rng.normal(0, 0.001, n)),
            "high": close * 1.01,
            "low": close * 0.99,
            "close": close,
            "volume": volume,
        }
    )


@pytest.mark.parametrize("n", [1, 2, 20, 200])
def test_sma_at_candles_is_the_whole_pass_bit_for_bit(n: int) -> None:
    x = _klines()["volume"].to_numpy()
    at = np.arange(x.size)
    whole, picked = sma_nb(x, n), sma_at_nb(x, at, n)
    assert np.array_equal(whole.view(np.int64), picked.view(np.int64))
    assert np.isnan(picked[: 5 + n - 1]).all() and np.isnan(picked).sum() == np.isnan(whole).sum()


def test_sma_at_candles_of_a_short_or_empty_series() -> None:
    assert np.isnan(sma_at_nb(np.array([1.0, 2.0]), np.array([0, 1]), 3)).all()
    assert np.isnan(sma_at_nb(np.full(3, np.nan), np.array([2]), 1)).all()
    assert sma_at_nb(np.array([1.0]), np.zeros(0, np.int64), 1).size == 0


ANDS = [
    "RSI(14) crosses above 30 and close is above EMA(200) and volume is above its 20-candle average",
    "volume is above its 20-candle average and RSI(14) crosses above 30",
    "RSI(7) crosses below 70 and close is between SMA(20) and EMA(50)",
    "close crosses above EMA(20) and close is within 1% of SMA(100) and volume is above its 5-candle average",
    "close crosses above EMA(20) and RSI(14) is below 60"
    " and (close > open or volume is above its 3-candle average)",
    "close > open and volume is above its 30-candle average",  # every part per candle: the first is whole
    "RSI(14) crosses above 30 and MACD histogram > 0 and close > EMA(200)",
    "close crosses above the upper Bollinger band (20, 2) and MACD histogram < 0.01",
]


@pytest.mark.parametrize("text", ANDS)
def test_and_at_candidates_equals_the_whole_series(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    k = _klines()
    strategy = compile_strategy(text)
    sparse = strategy.signal_mask(k)
    monkeypatch.setattr("svc_engine.strategy.conditions.SPARSE", 10**12)  # never at candidates
    whole = strategy.signal_mask(k)
    assert whole.sum() > 0
    assert np.array_equal(sparse, whole)


def test_the_candidates_path_is_taken_and_computes_no_whole_average(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = P.truth_at
    monkeypatch.setattr(
        "svc_engine.strategy.conditions.truth_at", lambda c, n, at: seen.append(at.size) or real(c, n, at)
    )
    ctx = Context(_klines())
    strategy = compile_strategy(ANDS[0])
    fired = strategy.signal_arrays(ctx)[0]
    assert len(seen) == 2 and 0 < seen[0] * P.SPARSE <= ctx.size  # two comparisons, few candidates
    assert fired.size <= seen[1] <= seen[0]
    assert not any(getattr(node, "name", "") == "sma" for node in ctx.cache)  # no whole-series SMA
    assert np.array_equal(ctx.rows[strategy.entry], np.flatnonzero(ctx.truth(strategy.entry)))


def test_truth_at_of_two_numbers_is_one_value_per_candle() -> None:
    from svc_engine.strategy import ast as A

    held = P.truth_at(Context(_klines(100)), A.Compare(">", A.Num(2.0), A.Num(1.0)), np.array([1, 3]))
    assert held.tolist() == [True, True]


def test_a_histogram_at_candidates_is_read_without_the_whole_histogram() -> None:
    from svc_engine.strategy import ast as A

    ctx = Context(_klines())
    fired = compile_strategy("RSI(14) crosses above 30 and MACD histogram > 0").signal_arrays(ctx)[0]
    histogram = A.Ind("macd", (12, 26, 9), "histogram")
    assert histogram not in ctx.cache and fired.size > 0  # line and signal only, read at the candidates
    assert (Context(_klines()).values(histogram)[fired] > 0).all()
