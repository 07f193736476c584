"""account_info, login_history, plans, and the operator commands ``svc admin``."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from click.testing import CliRunner

from svc_api.accounts.identity import login_id
from svc_api.accounts.tables import logins, plan_grants
from svc_api.cli.admin import command as admin
from svc_api.credits.tables import credit_transactions
from svc_api.referrals.tables import referral_commissions
from svc_api.settings import Settings

if TYPE_CHECKING:
    from tests.api.conftest import Api

PASSWORD = "correct horse battery"


def test_account_info_has_every_field_with_real_values(api: Api) -> None:
    user = api.register()
    with api.app.state.services.store.write() as conn:
        conn.execute(
            referral_commissions.insert().values(
                commission_id="c1", svc_id=user["svc_id"], amount_usdt="2.50", created_at=10
            )
        )
    reply = api.user("account_info", token=user["session_token"])
    info = reply.json()["data"]
    assert info == {
        "svc_id": user["svc_id"],
        "plan": "free",
        "svc_credits": 0,
        "license_expires_at": 0,
        "demo_expires_at": 0,
        "active_own_strategies": 0,
        "community_role": "member",
        "connections": {"exchange": False, "messenger": False, "identity_provider": False},
        "notification_settings": {
            "app": True,
            "announcement": True,
            "account": True,
            "bot": True,
            "messenger": True,
            "mail": True,
        },
        "referral": {
            "code": info["referral"]["code"],
            "commissions": [{"commission_id": "c1", "amount_usdt": 2.5, "status": "recorded"}],
            "total_commission_usdt": 2.5,
            "available_commission_usdt": 2.5,
        },
        "strategies": {},
    }


def test_login_history_one_record_per_origin_newest_first(make_api: Any, settings: Settings) -> None:
    email = "origins@example.com"
    first = make_api(settings, ip="10.0.0.1")
    user = first.register(email)
    second = make_api(settings, ip="10.0.0.2")
    third = make_api(settings, ip="10.0.0.3")
    now = int(time.time())
    for client, at in ((second, now - 200), (third, now - 100), (first, None), (first, None)):
        reply = client.user("login", {"email": email, "password": PASSWORD, "platform": "ios"})
        assert reply.status_code == 200
        if at is not None:  # back-date, so that the order does not hang on seconds ticking
            with first.app.state.services.store.write() as conn:
                conn.execute(
                    logins.update().where(logins.c.ip_address == client_ip(client)).values(login_at=at)
                )
    token = user["session_token"]
    history = first.user("login_history", token=token).json()["data"]
    assert [r["ip_address"] for r in history["logins"]] == ["10.0.0.1", "10.0.0.3", "10.0.0.2"]
    assert history["count"] == 3 and history["has_more"] is False and history["last_evaluated_key"] is None
    record = history["logins"][0]
    assert record["login_id"] == login_id(user["svc_id"], "10.0.0.1")
    assert record["platform"] == "ios"
    assert set(record) == {"login_id", "ip_address", "platform", "login_at"}

    page1 = first.user("login_history", {"limit": 2}, token=token).json()["data"]
    assert page1["count"] == 2 and page1["has_more"] is True
    page2 = first.user("login_history", {"limit": 2, "cursor": page1["last_evaluated_key"]}, token=token)
    rest = page2.json()["data"]
    assert [r["ip_address"] for r in page1["logins"] + rest["logins"]] == ["10.0.0.1", "10.0.0.3", "10.0.0.2"]
    assert rest["has_more"] is False and rest["last_evaluated_key"] is None
    # Stable: the same origin keeps its login_id across logins.
    again = first.user("login_history", token=token).json()["data"]["logins"]
    assert [r["login_id"] for r in again] == [r["login_id"] for r in history["logins"]]
    assert first.user("login_history", {"limit": 0}, token=token).status_code == 400


def client_ip(api: Api) -> str:
    return str(api.client._transport.client[0])


def _admin(*args: str) -> Any:
    result = CliRunner().invoke(admin, list(args))
    return result


def test_admin_grant_plan_stacks_days_and_records_the_grant(api: Api, cli_env: None) -> None:
    user = api.register()
    sid, token = user["svc_id"], user["session_token"]
    start = int(time.time())
    first = _admin("grant-plan", sid, "pro", "--days", "30")
    assert first.exit_code == 0, first.output
    granted = json.loads(first.output)
    assert granted["plan"] == "pro"
    assert start + 30 * 86400 <= granted["license_expires_at"] <= int(time.time()) + 30 * 86400
    second = json.loads(_admin("grant-plan", sid.lower(), "pro", "--days", "365").output)
    assert second["license_expires_at"] == granted["license_expires_at"] + 365 * 86400
    info = api.user("account_info", token=token).json()["data"]
    assert (info["plan"], info["license_expires_at"]) == ("pro", second["license_expires_at"])
    # a demo would replace the paid plan (one plan column) until it ends: refused while a licence runs
    refused = _admin("grant-plan", sid, "plus", "--days", "7", "--demo")
    assert refused.exit_code == 1 and "a paid licence runs until" in refused.output
    newcomer = api.register()
    demo = json.loads(_admin("grant-plan", newcomer["svc_id"], "plus", "--days", "7", "--demo").output)
    assert demo["plan"] == "plus" and demo["demo_expires_at"] > int(time.time())
    with api.app.state.services.store.read() as conn:
        grants = conn.execute(sa.select(plan_grants.c.plan, plan_grants.c.days, plan_grants.c.demo)).all()
    assert [tuple(g) for g in grants] == [("pro", 30, False), ("pro", 365, False), ("plus", 7, True)]
    # A session's plan decides its rate limit: x2 first party, x100 here (pro 120, plus 60).
    assert api.user("account_info", token=token).headers["x-ratelimit-limit"] == "24000"
    newcomer_token = newcomer["session_token"]
    assert api.user("account_info", token=newcomer_token).headers["x-ratelimit-limit"] == "12000"


def test_admin_errors_are_one_line(api: Api, cli_env: None) -> None:
    unknown = _admin("grant-plan", "NOPE00", "pro", "--days", "30")
    assert unknown.exit_code == 1
    assert unknown.output == "Error: unknown account NOPE00\n"
    assert _admin("grant-plan", "NOPE00", "gold", "--days", "30").exit_code == 2
    assert _admin("grant-plan", "NOPE00", "pro", "--days", "0").exit_code == 2
    bad_amount = _admin("credits", "NOPE00", "ten", "--reason", "x")
    assert bad_amount.output == "Error: amount must be a number, got 'ten'\n"


def test_admin_credits_is_an_adjustment_in_the_ledger(api: Api, cli_env: None) -> None:
    user = api.register()
    sid, token = user["svc_id"], user["session_token"]
    added = _admin("credits", sid, "12.5", "--reason", "support ticket 42")
    assert added.exit_code == 0, added.output
    assert json.loads(added.output)["balance"] == 12.5
    removed = json.loads(_admin("credits", sid, "-2.5", "--reason", "correction").output)
    assert removed["balance"] == 10
    overdraw = _admin("credits", sid, "--reason", "too much", "--", "-11")
    assert overdraw.exit_code == 1 and "insufficient credits" in overdraw.output
    history = api.user("credits_history", token=token).json()["data"]["transactions"]
    assert [(t["type"], t["action"], t["amount"]) for t in history] == [
        ("adjustment", "credit_adjustment", -2.5),
        ("adjustment", "credit_adjustment", 12.5),
    ]
    with api.app.state.services.store.read() as conn:
        reasons = conn.execute(
            sa.select(credit_transactions.c.reason).order_by(credit_transactions.c.seq)
        ).scalars()
        assert list(reasons) == ["support ticket 42", "correction"]
    assert api.user("account_info", token=token).json()["data"]["svc_credits"] == 10


def _login(api: Api, email: str, password: str) -> Any:
    return api.user("login", {"email": email, "password": password})


def test_failed_logins_are_budgeted_per_account_and_do_not_lock_out_the_address(
    make_api: Any, settings: Settings, monkeypatch: Any
) -> None:
    monkeypatch.setenv("RATE_LIMIT_SCALE", "1")  # the real budgets
    api = make_api(settings)
    victim, neighbour = api.register(), api.register()
    for _ in range(10):
        assert _login(api, victim["email"], "wrong password 1").status_code == 401
    # The account's budget is spent: even the right password waits, with the one 429 pair.
    locked = _login(api, victim["email"].upper(), PASSWORD)
    assert locked.status_code == 429, locked.text
    body = locked.json()
    assert (body["error"], body["reason"]) == ("too_many_requests", "rate_limit_exceeded")
    assert "account" in body["message"] and int(locked.headers["Retry-After"]) > 0
    # Someone else behind the same address logs in, more often than a guest's 20 requests a minute.
    for _ in range(25):
        assert _login(api, neighbour["email"], PASSWORD).status_code == 200


def test_login_attempts_per_address_have_a_budget_larger_than_one_user_needs(
    make_api: Any, settings: Settings, monkeypatch: Any
) -> None:
    monkeypatch.setenv("RATE_LIMIT_SCALE", "1")
    api = make_api(settings)
    # 100 attempts a minute, each at a different account (no account budget is reached).
    answers = [_login(api, f"nobody{n}@example.com", "wrong password 1").status_code for n in range(100)]
    assert answers == [401] * 100
    refused = _login(api, "nobody-else@example.com", "wrong password 1")
    assert refused.status_code == 429
    assert (refused.json()["error"], refused.json()["reason"]) == ("too_many_requests", "rate_limit_exceeded")
    # The headers tell the login budget, not the guest's 20.
    assert refused.headers["X-RateLimit-Limit"] == "100"


def test_login_budgets_in_redis_are_shared_by_instances_and_fail_closed(settings: Settings) -> None:
    import uuid

    import pytest
    import redis

    from svc_api.accounts.throttle import LoginThrottle
    from svc_api.core.errors import ApiError, Unauthenticated

    try:
        redis.Redis.from_url("redis://127.0.0.1:6379/0", socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip("no Redis at 127.0.0.1:6379")
    shared = settings.replace(redis_url="redis://127.0.0.1:6379/0", rate_limit_prefix=f"t-{uuid.uuid4().hex}")
    first, second = LoginThrottle.from_settings(shared), LoginThrottle.from_settings(shared)

    def wrong() -> None:
        raise Unauthenticated("invalid email or password")

    for throttle in [first, second] * 5:  # ten failures, spread over two instances
        with pytest.raises(Unauthenticated):
            throttle.attempt("a@example.com", wrong)
    with pytest.raises(ApiError) as refused:
        first.attempt("A@example.com", lambda: "ok")
    assert refused.value.status == 429
    down = LoginThrottle.from_settings(settings.replace(redis_url="redis://127.0.0.1:1/0"))
    with pytest.raises(ApiError) as unavailable:
        down.attempt("a@example.com", lambda: "ok")
    assert (unavailable.value.status, unavailable.value.reason) == (503, "temporarily_unavailable")
