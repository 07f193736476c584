"""The grammar table of a predicate's tail: the word after a value -> the parse rules it can start.

`TAIL_PARSERS` maps a word (the token's folded text) to its rules, in the order the grammar tries
them; `NUM_TAILS` holds the rules a number starts ("volume is 3 times its average"). A rule takes
the parser, the value and the word, and returns the predicate, or None when its look-ahead does
not fit, and the next rule is tried; when none fits, the tail is a plain comparison
(`comparisons.comparison`). One look-up replaces a chain of tests on the word, as sqlglot's
parser keeps its ``RANGE_PARSERS`` (a token type -> its parse function).

Example:
    >>> [rule.__name__ for rule in TAIL_PARSERS["touch"]]
    ['touch_extreme', 'touch_level']
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("RSI(14) is oversold").condition.op
    '<'
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar import comparisons, events  # their zone and streak: rules of that name here
from svc_engine.strategy.grammar.amounts import gap, move, percentile_zone
from svc_engine.strategy.grammar.comparisons import (
    cross,
    cross_from,
    direction_of,
    multiple,
    std_compare,
    turn,
)
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.events import new_extreme, trend_return
from svc_engine.strategy.grammar.indicators import RELATIVE_STRENGTH, RS_WORDS
from svc_engine.strategy.grammar.lookahead import at_points_offset, at_std_band, directional, no_second_side
from svc_engine.strategy.grammar.values import number_primary, value
from svc_engine.strategy.grammar.words import BEAR_WORDS, BULL_WORDS, DOWN_WORDS, PERIOD_WORDS, UP_WORDS
from svc_engine.strategy.tokens import NUM, WORD, Token
from svc_engine.strategy.vocab import DAY_NAMES

Rule = Callable[[Cursor, A.Node, Token], A.Node | None]
CALENDAR = (A.Ind("hour", ()), A.Ind("weekday", ()))


def moves_across(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "RSI moves below 10", "price goes above the band": it crosses."""
    if not directional(p, 1):
        return None
    return cross_from(p, left, p.take())


