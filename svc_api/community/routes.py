"""Community operations: ``/user`` (chat send and delete, posts, likes, comments, reports, follows,
leader applications and profiles) and guest ``/tradingdata`` (posts, chat, leaders).

Example:
    >>> sorted(TRADINGDATA)
    ['community_chat', 'community_leaders', 'community_posts']
"""

from __future__ import annotations

from typing import Any

from svc_api.community import contract as c
from svc_api.community import replies as r
from svc_api.community import service as community
from svc_api.core.contract import NoFields
from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import position_int, position_str


def _send(call: Call, req: c.ChatSend) -> dict[str, Any]:
    return community.send_message(call.store, call.svc_id, req.message, req.channel, now=call.now)


def _delete_message(call: Call, req: c.ChatDelete) -> dict[str, Any]:
    return community.delete_message(call.store, call.svc_id, req.sort_key, req.channel)


def _post_create(call: Call, req: c.PostCreate) -> dict[str, Any]:
    return community.create(
        call.store, call.svc_id, req.content, title=req.title, image_url=req.image_url, now=call.now
    )


def _post_delete(call: Call, req: c.PostTarget) -> dict[str, Any]:
    return community.delete(call.store, call.svc_id, req.post_id, now=call.now)


def _like(call: Call, req: c.PostTarget) -> dict[str, Any]:
    return community.like(call.store, call.svc_id, req.post_id, now=call.now)


def _comment(call: Call, req: c.PostComment) -> dict[str, Any]:
    return community.comment(call.store, call.svc_id, req.post_id, req.comment, now=call.now)


def _report(call: Call, req: c.PostReport) -> dict[str, Any]:
    return community.report(
        call.store,
        call.svc_id,
        post_id=req.post_id,
        message_key=req.message_key,
        channel=req.channel,
        reason=req.reason,
        now=call.now,
    )


def _follow(call: Call, req: c.FollowTarget) -> dict[str, Any]:
    return community.follow(call.store, call.svc_id, req.leader_id, now=call.now)


def _unfollow(call: Call, req: c.FollowTarget) -> dict[str, Any]:
    return community.unfollow(call.store, call.svc_id, req.leader_id)


def _apply(call: Call, req: c.LeaderApply) -> dict[str, Any]:
    return community.apply(
        call.store,
        call.svc_id,
        display_name=req.display_name,
        reason=req.reason,
        experience=req.experience,
        socials=req.socials(),
        now=call.now,
    )


def _application(call: Call, req: NoFields) -> dict[str, Any]:
    return community.application(call.store, call.svc_id)


def _withdraw(call: Call, req: NoFields) -> dict[str, Any]:
    return community.withdraw(call.store, call.svc_id, now=call.now)


def _leader_update(call: Call, req: c.LeaderUpdate) -> dict[str, Any]:
    return community.update_profile(
        call.store, call.svc_id, req.display_name, bio=req.bio, avatar_url=req.avatar_url
    )


def _posts(call: Call, req: c.CommunityPostsQuery) -> dict[str, Any]:
    position = call.cursor("posts", personal=False)
    after = None if position is None else (position_int(position, "t"), position_str(position, "k"))
    page, last = community.feed(call.store, limit=req.limit, after=after)
    cursor = call.next_cursor("posts", None if last is None else {"t": last[0], "k": last[1]}, personal=False)
    return {"posts": page, "count": len(page), "has_more": last is not None, "next_cursor": cursor}


def _chat(call: Call, req: c.CommunityChatQuery) -> dict[str, Any]:
    page, cursor = community.read_chat(call.store, req.channel, limit=req.limit, before=req.cursor)
    return {
        "channel": req.channel,
        "messages": page,
        "count": len(page),
        "has_more": cursor is not None,
        "next_cursor": cursor,
    }


def _leaders(call: Call, req: c.CommunityLeadersQuery) -> dict[str, Any]:
    position = call.cursor("leaders", personal=False)
    after = None if position is None else (position_int(position, "t"), position_str(position, "k"))
    page, last = community.leaders_page(call.store, call.principal.svc_id, limit=req.limit, after=after)
    cursor = call.next_cursor(
        "leaders", None if last is None else {"t": last[0], "k": last[1]}, personal=False
    )
    return {"leaders": page, "count": len(page), "next_cursor": cursor, "has_more": last is not None}


