"""Business-rule failures raised by the domain functions, each with the HTTP status it maps to.

Domain functions know nothing of HTTP; the route layer turns these into error envelopes through
their ``status`` and ``code``.

Example:
    >>> err = InsufficientCredits("need 5 credits, have 2")
    >>> err.status, err.code, str(err)
    (402, 'insufficient_credits', 'need 5 credits, have 2')
"""

from __future__ import annotations


class DomainError(Exception):
    """Base of the business-rule failures.

    Example:
        >>> NotFound("no such thing").status
        404
    """

    status: int = 400
    error: str = "invalid_request"
    code: str | None = None


class Invalid(DomainError):
    """A request field breaks a rule (400)."""

    status = 400


class Unauthenticated(DomainError):
    """Wrong e-mail or password: a business 401 without ``code`` (it does not sign anyone out)."""

    status = 401
    error = "invalid_login"


class Forbidden(DomainError):
    """The caller may not do this (403)."""

    status = 403
    error = "forbidden"


class NotFound(DomainError):
    """No such record for this caller (404)."""

    status = 404
    error = "not_found"


class Conflict(DomainError):
    """Duplicate or conflicting state (409)."""

    status = 409
    error = "conflict"


class InsufficientCredits(DomainError):
    """The balance does not cover the amount (402)."""

    status = 402
    error = "insufficient_credits"
    code = "insufficient_credits"
