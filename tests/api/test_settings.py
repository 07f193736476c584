"""Every tunable of the service is a typed ``Settings`` field read once by ``Settings.from_env``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from svc_api.backtests import jobs
from svc_api.core.ratelimit import RateLimitPolicy
from svc_api.settings import REPO, TUNABLES, VARS, Settings

BASE = {"SECRET_KEY": "s" * 32, "DATABASE_URL": "sqlite:///:memory:"}


def test_defaults_without_variables(tmp_path: Path) -> None:
    s = Settings.from_env({**BASE, "SVC_VAR_DIR": str(tmp_path)})
    assert (s.max_concurrent_generations, s.generation_threads) == (2, 2)
    assert (s.backtest_max_concurrent, s.backtest_queue_capacity, s.backtest_threads) == (3, 16, 2)
    assert (s.backtest_stale_seconds, s.object_store_url, s.s3_endpoint_url) == (60.0, None, None)
    assert (s.trend_refresh_seconds, s.trend_refresh_delay_seconds, s.trend_timeframes) == (
        300.0,
        2.0,
        ("1h", "4h"),
    )
    assert (s.rate_limit_scale, s.rate_limit_guest, s.request_threads) == (1.0, 20, 4)
    assert s.market_feed == "embedded"  # a served app keeps its market going; Settings in code: off
    assert s == Settings(
        database_url="sqlite:///:memory:", secret_key=b"s" * 32, var_dir=tmp_path, market_feed="embedded"
    )
    assert Settings(database_url="sqlite://", secret_key=b"s" * 32).market_feed == "off"
    off = {**BASE, "SVC_VAR_DIR": str(tmp_path), "MARKET_FEED": "off"}
    assert Settings.from_env(off).market_feed == "off"
    with pytest.raises(ValueError, match="MARKET_FEED must be one of embedded, binance, off, got 'nasdaq'"):
        Settings.from_env({**BASE, "SVC_VAR_DIR": str(tmp_path), "MARKET_FEED": "nasdaq"})


def test_every_variable_is_read() -> None:
    env = {
        "SVC_MAX_CONCURRENT_GENERATIONS": "5",
        "SVC_GENERATION_THREADS": "0",
        "BACKTEST_MAX_CONCURRENT": "4",
        "BACKTEST_QUEUE_CAPACITY": "8",
        "BACKTEST_THREADS": "3",
        "BACKTEST_STALE_SECONDS": "90.5",
        "OBJECT_STORE_URL": "s3://b/p",
        "S3_ENDPOINT_URL": "http://127.0.0.1:9000",
        "TREND_REFRESH_SECONDS": "0",
        "TREND_REFRESH_DELAY_SECONDS": "0.5",
        "TREND_TIMEFRAMES": "4h, 1d",
        "RATE_LIMIT_SCALE": "2.5",
        "RATE_LIMIT_GUEST": "7",
        "REQUEST_THREADS": "6",
        "SVC_RUN_WORKERS": "0",
        "BODY_READ_TIMEOUT_SECONDS": "7.5",
        "HEADER_READ_TIMEOUT_SECONDS": "3",
        "TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2",
        "RATE_LIMIT_PREFIX": "p1",
        "MARKET_REPLAY_SPEED": "600",
        "MARKET_REPLAY_FROM": "1790812800",
        "SIGNAL_POLL_SECONDS": "2.5",
        "MARKETPLACE_FEE_PCT": "15",
        "NOTIFY_POLL_SECONDS": "0.5",
        "SMTP_URL": "smtp://127.0.0.1:2525",
        "MAIL_FROM": "ops@example.com",
        "BOT_API_URL": "http://127.0.0.1:8081",
        "BOT_TOKEN": "1:abc",
        "COMMUNITY_PURGE_SECONDS": "60",
        "SVC_SEED_SAMPLES": "0",
        "EXCHANGE": "binance",
        "ORDER_PROXY_IP": "203.0.113.7",
        "EXCHANGE_ENCRYPTION_KEYS": "k1,k2",
        "EXCHANGE_POLL_SECONDS": "3",
        "CARD_WEBHOOK_SECRET": "cs",
        "STORE_WEBHOOK_TOKEN": "st",
        "IAP_VERIFIER": "stores",
        "APPLE_API_URL": "http://a",
        "APPLE_API_TOKEN": "at",
        "GOOGLE_API_URL": "http://g",
        "GOOGLE_API_TOKEN": "gt",
        "GOOGLE_PACKAGE": "p.q",
        "PAYMENT_EXCHANGE_KEY": "pk",
        "PAYMENT_EXCHANGE_SECRET": "ps",
        "OIDC_ISSUER": "https://id.example",
        "OIDC_AUDIENCE": "svc",
        "OIDC_JWKS_COOLDOWN_SECONDS": "10",
        "WS_MAX_CONNECTIONS": "7",
        "SVC_MAX_CONNECTIONS": "300",
        "BINANCE_API_URL": "http://127.0.0.1:1",
        "BINANCE_FUTURES_URL": "http://127.0.0.1:2",
        "EDU_CHECKOUT_OPEN": "0",
        "EDU_CURRENCY": "EUR",
        "EDU_CHECKOUT_TTL_SECONDS": "600",
        "EDU_PAYMENT_POLL_SECONDS": "2",
        "EDU_UPLOAD_POLL_SECONDS": "0.5",
        "EDU_COMMISSION_PCT": "12.5",
        "EDU_PAYMENT_FEE_PCT": "0",
        "EDU_PAYOUT_MIN_TR_USD": "25",
        "EDU_PAYOUT_MIN_INTL_USD": "300",
        "EDU_PAYOUT_CHECK_SECONDS": "0",
        "EDU_FX_MAX_AGE_HOURS": "24",
        "MARKET_FEED_SECONDS": "0.5",
        "MARKET_FEED_SYMBOLS": "btcusdt, ETHUSDT",
        "MARKET_FEED_BACKFILL_DAYS": "30",
        "SIGNAL_LEASE_SECONDS": "12",
        "RETENTION_SWEEP_SECONDS": "600",
        "BACKTEST_RETENTION_DAYS": "free=2,pro=45",
        "MAIL_RETENTION_DAYS": "3",
        "EDU_FAILED_UPLOAD_DAYS": "0",
        "EDU_UPLOAD_PART_RESENDS": "5",
        "BOT_WEBHOOK_URL": "https://svc.example/bot/webhook",
        "BOT_WEBHOOK_SECRET": "wh",
        "BOT_POLL_TIMEOUT": "5",
        "BOT_TICK_SECONDS": "0.5",
        "BOT_SECRET_TTL": "30",
        "BOT_RATE_PER_MINUTE": "12",
    }
    assert sorted(env) == sorted(TUNABLES)
    s = Settings.from_env({**BASE, **env})
    assert (s.bot_webhook_url, s.bot_webhook_secret, s.bot_poll_timeout, s.bot_tick_seconds) == (
        "https://svc.example/bot/webhook",
        "wh",
        5.0,
        0.5,
    )
    assert (s.bot_secret_ttl, s.bot_rate_per_minute) == (30.0, 12)
    assert (s.max_concurrent_generations, s.generation_threads, s.backtest_max_concurrent) == (5, 0, 4)
    assert (s.backtest_queue_capacity, s.backtest_threads, s.backtest_stale_seconds) == (8, 3, 90.5)
    assert (s.object_store_url, s.s3_endpoint_url) == ("s3://b/p", "http://127.0.0.1:9000")
    assert (s.trend_refresh_seconds, s.trend_refresh_delay_seconds, s.trend_timeframes) == (
        0.0,
        0.5,
        ("4h", "1d"),
    )
    assert s.request_threads == 6
    assert (s.run_workers, s.body_read_timeout, s.trusted_proxies) == (0, 7.5, ("10.0.0.1", "10.0.0.2"))
    assert (s.header_read_timeout, s.max_connections) == (3.0, 300)
    assert s.rate_limit_prefix == "p1"
    assert (s.market_replay_speed, s.market_replay_from) == (600.0, 1_790_812_800)
    assert (s.market_feed_seconds, s.market_feed_symbols) == (0.5, ("BTCUSDT", "ETHUSDT"))
    assert s.market_feed_backfill_days == 30.0
    assert s.signal_lease_seconds == 12
    assert (s.retention_sweep_seconds, s.mail_retention_days, s.edu_failed_upload_days) == (600.0, 3.0, 0.0)
    assert s.edu_upload_part_resends == 5 and Settings.from_env(BASE).edu_upload_part_resends == 3
    assert dict(s.backtest_retention_days) == {
        "free": 2.0,
        "starter": 30.0,
        "plus": 30.0,
        "pro": 45.0,
        "investor": 365.0,
    }
    assert (s.signal_poll_seconds, s.marketplace_fee_pct) == (2.5, 15.0)
    assert (s.notify_poll_seconds, s.smtp_url, s.mail_from) == (
        0.5,
        "smtp://127.0.0.1:2525",
        "ops@example.com",
    )
    assert (s.bot_api_url, s.bot_token, s.community_purge_seconds, s.seed_samples) == (
        "http://127.0.0.1:8081",
        "1:abc",
        60.0,
        0,
    )
    assert (s.exchange, s.order_proxy_ip, s.exchange_encryption_keys, s.exchange_poll_seconds) == (
        "binance",
        "203.0.113.7",
        ("k1", "k2"),
        3.0,
    )
    assert (s.card_webhook_secret, s.store_webhook_token, s.iap_verifier) == ("cs", "st", "stores")
    assert (s.edu_checkout_open, s.edu_currency, s.edu_checkout_ttl_seconds, s.edu_payment_poll_seconds) == (
        0,
        "EUR",
        600,
        2.0,
    )
    assert (
        s.edu_commission_pct,
        s.edu_payment_fee_pct,
        s.edu_payout_min_tr_usd,
        s.edu_payout_min_intl_usd,
        s.edu_payout_check_seconds,
    ) == (12.5, 0.0, 25, 300, 0.0)
    assert (s.edu_upload_poll_seconds, s.edu_fx_max_age_hours) == (0.5, 24.0)
    assert (s.apple_api_url, s.apple_api_token, s.google_api_url, s.google_api_token, s.google_package) == (
        "http://a",
        "at",
        "http://g",
        "gt",
        "p.q",
    )
    assert (s.payment_exchange_key, s.payment_exchange_secret) == ("pk", "ps")
    assert (s.oidc_issuer, s.oidc_audience, s.oidc_jwks_cooldown_seconds) == (
        "https://id.example",
        "svc",
        10.0,
    )
    assert RateLimitPolicy.from_settings(s).limit_for("pro", first_party=True) == 600
    assert RateLimitPolicy.from_settings(s).guest() == 18
    config = jobs.RunnerConfig.from_settings(s)
    assert (config.max_concurrent, config.queue_capacity, config.threads, config.stale_seconds) == (
        4,
        8,
        3,
        90.5,
    )
    assert (config.object_store_url, config.s3_endpoint_url) == ("s3://b/p", "http://127.0.0.1:9000")


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        (
            "SVC_MAX_CONCURRENT_GENERATIONS",
            "0",
            "SVC_MAX_CONCURRENT_GENERATIONS must be an integer >= 1, got '0'",
        ),
        ("SVC_GENERATION_THREADS", "two", "SVC_GENERATION_THREADS must be an integer >= 0, got 'two'"),
        ("BACKTEST_QUEUE_CAPACITY", "1.5", "BACKTEST_QUEUE_CAPACITY must be an integer >= 1, got '1.5'"),
        ("BACKTEST_STALE_SECONDS", "0", "BACKTEST_STALE_SECONDS must be a number > 0, got '0'"),
        ("TREND_REFRESH_SECONDS", "-1", "TREND_REFRESH_SECONDS must be a number >= 0, got '-1'"),
        (
            "TREND_REFRESH_DELAY_SECONDS",
            "nan",
            "TREND_REFRESH_DELAY_SECONDS must be a number >= 0, got 'nan'",
        ),
        ("TREND_TIMEFRAMES", "1h,7h", "TREND_TIMEFRAMES must be comma-separated timeframes of 1m, "),
        ("RATE_LIMIT_SCALE", "inf", "RATE_LIMIT_SCALE must be a number > 0, got 'inf'"),
        ("RATE_LIMIT_GUEST", "-3", "RATE_LIMIT_GUEST must be an integer >= 1, got '-3'"),
        ("REQUEST_THREADS", "0", "REQUEST_THREADS must be an integer >= 1, got '0'"),
        ("EDU_COMMISSION_PCT", "100.5", "EDU_COMMISSION_PCT must be a percentage of 0-100 with at most two"),
        ("EDU_PAYMENT_FEE_PCT", "2.345", "EDU_PAYMENT_FEE_PCT must be a percentage of 0-100 with at most"),
        ("EDU_PAYOUT_MIN_INTL_USD", "-1", "EDU_PAYOUT_MIN_INTL_USD must be an integer >= 0, got '-1'"),
    ],
)
def test_bad_values_name_the_variable(name: str, raw: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        Settings.from_env({**BASE, name: raw})
    assert str(caught.value).startswith(message)


def test_empty_values_keep_the_defaults() -> None:
    s = Settings.from_env({**BASE, "BACKTEST_THREADS": "", "OBJECT_STORE_URL": " "})
    assert (s.backtest_threads, s.object_store_url) == (2, None)


def test_make_api_applies_tunables_set_by_a_test(
    make_api, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_GENERATION_THREADS", "0")
    monkeypatch.setenv("BACKTEST_QUEUE_CAPACITY", "5")
    applied = make_api(settings).app.state.services.settings
    assert (applied.rate_limit_scale, applied.trend_refresh_seconds) == (100.0, 0.0)
    assert (applied.generation_threads, applied.backtest_queue_capacity) == (0, 5)
    assert applied.database_url == settings.database_url


def test_the_documented_table_names_every_variable() -> None:
    """docs/api.md's table lists exactly the variables the fields declare."""
    doc = (REPO / "docs" / "api.md").read_text()
    table = doc[doc.index("| Variable | Default | Effect |") : doc.index("### Retention")]
    documented = {
        name
        for row in table.splitlines()[2:]
        if row.startswith("|")
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])
    }
    assert documented == set(VARS)


def test_replace_checks_the_changes_and_keeps_the_rest(settings: Settings) -> None:
    changed = settings.replace(backtest_threads=4, trusted_proxies=["10.0.0.1"])
    assert (changed.backtest_threads, changed.trusted_proxies) == (4, ("10.0.0.1",))
    assert changed.replace(backtest_threads=settings.backtest_threads, trusted_proxies=()) == settings
    with pytest.raises(ValueError, match="backtest_thread"):
        settings.replace(backtest_thread=4)
    with pytest.raises(ValueError, match="frozen"):
        settings.backtest_threads = 4  # type: ignore[misc]


def test_settings_in_code_do_not_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKTEST_THREADS", "7")
    monkeypatch.setenv("MARKET_FEED", "embedded")
    s = Settings(database_url="sqlite://", secret_key=b"s" * 32)
    assert (s.backtest_threads, s.market_feed) == (2, "off")
