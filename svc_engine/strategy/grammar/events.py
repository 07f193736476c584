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
from svc_engine.strategy.grammar.words import COLORS, DOWN_WORDS, GAP_SIZE_WORDS, UP_WORDS
from svc_engine.strategy.tokens import END, LPAREN, NUM, RPAREN, WORD
from svc_engine.strategy.vocab import COMPARATORS, DAY_NAMES, PATTERN_WORDS, PATTERNS, SPECS


class Events(Cursor):
    """Predicates without a subject, and the events a subject can have (streaks, trend lines)."""

    def calendar(self) -> A.Node | None:
        """ "on Mondays", "on weekends", "at 14:00 UTC", "the candle opens at 14:00", "at the session
        open", "the first candle of the day", "the day opens": the candle's place in the UTC week and
        day (the `weekday` and `hour` values, the `DayStart` event)."""
        if self.at("at", "close") and (self.peek(2).text == "on" or self.peek(2).text in DAY_NAMES):
            self.i += 2  # "buy at the close on Friday": the signal is taken at a close anyway
        node = self.calendar_one()
        if node is None:
            return None
        # "on Friday at 16:00 UTC": one place in the week and the day, said together
        more = self.calendar_one() if self.at("at") or self.at("on") else None
        return node if more is None else A.And((node, more))

    def calendar_one(self) -> A.Node | None:
        """One calendar phrase at the cursor, or None (the grammar table of grammar/calendars.py)."""
        return calendar_one(self)

    def at_comparison(self, k: int) -> bool:
        """Whether a comparison word follows at offset k ("Monday" as a value in "... is Monday")."""
        return any(self.phrase_at(k, key) for key in COMPARATORS) or self.peek(k).text in ("between", "cross")

    def gap_as_value(self) -> bool:
        """ "gap size is larger than 1 ATR(14)", "the gap is at least 0.5 times ATR(14)": the gap's
        size (open minus the previous close) compared, not the event "gaps up"."""
        k = 1 if self.at("candle", "gap") else 0
        nxt = self.peek(k + 1)
        return nxt.text in GAP_SIZE_WORDS

    def n_candle_move(self) -> A.Node | None:
        """ "a two-day decline of more than 1%", "a 3-candle gain of 5%": the close's change over N."""
        tok = self.peek()
        if not (
            tok.kind == NUM
            and not tok.pct
            and self.peek(1).text == "candle"
            and self.peek(2).text in ("rise", "fall", "gain", "loss", "move")
        ):
            return None
        verb = self.peek(2)
        k = 3 + (self.peek(3).text == "of")
        while self.peek(k).text in ("more", "over", "at", "least"):
            k += 1
        pct = self.peek(k)
        if pct.kind != NUM or not pct.pct or verb.text == "move":
            return None
        n = self.positive_int(tok, "the number of candles")
        self.i += k + 1
        roc = check_indicator("roc", [tok], "", None, self.text, tok, pct.end)
        if verb.text in ("rise", "gain"):
            return A.Compare(">=", roc, A.Num(pct.value))
        return A.Compare("<=", roc, A.Num(-pct.value))
        del n

    def range_break(self) -> A.Node | None:
        """ "a 10 day low" as a whole condition (the Turtles' exit: "exit on a 10 day low"): the close
        beyond the lowest low (highest high) of the previous N candles."""
        tok = self.peek()
        if not (
            tok.kind == NUM
            and not tok.pct
            and self.peek(1).text == "candle"
            and self.peek(2).text in ("high", "low")
        ):
            return None
        after = self.peek(3)
        if not (after.kind == END or after.text in ("for", "or", "and", ",") or after.kind == RPAREN):
            return None
        kind = self.peek(2).text
        self.i += 3
        n = self.positive_int(tok, "the number of candles")
        field = A.Field(kind)
        extreme = A.Lag(A.Ind("min" if kind == "low" else "max", (n,), "", field), 1)
        return A.Compare("<" if kind == "low" else ">", A.Field("close"), extreme)

    def candle_run_at(self) -> str | None:
        """The colour of "N (consecutive) green candles" at the cursor, or None."""
        k = 2 if self.peek(1).text == "consecutive" else 1
        color = COLORS.get(self.peek(k).text)
        return color if color and self.peek(k + 1).text == "candle" else None

    def pattern(self) -> A.Node | None:
        """ "a bullish engulfing (candle / pattern)", "hammer", "three white soldiers", "doji"."""
        lead = 0  # "the (current) candle is a hammer"
        while self.peek(lead).text in ("this", "current") or (self.peek(lead).text == "candle" and lead < 2):
            lead += 1
        start = self.peek(lead)
        k = lead + (1 if start.text in ("bullish", "bearish") else 0)
        words = []
        j = k
        while self.peek(j).kind in (WORD, NUM) and j - k < 3:
            tok = self.peek(j)
            words.append("three" if tok.kind == NUM and tok.value == 3 and not tok.pct else tok.text)
            j += 1
        name = next((PATTERN_WORDS[w] for n in (3, 2, 1) if (w := tuple(words[:n])) in PATTERN_WORDS), None)
        if name is None:
            return None
        spec = PATTERNS[name]
        side = start.text if k > lead else ""
        self.i += k + len(name.split())
        self.accept("pattern") or self.accept("candle")
        for verb in ("appears", "forms", "occurs", "prints", "shows"):
            self.accept(verb)
        if side and side not in spec.sides:
            if spec.sides == ("",):
                self.fail(f"a {name} pattern is neither bullish nor bearish: say '{name} pattern'", start)
            self.fail(f"a {name} pattern is {spec.sides[0]} only (TA-Lib's definition)", start)
        if not side and "" not in spec.sides:
            if len(spec.sides) > 1:
                self.fail(f"say 'bullish {name}' or 'bearish {name}'", start)
            side = ""
        return A.Pattern(name, side)

    def cloud_color(self) -> A.Node | None:
        """ "the (Ichimoku) cloud is green": span A above span B (red: below)."""
        k = 1 if self.at("ichimoku") else 0
        if self.peek(k).text not in ("cloud", "kumo"):
            return None
        j = k + 1
        params: tuple[float, ...] = SPECS["ichimoku"].defaults()
        if self.peek(j).kind == LPAREN:
            save = self.i
            self.i += j
            toks = self.params(None)
            node = check_indicator(
                "ichimoku", toks, "senkou a", None, self.text, self.toks[save], self.toks[self.i - 1].end
            )
            params, j, self.i = node.params, self.i - save, save
        if self.peek(j).text not in COLORS:
            return None
        green = COLORS[self.peek(j).text] == "green"
        self.i += j + 1
        span_a, span_b = A.Ind("ichimoku", params, "senkou a"), A.Ind("ichimoku", params, "senkou b")
        return A.Compare(">" if green else "<", span_a, span_b)

    def candle_color(self) -> A.Node | None:
        """ "the previous candle is red", "the candle is green" -> close vs open."""
        k = 1 if self.peek().text in ("previous", "prior", "current", "this", "last") else 0
        if self.peek(k).text != "candle" or self.peek(k + 1).text not in COLORS:
            return None
        lag = self.peek().text in ("previous", "prior", "last")
        color = COLORS[self.peek(k + 1).text]
        self.i += k + 2
        close: A.Node = A.Field("close")
        open_: A.Node = A.Field("open")
        if lag:
            close, open_ = A.Lag(close, 1), A.Lag(open_, 1)
        return A.Compare(">" if color == "green" else "<", close, open_)

    def new_extreme(self) -> tuple[int, str]:
        n = 20
        if self.peek().kind == NUM:
            n = self.integer("the number of candles")
            self.accept("candle")
        word = self.peek()
        if word.text not in ("high", "low"):
            self.fail("expected 'high' or 'low' after 'new'")
        self.i += 1
        return n, word.text

    def at_trend_line(self) -> bool:
        return self.at("trend", "line") or self.at("trendline") or self.at("trend")

    def skip_trend_line(self) -> None:
        if not (self.accept("trend", "line") or self.accept("trendline") or self.accept("trend")):
            self.fail("expected 'trend line'")

    def trend_break(self) -> A.Node:
        side = None
        if self.accept("resistance"):
            side = "up"
        elif self.accept("support"):
            side = "down"
        if self.at_trend_line():
            self.skip_trend_line()
        self.expect("break", "'breaks' after 'trend line'")
        return self.trend_direction("break", side)

    def trend_direction(self, event: str, default: str | None) -> A.Node:
        if self.at_any(UP_WORDS):
            self.i += 1
            return A.TrendEvent(f"{event}_up")
        if self.at_any(DOWN_WORDS):
            self.i += 1
            return A.TrendEvent(f"{event}_down")
        return A.TrendEvent(f"{event}_{default}" if default else event)

    def trend_return(self, left: A.Node) -> A.Node:
        tok = self.take()
        if left != A.Field("close"):
            self.fail("only price returns to a broken trend line", tok)
        self.accept("to")
        self.accept("broken")
        if self.at_trend_line():
            self.skip_trend_line()
            if self.accept("broken"):
                return self.trend_direction("return", None)
            return A.TrendEvent("return")
        self.fail("expected 'the broken trend line' after 'returns to'")
        raise AssertionError

    def streak(self, left: A.Node) -> A.Node:
        verb = self.take()
        self.accept("for")
        nxt = self.peek()
        if nxt.kind in (END, RPAREN) or nxt.text in ("and", "or", ",", "while", "with", "then", "but"):
            return A.Streak(verb.text, 1, left)  # "TEMA(9) is rising": it rose on this candle
        tok = self.number(f"how many candles after {verb.text!r}")
        self.accept("consecutive")
        self.accept("candle")
        self.accept("in", "row")
        return A.Streak(verb.text, self.positive_int(tok, "the number of candles"), left)
