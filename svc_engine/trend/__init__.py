"""Trend-break detection (``design/trend-semantics.md``) and the trend sentiment indicator.

Example:
    >>> from svc_engine.trend import TrendParams
    >>> TrendParams().window
    199
"""

from __future__ import annotations

from svc_engine.trend.params import TrendParams
from svc_engine.trend.payloads import SNAPSHOT, signal_summary, signal_to_api
from svc_engine.trend.scan import SCAN_SCHEMA, scan_trends, signal_detail
from svc_engine.trend.sentiment import market_key, sentiment_history, sentiment_item, trend_indicator
from svc_engine.trend.signals import SIGNAL_SCHEMA, break_events, detect_trends

__all__ = [
    "SCAN_SCHEMA",
    "SIGNAL_SCHEMA",
    "SNAPSHOT",
    "TrendParams",
    "break_events",
    "detect_trends",
    "market_key",
    "scan_trends",
    "sentiment_history",
    "sentiment_item",
    "signal_detail",
    "signal_summary",
    "signal_to_api",
    "trend_indicator",
]
