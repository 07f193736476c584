"""Idempotency keys for mutating operations (pure ASGI middleware).

A POST whose operation takes an ``idempotency_key`` (a body field of 16-128 letters, digits, ``.``,
``_``, ``:``, ``-``) is claimed in the ``idempotency_keys`` table under (caller, key) with a
fingerprint of the request. Then:

- first time: the request runs; its response is stored with the claim and sent;
- same request again: the stored response is replayed (header ``Idempotent-Replay: true``);
- a different request under the same key: 409 ``idempotency_key_reused``;
- the first request still running: 409 ``request_in_progress``.

Responses that say "try again" (401, 409, 429, 5xx) are not stored; the claim is released so a
retry runs for real. A claim left behind by a crash is taken over after ``stale_after`` seconds.

Example:
    >>> valid_key("order-2026-11-22-0001"), valid_key("short")
    (True, False)
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable
from typing import Any, Protocol

import sqlalchemy as sa
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svc_api.core.clock import Clock
from svc_api.core.errors import ApiError
from svc_api.core.jsonbody import InvalidJson, parse_object
from svc_api.core.liveness import HOLDER, LEASE_SECONDS, is_dead
from svc_api.core.store import Store, StoreUnavailable
from svc_api.core.tables import idempotency_keys

logger = logging.getLogger("svc_api.http")

_KEY = re.compile(r"[A-Za-z0-9._:\-]{16,128}")
_RETRYABLE = frozenset({401, 408, 409, 425, 429})

Applies = Callable[[Scope], bool]


class _Services(Protocol):
    @property
    def store(self) -> Store: ...

    @property
    def clock(self) -> Clock: ...


def valid_key(value: object) -> bool:
    """True for a well-formed idempotency key.

    Example:
        >>> valid_key("x" * 129)
        False
    """
    return isinstance(value, str) and _KEY.fullmatch(value) is not None


def fingerprint(method: str, path: str, query: bytes, body: dict[str, Any]) -> str:
    """SHA-256 of the request's meaning (method, path, query, canonical JSON body).

    Example:
        >>> one = fingerprint("POST", "/user", b"", {"a": 1, "b": 2})
        >>> one == fingerprint("POST", "/user", b"", {"b": 2, "a": 1})
        True
    """
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{method}\n{path}\n{query.decode('latin-1')}\n{canonical}".encode()).hexdigest()


class IdempotencyMiddleware:
    """Pure ASGI middleware; ``applies(scope)`` says whether the request's operation takes a key.

    Example:
        >>> from starlette.responses import PlainTextResponse
        >>> mw = IdempotencyMiddleware(PlainTextResponse("ok"), services=None, applies=lambda scope: False)
        >>> mw.stale_after
        600
    """

    def __init__(
        self, app: ASGIApp, *, services: _Services, applies: Applies, stale_after: int = 600
    ) -> None:
        self.app = app
        self.services = services
        self.applies = applies
        self.stale_after = stale_after

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self.applies(scope):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        replay_receive = replaying(raw, receive)
        body = _json_object(raw)
        principal = scope.get("state", {}).get("principal")
        owner = getattr(principal, "svc_id", None)
        if body is None or owner is None or body.get("idempotency_key") is None:
            await self.app(scope, replay_receive, send)
            return
        key = body["idempotency_key"]
        if not valid_key(key):
            raise ApiError(
                400,
                "invalid_idempotency_key",
                extra={"message": "idempotency_key must be 16-128 letters, digits, '.', '_', ':' or '-'"},
            )
        print_ = fingerprint("POST", scope["path"], scope.get("query_string", b""), body)
        stored = await self._claim(owner, key, print_)
        if stored is not None:
            await send_stored(stored, send)
            return
        await self._run(scope, replay_receive, send, owner, key)

    async def _claim(self, owner: str, key: str, print_: str) -> dict[str, Any] | None:
        try:
            return await run_in_threadpool(
                claim,
                self.services.store,
                owner,
                key,
                print_,
                self.stale_after,
                now=self.services.clock.now(),
            )
        except StoreUnavailable as exc:
            raise ApiError(
                503, "service_unavailable", reason="store_unavailable", retry_after=exc.retry_after
            ) from None

    async def _run(self, scope: Scope, receive: Receive, send: Send, owner: str, key: str) -> None:
        messages: list[Message] = []

        async def capture(message: Message) -> None:
            messages.append(message)

        try:
            await self.app(scope, receive, capture)
        except BaseException:
            await self._finish(owner, key, None)
            raise
        start = next((m for m in messages if m["type"] == "http.response.start"), None)
        status = int(start["status"]) if start else 500
        content = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
        content_type = _header(start, b"content-type") if start else None
        keep = status < 500 and status not in _RETRYABLE
        await self._finish(owner, key, (status, content_type, content) if keep else None)
        for message in messages:
            await send(message)

    async def _finish(self, owner: str, key: str, response: tuple[int, str | None, bytes] | None) -> None:
        try:
            await run_in_threadpool(finish, self.services.store, owner, key, response)
        except StoreUnavailable as exc:
            # The operation already happened; its response still goes out. The claim stays in flight
            # and expires after stale_after, so a retry cannot run the operation twice meanwhile.
            logger.warning("could not record idempotent response for %s/%s: %s", owner, key, exc)


def claim(
    store: Store, owner: str, key: str, print_: str, stale_after: int, *, now: int
) -> dict[str, Any] | None:
    """Claim (owner, key) for a new request, or return the stored response to replay.

    Raises ``ApiError`` 409 for another request under the key or one still in flight.

    Example:
        >>> claim(store, "AB12CD", "k" * 16, "f1", 600, now=1_700_000_000) is None
        True
        >>> claim(store, "AB12CD", "k" * 16, "f2", 600, now=1_700_000_000)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.ApiError: 409 idempotency_key_reused
    """
    t = idempotency_keys.c
    with store.write() as conn:
        row = conn.execute(sa.select(idempotency_keys).where(t.principal == owner, t.key == key)).first()
        if row is None:
            try:
                with conn.begin_nested():
                    conn.execute(
                        idempotency_keys.insert().values(
                            principal=owner,
                            key=key,
                            fingerprint=print_,
                            state="in_flight",
                            created_at=now,
                            holder=HOLDER,
                            lease_until=now + LEASE_SECONDS,
                        )
                    )
                return None
            except sa.exc.IntegrityError:
                row = conn.execute(
                    sa.select(idempotency_keys).where(t.principal == owner, t.key == key)
                ).first()
        assert row is not None  # the insert collided with it, and keys are never deleted inside a request
        if row.fingerprint != print_:
            raise ApiError(
                409,
                "idempotency_key_reused",
                extra={"message": "this idempotency_key was used for a different request"},
            )
        if row.state == "done":
            return {"status": row.status_code, "content_type": row.content_type, "body": row.body}
        if _abandoned(row, now, stale_after):
            conn.execute(
                idempotency_keys.update()
                .where(t.principal == owner, t.key == key)
                .values(created_at=now, holder=HOLDER, lease_until=now + LEASE_SECONDS)
            )
            return None
        raise ApiError(
            409,
            "request_in_progress",
            extra={"message": "a request with this idempotency_key is still being processed"},
        )


def _abandoned(row: Any, now: int, stale_after: int) -> bool:
    """An in-flight claim nobody works on any more: its process died (same host, known at once), its
    lease ran out unrenewed (another host), or it is older than ``stale_after`` (no request runs
    that long; rows from before leases have only this)."""
    if is_dead(row.holder) or row.created_at < now - stale_after:
        return True
    return row.lease_until is not None and bool(row.lease_until < now)


def finish(store: Store, owner: str, key: str, response: tuple[int, str | None, bytes] | None) -> None:
    """Store the response of a claimed request, or release the claim when ``response`` is None.

    Example:
        >>> _ = claim(store, "AB12CD", "k" * 16, "f1", 600, now=1_700_000_000)
        >>> finish(store, "AB12CD", "k" * 16, (200, "application/json", b"{}"))
        >>> claim(store, "AB12CD", "k" * 16, "f1", 600, now=1_700_000_000)["status"]
        200
    """
    t = idempotency_keys.c
    where = (t.principal == owner, t.key == key)
    with store.write() as conn:
        if response is None:
            conn.execute(idempotency_keys.delete().where(*where))
            return
        status, content_type, body = response
        conn.execute(
            idempotency_keys.update()
            .where(*where)
            .values(state="done", status_code=status, content_type=content_type, body=body)
        )


async def read_body(receive: Receive) -> bytes:
    """The whole request body from ``receive`` (what arrived before a disconnect); pair it with
    :func:`replaying` so the route reads the same body again.

    Example:
        >>> import asyncio
        >>> parts = iter([{"type": "http.request", "body": b"ab", "more_body": True},
        ...               {"type": "http.request", "body": b"c"}])
        >>> async def receive():
        ...     return next(parts)
        >>> asyncio.run(read_body(receive))
        b'abc'
    """
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replaying(raw: bytes, upstream: Receive) -> Receive:
    """A receive that hands the already-read body over once, then listens to the client again.

    Example:
        >>> import asyncio
        >>> asyncio.run(replaying(b"{}", None)())["body"]
        b'{}'
    """
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await upstream()
        sent = True
        return {"type": "http.request", "body": raw, "more_body": False}

    return receive


def _json_object(raw: bytes) -> dict[str, Any] | None:
    # A body that is not a JSON object is refused by the route (400); here it just has no key.
    try:
        return parse_object(raw) if raw.strip() else None
    except InvalidJson:
        return None


def _header(start: Message, name: bytes) -> str | None:
    for key, value in start.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def send_stored(stored: dict[str, Any], send: Send) -> None:
    """Answer with a stored reply (``status``, ``content_type``, ``body``), marked
    ``Idempotent-Replay: true``.

    Example:
        >>> import asyncio
        >>> sent = []
        >>> async def send(message):
        ...     sent.append(message)
        >>> asyncio.run(send_stored({"status": 201, "content_type": None, "body": b"ok"}, send))
        >>> sent[0]["status"], sent[1]["body"]
        (201, b'ok')
    """
    headers = [(b"idempotent-replay", b"true")]
    if stored["content_type"]:
        headers.append((b"content-type", stored["content_type"].encode("latin-1")))
    body = bytes(stored["body"] or b"")
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": stored["status"], "headers": headers})
    await send({"type": "http.response.body", "body": body})