USER: dict[str, Operation] = {
    "community_chat_send": Operation(
        _send,
        request=c.ChatSend,
        reply=r.ChatSent,
        summary="Send a chat message to the global channel or a leader's.",
        errors=c.CHAT_SEND_ERRORS,
    ),
    "community_chat_delete": Operation(
        _delete_message,
        request=c.ChatDelete,
        reply=r.ChatDeleted,
        summary="Soft-delete a chat message (its author, or a moderator of the channel).",
        errors=c.CHAT_DELETE_ERRORS,
    ),
    "community_post_create": Operation(
        _post_create,
        request=c.PostCreate,
        reply=r.PostCreated,
        summary="Publish a leader's post (followers are notified).",
        errors=(c.LEADERS_ONLY,),
    ),
    "community_post_delete": Operation(
        _post_delete,
        request=c.PostTarget,
        reply=r.PostDeleted,
        summary="Delete the caller's post (kept 15 days for moderation).",
        errors=c.POST_DELETE_ERRORS,
    ),
    "community_post_like": Operation(
        _like,
        request=c.PostTarget,
        reply=r.PostLiked,
        summary="Like a post, once.",
        errors=c.LIKE_ERRORS,
    ),
    "community_post_comment": Operation(
        _comment,
        request=c.PostComment,
        reply=r.PostCommented,
        summary="Comment on a post.",
        errors=(c.NO_POST,),
    ),
    "community_post_report": Operation(
        _report,
        request=c.PostReport,
        reply=r.Reported,
        summary="Report a post or a chat message to the operators.",
        errors=c.REPORT_ERRORS,
    ),
    "community_follow": Operation(
        _follow,
        request=c.FollowTarget,
        reply=r.Followed,
        summary="Follow a leader.",
        errors=c.FOLLOW_ERRORS,
    ),
    "community_unfollow": Operation(
        _unfollow,
        request=c.FollowTarget,
        reply=r.Followed,
        summary="Stop following a leader.",
        errors=c.UNFOLLOW_ERRORS,
    ),
    "community_leader_apply": Operation(
        _apply,
        request=c.LeaderApply,
        reply=r.LeaderApplied,
        summary="Apply to lead, or edit the pending application.",
        errors=c.APPLY_ERRORS,
    ),
    "community_leader_application_get": Operation(
        _application,
        inline=True,
        request=NoFields,
        reply=r.LeaderApplication,
        summary="The caller's leader application.",
    ),
    "community_leader_application_withdraw": Operation(
        _withdraw,
        request=NoFields,
        reply=r.LeaderWithdrawn,
        summary="Withdraw the pending leader application.",
        errors=c.WITHDRAW_ERRORS,
    ),
    "community_leader_update": Operation(
        _leader_update,
        request=c.LeaderUpdate,
        reply=r.LeaderProfile,
        summary="Change the leader's display name, bio or avatar.",
        errors=c.LEADER_UPDATE_ERRORS,
    ),
}
TRADE = frozenset(name for name in USER if name != "community_leader_application_get")
"""The operations that change something: an API key needs the ``trade`` permission for them."""
TRADINGDATA: dict[str, Operation] = {
    "community_posts": Operation(
        _posts,
        access="public",
        inline=True,
        request=c.CommunityPostsQuery,
        reply=r.CommunityPosts,
        summary="Visible leader posts, newest first.",
    ),
    "community_chat": Operation(
        _chat,
        access="public",
        inline=True,
        request=c.CommunityChatQuery,
        reply=r.CommunityChat,
        summary="A chat channel's messages, newest first.",
        errors=c.CHANNEL_ERRORS,
    ),
    "community_leaders": Operation(
        _leaders,
        access="public",
        request=c.CommunityLeadersQuery,
        reply=r.CommunityLeaders,
        summary="Approved leaders, newest first, with whether the caller follows each.",
    ),
}
