"""The request models of the community operations (``/user`` chat, posts, follows and leader
applications; guest ``/tradingdata`` posts, chat and leaders) and their documented errors. The reply
models are in :mod:`~svc_api.community.replies`.

Every field is checked here, in the order the service checked it before, with the community's own
rules (:func:`~svc_api.community.chat.channel_of`, :func:`~svc_api.community.leaders.display_name`,
...): the checks that need the store (a leader, a post, a message that exists) stay in the services.

Example:
    >>> ChatSend.model_validate({"message": "gm", "channel": "leader:ab12cd"}).channel
    'leader:AB12CD'
    >>> PostReport.model_validate({"post_id": "p1", "message_key": "1#1_AB12CD"})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: give exactly one of post_id or message_key
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from svc_api.community.chat import channel_of, parse_key
from svc_api.community.leaders import SOCIALS, display_name, leader_id
from svc_api.core.contract import ABSENT, Check, ErrorDoc, Fields
from svc_api.core.errors import Invalid
from svc_api.core.fields import https_url, required_text, text
from svc_api.core.params import Cursor, Limit

MESSAGE_KEY = "^[0-9]{1,12}#[0-9]{1,12}_[A-Z0-9_]{6}$"


def _prose(value: object, name: str, hi: int) -> str:
    # A blank text says nothing: its own message, after the length rule.
    out = text(value, name, hi=hi) or ""
    if not out.strip():
        raise Invalid(f"{name} must not be blank")
    return out


def Prose(hi: int, what: str) -> Any:
    """A required text of 1-``hi`` characters, not only spaces."""
    schema = {"type": "string", "minLength": 1, "maxLength": hi, "description": what}
    return Annotated[str, Check(_prose, schema, required=True, args=(hi,))]


def _optional_text(value: object, name: str, hi: int) -> str:
    return text(value, name, lo=0, hi=hi, required=False) or ""


def OptionalText(hi: int, what: str = "") -> Any:
    """An optional text of at most ``hi`` characters (absent or null: empty)."""
    schema: dict[str, Any] = {"type": ["string", "null"], "maxLength": hi, "default": ""}
    if what:
        schema["description"] = what
    return Annotated[str, Check(_optional_text, schema, args=(hi,))]


def _channel(value: object, name: str) -> str:
    return channel_of(value)


Channel = Annotated[
    str,
    Check(
        _channel,
        {"type": ["string", "null"], "default": "global", "description": "`global` or `leader:<svc_id>`."},
    ),
]
"""A chat channel: ``global`` (the default) or ``leader:<svc_id>`` (case-insensitive)."""


def _post_id(value: object, name: str) -> str:
    return required_text(value, name, hi=24)


PostId = Annotated[str, Check(_post_id, {"type": "string", "minLength": 1, "maxLength": 24}, required=True)]


def _sort_key(value: object, name: str) -> str:
    if value is None or value == "":
        raise Invalid(f"{name} is required")
    parse_key(value)
    return str(value)


def _https(value: object, name: str) -> str:
    return "" if value is None or value == "" else https_url(value, name)


HTTPS_URL = {"type": ["string", "null"], "maxLength": 2048, "pattern": "^https://"}


class ChatSend(Fields):
    """``community_chat_send``: a message to a channel (one per author and second)."""

    message: Prose(500, "The message.")
    channel: Channel


class ChatDelete(Fields):
    """``community_chat_delete``: soft-delete a message (its author or a moderator of the channel)."""

    sort_key: Annotated[
        str,
        Check(
            _sort_key,
            {"type": "string", "pattern": MESSAGE_KEY, "description": "`<seconds>#<seconds>_<svc_id>`."},
            required=True,
        ),
    ]
    channel: Channel


class PostCreate(Fields):
    """``community_post_create``: a leader's post (followers are notified)."""

    content: Prose(5000, "The post.")
    title: OptionalText(200)
    image_url: Annotated[str, Check(_https, HTTPS_URL)]
    """An ``https://`` image (none when absent or empty)."""


class PostTarget(Fields):
    """``community_post_delete``, ``community_post_like``: one post."""

    post_id: PostId


class PostComment(Fields):
    """``community_post_comment``: a comment on a visible post."""

    comment: Prose(300, "The comment.")
    post_id: PostId


def _or_post_id(value: object, name: str) -> str | None:
    return None if value is None else required_text(value, name, hi=24)


def _or_message_key(value: object, name: str) -> str | None:
    if value is None:
        return None
    parse_key(value, name)
    return str(value)


class PostReport(Fields):
    """``community_post_report``: exactly one of a post (``post_id``) or a chat message
    (``message_key`` in ``channel``). Reporting the same thing again changes nothing."""

    reason: OptionalText(500, "Why.")
    post_id: Annotated[str | None, Check(_or_post_id, {"type": ["string", "null"], "maxLength": 24})]
    message_key: Annotated[
        str | None,
        Check(
            _or_message_key,
            {
                "type": ["string", "null"],
                "pattern": MESSAGE_KEY,
                "description": "A chat message's `sort_key`.",
            },
        ),
    ]
    channel: Channel
    """The channel of ``message_key`` (ignored with ``post_id``)."""

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """One target first (an empty one counts as absent); the channel only with a message."""
        post_id, key = data.get("post_id") or None, data.get("message_key") or None
        if (post_id is None) == (key is None):
            raise Invalid("give exactly one of post_id or message_key")
        channel = None if key is None else data.get("channel")
        return {
            "reason": data.get("reason", ABSENT),
            "post_id": post_id,
            "message_key": key,
            "channel": channel,
        }


def _leader_id(value: object, name: str) -> str:
    return leader_id(value, name)


