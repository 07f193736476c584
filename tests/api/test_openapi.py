"""The API description: valid OpenAPI 3.1, complete (every route and selector of the app), served at
``/openapi.json``, and true: schemathesis fuzzes every operation against the ASGI app as a guest, with
an API key and with a session token, and finds no 5xx and no reply that breaks the schema."""

from __future__ import annotations

import asyncio
import json
import re
import time
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance
from starlette.routing import Mount, Route

from svc_api.apidoc.build import render
from svc_api.app import create_app
from svc_api.routing import BACKTEST, TRADINGDATA, USER
from svc_api.settings import Settings

EXAMPLES = 25
FAMILY_EXAMPLES = 6  # per family operation (about 90 of them), each typed on its own
FAMILIES = {"/user": USER, "/backtest": BACKTEST, "/tradingdata": TRADINGDATA}


def document() -> dict[str, Any]:
    text = resources.files("svc_api").joinpath("openapi.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@pytest.fixture
def app(tmp_path: Path) -> Any:
    """The app on an empty data directory (no background trend scan)."""
    # Fuzzing sends hundreds of requests from one client: lift the per-minute limits.
    (tmp_path / "data").mkdir()
    settings_ = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=b"k" * 32,
        var_dir=tmp_path,
        data_dir=tmp_path / "data",
        rate_limit_scale=1000,
        trend_refresh_seconds=0,  # no background scan: a test runs the refresh itself
        seed_samples=0,  # an empty store: the tests fill what they read
    )
    return create_app(settings_)


