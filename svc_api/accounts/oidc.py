"""Logging in with an identity provider: an OIDC ID token, verified against the issuer named by
``OIDC_ISSUER`` (its discovery document and JWKS, cached an hour; the JWKS is fetched again when a
token names an unknown key), for the audience ``OIDC_AUDIENCE``: signature (RS256, ES256), ``iss``,
``aud``, ``exp``, ``iat`` and ``nbf`` (60 s of leeway), and ``nonce`` when the client sent one; a
discovery document naming another issuer than ``OIDC_ISSUER`` is refused (503). A token of a
key not yet seen fetches the JWKS again, at most once per ``OIDC_JWKS_COOLDOWN_SECONDS`` (30).

Outcomes (the spec's table, and ours where it is silent): an invalid token is a business 401 (no
``code``); an issuer that cannot be reached a 503; a token whose identity differs from the one stored
for the account a 409. A first login by an unknown identity (ours): with a verified e-mail it links
the account of that e-mail (when that account has no identity yet) or opens a new account; without a
verified e-mail it is a 400.

Example:
    >>> ALGORITHMS
    ['RS256', 'ES256']
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

import httpx
import jwt

from svc_api.accounts import queries
from svc_api.accounts.contacts import account_of_email, set_connection
from svc_api.accounts.identity import open_session, register
from svc_api.core.errors import ApiError, Invalid, NotFound

ALGORITHMS = ["RS256", "ES256"]
LEEWAY = 60


class Issuer:
    """One OpenID provider: its discovery document and signing keys."""

    def __init__(self, issuer: str, audience: str, timeout: float = 5.0, cooldown: float = 30.0) -> None:
        self.issuer, self.audience, self.timeout, self.cooldown = (
            issuer.rstrip("/"),
            audience,
            timeout,
            cooldown,
        )
        self._jwks: jwt.PyJWKClient | None = None

    def _keys(self) -> jwt.PyJWKClient:
        if self._jwks is None:
            try:
                reply = httpx.get(f"{self.issuer}/.well-known/openid-configuration", timeout=self.timeout)
                reply.raise_for_status()
                document = reply.json()
                named, uri = str(document["issuer"]).rstrip("/"), document["jwks_uri"]
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                raise _unreachable(type(exc).__name__) from None
            if named != self.issuer:
                # OpenID Discovery 4.3: a document naming another issuer is not this provider's
                # (a mistyped or hijacked URL); its keys must not be trusted.
                raise _unreachable(f"its discovery document names the issuer {named!r}")
            # An unknown key ID fetches the JWKS again, at most once per cooldown (a rotated key).
            self._jwks = jwt.PyJWKClient(
                uri,
                cache_keys=True,
                lifespan=3600,
                timeout=int(self.timeout),
                cooldown_duration=self.cooldown,
            )
        return self._jwks

    def verify(self, token: object, nonce: object = None) -> dict[str, Any]:
        """The claims of a valid ID token (401 invalid, 503 issuer unreachable)."""
        if not isinstance(token, str) or not token:
            raise Invalid("id_token is required")
        try:
            key = self._keys().get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.PyJWKClientConnectionError as exc:
            raise _unreachable(type(exc).__name__) from None
        except (jwt.PyJWKClientError, jwt.InvalidTokenError) as exc:
            raise ApiError(
                401, "invalid_id_token", extra={"message": f"the ID token is not valid: {exc}"}
            ) from None
        if nonce is not None and claims.get("nonce") != nonce:
            raise ApiError(401, "invalid_id_token", extra={"message": "the ID token's nonce does not match"})
        return claims


def _unreachable(why: str) -> ApiError:
    detail = {"message": f"the identity provider cannot be reached: {why}"}
    return ApiError(
        503, "service_unavailable", reason="identity_provider_unavailable", retry_after=5, extra=detail
    )


def login(
    conn: Any, claims: Mapping[str, Any], *, issuer: str, ip: str, platform: str, ttl: int, now: int
) -> dict[str, Any]:
    """A session for the account of the identity in ``claims`` (see the module docstring)."""
    subject = str(claims["sub"])
    svc_id = queries.identity_owner(conn, issuer, subject)
    if svc_id is None:
        if not (claims.get("email") and claims.get("email_verified") is True):
            raise Invalid(
                "this identity is new and its token carries no verified e-mail: register, then link it"
            )
        email = str(claims["email"]).lower()
        svc_id = account_of_email(conn, email)
        if svc_id is None:  # a new account: its registration opened the one session of this login
            password = secrets.token_urlsafe(24)
            grant = register(conn, email, password, ip=ip, ttl=ttl, platform=platform, now=now)
            _link(conn, grant.svc_id, issuer, subject, now)
            return grant.to_dict()
        _link(conn, svc_id, issuer, subject, now)
    return open_session(conn, svc_id, ip=ip, platform=platform, ttl=ttl, now=now).to_dict()


def link(conn: Any, svc_id: str, claims: Mapping[str, Any], *, issuer: str, now: int) -> dict[str, Any]:
    """Link the identity in ``claims`` to ``svc_id`` (409 when either side has another)."""
    _link(conn, svc_id, issuer, str(claims["sub"]), now)
    return {"identity_provider": issuer, "linked": True}


def _link(conn: Any, svc_id: str, issuer: str, subject: str, now: int) -> None:
    owner = queries.identity_owner(conn, issuer, subject)
    if owner == svc_id:
        return
    stored = queries.identity_of(conn, svc_id)
    if owner is not None or stored is not None:
        detail = {"message": "this identity differs from the one stored for the account"}
        raise ApiError(409, "identity_conflict", extra=detail)
    if not queries.link_identity(conn, issuer=issuer, subject=subject, svc_id=svc_id, linked_at=now):
        raise ApiError(409, "identity_conflict", extra={"message": "this identity was linked meanwhile"})
    set_connection(conn, svc_id, "identity_provider", True)


def issuer_of(settings: Any) -> Issuer:
    """The configured provider (404 when ``OIDC_ISSUER`` is unset: the feature is off)."""
    if not settings.oidc_issuer:
        raise NotFound("login by identity provider is not configured on this server")
    return Issuer(
        settings.oidc_issuer, settings.oidc_audience or "", cooldown=settings.oidc_jwks_cooldown_seconds
    )


def _issuer(services: Any) -> Issuer:
    settings = services.settings
    issuer_of(settings)  # 404 when off
    return services.cached("oidc:issuer", 3600, lambda: issuer_of(settings))


def identity_login(
    services: Any, id_token: object, nonce: object, *, ip: str, platform: str, now: int
) -> dict[str, Any]:
    """``identity_login``: an ID token (and the nonce it must carry) -> the usual session grant."""
    issuer = _issuer(services)
    claims = issuer.verify(id_token, nonce)
    ttl = services.settings.session_ttl_seconds
    with services.store.write() as conn:
        return login(conn, claims, issuer=issuer.issuer, ip=ip, platform=platform, ttl=ttl, now=now)


def identity_link(services: Any, svc_id: str, id_token: object, nonce: object, *, now: int) -> dict[str, Any]:
    """``identity_link``: the caller links the identity of an ID token (and its nonce)."""
    issuer = _issuer(services)
    claims = issuer.verify(id_token, nonce)
    with services.store.write() as conn:
        return link(conn, svc_id, claims, issuer=issuer.issuer, now=now)
