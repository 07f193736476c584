"""A loopback fake of Binance's public kline endpoints: ``/api/v3/klines`` and ``/api/v3/time`` (spot),
``/fapi/v1/klines`` and ``/fapi/v1/time`` (USDT-M futures), in Binance's array format.

It holds candles per (market, symbol, interval) and answers as Binance does: candles opening in
``[startTime, endTime]``, oldest first, at most ``limit`` (default 500; above 1000 spot or 1500
futures is -1130), -1121 for an unknown symbol, and the request weight used this minute in
``X-MBX-USED-WEIGHT-1M`` (its own copy of the documented weight table, plus ``other_weight``: what
others behind the same IP spent). Over ``weight_limit`` it answers 429 with ``Retry-After`` up to the
next minute. Its clock (``clock``, Unix ms) is injectable, shared with the client's in tests.

Failure modes on cue, each for the next matching request: :meth:`drop_next` (the answer is cut off
mid-body), :meth:`slow_next` (answers after a delay, for timeouts), :meth:`fail_next` (a 5xx),
:meth:`rate_limit_next` (429 + Retry-After), :meth:`ban_next` (418 + Retry-After),
:meth:`repeat_next` (the page starts some candles before ``startTime``, optionally with other
prices). ``serve_open_candle`` makes every page end with the current, still open candle (as Binance
serves it: ``closeTime`` in the future), whatever ``endTime`` says. :meth:`cut` removes candles for
good: a gap the exchange truly has. Every request is in ``calls`` (path, query parameters).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import polars as pl

from svc_engine.data.schema import conform
from tests.api.fakes.loopback import serve

MINUTE_MS = 60_000
MAX_LIMIT = {"spot": 1000, "futures": 1500}
WEIGHT_LIMIT = {"spot": 1200, "futures": 2400}
PATHS = {
    "/api/v3/klines": ("spot", "klines"),
    "/api/v3/time": ("spot", "time"),
    "/fapi/v1/klines": ("futures", "klines"),
    "/fapi/v1/time": ("futures", "time"),
}


def kline_weight(market: str, limit: int) -> int:
    """Binance's documented weight of a kline request (spot: by 100/500/1000, futures: <100/<500/<=1000)."""
    if market == "spot":
        return 1 if limit <= 100 else 2 if limit <= 500 else 5 if limit <= 1000 else 10
    return 1 if limit < 100 else 2 if limit < 500 else 5 if limit <= 1000 else 10


def make_candles(start_ms: int, count: int, step_ms: int, *, base: float = 100.0) -> list[list[Any]]:
    """``count`` candles of ``step_ms`` from ``start_ms`` in Binance's array format, distinct prices."""
    rows = []
    for i in range(count):
        t = start_ms + i * step_ms
        o = base + (i % 97) * 0.25 + i * 0.01
        c = o + (0.5 if i % 3 else -0.5)
        high, low = max(o, c) + 0.125, min(o, c) - 0.125
        rows.append(
            [
                t,
                f"{o:.8f}",
                f"{high:.8f}",
                f"{low:.8f}",
                f"{c:.8f}",
                f"{10 + i % 13:.8f}",
                t + step_ms - 1,
                "1000.0",
                42,
                "5.0",
                "500.0",
                "0",
            ]
        )
    return rows


def as_frame(rows: list[list[Any]]) -> pl.DataFrame:
    """Binance rows as the store's frame (``SCHEMA``), in their order."""
    frame = pl.DataFrame(
        {
            "open_time": [r[0] for r in rows],
            **{
                name: [float(r[i]) for r in rows]
                for i, name in enumerate(("open", "high", "low", "close", "volume"), start=1)
            },
        },
        schema_overrides={"open_time": pl.Int64},
    )
    return conform(frame)


