"""The request model of ``/user`` ``messenger_login`` (its reply is the accounts' session grant).

Example:
    >>> MessengerLogin.model_validate({"code": "AB12CD34"}).platform
    'api'
"""

from __future__ import annotations

from typing import Annotated

from svc_api.accounts.service import SessionGrantReply
from svc_api.core.contract import Check, ErrorDoc, Fields
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
