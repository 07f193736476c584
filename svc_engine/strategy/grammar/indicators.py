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
from svc_engine.strategy.grammar.lookahead import (
    STD_WORDS,
    at_period_phrase,
    dangling,
    phrase_at,
    starts_indicator,
    time_span_at,
)
from svc_engine.strategy.grammar.windows import accept_including, range_window, time_span
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


def indicator(p: Cursor, period_tok: Token | None, source: A.Node | None = None) -> A.Node:
    lead = SPEED_LEADS.get(p.peek().text)
    node = lead(p, period_tok, source) if lead is not None else None
    if node is not None:
        return node
    start = p.peek()
    output = ""
    while p.peek().text in PREFIX_OUTPUTS:
        output = PREFIX_OUTPUTS[p.take().text]
    if p.peek().text in ("highest", "lowest"):
        return range_indicator(p, period_tok, start)
    named = p.match(NAMED_OUTPUTS) if not output else None
    if named is not None:
        return named_output(p, named, period_tok, start)
    first = p.peek()
    key = p.match(ALIASES)
    read = KEY_READS.get(key or "")
    node = read(p, first, start, source) if read is not None else None
    if node is not None:
        return node
    if key is None and output and p.peek().text in ("band", "channel"):
        key = "bb" if p.peek().text == "band" else "donchian"
    if key is None and output:
        p.fail(f"expected a band or channel after {output!r} (Bollinger, Keltner, Donchian)")
    if key is None and p.at("signal"):
        return signal_line(p)
    if key is None:
        unknown(p, start)
    assert key is not None
    return with_params(p, key, output, period_tok, source, start)


def with_params(
    p: Cursor, key: str, output: str, period_tok: Token | None, source: A.Node | None, start: Token
) -> A.Node:
    """The indicator `key` named at `start`: its outputs, parameters and series."""
    spec = SPECS[key]
    output = outputs(p, key, output)
    p.period_word = ""
    if spec.params or period_tok is not None or p.peek().kind == LPAREN:
        params = parameters(p, period_tok)
    else:
        params = []  # "hour of day is 14": the number is what it is compared with
    output = outputs(p, key, output)
    if spec.sourced and source is None:
        source = series_source(p)
        if source is not None and not params and not p.range_depth and at_period_phrase(p):
            params.append(period_phrase(p))  # "standard deviation of close over 20 candles"
    elif not spec.sourced and p.at("of") and p.peek(1).kind != NUM and not at_period_phrase(p):
        p.fail(f"{spec.display} is computed from the candles and takes no 'of' series")
    more = KEY_PARAMS.get(key)
    params = more(p, params, start) if more is not None else params
    node = check_indicator(key, params, output, source, p.text, start, p.toks[p.i - 1].end)
    # "SMA of the previous 20 candles": the 20 before the current one.
    return A.Lag(node, 1) if p.period_word in ("previous", "prior") else node


def speed_word(p: Cursor, period_tok: Token | None, source: A.Node | None) -> A.Node | None:
    """ "short SMA(10) crosses above long SMA(50)": the fast and the slow average."""
    if p.peek(1).text not in SPEED_NAMED | {"moving", "average", "ma"}:
        return None
    word = p.take()
    p.toks[p.i - 1] = Token(WORD, "fast" if word.text == "short" else "slow", word.pos, word.end)
    p.i -= 1
    return qualified(p, period_tok, source)


def named_output(p: Cursor, named: tuple[str, str], period_tok: Token | None, start: Token) -> A.Node:
    """ "%D", "the signal line of MACD(12, 26, 9)": an indicator's output said by its own name."""
    key, output = named
    params = parameters(p, period_tok)
    subject = p.subjects[-1] if p.subjects else p.last_subject
    if (  # "StochRSI %K crosses above %D": the subject's own %D
        not params
        and isinstance(subject, A.Ind)
        and subject.name in ("stoch", "stochrsi")
        and output in SPECS[subject.name].outputs
    ):
        return A.Ind(subject.name, subject.params, output, subject.source)
    return check_indicator(key, params, output, None, p.text, start, p.toks[p.i - 1].end)


def relative_to_coin(p: Cursor, first: Token, start: Token, source: A.Node | None) -> A.Node | None:
    """ "relative strength against BTC" is not the RSI: refused."""
    if first.text == "relative" and p.peek().text in RS_LINKS:
        p.fail(RELATIVE_STRENGTH, first, suggestion="")
    return None


