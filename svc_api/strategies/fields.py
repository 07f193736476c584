"""The request fields of strategies: the name, the generation settings, the conditions, publishing.

Each check takes the raw JSON value and returns the clean one, or raises
:class:`~svc_api.core.errors.Invalid` naming the field.

Example:
    >>> check_name("rsidip1")
    'rsidip1'
    >>> generation_fields({"market_type": "spot", "signal_mode": "signal_only", "timeframe": "1h",
    ...                    "entry_condition": " close is above SMA(50) "})["entry_condition"]
    'close is above SMA(50)'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

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


def generation_fields(params: Mapping[str, Any]) -> dict[str, Any]:
    """Market type, position side, signal mode, timeframe and conditions of a new strategy.

    Example:
        >>> generation_fields({"market_type": "spot", "signal_mode": "full", "timeframe": "1h",
        ...                    "position_side": "short"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: a spot strategy cannot go short; use market_type 'futures'
    """
    market_type = params.get("market_type")
    if market_type not in MARKET_TYPES:
        raise Invalid(f"market_type is required: 'spot' or 'futures', got {market_type!r}")
    signal_mode = params.get("signal_mode")
    if signal_mode not in SIGNAL_MODES:
        raise Invalid(f"signal_mode is required: one of {', '.join(SIGNAL_MODES)}, got {signal_mode!r}")
    timeframe = params.get("timeframe")
    if not isinstance(timeframe, str) or timeframe not in TIMEFRAMES:
        raise Invalid(f"timeframe is required: one of {', '.join(TIMEFRAMES)}, got {timeframe!r}")
    side = _position_side(params.get("position_side"), market_type, signal_mode)
    spec = {
        "market_type": market_type,
        "position_side": side,
        "signal_mode": signal_mode,
        "timeframe": timeframe,
    }
    return spec | conditions(params, signal_mode)


def _position_side(side: Any, market_type: str, signal_mode: str) -> str:
    if side is None and market_type == "futures" and signal_mode == "signal_orders":
        raise Invalid("position_side is required for futures signal_orders: 'long' or 'short'")
    side = "long" if side is None else side
    if side not in POSITION_SIDES:
        raise Invalid(f"position_side must be 'long' or 'short', got {side!r}")
    if market_type == "spot" and side == "short":
        raise Invalid("a spot strategy cannot go short; use market_type 'futures'")
    return str(side)


def conditions(params: Mapping[str, Any], signal_mode: str) -> dict[str, str | None]:
    """The conditions, stripped; entry always and TP/SL for ``signal_orders`` are required; an empty
    ``exit_condition`` means none.

    Example:
        >>> conditions({"entry_condition": "close is above SMA(50)"}, "signal_orders")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: tp_condition is required for signal_orders
    """
    out: dict[str, str | None] = {}
    for field in CONDITIONS:
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


def condition_changes(params: Mapping[str, Any]) -> dict[str, Any]:
    """The conditions an edit gives (at least one; ``exit_condition: ""`` removes the exit rule).

    Example:
        >>> condition_changes({"tp_condition": "2%", "sl_condition": None})
        {'tp_condition': '2%'}
    """
    changes = {f: params[f] for f in CONDITIONS if params.get(f) is not None}
    if not changes:
        raise Invalid(f"give at least one of {', '.join(CONDITIONS)}")
    return changes


def target_version(value: Any) -> int:
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


def confirmed_name(strategy_name: Any, confirm_name: Any) -> str:
    """The name of a strategy to delete, repeated exactly in ``confirm_name``.

    Example:
        >>> confirmed_name("rsidip", "rsidlp")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: confirm_name must exactly equal strategy_name to delete 'rsidip'
    """
    name = check_name(strategy_name)
    if confirm_name is None or confirm_name == "":
        raise Invalid(f"confirm_name is required: repeat the strategy name {name!r} to delete it")
    if confirm_name != name:
        raise Invalid(f"confirm_name must exactly equal strategy_name to delete {name!r}")
    return name


def visibility_of(params: Mapping[str, Any]) -> str:
    """The requested ``visibility``: ``public`` or ``private``.

    Example:
        >>> visibility_of({"visibility": "open"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: visibility must be 'public' or 'private', got 'open'
    """
    visibility = params.get("visibility")
    if visibility not in VISIBILITIES:
        raise Invalid(f"visibility must be 'public' or 'private', got {visibility!r}")
    return str(visibility)


def public_fields(params: Mapping[str, Any]) -> tuple[int, str, list[str]]:
    """Price (credit units), timeframe and coins (upper-cased, once each) of a ``public`` request.

    Example:
        >>> public_fields({"credits_per_signal": 0.5, "timeframe": "1h", "coins": ["btc", "BTC"]})
        (5000, '1h', ['BTC'])
    """
    missing = [f for f in ("credits_per_signal", "timeframe", "coins") if params.get(f) in (None, "", [])]
    if missing:
        raise Invalid(f"visibility public needs {', '.join(missing)}")
    price = _price(params["credits_per_signal"])
    timeframe = params["timeframe"]
    if not isinstance(timeframe, str) or timeframe not in TIMEFRAMES:
        raise Invalid(f"timeframe must be one of {', '.join(TIMEFRAMES)}, got {timeframe!r}")
    coins = string_list(params["coins"], "coins", what="coin names")
    names = list(dict.fromkeys(c.strip().upper() for c in coins))
    bad = [c for c in names if _COIN.fullmatch(c) is None]
    if bad:
        raise Invalid(f"invalid coin name(s): {', '.join(bad)}")
    return price, timeframe, names


def _price(raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise Invalid("credits_per_signal must be a number from 0.01 to 10")
    price = credits.to_units(raw)
    if not credits.to_units("0.01") <= price <= credits.to_units(10):
        raise Invalid(f"credits_per_signal must be from 0.01 to 10, got {raw!r}")
    return price
