"""Strategy operations through HTTP on SQLite and PostgreSQL: generate, detail, edit, versions,
rollback, delete, visibility, plan limits, credits, the generation cap and ``account_info``."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from svc_api.accounts import service as accounts
from svc_api.backtests import service as backtests_service
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_api.strategies import generation, hooks
from svc_api.strategies import service as strategies
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.sim import drivers
from svc_engine.strategy import compile_strategy

if TYPE_CHECKING:
    from tests.api.conftest import Api

RSI = {
    "strategy_name": "rsidip",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "4h",
    "entry_condition": "RSI(14) crosses above 30 and close is above EMA(200)",
    "tp_condition": "3%",
    "sl_condition": "1.5%",
}


def _user(api: Api, plan: str = "pro", balance: int = 5) -> tuple[str, str]:
    """A registered user on ``plan`` with ``balance`` credits: (svc_id, token)."""
    data = api.register()
    store = api.app.state.services.store
    with store.write() as conn:
        if plan != "free":
            accounts.grant_plan(conn, data["svc_id"], plan, 30, now=api.clock.now())
        if balance:
            credits.deposit_credits(conn, data["svc_id"], balance, now=int(time.time()))
    return data["svc_id"], data["session_token"]


def _ok(reply: Any) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    return reply.json()["data"]


def _settled(api: Api, token: str, name: str, timeout: float = 10.0) -> dict[str, Any]:
    """The strategy detail once its current version has left ``generating``."""
    deadline = time.monotonic() + timeout
    while True:
        data = _ok(api.user("strategy_detail", {"strategy_name": name}, token=token))
        if data["status"] != "generating" or time.monotonic() > deadline:
            return data
        time.sleep(0.02)


def _balance(api: Api, token: str) -> float:
    return _ok(api.user("account_info", token=token))["svc_credits"]


def _ledger(api: Api, token: str) -> list[tuple[str, float]]:
    data = _ok(api.user("credits_history", token=token))
    return [(t["action"], t["amount"]) for t in data["transactions"]]


def test_generate_charges_one_credit_and_becomes_active(api: Api) -> None:
    _, token = _user(api, balance=3)
    reply = _ok(api.user("strategy_generate", RSI, token=token))
    assert reply == {
        "strategy_name": "rsidip",
        "version": 1,
        "signal_mode": "signal_orders",
        "status": "generating",
        "cost_upfront": 1,
        "cost_refunded_on_failure": True,
    }
    detail = _settled(api, token, "rsidip")
    expected = compile_strategy(RSI["entry_condition"], "3%", "1.5%")
    assert detail["status"] == "active"
    assert detail["candle_count"] == expected.candle_count == 200
    assert {
        k: detail[k] for k in ("version", "market_type", "position_side", "signal_mode", "timeframe")
    } == {
        "version": 1,
        "market_type": "spot",
        "position_side": "long",
        "signal_mode": "signal_orders",
        "timeframe": "4h",
    }
    assert (detail["entry_condition"], detail["tp_condition"], detail["sl_condition"]) == (
        RSI["entry_condition"],
        "3%",
        "1.5%",
    )
    assert (detail["visibility"], detail["credits_per_signal"], detail["public_coins"]) == ("private", 0, [])
    assert "error" not in detail and "program_json" not in detail
    assert _balance(api, token) == 2
    assert _ledger(api, token)[0] == ("strategy_generate", -1)
    with api.app.state.services.store.read() as conn:
        record = strategies.load_strategy(
            conn, _ok(api.user("account_info", token=token))["svc_id"], "rsidip"
        )
    assert record.compiled() == expected


def test_refused_words_fail_with_the_compiler_message_and_refund(api: Api) -> None:
    _, token = _user(api, balance=1)
    body = RSI | {"strategy_name": "moonshot", "entry_condition": "the moon is full"}
    _ok(api.user("strategy_generate", body, token=token))
    detail = _settled(api, token, "moonshot")
    assert detail["status"] == "failed"
    assert detail["candle_count"] == 0
    assert detail["error"] == {
        "message": (
            "entry_condition: unknown indicator or value 'moon' at 'moon' (position 4)"
            " (did you mean 'aroon'?)"
        ),
        "phrase": "moon",
        "position": 4,
        "suggestion": "aroon",
        "field": "entry_condition",
    }
    assert _balance(api, token) == 1
    assert _ledger(api, token)[:2] == [("strategy_refund", 1), ("strategy_generate", -1)]
    info = _ok(api.user("account_info", token=token))
    assert info["active_own_strategies"] == 0
    assert info["strategies"]["moonshot"]["status"] == "failed"


BAD_FIELDS = [
    ({"strategy_name": "abc"}, "4-20 lowercase"),
    ({"strategy_name": "a" * 21}, "4-20 lowercase"),
    ({"strategy_name": "RsiDip"}, "4-20 lowercase"),
    ({"strategy_name": "rsi dip"}, "4-20 lowercase"),
    ({"strategy_name": "12345"}, "at least one letter"),
    ({"strategy_name": None}, "strategy_name is required"),
    ({"market_type": "margin"}, "market_type is required"),
    ({"signal_mode": None}, "signal_mode is required"),
    ({"timeframe": "7m"}, "timeframe is required"),
    ({"timeframe": ["4h"]}, "timeframe is required"),
    ({"market_type": ["spot"]}, "market_type is required"),
    ({"strategy_name": ["rsidip"]}, "4-20 lowercase"),
    ({"position_side": "up"}, "position_side must be 'long' or 'short'"),
    ({"position_side": "short"}, "spot strategy cannot go short"),
    ({"market_type": "futures"}, "position_side is required for futures signal_orders"),
    ({"tp_condition": None}, "tp_condition is required for signal_orders"),
    ({"sl_condition": "  "}, "sl_condition is required for signal_orders"),
    ({"entry_condition": 42}, "entry_condition must be a string"),
]


def test_generate_rejects_bad_fields_with_400_and_charges_nothing(api: Api) -> None:
    _, token = _user(api, balance=2)
    for change, fragment in BAD_FIELDS:
        reply = api.user("strategy_generate", {**RSI, **change}, token=token)
        assert reply.status_code == 400, (change, reply.text)
        assert reply.json()["error"] == "invalid_request"
        assert fragment in reply.json()["message"], change
    assert _balance(api, token) == 2
    assert _ok(api.user("account_info", token=token))["strategies"] == {}


def test_futures_short_and_signal_only_defaults(api: Api) -> None:
    _, token = _user(api, balance=2)
    short = RSI | {"strategy_name": "shorty", "market_type": "futures", "position_side": "short"}
    short |= {"entry_condition": "RSI(14) crosses below 70"}
    _ok(api.user("strategy_generate", short, token=token))
    only = {k: v for k, v in RSI.items() if k not in ("tp_condition", "sl_condition")}
    only |= {"strategy_name": "onlysig", "signal_mode": "signal_only"}
    _ok(api.user("strategy_generate", only, token=token))
    a, b = _settled(api, token, "shorty"), _settled(api, token, "onlysig")
    assert (a["status"], a["position_side"], a["market_type"]) == ("active", "short", "futures")
    assert (b["status"], b["tp_condition"], b["sl_condition"], b["signal_mode"]) == (
        "active",
        None,
        None,
        "signal_only",
    )


def test_duplicate_name_is_409_and_other_users_may_reuse_it(api: Api) -> None:
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI, token=token))
    again = api.user("strategy_generate", RSI, token=token)
    assert again.status_code == 409
    assert again.json() == {"error": "conflict", "message": "you already have a strategy named 'rsidip'"}
    _, other = _user(api)
    _ok(api.user("strategy_generate", RSI, token=other))
    assert _balance(api, token) == 4


def test_plan_limits_on_active_strategies(api: Api) -> None:
    _, free = _user(api, plan="free")
    refused = api.user("strategy_generate", RSI, token=free)
    assert refused.status_code == 403
    assert refused.json()["error"] == "forbidden"
    assert refused.json()["message"].startswith("the free plan includes no strategies; upgrade to starter")
    assert _balance(api, free) == 5

    _, starter = _user(api, plan="starter")
    _ok(
        api.user(
            "strategy_generate", RSI | {"strategy_name": "broken1", "entry_condition": "zzz"}, token=starter
        )
    )
    assert _settled(api, starter, "broken1")["status"] == "failed"
    _ok(api.user("strategy_generate", RSI, token=starter))  # a failed strategy does not count
    second = api.user("strategy_generate", RSI | {"strategy_name": "second"}, token=starter)
    assert second.status_code == 403
    assert second.json()["message"] == (
        "your starter plan allows 1 active strategies and you have 1; delete one or upgrade your plan"
    )
    # Regenerating the failed one would make a second active strategy.
    assert (
        api.user(
            "strategy_edit",
            {"strategy_name": "broken1", "entry_condition": "close above SMA(5)"},
            token=starter,
        ).status_code
        == 403
    )
    assert _balance(api, starter) == 4


def test_insufficient_credits_is_402_and_creates_nothing(api: Api) -> None:
    _, token = _user(api, balance=0)
    reply = api.user("strategy_generate", RSI, token=token)
    assert reply.status_code == 402
    assert reply.json() == {
        "error": "insufficient_credits",
        "code": "insufficient_credits",
        "message": "insufficient credits: need 1, have 0",
    }
    assert api.user("strategy_detail", {"strategy_name": "rsidip"}, token=token).status_code == 404
    assert _ok(api.user("account_info", token=token))["strategies"] == {}


def test_generation_cap_is_429_with_retry_after(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = generation.compile_strategy

    def slow(*args: Any, **kwargs: Any) -> Any:
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(generation, "compile_strategy", slow)
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI | {"strategy_name": "first"}, token=token))
    _ok(api.user("strategy_generate", RSI | {"strategy_name": "second"}, token=token))
    busy = api.user("strategy_generate", RSI | {"strategy_name": "third"}, token=token)
    assert busy.status_code == 429
    assert busy.headers["Retry-After"] == "5"
    assert busy.json() == {
        "error": "too_many_requests",
        "reason": "strategy_generation_in_progress",
        "retry_after": 5,
        "in_progress": 2,
        "max_concurrent": 2,
        "message": "2 strategy generation(s) already in progress (maximum 2); retry when one finishes",
    }
    edit = api.user("strategy_edit", {"strategy_name": "first", "tp_condition": "4%"}, token=token)
    assert edit.status_code == 429
    assert _balance(api, token) == 3
    release.set()
    assert _settled(api, token, "first")["status"] == "active"
    assert _settled(api, token, "second")["status"] == "active"
    _ok(api.user("strategy_generate", RSI | {"strategy_name": "third"}, token=token))


def test_generation_cap_comes_from_the_settings(
    make_api: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real = generation.compile_strategy

    def slow(*args: Any, **kwargs: Any) -> Any:
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(generation, "compile_strategy", slow)
    api = make_api(settings.replace(max_concurrent_generations=1))
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI | {"strategy_name": "first"}, token=token))
    busy = api.user("strategy_generate", RSI | {"strategy_name": "second"}, token=token)
    assert busy.status_code == 429
    assert (busy.json()["in_progress"], busy.json()["max_concurrent"]) == (1, 1)
    release.set()
    assert _settled(api, token, "first")["status"] == "active"


def test_edit_makes_a_new_version_and_versions_page(api: Api) -> None:
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI, token=token))
    _settled(api, token, "rsidip")
    reply = _ok(api.user("strategy_edit", {"strategy_name": "rsidip", "tp_condition": "5%"}, token=token))
    assert reply == {
        "strategy_name": "rsidip",
        "version": 2,
        "status": "generating",
        "copiers_cancelled": 0,
        "cost_upfront": 1,
        "cost_refunded_on_failure": True,
    }
    detail = _settled(api, token, "rsidip")
    assert (detail["version"], detail["status"], detail["tp_condition"], detail["sl_condition"]) == (
        2,
        "active",
        "5%",
        "1.5%",
    )
    _ok(
        api.user(
            "strategy_edit", {"strategy_name": "rsidip", "entry_condition": "nonsense words"}, token=token
        )
    )
    failed = _settled(api, token, "rsidip")
    assert (failed["version"], failed["status"], failed["error"]["field"]) == (3, "failed", "entry_condition")
    assert _balance(api, token) == 3  # three generations charged, the failed one refunded
    bad = api.user("strategy_edit", {"strategy_name": "rsidip"}, token=token)
    assert bad.status_code == 400

    first = _ok(api.user("strategy_versions", {"strategy_name": "rsidip", "limit": 2}, token=token))
    assert first["current_version"] == 3
    assert [(v["version"], v["status"]) for v in first["versions"]] == [(3, "failed"), (2, "active")]
    assert first["has_more"] is True and first["count"] == 2
    rest = _ok(
        api.user(
            "strategy_versions",
            {"strategy_name": "rsidip", "limit": 2, "cursor": first["last_evaluated_key"]},
            token=token,
        )
    )
    assert [v["version"] for v in rest["versions"]] == [1]
    assert rest["versions"][0]["tp_condition"] == "3%"
    assert (rest["has_more"], rest["last_evaluated_key"]) == (False, None)
    assert (
        api.user("strategy_versions", {"strategy_name": "rsidip", "cursor": "junk"}, token=token).status_code
        == 400
    )
    assert (
        api.user("strategy_versions", {"strategy_name": "rsidip", "limit": "x"}, token=token).status_code
        == 400
    )


def test_rollback_copies_the_target_and_goes_private(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    svc_id, token = _user(api)
    _ok(api.user("strategy_generate", RSI, token=token))
    _settled(api, token, "rsidip")
    monkeypatch.setattr(hooks, "full_range_returns", lambda *a: {"BTC": 4.0})
    public = {"strategy_name": "rsidip", "visibility": "public", "credits_per_signal": 0.5}
    _ok(api.user("strategy_visibility", public | {"timeframe": "4h", "coins": ["BTC"]}, token=token))
    _ok(api.user("strategy_edit", {"strategy_name": "rsidip", "entry_condition": "nonsense"}, token=token))
    assert _settled(api, token, "rsidip")["status"] == "failed"

    reply = _ok(api.user("strategy_rollback", {"strategy_name": "rsidip", "target_version": 1}, token=token))
    assert reply == {
        "strategy_name": "rsidip",
        "new_version": 3,
        "rolled_back_to": 1,
        "status": "active",
        "visibility": "private",
        "credits_per_signal": 0,
        "marketplace_subscriptions_cancelled": 0,
    }
    detail = _ok(api.user("strategy_detail", {"strategy_name": "rsidip"}, token=token))
    assert (detail["version"], detail["status"], detail["entry_condition"]) == (
        3,
        "active",
        RSI["entry_condition"],
    )
    assert (detail["visibility"], detail["credits_per_signal"], detail["public_coins"]) == ("private", 0, [])
    with api.app.state.services.store.read() as conn:
        v1 = strategies.load_strategy(conn, svc_id, "rsidip", version=1)
        v3 = strategies.load_strategy(conn, svc_id, "rsidip")
    assert (v3.version, v3.program_json) == (3, v1.program_json)
    assert _balance(api, token) == 4  # rollback is free; the failed edit was refunded
    for target, status in ((9, 404), ("1", 400), (0, 400), (None, 400)):
        body = {"strategy_name": "rsidip", "target_version": target}
        assert api.user("strategy_rollback", body, token=token).status_code == status


def test_delete_needs_the_name_confirmed(api: Api) -> None:
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI, token=token))
    _settled(api, token, "rsidip")
    _ok(api.user("strategy_edit", {"strategy_name": "rsidip", "tp_condition": "4%"}, token=token))
    _settled(api, token, "rsidip")
    missing = api.user("strategy_delete", {"strategy_name": "rsidip"}, token=token)
    assert (missing.status_code, missing.json()["message"]) == (
        400,
        "confirm_name is required: repeat the strategy name 'rsidip' to delete it",
    )
    wrong = api.user("strategy_delete", {"strategy_name": "rsidip", "confirm_name": "RSIDIP"}, token=token)
    assert wrong.status_code == 400
    assert api.user("strategy_delete", {"confirm_name": "rsidip"}, token=token).status_code == 400
    gone = api.user("strategy_delete", {"strategy_name": "nosuch", "confirm_name": "nosuch"}, token=token)
    assert gone.status_code == 404
    done = _ok(
        api.user("strategy_delete", {"strategy_name": "rsidip", "confirm_name": "rsidip"}, token=token)
    )
    assert done == {"strategy_name": "rsidip", "deleted": True, "deleted_objects": 2}
    assert api.user("strategy_detail", {"strategy_name": "rsidip"}, token=token).status_code == 404
    info = _ok(api.user("account_info", token=token))
    assert (info["strategies"], info["active_own_strategies"]) == ({}, 0)
    _ok(api.user("strategy_generate", RSI, token=token))  # the name is free again
    assert _settled(api, token, "rsidip")["version"] == 1


def test_visibility_rules(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    _, token = _user(api, plan="starter")
    _ok(api.user("strategy_generate", RSI, token=token))
    _settled(api, token, "rsidip")
    asked: list[tuple[Any, ...]] = []
    returns: dict[str, float] | None = None

    def fake(conn: Any, svc_id: str, name: str, timeframe: str) -> dict[str, float] | None:
        asked.append((svc_id, name, timeframe))
        return returns

    monkeypatch.setattr(hooks, "full_range_returns", fake)
    base = {"strategy_name": "rsidip", "visibility": "public", "credits_per_signal": 0.25, "timeframe": "4h"}
    body = base | {"coins": ["btc", "ETHUSDT", "SOL"]}

    none = api.user("strategy_visibility", body, token=token)
    assert (none.status_code, none.json()["message"]) == (
        400,
        "strategy 'rsidip' has no completed full_range backtest on 4h; run one first",
    )
    returns = {"BTCUSDT": -1.5, "ETHUSDT": 0.0}
    losing = api.user("strategy_visibility", body, token=token)
    assert losing.status_code == 400
    assert losing.json() == {
        "error": "invalid_request",
        "message": "no requested coin has a positive full_range return",
        "eligible_coins": [],
        "rejected_coins": {"BTC": "negative_return", "ETHUSDT": "negative_return", "SOL": "no_backtest"},
    }
    returns = {"BTC": 12.5, "ETHUSDT": -3.0}
    reply = _ok(api.user("strategy_visibility", body, token=token))
    assert reply == {
        "strategy_name": "rsidip",
        "visibility": "public",
        "credits_per_signal": 0.25,
        "timeframe": "4h",
        "eligible_coins": ["BTC"],
        "rejected_coins": {"ETHUSDT": "negative_return", "SOL": "no_backtest"},
    }
    assert asked[-1][1:] == ("rsidip", "4h")
    detail = _ok(api.user("strategy_detail", {"strategy_name": "rsidip"}, token=token))
    assert (detail["visibility"], detail["credits_per_signal"], detail["public_coins"]) == (
        "public",
        0.25,
        ["BTC"],
    )

    for bad, fragment in (
        ({"credits_per_signal": None}, "needs credits_per_signal"),
        ({"coins": []}, "needs coins"),
        ({"timeframe": None, "coins": None}, "needs timeframe, coins"),
        ({"credits_per_signal": 0.00001}, "has more than 4 decimals"),
        ({"credits_per_signal": 10.5}, "from 0.01 to 10"),
        ({"credits_per_signal": True}, "must be a number"),
        ({"timeframe": "2d"}, "timeframe must be one of"),
        ({"timeframe": {"tf": "4h"}}, "timeframe must be one of"),
        ({"coins": ["BTC", 7]}, "coins must be a list"),
        ({"coins": ["BTC USDT"]}, "invalid coin name(s): BTC USDT"),
        ({"credits_per_signal": "lots"}, "must be a number"),
        ({"coins": "BTC"}, "coins must be a list"),
        ({"visibility": "hidden"}, "visibility must be"),
    ):
        reply = api.user("strategy_visibility", body | bad, token=token)
        assert reply.status_code == 400, bad
        assert fragment in reply.json()["message"]
    many = api.user("strategy_visibility", base | {"coins": [f"C{i}" for i in range(6)]}, token=token)
    assert (many.status_code, many.json()["message"]) == (
        403,
        "your plan allows at most 5 coins per strategy; 6 requested",
    )
    private = _ok(
        api.user("strategy_visibility", {"strategy_name": "rsidip", "visibility": "private"}, token=token)
    )
    assert private == {"strategy_name": "rsidip", "visibility": "private"}
    detail = _ok(api.user("strategy_detail", {"strategy_name": "rsidip"}, token=token))
    assert (detail["visibility"], detail["public_coins"]) == ("private", [])


def test_visibility_of_a_strategy_not_active_is_409(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "full_range_returns", lambda *a: {"BTC": 1.0})
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI | {"entry_condition": "garbage"}, token=token))
    _settled(api, token, "rsidip")
    body = {"strategy_name": "rsidip", "visibility": "public", "credits_per_signal": 1, "timeframe": "4h"}
    reply = api.user("strategy_visibility", body | {"coins": ["BTC"]}, token=token)
    assert reply.status_code == 409
    assert reply.json()["error"] == "strategy_not_active"


def test_strategies_of_another_user_are_404(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "full_range_returns", lambda *a: {"BTC": 1.0})
    _, owner = _user(api)
    _ok(api.user("strategy_generate", RSI, token=owner))
    _settled(api, owner, "rsidip")
    _, other = _user(api)
    calls = {
        "strategy_detail": {},
        "strategy_edit": {"tp_condition": "9%"},
        "strategy_versions": {},
        "strategy_rollback": {"target_version": 1},
        "strategy_delete": {"confirm_name": "rsidip"},
        "strategy_visibility": {
            "visibility": "public",
            "credits_per_signal": 1,
            "timeframe": "4h",
            "coins": ["BTC"],
        },
    }
    for request_type, extra in calls.items():
        reply = api.user(request_type, {"strategy_name": "rsidip", **extra}, token=other)
        assert reply.status_code == 404, request_type
        assert reply.json() == {"error": "not_found", "message": "strategy 'rsidip' not found"}
    assert _balance(api, other) == 5
    assert _ok(api.user("strategy_detail", {"strategy_name": "rsidip"}, token=owner))["version"] == 1
    assert api.user("strategy_detail", {}, token=owner).status_code == 400
    assert api.user("strategy_detail", {"strategy_name": "rsidip"}).status_code == 401


def test_account_info_lists_strategies(api: Api) -> None:
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI, token=token))
    futures = RSI | {"strategy_name": "futlong", "market_type": "futures", "position_side": "long"}
    _ok(
        api.user(
            "strategy_generate", futures | {"entry_condition": "close crosses above SMA(20)"}, token=token
        )
    )
    _settled(api, token, "rsidip"), _settled(api, token, "futlong")
    info = _ok(api.user("account_info", token=token))
    assert info["active_own_strategies"] == 2
    assert info["strategies"] == {
        "futlong": {
            "name": "futlong",
            "status": "active",
            "candle_count": 21,
            "market_type": "futures",
            "leverage": 1,
        },
        "rsidip": {
            "name": "rsidip",
            "status": "active",
            "candle_count": 200,
            "market_type": "spot",
            "leverage": 1,
        },
    }


@pytest.fixture(scope="session")
def market_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small synthetic market, made once per session."""
    root = tmp_path_factory.mktemp("strategies-market")
    generate_market(DataStore(root), small=True)
    return root


