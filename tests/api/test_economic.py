"""Economic news and calendar through HTTP, on SQLite and PostgreSQL: ingesting RSS, Atom, CSV and
JSON (with ``svc economic``), idempotent re-ingest, keyset paging, the calendar modes and horizon
on a hand-moved clock, the errors (cursor, limit, mode, horizon, identity) and the sample."""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from datetime import datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from svc_api.cli import main
from svc_api.core.clock import ManualClock
from svc_api.economic import service as economic
from svc_api.economic.feeds import parse_calendar, parse_news
from svc_api.economic.tables import economic_news
from svc_api.settings import Settings
from tests.api.conftest import SECRET

if TYPE_CHECKING:
    from tests.api.conftest import Api

T0 = 1_796_083_200
"""2026-12-01 00:00 UTC: where the clock of these tests starts."""
DAY = 86_400

RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Macro Desk</title>
<item><title>Bitcoin surges past $100,000 as ETF inflows jump</title><link>https://news.example/md-1</link>
  <guid>md-1</guid><pubDate>Mon, 30 Nov 2026 12:00:00 GMT</pubDate>
  <description><![CDATA[<p>Spot funds took in <b>$500m</b>.</p>]]></description></item>
<item><title>ECB holds interest rates as eurozone inflation cools</title><link>https://news.example/md-2</link>
  <guid>md-2</guid><pubDate>Mon, 30 Nov 2026 09:30:00 +0000</pubDate>
  <description>Lagarde said policy is in a good place.</description></item>
<item><title>Crypto exchange hacked, tokens plunge</title><link>https://news.example/md-3</link>
  <guid>md-3</guid><pubDate>Sun, 29 Nov 2026 22:15:00 GMT</pubDate></item>
</channel></rss>
"""
ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Rates Wire</title><id>urn:rw</id>
<entry><id>urn:rw:1</id><title>US jobless claims fall to 210,000</title>
  <link href="https://rates.example/1"/><updated>2026-11-30T13:30:00Z</updated>
  <summary>Labor market stays strong.</summary></entry>
<entry><id>urn:rw:2</id><title>Gold climbs as dollar weakens</title>
  <link rel="self" href="https://rates.example/feed"/><link rel="alternate" href="https://rates.example/2"/>
  <published>2026-11-28T08:00:00+01:00</published><updated>2026-11-29T08:00:00Z</updated>
  <summary type="html">&lt;p&gt;Bullion at a one-month high.&lt;/p&gt;</summary></entry>
</feed>
"""


def _ts(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp())


def _id(prefix: str, source: str, source_id: str) -> str:
    return prefix + hashlib.sha256(f"{source}\x1f{source_id}".encode()).hexdigest()[:32]


@pytest.fixture
def econ(make_api: Any, settings: Settings) -> Api:
    """An app whose clock stands at :data:`T0` until a test moves it."""
    return make_api(settings, clock=ManualClock(T0))


def _token(api: Api) -> str:
    return str(api.register()["session_token"])


def _cli(settings: Settings, *args: str) -> Any:
    env = {
        "DATABASE_URL": settings.database_url,
        "SECRET_KEY": SECRET.decode(),
        "SVC_VAR_DIR": str(settings.var_dir),
    }
    return CliRunner().invoke(main, ["economic", *args], env=env)


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _rows(api: Api) -> list[tuple[Any, ...]]:
    """Every stored news row, every column (``ingested_at`` included), in key order."""
    with api.app.state.services.store.read() as conn:
        return [tuple(r) for r in conn.execute(sa.select(economic_news).order_by(economic_news.c.news_id))]


def _news(api: Api, token: str, **body: Any) -> Any:
    return api.user("economic_news", body, token=token)


def _calendar(api: Api, token: str, **body: Any) -> Any:
    return api.user("economic_calendar", body, token=token)


