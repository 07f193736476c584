"""The multipart side of an object store: :class:`~.multipart.LocalMultipart` over a local
folder, :class:`~.s3multipart.S3Multipart` over S3 (kept apart so neither store module names the
other).

Example:
    >>> import tempfile
    >>> type(multipart_for(LocalObjectStore(tempfile.mkdtemp()), b"k")).__name__
    'LocalMultipart'
"""

from __future__ import annotations

from svc_api.core.objectstore import LocalObjectStore, ObjectStore, S3ObjectStore
from svc_api.education.uploads.multipart import LocalMultipart, Multipart
from svc_api.education.uploads.s3multipart import S3Multipart


def multipart_for(store: ObjectStore, secret: bytes) -> Multipart:
    """The multipart side of ``store``; see the module example."""
    if isinstance(store, S3ObjectStore):
        return S3Multipart(store)
    if isinstance(store, LocalObjectStore):
        return LocalMultipart(store, secret)
    raise TypeError(f"no multipart uploads on {store!r}")
