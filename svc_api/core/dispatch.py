"""Dispatch of the route families: one endpoint per family, a table from selector to operation.

``/user`` (POST, ``request_type``), ``/backtest`` (POST, ``action``) and ``/tradingdata`` (GET,
``request_type``) each map the selector to an :class:`Operation`. An unknown or retired selector is a
405. The family checks access, parses the parameters, runs the (synchronous) handler in the thread
pool, maps domain failures to error envelopes and shapes the reply: ``{ok: true, data}`` for
``/user``, the bare object for the others.

Example:
    >>> op = Operation(lambda call: {"pong": True}, access="public")
    >>> family = Family("user", "request_type", {"ping": op}, envelope=True)
    >>> sorted(family.operations)
    ['ping']
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from svc_api.core.calls import Call, Handler, Reply, lookups_as_404
from svc_api.core.contract import ErrorDoc, Fields, Shape
from svc_api.core.errors import ApiError, ServiceError, session_expired
from svc_api.core.jsonbody import parse_object
from svc_api.core.principal import Principal
from svc_api.core.ratelimit import DEFERRED_CREDENTIAL, DEFERRED_LIMIT
from svc_api.core.services import Services
from svc_api.core.store import StoreUnavailable, local_store

RETIRED = frozenset({"track_signal", "untrack_signal", "tracked_signals"})
ACCESS = ("public", "identified", "session")
SCOPES = ("read", "trade")


@dataclass(frozen=True)
class Operation:
    """One ``request_type`` / ``action``.

    ``access``: ``public`` (anyone, guests included), ``identified`` (session or API key),
    ``session`` (session token only; an API key gets 403). ``idempotent``: the operation takes an
    ``idempotency_key`` (see :mod:`svc_api.core.idempotency`).

    Example:
        >>> Operation(lambda call: {}, access="session").idempotent
        False
    """

    handler: Handler
    access: str = "identified"
    request: type[Fields] | None = None
    """The request model: the dispatcher validates the fields with it (after the credential and
    the limit) and passes the clean model to ``handler(call, request)``."""
    reply: type[Shape] | None = None
    """The reply model of what the handler returns (``data`` on ``/user``)."""
    summary: str = ""
    """One line for the API description."""
    errors: tuple[ErrorDoc, ...] = ()
    """The operation's own documented errors (the family's shared ones are added)."""
    idempotent: bool = False
    scope: str = "read"
    """The API-key permission the operation needs: ``read`` (it only reads) or ``trade`` (it spends
    credits, creates, changes or deletes). Sessions hold both."""
    unavailable: Callable[[int | None], ServiceError] | None = None
    """The error answered when the store is down, when this operation's is not the generic 503."""
    per_ip_limit: int | None = None
    """Requests a minute per client IP, counted instead of the caller's plan or guest limit (login:
    more than one user needs, so one client's failures lock no one else out behind an address)."""
    limit_group: str | None = None
    """The endpoint group of an operation that costs more than a read (``backtest_launch``,
    ``key_generation``): counted apart per account at the group's limit (core.ratelimit)."""
    inline: bool | Callable[[Mapping[str, Any]], bool] = False
    """A few indexed reads and nothing else (no files, no engine work): on an SQLite store it runs on
    the event loop, skipping the thread hop that costs more than the reads (WAL readers never wait
    for writers). On PostgreSQL, whose reads wait on the network, it runs in the thread pool. A
    callable decides per request from the parameters (True: inline)."""

    def __post_init__(self) -> None:
        if self.access not in ACCESS:
            raise ValueError(f"access must be one of {ACCESS}, got {self.access!r}")
        if self.scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, got {self.scope!r}")


