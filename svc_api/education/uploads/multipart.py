"""The object store's side of a multipart upload, on either store behind one interface.

- S3: a real multipart upload (``create_multipart_upload``); part URLs are presigned
  ``upload_part`` requests; the part set is ``list_parts``; assembly is
  ``complete_multipart_upload``; abort is ``abort_multipart_upload``.
- Local directory: parts are files ``_multipart/<store upload id>/<part:05d>-<md5>`` under the
  store's root, written by the service's own ``PUT /education/v1/studio/upload-parts/...`` behind
  an HMAC-signed, expiring URL; the part set is the directory listing; assembly concatenates the
  parts in order into the object's file (written beside it, then renamed).

Both answer a part's PUT with the MD5 of its bytes as the entity tag, which is what receipts and
manifests name. Assembly hashes the whole file (SHA-256) and raises :class:`ChecksumMismatch` when
the hash is not the registered one, leaving what it joined for the caller: it either removes it
(the upload fails) or finds the corrupt parts with :meth:`Multipart.part_digests` and opens the
upload again with the good ones only (:meth:`Multipart.keep_parts`). S3 lives in
:mod:`.s3multipart`.

Example:
    >>> url = local_part_url(b"k" * 32, "up_1", 2, expires=2_000_000_000)
    >>> url.startswith("/education/v1/studio/upload-parts/up_1/2?expires=2000000000&signature=")
    True
    >>> part_signature_ok(b"k" * 32, "up_1", 2, 2_000_000_000, url.rsplit("=", 1)[1], now=1)
    True
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svc_api.core.objectstore import LocalObjectStore, check_key

PART_PREFIX = "/education/v1/studio/upload-parts/"
CHUNK = 1 << 20


@dataclass(frozen=True)
class StoredPart:
    """A part as the store holds it: its entity tag (MD5 hex, no quotes) and size."""

    etag: str
    size: int


class ChecksumMismatch(Exception):
    """The assembled file's SHA-256 is not the registered one (what was joined is left as it is).

    Example:
        >>> ChecksumMismatch("ab").actual
        'ab'
    """

    def __init__(self, actual: str) -> None:
        super().__init__(f"assembled file has SHA-256 {actual}")
        self.actual = actual


def _sign(secret: bytes, upload_id: str, part_number: int, expires: int) -> str:
    message = f"upload-part|{upload_id}|{part_number}|{expires}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def local_part_url(secret: bytes, upload_id: str, part_number: int, *, expires: int) -> str:
    """The service's own URL that takes part ``part_number`` until ``expires``."""
    signature = _sign(secret, upload_id, part_number, expires)
    return f"{PART_PREFIX}{upload_id}/{part_number}?expires={expires}&signature={signature}"


def part_signature_ok(
    secret: bytes, upload_id: str, part_number: int, expires: int, signature: str, *, now: int
) -> bool:
    """Whether a part URL is the service's own and unexpired."""
    expected = _sign(secret, upload_id, part_number, expires)
    # bytes: compare_digest refuses a str with non-ASCII characters (a hostile URL)
    return now <= expires and hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


class Multipart(abc.ABC):
    """Multipart uploads into one object store."""

    @abc.abstractmethod
    def start(self, key: str) -> str:
        """Open a multipart upload of the object ``key``; the store's id of it."""

    @abc.abstractmethod
    def part_url(
        self, upload_id: str, key: str, store_id: str, part_number: int, *, ttl: int, now: int
    ) -> str:
        """Where the client PUTs part ``part_number`` (valid for ``ttl`` seconds)."""

    @abc.abstractmethod
    def list_parts(self, key: str, store_id: str) -> dict[int, StoredPart]:
        """The parts the store holds, by number (empty once assembled or aborted)."""

    @abc.abstractmethod
    def assemble(self, key: str, store_id: str, etags: dict[int, str], sha256: str) -> None:
        """Join the parts (in number order, each with its entity tag) into ``key``; when the whole
        file's SHA-256 is not ``sha256``, raise :class:`ChecksumMismatch` (the parts, or the joined
        object, stay for :meth:`part_digests`). Done again after a crash, it checks the object
        already there."""

    @abc.abstractmethod
    def part_digests(self, key: str, store_id: str, spans: dict[int, tuple[int, int]]) -> dict[int, str]:
        """The SHA-256 (hex) of the bytes of each part in ``spans`` (``{part: (offset, length)}`` in
        the whole file) as a failed :meth:`assemble` joined them."""

    @abc.abstractmethod
    def keep_parts(self, key: str, store_id: str, spans: dict[int, tuple[int, int]]) -> str:
        """After a failed :meth:`assemble`: a multipart upload of ``key`` holding exactly the parts in
        ``spans``, their bytes taken from the parts or the joined object (which stays until the
        caller's :meth:`remove`); its store id. All or nothing: on an error no new part set is
        left, and the old one still holds every part."""

    @abc.abstractmethod
    def assembled(self, key: str) -> bool:
        """Whether the assembled object ``key`` exists."""

    @abc.abstractmethod
    def abort(self, key: str, store_id: str) -> None:
        """Drop the parts (idempotent)."""

    @abc.abstractmethod
    def remove(self, key: str) -> None:
        """Delete the assembled object, if any."""

    @abc.abstractmethod
    def local_copy(self, key: str) -> contextlib.AbstractContextManager[Path]:
        """A file holding the assembled object, for as long as the context lasts."""


