"""The community as a new user meets it, through HTTP: a leader is approved and posts, a follower
hears of it (record and mail), likes, comments, reports and chats; the leader moderates the chat
and deletes the post, which the purge removes once its 15 days have passed."""

from __future__ import annotations

import email
from pathlib import Path
from typing import Any

from svc_api.community import service as community
from svc_api.settings import Settings
from tests.api.community_helpers import admin, make_leader, run_notification_workers
from tests.api.conftest import SIGNALS_T0

DAY = 86400


def test_leader_post_follower_chat_moderation_and_purge(capi: Any, settings: Settings) -> None:
    api = capi
    leader_id, lt = make_leader(api)
    info = api.user("account_info", token=lt).json()["data"]
    assert info["community_role"] == "leader"
    application = api.user("community_leader_application_get", token=lt).json()["data"]
    assert (application["status"], application["is_leader"], application["twitter"]) == (
        "approved",
        True,
        "@cryptolab",
    )
    profile = api.user(
        "community_leader_update",
        {
            "display_name": "Crypto Lab Pro",
            "bio": "Daily notes",
            "avatar_url": "https://cdn.example.com/a.png",
        },
        token=lt,
    ).json()["data"]
    assert profile == {
        "display_name": "Crypto Lab Pro",
        "nickname": "cryptolabpro",
        "community_bio": "Daily notes",
        "avatar_url": "https://cdn.example.com/a.png",
    }

    follower = api.register()
    fid, ft = follower["svc_id"], follower["session_token"]
    named = api.user("set_inviter", {"inviter_id": leader_id}, token=ft)
    assert (named.json()["data"]["inviter_id"], named.json()["timestamp"]) == (leader_id, SIGNALS_T0)
    leaders = api.get("/tradingdata", params={"request_type": "community_leaders"}).json()
    assert [(x["svc_id"], x["name"], x["is_following"]) for x in leaders["leaders"]] == [
        (leader_id, "Crypto Lab Pro", False)
    ]
    r = api.user("community_follow", {"leader_id": leader_id}, token=ft)
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"leader_id": leader_id, "action": "followed"}
    mine = api.get(
        "/tradingdata",
        params={"request_type": "community_leaders"},
        headers={"Authorization": f"Bearer {ft}"},
    ).json()
    assert mine["leaders"][0]["is_following"] is True

    post = api.user(
        "community_post_create", {"title": "BTC weekly", "content": "Support holds at 60k."}, token=lt
    )
    assert post.status_code == 200, post.text
    post_id = post.json()["data"]["post_id"]
    assert run_notification_workers(api) == {"sent": 1, "failed": 0, "retrying": 0}  # the mail
    notes = api.user("notifications_list", token=ft).json()["data"]["notifications"]
    assert [(n["title"], n["body"], n["event_type"]) for n in notes] == [
        ("New post from Crypto Lab Pro", "BTC weekly", "community_post")
    ]
    [mail_file] = list((Path(settings.var_dir) / "mail").glob("*.eml"))
    mail = email.message_from_bytes(mail_file.read_bytes())
    assert (mail["To"], mail["Subject"]) == (follower["email"], "New post from Crypto Lab Pro")
    assert run_notification_workers(api)["sent"] == 0  # nothing goes out twice

    assert api.user("community_post_like", {"post_id": post_id}, token=ft).json()["data"] == {
        "post_id": post_id,
        "action": "liked",
    }
    assert api.user("community_post_like", {"post_id": post_id}, token=ft).status_code == 409
    commented = api.user(
        "community_post_comment", {"post_id": post_id, "comment": "Thanks!"}, token=ft
    ).json()
    assert (commented["data"]["post_id"], commented["data"]["comment_count"]) == (post_id, "1")
    reported = api.user("community_post_report", {"post_id": post_id, "reason": "spam?"}, token=ft)
    assert reported.json()["data"] == {"action": "reported"}
    feed = api.get("/tradingdata", params={"request_type": "community_posts"}).json()
    shown = [
        (p["post_id"], p["author_id"], p["like_count"], p["comment_count"], p["created_at"])
        for p in feed["posts"]
    ]
    assert shown == [(post_id, leader_id, "1", "1", str(SIGNALS_T0))]

    channel = f"leader:{leader_id}"
    sent = api.user("community_chat_send", {"message": "gm", "channel": channel}, token=ft).json()["data"]
    assert sent == {
        "msg_id": f"{SIGNALS_T0}_{fid}",
        "sort_key": f"{SIGNALS_T0}#{SIGNALS_T0}_{fid}",
        "channel": channel,
    }
    again = api.user("community_chat_send", {"message": "gm again", "channel": channel}, token=ft)
    assert (again.status_code, again.json()["reason"], again.headers["Retry-After"]) == (
        429,
        "rate_limit_exceeded",
        "1",
    )
    deleted = api.user("community_chat_delete", {"sort_key": sent["sort_key"], "channel": channel}, token=lt)
    assert deleted.json()["data"] == {
        "sort_key": sent["sort_key"],
        "channel": channel,
        "deleted": True,
        "deleted_by_author": False,
    }
    chat = api.get("/tradingdata", params={"request_type": "community_chat", "channel": channel}).json()
    assert [(m["svc_id"], m["message"], m["deleted"]) for m in chat["messages"]] == [
        (fid, "[message removed by a moderator]", True)
    ]

    hidden = api.user("community_post_delete", {"post_id": post_id}, token=lt).json()["data"]
    assert hidden == {"post_id": post_id, "deleted": True, "delete_after": SIGNALS_T0 + 15 * DAY}
    assert api.get("/tradingdata", params={"request_type": "community_posts"}).json()["posts"] == []
    store = api.app.state.services.store
    assert community.purge(store, now=SIGNALS_T0 + 15 * DAY - 1) == 0
    assert len(admin("reports")) == 1
    api.clock.advance(15 * DAY)
    assert community.purge(store, now=api.clock.now()) == 1
    assert admin("reports") == []
    assert api.user("community_post_delete", {"post_id": post_id}, token=lt).status_code == 404

    # B buys a plan (the operator records the purchase); A earns 20% and redeems it as credits
    assert admin("purchase", fid, "pro", "monthly", "--purchase-id", "ord-1")["plan"] == "pro"
    assert admin("purchase", fid, "pro", "monthly", "--purchase-id", "ord-1")["replayed"] is True
    referral = api.user("account_info", token=lt).json()["data"]["referral"]
    assert [(c["amount_usdt"], c["status"]) for c in referral["commissions"]] == [(10, "recorded")]
    assert (referral["total_commission_usdt"], referral["available_commission_usdt"]) == (10, 10)
    invited = api.user("referral_list", token=lt).json()["data"]["referrals"]
    assert [(r["svc_id_masked"], r["plan"]) for r in invited] == [(f"{fid[:2]}**{fid[-2:]}", "pro")]
    assert "Referral commission" in [
        n["title"] for n in api.user("notifications_list", token=lt).json()["data"]["notifications"]
    ]
    redeemed = api.user("referral_redeem", {"redeem_type": "credits", "amount": 10}, token=lt).json()["data"]
    assert (redeemed["amount"], redeemed["status"]) == (10, "completed")
    assert api.user("account_info", token=lt).json()["data"]["svc_credits"] == 10
    assert api.user("referral_redeem", {"redeem_type": "credits", "amount": 1}, token=lt).status_code == 400

    # B reads the economic news and calendar (the bundled sample, loaded by the operator command)
    assert admin("economic", "sample")["news"]["added"] == 15
    news = api.user("economic_news", {"limit": 5}, token=ft).json()
    assert (len(news["data"]["news"]), news["data"]["has_more"], news["data"]["cost_credits"]) == (
        5,
        True,
        0.0,
    )
    # the operator loaded it at wall time, weeks after this test's clock: 90 days ahead reach it
    calendar = api.user("economic_calendar", {"horizon_days": 90, "limit": 50}, token=ft).json()["data"]
    assert (calendar["mode"], len(calendar["calendar"]), calendar["cost_credits"]) == ("upcoming", 20, 0.0)
