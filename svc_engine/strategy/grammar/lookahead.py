"""Look-ahead tests of the grammar: what follows at an offset from the cursor (a phrase, an
indicator name, a timeframe, a span of time, a comparison word, a standard-deviation band, a trend
line, an entry-price clause), read without consuming, and the refusals of a misplaced connective or
of a comparison without its second side. Every rule module may call them; they call no rule.

Example:
    >>> from svc_engine.strategy.parser import Parser
    >>> timeframe_at(Parser("the 4h close")), starts_indicator(Parser("close above EMA(9)"), 2)
    (('4h', 2), True)
"""

from __future__ import annotations

from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.words import (
    AND_WORDS,
    COLORS,
    CONNECTIVES,
    DIRECTIONS,
    DOWN_WORDS,
    ENTRY_WORDS,
    GAP_SIZE_WORDS,
    PERIOD_WORDS,
    TF_ADJECTIVES,
    TF_UNITS,
    UP_WORDS,
)
from svc_engine.strategy.tokens import COMMA, END, LPAREN, NUM, WORD, Token
from svc_engine.strategy.vocab import (
    ALIASES,
    COMPARATORS,
    DAY_NAMES,
    NAMED_OUTPUTS,
    PREFIX_OUTPUTS,
    TIME_UNITS,
)

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


def calendar_at(p: Cursor, k: int) -> bool:
    """A day name or weekend word at offset k ("... on Friday")."""
    return p.peek(k).text in DAY_NAMES or p.peek(k).text in ("weekend", "weekday")


def dangling(p: Cursor, tok: Token) -> None:
    """A connective where a condition should be: at the start, or right after another one."""
    before = p.toks[p.i - 1] if p.i > 0 else None
    if before is None or before.pos < 0:
        p.fail(f"the condition starts with {tok.text!r}, which joins two conditions: remove it", tok)
    if before.text in CONNECTIVES | {","}:
        pair = p.text[before.pos : tok.end]
        p.fail(f"doubled connective {pair!r}: there is no condition between them, remove one", tok)
    p.fail(f"expected a condition before {tok.text!r}", tok)


def at_time_exit(p: Cursor, k: int = 0) -> bool:
    """ "after N candles" at offset k (a holding time in an exit rule)."""
    after = p.peek(k).text == "after"
    return after and p.peek(k + 1).kind == NUM and p.peek(k + 2).text == "candle"


def directional(p: Cursor, k: int) -> bool:
    """Whether an above/below word follows at offset `k` (after an optional "back")."""
    k += p.peek(k).text == "back"
    return p.peek(k).text in UP_WORDS | DOWN_WORDS


def at_points_offset(p: Cursor) -> bool:
    return p.peek(1).text == "point" and p.peek(2).text in UP_WORDS | DOWN_WORDS


def at_comparison(p: Cursor, k: int) -> bool:
    """A comparison word at offset k ("closes below", "closes < 0.2", "closes up 4 days")."""
    return any(phrase_at(p, k, key) for key in COMPARATORS) or p.peek(k).text in (
        "between",
        "up",
        "down",
        "within",
        "cross",
        "back",
    )


def no_second_side(p: Cursor, what: str) -> None:
    """Refuse a comparison whose second side is missing ("close is above and ...")."""
    tok = p.peek()
    if tok.kind == END or (tok.text in AND_WORDS | {"or", "then", "after"} and tok.kind in (WORD, COMMA)):
        p.fail(
            f"the comparison {what!r} has no second side: say what it is compared with "
            "(a number, a price or an indicator)"
        )


def gap_as_value(p: Cursor) -> bool:
    """ "gap size is larger than 1 ATR(14)", "the gap is at least 0.5 times ATR(14)": the gap's
    size (open minus the previous close) compared, not the event "gaps up"."""
    k = 1 if p.at("candle", "gap") else 0
    nxt = p.peek(k + 1)
    return nxt.text in GAP_SIZE_WORDS


def candle_run_at(p: Cursor) -> str | None:
    """The colour of "N (consecutive) green candles" at the cursor, or None."""
    k = 2 if p.peek(1).text == "consecutive" else 1
    color = COLORS.get(p.peek(k).text)
    return color if color and p.peek(k + 1).text == "candle" else None


def at_trend_line(p: Cursor) -> bool:
    return p.at("trend", "line") or p.at("trendline") or p.at("trend")


def skip_trend_line(p: Cursor) -> None:
    if not (p.accept("trend", "line") or p.accept("trendline") or p.accept("trend")):
        p.fail("expected 'trend line'")


