"""Background runs killed with SIGKILL half-way, on PostgreSQL, in real processes: ``svc worker``'s
marketplace renewals, and the month's payout run (``svc admin edu payout-run``, the function the
``svc worker`` scheduler calls on days 20-30 of the wall clock; the test runs whatever today is). The
test holds a row lock (or an uncommitted payout row) that the run needs part-way through, waits until
the run's transaction is blocked on it, kills the process, lets go, and runs again: every
subscription is charged once per month, every seller paid once, and every payout issued is in an
export file (signal batches killed mid-way: ``tests/api/test_signals_batch.py``)."""

from __future__ import annotations

import csv
import datetime as dt
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from svc_api.accounts.tables import accounts as accounts_table
from svc_api.core.clock import ManualClock
from svc_api.credits.tables import credit_transactions
from svc_api.education.commerce import service as commerce
from svc_api.education.payouts import service as payouts
from svc_api.education.payouts.run import payout_id
from svc_api.education.payouts.tables import payables
from svc_api.education.payouts.tables import payouts as payout_rows
from svc_api.marketplace.tables import marketplace_subscriptions as subs
from svc_api.settings import Settings
from tests.api.conftest import SECRET, SIGNALS_T0
from tests.api.education_helpers import TR_PROFILE, VIDEO_COURSE, buy, publish
from tests.api.journey_helpers import server_env, svc_command
from tests.api.test_education_payouts import seller
from tests.api.test_marketplace_concurrency import _listed, _subscriber

if TYPE_CHECKING:
    from tests.api.conftest import Api

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

WAIT = 60.0


def _named(url: str, name: str) -> str:
    return f"{url}&application_name={name}"


