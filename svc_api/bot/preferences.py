"""Signal preferences of a chat's account: which strategies and coins reach the chat, a mute for a
while, the automation mode (``notify``: signals only; ``ask``: each signal offers to place an order)
and the position size the order button sizes its OCO by.

Example:
    >>> p = Preferences(strategies=("trend",), coins=(), muted_until=0, mode="ask", order_usdt="100")
    >>> p.lets_through("trend", "BTC", now=5), p.lets_through("other", "BTC", now=5)
    (True, False)
    >>> parse_duration("2h"), parse_duration("30m"), parse_duration("1d"), parse_duration("soon")
    (7200, 1800, 86400, None)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.bot import queries
from svc_api.bot.texts import when

MODES = ("notify", "ask")
_DURATION = re.compile(r"^(\d{1,4})([mhd])$")
_UNITS = {"m": 60, "h": 3600, "d": 86_400}
MAX_MUTE = 30 * 86_400

_MODE_TEXT = {"ask": "each signal offers an order"}


@dataclass(frozen=True)
class Preferences:
    """One account's preferences (empty ``strategies`` or ``coins``: all of them)."""

    strategies: tuple[str, ...]
    coins: tuple[str, ...]
    muted_until: int
    mode: str
    order_usdt: str

    def lets_through(self, strategy: str, coin: str, *, now: int) -> bool:
        """Whether a signal of ``strategy`` on ``coin`` reaches the chat at ``now``."""
        if self.muted_until > now:
            return False
        if self.strategies and strategy not in self.strategies:
            return False
        return not self.coins or coin.upper() in self.coins

    def describe(self, now: int) -> str:
        """The preferences in words."""
        mute = f"muted until {when(self.muted_until)}" if self.muted_until > now else "not muted"
        return "\n".join(
            [
                f"Strategies: {', '.join(self.strategies) or 'all'}",
                f"Coins: {', '.join(self.coins) or 'all'}",
                f"Signals: {mute}",
                f"Mode: {self.mode} ({_MODE_TEXT.get(self.mode, 'signals only')})",
                f"Order size: {self.order_usdt} USDT",
            ]
        )


DEFAULT = Preferences((), (), 0, "notify", "100")


def _split(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split(",") if part)


def preferences_of(conn: Connection, svc_ids: list[str]) -> dict[str, Preferences]:
    """The preferences of each of ``svc_ids`` (the defaults for those who set none)."""
    rows = queries.preferences_of(conn, svc_ids)
    out = {}
    for svc_id in svc_ids:
        r = rows.get(svc_id)
        out[svc_id] = (
            DEFAULT
            if r is None
            else Preferences(_split(r.strategies), _split(r.coins), int(r.muted_until), r.mode, r.order_usdt)
        )
    return out


def parse_duration(text: str) -> int | None:
    """Seconds of ``<n>m``, ``<n>h`` or ``<n>d`` (None when it is not one)."""
    match = _DURATION.match(text.strip().lower())
    return None if match is None else int(match.group(1)) * _UNITS[match.group(2)]


def change(conn: Connection, svc_id: str, args: list[str], *, now: int) -> str | None:
    """Apply a ``/signals`` sub-command; None when it is done, else what is wrong with it."""
    if not args:
        return None
    verb, rest = args[0].lower(), args[1:]
    values: dict[str, Any]
    if verb in ("strategies", "coins"):
        items = ",".join(rest).replace(" ", "")
        names = () if items.lower() in ("", "all") else _split(items)
        if verb == "coins":
            names = tuple(n.upper() for n in names)
        if any(not re.fullmatch(r"[A-Za-z0-9_]{1,40}", n) for n in names) or len(names) > 50:
            return f"Give up to 50 {verb} separated by commas, or 'all'."
        values = {verb: ",".join(dict.fromkeys(names))}
    elif verb == "mute":
        seconds = parse_duration(rest[0]) if rest else None
        if seconds is None or not 0 < seconds <= MAX_MUTE:
            return "Say for how long, up to 30 days: /signals mute 2h (m, h or d)."
        values = {"muted_until": now + seconds}
    elif verb == "unmute":
        values = {"muted_until": 0}
    elif verb == "mode":
        if not rest or rest[0].lower() not in MODES:
            return "The mode is notify (signals only) or ask (each signal offers an order)."
        values = {"mode": rest[0].lower()}
    elif verb == "size":
        try:
            size = Decimal(rest[0]) if rest else Decimal(0)
        except InvalidOperation:
            size = Decimal(0)
        if not Decimal(1) <= size <= Decimal(10) ** 7:
            return "The order size is a number of USDT from 1 to 10,000,000: /signals size 250."
        values = {"order_usdt": format(size.normalize(), "f")}
    else:
        return "Unknown setting. Use strategies, coins, mute, unmute, mode or size."
    queries.set_preferences(conn, svc_id, values)
    return None


def set_values(conn: Connection, svc_id: str, values: dict[str, Any]) -> None:
    """Change preferences directly (the buttons of ``/signals``)."""
    queries.set_preferences(conn, svc_id, values)
