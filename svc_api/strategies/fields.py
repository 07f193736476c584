"""The request field rules of strategies: the name, the generation settings, the conditions, publishing.

Each rule takes the raw JSON value (and the field's name, as :class:`~svc_api.core.contract.Check`
calls it) and returns the clean one, or raises :class:`~svc_api.core.errors.Invalid` naming the
field. A rule that depends on other fields of the request takes a :class:`Sent` (the value with the
request it came in); the request models of :mod:`svc_api.strategies.contract` hand it over.

Example:
    >>> check_name("rsidip1")
    'rsidip1'
    >>> condition(Sent(" close is above SMA(50) ", {"signal_mode": "full"}), "entry_condition")
    'close is above SMA(50)'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from svc_api.core.contract import Sent
from svc_api.core.errors import Invalid
from svc_api.core.fields import string_list
from svc_api.credits import service as credits
from svc_engine.data.schema import TIMEFRAMES

MARKET_TYPES = ("spot", "futures")
SIGNAL_MODES = ("signal_orders", "signal_only", "full")
POSITION_SIDES = ("long", "short")
VISIBILITIES = ("public", "private")
CONDITIONS = ("entry_condition", "tp_condition", "sl_condition", "exit_condition")
"""The conditions in words a version holds; ``exit_condition`` (optional, never required) says when an
open position leaves besides its TP/SL (docs/exits.md)."""
MAX_CONDITION_CHARS = 1000
PUBLIC_FIELDS = ("credits_per_signal", "timeframe", "coins")
_NAME = re.compile(r"[a-z0-9]{4,20}")
_COIN = re.compile(r"[A-Z0-9][A-Z0-9._/\-]{0,29}")


def check_name(value: Any, field: str = "strategy_name") -> str:
    """A valid strategy name: 4-20 lowercase letters and digits, at least one letter.

    Example:
        >>> check_name("1234")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name must contain at least one letter
    """
    if value is None or value == "":
        raise Invalid(f"{field} is required")
    if not isinstance(value, str) or _NAME.fullmatch(value) is None:
        raise Invalid(f"{field} must be 4-20 lowercase letters or digits (no spaces), got {value!r}")
    if not any(ch.isalpha() for ch in value):
        raise Invalid(f"{field} must contain at least one letter")
    return value


def market_type(value: Any, field: str = "market_type") -> str:
    """``spot`` or ``futures`` (required).

    Example:
        >>> market_type("margin")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: market_type is required: 'spot' or 'futures', got 'margin'
    """
    if value not in MARKET_TYPES:
        raise Invalid(f"market_type is required: 'spot' or 'futures', got {value!r}")
    return str(value)


def signal_mode(value: Any, field: str = "signal_mode") -> str:
    """One of :data:`SIGNAL_MODES` (required).

    Example:
        >>> signal_mode("full")
        'full'
    """
    if value not in SIGNAL_MODES:
        raise Invalid(f"signal_mode is required: one of {', '.join(SIGNAL_MODES)}, got {value!r}")
    return str(value)


def timeframe(value: Any, field: str = "timeframe") -> str:
    """A new strategy's timeframe, one of the data store's (required).

    Example:
        >>> timeframe(60)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: timeframe is required: one of 1m, 3m, 5m, 15m, 30m, 1h, 2h, 4h, 6h, \
