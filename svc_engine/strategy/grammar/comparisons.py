"""What follows a value: comparisons, crosses and zones, the rules the tail table
(`svc_engine.strategy.grammar.tails`) calls; the comparisons by an amount (margins, moves, gaps,
percentile zones) are the rules of `svc_engine.strategy.grammar.amounts`.

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close is above SMA(50) by at least 2%").condition.op
    '>='
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.amounts import margin
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.lookahead import at_trend_line, direction_at, no_second_side, skip_trend_line
from svc_engine.strategy.grammar.values import std_band, value
from svc_engine.strategy.grammar.words import (
    DIRECTIONS,
    SIGN_WAYS,
    ZONES,
)
from svc_engine.strategy.tokens import NUM, Token
from svc_engine.strategy.vocab import COMPARATORS


def comparison(p: Cursor, left: A.Node) -> A.Node:
    """ "(stays) above X", "at least X", "> X", "above X by 2%": a comparator and a value."""
    p.accept("stay")
    start = p.i
    op = p.match(COMPARATORS)
    if op is None:
        p.fail("expected a comparison (above, below, crosses above, between, ...)")
    p.accept("or", "equal")
    no_second_side(p, p.raw(p.toks[start], p.toks[p.i - 1]))
    right = value(p)
    if p.at("by") and op in (">", "<"):
        return margin(p, op, left, right)
    if isinstance(right, A.PctOff) and right.pct < 0 and op in (">=", "<="):
        # "at least 3% below SMA(50)" is 3% or more under it: at most SMA(50) x 0.97
        op = "<=" if op == ">=" else ">="
    return A.Compare(op or ">", left, right)


def multiple(p: Cursor, left: A.Node) -> A.Node:
    """ "volume is 3 times its average": at least 3 times it ("3 times greater than": above it)."""
    tok = p.peek()
    if tok.value <= 0:
        p.fail("a multiple must be positive", tok)
    p.i += 2
    op = ">="
    if p.at_any({"greater", "higher", "more", "above", "bigger", "larger"}):
        p.i += 1
        op = ">"
    no_second_side(p, p.raw(tok, p.toks[p.i - 1]))
    return A.Compare(op, left, A.Arith("*", A.Num(tok.value), value(p)))


def std_compare(p: Cursor, left: A.Node, equal: str) -> A.Node:
    """ "close is (more than / at least) 2 standard deviations below SMA(20)": beyond the band."""
    band = std_band(p, left)
    assert isinstance(band, A.Arith)
    return A.Compare((">" if band.op == "+" else "<") + equal, left, band)


def cross(p: Cursor, left: A.Node) -> A.Node:
    return cross_from(p, left, p.take())


#: Which way "crosses the slow one to the upside" goes (a cross said without a side first).
CROSS_SIDES = {"upside": "above", "upwards": "above", "up": "above"}
CROSS_SIDES |= {"downside": "below", "downwards": "below", "down": "below"}
#: Where a cross comes from: "crosses above 30 from below".
CAME_FROM = {"below": "below", "under": "below", "above": "above", "over": "above"}


def cross_from(p: Cursor, left: A.Node, verb: Token) -> A.Node:
    p.accept("back")
    direction = direction_at(p)
    if direction is None and verb.text == "cross":
        return cross_either(p, left, verb)
    if direction is None:
        p.fail(f"expected 'above' or 'below' after {verb.text!r}")
    p.i += 1
    p.accept("through")
    if at_trend_line(p) or p.at("broken"):
        p.accept("broken")
        skip_trend_line(p)
        return A.TrendEvent("break_up" if direction == "above" else "break_down")
    no_second_side(p, p.raw(verb, p.toks[p.i - 1]))
    right = value(p)
    if p.at("from") and p.peek(1).text in CAME_FROM:
        came = CAME_FROM[p.peek(1).text]
        if (came == "below") != (direction == "above"):
            p.fail(f"a cross {direction} comes from {'below' if direction == 'above' else 'above'}")
        p.i += 2
    if direction_at(p) is not None and p.peek(1).kind == NUM and not p.peek(1).pct:
        # "%K crosses above %D below 20": the cross, where the subject is under 20
        op = ">" if DIRECTIONS[p.take().text] == "above" else "<"
        zone = A.Compare(op, left, A.Num(p.take().value))
        return A.And((A.Cross(direction, left, right), zone))
    return A.Cross(direction, left, right)


def cross_either(p: Cursor, left: A.Node, verb: Token) -> A.Node:
    """ "tenkan crosses kijun": either way, unless a side follows ("... to the upside")."""
    no_second_side(p, p.raw(verb, verb))
    right = value(p)
    way = CROSS_SIDES.get(p.peek().text)
    if way is not None:
        p.i += 1
        return A.Cross(way, left, right)
    return A.Cross("either", left, right)


def zone(p: Cursor, left: A.Node) -> A.Node:
    tok = p.take()
    name = left.name if isinstance(left, A.Ind) else ""
    if name not in ZONES:
        p.fail(f"{tok.text!r} applies to RSI, stochastic, Williams %R and CCI", tok)
    low, high = ZONES[name]
    if tok.text == "oversold":
        return A.Compare("<", left, A.Num(low))
    return A.Compare(">", left, A.Num(high))


def turn(p: Cursor, left: A.Node) -> A.Node:
    """ "the MACD histogram turns positive": it crosses zero that way."""
    p.i += 1
    left = direction_of(left)
    way = SIGN_WAYS.get(p.peek().text) if p.at_any(SIGN_WAYS) else None
    if way is None:
        p.fail("expected 'positive' or 'negative' after 'turns'")
    p.i += 1
    return A.Cross(way, left, A.Num(0.0))


def direction_of(node: A.Node) -> A.Node:
    """A Supertrend turns by its direction line, not by its price line."""
    if isinstance(node, A.Ind) and node.name == "supertrend":
        return A.Ind("supertrend", node.params, "direction")
    return node


CLOUD_SIDE = {
    ">": "cloud top",
    ">=": "cloud top",
    "<": "cloud bottom",
    "<=": "cloud bottom",
    "above": "cloud top",
    "below": "cloud bottom",
}


def resolve_cloud(node: A.Node) -> A.Node:
    """ "above the cloud" means above its top, "below the cloud" below its bottom."""
    if isinstance(node, A.Not):
        return A.Not(resolve_cloud(node.item))
    if not isinstance(node, A.Compare | A.Cross):
        return node
    way = node.op if isinstance(node, A.Compare) else node.direction
    flipped = {"cloud top": "cloud bottom", "cloud bottom": "cloud top"}

    def fix(side: A.Node, flip: bool) -> A.Node:
        is_cloud = isinstance(side, A.Ind) and side.name == "ichimoku" and side.output == "cloud"
        if isinstance(side, A.Ind) and is_cloud and way in CLOUD_SIDE:
            out = CLOUD_SIDE[way]
            return A.Ind("ichimoku", side.params, flipped[out] if flip else out)
        return side

    left, right = fix(node.left, True), fix(node.right, False)
    if isinstance(node, A.Compare):
        return A.Compare(node.op, left, right)
    return A.Cross(node.direction, left, right)