def std_count_at(p: Cursor, k: int) -> bool:
    """A plain number and a standard-deviation word at offset k ("2 standard deviations")."""
    tok = p.peek(k)
    if tok.kind != NUM or tok.pct:
        return False
    return any(phrase_at(p, k + 1, key) for key in STD_WORDS)


def at_std_band(p: Cursor, k: int = 0) -> bool:
    """ "2 standard deviations below/above ..." at offset k."""
    if not std_count_at(p, k):
        return False
    length = max(len(key) for key in STD_WORDS if phrase_at(p, k + 1, key))
    return p.peek(k + 1 + length).text in UP_WORDS | DOWN_WORDS


def timeframe_at(p: Cursor, k: int = 0) -> tuple[str, int] | None:
    """A timeframe at offset k: "daily", "weekly", "hourly", "4h", "4-hour", "15m", "1w";
    returns (timeframe, tokens) or None."""
    from svc_engine.data.schema import TIMEFRAMES  # the data layer's list of timeframes

    tok = p.peek(k)
    if tok.kind == WORD and tok.text in TF_ADJECTIVES:
        return TF_ADJECTIVES[tok.text], 1
    unit = p.peek(k + 1)
    if tok.kind == NUM and not tok.pct and tok.value == int(tok.value) and unit.text in TF_UNITS:
        name = f"{int(tok.value)}{TF_UNITS[unit.text]}"
        if name in TIMEFRAMES:
            return name, 2
    return None


def alias_length(p: Cursor) -> int:
    """Words of the longest indicator name at the cursor ("volume weighted average price" is 4)."""
    return max((len(key) for key in ALIASES if p.at(*key)), default=0)


def paren_after_name(p: Cursor) -> bool:
    """An indicator name at the cursor followed by its own parameters in parentheses."""
    length = max((len(key) for key in ALIASES if p.at(*key)), default=0)
    return length > 0 and p.peek(length).kind == LPAREN


def starts_indicator(p: Cursor, k: int) -> bool:
    word = p.peek(k).text
    if word in PREFIX_OUTPUTS or word in ("highest", "lowest"):
        return True
    if word == "volume" and p.peek(k + 1).text in {w[0] for w in ALIASES}:
        return True
    return any(phrase_at(p, k, key) for key in (*ALIASES, *NAMED_OUTPUTS))


def phrase_at(p: Cursor, k: int, words: tuple[str, ...]) -> bool:
    """Whether the words of `words` follow at offset k (a whole alias, not just its first word)."""
    return all(p.peek(k + j).text == w for j, w in enumerate(words))


def time_span_at(p: Cursor, k: int = 0) -> tuple[int, int] | None:
    """A span of time at offset k, after optional last/past/previous: "4 hours", "30 minutes",
    "2 weeks", "24h", "hour" (one); returns (minutes, tokens) or None. A day is a candle."""
    j = k
    while p.peek(j).text in PERIOD_WORDS:
        j += 1
    tok = p.peek(j)
    if tok.kind == NUM and not tok.pct and p.peek(j + 1).text in TIME_UNITS:
        if tok.value != int(tok.value) or tok.value < 1:
            return None
        return int(tok.value) * TIME_UNITS[p.peek(j + 1).text], j + 2 - k
    if tok.kind == WORD and tok.text in TIME_UNITS and tok.text != "h":
        return TIME_UNITS[tok.text], j + 1 - k
    return None


def at_period_phrase(p: Cursor) -> bool:
    k = 1 if p.peek().text in ("of", "over", "for", "in", "with") else 0
    if k == 0:
        return False
    while p.peek(k).text in PERIOD_WORDS:
        k += 1
    return (
        p.peek(k).kind == NUM
        and p.peek(k + 1).text == "candle"
        and p.peek(k + 2).text != "ago"
        and not starts_indicator(p, k + 2)  # "of the 1-day rate of change": a source
    )


def at_entry_clause_after(p: Cursor, k: int) -> bool:
    return p.peek(k).text in ENTRY_WORDS and p.peek(k).kind == WORD


def at_entry_clause(p: Cursor) -> bool:
    word = p.peek().text
    if word not in ENTRY_WORDS or p.peek().kind != WORD:
        return False
    return word != "entry" or p.peek(1).text in ("at", "price", "=")


def direction_at(p: Cursor) -> str | None:
    """The side a direction word at the cursor names ("above", "below"), or None."""
    return DIRECTIONS.get(p.peek().text) if p.at_any(DIRECTIONS) else None