def test_public_after_a_real_full_range_then_delete_with_its_backtest(
    make_api: Any, settings: Any, market_dir: Path
) -> None:
    api = make_api(settings.replace(data_dir=market_dir))
    _, token = _user(api, balance=20)
    body = RSI | {
        "strategy_name": "rsiseven",
        "timeframe": "1h",
        "entry_condition": "RSI(7) crosses above 30",
    }
    _ok(api.user("strategy_generate", body | {"tp_condition": "3%", "sl_condition": "2%"}, token=token))
    assert _settled(api, token, "rsiseven")["status"] == "active"
    public = {"strategy_name": "rsiseven", "visibility": "public", "credits_per_signal": 2, "timeframe": "1h"}
    early = api.user("strategy_visibility", public | {"coins": ["BTC"]}, token=token)
    assert (early.status_code, early.json()["message"]) == (
        400,
        "strategy 'rsiseven' has no completed full_range backtest on 1h; run one first",
    )

    headers = {"Authorization": f"Bearer {token}"}
    launch = api.post(
        "/backtest",
        params={"action": "full_range"},
        json={"strategy_name": "rsiseven", "coins": ["BTC", "ETH", "SOL"], "timeframe": "1h"},
        headers=headers,
    )
    assert launch.status_code == 200, launch.text
    deadline = time.monotonic() + 30
    while True:
        status = api.post(
            "/backtest",
            params={"action": "status"},
            json={"job_id": launch.json()["job_id"]},
            headers=headers,
        )
        if status.json()["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert status.json()["status"] == "completed", status.text

    engine = drivers.full_range(
        compile_strategy("RSI(7) crosses above 30", "3%", "2%"),
        ["BTCUSDT", "ETHUSDT", "SOLUSDT"],
        "1h",
        store=DataStore(market_dir),
    ).to_dict()
    returns = {c: r["summary"]["total_return_pct"] for c, r in engine["results"].items()}
    assert [c for c, r in returns.items() if r > 0] == ["BTCUSDT", "SOLUSDT"]
    reply = _ok(
        api.user("strategy_visibility", public | {"coins": ["BTC", "ETH", "SOL", "DOT"]}, token=token)
    )
    assert reply == {
        "strategy_name": "rsiseven",
        "visibility": "public",
        "credits_per_signal": 2,
        "timeframe": "1h",
        "eligible_coins": ["BTC", "SOL"],
        "rejected_coins": {"ETH": "negative_return", "DOT": "no_backtest"},
    }
    other_tf = api.user("strategy_visibility", public | {"timeframe": "4h", "coins": ["BTC"]}, token=token)
    assert other_tf.status_code == 400

    done = _ok(
        api.user("strategy_delete", {"strategy_name": "rsiseven", "confirm_name": "rsiseven"}, token=token)
    )
    assert done == {
        "strategy_name": "rsiseven",
        "deleted": True,
        "deleted_objects": 2,
    }  # 1 version + 1 backtest
    gone = api.post(
        "/backtest", params={"action": "status"}, json={"job_id": launch.json()["job_id"]}, headers=headers
    )
    assert gone.status_code == 404


def test_generate_with_an_idempotency_key_charges_once(api: Api) -> None:
    _, token = _user(api, balance=3)
    body = RSI | {"idempotency_key": "generate-rsidip-0001"}
    first = api.user("strategy_generate", body, token=token)
    again = api.user("strategy_generate", body, token=token)
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replay"] == "true"
    assert again.json()["data"] == first.json()["data"]
    assert _balance(api, token) == 2


def test_delete_is_503_and_deletes_nothing_when_the_result_store_fails(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, token = _user(api)
    _ok(api.user("strategy_generate", RSI, token=token))
    _settled(api, token, "rsidip")

    def broken(*args: Any, **kwargs: Any) -> int:
        raise OSError("object store unreachable")

    monkeypatch.setattr(backtests_service, "delete_for_strategy", broken)
    reply = api.user("strategy_delete", {"strategy_name": "rsidip", "confirm_name": "rsidip"}, token=token)
    assert reply.status_code == 503
    assert reply.json() == {
        "error": "service_unavailable",
        "message": "strategy 'rsidip' could not be deleted safely (result store unavailable); "
        "nothing was deleted, retry shortly",
    }
    assert _ok(api.user("strategy_detail", {"strategy_name": "rsidip"}, token=token))["status"] == "active"
