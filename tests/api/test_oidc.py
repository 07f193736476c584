"""Login by identity provider: ID tokens verified against a loopback issuer (discovery, JWKS,
signature, iss, aud, exp, nonce, key rotation), the spec's 409 for another identity, our first-login
rule, and the issuer down (503); on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from tests.api.fakes.oidc_issuer import AUDIENCE, Issuer, _key, running_issuer


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture
def oapi(settings: Any, make_api: Any, issuer: Issuer) -> Any:
    # no cooldown between JWKS fetches, so that a rotated key is seen at once
    configured = settings.replace(
        oidc_issuer=issuer.url, oidc_audience=AUDIENCE, oidc_jwks_cooldown_seconds=0
    )
    return make_api(configured)


def _login(api: Any, token: str, **more: Any) -> Any:
    return api.user("identity_login", {"id_token": token, **more})


def test_first_login_opens_an_account_and_later_logins_find_it(oapi: Any, issuer: Issuer) -> None:
    first = _login(oapi, issuer.token("sub-1", email="Ana@Example.com", email_verified=True))
    assert first.status_code == 200, first.text
    grant = first.json()["data"]
    info = oapi.user("account_info", token=grant["session_token"]).json()["data"]
    assert info["connections"]["identity_provider"] is True
    again = _login(oapi, issuer.token("sub-1")).json()["data"]
    assert again["svc_id"] == grant["svc_id"]
    # an existing account of that e-mail is linked, not duplicated
    user = oapi.register()
    linked = _login(oapi, issuer.token("sub-2", email=user["email"], email_verified=True)).json()["data"]
    assert linked["svc_id"] == user["svc_id"]


def test_link_then_login_and_the_409s(oapi: Any, issuer: Issuer) -> None:
    user = oapi.register()
    t = user["session_token"]
    reply = oapi.user("identity_link", {"id_token": issuer.token("sub-9")}, token=t)
    assert reply.json()["data"] == {"identity_provider": issuer.url, "linked": True}
    assert _login(oapi, issuer.token("sub-9")).json()["data"]["svc_id"] == user["svc_id"]
    other = oapi.user("identity_link", {"id_token": issuer.token("sub-10")}, token=t)
    assert (other.status_code, other.json()["error"]) == (409, "identity_conflict")
    taken = oapi.user(
        "identity_link", {"id_token": issuer.token("sub-9")}, token=oapi.register()["session_token"]
    )
    assert taken.status_code == 409
    # the e-mail's account holds another identity: a login by a new one is a 409
    clash = _login(oapi, issuer.token("sub-11", email=user["email"], email_verified=True))
    assert clash.status_code == 409


@pytest.mark.parametrize(
    "make",
    [
        lambda i: i.token("s", aud="someone-else"),
        lambda i: i.token("s", iss="https://evil.example"),
        lambda i: i.token("s", exp=int(time.time()) - 3600),
        lambda i: i.token("s", key=_key()),  # a key the issuer does not publish
        lambda i: i.token("s")[:-4] + "AAAA",  # a broken signature
        lambda i: "not-a-token",
    ],
)
def test_invalid_tokens_are_a_business_401(oapi: Any, issuer: Issuer, make: Any) -> None:
    reply = _login(oapi, make(issuer))
    assert (reply.status_code, reply.json()["error"], "code" in reply.json()) == (
        401,
        "invalid_id_token",
        False,
    )


def test_nonce_rotation_no_email_and_issuer_down(
    oapi: Any, issuer: Issuer, settings: Any, make_api: Any
) -> None:
    assert (
        _login(
            oapi, issuer.token("s", nonce="n1", email="x@example.com", email_verified=True), nonce="n2"
        ).status_code
        == 401
    )
    no_mail = _login(oapi, issuer.token("s-new"))
    assert (no_mail.status_code, no_mail.json()["message"]) == (
        400,
        "this identity is new and its token carries no verified e-mail: register, then link it",
    )
    unverified = _login(oapi, issuer.token("s-new", email="y@example.com", email_verified=False))
    assert unverified.status_code == 400
    fetched = issuer.jwks_fetches
    issuer.rotate()  # a token of the new key: the service fetches the JWKS again and accepts it
    assert (
        _login(oapi, issuer.token("s-rot", email="rot@example.com", email_verified=True)).status_code == 200
    )
    assert issuer.jwks_fetches > fetched
    down = make_api(settings.replace(oidc_issuer="http://127.0.0.1:9", oidc_audience=AUDIENCE))
    reply = _login(down, issuer.token("s"))
    assert (reply.status_code, reply.json()["reason"]) == (503, "identity_provider_unavailable")
    off = make_api(settings)
    assert _login(off, issuer.token("s")).status_code == 404


@pytest.mark.parametrize(
    "claims",
    [
        {"nbf": int(time.time()) + 3600},  # not valid yet
        {"iat": int(time.time()) + 3600, "exp": int(time.time()) + 7200},  # issued in the future
    ],
)
def test_tokens_not_valid_yet_are_a_business_401(oapi: Any, issuer: Issuer, claims: dict[str, int]) -> None:
    reply = _login(oapi, issuer.token("s", email="early@example.com", email_verified=True, **claims))
    assert (reply.status_code, reply.json()["error"]) == (401, "invalid_id_token")


def test_a_discovery_document_naming_another_issuer_is_refused(oapi: Any, issuer: Issuer) -> None:
    issuer.named = "https://accounts.example.com"
    reply = _login(oapi, issuer.token("s", email="x@example.com", email_verified=True))
    assert reply.status_code == 503
    assert "names the issuer 'https://accounts.example.com'" in reply.json()["message"]


def test_a_first_login_opens_exactly_one_session(oapi: Any, issuer: Issuer) -> None:
    grant = _login(oapi, issuer.token("sub-one", email="one@example.com", email_verified=True)).json()["data"]
    with oapi.app.state.services.store.read() as conn:
        count = conn.execute(
            sa.text("select count(*) from sessions where svc_id = :s"), {"s": grant["svc_id"]}
        ).scalar()
    assert count == 1
