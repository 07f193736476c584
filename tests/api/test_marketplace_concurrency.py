"""Money under concurrency and crashes, on SQLite and PostgreSQL: 50 concurrent subscribes by one
user make one subscription and one charge; subscribers whose balance covers only some signals never go
negative and no charge is lost or doubled; two schedulers and two signal workers, one of them dying
mid-run, charge each period and each signal exactly once; two workers recording one signal at the
same moment write, charge and tell it once."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from svc_api.accounts import service as accounts
from svc_api.credits import service as credits
from svc_api.credits.tables import credit_transactions
from svc_api.market import service as market
from svc_api.marketplace import service as marketplace
from svc_api.notifications.tables import notifications as notifications_table
from svc_api.signals import delivery, queries, recording, watches
from svc_api.signals import service as signals
from svc_api.signals.evaluate import Position
from svc_api.signals.tables import signal_deliveries
from tests.api.test_signals import HOUR, creator

if TYPE_CHECKING:
    from tests.api.conftest import Api

DAY = 24 * HOUR


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()["data"]


def _listed(api: Api, price_per_signal: float = 1) -> tuple[str, str, str]:
    """A creator whose strategy is public at ``price_per_signal`` and listed (signal_only, BTC+SOL)."""
    a_id, a = creator(
        api, ["BTC", "SOL"], name="rsiseven", strategy={"entry_condition": "RSI(7) crosses above 30"}
    )
    _ok(
        api.user(
            "strategy_visibility",
            {
                "strategy_name": "rsiseven",
                "visibility": "public",
                "credits_per_signal": price_per_signal,
                "timeframe": "1h",
                "coins": ["BTC", "SOL"],
            },
            token=a,
        )
    )
    listing = _ok(
        api.user(
            "marketplace_publish",
            {
                "strategy_key": "rsiseven",
                "monthly_price_credits": 2,
                "signal_mode": "signal_only",
                "requested_coins": ["BTC", "SOL"],
            },
            token=a,
        )
    )
    return a_id, a, listing["listing_id"]


def _subscriber(api: Api, balance: float) -> tuple[str, str]:
    data = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 365, now=api.clock.now())
        credits.deposit_credits(conn, data["svc_id"], balance, now=int(time.time()))
    return data["svc_id"], data["session_token"]


def _ledger_total(api: Api) -> tuple[int, int]:
    """Sum of every marketplace_signal amount (must be 0: debits equal credits) and their count."""
    with api.app.state.services.store.read() as conn:
        row = conn.execute(
            sa.select(sa.func.coalesce(sa.func.sum(credit_transactions.c.amount), 0), sa.func.count()).where(
                credit_transactions.c.action == "marketplace_signal"
            )
        ).one()
    return int(row[0]), int(row[1])


def test_fifty_concurrent_subscribes_by_one_user_make_one_subscription_and_one_charge(sig_api: Api) -> None:
    _, _, listing = _listed(sig_api)
    _, b = _subscriber(sig_api, 20)
    body = {"listing_id": listing, "selected_coins": ["BTC"]}
    with ThreadPoolExecutor(10) as pool:
        codes = list(
            pool.map(lambda _: sig_api.user("marketplace_subscribe", body, token=b).status_code, range(50))
        )
    assert sorted(set(codes)) == [200, 409] and codes.count(200) == 1
    assert _ok(sig_api.user("account_info", token=b))["svc_credits"] == 18
    subs = _ok(sig_api.user("marketplace_my_subscriptions", token=b))["subscriptions"]
    assert len(subs) == 1 and subs[0]["credits_spent"] == 2
    assert _ledger_total(sig_api) == (0, 3)  # the charge, the creator's share, the fee


def test_short_balances_never_go_negative_and_each_signal_is_charged_once(sig_api: Api) -> None:
    _, _, listing = _listed(sig_api)
    users = [_subscriber(sig_api, balance) for balance in (2, 3, 4, 50)]  # 2 pays the month and no signal
    for _, token in users:
        _ok(
            sig_api.user(
                "marketplace_subscribe",
                {"listing_id": listing, "selected_coins": ["BTC", "SOL"]},
                token=token,
            )
        )
    services = sig_api.app.state.services
    signals.run_once(services)
    for _ in range(20):
        sig_api.clock.advance(12 * HOUR)
        with ThreadPoolExecutor(2) as pool:  # two workers race on every step
            list(pool.map(lambda _: signals.run_once(services), range(2)))
    with services.store.read() as conn:
        for (svc_id, _), start in zip(users, (2, 3, 4, 50), strict=True):
            got = conn.execute(
                sa.select(sa.func.count()).where(signal_deliveries.c.svc_id == svc_id)
            ).scalar()
            balance = credits.balance(conn, svc_id)
            assert balance >= 0 and balance == start - 2 - got, (svc_id, start, balance, got)
    assert _ledger_total(sig_api)[0] == 0
    rich = users[-1][0]
    with services.store.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).where(signal_deliveries.c.svc_id == rich)).scalar() > 2


def test_a_worker_dying_mid_delivery_leaves_nothing_and_the_next_run_charges_once(
    sig_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, listing = _listed(sig_api)
    users = [_subscriber(sig_api, 50) for _ in range(3)]
    for _, token in users:
        _ok(
            sig_api.user(
                "marketplace_subscribe",
                {"listing_id": listing, "selected_coins": ["BTC", "SOL"]},
                token=token,
            )
        )
    services = sig_api.app.state.services
    signals.run_once(services)
    real = delivery.notifications.notify_events

    def dies_at_first(calls: dict[str, int]) -> Any:
        def notify(*args: Any, **kwargs: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 1:  # mid-delivery: the subscribers charged and recorded, nobody told yet
                raise SystemExit("worker killed")
            return real(*args, **kwargs)

        return notify

    for _ in range(40):  # step until a signal opens; the worker dies inside its delivery
        sig_api.clock.advance(6 * HOUR)
        monkeypatch.setattr(delivery.notifications, "notify_events", dies_at_first({"n": 0}))
        try:
            signals.run_once(services)
        except SystemExit:
            break
    else:
        pytest.fail("no signal opened")
    monkeypatch.setattr(delivery.notifications, "notify_events", real)
    with services.store.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(signal_deliveries)).scalar() == 0
    assert _ledger_total(sig_api) == (0, 9)  # only the three subscriptions so far
    with ThreadPoolExecutor(2) as pool:  # the restarted worker and a second one
        list(pool.map(lambda _: signals.run_once(services), range(2)))
    with services.store.read() as conn:
        per_user = [
            conn.execute(sa.select(sa.func.count()).where(signal_deliveries.c.svc_id == u)).scalar()
            for u, _ in users
        ]
    assert per_user[0] >= 1 and len(set(per_user)) == 1
    for svc_id, _ in users:
        assert (
            _ok(sig_api.user("account_info", token=dict(users)[svc_id]))["svc_credits"]
            == 50 - 2 - per_user[0]
        )


def test_two_schedulers_charge_each_period_once(sig_api: Api) -> None:
    _, _, listing = _listed(sig_api)
    users = [_subscriber(sig_api, 20) for _ in range(5)]
    for _, token in users:
        _ok(
            sig_api.user(
                "marketplace_subscribe", {"listing_id": listing, "selected_coins": ["BTC"]}, token=token
            )
        )
    services = sig_api.app.state.services
    fee = services.settings.marketplace_fee_pct
    for month in (1, 2):
        sig_api.clock.advance(30 * DAY)
        with ThreadPoolExecutor(2) as pool:
            renewed = list(
                pool.map(
                    lambda _: marketplace.renew_due(services.store, now=sig_api.clock.now(), fee_pct=fee),
                    range(2),
                )
            )
        assert sum(renewed) == 5, (month, renewed)
    for _, token in users:
        assert _ok(sig_api.user("account_info", token=token))["svc_credits"] == 20 - 3 * 2
    assert _ledger_total(sig_api) == (0, 5 * 3 * 3)


def _pair_of(api: Api, owner: str, coin: str) -> tuple[Any, Any]:
    """The watch and strategy the signal worker evaluates for ``owner``'s strategy on ``coin``."""
    services = api.app.state.services
    catalog = market.catalog_of(services)
    with services.store.write() as conn:
        pairs = watches.sync(
            conn,
            catalog,
            signals.market_now_ms(services),
            now=api.clock.now(),
            listed=marketplace.listed_coins_of_all(conn),
        )
    [pair] = [(w, s) for w, s in pairs if (w.svc_id, w.coin) == (owner, coin)]
    return pair


