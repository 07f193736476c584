"""Sales and payouts (issue 18): sales analytics and payout statements of the instructor's own sales,
the monthly payout run with exact statement figures, its minimums (TR in TRY at an operator's FX rate,
international in USD), accrual for incomplete profiles, one payment per seller and period under
concurrent runs, the scheduler's window, and every error status of the two routes; on SQLite and
PostgreSQL. Sales are made through the real checkout and refunds through the refund route."""

from __future__ import annotations

import csv
import datetime as dt
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from svc_api.cli import main as svc
from svc_api.education.payouts import service as payouts
from svc_api.education.payouts.worker import payout_worker
from svc_api.education.studio import service as studio
from tests.api.community_helpers import admin
from tests.api.conftest import Api
from tests.api.education_helpers import DE_PROFILE, PUBLICATION, TR_PROFILE, VIDEO_COURSE, buy, call, publish

USD_PROFILE = {**DE_PROFILE, "payout_currency": "USD"}
"""An international seller paid in USD."""


def at(month: int, day: int, hour: int = 12) -> int:
    """Unix seconds of a day of 2026 (UTC)."""
    return int(dt.datetime(2026, month, day, hour, tzinfo=dt.UTC).timestamp())


def usd(amount: int) -> dict[str, Any]:
    return {"amount_minor": amount, "currency": "USD"}


def _code(reply: Any, status: int, code: str) -> None:
    assert reply.status_code == status, reply.text
    assert reply.json()["code"] == code, reply.json()


def seller(api: Api, profile: dict[str, Any] | None = None, *, identity: bool = True) -> SimpleNamespace:
    """A leader (role granted by the operator's function); with ``profile``, onboarded through the
    studio's onboarding functions, and identity confirmed unless ``identity`` is False."""
    account = api.register()
    svc_id, store, now = account["svc_id"], api.app.state.services.store, api.clock.now()
    with store.write() as conn:
        studio.grant_role(conn, svc_id, "leader", now=now)
        if profile is not None:
            token = studio.start_onboarding(conn, svc_id, now=now)["onboarding_url"].rsplit("/", 1)[1]
            body = {"accept_contract": True, "payout_profile": profile}
            studio.complete_onboarding(conn, token, body, now=now)
        if identity and profile is not None:
            studio.confirm_identity(conn, svc_id, now=now)
    return SimpleNamespace(svc_id=svc_id, token=account["session_token"])


def sell(api: Api, when: int, buyer: str, product_id: str) -> str:
    """A paid order at ``when``; its id."""
    api.clock.set(when)
    return str(buy(api, buyer, product_id)["order_id"])


def refund(api: Api, when: int, buyer: str, order_id: str) -> None:
    api.clock.set(when)
    reply = call(
        api, "POST", f"/orders/{order_id}/refund-requests", buyer, json={"reason": "changed my mind"}
    )
    assert reply.status_code == 201, reply.text


def run(api: Api, when: int, period: str | None = None) -> dict[str, Any]:
    """The payout run as of ``when`` (the scheduler's and the operator command's function)."""
    services = api.app.state.services
    policy = payouts.Policy.from_settings(services.settings)
    return payouts.payout_run(services.store, policy, services.settings.var_dir, period=period, now=when)


def rate(api: Api, base: str, quote: str, value: str, when: int) -> None:
    """Set a currency rate as of ``when`` (a run uses rates set at most EDU_FX_MAX_AGE_HOURS before)."""
    with api.app.state.services.store.write() as conn:
        payouts.set_fx_rate(conn, base, quote, value, now=when)


