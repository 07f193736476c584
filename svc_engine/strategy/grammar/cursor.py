"""The parser's cursor over the tokens of one condition: look ahead, consume, and fail with the
position and the nearest known word.

Example:
    >>> c = Cursor("close above 1")
    >>> c.accept("close"), c.peek().text
    (True, 'above')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn, TypeVar

from svc_engine.strategy import ast as A
from svc_engine.strategy.errors import StrategyCompileError, closest
from svc_engine.strategy.grammar.words import SUGGESTABLE
from svc_engine.strategy.tokens import COMMA, END, NUM, OP, WORD, Token, tokenize
from svc_engine.strategy.vocab import VOCABULARY

_V = TypeVar("_V")


class Cursor:
    """One parser per condition text; methods consume tokens left to right. The grammar's rules
    live in the mixins of :mod:`svc_engine.strategy.grammar`, composed by ``parser.Parser``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.subjects: list[A.Node] = []
        self.last_subject: A.Node | None = None
        self.range_depth = 0  # inside "highest X of the last N candles" the period phrase is the range's
        self.speeds: dict[A.Node, tuple[str, Token]] = {}  # indicators said "fast" or "slow"
        self.period_word = ""  # "last", "past", "previous" or "prior" of the latest period phrase
        self.in_exit = False  # parsing a take-profit or stop level (see `range_window`)
        self.implicit_lags: set[int] = set()  # ids of the Lag nodes `range_window` added
        self.market = False  # "buy at market": the entry is a market order

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

    if TYPE_CHECKING:  # rules that one mixin calls on another (all composed by ``parser.Parser``)

        def value(self) -> A.Node: ...
        def postfix(self) -> A.Node: ...
        def number_primary(self) -> A.Node: ...
        def timeframe_at(self, k: int = 0) -> tuple[str, int] | None: ...
        def indicator(self, period_tok: Token | None, source: A.Node | None = None) -> A.Node: ...
        def range_indicator(self, period_tok: Token | None, start: Token) -> A.Node: ...
        def range_window(self, node: A.Node, word: str, including: bool, start: Token) -> A.Node: ...
        def accept_including(self) -> bool: ...
        def params(self, period_tok: Token | None) -> list[Token]: ...
        def at_period_phrase(self) -> bool: ...
        def check_speeds(self, node: A.Node) -> None: ...
        def subjectless(self) -> A.Node | None: ...
        def word_primary(self) -> A.Node | None: ...
        def tail(self, left: A.Node) -> A.Node: ...
        def gap(self, left: A.Node) -> A.Node: ...
        def streak(self, left: A.Node) -> A.Node: ...
        def trend_return(self, left: A.Node) -> A.Node: ...
        def new_extreme(self) -> tuple[int, str]: ...
        def at_trend_line(self) -> bool: ...
        def skip_trend_line(self) -> None: ...
        def dangling(self, tok: Token) -> None: ...
        def at_entry_clause(self) -> bool: ...
        def at_entry_clause_after(self, k: int) -> bool: ...
        def phrase_at(self, k: int, words: tuple[str, ...]) -> bool: ...
        def starts_indicator(self, k: int) -> bool: ...
        def calendar(self) -> A.Node | None: ...
        def at_comparison(self, k: int) -> bool: ...
        def paren_after_name(self) -> bool: ...
        def time_span_at(self, k: int = 0) -> tuple[int, int] | None: ...
        def time_span(self) -> int: ...
        def std_band(self, left: A.Node) -> A.Node: ...
        def at_std_band(self, k: int = 0) -> bool: ...
        def directional(self, k: int) -> bool: ...
        def cross(self, left: A.Node) -> A.Node: ...
        def cross_from(self, left: A.Node, verb: Token) -> A.Node: ...
        def turn(self, left: A.Node) -> A.Node: ...
        def zone(self, left: A.Node) -> A.Node: ...
        def multiple(self, left: A.Node) -> A.Node: ...
        def move(self, left: A.Node) -> A.Node: ...
        def std_compare(self, left: A.Node, equal: str) -> A.Node: ...
        def percentile_zone(self, left: A.Node) -> A.Node: ...
        def no_second_side(self, what: str) -> None: ...
        def at_points_offset(self) -> bool: ...
