"""Configuration of the service: every value from an environment variable, with an embedded default.

Nothing needs configuring: the defaults give an SQLite file and a secret key under ``var/`` of the
checkout, in-memory rate limits and the local executor. Each field of :class:`Settings` declares its
variable and the parser of its text beside it (:func:`env`); :meth:`Settings.from_env` is the one
reader of the environment, and docs/api.md has the table (a test keeps both in step).

Example:
    >>> s = Settings.from_env({"DATABASE_URL": "sqlite:///:memory:", "SECRET_KEY": "k" * 32})
    >>> s.database_url, s.session_ttl_seconds
    ('sqlite:///:memory:', 2592000)
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import Field, ValidationError
from pydantic_core import core_schema
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from svc_api.envparse import (
    csv,
    int_at_least,
    number,
    one_of,
    percent,
    plan_days,
    positive_int,
    symbols,
    text,
    timeframes,
)

REPO = Path(__file__).resolve().parents[1]
FEEDS = ("embedded", "binance", "off")
"""The market feed's sources (``MARKET_FEED``)."""
# The plans with a default retention: settings sit below accounts, which defines them (a test keeps
# both equal).
RETENTION_DAYS: tuple[tuple[str, float], ...] = tuple(
    {"free": 7.0, "starter": 30.0, "plus": 30.0, "pro": 90.0, "investor": 365.0}.items()
)


@dataclass(frozen=True)
class Var:
    """A field's environment variable and the parser of its text (``(name, raw) -> value``).

    The parser runs on text only: values given in code (``Settings(backtest_threads=4)``) are
    checked against the field's type only (tests set values no variable may, such as 0).
    ``tunable``: :func:`tunables_from_env` reads it too; the deployment variables (where the store,
    the files and the key are, what ``GET /`` says) are not.
    """

    name: str
    parse: Callable[[str, str], Any] | None = None
    tunable: bool = True

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        schema = handler(source)
        if self.parse is None:
            return schema
        parse, name = self.parse, self.name
        return core_schema.no_info_before_validator_function(
            lambda value: parse(name, value) if isinstance(value, str) else value, schema
        )


def env(
    name: str,
    default: Any,
    parse: Callable[[str, str], Any] | None = None,
    *,
    tunable: bool = True,
    repr: bool = True,
) -> Any:
    """A :class:`Settings` field read from the variable ``name`` by ``parse`` (``default``: unset).

    Example:
        >>> Settings.model_fields["backtest_threads"].validation_alias
        'BACKTEST_THREADS'
    """
    info = Field(default, validation_alias=name, repr=repr)
    info.metadata.append(Var(name, parse, tunable))
    return info


