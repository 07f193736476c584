"""Authentication: who is calling, as a :class:`Principal` in ``scope["state"]["principal"]``.

Credentials, checked in this order:

- ``X-API-Key`` + ``X-API-Secret``: a developer key (``kind="api_key"``). Missing half, unknown,
  revoked or wrong: 401 ``invalid_credentials``. Key store unreachable: 503
  ``api_key_store_unavailable`` (never a downgrade to guest).
- ``Authorization: Bearer <session token>``: an app session (``kind="session"``, first party).
  Missing, malformed, unknown or ended: 401 ``session_expired``; expired: the dedicated
  ``{error: "token_expired", code: "session_expired", message}``.
- nothing: a guest, identified by client IP.

For the plain operations of the dispatch families, when the rate limiter counts in process
(``deferrable``), the credential is not looked up here: the lookup is left in
``scope["state"]["verify"]`` and runs in the handler's own thread, followed there by the rate-limit
count (see :meth:`svc_api.core.dispatch.Family.__call__`). That saves a thread hop per request;
the store is still asked on every request, so a revoked key or an ended session fails at once, and
a plan change reaches the limiter at once. Operations that write under an idempotency key or manage
keys, other routes, and limits kept in Redis take the credential check here, before anything else.

:class:`AuthMiddleware` only records the outcome; a rejection is raised by :class:`AuthGate`, placed
after the rate limiter, so that failed attempts are counted and carry the rate-limit headers too.

Example:
    >>> Principal.guest("10.0.0.1")
    Principal(kind='guest', svc_id=None, plan='guest', first_party=False, ip='10.0.0.1', permissions=())
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from svc_api.accounts.service import SessionExpired, SessionInvalid, resolve_session
from svc_api.core.errors import ApiError, session_expired
from svc_api.core.principal import Principal
from svc_api.core.ratelimit import DEFERRED_CREDENTIAL
from svc_api.core.store import Store, StoreUnavailable
from svc_api.keys.service import InvalidCredentials, authenticate_key
from svc_api.settings import Settings

_TOKEN = re.compile(r"[A-Za-z0-9_\-]{20,128}")
_API_KEY = re.compile(r"svk_[0-9a-f]{32}")
_PENDING = "auth_error"


class _Services(Protocol):
    settings: Settings

    @property
    def store(self) -> Store: ...


def _invalid_credentials() -> ApiError:
    return ApiError(
        401, "invalid_credentials", code="invalid_credentials", extra={"message": "invalid API key or secret"}
    )


def _unavailable(retry_after: int, *, key_store: bool) -> ApiError:
    if key_store:
        return ApiError(
            503, "api_key_store_unavailable", code="api_key_store_unavailable", retry_after=retry_after
        )
    return ApiError(503, "service_unavailable", reason="store_unavailable", retry_after=retry_after)


_KEY_OPERATIONS = frozenset({b"api_key_generate", b"api_key_status", b"api_key_revoke"})


def _manages_keys(scope: Scope) -> bool:
    if scope.get("path") != "/user":
        return False
    query = scope.get("query_string", b"")
    return any(
        part.partition(b"=")[2] in _KEY_OPERATIONS
        for part in query.split(b"&")
        if part.startswith(b"request_type=")
    )


def _client_ip(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class Authenticator:
    """Resolves request headers to a :class:`Principal` (raises ``ApiError`` on rejection).

    Example:
        >>> import asyncio
        >>> auth = Authenticator(services=None)
        >>> asyncio.run(auth.principal(Headers({}), "1.2.3.4")).kind
        'guest'
    """

    def __init__(self, services: _Services) -> None:
        self.services = services

    async def principal(self, headers: Headers, ip: str, *, key_management: bool = False) -> Principal:
        """The caller described by ``headers``.

        ``key_management``: the request manages API keys, so an unreachable store is reported as
        ``api_key_store_unavailable`` even when the caller uses a session token.
        """
        key, secret = headers.get("x-api-key"), headers.get("x-api-secret")
        if key is not None or secret is not None:
            return await self._by_key(key, secret, ip)
        authorization = headers.get("authorization")
        if authorization is not None:
            return await self._by_session(authorization, ip, key_management)
        return Principal.guest(ip)

    def key_lookup(self, key: str | None, secret: str | None, ip: str) -> Callable[[], Principal]:
        """A function checking an API key against the store (raises the 401 or 503 to answer).

        Example:
            >>> Authenticator(services=None).key_lookup("svk_nope", "s", "::1")()
            Traceback (most recent call last):
            ...
            svc_api.core.errors.ApiError: 401 invalid_credentials
        """
        if not key or not secret or not _API_KEY.fullmatch(key) or len(secret) > 256:
            raise _invalid_credentials()
        services = self.services

        def lookup() -> Principal:
            try:
                with services.store.read() as conn:
                    who = authenticate_key(
                        conn, key, secret, secret_key=services.settings.secret_key, now=services.clock.now()
                    )
            except InvalidCredentials:
                raise _invalid_credentials() from None
            except StoreUnavailable as exc:
                raise _unavailable(exc.retry_after, key_store=True) from None
            return Principal("api_key", who.svc_id, who.plan, False, ip, who.permissions)

        return lookup

    def session_lookup(self, authorization: str, ip: str, key_management: bool) -> Callable[[], Principal]:
        """A function checking a session token against the store (raises the 401 or 503 to answer).

        Example:
            >>> Authenticator(services=None).session_lookup("Basic x", "::1", False)
            Traceback (most recent call last):
            ...
            svc_api.core.errors.ApiError: 401 session_expired
        """
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not _TOKEN.fullmatch(token):
            raise session_expired("the Authorization header must be 'Bearer <session token>'")
        services = self.services

        def lookup() -> Principal:
            try:
                with services.store.read() as conn:
                    svc_id, plan = resolve_session(conn, token, now=services.clock.now())
            except SessionExpired:
                raise ApiError(
                    401,
                    "token_expired",
                    code="session_expired",
                    extra={"message": "the session has expired; log in again"},
                ) from None
            except SessionInvalid:
                raise session_expired("unknown or ended session token") from None
            except StoreUnavailable as exc:
                raise _unavailable(exc.retry_after, key_store=key_management) from None
            return Principal("session", svc_id, plan, True, ip, ("read", "trade"))

        return lookup

    async def _by_key(self, key: str | None, secret: str | None, ip: str) -> Principal:
        return await run_in_threadpool(self.key_lookup(key, secret, ip))

    async def _by_session(self, authorization: str, ip: str, key_management: bool) -> Principal:
        return await run_in_threadpool(self.session_lookup(authorization, ip, key_management))


class AuthMiddleware:
    """Pure ASGI: sets ``scope["state"]["principal"]``; a rejected caller is recorded as a guest with
    the pending error, which :class:`AuthGate` raises further in.

    Example:
        >>> import asyncio, httpx
        >>> from starlette.responses import PlainTextResponse
        >>> async def who(scope, receive, send):
        ...     await PlainTextResponse(scope["state"]["principal"].kind)(scope, receive, send)
        >>> app = AuthMiddleware(AuthGate(who), services=None)
        >>> async def get():
        ...     transport = httpx.ASGITransport(app=app)
        ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        ...         return (await c.get("/")).text
        >>> asyncio.run(get())
        'guest'
    """

    def __init__(
        self, app: ASGIApp, *, services: _Services, deferrable: Callable[[Scope], bool] | None = None
    ) -> None:
        self.app = app
        self.authenticator = Authenticator(services)
        self.deferrable = deferrable or (lambda scope: False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        ip = _client_ip(scope)
        try:
            state["principal"] = await self._resolve(scope, state, ip)
        except ApiError as exc:
            state["principal"] = Principal.guest(ip)
            state[_PENDING] = exc
        await self.app(scope, receive, send)

    async def _resolve(self, scope: Scope, state: dict[str, object], ip: str) -> Principal:
        headers = Headers(scope=scope)
        key, secret = headers.get("x-api-key"), headers.get("x-api-secret")
        authorization = headers.get("authorization")
        if key is None and secret is None and authorization is None:
            return Principal.guest(ip)
        key_management = _manages_keys(scope)
        if key is not None or secret is not None:
            lookup = self.authenticator.key_lookup(key, secret, ip)
        else:
            lookup = self.authenticator.session_lookup(authorization or "", ip, key_management)
        if not key_management and self.deferrable(scope):
            state[DEFERRED_CREDENTIAL] = lookup
            return Principal.guest(ip)  # until the handler's thread has checked the credential
        return await run_in_threadpool(lookup)


class AuthGate:
    """Pure ASGI: raises the rejection recorded by :class:`AuthMiddleware`, if any.

    Example:
        >>> from starlette.responses import PlainTextResponse
        >>> AuthGate(PlainTextResponse("ok")).app.body
        b'ok'
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            pending = scope.get("state", {}).pop(_PENDING, None)
            if pending is not None:
                raise pending
        await self.app(scope, receive, send)
