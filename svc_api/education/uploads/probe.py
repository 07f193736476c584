"""What playback needs of a media file, read with real decoders: PyAV (FFmpeg) for video, pypdf for
PDF. A file they cannot read is :class:`MediaRejected` (not retryable): ``corrupt_media`` when the
decoder fails on it, ``unsupported_media`` when it reads but holds nothing we can play (a video
without a video stream, an encrypted or empty PDF).

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.pdf"
    >>> _ = path.write_bytes(b"not a pdf")
    >>> try:
    ...     probe("pdf", path)
    ... except MediaRejected as exc:
    ...     print(exc.code)
    corrupt_media
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


class MediaRejected(Exception):
    """A file processing can never accept (its ``code`` goes to the upload's error)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def probe_video(path: Path) -> dict[str, Any]:
    """``{duration_seconds, codec, width, height, frame_rate}`` of the first video stream; the
    first frame is decoded, so a file with a sound header and broken pictures is rejected too."""
    import av

    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise MediaRejected("unsupported_media", "the file holds no video stream")
            stream = container.streams.video[0]
            next(container.decode(stream), None)
            seconds = _seconds(container, stream)
            rate = stream.average_rate
            return {
                "duration_seconds": max(1, math.ceil(seconds)),
                "codec": stream.codec_context.name,
                "width": int(stream.codec_context.width),
                "height": int(stream.codec_context.height),
                "frame_rate": round(float(rate), 3) if rate else None,
            }
    except MediaRejected:
        raise
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError) as exc:
        raise MediaRejected("corrupt_media", f"the video cannot be decoded: {exc}") from None


def _seconds(container: Any, stream: Any) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    raise MediaRejected("unsupported_media", "the video states no duration")


def probe_pdf(path: Path) -> dict[str, Any]:
    """``{pages}`` of a PDF that opens without a password and has at least one page."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise MediaRejected("unsupported_media", "the PDF is encrypted")
        pages = len(reader.pages)
    except MediaRejected:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise MediaRejected("corrupt_media", f"the PDF cannot be read: {exc}") from None
    if pages < 1:
        raise MediaRejected("unsupported_media", "the PDF has no page")
    return {"pages": pages}


def probe(kind: str, path: Path) -> dict[str, Any]:
    """The probe of ``kind`` (``video`` or ``pdf``)."""
    return probe_video(path) if kind == "video" else probe_pdf(path)
