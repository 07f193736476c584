"""What follows a value: comparisons, crosses, ranges and zones; the comparisons by an amount
(margins, moves, gaps, percentile zones) are the rules of `svc_engine.strategy.grammar.amounts`.

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close is above SMA(50) by at least 2%").condition.op
    '>='
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.amounts import Amounts
from svc_engine.strategy.grammar.tails import NUM_TAILS, TAIL_PARSERS, direction_of
from svc_engine.strategy.grammar.words import (
    AND_WORDS,
    BEAR_WORDS,
    BULL_WORDS,
    DOWN_WORDS,
    UP_WORDS,
    ZONES,
)
from svc_engine.strategy.tokens import COMMA, END, NUM, WORD, Token
from svc_engine.strategy.vocab import COMPARATORS


class Comparisons(Amounts):
    """The tail of a predicate: what a value is compared with, crosses, or does."""

    def tail(self, left: A.Node) -> A.Node:
        negate = self.accept("not")
        if negate and self.peek().kind == NUM and not self.peek().pct and self.peek(1).text != "times":
            return self.held(A.Not(A.Compare("=", left, self.value())))  # "volume is not 0"
        node = self.tail_positive(left)
        node = self.ago(node)
        node = A.Not(node) if negate else node
        return self.held(node)

    def held(self, node: A.Node) -> A.Node:
        """ "... for 3 days in a row", "... for 5 consecutive candles": on each of the last N."""
        k = 1 if self.at("for") else 0
        tok = self.peek(k)
        j = k + 1 + (self.peek(k + 1).text == "consecutive")
        if not (k and tok.kind == NUM and not tok.pct and self.peek(j).text == "candle"):
            return node
        if not isinstance(node, A.Compare | A.Between | A.Within | A.Not):
            return node
        self.i += j + 1
        self.accept("in", "row")
        n = self.positive_int(tok, "the number of candles")
        if n > 1000:
            self.fail("a condition held in a row is at most 1000 candles", tok)
        return A.Held(node, n) if n > 1 else node

    def ago(self, node: A.Node) -> A.Node:
        """ "the 5-day RSI was below 60 three trading days ago": the comparison, N candles back."""
        tok = self.peek()
        if not (
            tok.kind == NUM and not tok.pct and self.peek(1).text == "candle" and self.peek(2).text == "ago"
        ):
            return node
        if not isinstance(node, A.Compare | A.Between):
            self.fail("'N candles ago' after a condition applies to a comparison only", tok)
        n = self.integer("the number of candles ago")
        self.i += 2

        def back(side: A.Node) -> A.Node:
            if isinstance(side, A.Num):
                return side
            return A.Lag(side.expr, side.n + n) if isinstance(side, A.Lag) else A.Lag(side, n)

        if isinstance(node, A.Compare):
            return A.Compare(node.op, back(node.left), back(node.right))
        return A.Between(back(node.expr), back(node.low), back(node.high))

    def tail_positive(self, left: A.Node) -> A.Node:
        """What follows the value: the rules its next word starts (`tails.TAIL_PARSERS`, a number's
        `tails.NUM_TAILS`), tried in order, else a plain comparison."""
        tok = self.peek()
        if tok.text == "back":
            self.i += 1
            tok = self.peek()
        if tok.text == "close" and (left == A.Field("close") or self.at_comparison(1)):
            self.i += 1  # "price closes above ...", "the 2-period RSI closes below 5"
            tok = self.peek()
        if tok.text == "open" and left == A.Field("close") and self.at_comparison(1):
            self.i += 1  # "the stock opens above its previous close": its open
            left = A.Field("open")
            self.subjects[-1] = self.last_subject = left
            tok = self.peek()
        for rule in NUM_TAILS if tok.kind == NUM else TAIL_PARSERS.get(tok.text, ()):
            node = rule(self, left, tok)
            if node is not None:
                return node
        return self.comparison(left)

    def comparison(self, left: A.Node) -> A.Node:
        """ "(stays) above X", "at least X", "> X", "above X by 2%": a comparator and a value."""
        self.accept("stay")
        start = self.i
        op = self.match(COMPARATORS)
        if op is None:
            self.fail("expected a comparison (above, below, crosses above, between, ...)")
        self.accept("or", "equal")
        self.no_second_side(self.raw(self.toks[start], self.toks[self.i - 1]))
        right = self.value()
        if self.at("by") and op in (">", "<"):
            return self.margin(op, left, right)
        if isinstance(right, A.PctOff) and right.pct < 0 and op in (">=", "<="):
            # "at least 3% below SMA(50)" is 3% or more under it: at most SMA(50) x 0.97
            op = "<=" if op == ">=" else ">="
        return A.Compare(op or ">", left, right)

    def multiple(self, left: A.Node) -> A.Node:
        """ "volume is 3 times its average": at least 3 times it ("3 times greater than": above it)."""
        tok = self.peek()
        if tok.value <= 0:
            self.fail("a multiple must be positive", tok)
        self.i += 2
        op = ">="
        if self.at_any({"greater", "higher", "more", "above", "bigger", "larger"}):
            self.i += 1
            op = ">"
        self.no_second_side(self.raw(tok, self.toks[self.i - 1]))
        return A.Compare(op, left, A.Arith("*", A.Num(tok.value), self.value()))

    def std_compare(self, left: A.Node, equal: str) -> A.Node:
        """ "close is (more than / at least) 2 standard deviations below SMA(20)": beyond the band."""
        band = self.std_band(left)
        assert isinstance(band, A.Arith)
        return A.Compare((">" if band.op == "+" else "<") + equal, left, band)

    def directional(self, k: int) -> bool:
        """Whether an above/below word follows at offset `k` (after an optional "back")."""
        k += self.peek(k).text == "back"
        return self.peek(k).text in UP_WORDS | DOWN_WORDS

    def at_points_offset(self) -> bool:
        return self.peek(1).text == "point" and self.peek(2).text in UP_WORDS | DOWN_WORDS

    def at_comparison(self, k: int) -> bool:
        """A comparison word at offset k ("closes below", "closes < 0.2", "closes up 4 days")."""
        from svc_engine.strategy.vocab import COMPARATORS

        return any(self.phrase_at(k, key) for key in COMPARATORS) or self.peek(k).text in (
            "between",
            "up",
            "down",
            "within",
            "cross",
            "back",
        )

    def cross(self, left: A.Node) -> A.Node:
        return self.cross_from(left, self.take())

    def cross_from(self, left: A.Node, verb: Token) -> A.Node:
        self.accept("back")
        if self.at_any(UP_WORDS):
            direction = "above"
        elif self.at_any(DOWN_WORDS):
            direction = "below"
        elif verb.text == "cross":
            # "tenkan crosses kijun": either way.
            self.no_second_side(self.raw(verb, verb))
            right = self.value()
            if self.accept("upside") or self.accept("upwards") or self.accept("up"):
                return A.Cross("above", left, right)  # "crosses the slow one to the upside"
            if self.accept("downside") or self.accept("downwards") or self.accept("down"):
                return A.Cross("below", left, right)
            return A.Cross("either", left, right)
        else:
            self.fail(f"expected 'above' or 'below' after {verb.text!r}")
        self.i += 1
        self.accept("through")
        if self.at_trend_line() or self.at("broken"):
            self.accept("broken")
            self.skip_trend_line()
            return A.TrendEvent("break_up" if direction == "above" else "break_down")
        self.no_second_side(self.raw(verb, self.toks[self.i - 1]))
        right = self.value()
        if self.at("from") and self.peek(1).text in ("below", "above", "under", "over"):
            came = "below" if self.peek(1).text in ("below", "under") else "above"
            if (came == "below") != (direction == "above"):
                self.fail(f"a cross {direction} comes from {'below' if direction == 'above' else 'above'}")
            self.i += 2
        if self.at_any(UP_WORDS | DOWN_WORDS) and self.peek(1).kind == NUM and not self.peek(1).pct:
            # "%K crosses above %D below 20": the cross, where the subject is under 20
            op = ">" if self.take().text in UP_WORDS else "<"
            zone = A.Compare(op, left, A.Num(self.take().value))
            return A.And((A.Cross(direction, left, right), zone))
        return A.Cross(direction, left, right)

    def no_second_side(self, what: str) -> None:
        """Refuse a comparison whose second side is missing ("close is above and ...")."""
        tok = self.peek()
        if tok.kind == END or (tok.text in AND_WORDS | {"or", "then", "after"} and tok.kind in (WORD, COMMA)):
            self.fail(
                f"the comparison {what!r} has no second side: say what it is compared with "
                "(a number, a price or an indicator)"
            )

    def zone(self, left: A.Node) -> A.Node:
        tok = self.take()
        name = left.name if isinstance(left, A.Ind) else ""
        if name not in ZONES:
            self.fail(f"{tok.text!r} applies to RSI, stochastic, Williams %R and CCI", tok)
        low, high = ZONES[name]
        if tok.text == "oversold":
            return A.Compare("<", left, A.Num(low))
        return A.Compare(">", left, A.Num(high))

    def turn(self, left: A.Node) -> A.Node:
        self.i += 1
        left = direction_of(left)
        if self.at_any(BULL_WORDS):
            self.i += 1
            return A.Cross("above", left, A.Num(0.0))
        if self.at_any(BEAR_WORDS):
            self.i += 1
            return A.Cross("below", left, A.Num(0.0))
        self.fail("expected 'positive' or 'negative' after 'turns'")
        raise AssertionError


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
