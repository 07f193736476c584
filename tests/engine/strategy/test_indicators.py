"""Indicator values: TA-Lib agreement on real candles, hand-computed values for the rest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from svc_engine import indicators as K
from svc_engine.strategy import ast as A
from svc_engine.strategy.compiler import Context, lookback

talib = pytest.importorskip("talib")

RTOL = 1e-9


@pytest.fixture(scope="module")
def eth(shared_datasets: Path) -> pl.DataFrame:
    return pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet")


@pytest.fixture(scope="module")
def ctx(eth: pl.DataFrame) -> Context:
    return Context(eth)


def arrays(ctx: Context) -> tuple[np.ndarray, ...]:
    return tuple(ctx.array(c) for c in ("open", "high", "low", "close", "volume"))


def assert_agrees(ctx: Context, node: A.Node, reference: np.ndarray) -> None:
    mine = ctx.values(node)
    start = int(np.argmax(~np.isnan(reference)))
    assert start > 0
    # Ours is defined at least as early as TA-Lib's, and from lookback() on.
    assert not np.isnan(mine[start:]).any()
    assert np.isnan(mine[: lookback(node)]).all()
    np.testing.assert_allclose(mine[start:], reference[start:], rtol=RTOL, atol=0)


CLOSE_ONLY = [
    (A.Ind("sma", (20,)), lambda c: talib.SMA(c, 20)),
    (A.Ind("sma", (200,)), lambda c: talib.SMA(c, 200)),
    (A.Ind("ema", (20,)), lambda c: talib.EMA(c, 20)),
    (A.Ind("ema", (200,)), lambda c: talib.EMA(c, 200)),
    (A.Ind("wma", (20,)), lambda c: talib.WMA(c, 20)),
    (A.Ind("rsi", (14,)), lambda c: talib.RSI(c, 14)),
    (A.Ind("rsi", (2,)), lambda c: talib.RSI(c, 2)),
    (A.Ind("roc", (10,)), lambda c: talib.ROC(c, 10)),
    (A.Ind("macd", (12, 26, 9), "line"), lambda c: talib.MACD(c, 12, 26, 9)[0]),
    (A.Ind("macd", (12, 26, 9), "signal"), lambda c: talib.MACD(c, 12, 26, 9)[1]),
    (A.Ind("macd", (12, 26, 9), "histogram"), lambda c: talib.MACD(c, 12, 26, 9)[2]),
    (A.Ind("macd", (5, 35, 5), "signal"), lambda c: talib.MACD(c, 5, 35, 5)[1]),
    (A.Ind("bb", (20, 2.0), "upper"), lambda c: talib.BBANDS(c, 20, 2, 2, 0)[0]),
    (A.Ind("bb", (20, 2.0), "middle"), lambda c: talib.BBANDS(c, 20, 2, 2, 0)[1]),
    (A.Ind("bb", (20, 2.5), "lower"), lambda c: talib.BBANDS(c, 20, 2.5, 2.5, 0)[2]),
    (A.Ind("max", (20,)), lambda c: talib.MAX(c, 20)),
    (A.Ind("min", (20,)), lambda c: talib.MIN(c, 20)),
]


@pytest.mark.parametrize(("node", "ref"), CLOSE_ONLY, ids=lambda x: getattr(x, "name", ""))
def test_close_indicators_agree_with_talib(ctx: Context, node: A.Ind, ref) -> None:  # type: ignore[no-untyped-def]
    assert_agrees(ctx, node, ref(ctx.array("close")))


def test_candle_indicators_agree_with_talib(ctx: Context) -> None:
    _, h, l, c, _ = arrays(ctx)
    assert_agrees(ctx, A.Ind("atr", (14,)), talib.ATR(h, l, c, 14))
    assert_agrees(ctx, A.Ind("cci", (20,)), talib.CCI(h, l, c, 20))
    assert_agrees(ctx, A.Ind("willr", (14,)), talib.WILLR(h, l, c, 14))
    slow_k, slow_d = talib.STOCH(h, l, c, 14, 3, 0, 3, 0)
    assert_agrees(ctx, A.Ind("stoch", (14, 3, 3), "%k"), slow_k)
    assert_agrees(ctx, A.Ind("stoch", (14, 3, 3), "%d"), slow_d)
    assert_agrees(ctx, A.Ind("max", (55,), "", A.Field("high")), talib.MAX(h, 55))
    assert_agrees(ctx, A.Ind("min", (10,), "", A.Field("low")), talib.MIN(l, 10))
    assert_agrees(ctx, A.Ind("sma", (20,), "", A.Field("volume")), talib.SMA(ctx.array("volume"), 20))
    np.testing.assert_allclose(ctx.values(A.Field("typical")), talib.TYPPRICE(h, l, c), rtol=RTOL)


def frame(**cols: list[float]) -> pl.DataFrame:
    n = len(cols["close"])
    base = {"open_time": [i * 3_600_000 for i in range(n)]}
    for name in ("open", "high", "low", "volume"):
        base[name] = cols.get(name, cols["close"])  # type: ignore[assignment]
    base["close"] = cols["close"]  # type: ignore[assignment]
    return pl.DataFrame(base).select("open_time", "open", "high", "low", "close", "volume")


def test_typical_price_by_hand() -> None:
    k = frame(high=[3.0, 6.0], low=[1.0, 3.0], close=[2.0, 3.0])
    assert Context(k).values(A.Field("typical")).tolist() == [2.0, 4.0]


def test_session_vwap_resets_each_utc_day() -> None:
    k = frame(high=[3.0, 6.0, 9.0], low=[1.0, 3.0, 9.0], close=[2.0, 3.0, 9.0], volume=[1.0, 3.0, 2.0])
    k = k.with_columns(pl.Series("open_time", [0, 3_600_000, 86_400_000]))
    # day 1: (2*1 + 4*3) / 4 = 3.5 ; day 2 starts over at typical price 9
    assert Context(k).values(A.Ind("vwap", (0,))).tolist() == [2.0, 3.5, 9.0]


def test_rolling_vwap_and_zero_volume() -> None:
    k = frame(close=[2.0, 4.0, 6.0, 8.0], volume=[1.0, 1.0, 0.0, 0.0])
    got = Context(k).values(A.Ind("vwap", (2,))).tolist()
    assert got[1:3] == [3.0, 4.0]
    assert np.isnan(got[0]) and np.isnan(got[3])


def test_keltner_by_hand() -> None:
    close = [10.0, 11.0, 12.0, 11.0]
    k = frame(high=[c + 1 for c in close], low=[c - 1 for c in close], close=close)
    ctx = Context(k)
    # EMA(2): seed mean(10, 11) = 10.5 at 1, then 10.5 + (12 - 10.5) * 2/3 = 11.5,
    # then 11.5 + (11 - 11.5) * 2/3
    ema = [10.5, 11.5, 11.5 - 1.0 / 3.0]
    # TR: [-, 2, 2, 2] -> ATR(2) seeded at index 2 with mean(2, 2) = 2, stays 2
    upper = ctx.values(A.Ind("keltner", (2, 1.5), "upper"))
    middle = ctx.values(A.Ind("keltner", (2, 1.5), "middle"))
    lower = ctx.values(A.Ind("keltner", (2, 1.5), "lower"))
    assert np.isnan(upper[:2]).all() and np.isnan(middle[0])
    np.testing.assert_allclose(middle[1:], ema, rtol=1e-15)
    np.testing.assert_allclose(upper[2:], [11.5 + 3.0, ema[2] + 3.0], rtol=1e-15)
    np.testing.assert_allclose(lower[2:], [11.5 - 3.0, ema[2] - 3.0], rtol=1e-15)


def test_donchian_by_hand() -> None:
    k = frame(high=[5.0, 7.0, 6.0, 4.0], low=[1.0, 3.0, 2.0, 3.5], close=[3.0, 5.0, 4.0, 3.8])
    ctx = Context(k)
    assert ctx.values(A.Ind("donchian", (2,), "upper")).tolist()[1:] == [7.0, 7.0, 6.0]
    assert ctx.values(A.Ind("donchian", (2,), "lower")).tolist()[1:] == [1.0, 2.0, 2.0]
    assert ctx.values(A.Ind("donchian", (2,), "middle")).tolist()[1:] == [4.0, 4.5, 4.0]


def test_bandwidth_by_hand() -> None:
    ctx = Context(frame(close=[1.0, 3.0]))
    # mean 2, population std 1: (upper - lower) / middle = (2 * 2 * 1) / 2
    assert ctx.values(A.Ind("bb", (2, 2.0), "bandwidth")).tolist()[1] == 2.0


def test_consecutive_candles_and_streaks_by_hand() -> None:
    k = frame(open=[1.0, 1.0, 1.0, 3.0, 1.0, 1.0], close=[2.0, 2.0, 2.0, 1.0, 2.0, 3.0])
    ctx = Context(k)
    assert ctx.truth(A.Candles("green", 2)).tolist() == [False, True, True, False, False, True]
    assert ctx.truth(A.Candles("red", 1)).tolist() == [False, False, False, True, False, False]
    # close: 2 2 2 1 2 3 -> rises at 4 and 5
    assert ctx.truth(A.Streak("rise", 2, A.Field("close"))).tolist() == [False] * 5 + [True]
    assert ctx.truth(A.Streak("fall", 1, A.Field("close"))).tolist() == [
        False,
        False,
        False,
        True,
        False,
        False,
    ]


def test_new_extreme_and_cross_by_hand() -> None:
    ctx = Context(frame(close=[3.0, 1.0, 2.0, 4.0, 4.0, 5.0]))
    assert ctx.truth(A.NewExtreme("high", 2, A.Field("close"))).tolist() == [
        False,
        False,
        False,
        True,
        False,
        True,
    ]
    assert ctx.truth(A.NewExtreme("low", 1, A.Field("close"))).tolist() == [
        False,
        True,
        False,
        False,
        False,
        False,
    ]
    assert ctx.truth(A.Cross("above", A.Field("close"), A.Num(2.0))).tolist() == [
        False,
        False,
        False,
        True,
        False,
        False,
    ]
    assert ctx.truth(A.Cross("below", A.Field("close"), A.Num(2.0))).tolist() == [
        False,
        True,
        False,
        False,
        False,
        False,
    ]


def test_rolling_extremes_on_decreasing_series() -> None:
    x = np.arange(10.0, 0.0, -1.0)
    assert K.rolling_max_nb(x, 3).tolist()[2:] == [10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0]
    assert K.rolling_min_nb(x, 3).tolist()[2:] == [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]


def test_indicator_of_indicator_starts_after_both_warmups(ctx: Context) -> None:
    node = A.Ind("ema", (10,), "", A.Ind("rsi", (14,)))
    values = ctx.values(node)
    assert lookback(node) == 14 + 9
    assert np.isnan(values[:23]).all() and not np.isnan(values[23:]).any()
    assert_agrees(ctx, node, talib.EMA(talib.RSI(ctx.array("close"), 14), 10))


def test_missing_volume_only_blanks_the_windows_that_hold_it() -> None:
    k = frame(close=[1.0] * 6, volume=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    k = k.with_columns(pl.Series("volume", [1.0, 2.0, None, 4.0, 5.0, 6.0]))
    got = Context(k).values(A.Ind("sma", (2,), "", A.Field("volume"))).tolist()
    assert got[1] == 1.5 and got[4:] == [4.5, 5.5]
    assert np.isnan(got[0]) and np.isnan(got[2]) and np.isnan(got[3])


@pytest.mark.parametrize("mult", [2.0, -2.0, 0.5])
def test_rolling_band_is_mid_plus_mult_deviations_bit_for_bit(mult: float) -> None:
    rng = np.random.default_rng(3)
    x = 100.0 * np.exp(np.cumsum(rng.normal(0, 0.01, 5_000)))
    x[[7, 900]] = np.nan  # windows holding a gap, and the start
    mid = K.sma_nb(x, 20)
    fused, apart = K.rolling_band_nb(x, mid, 20, mult), K.band_nb(mid, K.rolling_std_nb(x, mid, 20), mult)
    assert np.array_equal(fused, apart, equal_nan=True) and np.isfinite(fused).sum() > 4_000
    assert np.array_equal(fused[np.isfinite(fused)].view(np.int64), apart[np.isfinite(apart)].view(np.int64))
