"""Values: plus/minus < times/divided by < unary minus < ``N candles ago`` < primary (a number,
a price field, an indicator, a parenthesised value, a value on another timeframe).

Example:
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("close above (high + low) / 2").condition.right.op
    '/'
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_indicator
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.numbers import AVERAGES, after_number
from svc_engine.strategy.grammar.words import DOWN_WORDS, TF_ADJECTIVES, TF_UNITS, UP_WORDS
from svc_engine.strategy.tokens import LPAREN, NUM, RPAREN, WORD
from svc_engine.strategy.vocab import ALIASES, FIELDS, NAMED_OUTPUTS, PREFIX_OUTPUTS

#: Words of "standard deviation(s)" in "2 standard deviations below the average".
STD_WORDS: dict[tuple[str, ...], str] = {
    ("standard", "deviation"): "std",
    ("std", "dev"): "std",
    ("std",): "std",
    ("stdev",): "std",
    ("stddev",): "std",
    ("sigma",): "std",
    ("sd",): "std",
}


def _std_of(ref: A.Node, subject: A.Node) -> A.Node:
    """The standard deviation that goes with a reference value: of the average's own series over its
    period (the middle Bollinger band's: close over its period), else of the subject over 20."""
    if isinstance(ref, A.Ind) and ref.name in AVERAGES:
        return A.Ind("stddev", (int(ref.params[0]),), "", ref.source)
    if isinstance(ref, A.Ind) and ref.name == "bb":
        return A.Ind("stddev", (int(ref.params[0]),))
    source = subject if isinstance(subject, A.Field | A.Ind) and subject != A.Field("close") else None
    return A.Ind("stddev", (20,), "", source)


class Values(Cursor):
    """Arithmetic over values and the primaries it combines."""

    def value(self) -> A.Node:
        node = self.term()
        while True:
            if self.peek().text in ("plus", "+", "minus", "-") and self.std_count_at(1):
                # "SMA(20) minus 2 standard deviations": the deviation of that average's series.
                op = "+" if self.take().text in ("plus", "+") else "-"
                count = self.take()
                self.match(STD_WORDS)
                node = A.Arith(op, node, A.Arith("*", A.Num(count.value), _std_of(node, node)))
            elif (
                self.peek().text in ("plus", "+", "minus", "-")
                and self.peek(1).kind == NUM
                and self.peek(1).pct
            ):
                # "the SMA plus 1 percent": 1% above it
                sign = 1.0 if self.take().text in ("plus", "+") else -1.0
                pct = self.take()
                if pct.value <= 0:
                    self.fail("a percentage offset must be positive", pct)
                node = A.PctOff(sign * pct.value, node)
            elif self.accept("plus") or self.accept("+"):
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
        if self.at("+") and self.peek(1).kind == NUM:
            self.i += 1  # "CCI rises above +100"
        if (self.at("-") or self.at("minus")) and not self.at("minus", "di"):
            self.i += 1
            inner = self.unary()
            if isinstance(inner, A.Num):
                return A.Num(-inner.value)
            return A.Arith("*", A.Num(-1.0), inner)
        return self.postfix()

    def postfix(self) -> A.Node:
        node = self.primary()
        while (
            self.peek().kind == NUM
            and self.peek(1).text == "candle"
            and self.peek(2).text == "ago"
            # "was below 60 three days ago": the comparison's, not the number's
            and not (isinstance(node, A.Num) and self.subjects)
        ):
            n = self.integer("the number of candles ago")
            self.i += 2
            if id(node) in self.implicit_lags:
                node = A.Lag(node.expr, n)  # type: ignore[attr-defined]
            else:
                node = A.Lag(node, n) if not isinstance(node, A.Lag) else A.Lag(node.expr, node.n + n)
        return node

    def std_count_at(self, k: int) -> bool:
        """A plain number and a standard-deviation word at offset k ("2 standard deviations")."""
        tok = self.peek(k)
        if tok.kind != NUM or tok.pct:
            return False
        return any(self.phrase_at(k + 1, key) for key in STD_WORDS)

    def at_std_band(self, k: int = 0) -> bool:
        """ "2 standard deviations below/above ..." at offset k."""
        if not self.std_count_at(k):
            return False
        length = max(len(key) for key in STD_WORDS if self.phrase_at(k + 1, key))
        return self.peek(k + 1 + length).text in UP_WORDS | DOWN_WORDS

    def std_band(self, subject: A.Node) -> A.Node:
        """ "2 standard deviations below SMA(20)": SMA(20) minus 2 x the standard deviation of its
        series over its period (of the subject over 20 candles when the reference is no average)."""
        count = self.take()
        if count.value <= 0:
            self.fail("a number of standard deviations must be positive", count)
        self.match(STD_WORDS)
        op = "+" if self.take().text in UP_WORDS else "-"
        self.accept("of")
        ref = self.postfix()
        return A.Arith(op, ref, A.Arith("*", A.Num(count.value), _std_of(ref, subject)))

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
        node = self.word_primary()  # the table of words that start a value (grammar/primaries.py)
        if node is not None:
            return node
        if self.alias_length() <= 1:
            field = self.match(FIELDS)
            if field is not None:
                return self.field_suffix(A.Field(field))
        return self.indicator(None)

    def alias_length(self) -> int:
        """Words of the longest indicator name at the cursor ("volume weighted average price" is 4)."""
        return max((len(key) for key in ALIASES if self.at(*key)), default=0)

    def number_primary(self) -> A.Node:
        if self.at_std_band() and self.subjects:
            return self.std_band(self.subjects[-1])  # "exceeds 2 standard deviations above its average"
        return after_number(self, self.take())  # the table of what a number starts (grammar/numbers.py)

    def paren_after_name(self) -> bool:
        """An indicator name at the cursor followed by its own parameters in parentheses."""
        length = max((len(key) for key in ALIASES if self.at(*key)), default=0)
        return length > 0 and self.peek(length).kind == LPAREN

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
        if (
            not self.range_depth
            and node.name in ("high", "low")
            and self.at("of")
            and self.peek(2).kind == NUM
            and self.peek(1).text in ("last", "past", "previous", "prior")
        ):
            # "the high of the preceding 20 days": the highest high of the previous 20 candles
            self.i += 1
            word = self.take().text
            count = self.number("the number of candles")
            self.expect("candle", "'candles' after the number")
            key = "max" if node.name == "high" else "min"
            ind = check_indicator(key, [count], "", node, self.text, count, self.toks[self.i - 1].end)
            return self.range_window(ind, "previous" if word != "last" else word, False, count)
        if node.name == "close" and self.peek().text in ("percent", "percentile", "z", "zscore", "roc"):
            spec_key = self.match(ALIASES)  # "the price percent rank", "the price z-score"
            if spec_key in ("prank", "zscore", "roc"):
                self.i -= len(
                    next(k for k in ALIASES if ALIASES[k] == spec_key and self.phrase_at(-len(k), k))
                )
                return self.indicator(None, source=None)
            if spec_key is not None:
                self.fail("expected a comparison after the price")
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
