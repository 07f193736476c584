"""One rule for every coin field of the backtest replies: a coin reads as the request named it, the
platform's display name (``BTC``), never the data store's symbol (``BTCUSDT``) the engine works in.

Applied to ``result``, ``coin_result`` and ``status`` (``coin_progress``), on: ``coin`` (one name,
or several comma-separated), ``coins``, ``best_coin``/``worst_coin``, each trade's and position's
``coin``, and the keys of ``results``, ``coin_results``, ``per_coin_contribution``,
``coin_progress``, ``errors``, ``coverage`` (each coin's range) and ``applied``'s ``spread_pct``
(each coin's spread in a portfolio).

Example:
    >>> displayed({"coin": "BTCUSDT,ETHUSDT", "results": {"BTCUSDT": {"coin": "BTCUSDT"}},
    ...            "trades": [{"coin": "ETHUSDT", "pnl": 1.0}]}, {"BTCUSDT": "BTC", "ETHUSDT": "ETH"})
    {'coin': 'BTC,ETH', 'results': {'BTC': {'coin': 'BTC'}}, 'trades': [{'coin': 'ETH', 'pnl': 1.0}]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from svc_api.backtests.instruments import display_name

_KEYED = frozenset(
    {"results", "coin_results", "per_coin_contribution", "coin_progress", "errors", "coverage", "spread_pct"}
)
_NAMED = frozenset({"coin", "best_coin", "worst_coin"})
_RECORDS = frozenset({"trades", "all_positions"})


def names_of(row: Any) -> dict[str, str]:
    """Store symbol -> display name for the coins of a job row.

    Example:
        >>> from types import SimpleNamespace
        >>> names_of(SimpleNamespace(coins='["BTCUSDT"]', market="crypto"))
        {'BTCUSDT': 'BTC'}
    """
    return {s: display_name(s, row.market) for s in json.loads(row.coins)}


def displayed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every coin field written as its display name (see the module docstring)."""
    if isinstance(value, list):
        return [displayed(v, names) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in _NAMED and isinstance(item, str):
            out[key] = ",".join(names.get(part, part) for part in item.split(","))
        elif key == "coins" and isinstance(item, list):
            out[key] = [names.get(c, c) if isinstance(c, str) else c for c in item]
        elif key in _KEYED and isinstance(item, dict):
            out[key] = {names.get(k, k): displayed(v, names) for k, v in item.items()}
        elif key in _RECORDS and isinstance(item, list):
            out[key] = [displayed(r, names) for r in item]
        else:
            out[key] = displayed(item, names) if isinstance(item, dict) else item
    return out


__all__ = ["displayed", "names_of"]
