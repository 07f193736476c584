"""Personal notifications, notification settings and platform announcements through HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING

from svc_api.notifications.service import announce, notify

if TYPE_CHECKING:
    from tests.api.conftest import Api


def _seed(api: Api, svc_id: str, n: int) -> list[str]:
    with api.app.state.services.store.write() as conn:
        return [
            notify(conn, svc_id, f"title {i}", f"body {i}", "backtest_complete", now=1_000 + i)
            for i in range(n)
        ]


def test_notifications_list_pages_newest_first(api: Api) -> None:
    user = api.register()
    token = user["session_token"]
    ids = _seed(api, user["svc_id"], 5)
    other = api.register()
    _seed(api, other["svc_id"], 2)
    page1 = api.user("notifications_list", {"limit": 2}, token=token).json()["data"]
    assert [n["id"] for n in page1["notifications"]] == [ids[4], ids[3]]
    assert page1["notifications"][0] == {
        "id": ids[4],
        "title": "title 4",
        "body": "body 4",
        "event_type": "backtest_complete",
        "timestamp": 1_004,
        "read": False,
    }
    assert page1["has_more"] is True and page1["count"] == 2
    seen = [n["id"] for n in page1["notifications"]]
    cursor = page1["last_evaluated_key"]
    while cursor is not None:
        page = api.user("notifications_list", {"limit": 2, "cursor": cursor}, token=token).json()["data"]
        seen += [n["id"] for n in page["notifications"]]
        cursor = page["last_evaluated_key"]
        assert page["has_more"] is (cursor is not None)
    assert seen == ids[::-1]
    assert api.user("notifications_list", {"limit": "2x"}, token=token).status_code == 400
    assert api.user("notifications_list", {"cursor": "abc.def"}, token=token).status_code == 400


def test_mark_one_and_all_read(api: Api) -> None:
    user, other = api.register(), api.register()
    token = user["session_token"]
    ids = _seed(api, user["svc_id"], 3)
    foreign = _seed(api, other["svc_id"], 1)[0]
    one = api.user("notifications_mark_read", {"notification_id": ids[0]}, token=token)
    assert one.json() == {"ok": True, "data": {"notification_id": ids[0], "read": True}}
    unknown = api.user("notifications_mark_read", {"notification_id": "nope"}, token=token)
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "not_found", "message": "unknown notification 'nope'"}
    assert api.user("notifications_mark_read", {"notification_id": foreign}, token=token).status_code == 404
    every = api.user("notifications_mark_read", {"all": True}, token=token)
    assert every.json()["data"] == {"marked_read": 2}
    assert api.user("notifications_mark_read", {"all": True}, token=token).json()["data"] == {
        "marked_read": 0
    }
    listed = api.user("notifications_list", token=token).json()["data"]["notifications"]
    assert all(n["read"] for n in listed)
    for body in ({}, {"all": True, "notification_id": ids[0]}, {"all": False}, {"notification_id": 5}):
        assert api.user("notifications_mark_read", body, token=token).status_code == 400, body


def test_notification_settings_read_and_switch(api: Api) -> None:
    token = api.register()["session_token"]
    every = dict.fromkeys(("app", "announcement", "account", "bot", "messenger", "mail"), True)
    assert api.user("notification_settings", token=token).json()["data"] == every
    changed = api.user("notification_settings", {"mail": False, "bot": False}, token=token).json()["data"]
    assert changed == every | {"mail": False, "bot": False}
    info = api.user("account_info", token=token).json()["data"]
    assert info["notification_settings"] == changed
    assert api.user("notification_settings", {"fax": True}, token=token).status_code == 400
    assert api.user("notification_settings", {"mail": "no"}, token=token).status_code == 400


def test_platform_notifications_are_public_and_limited(api: Api) -> None:
    with api.app.state.services.store.write() as conn:
        for i in range(3):
            announce(conn, f"news {i}", f"text {i}", now=100 + i)
    reply = api.get("/tradingdata", params={"request_type": "platform_notifications", "limit": "2"})
    assert reply.json() == {
        "notifications": [
            {"title": "news 2", "body": "text 2", "type": "announcement", "timestamp": 102},
            {"title": "news 1", "body": "text 1", "type": "announcement", "timestamp": 101},
        ],
        "count": 2,
    }
    assert (
        api.get("/tradingdata", params={"request_type": "platform_notifications", "limit": "abc"}).status_code
        == 400
    )
