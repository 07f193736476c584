"""The credits ledger: concurrency, exact amounts, idempotent spends, history pages, 402 through HTTP."""

from __future__ import annotations

import threading
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from svc_api.accounts.tables import accounts
from svc_api.core.errors import InsufficientCredits, Invalid
from svc_api.core.store import Store
from svc_api.credits import service as credits
from svc_api.credits.tables import credit_transactions
from svc_api.migrations import migrate

if TYPE_CHECKING:
    from tests.api.conftest import Api


def _account(store: Store, svc_id: str = "ACC001", balance: int = 0) -> str:
    with store.write() as conn:
        conn.execute(
            accounts.insert().values(
                svc_id=svc_id,
                email=f"{svc_id.lower()}@example.com",
                password_hash="x",
                password_salt="00",
                referral_code=f"R{svc_id}",
                created_at=0,
            )
        )
    if balance:
        credits.adjust_credits(store, svc_id, balance, reason="seed", now=int(time.time()))
    return svc_id


@pytest.fixture
def store(database_url: str) -> Any:
    store = Store(database_url)
    migrate(store)
    yield store
    store.dispose()


def test_concurrent_spends_never_overdraw(store: Store) -> None:
    """40 threads spend 1 credit each against a balance of 13: exactly 13 succeed."""
    sid = _account(store, balance=13)
    barrier = threading.Barrier(40)
    outcomes: list[str] = []
    lock = threading.Lock()

    def spend(i: int) -> None:
        barrier.wait()
        try:
            credits.spend_credits(store, sid, 1, "backtest", f"job {i}", now=int(time.time()))
            result = "ok"
        except InsufficientCredits:
            result = "short"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=spend, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 13 and outcomes.count("short") == 27
    with store.read() as conn:
        assert credits.balance(conn, sid) == 0
        rows = conn.execute(
            sa.select(
                credit_transactions.c.seq, credit_transactions.c.amount, credit_transactions.c.balance_after
            )
            .where(credit_transactions.c.svc_id == sid, credit_transactions.c.type == "spend")
            .order_by(credit_transactions.c.seq)
        ).all()
    assert len(rows) == 13
    assert [r.seq for r in rows] == list(range(2, 15))  # seq 1 is the seed adjustment
    assert {r.amount for r in rows} == {-10_000}
    assert [r.balance_after for r in rows] == [(12 - i) * 10_000 for i in range(13)]


def test_amounts_are_exact_decimals(store: Store) -> None:
    sid = _account(store, balance=1)
    out = credits.spend_credits(store, sid, "0.1", "strategy_generate", "one", now=int(time.time()))
    credits.spend_credits(store, sid, Decimal("0.2"), "strategy_generate", "two", now=int(time.time()))
    assert out["amount"] == -0.1
    with store.read() as conn:
        assert credits.balance(conn, sid) == 0.7
    with pytest.raises(Invalid, match="more than 4 decimals"):
        credits.spend_credits(store, sid, "0.00001", "backtest", "too fine", now=int(time.time()))
    with pytest.raises(Invalid, match="must be a number"):
        credits.spend_credits(store, sid, "lots", "backtest", "x", now=int(time.time()))
    with pytest.raises(Invalid, match="action must be one of"):
        credits.spend_credits(store, sid, 1, "shopping", "x", now=int(time.time()))


def test_insufficient_spend_writes_nothing(store: Store) -> None:
    sid = _account(store, balance=2)
    with pytest.raises(InsufficientCredits, match="need 3, have 2"):
        credits.spend_credits(store, sid, 3, "backtest", "too much", now=int(time.time()))
    with store.read() as conn:
        assert credits.balance(conn, sid) == 2
        count = conn.execute(sa.select(sa.func.count()).select_from(credit_transactions)).scalar()
    assert count == 1


