"""The HTTP protocol ``svc serve`` runs: uvicorn's httptools protocol with a deadline on the request
head.

uvicorn times out idle keep-alive connections, but not one that opened and never finished its
request line and headers: 500 connections that each sent ``GET / HTTP/1.1\\r\\nHost: x\\r\\n`` and
stopped were held for good, and past ``SVC_MAX_CONNECTIONS`` every new request was a 503. Here a
connection must complete each request head within ``HEADER_READ_TIMEOUT_SECONDS`` (default 5),
counted from its opening or from the first byte of its next request; otherwise it gets a 408 and is
closed. The body has its own deadline (``BODY_READ_TIMEOUT_SECONDS``, in the app).

Example:
    >>> header_read_timeout({"HEADER_READ_TIMEOUT_SECONDS": "2.5"})
    2.5
    >>> header_read_timeout({})
    5.0
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Mapping

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from svc_api.settings import Settings, tunables_from_env

# The shape of every other error of the service (the app is not reached: there is no request yet).
_TIMEOUT_BODY = (
    b'{"error":"request_timeout","message":"the request line and headers took too long to arrive"}'
)
_TIMEOUT_REPLY = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)


def header_read_timeout(environ: Mapping[str, str]) -> float:
    """The head deadline in seconds, from ``HEADER_READ_TIMEOUT_SECONDS`` (a bad value raises)."""
    return float(
        tunables_from_env(environ).get("header_read_timeout", Settings.default("header_read_timeout"))
    )


@functools.cache
def _process_timeout() -> float:
    # Read once per server process: uvicorn builds a protocol per connection.
    return header_read_timeout(os.environ)


class HeadDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing a connection whose request head is late (408)."""

    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock at once: a connection that sends nothing is as stuck as a slow one."""
        super().connection_made(transport)
        self._arm_head_deadline()

    def on_message_begin(self) -> None:
        """The first byte of a request (the next one on a kept-alive connection too)."""
        super().on_message_begin()
        self._arm_head_deadline()

    def on_headers_complete(self) -> None:
        """The head is complete: the deadline is met."""
        self._disarm_head_deadline()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Nothing is left to time out."""
        self._disarm_head_deadline()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(_process_timeout(), self._head_too_late)

    def _disarm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_late(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head behind a response still being written: writing a 408 now would cut
            # into that response, so the next head gets its full time once this one is done.
            self._arm_head_deadline()
            return
        self.transport.write(_TIMEOUT_REPLY)
        self.transport.close()
