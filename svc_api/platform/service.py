"""Platform configuration (``GET /``): message, banners, supported coins, app version; and the
changelog (kept in the store: :mod:`svc_api.platform.changelog`, re-exported here).

Supported coins are the crypto symbols that have candles in the data store, shown as users know
them (``BTCUSDT`` -> ``BTC``).

Example:
    >>> from pathlib import Path
    >>> supported_coins(Path("/nonexistent"))
    []
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from svc_api.core.store import StoreUnavailable
from svc_api.platform.changelog import (
    add_entry,
    changelog,
    release,
    remove_entry,
    set_versions,
    show,
    version_key,
)
from svc_api.platform.changelog_import import (
    CHANGELOG,
    import_changelog,
    import_file,
    seed_changelog_if_empty,
)

logger = logging.getLogger("svc_api")
COINS_TTL = 60.0
"""Seconds the supported coins of ``GET /`` are reused."""


__all__ = [
    "CHANGELOG",
    "COINS_TTL",
    "add_entry",
    "changelog",
    "config",
    "import_changelog",
    "import_file",
    "openapi_document",
    "platform_config",
    "release",
    "remove_entry",
    "seed_changelog_if_empty",
    "set_versions",
    "show",
    "store_ok",
    "supported_coins",
    "version_key",
    "workers_health",
]


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


def config(services: Any) -> dict[str, Any]:
    """The Platform config of an app: its settings and the supported coins (reused for ``COINS_TTL``
    seconds; an unreadable data store gives none, logged).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"))
        >>> config(services)["supported_coins"]
        []
    """
    settings = services.settings

    def coins() -> list[str]:
        try:
            return supported_coins(settings.data_dir)
        except (ImportError, OSError) as exc:
            logger.warning("supported coins unavailable: %s", exc)
            return []

    return platform_config(
        general=settings.general_message,
        banner_urls=settings.banner_urls,
        app_version=settings.app_version,
        coins=services.cached("supported_coins", COINS_TTL, coins),
    )


def store_ok(services: Any) -> bool:
    """True when the app's store answers (opening and migrating it first if needed).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> store_ok(Services(Settings(database_url="sqlite://", secret_key=b"k" * 32)))
        True
    """
    try:
        return bool(services.store.ping())
    except StoreUnavailable:
        return False


def workers_health(services: Any) -> dict[str, Any]:
    """The health of each background worker this process runs (``{}`` when none run here).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> workers_health(Services(Settings(database_url="sqlite://", secret_key=b"k" * 32)))
        {}
    """
    running = services.workers
    return {} if running is None else dict(running.health())


def market_health(services: Any) -> dict[str, Any]:
    """The market feed's clock, newest candle and lagging series (see ``market.service.feed_health``).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> market_health(Services(Settings(database_url="sqlite://", secret_key=b"k" * 32)))
        {'status': 'ok', 'feed': 'off'}
    """
    from svc_api.market import service as market

    return market.feed_health(services)


@lru_cache(maxsize=1)
def openapi_document() -> bytes:
    """The API description (``svc_api/openapi.yaml``) as JSON bytes, read once.

    Example:
        >>> json.loads(openapi_document())["openapi"]
        '3.1.0'
    """
    text = resources.files("svc_api").joinpath("openapi.yaml").read_text(encoding="utf-8")
    return json.dumps(yaml.safe_load(text)).encode()
