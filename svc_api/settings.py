"""Configuration of the service: every value from an environment variable, with an embedded default.

Nothing needs configuring: the defaults give an SQLite file and a secret key under ``var/`` of the
checkout, in-memory rate limits and the local executor.

Example:
    >>> s = Settings.from_env({"DATABASE_URL": "sqlite:///:memory:", "SECRET_KEY": "k" * 32})
    >>> s.database_url, s.session_ttl_seconds
    ('sqlite:///:memory:', 2592000)
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from svc_api.envparse import int_at_least as _int_at_least
from svc_api.envparse import number as _number
from svc_api.envparse import percent as _percent
from svc_api.envparse import text as _text

REPO = Path(__file__).resolve().parents[1]
FEEDS = ("embedded", "binance", "off")
"""The market feed's sources (``MARKET_FEED``)."""


@dataclass(frozen=True)
class Settings:
    """All settings of the service (see :meth:`from_env` for the variable of each).

    Example:
        >>> Settings(database_url="sqlite:///x.db", secret_key=b"k" * 32).store_retry_after
        5
    """

    database_url: str
    secret_key: bytes = field(repr=False)
    var_dir: Path = REPO / "var"
    data_dir: Path | None = None
    redis_url: str | None = None
    ray_address: str | None = None
    cors_origins: tuple[str, ...] = ()
    session_ttl_seconds: int = 30 * 24 * 3600
    store_retry_after: int = 5
    general_message: str = "Welcome to svc."
    banner_urls: tuple[str, ...] = ()
    app_version: str = "1.0.0"
    max_concurrent_generations: int = 2
    generation_threads: int = 2
    backtest_max_concurrent: int = 3
    backtest_queue_capacity: int = 16
    backtest_threads: int = 2
    backtest_stale_seconds: float = 60.0
    object_store_url: str | None = None
    s3_endpoint_url: str | None = None
    trend_refresh_seconds: float = 300.0
    trend_refresh_delay_seconds: float = 2.0
    trend_timeframes: tuple[str, ...] = ("1h", "4h")
    market_replay_speed: float = 0.0
    market_replay_from: int | None = None
    # The market feed's source: `embedded` (the synthetic market continued), or `off`. Settings made in
    # code (tests) have it off; `Settings.from_env` (svc serve, svc worker) defaults to `embedded`.
    market_feed: str = "off"
    market_feed_seconds: float = 1.0
    market_feed_symbols: tuple[str, ...] = ()
    # Days of candles a feed from an exchange fetches for a listed series the store does not hold yet.
    market_feed_backfill_days: float = 7.0
    signal_poll_seconds: float = 5.0
    # Seconds a signal worker's lease lasts: a dead worker's coins are taken over within this.
    signal_lease_seconds: int = 30
    marketplace_fee_pct: float = 20.0
    rate_limit_scale: float = 1.0
    rate_limit_guest: int = 20
    # Threads that run request handlers and store look-ups. Each request holds one only for a short
    # store transaction (backtests and generations have threads of their own); AnyIO's default of 40
    # made 32 concurrent requests fight over the GIL: 2.4 ms of server CPU per account_info, 1.2 ms at 4
    # (8 threads: 1.4-1.8 ms; 2: the same as 4, with less room for store waits).
    request_threads: int = 4
    # 0: this server process runs no background workers (they run in `svc worker` instead).
    run_workers: int = 1
    # Seconds a client may pause while sending a request body before it gets a 408.
    body_read_timeout: float = 15.0
    # Seconds a connection may take to send a complete request head (request line and headers), from
    # its opening or from the first byte of the next request on it; then a 408 and the connection
    # closes (svc serve). Slow-header clients otherwise hold connections for ever.
    header_read_timeout: float = 5.0
    # Addresses whose X-Forwarded-For / X-Forwarded-Proto are believed (svc serve); none by default.
    trusted_proxies: tuple[str, ...] = ()
    # Namespace of the rate-limit keys in Redis: instances that share it share their limits.
    rate_limit_prefix: str = "svc-ratelimit"
    # Seconds between runs of the notification fan-out and outbox workers (0: off; tests run them).
    notify_poll_seconds: float = 2.0
    # Mail: SMTP when set (smtp://host:port), else one .eml file per message under <var>/mail.
    smtp_url: str | None = None
    mail_from: str = "svc <noreply@svc.invalid>"
    # A Telegram-compatible bot HTTP API (base URL, token); without it the bot and messenger channels are off.
    bot_api_url: str | None = None
    bot_token: str = ""
    # The bot reads updates by long polling (each getUpdates waits up to BOT_POLL_TIMEOUT s) unless
    # BOT_WEBHOOK_URL is set: the Bot API then posts them to that URL (this service's /bot/webhook),
    # which checks the BOT_WEBHOOK_SECRET header. See docs/bot.md.
    bot_webhook_url: str | None = None
    bot_webhook_secret: str = ""
    bot_poll_timeout: float = 25.0
    # Seconds between the bot's housekeeping passes (webhook inbox, secret messages, orders followed).
    bot_tick_seconds: float = 1.0
    # Seconds a message with an API secret stays in the chat before the bot deletes it.
    bot_secret_ttl: float = 60.0
    # Updates one chat may send per minute; more are answered once with a request to slow down.
    bot_rate_per_minute: int = 20
    # Seconds between community purge runs (hidden posts past their 15 days); 0: off.
    community_purge_seconds: float = 3600.0
    # Retention (docs/api.md#retention): seconds between passes (0: off); days kept (0: forever).
    retention_sweep_seconds: float = 3600.0
    backtest_retention_days: tuple[tuple[str, float], ...] = tuple(
        {"free": 7.0, "starter": 30.0, "plus": 30.0, "pro": 90.0, "investor": 365.0}.items()
    )
    mail_retention_days: float = 14.0
    edu_failed_upload_days: float = 7.0
    # Completes of an upload that may find parts disagreeing with their reported SHA-256 and ask
    # for them again; the next such complete fails the upload (0: the first one does).
    edu_upload_part_resends: int = 3
    # The exchange orders go to: `paper` (the embedded paper exchange) or `binance`.
    exchange: str = "paper"
    # Binance's spot and futures REST APIs (EXCHANGE=binance).
    binance_api_url: str = "https://api.binance.com"
    binance_futures_url: str = "https://fapi.binance.com"
    # The address the exchange sees orders come from: linked keys must whitelist it.
    order_proxy_ip: str = "127.0.0.1"
    # Fernet keys of the exchange credentials, newest first (default: <var>/exchange_keys).
    exchange_encryption_keys: tuple[str, ...] = ()
    # Seconds between passes of the order reconciler and the paper exchange's fills (0: off).
    exchange_poll_seconds: float = 5.0
    # The card store's webhook HMAC secret and the app stores' notification token (unset: those routes 404).
    card_webhook_secret: str | None = None
    store_webhook_token: str | None = None
    # Who checks in-app purchases: `sandbox` (receipts `sandbox:<transaction>:<product>`) or `stores`
    # (the App Store Server API and the Google Play Developer API at the URLs below).
    iap_verifier: str = "sandbox"
    apple_api_url: str = "https://api.storekit.itunes.apple.com"
    apple_api_token: str | None = None
    google_api_url: str = "https://androidpublisher.googleapis.com"
    google_api_token: str | None = None
    google_package: str = "com.svc.app"
    # The service's own exchange account, whose incoming USDT transfers pay for plans (unset: no channel).
    payment_exchange_key: str | None = None
    payment_exchange_secret: str | None = None
    # The OpenID provider of `identity_login` (its issuer URL) and this service's client id there.
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_jwks_cooldown_seconds: float = 30.0
    # Open WebSockets per process; past it a handshake gets an HTTP 429.
    ws_max_connections: int = 1000
    # Education checkout: open (1) or closed (0), the catalog's currency, how long a checkout session
    # stays payable, and seconds between the payment provider's callback retries (0: off).
    edu_checkout_open: int = 1
    edu_currency: str = "USD"
    edu_checkout_ttl_seconds: int = 1800
    edu_payment_poll_seconds: float = 5.0
    # Seconds between runs of the uploads worker (processing, takeovers, abandoned uploads; 0: off).
    edu_upload_poll_seconds: float = 2.0
    # Education payouts: the platform's commission and the payment fee (percent of each sale), the
    # minimum payout in whole USD for Turkey-based (paid in TRY) and international sellers, and
    # seconds between the payout scheduler's checks (it runs between the 20th and 30th; 0: off).
    edu_commission_pct: float = 20.0
    edu_payment_fee_pct: float = 3.0
    edu_payout_min_tr_usd: int = 20
    edu_payout_min_intl_usd: int = 250
    edu_payout_check_seconds: float = 3600.0
    # A currency rate older than this (hours) is not used by the payout run: it refuses to pay.
    edu_fx_max_age_hours: float = 72.0
    # 1: start-up loads the bundled samples (economic news and calendar) into an empty store.
    seed_samples: int = 1

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the settings from ``environ`` (default ``os.environ``).

        Variables: ``DATABASE_URL``, ``SVC_VAR_DIR``, ``DATA_DIR``, ``REDIS_URL``, ``RAY_ADDRESS``,
        ``CORS_ORIGINS`` (comma-separated), ``SECRET_KEY`` (generated once and kept in
        ``<var>/secret_key`` when unset), ``SESSION_TTL_SECONDS``, ``STORE_RETRY_AFTER``,
        ``SVC_GENERAL_MESSAGE``, ``SVC_BANNER_URLS`` (comma-separated), ``SVC_APP_VERSION``, and
        the tunables of :data:`TUNABLES` (see :func:`tunables_from_env`). docs/api.md has the table.

        Example:
            >>> Settings.from_env({"SECRET_KEY": "s" * 32, "CORS_ORIGINS": "https://a.io, https://b.io"}).cors_origins
            ('https://a.io', 'https://b.io')
        """
        env = os.environ if environ is None else environ
        var_dir = Path(env.get("SVC_VAR_DIR") or REPO / "var")
        data_dir = env.get("DATA_DIR")
        return cls(
            database_url=env.get("DATABASE_URL") or f"sqlite:///{var_dir / 'svc.db'}",
            secret_key=_secret_key(env.get("SECRET_KEY"), var_dir),
            var_dir=var_dir,
            data_dir=Path(data_dir) if data_dir else None,
            redis_url=env.get("REDIS_URL") or None,
            ray_address=env.get("RAY_ADDRESS") or None,
            cors_origins=_csv(env.get("CORS_ORIGINS")),
            session_ttl_seconds=_positive_int(env, "SESSION_TTL_SECONDS", 30 * 24 * 3600),
            store_retry_after=_positive_int(env, "STORE_RETRY_AFTER", 5),
            general_message=env.get("SVC_GENERAL_MESSAGE", "Welcome to svc."),
            banner_urls=_csv(env.get("SVC_BANNER_URLS")),
            app_version=env.get("SVC_APP_VERSION", "1.0.0"),
            market_feed=_feed(env.get("MARKET_FEED") or "embedded"),
            **tunables_from_env(env),
        )


def tunables_from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The :data:`TUNABLES` set (non-empty) in ``environ``, parsed: ``{field name: value}``.

    A bad value raises ``ValueError`` naming the variable.

    Example:
        >>> tunables_from_env({"BACKTEST_THREADS": "4", "TREND_TIMEFRAMES": "1h, 1d", "HOME": "/root"})
        {'backtest_threads': 4, 'trend_timeframes': ('1h', '1d')}
        >>> tunables_from_env({"RATE_LIMIT_SCALE": "lots"})
        Traceback (most recent call last):
        ...
        ValueError: RATE_LIMIT_SCALE must be a number > 0, got 'lots'
    """
    out: dict[str, Any] = {}
    for name, (field_name, parse) in TUNABLES.items():
        raw = environ.get(name)
        if raw is not None and raw.strip() != "":
            out[field_name] = parse(name, raw.strip())
    return out


