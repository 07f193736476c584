"""A loopback OpenID provider: discovery, a JWKS, and tokens minted with its current RSA key (a
test may rotate the key, or mint with a key the provider does not publish)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.api.fakes.loopback import serve

AUDIENCE = "svc-app"


def _key() -> tuple[str, Any]:
    return uuid.uuid4().hex[:8], rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Issuer:
    """The provider's state; ``url`` is its issuer URL once started."""

    url: str = ""
    keys: list[tuple[str, Any]] = field(default_factory=lambda: [_key()])
    jwks_fetches: int = 0
    named: str = ""
    """The issuer its discovery document names (its own URL when empty)."""

    def rotate(self) -> None:
        """A new signing key, published in front of the old one."""
        self.keys.insert(0, _key())

    def token(self, sub: str = "user-1", *, key: tuple[str, Any] | None = None, **claims: Any) -> str:
        """An ID token of ``sub`` (valid for an hour) signed with the current key or ``key``."""
        kid, private = key or self.keys[0]
        now = int(time.time())
        body = {"iss": self.url, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 3600, **claims}
        return jwt.encode(body, private, algorithm="RS256", headers={"kid": kid})


def _app(issuer: Issuer) -> Starlette:
    async def discovery(request: Request) -> JSONResponse:
        return JSONResponse({"issuer": issuer.named or issuer.url, "jwks_uri": f"{issuer.url}/jwks"})

    async def jwks(request: Request) -> JSONResponse:
        issuer.jwks_fetches += 1
        keys = []
        for kid, private in issuer.keys:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return JSONResponse({"keys": keys})

    return Starlette(routes=[Route("/.well-known/openid-configuration", discovery), Route("/jwks", jwks)])


@contextmanager
def running_issuer() -> Iterator[Issuer]:
    """The provider served by uvicorn on a free loopback port for the duration of the block."""
    issuer = Issuer()
    with serve(_app(issuer)) as url:
        issuer.url = url
        yield issuer
