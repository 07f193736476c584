"""The hot tail of a series: closed candles appended after its Parquet history, readable at once.

Parquet files are written whole, so a candle a minute per series cannot go into them one by one. A
series' newest candles go instead into a small append-only file beside it,
``<market>/<SYMBOL>/.tail/<tf>.bin`` (for an ``s3://`` store: the same key under a local tail
directory), of fixed 56-byte records: ``open_time`` (int64 Unix ms), open, high, low, close, volume
(float64) and a checksum of those six words. An append is one ``write`` of whole records at the
end of the file; a reader takes the longest prefix of records whose checksums hold and whose times
rise, so a record torn by a crash (or a zero-filled one after a power cut) ends the tail there and
loses only that candle. The next append cuts such a torn end off before it writes.

Compaction (:meth:`DataStore.compact <svc_engine.data.store.DataStore.compact>`) merges the tail
into the Parquet file by the store's atomic replace, then empties the tail. A crash between the two
leaves candles that are in both; readers never see them twice, because a series is read as its
Parquet rows *before the tail's first candle* followed by the whole tail.

Example:
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "1m.bin"
    >>> append(path, np.array([0, 60_000]), np.array([[1.0, 1.2, 0.9, 1.1, 5.0]] * 2))
    >>> read(path)[0].tolist(), int(read(path)[1][1, 3] * 10)
    ([0, 60000], 11)
    >>> with open(path, "ab") as f: _ = f.write(b"torn")  # a crash in the middle of a record
    >>> len(read(path)[0])
    2
"""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

import numpy as np
import polars as pl

from svc_engine.data.schema import COLUMNS

WORDS = 7  # open_time, o, h, l, c, v, checksum
RECORD = WORDS * 8
_K = np.array(
    [
        0x9E3779B97F4A7C15,
        0xC2B2AE3D27D4EB4F,
        0x165667B19E3779F9,
        0xD6E8FEB86659FD93,
        0xFF51AFD7ED558CCD,
        0xC4CEB9FE1A85EC53,
    ],
    dtype=np.uint64,
)
_SALT = np.uint64(0x5356435441494C31)  # "SVCTAIL1": an all-zero record does not check


def _checksum(words: np.ndarray) -> np.ndarray:
    """A multiply-add hash of each row's six words (wrapping uint64), vectorised over rows."""
    with np.errstate(over="ignore"):
        return (words.view(np.uint64) * _K).sum(axis=1, dtype=np.uint64) ^ _SALT


def encode(open_time: np.ndarray, values: np.ndarray) -> bytes:
    """Records of candles: ``open_time`` (n,) int64 ms and ``values`` (n, 5) float64 OHLCV.

    Example:
        >>> len(encode(np.array([0]), np.ones((1, 5))))
        56
    """
    n = len(open_time)
    out = np.empty((n, WORDS), dtype=np.int64)
    out[:, 0] = open_time
    out[:, 1:6] = np.ascontiguousarray(values, dtype=np.float64).view(np.int64).reshape(n, 5)
    out[:, 6] = _checksum(np.ascontiguousarray(out[:, :6])).view(np.int64)
    return out.tobytes()


_MASK = (1 << 64) - 1
_KEYS = tuple(int(k) for k in _K)


def _open_time_of(record: bytes) -> int | None:
    """The open time of one record if its checksum holds (:func:`decode`'s test, in plain integers:
    the append path reads one record per series and NumPy's set-up would cost more than the sum).

    Example:
        >>> rec = encode(np.array([60_000]), np.ones((1, 5)))
        >>> _open_time_of(rec), _open_time_of(b"\\0" * RECORD), int(decode(rec)[0][0])
        (60000, None, 60000)
    """
    *words, check = struct.unpack("<7q", record)
    total = sum((w & _MASK) * k for w, k in zip(words, _KEYS, strict=True)) & _MASK
    return words[0] if (total ^ int(_SALT)) == (check & _MASK) else None


