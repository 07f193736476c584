"""Conditions: ``or`` < ``and``/``while``/``with``/``,`` < ``not`` < ``after``/``then`` < predicate,
parentheses at any depth, and a predicate put on another timeframe ("on the 4h chart ...").

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("RSI(14) drops below 30 and then crosses back above 30").condition.window
    10
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_condition
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.grammar.comparisons import resolve_cloud
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.words import (
    AND_WORDS,
    CONNECTIVES,
    ELIDED_STARTS,
    MAX_WINDOW,
    TF_CONDITIONS,
)
from svc_engine.strategy.tokens import COMMA, END, LPAREN, NUM, RPAREN, WORD, Token
from svc_engine.strategy.vocab import THEN_WINDOW


class Conditions(Cursor):
    """The connectives, grouping and sequences of conditions, and the predicate they join."""

    def condition(self) -> A.Node:
        self.accept("either")
        items = [self.conjunction()]
        while not self.at_time_exit(1) and self.accept("or"):
            if self.peek().kind == END:
                self.fail("expected a condition after 'or'")
            self.accept("either")
            items.append(self.conjunction())
        return items[0] if len(items) == 1 else A.Or(flatten(A.Or, items))

    def conjunction(self) -> A.Node:
        self.accept("both")
        items = [self.negation()]
        while True:
            save = self.i
            if not self.separator() or self.at_entry_clause():
                self.i = save
                break
            if self.peek().kind == END:
                self.fail(f"expected a condition after {self.toks[self.i - 1].text!r}")
            if self.at("then") and not self.at_entry_clause_after(1):
                self.i += 1
                window = self.then_window()
                items[-1] = A.After(self.negation(), items[-1], window)
                continue
            items.append(self.negation())
        return items[0] if len(items) == 1 else A.And(flatten(A.And, items))

    def separator(self) -> bool:
        """One joining word, optionally after a comma (", and"); "and also" is one too. A second
        connective is refused by `predicate` ("and and", "and or")."""
        found = False
        if self.peek().kind == COMMA:
            self.i += 1
            found = True
        if self.peek().text in AND_WORDS and self.peek().kind == WORD:
            self.i += 1
            found = True
            if self.toks[self.i - 1].text in ("and", "but") and self.at("also"):
                self.i += 1
        return found

    def negation(self) -> A.Node:
        if self.accept("not"):
            return A.Not(self.negation())
        return self.after()

    def after(self) -> A.Node:
        cond = self.atom()
        window = self.after_window()
        if window is not None:
            return A.After(cond, self.atom(), window)
        if self.at("then") and not self.at_entry_clause_after(1):
            self.i += 1
            window = self.then_window()
            return A.After(self.atom(), cond, window)
        return cond

    def after_window(self) -> int | None:
        """ "after" (THEN_WINDOW), "right/immediately after" (1), "within N candles after" (N)."""
        if self.accept("after"):
            return THEN_WINDOW
        if self.at("right", "after") or self.at("immediately", "after") or self.at("just", "after"):
            self.i += 2
            return 1
        if (
            self.at("within")
            and self.peek(1).kind == NUM
            and self.peek(2).text == "candle"
            and self.peek(3).text == "after"
        ):
            self.i += 1
            n = self.integer("the number of candles of 'within ... after'")
            if n > MAX_WINDOW:
                self.fail(f"the window of 'after' is at most {MAX_WINDOW} candles", self.toks[self.i - 1])
            self.i += 2
            return n
        return None

    def then_window(self) -> int:
        """ "then X" (THEN_WINDOW), "then within N candles X", "then right away / on the next candle X"."""
        if self.at("within") and self.peek(1).kind == NUM and self.peek(2).text == "candle":
            self.i += 1
            n = self.integer("the number of candles of 'then within'")
            if n > MAX_WINDOW:
                self.fail(f"the window of 'then' must be at most {MAX_WINDOW} candles", self.toks[self.i - 1])
            self.i += 1
            return n
        if self.accept("on", "next", "candle") or self.accept("immediately") or self.accept("right", "away"):
            return 1
        return THEN_WINDOW

    def atom(self) -> A.Node:
        if self.peek().kind == LPAREN:
            save, subject = self.i, self.last_subject
            self.i += 1
            try:
                inner = self.condition()
                if self.peek().kind == RPAREN:
                    self.i += 1
                    return inner
            except StrategyCompileError:
                pass
            else:
                if self.peek().kind == END:
                    self.fail(f"missing ')' to close the '(' at position {self.toks[save].pos}")
            self.i, self.last_subject = save, subject  # a value such as "(high + low) / 2 above ..."
        return self.predicate()

    def predicate(self) -> A.Node:
        start = self.peek()
        if start.kind in (WORD, COMMA) and start.text in CONNECTIVES | {","}:
            self.dangling(start)
        chart = self.chart_phrase()
        node = self.subjectless()
        if node is None:
            # "RSI(14) is above 30 and below 70": a predicate without a subject reuses the last one.
            elided = self.last_subject is not None and self.peek().text in ELIDED_STARTS
            left = self.last_subject if elided else self.value()
            assert left is not None
            self.last_subject = left
            self.subjects.append(left)
            try:
                node = self.tail(left)
            finally:
                self.subjects.pop()
        node = resolve_cloud(node)
        for verb in ("occurs", "occur", "happens", "appears"):
            self.accept(verb)  # "a death cross occurs"
        if self.implicit_and(node):
            # "at the session open price gaps up", "on Friday the candle is green": a time, then a condition
            self.accept("if") or self.accept("when")
            node = A.And((node, self.predicate()))
        elif self.at("on", "volume"):
            self.i += 1  # "price gaps up on volume that is 2 times its 50-day average"
            node = A.And((node, self.predicate()))
        elif self.at("on") and self.calendar_at(1):
            day = self.calendar()  # "... 1% in the last 2 days on Friday"
            assert day is not None  # calendar_at(1) found one
            node = A.And((node, day))
        chart = chart or self.chart_phrase()
        node = self.on_timeframe(node, chart, start)
        self.check_speeds(node)
        check_condition(node, self.text, start, self.toks[self.i - 1].end)
        return node

    def implicit_and(self, node: A.Node) -> bool:
        """A place in time said before a condition without 'and' ("at the session open price gaps up")."""
        timely = isinstance(node, A.DayStart | A.DayEnd) or (
            isinstance(node, A.Compare) and node.left in (A.Ind("weekday", ()), A.Ind("hour", ()))
        )
        nxt = self.peek()
        if not timely or nxt.kind in (END, RPAREN, COMMA) or nxt.text in CONNECTIVES | {"for", "not"}:
            return False
        return nxt.kind in (WORD, NUM)

    def calendar_at(self, k: int) -> bool:
        """A day name or weekend word at offset k ("... on Friday")."""
        from svc_engine.strategy.vocab import DAY_NAMES

        return self.peek(k).text in DAY_NAMES or self.peek(k).text in ("weekend", "weekday")

    def dangling(self, tok: Token) -> None:
        """A connective where a condition should be: at the start, or right after another one."""
        before = self.toks[self.i - 1] if self.i > 0 else None
        if before is None or before.pos < 0:
            self.fail(f"the condition starts with {tok.text!r}, which joins two conditions: remove it", tok)
        if before.text in CONNECTIVES | {","}:
            pair = self.text[before.pos : tok.end]
            self.fail(f"doubled connective {pair!r}: there is no condition between them, remove one", tok)
        self.fail(f"expected a condition before {tok.text!r}", tok)

    def at_time_exit(self, k: int = 0) -> bool:
        """ "after N candles" at offset k (a holding time in an exit rule)."""
        after = self.peek(k).text == "after"
        return after and self.peek(k + 1).kind == NUM and self.peek(k + 2).text == "candle"

    def chart_phrase(self) -> str | None:
        """ "on the 4h chart", "on the daily timeframe", "on 1h candles": the timeframe it names."""
        k = 1 if self.at("on") or self.at("in") else 0
        tf = self.timeframe_at(k)
        if k and tf is not None and self.peek(k + tf[1]).text in ("chart", "timeframe", "candle"):
            self.i += k + tf[1] + 1
            return tf[0]
        return None

    def on_timeframe(self, node: A.Node, chart: str | None, start: Token) -> A.Node:
        """Put a comparison on one timeframe: the chart named for it, else the one a side names
        ("the daily close is above the 50-day SMA" compares two daily values)."""
        if not isinstance(node, TF_CONDITIONS):
            if chart is None:
                return node
            if isinstance(node, A.TrendEvent | A.DayEnd):
                self.fail("trend lines and day ends are not taken on another timeframe", start)
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


def flatten(kind: type[A.And] | type[A.Or], items: list[A.Node]) -> tuple[A.Node, ...]:
    """`(a and b) and c` is `a and b and c`: one flat list per operator keeps the tree canonical."""
    out: list[A.Node] = []
    for item in items:
        out.extend(item.items if isinstance(item, kind) else (item,))
    return tuple(out)