def _record_at_once(api: Api, found: list[recording.Found]) -> list[Any]:
    """Two workers record ``found`` at once: the first holds its transaction open until the second
    has started its own. What each returned (or raised)."""
    services, fee = api.app.state.services, api.app.state.services.settings.marketplace_fee_pct
    first_wrote, outcomes = threading.Event(), [None, None]

    def worker(i: int) -> None:
        try:
            if i == 1:
                first_wrote.wait(10)
            with services.store.write() as conn:
                outcomes[i] = recording.record(conn, found, now=api.clock.now(), fee_pct=fee)
                if i == 0:
                    first_wrote.set()
                    time.sleep(0.5)  # the second's insert or change now waits on this transaction
        except queries.Raced as lost:
            outcomes[i] = lost

    threads = [threading.Thread(target=worker, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return outcomes


def test_two_workers_recording_one_signal_at_once_write_charge_and_tell_it_once(sig_api: Api) -> None:
    owner, _, listing = _listed(sig_api)
    user, token = _subscriber(sig_api, 50)
    _ok(
        sig_api.user("marketplace_subscribe", {"listing_id": listing, "selected_coins": ["BTC"]}, token=token)
    )
    w, s = _pair_of(sig_api, owner, "BTC")
    signal_ms = int(w.evaluated_ms) - HOUR * 1000
    opened = Position(
        signal_ms, "long", 100.0, 110.0, 95.0, "open", fill_ms=signal_ms + HOUR * 1000, entry_price=100.0
    )
    closed = replace(
        opened, status="closed", exit_ms=opened.fill_ms, exit_price=110.0, reason="tp", return_pct=9.8
    )
    first, second = _record_at_once(sig_api, [(w, s, opened)])
    assert first == 1 and (second == 0 or isinstance(second, queries.Raced)), (first, second)
    first, second = _record_at_once(sig_api, [(w, s, closed)])
    assert first == 1 and (second == 0 or isinstance(second, queries.Raced)), (first, second)
    key = recording.signal_key(owner, w.strategy_name, w.version, "BTC", signal_ms)
    services = sig_api.app.state.services
    with services.store.read() as conn:
        assert queries.signal_row(conn, key).status == "closed"
        assert (
            conn.execute(sa.select(sa.func.count()).where(signal_deliveries.c.svc_id == user)).scalar() == 1
        )
        told = conn.execute(
            sa.select(notifications_table.c.event_type, sa.func.count())
            .where(notifications_table.c.svc_id == user)
            .group_by(notifications_table.c.event_type)
        ).all()
    assert dict(told) == {"signal_opened": 1, "signal_closed": 1}
    assert _ok(sig_api.user("account_info", token=token))["svc_credits"] == 50 - 2 - 1
    assert _ledger_total(sig_api) == (0, 3 + 3)  # the subscription and the one signal, each in three rows