class LocalMultipart(Multipart):
    """Parts as files under ``<root>/_multipart/`` (see the module docstring).

    Example:
        >>> import tempfile
        >>> mp = LocalMultipart(LocalObjectStore(tempfile.mkdtemp()), b"k" * 32)
        >>> sid = mp.start("uploads/up_1/a.pdf")
        >>> mp.write_part(sid, 1, b"hello ")
        StoredPart(etag='f814893777bcc2295fff05f00e508da6', size=6)
        >>> _ = mp.write_part(sid, 2, b"world")
        >>> mp.assemble("uploads/up_1/a.pdf", sid, mp._etags(sid),
        ...             hashlib.sha256(b"hello world").hexdigest())
        >>> (mp.store.root / "uploads/up_1/a.pdf").read_bytes(), mp.list_parts("uploads/up_1/a.pdf", sid)
        (b'hello world', {})
    """

    def __init__(self, store: LocalObjectStore, secret: bytes) -> None:
        self.store = store
        self.secret = secret

    def _dir(self, store_id: str) -> Path:
        if not store_id.isalnum():
            raise ValueError(f"invalid store upload id {store_id!r}")
        return self.store.root / "_multipart" / store_id

    def start(self, key: str) -> str:
        check_key(key)
        store_id = secrets.token_hex(16)
        self._dir(store_id).mkdir(parents=True, exist_ok=True)
        return store_id

    def part_url(
        self, upload_id: str, key: str, store_id: str, part_number: int, *, ttl: int, now: int
    ) -> str:
        return local_part_url(self.secret, upload_id, part_number, expires=now + ttl)

    def write_part(self, store_id: str, part_number: int, data: bytes) -> StoredPart:
        """Store one part (the PUT of a part URL); a part sent again replaces the earlier one."""
        folder = self._dir(store_id)
        if not folder.is_dir():
            raise FileNotFoundError(f"multipart upload {store_id} is gone")
        etag = hashlib.md5(data, usedforsecurity=False).hexdigest()
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, folder / f"{part_number:05d}-{etag}")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        for other in folder.glob(f"{part_number:05d}-*"):
            if other.name != f"{part_number:05d}-{etag}":
                other.unlink(missing_ok=True)
        return StoredPart(etag, len(data))

    def list_parts(self, key: str, store_id: str) -> dict[int, StoredPart]:
        # A concurrent complete may assemble and remove the folder, or a part sent again may
        # replace its file, between the scan and a stat: scan again, and a folder gone is empty.
        folder = self._dir(store_id)
        for _ in range(5):
            try:
                return self._scan(folder)
            except FileNotFoundError:
                if not folder.is_dir():
                    return {}
        return self._scan(folder)

    @staticmethod
    def _scan(folder: Path) -> dict[int, StoredPart]:
        out: dict[int, StoredPart] = {}
        for entry in list(os.scandir(folder)):
            number, _, etag = entry.name.partition("-")
            if number.isdigit() and etag and not entry.name.endswith(".tmp"):
                out[int(number)] = StoredPart(etag, entry.stat().st_size)
        return out

    def _etags(self, store_id: str) -> dict[int, str]:
        return {n: part.etag for n, part in self.list_parts("", store_id).items()}

    def assemble(self, key: str, store_id: str, etags: dict[int, str], sha256: str) -> None:
        target = self.store.root / check_key(key)
        folder = self._dir(store_id)
        if not folder.is_dir() and target.is_file():
            self._check(target, sha256)  # assembled before a crash
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                for number in sorted(etags):
                    with open(folder / f"{number:05d}-{etags[number]}", "rb") as part:
                        while chunk := part.read(CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
            if digest.hexdigest() != sha256:
                raise ChecksumMismatch(digest.hexdigest())
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
        _discard(folder)

    def _check(self, path: Path, sha256: str) -> None:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                digest.update(chunk)
        if digest.hexdigest() != sha256:
            raise ChecksumMismatch(digest.hexdigest())

    def part_digests(self, key: str, store_id: str, spans: dict[int, tuple[int, int]]) -> dict[int, str]:
        folder = self._dir(store_id)
        if folder.is_dir():  # the join failed before the parts were discarded: hash their files
            files = {n: folder / f"{n:05d}-{part.etag}" for n, part in self._scan(folder).items()}
            # a part gone meanwhile is a FileNotFoundError (store trouble: 503), never a KeyError
            return {
                n: _sha256_range(files.get(n, folder / f"{n:05d}-gone"), 0, length)
                for n, (_, length) in spans.items()
            }
        target = self.store.root / check_key(key)  # joined before a crash: hash its ranges
        return {n: _sha256_range(target, offset, length) for n, (offset, length) in spans.items()}

    def keep_parts(self, key: str, store_id: str, spans: dict[int, tuple[int, int]]) -> str:
        folder = self._dir(store_id)
        if folder.is_dir():
            for number, part in self._scan(folder).items():
                if number not in spans:
                    (folder / f"{number:05d}-{part.etag}").unlink(missing_ok=True)
            return store_id
        # The parts were discarded after the join: cut the kept ones out of the joined file into a
        # staging folder, renamed into place at once (a crash leaves no half part set).
        target = self.store.root / check_key(key)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".restore-"))
        try:
            for number, (offset, length) in spans.items():
                with open(target, "rb") as whole:
                    whole.seek(offset)
                    data = whole.read(length)
                etag = hashlib.md5(data, usedforsecurity=False).hexdigest()
                (staging / f"{number:05d}-{etag}").write_bytes(data)
            os.rename(staging, folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return store_id

    def assembled(self, key: str) -> bool:
        return (self.store.root / check_key(key)).is_file()

    def abort(self, key: str, store_id: str) -> None:
        _discard(self._dir(store_id))

    def remove(self, key: str) -> None:
        self.store.delete(key)

    @contextlib.contextmanager
    def local_copy(self, key: str) -> Iterator[Path]:
        path = self.store.root / check_key(key)
        if not path.is_file():
            raise FileNotFoundError(key)
        yield path


def _sha256_range(path: Path, offset: int, length: int) -> str:
    """The SHA-256 of ``length`` bytes of ``path`` from ``offset``."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(offset)
        while length > 0 and (chunk := f.read(min(CHUNK, length))):
            digest.update(chunk)
            length -= len(chunk)
    return digest.hexdigest()


def _discard(folder: Path) -> None:
    """Remove a multipart folder for good. Renamed first: a part PUT racing this writes under the old
    name, which no longer exists, so it fails instead of adding a file while the tree is removed
    (which left the folder and that part behind)."""
    doomed = folder.with_name(f".discarded-{folder.name}-{secrets.token_hex(4)}")
    try:
        os.rename(folder, doomed)
    except FileNotFoundError:
        return
    shutil.rmtree(doomed, ignore_errors=True)


def store_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean store trouble (retryable): OS errors and, with boto3, its errors."""
    errors: list[type[BaseException]] = [OSError]
    with contextlib.suppress(ImportError):
        from botocore.exceptions import BotoCoreError, ClientError

        errors += [BotoCoreError, ClientError]
    return tuple(errors)


__all__: list[Any] = [
    "ChecksumMismatch",
    "LocalMultipart",
    "Multipart",
    "StoredPart",
    "local_part_url",
    "part_signature_ok",
    "store_errors",
]