def _feed(raw: str) -> str:
    if raw not in FEEDS:
        raise ValueError(f"MARKET_FEED must be one of {', '.join(FEEDS)}, got {raw!r}")
    return raw


def _symbols(name: str, raw: str) -> tuple[str, ...]:
    return tuple(s.upper() for s in _csv(raw))


def _timeframes(name: str, raw: str) -> tuple[str, ...]:
    from svc_engine.data.schema import TIMEFRAMES

    frames = _csv(raw)
    unknown = [tf for tf in frames if tf not in TIMEFRAMES]
    if unknown or not frames:
        raise ValueError(f"{name} must be comma-separated timeframes of {', '.join(TIMEFRAMES)}, got {raw!r}")
    return frames


def _plan_days(name: str, raw: str) -> tuple[tuple[str, float], ...]:
    """``plan=days`` pairs, comma-separated (``free=7,pro=90``); a plan left out keeps its default."""
    # The plans with a default: settings sit below accounts, which defines them (a test keeps both equal).
    days = dict(Settings.backtest_retention_days)
    for pair in _csv(raw):
        plan, _, value = (p.strip() for p in pair.partition("="))
        if plan not in days:
            raise ValueError(f"{name} names plans of {', '.join(days)} as plan=days, got {pair!r}")
        days[plan] = _number(positive=True)(name, value)
    return tuple(days.items())


