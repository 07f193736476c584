"""The grammar table of a predicate without a subject: its first word -> the parse rules it can
start ("3 green candles in a row", "on Mondays", "a bullish engulfing", "a new 55-candle high").

`SUBJECTLESS` maps a word (the token's folded text; ``NUM`` for a number) to its rules, each with
its place in the grammar's order. A rule takes the parser and returns the predicate, or None when
its look-ahead does not fit, and the next rule is tried; a rule that skips words without a result
("at the close", "at least") leaves the rest to the word it stopped at. When none fits, the
predicate has a subject (`predicates.predicate`), which calls `subjectless`.

Example:
    >>> [rule.__name__ for _, rule in SUBJECTLESS["gap"]]
    ['gap_event']
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("a golden cross").condition.direction
    'above'
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.amounts import gap
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.events import (
    calendar,
    candle_color,
    cloud_color,
    n_candle_move,
    new_extreme,
    pattern,
    range_break,
    trend_break,
)
from svc_engine.strategy.grammar.lookahead import at_trend_line, candle_run_at, gap_as_value
from svc_engine.strategy.grammar.words import COLORS
from svc_engine.strategy.tokens import NUM, STEMS, Token
from svc_engine.strategy.vocab import DAY_NAMES, PATTERN_WORDS

Start = Callable[[Cursor], A.Node | None]
Words = tuple[str, ...] | set[str]


def subjectless(p: Cursor) -> A.Node | None:
    """A predicate without a subject at the cursor, or None: the rules its first word can start
    (`SUBJECTLESS`), tried in the grammar's order."""
    rules = starts_at(p.peek())
    n = 0
    while n < len(rules):
        order, rule = rules[n]
        n += 1
        save = p.i
        node = rule(p)
        if node is not None:
            return node
        if p.i != save:  # it skipped words ("at the close", "at least"): the next word leads
            rules = tuple(r for r in starts_at(p.peek()) if r[0] > order)
            n = 0
    return None


def day_end(p: Cursor) -> A.Node | None:
    tok = p.peek()
    if p.text[tok.pos : tok.end].lower() == "day" and p.peek(1).text in ("end", "ends"):
        p.i += 2
        return A.DayEnd()  # "the day ends" (exit rules)
    return None


def golden_cross(p: Cursor) -> A.Node | None:
    if p.at("golden", "cross") or p.at("death", "cross"):
        way = "above" if p.take().text == "golden" else "below"
        p.i += 1
        return A.Cross(way, A.Ind("sma", (50,)), A.Ind("sma", (200,)))
    return None


def at_least_run(p: Cursor) -> A.Node | None:
    if p.at("at", "least") and p.peek(2).kind == NUM:
        p.i += 2  # "at least four consecutive bullish candles" holds where four in a row do
        if candle_run_at(p) is None:
            p.i -= 2
    return None


def candle_run(p: Cursor) -> A.Node | None:
    tok = p.peek()
    if tok.kind != NUM or tok.pct:
        return None
    k = 2 if p.peek(1).text == "consecutive" else 1
    color = COLORS.get(p.peek(k).text)
    if color and p.peek(k + 1).text == "candle":
        p.i += k + 2
        p.accept("in", "row")
        return A.Candles(color, p.positive_int(tok, "the number of candles"))
    return None


def gap_event(p: Cursor) -> A.Node | None:
    if (p.at("gap") or p.at("candle", "gap")) and not gap_as_value(p):
        p.accept("candle")
        return gap(p, A.Field("close"))
    return None


def squeeze(p: Cursor) -> A.Node | None:
    if not p.at("squeeze"):
        return None
    # John Bollinger's Squeeze: BandWidth at its lowest in six months (125 daily candles)
    p.i += 1
    return A.NewExtreme("low", 125, A.Ind("bb", (20, 2.0), "bandwidth"))


def new_high(p: Cursor) -> A.Node | None:
    if not p.at("new"):
        return None
    p.i += 1
    n, kind = new_extreme(p)
    return A.NewExtreme(kind, n, A.Field(kind))


def trend_event(p: Cursor) -> A.Node | None:
    if at_trend_line(p) or p.at("resistance") or p.at("support"):
        return trend_break(p)
    return None


_DAY_WORDS = {STEMS.get(w, w) for w in ("session", "day")}  # as the tokenizer spells them
_CALENDAR = {"at", "on", "in", "between", "open", "candle", "weekend", "weekday", "first", NUM}
_PATTERN = {"this", "current", "candle", "bullish", "bearish", NUM} | {key[0] for key in PATTERN_WORDS}
_ORDER: tuple[tuple[Words, Start], ...] = (
    (("candle",), day_end),
    (_CALENDAR | _DAY_WORDS | set(DAY_NAMES), calendar),
    (_PATTERN, pattern),
    (("previous", "prior", "current", "this", "last", "candle"), candle_color),
    (("golden", "death"), golden_cross),
    (("at",), at_least_run),
    ((NUM,), candle_run),
    (("ichimoku", "cloud", "kumo"), cloud_color),
    (("gap", "candle"), gap_event),
    (("squeeze",), squeeze),
    ((NUM,), n_candle_move),
    ((NUM,), range_break),
    (("new",), new_high),
    (("trend", "trendline", "resistance", "support"), trend_event),
)


def _table() -> dict[str, tuple[tuple[int, Start], ...]]:
    table: dict[str, tuple[tuple[int, Start], ...]] = {}
    for order, (words, rule) in enumerate(_ORDER):
        for word in sorted(words):
            table[word] = (*table.get(word, ()), (order, rule))
    return table


SUBJECTLESS = _table()
"""The first word of a predicate without a subject -> its rules (with their place in the grammar's
order), tried in order; ``NUM`` keys the rules a number starts."""
# A number's text ("three", "first") can be a rule's word too: its rules and the word's, in order.
_NUM_STARTS = {
    word: tuple(sorted(set(SUBJECTLESS[NUM]) | set(rules), key=lambda r: r[0]))
    for word, rules in SUBJECTLESS.items()
}


def starts_at(tok: Token) -> tuple[tuple[int, Start], ...]:
    """The rules a predicate without a subject can start with at `tok`, in the grammar's order."""
    if tok.kind == NUM:
        return _NUM_STARTS.get(tok.text, SUBJECTLESS[NUM])
    return SUBJECTLESS.get(tok.text, ())
