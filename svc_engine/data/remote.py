"""S3-compatible object storage for a :class:`~svc_engine.data.store.DataStore` rooted at ``s3://bucket/prefix``.

The same Parquet layout as on disk, read by polars (its native object store), pyarrow
(``S3FileSystem``) and DuckDB (the pyarrow file system registered through fsspec, so no DuckDB
extension has to be downloaded). Credentials and endpoint come from the usual variables:
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION`` (or ``AWS_DEFAULT_REGION``) and
``AWS_ENDPOINT_URL`` (or ``S3_ENDPOINT_URL``) for MinIO, moto or another S3-compatible server.
An object is replaced by one PUT, so readers never see half a file; S3 has no locks, so run one
writer per series at a time.

Example:
    >>> loc = S3Location.from_url("s3://klines/store", env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"})
    >>> loc.url("crypto/BTCUSDT/1h.parquet"), loc.storage_options()["aws_allow_http"]
    ('s3://klines/store/crypto/BTCUSDT/1h.parquet', 'true')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq


@dataclass(frozen=True)
class S3Location:
    """A bucket and key prefix on an S3-compatible server, with the credentials to reach it."""

    bucket: str
    prefix: str
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_url(cls, url: str, env: Mapping[str, str] | None = None) -> S3Location:
        """Parse ``s3://bucket[/prefix]``; the rest comes from ``env`` (default ``os.environ``).

        Example:
            >>> S3Location.from_url("s3://b/p/", env={}).prefix
            'p'
        """
        env = os.environ if env is None else env
        if not url.startswith("s3://") or not url[5:].strip("/"):
            raise ValueError(f"not an S3 URL: {url!r}; expected s3://bucket/prefix")
        bucket, _, prefix = url[5:].strip("/").partition("/")
        return cls(
            bucket=bucket,
            prefix=prefix.strip("/"),
            endpoint_url=env.get("AWS_ENDPOINT_URL") or env.get("S3_ENDPOINT_URL") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            access_key=env.get("AWS_ACCESS_KEY_ID"),
            secret_key=env.get("AWS_SECRET_ACCESS_KEY"),
        )

    def _path(self, key: str) -> str:
        return "/".join(p for p in (self.bucket, self.prefix, key) if p)

    def url(self, key: str = "") -> str:
        """``s3://`` URL of a key under the prefix.

        Example:
            >>> S3Location("b", "p").url("x.parquet")
            's3://b/p/x.parquet'
        """
        return "s3://" + self._path(key)

    def storage_options(self) -> dict[str, str]:
        """Options for polars' ``scan_parquet``/``read_parquet`` on this server.

        Example:
            >>> S3Location("b", "p", region="eu-west-1").storage_options()
            {'aws_region': 'eu-west-1'}
        """
        opts = {"aws_region": self.region}
        if self.endpoint_url:
            opts["aws_endpoint_url"] = self.endpoint_url
            if self.endpoint_url.startswith("http://"):
                opts["aws_allow_http"] = "true"
        if self.access_key and self.secret_key:
            opts["aws_access_key_id"], opts["aws_secret_access_key"] = self.access_key, self.secret_key
        return opts

    @cached_property
    def fs(self) -> pafs.S3FileSystem:
        """The pyarrow file system of this server."""
        kwargs: dict[str, Any] = {"region": self.region}
        if self.endpoint_url:
            scheme, _, host = self.endpoint_url.partition("://")
            kwargs.update(endpoint_override=host.rstrip("/"), scheme=scheme)
        if self.access_key and self.secret_key:
            kwargs.update(access_key=self.access_key, secret_key=self.secret_key)
        return pafs.S3FileSystem(**kwargs)

    def list_keys(self) -> list[str]:
        """Keys of every object under the prefix, relative to it."""
        base = self._path("")
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        except FileNotFoundError:
            return []
        return sorted(i.path[len(base) + 1 :] for i in infos if i.type == pafs.FileType.File)

    def stat(self, key: str) -> tuple[int, int] | None:
        """``(mtime_ns, size)`` of an object, or None when it does not exist."""
        info = self.fs.get_file_info(self._path(key))
        if info.type != pafs.FileType.File:
            return None
        return int(info.mtime_ns or 0), int(info.size or 0)

    def scan(self, key: str) -> pl.LazyFrame:
        """A lazy polars scan of one object (row groups are fetched as the query needs them)."""
        return pl.scan_parquet(self.url(key), storage_options=self.storage_options())

    def schema_metadata(self, key: str) -> dict[bytes, bytes]:
        """The key-value metadata of a Parquet object's schema."""
        return dict(pq.read_schema(self._path(key), filesystem=self.fs).metadata or {})

    def write(self, key: str, table: pa.Table, row_group_size: int) -> None:
        """Write a table as one Parquet object (a single PUT replaces it whole)."""
        pq.write_table(
            table, self._path(key), filesystem=self.fs, compression="zstd", row_group_size=row_group_size
        )

    def duckdb(self) -> Any:
        """A DuckDB connection that reads ``s3://`` paths of this server through pyarrow."""
        import duckdb
        from fsspec.implementations.arrow import ArrowFSWrapper

        class _S3(ArrowFSWrapper):  # type: ignore[misc]
            protocol = "s3"

        con = duckdb.connect()
        con.register_filesystem(_S3(self.fs))
        return con
