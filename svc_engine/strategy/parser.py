"""Parser: tokens -> strategy tree, by recursive descent over precedence levels.

Conditions: ``or`` < ``and``/``while``/``with``/``,`` < ``not`` < ``after`` < predicate.
Values: plus/minus < times/divided by < unary minus < ``N candles ago`` < primary.
Predicates pair a value with a comparison, a cross, a range or an event; a few events need no value
("3 green candles in a row", "a new 55-candle high", "a trend line breaks upward").

Example:
    >>> parse_entry("RSI(14) crosses above 30").condition.right
    Num(value=30.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_condition, check_indicator
from svc_engine.strategy.errors import StrategyCompileError, closest
from svc_engine.strategy.tokens import COMMA, END, LPAREN, NUM, OP, RPAREN, WORD, Token, tokenize
from svc_engine.strategy.vocab import (
    ALIASES,
    COMPARATORS,
    FIELDS,
    NAMED_OUTPUTS,
    NOISE_AFTER,
    OUTPUT_WORDS,
    PATTERN_WORDS,
    PATTERNS,
    PREFIX_OUTPUTS,
    SPECS,
    THEN_WINDOW,
    VOCABULARY,
)

MAX_WINDOW = 1000
TIMEFRAME_WORDS = {"monthly", "intraday", "htf"}
TF_ADJECTIVES = {"daily": "1d", "weekly": "1w", "hourly": "1h"}
TF_UNITS = {"h": "h", "hour": "h", "hr": "h", "d": "d", "w": "w", "week": "w", "m": "m", "min": "m",
            "minute": "m"}  # fmt: skip
TF_CONDITIONS = (A.Compare, A.Cross, A.Between, A.Within)
PERIOD_WORDS = ("last", "past", "previous", "prior", "period")

# Names of indicators and prices, the nearest of which is suggested for an unknown one.
KNOWN_PHRASES = frozenset(
    [" ".join(k) for k in ALIASES] + [" ".join(k) for k in FIELDS] + [" ".join(k) for k in NAMED_OUTPUTS]
)
# Words long enough to be worth suggesting ("on" of "on balance volume" is no answer to "moon").
SUGGESTABLE = frozenset(w for w in VOCABULARY if len(w) >= 3)
AND_WORDS = {"and", "while", "with", ",", "but", "also", "plus_and"}
SIDE_WORDS = {"buy": "long", "long": "long", "sell": "short", "short": "short"}
ENTRY_WORDS = {"buy", "sell", "limit", "enter", "entry", "place"}
EXIT_PREFIXES = {"exit", "close", "sell", "cover", "leave", "take", "position", "when", "if", "once", "trade"}
UP_WORDS = {"above", "over", "up", "upward", "upwards", "higher", "through"}
DOWN_WORDS = {"below", "under", "down", "downward", "downwards", "lower", "beneath"}
# Oversold / overbought thresholds, the usual ones for each oscillator.
ZONES = {"rsi": (30.0, 70.0), "stoch": (20.0, 80.0), "willr": (-80.0, -20.0), "cci": (-100.0, 100.0)}
# Words that can open a predicate whose subject was left out.
ELIDED_STARTS = {
    "gap",
    "cross",
    "break",
    "rise",
    "fall",
    "turn",
    "above",
    "below",
    "under",
    "over",
    "between",
    "within",
    "make",
    "greater",
    "less",
    "higher",
    "lower",
    "stay",
    "at",
    "equal",
    "back",
}
BULL_WORDS = {"positive", "bullish", "green", "up", "upward", "uptrend", "long"}
BEAR_WORDS = {"negative", "bearish", "red", "down", "downward", "downtrend", "short"}
SPEED_NAMED = {"sma", "ema", "wma", "dema", "tema", "hma", "vwap"}
CONNECTIVES = {"and", "or", "while", "with", "but", "also", "then", "after"}
COLORS = {
    "green": "green",
    "bullish": "green",
    "white": "green",
    "red": "red",
    "bearish": "red",
    "black": "red",
}


@dataclass(frozen=True, slots=True)
class Entry:
    """A parsed entry condition: the condition, the optional entry price and a side if one was said."""

    condition: A.Node
    price: A.Node | None
    side: str | None
    market: bool = False


class _Parser:
    """One parser per condition text; methods consume tokens left to right."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.subjects: list[A.Node] = []
        self.last_subject: A.Node | None = None
        self.range_depth = 0  # inside "highest X of the last N candles" the period phrase is the range's
        self.speeds: dict[A.Node, tuple[str, Token]] = {}  # indicators said "fast" or "slow"
        self.period_word = ""  # "last", "past", "previous" or "prior" of the latest period phrase
        self.in_exit = False  # parsing a take-profit or stop level (see `range_window`)
        self.implicit_lags: set[int] = set()  # ids of the Lag nodes `range_window` added
        self.market = False  # "buy at market": the entry is a market order

    # ---- token helpers -----------------------------------------------------------------------

    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *words: str) -> bool:
        return all(self.peek(k).text == w for k, w in enumerate(words))

    def at_any(self, words: set[str] | dict[str, str]) -> bool:
        return self.peek().text in words and self.peek().kind in (WORD, OP, COMMA)

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def take(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, word: str, what: str) -> Token:
        if not self.at(word):
            self.fail(f"expected {what}")
        return self.take()

    def match(self, table: dict[tuple[str, ...], str]) -> str | None:
        """Longest multi-word key of `table` at the cursor; consumes it."""
        best: tuple[int, str] | None = None
        for key, value in table.items():
            if self.at(*key) and (best is None or len(key) > best[0]):
                best = (len(key), value)
        if best is None:
            return None
        self.i += best[0]
        return best[1]

    def fail(self, message: str, tok: Token | None = None, suggestion: str | None = None) -> None:
        tok = tok or self.peek()
        phrase = self.text[tok.pos : tok.end] if tok.kind != END else ""
        if tok.kind == END:
            message = f"{message}, but the condition ended"
        else:
            message = f"{message} at {phrase!r} (position {tok.pos})"
            if suggestion is None and tok.kind == WORD and tok.text not in VOCABULARY:
                suggestion = closest(tok.text, SUGGESTABLE)
        raise StrategyCompileError(message, phrase=phrase, position=tok.pos, suggestion=suggestion)

    def number(self, what: str) -> Token:
        if self.peek().kind != NUM:
            self.fail(f"expected {what}")
        return self.take()

    def integer(self, what: str, low: int = 1) -> int:
        tok = self.number(what)
        if tok.value != int(tok.value) or tok.value < low or tok.pct:
            self.fail(f"{what} must be a whole number of at least {low}", tok)
        return int(tok.value)

    # ---- conditions --------------------------------------------------------------------------

    def condition(self) -> A.Node:
        self.accept("either")
        items = [self.conjunction()]
        while not self.at_time_exit(1) and self.accept("or"):
            if self.peek().kind == END:
                self.fail("expected a condition after 'or'")
            self.accept("either")
            items.append(self.conjunction())
        return items[0] if len(items) == 1 else A.Or(_flatten(A.Or, items))

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
        return items[0] if len(items) == 1 else A.And(_flatten(A.And, items))

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
        if (self.at("right", "after") or self.at("immediately", "after") or self.at("just", "after")):
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
        node = _resolve_cloud(node)
        chart = chart or self.chart_phrase()
        node = self.on_timeframe(node, chart, start)
        self.check_speeds(node)
        check_condition(node, self.text, start, self.toks[self.i - 1].end)
        return node

    def subjectless(self) -> A.Node | None:
        tok = self.peek()
        if tok.text == "candle" and self.text[tok.pos : tok.end].lower() == "day" and self.peek(1).text in (
            "end", "ends"
        ):
            self.i += 2
            return A.DayEnd()  # "the day ends" (exit rules)
        pattern = self.pattern()
        if pattern is not None:
            return pattern
        tok = self.peek()
        colored = self.candle_color()
        if colored is not None:
            return colored
        if self.at("golden", "cross") or self.at("death", "cross"):
            self.i += 2
            way = "above" if tok.text == "golden" else "below"
            return A.Cross(way, A.Ind("sma", (50,)), A.Ind("sma", (200,)))
        if tok.kind == NUM and not tok.pct:
            k = 1
            if self.peek(1).text == "consecutive":
                k = 2
            color = COLORS.get(self.peek(k).text)
            if color and self.peek(k + 1).text == "candle":
                self.i += k + 2
                self.accept("in", "row")
                return A.Candles(color, self.positive_int(tok, "the number of candles"))
        cloud = self.cloud_color()
        if cloud is not None:
            return cloud
        if self.at("gap") or self.at("candle", "gap"):
            self.accept("candle")
            return self.gap(A.Field("close"))
        if self.at("new"):
            self.i += 1
            n, kind = self.new_extreme()
            return A.NewExtreme(kind, n, A.Field(kind))
        if self.at_trend_line() or self.at("resistance") or self.at("support"):
            return self.trend_break()
        return None

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
        tf = chart if chart is not None else subject.timeframe  # type: ignore[union-attr]

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

    def at_time_exit(self, k: int = 0) -> bool:
        """ "after N candles" at offset k (a holding time in an exit rule)."""
        after = self.peek(k).text == "after"
        return after and self.peek(k + 1).kind == NUM and self.peek(k + 2).text == "candle"

    def dangling(self, tok: Token) -> None:
        """A connective where a condition should be: at the start, or right after another one."""
        before = self.toks[self.i - 1] if self.i > 0 else None
        if before is None or before.pos < 0:
            self.fail(f"the condition starts with {tok.text!r}, which joins two conditions: remove it", tok)
        if before.text in CONNECTIVES | {","}:
            pair = self.text[before.pos : tok.end]
            self.fail(f"doubled connective {pair!r}: there is no condition between them, remove one", tok)
        self.fail(f"expected a condition before {tok.text!r}", tok)

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
            node = check_indicator("ichimoku", toks, "senkou a", None, self.text, self.toks[save],
                                   self.toks[self.i - 1].end)
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
        close, open_ = A.Field("close"), A.Field("open")
        if lag:
            close, open_ = A.Lag(close, 1), A.Lag(open_, 1)
        return A.Compare(">" if color == "green" else "<", close, open_)

    def positive_int(self, tok: Token, what: str) -> int:
        if tok.value != int(tok.value) or tok.value < 1:
            self.fail(f"{what} must be a whole number of at least 1", tok)
        return int(tok.value)

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

    def directional(self, k: int) -> bool:
        """Whether an above/below word follows at offset `k` (after an optional "back")."""
        k += self.peek(k).text == "back"
        return self.peek(k).text in UP_WORDS | DOWN_WORDS

    def tail(self, left: A.Node) -> A.Node:
        negate = self.accept("not")
        node = self.tail_positive(left)
        return A.Not(node) if negate else node

    def tail_positive(self, left: A.Node) -> A.Node:
        tok = self.peek()
        if tok.text == "back":
            self.i += 1
            tok = self.peek()
        if tok.text == "close" and left == A.Field("close"):
            self.i += 1  # "price closes above ..."
            tok = self.peek()
        if tok.text in ("oversold", "overbought"):
            return self.zone(left)
        if isinstance(left, A.Ind) and left.name == "supertrend" and self.at_any(BULL_WORDS | BEAR_WORDS):
            # "Supertrend is bullish": its direction is up.
            op = ">" if self.take().text in BULL_WORDS else "<"
            return A.Compare(op, _direction_of(left), A.Num(0.0))
        if tok.text == "touch":
            self.i += 1
            level = self.value()
            if left != A.Field("close"):
                self.fail("only price touches a level, as in 'price touches the lower Bollinger band'", tok)
            return A.And((A.Compare("<=", A.Field("low"), level), A.Compare(">=", A.Field("high"), level)))
        if tok.text in ("cross", "break") or (tok.text in ("rise", "fall") and self.directional(1)):
            return self.cross(left)
        if tok.text == "turn":
            return self.turn(left)
        pct_next = self.peek(1).kind == NUM and self.peek(1).pct
        if tok.text in ("rise", "fall") and (pct_next or (self.peek(1).text == "by" and self.peek(2).pct)):
            return self.move(left)
        if tok.text in ("rise", "fall"):
            return self.streak(left)
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
        return A.Compare(op or ">", left, right)

    def at_points_offset(self) -> bool:
        return self.peek(1).text == "point" and self.peek(2).text in UP_WORDS | DOWN_WORDS

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
        tok = self.number("a percentage")
        if tok.value <= 0:
            self.fail("a move must be a positive percentage; 'rises' or 'drops' gives its direction", tok)
        n = 1
        if self.at("in") or self.at("over") or self.at("within"):
            k = 1
            while self.peek(k).text in PERIOD_WORDS or self.peek(k).text == "single":
                k += 1
            if self.peek(k).kind == NUM and self.peek(k + 1).text == "candle":
                self.i += k
                n = self.integer("the number of candles of the move")
                self.i += 1
            elif self.peek(k).text == "candle":
                self.i += k + 1  # "in a single candle"
        roc = check_indicator("roc", [Token(NUM, str(n), tok.pos, tok.end, value=float(n))], "", left,
                              self.text, verb, self.toks[self.i - 1].end)
        if verb.text == "rise":
            return A.Compare(">=", roc, A.Num(tok.value))
        return A.Compare("<=", roc, A.Num(-tok.value))

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
        self.accept("by")
        previous = A.Lag(A.Field("close"), 1)
        if self.peek().kind == NUM and self.peek().pct:
            pct = self.take()
            if pct.value <= 0:
                self.fail("a gap must be a positive percentage", pct)
            level = A.PctOff(pct.value if up else -pct.value, previous)
            return A.Compare(">=" if up else "<=", A.Field("open"), level)
        return A.Compare(">" if up else "<", A.Field("open"), previous)

    def cross(self, left: A.Node) -> A.Node:
        verb = self.take()
        self.accept("back")
        if self.at_any(UP_WORDS):
            direction = "above"
        elif self.at_any(DOWN_WORDS):
            direction = "below"
        elif verb.text == "cross":
            # "tenkan crosses kijun": either way.
            self.no_second_side(self.raw(verb, verb))
            return A.Cross("either", left, self.value())
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
        return A.Cross(direction, left, right)

    def raw(self, first: Token, last: Token) -> str:
        """The words from `first` to `last` as the trader wrote them."""
        return self.text[first.pos : last.end]

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
        left = _direction_of(left)
        if self.at_any(BULL_WORDS):
            self.i += 1
            return A.Cross("above", left, A.Num(0.0))
        if self.at_any(BEAR_WORDS):
            self.i += 1
            return A.Cross("below", left, A.Num(0.0))
        self.fail("expected 'positive' or 'negative' after 'turns'")
        raise AssertionError

    def streak(self, left: A.Node) -> A.Node:
        verb = self.take()
        self.accept("for")
        tok = self.number(f"how many candles after {verb.text!r}")
        self.accept("consecutive")
        self.accept("candle")
        self.accept("in", "row")
        return A.Streak(verb.text, self.positive_int(tok, "the number of candles"), left)

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

    # ---- values --------------------------------------------------------------------------------

    def value(self) -> A.Node:
        node = self.term()
        while True:
            if self.accept("plus") or self.accept("+"):
                node = A.Arith("+", node, self.term())
            elif (self.at("minus") and not self.at("minus", "di") and self.accept("minus")) or self.accept(
                "-"
            ):
                node = A.Arith("-", node, self.term())
            else:
                return node

    def term(self) -> A.Node:
        node = self.unary()
        while True:
            if (
                self.accept("times")
                or self.accept("x")
                or self.accept("*")
                or self.accept("multiplied", "by")
            ):
                node = A.Arith("*", node, self.unary())
            elif self.accept("divided", "by") or self.accept("/"):
                node = A.Arith("/", node, self.unary())
            else:
                return node

    def unary(self) -> A.Node:
        if (self.at("-") or self.at("minus")) and not self.at("minus", "di"):
            self.i += 1
            inner = self.unary()
            if isinstance(inner, A.Num):
                return A.Num(-inner.value)
            return A.Arith("*", A.Num(-1.0), inner)
        return self.postfix()

    def postfix(self) -> A.Node:
        node = self.primary()
        while self.peek().kind == NUM and self.peek(1).text == "candle" and self.peek(2).text == "ago":
            n = self.integer("the number of candles ago")
            self.i += 2
            if id(node) in self.implicit_lags:
                node = A.Lag(node.expr, n)  # type: ignore[attr-defined]
            else:
                node = A.Lag(node, n) if not isinstance(node, A.Lag) else A.Lag(node.expr, node.n + n)
        return node

    def timeframe_at(self, k: int = 0) -> tuple[str, int] | None:
        """A timeframe at offset k: "daily", "weekly", "hourly", "4h", "4-hour", "15m", "1w";
        returns (timeframe, tokens) or None."""
        from svc_engine.data.schema import TIMEFRAMES  # the data layer's list of timeframes

        tok = self.peek(k)
        if tok.kind == WORD and tok.text in TF_ADJECTIVES:
            return TF_ADJECTIVES[tok.text], 1
        unit = self.peek(k + 1)
        if tok.kind == NUM and not tok.pct and tok.value == int(tok.value) and unit.text in TF_UNITS:
            name = f"{int(tok.value)}{TF_UNITS[unit.text]}"
            if name in TIMEFRAMES:
                return name, 2
        return None

    def primary(self) -> A.Node:
        tok = self.peek()
        tf = self.timeframe_at()
        if tf is not None and self.peek(tf[1]).text not in ("chart", "timeframe", "candle"):
            self.i += tf[1]
            return A.Tf(self.primary(), tf[0])
        if tok.kind == NUM:
            return self.number_primary()
        if tok.kind == LPAREN:
            self.i += 1
            depth, self.range_depth = self.range_depth, 0
            try:
                inner = self.value()
            finally:
                self.range_depth = depth
            if self.peek().kind != RPAREN:
                self.fail("expected ')'")
            self.i += 1
            return inner
        if self.at("previous") or self.at("prior") or self.at("last"):
            self.i += 1
            self.accept("candle")
            inner = self.primary()
            return A.Lag(inner.expr, inner.n + 1) if isinstance(inner, A.Lag) else A.Lag(inner, 1)
        if self.at("its"):
            if not self.subjects or isinstance(self.subjects[-1], A.Num):
                self.fail("'its' must follow the value it refers to, as in 'volume is above its average'")
            self.i += 1
            period = None
            if self.peek().kind == NUM and not self.peek().pct:
                period = self.take()
                self.accept("candle")
            return self.indicator(period, source=self.subjects[-1])
        if self.alias_length() <= 1:
            field = self.match(FIELDS)
            if field is not None:
                return self.field_suffix(A.Field(field))
        return self.indicator(None)

    def alias_length(self) -> int:
        """Words of the longest indicator name at the cursor ("volume weighted average price" is 4)."""
        return max((len(key) for key in ALIASES if self.at(*key)), default=0)

    def number_primary(self) -> A.Node:
        tok = self.take()
        if tok.pct and self.at("of"):
            self.i += 1
            return A.Arith("*", A.Num(tok.value / 100.0), self.postfix())
        if not tok.pct and self.at("candle") and self.peek(1).text in ("high", "low", "close"):
            self.i += 1
            source = A.Field(self.take().text)
            key = "min" if source.name == "low" else "max"
            including = self.accept_including()
            node = check_indicator(key, [tok], "", source, self.text, tok, self.toks[self.i - 1].end)
            return self.range_window(node, "", including, tok)
        if not tok.pct and self.at("point") and self.peek(1).text in UP_WORDS | DOWN_WORDS:
            self.i += 1
            op = "+" if self.take().text in UP_WORDS else "-"
            return A.Arith(op, self.postfix(), A.Num(tok.value))  # "50 points above SMA(20)"
        if tok.pct and self.at_any(UP_WORDS | DOWN_WORDS):
            sign = 1.0 if self.take().text in UP_WORDS else -1.0
            if tok.value <= 0:
                self.fail("a percentage offset must be positive", tok)
            return A.PctOff(sign * tok.value, self.postfix())
        if (
            not tok.pct
            and self.peek().kind == WORD
            and self.peek().text not in ("x", "times", "candle")
            and self.starts_indicator(0)
        ):
            return self.indicator(tok)
        if not tok.pct and self.at("candle") and self.starts_indicator(1):
            self.i += 1
            return self.indicator(tok)
        return A.Num(tok.value)

    def starts_indicator(self, k: int) -> bool:
        word = self.peek(k).text
        if word in PREFIX_OUTPUTS or word in ("highest", "lowest"):
            return True
        if word == "volume" and self.peek(k + 1).text in {w[0] for w in ALIASES}:
            return True
        return any(self.phrase_at(k, key) for key in (*ALIASES, *NAMED_OUTPUTS))

    def phrase_at(self, k: int, words: tuple[str, ...]) -> bool:
        """Whether the words of `words` follow at offset k (a whole alias, not just its first word)."""
        return all(self.peek(k + j).text == w for j, w in enumerate(words))

    def field_suffix(self, node: A.Field) -> A.Node:
        if self.at("of", "previous", "candle") or self.at("of", "prior", "candle"):
            self.i += 3
            return A.Lag(node, 1)
        if (
            node.name == "volume"
            and self.peek().kind == WORD
            and self.starts_indicator(0)
            and self.peek().text not in {*PREFIX_OUTPUTS, "highest", "lowest"}
        ):
            return self.indicator(None, source=node)
        return node

    # ---- indicators ----------------------------------------------------------------------------

    def indicator(self, period_tok: Token | None, source: A.Node | None = None) -> A.Node:
        if self.at("fast") or self.at("slow"):
            return self.qualified(period_tok, source)
        start = self.peek()
        output = ""
        while self.peek().text in PREFIX_OUTPUTS:
            output = PREFIX_OUTPUTS[self.take().text]
        if self.peek().text in ("highest", "lowest"):
            return self.range_indicator(period_tok, start)
        named = self.match(NAMED_OUTPUTS) if not output else None
        if named is not None:
            key, output = named
            params = self.params(period_tok)
            subject = self.subjects[-1] if self.subjects else None
            if (  # "StochRSI %K crosses above %D": the subject's own %D
                not params
                and isinstance(subject, A.Ind)
                and subject.name in ("stoch", "stochrsi")
                and output in SPECS[subject.name].outputs
            ):
                return A.Ind(subject.name, subject.params, output, subject.source)
            return check_indicator(key, params, output, None, self.text, start, self.toks[self.i - 1].end)
        key = self.match(ALIASES)
        if key is None and output and self.peek().text in ("band", "channel"):
            key = "bb" if self.peek().text == "band" else "donchian"
        if key is None and output:
            self.fail(f"expected a band or channel after {output!r} (Bollinger, Keltner, Donchian)")
        if key is None and self.at("signal"):
            return self.signal_line()
        if key is None:
            self.unknown(start)
        assert key is not None
        spec = SPECS[key]
        output = self.outputs(key, output)
        self.period_word = ""
        params = self.params(period_tok)
        output = self.outputs(key, output)
        if spec.sourced and source is None:
            source = self.source()
            if source is not None and not params and not self.range_depth and self.at_period_phrase():
                params.append(self.period_phrase())  # "standard deviation of close over 20 candles"
        elif not spec.sourced and self.at("of") and self.peek(1).kind != NUM and not self.at_period_phrase():
            self.fail(f"{spec.display} is computed from the candles and takes no 'of' series")
        node = check_indicator(key, params, output, source, self.text, start, self.toks[self.i - 1].end)
        # "SMA of the previous 20 candles": the 20 before the current one.
        return A.Lag(node, 1) if self.period_word in ("previous", "prior") else node

    def qualified(self, period_tok: Token | None, source: A.Node | None) -> A.Node:
        """ "fast EMA(12)", "slow SMA 50", "fast stochastic": the word must agree with what follows."""
        word = self.take()
        node = self.indicator(period_tok, source)
        stoch = isinstance(node, A.Ind) and node.name == "stoch"
        if stoch and node.params[1:] == (3, 3) and word.text == "fast":  # type: ignore[union-attr]
            # The fast stochastic is %K without smoothing (TA-Lib STOCHF): slow_k = 1.
            return A.Ind("stoch", (node.params[0], 1, 3), node.output, node.source)  # type: ignore[union-attr]
        if stoch and word.text == "slow":
            return node
        if not (isinstance(node, A.Ind) and node.name in SPEED_NAMED):
            self.fail(f"{word.text!r} applies to moving averages and the stochastic, not here", word)
        assert isinstance(node, A.Ind)
        said = self.text[word.end : self.toks[self.i - 1].end]
        if not any(ch.isdigit() for ch in said):
            self.fail(
                f"{word.text!r} {SPECS[node.name].display} names no period: write it, as in "
                f"'EMA(12) crosses above EMA(26)'",
                word,
            )
        self.speeds[node] = (word.text, word)
        return node

    def check_speeds(self, node: A.Node) -> None:
        """In "fast X crosses above slow Y" the fast one must have the shorter period."""
        if not isinstance(node, A.Compare | A.Cross):
            return
        sides = [self.speeds.get(n) for n in (node.left, node.right)]
        if None in sides or sides[0][0] == sides[1][0]:  # type: ignore[index]
            return
        fast, slow = (node.left, node.right) if sides[0][0] == "fast" else (node.right, node.left)  # type: ignore[index]
        assert isinstance(fast, A.Ind) and isinstance(slow, A.Ind)
        if fast.params[0] >= slow.params[0]:
            self.fail(
                f"the 'fast' {SPECS[fast.name].display}({fmt_num(fast.params[0])}) is not faster than the "
                f"'slow' {SPECS[slow.name].display}({fmt_num(slow.params[0])}): swap the periods",
                sides[0][1],  # type: ignore[index]
            )

    def signal_line(self) -> A.Node:
        """ "MACD crosses above (its) signal (line)": the signal of the subject's MACD."""
        self.i += 1
        self.accept("line")
        macd = next((s for s in reversed(self.subjects) if isinstance(s, A.Ind) and s.name == "macd"), None)
        params = macd.params if macd is not None else SPECS["macd"].defaults()
        return A.Ind("macd", params, "signal")

    def unknown(self, tok: Token) -> None:
        tok = next((t for t in self.toks if t.text in TIMEFRAME_WORDS and t.kind == WORD), tok)
        if tok.text in TIMEFRAME_WORDS:
            self.fail(
                f"the timeframe {tok.text!r} is not supported: say daily, weekly, hourly or one such as 4h",
                tok,
            )
        if tok.kind == END:
            self.fail("expected a value (a price, an indicator or a number)")
        if tok.kind == WORD and tok.text in CONNECTIVES:
            self.dangling(tok)
        if tok.kind != WORD:
            self.fail("expected a value", tok)
        self.fail(
            f"unknown indicator or value {tok.text!r}", tok, suggestion=closest(tok.text, KNOWN_PHRASES)
        )

    def outputs(self, key: str, output: str) -> str:
        table = OUTPUT_WORDS.get(key, {})
        while True:
            found = self.match(table) if table else None
            if found is not None:
                output = found
            elif self.peek().text in NOISE_AFTER:
                self.i += 1
            else:
                return output

    def params(self, period_tok: Token | None) -> list[Token]:
        out = [period_tok] if period_tok is not None else []
        if self.peek().kind == LPAREN and self.peek(1).text == "-":
            self.fail("indicator parameters must be positive numbers", self.peek(1))
        if self.peek().kind == LPAREN and self.peek(1).kind == NUM:
            self.i += 1
            out.append(self.take())
            while self.peek().kind == COMMA or self.at("/"):
                self.i += 1
                out.append(self.number("a parameter"))
            if self.peek().kind != RPAREN:
                self.fail("expected ')' after the parameters")
            self.i += 1
        elif (
            self.peek().kind == NUM
            and not self.peek().pct
            and not (self.peek(1).text == "candle" and self.peek(2).text == "ago")
            and not out
        ):
            out.append(self.take())
            self.accept("candle")
        elif not out and not self.range_depth and self.at_period_phrase():
            out.append(self.period_phrase())
        return out

    def at_period_phrase(self) -> bool:
        k = 1 if self.peek().text in ("of", "over", "for", "in", "with") else 0
        if k == 0:
            return False
        while self.peek(k).text in PERIOD_WORDS:
            k += 1
        return (
            self.peek(k).kind == NUM and self.peek(k + 1).text == "candle" and self.peek(k + 2).text != "ago"
        )

    def period_phrase(self) -> Token:
        self.i += 1
        while self.peek().text in PERIOD_WORDS:
            if self.peek().text != "period":
                self.period_word = self.peek().text
            self.i += 1
        tok = self.take()
        self.i += 1  # "candle"
        return tok

    def source(self) -> A.Node | None:
        if self.at("of") and self.peek(1).kind != NUM and not self.at_period_phrase():
            self.i += 1
            return self.postfix()
        if self.at("volume"):
            self.i += 1
            return A.Field("volume")
        return None

    def range_indicator(self, period_tok: Token | None, start: Token) -> A.Node:
        key = "max" if self.take().text == "highest" else "min"
        source: A.Node = A.Field("high" if key == "max" else "low")
        if self.peek().kind in (WORD, LPAREN) and not self.at_period_phrase():
            self.range_depth += 1
            try:
                source = self.postfix()
            finally:
                self.range_depth -= 1
        self.period_word = ""
        params = self.params(period_tok)
        word = self.period_word
        including = self.accept_including()
        node = check_indicator(key, params, "", source, self.text, start, self.toks[self.i - 1].end)
        return self.range_window(node, word, including, start)

    def accept_including(self) -> bool:
        """ "... including the current candle" / "including this one"."""
        if not self.accept("including"):
            return False
        self.accept("this") or self.accept("current")
        one = self.peek().kind == NUM and self.peek().value == 1
        if not (self.accept("candle") or (one and self.take())):
            self.fail("expected 'the current candle' after 'including'")
        return True

    def range_window(self, node: A.Node, word: str, including: bool, start: Token) -> A.Node:
        """Which candles a highest/lowest covers. In a condition, "the last N candles" are the N before
        the current one (the current candle is what is compared with them); "including the current
        candle" adds it. In a take-profit or stop level "the last N" include the signal candle.
        "previous N" always excludes the current candle."""
        if including:
            if word in ("previous", "prior"):
                self.fail(f"'the {word} N candles' exclude the current one; say 'the last N candles "
                          "including the current candle'", start)
            return node
        if word in ("previous", "prior"):
            return A.Lag(node, 1)
        if not self.in_exit:
            lag = A.Lag(node, 1)
            self.implicit_lags.add(id(lag))  # "the 20-candle high 3 candles ago" ends the window there
            return lag
        return node

    # ---- entry ---------------------------------------------------------------------------------

    def at_entry_clause_after(self, k: int) -> bool:
        return self.peek(k).text in ENTRY_WORDS and self.peek(k).kind == WORD

    def at_entry_clause(self) -> bool:
        word = self.peek().text
        if word not in ENTRY_WORDS or self.peek().kind != WORD:
            return False
        return word != "entry" or self.peek(1).text in ("at", "price", "=")

    def side_prefix(self) -> str | None:
        save = self.i
        self.accept("turn") or self.accept("enter") or self.accept("open")
        side = SIDE_WORDS.get(self.peek().text)
        if side is None or self.peek().kind != WORD:
            self.i = save
            return None
        self.i += 1
        self.accept("position") or self.accept("entry")
        if self.accept("at", "market") or self.accept("market"):
            self.market = True
        said_when = any(self.accept(w) for w in ("when", "if", "once", "on", ":"))
        # "buy 1% below close" is an entry-price clause, not a side prefix.
        if (
            not said_when
            and self.peek().kind != COMMA
            and (self.at_entry_clause() or self.peek().kind == NUM)
        ):
            self.i = save
            return None
        while self.peek().kind == COMMA:
            self.i += 1
        return side

    def entry_clause(self) -> tuple[A.Node | None, str | None]:
        word = self.take().text
        side = SIDE_WORDS.get(word)
        self.accept("price")
        if self.accept("at", "market") or self.accept("market"):
            self.accept("order") or self.accept("price")
            self.market = True  # fills at the next candle's open
            return None, side
        for skip in ("limit", "order", "at", "=", "on"):
            self.accept(skip)
        return self.value(), side


