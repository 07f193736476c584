"""The S3 side of a multipart upload (:class:`S3Multipart`, see :mod:`.multipart`): a real S3
multipart upload; part URLs are presigned ``upload_part`` requests; the part set is ``list_parts``;
assembly is ``complete_multipart_upload``, then a streamed SHA-256 of the object; after a failed
check the parts are ranged GETs of the joined object, and the good ones move to a new multipart
upload of the same key with ``upload_part_copy`` (no byte passes through the service).

Example:
    >>> issubclass(S3Multipart, Multipart)
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from svc_api.core.objectstore import S3ObjectStore, check_key
from svc_api.education.uploads.multipart import CHUNK, ChecksumMismatch, Multipart, StoredPart, store_errors


class S3Multipart(Multipart):
    """A real S3 multipart upload in the store's bucket, under its prefix."""

    def __init__(self, store: S3ObjectStore) -> None:
        self.store = store
        self.client = store.client
        self.bucket = store.bucket

    def _key(self, key: str) -> str:
        return f"{self.store.prefix}/{check_key(key)}" if self.store.prefix else check_key(key)

    def start(self, key: str) -> str:
        reply = self.client.create_multipart_upload(Bucket=self.bucket, Key=self._key(key))
        return str(reply["UploadId"])

    def part_url(
        self, upload_id: str, key: str, store_id: str, part_number: int, *, ttl: int, now: int
    ) -> str:
        params = {
            "Bucket": self.bucket,
            "Key": self._key(key),
            "UploadId": store_id,
            "PartNumber": part_number,
        }
        return str(self.client.generate_presigned_url("upload_part", Params=params, ExpiresIn=ttl))

    def list_parts(self, key: str, store_id: str) -> dict[int, StoredPart]:
        out: dict[int, StoredPart] = {}
        marker = 0
        while True:
            try:
                reply = self.client.list_parts(
                    Bucket=self.bucket, Key=self._key(key), UploadId=store_id, PartNumberMarker=marker
                )
            except self.client.exceptions.NoSuchUpload:
                return out
            for part in reply.get("Parts", ()):
                out[int(part["PartNumber"])] = StoredPart(part["ETag"].strip('"').lower(), int(part["Size"]))
            if not reply.get("IsTruncated"):
                return out
            marker = int(reply["NextPartNumberMarker"])

    def assemble(self, key: str, store_id: str, etags: dict[int, str], sha256: str) -> None:
        parts = [{"PartNumber": n, "ETag": f'"{etags[n]}"'} for n in sorted(etags)]
        try:
            self.client.complete_multipart_upload(
                Bucket=self.bucket, Key=self._key(key), UploadId=store_id, MultipartUpload={"Parts": parts}
            )
        except self.client.exceptions.NoSuchUpload:
            if not self.store.exists(key):
                raise
        actual = self._sha256(key)
        if actual != sha256:
            raise ChecksumMismatch(actual)

    def _sha256(self, key: str, span: tuple[int, int] | None = None) -> str:
        """The SHA-256 of the object ``key``, or of ``span`` (offset, length) of it (a ranged GET)."""
        ranged = {} if span is None else {"Range": f"bytes={span[0]}-{span[0] + span[1] - 1}"}
        body = self.client.get_object(Bucket=self.bucket, Key=self._key(key), **ranged)["Body"]
        digest = hashlib.sha256()
        for chunk in body.iter_chunks(CHUNK):
            digest.update(chunk)
        return digest.hexdigest()

    def part_digests(self, key: str, store_id: str, spans: dict[int, tuple[int, int]]) -> dict[int, str]:
        # S3 reads no part of an unfinished multipart upload: a failed assembly completed it, so
        # the parts are ranges of the joined object.
        return {number: self._sha256(key, span) for number, span in spans.items()}

    def keep_parts(self, key: str, store_id: str, spans: dict[int, tuple[int, int]]) -> str:
        """A new multipart upload of the same key, each kept part copied server-side from its range
        of the joined object (``upload_part_copy``), which stays until :meth:`remove`."""
        source = {"Bucket": self.bucket, "Key": self._key(key)}
        self._abort_others(key, store_id)
        fresh = self.start(key)
        try:
            for number, (offset, length) in sorted(spans.items()):
                self.client.upload_part_copy(
                    Bucket=self.bucket,
                    Key=self._key(key),
                    UploadId=fresh,
                    PartNumber=number,
                    CopySource=source,
                    CopySourceRange=f"bytes={offset}-{offset + length - 1}",
                )
        except BaseException:
            with contextlib.suppress(*store_errors()):
                self.abort(key, fresh)
            raise
        return fresh

    def _abort_others(self, key: str, store_id: str) -> None:
        """Abort the key's multipart uploads other than ``store_id``: the part sets of earlier
        :meth:`keep_parts` whose complete died before it recorded them."""
        reply = self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=self._key(key))
        for upload in reply.get("Uploads", ()):
            if upload["Key"] == self._key(key) and upload["UploadId"] != store_id:
                self.abort(key, upload["UploadId"])

    def assembled(self, key: str) -> bool:
        return self.store.exists(key)

    def abort(self, key: str, store_id: str) -> None:
        with contextlib.suppress(self.client.exceptions.NoSuchUpload):
            self.client.abort_multipart_upload(Bucket=self.bucket, Key=self._key(key), UploadId=store_id)

    def remove(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(key))

    @contextlib.contextmanager
    def local_copy(self, key: str) -> Iterator[Path]:
        with tempfile.TemporaryDirectory(prefix="svc-upload-") as folder:
            path = Path(folder) / Path(key).name
            with open(path, "wb") as out:
                self.client.download_fileobj(self.bucket, self._key(key), out)
            yield path


__all__ = ["S3Multipart"]
