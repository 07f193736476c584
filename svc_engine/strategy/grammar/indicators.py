"""Indicators: names and their outputs, parameters and period phrases, "fast"/"slow", the signal
line, indicators of another series, and the windows of "highest ... of the last N candles".

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close above the highest high of the previous 20 candles").condition.right
    Lag(expr=Ind(name='max', params=(20,), output='', source=Field(name='high')), n=1)
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_indicator
from svc_engine.strategy.errors import closest
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.words import (
    CONNECTIVES,
    KNOWN_PHRASES,
    PERIOD_WORDS,
    SPEED_NAMED,
    TIMEFRAME_WORDS,
)
from svc_engine.strategy.tokens import COMMA, END, LPAREN, NUM, RPAREN, WORD, Token
from svc_engine.strategy.vocab import (
    ALIASES,
    NAMED_OUTPUTS,
    NOISE_AFTER,
    OUTPUT_WORDS,
    PREFIX_OUTPUTS,
    SPECS,
    TIME_UNITS,
)

#: Relative strength between two coins needs the other coin's candles, which a condition on one
#: series cannot read (docs/strategy.md, "Relative strength"): refused with this message.
RELATIVE_STRENGTH = (
    "relative strength against another coin is not supported: a condition reads one coin's candles "
    "only; rank the coins with a portfolio run, or compare their ROC outside the strategy"
)
RS_LINKS = {"against", "versus", "vs", "compared", "relative", "to", "between"}
RS_WORDS = {"outperform", "outperforms", "outperforming", "underperform", "underperforms", "underperforming"}
COIN_WORDS = {"btc", "bitcoin", "eth", "ethereum", "spy", "benchmark", "sector", "peer"}


class Indicators(Cursor):
    """An indicator at the cursor, with its parameters, source and window."""

    def indicator(self, period_tok: Token | None, source: A.Node | None = None) -> A.Node:
        if self.at("fast") or self.at("slow"):
            return self.qualified(period_tok, source)
        if (self.at("short") or self.at("long")) and self.peek(1).text in SPEED_NAMED | {
            "moving",
            "average",
            "ma",
        }:
            # "short SMA(10) crosses above long SMA(50)": the fast and the slow average
            word = self.take()
            self.toks[self.i - 1] = Token(
                WORD, "fast" if word.text == "short" else "slow", word.pos, word.end
            )
            self.i -= 1
            return self.qualified(period_tok, source)
        start = self.peek()
        output = ""
        while self.peek().text in PREFIX_OUTPUTS:
            output = PREFIX_OUTPUTS[self.take().text]
        if self.peek().text in ("highest", "lowest"):
            return self.range_indicator(period_tok, start)
        key: str | None
        named = self.match(NAMED_OUTPUTS) if not output else None
        if named is not None:
            key, output = named
            params = self.params(period_tok)
            subject = self.subjects[-1] if self.subjects else self.last_subject
            if (  # "StochRSI %K crosses above %D": the subject's own %D
                not params
                and isinstance(subject, A.Ind)
                and subject.name in ("stoch", "stochrsi")
                and output in SPECS[subject.name].outputs
            ):
                return A.Ind(subject.name, subject.params, output, subject.source)
            return check_indicator(key, params, output, None, self.text, start, self.toks[self.i - 1].end)
        alias_start = self.i
        key = self.match(ALIASES)
        if key == "rsi" and self.toks[alias_start].text == "relative" and self.peek().text in RS_LINKS:
            self.fail(RELATIVE_STRENGTH, self.toks[alias_start], suggestion="")
        if key == "roc" and self.time_span_at(1) is not None and self.peek().text in ("over", "in"):
            self.i += 1
            minutes = self.time_span()
            minute_tok = Token(NUM, str(minutes), start.pos, start.end, value=float(minutes))
            src = self.source() if source is None else source
            return check_indicator("roct", [minute_tok], "", src, self.text, start, self.toks[self.i - 1].end)
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
        if spec.params or period_tok is not None or self.peek().kind == LPAREN:
            params = self.params(period_tok)
        else:
            params = []  # "hour of day is 14": the number is what it is compared with
        output = self.outputs(key, output)
        if spec.sourced and source is None:
            source = self.source()
            if source is not None and not params and not self.range_depth and self.at_period_phrase():
                params.append(self.period_phrase())  # "standard deviation of close over 20 candles"
        elif not spec.sourced and self.at("of") and self.peek(1).kind != NUM and not self.at_period_phrase():
            self.fail(f"{spec.display} is computed from the candles and takes no 'of' series")
        if key in ("zscore", "stddev") and not params and self.at("relative"):
            # "z-score of price relative to its 50-period moving average": over that period
            self.i += 1
            self.accept("its")
            ref = self.postfix()
            if not (isinstance(ref, A.Ind) and ref.name == "sma"):
                self.fail("a z-score is measured from a simple moving average", start)
            params = [Token(NUM, str(ref.params[0]), start.pos, start.end, value=float(ref.params[0]))]
        if key == "bb" and self.at("with") and self.peek(1).kind == NUM and not self.peek(1).pct:
            # "the lower Bollinger band with 3 standard deviations": the multiplier
            from svc_engine.strategy.grammar.values import STD_WORDS

            if any(self.phrase_at(2, w) for w in STD_WORDS):
                self.i += 1
                width = self.take()
                self.match(STD_WORDS)
                default = Token(NUM, "20", width.pos, width.end, value=20.0)
                params = [params[0] if params else default, width]
        node = check_indicator(key, params, output, source, self.text, start, self.toks[self.i - 1].end)
        # "SMA of the previous 20 candles": the 20 before the current one.
        return A.Lag(node, 1) if self.period_word in ("previous", "prior") else node

    def qualified(self, period_tok: Token | None, source: A.Node | None) -> A.Node:
        """ "fast EMA(12)", "slow SMA 50", "fast stochastic": the word must agree with what follows."""
        word = self.take()
        node = self.indicator(period_tok, source)
        stoch = isinstance(node, A.Ind) and node.name == "stoch"
        if isinstance(node, A.Ind) and stoch and node.params[1:] == (3, 3) and word.text == "fast":
            # The fast stochastic is %K without smoothing (TA-Lib STOCHF): slow_k = 1.
            return A.Ind("stoch", (node.params[0], 1, 3), node.output, node.source)
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

    def time_span_at(self, k: int = 0) -> tuple[int, int] | None:
        """A span of time at offset k, after optional last/past/previous: "4 hours", "30 minutes",
        "2 weeks", "24h", "hour" (one); returns (minutes, tokens) or None. A day is a candle."""
        j = k
        while self.peek(j).text in PERIOD_WORDS:
            j += 1
        tok = self.peek(j)
        if tok.kind == NUM and not tok.pct and self.peek(j + 1).text in TIME_UNITS:
            if tok.value != int(tok.value) or tok.value < 1:
                return None
            return int(tok.value) * TIME_UNITS[self.peek(j + 1).text], j + 2 - k
        if tok.kind == WORD and tok.text in TIME_UNITS and tok.text != "h":
            return TIME_UNITS[tok.text], j + 1 - k
        return None

    def time_span(self) -> int:
        """Consume a span of time (`time_span_at`) and return its minutes."""
        found = self.time_span_at()
        if found is None:
            self.fail("expected a span of time, as in '4 hours'")
        assert found is not None
        minutes, count = found
        if minutes > SPECS["roct"].params[0].high:
            self.fail("a span of time is at most 365 days (525600 minutes)")
        self.i += count
        return minutes

    def unknown(self, tok: Token) -> None:
        if any(t.text in RS_WORDS for t in self.toks) or (tok.kind == WORD and tok.text in COIN_WORDS):
            self.fail(RELATIVE_STRENGTH, tok, suggestion="")
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
        """The indicator's parameters after its name: the first form of `PARAM_FORMS` its next
        word starts that fits ("(20, 2)", "period 3", "14", "over 20 candles"), after a number
        said before the name (``period_tok``)."""
        out = [period_tok] if period_tok is not None else []
        tok = self.peek()
        for form in PARAM_FORMS.get(NUM if tok.kind == NUM else tok.text, ()):
            if form(self, out):
                break
        return out

    def at_period_phrase(self) -> bool:
        k = 1 if self.peek().text in ("of", "over", "for", "in", "with") else 0
        if k == 0:
            return False
        while self.peek(k).text in PERIOD_WORDS:
            k += 1
        return (
            self.peek(k).kind == NUM
            and self.peek(k + 1).text == "candle"
            and self.peek(k + 2).text != "ago"
            and not self.starts_indicator(k + 2)  # "of the 1-day rate of change": a source
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
        sourced_number = (
            self.peek(1).kind == NUM and self.peek(2).text == "candle" and self.starts_indicator(3)
        )
        if self.at("of") and (self.peek(1).kind != NUM or sourced_number) and not self.at_period_phrase():
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
                self.fail(
                    f"'the {word} N candles' exclude the current one; say 'the last N candles "
                    "including the current candle'",
                    start,
                )
            return node
        if word in ("previous", "prior"):
            return A.Lag(node, 1)
        if not self.in_exit:
            lag = A.Lag(node, 1)
            self.implicit_lags.add(id(lag))  # "the 20-candle high 3 candles ago" ends the window there
            return lag
        return node


def fmt_num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def in_parens(p: Indicators, out: list[Token]) -> bool:
    """ "(20, 2)", "(12/26/9)" """
    if p.peek().kind == LPAREN and p.peek(1).text == "-":
        p.fail("indicator parameters must be positive numbers", p.peek(1))
    if p.peek().kind == LPAREN and p.peek(1).kind == NUM:
        p.i += 1
        out.append(p.take())
        while p.peek().kind == COMMA or p.at("/"):
            p.i += 1
            out.append(p.number("a parameter"))
        if p.peek().kind != RPAREN:
            p.fail("expected ')' after the parameters")
        p.i += 1
        return True
    return False


def said_period(p: Indicators, out: list[Token]) -> bool:
    """ "RSI period 3", "EMA period 100" """
    if p.at("candle") and p.peek(1).kind == NUM and not p.peek(1).pct and not out:
        p.i += 1
        out.append(p.take())
        return True
    return False


def bare_number(p: Indicators, out: list[Token]) -> bool:
    """ "SMA 20", "EMA 50 candles" (not "3 candles ago")"""
    if (
        p.peek().kind == NUM
        and not p.peek().pct
        and not (p.peek(1).text == "candle" and p.peek(2).text == "ago")
        and not out
    ):
        out.append(p.take())
        p.accept("candle")
        return True
    return False


def period_words(p: Indicators, out: list[Token]) -> bool:
    """ "over the last 20 candles", "of 14 periods" """
    if not out and not p.range_depth and p.at_period_phrase():
        out.append(p.period_phrase())
        return True
    return False


PARAM_FORMS: dict[str, tuple[Callable[[Indicators, list[Token]], bool], ...]] = {
    LPAREN: (in_parens,),
    "candle": (said_period,),
    NUM: (bare_number,),
    **{word: (period_words,) for word in ("of", "over", "for", "in", "with")},
}
"""The word after an indicator's name -> the forms of its parameters it can start (``NUM`` for a
number, ``LPAREN`` a parenthesis); the first that fits is taken, else it has none there."""
