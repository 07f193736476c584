"""What a family's handler receives (:class:`Call`) and may return (:class:`Reply`).

Example:
    >>> Reply({"x": 1}).status
    200
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import Headers

from svc_api.core.cursors import decode_cursor, encode_cursor, page_size
from svc_api.core.errors import ApiError, NotFound, session_expired
from svc_api.core.principal import Principal
from svc_api.core.store import Store


@dataclass(frozen=True)
class Reply:
    """A handler result with options: HTTP status, and a top-level ``timestamp`` on ``/user``.

    Example:
        >>> Reply({"x": 1}, timestamp=True).status
        200
    """

    data: Any
    status: int = 200
    timestamp: int | None = None


@dataclass(frozen=True)
class Call:
    """Everything a handler receives.

    Example:
        >>> call = Call(None, Principal.guest("::1"), {"limit": "5"}, Headers({}))
        >>> call.page(25, 1, 100)
        5
        >>> from types import SimpleNamespace
        >>> from svc_api.settings import Settings
        >>> services = SimpleNamespace(settings=Settings(database_url="sqlite://", secret_key=b"k" * 32))
        >>> guest = Call(services, Principal.guest("::1"), {})
        >>> token = guest.next_cursor("posts", {"t": 7}, personal=False)
        >>> Call(services, Principal("session", "AB12CD", "pro", True, "::1"), {"cursor": token}).cursor(
        ...     "posts", personal=False)
        {'t': 7}
    """

    services: Any
    principal: Principal
    params: Mapping[str, Any]
    headers: Headers = field(default_factory=lambda: Headers({}))

    @property
    def store(self) -> Store:
        """The migrated store."""
        return self.services.store

    @property
    def now(self) -> int:
        """The service's current time in seconds (``services.clock``; tests move it by hand)."""
        return self.services.clock.now()

    @property
    def svc_id(self) -> str:
        """The caller's account (the family has already required an identity)."""
        if self.principal.svc_id is None:
            raise session_expired()
        return self.principal.svc_id

    def page(self, default: int, lo: int, hi: int, *, clamp: bool = False) -> int:
        """The page size from ``limit`` (400 when not an integer or out of bounds)."""
        return page_size(self.params.get("limit"), default, lo, hi, clamp=clamp)

    def cursor(self, kind: str, *, personal: bool = True) -> dict[str, Any] | None:
        """The position of the ``cursor`` parameter, checked to belong to this list (``kind``) and,
        for a ``personal`` list, to this caller (pass ``personal=False`` for public lists)."""
        raw = self.params.get("cursor")
        if raw is None or raw == "":
            return None
        if not isinstance(raw, str):
            raise ApiError(400, "invalid_cursor", extra={"message": "cursor must be a string"})
        position = decode_cursor(raw, self.services.settings.secret_key)
        owner = self.principal.svc_id if personal else None
        if position.pop("_k", None) != kind or position.pop("_u", None) != owner:
            raise ApiError(400, "invalid_cursor", extra={"message": "cursor belongs to another list"})
        return position

    def user_page(
        self, kind: str, items_name: str, items: list[Any], more: bool, last: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """The ``/user`` list reply: ``{<items_name>: items, count, last_evaluated_key, has_more}``,
        the cursor pointing after ``last`` (ignored on the last page).

        Example:
            >>> from types import SimpleNamespace
            >>> from svc_api.settings import Settings
            >>> services = SimpleNamespace(settings=Settings(database_url="sqlite://", secret_key=b"k" * 32))
            >>> call = Call(services, Principal("session", "AB12CD", "pro", True, "::1"), {})
            >>> call.user_page("logins", "logins", [1, 2], False, {"t": 2})
            {'logins': [1, 2], 'count': 2, 'last_evaluated_key': None, 'has_more': False}
        """
        return {
            items_name: items,
            "count": len(items),
            "last_evaluated_key": self.next_cursor(kind, last if more else None),
            "has_more": more,
        }

    def next_cursor(
        self, kind: str, position: Mapping[str, Any] | None, *, personal: bool = True
    ) -> str | None:
        """A cursor for the page after ``position`` (None on the last page); see :meth:`cursor`."""
        if position is None:
            return None
        signed = {**position, "_k": kind, "_u": self.principal.svc_id if personal else None}
        return encode_cursor(signed, self.services.settings.secret_key)


Handler = Callable[..., Any]
"""``handler(call)``, or ``handler(call, request)`` for an operation with a request model."""


def lookups_as_404(handler: Handler) -> Handler:
    """``handler`` with engine lookups that fail (``LookupError``: a series or instrument removed
    under a cached catalog) answered as 404, not 500.

    Example:
        >>> def missing(call):
        ...     raise KeyError("BTCUSDT")
        >>> lookups_as_404(missing)(None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: 'BTCUSDT'
    """

    @functools.wraps(handler)
    def run(call: Call, *request: Any) -> Any:
        try:
            return handler(call, *request)
        except LookupError as exc:
            raise NotFound(str(exc)) from None

    return run
