"""Instruments: markets and asset classes, the precision manifest, volume tiers and spreads.

Example:
    >>> from svc_engine.instruments import resolve, format_price, spread_pct_for
    >>> inst = resolve("BTC")
    >>> inst.symbol, format_price(inst.market, inst.symbol, 1234.5)
    ('BTCUSDT', '1234.50')
"""

from __future__ import annotations

from svc_engine.instruments.precision import Precision, format_price, format_quantity, manifest, precision
from svc_engine.instruments.tiers import (
    FALLBACK_TIER,
    TIERS,
    Tier,
    avg_daily_quote_volume,
    spread_pct_for,
    volume_tier,
)
from svc_engine.instruments.universe import (
    ASSET_CLASSES,
    MARKETS,
    Instrument,
    UnknownInstrumentError,
    check_market,
    display_symbol,
    instrument_for,
    is_crypto_market,
    resolve,
    universe,
)

__all__ = [
    "ASSET_CLASSES",
    "FALLBACK_TIER",
    "MARKETS",
    "TIERS",
    "Instrument",
    "Precision",
    "Tier",
    "UnknownInstrumentError",
    "avg_daily_quote_volume",
    "check_market",
    "display_symbol",
    "format_price",
    "format_quantity",
    "instrument_for",
    "is_crypto_market",
    "manifest",
    "precision",
    "resolve",
    "spread_pct_for",
    "universe",
    "volume_tier",
]
