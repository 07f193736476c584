"""Parser: tokens -> strategy tree, by recursive descent over precedence levels.

Conditions: ``or`` < ``and``/``while``/``with``/``,`` < ``not`` < ``after`` < predicate.
Values: plus/minus < times/divided by < unary minus < ``N candles ago`` < primary.
Predicates pair a value with a comparison, a cross, a range or an event; a few events need no value
("3 green candles in a row", "a new 55-candle high", "a trend line breaks upward").

The rules are functions of :mod:`svc_engine.strategy.grammar`, one concern per module, most of them
registered in grammar tables (a word -> the rules it starts). ``Parser`` is the one parser class:
the token cursor the rules read (`grammar.cursor.Cursor` is its protocol) and the entry points
(``condition``, ``value``, ``postfix``, ``primary``). This module keeps the word tables importable.

Example:
    >>> parse_entry("RSI(14) crosses above 30").condition.right
    Num(value=30.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn, TypeVar

from svc_engine.strategy import ast as A
from svc_engine.strategy.errors import StrategyCompileError, closest
from svc_engine.strategy.grammar import conditions, values
from svc_engine.strategy.grammar.comparisons import CLOUD_SIDE, direction_of, resolve_cloud
from svc_engine.strategy.grammar.conditions import flatten
from svc_engine.strategy.grammar.entries import entry_clause, side_prefix
from svc_engine.strategy.grammar.indicators import fmt_num
from svc_engine.strategy.grammar.lookahead import at_entry_clause
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
from svc_engine.strategy.tokens import COMMA, END, NUM, OP, RPAREN, WORD, Token, tokenize
from svc_engine.strategy.vocab import VOCABULARY

_V = TypeVar("_V")

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


class Parser:
    """One parser per condition text: the token cursor (look ahead, consume, fail with the position
    and the nearest known word) and the grammar's entry points; the rules are the functions of
    :mod:`svc_engine.strategy.grammar`, which take the parser as ``p``.

    >>> p = Parser("close above 1")
    >>> p.accept("close"), p.peek().text
    (True, 'above')
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.subjects: list[A.Node] = []
        self.last_subject: A.Node | None = None
        self.range_depth = 0  # inside "highest X of the last N candles" the period phrase is the range's
        self.speeds: dict[A.Node, tuple[str, Token]] = {}  # indicators said "fast" or "slow"
        self.period_word = ""  # "last", "past", "previous" or "prior" of the latest period phrase
        self.in_exit = False  # parsing a take-profit or stop level (see `indicators.range_window`)
        self.implicit_lags: set[int] = set()  # ids of the Lag nodes `range_window` added
        self.market = False  # "buy at market": the entry is a market order

    # The entry points: a condition, a value, a value with its "N candles ago", a primary.
    def condition(self) -> A.Node:
        return conditions.condition(self)

    def value(self) -> A.Node:
        return values.value(self)

    def postfix(self) -> A.Node:
        return values.postfix(self)

    def primary(self) -> A.Node:
        return values.primary(self)

    # The cursor.
    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *words: str) -> bool:
        return all(self.peek(k).text == w for k, w in enumerate(words))

    def at_any(self, words: set[str] | dict[str, str]) -> bool:
        return self.peek().text in words and self.peek().kind in (WORD, OP, COMMA)

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def take(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, word: str, what: str) -> Token:
        if not self.at(word):
            self.fail(f"expected {what}")
        return self.take()

    def match(self, table: dict[tuple[str, ...], _V]) -> _V | None:
        """Longest multi-word key of `table` at the cursor; consumes it."""
        best: tuple[int, _V] | None = None
        for key, value in table.items():
            if self.at(*key) and (best is None or len(key) > best[0]):
                best = (len(key), value)
        if best is None:
            return None
        self.i += best[0]
        return best[1]

    def fail(self, message: str, tok: Token | None = None, suggestion: str | None = None) -> NoReturn:
        tok = tok or self.peek()
        phrase = self.text[tok.pos : tok.end] if tok.kind != END else ""
        if tok.kind == END:
            message = f"{message}, but the condition ended"
        else:
            message = f"{message} at {phrase!r} (position {tok.pos})"
            if suggestion is None and tok.kind == WORD and tok.text not in VOCABULARY:
                suggestion = closest(tok.text, SUGGESTABLE)
        suggestion = suggestion or None  # "": no suggestion fits (the message says what to do)
        raise StrategyCompileError(message, phrase=phrase, position=tok.pos, suggestion=suggestion)

    def number(self, what: str) -> Token:
        if self.peek().kind != NUM:
            self.fail(f"expected {what}")
        return self.take()

    def integer(self, what: str, low: int = 1) -> int:
        tok = self.number(what)
        if tok.value != int(tok.value) or tok.value < low or tok.pct:
            self.fail(f"{what} must be a whole number of at least {low}", tok)
        return int(tok.value)

    def positive_int(self, tok: Token, what: str) -> int:
        if tok.value != int(tok.value) or tok.value < 1:
            self.fail(f"{what} must be a whole number of at least 1", tok)
        return int(tok.value)

    def raw(self, first: Token, last: Token) -> str:
        """The words from `first` to `last` as the trader wrote them."""
        return self.text[first.pos : last.end]


def parse_entry(text: str) -> Entry:
    """Parse an entry condition, with an optional side prefix and entry-price clause.

    >>> parse_entry("buy when close is above SMA(20), limit at EMA(20)").side
    'long'
    """
    p = Parser(text)
    if p.peek().kind == END:
        raise StrategyCompileError("the condition is empty", phrase="", position=0)
    side = side_prefix(p)
    if side is None and (p.at("when") or p.at("if")):
        p.i += 1
    if p.peek().kind == END:
        p.fail("expected a condition after the side")
    condition = p.condition()
    price = None
    save = p.i
    conditions.separator(p)
    p.accept("then")
    if at_entry_clause(p):
        price, clause_side = entry_clause(p)
        side = side or clause_side
    else:
        p.i = save
    if p.peek().kind == RPAREN:
        p.fail("unbalanced ')'")
    if p.peek().kind != END:
        p.fail("expected 'and', 'or' or the end of the condition")
    return Entry(condition, price, side, p.market)