def fmt_num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _direction_of(node: A.Node) -> A.Node:
    """A Supertrend turns by its direction line, not by its price line."""
    if isinstance(node, A.Ind) and node.name == "supertrend":
        return A.Ind("supertrend", node.params, "direction")
    return node


_CLOUD_SIDE = {">": "cloud top", ">=": "cloud top", "<": "cloud bottom", "<=": "cloud bottom",
               "above": "cloud top", "below": "cloud bottom"}


def _resolve_cloud(node: A.Node) -> A.Node:
    """ "above the cloud" means above its top, "below the cloud" below its bottom."""
    if isinstance(node, A.Not):
        return A.Not(_resolve_cloud(node.item))
    if not isinstance(node, A.Compare | A.Cross):
        return node
    way = node.op if isinstance(node, A.Compare) else node.direction
    flipped = {"cloud top": "cloud bottom", "cloud bottom": "cloud top"}

    def fix(side: A.Node, flip: bool) -> A.Node:
        is_cloud = isinstance(side, A.Ind) and side.name == "ichimoku" and side.output == "cloud"
        if is_cloud and way in _CLOUD_SIDE:
            out = _CLOUD_SIDE[way]
            return A.Ind("ichimoku", side.params, flipped[out] if flip else out)
        return side

    left, right = fix(node.left, True), fix(node.right, False)
    if isinstance(node, A.Compare):
        return A.Compare(node.op, left, right)
    return A.Cross(node.direction, left, right)


