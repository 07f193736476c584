"""Trend data through HTTP: the refresh job, trend_signals (licence for later pages), detail,
sentiment and its history, tracking with expiry (injectable clock), on the small synthetic market."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest
import sqlalchemy as sa

from svc_api.accounts.tables import accounts
from svc_api.market.service import catalog_of
from svc_api.settings import Settings
from svc_api.trends import refresh as trend_refresh
from svc_api.trends import routes as trend_routes
from svc_api.trends import service as trends
from svc_api.trends.tables import trend_signals
from svc_engine.data import DataStore, load_klines
from svc_engine.data.synthetic import generate_market
from svc_engine.data.times import ms_columns
from svc_engine.trend import scan_trends, sentiment_history, sentiment_item, signal_detail, trend_indicator

if TYPE_CHECKING:
    from tests.api.conftest import Api

SECRET = b"test-secret-key-0123456789abcdef"
DATA_END = 1_793_491_200  # close of the newest candle of the small market: market time "now"
WEEK = 7 * 86_400
COINS = ["BTCUSDT", "DOTUSDT", "ETHUSDT", "INJUSDT", "SOLUSDT"]


@pytest.fixture(scope="module")
def market_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("market")
    generate_market(DataStore(root), small=True)
    return root


@pytest.fixture(scope="module")
def expected(market_dir: Path) -> list[dict[str, Any]]:
    """The engine's signals of the last week of market time, in the list's order."""
    scan = scan_trends(COINS, ["1h", "4h"], since=DATA_END - WEEK, store=DataStore(market_dir))
    rows: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    for r in ms_columns(scan).iter_rows(named=True):
        rows.setdefault((r["symbol"], r["timeframe"], r["open_time"] // 1000, r["way"]), r)
    ordered = sorted(rows, key=lambda k: (-k[2], k[0], k[1], k[3]))
    return [
        {
            "coin_name": k[0],
            "graph_type": k[1],
            "timestamp": str(k[2]),
            "way": k[3],
            "is_return_to_trend": rows[k]["is_return_to_trend"],
            "klines_data": [],
        }
        for k in ordered
    ]


@pytest.fixture
def tapi(
    make_api: Any, database_url: str, tmp_path: Path, market_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Api:
    """A client on the parametrised database; the background job is off, tests refresh by hand."""
    monkeypatch.setenv("TREND_REFRESH_SECONDS", "0")
    return make_api(
        Settings(database_url=database_url, secret_key=SECRET, var_dir=tmp_path / "var", data_dir=market_dir)
    )


def refresh(api: Api, wall_now: int | None = None) -> dict[str, int]:
    services = api.app.state.services
    now = services.clock.now() if wall_now is None else wall_now
    return trend_refresh.refresh_once(services.store, catalog_of(services), wall_now=now)


def get(api: Api, request_type: str, token: str | None = None, **params: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return api.get("/tradingdata", params={"request_type": request_type, **params}, headers=headers)


def licensed(api: Api) -> str:
    user = api.register()
    with api.app.state.services.store.write() as conn:
        conn.execute(
            accounts.update()
            .where(accounts.c.svc_id == user["svc_id"])
            .values(plan="pro", license_expires_at=int(time.time()) + 86_400)
        )
    return str(user["session_token"])


def expiry(api: Api, item: dict[str, Any]) -> int | None:
    with api.app.state.services.store.read() as conn:
        return conn.execute(
            sa.select(trend_signals.c.expires_at).where(
                (trend_signals.c.symbol == item["coin_name"])
                & (trend_signals.c.timeframe == item["graph_type"])
                & (trend_signals.c.ts == int(item["timestamp"]))
                & (trend_signals.c.way == item["way"])
            )
        ).scalar()


# ---- the store of signals and the list ------------------------------------------------------------


def test_refresh_stores_the_engines_signals_and_the_list_serves_them(tapi: Api, expected: list[Any]) -> None:
    assert len(expected) == 20
    assert get(tapi, "trend_signals").json() == {"items": [], "page": 0, "count": 0, "last_page": 0}
    assert refresh(tapi) == {"series": 10, "found": 20, "added": 20, "removed": 0}
    assert refresh(tapi)["added"] == 0  # idempotent
    tapi.app.state.services._cache.clear()  # the first, empty page was cached for LIST_TTL
    body = get(tapi, "trend_signals").json()
    assert body == {"items": expected, "page": 0, "count": 20, "last_page": 0}
    assert expiry(tapi, expected[0]) == int(expected[0]["timestamp"]) + WEEK


def test_pages_after_the_first_need_a_license(tapi: Api, expected: list[Any]) -> None:
    refresh(tapi)
    first = get(tapi, "trend_signals", limit=7).json()
    assert first["items"] == expected[:7] and first["last_page"] == 2
    refused = get(tapi, "trend_signals", page=1, limit=7)
    assert refused.status_code == 403 and refused.json()["code"] == "license_required"
    free = tapi.register()["session_token"]
    assert get(tapi, "trend_signals", free, page=1).status_code == 403
    token = licensed(tapi)
    second = get(tapi, "trend_signals", token, page=1, limit=7).json()
    assert second == {"items": expected[7:14], "page": 1, "count": 7, "last_page": 2}
    assert get(tapi, "trend_signals", token, page=3, limit=7).json()["items"] == []
    assert get(tapi, "trend_signals", limit=500).json()["count"] == 20  # clamped to 50
    for bad in ({"limit": "x"}, {"limit": 0}, {"page": "one"}, {"page": -1}):
        assert get(tapi, "trend_signals", **bad).status_code == 400, bad


def test_signal_detail_is_the_engines(tapi: Api, expected: list[Any], market_dir: Path) -> None:
    first = expected[0]
    reply = get(
        tapi,
        "trend_signal_detail",
        coin_name=first["coin_name"],
        graph_type=first["graph_type"],
        timestamp=first["timestamp"],
    )
    assert reply.status_code == 200, reply.text
    item = reply.json()["item"]
    engine = signal_detail(
        first["coin_name"], first["graph_type"], first["timestamp"], store=DataStore(market_dir)
    )
    assert item == engine
    assert len(item["klines_data"]) == 200 and item["trend_data"]
    assert {k: item[k] for k in ("coin_name", "graph_type", "timestamp", "way")} == {
        k: first[k] for k in ("coin_name", "graph_type", "timestamp", "way")
    }
    same = get(
        tapi,
        "trend_signal_detail",
        coin_name=first["coin_name"],
        graph_type=first["graph_type"],
        timestamp=first["timestamp"],
        way=first["way"].lower(),
    )
    assert same.json()["item"] == engine
    other = "SELL" if first["way"] == "BUY" else "BUY"
    assert (
        get(
            tapi,
            "trend_signal_detail",
            coin_name=first["coin_name"],
            graph_type=first["graph_type"],
            timestamp=first["timestamp"],
            way=other,
        ).status_code
        == 404
    )
    assert (
        get(
            tapi,
            "trend_signal_detail",
            coin_name=first["coin_name"],
            graph_type=first["graph_type"],
            timestamp=first["timestamp"],
            way="UP",
        ).status_code
        == 400
    )
    missing = get(tapi, "trend_signal_detail", coin_name="BTCUSDT", graph_type="1h")
    assert missing.status_code == 400 and "timestamp" in missing.json()["message"]
    assert (
        get(
            tapi, "trend_signal_detail", coin_name="BTCUSDT", graph_type="60", timestamp=first["timestamp"]
        ).status_code
        == 400
    )
    assert (
        get(tapi, "trend_signal_detail", coin_name="BTCUSDT", graph_type="1h", timestamp="soon").status_code
        == 400
    )
    unknown = get(tapi, "trend_signal_detail", coin_name="BTCUSDT", graph_type="1h", timestamp="1793401201")
    assert unknown.status_code == 404
    assert (
        get(
            tapi, "trend_signal_detail", coin_name="XRPUSDT", graph_type="1h", timestamp=first["timestamp"]
        ).status_code
        == 404
    )


# ---- tracking -------------------------------------------------------------------------------------


def track_body(item: dict[str, Any], minutes: str) -> dict[str, str]:
    return {
        "coin_name": item["coin_name"],
        "timeframe": minutes,
        "way": item["way"],
        "timestamp": item["timestamp"],
    }


def test_tracking_suspends_expiry_until_the_last_untrack(tapi: Api, expected: list[Any]) -> None:
    refresh(tapi)
    item = next(i for i in expected if i["graph_type"] == "4h")
    body = track_body(item, "240")
    one, two = tapi.register()["session_token"], tapi.register()["session_token"]
    assert get(tapi, "track_trend_break_signal", one, **body).json() == {"tracked": True}
    assert get(tapi, "track_trend_break_signal", one, **body).json() == {"tracked": True}  # idempotent
    by_name = {**body, "timeframe": "4h"}
    assert get(tapi, "track_trend_break_signal", two, **by_name).json() == {"tracked": True}
    assert expiry(tapi, item) is None
    assert get(tapi, "untrack_trend_break_signal", one, **body).json() == {"tracked": False}
    assert expiry(tapi, item) is None  # the second user still tracks it
    assert get(tapi, "untrack_trend_break_signal", two, **body).json() == {"tracked": False}
    assert expiry(tapi, item) == int(item["timestamp"]) + WEEK


def test_track_errors(tapi: Api, expected: list[Any]) -> None:
    refresh(tapi)
    token = tapi.register()["session_token"]
    body = track_body(expected[0], "60")
    assert get(tapi, "track_trend_break_signal", **body).status_code == 401
    assert get(tapi, "untrack_trend_break_signal", **body).json()["code"] == "session_expired"
    assert get(tapi, "tracked_trend_break_signals").status_code == 401
    for field in body:
        partial = {k: v for k, v in body.items() if k != field}
        for op in ("track_trend_break_signal", "untrack_trend_break_signal"):
            reply = get(tapi, op, token, **partial)
            assert reply.status_code == 400 and field in reply.json()["message"], (op, field)
    for bad in ({"way": "UP"}, {"timeframe": "61"}, {"timestamp": "x"}, {"coin_name": "BTC/USDT"}):
        assert get(tapi, "track_trend_break_signal", token, **{**body, **bad}).status_code == 400, bad
    unknown = get(tapi, "track_trend_break_signal", token, **{**body, "timestamp": "1700000000"})
    assert unknown.status_code == 404
    assert get(tapi, "untrack_trend_break_signal", token, **{**body, "timestamp": "1700000000"}).json() == {
        "tracked": False
    }


def test_expiry_in_market_time_with_an_injected_clock(tapi: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    old = DATA_END - WEEK - 3600  # a signal that has expired by the end of the data
    row = {
        "symbol": "BTCUSDT",
        "timeframe": "1h",
        "ts": old,
        "way": "BUY",
        "market": "crypto",
        "is_return_to_trend": False,
    }
    with tapi.app.state.services.store.write() as conn:
        assert trends.upsert_signals(conn, [row], now=old) == 1
    item = {"coin_name": "BTCUSDT", "graph_type": "1h", "timestamp": str(old), "way": "BUY"}
    token = tapi.register()["session_token"]
    body = track_body(item, "60")
    assert get(tapi, "track_trend_break_signal", token, **body).status_code == 404  # expired at market time
    monkeypatch.setattr(trend_routes, "clock", lambda: old + 600)  # a wall clock from before its expiry
    assert get(tapi, "track_trend_break_signal", token, **body).json() == {"tracked": True}
    monkeypatch.setattr(trend_routes, "clock", time.time)
    assert refresh(tapi)["removed"] == 0 and expiry(tapi, item) is None  # tracked: never expires
    listed = [i["timestamp"] for i in get(tapi, "trend_signals", limit=50).json()["items"]]
    assert str(old) in listed
    assert get(tapi, "untrack_trend_break_signal", token, **body).json() == {"tracked": False}
    assert expiry(tapi, item) == old + WEEK
    assert refresh(tapi)["removed"] == 1
    assert expiry(tapi, item) is None
    assert get(tapi, "track_trend_break_signal", token, **body).status_code == 404


def test_expired_signals_are_removed_only_when_untracked() -> None:
    from svc_api.core.store import Store
    from svc_api.migrations import migrate

    store = Store("sqlite:///:memory:")
    migrate(store)
    rows = [
        {
            "symbol": s,
            "timeframe": "1h",
            "ts": 1000,
            "way": "SELL",
            "market": "crypto",
            "is_return_to_trend": False,
        }
        for s in ("AUSDT", "BUSDT")
    ]
    with store.write() as conn:
        conn.execute(
            accounts.insert().values(
                svc_id="AB12CD",
                email="a@b.c",
                password_hash="x",
                password_salt="y",
                referral_code="R1",
                created_at=0,
            )
        )
        trends.upsert_signals(conn, rows, now=1000, ttl=100)
        trends.track(conn, "AB12CD", trends.SignalKey("AUSDT", "1h", 1000, "SELL"), now=1050)
        assert trends.remove_expired(conn, now=1099) == 0
        assert trends.remove_expired(conn, now=1100) == 1  # BUSDT
        assert trends.list_signals(conn, page=0, limit=50, now=5000)[1] == 1
        trends.untrack(conn, "AB12CD", trends.SignalKey("AUSDT", "1h", 1000, "SELL"), ttl=100)
        assert trends.list_signals(conn, page=0, limit=50, now=5000) == ([], 0)
        assert trends.remove_expired(conn, now=5000) == 1


def test_tracked_list_pages_with_signed_cursors(tapi: Api, expected: list[Any], market_dir: Path) -> None:
    refresh(tapi)
    token, other = tapi.register()["session_token"], tapi.register()["session_token"]
    chosen = expected[:3]
    for item in reversed(chosen):
        minutes = "60" if item["graph_type"] == "1h" else "240"
        assert get(tapi, "track_trend_break_signal", token, **track_body(item, minutes)).status_code == 200
    first = get(tapi, "tracked_trend_break_signals", token, limit=2).json()
    assert [i["timestamp"] for i in first["items"]] == [c["timestamp"] for c in chosen[:2]]
    detail = first["items"][0]
    assert detail == signal_detail(
        detail["coin_name"], detail["graph_type"], detail["timestamp"], store=DataStore(market_dir)
    )
    assert isinstance(first["last_key"], str)
    second = get(tapi, "tracked_trend_break_signals", token, limit=2, cursor=first["last_key"]).json()
    assert [i["coin_name"] for i in second["items"]] == [chosen[2]["coin_name"]]
    assert second["last_key"] is None
    assert get(tapi, "tracked_trend_break_signals", other).json() == {"items": [], "last_key": None}
    assert get(tapi, "tracked_trend_break_signals", other, cursor=first["last_key"]).status_code == 400
    assert get(tapi, "tracked_trend_break_signals", token, cursor="garbage").status_code == 400
    # A list the spec gives only a maximum ("max 50") clamps a larger limit; below 1 is a 400.
    assert len(get(tapi, "tracked_trend_break_signals", token, limit=51).json()["items"]) == 3
    assert get(tapi, "tracked_trend_break_signals", token, limit=0).status_code == 400
    assert len(get(tapi, "tracked_trend_break_signals", token).json()["items"]) == 3  # default 20


INTERNAL = {"gsi_pk", "ttl", "telegram_link", "tracked_users"}
"""Fields of the original store that the spec says are stripped from every trend reply."""
STORED_ONLY = {"market", "detected_at", "expires_at", "svc_id", "created_at", "symbol", "ts"}
"""Columns of ``trend_signals``/``trend_tracks`` that are the server's own (``coin_name`` and
``timestamp`` are their public names)."""
LIST_ITEM = {"coin_name", "graph_type", "timestamp", "way", "is_return_to_trend", "klines_data"}


def _keys(value: Any) -> set[str]:
    """Every key of every object nested in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_trend_replies_carry_no_internal_fields(tapi: Api, expected: list[Any]) -> None:
    """List, detail, track and tracked list: exactly the documented fields, never an internal one."""
    refresh(tapi)
    first = expected[0]
    token = licensed(tapi)
    minutes = "60" if first["graph_type"] == "1h" else "240"
    replies = [
        get(tapi, "trend_signals"),
        get(tapi, "trend_signals", token, page=1, limit=7),
        get(
            tapi,
            "trend_signal_detail",
            coin_name=first["coin_name"],
            graph_type=first["graph_type"],
            timestamp=first["timestamp"],
        ),
        get(tapi, "track_trend_break_signal", token, **track_body(first, minutes)),
        get(tapi, "tracked_trend_break_signals", token),
    ]
    bodies = [r.json() for r in replies]
    assert [r.status_code for r in replies] == [200] * 5, bodies
    for body in bodies:
        assert not _keys(body) & (INTERNAL | STORED_ONLY), body.keys()
    assert all(set(item) == LIST_ITEM for item in bodies[0]["items"] + bodies[1]["items"])
    assert set(bodies[2]["item"]) == LIST_ITEM | {"trend_data"}
    [tracked] = bodies[4]["items"]
    assert set(tracked) == LIST_ITEM | {"trend_data"}
    # the trend_data anchors are [timestamp_ms, candle_index, price] triples, nothing more
    lines = bodies[2]["item"]["trend_data"]
    assert lines and all(len(point) == 3 for line in lines.values() for point in line)


