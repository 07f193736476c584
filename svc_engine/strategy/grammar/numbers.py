"""The grammar table of what a number starts: the word after it -> the parse rules it can start
("the zero line", "14:00 UTC", "50% of close", "20 candle high", "50 points above SMA(20)",
"2% below EMA(20)", "200 EMA", "the 200-day"), tried in the grammar's order; a plain number when
none fits.

`NUMBER_RULES` maps the word after the number (its folded text) to its rules; the rules that read
an indicator name there can follow any word and join every entry in their place. A rule takes the
parser (the number taken) and the number's token and returns the value, or None without moving
when its look-ahead does not fit. ``values.number_primary`` reads the table.

Example:
    >>> [rule.__name__ for rule in NUMBER_RULES["of"]]
    ['indicator_multiple', 'share_of', 'period_of_indicator']
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close crosses above 50% of high").condition.right
    Arith(op='*', left=Num(value=0.5), right=Field(name='high'))
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_indicator
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.indicators import indicator
from svc_engine.strategy.grammar.lookahead import paren_after_name, starts_indicator
from svc_engine.strategy.grammar.windows import accept_including, range_window
from svc_engine.strategy.grammar.words import DOWN_WORDS, UP_WORDS
from svc_engine.strategy.tokens import COMMA, END, NUM, RPAREN, WORD, Token

Number = Callable[[Cursor, Token], A.Node | None]
AVERAGES = ("sma", "ema", "wma", "dema", "tema", "hma")


def zero_line(p: Cursor, tok: Token) -> A.Node | None:
    """ "crosses above the zero line" """
    if tok.value == 0 and not tok.pct and (p.at("line") or p.at("level")):
        p.i += 1
        return A.Num(0.0)
    return None


def indicator_multiple(p: Cursor, tok: Token) -> A.Node | None:
    """ "1 ATR(14)", "0.5 ATR(20)": a multiple of an indicator that names its own period"""
    if not tok.pct and starts_indicator(p, 0) and paren_after_name(p):
        ind = indicator(p, None)
        return ind if tok.value == 1 else A.Arith("*", A.Num(tok.value), ind)
    return None


def hour_of_day(p: Cursor, tok: Token) -> A.Node | None:
    """ "14:00 (UTC)": an hour of the day; the language reads whole hours"""
    if p.at(":") and p.peek(1).kind == NUM:
        minutes = p.peek(1)
        if minutes.value != 0 or tok.value != int(tok.value) or not 0 <= tok.value <= 23:
            p.fail("a time of day is a whole UTC hour, as in '14:00'", minutes)
        p.i += 2
        p.accept("utc")
        return A.Num(tok.value)
    return None


def share_of(p: Cursor, tok: Token) -> A.Node | None:
    """ "50% of close" """
    if tok.pct and p.at("of"):
        p.i += 1
        return A.Arith("*", A.Num(tok.value / 100.0), p.postfix())
    return None


def candle_extreme(p: Cursor, tok: Token) -> A.Node | None:
    """ "the 20 candle high": the highest high of 20 candles"""
    if not tok.pct and p.at("candle") and p.peek(1).text in ("high", "low", "close"):
        p.i += 1
        source = A.Field(p.take().text)
        key = "min" if source.name == "low" else "max"
        including = accept_including(p)
        node = check_indicator(key, [tok], "", source, p.text, tok, p.toks[p.i - 1].end)
        return range_window(p, node, "", including, tok)
    return None


def points_off(p: Cursor, tok: Token) -> A.Node | None:
    """ "50 points above SMA(20)" """
    if not tok.pct and p.at("point") and p.peek(1).text in UP_WORDS | DOWN_WORDS:
        p.i += 1
        op = "+" if p.take().text in UP_WORDS else "-"
        return A.Arith(op, p.postfix(), A.Num(tok.value))
    return None


def pct_off(p: Cursor, tok: Token) -> A.Node | None:
    """ "2% below EMA(20)" """
    if tok.pct and p.at_any(UP_WORDS | DOWN_WORDS):
        sign = 1.0 if p.take().text in UP_WORDS else -1.0
        if tok.value <= 0:
            p.fail("a percentage offset must be positive", tok)
        return A.PctOff(sign * tok.value, p.postfix())
    return None


def period_of_indicator(p: Cursor, tok: Token) -> A.Node | None:
    """ "200 EMA", "14 RSI": the number is the indicator's period"""
    if (
        not tok.pct
        and p.peek().kind == WORD
        and p.peek().text not in ("x", "times", "candle")
        and starts_indicator(p, 0)
    ):
        return indicator(p, tok)
    return None


def same_average(p: Cursor, tok: Token) -> A.Node | None:
    """ "the 50-day moving average crosses below the 200-day": the same average over 200"""
    subject = p.subjects[-1] if p.subjects else None
    if (
        not tok.pct
        and p.at("candle")
        and (p.peek(1).kind in (END, RPAREN, COMMA) or p.peek(1).text in ("and", "or", "then", "while"))
        and isinstance(subject, A.Ind)
        and subject.name in AVERAGES
    ):
        p.i += 1
        return A.Ind(subject.name, (p.positive_int(tok, "the period"),), "", subject.source)
    return None


def candle_period(p: Cursor, tok: Token) -> A.Node | None:
    """ "the 200 candle EMA" """
    if not tok.pct and p.at("candle") and starts_indicator(p, 1):
        p.i += 1
        return indicator(p, tok)
    return None


_ANY = None  # a rule that can follow any word (it reads an indicator name there)
_ORDER: tuple[tuple[tuple[str, ...] | set[str] | None, Number], ...] = (
    (("line", "level"), zero_line),
    (_ANY, indicator_multiple),
    ((":",), hour_of_day),
    (("of",), share_of),
    (("candle",), candle_extreme),
    (("point",), points_off),
    (UP_WORDS | DOWN_WORDS, pct_off),
    (_ANY, period_of_indicator),
    (("candle",), same_average),
    (("candle",), candle_period),
)


def _in_order(rules: list[Number]) -> tuple[Number, ...]:
    place = {rule: n for n, (_, rule) in enumerate(_ORDER)}
    return tuple(sorted(set(rules), key=place.__getitem__))


ANYWHERE: tuple[Number, ...] = tuple(rule for words, rule in _ORDER if words is _ANY)
"""The rules after a word that starts no rule of its own."""


def _table() -> dict[str, tuple[Number, ...]]:
    table: dict[str, list[Number]] = {}
    for words, rule in _ORDER:
        for word in sorted(words or ()):
            table.setdefault(word, []).append(rule)
    return {word: _in_order(rules + list(ANYWHERE)) for word, rules in table.items()}


NUMBER_RULES = _table()
"""The word after a number -> the rules it can start, in the grammar's order."""


def after_number(p: Cursor, tok: Token) -> A.Node:
    """The value a number ``tok`` (already taken) starts: the first rule of the word after it
    (`NUMBER_RULES`) that fits, else the number itself."""
    for rule in NUMBER_RULES.get(p.peek().text, ANYWHERE):
        node = rule(p, tok)
        if node is not None:
            return node
    return A.Num(tok.value)
