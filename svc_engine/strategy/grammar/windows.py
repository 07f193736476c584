"""Windows of candles: a span of time ("in 4 hours"), "including the current candle", and which
candles "the highest high of the last 20 candles" covers.

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close above the highest high of the last 20 candles").condition.right
    Lag(expr=Ind(name='max', params=(20,), output='', source=Field(name='high')), n=1)
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.lookahead import time_span_at
from svc_engine.strategy.tokens import NUM, Token
from svc_engine.strategy.vocab import SPECS


def time_span(p: Cursor) -> int:
    """Consume a span of time (`time_span_at`) and return its minutes."""
    found = time_span_at(p)
    if found is None:
        p.fail("expected a span of time, as in '4 hours'")
    assert found is not None
    minutes, count = found
    if minutes > SPECS["roct"].params[0].high:
        p.fail("a span of time is at most 365 days (525600 minutes)")
    p.i += count
    return minutes


def accept_including(p: Cursor) -> bool:
    """ "... including the current candle" / "including this one"."""
    if not p.accept("including"):
        return False
    p.accept("this") or p.accept("current")
    one = p.peek().kind == NUM and p.peek().value == 1
    if not (p.accept("candle") or (one and p.take())):
        p.fail("expected 'the current candle' after 'including'")
    return True


def range_window(p: Cursor, node: A.Node, word: str, including: bool, start: Token) -> A.Node:
    """Which candles a highest/lowest covers. In a condition, "the last N candles" are the N before
    the current one (the current candle is what is compared with them); "including the current
    candle" adds it. In a take-profit or stop level "the last N" include the signal candle.
    "previous N" always excludes the current candle."""
    if including:
        if word in ("previous", "prior"):
            p.fail(
                f"'the {word} N candles' exclude the current one; say 'the last N candles "
                "including the current candle'",
                start,
            )
        return node
    if word in ("previous", "prior"):
        return A.Lag(node, 1)
    if not p.in_exit:
        lag = A.Lag(node, 1)
        p.implicit_lags.add(id(lag))  # "the 20-candle high 3 candles ago" ends the window there
        return lag
    return node
