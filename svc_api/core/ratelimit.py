"""Per-minute rate limits by plan, with the ``X-RateLimit-*`` headers on every response.

Policy (spec, Limits): ``free`` 30, ``starter`` 30, ``plus`` 60, ``pro`` 120, ``investor`` 240
requests per minute per account (``svc_id``), twice that for first-party session tokens, and 20 per
minute per client IP for guests (the spec leaves the guest value to us; a guest shares nothing with
accounts). An account's API-key budget and its first-party session budget are counted apart.

"Limits can vary by account and endpoint; the response headers are authoritative" (spec): the
operations that cost more than a read belong to an endpoint group (:data:`ENDPOINT_LIMITS`: backtest
launches, API-key generation, checkout) counted apart per account at the group's own limit, and an
operator can set an account's limit, for all its requests or for one group (``svc admin rate-limit``,
:mod:`svc_api.limits`). The ``X-RateLimit-*`` headers of every response tell the limit and window
that applied to that request.

The window is a *moving* minute: a burst at a minute boundary cannot get twice the limit through,
and ``X-RateLimit-Reset`` / ``Retry-After`` say when the oldest request in the window stops
counting, i.e. when one more request will be accepted.

Counters live in process memory by default (one deque of hit times per caller) and in Redis when a
``redis://`` URL is given (`limits`' moving-window strategy and Redis storage), so that every
instance of the service shares them. A storage that cannot be reached fails closed: 503
``temporarily_unavailable`` with ``retry_after``; no request (credit-consuming or not) passes
unchecked.

The caller's identity is read from ``scope["state"]["principal"]`` (set by authentication: an object
with ``kind``, ``svc_id``, ``plan``, ``first_party``, ``ip``); none means a guest keyed by client IP.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import limits
import limits.aio.storage
import limits.aio.strategies
import limits.errors
from limits import RateLimitItem
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svc_api.core.clock import Clock, WallClock
from svc_api.core.errors import DESCRIPTIVE_PREFIX, STICKY_HEADERS, ApiError, rate_limited
from svc_api.core.ratecounters import Counter, counter_for
from svc_api.settings import Settings, tunables_from_env

__all__ = [
    "ENDPOINT_LIMITS",
    "PLAN_LIMITS",
    "RateLimitMiddleware",
    "RateLimitPolicy",
    "RateLimitStatus",
]

logger = logging.getLogger("svc_api.http")

DEFERRED_CREDENTIAL = "verify"
"""``scope["state"]`` key of a credential check left to the handler's thread (set by authentication)."""
DEFERRED_LIMIT = "rate_check"
"""``scope["state"]`` key of the rate-limit count left to the handler's thread, after the check."""

#: Requests per minute by plan (spec, Limits).
PLAN_LIMITS: Mapping[str, int] = MappingProxyType(
    {"free": 30, "starter": 30, "plus": 60, "pro": 120, "investor": 240}
)
#: Requests per minute per account of the operations that cost more than a read (ours): each
#: group is counted apart, instead of the plan's limit, whatever the plan and credential.
ENDPOINT_LIMITS: Mapping[str, int] = MappingProxyType(
    {"backtest_launch": 10, "key_generation": 5, "checkout": 10}
)


@dataclass(frozen=True)
class RateLimitPolicy:
    """Who gets how many requests per window.

    ``scale`` multiplies every limit (load tests, private deployments); ``window_seconds`` exists
    for tests, the service keeps the spec's minute.

    >>> p = RateLimitPolicy()
    >>> p.limit_for("pro", first_party=False), p.limit_for("pro", first_party=True), p.guest_limit
    (120, 240, 20)
    >>> RateLimitPolicy(scale=10).limit_for("free", first_party=False)
    300
    """

    plan_limits: Mapping[str, int] = field(default_factory=lambda: PLAN_LIMITS)
    endpoint_limits: Mapping[str, int] = field(default_factory=lambda: ENDPOINT_LIMITS)
    guest_limit: int = 20
    first_party_factor: int = 2
    scale: float = 1.0
    window_seconds: int = 60
    unavailable_retry_after: int = 5

    def __post_init__(self) -> None:
        if self.scale <= 0 or self.window_seconds <= 0 or self.guest_limit <= 0:
            raise ValueError("rate-limit scale, window and guest limit must be positive")

    def limit_for(self, plan: str, *, first_party: bool, override: int | None = None) -> int:
        """Requests per window for an account on ``plan`` (unknown plans get the ``free`` limit), or
        of its operator-set ``override`` instead of the plan's.

        >>> RateLimitPolicy().limit_for("no-such-plan", first_party=False)
        30
        >>> RateLimitPolicy().limit_for("free", first_party=True, override=500)
        1000
        """
        base = self.plan_limits.get(plan, self.plan_limits.get("free", 30)) if override is None else override
        factor = self.first_party_factor if first_party else 1
        return max(1, round(base * factor * self.scale))

    def endpoint_limit(self, group: str, override: int | None = None) -> int:
        """Requests per window of one endpoint group (``override``: the account's own).

        >>> policy = RateLimitPolicy()
        >>> policy.endpoint_limit("key_generation"), policy.endpoint_limit("checkout", 3)
        (5, 3)
        """
        base = override if override is not None else self.endpoint_limits[group]
        return max(1, round(base * self.scale))

    def guest(self) -> int:
        """Requests per window for one guest IP.

        >>> RateLimitPolicy(guest_limit=5).guest()
        5
        """
        return max(1, round(self.guest_limit * self.scale))

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimitPolicy:
        """The policy of the service settings (``rate_limit_scale``, ``rate_limit_guest``).

        >>> s = Settings(database_url="sqlite://", secret_key=b"k" * 32, rate_limit_scale=100)
        >>> RateLimitPolicy.from_settings(s).limit_for("free", first_party=False)
        3000
        """
        return cls(scale=settings.rate_limit_scale, guest_limit=settings.rate_limit_guest)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RateLimitPolicy:
        """``RATE_LIMIT_SCALE`` (number > 0, default 1) and ``RATE_LIMIT_GUEST`` (per minute, default
        20) of ``environ`` (default ``os.environ``), parsed as ``Settings.from_env`` does. Prefer
        :meth:`from_settings` where the settings are at hand.

        >>> RateLimitPolicy.from_env({"RATE_LIMIT_SCALE": "100"}).limit_for("free", first_party=False)
        3000
        """
        tunables = tunables_from_env(os.environ if environ is None else environ)
        scale, guest = tunables.get("rate_limit_scale", 1.0), tunables.get("rate_limit_guest", 20)
        return cls(scale=scale, guest_limit=guest)


