"""Values: plus/minus < times/divided by < unary minus < ``N candles ago`` < primary (a number,
a price field, an indicator, a parenthesised value, a value on another timeframe).

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close above (high + low) / 2").condition.right.op
    '/'
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_indicator
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.indicators import indicator
from svc_engine.strategy.grammar.lookahead import (
    STD_WORDS,
    alias_length,
    at_std_band,
    phrase_at,
    starts_indicator,
    std_count_at,
    timeframe_at,
)
from svc_engine.strategy.grammar.numbers import AVERAGES, after_number
from svc_engine.strategy.grammar.primaries import word_primary
from svc_engine.strategy.grammar.windows import range_window
from svc_engine.strategy.grammar.words import UP_WORDS
from svc_engine.strategy.tokens import LPAREN, NUM, RPAREN, WORD
from svc_engine.strategy.vocab import ALIASES, FIELDS, PREFIX_OUTPUTS


def _std_of(ref: A.Node, subject: A.Node) -> A.Node:
    """The standard deviation that goes with a reference value: of the average's own series over its
    period (the middle Bollinger band's: close over its period), else of the subject over 20."""
    if isinstance(ref, A.Ind) and ref.name in AVERAGES:
        return A.Ind("stddev", (int(ref.params[0]),), "", ref.source)
    if isinstance(ref, A.Ind) and ref.name == "bb":
        return A.Ind("stddev", (int(ref.params[0]),))
    source = subject if isinstance(subject, A.Field | A.Ind) and subject != A.Field("close") else None
    return A.Ind("stddev", (20,), "", source)


#: The words of plus and minus, and their operators.
SIGNS = {"plus": "+", "+": "+", "minus": "-", "-": "-"}
#: The words of times and divided by, and their operators.
TERM_OPS: dict[tuple[str, ...], str] = {("times",): "*", ("x",): "*", ("*",): "*", ("multiplied", "by"): "*"}
TERM_OPS |= {("divided", "by"): "/", ("/",): "/"}


def value(p: Cursor) -> A.Node:
    node = term(p)
    while True:
        op = SIGNS.get(p.peek().text)
        if op is None or p.at("minus", "di"):  # "minus DI" is the indicator
            return node
        p.i += 1
        if std_count_at(p, 0):
            # "SMA(20) minus 2 standard deviations": the deviation of that average's series.
            count = p.take()
            p.match(STD_WORDS)
            node = A.Arith(op, node, A.Arith("*", A.Num(count.value), _std_of(node, node)))
        elif p.peek().kind == NUM and p.peek().pct:
            # "the SMA plus 1 percent": 1% above it
            pct = p.take()
            if pct.value <= 0:
                p.fail("a percentage offset must be positive", pct)
            node = A.PctOff((1.0 if op == "+" else -1.0) * pct.value, node)
        else:
            node = A.Arith(op, node, term(p))


def term(p: Cursor) -> A.Node:
    node = unary(p)
    while (op := p.match(TERM_OPS)) is not None:
        node = A.Arith(op, node, unary(p))
    return node


def unary(p: Cursor) -> A.Node:
    if p.at("+") and p.peek(1).kind == NUM:
        p.i += 1  # "CCI rises above +100"
    if (p.at("-") or p.at("minus")) and not p.at("minus", "di"):
        p.i += 1
        inner = unary(p)
        if isinstance(inner, A.Num):
            return A.Num(-inner.value)
        return A.Arith("*", A.Num(-1.0), inner)
    return postfix(p)


def postfix(p: Cursor) -> A.Node:
    node = primary(p)
    while (
        p.peek().kind == NUM
        and p.peek(1).text == "candle"
        and p.peek(2).text == "ago"
        # "was below 60 three days ago": the comparison's, not the number's
        and not (isinstance(node, A.Num) and p.subjects)
    ):
        n = p.integer("the number of candles ago")
        p.i += 2
        if id(node) in p.implicit_lags:
            node = A.Lag(node.expr, n)  # type: ignore[attr-defined]
        else:
            node = A.Lag(node, n) if not isinstance(node, A.Lag) else A.Lag(node.expr, node.n + n)
    return node


def std_band(p: Cursor, subject: A.Node) -> A.Node:
    """ "2 standard deviations below SMA(20)": SMA(20) minus 2 x the standard deviation of its
    series over its period (of the subject over 20 candles when the reference is no average)."""
    count = p.take()
    if count.value <= 0:
        p.fail("a number of standard deviations must be positive", count)
    p.match(STD_WORDS)
    op = "+" if p.take().text in UP_WORDS else "-"
    p.accept("of")
    ref = postfix(p)
    return A.Arith(op, ref, A.Arith("*", A.Num(count.value), _std_of(ref, subject)))


def primary(p: Cursor) -> A.Node:
    """A number, a parenthesised value (`PRIMARY_KINDS`), a value another timeframe's, a word's
    value (`primaries.word_primary`), a price field or an indicator."""
    tok = p.peek()
    tf = timeframe_at(p)
    if tf is not None and p.peek(tf[1]).text not in ("chart", "timeframe", "candle"):
        p.i += tf[1]
        return A.Tf(primary(p), tf[0])
    by_kind = PRIMARY_KINDS.get(tok.kind)
    if by_kind is not None:
        return by_kind(p)
    node = word_primary(p)  # the table of words that start a value (grammar/primaries.py)
    if node is not None:
        return node
    if alias_length(p) <= 1:
        field = p.match(FIELDS)
        if field is not None:
            return field_suffix(p, A.Field(field))
    return indicator(p, None)


def parenthesised(p: Cursor) -> A.Node:
    """ "(high + low) / 2": a value in parentheses, where a period phrase is its own again."""
    p.i += 1
    depth, p.range_depth = p.range_depth, 0
    try:
        inner = value(p)
    finally:
        p.range_depth = depth
    if p.peek().kind != RPAREN:
        p.fail("expected ')'")
    p.i += 1
    return inner


def number_primary(p: Cursor) -> A.Node:
    if at_std_band(p) and p.subjects:
        return std_band(p, p.subjects[-1])  # "exceeds 2 standard deviations above its average"
    return after_number(p, p.take())  # the table of what a number starts (grammar/numbers.py)


def extreme_of_period(p: Cursor, node: A.Field) -> A.Node | None:
    """ "the high of the preceding 20 days": the highest high of the previous 20 candles."""
    if not (
        not p.range_depth
        and p.at("of")
        and p.peek(2).kind == NUM
        and p.peek(1).text in ("last", "past", "previous", "prior")
    ):
        return None
    p.i += 1
    word = p.take().text
    count = p.number("the number of candles")
    p.expect("candle", "'candles' after the number")
    key = "max" if node.name == "high" else "min"
    ind = check_indicator(key, [count], "", node, p.text, count, p.toks[p.i - 1].end)
    return range_window(p, ind, "previous" if word != "last" else word, False, count)


def price_indicator(p: Cursor, node: A.Field) -> A.Node | None:
    """ "the price percent rank", "the price z-score": an indicator of the close."""
    if p.peek().text not in ("percent", "percentile", "z", "zscore", "roc"):
        return None
    spec_key = p.match(ALIASES)
    if spec_key in ("prank", "zscore", "roc"):
        p.i -= len(next(k for k in ALIASES if ALIASES[k] == spec_key and phrase_at(p, -len(k), k)))
        return indicator(p, None, source=None)
    if spec_key is not None:
        p.fail("expected a comparison after the price")
    return None


FIELD_SUFFIXES = {"high": extreme_of_period, "low": extreme_of_period, "close": price_indicator}
"""A price field -> the rule of what only it can be followed by, tried first."""


def field_suffix(p: Cursor, node: A.Field) -> A.Node:
    suffix = FIELD_SUFFIXES.get(node.name)
    found = suffix(p, node) if suffix is not None else None
    if found is not None:
        return found
    if p.at("of", "previous", "candle") or p.at("of", "prior", "candle"):
        p.i += 3
        return A.Lag(node, 1)
    if (
        node.name == "volume"
        and p.peek().kind == WORD
        and starts_indicator(p, 0)
        and p.peek().text not in {*PREFIX_OUTPUTS, "highest", "lowest"}
    ):
        return indicator(p, None, source=node)
    return node


PRIMARY_KINDS: dict[str, Callable[[Cursor], A.Node]] = {NUM: number_primary, LPAREN: parenthesised}
"""A token kind that starts a value -> its rule."""
