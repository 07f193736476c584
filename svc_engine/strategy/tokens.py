"""Tokenizer: a trader's sentence -> tokens with their character position.

Case is folded, `the`/`a`/`is` and similar fillers are dropped, plurals and verb forms are reduced to
one stem (`crosses` -> `cross`, `candles` -> `candle`), number words become numbers, and a number
may carry `%`. Positions index the original text so errors can point at it.

Example:
    >>> [t.text for t in tokenize("RSI(14) crosses above 30%")]
    ['rsi', '(', '14', ')', 'cross', 'above', '30%', '']
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_engine.strategy.errors import StrategyCompileError

NUM, WORD, OP, LPAREN, RPAREN, COMMA, END = "num", "word", "op", "(", ")", ",", "end"

FILLERS = frozenset(
    [
        "the",
        "a",
        "an",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "does",
        "do",
        "did",
        "it",
        "their",
        "than",
        "to",
        "that",
        "which",
        "currently",
        "candlestick",
        # Words of rule lists that name nothing to compute (issue 29): "the price must be above",
        # "the 5-day RSI reading", "three trading days ago", "today's open", "default stop loss".
        "must",
        "should",
        "reading",
        "trading",
        "there",
        "today",
        "default",
        "minimum",
    ]
)

STEMS: dict[str, str] = {
    **{w: "cross" for w in ("crosses", "crossed", "crossing")},
    **{w: "break" for w in ("breaks", "broke", "breaking")},
    **{
        w: "rise"
        for w in (
            "rises",
            "rose",
            "rising",
            "risen",
            "increases",
            "increase",
            "increasing",
            "gains",
            "gained",
            "jumps",
            "jumped",
            "surges",
            "surged",
            "rallies",
            "rallied",
        )
    },
    **{
        w: "fall"
        for w in (
            "falls",
            "fell",
            "falling",
            "fallen",
            "decreases",
            "decrease",
            "decreasing",
            "drops",
            "dropped",
            "drop",
            "dropping",
            "dips",
            "dipped",
            "loses",
            "lost",
            "dumps",
            "dumped",
            "plunges",
            "plunged",
            "sinks",
            "sank",
            "declines",
            "declined",
        )
    },
    **{
        w: "turn"
        for w in ("turns", "turned", "turning", "becomes", "become", "goes", "go", "flips", "flipped", "flip")
    },
    **{w: "make" for w in ("makes", "made", "making", "prints", "print", "hits", "hit", "sets")},
    **{w: "return" for w in ("returns", "returned", "returning", "retests", "retest", "comes")},
    **{w: "candle" for w in ("candles", "bars", "bar", "periods", "period", "days", "day", "sessions")},
    "soldier": "soldiers",
    "crow": "crows",
    "stars": "star",
    "hammers": "hammer",
    "dojis": "doji",
    "patterns": "pattern",
    "gaps": "gap",
    "gapped": "gap",
    "gapping": "gap",
    "points": "point",
    "pts": "point",
    "pips": "point",
    "pip": "point",
    "bands": "band",
    "channels": "channel",
    "lines": "line",
    "times": "times",
    "lows": "low",
    "highs": "high",
    "closes": "close",
    "opens": "open",
    "averages": "average",
    "equals": "equal",
    "stays": "stay",
    "closed": "close",
    "touches": "touch",
    "touched": "touch",
    "touching": "touch",
    "remains": "stay",
    # Spans of time and days of the week (issue 29): "in 4 hours", "on Mondays".
    **{w: "hour" for w in ("hours", "hr", "hrs")},
    **{w: "minute" for w in ("minutes", "mins", "min")},
    "weeks": "week",
    "deviations": "deviation",
    "devs": "dev",
    "sigmas": "sigma",
    **{d + "s": d for d in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")},
    "weekends": "weekend",
    "preceding": "previous",
    "purchase": "entry",
    "losses": "loss",
    "profits": "profit",
    **{w: "fill" for w in ("fills", "filled", "filling")},
    **{w: "touch" for w in ("tags", "tagged", "tag")},
    **{w: "pull" for w in ("pulls", "pulled", "pulling")},
    "stops": "stop",
    "decline": "fall",
    "positions": "position",
    **{w: "reach" for w in ("reaches", "reached", "reaching")},
    **{w: "spike" for w in ("spikes", "spiked", "spiking")},
    **{w: "move" for w in ("moves", "moved")},
    "weekdays": "weekday",
}

NUMBER_WORDS: dict[str, float] = {
    w: float(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
} | {"twenty": 20.0, "fifty": 50.0, "hundred": 100.0}
# "down for the third day in a row": an ordinal counts the candles ("first" stays a word).
ORDINAL_WORDS = {
    w: float(i)
    for i, w in enumerate(
        ["second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"], 2
    )
}
MULTIPLIER_WORDS = {"twice": 2.0, "double": 2.0, "triple": 3.0}

_SYMBOL_WORDS = {"&": "and", "|": "or", "!": "not", ";": ","}
_OPS = (">=", "<=", "==", "=>", "=<", ">", "<", "=", "+", "-", "*", "/", ":")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, folded text, numeric value (numbers), percent flag and source span."""

    kind: str
    text: str
    pos: int
    end: int
    value: float = 0.0
    pct: bool = False