def roc_over_time(p: Cursor, first: Token, start: Token, source: A.Node | None) -> A.Node | None:
    """ "the rate of change over 4 hours": over a span of time (`roct`)."""
    if time_span_at(p, 1) is None or p.peek().text not in ("over", "in"):
        return None
    p.i += 1
    minutes = time_span(p)
    minute_tok = Token(NUM, str(minutes), start.pos, start.end, value=float(minutes))
    src = series_source(p) if source is None else source
    return check_indicator("roct", [minute_tok], "", src, p.text, start, p.toks[p.i - 1].end)


def relative_period(p: Cursor, params: list[Token], start: Token) -> list[Token]:
    """ "z-score of price relative to its 50-period moving average": over that period."""
    if params or not p.at("relative"):
        return params
    p.i += 1
    p.accept("its")
    ref = p.postfix()
    if not (isinstance(ref, A.Ind) and ref.name == "sma"):
        p.fail("a z-score is measured from a simple moving average", start)
    return [Token(NUM, str(ref.params[0]), start.pos, start.end, value=float(ref.params[0]))]


def band_width(p: Cursor, params: list[Token], start: Token) -> list[Token]:
    """ "the lower Bollinger band with 3 standard deviations": the multiplier."""
    if not (
        p.at("with")
        and p.peek(1).kind == NUM
        and not p.peek(1).pct
        and any(phrase_at(p, 2, w) for w in STD_WORDS)
    ):
        return params
    p.i += 1
    width = p.take()
    p.match(STD_WORDS)
    default = Token(NUM, "20", width.pos, width.end, value=20.0)
    return [params[0] if params else default, width]


def qualified(p: Cursor, period_tok: Token | None, source: A.Node | None) -> A.Node:
    """ "fast EMA(12)", "slow SMA 50", "fast stochastic": the word must agree with what follows."""
    word = p.take()
    node = indicator(p, period_tok, source)
    stoch = isinstance(node, A.Ind) and node.name == "stoch"
    if isinstance(node, A.Ind) and stoch and node.params[1:] == (3, 3) and word.text == "fast":
        # The fast stochastic is %K without smoothing (TA-Lib STOCHF): slow_k = 1.
        return A.Ind("stoch", (node.params[0], 1, 3), node.output, node.source)
    if stoch and word.text == "slow":
        return node
    if not (isinstance(node, A.Ind) and node.name in SPEED_NAMED):
        p.fail(f"{word.text!r} applies to moving averages and the stochastic, not here", word)
    assert isinstance(node, A.Ind)
    said = p.text[word.end : p.toks[p.i - 1].end]
    if not any(ch.isdigit() for ch in said):
        p.fail(
            f"{word.text!r} {SPECS[node.name].display} names no period: write it, as in "
            f"'EMA(12) crosses above EMA(26)'",
            word,
        )
    p.speeds[node] = (word.text, word)
    return node


def check_speeds(p: Cursor, node: A.Node) -> None:
    """In "fast X crosses above slow Y" the fast one must have the shorter period."""
    if not isinstance(node, A.Compare | A.Cross):
        return
    sides = [p.speeds.get(n) for n in (node.left, node.right)]
    if None in sides or sides[0][0] == sides[1][0]:  # type: ignore[index]
        return
    fast, slow = (node.left, node.right) if sides[0][0] == "fast" else (node.right, node.left)  # type: ignore[index]
    assert isinstance(fast, A.Ind) and isinstance(slow, A.Ind)
    if fast.params[0] >= slow.params[0]:
        p.fail(
            f"the 'fast' {SPECS[fast.name].display}({fmt_num(fast.params[0])}) is not faster than the "
            f"'slow' {SPECS[slow.name].display}({fmt_num(slow.params[0])}): swap the periods",
            sides[0][1],  # type: ignore[index]
        )


def signal_line(p: Cursor) -> A.Node:
    """ "MACD crosses above (its) signal (line)": the signal of the subject's MACD."""
    p.i += 1
    p.accept("line")
    macd = next((s for s in reversed(p.subjects) if isinstance(s, A.Ind) and s.name == "macd"), None)
    params = macd.params if macd is not None else SPECS["macd"].defaults()
    return A.Ind("macd", params, "signal")


def unknown(p: Cursor, tok: Token) -> None:
    if any(t.text in RS_WORDS for t in p.toks) or (tok.kind == WORD and tok.text in COIN_WORDS):
        p.fail(RELATIVE_STRENGTH, tok, suggestion="")
    tok = next((t for t in p.toks if t.text in TIMEFRAME_WORDS and t.kind == WORD), tok)
    if tok.text in TIMEFRAME_WORDS:
        p.fail(
            f"the timeframe {tok.text!r} is not supported: say daily, weekly, hourly or one such as 4h",
            tok,
        )
    if tok.kind == END:
        p.fail("expected a value (a price, an indicator or a number)")
    if tok.kind == WORD and tok.text in CONNECTIVES:
        dangling(p, tok)
    if tok.kind != WORD:
        p.fail("expected a value", tok)
    p.fail(f"unknown indicator or value {tok.text!r}", tok, suggestion=closest(tok.text, KNOWN_PHRASES))


