"""The conventions every ``/education/v1`` route follows, written once: who is calling, the JSON
body, cursor pages, money, ``ETag``/``If-Match``, private caching, and the endpoint wrapper that
runs a handler's store work in the threadpool.

Choices (documented in docs/education-api.md and openapi.yaml):

- pages: ``cursor`` (opaque, signed, bound to the list it came from) and ``limit`` (1-100,
  default 20); a reply carries ``items`` and ``next_cursor`` (null on the last page);
- money: ``{amount_minor: integer, currency: "USD"}``; a decimal or a string amount is a 400;
- ``ETag`` values are strong, quoted; ``If-Match`` takes one of them or ``*``; a stale one is a
  412; where the spec asks for ``If-Match`` and it is missing, 428 ``precondition_required``;
- who may call: every route declares its access through :func:`route`: ``public`` (anyone; a
  credential only adds viewer state), ``identified`` (a session, or an API key holding the scope)
  or ``session`` (a session token; API keys get 403). The scope follows the method, as in the other
  families: ``GET`` reads (``read``), every other method changes something (``trade``).
  :class:`Authorise` applies the declaration before the idempotency layer and the handler run.

Money has its own module, :mod:`svc_api.education.money`.

Example:
    >>> etag("enrollment", 3)
    '"enrollment-3"'
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route, Router
from starlette.types import Receive, Scope, Send

from svc_api.core.cursors import decode_cursor, encode_cursor, page_size
from svc_api.core.dispatch import authorise_key
from svc_api.core.errors import ApiError, Invalid
from svc_api.core.jsonbody import parse_object
from svc_api.core.store import local_store
from svc_api.education.contract import DEFAULT_LIMIT, MAX_LIMIT, NoQuery, Op

MAX_BODY = 64 * 1024
NO_STORE = {"Cache-Control": "private, no-store"}


@dataclass
class Req:
    """One education request, as a handler sees it (its store work runs in the threadpool).

    Example:
        >>> Req(None, None, {}, QueryParams(""), Headers({}), {}).viewer is None
        True
    """

    services: Any
    principal: Any
    path: Mapping[str, Any]
    query: QueryParams
    headers: Headers
    body: dict[str, Any]
    params: Any = None
    """The query, validated by the route's :class:`~svc_api.education.contract.EduQuery`."""
    fields: Any = None
    """The body, validated by the route's :class:`~svc_api.education.contract.EduBody`."""

    @property
    def viewer(self) -> str | None:
        """The caller's account, or None for a guest (public routes)."""
        principal = self.principal
        return principal.svc_id if principal is not None and principal.identified else None

    @property
    def svc_id(self) -> str:
        """The caller's account; 401 for a guest (student routes)."""
        viewer = self.viewer
        if viewer is None:
            raise unauthenticated()
        return viewer

    @property
    def now(self) -> int:
        """The service clock (Unix seconds)."""
        return int(self.services.clock.now())

    @property
    def store(self) -> Any:
        return self.services.store

    @property
    def secret(self) -> bytes:
        return bytes(self.services.settings.secret_key)


Handler = Callable[[Req], Response | dict[str, Any]]
Gate = Callable[[Req], None]
"""A check of the caller that needs the store, run before the body's rules (it raises or returns)."""
Endpoint = Callable[[Request], Awaitable[Response]]
ACCESS = ("public", "identified", "session")
READING_METHODS = frozenset({"GET", "HEAD"})


def unauthenticated() -> ApiError:
    """The 401 of a guest on a route that needs an identity."""
    return ApiError(
        401,
        "unauthenticated",
        extra={"message": "this route needs a session: send Authorization: Bearer <session token>"},
    )