def _flatten(kind: type[A.And] | type[A.Or], items: list[A.Node]) -> tuple[A.Node, ...]:
    """`(a and b) and c` is `a and b and c`: one flat list per operator keeps the tree canonical."""
    out: list[A.Node] = []
    for item in items:
        out.extend(item.items if isinstance(item, kind) else (item,))
    return tuple(out)


def parse_entry(text: str) -> Entry:
    """Parse an entry condition, with an optional side prefix and entry-price clause.

    >>> parse_entry("buy when close is above SMA(20), limit at EMA(20)").side
    'long'
    """
    p = _Parser(text)
    if p.peek().kind == END:
        raise StrategyCompileError("the condition is empty", phrase="", position=0)
    side = p.side_prefix()
    if side is None and (p.at("when") or p.at("if")):
        p.i += 1
    if p.peek().kind == END:
        p.fail("expected a condition after the side")
    condition = p.condition()
    price = None
    save = p.i
    p.separator()
    p.accept("then")
    if p.at_entry_clause():
        price, clause_side = p.entry_clause()
        side = side or clause_side
    else:
        p.i = save
    if p.peek().kind == RPAREN:
        p.fail("unbalanced ')'")
    if p.peek().kind != END:
        p.fail("expected 'and', 'or' or the end of the condition")
    return Entry(condition, price, side, p.market)