#: Tunables read from the environment: variable -> (``Settings`` field, parser of the raw text).
def _list(name: str, raw: str) -> tuple[str, ...]:
    return _csv(raw)


TUNABLES: Mapping[str, tuple[str, Callable[[str, str], Any]]] = MappingProxyType(
    {
        "SVC_MAX_CONCURRENT_GENERATIONS": ("max_concurrent_generations", _int_at_least(1)),
        "SVC_GENERATION_THREADS": ("generation_threads", _int_at_least(0)),
        "BACKTEST_MAX_CONCURRENT": ("backtest_max_concurrent", _int_at_least(1)),
        "BACKTEST_QUEUE_CAPACITY": ("backtest_queue_capacity", _int_at_least(1)),
        "BACKTEST_THREADS": ("backtest_threads", _int_at_least(1)),
        "BACKTEST_STALE_SECONDS": ("backtest_stale_seconds", _number(positive=True)),
        "OBJECT_STORE_URL": ("object_store_url", _text),
        "S3_ENDPOINT_URL": ("s3_endpoint_url", _text),
        "TREND_REFRESH_SECONDS": ("trend_refresh_seconds", _number(positive=False)),
        "TREND_REFRESH_DELAY_SECONDS": ("trend_refresh_delay_seconds", _number(positive=False)),
        "TREND_TIMEFRAMES": ("trend_timeframes", _timeframes),
        "MARKET_REPLAY_SPEED": ("market_replay_speed", _number(positive=False)),
        "MARKET_REPLAY_FROM": ("market_replay_from", _int_at_least(0)),
        "MARKET_FEED_SECONDS": ("market_feed_seconds", _number(positive=False)),
        "MARKET_FEED_SYMBOLS": ("market_feed_symbols", _symbols),
        "MARKET_FEED_BACKFILL_DAYS": ("market_feed_backfill_days", _number(positive=False)),
        "SIGNAL_POLL_SECONDS": ("signal_poll_seconds", _number(positive=False)),
        "SIGNAL_LEASE_SECONDS": ("signal_lease_seconds", _int_at_least(1)),
        "MARKETPLACE_FEE_PCT": ("marketplace_fee_pct", _number(positive=False)),
        "RATE_LIMIT_SCALE": ("rate_limit_scale", _number(positive=True)),
        "RATE_LIMIT_GUEST": ("rate_limit_guest", _int_at_least(1)),
        "REQUEST_THREADS": ("request_threads", _int_at_least(1)),
        "SVC_RUN_WORKERS": ("run_workers", _int_at_least(0)),
        "BODY_READ_TIMEOUT_SECONDS": ("body_read_timeout", _number(positive=True)),
        "HEADER_READ_TIMEOUT_SECONDS": ("header_read_timeout", _number(positive=True)),
        "TRUSTED_PROXIES": ("trusted_proxies", _list),
        "RATE_LIMIT_PREFIX": ("rate_limit_prefix", _text),
        "NOTIFY_POLL_SECONDS": ("notify_poll_seconds", _number(positive=False)),
        "SMTP_URL": ("smtp_url", _text),
        "MAIL_FROM": ("mail_from", _text),
        "BOT_API_URL": ("bot_api_url", _text),
        "BOT_TOKEN": ("bot_token", _text),
        "BOT_WEBHOOK_URL": ("bot_webhook_url", _text),
        "BOT_WEBHOOK_SECRET": ("bot_webhook_secret", _text),
        "BOT_POLL_TIMEOUT": ("bot_poll_timeout", _number(positive=False)),
        "BOT_TICK_SECONDS": ("bot_tick_seconds", _number(positive=True)),
        "BOT_SECRET_TTL": ("bot_secret_ttl", _number(positive=False)),
        "BOT_RATE_PER_MINUTE": ("bot_rate_per_minute", _int_at_least(1)),
        "COMMUNITY_PURGE_SECONDS": ("community_purge_seconds", _number(positive=False)),
        "RETENTION_SWEEP_SECONDS": ("retention_sweep_seconds", _number(positive=False)),
        "BACKTEST_RETENTION_DAYS": ("backtest_retention_days", _plan_days),
        "MAIL_RETENTION_DAYS": ("mail_retention_days", _number(positive=False)),
        "EDU_FAILED_UPLOAD_DAYS": ("edu_failed_upload_days", _number(positive=False)),
        "EDU_UPLOAD_PART_RESENDS": ("edu_upload_part_resends", _int_at_least(0)),
        "SVC_SEED_SAMPLES": ("seed_samples", _int_at_least(0)),
        "EXCHANGE": ("exchange", _text),
        "CARD_WEBHOOK_SECRET": ("card_webhook_secret", _text),
        "STORE_WEBHOOK_TOKEN": ("store_webhook_token", _text),
        "IAP_VERIFIER": ("iap_verifier", _text),
        "APPLE_API_URL": ("apple_api_url", _text),
        "APPLE_API_TOKEN": ("apple_api_token", _text),
        "GOOGLE_API_URL": ("google_api_url", _text),
        "GOOGLE_API_TOKEN": ("google_api_token", _text),
        "GOOGLE_PACKAGE": ("google_package", _text),
        "OIDC_ISSUER": ("oidc_issuer", _text),
        "WS_MAX_CONNECTIONS": ("ws_max_connections", _int_at_least(1)),
        "OIDC_AUDIENCE": ("oidc_audience", _text),
        "OIDC_JWKS_COOLDOWN_SECONDS": ("oidc_jwks_cooldown_seconds", _number(positive=False)),
        "PAYMENT_EXCHANGE_KEY": ("payment_exchange_key", _text),
        "PAYMENT_EXCHANGE_SECRET": ("payment_exchange_secret", _text),
        "ORDER_PROXY_IP": ("order_proxy_ip", _text),
        "BINANCE_API_URL": ("binance_api_url", _text),
        "BINANCE_FUTURES_URL": ("binance_futures_url", _text),
        "EXCHANGE_ENCRYPTION_KEYS": ("exchange_encryption_keys", _list),
        "EXCHANGE_POLL_SECONDS": ("exchange_poll_seconds", _number(positive=False)),
        "EDU_CHECKOUT_OPEN": ("edu_checkout_open", _int_at_least(0)),
        "EDU_CURRENCY": ("edu_currency", _text),
        "EDU_CHECKOUT_TTL_SECONDS": ("edu_checkout_ttl_seconds", _int_at_least(60)),
        "EDU_PAYMENT_POLL_SECONDS": ("edu_payment_poll_seconds", _number(positive=False)),
        "EDU_UPLOAD_POLL_SECONDS": ("edu_upload_poll_seconds", _number(positive=False)),
        "EDU_COMMISSION_PCT": ("edu_commission_pct", _percent),
        "EDU_PAYMENT_FEE_PCT": ("edu_payment_fee_pct", _percent),
        "EDU_PAYOUT_MIN_TR_USD": ("edu_payout_min_tr_usd", _int_at_least(0)),
        "EDU_PAYOUT_MIN_INTL_USD": ("edu_payout_min_intl_usd", _int_at_least(0)),
        "EDU_PAYOUT_CHECK_SECONDS": ("edu_payout_check_seconds", _number(positive=False)),
        "EDU_FX_MAX_AGE_HOURS": ("edu_fx_max_age_hours", _number(positive=True)),
    }
)


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


def _secret_key(value: str | None, var_dir: Path) -> bytes:
    """The HMAC key: ``SECRET_KEY``, else one generated on first use and kept under ``var_dir``."""
    if value:
        if len(value) < 16:
            raise ValueError("SECRET_KEY must be at least 16 characters")
        return value.encode()
    path = var_dir / "secret_key"
    if not path.exists():
        var_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(secrets.token_hex(32))
        tmp.chmod(0o600)
        # Two processes starting together: the first link wins and both read the winner's key.
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path.read_text().strip().encode()
