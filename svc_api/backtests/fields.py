"""The request field rules of backtests (the models of :mod:`svc_api.backtests.contract` apply them).

Each rule takes the raw JSON value and the field's name and returns the clean value, or raises
:class:`~svc_api.core.errors.Invalid`. A rule that reads other fields takes a :class:`Sent` (the
value with the request it came in). Request fields the spec leaves unnamed: the settings are the
engine's names (``commission_pct``, ``position_size_pct``, ``min_candles_between_signals``,
``max_wait_days``, ``min_loss_pct`` next to ``min_profit_pct``, ``max_profit_pct``,
``max_loss_pct``, ``signal_filter_mode``); the dataset namespace is ``market``; the portfolio start
is ``start_ts``; ``coin_result`` takes ``job_id`` and ``coin`` (or ``symbol``).

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

from svc_api.core.contract import Sent
from svc_api.core.errors import Invalid
from svc_api.core.fields import position_int, position_str, required_text
from svc_engine.data import TIMEFRAMES
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


def timeframe(value: Any, field: str = "timeframe") -> str:
    """The required ``timeframe`` (one of the data store's timeframes).

    Example:
        >>> timeframe("3h")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: timeframe must be one of 1m, 3m, 5m, 15m, 30m, 1h, 2h, 4h, 6h, \
8h, 12h, 1d, 3d, 1w; got '3h'
    """
    if value is None or value == "":
        raise Invalid(f"{field} is required")
    if not isinstance(value, str) or value not in TIMEFRAMES:
        raise Invalid(f"{field} must be one of {', '.join(TIMEFRAMES)}; got {value!r}")
    return str(value)


def timestamp(value: Any, field: str, *, required: bool = False) -> float | None:
    """A Unix-seconds field (a finite number), or None when absent and optional.

    Example:
        >>> timestamp("x", "start_ts")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: start_ts must be a number of Unix seconds, got 'x'
    """
    if value is None:
        if required:
            raise Invalid(f"{field} is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or abs(value) > 1e11:
        raise Invalid(f"{field} must be a number of Unix seconds, got {value!r}")
    return int(value) if float(value).is_integer() else float(value)


def coin_list(value: Any, field: str = "coins", *, lo: int = 1, hi: int = 50) -> list[str]:
    """The required ``coins`` list (``lo``..``hi`` non-empty strings).

    Example:
        >>> coin_list(["BTC"], lo=2)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: coins must list 2 to 50 coins, got 1
    """
    if value is None:
        raise Invalid(f"{field} is required")
    if not isinstance(value, list) or not all(isinstance(c, str) and c.strip() for c in value):
        raise Invalid(f"{field} must be a list of coin names such as ['BTC', 'ETH']")
    if not lo <= len(value) <= hi:
        raise Invalid(f"{field} must list {lo} to {hi} coins, got {len(value)}")
    return value


def metadata(value: Any, field: str) -> str | None:
    """An optional instrument metadata field (a string; None when absent or empty).

    Example:
        >>> metadata("crypto", "market"), metadata("", "market")
        ('crypto', None)
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Invalid(f"{field} must be a string")
    return value


def metadata_of(params: Mapping[str, Any]) -> dict[str, str]:
    """The optional instrument metadata fields of ``params`` (strings), by name.

    Example:
        >>> metadata_of({"market": "crypto", "coin": "BTC"})
        {'market': 'crypto'}
    """
    out = {}
    for name in METADATA:
        value = metadata(params.get(name), name)
        if value is not None:
            out[name] = value
    return out


def named(sent: Sent, field: str = "coin") -> Any:
    """``coin`` as sent, once the request names a ``coin`` or a ``symbol`` (their types are checked
    after the metadata, by :func:`named_types`).

    Example:
        >>> named(Sent(None, {"symbol": ""}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: coin or symbol is required
    """
    if not sent.value and not sent.request.get("symbol"):
        raise Invalid("coin or symbol is required")
    return sent.value


def named_types(sent: Sent, field: str = "symbol") -> str | None:
    """``symbol`` (None when absent), once ``coin`` and ``symbol`` are strings where sent.

    Example:
        >>> named_types(Sent(None, {"coin": 5}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: coin must be a string
    """
    for name in ("coin", "symbol"):
        value = sent.request.get(name)
        if value is not None and not isinstance(value, str):
            raise Invalid(f"{name} must be a string")
    return sent.value


def settings_from(params: Mapping[str, Any], names: Sequence[str] = SETTINGS) -> dict[str, Any]:
    """The simulation settings given in ``params`` (of ``names``), validated by the engine's ``Settings``.

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


def run_settings(sent: Sent, field: str = "commission_pct") -> Any:
    """The first setting as sent, once every setting of the request passes :func:`settings_from`
    (a ``run`` checks them before any look-up).

    Example:
        >>> run_settings(Sent(0.1, {"commission_pct": 0.1, "leverage": 200}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: leverage must be a number in (1, 125], got '200'
    """
    settings_from(sent.request, SETTINGS)
    return sent.value


def strategy_name_of(value: Any, field: str = "strategy_name") -> str:
    """The required ``strategy_name``.

    Example:
        >>> strategy_name_of(None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name is required
    """
    return required_text(value, field, hi=64)


def job_id_of(value: Any, field: str = "job_id") -> str:
    """A required job id (a string of at most 40 characters).

    Example:
        >>> job_id_of("")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: job_id is required
    """
    return required_text(value, field, hi=40)


def deleted_job(value: Any, field: str = "job_id") -> str | None:
    """The ``job_id`` a ``delete_backtest`` names (None when not sent: the legacy pair is used).

    Example:
        >>> deleted_job(""), deleted_job("bt_1")
        (None, 'bt_1')
    """
    return job_id_of(value) if value else None


def legacy_pair(sent: Sent, field: str = "strategy_name") -> str | None:
    """The legacy ``strategy_name`` of a ``delete_backtest`` without ``job_id`` (with ``backtest_key``,
    both strings); None when a ``job_id`` is sent.

    Example:
        >>> legacy_pair(Sent(None, {}))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: give job_id, or strategy_name and backtest_key
    """
    request = sent.request
    if request.get("job_id"):
        return None
    name, key = sent.value, request.get("backtest_key")
    if not (name and key):
        raise Invalid("give job_id, or strategy_name and backtest_key")
    if not isinstance(name, str) or not isinstance(key, str):
        raise Invalid("strategy_name and backtest_key must be strings")
    return name


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
