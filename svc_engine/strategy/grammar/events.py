"""Conditions that need no value: the day's end, candle patterns and colours, streaks, new highs,
the Ichimoku cloud's colour, the golden and death crosses, trend-line events.

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("3 green candles in a row").condition
    Candles(color='green', n=3)
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_indicator
from svc_engine.strategy.grammar.calendars import calendar_one
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.indicators import parameters
from svc_engine.strategy.grammar.lookahead import at_trend_line, direction_at, skip_trend_line
from svc_engine.strategy.grammar.words import COLORS
from svc_engine.strategy.tokens import END, LPAREN, NUM, RPAREN, WORD
from svc_engine.strategy.vocab import DAY_NAMES, PATTERN_WORDS, PATTERNS, SPECS


def calendar(p: Cursor) -> A.Node | None:
    """ "on Mondays", "on weekends", "at 14:00 UTC", "the candle opens at 14:00", "at the session
    open", "the first candle of the day", "the day opens": the candle's place in the UTC week and
    day (the `weekday` and `hour` values, the `DayStart` event)."""
    if p.at("at", "close") and (p.peek(2).text == "on" or p.peek(2).text in DAY_NAMES):
        p.i += 2  # "buy at the close on Friday": the signal is taken at a close anyway
    node = calendar_one(p)
    if node is None:
        return None
    # "on Friday at 16:00 UTC": one place in the week and the day, said together
    more = calendar_one(p) if p.at("at") or p.at("on") else None
    return node if more is None else A.And((node, more))


def n_candle_move(p: Cursor) -> A.Node | None:
    """ "a two-day decline of more than 1%", "a 3-candle gain of 5%": the close's change over N."""
    tok = p.peek()
    if not (
        tok.kind == NUM
        and not tok.pct
        and p.peek(1).text == "candle"
        and p.peek(2).text in ("rise", "fall", "gain", "loss", "move")
    ):
        return None
    verb = p.peek(2)
    k = 3 + (p.peek(3).text == "of")
    while p.peek(k).text in ("more", "over", "at", "least"):
        k += 1
    pct = p.peek(k)
    if pct.kind != NUM or not pct.pct or verb.text == "move":
        return None
    n = p.positive_int(tok, "the number of candles")
    p.i += k + 1
    roc = check_indicator("roc", [tok], "", None, p.text, tok, pct.end)
    if verb.text in ("rise", "gain"):
        return A.Compare(">=", roc, A.Num(pct.value))
    return A.Compare("<=", roc, A.Num(-pct.value))
    del n


def range_break(p: Cursor) -> A.Node | None:
    """ "a 10 day low" as a whole condition (the Turtles' exit: "exit on a 10 day low"): the close
    beyond the lowest low (highest high) of the previous N candles."""
    tok = p.peek()
    if not (
        tok.kind == NUM and not tok.pct and p.peek(1).text == "candle" and p.peek(2).text in ("high", "low")
    ):
        return None
    after = p.peek(3)
    if not (after.kind == END or after.text in ("for", "or", "and", ",") or after.kind == RPAREN):
        return None
    kind = p.peek(2).text
    p.i += 3
    n = p.positive_int(tok, "the number of candles")
    field = A.Field(kind)
    extreme = A.Lag(A.Ind("min" if kind == "low" else "max", (n,), "", field), 1)
    return A.Compare("<" if kind == "low" else ">", A.Field("close"), extreme)


def pattern(p: Cursor) -> A.Node | None:
    """ "a bullish engulfing (candle / pattern)", "hammer", "three white soldiers", "doji"."""
    lead = 0  # "the (current) candle is a hammer"
    while p.peek(lead).text in ("this", "current") or (p.peek(lead).text == "candle" and lead < 2):
        lead += 1
    start = p.peek(lead)
    k = lead + (1 if start.text in ("bullish", "bearish") else 0)
    words = []
    j = k
    while p.peek(j).kind in (WORD, NUM) and j - k < 3:
        tok = p.peek(j)
        words.append("three" if tok.kind == NUM and tok.value == 3 and not tok.pct else tok.text)
        j += 1
    name = next((PATTERN_WORDS[w] for n in (3, 2, 1) if (w := tuple(words[:n])) in PATTERN_WORDS), None)
    if name is None:
        return None
    spec = PATTERNS[name]
    side = start.text if k > lead else ""
    p.i += k + len(name.split())
    p.accept("pattern") or p.accept("candle")
    for verb in ("appears", "forms", "occurs", "prints", "shows"):
        p.accept(verb)
    if side and side not in spec.sides:
        if spec.sides == ("",):
            p.fail(f"a {name} pattern is neither bullish nor bearish: say '{name} pattern'", start)
        p.fail(f"a {name} pattern is {spec.sides[0]} only (TA-Lib's definition)", start)
    if not side and "" not in spec.sides:
        if len(spec.sides) > 1:
            p.fail(f"say 'bullish {name}' or 'bearish {name}'", start)
        side = ""
    return A.Pattern(name, side)


