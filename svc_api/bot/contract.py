"""The request model of ``/user`` ``messenger_login`` (its reply is the accounts' session grant).

Example:
    >>> MessengerLogin.model_validate({"code": "AB12CD34"}).platform
    'api'
"""

from __future__ import annotations

from typing import Annotated

from svc_api.accounts.service import SessionGrantReply
from svc_api.core.contract import Answer, Check, ErrorDoc, Fields, Op, Shape
from svc_api.core.errors import Invalid
from svc_api.core.params import Platform


def login_code(value: object, name: str) -> str:
    """A one-time login code as sent: a non-blank string of at most 32 characters; else 400.

    Example:
        >>> login_code(" ", "code")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: code is required: the one-time code the messenger bot's /login gives
    """
    if not isinstance(value, str) or not value.strip() or len(value) > 32:
        raise Invalid(f"{name} is required: the one-time code the messenger bot's /login gives")
    return value


class MessengerLogin(Fields):
    """``messenger_login``: the one-time code the bot's ``/start`` or ``/login`` gave."""

    platform: Platform
    code: Annotated[
        str,
        Check(
            login_code,
            {"type": "string", "minLength": 1, "maxLength": 32, "description": "Valid 10 minutes, once."},
            required=True,
        ),
    ]


LOGIN_ERRORS = (ErrorDoc(401, "invalid_login", "the code is unknown, used or expired"),)

__all__ = ["LOGIN_ERRORS", "MessengerLogin", "SessionGrantReply", "login_code"]


class BotWebhookReply(Shape):
    """An update kept for the bot (``duplicate``: its ``update_id`` was received before; it is acted
    on once)."""

    ok: bool
    duplicate: bool


WEBHOOK = Op(
    "bot_webhook",
    "An update from the messenger Bot API (webhook mode).",
    BotWebhookReply,
    description="A Telegram Bot API update, sent by the Bot API to `BOT_WEBHOOK_URL` with"
    " `X-Telegram-Bot-Api-Secret-Token: <BOT_WEBHOOK_SECRET>`. The update is kept for the bot's worker and"
    " answered at once (`duplicate: true` when its `update_id` was received before: it is acted on once)."
    " 401 missing or wrong secret token (nothing is kept), 400 a body that is not a JSON update with a"
    " non-negative integer `update_id`, 404 the webhook is not configured (the bot polls, or there is no"
    " bot).",
    done="Kept for the bot (or received before).",
    errors=tuple(Answer(status, shared="Error") for status in (400, 401, 404)),
    tag="notifications",
    parameters=(
        {
            "name": "X-Telegram-Bot-Api-Secret-Token",
            "in": "header",
            "required": False,
            "schema": {"type": "string"},
        },
    ),
    request={"required": False, "content": {"application/json": {"schema": {"type": "object"}}}},
)
"""The contract of ``POST /bot/webhook`` (its endpoint reads the raw body after the secret token)."""
