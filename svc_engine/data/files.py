"""The store's files: which keys name a series, and a Parquet write that never leaves half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from svc_engine.data.schema import TIMEFRAMES

ROW_GROUP = 65_536  # ~45 days of 1m candles: a range read skips the row groups it does not need


def is_series_key(key: str) -> bool:
    """Whether ``key`` names a series file: ``<market>/<symbol>/<timeframe>.parquet``.

    Example:
        >>> is_series_key("crypto/BTCUSDT/1h.parquet"), is_series_key("crypto/BTCUSDT/notes.txt")
        (True, False)
    """
    parts = key.split("/")
    return len(parts) == 3 and parts[2].endswith(".parquet") and parts[2][:-8] in TIMEFRAMES


def write_atomically(table: pa.Table, path: Path) -> None:
    """Write ``table`` to ``path`` as zstd Parquet through a temporary file and a rename, so a
    reader sees the old file or the new one, never half of one.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "crypto" / "X" / "1h.parquet"
        >>> write_atomically(pa.table({"a": [1]}), target); pq.read_table(target).num_rows
        1
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