class Settings(BaseSettings):
    """All settings of the service, each field with its variable (see :meth:`from_env`).

    Frozen: :meth:`replace` makes a changed copy.

    Example:
        >>> Settings(database_url="sqlite:///x.db", secret_key=b"k" * 32).store_retry_after
        5
    """

    # Fields by name in code, by variable in from_env; a misspelt name is an error, as it was for the
    # dataclass.
    model_config = SettingsConfigDict(
        frozen=True, validate_by_name=True, validate_by_alias=True, extra="forbid", case_sensitive=True
    )

    database_url: str = env("DATABASE_URL", ..., tunable=False)
    secret_key: bytes = env("SECRET_KEY", ..., tunable=False, repr=False)
    var_dir: Path = env("SVC_VAR_DIR", REPO / "var", tunable=False)
    data_dir: Path | None = env("DATA_DIR", None, text, tunable=False)
    redis_url: str | None = env("REDIS_URL", None, text, tunable=False)
    ray_address: str | None = env("RAY_ADDRESS", None, text, tunable=False)
    cors_origins: tuple[str, ...] = env("CORS_ORIGINS", (), csv, tunable=False)
    session_ttl_seconds: int = env("SESSION_TTL_SECONDS", 30 * 24 * 3600, positive_int, tunable=False)
    store_retry_after: int = env("STORE_RETRY_AFTER", 5, positive_int, tunable=False)
    general_message: str = env("SVC_GENERAL_MESSAGE", "Welcome to svc.", text, tunable=False)
    banner_urls: tuple[str, ...] = env("SVC_BANNER_URLS", (), csv, tunable=False)
    app_version: str = env("SVC_APP_VERSION", "1.0.0", text, tunable=False)
    max_concurrent_generations: int = env("SVC_MAX_CONCURRENT_GENERATIONS", 2, int_at_least(1))
    generation_threads: int = env("SVC_GENERATION_THREADS", 2, int_at_least(0))
    backtest_max_concurrent: int = env("BACKTEST_MAX_CONCURRENT", 3, int_at_least(1))
    backtest_queue_capacity: int = env("BACKTEST_QUEUE_CAPACITY", 16, int_at_least(1))
    backtest_threads: int = env("BACKTEST_THREADS", 2, int_at_least(1))
    backtest_stale_seconds: float = env("BACKTEST_STALE_SECONDS", 60.0, number(positive=True))
    object_store_url: str | None = env("OBJECT_STORE_URL", None, text)
    s3_endpoint_url: str | None = env("S3_ENDPOINT_URL", None, text)
    trend_refresh_seconds: float = env("TREND_REFRESH_SECONDS", 300.0, number(positive=False))
    trend_refresh_delay_seconds: float = env("TREND_REFRESH_DELAY_SECONDS", 2.0, number(positive=False))
    trend_timeframes: tuple[str, ...] = env("TREND_TIMEFRAMES", ("1h", "4h"), timeframes)
    market_replay_speed: float = env("MARKET_REPLAY_SPEED", 0.0, number(positive=False))
    market_replay_from: int | None = env("MARKET_REPLAY_FROM", None, int_at_least(0))
    # The market feed's source: `embedded` (the synthetic market continued), or `off`. Settings made in
    # code (tests) have it off; `Settings.from_env` (svc serve, svc worker) defaults to `embedded`.
    market_feed: str = env("MARKET_FEED", "off", one_of(FEEDS), tunable=False)
    market_feed_seconds: float = env("MARKET_FEED_SECONDS", 1.0, number(positive=False))
    market_feed_symbols: tuple[str, ...] = env("MARKET_FEED_SYMBOLS", (), symbols)
    # Days of candles a feed from an exchange fetches for a listed series the store does not hold yet.
    market_feed_backfill_days: float = env("MARKET_FEED_BACKFILL_DAYS", 7.0, number(positive=False))
    signal_poll_seconds: float = env("SIGNAL_POLL_SECONDS", 5.0, number(positive=False))
    # Seconds a signal worker's lease lasts: a dead worker's coins are taken over within this.
    signal_lease_seconds: int = env("SIGNAL_LEASE_SECONDS", 30, int_at_least(1))
    marketplace_fee_pct: float = env("MARKETPLACE_FEE_PCT", 20.0, number(positive=False))
    rate_limit_scale: float = env("RATE_LIMIT_SCALE", 1.0, number(positive=True))
    rate_limit_guest: int = env("RATE_LIMIT_GUEST", 20, int_at_least(1))
    # Threads that run request handlers and store look-ups. Each request holds one only for a short
    # store transaction (backtests and generations have threads of their own); AnyIO's default of 40
    # made 32 concurrent requests fight over the GIL: 2.4 ms of server CPU per account_info, 1.2 ms at 4
    # (8 threads: 1.4-1.8 ms; 2: the same as 4, with less room for store waits).
    request_threads: int = env("REQUEST_THREADS", 4, int_at_least(1))
    # 0: this server process runs no background workers (they run in `svc worker` instead).
    run_workers: int = env("SVC_RUN_WORKERS", 1, int_at_least(0))
    # Seconds a client may pause while sending a request body before it gets a 408.
    body_read_timeout: float = env("BODY_READ_TIMEOUT_SECONDS", 15.0, number(positive=True))
    # Seconds a connection may take to send a complete request head (request line and headers), from
    # its opening or from the first byte of the next request on it; then a 408 and the connection
    # closes (svc serve). Slow-header clients otherwise hold connections for ever.
    header_read_timeout: float = env("HEADER_READ_TIMEOUT_SECONDS", 5.0, number(positive=True))
    # Addresses whose X-Forwarded-For / X-Forwarded-Proto are believed (svc serve); none by default.
    trusted_proxies: tuple[str, ...] = env("TRUSTED_PROXIES", (), csv)
    # Namespace of the rate-limit keys in Redis: instances that share it share their limits.
    rate_limit_prefix: str = env("RATE_LIMIT_PREFIX", "svc-ratelimit", text)
    # Seconds between runs of the notification fan-out and outbox workers (0: off; tests run them).
    notify_poll_seconds: float = env("NOTIFY_POLL_SECONDS", 2.0, number(positive=False))
    # Mail: SMTP when set (smtp://host:port), else one .eml file per message under <var>/mail.
    smtp_url: str | None = env("SMTP_URL", None, text)
    mail_from: str = env("MAIL_FROM", "svc <noreply@svc.invalid>", text)
    # A Telegram-compatible bot HTTP API (base URL, token); without it the bot and messenger channels are off.
    bot_api_url: str | None = env("BOT_API_URL", None, text)
    bot_token: str = env("BOT_TOKEN", "", text)
    # The bot reads updates by long polling (each getUpdates waits up to BOT_POLL_TIMEOUT s) unless
    # BOT_WEBHOOK_URL is set: the Bot API then posts them to that URL (this service's /bot/webhook),
    # which checks the BOT_WEBHOOK_SECRET header. See docs/bot.md.
    bot_webhook_url: str | None = env("BOT_WEBHOOK_URL", None, text)
    bot_webhook_secret: str = env("BOT_WEBHOOK_SECRET", "", text)
    bot_poll_timeout: float = env("BOT_POLL_TIMEOUT", 25.0, number(positive=False))
    # Seconds between the bot's housekeeping passes (webhook inbox, secret messages, orders followed).
    bot_tick_seconds: float = env("BOT_TICK_SECONDS", 1.0, number(positive=True))
    # Seconds a message with an API secret stays in the chat before the bot deletes it.
    bot_secret_ttl: float = env("BOT_SECRET_TTL", 60.0, number(positive=False))
    # Updates one chat may send per minute; more are answered once with a request to slow down.
    bot_rate_per_minute: int = env("BOT_RATE_PER_MINUTE", 20, int_at_least(1))
    # Seconds between community purge runs (hidden posts past their 15 days); 0: off.
    community_purge_seconds: float = env("COMMUNITY_PURGE_SECONDS", 3600.0, number(positive=False))
    # Retention (docs/api.md#retention): seconds between passes (0: off); days kept (0: forever).
    retention_sweep_seconds: float = env("RETENTION_SWEEP_SECONDS", 3600.0, number(positive=False))
    backtest_retention_days: tuple[tuple[str, float], ...] = env(
        "BACKTEST_RETENTION_DAYS", RETENTION_DAYS, plan_days(RETENTION_DAYS)
    )
    mail_retention_days: float = env("MAIL_RETENTION_DAYS", 14.0, number(positive=False))
    edu_failed_upload_days: float = env("EDU_FAILED_UPLOAD_DAYS", 7.0, number(positive=False))
    # Completes of an upload that may find parts disagreeing with their reported SHA-256 and ask
    # for them again; the next such complete fails the upload (0: the first one does).
    edu_upload_part_resends: int = env("EDU_UPLOAD_PART_RESENDS", 3, int_at_least(0))
    # The exchange orders go to: `paper` (the embedded paper exchange) or `binance`.
    exchange: str = env("EXCHANGE", "paper", text)
    # Binance's spot and futures REST APIs (EXCHANGE=binance).
    binance_api_url: str = env("BINANCE_API_URL", "https://api.binance.com", text)
    binance_futures_url: str = env("BINANCE_FUTURES_URL", "https://fapi.binance.com", text)
    # The address the exchange sees orders come from: linked keys must whitelist it.
    order_proxy_ip: str = env("ORDER_PROXY_IP", "127.0.0.1", text)
    # Fernet keys of the exchange credentials, newest first (default: <var>/exchange_keys).
    exchange_encryption_keys: tuple[str, ...] = env("EXCHANGE_ENCRYPTION_KEYS", (), csv)
    # Seconds between passes of the order reconciler and the paper exchange's fills (0: off).
    exchange_poll_seconds: float = env("EXCHANGE_POLL_SECONDS", 5.0, number(positive=False))
    # The card store's webhook HMAC secret and the app stores' notification token (unset: those routes 404).
    card_webhook_secret: str | None = env("CARD_WEBHOOK_SECRET", None, text)
    store_webhook_token: str | None = env("STORE_WEBHOOK_TOKEN", None, text)
    # Who checks in-app purchases: `sandbox` (receipts `sandbox:<transaction>:<product>`) or `stores`
    # (the App Store Server API and the Google Play Developer API at the URLs below).
    iap_verifier: str = env("IAP_VERIFIER", "sandbox", text)
    apple_api_url: str = env("APPLE_API_URL", "https://api.storekit.itunes.apple.com", text)
    apple_api_token: str | None = env("APPLE_API_TOKEN", None, text)
    google_api_url: str = env("GOOGLE_API_URL", "https://androidpublisher.googleapis.com", text)
    google_api_token: str | None = env("GOOGLE_API_TOKEN", None, text)
    google_package: str = env("GOOGLE_PACKAGE", "com.svc.app", text)
    # The service's own exchange account, whose incoming USDT transfers pay for plans (unset: no channel).
    payment_exchange_key: str | None = env("PAYMENT_EXCHANGE_KEY", None, text)
    payment_exchange_secret: str | None = env("PAYMENT_EXCHANGE_SECRET", None, text)
    # The OpenID provider of `identity_login` (its issuer URL) and this service's client id there.
    oidc_issuer: str | None = env("OIDC_ISSUER", None, text)
    oidc_audience: str | None = env("OIDC_AUDIENCE", None, text)
    oidc_jwks_cooldown_seconds: float = env("OIDC_JWKS_COOLDOWN_SECONDS", 30.0, number(positive=False))
    # Connections `svc serve` holds at most (uvicorn's limit_concurrency): past it a new request is a 503,
    # so stalled clients cannot hold every connection.
    max_connections: int = env("SVC_MAX_CONNECTIONS", 2048, int_at_least(1))
    # Open WebSockets per process; past it a handshake gets an HTTP 429.
    ws_max_connections: int = env("WS_MAX_CONNECTIONS", 1000, int_at_least(1))
    # Education checkout: open (1) or closed (0), the catalog's currency, how long a checkout session
    # stays payable, and seconds between the payment provider's callback retries (0: off).
    edu_checkout_open: int = env("EDU_CHECKOUT_OPEN", 1, int_at_least(0))
    edu_currency: str = env("EDU_CURRENCY", "USD", text)
    edu_checkout_ttl_seconds: int = env("EDU_CHECKOUT_TTL_SECONDS", 1800, int_at_least(60))
    edu_payment_poll_seconds: float = env("EDU_PAYMENT_POLL_SECONDS", 5.0, number(positive=False))
    # Seconds between runs of the uploads worker (processing, takeovers, abandoned uploads; 0: off).
    edu_upload_poll_seconds: float = env("EDU_UPLOAD_POLL_SECONDS", 2.0, number(positive=False))
    # Education payouts: the platform's commission and the payment fee (percent of each sale), the
    # minimum payout in whole USD for Turkey-based (paid in TRY) and international sellers, and
    # seconds between the payout scheduler's checks (it runs between the 20th and 30th; 0: off).
    edu_commission_pct: float = env("EDU_COMMISSION_PCT", 20.0, percent)
    edu_payment_fee_pct: float = env("EDU_PAYMENT_FEE_PCT", 3.0, percent)
    edu_payout_min_tr_usd: int = env("EDU_PAYOUT_MIN_TR_USD", 20, int_at_least(0))
    edu_payout_min_intl_usd: int = env("EDU_PAYOUT_MIN_INTL_USD", 250, int_at_least(0))
    edu_payout_check_seconds: float = env("EDU_PAYOUT_CHECK_SECONDS", 3600.0, number(positive=False))
    # A currency rate older than this (hours) is not used by the payout run: it refuses to pay.
    edu_fx_max_age_hours: float = env("EDU_FX_MAX_AGE_HOURS", 72.0, number(positive=True))
    # 1: start-up loads the bundled samples (economic news and calendar) into an empty store.
    seed_samples: int = env("SVC_SEED_SAMPLES", 1, int_at_least(0))

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource, **_: Any
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Settings made in code never read the process environment (a test's settings stay what it
        # wrote, whatever the shell exports): from_env is the one reader.
        return (init_settings,)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the settings from ``environ`` (default ``os.environ``).

        Each field's variable is read (its value stripped; empty is unset) and parsed by the rule
        beside the field; a bad value raises ``ValueError`` naming the variable. Derived defaults:
        ``DATABASE_URL`` an SQLite file under ``SVC_VAR_DIR``, ``SECRET_KEY`` (used verbatim)
        generated once and kept in ``<var>/secret_key``, ``MARKET_FEED`` ``embedded``.

        Example:
            >>> Settings.from_env({"SECRET_KEY": "s" * 32, "CORS_ORIGINS": "https://a.io, https://b.io"}).cors_origins
            ('https://a.io', 'https://b.io')
            >>> Settings.from_env({"SECRET_KEY": "s" * 32, "RATE_LIMIT_SCALE": "lots"})
            Traceback (most recent call last):
            ...
            ValueError: RATE_LIMIT_SCALE must be a number > 0, got 'lots'
        """
        env = os.environ if environ is None else environ
        raw = _read(env, VARS)
        var_dir = Path(raw.get("SVC_VAR_DIR") or REPO / "var")
        raw.setdefault("DATABASE_URL", f"sqlite:///{var_dir / 'svc.db'}")
        raw["SECRET_KEY"] = _secret_key(env.get("SECRET_KEY"), var_dir)
        raw.setdefault("MARKET_FEED", "embedded")
        return _build(cls, raw)

    @classmethod
    def default(cls, name: str) -> Any:
        """The default of the field ``name``.

        Example:
            >>> Settings.default("header_read_timeout")
            5.0
        """
        return cls.model_fields[name].default

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (field names), checked as construction checks them.

        Example:
            >>> s = Settings(database_url="sqlite://", secret_key=b"k" * 32)
            >>> s.replace(backtest_threads=4).backtest_threads, s.backtest_threads
            (4, 2)
        """
        return type(self)(**{**{name: getattr(self, name) for name in type(self).model_fields}, **changes})


#: Every field's variable: variable -> (``Settings`` field, its :class:`Var`).
VARS: Mapping[str, tuple[str, Var]] = MappingProxyType(
    {
        var.name: (field_name, var)
        for field_name, info in Settings.model_fields.items()
        for var in info.metadata
        if isinstance(var, Var)
    }
)
#: The tunables (variables without a derived default): variable -> (field, parser of the raw text).
TUNABLES: Mapping[str, tuple[str, Callable[[str, str], Any]]] = MappingProxyType(
    {name: (field_name, var.parse) for name, (field_name, var) in VARS.items() if var.tunable and var.parse}
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
    for name, value in _read(environ, TUNABLES).items():
        field_name, parse = TUNABLES[name]
        out[field_name] = parse(name, value)
    return out


def _read(environ: Mapping[str, str], names: Mapping[str, Any]) -> dict[str, Any]:
    """The variables of ``names`` set in ``environ``, stripped, empty ones left out."""
    return {name: value.strip() for name in names if (value := environ.get(name)) and value.strip()}


def _build(cls: type[Settings], raw: dict[str, Any]) -> Settings:
    # Pydantic wraps a parser's error in a ValidationError ("1 validation error for Settings ...");
    # a start-up stopped by a bad variable says only what is wrong with it.
    try:
        return cls(**raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, ValueError):
            raise cause from None
        raise ValueError(f"{error['loc'][0]} {error['msg'].lower()}, got {error['input']!r}") from None


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
