"""Comparisons by an amount, the rules a tail calls: a margin ("close is above SMA(50)
by at least 2%"), a move ("price rises 2% in one candle", "fell 3% in 4 hours"), a gap ("price gaps
up by 1%") and a percentile zone ("in the bottom 5% of the last 100 closes").

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("price gaps up by 1%").condition.op
    '>='
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_indicator
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.lookahead import direction_at, time_span_at
from svc_engine.strategy.grammar.windows import time_span
from svc_engine.strategy.grammar.words import PERIOD_WORDS
from svc_engine.strategy.tokens import NUM, Token

#: The bound of a margin or a move: "by at least 2%" (2% or more), "by more than 2%" (over 2%).
BOUNDS: dict[tuple[str, ...], bool] = {("at", "least"): False, ("more",): True, ("over",): True}


def margin(p: Cursor, op: str, left: A.Node, right: A.Node) -> A.Node:
    """ "close is above SMA(50) by at least 2%" (or "by more than 50 points")."""
    by = p.take()
    strict = p.match(BOUNDS) or False
    tok = p.number("a margin after 'by' (a percentage or a number of points)")
    if tok.value <= 0:
        p.fail("a margin must be positive", tok)
    up = op == ">"
    if tok.pct:
        level: A.Node = A.PctOff(tok.value if up else -tok.value, right)
    else:
        p.accept("point")
        level = A.Arith("+" if up else "-", right, A.Num(tok.value))
    del by
    return A.Compare((">" if up else "<") + ("" if strict else "="), left, level)


def move(p: Cursor, left: A.Node) -> A.Node:
    """ "price rises 2% in one candle", "drops by 5% in the last 3 candles": the close's change
    over N candles (ROC, in percent), at least X up (down)."""
    verb = p.take()
    p.accept("by")
    p.match(BOUNDS)
    tok = p.number("a percentage")
    if tok.value <= 0:
        p.fail("a move must be a positive percentage; 'rises' or 'drops' gives its direction", tok)
    n = 1
    if p.at("in") or p.at("over") or p.at("within"):
        k = 1
        while p.peek(k).text in PERIOD_WORDS or p.peek(k).text == "single":
            k += 1
        if time_span_at(p, 1) is not None:
            p.i += 1
            return timed_move(p, verb, tok, left, time_span(p))
        if p.peek(k).kind == NUM and p.peek(k + 1).text == "candle":
            p.i += k
            n = p.integer("the number of candles of the move")
            p.i += 1
        elif p.peek(k).text == "candle":
            p.i += k + 1  # "in a single candle"
    roc = check_indicator(
        "roc",
        [Token(NUM, str(n), tok.pos, tok.end, value=float(n))],
        "",
        left,
        p.text,
        verb,
        p.toks[p.i - 1].end,
    )
    if verb.text in ("rise", "up"):
        return A.Compare(">=", roc, A.Num(tok.value))
    return A.Compare("<=", roc, A.Num(-tok.value))


def timed_move(p: Cursor, verb: Token, pct: Token, left: A.Node, minutes: int) -> A.Node:
    """ "fell 3% in 4 hours": the percent change over that span of time (`roct`)."""
    minute_tok = Token(NUM, str(minutes), pct.pos, pct.end, value=float(minutes))
    roc = check_indicator("roct", [minute_tok], "", left, p.text, verb, p.toks[p.i - 1].end)
    if verb.text in ("rise", "up"):
        return A.Compare(">=", roc, A.Num(pct.value))
    return A.Compare("<=", roc, A.Num(-pct.value))


def gap(p: Cursor, left: A.Node) -> A.Node:
    """ "price gaps up (by 1%)": the open above the previous close (by at least 1%)."""
    tok = p.take()
    if left not in (A.Field("close"), A.Field("open")):
        p.fail("only price gaps, as in 'price gaps up by 1%'", tok)
    way = direction_at(p)
    if way is None:
        p.fail("expected 'up' or 'down' after 'gaps'")
    p.i += 1
    up = way == "above"
    p.accept("by") or p.accept("of")
    for word in ("at", "least", "more", "over", "larger", "bigger", "greater"):
        p.accept(word)  # "a gap up larger than 1%", "gaps up by at least 1%"
    previous = A.Lag(A.Field("close"), 1)
    if p.peek().kind == NUM and p.peek().pct:
        pct = p.take()
        if pct.value <= 0:
            p.fail("a gap must be a positive percentage", pct)
        level = A.PctOff(pct.value if up else -pct.value, previous)
        return A.Compare(">=" if up else "<=", A.Field("open"), level)
    return A.Compare(">" if up else "<", A.Field("open"), previous)


def percentile_zone(p: Cursor, left: A.Node) -> A.Node:
    """ "the price is in the bottom 5% of the last 100 closes": its percentile rank over 100."""
    p.i += 1
    low = p.take().text in ("bottom", "lowest")
    pct = p.take()
    if not 0 < pct.value < 100:
        p.fail("a share of the closes is between 0% and 100%", pct)
    p.accept("of")
    while p.peek().text in PERIOD_WORDS:
        p.i += 1
    count = p.number("how many candles, as in 'of the last 100 closes'")
    if not p.at_any({"close", "candle", "value"}):
        p.fail("expected 'closes' or 'candles' after the number of candles")
    p.i += 1
    rank = check_indicator("prank", [count], "", left, p.text, count, p.toks[p.i - 1].end)
    if low:
        return A.Compare("<=", rank, A.Num(pct.value))
    return A.Compare(">=", rank, A.Num(100.0 - pct.value))