@dataclass
class KlineFake:
    """The fake's state; ``url`` once started."""

    url: str = ""
    clock: Callable[[], int] = field(default=lambda: time.time_ns() // 1_000_000)
    candles: dict[tuple[str, str, str], list[list[Any]]] = field(default_factory=dict)
    other_weight: int = 0
    weight_limit: dict[str, int] = field(default_factory=lambda: dict(WEIGHT_LIMIT))
    serve_open_candle: bool = False
    cues: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    used: dict[tuple[str, int], int] = field(default_factory=dict)

    def add(self, symbol: str, interval: str, rows: list[list[Any]], *, futures: bool = False) -> None:
        """Hold ``rows`` (Binance arrays) for ``symbol`` and ``interval``, sorted by open time."""
        key = ("futures" if futures else "spot", symbol, interval)
        merged = {r[0]: r for r in self.candles.get(key, [])} | {r[0]: r for r in rows}
        self.candles[key] = [merged[t] for t in sorted(merged)]

    def cut(self, symbol: str, interval: str, start_ms: int, end_ms: int, *, futures: bool = False) -> None:
        """Remove the candles opening in ``[start_ms, end_ms)`` for good: a gap the exchange has."""
        key = ("futures" if futures else "spot", symbol, interval)
        self.candles[key] = [r for r in self.candles[key] if not start_ms <= r[0] < end_ms]

    def held(self, symbol: str, interval: str, *, futures: bool = False) -> list[list[Any]]:
        """The candles held for ``symbol`` and ``interval``."""
        return self.candles[("futures" if futures else "spot", symbol, interval)]

    def drop_next(self, times: int = 1, path: str | None = None) -> None:
        """Cut the next ``times`` answers off mid-body (the connection drops)."""
        self.cues += [("drop", {"path": path})] * times

    def slow_next(self, seconds: float, path: str | None = None) -> None:
        """Answer the next request only after ``seconds``."""
        self.cues.append(("slow", {"path": path, "seconds": seconds}))

    def fail_next(self, times: int = 1, status: int = 502, path: str | None = None) -> None:
        """Answer the next ``times`` requests with ``status`` (a 5xx of an overloaded exchange)."""
        self.cues += [("fail", {"path": path, "status": status})] * times

    def rate_limit_next(self, retry_after: int | None = 7, path: str | None = None) -> None:
        """Answer the next request 429 -1003 with ``Retry-After`` (seconds; ``None``: no header)."""
        self.cues.append(("limit", {"path": path, "status": 429, "retry_after": retry_after}))

    def ban_next(self, retry_after: int = 120, path: str | None = None) -> None:
        """Answer the next request 418 (this IP is banned) with ``Retry-After`` seconds."""
        self.cues.append(("limit", {"path": path, "status": 418, "retry_after": retry_after}))

    def repeat_next(self, overlap: int = 3, *, conflicting: bool = False, skip: int = 0) -> None:
        """Start a kline page (the next, or the one after ``skip`` more) ``overlap`` candles before
        ``startTime``; ``conflicting``: the repeated candles carry another close price."""
        cue = {"path": None, "overlap": overlap, "conflicting": conflicting, "skip": skip}
        self.cues.append(("repeat", cue))

    def take_cue(self, path: str, kinds: tuple[str, ...]) -> dict[str, Any] | None:
        """The first waiting cue of one of ``kinds`` for ``path``, removed; ``None`` when none."""
        for i, (kind, args) in enumerate(self.cues):
            if kind in kinds and args["path"] in (None, path):
                del self.cues[i]
                return {"kind": kind, **args}
        return None


Send = Callable[[dict[str, Any]], Any]


async def _answer(send: Send, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


def _app(fake: KlineFake) -> Callable[..., Any]:
    async def app(scope: dict[str, Any], receive: Callable[..., Any], send: Send) -> None:
        path = scope["path"]
        params = dict(parse_qsl(scope["query_string"].decode()))
        fake.calls.append((path, params))
        if path not in PATHS:
            await _answer(send, 404, {"code": -1, "msg": "not here"})
            return
        market, what = PATHS[path]
        cue = fake.take_cue(path, ("drop", "slow", "fail", "limit"))
        if cue and cue["kind"] == "slow":
            await asyncio.sleep(cue["seconds"])
        elif cue and cue["kind"] == "drop":
            head = [(b"content-type", b"application/json"), (b"content-length", b"4096")]
            await send({"type": "http.response.start", "status": 200, "headers": head})
            await send({"type": "http.response.body", "body": b"[[1704067200000,", "more_body": True})
            return  # the server closes the connection with the body unfinished
        elif cue and cue["kind"] == "fail":
            await _answer(send, cue["status"], {"code": -1001, "msg": "Internal error"})
            return
        elif cue and cue["kind"] == "limit":
            after = cue["retry_after"]
            msg = "Way too many requests; IP banned." if cue["status"] == 418 else "Too many requests."
            await _answer(
                send,
                cue["status"],
                {"code": -1003, "msg": msg},
                {} if after is None else {"Retry-After": str(after)},
            )
            return
        weight = 1 if what == "time" else kline_weight(market, int(params.get("limit", 500)))
        now = fake.clock()
        minute = (market, now // MINUTE_MS)
        used = fake.used.get(minute, 0) + weight
        fake.used[minute] = used
        header = {"X-MBX-USED-WEIGHT-1M": str(used + fake.other_weight)}
        if used + fake.other_weight > fake.weight_limit[market]:
            header["Retry-After"] = str(-(-((minute[1] + 1) * MINUTE_MS - now) // 1000))
            await _answer(send, 429, {"code": -1003, "msg": "Too many requests."}, header)
            return
        if what == "time":
            await _answer(send, 200, {"serverTime": now}, header)
            return
        status, body = _klines(fake, market, params, now)
        await _answer(send, status, body, header)

    return app


def _klines(fake: KlineFake, market: str, params: dict[str, str], now: int) -> tuple[int, Any]:
    limit = int(params.get("limit", 500))
    if not 1 <= limit <= MAX_LIMIT[market]:
        return 400, {"code": -1130, "msg": "Invalid data sent for a parameter."}
    rows = fake.candles.get((market, params.get("symbol", ""), params.get("interval", "")))
    if rows is None:
        return 400, {"code": -1121, "msg": "Invalid symbol."}
    start = int(params.get("startTime", 0))
    end = int(params.get("endTime", now))
    live = [r for r in rows if r[0] <= now]  # the exchange has nothing that has not opened yet
    begin = next((i for i, r in enumerate(live) if r[0] >= start), len(live))
    repeat = next((args for kind, args in fake.cues if kind == "repeat"), None)
    if repeat and repeat["skip"] > 0:
        repeat["skip"] -= 1
        repeat = None
    elif repeat:
        fake.take_cue("klines", ("repeat",))
    if repeat:
        begin = max(0, begin - repeat["overlap"])
    page = [r for r in live[begin:] if r[0] <= end][:limit]
    if repeat and repeat["conflicting"]:
        page = [[*r[:4], f"{float(r[4]) + 1:.8f}", *r[5:]] if r[0] < start else r for r in page]
    current = [r for r in live if r[0] <= now < r[6] + 1]
    if fake.serve_open_candle and current and current[0] not in page:
        page = [*page[: limit - 1], current[0]]
    return 200, page


@contextmanager
def running_klines(clock: Callable[[], int] | None = None) -> Iterator[KlineFake]:
    """The fake served by uvicorn on a free loopback port for the duration of the block."""
    fake = KlineFake() if clock is None else KlineFake(clock=clock)
    with serve(_app(fake), lifespan="off") as url:
        fake.url = url
        yield fake