async def _post(
    client: httpx.AsyncClient, request_type: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    r = await client.post("/user", params={"request_type": request_type}, json=body, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["data"]


def identities(app: Any) -> dict[str, dict[str, str]]:
    """Headers of a guest, of an API key and of a session, for one fresh account."""

    async def make() -> dict[str, dict[str, str]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            grant = await _post(
                client, "register", {"email": "fuzz@example.com", "password": "fuzz-password-1"}
            )
            session = {"Authorization": f"Bearer {grant['session_token']}"}
            key = await _post(client, "api_key_generate", {"label": "fuzz", "permissions": ["read"]}, session)
        return {
            "guest": {},
            "api_key": {"X-API-Key": key["api_key"], "X-API-Secret": key["api_secret"]},
            "session": session,
        }

    return asyncio.run(make())


def test_document_is_valid_openapi_3_1():
    doc = document()
    validate(doc)
    assert doc["openapi"] == "3.1.0"


def served_routes(app: Any) -> dict[str, set[str]]:
    """Path -> methods of every HTTP route of the app, the mounted ``/education/v1`` routes included
    (a ``{name:path}`` parameter written as OpenAPI writes it, ``{name}``)."""
    served: dict[str, set[str]] = {}

    def add(prefix: str, routes: list[Any]) -> None:
        for route in routes:
            if isinstance(route, Route):
                path = re.sub(r"\{(\w+):\w+\}", r"{\1}", prefix + route.path)
                served.setdefault(path, set()).update(set(route.methods or ()) - {"HEAD"})
            elif isinstance(route, Mount):
                inner = route.app
                while not hasattr(inner, "routes"):  # through the sub-app's middleware
                    inner = inner.app
                add(prefix + route.path, inner.routes)

    add("", app.routes)
    return served


def documented_paths(doc: dict[str, Any]) -> dict[str, set[str]]:
    """Path -> methods, a family operation's fragment (``/user#register``) folded into its path."""
    out: dict[str, set[str]] = {}
    for key, item in doc["paths"].items():
        out.setdefault(key.partition("#")[0], set()).update(m.upper() for m in item if m != "parameters")
    return out


def test_committed_document_is_the_generated_one():
    committed = resources.files("svc_api").joinpath("openapi.yaml").read_text(encoding="utf-8")
    assert committed == render(), "svc_api/openapi.yaml is stale: run `svc openapi`"


def test_every_route_and_selector_is_documented(app):
    doc = document()
    served = served_routes(app)
    assert set(served) == set(documented_paths(doc))
    assert [r.path for r in app.routes if isinstance(r, Mount)] == ["/education/v1"]
    assert {"/education/v1/catalog", "/education/v1/media/{key}", "/education/v1/studio/products"} <= set(
        served
    )
    for path, family in FAMILIES.items():
        keys = {k.partition("#")[2] for k in doc["paths"] if k.partition("#")[0] == path}
        assert keys == set(family.operations), path
        for name in family.operations:
            operation = doc["paths"][f"{path}#{name}"]["post" if family.body else "get"]
            [selector] = [p for p in operation["parameters"] if p["name"] == family.selector]
            assert selector["required"] is True and selector["in"] == "query"
            assert selector["schema"]["enum"] == [name] and selector["schema"]["default"] == name


def test_every_family_operation_declares_its_models():
    for family in FAMILIES.values():
        undeclared = [n for n, op in family.operations.items() if op.request is None or op.reply is None]
        assert undeclared == [], family.name


def test_every_documented_method_is_served(app):
    doc = document()
    for path, methods in served_routes(app).items():
        assert documented_paths(doc)[path] == methods, path


def test_served_at_openapi_json(app):
    async def fetch() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.get("/openapi.json")

    r = asyncio.run(fetch())
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    assert json.loads(r.content) == document()


def fuzz(
    operation: schemathesis.APIOperation,
    headers: dict[str, str],
    seen: dict[str, set[int]],
    mode: schemathesis.GenerationMode = schemathesis.GenerationMode.POSITIVE,
    examples: int = EXAMPLES,
) -> None:
    """``examples`` generated cases of one operation; fails on a 5xx or a reply outside the schema."""
    checks = [not_a_server_error, response_schema_conformance]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def run(case: schemathesis.Case) -> None:
        response = case.call_and_validate(headers=headers, checks=checks)
        seen.setdefault(operation.label, set()).add(response.status_code)

    run()


@pytest.mark.slow
def test_schemathesis_finds_no_server_error_and_no_schema_violation(app):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    who = identities(app)
    operations = [result.ok() for result in schema.get_all_operations()]
    # /education/v1 is fuzzed over real data by its own tests (test_openapi_education.py, the
    # upload routes included, and test_education_payouts_openapi.py)
    operations = [op for op in operations if not op.path.startswith("/education/")]
    # Schemathesis leaves out the document's own endpoint (test_served_at_openapi_json covers it).
    families = {f"{'POST' if f.body else 'GET'} {p}#{n}" for p, f in FAMILIES.items() for n in f.operations}
    assert {op.label for op in operations} == {
        "GET /",
        "GET /health",
        "GET /healthz",
        "GET /readyz",
        "POST /webhooks/card",
        "POST /webhooks/store/{platform}",
        "POST /bot/webhook",
    } | families
    seen: dict[str, set[int]] = {}
    # Session last: a fuzzed `logout` may end it. Invalid requests (negative mode) as a guest and by key.
    for name in ("guest", "api_key", "session"):
        for operation in operations:
            family = operation.label in families
            if name == "session" and operation.label == "POST /user#logout":
                continue  # it would end the session the rest of the run uses
            fuzz(operation, who[name], seen, examples=FAMILY_EXAMPLES if family else EXAMPLES)
            if name != "session" and family:
                fuzz(operation, who[name], seen, schemathesis.GenerationMode.NEGATIVE, FAMILY_EXAMPLES)
    # The fuzzing reached real replies, not only rejections.
    assert 200 in seen["POST /user#account_info"] and 200 in seen["GET /tradingdata#market_ticker"]
    assert 400 in seen["POST /backtest#run"]


START_TS, END_TS = 1_789_862_400, 1_792_886_400
STRATEGY = {
    "strategy_name": "smacross",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "close crosses above SMA(20)",
    "tp_condition": "3%",
    "sl_condition": "2%",
}


@pytest.fixture
def market_app(tmp_path: Path) -> Any:
    """The app over the small synthetic market (5 crypto pairs, 60 days of 1h)."""
    from svc_engine.data import DataStore
    from svc_engine.data.synthetic import generate_market

    generate_market(DataStore(tmp_path / "data"), small=True)
    settings_ = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=b"k" * 32,
        var_dir=tmp_path,
        data_dir=tmp_path / "data",
        rate_limit_scale=1000,
        trend_refresh_seconds=0,  # no background scan: a test runs the refresh itself
        seed_samples=0,  # an empty store: the tests fill what they read
    )
    return create_app(settings_)


class Contract:
    """Calls operations through schemathesis and validates each reply against its schema."""

    def __init__(self, app: Any) -> None:
        self.schema = schemathesis.openapi.from_asgi("/openapi.json", app)
        self.headers: dict[str, str] = {}
        self.ok: set[str] = set()

    def call(self, label: str, selector: str, value: str, fields: dict[str, Any] | None = None) -> Any:
        operation = self.schema.find_operation_by_label(f"{label}#{value}")
        assert operation is not None, (label, value)
        fields = fields or {}
        if label.startswith("GET"):
            case = operation.Case(query={selector: value, **fields}, headers=dict(self.headers))
        else:
            case = operation.Case(
                query={selector: value},
                body=fields,
                headers=dict(self.headers),
                media_type="application/json",
            )
        response = case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])
        assert response.status_code == 200, (label, value, response.text)
        self.ok.add(f"{label}:{value}")
        body = response.json()
        return body["data"] if label == "POST /user" else body

    def user(self, request_type: str, **fields: Any) -> Any:
        return self.call("POST /user", "request_type", request_type, fields)

    def backtest(self, action: str, **fields: Any) -> Any:
        return self.call("POST /backtest", "action", action, fields)

    def data(self, request_type: str, **params: Any) -> Any:
        return self.call("GET /tradingdata", "request_type", request_type, params)

    def until_done(self, job_id: str) -> None:
        deadline = time.monotonic() + 60
        while self.backtest("status", job_id=job_id)["status"] not in ("completed", "failed"):
            assert time.monotonic() < deadline, f"backtest {job_id} did not finish"
            time.sleep(0.05)


