"""A loopback fake of a Telegram-compatible bot HTTP API: ``sendMessage`` records what was sent,
``getUpdates`` serves updates a test queued (``/start <code>`` messages of users), and a switch
makes the next calls fail as an outage would."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.api.fakes.loopback import serve

TOKEN = "123456:TEST"


@dataclass
class BotFake:
    """The fake's state; ``url`` is its base URL once started."""

    url: str = ""
    sent: list[dict[str, Any]] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    failures_left: int = 0

    def user_says(self, chat_id: int, text: str) -> None:
        """Queue a message of a user to the bot."""
        self.updates.append(
            {"update_id": len(self.updates) + 1, "message": {"chat": {"id": chat_id}, "text": text}}
        )

    def texts_to(self, chat_id: int) -> list[str]:
        """Texts the bot sent to ``chat_id``, in order."""
        return [m["text"] for m in self.sent if str(m["chat_id"]) == str(chat_id)]


def _app(fake: BotFake) -> Starlette:
    async def method(request: Request) -> JSONResponse:
        if request.path_params["token"] != TOKEN:
            return JSONResponse({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
        if fake.failures_left > 0:
            fake.failures_left -= 1
            return JSONResponse({"ok": False, "error_code": 502, "description": "Bad Gateway"}, 502)
        body = await request.json()
        if request.path_params["method"] == "sendMessage":
            fake.sent.append(body)
            return JSONResponse({"ok": True, "result": {"message_id": len(fake.sent)}})
        if request.path_params["method"] == "getUpdates":
            offset = int(body.get("offset") or 0)
            return JSONResponse({"ok": True, "result": [u for u in fake.updates if u["update_id"] >= offset]})
        return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found"}, 404)

    return Starlette(routes=[Route("/bot{token}/{method}", method, methods=["POST"])])


@contextmanager
def running_bot() -> Iterator[BotFake]:
    """The fake served by uvicorn on a free loopback port for the duration of the block."""
    fake = BotFake()
    with serve(_app(fake)) as url:
        fake.url = url
        yield fake
