"""The arrays of a polars frame already seen: converted once, kept while the frame lives and is
unchanged, and what was computed from it once (its validation) kept with them.

A frame read from Parquet holds its columns in many chunks, so every ``Series.to_numpy`` is a
copy (34 ms for a 4.35 M-row column here); evaluating a strategy and then simulating it would copy
each column again and validate the candles again. Here each column's contiguous array is made once
per frame and reused by every later call on that frame.

Whether a column is still the one converted is told by its buffers: a polars column is a list of
immutable Arrow chunks, and the entry holds the column it fingerprinted, so its buffers stay
allocated and any change to the frame's column (``replace_column``, ``df[i, c] = x``, an append)
gives it chunks at other addresses (polars writes in place only into a buffer nobody else holds).
Columns with nulls are not kept (their conversion fills them) and are converted at every call.
The entries of a frame go when it is garbage collected, and at most `MAX_FRAMES` frames are kept.

Example:
    >>> k = pl.concat([pl.DataFrame({"close": [1.0]}), pl.DataFrame({"close": [2.0]})], rechunk=False)
    >>> column(k, "close") is column(k, "close")
    True
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import polars as pl

#: Frames whose arrays are kept at once (the newest used); each holds a copy of its columns only
#: when they came in several chunks (a single-chunk column's array is a view of it).
MAX_FRAMES = 4

_lock = threading.RLock()  # re-entrant: a frame's weakref callback may run inside a locked call
_entries: OrderedDict[int, _Entry] = OrderedDict()


class _Entry:
    """What is kept of one frame: per column (fingerprint, held column, array), and derived values
    keyed by a name and the fingerprints they depend on."""

    __slots__ = ("columns", "derived", "ref")

    def __init__(self, ref: weakref.ref[pl.DataFrame]) -> None:
        self.ref = ref
        self.columns: dict[str, tuple[tuple[Any, ...], pl.Series, np.ndarray]] = {}
        self.derived: dict[Hashable, tuple[tuple[Any, ...], list[pl.Series], Any]] = {}


def _fingerprint(series: pl.Series) -> tuple[Any, ...] | None:
    """(dtype, (address, length) of each chunk), or None for a column that is not kept."""
    if series.null_count() or not (series.dtype.is_numeric() or series.dtype.is_temporal()):
        return None
    chunks = series.get_chunks()
    return (series.dtype, *((c.to_numpy().__array_interface__["data"][0], c.len()) for c in chunks))


def _entry(frame: pl.DataFrame) -> _Entry:
    key = id(frame)
    entry = _entries.get(key)
    if entry is None or entry.ref() is not frame:
        entry = _Entry(weakref.ref(frame, lambda _, key=key: _drop(key)))
        _entries[key] = entry
        while len(_entries) > MAX_FRAMES:
            _entries.popitem(last=False)
    _entries.move_to_end(key)
    return entry


def _drop(key: int) -> None:
    if _lock is None:  # interpreter shutdown: the module's globals are gone already
        return
    with _lock:
        entry = _entries.get(key)
        if entry is not None and entry.ref() is None:
            del _entries[key]


def column(
    frame: pl.DataFrame, name: str, convert: Callable[[pl.Series], np.ndarray] | None = None
) -> np.ndarray:
    """The column ``name`` of ``frame`` as a contiguous, read-only array: ``convert(series)``
    (default ``np.ascontiguousarray(series.to_numpy())``), made once per frame and column version.

    Example:
        >>> column(pl.DataFrame({"t": [3, 4]}), "t").tolist()
        [3, 4]
    """
    series = frame[name]
    make = convert or (lambda s: np.ascontiguousarray(s.to_numpy()))
    fp = _fingerprint(series) if series.n_chunks() > 1 else None  # one chunk: a view, nothing to keep
    if fp is None:
        return make(series)
    with _lock:
        entry = _entry(frame)
        kept = entry.columns.get(name)
        if kept is not None and kept[0] == fp:
            return kept[2]
    out = make(series)
    if out.flags.writeable:
        out.flags.writeable = False  # shared by every caller from now on
    with _lock:
        _entry(frame).columns[name] = (fp, series, out)
    return out


def derived(frame: pl.DataFrame, key: Hashable, names: tuple[str, ...], compute: Callable[[], Any]) -> Any:
    """``compute()`` once per frame, ``key`` and version of the columns ``names`` it reads (the
    validation of a series, for instance); ``compute`` runs again when one of them changed, and at
    every call when one is not kept (nulls).

    Example:
        >>> k = pl.DataFrame({"close": [1.0]})
        >>> calls = []
        >>> _ = [derived(k, "n", ("close",), lambda: calls.append(1)) for _ in range(2)]
        >>> len(calls)
        1
    """
    held = [frame[n] for n in names]  # kept with the value: their buffers stay allocated
    prints = tuple(_fingerprint(s) for s in held)
    if any(p is None for p in prints):
        return compute()
    with _lock:
        kept = _entry(frame).derived.get(key)
        if kept is not None and kept[0] == prints:
            return kept[2]
    value = compute()
    with _lock:
        _entry(frame).derived[key] = (prints, held, value)
    return value
