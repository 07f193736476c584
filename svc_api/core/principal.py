"""Who is calling: a guest, a session or an API key, with the plan and scopes that come with it.

Example:
    >>> Principal.guest("::1").kind
    'guest'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """The caller of one request.

    Example:
        >>> Principal("session", "AB12CD", "pro", True, "::1").identified
        True
    """

    kind: str
    svc_id: str | None
    plan: str
    first_party: bool
    ip: str
    permissions: tuple[str, ...] = ()

    @property
    def identified(self) -> bool:
        """True for a session or an API key (a tracked caller identity).

        Example:
            >>> Principal.guest("::1").identified
            False
        """
        return self.kind != "guest" and self.svc_id is not None

    @classmethod
    def guest(cls, ip: str) -> Principal:
        """An unauthenticated caller.

        Example:
            >>> Principal.guest("::1").plan
            'guest'
        """
        return cls("guest", None, "guest", False, ip)