def tokenize(text: str) -> list[Token]:
    """Split `text` into tokens, ending with an END token; raises StrategyCompileError on a stray
    character.

    >>> [t.text for t in tokenize("the 50-period EMA's slope")]
    ['50', 'candle', 'ema', 'slope', '']
    """
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch in '"`':
            i += 1
        elif ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
            i = _number(text, i, out)
        elif ch.isalpha() or (ch == "%" and i + 1 < n and text[i + 1].isalpha()):
            i = _word(text, i, out)
        elif ch == "'":
            i = _apostrophe(text, i)
        elif ch in "+-" and _signed_di(text, i):
            out.append(Token(WORD, ch + "di", i, i + 3))
            i += 3
        elif ch == "-" and _is_hyphen(text, i):
            i += 1
        elif ch in "()[]":
            kind = LPAREN if ch in "([" else RPAREN
            out.append(Token(kind, kind, i, i + 1))
            i += 1
        elif ch == ",":
            out.append(Token(COMMA, ",", i, i + 1))
            i += 1
        elif ch in ".?":
            i += 1
        elif ch in _SYMBOL_WORDS:
            word = _SYMBOL_WORDS[ch]
            end = i + 2 if text[i : i + 2] in ("&&", "||") else i + 1
            out.append(Token(COMMA if word == "," else WORD, word, i, end))
            i = end
        else:
            op = next((o for o in _OPS if text.startswith(o, i)), None)
            if op is None:
                raise StrategyCompileError(
                    f"unexpected character {ch!r}", phrase=ch, position=i, suggestion=None
                )
            normal = {"=>": ">=", "=<": "<=", "==": "="}.get(op, op)
            out.append(Token(OP, normal, i, i + len(op)))
            i += len(op)
    out.append(Token(END, "", n, n))
    return out


def _number(text: str, i: int, out: list[Token]) -> int:
    start = i
    while i < len(text) and (text[i].isdigit() or text[i] in "._"):
        if text[i] == "." and not (i + 1 < len(text) and text[i + 1].isdigit()):
            break
        i += 1
    raw = text[start:i].replace("_", "")
    value = float(raw)
    pct = False
    if i < len(text) and text[i] == "%":
        pct = True
        i += 1
    out.append(Token(NUM, raw + ("%" if pct else ""), start, i, value=value, pct=pct))
    return i


def _word(text: str, i: int, out: list[Token]) -> int:
    start = i
    i += 1
    while i < len(text) and text[i].isalpha():
        i += 1
    word = text[start:i].lower()
    after = text[i + 1 : i + 2]
    if word == "di" and text[i : i + 1] in ("+", "-") and not after.isalnum():
        word = text[i] + word  # "DI+" is "+DI"
        i += 1
    elif word == "a" and text[i : i + 2].lower() == "/d" and not text[i + 2 : i + 3].isalpha():
        word = "a/d"
        i += 2
    elif text[i : i + 1] == "%" and not after.isalnum():
        word += "%"  # "ATR%"
        i += 1
    if word in ("hlc", "ohlc", "hl") and text[i : i + 1].isdigit():
        word += text[i]  # "hlc3"
        i += 1
    rest = text[i:].lstrip().lower()
    if word in ("double", "triple") and rest.startswith(("ema", "exponential")):
        out.append(Token(WORD, word, start, i))  # "double EMA" is DEMA, not 2 x EMA
    elif word in MULTIPLIER_WORDS:
        out.append(Token(NUM, word, start, i, value=MULTIPLIER_WORDS[word]))
        out.append(Token(WORD, "times", start, i))
    elif word in NUMBER_WORDS:
        out.append(Token(NUM, word, start, i, value=NUMBER_WORDS[word]))
    elif word in ORDINAL_WORDS and rest.startswith(("day", "candle", "bar", "session", "period", "week")):
        out.append(Token(NUM, word, start, i, value=ORDINAL_WORDS[word]))
    elif word == "percent" and out and out[-1].kind == NUM and not out[-1].pct:
        last = out.pop()
        out.append(Token(NUM, last.text + "%", last.pos, i, value=last.value, pct=True))
    elif word == "a" and out and out[-1].text in ("senkou", "span"):
        out.append(Token(WORD, word, start, i))  # "senkou span A" names a line
    elif word not in FILLERS:
        out.append(Token(WORD, STEMS.get(word, word), start, i))
    return i


def _apostrophe(text: str, i: int) -> int:
    # Possessive "'s" (candle's, EMA's) carries no meaning here.
    if text[i + 1 : i + 2].lower() == "s" and not text[i + 2 : i + 3].isalpha():
        return i + 2
    return i + 1


def _signed_di(text: str, i: int) -> bool:
    """ "+DI" / "-DI" written as one word (not "close - DI ...", which has a space)."""
    before = text[i - 1] if i > 0 else " "
    return text[i + 1 : i + 3].lower() == "di" and not text[i + 3 : i + 4].isalpha() and not before.isalnum()


def _is_hyphen(text: str, i: int) -> bool:
    """A '-' joining two words ("14-period", "x-over") rather than a minus sign."""
    before = text[i - 1] if i > 0 else " "
    after = text[i + 1] if i + 1 < len(text) else " "
    return before.isalnum() and after.isalpha()
