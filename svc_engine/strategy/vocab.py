"""The vocabulary as data: indicators, their names, parameters, outputs, value ranges and warm-up.

A new indicator is one `IndSpec` entry here plus one kernel call in `compiler.py`.

Two warm-ups per indicator: ``lookback`` is the index of its first defined value; ``settle`` adds,
for a recursive smoothing (EMA, Wilder), ``ceil(STABILISE / alpha)`` candles after which a restart
gives the same floats, bit for bit, as the whole history (see docs/strategy.md).

Example:
    >>> SPECS["rsi"].display
    'RSI'
    >>> SPECS["macd"].lookback((12, 26, 9), "signal"), SPECS["macd"].settle((12, 26, 9), "signal")
    (33, 1883)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

INF = math.inf
#: Stabilisation of a recursive filter, in units of 1/alpha: measured on 2 M BTCUSDT 1m closes,
#: restarts agreed bit for bit from about 40/alpha on; 100/alpha leaves a margin of ~60/alpha.
STABILISE = 100
#: Candles of one UTC day at the finest timeframe (1m): what a session VWAP can reach back.
DAY_CANDLES = 1440
#: "X then Y" / "Y after X": Y fires when X held on one of this many candles before it (settable:
#: "Y within 3 candles after X", "X then within 3 candles Y"; "right after" is 1).
THEN_WINDOW = 10
#: The warm-up of a running total or a path-dependent stop (OBV, A/D, Parabolic SAR, Supertrend):
#: its value depends on where the series starts, so a restart must read the whole history.
WHOLE_HISTORY = 1_000_000_000


def ema_settle(n: int) -> int:
    """Extra candles an EMA(n) needs to forget its seed: ``ceil(STABILISE / alpha)``, alpha = 2/(n+1).

    >>> ema_settle(14)
    750
    """
    return math.ceil(STABILISE * (n + 1) / 2)


def wilder_settle(n: int) -> int:
    """Extra candles a Wilder smoothing of period n (RSI, ATR) needs: alpha = 1/n.

    >>> wilder_settle(14)
    1400
    """
    return STABILISE * n


def _macd_smoothing(p: tuple[float, ...], o: str) -> int:
    # The line's slower EMA forgets last; the signal line is an EMA of the line on top of it.
    line = ema_settle(int(p[1]))
    return line if o == "line" else line + ema_settle(int(p[2]))


def _keltner_smoothing(p: tuple[float, ...], o: str) -> int:
    n = int(p[0])
    return ema_settle(n) if o == "middle" else max(ema_settle(n) - 1, wilder_settle(n))


@dataclass(frozen=True, slots=True)
class Param:
    """One indicator parameter: its name, default, whether it must be a whole number, its range."""

    name: str
    default: float
    integer: bool = True
    low: float = 1.0
    high: float = 10_000.0


@dataclass(frozen=True, slots=True)
class IndSpec:
    """How an indicator is named, parameterised, bounded and warmed up."""

    key: str
    display: str
    aliases: tuple[str, ...]
    params: tuple[Param, ...]
    outputs: tuple[str, ...] = ("",)
    sourced: bool = False
    bounds: tuple[float, float] = (-INF, INF)
    warmup: Callable[[tuple[float, ...], str], int] = lambda p, o: int(p[0]) - 1
    smoothing: Callable[[tuple[float, ...], str], int] = lambda p, o: 0

    def defaults(self) -> tuple[float, ...]:
        """Default parameters.

        >>> SPECS["macd"].defaults()
        (12, 26, 9)
        """
        return tuple(int(p.default) if p.integer else float(p.default) for p in self.params)

    def lookback(self, params: tuple[float, ...], output: str) -> int:
        """Index of the first defined value on a series defined from index 0.

        >>> SPECS["sma"].lookback((20,), "")
        19
        """
        return self.warmup(params, output)

    def settle(self, params: tuple[float, ...], output: str) -> int:
        """Index from which a restart on a series defined from index 0 gives the whole history's
        values bit for bit: ``lookback`` plus the recursive smoothing's ``ceil(STABILISE / alpha)``.

        >>> SPECS["ema"].settle((200,), ""), SPECS["sma"].settle((200,), "")
        (10249, 199)
        """
        return self.warmup(params, output) + self.smoothing(params, output)


def _period(default: int, low: int = 1) -> tuple[Param, ...]:
    return (Param("period", default, low=low),)


MULT = Param("multiplier", 2.0, integer=False, low=0.01, high=100.0)


def _ichimoku_lookback(p: tuple[float, ...], o: str) -> int:
    tenkan, kijun, senkou = (int(v) for v in p[:3])
    shift = kijun  # the spans are plotted one kijun period ahead
    span_a, span_b = max(tenkan, kijun) - 1 + shift, senkou - 1 + shift
    return {"tenkan": tenkan - 1, "kijun": kijun - 1, "senkou a": span_a, "senkou b": span_b}.get(
        o, max(span_a, span_b)
    )


def _dmi_lookback(p: tuple[float, ...], o: str) -> int:
    return 2 * int(p[0]) - 1 if o == "adx" else int(p[0])


def _dmi_smoothing(p: tuple[float, ...], o: str) -> int:
    # ADX is a Wilder average of DX, which is made of Wilder averages.
    return wilder_settle(int(p[0])) * (2 if o == "adx" else 1)


def _stochrsi_lookback(p: tuple[float, ...], o: str) -> int:
    return int(p[0]) + int(p[1]) - 1 + (int(p[2]) - 1 if o == "%d" else 0)


SPECS: dict[str, IndSpec] = {
    s.key: s
    for s in (
        IndSpec(
            "sma",
            "SMA",
            ("sma", "simple moving average", "moving average", "ma", "average", "mean"),
            _period(20),
            sourced=True,
        ),
        IndSpec(
            "ema",
            "EMA",
            ("ema", "exponential moving average", "exponential average"),
            _period(20),
            sourced=True,
            smoothing=lambda p, o: ema_settle(int(p[0])),
        ),
        IndSpec(
            "wma",
            "WMA",
            ("wma", "weighted moving average", "linear weighted moving average"),
            _period(20),
            sourced=True,
        ),
        IndSpec(
            "vwap",
            "VWAP",
            ("vwap", "volume weighted average price"),
            (Param("period", 0, low=0),),
            warmup=lambda p, o: max(int(p[0]) - 1, 0),
            # The session VWAP sums the candles since 00:00 UTC: up to a day of 1m candles back.
            smoothing=lambda p, o: DAY_CANDLES - 1 if int(p[0]) == 0 else 0,
        ),
        IndSpec(
            "rsi",
            "RSI",
            ("rsi", "relative strength index", "relative strength"),
            _period(14),
            sourced=True,
            bounds=(0.0, 100.0),
            warmup=lambda p, o: int(p[0]),
            smoothing=lambda p, o: wilder_settle(int(p[0])),
        ),
        IndSpec(
            "stoch",
            "stochastic",
            ("stochastic", "stoch", "stochastic oscillator", "stochastics"),
            (Param("k", 14), Param("slow_k", 3), Param("slow_d", 3)),
            outputs=("%k", "%d"),
            bounds=(0.0, 100.0),
            warmup=lambda p, o: int(p[0]) + int(p[1]) - 2 + (int(p[2]) - 1 if o == "%d" else 0),
        ),
        IndSpec(
            "macd",
            "MACD",
            ("macd",),
            (Param("fast", 12), Param("slow", 26), Param("signal", 9)),
            outputs=("line", "signal", "histogram"),
            warmup=lambda p, o: int(p[1]) - 1 + (int(p[2]) - 1 if o != "line" else 0),
            smoothing=_macd_smoothing,
        ),
        IndSpec("cci", "CCI", ("cci", "commodity channel index"), _period(20, low=2)),
        IndSpec(
            "willr",
            "Williams %R",
            ("williams %r", "williams r", "williams percent r", "%r", "willr", "williams"),
            _period(14),
            bounds=(-100.0, 0.0),
        ),
        IndSpec(
            "roc",
            "ROC",
            ("roc", "rate of change", "percent change", "price change"),
            _period(10),
            sourced=True,
            bounds=(-100.0, INF),
            warmup=lambda p, o: int(p[0]),
        ),
        IndSpec(
            "atr",
            "ATR",
            ("atr", "average true range"),
            _period(14),
            bounds=(0.0, INF),
            warmup=lambda p, o: int(p[0]),
            smoothing=lambda p, o: wilder_settle(int(p[0])),
        ),
        IndSpec(
            "bb",
            "Bollinger",
            ("bollinger", "bollinger band", "bb"),
            (Param("period", 20, low=2), MULT),
            outputs=("upper", "middle", "lower", "bandwidth", "%b"),
            warmup=lambda p, o: int(p[0]) - 1,
        ),
        IndSpec(
            "keltner",
            "Keltner",
            ("keltner", "keltner channel"),
            (Param("period", 20), MULT),
            outputs=("upper", "middle", "lower"),
            warmup=lambda p, o: int(p[0]) - (1 if o == "middle" else 0),
            smoothing=_keltner_smoothing,
        ),
        IndSpec(
            "donchian",
            "Donchian",
            ("donchian", "donchian channel"),
            _period(20),
            outputs=("upper", "middle", "lower"),
        ),
        IndSpec(
            "dmi",
            "ADX",
            (
                "adx",
                "average directional index",
                "average directional movement index",
                "dmi",
                "directional movement index",
            ),
            _period(14, low=2),
            outputs=("adx", "+di", "-di"),
            bounds=(0.0, 100.0),
            warmup=_dmi_lookback,
            smoothing=_dmi_smoothing,
        ),
        IndSpec(
            "aroon",
            "Aroon",
            ("aroon",),
            _period(25, low=2),
            outputs=("up", "down", "oscillator"),
            bounds=(0.0, 100.0),
            warmup=lambda p, o: int(p[0]),
        ),
        IndSpec(
            "sar",
            "parabolic SAR",
            ("parabolic sar", "sar", "psar", "parabolic stop and reverse", "parabolic"),
            (
                Param("acceleration", 0.02, integer=False, low=0.001, high=1.0),
                Param("maximum", 0.2, integer=False, low=0.001, high=1.0),
            ),
            bounds=(0.0, INF),
            warmup=lambda p, o: 1,
            smoothing=lambda p, o: WHOLE_HISTORY,
        ),
        IndSpec(
            "supertrend",
            "Supertrend",
            ("supertrend", "super trend"),
            (Param("period", 10), Param("multiplier", 3.0, integer=False, low=0.01, high=100.0)),
            outputs=("line", "direction"),
            warmup=lambda p, o: int(p[0]),
            smoothing=lambda p, o: WHOLE_HISTORY,
        ),
        IndSpec(
            "ichimoku",
            "Ichimoku",
            ("ichimoku", "ichimoku kinko hyo"),
            (Param("tenkan", 9), Param("kijun", 26), Param("senkou", 52)),
            # "cloud" alone is resolved by the comparison: above the cloud = above its top.
            outputs=("tenkan", "kijun", "senkou a", "senkou b", "cloud top", "cloud bottom", "cloud"),
            bounds=(0.0, INF),
            warmup=_ichimoku_lookback,
        ),
        IndSpec(
            "obv",
            "OBV",
            ("obv", "on balance volume", "on-balance volume"),
            (),
            warmup=lambda p, o: 0,
            smoothing=lambda p, o: WHOLE_HISTORY,
        ),
        IndSpec(
            "ad",
            "A/D line",
            (
                "a/d",
                "ad line",
                "a/d line",
                "accumulation distribution",
                "accumulation/distribution",
                "accumulation distribution line",
                "chaikin a/d",
            ),
            (),
            warmup=lambda p, o: 0,
            smoothing=lambda p, o: WHOLE_HISTORY,
        ),
        IndSpec(
            "mfi",
            "MFI",
            ("mfi", "money flow index"),
            _period(14, low=2),
            bounds=(0.0, 100.0),
            warmup=lambda p, o: int(p[0]),
        ),
        IndSpec(
            "cmf",
            "CMF",
            ("cmf", "chaikin money flow"),
            _period(20),
            bounds=(-1.0, 1.0),
        ),
        IndSpec(
            "stochrsi",
            "StochRSI",
            ("stochrsi", "stoch rsi", "stochastic rsi"),
            (Param("period", 14), Param("k", 14), Param("d", 3)),
            outputs=("%k", "%d"),
            sourced=True,
            bounds=(0.0, 100.0),
            warmup=_stochrsi_lookback,
            smoothing=lambda p, o: wilder_settle(int(p[0])),
        ),
        IndSpec(
            "mom",
            "momentum",
            ("momentum", "mom"),
            _period(10),
            sourced=True,
            warmup=lambda p, o: int(p[0]),
        ),
        IndSpec(
            "dema",
            "DEMA",
            ("dema", "double exponential moving average", "double ema", "double exponential"),
            _period(20),
            sourced=True,
            warmup=lambda p, o: 2 * (int(p[0]) - 1),
            smoothing=lambda p, o: 2 * ema_settle(int(p[0])),
        ),
        IndSpec(
            "tema",
            "TEMA",
            ("tema", "triple exponential moving average", "triple ema", "triple exponential"),
            _period(20),
            sourced=True,
            warmup=lambda p, o: 3 * (int(p[0]) - 1),
            smoothing=lambda p, o: 3 * ema_settle(int(p[0])),
        ),
        IndSpec(
            "hma",
            "HMA",
            ("hma", "hull moving average", "hull ma", "hull"),
            _period(20, low=2),
            sourced=True,
            warmup=lambda p, o: int(p[0]) - 1 + math.isqrt(int(p[0])) - 1,
        ),
        IndSpec(
            "stddev",
            "standard deviation",
            ("standard deviation", "stddev", "std dev", "stdev", "std"),
            _period(20, low=2),
            sourced=True,
            bounds=(0.0, INF),
        ),
        IndSpec(
            "zscore",
            "z-score",
            ("z score", "zscore", "z-score"),
            _period(20, low=2),
            sourced=True,
        ),
        IndSpec(
            "natr",
            "ATR%",
            ("natr", "normalized atr", "normalised atr", "atr%", "atr percent", "atr percentage"),
            _period(14),
            bounds=(0.0, INF),
            warmup=lambda p, o: int(p[0]),
            smoothing=lambda p, o: wilder_settle(int(p[0])),
        ),
        IndSpec(
            "prank",
            "percentile rank",
            ("percentile rank", "percent rank", "percentrank", "percentile"),
            _period(100),
            sourced=True,
            bounds=(0.0, 100.0),
            warmup=lambda p, o: int(p[0]),
        ),
        # The percent change over a span of time ("fell 3% in 4 hours"): the parameter is minutes.
        # Its first value comes once the span has passed, which depends on the candles' spacing:
        # one candle is counted, and the restart window assumes 1m candles (the finest).
        IndSpec(
            "roct",
            "ROC",
            (),
            (Param("minutes", 60, low=1, high=525_600),),
            sourced=True,
            bounds=(-100.0, INF),
            warmup=lambda p, o: 1,
            smoothing=lambda p, o: int(p[0]),
        ),
        IndSpec(
            "hour",
            "hour of day",
            ("hour of candle", "utc hour", "hour", "time of candle", "time"),
            (),
            bounds=(0.0, 23.0),
            warmup=lambda p, o: 0,
        ),
        # "day" is read as "candle" by the tokenizer, so "day of week" arrives as "candle of week".
        IndSpec(
            "weekday",
            "day of week",
            ("candle of week", "weekday number"),
            (),
            bounds=(1.0, 7.0),
            warmup=lambda p, o: 0,
        ),
        IndSpec("max", "highest", ("highest",), _period(20), sourced=True),
        IndSpec("min", "lowest", ("lowest",), _period(20), sourced=True),
    )
}


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """A candle pattern: its words, the sides it has, its TA-Lib lookback (first candle it can fire)."""

    key: str
    sides: tuple[str, ...]
    lookback: int


PATTERNS: dict[str, PatternSpec] = {
    p.key: p
    for p in (
        PatternSpec("engulfing", ("bullish", "bearish"), 2),
        PatternSpec("harami", ("bullish", "bearish"), 11),
        PatternSpec("doji", ("",), 10),
        PatternSpec("hammer", ("bullish",), 11),
        PatternSpec("inverted hammer", ("bullish",), 11),
        PatternSpec("shooting star", ("bearish",), 11),
        PatternSpec("morning star", ("bullish",), 12),
        PatternSpec("evening star", ("bearish",), 12),
        PatternSpec("three white soldiers", ("bullish",), 12),
        PatternSpec("three black crows", ("bearish",), 13),
    )
}
PATTERN_WORDS: dict[tuple[str, ...], str] = {tuple(k.split()): k for k in PATTERNS}

ALIASES: dict[tuple[str, ...], str] = {
    tuple(alias.split()): spec.key for spec in SPECS.values() for alias in spec.aliases
}

FIELDS: dict[tuple[str, ...], str] = {
    ("open",): "open",
    ("opening", "price"): "open",
    ("high",): "high",
    ("low",): "low",
    ("close",): "close",
    ("closing", "price"): "close",
    ("close", "price"): "close",
    ("candle", "close"): "close",
    ("price",): "close",
    ("volume",): "volume",
    ("typical", "price"): "typical",
    # The thing traded, as rule lists name it: "the asset is above its 200-day moving average".
    **{
        (w,): "close" for w in ("asset", "stock", "etf", "market", "instrument", "security", "coin", "ticker")
    },
    **{("candle", f): f for f in ("open", "high", "low", "volume")},
    ("hlc3",): "typical",
}

FIELD_BOUNDS: dict[str, tuple[float, float]] = {"volume": (0.0, INF)}

OUTPUT_WORDS: dict[str, dict[tuple[str, ...], str]] = {
    "macd": {
        ("line",): "line",
        ("signal", "line"): "signal",
        ("signal",): "signal",
        ("histogram",): "histogram",
        ("hist",): "histogram",
    },
    "stoch": {("%k",): "%k", ("k",): "%k", ("%d",): "%d", ("d",): "%d"},
    "bb": {
        ("upper",): "upper",
        ("middle",): "middle",
        ("lower",): "lower",
        ("mid",): "middle",
        ("bandwidth",): "bandwidth",
        ("width",): "bandwidth",
        ("band", "width"): "bandwidth",
        ("basis",): "middle",
        ("%b",): "%b",
        ("percent", "b"): "%b",
    },
    "keltner": {("upper",): "upper", ("middle",): "middle", ("lower",): "lower"},
    "donchian": {("upper",): "upper", ("middle",): "middle", ("lower",): "lower"},
    "dmi": {("+di",): "+di", ("-di",): "-di"},
    "aroon": {("up",): "up", ("down",): "down", ("oscillator",): "oscillator", ("osc",): "oscillator"},
    "supertrend": {("line",): "line", ("direction",): "direction"},
    "ichimoku": {
        ("tenkan",): "tenkan",
        ("tenkan", "sen"): "tenkan",
        ("conversion", "line"): "tenkan",
        ("kijun",): "kijun",
        ("kijun", "sen"): "kijun",
        ("base", "line"): "kijun",
        ("senkou", "a"): "senkou a",
        ("senkou", "span", "a"): "senkou a",
        ("span", "a"): "senkou a",
        ("leading", "span", "a"): "senkou a",
        ("senkou", "b"): "senkou b",
        ("senkou", "span", "b"): "senkou b",
        ("span", "b"): "senkou b",
        ("leading", "span", "b"): "senkou b",
        ("cloud", "top"): "cloud top",
        ("cloud", "bottom"): "cloud bottom",
        ("cloud",): "cloud",
        ("kumo",): "cloud",
    },
    "stochrsi": {("%k",): "%k", ("k",): "%k", ("%d",): "%d", ("d",): "%d"},
}

# Names of one line of an indicator, said without the indicator ("+DI crosses above -DI",
# "tenkan crosses above kijun"): the words -> (indicator, output).
NAMED_OUTPUTS: dict[tuple[str, ...], tuple[str, str]] = {
    **{
        k: ("dmi", "+di")
        for k in (("+di",), ("plus", "di"), ("pdi",), ("positive", "directional", "indicator"))
    },
    **{
        k: ("dmi", "-di")
        for k in (("-di",), ("minus", "di"), ("mdi",), ("negative", "directional", "indicator"))
    },
    **{k: ("ichimoku", "tenkan") for k in (("tenkan",), ("tenkan", "sen"))},
    **{k: ("ichimoku", "kijun") for k in (("kijun",), ("kijun", "sen"))},
    **{k: ("ichimoku", "senkou a") for k in (("senkou", "a"), ("senkou", "span", "a"))},
    **{k: ("ichimoku", "senkou b") for k in (("senkou", "b"), ("senkou", "span", "b"))},
    **{k: ("ichimoku", "cloud") for k in (("cloud",), ("kumo",))},
    ("%k",): ("stoch", "%k"),
    ("%b",): ("bb", "%b"),
    ("bandwidth",): ("bb", "bandwidth"),
    ("%d",): ("stoch", "%d"),
}

# Output words that may come before the indicator name ("upper Bollinger band").
PREFIX_OUTPUTS = {
    "upper": "upper",
    "middle": "middle",
    "lower": "lower",
    "mid": "middle",
    "top": "upper",
    "bottom": "lower",
}

# Words that end an indicator phrase without meaning anything ("the upper Bollinger band").
NOISE_AFTER = {"band", "channel", "line", "indicator", "oscillator"}

COMPARATORS: dict[tuple[str, ...], str] = {
    ("above",): ">",
    ("over",): ">",
    ("greater",): ">",
    ("higher",): ">",
    ("more",): ">",
    ("exceed",): ">",
    ("exceeds",): ">",
    ("larger",): ">",
    ("bigger",): ">",
    ("smaller",): "<",
    (">",): ">",
    ("below",): "<",
    ("under",): "<",
    ("less",): "<",
    ("lower",): "<",
    ("beneath",): "<",
    ("<",): "<",
    ("at", "least"): ">=",
    (">=",): ">=",
    ("greater", "or", "equal"): ">=",
    ("at", "most"): "<=",
    ("<=",): "<=",
    ("less", "or", "equal"): "<=",
    ("equal",): "=",
    ("=",): "=",
}

CANDLE_UNITS = {"candle"}

#: Days of the week, ISO numbers (the `weekday` indicator's values).
DAY_NAMES: dict[str, int] = {
    d: i + 1
    for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
}
#: Spans of time in minutes ("fell 3% in 4 hours"); "day" is a candle, as everywhere in the language.
TIME_UNITS: dict[str, int] = {"minute": 1, "hour": 60, "h": 60, "week": 10_080}

# Every word the parser understands, for "did you mean" suggestions.
VOCABULARY: frozenset[str] = frozenset(
    {w for key in ALIASES for w in key}
    | {w for key in FIELDS for w in key}
    | {w for table in OUTPUT_WORDS.values() for key in table for w in key}
    | {w for key in NAMED_OUTPUTS for w in key}
    | {w for key in PATTERN_WORDS for w in key}
    | {"pattern"}
    | {w for key in COMPARATORS for w in key if w.isalpha()}
    | set(PREFIX_OUTPUTS)
    | set(
        [
            "and",
            "or",
            "not",
            "both",
            "either",
            "while",
            "with",
            "after",
            "cross",
            "break",
            "rise",
            "fall",
            "turn",
            "positive",
            "negative",
            "make",
            "new",
            "in",
            "row",
            "consecutive",
            "green",
            "red",
            "bullish",
            "bearish",
            "candle",
            "ago",
            "previous",
            "prior",
            "last",
            "past",
            "of",
            "between",
            "within",
            "plus",
            "minus",
            "times",
            "divided",
            "by",
            "x",
            "trend",
            "return",
            "broken",
            "upward",
            "downward",
            "up",
            "down",
            "take",
            "profit",
            "stop",
            "loss",
            "entry",
            "risk",
            "reward",
            "ratio",
            "buy",
            "sell",
            "long",
            "short",
            "limit",
            "enter",
            "percent",
            "oversold",
            "overbought",
            "touch",
            "golden",
            "death",
            "fast",
            "slow",
            "trailing",
            "appears",
            "forms",
            "end",
            "ends",
            "utc",
            "daily",
            "weekly",
            "hourly",
            "chart",
            "timeframe",
            "gap",
            "point",
            "by",
            "single",
            "including",
            "current",
            "right",
            "immediately",
            "just",
            "next",
            "then",
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday",
            "weekend",
            "weekday",
            "session",
            "first",
            "standard",
            "deviation",
            "sigma",
            "hour",
            "minute",
            "week",
            "times",
        ]
    )
)
