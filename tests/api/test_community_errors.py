"""Every error of the community operations, and every row of the leader-application state table."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.community_helpers import APPLICATION, admin, make_leader
from tests.api.conftest import SIGNALS_T0


def _status(reply: Any) -> tuple[int, str]:
    body = reply.json()
    return reply.status_code, body.get("message", body.get("error", ""))


# ---- the leader-application state table ---------------------------------------------------------


def test_none_apply_pending_apply_edits_in_place(capi: Any) -> None:
    user = capi.register()
    t = user["session_token"]
    assert capi.user("community_leader_application_get", token=t).json()["data"] == {
        "status": "none",
        "is_leader": False,
    }
    first = capi.user("community_leader_apply", APPLICATION, token=t).json()["data"]
    assert (first["status"], first["nickname"], first["updated"]) == ("pending", "cryptolab", False)
    edited = capi.user(
        "community_leader_apply", {**APPLICATION, "display_name": "Crypto Desk"}, token=t
    ).json()["data"]
    assert (edited["status"], edited["display_name"], edited["nickname"], edited["updated"]) == (
        "pending",
        "Crypto Desk",
        "cryptodesk",
        True,
    )
    got = capi.user("community_leader_application_get", token=t).json()["data"]
    assert (got["status"], got["is_leader"], got["display_name"], got["applied_at"]) == (
        "pending",
        False,
        "Crypto Desk",
        SIGNALS_T0,
    )
    other = capi.register()
    assert (
        capi.user("community_leader_apply", APPLICATION, token=other["session_token"]).status_code == 200
    )  # freed


def test_pending_withdraw_then_apply_again_keeps_history(capi: Any) -> None:
    t = capi.register()["session_token"]
    capi.user("community_leader_apply", APPLICATION, token=t)
    assert capi.user("community_leader_application_withdraw", token=t).json()["data"] == {
        "status": "withdrawn"
    }
    assert capi.user("community_leader_application_get", token=t).json()["data"]["status"] == "withdrawn"
    again = capi.user("community_leader_apply", APPLICATION, token=t).json()["data"]
    assert (again["status"], again["updated"]) == ("pending", False)


def test_approved_leader_cannot_reapply_or_withdraw(capi: Any) -> None:
    _, t = make_leader(capi)
    assert _status(capi.user("community_leader_apply", APPLICATION, token=t)) == (
        409,
        "you are an approved leader already; update your profile instead",
    )
    assert capi.user("community_leader_application_withdraw", token=t).status_code == 409


@pytest.mark.parametrize("decision", ["reject", "withdraw"])
def test_rejected_or_withdrawn_cannot_withdraw(capi: Any, decision: str) -> None:
    user = capi.register()
    t = user["session_token"]
    capi.user("community_leader_apply", APPLICATION, token=t)
    if decision == "reject":
        assert admin("leader", "reject", user["svc_id"])["status"] == "rejected"
    else:
        capi.user("community_leader_application_withdraw", token=t)
    reply = capi.user("community_leader_application_withdraw", token=t)
    state = "rejected" if decision == "reject" else "withdrawn"
    assert _status(reply) == (409, f"your latest application is {state}, not pending")
    notes = capi.user("notifications_list", token=t).json()["data"]["notifications"]
    assert [n["event_type"] for n in notes] == (["leader_rejected"] if decision == "reject" else [])


def test_none_withdraw_is_404(capi: Any) -> None:
    t = capi.register()["session_token"]
    assert _status(capi.user("community_leader_application_withdraw", token=t)) == (
        404,
        "you have no leader application",
    )


# ---- leader application and profile fields -------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"display_name": "Al"}, "display_name must be 3-30 Latin letters, digits or inner spaces"),
        ({"display_name": "x" * 31}, "display_name must be 3-30 Latin letters, digits or inner spaces"),
        ({"display_name": "Crypto Läb"}, "display_name must be 3-30 Latin letters, digits or inner spaces"),
        ({"display_name": " Crypto"}, "display_name must be 3-30 Latin letters, digits or inner spaces"),
        (
            {"has_500_followers": False},
            "has_500_followers must be true: leaders need at least 500 followers elsewhere",
        ),
        ({"reason": "r" * 1001}, "reason must be a string of 1-1000 characters"),
        ({"experience": ""}, "experience must be a string of 1-2000 characters"),
        ({"twitter": "t" * 101}, "twitter must be a string of 0-100 characters"),
    ],
)
def test_apply_field_errors(capi: Any, change: dict[str, Any], message: str) -> None:
    t = capi.register()["session_token"]
    assert _status(capi.user("community_leader_apply", {**APPLICATION, **change}, token=t)) == (400, message)
    assert capi.user("community_leader_application_get", token=t).json()["data"]["status"] == "none"


def test_nickname_taken_by_another_user(capi: Any) -> None:
    make_leader(capi, "Crypto Lab")
    t = capi.register()["session_token"]
    reply = capi.user("community_leader_apply", {**APPLICATION, "display_name": "crypto LAB"}, token=t)
    assert _status(reply) == (409, "the nickname 'cryptolab' is taken by another user")


def test_leader_update_errors(capi: Any) -> None:
    make_leader(capi, "Taken Name")
    _, t = make_leader(capi, "Crypto Lab")
    member = capi.register()["session_token"]
    assert (
        capi.user("community_leader_update", {"display_name": "Member Desk"}, token=member).status_code == 403
    )
    assert _status(capi.user("community_leader_update", {"display_name": "Taken Name"}, token=t)) == (
        409,
        "the nickname 'takenname' is taken by another user",
    )
    bad = capi.user(
        "community_leader_update", {"display_name": "Crypto Lab", "avatar_url": "http://x.io/a.png"}, token=t
    )
    assert _status(bad) == (400, "avatar_url must be an https:// URL of at most 2048 characters")
    long_bio = capi.user("community_leader_update", {"display_name": "Crypto Lab", "bio": "b" * 501}, token=t)
    assert _status(long_bio) == (400, "bio must be a string of 0-500 characters")


# ---- follows -------------------------------------------------------------------------------------


def test_follow_errors(capi: Any) -> None:
    leader_id, lt = make_leader(capi)
    member = capi.register()
    t = member["session_token"]
    assert _status(capi.user("community_follow", {"leader_id": leader_id}, token=lt)) == (
        400,
        "you cannot follow yourself",
    )
    assert _status(capi.user("community_follow", {"leader_id": member["svc_id"]}, token=lt)) == (
        404,
        f"{member['svc_id']} is not a community leader",
    )
    assert capi.user("community_follow", {"leader_id": "nope"}, token=t).status_code == 400
    assert capi.user("community_follow", {"leader_id": leader_id.lower()}, token=t).status_code == 200
    assert _status(capi.user("community_follow", {"leader_id": leader_id}, token=t)) == (
        409,
        f"you follow {leader_id} already",
    )
    assert capi.user("community_unfollow", {"leader_id": leader_id}, token=t).json()["data"] == {
        "leader_id": leader_id,
        "action": "unfollowed",
    }
    assert _status(capi.user("community_unfollow", {"leader_id": leader_id}, token=t)) == (
        409,
        f"you do not follow {leader_id}",
    )


# ---- posts ---------------------------------------------------------------------------------------


def test_post_errors(capi: Any) -> None:
    leader_id, lt = make_leader(capi)
    other_leader, olt = make_leader(capi, "Other Desk")
    member = capi.register()["session_token"]
    assert _status(capi.user("community_post_create", {"content": "hi"}, token=member)) == (
        403,
        "only approved community leaders can post",
    )
    assert capi.user("community_post_create", {"content": "c" * 5001}, token=lt).status_code == 400
    assert capi.user("community_post_create", {"content": "   "}, token=lt).status_code == 400
    assert (
        capi.user("community_post_create", {"content": "x", "title": "t" * 201}, token=lt).status_code == 400
    )
    plain = capi.user("community_post_create", {"content": "x", "image_url": "http://a.io/i.png"}, token=lt)
    assert _status(plain) == (400, "image_url must be an https:// URL of at most 2048 characters")
    made = capi.user("community_post_create", {"content": "x", "image_url": "https://a.io/i.png"}, token=lt)
    post_id = made.json()["data"]["post_id"]

    assert _status(capi.user("community_post_delete", {}, token=lt)) == (400, "post_id is required")
    assert _status(capi.user("community_post_delete", {"post_id": "pnope"}, token=lt)) == (
        404,
        "no post pnope",
    )
    assert _status(capi.user("community_post_delete", {"post_id": post_id}, token=olt)) == (
        403,
        "only the author can delete a post",
    )
    assert (
        capi.user(
            "community_post_comment", {"post_id": post_id, "comment": "c" * 301}, token=member
        ).status_code
        == 400
    )
    assert (
        capi.user("community_post_comment", {"post_id": "pnope", "comment": "hi"}, token=member).status_code
        == 404
    )
    assert capi.user("community_post_like", {"post_id": "pnope"}, token=member).status_code == 404
    assert capi.user("community_post_like", {}, token=member).status_code == 400
    assert capi.user("community_post_delete", {"post_id": post_id}, token=lt).status_code == 200
    assert _status(capi.user("community_post_delete", {"post_id": post_id}, token=lt)) == (
        403,
        "this post is deleted already",
    )
    for operation, body in [("community_post_like", {}), ("community_post_comment", {"comment": "late"})]:
        assert capi.user(operation, {"post_id": post_id, **body}, token=member).status_code == 404
    assert other_leader != leader_id


def test_report_errors(capi: Any) -> None:
    _, lt = make_leader(capi)
    t = capi.register()["session_token"]
    post_id = capi.user("community_post_create", {"content": "x"}, token=lt).json()["data"]["post_id"]
    key = capi.user("community_chat_send", {"message": "hello"}, token=t).json()["data"]["sort_key"]
    assert _status(capi.user("community_post_report", {}, token=t)) == (
        400,
        "give exactly one of post_id or message_key",
    )
    both = {"post_id": post_id, "message_key": key}
    assert _status(capi.user("community_post_report", both, token=t)) == (
        400,
        "give exactly one of post_id or message_key",
    )
    assert capi.user("community_post_report", {"post_id": "pnope"}, token=t).status_code == 404
    missing = f"{SIGNALS_T0}#{SIGNALS_T0}_ZZZZZZ"
    assert capi.user("community_post_report", {"message_key": missing}, token=t).status_code == 404
    assert capi.user("community_post_report", {"message_key": "garbage"}, token=t).status_code == 400
    assert (
        capi.user("community_post_report", {"post_id": post_id, "reason": "r" * 501}, token=t).status_code
        == 400
    )
    for _ in range(2):  # a second report of the same thing changes nothing
        assert (
            capi.user("community_post_report", {"message_key": key, "reason": "rude"}, token=t).status_code
            == 200
        )
    assert [(r["message_key"], r["channel"], r["reason"]) for r in admin("reports")] == [
        (key, "global", "rude")
    ]


# ---- chat ----------------------------------------------------------------------------------------


def test_chat_errors(capi: Any) -> None:
    leader_id, lt = make_leader(capi)
    author, bystander = capi.register(), capi.register()
    at, bt = author["session_token"], bystander["session_token"]
    assert _status(capi.user("community_chat_send", {"message": ""}, token=at)) == (
        400,
        "message must be a string of 1-500 characters",
    )
    assert capi.user("community_chat_send", {"message": "m" * 501}, token=at).status_code == 400
    assert (
        capi.user("community_chat_send", {"message": "hi", "channel": "leader:ZZZZZZ"}, token=at).status_code
        == 404
    )
    assert (
        capi.user("community_chat_send", {"message": "hi", "channel": "random"}, token=at).status_code == 400
    )
    key = capi.user("community_chat_send", {"message": "hello"}, token=at).json()["data"]["sort_key"]

    assert _status(capi.user("community_chat_delete", {}, token=at)) == (400, "sort_key is required")
    assert (
        capi.post(
            "/user", params={"request_type": "community_chat_delete"}, json={"sort_key": key}
        ).status_code
        == 401
    )
    assert _status(capi.user("community_chat_delete", {"sort_key": key}, token=bt)) == (
        403,
        "only the author or a moderator of this channel may delete this message",
    )
    # a leader moderates their own channel only
    assert capi.user("community_chat_delete", {"sort_key": key}, token=lt).status_code == 403
    wrong_channel = {"sort_key": key, "channel": f"leader:{leader_id}"}
    assert _status(capi.user("community_chat_delete", wrong_channel, token=at)) == (
        404,
        f"no message {key} in channel leader:{leader_id}",
    )
    own = capi.user("community_chat_delete", {"sort_key": key}, token=at).json()["data"]
    assert own == {"sort_key": key, "channel": "global", "deleted": True, "deleted_by_author": True}
    read = capi.get("/tradingdata", params={"request_type": "community_chat"}).json()
    assert [m["message"] for m in read["messages"]] == ["[message deleted by its author]"]


def test_admin_moderates_every_channel(capi: Any) -> None:
    leader_id, _ = make_leader(capi)
    moderator, author = capi.register(), capi.register()
    admin("moderator", moderator["svc_id"])
    sent = capi.user(
        "community_chat_send",
        {"message": "spam", "channel": f"leader:{leader_id}"},
        token=author["session_token"],
    ).json()["data"]
    reply = capi.user(
        "community_chat_delete",
        {"sort_key": sent["sort_key"], "channel": sent["channel"]},
        token=moderator["session_token"],
    ).json()["data"]
    assert reply["deleted_by_author"] is False
    assert admin("moderator", moderator["svc_id"], "--remove")["community_role"] == "member"


def test_guest_lists_paging_and_cursor_errors(capi: Any) -> None:
    _, lt = make_leader(capi)
    t = capi.register()["session_token"]
    for _ in range(3):
        capi.user("community_post_create", {"content": "x"}, token=lt)
        capi.user("community_chat_send", {"message": "m"}, token=t)
        capi.clock.advance(1)
    seen: list[str] = []
    cursor = None
    while True:
        page = capi.get(
            "/tradingdata",
            params={"request_type": "community_posts", "limit": 2, **({"cursor": cursor} if cursor else {})},
        ).json()
        seen += [p["created_at"] for p in page["posts"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            assert cursor is None
            break
    assert seen == [str(SIGNALS_T0 + 2), str(SIGNALS_T0 + 1), str(SIGNALS_T0)]
    chat = capi.get("/tradingdata", params={"request_type": "community_chat", "limit": 2}).json()
    assert (chat["count"], chat["has_more"], chat["next_cursor"].split("#")[0]) == (
        2,
        True,
        str(SIGNALS_T0 + 1),
    )
    rest = capi.get(
        "/tradingdata", params={"request_type": "community_chat", "cursor": chat["next_cursor"]}
    ).json()
    assert [m["created_at"] for m in rest["messages"]] == [str(SIGNALS_T0)]
    for request_type, cursor in [
        ("community_posts", "abc"),
        ("community_chat", "abc"),
        ("community_leaders", "abc"),
    ]:
        assert (
            capi.get("/tradingdata", params={"request_type": request_type, "cursor": cursor}).status_code
            == 400
        )
    assert (
        capi.get("/tradingdata", params={"request_type": "community_posts", "limit": "x"}).status_code == 400
    )
    too_many = capi.get("/tradingdata", params={"request_type": "community_posts", "limit": 500})
    assert too_many.status_code == 400  # 1-50 in the spec: a range, not a maximum that clamps


def test_identified_operations_need_credentials(capi: Any) -> None:
    for operation in [
        "community_chat_send",
        "community_post_create",
        "community_follow",
        "community_leader_apply",
    ]:
        reply = capi.post("/user", params={"request_type": operation}, json={})
        assert (reply.status_code, reply.json()["code"]) == (401, "session_expired")


def test_the_chat_one_message_a_second_429_has_the_stable_pair_and_the_sentence_in_message(capi: Any) -> None:
    token = capi.register()["session_token"]
    assert capi.user("community_chat_send", {"message": "first"}, token=token).status_code == 200
    again = capi.user("community_chat_send", {"message": "second"}, token=token)
    assert again.status_code == 429
    body = again.json()
    # The pair every 429 of a request limit carries (the per-minute limit's, the login budgets').
    assert (body["error"], body["reason"], body["retry_after"]) == (
        "too_many_requests",
        "rate_limit_exceeded",
        1,
    )
    assert body["message"].startswith("one chat message per second")
    assert again.headers["Retry-After"] == "1"


@pytest.mark.parametrize(
    ("request_type", "maximum"),
    [("community_posts", 50), ("community_leaders", 50), ("marketplace_browse", 100)],
)
def test_lists_the_spec_gives_a_range_refuse_a_larger_page_size(
    capi: Any, request_type: str, maximum: int
) -> None:
    at_most = capi.get("/tradingdata", params={"request_type": request_type, "limit": maximum})
    assert at_most.status_code == 200, at_most.text
    above = capi.get("/tradingdata", params={"request_type": request_type, "limit": maximum + 1})
    assert above.status_code == 400 and above.json()["error"] == "invalid_page_size", above.text
    # A list the spec gives only a maximum still clamps (community_chat: max 100).
    assert (
        capi.get("/tradingdata", params={"request_type": "community_chat", "limit": 101}).status_code == 200
    )