def outputs(p: Cursor, key: str, output: str) -> str:
    table = OUTPUT_WORDS.get(key, {})
    while True:
        found = p.match(table) if table else None
        if found is not None:
            output = found
        elif p.peek().text in NOISE_AFTER:
            p.i += 1
        else:
            return output


def parameters(p: Cursor, period_tok: Token | None) -> list[Token]:
    """The indicator's parameters after its name: the first form of `PARAM_FORMS` its next
    word starts that fits ("(20, 2)", "period 3", "14", "over 20 candles"), after a number
    said before the name (``period_tok``)."""
    out = [period_tok] if period_tok is not None else []
    tok = p.peek()
    for form in PARAM_FORMS.get(NUM if tok.kind == NUM else tok.text, ()):
        if form(p, out):
            break
    return out


def period_phrase(p: Cursor) -> Token:
    p.i += 1
    while p.peek().text in PERIOD_WORDS:
        if p.peek().text != "period":
            p.period_word = p.peek().text
        p.i += 1
    tok = p.take()
    p.i += 1  # "candle"
    return tok


def series_source(p: Cursor) -> A.Node | None:
    sourced_number = p.peek(1).kind == NUM and p.peek(2).text == "candle" and starts_indicator(p, 3)
    if p.at("of") and (p.peek(1).kind != NUM or sourced_number) and not at_period_phrase(p):
        p.i += 1
        return p.postfix()
    if p.at("volume"):
        p.i += 1
        return A.Field("volume")
    return None


def range_indicator(p: Cursor, period_tok: Token | None, start: Token) -> A.Node:
    key = "max" if p.take().text == "highest" else "min"
    source: A.Node = A.Field("high" if key == "max" else "low")
    if p.peek().kind in (WORD, LPAREN) and not at_period_phrase(p):
        p.range_depth += 1
        try:
            source = p.postfix()
        finally:
            p.range_depth -= 1
    p.period_word = ""
    params = parameters(p, period_tok)
    word = p.period_word
    including = accept_including(p)
    node = check_indicator(key, params, "", source, p.text, start, p.toks[p.i - 1].end)
    return range_window(p, node, word, including, start)


def fmt_num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def in_parens(p: Cursor, out: list[Token]) -> bool:
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


def said_period(p: Cursor, out: list[Token]) -> bool:
    """ "RSI period 3", "EMA period 100" """
    if p.at("candle") and p.peek(1).kind == NUM and not p.peek(1).pct and not out:
        p.i += 1
        out.append(p.take())
        return True
    return False


def bare_number(p: Cursor, out: list[Token]) -> bool:
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


def period_words(p: Cursor, out: list[Token]) -> bool:
    """ "over the last 20 candles", "of 14 periods" """
    if not out and not p.range_depth and at_period_phrase(p):
        out.append(period_phrase(p))
        return True
    return False


SpeedLead = Callable[[Cursor, Token | None, A.Node | None], A.Node | None]
SPEED_LEADS: dict[str, SpeedLead] = {
    "fast": qualified,
    "slow": qualified,
    "short": speed_word,
    "long": speed_word,
}
"""A word before an indicator's name that says its speed -> the rule that reads it."""
KeyRead = Callable[[Cursor, Token, Token, A.Node | None], A.Node | None]
KEY_READS: dict[str, KeyRead] = {"rsi": relative_to_coin, "roc": roc_over_time}
"""An indicator (its key) -> the rule of a phrase only its name starts, tried before its parameters
(the name's first token, the indicator's first token and the series it is of)."""
KeyParams = Callable[[Cursor, list[Token], Token], list[Token]]
KEY_PARAMS: dict[str, KeyParams] = {"zscore": relative_period, "stddev": relative_period, "bb": band_width}
"""An indicator (its key) -> the rule of the parameters said after its series."""

PARAM_FORMS: dict[str, tuple[Callable[[Cursor, list[Token]], bool], ...]] = {
    LPAREN: (in_parens,),
    "candle": (said_period,),
    NUM: (bare_number,),
    **{word: (period_words,) for word in ("of", "over", "for", "in", "with")},
}
"""The word after an indicator's name -> the forms of its parameters it can start (``NUM`` for a
number, ``LPAREN`` a parenthesis); the first that fits is taken, else it has none there."""
