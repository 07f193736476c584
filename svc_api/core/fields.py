"""Request field validators, declared once and used by every route: symbols, timeframes, times,
page sizes and numbers, cursor positions, coin lists, names, text lengths and URLs.

Each takes the raw JSON or query value and returns the clean value, or raises
:class:`~svc_api.core.errors.Invalid` (a 400 whose message names the field and quotes at most a short
prefix of what was sent).

Example:
    >>> check_name("btcusdt", "symbol"), page_number("2"), parse_timeframe("60")
    ('BTCUSDT', 2, '1h')
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from svc_api.core.errors import Invalid
from svc_engine.data import TIMEFRAMES

_NAME = re.compile(r"^[A-Z0-9]{1,32}$")
_DIGITS = re.compile(r"^[0-9]{1,12}$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]{2,}$")
# NUL, the other control characters and the bidirectional overrides make an address that reads
# differently from what it is (spoofing in admin views and mails): never part of an e-mail.
_HIDDEN = re.compile("[\x00-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def position_int(position: Mapping[str, Any], key: str) -> int:
    """An integer field of a decoded cursor position (400 when the cursor was not made for this list).

    Example:
        >>> position_int({"t": 5}, "t")
        5
    """
    value = position.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Invalid("cursor is not valid for this list")
    return value


def position_str(position: Mapping[str, Any], key: str) -> str:
    """A string field of a decoded cursor position (400 when the cursor was not made for this list).

    Example:
        >>> position_str({"i": "x"}, "i")
        'x'
    """
    value = position.get(key)
    if not isinstance(value, str):
        raise Invalid("cursor is not valid for this list")
    return value


def text(value: object, field: str, *, lo: int = 1, hi: int, required: bool = True) -> str | None:
    """A string of ``lo``..``hi`` characters (None when absent and optional).

    Example:
        >>> text("api", "platform", hi=32)
        'api'
        >>> text("", "platform", hi=32)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: platform must be a string of 1-32 characters
    """
    if value is None and not required:
        return None
    if not isinstance(value, str) or not lo <= len(value) <= hi:
        raise Invalid(f"{field} must be a string of {lo}-{hi} characters")
    return value


def required_text(value: object, field: str, *, hi: int) -> str:
    """A required, non-empty string of at most ``hi`` characters (a name, an id); else 400.

    Example:
        >>> required_text("bt_1", "job_id", hi=40)
        'bt_1'
        >>> required_text("", "job_id", hi=40)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: job_id is required
    """
    if value is None or value == "":
        raise Invalid(f"{field} is required")
    if not isinstance(value, str) or len(value) > hi:
        raise Invalid(f"{field} must be a string of at most {hi} characters")
    return value


def string_list(value: object, field: str, *, what: str = "strings") -> list[str]:
    """A JSON list whose items are all strings (empty allowed); else 400 naming ``what`` it lists.

    Example:
        >>> string_list(["BTC", "ETH"], "coins")
        ['BTC', 'ETH']
        >>> string_list("BTC", "coins", what="coin names")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: coins must be a list of coin names
    """
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Invalid(f"{field} must be a list of {what}")
    return value


def check_name(value: object, field: str, *, required: bool = True) -> str | None:
    """An upper-cased alphanumeric symbol (1-32 characters), None when absent and optional; else 400.

    Example:
        >>> check_name("btcusdt", "symbol"), check_name(None, "search", required=False)
        ('BTCUSDT', None)
    """
    if value is None or value == "":
        if required:
            raise Invalid(f"{field} is required")
        return None
    if not isinstance(value, str) or not _NAME.match(value.strip().upper()):
        raise Invalid(f"{field} must be 1-32 letters or digits, got {value!r}")
    return value.strip().upper()


def page_number(value: object) -> int:
    """A page index (default 0); a non-integer or negative value is a 400.

    Example:
        >>> page_number(None), page_number("3")
        (0, 3)
    """
    if value is None or value == "":
        return 0
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise Invalid(f"page must be an integer >= 0, got {value!r}")
    return int(text)


def last_page(total: int, limit: int) -> int:
    """The index of the last page (pages count from 0; 0 when there is nothing).

    Example:
        >>> last_page(0, 50), last_page(50, 50), last_page(51, 50)
        (0, 0, 1)
    """
    return max(0, math.ceil(total / limit) - 1)


def parse_timeframe(value: object) -> str:
    """A timeframe given as minutes (``"60"``) or by name (``"1h"``); else 400.

    Example:
        >>> parse_timeframe("1440")
        '1d'
    """
    text = str(value).strip() if value is not None else ""
    if text.isdigit():
        for name, ms in TIMEFRAMES.items():
            if ms == int(text) * 60_000:
                return name
    elif text in TIMEFRAMES:
        return text
    minutes = ", ".join(str(ms // 60_000) for ms in TIMEFRAMES.values())
    raise Invalid(f"timeframe must be minutes ({minutes}) or a name such as 1h, got {value!r}")


def parse_seconds(value: object, field: str) -> int:
    """Unix seconds given as an integer or a string of digits; else 400.

    Example:
        >>> parse_seconds("1700000000", "timestamp")
        1700000000
    """
    text = str(value).strip() if value is not None and not isinstance(value, bool) else ""
    if not _DIGITS.match(text):
        raise Invalid(f"{field} must be Unix seconds (digits), got {value!r}")
    return int(text)


def non_empty(value: object, field: str) -> str:
    """A required string of at least one character (an id sent back by a client); else 400.

    Example:
        >>> non_empty("n1", "notification_id")
        'n1'
        >>> non_empty("", "notification_id")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: notification_id must be a non-empty string
    """
    if not isinstance(value, str) or not value:
        raise Invalid(f"{field} must be a non-empty string")
    return value


def email_address(value: object, field: str = "email") -> str:
    """An e-mail address (at most 320 characters), trimmed and lower-cased; else 400.

    Example:
        >>> email_address(" Ana@Example.com ")
        'ana@example.com'
        >>> email_address("ana")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: email must be a valid e-mail address
    """
    if not isinstance(value, str) or len(value) > 320 or _HIDDEN.search(value):
        raise Invalid(f"{field} must be a valid e-mail address")
    if not _EMAIL.match(value.strip()):
        raise Invalid(f"{field} must be a valid e-mail address")
    return value.strip().lower()


def market_type(value: object) -> str:
    """``spot`` (default) or ``futures``; anything else is a 400.

    Example:
        >>> market_type(None), market_type("futures")
        ('spot', 'futures')
    """
    if value is None or value == "":
        return "spot"
    if value not in ("spot", "futures"):
        raise Invalid(f"market must be spot or futures, got {value!r}")
    return str(value)


def symbol_list(value: object, field: str) -> list[str]:
    """A comma-separated list of symbols, each checked as by :func:`check_name` (empty parts skipped).

    Example:
        >>> symbol_list("btcusdt, ETHUSDT,", "priority"), symbol_list(None, "priority")
        (['BTCUSDT', 'ETHUSDT'], [])
    """
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        raise Invalid(f"{field} must be a comma-separated list of symbols")
    names = [check_name(part, field) for part in value.split(",") if part.strip()]
    return [n for n in names if n is not None]


def unix_ms(value: object, field: str) -> int | None:
    """An optional non-negative integer of Unix milliseconds (None when absent); else 400.

    Example:
        >>> unix_ms("1700000000000", "start_time"), unix_ms(None, "end_time")
        (1700000000000, None)
    """
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise Invalid(f"{field} must be Unix milliseconds (a non-negative integer), got {value!r}")
    return int(text)


def listed_timeframe(value: object, field: str) -> str:
    """One of the data store's timeframes by name (``1h``), for fields named otherwise; else 400.

    Example:
        >>> listed_timeframe("4h", "graph_type")
        '4h'
        >>> listed_timeframe("60", "graph_type")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: graph_type must be a timeframe as in the list (1m, 3m, 5m, 15m, 30m, \
1h, 2h, 4h, 6h, 8h, 12h, 1d, 3d, 1w), got '60'
    """
    if value not in TIMEFRAMES:
        raise Invalid(f"{field} must be a timeframe as in the list ({', '.join(TIMEFRAMES)}), got {value!r}")
    return str(value)


def require(params: Mapping[str, Any], *names: str) -> None:
    """A 400 naming every field of ``names`` that is absent or empty in ``params``.

    Example:
        >>> require({"coin_name": "BTC", "timestamp": ""}, "coin_name", "graph_type", "timestamp")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: missing required fields: graph_type, timestamp
    """
    missing = [name for name in names if params.get(name) in (None, "")]
    if missing:
        raise Invalid(f"missing required fields: {', '.join(missing)}")


def https_url(value: object, field: str, *, hi: int = 2048) -> str:
    """An absolute ``https://`` URL with a host, at most ``hi`` characters, no spaces; else 400.

    Example:
        >>> https_url("https://cdn.example.com/a.png", "image_url")
        'https://cdn.example.com/a.png'
        >>> https_url("http://cdn.example.com/a.png", "image_url")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: image_url must be an https:// URL of at most 2048 characters
    """
    ok = isinstance(value, str) and len(value) <= hi and not any(c.isspace() for c in value)
    parts = urlsplit(value) if ok and isinstance(value, str) else None
    if parts is None or parts.scheme != "https" or not parts.hostname:
        raise Invalid(f"{field} must be an https:// URL of at most {hi} characters")
    return str(value)
