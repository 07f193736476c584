"""Parser: tokens -> strategy tree, by recursive descent over precedence levels.

Conditions: ``or`` < ``and``/``while``/``with``/``,`` < ``not`` < ``after`` < predicate.
Values: plus/minus < times/divided by < unary minus < ``N candles ago`` < primary.
Predicates pair a value with a comparison, a cross, a range or an event; a few events need no value
("3 green candles in a row", "a new 55-candle high", "a trend line breaks upward").

The rules live in :mod:`svc_engine.strategy.grammar`, one concern per module; this module composes
them into ``Parser``, reads the entry's side prefix and price clause, and keeps the word tables
importable here.

Example:
    >>> parse_entry("RSI(14) crosses above 30").condition.right
    Num(value=30.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_engine.strategy import ast as A
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.grammar.comparisons import CLOUD_SIDE, Comparisons, direction_of, resolve_cloud
from svc_engine.strategy.grammar.conditions import Conditions, flatten
from svc_engine.strategy.grammar.events import Events
from svc_engine.strategy.grammar.indicators import Indicators, fmt_num
from svc_engine.strategy.grammar.primaries import word_primary
from svc_engine.strategy.grammar.starts import subjectless
from svc_engine.strategy.grammar.values import Values
from svc_engine.strategy.grammar.words import (
    AND_WORDS,
    BEAR_WORDS,
    BULL_WORDS,
    COLORS,
    CONNECTIVES,
    DOWN_WORDS,
    ELIDED_STARTS,
    ENTRY_WORDS,
    EXIT_PREFIXES,
    KNOWN_PHRASES,
    MAX_WINDOW,
    PERIOD_WORDS,
    SIDE_WORDS,
    SPEED_NAMED,
    SUGGESTABLE,
    TF_ADJECTIVES,
    TF_CONDITIONS,
    TF_UNITS,
    TIMEFRAME_WORDS,
    UP_WORDS,
    ZONES,
)
from svc_engine.strategy.tokens import COMMA, END, NUM, RPAREN, WORD

__all__ = [
    "AND_WORDS",
    "BEAR_WORDS",
    "BULL_WORDS",
    "CLOUD_SIDE",
    "COLORS",
    "CONNECTIVES",
    "DOWN_WORDS",
    "ELIDED_STARTS",
    "ENTRY_WORDS",
    "EXIT_PREFIXES",
    "KNOWN_PHRASES",
    "MAX_WINDOW",
    "PERIOD_WORDS",
    "SIDE_WORDS",
    "SPEED_NAMED",
    "SUGGESTABLE",
    "TF_ADJECTIVES",
    "TF_CONDITIONS",
    "TF_UNITS",
    "TIMEFRAME_WORDS",
    "UP_WORDS",
    "ZONES",
    "Entry",
    "Parser",
    "direction_of",
    "flatten",
    "fmt_num",
    "parse_entry",
    "resolve_cloud",
]


@dataclass(frozen=True, slots=True)
class Entry:
    """A parsed entry condition: the condition, the optional entry price and a side if one was said."""

    condition: A.Node
    price: A.Node | None
    side: str | None
    market: bool = False


class Parser(Conditions, Comparisons, Events, Values, Indicators):
    """One parser per condition text, composed of the grammar's mixins
    (:mod:`svc_engine.strategy.grammar`); the entry's side prefix and price clause are here."""

    subjectless = subjectless  # the table of predicates without a subject (grammar/starts.py)
    word_primary = word_primary  # the table of words that start a value (grammar/primaries.py)

    def at_entry_clause_after(self, k: int) -> bool:
        return self.peek(k).text in ENTRY_WORDS and self.peek(k).kind == WORD

    def at_entry_clause(self) -> bool:
        word = self.peek().text
        if word not in ENTRY_WORDS or self.peek().kind != WORD:
            return False
        return word != "entry" or self.peek(1).text in ("at", "price", "=")

    def side_prefix(self) -> str | None:
        save = self.i
        self.accept("turn") or self.accept("enter") or self.accept("open")
        side = SIDE_WORDS.get(self.peek().text)
        if side is None or self.peek().kind != WORD:
            self.i = save
            return None
        self.i += 1
        self.accept("position") or self.accept("entry")
        if self.accept("at", "market") or self.accept("market"):
            self.market = True
        said_when = any(self.accept(w) for w in ("when", "if", "once", "on", ":"))
        # "buy 1% below close" is an entry-price clause, not a side prefix.
        if (
            not said_when
            and self.peek().kind != COMMA
            and (self.at_entry_clause() or self.peek().kind == NUM)
        ):
            self.i = save
            return None
        while self.peek().kind == COMMA:
            self.i += 1
        return side

    def entry_clause(self) -> tuple[A.Node | None, str | None]:
        word = self.take().text
        side = SIDE_WORDS.get(word)
        self.accept("price")
        if self.accept("at", "market") or self.accept("market"):
            self.accept("order") or self.accept("price")
            self.market = True  # fills at the next candle's open
            return None, side
        for skip in ("limit", "order", "at", "=", "on"):
            self.accept(skip)
        return self.value(), side


def parse_entry(text: str) -> Entry:
    """Parse an entry condition, with an optional side prefix and entry-price clause.

    >>> parse_entry("buy when close is above SMA(20), limit at EMA(20)").side
    'long'
    """
    p = Parser(text)
    if p.peek().kind == END:
        raise StrategyCompileError("the condition is empty", phrase="", position=0)
    side = p.side_prefix()
    if side is None and (p.at("when") or p.at("if")):
        p.i += 1
    if p.peek().kind == END:
        p.fail("expected a condition after the side")
    condition = p.condition()
    price = None
    save = p.i
    p.separator()
    p.accept("then")
    if p.at_entry_clause():
        price, clause_side = p.entry_clause()
        side = side or clause_side
    else:
        p.i = save
    if p.peek().kind == RPAREN:
        p.fail("unbalanced ')'")
    if p.peek().kind != END:
        p.fail("expected 'and', 'or' or the end of the condition")
    return Entry(condition, price, side, p.market)
