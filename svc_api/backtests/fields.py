"""The request fields of backtests that the shared validators (svc_api.core.fields) do not cover.

Request fields the spec leaves unnamed: the settings are the engine's names (``commission_pct``,
``position_size_pct``, ``min_candles_between_signals``, ``max_wait_days``, ``min_loss_pct`` next to
``min_profit_pct``, ``max_profit_pct``, ``max_loss_pct``, ``signal_filter_mode``); the dataset
namespace is ``market``; the portfolio start is ``start_ts``; ``coin_result`` takes ``job_id`` and
``coin`` (or ``symbol``).

Example:
    >>> settings_from({"commission_pct": 0.1, "coin": "BTC"})
    {'commission_pct': 0.1}
    >>> settings_from({"max_wait_days": 0})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: max_wait_days must be a finite number > 0 (got 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from svc_api.core.errors import Invalid
from svc_api.core.fields import position_int, position_str, required_text
from svc_engine.sim import Settings

SETTINGS = (
    "commission_pct",
    "position_size_pct",
    "min_candles_between_signals",
    "max_wait_days",
    "min_profit_pct",
    "max_profit_pct",
    "min_loss_pct",
    "max_loss_pct",
    "signal_filter_mode",
    "initial_balance",
    "leverage",
)
BOUNDS = {"initial_balance": (0.0, 1e12), "leverage": (1.0, 125.0)}
"""The API's bounds (exclusive low for the balance, inclusive otherwise) on settings the engine
would take wider: a balance must be positive, leverage at most an exchange's 125x."""
PORTFOLIO_SETTINGS = ("commission_pct",)
METADATA = ("asset_class", "provider", "market", "exchange")
KINDS = ("run", "full_range", "portfolio")
MAX_DIVIDE = 20


def settings_from(params: Mapping[str, Any], names: Sequence[str] = SETTINGS) -> dict[str, Any]:
    """The simulation settings given in the request, validated by the engine's ``Settings``.

    Example:
        >>> settings_from({"signal_filter_mode": "reject"})
        {'signal_filter_mode': 'reject'}
    """
    given = {name: params[name] for name in names if params.get(name) is not None}
    for name, (low, high) in BOUNDS.items():
        value = given.get(name)
        if value is None:
            continue
        number = not isinstance(value, bool) and isinstance(value, int | float)
        inside = number and (low < value <= high or (name == "leverage" and value == low))
        if not inside:
            raise Invalid(f"{name} must be a number in ({low:g}, {high:g}], got {str(value)[:40]!r}")
    try:
        Settings.from_kwargs(**given)
    except ValueError as error:
        raise Invalid(str(error)) from None
    return given


def metadata_of(params: Mapping[str, Any]) -> dict[str, str]:
    """The optional instrument metadata fields (strings).

    Example:
        >>> metadata_of({"market": "crypto", "coin": "BTC"})
        {'market': 'crypto'}
    """
    out = {}
    for name in METADATA:
        value = params.get(name)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise Invalid(f"{name} must be a string")
        out[name] = value
    return out


def strategy_name_of(params: Mapping[str, Any]) -> str:
    """The required ``strategy_name``.

    Example:
        >>> strategy_name_of({})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name is required
    """
    return required_text(params.get("strategy_name"), "strategy_name", hi=64)


def job_id_of(value: Any) -> str:
    """A required job id (a string of at most 40 characters).

    Example:
        >>> job_id_of("")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: job_id is required
    """
    return required_text(value, "job_id", hi=40)


def divide_of(value: Any, coins: int) -> int:
    """A portfolio's ``divide``: 1 to 20 (default: one slot per coin, at most 20).

    Example:
        >>> divide_of(None, 3), divide_of(4, 3)
        (3, 4)
    """
    if value is None:
        return min(coins, MAX_DIVIDE)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DIVIDE:
        raise Invalid(f"divide must be an integer from 1 to 20, got {value!r}")
    return value


def initial_balance_of(value: Any) -> float:
    """A portfolio's ``initial_balance``: a positive number (default 100).

    Example:
        >>> initial_balance_of(None), initial_balance_of(1000)
        (100.0, 1000.0)
    """
    if value is None:
        return 100.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e12:
        raise Invalid(f"initial_balance must be a positive number, got {value!r}")
    return float(value)


def history_after(position: Mapping[str, Any] | None) -> tuple[int, str] | None:
    """The ``(created_at, job_id)`` a history cursor points after (None on the first page).

    Example:
        >>> history_after({"t": 5, "i": "bt_1"}), history_after(None)
        ((5, 'bt_1'), None)
    """
    if position is None:
        return None
    return position_int(position, "t"), position_str(position, "i")


def optional_name(value: Any) -> str | None:
    """An optional ``strategy_name`` filter (None when absent or empty).

    Example:
        >>> optional_name(""), optional_name("alpha")
        (None, 'alpha')
    """
    name = value or None
    if name is not None and not isinstance(name, str):
        raise Invalid("strategy_name must be a string")
    return name
