"""``GET /ws``: real-time channels over a WebSocket (ours: names and messages).

Authenticated like HTTP (``Authorization: Bearer``, ``X-API-Key`` + ``X-API-Secret``, or for
browsers ``?token=<session token>``); a rejected handshake gets the HTTP status of the rejection
(401, 503) instead of an upgrade. With ``REDIS_URL``, a Redis that cannot be reached (sockets would
hear no other process's events) refuses handshakes with 503 ``temporarily_unavailable`` and
``Retry-After``, and closes open sockets with code 1013 ("try again later"): the client reconnects
and reads state again once Redis is back. Past ``WS_MAX_CONNECTIONS`` open sockets in a process the handshake
gets a plain HTTP 429, without ``Retry-After``.

The client sends ``{"action": "subscribe"|"unsubscribe", "channel": "jobs"|"signals"}``; the server
answers ``{"channel": "control", "event": "subscribed", "channels": [...]}`` and then pushes the
caller's own events: ``{"channel": "jobs", "event": "progress"|"completed"|"failed", "job_id",
"status", "progress_pct", "coin_progress"?}`` and ``{"channel": "signals", "event":
"opened"|"closed", "position_key", "coin", "strategy_name", "owner", "side", "entry_price",
"limit_price", "stop_price", "status", "result"}`` (a signal reaches its owner and those it was
delivered to). A malformed message gets ``{"channel": "control", "event": "error", "message"}``.

Example:
    >>> CHANNELS
    ('jobs', 'signals')
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from starlette.responses import JSONResponse, PlainTextResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from svc_api.auth import service as auth
from svc_api.core import pubsub
from svc_api.core.errors import ApiError, ServiceError

CHANNELS = ("jobs", "signals")


def _ip(websocket: WebSocket) -> str:
    return websocket.client.host if websocket.client else "unknown"


async def endpoint(websocket: WebSocket) -> None:
    """The socket of one caller (see the module docstring)."""
    services = websocket.app.state.services
    # The place is taken before the first await: sockets still authenticating count, so a burst of
    # handshakes cannot all pass a check made while none of them was open yet.
    if not services.hub.claim(services.settings.ws_max_connections):
        await websocket.send_denial_response(PlainTextResponse("too many connections", status_code=429))
        return
    try:
        await _serve(websocket, services)
    finally:
        services.hub.release()


async def _serve(websocket: WebSocket, services: Any) -> None:
    hub = services.hub
    try:
        token = websocket.query_params.get("token")
        principal = await auth.principal_of(services, websocket.headers, _ip(websocket), token)
    except ServiceError as exc:
        await websocket.send_denial_response(JSONResponse(exc.body(), status_code=exc.status))
        return
    if not hub.fanout_up:
        down = ApiError(503, "service_unavailable", reason="temporarily_unavailable", retry_after=5)
        await websocket.send_denial_response(down.response())
        return
    if principal.svc_id is None:
        body = {"error": "a session token or an API key is required", "code": "session_expired"}
        await websocket.send_denial_response(JSONResponse(body, status_code=401))
        return
    await websocket.accept()
    sub = hub.subscribe(pubsub.user_topic(principal.svc_id), asyncio.get_running_loop())
    wanted: set[str] = set()
    pusher = asyncio.create_task(_push(websocket, sub, wanted))
    try:
        await _listen(websocket, wanted)
    finally:
        pusher.cancel()
        hub.unsubscribe(sub)
        with contextlib.suppress(asyncio.CancelledError):
            await pusher


async def _listen(websocket: WebSocket, wanted: set[str]) -> None:
    while True:
        try:
            raw = await websocket.receive_text()
        except WebSocketDisconnect:
            return
        try:
            message: Any = json.loads(raw)
            action, channel = message["action"], message["channel"]
            if action not in ("subscribe", "unsubscribe") or channel not in CHANNELS:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            hint = "send {action: subscribe|unsubscribe, channel: jobs|signals}"
            await websocket.send_json({"channel": "control", "event": "error", "message": hint})
            continue
        (wanted.add if action == "subscribe" else wanted.discard)(channel)
        await websocket.send_json({"channel": "control", "event": f"{action}d", "channels": sorted(wanted)})


async def _push(websocket: WebSocket, sub: pubsub.Subscriber, wanted: set[str]) -> None:
    while True:
        data = await sub.queue.get()
        if data == pubsub.CLOSE:
            with contextlib.suppress(RuntimeError):
                await websocket.close(code=1013, reason="real-time fan-out unavailable; reconnect")
            return
        if json.loads(data).get("channel") in wanted:
            try:
                await websocket.send_text(data)
            except (RuntimeError, WebSocketDisconnect):
                return
