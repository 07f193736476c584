"""Compile errors that quote the phrase, point at it and suggest the nearest supported wording.

Example:
    >>> err = StrategyCompileError("unknown word 'rsl'", phrase="rsl", position=0, suggestion="rsi")
    >>> str(err)
    "unknown word 'rsl' (did you mean 'rsi'?)"
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class StrategyCompileError(ValueError):
    """A condition that does not compile.

    Attributes:
        phrase: the offending words as written ("" for an empty condition).
        position: character offset of the phrase in its condition (None when not positional).
        suggestion: the closest supported wording, or None.
        field: which condition failed: "entry", "tp", "sl" or "" (strategy-level).
    """

    def __init__(
        self,
        message: str,
        *,
        phrase: str = "",
        position: int | None = None,
        suggestion: str | None = None,
        field: str = "",
    ) -> None:
        self.message = message
        self.phrase = phrase
        self.position = position
        self.suggestion = suggestion
        self.field = field
        text = message if suggestion is None else f"{message} (did you mean {suggestion!r}?)"
        super().__init__(text)

    def in_field(self, field: str) -> StrategyCompileError:
        """The same error, labelled with the condition it came from.

        >>> str(StrategyCompileError("empty condition").in_field("sl"))
        'sl_condition: empty condition'
        """
        message = (
            self.message
            if self.message.startswith(f"{field}_condition")
            else (f"{field}_condition: {self.message}")
        )
        return StrategyCompileError(
            message, phrase=self.phrase, position=self.position, suggestion=self.suggestion, field=field
        )


def closest(word: str, vocabulary: Iterable[str]) -> str | None:
    """The vocabulary entry nearest to `word`, or None when nothing is close.

    >>> closest("bolinger", ["bollinger", "keltner"])
    'bollinger'
    """
    matches = difflib.get_close_matches(word, sorted(set(vocabulary)), n=1, cutoff=0.6)
    return matches[0] if matches else None
