"""Platform configuration (``GET /``): message, banners, supported coins, app version.

Supported coins are the crypto symbols that have candles in the data store, shown as users know
them (``BTCUSDT`` -> ``BTC``).

Example:
    >>> from pathlib import Path
    >>> supported_coins(Path("/nonexistent"))
    []
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def supported_coins(data_dir: Path | None) -> list[str]:
    """Display symbols of the crypto instruments with data under ``data_dir`` (default data dir).

    Example:
        >>> supported_coins(Path("/nonexistent"))
        []
    """
    from svc_engine.data import Catalog, DataStore
    from svc_engine.instruments import display_symbol

    catalog = Catalog(DataStore(data_dir) if data_dir is not None else None)
    return sorted({display_symbol("crypto", symbol) for symbol in catalog.symbols("crypto")})


def platform_config(
    *, general: str, banner_urls: tuple[str, ...], app_version: str, coins: list[str]
) -> dict[str, Any]:
    """The Platform config resource.

    Example:
        >>> platform_config(general="hi", banner_urls=(), app_version="1.0.0", coins=["BTC"])
        {'GENERAL': 'hi', 'banner_urls': [], 'supported_coins': ['BTC'], 'app_version': '1.0.0'}
    """
    return {
        "GENERAL": general,
        "banner_urls": list(banner_urls),
        "supported_coins": coins,
        "app_version": app_version,
    }
