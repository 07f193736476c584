"""Pacing and retrying requests to an exchange's public market-data API.

:class:`WeightBudget` keeps the request weight used in the current UTC minute (as Binance counts it,
per IP in fixed one-minute windows) and says how long to wait before a request would go over the
budget. :class:`PacedClient` sends GET requests through it: it trusts the exchange's own count
(``X-MBX-USED-WEIGHT-1M``) when an answer carries it, honours 429 and 418 with ``Retry-After``,
retries dropped connections, timeouts and 5xx with bounded exponential backoff, and raises
:class:`KlineSourceError` when a request cannot be answered.

Example:
    >>> budget = WeightBudget(10, clock_ms=lambda: 90_000)  # 30 s into the second minute
    >>> budget.wait_seconds(8), budget.spend(8), budget.wait_seconds(3)
    (0.0, None, 30.0)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

MINUTE_MS = 60_000
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
MAX_BAN_S = 600.0
"""A 418 ban longer than this (seconds) is raised, not slept through: a download should not hang."""
WEIGHT_HEADER = "X-MBX-USED-WEIGHT-1M"


class KlineSourceError(RuntimeError):
    """A kline source gave no usable answer: retries exhausted, refused, banned or malformed.

    ``status`` is the last HTTP status (``None`` when no answer came) and ``code`` the exchange's
    error code when it sent one.

    Example:
        >>> str(KlineSourceError("GET /api/v3/klines: 400 -1121 Invalid symbol.", status=400, code=-1121))
        'GET /api/v3/klines: 400 -1121 Invalid symbol.'
    """

    def __init__(self, message: str, *, status: int | None = None, code: int | None = None) -> None:
        super().__init__(message)
        self.status, self.code = status, code


def wall_clock_ms() -> int:
    """The local wall clock in Unix milliseconds.

    Example:
        >>> wall_clock_ms() > 1_700_000_000_000
        True
    """
    return time.time_ns() // 1_000_000


class WeightBudget:
    """The request weight spent in the current minute of ``clock_ms``, against ``limit`` per minute.

    Example:
        >>> now = [0]
        >>> budget = WeightBudget(5, clock_ms=lambda: now[0])
        >>> budget.spend(5); budget.wait_seconds(1)
        60.0
        >>> now[0] = 60_000; budget.wait_seconds(1)  # a new minute starts from nothing
        0.0
    """

    def __init__(self, limit: int, *, clock_ms: Callable[[], int] = wall_clock_ms) -> None:
        if limit < 1:
            raise ValueError(f"a weight budget must be at least 1 per minute, got {limit}")
        self.limit, self.clock_ms = limit, clock_ms
        self._minute, self._used = -1, 0

    @property
    def used(self) -> int:
        """Weight spent in the current minute."""
        self._roll()
        return self._used

    def _roll(self) -> None:
        minute = self.clock_ms() // MINUTE_MS
        if minute != self._minute:
            self._minute, self._used = minute, 0

    def wait_seconds(self, weight: int) -> float:
        """Seconds to wait before a request of ``weight`` fits the budget (0 when it fits now).

        A request heavier than the whole budget is sent at the start of a fresh minute.
        """
        self._roll()
        if self._used == 0 or self._used + weight <= self.limit:
            return 0.0
        return ((self._minute + 1) * MINUTE_MS - self.clock_ms()) / 1000

    def spend(self, weight: int) -> None:
        """Count a request of ``weight`` in the current minute."""
        self._roll()
        self._used += weight

    def observe(self, used: int) -> None:
        """The exchange's own count for this minute: it also holds what others on this IP spent."""
        self._roll()
        self._used = used


class PacedClient:
    """GET requests paced by a :class:`WeightBudget` and retried; JSON answers or :class:`KlineSourceError`.

    Example:
        >>> answers = iter([httpx.Response(503), httpx.Response(200, json=[1])])
        >>> http = httpx.Client(transport=httpx.MockTransport(lambda request: next(answers)))
        >>> waits = []
        >>> paced = PacedClient(http, "http://x", budget=WeightBudget(10), sleep=waits.append)
        >>> paced.get("/ping", {}, weight=1), waits
        ([1], [0.5])
    """

    def __init__(
        self,
        client: httpx.Client,
        base_url: str,
        *,
        budget: WeightBudget,
        sleep: Callable[[float], None] = time.sleep,
        max_retries: int = 5,
        max_ban_s: float = MAX_BAN_S,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.client, self.base_url, self.budget = client, base_url.rstrip("/"), budget
        self.sleep, self.max_retries, self.max_ban_s = sleep, max_retries, max_ban_s

    def get(self, path: str, params: Mapping[str, Any], *, weight: int) -> Any:
        """The JSON body of ``GET base_url + path``; every failed attempt waits, then tries again."""
        last, last_status = "no attempt", None
        for attempt in range(self.max_retries + 1):
            wait = self.budget.wait_seconds(weight)
            if wait > 0:
                self.sleep(wait)
            self.budget.spend(weight)
            try:
                response = self.client.get(self.base_url + path, params=dict(params))
            except httpx.TransportError as exc:  # dropped connections, timeouts, refused connects
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                last_status = None
                self._back_off(attempt)
                continue
            self._observe_weight(response)
            status = last_status = response.status_code
            if status in (418, 429):
                last = f"{status} rate limited"
                self._rate_limited(path, response, attempt)
                continue
            if status >= 500:
                last = f"{status} {response.reason_phrase}".strip()
                self._back_off(attempt)
                continue
            return self._body(path, response)
        raise KlineSourceError(
            f"GET {path}: no answer after {self.max_retries + 1} attempts (last: {last})",
            status=last_status,
        )

    def _observe_weight(self, response: httpx.Response) -> None:
        raw = response.headers.get(WEIGHT_HEADER, "")
        if raw.isdigit():
            self.budget.observe(int(raw))

    def _back_off(self, attempt: int) -> None:
        if attempt < self.max_retries:  # no wait after the last attempt: the error is raised at once
            self.sleep(min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2**attempt))

    def _rate_limited(self, path: str, response: httpx.Response, attempt: int) -> None:
        status = response.status_code
        wait = _seconds(response.headers.get("Retry-After"))
        if status == 418 and wait is not None and wait > self.max_ban_s:
            raise KlineSourceError(
                f"GET {path}: this IP is banned by the exchange (418) for {wait:g} s, longer than "
                f"the {self.max_ban_s:g} s this source waits; too many requests were sent over the limit",
                status=418,
                code=_code(response),
            )
        if attempt >= self.max_retries:
            return
        if wait is None:
            self._back_off(attempt)
        else:
            self.sleep(wait)

    def _body(self, path: str, response: httpx.Response) -> Any:
        status = response.status_code
        try:
            body = response.json()
        except ValueError:
            raise KlineSourceError(
                f"GET {path}: {status} answer is not JSON: {response.text[:80]!r}", status=status
            ) from None
        if status >= 400:
            msg = body.get("msg", "") if isinstance(body, dict) else ""
            code = _code(response, body)
            raise KlineSourceError(
                f"GET {path}: {status} {code if code is not None else ''} {msg}".replace("  ", " ").strip(),
                status=status,
                code=code,
            )
        return body


def _seconds(raw: str | None) -> float | None:
    try:
        wait = float(raw) if raw is not None else None
    except ValueError:
        return None
    return wait if wait is not None and wait >= 0 else None


def _code(response: httpx.Response, body: Any = None) -> int | None:
    if body is None:
        try:
            body = response.json()
        except ValueError:
            return None
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, int) else None
