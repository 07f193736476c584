"""Registration, login, logout and session tokens through HTTP."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import sqlalchemy as sa

from svc_api.accounts.identity import token_hash
from svc_api.accounts.tables import accounts, sessions

if TYPE_CHECKING:
    from tests.api.conftest import Api

PASSWORD = "correct horse battery"


def test_register_returns_id_token_and_expiry(api: Api) -> None:
    before = int(time.time())
    data = api.register("Ana@Example.com")
    assert re.fullmatch(r"[A-Z0-9]{6}", data["svc_id"])
    assert len(data["session_token"]) == 43
    assert before + 30 * 86400 <= data["expires_at"] <= int(time.time()) + 30 * 86400
    info = api.user("account_info", token=data["session_token"]).json()["data"]
    assert info["svc_id"] == data["svc_id"]
    assert re.fullmatch(r"[A-Z0-9]{8}", info["referral"]["code"])


def test_passwords_and_tokens_are_stored_hashed(api: Api) -> None:
    data = api.register()
    store = api.app.state.services.store
    with store.read() as conn:
        row = conn.execute(sa.select(accounts).where(accounts.c.svc_id == data["svc_id"])).one()
        tokens = conn.execute(sa.select(sessions.c.token_hash)).scalars().all()
    assert PASSWORD not in (row.password_hash, row.password_salt)
    assert len(row.password_hash) == 64 and len(row.password_salt) == 32
    assert data["session_token"] not in tokens
    assert token_hash(data["session_token"]) in tokens


def test_register_validation_and_duplicates(api: Api) -> None:
    bad_email = api.user("register", {"email": "not-an-email", "password": PASSWORD})
    assert bad_email.status_code == 400
    assert bad_email.json() == {"error": "invalid_request", "message": "email must be a valid e-mail address"}
    short = api.user("register", {"email": "a@example.com", "password": "short"})
    assert short.status_code == 400
    assert short.json()["message"] == "password must be a string of 8-256 characters"
    api.register("dup@example.com")
    again = api.user("register", {"email": "DUP@example.com", "password": PASSWORD})
    assert again.status_code == 409
    assert again.json()["error"] == "conflict"


def test_register_with_referral_code_links_the_inviter(api: Api) -> None:
    inviter = api.register()
    code = api.user("account_info", token=inviter["session_token"]).json()["data"]["referral"]["code"]
    invited = api.register(referral_code=code.lower())
    with api.app.state.services.store.read() as conn:
        linked = conn.execute(
            sa.select(accounts.c.inviter_id).where(accounts.c.svc_id == invited["svc_id"])
        ).scalar()
    assert linked == inviter["svc_id"]
    unknown = api.user(
        "register", {"email": "x@example.com", "password": PASSWORD, "referral_code": "ZZZZZZZZ"}
    )
    assert unknown.status_code == 400


def test_login_opens_a_new_session(api: Api) -> None:
    data = api.register("bob@example.com")
    reply = api.user("login", {"email": "bob@example.com", "password": PASSWORD})
    assert reply.status_code == 200
    login = reply.json()["data"]
    assert login["svc_id"] == data["svc_id"]
    assert login["session_token"] != data["session_token"]
    for token in (data["session_token"], login["session_token"]):
        assert api.user("account_info", token=token).status_code == 200


def test_wrong_password_is_a_401_without_code(api: Api) -> None:
    api.register("carol@example.com")
    for email, password in (("carol@example.com", "wrong password"), ("nobody@example.com", PASSWORD)):
        reply = api.user("login", {"email": email, "password": password})
        assert reply.status_code == 401
        assert reply.json() == {"error": "invalid_login", "message": "invalid email or password"}


def test_logout_ends_only_that_session(api: Api) -> None:
    first = api.register("dave@example.com")
    second = api.user("login", {"email": "dave@example.com", "password": PASSWORD}).json()["data"]
    assert api.user("logout", token=first["session_token"]).json() == {
        "ok": True,
        "data": {"logged_out": True},
    }
    ended = api.user("account_info", token=first["session_token"])
    assert ended.status_code == 401
    assert ended.json()["code"] == "session_expired"
    assert api.user("account_info", token=second["session_token"]).status_code == 200


def test_missing_and_malformed_tokens_are_session_expired(api: Api) -> None:
    missing = api.user("account_info")
    assert missing.status_code == 401
    assert missing.json() == {
        "error": "session_expired",
        "code": "session_expired",
        "message": "this operation needs a session token or an API key",
    }
    for header in ("Bearer", "Bearer short", "Basic abcdefghijklmnopqrstuvwxyz", "Bearer " + "x" * 200):
        reply = api.user("account_info", headers={"Authorization": header})
        assert reply.status_code == 401, header
        assert reply.json()["code"] == "session_expired"
    unknown = api.user("account_info", token="A" * 43)
    assert unknown.json() == {
        "error": "session_expired",
        "code": "session_expired",
        "message": "unknown or ended session token",
    }


def test_expired_token_gets_the_dedicated_reply(api: Api) -> None:
    data = api.register()
    with api.app.state.services.store.write() as conn:
        conn.execute(
            sessions.update()
            .where(sessions.c.token_hash == token_hash(data["session_token"]))
            .values(expires_at=int(time.time()) - 1)
        )
    reply = api.user("account_info", token=data["session_token"])
    assert reply.status_code == 401
    assert reply.json() == {
        "error": "token_expired",
        "code": "session_expired",
        "message": "the session has expired; log in again",
    }
    # Rejections are counted by the rate limiter and carry its headers.
    assert "x-ratelimit-limit" in reply.headers


def test_svc_ids_are_unique(api: Api) -> None:
    ids = {api.register()["svc_id"] for _ in range(8)}
    assert len(ids) == 8
