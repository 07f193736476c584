"""Community operations: ``/user`` (chat send and delete, posts, likes, comments, reports, follows,
leader applications and profiles) and guest ``/tradingdata`` (posts, chat, leaders).

Example:
    >>> sorted(TRADINGDATA)
    ['community_chat', 'community_leaders', 'community_posts']
"""

from __future__ import annotations

from typing import Any

from svc_api.community import service as community
from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import position_int, position_str


def _send(call: Call) -> dict[str, Any]:
    return community.send_message(call.store, call.svc_id, call.params, now=call.now)


def _delete_message(call: Call) -> dict[str, Any]:
    return community.delete_message(call.store, call.svc_id, call.params)


def _post_create(call: Call) -> dict[str, Any]:
    return community.create(call.store, call.svc_id, call.params, now=call.now)


def _post_delete(call: Call) -> dict[str, Any]:
    return community.delete(call.store, call.svc_id, call.params.get("post_id"), now=call.now)


def _like(call: Call) -> dict[str, Any]:
    return community.like(call.store, call.svc_id, call.params.get("post_id"), now=call.now)


def _comment(call: Call) -> dict[str, Any]:
    return community.comment(call.store, call.svc_id, call.params, now=call.now)


def _report(call: Call) -> dict[str, Any]:
    return community.report(call.store, call.svc_id, call.params, now=call.now)


def _follow(call: Call) -> dict[str, Any]:
    return community.follow(call.store, call.svc_id, call.params.get("leader_id"), now=call.now)


def _unfollow(call: Call) -> dict[str, Any]:
    return community.unfollow(call.store, call.svc_id, call.params.get("leader_id"))


def _apply(call: Call) -> dict[str, Any]:
    return community.apply(call.store, call.svc_id, call.params, now=call.now)


def _application(call: Call) -> dict[str, Any]:
    return community.application(call.store, call.svc_id)


def _withdraw(call: Call) -> dict[str, Any]:
    return community.withdraw(call.store, call.svc_id, now=call.now)


def _leader_update(call: Call) -> dict[str, Any]:
    return community.update_profile(call.store, call.svc_id, call.params)


def _posts(call: Call) -> dict[str, Any]:
    # The spec gives a range (1-50), not a maximum that clamps: above it is a 400.
    limit = call.page(20, 1, 50)
    position = call.cursor("posts", personal=False)
    after = None if position is None else (position_int(position, "t"), position_str(position, "k"))
    page, last = community.feed(call.store, limit=limit, after=after)
    cursor = call.next_cursor("posts", None if last is None else {"t": last[0], "k": last[1]}, personal=False)
    return {"posts": page, "count": len(page), "has_more": last is not None, "next_cursor": cursor}


def _chat(call: Call) -> dict[str, Any]:
    limit = call.page(50, 1, 100, clamp=True)
    raw = call.params.get("cursor")
    before = None if raw is None or raw == "" else community.parse_key(raw, "cursor")
    channel = community.channel_of(call.params.get("channel"))
    page, cursor = community.read_chat(call.store, channel, limit=limit, before=before)
    return {
        "channel": channel,
        "messages": page,
        "count": len(page),
        "has_more": cursor is not None,
        "next_cursor": cursor,
    }


def _leaders(call: Call) -> dict[str, Any]:
    limit = call.page(25, 1, 50)  # a range in the spec (1-50), as community_posts
    position = call.cursor("leaders", personal=False)
    after = None if position is None else (position_int(position, "t"), position_str(position, "k"))
    page, last = community.leaders_page(call.store, call.principal.svc_id, limit=limit, after=after)
    cursor = call.next_cursor(
        "leaders", None if last is None else {"t": last[0], "k": last[1]}, personal=False
    )
    return {"leaders": page, "count": len(page), "next_cursor": cursor, "has_more": last is not None}


USER: dict[str, Operation] = {
    "community_chat_send": Operation(_send),
    "community_chat_delete": Operation(_delete_message),
    "community_post_create": Operation(_post_create),
    "community_post_delete": Operation(_post_delete),
    "community_post_like": Operation(_like),
    "community_post_comment": Operation(_comment),
    "community_post_report": Operation(_report),
    "community_follow": Operation(_follow),
    "community_unfollow": Operation(_unfollow),
    "community_leader_apply": Operation(_apply),
    "community_leader_application_get": Operation(_application, inline=True),
    "community_leader_application_withdraw": Operation(_withdraw),
    "community_leader_update": Operation(_leader_update),
}
TRADE = frozenset(name for name in USER if name != "community_leader_application_get")
"""The operations that change something: an API key needs the ``trade`` permission for them."""
TRADINGDATA: dict[str, Operation] = {
    "community_posts": Operation(_posts, access="public", inline=True),
    "community_chat": Operation(_chat, access="public", inline=True),
    "community_leaders": Operation(_leaders, access="public"),
}
