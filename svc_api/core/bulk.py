"""Statements over many keys at once: an ``IN`` list is cut into chunks that every backend takes
(SQLite's bound-parameter limit, PostgreSQL's plan cache for lists of similar length).

Example:
    >>> [list(c) for c in chunks(["a", "b", "c"], 2)]
    [['a', 'b'], ['c']]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

IN_CHUNK = 500
"""Keys bound in one ``IN (...)`` list."""


def chunks(items: Sequence[T], size: int = IN_CHUNK) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size``; see the module example."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