# ---- sentiment ------------------------------------------------------------------------------------


def test_trend_indicator_is_the_engines_latest_score(tapi: Api, market_dir: Path) -> None:
    full = trend_indicator(load_klines("BTCUSDT", "1h", store=DataStore(market_dir)))
    want = sentiment_item("BTCUSDT#1h", full.row(-1, named=True))
    assert get(tapi, "trend_indicator").json() == {"market_key": "BTCUSDT#1h", "item": want, "count": 1}
    assert get(tapi, "trend_indicator", market_key="BTC#1h").json()["item"] == want
    four = trend_indicator(load_klines("ETHUSDT", "4h", store=DataStore(market_dir)))
    reply = get(tapi, "trend_indicator", market_key="ETHUSDT#4h").json()
    assert reply["item"] == sentiment_item("ETHUSDT#4h", four.row(-1, named=True))
    for key, status in (("BTCUSDT-1h", 400), ("BTCUSDT#7h", 400), ("BTC USDT#1h", 400), ("XRPUSDT#1h", 404)):
        assert get(tapi, "trend_indicator", market_key=key).status_code == status, key


def test_trend_indicator_history_pages_back_through_the_whole_series(tapi: Api, market_dir: Path) -> None:
    full = trend_indicator(load_klines("BTCUSDT", "1h", store=DataStore(market_dir)))
    page = get(tapi, "trend_indicator_history").json()
    assert page == sentiment_history("BTCUSDT#1h", full, limit=200)
    assert page["count"] == 200 and page["has_more"] is True
    seen = [i["timestamp"] for i in page["items"]]
    while page["has_more"]:
        page = get(
            tapi, "trend_indicator_history", market_key="BTCUSDT#1h", before=page["next_before_timestamp"]
        ).json()
        seen += [i["timestamp"] for i in page["items"]]
    assert seen == [t // 1000 for t in ms_columns(full)["open_time"].to_list()[::-1]]  # 1440 hours, once
    assert page["next_before_timestamp"] is None
    small = get(tapi, "trend_indicator_history", limit=3, before=1_790_000_000).json()
    assert small == sentiment_history("BTCUSDT#1h", full, limit=3, before=1_790_000_000)
    assert get(tapi, "trend_indicator_history", limit=999).json()["limit"] == 200
    assert get(tapi, "trend_indicator_history", before=0).json()["items"] == []
    for bad in ({"limit": "x"}, {"before": "yesterday"}, {"market_key": "BTCUSDT"}):
        assert get(tapi, "trend_indicator_history", **bad).status_code == 400, bad


# ---- the background job ---------------------------------------------------------------------------


def test_the_app_refreshes_in_the_background(
    make_api: Any, tmp_path: Path, market_dir: Path, monkeypatch: pytest.MonkeyPatch, expected: list[Any]
) -> None:
    monkeypatch.setenv("TREND_REFRESH_SECONDS", "3600")
    api = make_api(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'bg.db'}",
            secret_key=SECRET,
            var_dir=tmp_path / "var",
            data_dir=market_dir,
        )
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(trends.LIST_TTL / 5)
        api.app.state.services._cache.clear()
        if get(api, "trend_signals").json()["count"]:
            break
    assert get(api, "trend_signals").json()["items"] == expected


