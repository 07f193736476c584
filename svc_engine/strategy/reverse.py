"""Stop-and-reverse in words: the phrase that makes a two-sided strategy close its position and
open the other side on each opposite signal (docs/strategy.md, docs/sim.md).

Accepted, case and punctuation free, alone (as an exit rule) or closing an entry sentence:
``reverse on the opposite signal`` (also ``signals``, ``an``/``each``/``every opposite signal``,
``reverse the position on ...``), ``stop and reverse`` (optionally ``on the opposite signal``),
``always in the market``; a leading ``and`` or comma is free.

Example:
    >>> split_reverse("SMA(10) crosses below SMA(20), and reverse on the opposite signal")
    ('SMA(10) crosses below SMA(20)', True)
    >>> split_reverse("stop and reverse"), split_reverse("close crosses above the parabolic stop and reverse")
    (('', True), ('close crosses above the parabolic stop and reverse', False))
"""

from __future__ import annotations

import re

from svc_engine.strategy.errors import StrategyCompileError

#: The canonical wording of stop-and-reverse (``describe()`` ends with it).
REVERSE_WORDS = "reverse on the opposite signal"

_OPPOSITE = r"on\s+(?:the\s+|an\s+|each\s+|every\s+)?opposite\s+signals?"
_PHRASE = re.compile(
    r"(?:^|[\s,;]+)(?:and\s+|then\s+)?"
    rf"(?:(?:stop\s+and\s+)?reverse(?:\s+the\s+position)?\s+{_OPPOSITE}"
    rf"|stop\s+and\s+reverse(?:\s+{_OPPOSITE})?"
    r"|(?:stay\s+)?always\s+in\s+the\s+market)"
    r"\s*[.!]?\s*$",
    re.IGNORECASE,
)


def split_reverse(text: str) -> tuple[str, bool]:
    """``text`` without a closing stop-and-reverse phrase, and whether it had one.

    Example:
        >>> split_reverse("buy when close > open; reverse on opposite signals.")
        ('buy when close > open', True)
    """
    match = _PHRASE.search(text)
    head = "" if match is None else text[: match.start()].rstrip(" ,;")
    if match is None or head.lower().endswith("parabolic"):  # the parabolic stop and reverse (SAR)
        return text, False
    return head, True


def refuse_reverse(text: str, field: str) -> None:
    """Refuse stop-and-reverse in one side's words: it needs the other side's signals.

    Example:
        >>> refuse_reverse("close > open", "entry")  # nothing to refuse
    """
    if split_reverse(text)[1]:
        raise StrategyCompileError(
            f"{field}_condition: 'reverse on the opposite signal' needs both sides; build it with "
            "sv.long_short(long_entry, short_entry, reverse=True) (or that phrase as its exit_condition)",
            phrase=text,
            position=0,
            field=field,
        )