@dataclass(frozen=True)
class Policy:
    """Who may call one route: ``access`` (one of :data:`ACCESS`) and the API-key ``scope``.

    Example:
        >>> Policy.of("POST", "identified")
        Policy(access='identified', scope='trade')
    """

    access: str
    scope: str

    @classmethod
    def of(cls, method: str, access: str) -> Policy:
        """The policy of a route: the scope follows the method (reading needs ``read``; a change,
        creation or deletion needs ``trade``), so it cannot be declared wrong route by route."""
        if access not in ACCESS:
            raise ValueError(f"access must be one of {ACCESS}, got {access!r}")
        return cls(access, "read" if method in READING_METHODS else "trade")

    def check(self, principal: Any) -> None:
        """401 for a guest where an identity is needed; 403 for a key on a session route or a key
        without the scope (the rule of every family, :func:`svc_api.core.dispatch.authorise_key`)."""
        if self.access == "public":
            return
        if principal is None or not principal.identified:
            raise unauthenticated()
        authorise_key(principal, access=self.access, scope=self.scope)


def route(
    path: str,
    handler: Callable[..., Any],
    method: str,
    *,
    access: str,
    raw: bool = False,
    inline: bool = False,
    op: Op | None = None,
    gate: Gate | None = None,
    unknown_first: bool = False,
) -> Route:
    """A route with its declared :class:`Policy` and contract ``op``; ``handler`` is a synchronous
    :data:`Handler` (wrapped by :func:`endpoint`, ``inline``, ``gate`` and ``unknown_first`` as
    there), or with ``raw`` a Starlette endpoint of its own (``op`` then only describes it).

    Example:
        >>> r = route("/me/x", lambda req: {}, "GET", access="session")
        >>> r.endpoint.policy
        Policy(access='session', scope='read')
    """
    run = handler if raw else endpoint(handler, inline=inline, op=op, gate=gate, unknown_first=unknown_first)
    run.policy = Policy.of(method, access)  # type: ignore[attr-defined]
    run.op = op  # type: ignore[attr-defined]
    return Route(path, run, methods=[method])


def policy_of(router: Router, scope: Scope) -> Policy | None:
    """The policy of the route a request goes to (None: no route takes it; the router answers)."""
    for candidate in router.routes:
        match, _ = candidate.matches(scope)
        if match == Match.FULL:
            return getattr(getattr(candidate, "endpoint", None), "policy", None)
    return None


class Authorise:
    """Pure ASGI: applies the route's :class:`Policy` before anything else of the request runs, so a
    refused caller neither claims an ``Idempotency-Key`` nor reaches a handler.

    Example:
        >>> Authorise(Router(), Router()).router.routes
        []
    """

    def __init__(self, app: Any, router: Router) -> None:
        self.app = app
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            policy = policy_of(self.router, scope)
            if policy is not None:
                policy.check(scope.get("state", {}).get("principal"))
        await self.app(scope, receive, send)


def endpoint(
    handler: Handler,
    *,
    inline: bool = False,
    op: Op | None = None,
    gate: Gate | None = None,
    unknown_first: bool = False,
) -> Endpoint:
    """A Starlette endpoint from a synchronous handler: the body is read and parsed as a JSON
    object on the event loop (400 when it is not one) and, with a contract ``op``, the query and the
    body are validated by its models; then the handler runs in the threadpool. A dict reply is a
    JSON response of the contract's status (200 without one). An ``inline`` handler (store reads
    and nothing else) runs on the event loop when the store is an SQLite file: the thread hop costs
    more than the reads.

    A ``gate`` (who the caller is: an instructor, the upload's owner) runs in the threadpool before
    the query's and the body's rules, so a caller it refuses gets its 403 or 404 whatever it sent;
    with ``unknown_first`` a body field the route does not take is still a 400 before it.

    Example:
        >>> callable(endpoint(lambda req: {"ok": True}))
        True
    """

    work = handler if gate is None or op is None else _gated(handler, gate, op)

    @functools.wraps(handler)
    async def run(request: Request) -> Response:
        body: dict[str, Any] = {}
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            raw = await request.body()
            if len(raw) > MAX_BODY:
                raise ApiError(413, "body_too_large", extra={"message": f"the body is over {MAX_BODY} bytes"})
            body = parse_object(raw)
        _refuse_nul(request.path_params, request.query_params.multi_items(), body)
        req = Req(
            request.app.state.services,
            request.scope.get("state", {}).get("principal"),
            request.path_params,
            request.query_params,
            request.headers,
            body,
        )
        if op is not None and gate is None:
            _validate(req, op)
        elif op is not None and unknown_first and op.body is not None:
            op.body.refuse_unknown(body)  # type: ignore[attr-defined]
        if inline and local_store(req.services):
            reply = work(req)
        else:
            reply = await run_in_threadpool(work, req)
        if isinstance(reply, Response):
            return reply
        return JSONResponse(reply, status_code=op.status if op is not None else 200)

    return run


