"""Developer API keys through HTTP: generate, status, revoke, key authentication, key store down."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import sqlalchemy as sa

from svc_api.keys.tables import api_keys

if TYPE_CHECKING:
    from tests.api.conftest import Api


def _generate(api: Api, token: str, **body: object) -> tuple[str, str]:
    reply = api.user("api_key_generate", {"label": "trading bot", **body}, token=token)
    assert reply.status_code == 200, reply.text
    data = reply.json()["data"]
    return data["api_key"], data["api_secret"]


def test_generate_status_and_authenticate(api: Api) -> None:
    user = api.register()
    key, secret = _generate(api, user["session_token"], permissions=["read", "trade"])
    assert re.fullmatch(r"svk_[0-9a-f]{32}", key)
    status = api.user("api_key_status", token=user["session_token"]).json()["data"]
    assert status["has_key"] is True and status["max_keys"] == 1
    assert status["key"]["api_key"] == key
    assert status["key"]["label"] == "trading bot"
    assert status["key"]["permissions"] == ["read", "trade"]
    assert "api_secret" not in status["key"]
    info = api.user("account_info", key=(key, secret))
    assert info.status_code == 200
    assert info.json()["data"]["svc_id"] == user["svc_id"]
    # API keys are not first party: the plain plan limit (free 30/min, x100 in tests).
    assert info.headers["x-ratelimit-limit"] == "3000"
    assert api.user("account_info", token=user["session_token"]).headers["x-ratelimit-limit"] == "6000"


def test_secret_is_stored_only_as_a_hash(api: Api) -> None:
    user = api.register()
    key, secret = _generate(api, user["session_token"])
    with api.app.state.services.store.read() as conn:
        row = conn.execute(sa.select(api_keys).where(api_keys.c.api_key == key)).one()
    assert secret not in row
    assert len(row.secret_hash) == 64 and row.secret_hash != secret


def test_label_rules_and_one_key_per_user(api: Api) -> None:
    token = api.register()["session_token"]
    for label in ("", "x" * 65, 5, None):
        reply = api.user("api_key_generate", {"label": label}, token=token)
        assert reply.status_code == 400, label
        assert reply.json()["message"] == "label must be a string of 1-64 characters"
    bad_scope = api.user("api_key_generate", {"label": "ok", "permissions": ["admin"]}, token=token)
    assert bad_scope.status_code == 400
    _generate(api, token, label="x" * 64)
    second = api.user("api_key_generate", {"label": "another"}, token=token)
    assert second.status_code == 400
    assert second.json()["message"] == "an API key already exists; revoke it before generating a new one"


def test_key_management_refuses_key_authentication(api: Api) -> None:
    token = api.register()["session_token"]
    key, secret = _generate(api, token)
    for request_type, body in (("api_key_generate", {"label": "x"}), ("api_key_revoke", {"api_key_id": key})):
        reply = api.user(request_type, body, key=(key, secret))
        assert reply.status_code == 403
        assert reply.json()["error"] == "forbidden"
    # api_key_status may be read with the key itself.
    assert api.user("api_key_status", key=(key, secret)).json()["data"]["key"]["api_key"] == key


def test_revoke_is_immediate_and_frees_the_slot(api: Api) -> None:
    user = api.register()
    token = user["session_token"]
    key, secret = _generate(api, token)
    assert api.user("api_key_revoke", {"api_key_id": key}, token=token).json() == {
        "ok": True,
        "data": {"deleted": True},
    }
    rejected = api.user("account_info", key=(key, secret))
    assert rejected.status_code == 401
    assert rejected.json() == {
        "error": "invalid_credentials",
        "code": "invalid_credentials",
        "message": "invalid API key or secret",
    }
    assert api.user("account_info", token=token).status_code == 200  # the app session is unaffected
    assert api.user("api_key_status", token=token).json()["data"] == {
        "has_key": False,
        "key": None,
        "max_keys": 1,
    }
    again = api.user("api_key_revoke", {"api_key_id": key}, token=token)
    assert again.status_code == 403
    new_key, _ = _generate(api, token)
    assert new_key != key


def test_revoke_needs_an_owned_key_id(api: Api) -> None:
    alice, bob = api.register(), api.register()
    key, _ = _generate(api, alice["session_token"])
    assert api.user("api_key_revoke", {}, token=bob["session_token"]).status_code == 400
    foreign = api.user("api_key_revoke", {"api_key_id": key}, token=bob["session_token"])
    assert foreign.status_code == 403
    assert foreign.json()["message"] == "API key not found or not owned by the caller"


def test_bad_key_credentials_are_401_invalid_credentials(api: Api) -> None:
    token = api.register()["session_token"]
    key, secret = _generate(api, token)
    cases = [
        {"X-API-Key": key},
        {"X-API-Secret": secret},
        {"X-API-Key": key, "X-API-Secret": secret + "x"},
        {"X-API-Key": "svk_" + "0" * 32, "X-API-Secret": secret},
        {"X-API-Key": "not-a-key", "X-API-Secret": secret},
    ]
    for headers in cases:
        reply = api.user("account_info", headers=headers)
        assert reply.status_code == 401, headers
        assert reply.json()["code"] == "invalid_credentials"
    # Also on guest-accessible routes: bad credentials are never downgraded to a guest.
    guest_route = api.get(
        "/tradingdata",
        params={"request_type": "changelog"},
        headers={"X-API-Key": key, "X-API-Secret": "nope"},
    )
    assert guest_route.status_code == 401
