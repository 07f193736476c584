"""The parser's word tables: connectives, directions, sides, zones and timeframe words.

Example:
    >>> "crosses" in CONNECTIVES, sorted(TF_ADJECTIVES)
    (False, ['daily', 'hourly', 'weekly'])
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.vocab import ALIASES, FIELDS, NAMED_OUTPUTS, VOCABULARY

MAX_WINDOW = 1000
TIMEFRAME_WORDS = {"monthly", "intraday", "htf"}
TF_ADJECTIVES = {"daily": "1d", "weekly": "1w", "hourly": "1h"}
TF_UNITS = {
    "h": "h",
    "hour": "h",
    "hr": "h",
    "d": "d",
    "w": "w",
    "week": "w",
    "m": "m",
    "min": "m",
    "minute": "m",
}
TF_CONDITIONS = (A.Compare, A.Cross, A.Between, A.Within)
PERIOD_WORDS = ("last", "past", "previous", "prior", "period")

# Names of indicators and prices, the nearest of which is suggested for an unknown one.
KNOWN_PHRASES = frozenset(
    [" ".join(k) for k in ALIASES] + [" ".join(k) for k in FIELDS] + [" ".join(k) for k in NAMED_OUTPUTS]
)
# Words long enough to be worth suggesting ("on" of "on balance volume" is no answer to "moon").
SUGGESTABLE = frozenset(w for w in VOCABULARY if len(w) >= 3)
AND_WORDS = {"and", "while", "with", ",", "but", "also", "plus_and"}
SIDE_WORDS = {"buy": "long", "long": "long", "sell": "short", "short": "short"}
ENTRY_WORDS = {"buy", "sell", "limit", "enter", "entry", "place"}
EXIT_PREFIXES = {
    "exit",
    "close",
    "sell",
    "cover",
    "leave",
    "take",
    "position",
    "when",
    "if",
    "once",
    "trade",
    "exited",
    "on",
    "out",
}
UP_WORDS = {"above", "over", "up", "upward", "upwards", "higher", "through"}
DOWN_WORDS = {"below", "under", "down", "downward", "downwards", "lower", "beneath"}
DIRECTIONS = {**{word: "above" for word in UP_WORDS}, **{word: "below" for word in DOWN_WORDS}}
"""A direction word -> the side it names ("rises above", "drops under", "breaks down")."""
# Oversold / overbought thresholds, the usual ones for each oscillator.
ZONES = {"rsi": (30.0, 70.0), "stoch": (20.0, 80.0), "willr": (-80.0, -20.0), "cci": (-100.0, 100.0)}
# Words that can open a predicate whose subject was left out.
ELIDED_STARTS = {
    "gap",
    "cross",
    "break",
    "rise",
    "fall",
    "turn",
    "above",
    "below",
    "under",
    "over",
    "between",
    "within",
    "make",
    "greater",
    "less",
    "higher",
    "lower",
    "stay",
    "at",
    "equal",
    "back",
}
BULL_WORDS = {"positive", "bullish", "green", "up", "upward", "uptrend", "long"}
BEAR_WORDS = {"negative", "bearish", "red", "down", "downward", "downtrend", "short"}
SIGN_WAYS = {**{word: "above" for word in BULL_WORDS}, **{word: "below" for word in BEAR_WORDS}}
"""A bullish or bearish word -> the side of zero it names ("turns positive": crosses above 0)."""
SPEED_NAMED = {"sma", "ema", "wma", "dema", "tema", "hma", "vwap"}
CONNECTIVES = {"and", "or", "while", "with", "but", "also", "then", "after"}
COLORS = {
    "green": "green",
    "bullish": "green",
    "white": "green",
    "red": "red",
    "bearish": "red",
    "black": "red",
}

GAP_SIZE_WORDS = frozenset(
    {"size", "at", "greater", "larger", "bigger", "more", "above", "below", "less", "smaller"}
)
"""Words after "gap" that make it the gap's size compared ("gap size is larger than 1 ATR(14)"),
not the event "gaps up"."""