class Family:
    """The endpoint of one route family.

    Args:
        name: ``user``, ``backtest`` or ``tradingdata`` (used in messages).
        selector: the query parameter naming the operation.
        operations: selector value -> :class:`Operation`.
        envelope: wrap replies as ``{ok: true, data}``.
        body: read parameters from the JSON body (POST) instead of the query string (GET).
    """

    def __init__(
        self,
        name: str,
        selector: str,
        operations: Mapping[str, Operation],
        *,
        envelope: bool,
        body: bool = True,
    ) -> None:
        self.name = name
        self.selector = selector
        self.operations = dict(operations)
        self.envelope = envelope
        self.body = body

    def operation(self, value: str | None) -> Operation | None:
        """The operation of a selector value (None for unknown or retired names).

        Example:
            >>> Family("user", "request_type", {}, envelope=True).operation("track_signal") is None
            True
        """
        if value is None or value in RETIRED:
            return None
        return self.operations.get(value)

    async def __call__(self, request: Request) -> Response:
        """The Starlette endpoint."""
        value = request.query_params.get(self.selector)
        op = self.operation(value)
        if op is None:
            raise ApiError(
                405,
                f"invalid_{self.selector}",
                extra={"message": f"unknown {self.selector} {value!r} for /{self.name}"},
            )
        principal: Principal = request.state.principal
        state = request.scope.setdefault("state", {})
        deferred = state.pop(DEFERRED_CREDENTIAL, None)
        if deferred is None:
            _authorise(op, principal)
        try:
            params = await self._params(request)
        except ServiceError:
            if deferred is not None:  # the credential and the limit answer first, as they would have
                await run_in_threadpool(_admit, op, deferred, state)
            raise
        call = Call(request.app.state.services, principal, params, request.headers)
        try:
            if _inline(op, params) and local_store(call.services):
                result = _run(op, call, deferred, state)
            else:
                result = await run_in_threadpool(_run, op, call, deferred, state)
        except StoreUnavailable as exc:
            if op.unavailable is not None:
                raise op.unavailable(exc.retry_after) from None
            raise
        return self._shape(result)

    async def _params(self, request: Request) -> dict[str, Any]:
        if not self.body:
            return {k: v for k, v in request.query_params.items() if k != self.selector}
        return parse_object(await request.body())

    def _shape(self, result: Any) -> Response:
        reply = result if isinstance(result, Reply) else Reply(result)
        if not self.envelope:
            return JSONResponse(reply.data, status_code=reply.status)
        body: dict[str, Any] = {"ok": True, "data": reply.data}
        if reply.timestamp is not None:
            body["timestamp"] = reply.timestamp
        return JSONResponse(body, status_code=reply.status)


def _run(op: Operation, call: Call, check: Callable[[], Principal] | None, state: dict[str, Any]) -> Any:
    """The handler, after the credential check and rate-limit count that authentication left to
    this thread (see :func:`_admit`)."""
    if check is None:
        return _handle(op, call)
    with contextlib.ExitStack() as shared:
        if op.scope == "read":
            # A reading operation and its credential check share one read transaction; a store
            # that is down is reported by the credential check, as it would be without sharing.
            with contextlib.suppress(StoreUnavailable):
                store = call.store
                if not store.single_connection:
                    shared.enter_context(store.read())
        return _handle(op, Call(call.services, _admit(op, check, state), call.params, call.headers))


def _handle(op: Operation, call: Call) -> Any:
    """The handler, given the request validated by the operation's model when it has one."""
    if op.request is None:
        return op.handler(call)
    return op.handler(call, op.request.parse(call.params))


def _inline(op: Operation, params: Mapping[str, Any]) -> bool:
    """Whether ``op`` runs on the event loop for these parameters (see :attr:`Operation.inline`)."""
    return op.inline(params) if callable(op.inline) else op.inline


def _admit(op: Operation, check: Callable[[], Principal], state: dict[str, Any]) -> Principal:
    """Check the credential against the store, count the request (a failed check counts against
    the client as a guest, as before), authorise the operation; the caller's principal."""
    count = state.pop(DEFERRED_LIMIT, None)
    try:
        principal = check()
    except ServiceError:
        if count is not None:
            count({"type": "http", "state": state})
        raise
    state["principal"] = principal
    if count is not None:
        count({"type": "http", "state": state})
    _authorise(op, principal)
    return principal


def _authorise(op: Operation, principal: Principal) -> None:
    if op.access == "public":
        return
    if not principal.identified:
        raise session_expired("this operation needs a session token or an API key")
    authorise_key(principal, access=op.access, scope=op.scope)


def authorise_key(principal: Principal, *, access: str, scope: str) -> None:
    """The rule of API keys, for every family and for ``/education/v1``: a ``session`` operation
    refuses keys, and a key holds the permission (``read`` or ``trade``) an identified operation
    needs; 403 otherwise, before anything runs or is charged. Sessions and guests pass (a guest is
    refused by the operation's own identity check).

    Example:
        >>> key = Principal("api_key", "AB12CD", "free", False, "::1", ("read",))
        >>> authorise_key(key, access="identified", scope="read")
        >>> authorise_key(key, access="identified", scope="trade")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.ApiError: 403 forbidden
    """
    if principal.kind != "api_key" or access == "public":
        return
    if access == "session":
        raise ApiError(
            403, "forbidden", extra={"message": "this operation needs a session token; API keys are refused"}
        )
    if scope not in principal.permissions:
        raise ApiError(
            403,
            "forbidden",
            code="insufficient_scope",
            extra={"message": f"this API key lacks the {scope!r} permission this operation needs"},
        )


def merge(*tables: Mapping[str, Operation]) -> dict[str, Operation]:
    """One dispatch table from several; a name defined twice is an error.

    Example:
        >>> op = Operation(lambda call: {})
        >>> merge({"a": op}, {"a": op})
        Traceback (most recent call last):
        ...
        ValueError: operation 'a' is defined twice
    """
    out: dict[str, Operation] = {}
    for table in tables:
        for name, op in table.items():
            if name in out:
                raise ValueError(f"operation {name!r} is defined twice")
            out[name] = op
    return out


__all__ = ["Call", "Family", "Operation", "Reply", "Services", "authorise_key", "lookups_as_404", "merge"]
