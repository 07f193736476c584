"""Market data through HTTP: market_ticker, market_quote, get_klines, market_symbol_info,
available_coins and favorite_coin, on the small synthetic market."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest
import sqlalchemy as sa

from svc_api.market import routes as market_routes
from svc_api.market import service as market
from svc_api.market.tables import favorite_coins
from svc_api.settings import Settings
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market

if TYPE_CHECKING:
    from tests.api.conftest import Api

SECRET = b"test-secret-key-0123456789abcdef"
LAST_MS = 1_793_491_140_000  # open of the last 1m candle of the small market (2026-10-31 23:59 UTC)


@pytest.fixture(scope="module")
def market_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("market")
    generate_market(DataStore(root), small=True)
    return root


@pytest.fixture
def no_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TREND_REFRESH_SECONDS", "0")


@pytest.fixture
def mapi(make_api: Any, database_url: str, tmp_path: Path, market_dir: Path, no_refresh: None) -> Api:
    """A client of the service on the parametrised database and the small market."""
    return make_api(
        Settings(database_url=database_url, secret_key=SECRET, var_dir=tmp_path / "var", data_dir=market_dir)
    )


@pytest.fixture
def sapi(make_api: Any, tmp_path: Path, market_dir: Path, no_refresh: None) -> Api:
    """The same on SQLite only, for operations that touch no table."""
    return make_api(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'svc.db'}",
            secret_key=SECRET,
            var_dir=tmp_path / "var",
            data_dir=market_dir,
        )
    )


def get(api: Api, request_type: str, token: str | None = None, **params: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return api.get("/tradingdata", params={"request_type": request_type, **params}, headers=headers)


def candles(root: Path, symbol: str, timeframe: str) -> pl.DataFrame:
    return pl.read_parquet(root / "crypto" / symbol / f"{timeframe}.parquet")


# ---- market_ticker --------------------------------------------------------------------------------


def test_ticker_as_guest_busiest_first_with_exact_values(sapi: Api) -> None:
    reply = get(sapi, "market_ticker")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert [i["symbol"] for i in body["items"]] == ["BTCUSDT", "ETHUSDT", "SOLUSDT", "DOTUSDT", "INJUSDT"]
    assert (body["page"], body["count"], body["total"], body["last_page"]) == (0, 5, 5, 0)
    assert body["items"][0] == {
        "symbol": "BTCUSDT",
        "last_price": "92000.00",
        "change_percent_24h": "3.10",
        "quote_volume_24h": "1810407429.47",
        "market_type": "spot",
        "price_precision": 2,
        "favorite": False,
    }
    assert body["items"][3]["last_price"] == "5.200" and body["items"][3]["price_precision"] == 3


def test_ticker_values_are_the_last_24_hours_of_minute_candles(sapi: Api, market_dir: Path) -> None:
    for item in get(sapi, "market_ticker").json()["items"]:
        day = candles(market_dir, item["symbol"], "1m").filter(pl.col("open_time") > LAST_MS - 86_400_000)
        assert day.height == 1440
        change = (day["close"][-1] / day["open"][0] - 1) * 100
        quote = (day["close"] * day["volume"]).sum()
        assert item["change_percent_24h"] == f"{change:.2f}"
        assert item["quote_volume_24h"] == f"{quote:.2f}"
        assert float(item["last_price"]) == day["close"][-1]


def test_ticker_paging_search_priority_and_errors(sapi: Api) -> None:
    page = get(sapi, "market_ticker", limit=2, page=1).json()
    assert [i["symbol"] for i in page["items"]] == ["SOLUSDT", "DOTUSDT"]
    assert (page["page"], page["count"], page["total"], page["last_page"]) == (1, 2, 5, 2)
    assert get(sapi, "market_ticker", limit=2, page=9).json()["items"] == []
    found = get(sapi, "market_ticker", search="eth").json()
    assert [i["symbol"] for i in found["items"]] == ["ETHUSDT"] and found["total"] == 1
    first = get(sapi, "market_ticker", priority="INJUSDT,dotusdt,NOPEUSDT").json()["items"]
    assert [i["symbol"] for i in first] == ["INJUSDT", "DOTUSDT", "BTCUSDT", "ETHUSDT", "SOLUSDT"]
    assert get(sapi, "market_ticker", limit=5000).json()["count"] == 5  # clamped to 1000
    futures = get(sapi, "market_ticker", market="futures").json()["items"]
    assert {i["market_type"] for i in futures} == {"futures"}
    for bad in (
        {"search": "ET-H"},
        {"priority": "BTC/USDT"},
        {"limit": "x"},
        {"limit": 0},
        {"page": -1},
        {"page": "1.5"},
        {"market": "margin"},
    ):
        reply = get(sapi, "market_ticker", **bad)
        assert reply.status_code == 400, (bad, reply.text)


def test_ticker_rows_are_cached_briefly(sapi: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    assert get(sapi, "market_ticker").status_code == 200
    calls = []
    monkeypatch.setattr(market, "ticker_rows", lambda catalog: calls.append(1) or [])
    assert get(sapi, "market_ticker").json()["total"] == 5  # served from the 5 s cache
    assert calls == []


def test_ticker_serves_recent_rows_marked_stale_while_the_data_store_fails(
    sapi: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = get(sapi, "market_ticker").json()
    assert "_cache" not in fresh

    def broken(catalog: Any) -> list[dict[str, Any]]:
        raise OSError("disk gone")

    monkeypatch.setattr(market, "ticker_rows", broken)
    sapi.app.state.services._cache.pop("market:ticker")  # as if the 5 s had passed
    stale = get(sapi, "market_ticker").json()
    assert stale["items"] == fresh["items"] and stale["_cache"]["stale"] is True
    assert 0 <= stale["_cache"]["age_seconds"] < 60
    quote = get(sapi, "market_quote", symbol="BTCUSDT")
    assert quote.status_code == 503 and quote.json()["reason"] == "data_store_unavailable"
    monkeypatch.setattr(market, "STALE_MAX", 0.0)
    gone = get(sapi, "market_ticker")
    assert gone.status_code == 503 and gone.headers["Retry-After"] == "5"


def test_ticker_flags_the_callers_favorites(mapi: Api) -> None:
    user, other = mapi.register(), mapi.register()
    token = user["session_token"]
    for symbol in ("eth", "SOLUSDT"):
        assert mapi.user("favorite_coin", {"symbol": symbol}, token=token).status_code == 200
    flags = {i["symbol"]: i["favorite"] for i in get(mapi, "market_ticker", token).json()["items"]}
    assert flags == {"BTCUSDT": False, "ETHUSDT": True, "SOLUSDT": True, "DOTUSDT": False, "INJUSDT": False}
    theirs = get(mapi, "market_ticker", other["session_token"]).json()["items"]
    assert not any(i["favorite"] for i in theirs)


# ---- favorite_coin and available_coins ------------------------------------------------------------


def test_favorite_coin_add_remove_uppercase_and_errors(mapi: Api) -> None:
    token = mapi.register()["session_token"]

    def fav(body: dict[str, Any]) -> Any:
        return mapi.user("favorite_coin", body, token=token)

    assert fav({"symbol": "btc"}).json()["data"] == {"symbol": "BTC", "action": "add", "favorites": ["BTC"]}
    assert fav({"symbol": "ethusdt", "action": "add"}).json()["data"]["favorites"] == ["BTC", "ETHUSDT"]
    assert fav({"symbol": "BTC"}).json()["data"]["favorites"] == ["BTC", "ETHUSDT"]  # add twice: no change
    removed = fav({"symbol": "Btc", "action": "remove"}).json()["data"]
    assert removed == {"symbol": "BTC", "action": "remove", "favorites": ["ETHUSDT"]}
    assert fav({"symbol": "BTC", "action": "remove"}).json()["data"]["favorites"] == ["ETHUSDT"]
    bad_bodies = (
        {},
        {"symbol": ""},
        {"symbol": "BTC/USDT"},
        {"symbol": 5},
        {"symbol": "BTC", "action": "toggle"},
    )
    for bad in bad_bodies:
        reply = fav(bad)
        assert reply.status_code == 400, (bad, reply.text)
    assert mapi.user("favorite_coin", {"symbol": "BTC"}).status_code == 401


def test_favorite_coin_holds_at_most_100(mapi: Api) -> None:
    user = mapi.register()
    token = user["session_token"]
    with mapi.app.state.services.store.write() as conn:
        conn.execute(
            favorite_coins.insert(),
            [{"svc_id": user["svc_id"], "symbol": f"C{i:03d}", "created_at": i} for i in range(100)],
        )
    refused = mapi.user("favorite_coin", {"symbol": "BTC"}, token=token)
    assert refused.status_code == 400 and "at most 100" in refused.json()["message"]
    again = mapi.user("favorite_coin", {"symbol": "c007"}, token=token).json()["data"]
    assert len(again["favorites"]) == 100 and again["favorites"][:2] == ["C000", "C001"]
    assert mapi.user("favorite_coin", {"symbol": "C000", "action": "remove"}, token=token).status_code == 200
    assert mapi.user("favorite_coin", {"symbol": "BTC"}, token=token).json()["data"]["favorites"][-1] == "BTC"
    with mapi.app.state.services.store.read() as conn:
        count = conn.execute(sa.select(sa.func.count()).select_from(favorite_coins)).scalar_one()
    assert count == 100


def test_the_100_limit_holds_under_concurrent_adds(mapi: Api) -> None:
    user = mapi.register()
    with mapi.app.state.services.store.write() as conn:
        conn.execute(
            favorite_coins.insert(),
            [{"svc_id": user["svc_id"], "symbol": f"C{i:03d}", "created_at": i} for i in range(99)],
        )
    with ThreadPoolExecutor(max_workers=6) as pool:
        replies = list(
            pool.map(
                lambda n: mapi.user("favorite_coin", {"symbol": f"NEW{n}"}, token=user["session_token"]),
                range(6),
            )
        )
    assert sorted(r.status_code for r in replies) == [200, 400, 400, 400, 400, 400]
    with mapi.app.state.services.store.read() as conn:
        assert len(market.favorites(conn, user["svc_id"])) == 100


def test_available_coins(mapi: Api) -> None:
    token = mapi.register()["session_token"]
    reply = mapi.user("available_coins", token=token)
    assert reply.json()["data"] == {"coins": ["BTC", "DOT", "ETH", "INJ", "SOL"], "count": 5}
    assert mapi.user("available_coins").status_code == 401


# ---- market_quote ---------------------------------------------------------------------------------


def test_market_quote_spot_and_futures(sapi: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(market_routes, "clock", lambda: 1_793_491_200.123)
    spot = get(sapi, "market_quote", symbol="btcusdt").json()
    assert spot == {
        "symbol": "BTCUSDT",
        "market_type": "spot",
        "bid_price": "91990.80",
        "ask_price": "92009.20",
        "last_price": "92000.00",
        "spread": "18.40",
        "spread_percent": "0.02",
        "commission_rate": "0.0020",
        "commission_percent": "0.20",
        "timestamp": 1_793_491_200_123,
    }
    futures = get(sapi, "market_quote", symbol="INJUSDT", market="futures").json()
    assert (futures["bid_price"], futures["ask_price"], futures["spread"], futures["spread_percent"]) == (
        "20.979",
        "21.021",
        "0.042",
        "0.20",
    )
    assert (futures["mark_price"], futures["funding_rate"], futures["next_funding_time"]) == (
        "21.000",
        "0.0001",
        "1793520000000",
    )  # 2026-11-01 08:00 UTC
    assert get(sapi, "market_quote", symbol="DOTUSDT").json()["spread_percent"] == "0.10"


def test_market_quote_errors(sapi: Api) -> None:
    assert get(sapi, "market_quote").status_code == 400
    assert get(sapi, "market_quote", symbol="BTC").status_code == 400  # not a USDT pair
    assert get(sapi, "market_quote", symbol="BTCUSDT", market="options").status_code == 400
    missing = get(sapi, "market_quote", symbol="XRPUSDT")
    assert missing.status_code == 404 and "XRPUSDT" in missing.json()["message"]


# ---- get_klines and market_symbol_info ------------------------------------------------------------


def test_get_klines_latest_and_from_a_start(sapi: Api, market_dir: Path) -> None:
    hourly = candles(market_dir, "BTCUSDT", "1h")
    latest = get(sapi, "get_klines", symbol="BTCUSDT").json()
    assert (latest["symbol"], latest["market"], latest["interval"], latest["count"]) == (
        "BTCUSDT",
        "crypto",
        "1h",
        500,
    )
    assert [r[0] for r in latest["klines"]] == hourly["open_time"].tail(500).to_list()
    last = hourly.row(-1)
    assert latest["klines"][-1] == [last[0], *(f"{x:.2f}" for x in last[1:5]), f"{last[5]:.5f}"]
    start = hourly["open_time"][10]
    ranged = get(sapi, "get_klines", symbol="btc", interval="1h", start_time=start - 1, limit=3).json()
    assert [r[0] for r in ranged["klines"]] == hourly["open_time"][10:13].to_list()
    ending = get(sapi, "get_klines", symbol="BTCUSDT", end_time=start, limit=2).json()
    assert [r[0] for r in ending["klines"]] == hourly["open_time"][9:11].to_list()
    four = get(sapi, "get_klines", symbol="BTCUSDT", interval="4h", limit=2).json()
    assert four["klines"] == [
        [1793462400000, "91202.76", "93713.54", "90932.40", "93508.41", "4865.74498"],
        [1793476800000, "93508.41", "93930.66", "91706.74", "92000.00", "4115.96382"],
    ]
    assert get(sapi, "get_klines", symbol="BTCUSDT", interval="1m", limit=99999).json()["count"] == 1500
    daily = get(sapi, "get_klines", symbol="AAPL", interval="1d", limit=1).json()
    assert daily["market"] == "us_stocks" and daily["klines"][0][1] == "227.71"
    empty = get(sapi, "get_klines", symbol="BTCUSDT", start_time=0, end_time=1000).json()
    assert empty["klines"] == [] and empty["count"] == 0


def test_get_klines_errors(sapi: Api) -> None:
    for params, status in (
        ({}, 400),
        ({"symbol": "BTCUSDT", "interval": "7h"}, 400),
        ({"symbol": "BTCUSDT", "start_time": "soon"}, 400),
        ({"symbol": "BTCUSDT", "start_time": 5000, "end_time": 10}, 400),
        ({"symbol": "BTCUSDT", "limit": "many"}, 400),
        ({"symbol": "XRPUSDT"}, 404),
        ({"symbol": "NOSUCHCOIN"}, 404),
    ):
        reply = get(sapi, "get_klines", **params)
        assert reply.status_code == status, (params, reply.text)


def test_market_symbol_info(sapi: Api) -> None:
    info = get(sapi, "market_symbol_info", symbol="BTC").json()
    assert info == {
        "symbol": "BTCUSDT",
        "display": "BTC",
        "market": "crypto",
        "asset_class": "crypto",
        "provider": "binance",
        "exchange": "binance",
        "quote": "USDT",
        "precision": {
            "price_precision": 2,
            "quantity_precision": 5,
            "tick_size": "0.01",
            "step_size": "0.00001",
            "min_quantity": "0.00001",
            "min_notional": "5",
        },
        "timeframes": {
            "1m": {
                "first_ts": 1793232000,
                "last_ts": 1793491140,
                "first_date": "2026-10-29",
                "last_date": "2026-10-31",
                "total_candles": 4320,
            },
            "1h": {
                "first_ts": 1788307200,
                "last_ts": 1793487600,
                "first_date": "2026-09-02",
                "last_date": "2026-10-31",
                "total_candles": 1440,
            },
        },
    }
    assert get(sapi, "market_symbol_info", symbol="EURUSD").json()["asset_class"] == "forex"
    assert get(sapi, "market_symbol_info").status_code == 400
    assert get(sapi, "market_symbol_info", symbol="TSLA").status_code == 404  # known, but no candles stored


def test_a_stored_futures_venue_serves_the_futures_ticker_and_quote(
    make_api: Any, tmp_path: Path, no_refresh: None
) -> None:
    store = DataStore(tmp_path / "data")
    hours = [1_793_404_800_000 + i * 3_600_000 for i in range(24)]
    for venue, close in (("crypto", 100.0), ("crypto_futures", 101.0)):
        store.write_klines(
            venue,
            "BTCUSDT",
            "1h",
            pl.DataFrame(
                {
                    "open_time": hours,
                    "open": [close - 1] * 24,
                    "high": [close + 1] * 24,
                    "low": [close - 2] * 24,
                    "close": [close] * 24,
                    "volume": [10.0] * 24,
                }
            ),
        )
    api = make_api(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'svc.db'}",
            secret_key=SECRET,
            var_dir=tmp_path / "var",
            data_dir=tmp_path / "data",
        )
    )
    spot, futures = (get(api, "market_ticker", market=m).json() for m in ("spot", "futures"))
    assert [(i["symbol"], i["last_price"]) for i in spot["items"]] == [("BTCUSDT", "100.00")]
    assert [(i["symbol"], i["last_price"]) for i in futures["items"]] == [("BTCUSDT", "101.00")]
    assert futures["items"][0]["change_percent_24h"] == "1.00"  # first open 100, last close 101
    assert futures["items"][0]["quote_volume_24h"] == "24240.00"
    quote = get(api, "market_quote", symbol="BTCUSDT", market="futures").json()
    assert (quote["last_price"], quote["mark_price"], quote["spread_percent"]) == ("101.00", "101.00", "0.20")
