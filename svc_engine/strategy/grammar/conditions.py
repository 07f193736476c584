"""Conditions: ``or`` < ``and``/``while``/``with``/``,`` < ``not`` < ``after``/``then`` < predicate,
and parentheses at any depth; a predicate is `predicates.predicate`.

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("RSI(14) drops below 30 and then crosses back above 30").condition.window
    10
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.lookahead import at_entry_clause, at_entry_clause_after, at_time_exit
from svc_engine.strategy.grammar.predicates import predicate
from svc_engine.strategy.grammar.words import (
    AND_WORDS,
    MAX_WINDOW,
)
from svc_engine.strategy.tokens import COMMA, END, LPAREN, NUM, RPAREN, WORD
from svc_engine.strategy.vocab import THEN_WINDOW


def condition(p: Cursor) -> A.Node:
    p.accept("either")
    items = [conjunction(p)]
    while not at_time_exit(p, 1) and p.accept("or"):
        if p.peek().kind == END:
            p.fail("expected a condition after 'or'")
        p.accept("either")
        items.append(conjunction(p))
    return items[0] if len(items) == 1 else A.Or(flatten(A.Or, items))


def conjunction(p: Cursor) -> A.Node:
    p.accept("both")
    items = [negation(p)]
    while True:
        save = p.i
        if not separator(p) or at_entry_clause(p):
            p.i = save
            break
        if p.peek().kind == END:
            p.fail(f"expected a condition after {p.toks[p.i - 1].text!r}")
        if p.at("then") and not at_entry_clause_after(p, 1):
            p.i += 1
            window = then_window(p)
            items[-1] = A.After(negation(p), items[-1], window)
            continue
        items.append(negation(p))
    return items[0] if len(items) == 1 else A.And(flatten(A.And, items))


def separator(p: Cursor) -> bool:
    """One joining word, optionally after a comma (", and"); "and also" is one too. A second
    connective is refused by `predicate` ("and and", "and or")."""
    found = False
    if p.peek().kind == COMMA:
        p.i += 1
        found = True
    if p.peek().text in AND_WORDS and p.peek().kind == WORD:
        p.i += 1
        found = True
        if p.toks[p.i - 1].text in ("and", "but") and p.at("also"):
            p.i += 1
    return found


def negation(p: Cursor) -> A.Node:
    if p.accept("not"):
        return A.Not(negation(p))
    return after(p)


def after(p: Cursor) -> A.Node:
    cond = atom(p)
    window = after_window(p)
    if window is not None:
        return A.After(cond, atom(p), window)
    if p.at("then") and not at_entry_clause_after(p, 1):
        p.i += 1
        window = then_window(p)
        return A.After(atom(p), cond, window)
    return cond


#: The words of "after" and the window each gives (in candles).
AFTER_WORDS: dict[tuple[str, ...], int] = {
    ("after",): THEN_WINDOW,
    ("right", "after"): 1,
    ("immediately", "after"): 1,
    ("just", "after"): 1,
}
#: "then right away X": on the next candle.
THEN_AT_ONCE: dict[tuple[str, ...], int] = {
    ("on", "next", "candle"): 1,
    ("immediately",): 1,
    ("right", "away"): 1,
}


def after_window(p: Cursor) -> int | None:
    """ "after" (THEN_WINDOW), "right/immediately after" (1), "within N candles after" (N)."""
    window = p.match(AFTER_WORDS)
    if window is not None:
        return window
    if p.at("within") and p.peek(1).kind == NUM and p.peek(2).text == "candle" and p.peek(3).text == "after":
        p.i += 1
        n = p.integer("the number of candles of 'within ... after'")
        if n > MAX_WINDOW:
            p.fail(f"the window of 'after' is at most {MAX_WINDOW} candles", p.toks[p.i - 1])
        p.i += 2
        return n
    return None


def then_window(p: Cursor) -> int:
    """ "then X" (THEN_WINDOW), "then within N candles X", "then right away / on the next candle X"."""
    if p.at("within") and p.peek(1).kind == NUM and p.peek(2).text == "candle":
        p.i += 1
        n = p.integer("the number of candles of 'then within'")
        if n > MAX_WINDOW:
            p.fail(f"the window of 'then' must be at most {MAX_WINDOW} candles", p.toks[p.i - 1])
        p.i += 1
        return n
    return p.match(THEN_AT_ONCE) or THEN_WINDOW


def atom(p: Cursor) -> A.Node:
    if p.peek().kind == LPAREN:
        save, subject = p.i, p.last_subject
        p.i += 1
        try:
            inner = condition(p)
            if p.peek().kind == RPAREN:
                p.i += 1
                return inner
        except StrategyCompileError:
            pass
        else:
            if p.peek().kind == END:
                p.fail(f"missing ')' to close the '(' at position {p.toks[save].pos}")
        p.i, p.last_subject = save, subject  # a value such as "(high + low) / 2 above ..."
    return predicate(p)


def flatten(kind: type[A.And] | type[A.Or], items: list[A.Node]) -> tuple[A.Node, ...]:
    """`(a and b) and c` is `a and b and c`: one flat list per operator keeps the tree canonical."""
    out: list[A.Node] = []
    for item in items:
        out.extend(item.items if isinstance(item, kind) else (item,))
    return tuple(out)