class FollowTarget(Fields):
    """``community_follow``, ``community_unfollow``: one leader."""

    leader_id: Annotated[
        str,
        Check(
            _leader_id,
            {"type": "string", "pattern": "^[A-Za-z0-9]{6}$", "description": "A leader's ID."},
            required=True,
        ),
    ]


def _display_name(value: object, name: str) -> str:
    return display_name(value)


DisplayName = Annotated[
    str,
    Check(
        _display_name,
        {
            "type": "string",
            "minLength": 3,
            "maxLength": 30,
            "pattern": "^[A-Za-z0-9][A-Za-z0-9 ]*[A-Za-z0-9]$",
        },
        required=True,
    ),
]
"""3-30 Latin letters, digits or inner spaces (the nickname: lower case, spaces removed)."""


def _followers(value: object, name: str) -> bool:
    if value is not True:
        raise Invalid(f"{name} must be true: leaders need at least 500 followers elsewhere")
    return True


def _text(value: object, name: str, hi: int) -> str:
    return text(value, name, hi=hi) or ""


class LeaderApply(Fields):
    """``community_leader_apply``: apply to lead, or edit the pending application in place."""

    display_name: DisplayName
    has_500_followers: Annotated[bool, Check(_followers, {"const": True}, required=True)]
    reason: Annotated[
        str, Check(_text, {"type": "string", "minLength": 1, "maxLength": 1000}, required=True, args=(1000,))
    ]
    experience: Annotated[
        str, Check(_text, {"type": "string", "minLength": 1, "maxLength": 2000}, required=True, args=(2000,))
    ]
    twitter: OptionalText(100)
    instagram: OptionalText(100)
    youtube: OptionalText(100)
    telegram: OptionalText(100)

    def socials(self) -> dict[str, str]:
        """The social handles, by network.

        Example:
            >>> sent = {"display_name": "Desk", "has_500_followers": True, "reason": "r", "experience": "e"}
            >>> LeaderApply.model_validate({**sent, "youtube": "d"}).socials()["youtube"]
            'd'
        """
        return {social: getattr(self, social) for social in SOCIALS}


def _bio(value: object, name: str) -> str | None:
    return None if value is None else text(value, name, lo=0, hi=500)


def _avatar(value: object, name: str) -> str | None:
    return None if value is None else _https(value, name)


class LeaderUpdate(Fields):
    """``community_leader_update``: a leader's display name (and so nickname), bio and avatar."""

    display_name: DisplayName
    bio: Annotated[str | None, Check(_bio, {"type": ["string", "null"], "maxLength": 500})]
    """Absent or null: unchanged."""
    avatar_url: Annotated[str | None, Check(_avatar, HTTPS_URL)]
    """Absent or null: unchanged; empty: removed."""


class CommunityPostsQuery(Fields):
    """``community_posts``: visible posts, newest first (the spec gives a range: above 50 is a 400)."""

    limit: Limit(20, 1, 50)
    cursor: Cursor


def _chat_cursor(value: object, name: str) -> tuple[int, str] | None:
    return None if value is None or value == "" else parse_key(value, name)


class CommunityChatQuery(Fields):
    """``community_chat``: a channel's messages, newest first."""

    limit: Limit(50, 1, 100, clamp=True)
    cursor: Annotated[
        tuple[int, str] | None,
        Check(
            _chat_cursor,
            {
                "type": ["string", "null"],
                "pattern": MESSAGE_KEY,
                "description": "The previous page's `next_cursor`.",
            },
        ),
    ]
    """The position before which to read (the previous page's last ``sort_key``)."""
    channel: Channel


class CommunityLeadersQuery(Fields):
    """``community_leaders``: leaders, newest approved first."""

    limit: Limit(25, 1, 50)
    cursor: Cursor


LEADERS_ONLY = ErrorDoc(403, "forbidden", "the caller is not an approved community leader")
NO_POST = ErrorDoc(404, "not_found", "no visible post with this ID")
CHAT_SEND_ERRORS = (
    ErrorDoc(404, "not_found", "no chat channel of this leader"),
    ErrorDoc(
        429,
        "too_many_requests",
        "a second message of the author in the same second (`reason: rate_limit_exceeded`, `retry_after` 1)",
    ),
)
CHAT_DELETE_ERRORS = (
    ErrorDoc(403, "forbidden", "neither the author nor a moderator of the channel"),
    ErrorDoc(404, "not_found", "no message with this key in the channel"),
)
POST_DELETE_ERRORS = (
    ErrorDoc(403, "forbidden", "not the author, or the post is deleted already"),
    ErrorDoc(404, "not_found", "no post with this ID"),
)
LIKE_ERRORS = (NO_POST, ErrorDoc(409, "conflict", "the caller liked this post already"))
REPORT_ERRORS = (ErrorDoc(404, "not_found", "no visible post, or no message with this key in the channel"),)
FOLLOW_ERRORS = (
    ErrorDoc(400, "invalid_request", "the caller's own ID (one cannot follow oneself)"),
    ErrorDoc(404, "not_found", "not a community leader"),
    ErrorDoc(409, "conflict", "the caller follows this leader already"),
)
UNFOLLOW_ERRORS = (ErrorDoc(409, "conflict", "the caller does not follow this leader"),)
APPLY_ERRORS = (
    ErrorDoc(409, "conflict", "the nickname is taken by another user, or the caller leads already"),
)
WITHDRAW_ERRORS = (
    ErrorDoc(404, "not_found", "the caller never applied"),
    ErrorDoc(409, "conflict", "the latest application is not pending"),
)
LEADER_UPDATE_ERRORS = (
    ErrorDoc(403, "forbidden", "the caller is not an approved community leader"),
    ErrorDoc(409, "conflict", "the nickname is taken by another user"),
)
CHANNEL_ERRORS = (ErrorDoc(404, "not_found", "no chat channel of this leader"),)
