"""The batched signal worker survives what a worker meets: killed in the middle of a batch of
writes (the transaction rolls back; the next pass rebuilds its books from the store and writes the
batch once) and restarted with nothing in memory; both end with exactly the positions the backtest
of the watched range gives."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from svc_api.core.clock import ManualClock
from svc_api.signals import batch, recording
from svc_api.signals import service as signals
from tests.api.test_signals import HOUR, T0, creator, replay_equals_backtest

if TYPE_CHECKING:
    from tests.api.conftest import Api


class Killed(Exception):
    """The worker died here."""


def test_a_worker_killed_mid_batch_and_one_restarted_write_every_signal_once(
    sig_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = sig_api.app.state.services
    creator(sig_api, ["BTC", "ETH", "SOL"])
    signals.run_once(services)
    monkeypatch.setattr(batch, "BATCH", 2)  # three watches: two transactions per pass
    real = recording.record
    calls = {"n": 0, "killed": 0}

    def dying(conn: Any, *args: Any, **kwargs: Any) -> int:
        calls["n"] += 1
        if calls["n"] % 7 == 0:  # every seventh batch's write dies with its transaction
            calls["killed"] += 1
            raise Killed
        return real(conn, *args, **kwargs)

    monkeypatch.setattr(recording, "record", dying)
    for hour in range(1, 5 * 24):
        sig_api.clock.advance(HOUR)
        try:
            signals.run_once(services)
        except Killed:
            signals.run_once(services)  # the next pass (in the same process: its books were dropped)
        if hour % 29 == 0:
            services._cache.pop("signals:books", None)  # a restart: nothing of the worker in memory
    assert calls["killed"] >= 3
    monkeypatch.setattr(recording, "record", real)
    coins = [("BTC", "BTCUSDT"), ("ETH", "ETHUSDT"), ("SOL", "SOLUSDT")]
    replay_equals_backtest(sig_api, coins, T0, T0 + 10 * 24 * HOUR)


def test_three_workers_share_the_coins_and_one_killed_is_taken_over(
    make_api: Any, settings: Any, signals_market: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    # leases of two hours, two passes of the hourly clock: a dead worker's coins wait at most that long
    live = settings.replace(data_dir=signals_market, signal_lease_seconds=2 * 3600)
    apis = [make_api(live, clock=ManualClock(T0)) for _ in range(3)]
    for k, api in enumerate(apis):
        api.app.state.services.worker_holder = f"worker-{k}"
    creator(apis[0], ["BTC", "ETH", "SOL", "DOT", "INJ"])
    for api in apis:
        signals.run_once(api.app.state.services)
    spread = Counter()
    for hour in range(1, 73):
        running = apis if hour <= 24 else apis[:2]  # worker-2 is killed after a day: no more passes
        done = []
        for api in apis:
            api.clock.advance(HOUR)
        for k, api in enumerate(running):
            got = signals.run_once(api.app.state.services)["evaluated"]
            spread[k] += got
            done.append(got)
        # every watch once per close, none twice; worker-2's coin (ETH) waits for its lease to run
        # out (two closes), then worker-0 or worker-1 evaluates it from where it was, missing nothing
        assert sum(done) == (4 if 25 <= hour <= 26 else 5), (hour, done)
    assert all(spread[k] for k in range(3))  # the coins were shared by the three
    coins = [
        ("BTC", "BTCUSDT"),
        ("ETH", "ETHUSDT"),
        ("SOL", "SOLUSDT"),
        ("DOT", "DOTUSDT"),
        ("INJ", "INJUSDT"),
    ]
    replay_equals_backtest(apis[0], coins, T0, T0 + 5 * 24 * HOUR)  # worker-1's lease runs out too


COINS5 = [("BTC", "BTCUSDT"), ("ETH", "ETHUSDT"), ("SOL", "SOLUSDT"), ("DOT", "DOTUSDT"), ("INJ", "INJUSDT")]


def _sharded_replay(api: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Five days of hourly passes over five coins split into three shards; every signal row."""
    import sqlalchemy as sa

    from svc_api.signals.tables import signals as signal_table

    monkeypatch.setattr(batch, "SHARDS", 3)
    services = api.app.state.services
    creator(api, [c for c, _ in COINS5])
    signals.run_once(services)
    for _ in range(5 * 24):
        api.clock.advance(HOUR)
        signals.run_once(services)
    books = services.cached("signals:books", float("inf"), dict)
    assert len({key[2] for key in books}) >= 2  # the pass really ran more than one shard at once
    replay_equals_backtest(api, COINS5, T0, T0 + 5 * 24 * HOUR)
    t = signal_table.c
    columns = (t.coin, t.signal_ms, t.side, t.status, t.fill_ms, t.exit_ms, t.exit_price, t.reason)
    with services.store.read() as conn:
        return [tuple(r) for r in conn.execute(sa.select(*columns).order_by(t.coin, t.signal_ms))]


def test_shards_on_threads_give_the_positions_of_the_backtest(
    sig_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from svc_engine.executors import LocalExecutor

    rows = _sharded_replay(sig_api, monkeypatch)
    assert isinstance(batch.executor_of(sig_api.app.state.services), LocalExecutor)
    assert len(rows) > 10


# One store: the Ray side writes to its own SQLite file whatever the store, and the pass's SQL is the
# threaded test's on both stores.
@pytest.mark.ray
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_same_pass_on_a_local_ray_cluster_equals_the_threaded_one(
    make_api: Any, settings: Any, signals_market: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    pytest.importorskip("ray")
    from svc_engine.executors import RayExecutor

    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    threaded = make_api(settings.replace(data_dir=signals_market), clock=ManualClock(T0))
    expected = _sharded_replay(threaded, monkeypatch)
    other = settings.replace(database_url=f"sqlite:///{tmp_path / 'ray.db'}")
    try:
        on_ray = make_api(other.replace(data_dir=signals_market, ray_address="local"), clock=ManualClock(T0))
        executor = batch.executor_of(on_ray.app.state.services)
    except Exception as error:  # a sandbox without shared memory or sockets
        pytest.skip(f"a local Ray runtime cannot start here: {error}")
    assert isinstance(executor, RayExecutor)
    try:
        assert _sharded_replay(on_ray, monkeypatch) == expected
    finally:
        executor.close()