@dataclass(frozen=True)
class RateLimitStatus:
    """The outcome for one request, as put in ``scope["state"]["ratelimit"]``.

    >>> RateLimitStatus(limit=30, remaining=29, reset=1700000060.2, allowed=True).headers()
    {'X-RateLimit-Limit': '30', 'X-RateLimit-Remaining': '29', 'X-RateLimit-Reset': '1700000061'}
    """

    limit: int
    remaining: int
    reset: float
    allowed: bool

    def headers(self) -> dict[str, str]:
        """The three ``X-RateLimit-*`` headers (reset as whole Unix seconds, rounded up).

        >>> RateLimitStatus(limit=5, remaining=-1, reset=10.2, allowed=False).headers()
        {'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '11'}
        """
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.remaining)),
            "X-RateLimit-Reset": str(math.ceil(self.reset)),
        }


# Storage failures that mean "cannot count right now" (fail closed) rather than a bug.
_UNAVAILABLE = (limits.errors.StorageError, OSError, TimeoutError, asyncio.TimeoutError)


class RateLimitMiddleware:
    """Pure ASGI middleware enforcing `RateLimitPolicy`; put it after authentication.

    ``storage_url`` is None or ``memory://`` (in process) or a ``redis://host:port/db`` URL.
    ``key_prefix`` namespaces the Redis keys (instances that share it share limits).

    >>> import asyncio, httpx
    >>> from starlette.responses import PlainTextResponse
    >>> app = RateLimitMiddleware(PlainTextResponse("ok"), policy=RateLimitPolicy(guest_limit=1))
    >>> async def twice():
    ...     transport = httpx.ASGITransport(app=app)
    ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
    ...         return [await client.get("/") for _ in range(2)]
    >>> first, second = asyncio.run(twice())
    >>> first.headers["x-ratelimit-remaining"], second.status_code, second.json()["reason"]
    ('0', 429, 'rate_limit_exceeded')
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        storage_url: str | None = None,
        policy: RateLimitPolicy | None = None,
        key_prefix: str = "svc-ratelimit",
        timeout: float = 1.0,
        per_ip: Callable[[Scope], int | None] | None = None,
        group: Callable[[Scope], str | None] | None = None,
        overrides: Callable[[str], Mapping[str, int]] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.app = app
        # The service's clock (tests move it instead of sleeping through a window).
        self.clock = clock or WallClock()
        self.policy = policy or RateLimitPolicy()
        # Operations counted per client IP with a limit of their own instead of the caller's (login:
        # a budget larger than one user needs, so one client's failures lock no one else out).
        self.per_ip = per_ip or (lambda scope: None)
        # The endpoint group of a costly operation (a launch, a key, a checkout), counted apart at a
        # limit of its own; and an account's operator-set limits (endpoint -> per minute), from a cache.
        self.group = group or (lambda scope: None)
        self.overrides = overrides or (lambda svc_id: {})
        self._counter: Counter = counter_for(storage_url, key_prefix, timeout, self.clock)
        self._items: dict[int, RateLimitItem] = {}

    def _item(self, amount: int) -> RateLimitItem:
        item = self._items.get(amount)
        if item is None:
            item = limits.RateLimitItemPerSecond(amount, self.policy.window_seconds, namespace="svc")
            self._items[amount] = item
        return item

    def _identity(self, scope: Scope) -> tuple[int, tuple[str, str]]:
        """(limit, storage identifiers) for the caller: the account, or the client IP for guests; an
        operation with a per-IP limit of its own counts the client IP against that limit."""
        principal = scope.get("state", {}).get("principal")
        own = self.per_ip(scope) if "path" in scope else None
        if own is not None:
            ip = getattr(principal, "ip", None) or (scope.get("client") or ("unknown",))[0]
            return max(1, round(own * self.policy.scale)), ("op-ip", str(ip))
        svc_id = getattr(principal, "svc_id", None)
        if principal is not None and getattr(principal, "kind", "guest") != "guest" and svc_id:
            own_limits = self.overrides(str(svc_id))
            group = self.group(scope) if "path" in scope else None
            if group is not None:
                limit = self.policy.endpoint_limit(group, own_limits.get(group))
                return limit, ("account-op", f"{svc_id}:{group}")
            plan = str(getattr(principal, "plan", "free"))
            first_party = bool(getattr(principal, "first_party", False))
            limit = self.policy.limit_for(plan, first_party=first_party, override=own_limits.get("default"))
            return limit, ("account", str(svc_id))
        ip = getattr(principal, "ip", None) or (scope.get("client") or ("unknown",))[0]
        return self.policy.guest(), ("ip", str(ip))

    def check_now(self, scope: Scope) -> None:
        """Count this request in the calling thread (the handler's, after its credential was checked
        there): sets the rate-limit state and headers, or raises the 429.

        >>> limiter = RateLimitMiddleware(None, policy=RateLimitPolicy(guest_limit=1))
        >>> scope = {"type": "http", "client": ("10.0.0.8", 1), "state": {}}
        >>> limiter.check_now(scope); scope["state"]["ratelimit"].remaining
        0
        >>> limiter.check_now(scope)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.ApiError: 429 too_many_requests
        """
        amount, identifiers = self._identity(scope)
        allowed, stats = self._counter.hit_now(self._item(amount), *identifiers)  # type: ignore[attr-defined]
        self._admit(scope, RateLimitStatus(amount, stats.remaining, stats.reset_time, allowed=allowed))

    def _admit(self, scope: Scope, status: RateLimitStatus) -> None:
        state = scope.setdefault("state", {})
        state["ratelimit"] = status
        state[STICKY_HEADERS] = status.headers()
        if not status.allowed:
            retry = max(1.0, status.reset - self.clock.seconds())
            raise rate_limited(retry)

    async def check(self, scope: Scope) -> RateLimitStatus:
        """Count this request; the status says whether it may proceed. Raises `ApiError` 503 when
        the storage cannot be reached.

        >>> import asyncio
        >>> limiter = RateLimitMiddleware(None, policy=RateLimitPolicy(guest_limit=1))
        >>> scope = {"type": "http", "client": ("10.0.0.9", 1)}
        >>> [asyncio.run(limiter.check(scope)).allowed for _ in range(2)]
        [True, False]
        """
        amount, identifiers = self._identity(scope)
        try:
            allowed, stats = await self._counter.hit(self._item(amount), *identifiers)
        except _UNAVAILABLE as exc:
            logger.warning(
                "rate-limit storage unavailable (%s) [correlation_id=%s]",
                exc,
                scope.get("state", {}).get("correlation_id", "-"),
            )
            wait = self.policy.unavailable_retry_after
            blocked = RateLimitStatus(amount, 0, self.clock.seconds() + wait, allowed=False)
            scope.setdefault("state", {})[STICKY_HEADERS] = blocked.headers()
            raise ApiError(
                503, "service_unavailable", reason="temporarily_unavailable", retry_after=wait
            ) from exc
        return RateLimitStatus(amount, stats.remaining, stats.reset_time, allowed=allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        if DEFERRED_CREDENTIAL in state and self._counter.counts_in_threads and self.per_ip(scope) is None:
            # The credential is checked in the handler's thread; count there too, after it.
            state[DEFERRED_LIMIT] = self.check_now
        else:
            try:
                self._admit(scope, await self.check(scope))
            except ApiError as exc:
                await _send_error(exc, state[STICKY_HEADERS], scope, receive, send)
                return

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start" and STICKY_HEADERS in state:
                sticky = state[STICKY_HEADERS].items()
                raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in sticky]
                names = {k for k, _ in raw}
                kept = [(k, v) for k, v in message.get("headers", ()) if k.lower() not in names]
                message["headers"] = kept + raw
            await send(message)

        await self.app(scope, receive, send_wrapper)

    async def aclose(self) -> None:
        """Close the storage client of the running event loop (call from the app's lifespan).

        >>> import asyncio
        >>> asyncio.run(RateLimitMiddleware(None).aclose()) is None
        True
        """
        await self._counter.aclose()


async def _send_error(
    exc: ApiError, headers: Mapping[str, str], scope: Scope, receive: Receive, send: Send
) -> None:
    response = exc.response(descriptive=str(scope.get("path", "")).startswith(DESCRIPTIVE_PREFIX))
    response.headers.update(headers)
    await response(scope, receive, send)