def test_refresh_settings_are_checked() -> None:
    assert trend_refresh.refresh_settings({"TREND_REFRESH_SECONDS": "0"}) == (0.0, ("1h", "4h"))
    bad = ({"TREND_REFRESH_SECONDS": "-1"}, {"TREND_REFRESH_SECONDS": "often"}, {"TREND_TIMEFRAMES": "7h"})
    for env in bad:
        with pytest.raises(ValueError):
            trend_refresh.refresh_settings(env)
    with pytest.raises(ValueError, match="TREND_REFRESH_DELAY_SECONDS"):
        trend_refresh.refresh_delay({"TREND_REFRESH_DELAY_SECONDS": "nan"})


def test_an_app_closed_before_the_delay_scans_nothing(market_dir: Path) -> None:
    scanned: list[int] = []
    job = trend_refresh.TrendRefresher(lambda: None, lambda: scanned.append(1), interval=60, delay=30)
    job.start()
    began = time.monotonic()
    job.stop()
    assert time.monotonic() - began < 5 and scanned == [] and job.last is None


def test_signal_rows_keep_the_first_signal_of_a_key() -> None:
    scan = pl.DataFrame(
        {
            "market": ["crypto", "crypto"],
            "symbol": ["X", "X"],
            "timeframe": ["1h", "1h"],
            "open_time": [7_200_000, 7_200_000],
            "way": ["BUY", "BUY"],
            "is_return_to_trend": [False, True],
        }
    )
    assert trends.signal_rows(scan) == [
        {
            "symbol": "X",
            "timeframe": "1h",
            "ts": 7200,
            "way": "BUY",
            "market": "crypto",
            "is_return_to_trend": False,
        }
    ]
