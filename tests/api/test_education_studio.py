"""Instructor routes: roles, seller gates and onboarding with every payout-profile rule, studio
products under If-Match, unpublish, bundles and answers; on SQLite and PostgreSQL."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from svc_api.cli import main as svc
from svc_api.education.studio import service as studio
from tests.api.community_helpers import admin
from tests.api.conftest import Api
from tests.api.education_helpers import (
    DE_PROFILE,
    PUBLICATION,
    TR_PROFILE,
    buy,
    call,
    key,
    publish,
    read_through,
    student,
)

DRAFT = {
    "kind": "course",
    "title": "Order flow, step by step",
    "language": "en",
    "level": "advanced",
    "price": {"amount_minor": 9900, "currency": "USD"},
    "topics": [],
}


def _leader(api: Api) -> tuple[str, str]:
    """A registered account with the ``leader`` role: (svc_id, session token)."""
    account = api.register()
    with api.app.state.services.store.write() as conn:
        studio.grant_role(conn, account["svc_id"], "leader", now=api.clock.now())
    return account["svc_id"], account["session_token"]


def _code(reply: Any, status: int, code: str) -> None:
    assert reply.status_code == status, reply.text
    assert reply.json()["code"] == code, reply.json()


@pytest.fixture
def desk(capi: Api) -> SimpleNamespace:
    svc_id, token = _leader(capi)
    return SimpleNamespace(api=capi, svc_id=svc_id, token=token, plain=student(capi))


def test_every_instructor_route_needs_the_leader_role(desk: SimpleNamespace) -> None:
    api, plain = desk.api, desk.plain
    for method, path in [
        ("GET", "/seller/status"),
        ("POST", "/seller/onboarding-sessions"),
        ("POST", "/studio/products"),
        ("GET", "/studio/products/pr_x"),
        ("PATCH", "/studio/products/pr_x"),
        ("POST", "/studio/products/pr_x/unpublish"),
        ("POST", "/studio/bundles"),
        ("GET", "/studio/bundles/bn_x"),
        ("PATCH", "/studio/bundles/bn_x"),
        ("POST", "/studio/questions/qs_x/answers"),
    ]:
        _code(call(api, method, path, plain, json={}), 403, "not_instructor")
        assert call(api, method, path, json={}).status_code == 401
    assert call(api, "GET", "/seller/status", desk.token).json()["role"] == "leader"


def test_the_role_is_checked_before_the_body_and_a_query_parameter_is_refused(desk: SimpleNamespace) -> None:
    api = desk.api
    broken = {"kind": "webinar", "colour": "red"}
    _code(call(api, "POST", "/studio/products", desk.plain, json=broken), 403, "not_instructor")
    _code(call(api, "POST", "/studio/products", desk.token, json=broken), 400, "invalid_request")
    refused = call(api, "GET", "/seller/status?verbose=1", desk.token)
    _code(refused, 400, "invalid_request")
    assert "verbose" in refused.json()["error"], refused.json()


def test_an_approved_community_leader_and_an_operator_grant_are_instructors(capi: Api, cli_env: None) -> None:
    account = capi.register()
    with capi.app.state.services.store.write() as conn:
        from svc_api.accounts import service as accounts

        accounts.set_community_role(conn, account["svc_id"], "leader")
    assert call(capi, "GET", "/seller/status", account["session_token"]).json()["role"] == "community_leader"
    other = capi.register()
    admin("edu", "role", other["svc_id"], "moderator")
    assert call(capi, "GET", "/seller/status", other["session_token"]).json()["role"] == "moderator"
    admin("edu", "role", other["svc_id"], "none")
    _code(call(capi, "GET", "/seller/status", other["session_token"]), 403, "not_instructor")


def test_onboarding_brings_the_contract_and_profile_and_the_operator_confirms_identity(
    desk: SimpleNamespace, cli_env: None
) -> None:
    api, token = desk.api, desk.token
    status = call(api, "GET", "/seller/status", token).json()
    assert {name: gate["state"] for name, gate in status["gates"].items()} == {
        "contract": "missing",
        "tax": "missing",
        "e_document": "missing",
        "ap_bank": "missing",
        "identity": "missing",
    }
    assert status["ready_to_submit"] is False
    session = call(api, "POST", "/seller/onboarding-sessions", token, json={})
    assert session.status_code == 201
    _code(call(api, "POST", "/seller/onboarding-sessions", token, json={}), 409, "onboarding_open")
    url = session.json()["onboarding_url"]
    assert api.get(url).json()["contract_version"] == "2026-11"
    _code(
        api.post(url, json={"accept_contract": False, "payout_profile": TR_PROFILE}), 400, "invalid_request"
    )
    done = api.post(url, json={"accept_contract": True, "payout_profile": TR_PROFILE})
    assert done.status_code == 200 and done.json()["state"] == "completed"
    _code(api.post(url, json={"accept_contract": True, "payout_profile": TR_PROFILE}), 409, "session_closed")
    gates = call(api, "GET", "/seller/status", token).json()["gates"]
    assert [name for name, gate in gates.items() if gate["state"] != "passed"] == ["identity"]
    admin("edu", "confirm-identity", desk.svc_id)
    status = call(api, "GET", "/seller/status", token).json()
    assert status["ready_to_submit"] and status["ready_for_payouts"]
    _code(call(api, "POST", "/seller/onboarding-sessions", token, json={}), 409, "onboarding_complete")
    _code(api.get("/education/v1/seller/onboarding/unknown-token"), 404, "not_found")


@pytest.mark.parametrize(
    ("profile", "names"),
    [
        (TR_PROFILE, None),
        (DE_PROFILE, None),
        (
            {**DE_PROFILE, "payout_currency": "USD", "legal_entity": "individual", "tax_id": "12345678901"},
            None,
        ),
        ({**TR_PROFILE, "country": "Turkey"}, "country"),
        ({**TR_PROFILE, "legal_entity": "trust"}, "legal_entity"),
        ({**TR_PROFILE, "tax_id": "1234567890"}, "tax_id"),
        ({**DE_PROFILE, "tax_id": "12345678901"}, "tax_id"),
        ({**DE_PROFILE, "bank_account": "DE89370400440532013001"}, "bank_account"),
        ({**TR_PROFILE, "bank_account": "DE89370400440532013000"}, "bank_account"),
        ({**DE_PROFILE, "swift_bic": "COBA"}, "swift_bic"),
        ({k: v for k, v in DE_PROFILE.items() if k != "swift_bic"}, "swift_bic"),
        ({**DE_PROFILE, "payout_currency": "euro"}, "payout_currency"),
        ({k: v for k, v in TR_PROFILE.items() if k != "e_document_type"}, "e_document_type"),
        ({**TR_PROFILE, "e_document_type": "paper"}, "e_document_type"),
    ],
)
def test_each_payout_profile_rule_has_a_valid_and_an_invalid_case(
    desk: SimpleNamespace, profile: dict, names: str | None
) -> None:
    api = desk.api
    url = call(api, "POST", "/seller/onboarding-sessions", desk.token, json={}).json()["onboarding_url"]
    reply = api.post(url, json={"accept_contract": True, "payout_profile": profile})
    if names is None:
        assert reply.status_code == 200, reply.text
    else:
        assert reply.status_code == 400 and names in reply.json()["error"], reply.text


def test_studio_products_are_edited_under_if_match(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    created = call(api, "POST", "/studio/products", token, json=DRAFT)
    assert created.status_code == 201 and created.headers["etag"] == '"product-1"'
    product_id = created.json()["product_id"]
    assert created.json()["state"] == "draft" and created.json()["draft"]["price"] == DRAFT["price"]
    _code(call(api, "POST", "/studio/products", token, json=DRAFT), 409, "duplicate_title")
    for i, bad in enumerate(
        (
            {**DRAFT, "title": "x"},
            {**DRAFT, "price": {"amount_minor": 99.5, "currency": "USD"}},
            {**DRAFT, "price": {"amount_minor": 100, "currency": "EUR"}},
            {**DRAFT, "kind": "webinar"},
            {**DRAFT, "colour": "red"},
            {k: v for k, v in DRAFT.items() if k != "level"},
        )
    ):
        body = bad if bad.get("title") != DRAFT["title"] else {**bad, "title": f"{DRAFT['title']} {i}"}
        _code(
            call(api, "POST", "/studio/products", token, json=body),
            400,
            "invalid_request",
        )
    path = f"/studio/products/{product_id}"
    _code(
        call(api, "PATCH", path, token, json={"subtitle": "From tape to footprint"}),
        428,
        "precondition_required",
    )
    _code(
        call(api, "PATCH", path, token, json={"subtitle": "x"}, headers={"If-Match": '"product-7"'}),
        412,
        "precondition_failed",
    )
    patched = call(
        api, "PATCH", path, token, json={"subtitle": "From tape"}, headers={"If-Match": '"product-1"'}
    )
    assert patched.status_code == 200 and patched.headers["etag"] == '"product-2"'
    assert call(api, "GET", path, token).json()["draft"]["subtitle"] == "From tape"
    _code(
        call(api, "PATCH", path, token, json={"kind": "publication"}, headers={"If-Match": '"product-2"'}),
        400,
        "invalid_request",
    )
    _, other = _leader(api)
    _code(
        call(api, "PATCH", path, other, json={"subtitle": "mine"}, headers={"If-Match": '"product-2"'}),
        403,
        "not_owner",
    )
    _code(call(api, "GET", path, other), 403, "not_owner")
    assert call(api, "GET", "/catalog").json()["items"] == []  # a draft is not in the catalog


def test_two_updates_sent_at_once_with_one_etag_give_one_412(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    product_id = call(api, "POST", "/studio/products", token, json=DRAFT).json()["product_id"]

    def patch(i: int) -> Any:
        return call(
            api,
            "PATCH",
            f"/studio/products/{product_id}",
            token,
            json={"subtitle": f"v{i}"},
            headers={"If-Match": '"product-1"'},
        )

    with ThreadPoolExecutor(2) as pool:
        replies = list(pool.map(patch, range(2)))
    assert sorted(r.status_code for r in replies) == [200, 412]


def test_unpublish_closes_sales_and_keeps_learning(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    product_id = publish(api, desk.svc_id, PUBLICATION)
    learner = student(api)
    buy(api, learner, product_id)
    _code(call(api, "POST", "/studio/products/pr_nope/unpublish", token, json={}), 404, "not_found")
    _, other = _leader(api)
    _code(call(api, "POST", f"/studio/products/{product_id}/unpublish", other, json={}), 403, "not_owner")
    done = call(api, "POST", f"/studio/products/{product_id}/unpublish", token, json={})
    assert done.json() == {"product_id": product_id, "state": "unpublished"}
    _code(call(api, "POST", f"/studio/products/{product_id}/unpublish", token, json={}), 409, "not_published")
    _code(
        call(api, "POST", "/checkouts", student(api), json={"product_id": product_id}), 422, "not_purchasable"
    )
    read = read_through(api, learner, product_id, "p1", 2)
    assert read.status_code == 200 and read.json()["lessons"][0]["furthest_page"] == 2
    assert product_id not in [i["product_id"] for i in call(api, "GET", "/catalog").json()["items"]]


def test_bundles_of_own_published_products_under_if_match(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    one, two = (
        publish(api, desk.svc_id, PUBLICATION),
        publish(api, desk.svc_id, PUBLICATION, title="Volume two"),
    )
    theirs = publish(api, _leader(api)[0], PUBLICATION, title="Someone else's")
    body = {
        "title": "The whole shelf",
        "price": {"amount_minor": 2500, "currency": "USD"},
        "product_ids": [one, two],
    }
    created = call(api, "POST", "/studio/bundles", token, json=body)
    assert created.status_code == 201 and created.headers["etag"] == '"bundle-1"'
    bundle_id = created.json()["bundle_id"]
    _code(
        call(api, "POST", "/studio/bundles", token, json={**body, "product_ids": [one, theirs]}),
        409,
        "not_own_product",
    )
    _code(
        call(api, "POST", "/studio/bundles", token, json={**body, "product_ids": [one]}),
        400,
        "invalid_request",
    )
    path = f"/studio/bundles/{bundle_id}"
    _code(call(api, "PATCH", path, token, json={"title": "Shelf"}), 428, "precondition_required")
    renamed = call(
        api,
        "PATCH",
        path,
        token,
        json={"price": {"amount_minor": 2000, "currency": "USD"}},
        headers={"If-Match": '"bundle-1"'},
    )
    assert (
        renamed.status_code == 200
        and renamed.json()["price"]["amount_minor"] == 2000
        and renamed.headers["etag"] == '"bundle-2"'
    )
    _code(
        call(api, "PATCH", path, token, json={"title": "Shelf"}, headers={"If-Match": '"bundle-1"'}),
        412,
        "precondition_failed",
    )
    _code(
        call(api, "PATCH", path, _leader(api)[1], json={"title": "Mine"}, headers={"If-Match": '"bundle-2"'}),
        403,
        "not_owner",
    )
    order = call(api, "POST", "/checkouts", student(api), json={"bundle_id": bundle_id}).json()
    assert order["amount"] == {"amount_minor": 2000, "currency": "USD"}


def test_instructors_answer_questions_on_their_own_products(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    product_id = publish(api, desk.svc_id)
    learner = student(api)
    buy(api, learner, product_id)
    question = call(
        api, "POST", f"/products/{product_id}/questions", learner, json={"title": "Wicks", "body": "Why?"}
    ).json()
    path = f"/studio/questions/{question['question_id']}/answers"
    _code(call(api, "POST", path, token, json={"body": ""}), 400, "invalid_request")
    _code(call(api, "POST", path, _leader(api)[1], json={"body": "Mine"}), 403, "not_owner")
    _code(call(api, "POST", "/studio/questions/qs_nope/answers", token, json={"body": "?"}), 404, "not_found")
    answered = call(api, "POST", path, token, json={"body": "Rejection of a price."})
    assert answered.status_code == 201 and answered.json()["state"] == "answered"
    assert [a["body"] for a in answered.json()["answers"]] == ["Rejection of a price."]
    resolved = call(
        api, "PATCH", f"/questions/{question['question_id']}", learner, json={"state": "resolved"}
    )
    assert resolved.json()["state"] == "resolved"
    _code(call(api, "POST", path, token, json={"body": "More"}), 409, "invalid_transition")


ARTICLES = {
    "sections": [
        {
            "section_id": "s1",
            "title": "Reading",
            "lessons": [
                {"lesson_id": "a1", "title": "The tape", "kind": "article", "pages": 3, "preview": True},
                {"lesson_id": "a2", "title": "The book", "kind": "article", "pages": 5, "preview": False},
            ],
        }
    ]
}


def _onboarded(api: Api, token: str, svc_id: str) -> None:
    url = call(api, "POST", "/seller/onboarding-sessions", token, json={}).json()["onboarding_url"]
    assert api.post(url, json={"accept_contract": True, "payout_profile": DE_PROFILE}).status_code == 200
    with api.app.state.services.store.write() as conn:
        studio.confirm_identity(conn, svc_id, now=api.clock.now())


def test_curriculum_errors(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    product_id = call(api, "POST", "/studio/products", token, json=DRAFT).json()["product_id"]
    path = f"/studio/products/{product_id}/curriculum"
    _code(call(api, "PUT", path, token, json=ARTICLES), 428, "precondition_required")
    _code(
        call(api, "PUT", path, token, json=ARTICLES, headers={"If-Match": '"product-5"'}),
        412,
        "precondition_failed",
    )
    video = {
        "sections": [
            {
                "section_id": "s1",
                "title": "T",
                "lessons": [
                    {
                        "lesson_id": "v1",
                        "title": "V",
                        "kind": "video",
                        "preview": False,
                        "upload_id": "up_nope",
                    }
                ],
            }
        ]
    }
    for bad in (
        {"sections": []},
        video,
        {
            "sections": [
                {
                    "section_id": "s1",
                    "title": "T",
                    "lessons": [{"lesson_id": "a1", "title": "A", "kind": "podcast", "preview": False}],
                }
            ]
        },
    ):
        _code(
            call(api, "PUT", path, token, json=bad, headers={"If-Match": '"product-1"'}),
            400,
            "invalid_request",
        )
    _code(
        call(api, "PUT", path, _leader(api)[1], json=ARTICLES, headers={"If-Match": '"product-1"'}),
        403,
        "not_owner",
    )
    placed = call(api, "PUT", path, token, json=ARTICLES, headers={"If-Match": '"product-1"'})
    assert placed.status_code == 200 and placed.headers["etag"] == '"product-2"'
    assert placed.json()["draft"]["curriculum"]["sections"][0]["lessons"][1]["pages"] == 5
    _onboarded(api, token, desk.svc_id)
    assert call(api, "POST", f"/studio/products/{product_id}/submissions", token, json={}).status_code == 201
    _code(
        call(api, "PUT", path, token, json=ARTICLES, headers={"If-Match": '"product-2"'}), 409, "under_review"
    )


def test_submission_errors_and_the_operators_review(desk: SimpleNamespace, cli_env: None) -> None:
    api, token = desk.api, desk.token
    product_id = call(api, "POST", "/studio/products", token, json=DRAFT).json()["product_id"]
    submit = f"/studio/products/{product_id}/submissions"
    _code(call(api, "POST", submit, token, json={}), 422, "not_ready")
    call(
        api,
        "PUT",
        f"/studio/products/{product_id}/curriculum",
        token,
        json=ARTICLES,
        headers={"If-Match": '"product-1"'},
    )
    _code(call(api, "POST", submit, token, json={}), 422, "seller_not_ready")
    _code(call(api, "POST", submit, _leader(api)[1], json={}), 403, "not_owner")
    _onboarded(api, token, desk.svc_id)
    first = call(api, "POST", submit, token, json={})
    assert first.status_code == 201 and first.json()["draft_version"] == 2
    _code(call(api, "POST", submit, token, json={}), 409, "already_pending")
    rejected = admin("edu", "review", first.json()["submission_id"], "reject", "--reason", "audio is missing")
    assert (rejected["state"], rejected["reason"], rejected["revision"]) == (
        "rejected",
        "audio is missing",
        None,
    )
    assert call(api, "GET", f"/products/{product_id}").status_code == 404
    twice = CliRunner().invoke(svc, ["admin", "edu", "review", first.json()["submission_id"], "approve"])
    assert twice.exit_code != 0 and "already decided" in twice.output
    unknown = CliRunner().invoke(svc, ["admin", "edu", "review", "sb_nope", "approve"])
    assert unknown.exit_code != 0 and "no submission" in unknown.output
    second = call(api, "POST", submit, token, json={}).json()
    assert admin("edu", "review", second["submission_id"], "approve")["revision"] == 1
    page = call(api, "GET", f"/products/{product_id}").json()
    assert (page["title"], page["lesson_count"], page["purchasable"]) == (DRAFT["title"], 2, True)


def test_a_replayed_key_returns_the_stored_result_of_an_instructor_change(desk: SimpleNamespace) -> None:
    api, token, idem = desk.api, desk.token, key()
    first = call(api, "POST", "/studio/products", token, json=DRAFT, idem=idem)
    again = call(api, "POST", "/studio/products", token, json=DRAFT, idem=idem)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json() and again.headers["idempotent-replay"] == "true"
    path = f"/studio/products/{first.json()['product_id']}"
    patch_key = key()
    patched = call(
        api, "PATCH", path, token, json={"subtitle": "s"}, idem=patch_key, headers={"If-Match": '"product-1"'}
    )
    replayed = call(
        api, "PATCH", path, token, json={"subtitle": "s"}, idem=patch_key, headers={"If-Match": '"product-1"'}
    )
    assert replayed.json() == patched.json() and replayed.json()["etag"] == '"product-2"'
    _code(
        call(
            api,
            "PATCH",
            path,
            token,
            json={"subtitle": "t"},
            idem=patch_key,
            headers={"If-Match": '"product-1"'},
        ),
        409,
        "idempotency_key_reused",
    )
