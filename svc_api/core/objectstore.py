"""The object store of backtest results: a local directory by default, S3 when configured.

One interface, :class:`ObjectStore` (``put``, ``get``, ``delete``, ``exists``, ``presign``), two
implementations: :class:`LocalObjectStore` (files under a root, written atomically: a temporary
file in the same directory, then ``os.replace``) and :class:`S3ObjectStore` (boto3, a bucket and a
key prefix). :func:`open_object_store` picks one from a URL: ``s3://bucket/prefix`` or a directory
(``file:///path`` or a plain path); none gives ``<var>/objects``.

Presigned URLs: S3 signs with boto3 (SigV4, an expiry); the local store signs ``key|expires`` with
HMAC-SHA256 under the service's secret (checked by :meth:`LocalObjectStore.verify`).

Example:
    >>> import tempfile
    >>> store = LocalObjectStore(tempfile.mkdtemp(), secret=b"k" * 32)
    >>> store.put("backtests/AB12CD/job.json", b'{"x": 1}')
    >>> store.get("backtests/AB12CD/job.json"), store.delete("backtests/AB12CD/job.json")
    (b'{"x": 1}', True)
"""

from __future__ import annotations

import abc
import hashlib
import hmac
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-/]{0,511}$")


class ObjectNotFound(LookupError):
    """No object under that key.

    Example:
        >>> str(ObjectNotFound("a/b"))
        'a/b'
    """


def check_key(key: str) -> str:
    """A key of letters, digits, ``._-/``, no ``..`` segment and no leading ``/`` (it becomes a path).

    Example:
        >>> check_key("../etc/passwd")
        Traceback (most recent call last):
        ...
        ValueError: invalid object key '../etc/passwd'
    """
    if not isinstance(key, str) or not _KEY.match(key) or ".." in key.split("/") or "//" in key:
        raise ValueError(f"invalid object key {key!r}")
    return key


