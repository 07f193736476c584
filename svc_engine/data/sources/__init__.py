"""Kline sources: closed candles from an exchange's public market-data API, paced and retried.

Binance spot and USDT-M futures today (:class:`BinanceKlines`); a notebook uses them directly,
``svc data download`` writes what they return into the store, and :class:`BinanceMarkets` serves a
feed by store market (``crypto`` spot, ``crypto_futures`` futures).

Example:
    >>> from svc_engine.data.sources import FUTURES, SPOT, KlineSourceError
    >>> SPOT.klines_path, FUTURES.klines_path, issubclass(KlineSourceError, RuntimeError)
    ('/api/v3/klines', '/fapi/v1/klines', True)
"""

from __future__ import annotations

from svc_engine.data.sources.binance import FUTURES, SPOT, BinanceKlines, BinanceMarket, BinanceMarkets
from svc_engine.data.sources.pacing import KlineSourceError, PacedClient, WeightBudget

__all__ = [
    "FUTURES",
    "SPOT",
    "BinanceKlines",
    "BinanceMarket",
    "BinanceMarkets",
    "KlineSourceError",
    "PacedClient",
    "WeightBudget",
]
