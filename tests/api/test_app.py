"""The app as a whole: platform config, health, dispatch, envelopes, headers of the middleware chain."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest

from svc_api.platform import service as platform
from svc_api.settings import Settings

if TYPE_CHECKING:
    from tests.api.conftest import Api


def test_platform_config_is_public_and_lists_no_coins_without_data(api: Api) -> None:
    reply = api.get("/")
    assert reply.status_code == 200
    assert reply.json() == {
        "GENERAL": "Welcome to svc.",
        "banner_urls": [],
        "supported_coins": [],
        "app_version": "1.0.0",
    }
    assert reply.headers["x-correlation-id"].startswith("svc-")
    assert reply.headers["x-ratelimit-limit"] == "2000"  # guest 20/min, scaled x100 in tests


def _klines(n: int) -> pl.DataFrame:
    t = [1_700_000_000_000 + i * 3_600_000 for i in range(n)]
    return pl.DataFrame(
        {
            "open_time": t,
            "open": [1.0] * n,
            "high": [2.0] * n,
            "low": [0.5] * n,
            "close": [1.5] * n,
            "volume": [10.0] * n,
        }
    )


def test_supported_coins_come_from_the_data_store(make_api: Any, tmp_path: Path) -> None:
    data = pytest.importorskip("svc_engine.data")
    store = data.DataStore(tmp_path / "data")
    for symbol in ("BTCUSDT", "ETHUSDT"):
        store.write_klines("crypto", symbol, "1h", _klines(3))
    store.write_klines("forex", "EURUSD", "1h", _klines(3))
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=b"k" * 32,
        data_dir=tmp_path / "data",
        general_message="Hello",
        banner_urls=("https://cdn.example.com/b1.png",),
    )
    config = make_api(settings).get("/").json()
    assert config["supported_coins"] == ["BTC", "ETH"]
    assert config["GENERAL"] == "Hello"
    assert config["banner_urls"] == ["https://cdn.example.com/b1.png"]


def test_health_reports_the_store(api: Api) -> None:
    assert api.get("/health").json() == {"status": "ok", "store": "ok"}


@pytest.mark.parametrize(
    "request_type", ["no_such_thing", "track_signal", "untrack_signal", "tracked_signals"]
)
def test_unknown_and_retired_request_types_are_405(api: Api, request_type: str) -> None:
    token = api.register()["session_token"]
    reply = api.user(request_type, token=token)
    assert reply.status_code == 405
    assert reply.json() == {
        "error": "invalid_request_type",
        "message": f"unknown request_type {request_type!r} for /user",
    }
    assert reply.headers["x-correlation-id"].startswith("svc-")


def test_tradingdata_and_backtest_unknown_selectors_are_405(api: Api) -> None:
    assert api.get("/tradingdata", params={"request_type": "tracked_signals"}).status_code == 405
    assert api.get("/tradingdata").status_code == 405
    reply = api.post("/backtest", params={"action": "nope"}, json={})
    assert reply.status_code == 405
    assert reply.json()["error"] == "invalid_action"


def test_user_envelope_and_flat_tradingdata(api: Api) -> None:
    token = api.register()["session_token"]
    user = api.user("api_key_status", token=token).json()
    assert user == {"ok": True, "data": {"has_key": False, "key": None, "max_keys": 1}}
    flat = api.get("/tradingdata", params={"request_type": "platform_notifications"}).json()
    assert flat == {"notifications": [], "count": 0}


def test_malformed_json_body_is_400(api: Api) -> None:
    token = api.register()["session_token"]
    reply = api.post(
        "/user",
        params={"request_type": "account_info"},
        content=b"{not json",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert reply.status_code == 400
    assert reply.json() == {"error": "invalid_json", "message": "the body must be a JSON object"}
    array = api.post(
        "/user",
        params={"request_type": "account_info"},
        json=[1],
        headers={"Authorization": f"Bearer {token}"},
    )
    assert array.status_code == 400


def test_wrong_method_and_unknown_path_use_the_error_envelope(api: Api) -> None:
    assert api.get("/user", params={"request_type": "account_info"}).status_code == 405
    missing = api.get("/nowhere")
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"
    assert "x-ratelimit-remaining" in missing.headers


def test_education_answers_unknown_paths_in_its_error_shape(api: Api) -> None:
    # issue 17: education errors read {error: <descriptive message>, code}
    reply = api.get("/education/v1/courses")
    assert reply.status_code == 404
    assert reply.json() == {"error": "not found", "code": "not_found"}


def test_correlation_id_is_echoed_on_errors(api: Api) -> None:
    reply = api.user("account_info", headers={"X-Correlation-ID": "client-retry-0001"})
    assert reply.status_code == 401
    assert reply.headers["x-correlation-id"] == "client-retry-0001"
    assert "X-RateLimit-Remaining" in reply.headers["access-control-expose-headers"]


def test_changelog_is_guest_accessible(api: Api) -> None:
    assert platform.seed_changelog_if_empty(api.app.state.services.store)  # the bundled sample
    log = api.get("/tradingdata", params={"request_type": "changelog"}).json()
    assert log["current_version"] == "1.2.0"
    assert log["latest_build"] == 120
    assert log["min_supported_version"] == "1.0.0"
    assert [r["version"] for r in log["released"]] == ["1.2.0", "1.1.0", "1.0.0"]
    assert [e["title"] for e in log["entries"]] == [
        "Notes",
        "Developer API keys",
        "Notifications",
        "First release",
    ]
    assert log["entries"][0]["date"] is None
    limited = api.get("/tradingdata", params={"request_type": "changelog", "limit": "2"}).json()
    assert len(limited["entries"]) == 2
    newer = api.get("/tradingdata", params={"request_type": "changelog", "min_version": "1.1.0"}).json()
    assert [e["version"] for e in newer["entries"]] == ["1.2.0", "1.2.0", "1.1.0"]
    clamped = api.get("/tradingdata", params={"request_type": "changelog", "limit": "999"})
    assert clamped.status_code == 200
    assert api.get("/tradingdata", params={"request_type": "changelog", "limit": "x"}).status_code == 400
    assert (
        api.get("/tradingdata", params={"request_type": "changelog", "min_version": "v1"}).status_code == 400
    )


@pytest.mark.redis
def test_redis_backed_limits_and_redis_down(make_api: Any, tmp_path: Path) -> None:
    base = {"database_url": f"sqlite:///{tmp_path / 'svc.db'}", "secret_key": b"k" * 32}
    try:
        import redis

        redis.Redis.from_url("redis://127.0.0.1:6379/0", socket_connect_timeout=1).ping()
    except Exception as exc:  # any failure to reach Redis means: skip
        pytest.skip(f"Redis not reachable: {exc}")
    shared = make_api(Settings(**base, redis_url="redis://127.0.0.1:6379/0"), ip=f"10.9.{id(base) % 250}.7")
    reply = shared.get("/")
    assert reply.status_code == 200 and reply.headers["x-ratelimit-limit"] == "2000"
    down = make_api(Settings(**base, redis_url="redis://127.0.0.1:1/0"))
    refused = down.get("/")
    assert refused.status_code == 503
    assert refused.json() == {
        "error": "service_unavailable",
        "reason": "temporarily_unavailable",
        "retry_after": 5,
    }
    assert refused.headers["retry-after"] == "5"


def test_cors_is_configurable(make_api: Any, tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=b"k" * 32,
        cors_origins=("https://app.example.com",),
    )
    api = make_api(settings)
    preflight = api.request(
        "OPTIONS",
        "/user?request_type=account_info",
        headers={
            "Origin": "https://app.example.com",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "X-API-Key, X-API-Secret, Content-Type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example.com"
    simple = api.get("/", headers={"Origin": "https://app.example.com"})
    assert simple.headers["access-control-allow-origin"] == "https://app.example.com"
    assert "X-Correlation-ID" in simple.headers["access-control-expose-headers"]
    other = api.get("/", headers={"Origin": "https://evil.example.com"})
    assert "access-control-allow-origin" not in other.headers


def test_oversized_body_is_413(api: Api) -> None:
    token = api.register()["session_token"]
    reply = api.post(
        "/user",
        params={"request_type": "account_info"},
        content=b'{"pad": "' + b"x" * (1 << 20) + b'"}',
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert reply.status_code == 413
    assert reply.json()["error"] == "payload_too_large"


def test_request_thread_pool_is_sized_by_settings(tmp_path: Path) -> None:
    import asyncio

    import anyio.to_thread

    from svc_api.app import create_app

    settings = Settings(
        database_url="sqlite:///:memory:",
        secret_key=b"k" * 32,
        var_dir=tmp_path,
        request_threads=3,
        trend_refresh_seconds=0.0,
    )
    app = create_app(settings)

    async def tokens_while_serving() -> float:
        async with app.router.lifespan_context(app):
            return anyio.to_thread.current_default_thread_limiter().total_tokens

    assert asyncio.run(tokens_while_serving()) == 3


def test_the_start_up_heap_is_frozen_while_serving_and_given_back_at_shutdown(tmp_path: Path) -> None:
    # A full collection walking the ~190,000 start-up objects stopped the loop for 60-70 ms under
    # load (the p99 of benchmarks/test_bench_api_wrk.py); frozen, they are not walked.
    import asyncio
    import gc

    from svc_api.app import create_app

    settings = Settings(
        database_url="sqlite:///:memory:", secret_key=b"k" * 32, var_dir=tmp_path, trend_refresh_seconds=0.0
    )
    app = create_app(settings)

    async def frozen_while_serving() -> int:
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count()

    assert asyncio.run(frozen_while_serving()) > 50_000
    assert gc.get_freeze_count() == 0
