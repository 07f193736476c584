"""A predicate: a subjectless event (`starts.subjectless`) or a value and its tail, the rules the
tail's first word starts (`tails.TAIL_PARSERS`, a number's `tails.NUM_TAILS`), else a plain
comparison; then "for N candles in a row", "N candles ago", a time or a volume clause said after
it, and the chart it is read on ("on the 4h chart ...").

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close above SMA(20) for 3 candles in a row").condition.n
    3
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_condition
from svc_engine.strategy.grammar.comparisons import comparison, resolve_cloud
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.events import calendar
from svc_engine.strategy.grammar.indicators import check_speeds
from svc_engine.strategy.grammar.lookahead import at_comparison, calendar_at, dangling, timeframe_at
from svc_engine.strategy.grammar.starts import subjectless
from svc_engine.strategy.grammar.tails import NUM_TAILS, TAIL_PARSERS
from svc_engine.strategy.grammar.values import value
from svc_engine.strategy.grammar.words import CONNECTIVES, ELIDED_STARTS, TF_CONDITIONS
from svc_engine.strategy.tokens import COMMA, END, NUM, RPAREN, WORD, Token


def predicate(p: Cursor) -> A.Node:
    start = p.peek()
    if start.kind in (WORD, COMMA) and start.text in CONNECTIVES | {","}:
        dangling(p, start)
    chart = chart_phrase(p)
    node = subjectless(p)
    if node is None:
        # "RSI(14) is above 30 and below 70": a predicate without a subject reuses the last one.
        elided = p.last_subject is not None and p.peek().text in ELIDED_STARTS
        left = p.last_subject if elided else value(p)
        assert left is not None
        p.last_subject = left
        p.subjects.append(left)
        try:
            node = tail(p, left)
        finally:
            p.subjects.pop()
    node = resolve_cloud(node)
    for verb in ("occurs", "occur", "happens", "appears"):
        p.accept(verb)  # "a death cross occurs"
    if implicit_and(p, node):
        # "at the session open price gaps up", "on Friday the candle is green": a time, then a condition
        p.accept("if") or p.accept("when")
        node = A.And((node, predicate(p)))
    elif p.at("on", "volume"):
        p.i += 1  # "price gaps up on volume that is 2 times its 50-day average"
        node = A.And((node, predicate(p)))
    elif p.at("on") and calendar_at(p, 1):
        day = calendar(p)  # "... 1% in the last 2 days on Friday"
        assert day is not None  # calendar_at(1) found one
        node = A.And((node, day))
    chart = chart or chart_phrase(p)
    node = on_timeframe(p, node, chart, start)
    check_speeds(p, node)
    check_condition(node, p.text, start, p.toks[p.i - 1].end)
    return node


def implicit_and(p: Cursor, node: A.Node) -> bool:
    """A place in time said before a condition without 'and' ("at the session open price gaps up")."""
    timely = isinstance(node, A.DayStart | A.DayEnd) or (
        isinstance(node, A.Compare) and node.left in (A.Ind("weekday", ()), A.Ind("hour", ()))
    )
    nxt = p.peek()
    if not timely or nxt.kind in (END, RPAREN, COMMA) or nxt.text in CONNECTIVES | {"for", "not"}:
        return False
    return nxt.kind in (WORD, NUM)


def chart_phrase(p: Cursor) -> str | None:
    """ "on the 4h chart", "on the daily timeframe", "on 1h candles": the timeframe it names."""
    k = 1 if p.at("on") or p.at("in") else 0
    tf = timeframe_at(p, k)
    if k and tf is not None and p.peek(k + tf[1]).text in ("chart", "timeframe", "candle"):
        p.i += k + tf[1] + 1
        return tf[0]
    return None


def on_timeframe(p: Cursor, node: A.Node, chart: str | None, start: Token) -> A.Node:
    """Put a comparison on one timeframe: the chart named for it, else the one a side names
    ("the daily close is above the 50-day SMA" compares two daily values)."""
    if not isinstance(node, TF_CONDITIONS):
        if chart is None:
            return node
        if isinstance(node, A.TrendEvent | A.DayEnd):
            p.fail("trend lines and day ends are not taken on another timeframe", start)
        return A.TfCond(node, chart)  # "on the daily chart 3 green candles in a row"
    subject = node.expr if isinstance(node, A.Between | A.Within) else node.left
    if chart is None and not isinstance(subject, A.Tf):
        return node  # "close is above the daily SMA(50)": the close stays on the chart's candles
    tf = chart if chart is not None else subject.timeframe  # type: ignore[attr-defined]  # a Tf here

    def put(side: A.Node) -> A.Node:
        return side if isinstance(side, A.Num | A.Tf) else A.Tf(side, tf)

    if isinstance(node, A.Compare):
        return A.Compare(node.op, put(node.left), put(node.right))
    if isinstance(node, A.Cross):
        return A.Cross(node.direction, put(node.left), put(node.right))
    if isinstance(node, A.Between):
        return A.Between(put(node.expr), put(node.low), put(node.high))
    assert isinstance(node, A.Within)
    return A.Within(put(node.expr), node.pct, put(node.ref))


def tail(p: Cursor, left: A.Node) -> A.Node:
    negate = p.accept("not")
    if negate and p.peek().kind == NUM and not p.peek().pct and p.peek(1).text != "times":
        return held(p, A.Not(A.Compare("=", left, value(p))))  # "volume is not 0"
    node = tail_positive(p, left)
    node = ago(p, node)
    node = A.Not(node) if negate else node
    return held(p, node)


def held(p: Cursor, node: A.Node) -> A.Node:
    """ "... for 3 days in a row", "... for 5 consecutive candles": on each of the last N."""
    k = 1 if p.at("for") else 0
    tok = p.peek(k)
    j = k + 1 + (p.peek(k + 1).text == "consecutive")
    if not (k and tok.kind == NUM and not tok.pct and p.peek(j).text == "candle"):
        return node
    if not isinstance(node, A.Compare | A.Between | A.Within | A.Not):
        return node
    p.i += j + 1
    p.accept("in", "row")
    n = p.positive_int(tok, "the number of candles")
    if n > 1000:
        p.fail("a condition held in a row is at most 1000 candles", tok)
    return A.Held(node, n) if n > 1 else node


def ago(p: Cursor, node: A.Node) -> A.Node:
    """ "the 5-day RSI was below 60 three trading days ago": the comparison, N candles back."""
    tok = p.peek()
    if not (tok.kind == NUM and not tok.pct and p.peek(1).text == "candle" and p.peek(2).text == "ago"):
        return node
    if not isinstance(node, A.Compare | A.Between):
        p.fail("'N candles ago' after a condition applies to a comparison only", tok)
    n = p.integer("the number of candles ago")
    p.i += 2

    def back(side: A.Node) -> A.Node:
        if isinstance(side, A.Num):
            return side
        return A.Lag(side.expr, side.n + n) if isinstance(side, A.Lag) else A.Lag(side, n)

    if isinstance(node, A.Compare):
        return A.Compare(node.op, back(node.left), back(node.right))
    return A.Between(back(node.expr), back(node.low), back(node.high))


def back(p: Cursor, left: A.Node) -> A.Node:
    p.i += 1  # "crosses back above 30"
    return left


def closes(p: Cursor, left: A.Node) -> A.Node:
    if left == A.Field("close") or at_comparison(p, 1):
        p.i += 1  # "price closes above ...", "the 2-period RSI closes below 5"
    return left


def opens(p: Cursor, left: A.Node) -> A.Node:
    if left == A.Field("close") and at_comparison(p, 1):
        p.i += 1  # "the stock opens above its previous close": its open
        left = A.Field("open")
        p.subjects[-1] = p.last_subject = left
    return left


TAIL_LEADS: dict[str, Callable[[Cursor, A.Node], A.Node]] = {"back": back, "close": closes, "open": opens}
"""The words a tail may open with, in the order they may follow each other ("closes back above"
is not: "back" comes first), each with the rule that reads it and returns the subject."""


def tail_positive(p: Cursor, left: A.Node) -> A.Node:
    """What follows the value: its leading words (`TAIL_LEADS`), then the rules its next word
    starts (`tails.TAIL_PARSERS`, a number's `tails.NUM_TAILS`), tried in order, else a plain
    comparison."""
    for word, lead in TAIL_LEADS.items():
        if p.peek().text == word:
            left = lead(p, left)
    tok = p.peek()
    for rule in NUM_TAILS if tok.kind == NUM else TAIL_PARSERS.get(tok.text, ()):
        node = rule(p, left, tok)
        if node is not None:
            return node
    return comparison(p, left)