def _community_contract(api: Contract, app: Any, leader: dict[str, str], leader_id: str) -> None:
    """Every community operation, messenger_link and messenger_login, called for real (the caller: a
    member)."""
    from svc_api.community import service as community

    member = dict(api.headers)
    application = {"reason": "notes", "experience": "years", "has_500_followers": True}
    api.headers = leader
    api.user("community_leader_apply", display_name="Contract Desk", **application)
    community.decide(app.state.services.store, leader_id, True, now=int(time.time()))
    api.user("community_leader_application_get")
    api.user("community_leader_update", display_name="Contract Desk", bio="daily notes")
    post_id = api.user("community_post_create", title="t", content="levels")["post_id"]
    api.data("community_leaders")
    api.headers = member
    api.user("community_follow", leader_id=leader_id)
    api.user("community_post_like", post_id=post_id)
    api.user("community_post_comment", post_id=post_id, comment="thanks")
    api.user("community_post_report", post_id=post_id, reason="check")
    sent = api.user("community_chat_send", message="gm", channel=f"leader:{leader_id}")
    api.data("community_chat", channel=sent["channel"])
    api.user("community_chat_delete", sort_key=sent["sort_key"], channel=sent["channel"])
    api.user("community_unfollow", leader_id=leader_id)
    api.user("community_leader_apply", display_name="Member Desk", **application)
    api.user("community_leader_application_withdraw")
    services = app.state.services
    configured = services.settings
    services.settings = configured.replace(bot_api_url="http://127.0.0.1:9")  # no call is made
    try:
        api.user("messenger_link")
    finally:
        services.settings = configured
    from svc_api.bot import service as bot
    from svc_api.notifications import service as notifications

    with services.store.write() as conn:  # the chat the bot linked; its /login gives a code
        notifications.link_chat(
            conn, api.user("account_info")["svc_id"], "contract-chat", now=int(time.time())
        )
    code = bot.login(services, "contract-chat", now=int(time.time())).text.split("code: ")[1].split()[0]
    api.user("messenger_login", code=code)
    api.headers = leader
    api.data("community_posts")
    api.user("community_post_delete", post_id=post_id)
    api.headers = member


def _exchange_contract(api: Contract, app: Any) -> None:
    """Every exchange operation on the paper exchange, with a manual order (the caller's headers)."""
    from decimal import Decimal

    from svc_api.exchange import service as exchange

    services = app.state.services
    keys = exchange.create_account(
        services.store, balances={"BTC": Decimal(1)}, ip_whitelist=("127.0.0.1",), now=int(time.time())
    )
    creds = {"api_key": keys["api_key"], "api_secret": keys["api_secret"]}
    api.user("exchange_link", **creds)
    api.user("exchange_balance")
    price = exchange.exchange_of(services).last_price("BTCUSDT")
    tp, sl = f"{price * Decimal('1.05'):.2f}", f"{price * Decimal('0.95'):.2f}"
    order = {
        "symbol": "BTCUSDT",
        "side": "BUY",
        "quantity": "0.01000",
        "order_source": "manual",
        "take_profit_price": tp,
        "stop_loss_price": sl,
    }
    api.user("exchange_order_preview", **order)
    api.user("exchange_order", idempotency_key="contract-order-0001", **order)
    api.user("order_history")
    api.user(
        "iap_verify",
        platform="ios",
        product_id="svc_starter_monthly",
        transaction_id="contract-tx",
        receipt="sandbox:contract-tx:svc_starter_monthly",
    )
    member = api.headers
    api.headers = {}
    api.user("exchange_login", **creds)
    api.headers = member
    api.user("exchange_unlink")
    _identity_contract(api, app)


