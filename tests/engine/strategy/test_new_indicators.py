"""The indicators of issue 20: TA-Lib agreement on real candles (to 1e-9), hand-computed references
where TA-Lib has none, warm-up and restart, and the words that name them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from svc_engine.strategy import ast as A
from svc_engine.strategy import compile_strategy
from svc_engine.strategy.compiler import Context, lookback, settle

talib = pytest.importorskip("talib")

RTOL = 1e-9


@pytest.fixture(scope="module")
def eth(shared_datasets: Path) -> pl.DataFrame:
    return pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet")


@pytest.fixture(scope="module")
def ctx(eth: pl.DataFrame) -> Context:
    return Context(eth)


def hlcv(ctx: Context) -> tuple[np.ndarray, ...]:
    return tuple(ctx.array(c) for c in ("high", "low", "close", "volume"))


def agree(ctx: Context, node: A.Ind, reference: np.ndarray, atol: float = 0.0) -> None:
    mine = ctx.values(node)
    start = int(np.argmax(~np.isnan(reference)))
    # Defined at least as early as TA-Lib, and exactly from lookback() on.
    assert not np.isnan(mine[start:]).any()
    assert np.isnan(mine[: lookback(node)]).all() and not np.isnan(mine[lookback(node)])
    np.testing.assert_allclose(mine[start:], reference[start:], rtol=RTOL, atol=atol)


def talib_cases(ctx: Context) -> list[tuple[A.Ind, np.ndarray, float]]:
    h, lo, c, v = hlcv(ctx)
    fk, fd = talib.STOCHRSI(c, 14, 14, 3, 0)
    upper, _, lower = talib.BBANDS(c, 20, 2, 2, 0)
    return [
        (A.Ind("dmi", (14,), "adx"), talib.ADX(h, lo, c, 14), 0.0),
        (A.Ind("dmi", (14,), "+di"), talib.PLUS_DI(h, lo, c, 14), 0.0),
        (A.Ind("dmi", (14,), "-di"), talib.MINUS_DI(h, lo, c, 14), 0.0),
        (A.Ind("dmi", (5,), "adx"), talib.ADX(h, lo, c, 5), 0.0),
        (A.Ind("aroon", (25,), "up"), talib.AROON(h, lo, 25)[1], 0.0),
        (A.Ind("aroon", (25,), "down"), talib.AROON(h, lo, 25)[0], 0.0),
        (A.Ind("aroon", (14,), "oscillator"), talib.AROONOSC(h, lo, 14), 0.0),
        (A.Ind("sar", (0.02, 0.2)), talib.SAR(h, lo, 0.02, 0.2), 0.0),
        (A.Ind("sar", (0.01, 0.1)), talib.SAR(h, lo, 0.01, 0.1), 0.0),
        (A.Ind("obv", ()), talib.OBV(c, v), 0.0),
        (A.Ind("ad", ()), talib.AD(h, lo, c, v), 0.0),
        (A.Ind("mfi", (14,)), talib.MFI(h, lo, c, v, 14), 0.0),
        (A.Ind("stochrsi", (14, 14, 3), "%k"), fk, 1e-9),
        (A.Ind("stochrsi", (14, 14, 3), "%d"), fd, 1e-9),  # values in [0, 100]; TA-Lib leaves 1e-14 for 0
        (A.Ind("mom", (10,)), talib.MOM(c, 10), 0.0),
        (A.Ind("dema", (20,)), talib.DEMA(c, 20), 0.0),
        (A.Ind("tema", (20,)), talib.TEMA(c, 20), 0.0),
        (A.Ind("stddev", (20,)), talib.STDDEV(c, 20, 1), 0.0),
        (A.Ind("natr", (14,)), talib.NATR(h, lo, c, 14), 0.0),
        (A.Ind("bb", (20, 2.0), "%b"), (c - lower) / (upper - lower), 0.0),
        (A.Ind("ema", (9,), "", A.Ind("mfi", (14,))), talib.EMA(talib.MFI(h, lo, c, v, 14), 9), 0.0),
    ]


def test_new_indicators_agree_with_talib(ctx: Context) -> None:
    for node, reference, atol in talib_cases(ctx):
        agree(ctx, node, reference, atol)


def rows(**cols: list[float]) -> pl.DataFrame:
    n = len(cols["close"])
    base: dict[str, list] = {"open_time": [i * 3_600_000 for i in range(n)]}
    for name in ("open", "high", "low", "volume"):
        base[name] = cols.get(name, cols["close"])
    base["close"] = cols["close"]
    return pl.DataFrame(base).select("open_time", "open", "high", "low", "close", "volume")


def test_hma_zscore_cmf_by_hand(ctx: Context) -> None:
    c = ctx.array("close")[:500]
    small = Context(ctx.klines.head(500))

    def wma(x: np.ndarray, n: int) -> np.ndarray:
        w = np.arange(1.0, n + 1)
        done = [x[i - n + 1 : i + 1] @ w / w.sum() for i in range(n - 1, x.size)]
        return np.array([np.nan] * (n - 1) + done)

    raw = 2 * wma(c, 10) - wma(c, 21)
    raw = raw[20:]
    hull = np.r_[[np.nan] * 20, wma(raw, math.isqrt(21))]
    np.testing.assert_allclose(small.values(A.Ind("hma", (21,)))[23:], hull[23:], rtol=1e-12)
    assert lookback(A.Ind("hma", (21,))) == 23  # 21 - 1 + isqrt(21) - 1

    window = np.lib.stride_tricks.sliding_window_view(c, 20)
    z = (c[19:] - window.mean(axis=1)) / window.std(axis=1)
    np.testing.assert_allclose(small.values(A.Ind("zscore", (20,)))[19:], z, rtol=1e-9)

    h, lo, cl, v = (a[:500] for a in hlcv(ctx))
    mfv = np.where(h > lo, ((cl - lo) - (h - cl)) / (h - lo), 0.0) * v
    cmf = np.array([mfv[i - 19 : i + 1].sum() / v[i - 19 : i + 1].sum() for i in range(19, 500)])
    np.testing.assert_allclose(small.values(A.Ind("cmf", (20,)))[19:], cmf, rtol=1e-9)


def test_cmf_by_hand_numbers() -> None:
    k = rows(high=[3.0, 4.0, 5.0], low=[1.0, 2.0, 3.0], close=[3.0, 2.5, 4.0], volume=[2.0, 4.0, 1.0])
    # money flow volume: +2 (close at the high), -2 (close 1/4 up the range), 0 (mid) -> sums / volume
    assert Context(k).values(A.Ind("cmf", (2,))).tolist()[1:] == [0.0, -2.0 / 5.0]


def supertrend_reference(h: np.ndarray, lo: np.ndarray, c: np.ndarray, n: int, m: float) -> tuple[list, list]:
    atr = talib.ATR(h, lo, c, n)
    line, way = [], []
    upper = lower = math.nan
    trend = -1
    for t in range(c.size):
        if math.isnan(atr[t]):
            line.append(math.nan)
            way.append(math.nan)
            continue
        bu, bl = (h[t] + lo[t]) / 2 + m * atr[t], (h[t] + lo[t]) / 2 - m * atr[t]
        if math.isnan(upper):
            upper, lower = bu, bl
        else:
            upper = bu if (bu < upper or c[t - 1] > upper) else upper
            lower = bl if (bl > lower or c[t - 1] < lower) else lower
            if trend < 0 and c[t] > upper:
                trend = 1
            elif trend > 0 and c[t] < lower:
                trend = -1
        way.append(float(trend))
        line.append(lower if trend > 0 else upper)
    return line, way


def test_supertrend_and_ichimoku_by_hand(ctx: Context) -> None:
    h, lo, c, _ = (a[:3000] for a in hlcv(ctx))
    small = Context(ctx.klines.head(3000))
    line, way = supertrend_reference(h, lo, c, 10, 3.0)
    np.testing.assert_allclose(small.values(A.Ind("supertrend", (10, 3.0), "line")), line, rtol=1e-9)
    assert np.array_equal(small.values(A.Ind("supertrend", (10, 3.0), "direction")), way, equal_nan=True)
    assert {-1.0, 1.0} <= set(np.unique(np.array(way)[10:]))

    def mid(n: int) -> np.ndarray:
        return (talib.MAX(h, n) + talib.MIN(lo, n)) / 2

    tenkan, kijun, b_now = mid(9), mid(26), mid(52)
    span_a = np.r_[[np.nan] * 26, ((tenkan + kijun) / 2)[:-26]]
    span_b = np.r_[[np.nan] * 26, b_now[:-26]]
    outputs = ("tenkan", "kijun", "senkou a", "senkou b")
    got = {o: small.values(A.Ind("ichimoku", (9, 26, 52), o)) for o in outputs}
    for mine, ref in zip(got.values(), (tenkan, kijun, span_a, span_b), strict=True):
        assert np.array_equal(mine, ref, equal_nan=True)
    top = small.values(A.Ind("ichimoku", (9, 26, 52), "cloud top"))
    assert np.array_equal(top, np.maximum(span_a, span_b), equal_nan=True)
    assert lookback(A.Ind("ichimoku", (9, 26, 52), "cloud top")) == 77 == int(np.argmax(~np.isnan(top)))


RESTARTABLE = [
    A.Ind("dmi", (14,), "adx"),
    A.Ind("dmi", (14,), "+di"),
    A.Ind("aroon", (25,), "oscillator"),
    A.Ind("mfi", (14,)),
    A.Ind("cmf", (20,)),
    A.Ind("stochrsi", (14, 14, 3), "%d"),
    A.Ind("mom", (10,)),
    A.Ind("dema", (20,)),
    A.Ind("tema", (9,)),
    A.Ind("hma", (20,)),
    A.Ind("stddev", (20,)),
    A.Ind("zscore", (20,)),
    A.Ind("natr", (14,)),
    A.Ind("bb", (20, 2.0), "%b"),
    A.Ind("ichimoku", (9, 26, 52), "cloud bottom"),
]


@pytest.mark.parametrize("node", RESTARTABLE, ids=lambda n: f"{n.name}-{n.output}")
def test_a_restart_after_the_settle_gives_the_same_floats(eth: pl.DataFrame, node: A.Ind) -> None:
    whole = Context(eth).values(node)
    start = settle(node) + 100
    # A series that starts `settle` candles before `start` gives the whole history's values from `start` on.
    part = Context(eth.slice(start - settle(node))).values(node)
    assert np.array_equal(part[settle(node) :], whole[start:], equal_nan=True)


@pytest.mark.parametrize(
    "node",
    [A.Ind("obv", ()), A.Ind("ad", ()), A.Ind("sar", (0.02, 0.2)), A.Ind("supertrend", (10, 3.0), "line")],
    ids=lambda n: n.name,
)
def test_running_totals_and_stops_warm_up_on_the_whole_history(node: A.Ind) -> None:
    assert settle(node) >= 1_000_000_000  # a chunk reads from the first candle


WORDS = {
    "ADX(14) is above 25": "ADX(14) is above 25",
    "+DI crosses above -DI": "+DI(14) crosses above -DI(14)",
    "DI+ crosses above DI- and ADX is above 20": "+DI(14) crosses above -DI(14) and ADX(14) is above 20",
    "Aroon up crosses above Aroon down": "Aroon up(25) crosses above Aroon down(25)",
    "aroon oscillator(14) is above 50": "Aroon oscillator(14) is above 50",
    "price crosses above the parabolic SAR": "close crosses above parabolic SAR(0.02, 0.2)",
    "close is above psar(0.01, 0.1)": "close is above parabolic SAR(0.01, 0.1)",
    "close is above the supertrend (10, 3)": "close is above Supertrend(10, 3)",
    "supertrend is bullish": "Supertrend direction(10, 3) is above 0",
    "supertrend flips bearish": "Supertrend direction(10, 3) crosses below 0",
    "price is above the cloud": "close is above Ichimoku cloud top(9, 26, 52)",
    "close falls below the kumo": "close crosses below Ichimoku cloud bottom(9, 26, 52)",
    "the cloud is green": "Ichimoku senkou a(9, 26, 52) is above Ichimoku senkou b(9, 26, 52)",
    "tenkan crosses kijun": "Ichimoku tenkan(9, 26, 52) crosses Ichimoku kijun(9, 26, 52)",
    "tenkan sen crosses above kijun sen": (
        "Ichimoku tenkan(9, 26, 52) crosses above Ichimoku kijun(9, 26, 52)"
    ),
    "OBV is above its 20-candle average": "OBV is above SMA(20) of OBV",
    "the A/D line rises for 3 candles": "A/D line rises for 3 candles in a row",
    "MFI(14) is below 20": "MFI(14) is below 20",
    "MFI above its 10-candle average": "MFI(14) is above SMA(10) of MFI(14)",
    "Chaikin money flow is above 0.1": "CMF(20) is above 0.1",
    "stoch RSI %K crosses above stoch RSI %D": "StochRSI %K(14, 14, 3) crosses above StochRSI %D(14, 14, 3)",
    "momentum(10) turns positive": "momentum(10) crosses above 0",
    "DEMA 20 crosses above TEMA 20": "DEMA(20) crosses above TEMA(20)",
    "close is above the 55 hull moving average": "close is above HMA(55)",
    "standard deviation of close over 20 candles is above 50": "standard deviation(20) is above 50",
    "z-score of close over 20 candles is below -2": "z-score(20) is below -2",
    "ATR%(14) is above 1": "ATR%(14) is above 1",
    "Bollinger %B is below 0": "Bollinger %B(20, 2) is below 0",
    "the 9-period EMA of RSI(14) crosses above 50": "EMA(9) of RSI(14) crosses above 50",
}


@pytest.mark.parametrize(("text", "wording"), WORDS.items(), ids=list(WORDS))
def test_words_compile_to_their_meaning_and_back(text: str, wording: str) -> None:
    strategy = compile_strategy(text)
    assert strategy.wording["entry"] == wording
    assert compile_strategy(wording) == strategy
    assert strategy.describe().startswith(f"long when {wording};")


def test_every_new_indicator_runs_through_signals_and_a_backtest(eth: pl.DataFrame) -> None:
    from svc_engine.sim import simulate

    k = eth.head(3000)
    for text in WORDS:
        strategy = compile_strategy(text, "2%", "1%")
        signals = strategy.evaluate(k)
        result = simulate(k, signals, timeframe="1h", symbol="ETHUSDT")
        assert result.summary["total_signals"] >= 0
        assert signals.height > 0, text


PATTERNS = {
    "bullish engulfing pattern": ("CDLENGULFING", 1),
    "bearish engulfing pattern": ("CDLENGULFING", -1),
    "bullish harami pattern": ("CDLHARAMI", 1),
    "bearish harami pattern": ("CDLHARAMI", -1),
    "doji pattern": ("CDLDOJI", 0),
    "hammer pattern": ("CDLHAMMER", 0),
    "inverted hammer pattern": ("CDLINVERTEDHAMMER", 0),
    "shooting star pattern": ("CDLSHOOTINGSTAR", 0),
    "morning star pattern": ("CDLMORNINGSTAR", 0),
    "evening star pattern": ("CDLEVENINGSTAR", 0),
    "three white soldiers pattern": ("CDL3WHITESOLDIERS", 0),
    "three black crows pattern": ("CDL3BLACKCROWS", 0),
}


@pytest.mark.parametrize(("wording", "reference"), PATTERNS.items(), ids=list(PATTERNS))
def test_candle_patterns_fire_where_talib_finds_them(shared_datasets: Path, wording: str, reference) -> None:  # type: ignore[no-untyped-def]
    k = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1h.parquet")
    o, h, lo, c = (k[x].to_numpy() for x in ("open", "high", "low", "close"))
    name, sign = reference
    values = getattr(talib, name)(o, h, lo, c)
    expected = values > 0 if sign > 0 else values < 0 if sign < 0 else values != 0
    strategy = compile_strategy(wording)
    assert strategy.wording["entry"] == wording and compile_strategy(wording) == strategy
    got = Context(k).truth(strategy.entry)
    assert np.array_equal(got, expected) and expected.sum() > 0
    assert strategy.candle_count - 1 == lookback(strategy.entry)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("engulfing", "say 'bullish engulfing' or 'bearish engulfing'"),
        ("bearish hammer", "a hammer pattern is bullish only"),
        ("bullish shooting star", "a shooting star pattern is bearish only"),
        ("bullish doji", "a doji pattern is neither bullish nor bearish: say 'doji pattern'"),
    ],
)
def test_pattern_sides_are_checked(text: str, message: str) -> None:
    from svc_engine.strategy import StrategyCompileError

    with pytest.raises(StrategyCompileError, match=message):
        compile_strategy(text)


def test_pattern_words() -> None:
    assert compile_strategy("the candle is a hammer").entry == A.Pattern("hammer")
    assert compile_strategy("3 black crows").entry == A.Pattern("three black crows")
    assert compile_strategy("a bullish engulfing candle after 3 red candles in a row").entry == A.After(
        A.Pattern("engulfing", "bullish"), A.Candles("red", 3), 10
    )