def _validate(req: Req, op: Op) -> None:
    req.params = (op.query or NoQuery).from_query(req.query)
    req.fields = op.body.parse(req.body) if op.body is not None else None


def _gated(handler: Handler, gate: Gate, op: Op) -> Handler:
    def run(req: Req) -> Response | dict[str, Any]:
        gate(req)
        _validate(req, op)
        return handler(req)

    return run


def new_id(prefix: str) -> str:
    """A fresh, unguessable resource id with a readable prefix.

    Example:
        >>> len(new_id("pr_"))
        19
    """
    return prefix + secrets.token_hex(8)


def _nul_in(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_nul_in(k) or _nul_in(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_nul_in(item) for item in value)
    return False


def _refuse_nul(*parts: Any) -> None:
    """400 for a NUL character anywhere in the path, the query or the body: no text of the service
    holds one (PostgreSQL cannot store it), so it is refused the same way on every store.

    Example:
        >>> _refuse_nul({"id": "pr_1"}, [("q", "ab")], {"title": "ok"})
        >>> _refuse_nul({}, [], {"title": "a" + chr(0)})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: text must not contain NUL characters
    """
    if any(_nul_in(part) for part in parts):
        raise Invalid("text must not contain NUL characters")


def reply(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """A JSON response.

    Example:
        >>> reply({"a": 1}, 201).status_code
        201
    """
    return JSONResponse(data, status_code=status, headers=dict(headers or {}))


def page_params(req: Req, list_name: str) -> tuple[dict[str, Any] | None, int]:
    """The position after which a page starts (None: the first page) and the page size.

    A cursor from another list (or another filter set, folded into ``list_name``) is a 400.
    """
    if req.params is not None:  # the route's model read and checked both
        limit, raw = req.params.limit, req.params.cursor
    else:
        limit, raw = page_size(req.query.get("limit"), DEFAULT_LIMIT, 1, MAX_LIMIT), req.query.get("cursor")
    if raw is None:
        return None, limit
    position = decode_cursor(raw, req.secret)
    if position.pop("_l", None) != list_name:
        raise ApiError(
            400,
            "invalid_cursor",
            extra={"message": "cursor is not valid: it belongs to another list or filter"},
        )
    return position, limit


def page(
    req: Req, list_name: str, items: Sequence[Any], more: bool, position: Callable[[Any], dict[str, Any]]
) -> dict[str, Any]:
    """``{items, next_cursor}``: the cursor holds ``position(last item)`` when more follow."""
    cursor = encode_cursor({"_l": list_name, **position(items[-1])}, req.secret) if more and items else None
    return {"items": list(items), "next_cursor": cursor}


def etag(kind: str, version: int) -> str:
    """The strong ``ETag`` of version ``version`` of a ``kind`` resource."""
    return f'"{kind}-{int(version)}"'


def check_if_match(req: Req, current: str, *, required: bool = True) -> None:
    """412 when ``If-Match`` names another version; 428 when it is required and missing.

    Example:
        >>> r = Req(None, None, {}, QueryParams(""), Headers({"if-match": '"enrollment-1"'}), {})
        >>> check_if_match(r, '"enrollment-2"')
        Traceback (most recent call last):
        ...
        svc_api.core.errors.ApiError: 412 precondition_failed
    """
    given = req.headers.get("if-match")
    if given is None:
        if required:
            raise ApiError(
                428, "precondition_required", extra={"message": "send If-Match with the ETag you last read"}
            )
        return
    tags = [tag.strip() for tag in given.split(",")]
    if "*" in tags or current in tags:
        return
    raise ApiError(
        412,
        "precondition_failed",
        extra={"message": "the resource changed since you read it: read it again for the current ETag"},
    )
