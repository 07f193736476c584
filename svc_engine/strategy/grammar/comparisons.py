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
from svc_engine.strategy.grammar.indicators import RELATIVE_STRENGTH, RS_WORDS
from svc_engine.strategy.grammar.words import (
    AND_WORDS,
    BEAR_WORDS,
    BULL_WORDS,
    DOWN_WORDS,
    PERIOD_WORDS,
    UP_WORDS,
    ZONES,
)
from svc_engine.strategy.tokens import COMMA, END, NUM, WORD, Token
from svc_engine.strategy.vocab import COMPARATORS, DAY_NAMES

CALENDAR = (A.Ind("hour", ()), A.Ind("weekday", ()))


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
        if tok.text in ("move", "turn") and self.directional(1):
            tok = self.take()  # "RSI moves below 10", "price goes above the band": it crosses
            return self.cross_from(left, tok)
        if (
            tok.text == "in"
            and self.peek(1).text in ("bottom", "top", "lowest", "highest")
            and self.peek(2).pct
        ):
            return self.percentile_zone(left)
        if tok.text == "reach":
            self.i += 1  # "the z-score reaches 0": it gets there from either side
            self.no_second_side("reaches")
            return A.Cross("either", left, self.value())
        if tok.text == "spike":
            self.i += 1  # "volume spikes to 2 times its average"
            self.accept("to")
            if not (self.peek().kind == NUM and self.peek(1).text in ("times", "x")):
                self.fail("say how far it spikes, as in 'volume spikes to 3 times its average'")
            return self.multiple(left)
        ahead = self.peek(2) if self.peek(1).text == "for" else self.peek(1)
        if tok.text in ("up", "down") and ahead.kind == NUM and not ahead.pct:
            # "the market closes up 4 days in a row": a streak
            word = self.take()
            self.toks[self.i - 1] = Token(WORD, "rise" if word.text == "up" else "fall", word.pos, word.end)
            self.i -= 1
            return self.streak(left)
        if tok.text in RS_WORDS:
            self.fail(RELATIVE_STRENGTH, tok, suggestion="")  # "the coin outperforms BTC"
        if tok.text in ("oversold", "overbought"):
            return self.zone(left)
        if tok.text in ("positive", "negative"):
            self.i += 1  # "the MACD histogram is positive"
            return A.Compare(">" if tok.text == "positive" else "<", direction_of(left), A.Num(0.0))
        if tok.text in ("pointed", "pointing", "sloping", "slope", "heading", "angled") and self.directional(
            1
        ):
            up = self.peek(1).text in UP_WORDS  # "the upper band is pointed up": it rose on this candle
            self.i += 2
            return A.Streak("rise" if up else "fall", 1, left)
        if left in CALENDAR and (tok.kind == NUM or tok.text in DAY_NAMES):
            return A.Compare("=", left, self.value())  # "hour is 14", "day of week is Friday"
        if isinstance(left, A.Ind) and left.name == "supertrend" and self.at_any(BULL_WORDS | BEAR_WORDS):
            # "Supertrend is bullish": its direction is up.
            op = ">" if self.take().text in BULL_WORDS else "<"
            return A.Compare(op, direction_of(left), A.Num(0.0))
        if tok.text == "fill" and self.peek(1).text == "gap":
            self.i += 2  # "price fills the gap": it trades back to the previous close
            return A.Compare("<=", A.Field("low"), A.Lag(A.Field("close"), 1))
        if tok.text == "pull" and self.at("pull", "back"):
            self.i += 2  # "price pulls back to the 20 EMA": its low reaches it
            level = self.value()
            return A.Compare("<=", A.Field("low"), level)
        if tok.text == "touch" and left in (A.Field("low"), A.Field("high")):
            self.i += 1  # "the low touches EMA(20)": it reaches the level
            level = self.value()
            return A.Compare("<=" if left == A.Field("low") else ">=", left, level)
        if self.at("at", "its") and self.peek(2).text in ("lowest", "highest"):
            # "BandWidth is at its lowest in 125 days": a new 125-candle low
            kind = "low" if self.peek(2).text == "lowest" else "high"
            self.i += 3
            self.accept("in") or self.accept("of") or self.accept("for")
            while self.peek().text in PERIOD_WORDS:
                self.i += 1
            n = self.integer("the number of candles")
            self.expect("candle", "'candles' after the number")
            return A.NewExtreme(kind, n, left)
        if tok.text == "touch":
            self.i += 1
            level = self.value()
            if left != A.Field("close"):
                self.fail("only price touches a level, as in 'price touches the lower Bollinger band'", tok)
            return A.And((A.Compare("<=", A.Field("low"), level), A.Compare(">=", A.Field("high"), level)))
        if tok.text == "break" and self.peek(1).text == "out" and self.peek(2).text == "new":
            self.i += 2  # "price breaks out to a new 50-day high"
            tok = self.peek()
        if tok.text in ("cross", "break") or (tok.text in ("rise", "fall") and self.directional(1)):
            return self.cross(left)
        if tok.text == "turn":
            return self.turn(left)
        k = 1
        while self.peek(k).text in ("by", "at", "least", "more", "over"):
            k += 1
        pct_next = self.peek(k).kind == NUM and self.peek(k).pct
        if tok.text in ("rise", "fall") and pct_next:
            return self.move(left)
        if tok.text in ("up", "down") and pct_next:
            return self.move(left)  # "close is up 5% over the last 24 candles"
        if tok.text in ("rise", "fall"):
            return self.streak(left)
        if self.at_std_band():
            return self.std_compare(left, "")  # "close is 2 standard deviations below its average"
        if self.peek().text in ("more", "over") and self.at_std_band(1):
            self.i += 1
            return self.std_compare(left, "")
        if self.at("at", "least") and self.at_std_band(2):
            self.i += 2
            return self.std_compare(left, "=")
        if (
            tok.kind == NUM
            and not tok.pct
            and self.peek(1).text in ("times", "x")
            and (self.peek(2).kind != NUM or self.peek(3).text == "candle")  # "2 times 3" is a number
        ):
            return self.multiple(left)
        if tok.text == "gap":
            return self.gap(left)
        if tok.text == "make" or (tok.text == "new"):
            self.accept("make")
            self.expect("new", "'new' (as in 'makes a new 20-candle high')")
            n, kind = self.new_extreme()
            return A.NewExtreme(kind, n, left)
        if tok.text == "return":
            return self.trend_return(left)
        if tok.text == "between":
            self.i += 1
            self.no_second_side("between")
            low = self.value()
            self.expect("and", "'and' in 'between X and Y'")
            self.no_second_side(self.raw(tok, self.toks[self.i - 1]))
            return A.Between(left, low, self.value())
        if tok.text == "within":
            self.i += 1
            pct = self.number("a percentage after 'within'")
            if not pct.pct:
                self.fail("'within' needs a percentage, as in 'within 2% of SMA(100)'", pct)
            self.accept("of")
            return A.Within(left, pct.value, self.value())
        if tok.kind == NUM and tok.pct and self.peek(1).text in UP_WORDS | DOWN_WORDS:
            right = self.number_primary()
            assert isinstance(right, A.PctOff)
            return A.Compare(">" if right.pct > 0 else "<", left, right)
        if tok.kind == NUM and not tok.pct and self.peek(1).text == "point" and self.at_points_offset():
            right = self.number_primary()  # "close is 50 points above SMA(20)"
            assert isinstance(right, A.Arith)
            return A.Compare(">" if right.op == "+" else "<", left, right)
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
            "between", "up", "down", "within", "cross", "back",
        )  # fmt: skip

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


def direction_of(node: A.Node) -> A.Node:
    """A Supertrend turns by its direction line, not by its price line."""
    if isinstance(node, A.Ind) and node.name == "supertrend":
        return A.Ind("supertrend", node.params, "direction")
    return node


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
        if is_cloud and way in CLOUD_SIDE:
            out = CLOUD_SIDE[way]
            return A.Ind("ichimoku", side.params, flipped[out] if flip else out)
        return side

    left, right = fix(node.left, True), fix(node.right, False)
    if isinstance(node, A.Compare):
        return A.Compare(node.op, left, right)
    return A.Cross(node.direction, left, right)
