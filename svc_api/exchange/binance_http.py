"""Binance's REST transport: signing, the server-time offset, a host's pause after a rate limit, and
the mapping of answers to the interface's failures by Binance error code.

Signed requests carry ``timestamp`` and ``recvWindow`` and an HMAC-SHA256 ``signature`` of the exact
query string under the secret, with the key in ``X-MBX-APIKEY``; every parameter travels in the query
string. The clock offset to the exchange's is learned from ``GET /api/v3/time`` and learned again
when the exchange answers -1021 (outside the window), retrying that request once.

Answers map by status, then by Binance's error code (:func:`failure_of`):

- 429 and 418 with ``Retry-After``: :class:`ExchangeUnavailable`, and no request goes to that host
  until the time has passed (each one answered at once with the seconds still to wait);
- 403 (the firewall's limit), 5xx, timeouts, broken connections, bodies that are not JSON, and the
  codes of an overloaded or unsure exchange (:data:`UNAVAILABLE_CODES`, -1007 "execution status
  unknown" among them): :class:`ExchangeUnavailable`;
- :data:`CREDENTIAL_CODES`: :class:`InvalidCredentials`;
- :data:`REFUSED_CODES` (-2010 insufficient balance, -1013 a filter, ...): :class:`Refused`, a
  duplicate only for -2010 "Duplicate order sent.";
- any other code: :class:`ExchangeRejected` carrying it.

Nothing secret reaches a log: httpx logs each request's URL at INFO, so a filter on its logger
replaces the signature (:func:`redact`); the key travels in a header, which httpx does not log, and
the secret never leaves this process.

Example:
    >>> sign("NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j",
    ...      "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000"
    ...      "&timestamp=1499827319559")
    'c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71'
    >>> failure_of(400, {"code": -2010, "msg": "Duplicate order sent."}).duplicate
    True
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import httpx

from svc_api.exchange.interface import (
    Credentials,
    ExchangeError,
    ExchangeRejected,
    ExchangeUnavailable,
    InvalidCredentials,
    Refused,
)

CREDENTIAL_CODES = frozenset({-1002, -1022, -2014, -2015})
"""Not authorized, a bad signature, a malformed key, a key refused (or not allowed this action)."""
UNAVAILABLE_CODES = frozenset({-1000, -1001, -1003, -1004, -1006, -1007, -1008, -1015, -1016})
"""Unknown error, disconnected, too many requests, busy, an unexpected or no answer from the matching
engine (the order's outcome is unknown), too many new orders, shutting down."""
REFUSED_CODES = frozenset({-2010, -1013, -1111, -1158, -1160, -1165, -1166})
"""The order was turned down: rejected by the matching engine (insufficient balance, a duplicate,
would take), a filter, too many decimals, the legs of an OCO on the wrong sides."""
DUPLICATE = (-2010, "Duplicate order sent.")
TIME_OUTSIDE_WINDOW = -1021

_SIGNATURE = re.compile(r"(signature=)[^&\s\"']+")


def sign(secret: str, query: str) -> str:
    """The HMAC-SHA256 signature of ``query`` under ``secret`` (hex)."""
    return hmac.new(secret.encode(), query.encode(), hashlib.sha256).hexdigest()


def redact(text: str) -> str:
    """``text`` with every request signature replaced.

    Example:
        >>> redact("GET https://api.binance.com/api/v3/account?timestamp=1&signature=c8db56 200")
        'GET https://api.binance.com/api/v3/account?timestamp=1&signature=[redacted] 200'
    """
    return _SIGNATURE.sub(r"\1[redacted]", text)


class RedactSignatures(logging.Filter):
    """A logging filter that redacts signatures from the message of each record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "signature=" in message:
            record.msg, record.args = redact(message), ()
        return True


def _guard_httpx_logs() -> None:
    logger = logging.getLogger("httpx")  # httpx logs every request URL there at INFO
    if not any(isinstance(f, RedactSignatures) for f in logger.filters):
        logger.addFilter(RedactSignatures())


_guard_httpx_logs()


def failure_of(status: int, body: Any) -> ExchangeError:
    """The failure an error answer of Binance stands for, by its error code (see the module)."""
    code = body.get("code") if isinstance(body, dict) else None
    message = str(body.get("msg", "")).strip() if isinstance(body, dict) else ""
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    said = f"{message or 'no message'} (code {code})"
    if status == 403 or code in UNAVAILABLE_CODES:
        return ExchangeUnavailable(f"the exchange could not serve the request: {said}")
    if code in CREDENTIAL_CODES:
        return InvalidCredentials(message or "the key was refused")
    if code in REFUSED_CODES:
        return Refused(said, code=code, duplicate=(code, message) == DUPLICATE)
    return ExchangeRejected(said, code=code)


def _host(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.host}:{url.port}"


class BinanceHttp:
    """Signed and public requests to Binance's REST API at ``base_url`` (another base per call)."""

    def __init__(
        self,
        base_url: str,
        *,
        recv_window: int = 5000,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url, self.recv_window = base_url.rstrip("/"), recv_window
        self.clock, self.monotonic = clock, monotonic
        self.client = httpx.Client(timeout=timeout)
        self._offset_ms: int | None = None
        self._paused: dict[str, float] = {}  # host -> monotonic time before which nothing is sent
        self._lock = threading.Lock()

    def send(self, method: str, url: str, headers: dict[str, str] | None = None) -> httpx.Response:
        """One request, unless its host asked us to wait (then :class:`ExchangeUnavailable` at once)."""
        host = _host(httpx.URL(url))
        with self._lock:
            left = self._paused.get(host, 0.0) - self.monotonic()
        if left > 0:
            raise ExchangeUnavailable(
                f"rate limited by the exchange: no request for {left:.1f} s more", retry_after=left
            )
        try:
            return self.client.request(method, url, headers=headers)
        except httpx.HTTPError as exc:
            raise ExchangeUnavailable(f"{type(exc).__name__} calling the exchange") from None

    def reply(self, response: httpx.Response) -> Any:
        """The JSON body of a successful answer; else the failure it stands for, raised."""
        if response.status_code in (418, 429):
            raw = response.headers.get("Retry-After")
            wait = float(raw) if raw and raw.replace(".", "", 1).isdigit() else None
            if wait:
                with self._lock:
                    self._paused[_host(response.request.url)] = self.monotonic() + wait
            raise ExchangeUnavailable(
                f"rate limited by the exchange ({response.status_code})", retry_after=wait
            )
        if response.status_code >= 500:
            raise ExchangeUnavailable(f"the exchange answered {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            raise ExchangeUnavailable("the exchange's answer is not JSON") from None
        if response.status_code >= 400:
            raise failure_of(response.status_code, body)
        return body

    def now_ms(self) -> int:
        """The exchange's time now, in milliseconds, as our clock and the learned offset say."""
        if self._offset_ms is None:
            self.sync_time()
        return int(self.clock() * 1000) + int(self._offset_ms or 0)

    def sync_time(self) -> None:
        """Learn the offset of the exchange's clock from ours."""
        before = self.clock()
        server = self.reply(self.send("GET", f"{self.base_url}/api/v3/time"))
        after = self.clock()
        try:
            self._offset_ms = int(server["serverTime"]) - int((before + after) / 2 * 1000)
        except (KeyError, TypeError, ValueError):
            raise ExchangeUnavailable("the exchange's time answer is malformed") from None

    def signed(
        self,
        method: str,
        path: str,
        creds: Credentials,
        params: dict[str, Any] | None = None,
        *,
        base: str | None = None,
    ) -> Any:
        """A signed request's answer (the offset learned again and the request retried on -1021)."""
        for attempt in (1, 2):
            query = urlencode({**(params or {}), "recvWindow": self.recv_window, "timestamp": self.now_ms()})
            url = f"{base or self.base_url}{path}?{query}&signature={sign(creds.api_secret, query)}"
            response = self.send(method, url, {"X-MBX-APIKEY": creds.api_key})
            if attempt == 1 and response.status_code == 400 and _code(response) == TIME_OUTSIDE_WINDOW:
                self.sync_time()  # our clock drifted from the exchange's: learn the offset again
                continue
            return self.reply(response)
        raise AssertionError("unreachable")

    def public(self, path: str, params: dict[str, Any]) -> Any:
        """A public request's answer."""
        return self.reply(self.send("GET", f"{self.base_url}{path}?{urlencode(params)}"))


def _code(response: httpx.Response) -> int | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("code") if isinstance(body, dict) else None