def _identity_contract(api: Contract, app: Any) -> None:
    """identity_link and identity_login against a loopback OpenID provider."""
    from tests.api.fakes.oidc_issuer import AUDIENCE, running_issuer

    services = app.state.services
    configured = services.settings
    with running_issuer() as issuer:
        services.settings = configured.replace(oidc_issuer=issuer.url, oidc_audience=AUDIENCE)
        services._cache.pop("oidc:issuer", None)
        try:
            api.user("identity_link", id_token=issuer.token("contract-sub"))
            member = api.headers
            api.headers = {}
            api.user("identity_login", id_token=issuer.token("contract-sub"))
            api.headers = member
        finally:
            services.settings = configured


@pytest.mark.slow
def test_real_replies_of_every_operation_match_the_schema(market_app):
    from svc_api.accounts import service as accounts
    from svc_api.billing import service as billing
    from svc_api.credits import service as credits
    from svc_api.economic import service as economic
    from svc_api.market.service import catalog_of
    from svc_api.platform import service as platform
    from svc_api.trends import refresh as trend_refresh

    api = Contract(market_app)
    grant = api.user("register", email="contract@example.com", password="contract-pw-1")
    api.user("login", email="contract@example.com", password="contract-pw-1")
    with market_app.state.services.store.write() as conn:
        accounts.grant_plan(conn, grant["svc_id"], "pro", 30, now=market_app.state.services.clock.now())
        credits.deposit_credits(conn, grant["svc_id"], 100, now=int(time.time()))
    api.headers = {"Authorization": f"Bearer {grant['session_token']}"}
    for request_type in (
        "account_info",
        "login_history",
        "credits_history",
        "notifications_list",
        "notification_settings",
        "api_key_status",
        "available_coins",
    ):
        api.user(request_type)
    api.user("notification_settings", mail=False)
    api.user("notifications_mark_read", all=True)
    key = api.user("api_key_generate", label="contract", permissions=["read", "trade"])
    api.user("favorite_coin", symbol="btcusdt")

    api.user("strategy_generate", **STRATEGY)
    deadline = time.monotonic() + 30
    while api.user("strategy_detail", strategy_name="smacross")["status"] == "generating":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    api.user("strategy_edit", strategy_name="smacross", tp_condition="4%")
    api.user("strategy_versions", strategy_name="smacross")
    api.user("strategy_visibility", strategy_name="smacross", visibility="private")
    api.user("strategy_rollback", strategy_name="smacross", target_version=1)

    body = {"strategy_name": "smacross", "timeframe": "1h", "start_ts": START_TS, "end_ts": END_TS}
    api.backtest("estimate", **body, coins=["BTC"])
    api.backtest("info", strategy_name="smacross", coin="BTC", timeframe="1h")
    api.backtest("list_timeframes", coin="ETH")
    # One job at a time: launches beyond the concurrency limit are a 429 by design.
    run = api.backtest("run", **body, coin="BTC")
    api.until_done(run["job_id"])
    full = api.backtest("full_range", strategy_name="smacross", coins=["BTC", "ETH"], timeframe="1h")
    api.until_done(full["job_id"])
    folio = api.backtest("portfolio", **body, coins=["BTC", "ETH"], divide=2, initial_balance=1000)
    api.until_done(folio["job_id"])
    for job in (run, full, folio):
        api.backtest("result", job_id=job["job_id"])
    api.backtest("coin_result", job_id=full["job_id"], coin="ETH")
    api.backtest("coin_result", job_id=folio["job_id"], coin="BTC")
    api.user("backtest_history")
    api.backtest("delete_backtest", job_id=run["job_id"])

    services = market_app.state.services
    assert (
        trend_refresh.refresh_once(services.store, catalog_of(services), wall_now=services.clock.now())[
            "found"
        ]
        > 0
    )
    assert platform.seed_changelog_if_empty(services.store)  # a changelog with entries to check
    api.headers = {"X-API-Key": key["api_key"], "X-API-Secret": key["api_secret"]}
    for request_type in (
        "platform_notifications",
        "changelog",
        "market_ticker",
        "trend_signals",
        "trend_indicator",
        "tracked_trend_break_signals",
    ):
        api.data(request_type)
    api.data("market_quote", symbol="BTCUSDT")
    api.data("get_klines", symbol="BTCUSDT", limit=3)
    api.data("market_symbol_info", symbol="BTCUSDT")
    api.data("trend_indicator_history", limit=3)
    signal = api.data("trend_signals")["items"][0]
    api.data(
        "trend_signal_detail",
        coin_name=signal["coin_name"],
        graph_type=signal["graph_type"],
        timestamp=signal["timestamp"],
    )
    tracked = {
        "coin_name": signal["coin_name"],
        "timeframe": "60",
        "way": signal["way"],
        "timestamp": signal["timestamp"],
    }
    api.data("track_trend_break_signal", **tracked)
    assert api.data("tracked_trend_break_signals")["items"]
    api.data("untrack_trend_break_signal", **tracked)

    creator = {"Authorization": f"Bearer {grant['session_token']}"}
    api.headers = creator
    listing = api.user(
        "marketplace_publish",
        strategy_key="smacross",
        monthly_price_credits=2,
        signal_mode="signal_only",
        requested_coins=["BTC", "ETH"],
        description="contract listing",
    )
    api.user("marketplace_my_listings")
    api.user("marketplace_update_listing", listing_id=listing["listing_id"], description="a contract listing")
    api.data("marketplace_browse", sort="price_asc")
    api.data("marketplace_listing", listing_id=listing["listing_id"])
    api.headers = {}
    other = api.user("register", email="subscriber@example.com", password="contract-pw-2")
    with market_app.state.services.store.write() as conn:
        accounts.grant_plan(conn, other["svc_id"], "pro", 30, now=market_app.state.services.clock.now())
        credits.deposit_credits(conn, other["svc_id"], 10, now=int(time.time()))
    api.headers = {"Authorization": f"Bearer {other['session_token']}"}
    sub = api.user("marketplace_subscribe", listing_id=listing["listing_id"], selected_coins=["BTC"])
    api.user("marketplace_my_subscriptions")
    api.user("marketplace_listing_detail", listing_id=listing["listing_id"])
    api.user("marketplace_review", listing_id=listing["listing_id"], rating=4, comment="a contract review")
    api.data("marketplace_reviews", listing_id=listing["listing_id"])
    _community_contract(api, market_app, creator, grant["svc_id"])
    _exchange_contract(api, market_app)
    api.user("active_signals", strategy_name=["smacross"])
    api.user("signal_history", filters={"owner": "subscribed"})
    assert economic.fill_sample_if_empty(services.store, services.clock.now()) is not None
    news = api.user("economic_news", limit=2)
    api.user("economic_news", limit=2, cursor=news["next_cursor"])
    assert api.user("economic_calendar", mode="upcoming", horizon_days=30)["calendar"]
    api.user("economic_calendar", mode="recent", limit=2)
    api.user("marketplace_unsubscribe", subscription_id=sub["subscription_id"])
    api.user("set_inviter", inviter_id=grant["svc_id"].lower())
    with market_app.state.services.store.write() as conn:
        now = market_app.state.services.clock.now()
        billing.apply_purchase(conn, other["svc_id"], "pro", "monthly", "contract-1", now=now)
    api.headers = creator
    api.user("referral_list")
    api.user("referral_redeem", redeem_type="credits", amount=5)
    assert api.user("account_info")["referral"]["available_commission_usdt"] == 5
    api.user("marketplace_unpublish", listing_id=listing["listing_id"])
    api.user("strategy_delete", strategy_name="smacross", confirm_name="smacross")
    api.user("api_key_revoke", api_key_id=key["api_key"])
    api.user("logout")
    api.headers = {}
    documented = {f"POST /user:{t}" for t in USER.operations}
    documented |= {f"POST /backtest:{a}" for a in BACKTEST.operations}
    documented |= {f"GET /tradingdata:{t}" for t in TRADINGDATA.operations}
    # Every operation that exists was called successfully and its reply matched the description.
    assert sorted(documented - api.ok) == []


def test_the_description_names_every_backtest_action_served() -> None:
    description = document()["info"]["description"]
    assert "no actions yet" not in description
    line = next(part for part in description.split("\n- ") if part.startswith("`/backtest` takes"))
    assert {name for name in BACKTEST.operations if f"`{name}`" in line} == set(BACKTEST.operations)


def test_the_education_doc_does_not_call_served_instructor_routes_unserved() -> None:
    from svc_api.education.app import education_app

    served = {route.path for route in education_app().router.routes}
    assert {"/studio/products", "/studio/uploads", "/studio/payout-statements"} <= served
    doc = (Path(__file__).parents[2] / "docs" / "education-api.md").read_text(encoding="utf-8")
    assert "not served yet" not in doc
