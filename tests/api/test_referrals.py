"""Referrals on SQLite and PostgreSQL: ``set_inviter`` and its rules, ``referral_list``, the commission
a referee's purchase earns (billing's ``apply_purchase``), refunds, ``referral_redeem``, the operator
commands, and the races: concurrent redemptions, one purchase reported at once by many, two inviters
named at once."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from svc_api.accounts import service as accounts
from svc_api.accounts.tables import accounts as accounts_table
from svc_api.billing import service as billing
from svc_api.billing.tables import purchases
from svc_api.cli.admin import command as admin
from svc_api.core.clock import ManualClock
from svc_api.credits.tables import credit_transactions
from svc_api.referrals import service as referrals
from svc_api.referrals.tables import referral_commissions, referral_redemptions
from svc_api.settings import Settings

if TYPE_CHECKING:
    from tests.api.conftest import Api

DAY = 86400


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()["data"]


def _refused(reply: Any, status: int) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    return reply.json()


def _referral(api: Api, token: str) -> dict[str, Any]:
    return _ok(api.user("account_info", token=token))["referral"]


def _pair(api: Api) -> tuple[dict[str, Any], dict[str, Any]]:
    """An inviter and a referee who named it with ``set_inviter``."""
    inviter, referee = api.register(), api.register()
    _ok(api.user("set_inviter", {"inviter_id": inviter["svc_id"]}, token=referee["session_token"]))
    return inviter, referee


def _buy(
    api: Api, svc_id: str, plan: str = "starter", period: str = "monthly", purchase_id: str = "p1", **kw: Any
):
    return billing.purchase(
        api.app.state.services.store, svc_id, plan, period, purchase_id, now=api.clock.now(), **kw
    )


def _count(api: Api, table: sa.Table, *where: Any) -> int:
    with api.app.state.services.store.read() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table).where(*where)).scalar())


# ---- set_inviter ------------------------------------------------------------------------------------


def test_set_inviter_names_the_inviter_once(api: Api) -> None:
    inviter, referee, other = api.register(), api.register(), api.register()
    token = referee["session_token"]
    reply = api.user("set_inviter", {"inviter_id": inviter["svc_id"].lower()}, token=token)
    body = reply.json()
    assert reply.status_code == 200, reply.text
    assert body["data"] == {
        "inviter_id": inviter["svc_id"],
        "message": f"{inviter['svc_id']} is now your inviter",
    }
    assert abs(body["timestamp"] - int(time.time())) <= 2
    with api.app.state.services.store.read() as conn:
        linked = conn.execute(
            sa.select(accounts_table.c.inviter_id).where(accounts_table.c.svc_id == referee["svc_id"])
        ).scalar()
    assert linked == inviter["svc_id"]
    again = _refused(api.user("set_inviter", {"inviter_id": other["svc_id"]}, token=token), 409)
    assert again["error"] == "conflict"
    assert _refused(api.user("set_inviter", {"inviter_id": inviter["svc_id"]}, token=token), 409)


def test_set_inviter_refuses_malformed_own_unknown_and_set_at_registration(api: Api) -> None:
    inviter, referee = api.register(), api.register()
    token = referee["session_token"]
    for bad in ("AB-12C", "ABCDEFG", "ABC", "", 123456, None, ["AB12CD"]):
        assert api.user("set_inviter", {"inviter_id": bad}, token=token).status_code == 400, bad
    assert api.user("set_inviter", {}, token=token).status_code == 400
    own = _refused(api.user("set_inviter", {"inviter_id": referee["svc_id"].lower()}, token=token), 400)
    assert "your own ID" in own["message"]
    taken = {inviter["svc_id"], referee["svc_id"]}
    unknown = next(c for c in ("ZZ9ZZ9", "ZZ9ZZ8", "ZZ9ZZ7") if c not in taken)
    missing = _refused(api.user("set_inviter", {"inviter_id": unknown}, token=token), 404)
    assert missing["error"] == "not_found"
    code = _referral(api, inviter["session_token"])["code"]
    registered = api.register(referral_code=code)
    other = api.register()
    at_registration = api.user(
        "set_inviter", {"inviter_id": other["svc_id"]}, token=registered["session_token"]
    )
    assert _refused(at_registration, 409)["error"] == "conflict"
    # Nothing was linked by the refused calls.
    _ok(api.user("set_inviter", {"inviter_id": inviter["svc_id"]}, token=token))


def test_set_inviter_only_within_30_days_of_registration(make_api: Any, settings: Settings) -> None:
    # sessions outlive the 31 days the clock moves (they expire on the service clock)
    api = make_api(settings.replace(session_ttl_seconds=90 * DAY), clock=ManualClock(int(time.time())))
    inviter, early, late = api.register(), api.register(), api.register()
    api.clock.advance(29 * DAY)
    _ok(api.user("set_inviter", {"inviter_id": inviter["svc_id"]}, token=early["session_token"]))
    api.clock.advance(2 * DAY)
    refused = _refused(
        api.user("set_inviter", {"inviter_id": inviter["svc_id"]}, token=late["session_token"]), 403
    )
    assert refused["error"] == "forbidden" and "30 days" in refused["message"]


def test_set_inviter_and_referral_redeem_need_the_trade_scope(api: Api) -> None:
    inviter, user = api.register(), api.register()
    key = _ok(api.user("api_key_generate", {"label": "bot"}, token=user["session_token"]))
    pair = (key["api_key"], key["api_secret"])
    scoped = _refused(api.user("set_inviter", {"inviter_id": inviter["svc_id"]}, key=pair), 403)
    assert scoped["code"] == "insufficient_scope"
    assert _refused(api.user("referral_redeem", {"redeem_type": "credits", "amount": 1}, key=pair), 403)
    assert _ok(api.user("referral_list", key=pair)) == {"referrals": [], "count": 0}


# ---- referral_list ----------------------------------------------------------------------------------


def test_referral_list_masks_ids_newest_first_with_the_plan_in_force(api: Api) -> None:
    inviter = api.register()
    invited = [api.register() for _ in range(3)]
    for user in invited:
        _ok(api.user("set_inviter", {"inviter_id": inviter["svc_id"]}, token=user["session_token"]))
    joined = {invited[0]["svc_id"]: 1_000, invited[1]["svc_id"]: 3_000, invited[2]["svc_id"]: 2_000}
    with api.app.state.services.store.write() as conn:
        for svc_id, at in joined.items():
            conn.execute(
                accounts_table.update().where(accounts_table.c.svc_id == svc_id).values(created_at=at)
            )
        accounts.grant_plan(conn, invited[2]["svc_id"], "pro", 30, now=api.clock.now())
        accounts.grant_plan(conn, invited[0]["svc_id"], "plus", 1, now=api.clock.now() - 2 * DAY)  # expired
    listed = _ok(api.user("referral_list", token=inviter["session_token"]))
    order = [invited[1]["svc_id"], invited[2]["svc_id"], invited[0]["svc_id"]]
    assert listed == {
        "referrals": [
            {"svc_id_masked": f"{s[:2]}**{s[-2:]}", "joined_at": joined[s], "plan": plan}
            for s, plan in zip(order, ("free", "pro", "free"), strict=True)
        ],
        "count": 3,
    }
    assert _ok(api.user("referral_list", token=invited[0]["session_token"])) == {"referrals": [], "count": 0}


# ---- commissions on purchases -----------------------------------------------------------------------


def test_a_referee_purchase_earns_the_inviter_twenty_percent_of_the_price(api: Api) -> None:
    inviter, referee = _pair(api)
    bought = _buy(api, referee["svc_id"], "starter", "monthly", "order-1")
    assert (bought["amount_usdt"], bought["days"], bought["status"], bought["replayed"]) == (
        10,
        30,
        "applied",
        False,
    )
    commission = bought["commission"]
    assert (commission["svc_id"], commission["amount_usdt"], commission["rate_pct"]) == (
        inviter["svc_id"],
        2,
        20,
    )
    assert _ok(api.user("account_info", token=referee["session_token"]))["plan"] == "starter"
    referral = _referral(api, inviter["session_token"])
    assert referral["commissions"] == [
        {"commission_id": commission["commission_id"], "amount_usdt": 2, "status": "recorded"}
    ]
    assert (referral["total_commission_usdt"], referral["available_commission_usdt"]) == (2, 2)
    # A buyer without an inviter earns nobody anything; the referee's own section is empty.
    loner = api.register()
    assert _buy(api, loner["svc_id"], "investor", "annual", "order-2")["commission"] is None
    assert _referral(api, inviter["session_token"])["total_commission_usdt"] == 2
    assert _referral(api, referee["session_token"])["commissions"] == []


def test_a_per_account_rate_of_35_percent_applies_to_later_purchases(api: Api) -> None:
    inviter, referee = _pair(api)
    with api.app.state.services.store.write() as conn:
        referrals.set_rate(conn, inviter["svc_id"], 35)
    assert _buy(api, referee["svc_id"], "pro", "monthly", "a")["commission"]["amount_usdt"] == 17.5
    assert _buy(api, referee["svc_id"], "investor", "annual", "b")["commission"]["amount_usdt"] == 210
    assert _buy(api, referee["svc_id"], "plus", "monthly", "c", amount_usdt="9.99")["commission"][
        "amount_usdt"
    ] == (3.4965)
    referral = _referral(api, inviter["session_token"])
    assert referral["total_commission_usdt"] == referral["available_commission_usdt"] == 230.9965


def test_the_same_purchase_reported_twice_records_one_commission(api: Api) -> None:
    inviter, referee = _pair(api)
    first = _buy(api, referee["svc_id"], "plus", "annual", "dup")
    again = _buy(api, referee["svc_id"], "plus", "annual", "dup")
    assert again == first | {"replayed": True}
    assert abs(first["license_expires_at"] - (api.clock.now() + 365 * DAY)) <= 2
    assert _count(api, referral_commissions) == 1 and _count(api, purchases) == 1
    referral = _referral(api, inviter["session_token"])
    assert [c["amount_usdt"] for c in referral["commissions"]] == [24]
    # The same id from another channel is another purchase.
    other = _buy(api, referee["svc_id"], "plus", "annual", "dup", source="appstore")
    assert (
        other["replayed"] is False and other["license_expires_at"] == first["license_expires_at"] + 365 * DAY
    )
    assert _referral(api, inviter["session_token"])["total_commission_usdt"] == 48


def test_a_refund_reverses_the_commission_and_takes_the_plan_time_back(api: Api) -> None:
    inviter, referee = _pair(api)
    bought = _buy(api, referee["svc_id"], "pro", "monthly", "r1")
    store, now = api.app.state.services.store, api.clock.now()
    refunded = billing.refund(store, "admin", "r1", now=now)
    assert (refunded["status"], refunded["replayed"], refunded["commission"]["status"]) == (
        "refunded",
        False,
        "reversed",
    )
    assert refunded["license_expires_at"] == bought["license_expires_at"] - 30 * DAY
    assert _ok(api.user("account_info", token=referee["session_token"]))["plan"] == "free"
    referral = _referral(api, inviter["session_token"])
    assert referral["commissions"] == [
        {"commission_id": bought["commission"]["commission_id"], "amount_usdt": 10, "status": "reversed"}
    ]
    assert (referral["total_commission_usdt"], referral["available_commission_usdt"]) == (0, 0)
    again = billing.refund(store, "admin", "r1", now=now)
    assert again == refunded | {"replayed": True}
    assert _buy(api, referee["svc_id"], "pro", "monthly", "r1")["status"] == "refunded"  # nothing re-applied
    token = inviter["session_token"]
    assert _refused(api.user("referral_redeem", {"redeem_type": "credits", "amount": 1}, token=token), 400)


def test_a_refund_after_redemption_leaves_a_negative_balance_that_later_commissions_fill(api: Api) -> None:
    inviter, referee = _pair(api)
    token = inviter["session_token"]
    _buy(api, referee["svc_id"], "starter", "monthly", "n1")  # 2
    _buy(api, referee["svc_id"], "starter", "monthly", "n2")  # 2
    _ok(api.user("referral_redeem", {"redeem_type": "credits", "amount": 3}, token=token))
    billing.refund(api.app.state.services.store, "admin", "n1", now=api.clock.now())
    referral = _referral(api, token)
    assert (referral["total_commission_usdt"], referral["available_commission_usdt"]) == (2, -1)
    _buy(api, referee["svc_id"], "plus", "monthly", "n3")  # 4
    assert _referral(api, token)["available_commission_usdt"] == 3
    assert _ok(api.user("account_info", token=token))["svc_credits"] == 3  # credits are never taken back


# ---- referral_redeem --------------------------------------------------------------------------------


def test_referral_redeem_refuses_a_wrong_type_or_amount(api: Api) -> None:
    inviter, referee = _pair(api)
    _buy(api, referee["svc_id"], "pro", "monthly", "v1")  # 10 available
    token = inviter["session_token"]
    for body in (
        {"redeem_type": "cash", "amount": 2},
        {"amount": 2},
        {"redeem_type": "credits", "amount": 0.5},
        {"redeem_type": "credits", "amount": 0},
        {"redeem_type": "credits", "amount": 10.5},
        {"redeem_type": "credits", "amount": "5"},
        {"redeem_type": "credits", "amount": True},
        {"redeem_type": "credits", "amount": None},
        {"redeem_type": "credits"},
        {"redeem_type": "credits", "amount": 1.00001},
    ):
        assert _refused(api.user("referral_redeem", body, token=token), 400)["error"] == "invalid_request", (
            body
        )
    above = _refused(api.user("referral_redeem", {"redeem_type": "credits", "amount": 11}, token=token), 400)
    assert above["message"] == "amount 11 exceeds the available commission of 10 USDT"
    huge = _refused(
        api.user("referral_redeem", {"redeem_type": "credits", "amount": 8.8e307}, token=token), 400
    )
    assert huge["message"] == "amount must be at most 1000000000 USDT, got 8.8e+307"
    assert _count(api, referral_redemptions) == 0
    assert _ok(api.user("account_info", token=token))["svc_credits"] == 0


def test_referral_redeem_adds_exactly_the_amount_as_one_deposit_ledger_row(api: Api) -> None:
    inviter, referee = _pair(api)
    _buy(api, referee["svc_id"], "pro", "monthly", "d1")  # 10 available
    token = inviter["session_token"]
    done = _ok(api.user("referral_redeem", {"redeem_type": "credits", "amount": 2.5}, token=token))
    assert done == {"redeem_type": "credits", "amount": 2.5, "status": "completed", "credits_added": 2.5}
    assert _ok(api.user("account_info", token=token))["svc_credits"] == 2.5
    [row] = _ok(api.user("credits_history", token=token))["transactions"]
    assert (row["type"], row["action"], row["amount"], row["description"]) == (
        "deposit",
        "deposit",
        2.5,
        "Referral commission redeemed (2.5 USDT)",
    )
    referral = _referral(api, token)
    assert (referral["total_commission_usdt"], referral["available_commission_usdt"]) == (10, 7.5)
    whole = _ok(api.user("referral_redeem", {"redeem_type": "credits", "amount": 7.5}, token=token))
    assert whole["credits_added"] == 7.5 and _referral(api, token)["available_commission_usdt"] == 0
    with api.app.state.services.store.read() as conn:
        paid = conn.execute(
            sa.select(referral_redemptions.c.amount_usdt, referral_redemptions.c.credits)
        ).all()
    assert sorted((float(a), c) for a, c in paid) == [(2.5, 25_000), (7.5, 75_000)]


# ---- races (SQLite and PostgreSQL) ------------------------------------------------------------------


def test_ten_concurrent_redemptions_of_3_against_10_available_let_exactly_3_through(api: Api) -> None:
    inviter, referee = _pair(api)
    _buy(api, referee["svc_id"], "pro", "monthly", "c1")  # 10 available
    token = inviter["session_token"]
    body = {"redeem_type": "credits", "amount": 3}
    with ThreadPoolExecutor(10) as pool:
        codes = list(
            pool.map(lambda _: api.user("referral_redeem", body, token=token).status_code, range(10))
        )
    assert codes.count(200) == 3 and codes.count(400) == 7, codes
    assert _ok(api.user("account_info", token=token))["svc_credits"] == 9
    assert _referral(api, token)["available_commission_usdt"] == 1
    with api.app.state.services.store.read() as conn:
        ledger = conn.execute(
            sa.select(credit_transactions.c.amount).where(credit_transactions.c.svc_id == inviter["svc_id"])
        ).scalars()
        assert list(ledger) == [30_000] * 3
    assert _count(api, referral_redemptions) == 3


def test_one_purchase_reported_by_8_threads_at_once_records_one_commission(api: Api) -> None:
    inviter, referee = _pair(api)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: _buy(api, referee["svc_id"], "plus", "monthly", "race"), range(8)))
    assert sorted(r["replayed"] for r in results) == [False] + [True] * 7
    assert len({r["license_expires_at"] for r in results}) == 1
    assert _count(api, referral_commissions) == 1 and _count(api, purchases) == 1
    assert _referral(api, inviter["session_token"])["total_commission_usdt"] == 4
    info = _ok(api.user("account_info", token=referee["session_token"]))
    assert info["license_expires_at"] == results[0]["license_expires_at"]


def test_two_racing_set_inviter_calls_one_wins(api: Api) -> None:
    first, second = api.register(), api.register()
    referees = [api.register() for _ in range(4)]
    calls = [(r, inviter) for r in referees for inviter in (first, second)]
    with ThreadPoolExecutor(8) as pool:
        codes = list(
            pool.map(
                lambda c: (
                    api.user(
                        "set_inviter", {"inviter_id": c[1]["svc_id"]}, token=c[0]["session_token"]
                    ).status_code
                ),
                calls,
            )
        )
    for i, referee in enumerate(referees):
        pair = sorted(codes[2 * i : 2 * i + 2])
        assert pair == [200, 409], codes
        winner = calls[2 * i + codes[2 * i : 2 * i + 2].index(200)][1]["svc_id"]
        with api.app.state.services.store.read() as conn:
            linked = conn.execute(
                sa.select(accounts_table.c.inviter_id).where(accounts_table.c.svc_id == referee["svc_id"])
            ).scalar()
        assert linked == winner


# ---- operator commands ------------------------------------------------------------------------------


@pytest.fixture
def cli_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"DATABASE_URL": settings.database_url, "SECRET_KEY": settings.secret_key.decode()}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def _admin(*args: str) -> Any:
    return CliRunner().invoke(admin, list(args))


def test_admin_referral_rate_purchase_and_refund(api: Api, cli_env: dict[str, str]) -> None:
    inviter, referee = _pair(api)
    rate = _admin("referral-rate", inviter["svc_id"].lower(), "35")
    assert rate.exit_code == 0, rate.output
    assert json.loads(rate.output) == {"svc_id": inviter["svc_id"], "rate_pct": 35}
    bought = _admin("purchase", referee["svc_id"], "pro", "monthly", "--purchase-id", "cli-1")
    assert bought.exit_code == 0, bought.output
    applied = json.loads(bought.output)
    assert (applied["amount_usdt"], applied["commission"]["amount_usdt"], applied["replayed"]) == (
        50,
        17.5,
        False,
    )
    again = json.loads(
        _admin("purchase", referee["svc_id"], "pro", "monthly", "--purchase-id", "cli-1").output
    )
    assert again == applied | {"replayed": True}
    paid = _admin(
        "purchase",
        referee["svc_id"],
        "plus",
        "annual",
        "--purchase-id",
        "T-9",
        "--amount",
        "100",
        "--source",
        "usdt",
    )
    assert json.loads(paid.output)["commission"]["amount_usdt"] == 35
    refund = json.loads(_admin("refund", "T-9", "--source", "usdt").output)
    assert (refund["status"], refund["commission"]["status"]) == ("refunded", "reversed")
    referral = _referral(api, inviter["session_token"])
    assert (referral["total_commission_usdt"], referral["available_commission_usdt"]) == (17.5, 17.5)
    assert _admin("refund", "T-9").output == "Error: no purchase 'T-9' from 'admin'\n"
    assert _admin("referral-rate", inviter["svc_id"], "101").exit_code == 1
    assert _admin("referral-rate", "NOPE00", "10").output == "Error: unknown account NOPE00\n"
    assert _admin("purchase", referee["svc_id"], "pro", "weekly", "--purchase-id", "x").exit_code == 2
    assert _admin("purchase", referee["svc_id"], "pro", "monthly").exit_code == 2  # --purchase-id required
    bad_amount = _admin(
        "purchase", referee["svc_id"], "pro", "monthly", "--purchase-id", "y", "--amount", "ten"
    )
    assert bad_amount.exit_code == 1 and "amount_usdt must be a number" in bad_amount.output


def test_buying_another_plan_converts_the_time_left_at_the_ratio_of_monthly_prices(api: Api) -> None:
    buyer = api.register()
    now = api.clock.now()
    starter_year = _buy(api, buyer["svc_id"], "starter", "annual", "c1")
    assert starter_year["license_expires_at"] == now + 365 * DAY
    # 365 days of starter (10 a month) are worth 73 days of pro (50 a month); the month adds 30
    pro_month = _buy(api, buyer["svc_id"], "pro", "monthly", "c2")
    assert (pro_month["plan"], pro_month["license_expires_at"]) == ("pro", now + (73 + 30) * DAY)
    # and back down: 103 days of pro are worth 257.5 days of plus (20 a month), plus its month
    plus_month = _buy(api, buyer["svc_id"], "plus", "monthly", "c3")
    assert plus_month["license_expires_at"] == now + int(103 * DAY * 50 / 20) + 30 * DAY
    # the same plan again only stacks
    again = _buy(api, buyer["svc_id"], "plus", "monthly", "c4")
    assert again["license_expires_at"] == plus_month["license_expires_at"] + 30 * DAY
