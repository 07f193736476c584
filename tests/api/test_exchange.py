"""The exchange as a trader meets it, through HTTP on the paper exchange: link an account, read the
balance, preview and place an OCO from a live signal, retry the key, read the order history, log in
by exchange identity; and every error and linking or login status of the spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from svc_api.exchange.interface import ExchangeUnavailable
from svc_api.exchange.paper import PaperExchange
from svc_api.exchange.tables import links, paper_orders
from tests.api.community_helpers import admin
from tests.api.exchange_helpers import linked_trader, live_signal, order_of, paper_account

KEY = "order-key-0000000001"


@pytest.fixture
def xapi(sig_api: Any, cli_env: None) -> Any:
    return sig_api


def _data(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()["data"]


def _error(reply: Any) -> tuple[int, str]:
    body = reply.json()
    return reply.status_code, body.get("message", body.get("error"))


def test_link_balance_preview_order_retry_history_and_login(xapi: Any) -> None:
    svc_id, token, keys = linked_trader(xapi)
    assert _data(xapi.user("account_info", token=token))["connections"]["exchange"] is True
    balance = _data(xapi.user("exchange_balance", token=token))
    assert balance == {"spot": {"BTC": 1.0, "USDT": 10000.0}, "futures": {}, "funding": {}}

    signal = live_signal(xapi, token)
    preview = _data(xapi.user("exchange_order_preview", order_of(signal), token=token))
    body = order_of(signal, KEY)
    assert (preview["symbol"], preview["position_side"], preview["order_side"]) == ("BTCUSDT", "LONG", "SELL")
    assert (preview["quantity"], preview["take_profit_price"], preview["stop_loss_price"]) == (
        body["quantity"],
        signal["limit_price"],
        signal["stop_price"],
    )
    assert (preview["balance_asset"], preview["available_balance"], preview["required_balance"]) == (
        "BTC",
        "1",
        body["quantity"].rstrip("0"),
    )
    flags = (
        preview["balance_verified"],
        preview["market_type"],
        preview["leverage"],
        preview["irreversible"],
    )
    assert flags == (True, "spot", 1, True)
    assert (preview["price_precision"], preview["quantity_precision"], preview["minimum_notional"]) == (
        2,
        5,
        5.0,
    )

    placed = _data(xapi.user("exchange_order", body, token=token))
    assert (placed["status"], placed["symbol"], placed["side"], placed["idempotency_key"]) == (
        "submitted",
        "BTCUSDT",
        "SELL",
        KEY,
    )
    assert [o["type"] for o in placed["orders"]] == ["STOP_LOSS_LIMIT", "LIMIT_MAKER"]
    again = _data(xapi.user("exchange_order", body, token=token))
    assert again == {**placed, "idempotent_replay": True}
    other = xapi.user("exchange_order", {**body, "quantity": "0.00100"}, token=token)
    assert _error(other) == (409, "this idempotency_key was used for another order")
    # the BTC is held by the OCO: the balance shows what is left free
    assert _data(xapi.user("exchange_balance", token=token))["spot"]["BTC"] == pytest.approx(
        1 - float(body["quantity"])
    )

    history = _data(xapi.user("order_history", token=token))
    [record] = history["orders"]
    assert (record["order_id"], record["coin"], record["strategy_name"], record["exchange_order_status"]) == (
        placed["order_list_id"],
        "BTC",
        "smacross",
        "NEW",
    )
    assert (record["execution_mode"], record["order_source"], record["signal_position_key"]) == (
        "paper_trade",
        "signal",
        signal["position_key"],
    )
    assert (history["count"], history["has_more"], history["status"]) == (1, False, None)
    assert _data(xapi.user("order_history", {"status": "FILLED"}, token=token))["orders"] == []
    assert xapi.user("order_history", {"status": "DONE"}, token=token).status_code == 400

    login = xapi.user("exchange_login", {"api_key": keys["api_key"], "api_secret": keys["api_secret"]})
    session = _data(login)
    assert session["svc_id"] == svc_id
    assert _data(xapi.user("account_info", token=session["session_token"]))["svc_id"] == svc_id


def test_credentials_are_encrypted_at_rest_and_survive_a_key_rotation(xapi: Any) -> None:
    _, token, keys = linked_trader(xapi)
    services = xapi.app.state.services
    with services.store.read() as conn:
        raw = " ".join(str(v) for v in conn.execute(sa.select(links)).one())
    assert keys["api_key"] not in raw and keys["api_secret"] not in raw
    key_file = Path(services.settings.var_dir) / "exchange_keys"
    before = key_file.read_text()
    assert admin("exchange", "rotate-key")["rotated"] == 1
    with services.store.read() as conn:
        rotated = " ".join(str(v) for v in conn.execute(sa.select(links)).one())
    assert rotated != raw and key_file.read_text() != before and len(key_file.read_text().split()) == 1
    services._cache.pop("exchange:keyring")  # what KEYRING_TTL does within seconds
    assert _data(xapi.user("exchange_balance", token=token))["spot"]["USDT"] == 10000.0


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"api_key": "k" * 63, "api_secret": "s" * 64}, 400, "api_key must be exactly 64 characters"),
        ({"api_key": "k" * 64, "api_secret": "s" * 64}, 400, "the exchange refused this API key and secret"),
    ],
)
def test_link_errors(xapi: Any, body: dict[str, str], status: int, message: str) -> None:
    token = xapi.register()["session_token"]
    assert _error(xapi.user("exchange_link", body, token=token)) == (status, message)


def test_link_refuses_keys_without_spot_or_the_proxy_address(xapi: Any) -> None:
    token = xapi.register()["session_token"]
    no_spot = paper_account("USDT=1", extra=("--no-spot",))
    open_key = paper_account("USDT=1", extra=("--unrestricted",))
    other_ip = paper_account("USDT=1", extra=("--whitelist", "10.0.0.9"))
    proxy = "this API key must be restricted to the order proxy's address 127.0.0.1"
    for keys, start in [(no_spot, "this API key cannot trade spot"), (open_key, proxy), (other_ip, proxy)]:
        status, message = _error(
            xapi.user(
                "exchange_link", {"api_key": keys["api_key"], "api_secret": keys["api_secret"]}, token=token
            )
        )
        assert status == 400 and message.startswith(start), message
    assert _data(xapi.user("account_info", token=token))["connections"]["exchange"] is False


def test_link_without_an_account_id_is_502(xapi: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    token = xapi.register()["session_token"]
    keys = paper_account("USDT=1")
    real = PaperExchange.key_info
    monkeypatch.setattr(
        PaperExchange, "key_info", lambda self, creds: real(self, creds).__class__("", True, ("127.0.0.1",))
    )
    reply = xapi.user(
        "exchange_link", {"api_key": keys["api_key"], "api_secret": keys["api_secret"]}, token=token
    )
    assert _error(reply) == (502, "the exchange returned no account ID")


def test_login_statuses(xapi: Any) -> None:
    keys = paper_account("USDT=1")
    assert _error(xapi.user("exchange_login", {"api_key": "k" * 10, "api_secret": "s" * 64})) == (
        401,
        "api_key must be exactly 64 characters",
    )
    reply = xapi.user("exchange_login", {"api_key": keys["api_key"], "api_secret": keys["api_secret"]})
    assert _error(reply) == (
        400,
        "no account is linked to this exchange identity: register, then link the exchange",
    )
    assert "code" not in reply.json()
    wrong = xapi.user("exchange_login", {"api_key": keys["api_key"], "api_secret": "0" * 64})
    assert (wrong.status_code, "code" in wrong.json()) == (401, False)


def test_order_errors(xapi: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _, token, _ = linked_trader(xapi)
    signal = live_signal(xapi, token)
    body = order_of(signal, KEY)
    cases = [
        ({"market_type": "futures"}, 403, "futures orders are not placed: only spot orders are allowed"),
        ({"quantity": None}, 400, "missing fields: quantity"),
        ({"quantity": "0.1"}, 400, "quantity must be a decimal string with exactly 5 decimals, got '0.1'"),
        ({"quantity": "NaN"}, 400, "quantity must be a decimal string with exactly 5 decimals, got 'NaN'"),
        ({"take_profit_price": signal["stop_price"], "stop_loss_price": signal["limit_price"]}, 400, None),
        ({"quantity": "0.00001"}, 400, None),  # below the minimum notional
        ({"quantity": "5.00000"}, 400, None),  # more BTC than held
        ({"idempotency_key": "short"}, 400, "idempotency_key must be 16-128 letters, digits or . _ : -"),
        ({"signal_position_key": ""}, 400, "order_source signal needs the signal_position_key of the signal"),
        ({"order_source": "bot"}, 400, "order_source must be one of signal, manual"),
        ({"signal_position_key": "sig_nope"}, 404, "no live signal sig_nope of yours"),
        ({"symbol": "ETHUSDT"}, 409, "the signal is on BTCUSDT, not ETHUSDT"),
    ]
    for change, status, message in cases:
        reply = xapi.user("exchange_order", {**body, **change}, token=token)
        got = _error(reply)
        assert got[0] == status, (change, reply.text)
        if message is not None:
            assert got[1] == message, change

    def down(self: Any, creds: Any) -> Any:
        raise ExchangeUnavailable("timed out")

    monkeypatch.setattr(PaperExchange, "balances", down)
    reply = xapi.user("exchange_order", body, token=token)
    assert (reply.status_code, reply.json()["reason"]) == (503, "exchange_unavailable")
    monkeypatch.undo()
    with xapi.app.state.services.store.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(paper_orders)).scalar() == 0
    assert _data(xapi.user("exchange_order", body, token=token))["status"] == "submitted"  # the key was freed
    member = xapi.register()["session_token"]
    assert _error(xapi.user("exchange_balance", token=member)) == (400, "link an exchange account first")
