"""The request and reply models of the live signal operations (``/user`` ``active_signals`` and
``signal_history``).

Example:
    >>> ActiveSignalsRequest.model_validate({"strategy_name": "Breakout"}).strategy_name
    ['Breakout']
    >>> SignalHistoryRequest.model_validate({"filters": {"owner": "me"}, "page_size": "10"}).page_size
    10
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from svc_api.core.contract import Check, Fields, Shape
from svc_api.core.cursors import page_size
from svc_api.core.errors import Invalid
from svc_api.core.params import Cursor, Limit, UserPage

HISTORY_FILTERS = ("coin", "strategy_name", "owner")
OWNERS = ("me", "subscribed")


def _names(value: Any, name: str) -> list[str] | None:
    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise Invalid("strategy_name must be a strategy name or a non-empty list of them")
    return names


def _filters(value: Any, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or any(k not in HISTORY_FILTERS for k in value):
        raise Invalid(f"filters must be an object of {', '.join(HISTORY_FILTERS)}")
    if not all(isinstance(v, str) and v for v in value.values()):
        raise Invalid("each filter must be a non-empty string")
    if "owner" in value and value["owner"] not in OWNERS:
        raise Invalid(f"filters.owner must be one of {', '.join(OWNERS)}, got {value['owner']!r}")
    return dict(value)


def _history_size(value: object, name: str) -> int:
    # The messages have always named the field ``limit``; kept so error bodies stay as they were.
    return page_size(value, 20, 1, 50)


StrategyNames = Annotated[
    list[str] | None,
    Check(
        _names,
        {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
                {"type": "null"},
            ],
            "description": "Only these strategies: a name or a non-empty list of names.",
        },
    ),
]
NON_EMPTY = {"type": "string", "minLength": 1}
Filters = Annotated[
    dict[str, str],
    Check(
        _filters,
        {
            "type": ["object", "null"],
            "properties": {
                "coin": NON_EMPTY,
                "strategy_name": NON_EMPTY,
                "owner": {"enum": list(OWNERS)},
            },
            "additionalProperties": False,
            "description": "Keep only the closed signals matching every filter given.",
        },
    ),
]


class ActiveSignalsRequest(Fields):
    """``active_signals``: the caller's live signals, newest first."""

    strategy_name: StrategyNames
    limit: Limit(25, 1, 50)
    cursor: Cursor


class SignalHistoryRequest(Fields):
    """``signal_history``: the caller's closed signals, newest first."""

    filters: Filters
    page_size: Annotated[
        int,
        Check(
            _history_size,
            {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 20,
                "description": "Page size, 1-50.",
            },
        ),
    ]
    cursor: Cursor


class Signal(Shape):
    """A live (``active_signals``) or closed (``signal_history``) signal."""

    position_key: str | None = None
    closed_key: str | None = None
    """Closed signals only."""
    coin: str
    strategy_name: str
    owner: str | None = None
    side: Literal["LONG", "SHORT"]
    signal_mode: str
    entry_price: str
    """The entry limit the order waits at."""
    limit_price: str
    """The take-profit level."""
    stop_price: str
    """The stop-loss level."""
    exit_price: str | None = None
    """Empty when the entry order expired unfilled."""
    result: Literal["GAIN", "LOSS", "EVEN", "EXPIRED"] | None = None
    reason: str | None = None
    """tp, sl, tp_gap, sl_gap, liquidation, signal, expired, ..."""
    status: Literal["waiting", "open"] | None = None
    """Live signals only."""
    source: Literal["user"]
    signal_time: int | None = None
    """Unix seconds of the candle that gave the signal (live signals only)."""
    created_at: int
    closed_at: int | None = None


class SignalsPage(UserPage):
    """A page of signals, newest first."""

    signals: list[Signal]
    count: Annotated[int, Field(ge=0)]
    """How many signals this page holds (a filtered history page may be empty while more follow)."""
