"""Reading the corpus of issue 29 (`corpus/phrases.txt`) and checking one phrase against its meaning;
shared by `test_phrases.py` and the report it prints.

Example:
    >>> rows = read_phrases()
    >>> rows[0].source, rows[0].kind in KINDS
    ('connors-rsi2', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from svc_engine.strategy import Strategy, StrategyCompileError, compile_strategy

PHRASES = Path(__file__).parent / "corpus" / "phrases.txt"
KINDS = ("long", "short", "exit", "tp", "sl", "refused")
SHORT = {"market_type": "futures", "position_side": "short"}


@dataclass(frozen=True)
class Phrase:
    """One corpus line: its source, kind, the trader's words and the meaning they must compile to."""

    source: str
    kind: str
    text: str
    meaning: str
    line: int


def read_phrases(path: Path = PHRASES) -> list[Phrase]:
    """Every phrase of the corpus, each under the last ``[source]`` line above it."""
    out: list[Phrase] = []
    source = ""
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            source = line[1 : line.index("]")]
            continue
        head, meaning = line.split(" => ", 1)
        kind, text = (part.strip() for part in head.split(" | ", 1))
        if kind not in KINDS or not source:
            raise ValueError(f"{path.name}:{number}: kind {kind!r} or source missing")
        out.append(Phrase(source, kind, text, meaning.strip(), number))
    return out


def sources(path: Path = PHRASES) -> dict[str, str]:
    """Source id -> where its words come from."""
    out = {}
    for raw in path.read_text().splitlines():
        if raw.startswith("["):
            key, _, where = raw[1:].partition("]")
            out[key] = where.strip()
    return out


def compiled(p: Phrase) -> Strategy:
    """The strategy the phrase is part of: an entry as itself, an exit rule, take-profit or stop
    beside a plain entry (a short entry and its exits on futures)."""
    if p.kind in ("long", "short", "refused"):
        return compile_strategy(p.text, **(SHORT if p.kind == "short" else {}))
    if p.kind == "exit":
        return compile_strategy("close above SMA(20)", exit_condition=p.text)
    if p.kind == "tp":
        return compile_strategy("close above SMA(20)", p.text, "1%")
    return compile_strategy("close above SMA(20)", None, p.text)


def got(p: Phrase) -> str:
    """What the phrase compiles to, in the meaning's terms, or ``refused: <message>``."""
    try:
        strategy = compiled(p)
    except StrategyCompileError as err:
        return f"refused: {err}"
    if p.kind in ("long", "short", "refused"):
        return strategy.describe().split("; ")[0]
    return strategy.wording["exit" if p.kind == "exit" else p.kind]


def holds(p: Phrase) -> bool:
    """Whether the phrase compiles to its meaning (a `refused` one: is refused saying it)."""
    result = got(p)
    if p.kind == "refused":
        return result.startswith("refused: ") and p.meaning in result
    return result == p.meaning
