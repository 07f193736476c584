"""An entry's side prefix ("buy when ...", "go short if ...") and its entry-price clause ("...,
limit at EMA(20)", "... then buy at market").

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("short when RSI(14) above 70, enter at market").market
    True
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.lookahead import at_entry_clause
from svc_engine.strategy.grammar.values import value
from svc_engine.strategy.grammar.words import SIDE_WORDS
from svc_engine.strategy.tokens import COMMA, NUM, WORD

#: "buy at market", "enter at market price": a market order.
MARKET: dict[tuple[str, ...], bool] = {("at", "market"): True, ("market",): True}


def side_prefix(p: Cursor) -> str | None:
    save = p.i
    p.accept("turn") or p.accept("enter") or p.accept("open")
    side = SIDE_WORDS.get(p.peek().text)
    if side is None or p.peek().kind != WORD:
        p.i = save
        return None
    p.i += 1
    p.accept("position") or p.accept("entry")
    if p.match(MARKET):
        p.market = True
    said_when = any(p.accept(w) for w in ("when", "if", "once", "on", ":"))
    # "buy 1% below close" is an entry-price clause, not a side prefix.
    if not said_when and p.peek().kind != COMMA and (at_entry_clause(p) or p.peek().kind == NUM):
        p.i = save
        return None
    while p.peek().kind == COMMA:
        p.i += 1
    return side


def entry_clause(p: Cursor) -> tuple[A.Node | None, str | None]:
    word = p.take().text
    side = SIDE_WORDS.get(word)
    p.accept("price")
    if p.match(MARKET):
        p.accept("order") or p.accept("price")
        p.market = True  # fills at the next candle's open
        return None, side
    for skip in ("limit", "order", "at", "=", "on"):
        p.accept(skip)
    return value(p), side