def outcomes(report: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {out["seller_id"]: (out["state"], out["reason"]) for out in report["sellers"]}


def statements(api: Api, token: str, **params: Any) -> dict[str, Any]:
    reply = call(api, "GET", "/studio/payout-statements", token, params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def sales(api: Api, token: str, **params: Any) -> dict[str, Any]:
    reply = call(api, "GET", "/studio/analytics/sales", token, params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def payables(api: Api, svc_id: str) -> int:
    with api.app.state.services.store.read() as conn:
        total = conn.execute(
            sa.text("SELECT COALESCE(SUM(amount_minor), 0) FROM edu_payables WHERE leader_id = :s"),
            {"s": svc_id},
        ).scalar()
    return int(total)


@pytest.fixture
def shop(capi: Api) -> SimpleNamespace:
    """A Turkey-based seller with a course (49.00 USD) and a book (15.00 USD), and three students.

    October: two courses and two books sold, one course refunded on the 10th; the 20th's book is
    refunded on 2 November; a course is sold on 3 November."""
    api = capi
    api.clock.set(at(10, 1))
    tr = seller(api, TR_PROFILE)
    course, book = publish(api, tr.svc_id, VIDEO_COURSE), publish(api, tr.svc_id, PUBLICATION)
    a, b, c = (api.register()["session_token"] for _ in range(3))
    first = sell(api, at(10, 5), a, course)
    sell(api, at(10, 5, 13), b, course)
    sell(api, at(10, 6), a, book)
    refund(api, at(10, 10), a, first)
    late_book = sell(api, at(10, 20), b, book)
    refund(api, at(11, 2), b, late_book)
    sell(api, at(11, 3), c, course)
    return SimpleNamespace(api=api, tr=tr, course=course, book=book, students=(a, b, c))


def test_the_months_run_issues_a_statement_with_exact_figures(shop: SimpleNamespace, cli_env: None) -> None:
    api, tr = shop.api, shop.tr
    assert admin("edu", "fx-rate", "USD", "TRY", "41.25")["rate"] == "41.25"
    report = admin("edu", "payout-run", "--now", str(at(11, 25)))
    assert report["period"] == "2026-10" and report["payouts"] == 1
    # October: sales 4900 + 4900 + 1500 + 1500; the course refunded on the 10th; commission 20 % per
    # sale given back on refund (980 + 980 + 300 + 300 - 980); payment fees 3 % per sale, kept
    # (147 + 147 + 45 + 45); net 12800 - 4900 - 1580 - 384.
    [october] = statements(api, tr.token)["items"]
    assert {k: october[k] for k in ("period", "orders", "refunded_orders", "gross", "net", "status")} == {
        "period": "2026-10",
        "orders": 4,
        "refunded_orders": 1,
        "gross": usd(12800),
        "net": usd(5936),
        "status": "paid",
    }
    assert october["deductions"] == {
        "refunds": usd(4900),
        "commission": usd(1580),
        "payment_fees": usd(384),
        "total": usd(6864),
    }
    assert (october["commission_pct"], october["payment_fee_pct"]) == (20.0, 3.0)
    # 59.36 USD at 41.25 TRY: 2448.60 TRY
    assert october["payout"] == {
        "payout_id": f"po_{tr.svc_id}_202610_USD",
        "state": "issued",
        "amount": {"amount_minor": 244860, "currency": "TRY"},
        "fx_rate": "41.25",
        "issued_at": at(11, 25),
    }
    assert outcomes(report) == {tr.svc_id: ("paid", None)}
    with Path(report["export"]).open(encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert {k: row[k] for k in ("seller_id", "period", "amount_minor", "payout_amount_minor", "fx_rate")} == {
        "seller_id": tr.svc_id,
        "period": "2026-10",
        "amount_minor": "5936",
        "payout_amount_minor": "244860",
        "fx_rate": "41.25",
    }
    assert (row["payout_currency"], row["bank_account"], row["e_document_type"]) == (
        "TRY",
        TR_PROFILE["bank_account"],
        "e_archive",
    )
    # the file lost after the run committed: the operator writes it again, the same bytes
    written = Path(report["export"]).read_bytes()
    Path(report["export"]).unlink()
    again = admin("edu", "payout-export", report["run_id"])
    assert again == {"run_id": report["run_id"], "export": report["export"], "payouts": 1}
    assert Path(report["export"]).read_bytes() == written
    assert (
        "issued no payouts" in CliRunner().invoke(svc, ["admin", "edu", "payout-export", "run_none"]).output
    )
    assert payables(api, tr.svc_id) == 0 and statements(api, tr.token)["balances"] == [usd(0)]
    # the statement is equal to the orders and refunds behind it, to the minor unit
    summary = sales(api, tr.token, **{"from": "2026-10-01", "to": "2026-10-31"})["summary"]
    assert summary == {
        "orders": 4,
        "refunded_orders": 1,
        "gross": usd(12800),
        "refunds": usd(4900),
        "net": usd(7900),
    }
    # a second run of the month pays nothing more
    assert run(api, at(11, 26))["payouts"] == 0
    # November: a course sold, October's book refunded on the 2nd (its commission given back):
    # 4900 - 1500 - (980 - 300) - 147 = 2573, 25.73 USD = 1061.36 TRY (the operator sets the rate again)
    rate(api, "USD", "TRY", "41.25", at(12, 25))
    report = run(api, at(12, 25))
    assert report["period"] == "2026-11" and outcomes(report) == {tr.svc_id: ("paid", None)}
    november, again = statements(api, tr.token)["items"]
    assert again == october
    assert (november["gross"], november["deductions"]["total"], november["net"]) == (
        usd(4900),
        usd(2327),
        usd(2573),
    )
    assert november["payout"]["amount"] == {"amount_minor": 106136, "currency": "TRY"}
    assert payables(api, tr.svc_id) == 0


def test_minimums_tr_with_and_without_a_rate_and_international_below_and_above(
    capi: Api, cli_env: None
) -> None:
    api = capi
    api.clock.set(at(10, 1))
    tr_low, tr_high = seller(api, TR_PROFILE), seller(api, TR_PROFILE)
    intl_low, intl_high = seller(api, USD_PROFILE), seller(api, USD_PROFILE)
    intl_eur = seller(api, {**USD_PROFILE, "payout_currency": "EUR"})
    product = {
        s.svc_id: publish(api, s.svc_id, VIDEO_COURSE, price_minor=20000)
        for s in (intl_low, intl_high, intl_eur)
    }
    product[tr_low.svc_id] = publish(api, tr_low.svc_id, PUBLICATION)
    product[tr_high.svc_id] = publish(api, tr_high.svc_id, VIDEO_COURSE)
    a, b = api.register()["session_token"], api.register()["session_token"]
    for s in (tr_high, intl_high, intl_eur):
        sell(api, at(10, 7), a, product[s.svc_id])
        sell(api, at(10, 8), b, product[s.svc_id])
    sell(api, at(10, 9), a, product[tr_low.svc_id])
    sell(api, at(10, 9), a, product[intl_low.svc_id])
    # no rates yet: Turkey-based sellers and the EUR payee are refused; 154.00 USD is under 250 USD;
    # 308.00 USD (2 x 20000 - 20 % - 3 %) is paid in USD
    first = run(api, at(11, 20))
    assert outcomes(first) == {
        tr_low.svc_id: ("refused", "no_fx_rate"),
        tr_high.svc_id: ("refused", "no_fx_rate"),
        intl_low.svc_id: ("accrued", "below_minimum"),
        intl_high.svc_id: ("paid", None),
        intl_eur.svc_id: ("refused", "no_fx_rate"),
    }
    paid = {out["seller_id"]: out for out in first["sellers"]}
    assert paid[intl_high.svc_id]["amount"] == usd(30800) and paid[intl_low.svc_id]["balance"] == usd(15400)
    admin("edu", "fx-rate", "USD", "TRY", "41.25")
    admin("edu", "fx-rate", "USD", "EUR", "0.92")
    # with rates: 11.55 USD is under 20 USD (476.44 TRY < 825.00 TRY); 75.46 USD = 3112.73 TRY is paid
    second = run(api, at(11, 21))
    assert outcomes(second) == {
        tr_low.svc_id: ("accrued", "below_minimum"),
        tr_high.svc_id: ("paid", None),
        intl_low.svc_id: ("accrued", "below_minimum"),
        intl_eur.svc_id: ("paid", None),
    }
    paid = {out["seller_id"]: out for out in second["sellers"]}
    assert paid[tr_high.svc_id]["amount"] == {"amount_minor": 311273, "currency": "TRY"}
    assert paid[intl_eur.svc_id]["amount"] == {"amount_minor": 28336, "currency": "EUR"}
    # a sale in November lifts the accrued balances over the minimums: October's and November's
    # statements are paid together
    sell(api, at(11, 26), b, product[tr_low.svc_id])
    sell(api, at(11, 26), b, product[intl_low.svc_id])
    rate(api, "USD", "TRY", "41.25", at(12, 22))  # a month later the operator sets today's rates
    rate(api, "USD", "EUR", "0.92", at(12, 22))
    third = run(api, at(12, 22))
    assert outcomes(third) == {tr_low.svc_id: ("paid", None), intl_low.svc_id: ("paid", None)}
    paid = {out["seller_id"]: out for out in third["sellers"]}
    assert paid[tr_low.svc_id]["balance"] == usd(2310)
    assert paid[tr_low.svc_id]["amount"] == {"amount_minor": 95288, "currency": "TRY"}
    assert paid[intl_low.svc_id]["amount"] == usd(30800)
    items = statements(api, tr_low.token)["items"]
    assert [(s["period"], s["status"], s["payout"]["payout_id"]) for s in items] == [
        ("2026-11", "paid", f"po_{tr_low.svc_id}_202611_USD"),
        ("2026-10", "paid", f"po_{tr_low.svc_id}_202611_USD"),
    ]
    for s in (tr_low, tr_high, intl_low, intl_high, intl_eur):
        assert payables(api, s.svc_id) == 0


def test_each_incomplete_profile_accrues_until_complete(capi: Api) -> None:
    api = capi
    api.clock.set(at(10, 1))
    nothing = seller(api)
    unconfirmed = seller(api, USD_PROFILE, identity=False)
    identity_only = seller(api)
    with api.app.state.services.store.write() as conn:
        studio.confirm_identity(conn, identity_only.svc_id, now=api.clock.now())
    buyers = [api.register()["session_token"] for _ in range(2)]
    for s in (nothing, unconfirmed, identity_only):
        course = publish(api, s.svc_id, VIDEO_COURSE, price_minor=20000)
        for buyer in buyers:
            sell(api, at(10, 12), buyer, course)
    report = run(api, at(11, 25))
    assert set(outcomes(report).values()) == {("accrued", "profile_incomplete")}
    assert {out["balance"]["amount_minor"] for out in report["sellers"]} == {30800}
    for s in (nothing, unconfirmed, identity_only):
        body = statements(api, s.token)
        assert body["balances"] == [usd(30800)] and body["items"][0]["status"] == "accrued"
    with api.app.state.services.store.write() as conn:
        studio.confirm_identity(conn, unconfirmed.svc_id, now=api.clock.now())
    assert outcomes(run(api, at(11, 26))) == {
        nothing.svc_id: ("accrued", "profile_incomplete"),
        unconfirmed.svc_id: ("paid", None),
        identity_only.svc_id: ("accrued", "profile_incomplete"),
    }
    assert statements(api, unconfirmed.token)["balances"] == [usd(0)]


def test_two_runs_at_once_pay_once(shop: SimpleNamespace) -> None:
    api, tr = shop.api, shop.tr
    rate(api, "USD", "TRY", "41.25", at(12, 24))
    # four runs at once: two for October, two for November (which also covers October)
    start = threading.Barrier(4)

    def race(period: str) -> dict[str, Any]:
        start.wait(10)
        return run(api, at(12, 25), period)

    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(race, ["2026-10", "2026-11"] * 2))
    issued = [out for report in reports for out in report["sellers"] if out["state"] == "paid"]
    items = statements(api, tr.token)["items"]
    assert [s["period"] for s in items] == ["2026-11", "2026-10"]
    assert all(s["status"] == "paid" for s in items)
    paid_ids = {s["payout"]["payout_id"] for s in items}
    assert sorted(out["payout_id"] for out in issued) == sorted(paid_ids)
    assert sum(out["balance"]["amount_minor"] for out in issued) == 5936 + 2573
    assert payables(api, tr.svc_id) == 0
    with api.app.state.services.store.read() as conn:
        rows = conn.execute(
            sa.text("SELECT kind, COUNT(*) FROM edu_payables GROUP BY kind ORDER BY kind")
        ).all()
    assert [tuple(r) for r in rows] == [("payout", len(paid_ids)), ("statement", 2)]
    assert all(run(api, at(12, 26), period)["payouts"] == 0 for period in ("2026-10", "2026-11"))


def test_sales_analytics_summary_breakdown_and_filters(shop: SimpleNamespace) -> None:
    api, tr = shop.api, shop.tr
    body = sales(api, tr.token)
    assert body["breakdown"] is None and body["currency"] == "USD"
    assert body["summary"] == {
        "orders": 5,
        "refunded_orders": 2,
        "gross": usd(17700),
        "refunds": usd(6400),
        "net": usd(11300),
    }
    first = sales(api, tr.token, group_by="product", limit=1)
    rest = sales(api, tr.token, group_by="product", limit=1, cursor=first["breakdown"]["next_cursor"])
    assert rest["breakdown"]["next_cursor"] is None
    rows = first["breakdown"]["items"] + rest["breakdown"]["items"]
    assert {r["item"]["id"]: (r["orders"], r["gross"], r["refunds"]) for r in rows} == {
        shop.course: (3, usd(14700), usd(4900)),
        shop.book: (2, usd(3000), usd(1500)),
    }
    assert {r["item"]["title"] for r in rows} == {VIDEO_COURSE["title"], PUBLICATION["title"]}
    days = sales(api, tr.token, group_by="day", **{"from": "2026-10-06", "to": "2026-11-02"})["breakdown"]
    assert [(d["date"], d["orders"], d["refunded_orders"], d["net"]) for d in days["items"]] == [
        ("2026-10-06", 1, 0, usd(1500)),
        ("2026-10-10", 0, 1, usd(-4900)),
        ("2026-10-20", 1, 0, usd(1500)),
        ("2026-11-02", 0, 1, usd(-1500)),
    ]
    book = sales(api, tr.token, product_id=shop.book)["summary"]
    assert (book["orders"], book["net"]) == (2, usd(1500))
    assert sales(api, tr.token, bundle_id="bn_none")["summary"]["orders"] == 0
    assert sales(api, tr.token, currency="EUR")["summary"]["gross"] == {"amount_minor": 0, "currency": "EUR"}
    # another instructor reads none of it
    other = seller(api)
    assert sales(api, other.token)["summary"]["orders"] == 0
    assert statements(api, other.token) == {"items": [], "next_cursor": None, "balances": []}


def test_statements_are_paged_newest_first(shop: SimpleNamespace) -> None:
    api, tr = shop.api, shop.tr
    run(api, at(12, 1))
    first = statements(api, tr.token, limit=1)
    assert [s["period"] for s in first["items"]] == ["2026-11"] and first["balances"] == [usd(5936 + 2573)]
    rest = statements(api, tr.token, limit=1, cursor=first["next_cursor"])
    assert [s["period"] for s in rest["items"]] == ["2026-10"] and rest["next_cursor"] is None


def test_every_error_status_of_the_routes(shop: SimpleNamespace) -> None:
    api, tr = shop.api, shop.tr
    plain = shop.students[0]
    paged = {"/studio/analytics/sales": {"group_by": "day"}, "/studio/payout-statements": {}}
    for path, grouped in paged.items():
        _code(call(api, "GET", path), 401, "unauthenticated")
        _code(call(api, "GET", path, plain), 403, "not_instructor")
        _code(call(api, "GET", path, plain, params={"nonsense": "1"}), 403, "not_instructor")
        _code(call(api, "GET", path, tr.token, params={"nonsense": "1"}), 400, "invalid_request")
        _code(
            call(api, "GET", path, tr.token, params={"cursor": "garbage", **grouped}), 400, "invalid_cursor"
        )
    bad = [
        {"from": "2026-13-01"},
        {"to": "yesterday"},
        {"from": "2026-10-05", "to": "2026-10-04"},
        {"product_id": "pr_x", "bundle_id": "bn_x"},
        {"product_id": "no way!"},
        {"currency": "usd"},
        {"group_by": "week"},
        {"limit": "5"},
        {"group_by": "day", "limit": "0"},
    ]
    for params in bad:
        reply = call(api, "GET", "/studio/analytics/sales", tr.token, params=params)
        assert reply.status_code == 400, (params, reply.text)
    twice = [("from", "2026-10-01"), ("from", "2026-10-02")]
    _code(call(api, "GET", "/studio/analytics/sales", tr.token, params=twice), 400, "invalid_request")
    by_day = sales(api, tr.token, group_by="day", limit=1)["breakdown"]["next_cursor"]
    other_list = {"group_by": "product", "cursor": by_day}
    _code(call(api, "GET", "/studio/analytics/sales", tr.token, params=other_list), 400, "invalid_cursor")
    _code(
        call(api, "GET", "/studio/payout-statements", tr.token, params={"cursor": by_day}),
        400,
        "invalid_cursor",
    )
    _code(
        call(api, "GET", "/studio/payout-statements", tr.token, params={"limit": "101"}),
        400,
        "invalid_page_size",
    )


def test_both_routes_answer_429_past_the_limit(make_api: Any, settings: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("RATE_LIMIT_SCALE", "0.1")
    api = make_api(settings)
    for path in ("/studio/analytics/sales", "/studio/payout-statements"):
        leader = seller(api)  # the limit is per account: a fresh one per route
        replies = [call(api, "GET", path, leader.token) for _ in range(8)]
        assert replies[0].status_code == 200 and replies[-1].status_code == 429
        assert (
            replies[-1].json()["code"] == "too_many_requests" and int(replies[-1].headers["retry-after"]) >= 1
        )


def test_the_scheduler_runs_between_the_20th_and_30th(shop: SimpleNamespace, cli_env: None) -> None:
    api, tr = shop.api, shop.tr
    admin("edu", "fx-rate", "USD", "TRY", "41.25")
    worker = payout_worker(api.app.state.services)
    assert worker is not None and worker.name == "edu_payouts"
    for day in (19, 31):
        api.clock.set(at(10 if day == 31 else 11, day))
        assert "skipped" in worker.run_once()
    assert statements(api, tr.token)["items"] == []
    api.clock.set(at(11, 20, 0))
    report = worker.run_once()
    assert report["period"] == "2026-10" and outcomes(report) == {tr.svc_id: ("paid", None)}
    api.clock.set(at(11, 30, 23))
    assert worker.run_once()["payouts"] == 0


def test_the_operator_command_refuses_open_and_malformed_periods(
    shop: SimpleNamespace, cli_env: None
) -> None:
    for args, says in (
        (["--period", "2026-11", "--now", str(at(11, 25))], "period 2026-11 has not closed yet"),
        (["--period", "2026-1"], "a period is a month written YYYY-MM"),
        (["--now", "soon"], "give Unix seconds or an ISO date"),
    ):
        result = CliRunner().invoke(svc, ["admin", "edu", "payout-run", *args])
        assert result.exit_code != 0 and says in result.output, result.output
    for rate in ("0", "abc", "1.0000001"):
        result = CliRunner().invoke(svc, ["admin", "edu", "fx-rate", "USD", "TRY", rate])
        assert result.exit_code != 0 and "a rate is a positive" in result.output, result.output
    result = CliRunner().invoke(svc, ["admin", "edu", "fx-rate", "USD", "USD", "1"])
    assert result.exit_code != 0 and "two different ISO 4217 codes" in result.output
    report = admin("edu", "payout-run", "--period", "2026-10", "--now", "2026-11-25")
    assert outcomes(report) == {shop.tr.svc_id: ("refused", "no_fx_rate")} and report["export"] is None


def test_a_rate_older_than_its_maximum_age_is_not_used(shop: SimpleNamespace) -> None:
    api, tr = shop.api, shop.tr
    rate(api, "USD", "TRY", "41.25", at(11, 20))
    # EDU_FX_MAX_AGE_HOURS is 72: a second past 72 hours the run refuses; at 72 hours it pays
    stale = run(api, at(11, 23) + 1)
    assert outcomes(stale) == {tr.svc_id: ("refused", "stale_fx_rate")} and stale["export"] is None
    assert outcomes(run(api, at(11, 23))) == {tr.svc_id: ("paid", None)}