def _env(url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = server_env(url, tmp_path / "data", tmp_path / "var")
    return env | {"SECRET_KEY": SECRET.decode()} | extra


def _blocked(admin: sa.Engine, name: str, statement: str) -> bool:
    """True once a backend of the process named ``name`` waits for a lock in ``statement``."""
    with admin.connect() as conn:
        waiting = conn.execute(
            sa.text(
                "SELECT query FROM pg_stat_activity WHERE application_name = :n AND wait_event_type = 'Lock'"
            ),
            {"n": name},
        ).scalars()
        return any(statement in query for query in waiting)


def _until(what: str, check: Any, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.05)


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``command`` with its output appended to ``log`` (the child keeps its own descriptor)."""
    with log.open("ab") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)


def _kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    assert process.wait(WAIT) == -signal.SIGKILL


def test_svc_worker_killed_in_a_renewal_run_charges_each_month_once(
    make_api: Any, postgres_url: str, signals_market: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    settings = Settings(database_url=postgres_url, secret_key=SECRET, data_dir=signals_market)
    api: Api = make_api(settings, clock=ManualClock(SIGNALS_T0))
    _, _, listing = _listed(api)
    subscribers = [_subscriber(api, 20) for _ in range(6)]
    for _, token in subscribers:
        reply = api.user(
            "marketplace_subscribe", {"listing_id": listing, "selected_coins": ["BTC"]}, token=token
        )
        assert reply.status_code == 200, reply.text
    # months of 30 days from 2026-10-01: by the wall clock (2026-12 or later) two or more are due
    wall = int(time.time())
    due_months = (wall - SIGNALS_T0) // (30 * 86_400)
    assert due_months >= 2
    admin = sa.create_engine(postgres_url, poolclass=sa.pool.NullPool)
    with api.app.state.services.store.read() as conn:
        order = conn.execute(sa.select(subs.c.svc_id).order_by(subs.c.next_charge_at, subs.c.subscription_id))
        fourth = list(order.scalars())[3]
    name = f"svc-kill-{uuid.uuid4().hex[:8]}"
    env = _env(_named(postgres_url, name), tmp_path, SIGNAL_POLL_SECONDS="0.2", DATA_DIR=str(signals_market))
    command = svc_command("worker", "--only", "marketplace_renewals")
    log = tmp_path / "worker.log"
    with admin.connect() as holder:
        holder.begin()
        holder.execute(
            sa.select(accounts_table.c.svc_id).where(accounts_table.c.svc_id == fourth).with_for_update()
        )
        worker = _start(command, env, log)
        try:
            _until(
                "the renewal run blocks on the fourth subscriber", lambda: _blocked(admin, name, "accounts")
            )
            _kill(worker)  # three renewals written in its transaction, none committed
        finally:
            if worker.poll() is None:
                worker.kill()
        holder.rollback()
    worker = _start(command, env, log)
    try:

        def settled() -> bool:
            with admin.connect() as conn:
                return not conn.execute(
                    sa.select(sa.func.count()).where(subs.c.status == "active", subs.c.next_charge_at <= wall)
                ).scalar()

        _until("every due month is renewed", settled)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(WAIT)
    with admin.connect() as conn:
        rows = conn.execute(sa.select(subs.c.subscription_id, subs.c.svc_id, subs.c.periods_charged)).all()
        for sub_id, svc_id, periods in rows:
            keys = conn.execute(
                sa.select(credit_transactions.c.idempotency_key).where(
                    credit_transactions.c.svc_id == svc_id, credit_transactions.c.type == "spend"
                )
            ).scalars()
            assert sorted(keys) == sorted(f"{sub_id}:{n}" for n in range(1, periods + 1))
            assert periods == 1 + due_months  # the first month at subscribe, then each due one once
            balance = conn.execute(
                sa.select(accounts_table.c.credits).where(accounts_table.c.svc_id == svc_id)
            )
            total = conn.execute(
                sa.select(sa.func.sum(credit_transactions.c.amount)).where(
                    credit_transactions.c.svc_id == svc_id
                )
            )
            assert balance.scalar() == total.scalar()
    admin.dispose()


def _period_of(now: int) -> tuple[str, int]:
    """The last closed month of the wall clock (YYYY-MM) and a moment in its middle."""
    today = dt.datetime.fromtimestamp(now, dt.UTC)
    last = (today.replace(day=1) - dt.timedelta(days=1)).replace(day=15, hour=12)
    return last.strftime("%Y-%m"), int(last.timestamp())


def test_a_payout_run_killed_half_way_pays_each_seller_once_and_exports_every_payout(
    make_api: Any, postgres_url: str, tmp_path: Path
) -> None:
    settings = Settings(database_url=postgres_url, secret_key=SECRET, var_dir=tmp_path / "var")
    wall = int(time.time())
    period, mid = _period_of(wall)
    api: Api = make_api(settings, clock=ManualClock(mid))
    sellers = []
    for _ in range(6):
        tr = seller(api, TR_PROFILE)
        course = publish(api, tr.svc_id, VIDEO_COURSE)
        buy(api, api.register()["session_token"], course)
        sellers.append(tr.svc_id)
    with api.app.state.services.store.write() as conn:
        payouts.set_fx_rate(conn, "USD", "TRY", "41.25", now=wall)
    admin = sa.create_engine(postgres_url, poolclass=sa.pool.NullPool)
    with api.app.state.services.store.read() as conn:
        order = commerce.sellers_with_sales(conn, wall)
    assert sorted(order) == sorted(sellers)
    fourth = order[3]
    name = f"svc-kill-{uuid.uuid4().hex[:8]}"
    env = _env(_named(postgres_url, name), tmp_path)
    command = svc_command("admin", "edu", "payout-run", "--period", period)
    log = tmp_path / "run.log"
    with admin.connect() as holder:
        holder.begin()  # an uncommitted payout of the fourth seller: the run's insert waits for it
        holder.execute(
            payout_rows.insert().values(
                payout_id=payout_id(fourth, period, "USD"),
                leader_id=fourth,
                period=period,
                currency="USD",
                amount_minor=0,
                payout_currency="TRY",
                payout_amount_minor=0,
                state="held",
                run_id="run_blocker",
                export_file="none",
                details={},
                created_at=wall,
            )
        )
        run = _start(command, env, log)
        try:
            _until(
                "the payout run blocks on the fourth seller",
                lambda: _blocked(admin, name, "INSERT INTO edu_payouts"),
            )
            _kill(run)  # three sellers paid and committed, the fourth's transaction lost
        finally:
            if run.poll() is None:
                run.kill()
        holder.rollback()
    with admin.connect() as conn:
        committed = conn.execute(sa.select(sa.func.count()).select_from(payout_rows)).scalar()
    assert committed == 3
    again = subprocess.run(command, env=env, capture_output=True, timeout=WAIT)
    assert again.returncode == 0, again.stderr.decode()
    with admin.connect() as conn:
        paid = conn.execute(
            sa.select(payout_rows.c.payout_id, payout_rows.c.leader_id, payout_rows.c.export_file)
        )
        paid = paid.all()
        entries = (
            conn.execute(sa.select(payables.c.ref_id).where(payables.c.kind == "payout")).scalars().all()
        )
    assert sorted(leader for _, leader, _ in paid) == sorted(sellers)  # each seller once
    assert sorted(entries) == sorted(payout_id for payout_id, _, _ in paid)  # one ledger entry each
    exported: set[str] = set()
    for _, _, export in {(None, None, e) for _, _, e in paid}:
        path = tmp_path / "var" / export
        assert path.exists(), f"payouts of {export} were issued but never exported"
        with path.open(newline="", encoding="utf-8") as handle:
            exported |= {row["payout_id"] for row in csv.DictReader(handle)}
    assert exported == {payout_id for payout_id, _, _ in paid}
    admin.dispose()
