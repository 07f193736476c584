"""The grammar table of the words that start a value: "its average", "the previous close", "the
candle's range", "gap size", "4x normal", a day name after "day of week is".

`PRIMARIES` maps a word (the token's folded text) to its rules, each with its place in the grammar's
order. A rule takes the parser and returns the value, or None when its look-ahead does not fit, and
the next rule is tried; a rule that skips a word without a result ("the current low", "its open")
leaves the rest to the word it stopped at. When none fits, the value is a price field or an
indicator (`values.primary`), which calls `word_primary`.

Example:
    >>> [rule.__name__ for _, rule in PRIMARIES["its"]]
    ['previous_value', 'its_previous_average', 'skip_its', 'its_indicator']
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("the candle range is above 100").condition.left.op
    '-'
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.indicators import indicator
from svc_engine.strategy.grammar.words import GAP_SIZE_WORDS
from svc_engine.strategy.tokens import COMMA, END, NUM, RPAREN, WORD, Token
from svc_engine.strategy.vocab import DAY_NAMES

Primary = Callable[[Cursor], A.Node | None]
Words = tuple[str, ...] | set[str]


def word_primary(p: Cursor) -> A.Node | None:
    """The value a word at the cursor starts (`PRIMARIES`), or None: its rules in the grammar's order."""
    rules = PRIMARIES.get(p.peek().text, ())
    n = 0
    while n < len(rules):
        order, rule = rules[n]
        n += 1
        save = p.i
        node = rule(p)
        if node is not None:
            return node
        if p.i != save:  # it skipped a word ("current", "its"): the next word leads
            rules = tuple(r for r in PRIMARIES.get(p.peek().text, ()) if r[0] > order)
            n = 0
    return None


def _one_back(p: Cursor) -> A.Node:
    subject = p.subjects[-1]
    return A.Lag(subject.expr, subject.n + 1) if isinstance(subject, A.Lag) else A.Lag(subject, 1)


def previous_value(p: Cursor) -> A.Node | None:
    """ "greater than that of the previous candle", "above its previous value": the subject, 1 back."""
    if p.subjects and (
        p.at("of", "previous", "candle") or p.at("previous", "value") or p.at("its", "previous", "value")
    ):
        p.i += 3 if not p.at("previous") else 2
        return _one_back(p)
    return None


def skip_current(p: Cursor) -> A.Node | None:
    if p.peek(1).text in ("candle", "open", "high", "low", "close", "volume", "price"):
        p.i += 1  # "the current bar's volume", "the current low": this candle's
    return None


def its_previous_average(p: Cursor) -> A.Node | None:
    if p.peek(1).text in ("previous", "prior") and p.peek(2).kind == NUM:
        p.i += 2  # "below 20 times its previous 30-candle average": the average one candle back
        p.toks[p.i - 1] = Token(WORD, "its", p.toks[p.i - 1].pos, p.toks[p.i - 1].end)
        p.i -= 1
        return A.Lag(p.primary(), 1)
    return None


def skip_its(p: Cursor) -> A.Node | None:
    if p.peek(1).text in ("previous", "prior", "open", "high", "low", "close"):
        p.i += 1  # "opens above its previous close"
    return None


def candle_before(p: Cursor) -> A.Node | None:
    """ "the parabolic SAR is smaller than the candle before": the subject one candle back."""
    if p.subjects and (
        (p.at("candle", "before") and p.text[p.peek().pos : p.peek().end].lower() != "day")
        or (p.at("previous", "candle") and p.peek(2).kind in (END, RPAREN, COMMA))
        or (p.at("previous", "candle") and p.peek(2).text in ("and", "or", "while", "with"))
    ):
        p.i += 2
        return _one_back(p)
    return None


def candle_range(p: Cursor) -> A.Node | None:
    if p.at("candle", "range") or p.at("range"):
        p.i += 2 if p.at("candle") else 1  # "the candle's range": high minus low
        return A.Arith("-", A.Field("high"), A.Field("low"))
    return None


def gap_size(p: Cursor) -> A.Node | None:
    if p.peek(1).text in GAP_SIZE_WORDS:
        p.i += 1  # "gap size is larger than 1 ATR(14)": the open's distance from the previous close
        p.accept("size")
        return A.Arith("-", A.Field("open"), A.Lag(A.Field("close"), 1))
    return None


def normal(p: Cursor) -> A.Node | None:
    if not p.subjects:
        return None
    p.i += 1  # "volume is 4x normal": its usual level, the 20-candle average
    return A.Ind("sma", (20,), "", None if p.subjects[-1] == A.Field("close") else p.subjects[-1])


def previous(p: Cursor) -> A.Node:
    p.i += 1
    p.accept("candle")
    inner = p.primary()
    return A.Lag(inner.expr, inner.n + 1) if isinstance(inner, A.Lag) else A.Lag(inner, 1)


def its_indicator(p: Cursor) -> A.Node:
    if not p.subjects or isinstance(p.subjects[-1], A.Num):
        p.fail("'its' must follow the value it refers to, as in 'volume is above its average'")
    p.i += 1
    period = None
    if p.peek().kind == NUM and not p.peek().pct:
        period = p.take()
        p.accept("candle")
    return indicator(p, period, source=p.subjects[-1])


def day_name(p: Cursor) -> A.Node | None:
    # Only as the value's first word: the words a rule skips ("current", "its") never lead to a day.
    tok = p.peek()
    if tok.kind != WORD:
        return None
    if not p.subjects or p.subjects[-1] != A.Ind("weekday", ()):
        p.fail("a day of the week compares with the day of week, as in 'day of week is Monday'")
    p.i += 1
    return A.Num(float(DAY_NAMES[tok.text]))


# The grammar's order: where two rules share a word, the earlier one is tried first.
_ORDER: tuple[tuple[Words, Primary], ...] = (
    (("of", "previous", "its"), previous_value),
    (("current", "this"), skip_current),
    (("its",), its_previous_average),
    (("its",), skip_its),
    (("candle", "previous"), candle_before),
    (("candle", "range"), candle_range),
    (("gap",), gap_size),
    (("normal", "usual"), normal),
    (("yesterday", "previous", "prior", "last"), previous),
    (("its",), its_indicator),
    (set(DAY_NAMES), day_name),
)


def _table() -> dict[str, tuple[tuple[int, Primary], ...]]:
    table: dict[str, tuple[tuple[int, Primary], ...]] = {}
    for order, (words, rule) in enumerate(_ORDER):
        for word in sorted(words):
            table[word] = (*table.get(word, ()), (order, rule))
    return table


PRIMARIES = _table()
"""A word that starts a value -> its rules (with their place in the grammar's order), tried in order."""