def test_spend_with_idempotency_key_charges_once_even_concurrently(store: Store) -> None:
    sid = _account(store, balance=10)
    barrier = threading.Barrier(8)
    results: list[dict[str, Any]] = []

    def spend() -> None:
        barrier.wait()
        results.append(
            credits.spend_credits(
                store, sid, 3, "backtest", "job", idempotency_key="job-123", now=int(time.time())
            )
        )

    threads = [threading.Thread(target=spend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({r["transaction_id"] for r in results}) == 1
    assert sum(not r["replayed"] for r in results) == 1
    with store.read() as conn:
        assert credits.balance(conn, sid) == 7


def test_refund_and_deposit_are_ledger_entries(store: Store) -> None:
    sid = _account(store, balance=1)
    credits.spend_credits(store, sid, 1, "strategy_generate", "Strategy generation", now=int(time.time()))
    refund = credits.refund_credits(
        store, sid, 1, "strategy_refund", "Generation failed", now=int(time.time())
    )
    deposit = credits.deposit_credits(store, sid, "25.5", "Card purchase", now=int(time.time()))
    assert (refund["type"], refund["action"], refund["amount"], refund["balance"]) == (
        "adjustment",
        "strategy_refund",
        1,
        1,
    )
    assert (deposit["type"], deposit["amount"], deposit["balance"]) == ("deposit", 25.5, 26.5)
    with pytest.raises(InsufficientCredits):
        credits.adjust_credits(store, sid, -27, reason="clawback", now=int(time.time()))
    assert (
        credits.adjust_credits(store, sid, "-26.5", reason="clawback", now=int(time.time()))["balance"] == 0
    )


def test_spend_joins_the_callers_transaction(store: Store) -> None:
    sid = _account(store, balance=5)
    with pytest.raises(RuntimeError), store.write() as conn:
        credits.spend_credits(conn, sid, 2, "backtest", "job", now=int(time.time()))
        raise RuntimeError("the job could not be queued")
    with store.read() as conn:
        assert credits.balance(conn, sid) == 5


def _paid(api: Api, token: str, **body: Any) -> Any:
    return api.user("test_spend", body, token=token)


def test_insufficient_credits_is_402_through_http(api: Api, paid_operation: Any) -> None:
    user = api.register()
    reply = _paid(api, user["session_token"], amount=1)
    assert reply.status_code == 402
    assert reply.json() == {
        "error": "insufficient_credits",
        "code": "insufficient_credits",
        "message": "insufficient credits: need 1, have 0",
    }


def test_credits_history_pages_newest_first(api: Api) -> None:
    user = api.register()
    store = api.app.state.services.store
    sid, token = user["svc_id"], user["session_token"]
    credits.adjust_credits(store, sid, 100, reason="welcome gift", now=int(time.time()))
    for i in range(4):
        credits.spend_credits(store, sid, "2.5", "backtest", f"backtest {i}", now=int(time.time()))
    first = api.user("credits_history", {"limit": 2}, token=token).json()["data"]
    assert [t["description"] for t in first["transactions"]] == ["backtest 3", "backtest 2"]
    assert first["count"] == 2 and first["has_more"] is True
    tx = first["transactions"][0]
    assert tx == {
        "transaction_id": f"{sid}-00000005",
        "type": "spend",
        "amount": -2.5,
        "action": "backtest",
        "description": "backtest 3",
        "timestamp": tx["timestamp"],
    }
    second = api.user("credits_history", {"limit": 2, "cursor": first["last_evaluated_key"]}, token=token)
    page2 = second.json()["data"]
    assert [t["description"] for t in page2["transactions"]] == ["backtest 1", "backtest 0"]
    third = api.user("credits_history", {"limit": 2, "cursor": page2["last_evaluated_key"]}, token=token)
    page3 = third.json()["data"]
    assert page3["has_more"] is False and page3["last_evaluated_key"] is None
    adjustment = page3["transactions"][0]
    assert (adjustment["type"], adjustment["action"], adjustment["amount"]) == (
        "adjustment",
        "credit_adjustment",
        100,
    )
    assert adjustment["description"] == "Balance correction"
    assert "welcome gift" not in third.text  # adjustment reasons are not exposed
    info = api.user("account_info", token=token).json()["data"]
    assert info["svc_credits"] == 90


def test_credits_history_rejects_bad_paging(api: Api) -> None:
    alice, bob = api.register(), api.register()
    credits.adjust_credits(api.app.state.services.store, alice["svc_id"], 5, reason="x", now=int(time.time()))
    credits.adjust_credits(api.app.state.services.store, alice["svc_id"], 5, reason="y", now=int(time.time()))
    cursor = api.user("credits_history", {"limit": 1}, token=alice["session_token"]).json()["data"][
        "last_evaluated_key"
    ]
    for body in ({"limit": "ten"}, {"limit": 0}, {"limit": 101}, {"limit": 1.5}, {"cursor": "garbage"}):
        reply = api.user("credits_history", body, token=alice["session_token"])
        assert reply.status_code == 400, body
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    assert api.user("credits_history", {"cursor": tampered}, token=alice["session_token"]).status_code == 400
    # Another user's cursor, or one from another list, is refused.
    assert api.user("credits_history", {"cursor": cursor}, token=bob["session_token"]).status_code == 400
    assert api.user("login_history", {"cursor": cursor}, token=alice["session_token"]).status_code == 400


def test_concurrent_spends_through_http(api: Api, paid_operation: Any) -> None:
    """40 concurrent requests against a balance of 13 through the whole app: 13 x 200, 27 x 402."""
    user = api.register()
    credits.adjust_credits(
        api.app.state.services.store, user["svc_id"], 13, reason="seed", now=int(time.time())
    )
    barrier = threading.Barrier(40)
    statuses: list[int] = []

    def spend() -> None:
        barrier.wait()
        statuses.append(_paid(api, user["session_token"], amount=1).status_code)

    threads = [threading.Thread(target=spend) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200] * 13 + [402] * 27
    history = api.user("credits_history", {"limit": 100}, token=user["session_token"]).json()["data"]
    assert [t["type"] for t in history["transactions"]] == ["spend"] * 13 + ["adjustment"]
    assert api.user("account_info", token=user["session_token"]).json()["data"]["svc_credits"] == 0
