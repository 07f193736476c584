"""The strategies domain without HTTP: ``load_strategy`` for the backtests, the generation worker's
claims, refunds and crash recovery, and the plan limit under concurrent requests."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from svc_api.accounts import service as accounts
from svc_api.accounts.identity import register
from svc_api.core.clock import WallClock
from svc_api.core.errors import DomainError, Forbidden, NotFound
from svc_api.core.store import Store
from svc_api.credits import service as credits
from svc_api.credits.tables import credit_transactions
from svc_api.migrations import migrate
from svc_api.strategies import generation
from svc_api.strategies import service as strategies
from svc_api.strategies.tables import strategy_versions
from svc_api.strategies.worker import GenerationWorker
from svc_engine.strategy import compile_strategy

if TYPE_CHECKING:
    from tests.api.conftest import Api

RSI = {
    "strategy_name": "rsidip",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "RSI(14) crosses above 30",
    "tp_condition": "3%",
    "sl_condition": "1%",
}


@pytest.fixture
def store(database_url: str) -> Any:
    store = Store(database_url)
    migrate(store)
    yield store
    store.dispose()


def _account(store: Store, plan: str = "pro", balance: int = 5) -> str:
    with store.write() as conn:
        sid = register(
            conn, f"u{time.monotonic_ns()}@example.com", "password1", ip="::1", ttl=60, now=int(time.time())
        ).svc_id
        accounts.grant_plan(conn, sid, plan, 30, now=int(time.time()))
        credits.deposit_credits(conn, sid, balance, now=int(time.time()))
    return sid


def _generate(store: Store, sid: str, **change: Any) -> None:
    with store.write() as conn:
        strategies.generate(
            conn, sid, strategies.NewStrategy.model_validate(RSI | change), now=int(time.time())
        )


def _run_worker(store: Store) -> int:
    """Process every waiting version in this thread; returns how many were processed."""
    worker = GenerationWorker(_Services(store), threads=0)
    done = 0
    while worker.step("test-worker"):
        done += 1
    return done


class _Services:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.clock = WallClock()


def _refunds(store: Store, sid: str) -> list[int]:
    with store.read() as conn:
        return list(
            conn.execute(
                sa.select(credit_transactions.c.amount).where(
                    credit_transactions.c.svc_id == sid, credit_transactions.c.action == "strategy_refund"
                )
            ).scalars()
        )


def test_load_strategy_states(store: Store) -> None:
    sid = _account(store)
    _generate(store, sid)
    with store.read() as conn:
        with pytest.raises(strategies.StrategyNotActive) as busy:
            strategies.load_strategy(conn, sid, "rsidip")
        with pytest.raises(NotFound, match="strategy 'nosuch' not found"):
            strategies.load_strategy(conn, sid, "nosuch")
        with pytest.raises(NotFound, match="strategy 'rsidip' not found"):
            strategies.load_strategy(conn, "OTHER1", "rsidip")
    assert (busy.value.status, busy.value.error) == (409, "strategy_not_active")
    assert (
        str(busy.value)
        == "strategy 'rsidip' version 1 is still generating; only an active strategy can be used"
    )
    assert _run_worker(store) == 1
    with store.read() as conn:
        record = strategies.load_strategy(conn, sid, "rsidip")
    expected = compile_strategy("RSI(14) crosses above 30", "3%", "1%")
    assert (record.name, record.version, record.status, record.timeframe) == ("rsidip", 1, "active", "1h")
    assert (record.market_type, record.position_side, record.signal_mode) == ("spot", "long", "signal_orders")
    assert (record.candle_count, record.program_json) == (expected.candle_count, expected.to_json())
    assert record.compiled() == expected
    with store.write() as conn:
        strategies.edit(conn, sid, "rsidip", {"entry_condition": "blah blah"}, now=int(time.time()))
    _run_worker(store)
    with store.read() as conn:
        with pytest.raises(strategies.StrategyNotActive, match="version 2 failed to generate"):
            strategies.load_strategy(conn, sid, "rsidip")
        assert strategies.load_strategy(conn, sid, "rsidip", version=1).version == 1
        with pytest.raises(NotFound, match="has no version 7"):
            strategies.load_strategy(conn, sid, "rsidip", version=7)


def test_failed_generation_is_refunded_once(store: Store) -> None:
    sid = _account(store, balance=1)
    _generate(store, sid, entry_condition="buy the dip")
    with store.write() as conn:
        claim = generation.claim_next(conn, "w1", now=int(time.time()))
    assert claim is not None and claim.version == 1
    outcome = generation.compile_version(claim.fields)
    assert outcome.status == "failed"
    with store.write() as conn:
        assert generation.finish(conn, claim, outcome, now=int(time.time())) is True
        assert (
            generation.finish(conn, claim, outcome, now=int(time.time())) is False
        )  # already finished: no second refund
    assert _refunds(store, sid) == [credits.to_units(1)]
    with store.read() as conn:
        assert credits.balance(conn, sid) == 1


def test_a_claim_of_a_deleted_strategy_is_dropped(store: Store) -> None:
    sid = _account(store)
    _generate(store, sid, entry_condition="nonsense")
    with store.write() as conn:
        claim = generation.claim_next(conn, "w1", now=int(time.time()))
        assert generation.claim_next(conn, "w2", now=int(time.time())) is None  # taken
    assert claim is not None
    with store.write() as conn:
        assert strategies.delete(conn, sid, "rsidip", now=int(time.time()))["deleted_objects"] == 1
    with store.write() as conn:
        assert (
            generation.finish(conn, claim, generation.compile_version(claim.fields), now=int(time.time()))
            is False
        )
    assert _refunds(store, sid) == []


def test_recovery_retries_then_fails_and_refunds(store: Store) -> None:
    sid = _account(store)
    _generate(store, sid)
    _generate(store, sid, strategy_name="second")
    now = int(time.time())
    with store.write() as conn:
        claims = [generation.claim_next(conn, "crashed", now=now - 100) for _ in range(2)]
        second = next(c for c in claims if c is not None and c.name == "second")
        conn.execute(
            strategy_versions.update()
            .where(strategy_versions.c.generation_id == second.generation_id)
            .values(attempts=generation.MAX_ATTEMPTS)
        )
        assert generation.recover(conn, now=now) == {"retried": 1, "failed": 1}
        assert generation.recover(conn, now=now) == {"retried": 0, "failed": 0}
    assert _run_worker(store) == 1
    with store.read() as conn:
        assert strategies.detail(conn, sid, "rsidip")["status"] == "active"
        failed = strategies.detail(conn, sid, "second")
        assert credits.balance(conn, sid) == 4
    assert failed["status"] == "failed"
    assert failed["error"]["message"].startswith("generation was interrupted repeatedly")
    assert _refunds(store, sid) == [credits.to_units(1)]


def test_app_start_recovers_a_generation_left_by_a_crash(make_api: Any, settings: Any) -> None:
    store = Store(settings.database_url)
    migrate(store)
    sid = _account(store)
    _generate(store, sid)
    with store.write() as conn:
        assert generation.claim_next(conn, "dead-process", now=int(time.time()) - 3600) is not None
    store.dispose()
    api: Api = make_api(settings)
    deadline = time.monotonic() + 10
    app_store = api.app.state.services.store
    while time.monotonic() < deadline:
        with app_store.read() as conn:
            status = strategies.detail(conn, sid, "rsidip")["status"]
        if status != "generating":
            break
        time.sleep(0.02)
    assert status == "active"


def test_plan_limit_holds_under_concurrent_requests(store: Store) -> None:
    sid = _account(store, plan="starter")
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            _generate(store, sid, strategy_name=f"race{i}")
            outcomes.append("ok")
        except DomainError as exc:
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["Forbidden", "Forbidden", "Forbidden", "ok"]
    with store.read() as conn:
        assert strategies.account_section(conn, sid)["active_own_strategies"] == 1
        assert credits.balance(conn, sid) == 4


def test_free_plan_message(store: Store) -> None:
    with store.write() as conn:
        sid = register(conn, "free@example.com", "password1", ip="::1", ttl=60, now=int(time.time())).svc_id
        with pytest.raises(Forbidden) as refused:
            strategies.generate(conn, sid, strategies.NewStrategy.model_validate(RSI), now=int(time.time()))
    assert str(refused.value) == (
        "the free plan includes no strategies; "
        "upgrade to starter (1 active strategy), plus (2), pro (5) or investor (10)"
    )
