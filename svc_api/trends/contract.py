"""The request and reply models of the trend operations (``/tradingdata``): ``trend_signals``,
``trend_signal_detail``, ``trend_indicator``, ``trend_indicator_history`` and the tracking of trend
break signals.

Example:
    >>> TrendTrackRequest.model_validate({"coin_name": "btcusdt", "timeframe": "60", "way": "buy",
    ...                             "timestamp": "3600"}).key()
    SignalKey(symbol='BTCUSDT', timeframe='1h', ts=3600, way='BUY')
    >>> TrendSignalDetailRequest.model_validate({"coin_name": "BTCUSDT"})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: missing required fields: graph_type, timestamp
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.core.errors import Invalid
from svc_api.core.fields import (
    check_name,
    listed_timeframe,
    page_number,
    parse_seconds,
    parse_timeframe,
    require,
)
from svc_api.core.params import AsSent, Cursor, Limit
from svc_api.market.service import row_schema
from svc_api.trends.service import WAYS, SignalKey

Count = Annotated[int, Field(ge=0)]
UnixSeconds = Annotated[int, Field(description="Unix seconds.")]


def _page(value: object, name: str) -> int:
    return page_number(value)


def _coin(value: object, name: str) -> str:
    return check_name(value, name) or ""


def _seconds(value: object, name: str) -> int:
    return parse_seconds(value, name)


def _before(value: object, name: str) -> int | None:
    return None if value in (None, "") else parse_seconds(value, name)


def _way(value: object, name: str) -> str:
    way = str(value).strip().upper()
    if way not in WAYS:
        raise Invalid(f"way must be BUY or SELL, got {value!r}")
    return way


def _either_way(value: object, name: str) -> str | None:
    # No strip here, unlike the tracking operations: the detail has always compared as sent.
    way = None if value in (None, "") else str(value).upper()
    if way is not None and way not in WAYS:
        raise Invalid(f"way must be BUY or SELL, got {value!r}")
    return way


def _timeframe(value: object, name: str) -> str:
    return parse_timeframe(value)


Coin = Annotated[
    str,
    Check(
        _coin, {"type": "string", "pattern": "^[A-Za-z0-9]{1,32}$", "description": "A symbol."}, required=True
    ),
]
Timestamp = Annotated[
    int,
    Check(
        _seconds,
        {"type": "string", "pattern": "^[0-9]{1,12}$", "description": "Unix seconds."},
        required=True,
    ),
]
Way = Annotated[
    Literal["BUY", "SELL"],
    Check(_way, {"enum": ["BUY", "SELL"], "description": "Case-insensitive."}, required=True),
]
MarketKey = AsSent(
    {
        "type": "string",
        "default": "BTCUSDT#1h",
        "description": "A series as `<SYMBOL>#<timeframe>` (checked with the store's series).",
    }
)


class TrendSignalsRequest(Fields):
    """``trend_signals``: one page of the live trend signals, newest first."""

    page: Annotated[
        int,
        Check(
            _page,
            {"type": "integer", "minimum": 0, "default": 0, "description": "Above 0 needs a paid plan."},
        ),
    ]
    limit: Limit(50, 1, 50, clamp=True)


class TrendSignalDetailRequest(Fields):
    """``trend_signal_detail``: one signal in full (``way`` picks one of a candle's two signals)."""

    coin_name: Coin
    graph_type: Annotated[
        str,
        Check(
            listed_timeframe,
            {"type": "string", "description": "A timeframe by name, e.g. 1h."},
            required=True,
        ),
    ]
    timestamp: Timestamp
    way: Annotated[
        Literal["BUY", "SELL"] | None,
        Check(_either_way, {"enum": ["BUY", "SELL"], "description": "Case-insensitive; absent: either way."}),
    ]

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The three required fields are named together when any is missing or empty."""
        require(data, "coin_name", "graph_type", "timestamp")
        return super().prepare(data)


class TrendIndicatorRequest(Fields):
    """``trend_indicator``: the latest sentiment of a series."""

    market_key: MarketKey


class TrendIndicatorHistoryRequest(Fields):
    """``trend_indicator_history``: the sentiment of a series' last candles."""

    limit: Limit(200, 1, 200, clamp=True)
    before: Annotated[
        int | None,
        Check(
            _before, {"type": "integer", "minimum": 0, "description": "Unix seconds: candles opening before."}
        ),
    ]
    market_key: MarketKey


class TrendTrackRequest(Fields):
    """``track_trend_break_signal`` / ``untrack_trend_break_signal``: the signal named by its four
    fields (the way is checked first)."""

    way: Way
    coin_name: Coin
    timeframe: Annotated[
        str,
        Check(_timeframe, {"type": "string", "description": "Minutes (60) or a name (1h)."}, required=True),
    ]
    timestamp: Timestamp

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The four fields are named together when any is missing or empty."""
        require(data, "coin_name", "timeframe", "way", "timestamp")
        return super().prepare(data)

    def key(self) -> SignalKey:
        """The signal's key."""
        return SignalKey(self.coin_name, self.timeframe, self.timestamp, self.way)


class TrackedSignalsRequest(Fields):
    """``tracked_trend_break_signals``: a page of the caller's tracked signals."""

    limit: Limit(20, 1, 50, clamp=True)
    cursor: Cursor


Anchor = Annotated[
    tuple[int, int, float],
    row_schema(
        {"type": "number"},
        3,
        "`[timestamp_ms, candle_index, price]`: the index counts from the chart's first candle.",
    ),
]
"""``[timestamp_ms, candle_index, price]``, the index counted from the chart's first candle."""
ChartCandle = Annotated[
    tuple[int, float, float, float, float, float],
    row_schema({"type": "number"}, 6, "`[open_time_ms, open, high, low, close, volume]`."),
]
"""``[open_time_ms, open, high, low, close, volume]``."""


class TrendSignal(Shape):
    """A trend break signal (lists carry no lines and no chart)."""

    coin_name: str
    graph_type: str
    timestamp: str
    """Unix seconds as a string."""
    way: str
    is_return_to_trend: bool
    trend_data: dict[str, list[Anchor]] | None = None
    """``high_trend`` / ``low_trend``: the two anchors of each line."""
    klines_data: list[ChartCandle] | None = None
    """The chart: up to 200 candles ending at the signal candle (empty in lists)."""


class TrendSignalsPage(Shape):
    """A page of live trend signals, newest first."""

    items: list[TrendSignal]
    page: Count
    count: Count
    last_page: Count


class TrendSignalDetail(Shape):
    """One trend signal in full."""

    item: TrendSignal


class SentimentItem(Shape):
    """The sentiment of one candle."""

    market_key: str
    timestamp: UnixSeconds
    score: float
    direction: str


class TrendIndicator(Shape):
    """The latest sentiment of a series (``item`` null when none is computed)."""

    market_key: str
    item: SentimentItem | None
    count: Count


class TrendIndicatorHistory(Shape):
    """The sentiment of a series' last candles, newest first."""

    market_key: str
    items: list[SentimentItem]
    count: Count
    limit: int
    has_more: bool
    oldest_timestamp: int | None = None
    next_before_timestamp: int | None = None
    """Send as ``before`` for the next page; null on the last."""


class Tracked(Shape):
    """Whether the caller tracks the signal now."""

    tracked: bool


class TrackedPage(Shape):
    """A page of the caller's tracked signals."""

    items: list[TrendSignal]
    last_key: str | None
    """Opaque; null on the last page."""


LICENSE_ERRORS = (ErrorDoc(403, "forbidden", "a page after 0 without a paid plan", code="license_required"),)
DETAIL_ERRORS = (ErrorDoc(404, "not_found", "no trend signal of the series at that candle"),)
SERIES_ERRORS = (ErrorDoc(404, "not_found", "no candles are stored for the series of market_key"),)
TRACK_ERRORS = (ErrorDoc(404, "not_found", "no live trend signal with this key (unknown or expired)"),)
