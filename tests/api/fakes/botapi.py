"""A loopback fake of a Telegram-compatible Bot API that records every call: ``getMe``,
``getUpdates`` (long polling: it waits up to the request's ``timeout`` for an update a test queued,
and forgets the updates a later offset confirms), ``setWebhook``/``deleteWebhook``, ``sendMessage``,
``editMessageText``, ``deleteMessage`` and ``answerCallbackQuery``. It builds the updates a user's
messages and button presses make, and a switch makes the next calls fail as an outage would."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.api.fakes.loopback import serve

TOKEN = "123456:TEST"
BOT_USER = {"id": 123456, "is_bot": True, "first_name": "svc", "username": "svc_test_bot"}


@dataclass
class BotFake:
    """The fake's state; ``url`` is its base URL once started."""

    url: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)  # updates not confirmed yet
    messages: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    failures_left: int = 0
    webhook: dict[str, Any] = field(default_factory=dict)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _message_ids: Any = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- what users do ------------------------------------------------------------------------

    def message_update(self, chat_id: int, text: str) -> dict[str, Any]:
        """The update of a user's message (a command carries its ``bot_command`` entity)."""
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private"},
            "from": {"id": chat_id, "is_bot": False, "first_name": "u"},
            "text": text,
        }
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        return {"update_id": next(self._ids), "message": message}

    def press_update(self, chat_id: int, message_id: int, data: str) -> dict[str, Any]:
        """The update of a user pressing a button with ``data`` on message ``message_id``."""
        shown = self.messages.get((str(chat_id), message_id), {})
        return {
            "update_id": next(self._ids),
            "callback_query": {
                "id": f"cq{next(self._ids)}",
                "from": {"id": chat_id, "is_bot": False, "first_name": "u"},
                "chat_instance": str(chat_id),
                "data": data,
                "message": {
                    "message_id": message_id,
                    "date": int(time.time()),
                    "from": BOT_USER,
                    "chat": {"id": chat_id, "type": "private"},
                    "text": shown.get("text", ""),
                },
            },
        }

    def queue(self, update: dict[str, Any]) -> dict[str, Any]:
        """Serve ``update`` to the next ``getUpdates`` (again, when it was served before: a redelivery)."""
        with self._lock:
            self.pending.append({**update, "_served": False})
        return update

    def user_says(self, chat_id: int, text: str) -> dict[str, Any]:
        """Queue a message of a user to the bot (polling)."""
        return self.queue(self.message_update(chat_id, text))

    # ---- what the bot did ---------------------------------------------------------------------

    @property
    def sent(self) -> list[dict[str, Any]]:
        """The parameters of every ``sendMessage``."""
        return self.calls_of("sendMessage")

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        """The parameters of every call of ``method``, in order."""
        return [params for name, params in self.calls if name == method]

    def sent_to(self, chat_id: int) -> list[dict[str, Any]]:
        """The messages sent to ``chat_id`` (with ``message_id``, ``text``, ``reply_markup``), in order."""
        return [m for (chat, _), m in self.messages.items() if chat == str(chat_id)]

    def texts_to(self, chat_id: int) -> list[str]:
        """Texts of the messages sent to ``chat_id`` (as they read now, after edits), in order."""
        return [m["text"] for m in self.sent_to(chat_id)]

    def buttons(self, chat_id: int, message_id: int) -> dict[str, str]:
        """Label -> callback data of the buttons on a message."""
        markup = self.messages[(str(chat_id), message_id)].get("reply_markup") or {}
        return {b["text"]: b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row}

    def deleted(self, chat_id: int) -> list[int]:
        """Ids of the messages deleted in ``chat_id``."""
        return [
            int(p["message_id"]) for p in self.calls_of("deleteMessage") if str(p["chat_id"]) == str(chat_id)
        ]


async def _params(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").startswith("application/json"):
        body = await request.body()
        return json.loads(body) if body else {}
    # the library posts url-encoded fields, complex ones (reply_markup) JSON-encoded
    out: dict[str, Any] = {}
    for name, text in parse_qsl((await request.body()).decode()):
        try:
            out[name] = json.loads(text) if text[:1] in "[{" else text
        except ValueError:
            out[name] = text
    return out


def _app(fake: BotFake) -> Starlette:
    def stored(params: dict[str, Any], message_id: int) -> dict[str, Any]:
        chat = str(params["chat_id"])
        markup = params.get("reply_markup")
        record = {
            "message_id": message_id,
            "text": params.get("text", ""),
            "reply_markup": markup if isinstance(markup, dict) else None,
        }
        fake.messages[(chat, message_id)] = record
        return {
            "message_id": message_id,
            "date": int(time.time()),
            "from": BOT_USER,
            "text": record["text"],
            "chat": {"id": int(chat), "type": "private"},
        }

    async def updates(params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        deadline = time.monotonic() + min(float(params.get("timeout") or 0), 5.0)
        while True:
            with fake._lock:
                fake.pending = [u for u in fake.pending if not (u["_served"] and u["update_id"] < offset)]
                ready = [u for u in fake.pending if not u["_served"] or u["update_id"] >= offset]
                for u in ready:
                    u["_served"] = True
            if ready or time.monotonic() >= deadline:
                return [{k: v for k, v in u.items() if k != "_served"} for u in ready]
            await asyncio.sleep(0.05)

    handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
        "getMe": lambda p: BOT_USER,
        "deleteWebhook": lambda p: fake.webhook.clear() or True,
        "setWebhook": lambda p: fake.webhook.update(p) or True,
        "sendMessage": lambda p: stored(p, next(fake._message_ids)),
        "editMessageText": lambda p: stored(p, int(p["message_id"])),
        "deleteMessage": lambda p: (
            fake.messages.pop((str(p["chat_id"]), int(p["message_id"])), None) is not None or True
        ),
        "answerCallbackQuery": lambda p: True,
    }

    async def method(request: Request) -> JSONResponse:
        if request.path_params["token"] != TOKEN:
            return JSONResponse({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
        name = request.path_params["method"]
        params = await _params(request)
        if fake.failures_left > 0 and name != "getUpdates":
            fake.failures_left -= 1
            return JSONResponse({"ok": False, "error_code": 502, "description": "Bad Gateway"}, 502)
        if name == "getUpdates":
            return JSONResponse({"ok": True, "result": await updates(params)})
        fake.calls.append((name, params))
        if name not in handlers:
            return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found"}, 404)
        return JSONResponse({"ok": True, "result": handlers[name](params)})

    return Starlette(routes=[Route("/bot{token}/{method}", method, methods=["POST"])])


@contextmanager
def running_bot() -> Iterator[BotFake]:
    """The fake served by uvicorn on a free loopback port for the duration of the block."""
    fake = BotFake()
    with serve(_app(fake)) as url:
        fake.url = url
        yield fake