def decode(raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    """``(open_time, values)`` of the longest valid prefix of ``raw`` (see the module docstring).

    Example:
        >>> decode(b"\\0" * 56)[0].size  # zeros, as a power cut may leave them, are no candle
        0
    """
    n = len(raw) // RECORD
    words = np.frombuffer(raw, dtype=np.int64, count=n * WORDS).reshape(n, WORDS)
    good = _checksum(np.ascontiguousarray(words[:, :6])).view(np.int64) == words[:, 6]
    if n > 1:
        good[1:] &= np.diff(words[:, 0]) > 0
    bad = np.flatnonzero(~good)
    keep = int(bad[0]) if bad.size else n
    values = words[:keep, 1:6].copy().view(np.float64)
    return words[:keep, 0].copy(), values


def read(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The candles of a tail file (none when it does not exist).

    Example:
        >>> read(Path("/nonexistent.bin"))[0].size
        0
    """
    try:
        with open(path, "rb") as f:
            return decode(f.read())
    except FileNotFoundError:
        return np.empty(0, np.int64), np.empty((0, 5))


def last(path: Path) -> tuple[int, np.ndarray] | None:
    """The newest valid candle of a tail as ``(open_time, values)``, reading at most two records
    unless the end is torn (then the whole file, to find where the valid prefix ends).

    Example:
        >>> last(Path("/nonexistent.bin")) is None
        True
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            whole = size - size % RECORD
            if whole == 0:
                return None
            f.seek(whole - RECORD)
            t, v = decode(f.read(RECORD))
            if t.size == 0:  # a torn or damaged end: read everything
                f.seek(0)
                t, v = decode(f.read())
                if t.size == 0:
                    return None
            return int(t[-1]), v[-1]
    except FileNotFoundError:
        return None


class Appender:
    """A tail opened once for an append: :meth:`last` reads its newest candle, :meth:`write` adds
    records after the valid ones (a torn end found by :meth:`last` is cut off first). One ``open``
    per append keeps a live close of hundreds of series cheap. Hold the series lock around it.

    Example:
        >>> import tempfile
        >>> p = f"{tempfile.mkdtemp()}/s/1m.bin"
        >>> with Appender(p) as out:
        ...     out.last(), out.write(np.array([0]), np.ones((1, 5)))
        (None, None)
        >>> with Appender(p) as out:
        ...     out.last()
        0
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.fd = -1
        self.size = self.valid = 0

    def __enter__(self) -> Appender:
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self.size = self.valid = os.fstat(self.fd).st_size
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def last(self) -> int | None:
        """The open time of the newest valid candle, None when the tail holds none."""
        whole = self.size - self.size % RECORD
        newest = _open_time_of(os.pread(self.fd, RECORD, whole - RECORD)) if whole else None
        if whole != self.size or (whole and newest is None):  # a torn end: find where the valid prefix ends
            t = decode(os.pread(self.fd, self.size, 0))[0]
            self.valid = t.size * RECORD
            newest = int(t[-1]) if t.size else None
        return newest

    def write(self, open_time: np.ndarray, values: np.ndarray) -> None:
        """Append records (newer than :meth:`last`; the caller checks)."""
        if self.valid != self.size:
            os.ftruncate(self.fd, self.valid)
        _write_whole(self.fd, encode(open_time, values), self.valid)


def append(path: Path, open_time: np.ndarray, values: np.ndarray) -> None:
    """Append candles (newer than the tail's last one: the caller checks, under the series lock),
    first cutting off a torn end so that the new records follow valid ones.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "x" / "1h.bin"
        >>> append(p, np.array([3_600_000]), np.ones((1, 5))); p.stat().st_size
        56
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size % RECORD or (size and _torn_end(fd, size)):
            size = len(decode(os.pread(fd, size, 0))[0]) * RECORD
            os.ftruncate(fd, size)
        _write_whole(fd, encode(open_time, values), size)
    finally:
        os.close(fd)


def _write_whole(fd: int, data: bytes, size: int) -> None:
    """Write ``data`` at the end of a tail of ``size`` valid bytes, all of it or nothing. A full disk
    takes what fits and says so only by a short count: the tail is cut back to ``size`` and ENOSPC
    raised, so the caller never counts candles that are not there."""
    written = os.write(fd, data)
    if written != len(data):
        os.ftruncate(fd, size)
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} ({written} of {len(data)} bytes written)")


def _torn_end(fd: int, size: int) -> bool:
    return decode(os.pread(fd, RECORD, size - RECORD))[0].size == 0


def after(history: pl.LazyFrame, path: Path) -> pl.LazyFrame:
    """A series read whole: its history before the tail's first candle, then the tail (read now,
    the history when the scan runs; see the module docstring for why that order).

    Example:
        >>> h = pl.LazyFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...                   "close": [1.0], "volume": [1.0]})
        >>> after(h, Path("/nonexistent.bin")).collect().height
        1
    """
    t, v = read(path)
    if t.size == 0:
        return history
    live = pl.DataFrame({"open_time": t, **{c: v[:, i] for i, c in enumerate(COLUMNS[1:])}})
    return pl.concat([history.filter(pl.col("open_time") < int(t[0])), live.lazy()])


def stat(path: Path) -> tuple[int, int]:
    """``(mtime_ns, size)`` of a tail file, zeros when there is none.

    Example:
        >>> stat(Path("/nonexistent.bin"))
        (0, 0)
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return 0, 0
    return st.st_mtime_ns, st.st_size


def clear(path: Path, *, upto_ms: int) -> None:
    """Drop the tail's candles opening at or before ``upto_ms`` (they are in the Parquet file now).

    The rest is written to a temporary file renamed over the tail, so a crash keeps either the old
    tail or the new one, both readable.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "1h.bin"
        >>> append(p, np.array([0, 60_000]), np.ones((2, 5))); clear(p, upto_ms=0)
        >>> read(p)[0].tolist()
        [60000]
    """
    t, v = read(path)
    keep = t > upto_ms
    if keep.all():  # nothing to drop (or no tail at all)
        return
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(encode(t[keep], v[keep]))
    os.replace(tmp, path)
