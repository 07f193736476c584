"""Where a job's results live in the object store, and how they are written and read back.

A job stores its whole result at :func:`result_key`; a portfolio also stores each coin's part at
:func:`coin_key`, so ``coin_result`` reads one small object.

Example:
    >>> job_keys("AB12CD", "bt_1", ["BTCUSDT"], "portfolio")
    ['backtests/AB12CD/bt_1/result.json', 'backtests/AB12CD/bt_1/coins/BTCUSDT.json']
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from svc_api.core.errors import NotFound
from svc_api.core.objectstore import ObjectNotFound, ObjectStore


def result_key(svc_id: str, job_id: str) -> str:
    """Object key of a job's result.

    Example:
        >>> result_key("AB12CD", "bt_1")
        'backtests/AB12CD/bt_1/result.json'
    """
    return f"backtests/{svc_id}/{job_id}/result.json"


def coin_key(svc_id: str, job_id: str, symbol: str) -> str:
    """Object key of one coin's result inside a portfolio job.

    Example:
        >>> coin_key("AB12CD", "bt_1", "BTCUSDT")
        'backtests/AB12CD/bt_1/coins/BTCUSDT.json'
    """
    return f"backtests/{svc_id}/{job_id}/coins/{symbol}.json"


def job_keys(svc_id: str, job_id: str, symbols: list[str], kind: str) -> list[str]:
    """Every object key a job may have written; see the module example."""
    keys = [result_key(svc_id, job_id)]
    if kind == "portfolio":
        keys += [coin_key(svc_id, job_id, s) for s in symbols]
    return keys


def put_all(objects: ObjectStore, items: dict[str, Any]) -> list[str]:
    """Store every ``key: value`` (as :func:`dumps`), all or none: when one put fails (a full disk),
    the ones already written are removed before the error goes on, so a failed job keeps no object.

    Example:
        >>> import tempfile
        >>> from svc_api.core.objectstore import LocalObjectStore
        >>> put_all(LocalObjectStore(tempfile.mkdtemp()), {"a.json": [1], "b.json": {"x": 2}})
        ['a.json', 'b.json']
    """
    written: list[str] = []
    try:
        for key, value in items.items():
            objects.put(key, dumps(value))
            written.append(key)
    except BaseException:
        for key in written:
            with contextlib.suppress(Exception):
                objects.delete(key)
        raise
    return written


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (NaN refused: the engine already turned them into null).

    Example:
        >>> dumps({"a": [1, 2.5]})
        b'{"a":[1,2.5]}'
    """
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()


def read_json(objects: ObjectStore, key: str) -> Any:
    """A stored JSON object; 404 when it is gone.

    Example:
        >>> import tempfile
        >>> from svc_api.core.objectstore import LocalObjectStore
        >>> read_json(LocalObjectStore(tempfile.mkdtemp()), "x.json")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: the result object of this job is gone
    """
    try:
        return json.loads(objects.get(key))
    except ObjectNotFound:
        raise NotFound("the result object of this job is gone") from None
