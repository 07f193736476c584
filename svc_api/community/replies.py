"""The reply models of the community operations (the ``data`` of ``/user``, the body of
``/tradingdata``); the names are those of the API description's components.

Example:
    >>> Followed.model_validate({"leader_id": "AB12CD", "action": "followed"}).action
    'followed'
"""

from __future__ import annotations

from typing import Literal

from svc_api.core.contract import Shape


class ChatSent(Shape):
    """The message is posted."""

    msg_id: str
    """``<seconds>_<svc_id>``."""
    sort_key: str
    """``<seconds>#<msg_id>``: the message's key in its channel."""
    channel: str


class ChatDeleted(Shape):
    """The message is soft-deleted (its text replaced by a placeholder)."""

    sort_key: str
    channel: str
    deleted: Literal[True]
    deleted_by_author: bool
    """False when a moderator removed it."""


class PostCreated(Shape):
    """The post is published."""

    post_id: str


class PostDeleted(Shape):
    """The post left the feed; it is kept for moderation until ``delete_after``."""

    post_id: str
    deleted: Literal[True]
    delete_after: int
    """Unix seconds (15 days ahead)."""


class PostLiked(Shape):
    """The like is recorded."""

    post_id: str
    action: Literal["liked"]


class PostCommented(Shape):
    """The comment is recorded."""

    post_id: str
    comment_id: str
    comment_count: str
    """The post's comments, this one included."""
    created_at: str
    """Unix seconds."""


class Reported(Shape):
    """The report is recorded (once per reporter and target)."""

    action: Literal["reported"]


class Followed(Shape):
    """The caller follows, or stopped following, the leader."""

    leader_id: str
    action: Literal["followed", "unfollowed"]


class LeaderApplied(Shape):
    """The application is pending review."""

    status: Literal["pending"]
    display_name: str
    nickname: str
    """The display name in lower case without spaces, held for the caller."""
    updated: bool
    """True when a pending application was edited in place."""
    message: str


class LeaderApplication(Shape):
    """The caller's leader application; only ``status`` and ``is_leader`` when there is none."""

    status: Literal["none", "pending", "approved", "rejected", "withdrawn"]
    is_leader: bool
    display_name: str | None = None
    reason: str | None = None
    experience: str | None = None
    applied_at: int | None = None
    """Unix seconds."""
    twitter: str | None = None
    instagram: str | None = None
    youtube: str | None = None
    telegram: str | None = None


class LeaderWithdrawn(Shape):
    """The pending application is withdrawn (its history kept)."""

    status: Literal["withdrawn"]


class LeaderProfile(Shape):
    """The leader's profile after the change."""

    display_name: str
    nickname: str
    community_bio: str
    avatar_url: str


class CommunityPost(Shape):
    """A visible post."""

    post_id: str
    author_id: str
    title: str
    content: str
    image_url: str
    like_count: str
    comment_count: str
    created_at: str
    """Unix seconds."""


class CommunityMessage(Shape):
    """A chat message (a deleted one keeps its place with a placeholder text)."""

    svc_id: str
    """The author."""
    message: str
    created_at: str
    """Unix seconds."""
    sort_key: str
    deleted: bool


class CommunityLeader(Shape):
    """An approved leader."""

    svc_id: str
    name: str
    nickname: str | None = None
    bio: str
    avatar_url: str | None = None
    is_following: bool
    """Whether the caller follows them (false for guests)."""


class CommunityPosts(Shape):
    """A page of posts, newest first."""

    posts: list[CommunityPost]
    count: int
    has_more: bool
    next_cursor: str | None
    """Opaque; null on the last page."""


class CommunityChat(Shape):
    """A page of a channel's messages, newest first."""

    channel: str
    messages: list[CommunityMessage]
    count: int
    has_more: bool
    next_cursor: str | None
    """The ``sort_key`` of the last message: ``<seconds>#...``; null on the last page."""


class CommunityLeaders(Shape):
    """A page of leaders, newest approved first."""

    leaders: list[CommunityLeader]
    count: int
    next_cursor: str | None
    """Opaque; null on the last page."""
    has_more: bool
