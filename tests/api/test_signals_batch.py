"""The batched signal worker survives what a worker meets: killed in the middle of a batch of
writes (the transaction rolls back; the next pass rebuilds its books from the store and writes the
batch once) and restarted with nothing in memory; both end with exactly the positions the backtest
of the watched range gives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from svc_api.signals import batch
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
    real = signals._record
    calls = {"n": 0, "killed": 0}

    def dying(conn: Any, *args: Any, **kwargs: Any) -> int:
        calls["n"] += 1
        if calls["n"] % 7 == 0:  # every seventh write dies with its transaction
            calls["killed"] += 1
            raise Killed
        return real(conn, *args, **kwargs)

    monkeypatch.setattr(signals, "_record", dying)
    for hour in range(1, 5 * 24):
        sig_api.clock.advance(HOUR)
        try:
            signals.run_once(services)
        except Killed:
            signals.run_once(services)  # the next pass (in the same process: its books were dropped)
        if hour % 29 == 0:
            services._cache.pop("signals:books", None)  # a restart: nothing of the worker in memory
    assert calls["killed"] >= 3
    monkeypatch.setattr(signals, "_record", real)
    coins = [("BTC", "BTCUSDT"), ("ETH", "ETHUSDT"), ("SOL", "SOLUSDT")]
    replay_equals_backtest(sig_api, coins, T0, T0 + 10 * 24 * HOUR)
