"""The bot's routes: ``POST /bot/webhook`` (the Bot API's updates in webhook mode) and
``/user`` ``messenger_login`` (an app session for the one-time code the bot's ``/login`` gives).

The webhook answers as soon as the update is kept in the store (the worker handles it), so the Bot
API never waits on the bot's work; an update_id received twice is kept once.

Example:
    >>> sorted(USER), [r.path for r in WEBHOOKS]
    (['messenger_login'], ['/bot/webhook'])
"""

from __future__ import annotations

import contextlib
import hmac
import json
from functools import partial
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from svc_api.bot import contract as c
from svc_api.bot import service
from svc_api.bot.worker import NAME
from svc_api.core.contract import described
from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import ApiError, Invalid, NotFound

SECRET_HEADER = "x-telegram-bot-api-secret-token"


def _messenger_login(call: Call, req: c.MessengerLogin) -> dict[str, Any]:
    return service.login_with_code(
        call.services, req.code, ip=call.principal.ip, platform=req.platform, now=call.now
    )


async def webhook(request: Request) -> JSONResponse:
    """``POST /bot/webhook``: one update from the Bot API, with its secret-token header."""
    services = request.app.state.services
    settings = services.settings
    if not (settings.bot_webhook_url and settings.bot_webhook_secret and settings.bot_api_url):
        raise NotFound("the bot's webhook is not configured on this server")
    given = request.headers.get(SECRET_HEADER, "")
    if not hmac.compare_digest(given.encode(), settings.bot_webhook_secret.encode()):
        raise ApiError(401, "invalid_secret_token", extra={"message": f"{SECRET_HEADER} does not match"})
    try:
        update = json.loads(await request.body())
    except ValueError:
        raise Invalid("the body must be a JSON update") from None
    update_id = update.get("update_id") if isinstance(update, dict) else None
    if not isinstance(update_id, int) or isinstance(update_id, bool) or update_id < 0:
        raise Invalid("the update needs a non-negative integer update_id")
    fresh = await run_in_threadpool(
        partial(service.keep_update, services.store, update_id, json.dumps(update), now=services.clock.now())
    )
    running = services.workers
    if fresh and running is not None:
        # KeyError: the bot runs in another process (svc worker) and picks the update up on its tick
        with contextlib.suppress(KeyError):
            running.get(NAME).wake()
    return JSONResponse({"ok": True, "duplicate": not fresh})


USER: dict[str, Operation] = {
    "messenger_login": Operation(
        _messenger_login,
        access="public",
        per_ip_limit=10,
        request=c.MessengerLogin,
        reply=c.SessionGrantReply,
        summary="Open a session with the one-time code the messenger bot's /login gave.",
        errors=c.LOGIN_ERRORS,
    ),
}
WEBHOOKS = [described("/bot/webhook", webhook, "POST", c.WEBHOOK)]