8h, 12h, 1d, 3d, 1w, got 60
    """
    if not isinstance(value, str) or value not in TIMEFRAMES:
        raise Invalid(f"timeframe is required: one of {', '.join(TIMEFRAMES)}, got {value!r}")
    return value


def position_side(sent: Sent, field: str = "position_side") -> str:
    """``long`` (default) or ``short``; required for futures ``signal_orders``, never short on spot.

    Example:
        >>> position_side(Sent(None, {"market_type": "spot", "signal_mode": "full"}))
        'long'
        >>> position_side(Sent("short", {"market_type": "spot", "signal_mode": "full"}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: a spot strategy cannot go short; use market_type 'futures'
    """
    side, kind, mode = sent.value, sent.request.get("market_type"), sent.request.get("signal_mode")
    if side is None and kind == "futures" and mode == "signal_orders":
        raise Invalid("position_side is required for futures signal_orders: 'long' or 'short'")
    side = "long" if side is None else side
    if side not in POSITION_SIDES:
        raise Invalid(f"position_side must be 'long' or 'short', got {side!r}")
    if kind == "spot" and side == "short":
        raise Invalid("a spot strategy cannot go short; use market_type 'futures'")
    return str(side)


def condition(sent: Sent, field: str) -> str | None:
    """A condition in words, stripped (None when absent or blank); entry always and TP/SL for the
    request's ``signal_orders`` are required.

    Example:
        >>> condition(Sent(None, {"signal_mode": "signal_orders"}), "tp_condition")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: tp_condition is required for signal_orders
    """
    return conditions({field: sent.value}, str(sent.request.get("signal_mode")), (field,))[field]


def conditions(
    params: Mapping[str, Any], signal_mode: str, names: tuple[str, ...] = CONDITIONS
) -> dict[str, str | None]:
    """The conditions ``names``, stripped; entry always and TP/SL for ``signal_orders`` are required;
    an empty ``exit_condition`` means none.

    Example:
        >>> conditions({"entry_condition": "close is above SMA(50)"}, "signal_orders")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: tp_condition is required for signal_orders
    """
    out: dict[str, str | None] = {}
    for field in names:
        value = params.get(field)
        level = field in ("tp_condition", "sl_condition")
        required = field == "entry_condition" or (signal_mode == "signal_orders" and level)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                why = "" if field == "entry_condition" else " for signal_orders"
                raise Invalid(f"{field} is required{why}")
            out[field] = None
            continue
        if not isinstance(value, str):
            raise Invalid(f"{field} must be a string (the condition in words)")
        if len(value) > MAX_CONDITION_CHARS:
            raise Invalid(f"{field} must be at most {MAX_CONDITION_CHARS} characters")
        out[field] = value.strip()
    return out


def some_condition(sent: Sent, field: str) -> Any:
    """The value of ``field`` as sent, once the request gives at least one condition to change (an
    edit; ``exit_condition: ""`` removes the exit rule).

    Example:
        >>> some_condition(Sent(None, {"tp_condition": "2%"}), "entry_condition") is None
        True
        >>> some_condition(Sent(None, {}), "entry_condition")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: give at least one of entry_condition, tp_condition, ...
    """
    if all(sent.request.get(f) is None for f in CONDITIONS):
        raise Invalid(f"give at least one of {', '.join(CONDITIONS)}")
    return sent.value


def target_version(value: Any, field: str = "target_version") -> int:
    """The version a rollback copies: a positive integer.

    Example:
        >>> target_version("2")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: target_version must be a positive integer
    """
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise Invalid("target_version must be a positive integer")
    return value


def confirm_name(sent: Sent, field: str = "confirm_name") -> str:
    """The request's (checked) ``strategy_name`` repeated exactly, to delete it.

    Example:
        >>> confirm_name(Sent("rsidlp", {"strategy_name": "rsidip"}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: confirm_name must exactly equal strategy_name to delete 'rsidip'
    """
    name, value = sent.request.get("strategy_name"), sent.value
    if value is None or value == "":
        raise Invalid(f"confirm_name is required: repeat the strategy name {name!r} to delete it")
    if value != name:
        raise Invalid(f"confirm_name must exactly equal strategy_name to delete {name!r}")
    return str(value)


def visibility(value: Any, field: str = "visibility") -> str:
    """The requested ``visibility``: ``public`` or ``private``.

    Example:
        >>> visibility("open")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: visibility must be 'public' or 'private', got 'open'
    """
    if value not in VISIBILITIES:
        raise Invalid(f"visibility must be 'public' or 'private', got {value!r}")
    return str(value)


def public_price(sent: Sent, field: str = "credits_per_signal") -> int | None:
    """The price (credit units) of a ``public`` request, once it gives every public field (None
    when going private: the public fields are not read then).

    Example:
        >>> public_price(Sent(0.5, {"visibility": "public", "credits_per_signal": 0.5, "timeframe": "1h",
        ...                         "coins": ["BTC"]}))
        5000
        >>> public_price(Sent(None, {"visibility": "public"}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: visibility public needs credits_per_signal, timeframe, coins
    """
    if sent.request.get("visibility") != "public":
        return None
    missing = [f for f in PUBLIC_FIELDS if sent.request.get(f) in (None, "", [])]
    if missing:
        raise Invalid(f"visibility public needs {', '.join(missing)}")
    raw = sent.value
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise Invalid("credits_per_signal must be a number from 0.01 to 10")
    price = credits.to_units(raw)
    if not credits.to_units("0.01") <= price <= credits.to_units(10):
        raise Invalid(f"credits_per_signal must be from 0.01 to 10, got {raw!r}")
    return price


def public_timeframe(sent: Sent, field: str = "timeframe") -> str | None:
    """The timeframe of a ``public`` request (None when going private).

    Example:
        >>> public_timeframe(Sent("1h", {"visibility": "public"}))
        '1h'
    """
    if sent.request.get("visibility") != "public":
        return None
    value = sent.value
    if not isinstance(value, str) or value not in TIMEFRAMES:
        raise Invalid(f"timeframe must be one of {', '.join(TIMEFRAMES)}, got {value!r}")
    return value


def public_coins(sent: Sent, field: str = "coins") -> list[str] | None:
    """The coins of a ``public`` request, upper-cased, once each (None when going private).

    Example:
        >>> public_coins(Sent(["btc", "BTC", "eth"], {"visibility": "public"}))
        ['BTC', 'ETH']
    """
    if sent.request.get("visibility") != "public":
        return None
    coins = string_list(sent.value, "coins", what="coin names")
    names = list(dict.fromkeys(c.strip().upper() for c in coins))
    bad = [c for c in names if _COIN.fullmatch(c) is None]
    if bad:
        raise Invalid(f"invalid coin name(s): {', '.join(bad)}")
    return names
