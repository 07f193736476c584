"""What the grammar's rules see of the parser: its state and its token cursor (look ahead, consume,
fail at a position), and the entry points a rule calls to parse a nested value. The rules are
functions of :mod:`svc_engine.strategy.grammar` that take the parser, ``p``; ``parser.Parser``
is the one class that implements this protocol, so no grammar module imports the parser.

Example:
    >>> from svc_engine.strategy.parser import Parser
    >>> p: Cursor = Parser("close above 1")
    >>> p.accept("close"), p.peek().text
    (True, 'above')
"""

from __future__ import annotations

from typing import NoReturn, Protocol, TypeVar

from svc_engine.strategy import ast as A
from svc_engine.strategy.tokens import Token

_V = TypeVar("_V")


class Cursor(Protocol):
    """The parser of one condition text, as its rules use it (``parser.Parser``)."""

    text: str
    toks: list[Token]
    i: int
    subjects: list[A.Node]
    last_subject: A.Node | None
    range_depth: int
    speeds: dict[A.Node, tuple[str, Token]]
    period_word: str
    in_exit: bool
    implicit_lags: set[int]
    market: bool

    def peek(self, k: int = 0) -> Token: ...
    def at(self, *words: str) -> bool: ...
    def at_any(self, words: set[str] | dict[str, str]) -> bool: ...
    def accept(self, *words: str) -> bool: ...
    def take(self) -> Token: ...
    def expect(self, word: str, what: str) -> Token: ...
    def match(self, table: dict[tuple[str, ...], _V]) -> _V | None: ...
    def fail(self, message: str, tok: Token | None = None, suggestion: str | None = None) -> NoReturn: ...
    def number(self, what: str) -> Token: ...
    def integer(self, what: str, low: int = 1) -> int: ...
    def positive_int(self, tok: Token, what: str) -> int: ...
    def raw(self, first: Token, last: Token) -> str: ...

    # Entry points: the rules below the value's own module reach it through these.
    def condition(self) -> A.Node: ...
    def value(self) -> A.Node: ...
    def postfix(self) -> A.Node: ...
    def primary(self) -> A.Node: ...