def cloud_color(p: Cursor) -> A.Node | None:
    """ "the (Ichimoku) cloud is green": span A above span B (red: below)."""
    k = 1 if p.at("ichimoku") else 0
    if p.peek(k).text not in ("cloud", "kumo"):
        return None
    j = k + 1
    params: tuple[float, ...] = SPECS["ichimoku"].defaults()
    if p.peek(j).kind == LPAREN:
        save = p.i
        p.i += j
        toks = parameters(p, None)
        node = check_indicator("ichimoku", toks, "senkou a", None, p.text, p.toks[save], p.toks[p.i - 1].end)
        params, j, p.i = node.params, p.i - save, save
    if p.peek(j).text not in COLORS:
        return None
    green = COLORS[p.peek(j).text] == "green"
    p.i += j + 1
    span_a, span_b = A.Ind("ichimoku", params, "senkou a"), A.Ind("ichimoku", params, "senkou b")
    return A.Compare(">" if green else "<", span_a, span_b)


def candle_color(p: Cursor) -> A.Node | None:
    """ "the previous candle is red", "the candle is green" -> close vs open."""
    k = 1 if p.peek().text in ("previous", "prior", "current", "this", "last") else 0
    if p.peek(k).text != "candle" or p.peek(k + 1).text not in COLORS:
        return None
    lag = p.peek().text in ("previous", "prior", "last")
    color = COLORS[p.peek(k + 1).text]
    p.i += k + 2
    close: A.Node = A.Field("close")
    open_: A.Node = A.Field("open")
    if lag:
        close, open_ = A.Lag(close, 1), A.Lag(open_, 1)
    return A.Compare(">" if color == "green" else "<", close, open_)


def new_extreme(p: Cursor) -> tuple[int, str]:
    n = 20
    if p.peek().kind == NUM:
        n = p.integer("the number of candles")
        p.accept("candle")
    word = p.peek()
    if word.text not in ("high", "low"):
        p.fail("expected 'high' or 'low' after 'new'")
    p.i += 1
    return n, word.text


#: The line a trend-line break names: "resistance breaks" is a break up, "support breaks" down.
TREND_SIDES = {"resistance": "up", "support": "down"}


def trend_break(p: Cursor) -> A.Node:
    side = TREND_SIDES.get(p.peek().text)
    if side is not None:
        p.i += 1
    if at_trend_line(p):
        skip_trend_line(p)
    p.expect("break", "'breaks' after 'trend line'")
    return trend_direction(p, "break", side)


def trend_direction(p: Cursor, event: str, default: str | None) -> A.Node:
    way = direction_at(p)
    if way is not None:
        p.i += 1
        return A.TrendEvent(f"{event}_{'up' if way == 'above' else 'down'}")
    return A.TrendEvent(f"{event}_{default}" if default else event)


def trend_return(p: Cursor, left: A.Node) -> A.Node:
    tok = p.take()
    if left != A.Field("close"):
        p.fail("only price returns to a broken trend line", tok)
    p.accept("to")
    p.accept("broken")
    if at_trend_line(p):
        skip_trend_line(p)
        if p.accept("broken"):
            return trend_direction(p, "return", None)
        return A.TrendEvent("return")
    p.fail("expected 'the broken trend line' after 'returns to'")
    raise AssertionError


def streak(p: Cursor, left: A.Node) -> A.Node:
    verb = p.take()
    p.accept("for")
    nxt = p.peek()
    if nxt.kind in (END, RPAREN) or nxt.text in ("and", "or", ",", "while", "with", "then", "but"):
        return A.Streak(verb.text, 1, left)  # "TEMA(9) is rising": it rose on this candle
    tok = p.number(f"how many candles after {verb.text!r}")
    p.accept("consecutive")
    p.accept("candle")
    p.accept("in", "row")
    return A.Streak(verb.text, p.positive_int(tok, "the number of candles"), left)
