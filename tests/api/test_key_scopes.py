"""API-key permission scopes: a key holds ``read``, ``trade`` or both; every identified operation of
every family needs one (``svc_api.routing.TRADE`` lists the ``trade`` ones); a key without it gets
403 ``insufficient_scope`` before anything runs or is charged. Sessions hold both. Each scope is
tried against each family, and against every ``/education/v1`` route, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from svc_api.education.app import education_app
from svc_api.routing import BACKTEST, TRADE, TRADINGDATA, USER
from tests.api.education_helpers import call, leader, publish

if TYPE_CHECKING:
    from tests.api.conftest import Api

# One operation of each family and kind, with a body it accepts.
CASES = [
    ("user", "account_info", "read", {}),
    ("user", "credits_history", "read", {}),
    ("user", "strategy_detail", "read", {"strategy_name": "nosuch1"}),
    ("user", "strategy_generate", "trade", {"strategy_name": "scoped1", "long_entry_condition": "x"}),
    ("user", "favorite_coin", "trade", {"symbol": "BTCUSDT", "action": "add"}),
    ("user", "notifications_mark_read", "trade", {"all": True}),
    ("backtest", "status", "read", {"job_id": "nosuch"}),
    ("backtest", "run", "trade", {"strategy_name": "nosuch1", "coin": "BTC", "timeframe": "1h"}),
    ("backtest", "delete_backtest", "trade", {"job_id": "nosuch"}),
    (
        "tradingdata",
        "track_trend_break_signal",
        "trade",
        {"coin_name": "BTCUSDT", "timeframe": "60", "timestamp": "1700000000", "way": "BUY"},
    ),
]


def _key(api: Api, token: str, permissions: list[str]) -> tuple[str, str]:
    reply = api.user("api_key_generate", {"label": "scoped", "permissions": permissions}, token=token)
    assert reply.status_code == 200, reply.text
    data = reply.json()["data"]
    return data["api_key"], data["api_secret"]


def _call(api: Api, family: str, name: str, body: dict[str, Any], key: tuple[str, str]) -> Any:
    headers = {"X-API-Key": key[0], "X-API-Secret": key[1]}
    if family == "user":
        return api.user(name, body, key=key)
    if family == "backtest":
        return api.post("/backtest", params={"action": name}, json=body, headers=headers)
    return api.get("/tradingdata", params={"request_type": name, **body}, headers=headers)


def test_every_identified_operation_has_a_scope_and_trade_ones_are_listed() -> None:
    ops = {**USER.operations, **BACKTEST.operations, **TRADINGDATA.operations}
    assert {name for name, op in ops.items() if op.scope == "trade"} == TRADE
    assert {name: op.scope for name, op in ops.items() if name in ("account_info", "run", "status")} == {
        "account_info": "read",
        "run": "trade",
        "status": "read",
    }


@pytest.mark.parametrize("permissions", [["read"], ["trade"], ["read", "trade"]])
def test_scope_matrix(api: Api, permissions: list[str]) -> None:
    user = api.register()
    key = _key(api, user["session_token"], permissions)
    for family, name, scope, body in CASES:
        reply = _call(api, family, name, body, key)
        if scope in permissions:
            assert reply.status_code != 403, (family, name, reply.text)
        else:
            assert reply.status_code == 403, (family, name, reply.text)
            assert reply.json()["code"] == "insufficient_scope", (family, name)
            assert repr(scope) in reply.json()["message"]


def test_a_read_key_spends_nothing_and_creates_nothing(api: Api) -> None:
    user = api.register()
    token = user["session_token"]
    key = _key(api, token, ["read"])
    before = api.user("account_info", token=token).json()["data"]
    reply = api.user(
        "strategy_generate", {"strategy_name": "nospend1", "long_entry_condition": "RSI(14) < 30"}, key=key
    )
    assert reply.status_code == 403
    after = api.user("account_info", token=token).json()["data"]
    assert after["svc_credits"] == before["svc_credits"] and after["strategies"] == {}
    history = api.user("credits_history", token=token).json()["data"]["transactions"]
    assert [t for t in history if t["action"] == "strategy_generate"] == []


def test_sessions_hold_both_scopes(api: Api) -> None:
    token = api.register()["session_token"]
    reply = api.user("favorite_coin", {"symbol": "BTCUSDT", "action": "add"}, token=token)
    assert reply.status_code != 403


# ``/education/v1``: every route and who may call it. Student routes need a session (the spec:
# "authenticated session"), and so does opening seller onboarding (it leads to the payout profile and
# bank account); instructor routes take a key holding the scope of the method; public routes (and the
# routes whose URL carries its own credential) take anyone.
EDUCATION: dict[tuple[str, str], str] = {
    ("GET", "/catalog"): "public",
    ("GET", "/products/{product_id}"): "public",
    ("GET", "/products/{product_id}/curriculum"): "public",
    ("GET", "/topics"): "public",
    ("GET", "/leaders/{leader_id}/products"): "public",
    ("GET", "/products/{product_id}/reviews"): "public",
    ("GET", "/commerce/capabilities"): "public",
    ("GET", "/certificates/verify/{verification_token}"): "public",
    ("GET", "/sandbox/checkout/{token}"): "public",
    ("POST", "/sandbox/checkout/{token}/{choice}"): "public",
    ("POST", "/payments/callback"): "public",
    ("GET", "/media/{key:path}"): "public",
    ("GET", "/seller/onboarding/{token}"): "public",
    ("POST", "/seller/onboarding/{token}"): "public",
    ("PUT", "/studio/upload-parts/{upload_id}/{part_number:int}"): "public",
    ("POST", "/checkouts"): "session",
    ("GET", "/orders/{order_id}"): "session",
    ("POST", "/orders/{order_id}/refund-requests"): "session",
    ("GET", "/orders/{order_id}/refund-requests/{refund_request_id}"): "session",
    ("GET", "/me/dashboard"): "session",
    ("GET", "/me/library"): "session",
    ("GET", "/me/enrollments/{product_id}/resume"): "session",
    ("GET", "/me/enrollments/{product_id}/progress"): "session",
    ("POST", "/me/enrollments/{product_id}/revision-adoptions"): "session",
    ("PUT", "/me/enrollments/{product_id}/reading-progress"): "session",
    ("POST", "/products/{product_id}/playback-sessions"): "session",
    ("POST", "/playback-sessions/{session_id}/events"): "session",
    ("DELETE", "/playback-sessions/{session_id}"): "session",
    ("PUT", "/products/{product_id}/reviews/me"): "session",
    ("DELETE", "/products/{product_id}/reviews/me"): "session",
    ("POST", "/products/{product_id}/questions"): "session",
    ("PATCH", "/questions/{question_id}"): "session",
    ("POST", "/me/certificates"): "session",
    ("GET", "/me/certificates"): "session",
    ("POST", "/seller/onboarding-sessions"): "session",
    ("GET", "/seller/status"): "read",
    ("POST", "/studio/products"): "trade",
    ("GET", "/studio/products/{product_id}"): "read",
    ("PATCH", "/studio/products/{product_id}"): "trade",
    ("PUT", "/studio/products/{product_id}/curriculum"): "trade",
    ("POST", "/studio/products/{product_id}/submissions"): "trade",
    ("POST", "/studio/products/{product_id}/unpublish"): "trade",
    ("POST", "/studio/bundles"): "trade",
    ("GET", "/studio/bundles/{bundle_id}"): "read",
    ("PATCH", "/studio/bundles/{bundle_id}"): "trade",
    ("POST", "/studio/questions/{question_id}/answers"): "trade",
    ("POST", "/studio/uploads"): "trade",
    ("GET", "/studio/uploads"): "read",
    ("GET", "/studio/uploads/{upload_id}"): "read",
    ("DELETE", "/studio/uploads/{upload_id}"): "trade",
    ("POST", "/studio/uploads/{upload_id}/part-urls"): "trade",
    ("POST", "/studio/uploads/{upload_id}/part-receipts"): "trade",
    ("POST", "/studio/uploads/{upload_id}/reconcile"): "trade",
    ("POST", "/studio/uploads/{upload_id}/complete"): "trade",
    ("POST", "/studio/uploads/{upload_id}/processing-retries"): "trade",
    ("GET", "/studio/analytics/sales"): "read",
    ("GET", "/studio/payout-statements"): "read",
}


def _education(api: Api, method: str, template: str, key: tuple[str, str]) -> Any:
    """One education request with a key pair, every path parameter a placeholder."""
    path = re.sub(r"\{part_number:int\}", "1", template)
    path = re.sub(r"\{[^}]+\}", "x1", path)
    headers = {"X-API-Key": key[0], "X-API-Secret": key[1]}
    if method != "GET":
        headers["Idempotency-Key"] = f"k-{uuid.uuid4()}"
    return api.request(method, "/education/v1" + path, json={}, headers=headers)


def test_the_education_table_names_every_route() -> None:
    routes = education_app().router.routes
    served = {(method, route.path) for route in routes for method in route.methods - {"HEAD"}}
    assert served == set(EDUCATION)


@pytest.mark.parametrize("permissions", [["read"], ["trade"], ["read", "trade"]])
def test_education_scope_matrix(api: Api, permissions: list[str]) -> None:
    key = _key(api, api.register()["session_token"], permissions)
    for (method, template), needs in EDUCATION.items():
        reply = _education(api, method, template, key)
        where = (method, template, reply.text)
        json_reply = reply.headers.get("content-type", "").startswith("application/json")
        code = reply.json().get("code") if json_reply else None
        if needs == "public":
            assert code not in ("insufficient_scope", "forbidden", "unauthenticated"), where
        elif needs == "session":
            assert reply.status_code == 403 and code == "forbidden", where
            assert "API keys are refused" in reply.json()["error"], where
        elif needs in permissions:
            assert code not in ("insufficient_scope", "forbidden"), where
        else:
            assert reply.status_code == 403 and code == "insufficient_scope", where
            assert repr(needs) in reply.json()["error"], where


def test_a_read_key_buys_nothing_and_leaves_the_idempotency_key_free(api: Api) -> None:
    user = api.register()
    token = user["session_token"]
    product = publish(api, leader(api))
    idem = f"k-{uuid.uuid4()}"
    key = _key(api, token, ["read", "trade"])
    refused = api.request(
        "POST",
        "/education/v1/checkouts",
        json={"product_id": product},
        headers={"X-API-Key": key[0], "X-API-Secret": key[1], "Idempotency-Key": idem},
    )
    assert refused.status_code == 403
    # Nothing was claimed under the key: the session's own request with it runs.
    created = call(api, "POST", "/checkouts", token, json={"product_id": product}, idem=idem)
    assert created.status_code == 201, created.text