def _all_news(api: Api, token: str, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Every news item by following the cursors; and how many pages that took."""
    items: list[dict[str, Any]] = []
    cursor, pages = None, 0
    while True:
        reply = _news(api, token, limit=limit, **({"cursor": cursor} if cursor else {}))
        assert reply.status_code == 200, reply.text
        data = reply.json()["data"]
        assert data["next_cursor"] == data["last_evaluated_key"]
        assert data["has_more"] is (data["next_cursor"] is not None)
        items += data["news"]
        pages += 1
        if not data["has_more"]:
            return items, pages
        cursor = data["next_cursor"]


def _rss(items: list[tuple[str, str]], title: str = "Bulk") -> bytes:
    body = "".join(
        f"<item><title>Item {guid}</title><guid>{guid}</guid><pubDate>{date}</pubDate></item>"
        for guid, date in items
    )
    return f"<rss version='2.0'><channel><title>{title}</title>{body}</channel></rss>".encode()


def test_rss_and_atom_ingest_then_reingest_changes_nothing(econ: Api, settings: Settings, tmp_path) -> None:
    rss, atom = _write(tmp_path, "desk.xml", RSS), _write(tmp_path, "wire.atom", ATOM)
    token = _token(econ)
    first = _cli(settings, "ingest-news", rss, atom)
    assert (first.exit_code, json.loads(first.output)) == (0, {"added": 5, "unchanged": 0}), first.output
    before, rows = _news(econ, token).json(), _rows(econ)
    again = _cli(settings, "ingest-news", rss, atom)
    assert (again.exit_code, json.loads(again.output)) == (0, {"added": 0, "unchanged": 5})
    assert _news(econ, token).json() == before
    assert _rows(econ) == rows and len(rows) == 5

    assert before["timestamp"] == T0 and before["ok"] is True
    data = before["data"]
    assert (data["count"], data["has_more"], data["next_cursor"], data["cost_credits"]) == (
        5,
        False,
        None,
        0.0,
    )
    assert [n["id"] for n in data["news"]] == [
        _id("news_", "Rates Wire", "urn:rw:1"),
        _id("news_", "Macro Desk", "md-1"),
        _id("news_", "Macro Desk", "md-2"),
        _id("news_", "Macro Desk", "md-3"),
        _id("news_", "Rates Wire", "urn:rw:2"),
    ]
    assert data["news"][1] == {
        "id": _id("news_", "Macro Desk", "md-1"),
        "type": "news",
        "title": "Bitcoin surges past $100,000 as ETF inflows jump",
        "summary": "Spot funds took in $500m.",
        "source": "Macro Desk",
        "url": "https://news.example/md-1",
        "sentiment": "bullish",
        "sentiment_label": "Bullish",
        "sentiment_score": 75,
        "impact": "high",
        "category": "crypto",
        "affected_coins": ["BTC"],
        "affected_markets": ["crypto"],
        "country": "",
        "published_at": "2026-11-30T12:00:00Z",
        "timestamp": _ts("2026-11-30T12:00:00+00:00"),
    }
    shapes = [
        (
            n["sentiment"],
            n["sentiment_score"],
            n["impact"],
            n["category"],
            n["country"],
            n["affected_markets"],
        )
        for n in data["news"]
    ]
    assert shapes == [
        ("neutral", 0, "medium", "employment", "US", []),
        ("bullish", 75, "high", "crypto", "", ["crypto"]),
        ("neutral", 0, "high", "monetary_policy", "EU", []),
        ("bearish", -50, "high", "crypto", "", ["crypto"]),
        ("bullish", 25, "low", "markets", "", ["commodities", "forex"]),
    ]
    gold = data["news"][4]
    assert (gold["url"], gold["summary"], gold["published_at"], gold["sentiment_label"]) == (
        "https://rates.example/2",
        "Bullion at a one-month high.",
        "2026-11-28T07:00:00Z",
        "Bullish",
    )


def test_paging_returns_every_item_once_newest_first(econ: Api) -> None:
    dates = [f"Mon, 30 Nov 2026 {h:02d}:00:00 GMT" for h in (3, 9, 1, 7, 5, 8, 2)]
    dates += ["Mon, 30 Nov 2026 05:00:00 GMT", "Mon, 30 Nov 2026 05:00:00 GMT"]  # ties: by id
    feed = parse_news(_rss([(f"g{i}", d) for i, d in enumerate(dates)]))
    assert economic.ingest_news(econ.app.state.services.store, feed, now=T0) == {"added": 9, "unchanged": 0}
    token = _token(econ)
    items, pages = _all_news(econ, token, limit=2)
    expected = sorted(((e.published_at, _id("news_", "Bulk", e.source_id)) for e in feed.items), reverse=True)
    assert [(n["timestamp"], n["id"]) for n in items] == expected
    assert len({n["id"] for n in items}) == 9 and pages == 5


def test_limit_default_clamp_and_refusals(econ: Api) -> None:
    store = econ.app.state.services.store
    items = [(f"b{i:02d}", f"Sun, 29 Nov 2026 {i // 60:02d}:{i % 60:02d}:00 GMT") for i in range(55)]
    economic.ingest_news(store, parse_news(_rss(items)), now=T0)
    token = _token(econ)
    assert _news(econ, token).json()["data"]["count"] == 20
    assert _news(econ, token, limit="7").json()["data"]["count"] == 7
    clamped = _news(econ, token, limit=51).json()["data"]
    assert (clamped["count"], clamped["has_more"]) == (50, True)
    rest = _news(econ, token, limit=500, cursor=clamped["next_cursor"]).json()["data"]
    assert (rest["count"], rest["has_more"], rest["last_evaluated_key"]) == (5, False, None)
    for bad, words in ((0, "between 1 and 50, got 0"), ("x", "integer, got 'x'"), (2.5, "integer, got 2.5")):
        for reply in (_news(econ, token, limit=bad), _calendar(econ, token, limit=bad)):
            assert reply.status_code == 400, reply.text
            assert reply.json()["error"] == "invalid_page_size" and words in reply.json()["message"]


def test_tampered_or_foreign_cursor_is_400(econ: Api) -> None:
    store = econ.app.state.services.store
    economic.ingest_news(
        store, parse_news(_rss([(f"c{i}", "Sun, 29 Nov 2026 10:00:00 GMT") for i in range(3)])), now=T0
    )
    token = _token(econ)
    cursor = _news(econ, token, limit=1).json()["data"]["next_cursor"]
    tampered = cursor[:3] + ("A" if cursor[3] != "A" else "B") + cursor[4:]
    for reply in (
        _news(econ, token, cursor=tampered),
        _news(econ, token, cursor="not-a-cursor"),
        _news(econ, token, cursor=7),
        _calendar(econ, token, cursor=cursor),  # a news cursor on the calendar
        _calendar(econ, token, mode="recent", cursor=_calendar_cursor(econ, token)),
    ):
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"] == "invalid_cursor"
    # a cursor works for another user too (the list is not personal)
    assert _news(econ, _token(econ), limit=1, cursor=cursor).json()["data"]["count"] == 1


def _calendar_cursor(api: Api, token: str) -> str:
    store = api.app.state.services.store
    events = [{"id": f"u{i}", "title": f"Event {i}", "event_time": T0 + 3600 * (i + 1)} for i in range(3)]
    economic.ingest_calendar(store, parse_calendar(json.dumps(events).encode(), now=T0), now=T0, source="t")
    cursor = _calendar(api, token, limit=1).json()["data"]["next_cursor"]
    assert cursor is not None
    return str(cursor)


def test_calendar_modes_and_horizon_on_the_service_clock(econ: Api) -> None:
    events = [
        ("past", "2026-11-30T23:00:00Z"),
        ("now", "2026-12-01T00:00:00Z"),
        ("day7", "2026-12-08T00:00:00Z"),
        ("day7+1s", "2026-12-08T00:00:01Z"),
        ("day30", "2026-12-31T00:00:00Z"),
        ("day90+1h", "2027-03-01T01:00:00Z"),
    ]
    doc = {"source": "Horizon", "events": [{"id": k, "title": k, "event_time": t} for k, t in events]}
    store = econ.app.state.services.store
    assert economic.ingest_calendar(store, parse_calendar(json.dumps(doc).encode(), now=T0), now=T0) == {
        "added": 6,
        "unchanged": 0,
    }
    token = _token(econ)

    def titles(**body: Any) -> list[str]:
        reply = _calendar(econ, token, **body)
        assert reply.status_code == 200, reply.text
        return [e["title"] for e in reply.json()["data"]["calendar"]]

    assert titles() == ["now", "day7"]
    assert titles(horizon_days=8) == ["now", "day7", "day7+1s"]
    assert titles(horizon_days="90") == ["now", "day7", "day7+1s", "day30"]
    assert titles(mode="recent") == ["past"]
    econ.clock.advance(DAY)
    assert titles(mode="recent") == ["now", "past"]
    assert titles(mode="upcoming", horizon_days=1) == []
    reply = _calendar(econ, token).json()
    assert reply["timestamp"] == T0 + DAY
    assert [e["title"] for e in reply["data"]["calendar"]] == ["day7", "day7+1s"]
    assert {k: v for k, v in reply["data"].items() if k != "calendar"} == {
        "count": 2,
        "mode": "upcoming",
        "horizon_days": 7,
        "has_more": False,
        "next_cursor": None,
        "last_evaluated_key": None,
        "cost_credits": 0.0,
    }
    for body, words in (
        ({"mode": "past"}, "mode must be one of upcoming, recent, got 'past'"),
        ({"mode": 3}, "mode must be one of upcoming, recent, got 3"),
        ({"horizon_days": 0}, "horizon_days must be an integer from 1 to 90, got 0"),
        ({"horizon_days": 91}, "horizon_days must be an integer from 1 to 90, got 91"),
        ({"horizon_days": "x"}, "horizon_days must be an integer from 1 to 90, got 'x'"),
        ({"horizon_days": 1.5}, "horizon_days must be an integer from 1 to 90, got 1.5"),
    ):
        bad = _calendar(econ, token, **body)
        assert (bad.status_code, bad.json()["error"], bad.json()["message"]) == (
            400,
            "invalid_request",
            words,
        )


def test_calendar_pages_soonest_first_through_a_cursor(econ: Api) -> None:
    token = _token(econ)
    _calendar_cursor(econ, token)
    first = _calendar(econ, token, limit=2).json()["data"]
    second = _calendar(econ, token, limit=2, cursor=first["next_cursor"]).json()["data"]
    assert [e["title"] for e in first["calendar"] + second["calendar"]] == ["Event 0", "Event 1", "Event 2"]
    assert (first["has_more"], second["has_more"], second["next_cursor"]) == (True, False, None)


def test_csv_and_json_calendars_parse(econ: Api, settings: Settings, tmp_path) -> None:
    csv_path = _write(
        tmp_path,
        "cal.csv",
        "id,title,country,date,time,impact,forecast,previous\n"
        "c1,US CPI (YoY),us,2026-12-10,13:30,High,2.7%,2.8%\n"
        "c2,UK Mortgage Approvals,GB,2026-12-03,09:30,,66K,65.6K\n",
    )
    doc = {
        "source": "Cal JSON",
        "events": [
            {
                "id": "j1",
                "title": "FOMC Interest Rate Decision",
                "country": "US",
                "event_time": "2026-12-09T19:00:00Z",
                "forecast": "3.50%",
                "previous": "3.75%",
            },
            {
                "id": "j2",
                "title": "BoJ Interest Rate Decision",
                "country": "JP",
                "event_time": _ts("2026-12-16T03:00:00+00:00"),
                "impact": "high",
            },
        ],
    }
    json_path = _write(tmp_path, "cal.json", json.dumps(doc))
    assert json.loads(_cli(settings, "ingest-calendar", "--source", "Cal CSV", csv_path).output) == {
        "added": 2,
        "unchanged": 0,
    }
    assert json.loads(_cli(settings, "ingest-calendar", json_path).output) == {"added": 2, "unchanged": 0}
    assert json.loads(_cli(settings, "ingest-calendar", json_path).output) == {"added": 0, "unchanged": 2}
    token = _token(econ)
    data = _calendar(econ, token, horizon_days=10).json()["data"]
    assert [(e["title"], e["impact"], e["country"]) for e in data["calendar"]] == [
        ("UK Mortgage Approvals", "low", "GB"),
        ("FOMC Interest Rate Decision", "high", "US"),
        ("US CPI (YoY)", "high", "US"),
    ]
    assert data["calendar"][2] == {
        "id": _id("evt_", "Cal CSV", "c1"),
        "type": "calendar_event",
        "title": "US CPI (YoY)",
        "source": "Cal CSV",
        "scheduled_date": "2026-12-10T00:00:00Z",
        "event_time": "2026-12-10T13:30:00Z",
        "impact": "high",
        "forecast": "2.7%",
        "previous": "2.8%",
        "country": "US",
        "timestamp": _ts("2026-12-10T13:30:00+00:00"),
    }
    later = _calendar(econ, token, horizon_days=30).json()["data"]["calendar"]
    assert [(e["title"], e["source"], e["forecast"]) for e in later][-1] == (
        "BoJ Interest Rate Decision",
        "Cal JSON",
        "",
    )


@pytest.mark.parametrize(
    ("command", "text", "message"),
    [
        (
            "ingest-news",
            "<rss><channel><item>",
            "the feed is not well-formed XML (no element found: line 1, column 20)",
        ),
        (
            "ingest-news",
            "<html><body/></html>",
            "not a news feed: the root element is <html>, expected <rss>, <feed> or <rdf:RDF>",
        ),
        (
            "ingest-news",
            '<!DOCTYPE r [<!ENTITY e "x">]><rss/>',
            "the feed declares a DOCTYPE or entities, which are refused",
        ),
        (
            "ingest-news",
            RSS.replace("Sun, 29 Nov 2026 22:15:00 GMT", "yesterday"),
            "item 3: 'yesterday' is not an RFC 822 or ISO 8601 date",
        ),
        (
            "ingest-calendar",
            '[{"title": "CPI", "date": "2026-12-10"}, {"date": "2026-12-11"}]',
            "event 2: the title is missing",
        ),
        ("ingest-calendar", "title,date\nCPI,10/12/2026\n", "event 1: date '10/12/2026' is not YYYY-MM-DD"),
        (
            "ingest-calendar",
            '{"events": [{"title": "CPI", "date": "2026-12-10", "impact": "huge"}]}',
            "event 1: impact must be high, medium or low, got 'huge'",
        ),
    ],
)
def test_a_malformed_file_is_a_one_line_error_and_writes_nothing(
    econ: Api, settings: Settings, tmp_path, command: str, text: str, message: str
) -> None:
    good = _write(
        tmp_path,
        "good.xml" if command == "ingest-news" else "good.csv",
        RSS if command == "ingest-news" else "title,date\nGDP,2026-12-02\n",
    )
    bad = _write(tmp_path, "bad", text)
    result = _cli(settings, command, good, bad)
    assert result.exit_code == 1
    assert result.output == f"Error: {bad}: {message}\n"
    token = _token(econ)
    assert _news(econ, token).json()["data"]["news"] == []
    assert _calendar(econ, token, horizon_days=90).json()["data"]["calendar"] == []


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the CLI's output stays its own
        pass


def test_a_feed_is_fetched_from_a_url(econ: Api, settings: Settings, tmp_path) -> None:
    _write(tmp_path, "desk.xml", RSS)
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        result = _cli(settings, "ingest-news", f"{url}/desk.xml")
        missing = _cli(settings, "ingest-news", f"{url}/gone.xml")
    finally:
        server.shutdown()
        server.server_close()
    assert (result.exit_code, json.loads(result.output)) == (0, {"added": 3, "unchanged": 0})
    assert (missing.exit_code, missing.output) == (1, f"Error: cannot fetch {url}/gone.xml: HTTP 404\n")
    titles = [n["title"] for n in _news(econ, _token(econ)).json()["data"]["news"]]
    assert titles == [
        "Bitcoin surges past $100,000 as ETF inflows jump",
        "ECB holds interest rates as eurozone inflation cools",
        "Crypto exchange hacked, tokens plunge",
    ]


def test_unreachable_url_is_a_one_line_error(settings: Settings) -> None:
    result = _cli(settings, "ingest-news", "http://127.0.0.1:9/feed.xml")
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot fetch http://127.0.0.1:9/feed.xml: ConnectError")
    assert result.output.count("\n") == 1


def test_guest_gets_401_and_an_api_key_reads(econ: Api) -> None:
    for request_type in ("economic_news", "economic_calendar"):
        reply = econ.user(request_type, {})
        assert reply.status_code == 401
        assert (reply.json()["error"], reply.json()["code"]) == ("session_expired", "session_expired")
    token = _token(econ)
    key = econ.user("api_key_generate", {"label": "bot", "permissions": ["read"]}, token=token).json()["data"]
    pair = (key["api_key"], key["api_secret"])
    for request_type in ("economic_news", "economic_calendar"):
        reply = econ.user(request_type, {}, key=pair)
        assert reply.status_code == 200 and reply.json()["data"]["cost_credits"] == 0.0


def test_sample_fills_an_empty_store_once(econ: Api, settings: Settings) -> None:
    store = econ.app.state.services.store
    counts = economic.fill_sample_if_empty(store, T0)
    assert counts == {"news": {"added": 15, "unchanged": 0}, "calendar": {"added": 20, "unchanged": 0}}
    assert economic.fill_sample_if_empty(store, T0 + DAY) is None
    again = _cli(settings, "sample")
    assert json.loads(again.output) == {
        "news": {"added": 0, "unchanged": 15},
        "calendar": {"added": 0, "unchanged": 20},
    }
    token = _token(econ)
    news = _news(econ, token, limit=50).json()["data"]["news"]
    assert len(news) == 15 and {n["source"] for n in news} == {"sample"}
    assert news[0]["title"] == "Bitcoin climbs back above $98,000 as spot ETF inflows resume"
    upcoming = _calendar(econ, token).json()["data"]["calendar"]
    assert [(e["title"], e["event_time"]) for e in upcoming] == [
        ("Eurozone Manufacturing PMI (Flash)", "2026-12-01T09:00:00Z"),
        ("US CB Consumer Confidence", "2026-12-02T15:00:00Z"),
        ("US GDP (QoQ) (Second Estimate)", "2026-12-03T13:30:00Z"),
        ("Tokyo Core CPI (YoY)", "2026-12-04T00:30:00Z"),
        ("UK Mortgage Approvals", "2026-12-05T09:30:00Z"),
        ("US Nonfarm Payrolls", "2026-12-06T13:30:00Z"),
        ("US Unemployment Rate", "2026-12-06T13:30:00Z"),
        ("US ISM Services PMI", "2026-12-07T15:00:00Z"),
    ]
    recent = _calendar(econ, token, mode="recent").json()["data"]["calendar"]
    assert [e["title"] for e in recent] == [
        "US Core PCE Price Index (MoM)",
        "FOMC Meeting Minutes",
        "Eurozone CPI (YoY) (Flash)",
        "US Initial Jobless Claims",
    ]
