"""Series already loaded: the frame of a ``load_klines`` request, kept while its file is unchanged.

Reading 4.35 M 1m candles from Parquet takes longer than backtesting them; a notebook backtests
one symbol many times. A request (store, series, range, warm-up) gives the frame it gave before as
long as the file and its tail have the same stat (``mtime_ns``, size) and the frame was not changed
in place (its columns still have the buffers they had: see `svc_engine.data.arrays`). The same
frame object comes back, so the arrays and the validation kept for it serve every later backtest.
At most `MAX_SERIES` requests are kept, the newest used.

Example:
    >>> calls = []
    >>> make = lambda: calls.append(1) or pl.DataFrame({"close": [1.0]})
    >>> get("k", (1, 2), make) is get("k", (1, 2), make), len(calls)
    (True, 1)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import polars as pl

#: Loaded requests kept at once (a 4.35 M-row 1m series is about 210 MB).
MAX_SERIES = 2

_lock = threading.Lock()
_kept: OrderedDict[Hashable, tuple[Any, pl.DataFrame, tuple[Any, ...]]] = OrderedDict()


def _buffers(frame: pl.DataFrame) -> tuple[Any, ...]:
    return tuple(
        (name, tuple(c.to_numpy().__array_interface__["data"][0] for c in frame[name].get_chunks()))
        for name in frame.columns
    )


def get(request: Hashable, version: Any, load: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    """The frame ``load()`` gave for ``request`` at ``version``, loading it when there is none.

    Example:
        >>> get("k2", 1, lambda: pl.DataFrame({"a": [1]})).columns
        ['a']
    """
    with _lock:
        kept = _kept.get(request)
        if kept is not None and kept[0] == version and _buffers(kept[1]) == kept[2]:
            _kept.move_to_end(request)
            return kept[1]
    frame = load()
    with _lock:
        _kept[request] = (version, frame, _buffers(frame))
        _kept.move_to_end(request)
        while len(_kept) > MAX_SERIES:
            _kept.popitem(last=False)
    return frame


def clear() -> None:
    """Forget every loaded series (tests; memory).

    Example:
        >>> clear()
    """
    with _lock:
        _kept.clear()