class ObjectStore(abc.ABC):
    """Bytes under string keys.

    Example:
        >>> issubclass(LocalObjectStore, ObjectStore)
        True
    """

    @abc.abstractmethod
    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key`` (replacing it); readers see the old or the new bytes, never half."""

    @abc.abstractmethod
    def get(self, key: str) -> bytes:
        """The bytes under ``key``; :class:`ObjectNotFound` when there are none."""

    @abc.abstractmethod
    def delete(self, key: str) -> bool:
        """Remove ``key``; True when something was removed."""

    @abc.abstractmethod
    def exists(self, key: str) -> bool:
        """True when ``key`` holds an object."""

    @abc.abstractmethod
    def presign(self, key: str, expires_in: int = 3600) -> str:
        """A URL that reads ``key`` without credentials until ``expires_in`` seconds from now."""


class LocalObjectStore(ObjectStore):
    """Files under ``root``; presigned URLs are ``local://<key>?expires=..&signature=..`` (HMAC).

    Example:
        >>> import tempfile
        >>> store = LocalObjectStore(tempfile.mkdtemp(), secret=b"k" * 32)
        >>> url = store.presign("a/b.json", expires_in=60)
        >>> store.verify(url), store.verify(url.replace("a/b", "a/c"))
        (True, False)
    """

    def __init__(self, root: str | os.PathLike[str], *, secret: bytes = b"") -> None:
        self.root = Path(root)
        self._secret = secret

    def __repr__(self) -> str:
        return f"LocalObjectStore({str(self.root)!r})"

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise ObjectNotFound(key) from None

    def delete(self, key: str) -> bool:
        try:
            self._path(key).unlink()
        except FileNotFoundError:
            return False
        return True

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def presign(self, key: str, expires_in: int = 3600) -> str:
        # Stands in for S3's presigned URLs, whose lifetime S3 checks against its own wall clock.
        expires = int(time.time()) + int(expires_in)
        return f"local://{quote(check_key(key))}?expires={expires}&signature={self._sign(key, expires)}"

    def verify(self, url: str, *, now: float | None = None) -> bool:
        """True when ``url`` came from :meth:`presign` of this store and has not expired."""
        parsed = urlparse(url)
        fields = dict(part.partition("=")[::2] for part in parsed.query.split("&"))
        try:
            expires = int(fields.get("expires", ""))
        except ValueError:
            return False
        key = parsed.netloc + parsed.path
        fresh = (time.time() if now is None else now) <= expires
        return fresh and hmac.compare_digest(fields.get("signature", ""), self._sign(key, expires))

    def _sign(self, key: str, expires: int) -> str:
        return hmac.new(self._secret, f"{key}|{expires}".encode(), hashlib.sha256).hexdigest()


class S3ObjectStore(ObjectStore):
    """Objects in an S3 bucket under ``prefix`` (boto3; ``endpoint_url`` for S3-compatible servers).

    Example:
        >>> S3ObjectStore.__mro__[1].__name__
        'ObjectStore'
    """

    def __init__(self, bucket: str, prefix: str = "", *, client: Any = None, endpoint_url: str | None = None):
        if client is None:
            import boto3

            client = boto3.client("s3", endpoint_url=endpoint_url)
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.client = client

    def __repr__(self) -> str:
        return f"S3ObjectStore('s3://{self.bucket}/{self.prefix}')"

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{check_key(key)}" if self.prefix else check_key(key)

    def put(self, key: str, data: bytes) -> None:
        # A PUT is atomic in S3: readers get the old or the new object.
        self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)

    def get(self, key: str) -> bytes:
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
        except self.client.exceptions.NoSuchKey:
            raise ObjectNotFound(key) from None
        return bytes(reply["Body"].read())

    def delete(self, key: str) -> bool:
        had = self.exists(key)
        self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        return had

    def exists(self, key: str) -> bool:
        reply = self.client.list_objects_v2(Bucket=self.bucket, Prefix=self._key(key), MaxKeys=1)
        return any(item["Key"] == self._key(key) for item in reply.get("Contents", ()))

    def presign(self, key: str, expires_in: int = 3600) -> str:
        return str(
            self.client.generate_presigned_url(
                "get_object", Params={"Bucket": self.bucket, "Key": self._key(key)}, ExpiresIn=int(expires_in)
            )
        )


def open_object_store(
    url: str | None, *, var_dir: str | os.PathLike[str], secret: bytes = b"", endpoint_url: str | None = None
) -> ObjectStore:
    """The store named by ``s3://bucket/prefix``, ``file:///dir`` or a directory (None: ``<var>/objects``).

    Example:
        >>> open_object_store(None, var_dir="/tmp/var")
        LocalObjectStore('/tmp/var/objects')
        >>> open_object_store("ftp://x", var_dir="/tmp")
        Traceback (most recent call last):
        ...
        ValueError: OBJECT_STORE_URL must be s3://bucket/prefix, file:///dir or a directory, got 'ftp://x'
    """
    if not url:
        return LocalObjectStore(Path(var_dir) / "objects", secret=secret)
    parsed = urlparse(url)
    if parsed.scheme == "s3" and parsed.netloc:
        return S3ObjectStore(parsed.netloc, parsed.path, endpoint_url=endpoint_url)
    if parsed.scheme == "file":
        return LocalObjectStore(parsed.path, secret=secret)
    if parsed.scheme == "":
        return LocalObjectStore(url, secret=secret)
    raise ValueError(f"OBJECT_STORE_URL must be s3://bucket/prefix, file:///dir or a directory, got {url!r}")


def from_settings(settings: Any) -> ObjectStore:
    """The service's object store: ``OBJECT_STORE_URL`` (and ``S3_ENDPOINT_URL``) of ``settings``,
    ``<var>/objects`` by default, local presigned URLs signed with the service secret.

    Example:
        >>> from svc_api.settings import Settings
        >>> from_settings(Settings(database_url="sqlite://", secret_key=b"k" * 32, var_dir="/tmp/v"))
        LocalObjectStore('/tmp/v/objects')
    """
    return open_object_store(
        settings.object_store_url,
        var_dir=settings.var_dir,
        secret=bytes(settings.secret_key),
        endpoint_url=settings.s3_endpoint_url,
    )