def in_percentile(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "in the bottom 5% of the last 100 closes"."""
    if p.peek(1).text in ("bottom", "top", "lowest", "highest") and p.peek(2).pct:
        return percentile_zone(p, left)
    return None


def reaches(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "the z-score reaches 0": it gets there from either side."""
    p.i += 1
    no_second_side(p, "reaches")
    return A.Cross("either", left, value(p))


def spikes(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "volume spikes to 2 times its average"."""
    p.i += 1
    p.accept("to")
    if not (p.peek().kind == NUM and p.peek(1).text in ("times", "x")):
        p.fail("say how far it spikes, as in 'volume spikes to 3 times its average'")
    return multiple(p, left)


def up_days(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "the market closes up 4 days in a row": a streak."""
    ahead = p.peek(2) if p.peek(1).text == "for" else p.peek(1)
    if not (ahead.kind == NUM and not ahead.pct):
        return None
    word = p.take()
    p.toks[p.i - 1] = Token(WORD, "rise" if word.text == "up" else "fall", word.pos, word.end)
    p.i -= 1
    return events.streak(p, left)


def relative_strength(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    p.fail(RELATIVE_STRENGTH, tok, suggestion="")  # "the coin outperforms BTC"
    raise AssertionError


def zone(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    return comparisons.zone(p, left)


def sign(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "the MACD histogram is positive"."""
    p.i += 1
    return A.Compare(">" if tok.text == "positive" else "<", direction_of(left), A.Num(0.0))


def pointed(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "the upper band is pointed up": it rose on this candle."""
    if not directional(p, 1):
        return None
    up = p.peek(1).text in UP_WORDS
    p.i += 2
    return A.Streak("rise" if up else "fall", 1, left)


def calendar_value(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "hour is 14", "day of week is Friday"."""
    if left in CALENDAR and (tok.kind == NUM or tok.text in DAY_NAMES):
        return A.Compare("=", left, value(p))
    return None


def supertrend_side(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "Supertrend is bullish": its direction is up."""
    if isinstance(left, A.Ind) and left.name == "supertrend" and p.at_any(BULL_WORDS | BEAR_WORDS):
        op = ">" if p.take().text in BULL_WORDS else "<"
        return A.Compare(op, direction_of(left), A.Num(0.0))
    return None


def fills_gap(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "price fills the gap": it trades back to the previous close."""
    if p.peek(1).text != "gap":
        return None
    p.i += 2
    return A.Compare("<=", A.Field("low"), A.Lag(A.Field("close"), 1))


def pulls_back(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "price pulls back to the 20 EMA": its low reaches it."""
    if not p.at("pull", "back"):
        return None
    p.i += 2
    level = value(p)
    return A.Compare("<=", A.Field("low"), level)


def touch_extreme(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "the low touches EMA(20)": it reaches the level."""
    if left not in (A.Field("low"), A.Field("high")):
        return None
    p.i += 1
    level = value(p)
    return A.Compare("<=" if left == A.Field("low") else ">=", left, level)


def at_its_extreme(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "BandWidth is at its lowest in 125 days": a new 125-candle low."""
    if not (p.at("at", "its") and p.peek(2).text in ("lowest", "highest")):
        return None
    kind = "low" if p.peek(2).text == "lowest" else "high"
    p.i += 3
    p.accept("in") or p.accept("of") or p.accept("for")
    while p.peek().text in PERIOD_WORDS:
        p.i += 1
    n = p.integer("the number of candles")
    p.expect("candle", "'candles' after the number")
    return A.NewExtreme(kind, n, left)


def touch_level(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "price touches the lower Bollinger band": its range spans the level."""
    p.i += 1
    level = value(p)
    if left != A.Field("close"):
        p.fail("only price touches a level, as in 'price touches the lower Bollinger band'", tok)
    return A.And((A.Compare("<=", A.Field("low"), level), A.Compare(">=", A.Field("high"), level)))


def breaks_out(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "price breaks out to a new 50-day high"."""
    if not (p.peek(1).text == "out" and p.peek(2).text == "new"):
        return None
    p.i += 2
    return new_high(p, left, p.peek())


def crosses(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "crosses (above)", "breaks below", "rises above": a cross."""
    if tok.text in ("cross", "break") or directional(p, 1):
        return cross(p, left)
    return None


def turns(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    return turn(p, left)


def pct_next(p: Cursor) -> bool:
    """A percentage after the word and an optional "by", "at least", "more", "over"."""
    k = 1
    while p.peek(k).text in ("by", "at", "least", "more", "over"):
        k += 1
    return p.peek(k).kind == NUM and p.peek(k).pct


def moves_by(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "price rises 2% in one candle", "close is up 5% over the last 24 candles"."""
    return move(p, left) if pct_next(p) else None


def streak(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    return events.streak(p, left)


def std_band(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "close is 2 standard deviations below its average"."""
    return std_compare(p, left, "") if at_std_band(p) else None


def more_std(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    if not at_std_band(p, 1):
        return None
    p.i += 1
    return std_compare(p, left, "")


def least_std(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    if not (p.at("at", "least") and at_std_band(p, 2)):
        return None
    p.i += 2
    return std_compare(p, left, "=")


def times(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "volume is 3 times its average" ("2 times 3" is a number)."""
    if (
        not tok.pct
        and p.peek(1).text in ("times", "x")
        and (p.peek(2).kind != NUM or p.peek(3).text == "candle")
    ):
        return multiple(p, left)
    return None


def gaps(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    return gap(p, left)


def new_high(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "makes a new 20-candle high"."""
    p.accept("make")
    p.expect("new", "'new' (as in 'makes a new 20-candle high')")
    n, kind = new_extreme(p)
    return A.NewExtreme(kind, n, left)


def returns(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    return trend_return(p, left)


def between(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    p.i += 1
    no_second_side(p, "between")
    low = value(p)
    p.expect("and", "'and' in 'between X and Y'")
    no_second_side(p, p.raw(tok, p.toks[p.i - 1]))
    return A.Between(left, low, value(p))


def within(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    p.i += 1
    pct = p.number("a percentage after 'within'")
    if not pct.pct:
        p.fail("'within' needs a percentage, as in 'within 2% of SMA(100)'", pct)
    p.accept("of")
    return A.Within(left, pct.value, value(p))


def pct_off(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "close is 2% above SMA(20)"."""
    if not (tok.pct and p.peek(1).text in UP_WORDS | DOWN_WORDS):
        return None
    right = number_primary(p)
    assert isinstance(right, A.PctOff)
    return A.Compare(">" if right.pct > 0 else "<", left, right)


def points_off(p: Cursor, left: A.Node, tok: Token) -> A.Node | None:
    """ "close is 50 points above SMA(20)"."""
    if not (not tok.pct and p.peek(1).text == "point" and at_points_offset(p)):
        return None
    right = number_primary(p)
    assert isinstance(right, A.Arith)
    return A.Compare(">" if right.op == "+" else "<", left, right)


# The grammar's order: where two rules share a word, the earlier one is tried first.
Words = tuple[str, ...] | frozenset[str] | set[str]
_RULES: tuple[tuple[Words, Rule], ...] = (
    (("move", "turn"), moves_across),
    (("in",), in_percentile),
    (("reach",), reaches),
    (("spike",), spikes),
    (("up", "down"), up_days),
    (RS_WORDS, relative_strength),
    (("oversold", "overbought"), zone),
    (("positive", "negative"), sign),
    (("pointed", "pointing", "sloping", "slope", "heading", "angled"), pointed),
    (frozenset(DAY_NAMES), calendar_value),
    (BULL_WORDS | BEAR_WORDS, supertrend_side),
    (("fill",), fills_gap),
    (("pull",), pulls_back),
    (("touch",), touch_extreme),
    (("at",), at_its_extreme),
    (("touch",), touch_level),
    (("break",), breaks_out),
    (("cross", "break", "rise", "fall"), crosses),
    (("turn",), turns),
    (("rise", "fall", "up", "down"), moves_by),
    (("rise", "fall"), streak),
    (("more", "over"), more_std),
    (("at",), least_std),
    (("gap",), gaps),
    (("make", "new"), new_high),
    (("return",), returns),
    (("between",), between),
    (("within",), within),
)


def _table(rules: tuple[tuple[Words, Rule], ...]) -> dict[str, tuple[Rule, ...]]:
    table: dict[str, tuple[Rule, ...]] = {}
    for words, rule in rules:
        for word in sorted(words):
            table[word] = (*table.get(word, ()), rule)
    return table


TAIL_PARSERS: dict[str, tuple[Rule, ...]] = _table(_RULES)
"""A word after a value -> its rules, tried in order."""
NUM_TAILS: tuple[Rule, ...] = (calendar_value, std_band, times, pct_off, points_off)
"""The rules a number after a value starts, tried in order."""
