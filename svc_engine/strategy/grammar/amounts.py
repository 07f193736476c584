"""Comparisons by an amount, the rules `Comparisons` inherits: a margin ("close is above SMA(50)
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
from svc_engine.strategy.grammar.words import DOWN_WORDS, PERIOD_WORDS, UP_WORDS
from svc_engine.strategy.tokens import NUM, Token


class Amounts(Cursor):
    """The tail rules of a comparison by an amount: margins, moves, gaps and percentile zones."""

    def margin(self, op: str, left: A.Node, right: A.Node) -> A.Node:
        """ "close is above SMA(50) by at least 2%" (or "by more than 50 points")."""
        by = self.take()
        strict = False
        if self.accept("at", "least"):
            strict = False
        elif self.accept("more") or self.accept("over"):
            strict = True
        tok = self.number("a margin after 'by' (a percentage or a number of points)")
        if tok.value <= 0:
            self.fail("a margin must be positive", tok)
        up = op == ">"
        if tok.pct:
            level: A.Node = A.PctOff(tok.value if up else -tok.value, right)
        else:
            self.accept("point")
            level = A.Arith("+" if up else "-", right, A.Num(tok.value))
        del by
        return A.Compare((">" if up else "<") + ("" if strict else "="), left, level)

    def move(self, left: A.Node) -> A.Node:
        """ "price rises 2% in one candle", "drops by 5% in the last 3 candles": the close's change
        over N candles (ROC, in percent), at least X up (down)."""
        verb = self.take()
        self.accept("by")
        self.accept("at", "least") or self.accept("more") or self.accept("over")
        tok = self.number("a percentage")
        if tok.value <= 0:
            self.fail("a move must be a positive percentage; 'rises' or 'drops' gives its direction", tok)
        n = 1
        if self.at("in") or self.at("over") or self.at("within"):
            k = 1
            while self.peek(k).text in PERIOD_WORDS or self.peek(k).text == "single":
                k += 1
            if self.time_span_at(1) is not None:
                self.i += 1
                return self.timed_move(verb, tok, left, self.time_span())
            if self.peek(k).kind == NUM and self.peek(k + 1).text == "candle":
                self.i += k
                n = self.integer("the number of candles of the move")
                self.i += 1
            elif self.peek(k).text == "candle":
                self.i += k + 1  # "in a single candle"
        roc = check_indicator(
            "roc",
            [Token(NUM, str(n), tok.pos, tok.end, value=float(n))],
            "",
            left,
            self.text,
            verb,
            self.toks[self.i - 1].end,
        )
        if verb.text in ("rise", "up"):
            return A.Compare(">=", roc, A.Num(tok.value))
        return A.Compare("<=", roc, A.Num(-tok.value))

    def timed_move(self, verb: Token, pct: Token, left: A.Node, minutes: int) -> A.Node:
        """ "fell 3% in 4 hours": the percent change over that span of time (`roct`)."""
        minute_tok = Token(NUM, str(minutes), pct.pos, pct.end, value=float(minutes))
        roc = check_indicator("roct", [minute_tok], "", left, self.text, verb, self.toks[self.i - 1].end)
        if verb.text in ("rise", "up"):
            return A.Compare(">=", roc, A.Num(pct.value))
        return A.Compare("<=", roc, A.Num(-pct.value))

    def gap(self, left: A.Node) -> A.Node:
        """ "price gaps up (by 1%)": the open above the previous close (by at least 1%)."""
        tok = self.take()
        if left not in (A.Field("close"), A.Field("open")):
            self.fail("only price gaps, as in 'price gaps up by 1%'", tok)
        if self.at_any(UP_WORDS):
            up = True
        elif self.at_any(DOWN_WORDS):
            up = False
        else:
            self.fail("expected 'up' or 'down' after 'gaps'")
        self.i += 1
        self.accept("by") or self.accept("of")
        for word in ("at", "least", "more", "over", "larger", "bigger", "greater"):
            self.accept(word)  # "a gap up larger than 1%", "gaps up by at least 1%"
        previous = A.Lag(A.Field("close"), 1)
        if self.peek().kind == NUM and self.peek().pct:
            pct = self.take()
            if pct.value <= 0:
                self.fail("a gap must be a positive percentage", pct)
            level = A.PctOff(pct.value if up else -pct.value, previous)
            return A.Compare(">=" if up else "<=", A.Field("open"), level)
        return A.Compare(">" if up else "<", A.Field("open"), previous)

    def percentile_zone(self, left: A.Node) -> A.Node:
        """ "the price is in the bottom 5% of the last 100 closes": its percentile rank over 100."""
        self.i += 1
        low = self.take().text in ("bottom", "lowest")
        pct = self.take()
        if not 0 < pct.value < 100:
            self.fail("a share of the closes is between 0% and 100%", pct)
        self.accept("of")
        while self.peek().text in PERIOD_WORDS:
            self.i += 1
        count = self.number("how many candles, as in 'of the last 100 closes'")
        if not self.at_any({"close", "candle", "value"}):
            self.fail("expected 'closes' or 'candles' after the number of candles")
        self.i += 1
        rank = check_indicator("prank", [count], "", left, self.text, count, self.toks[self.i - 1].end)
        if low:
            return A.Compare("<=", rank, A.Num(pct.value))
        return A.Compare(">=", rank, A.Num(100.0 - pct.value))
