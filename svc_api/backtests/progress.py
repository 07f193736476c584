"""A running job's progress: the executor's events folded into ``progress_pct`` and ``coin_progress``.

Example:
    >>> initial_coin_progress(["BTCUSDT"])
    {'BTCUSDT': {'status': 'running', 'progress_pct': 0.0}}
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from svc_api.backtests import queries
from svc_api.backtests.execution import Work
from svc_api.core import pubsub
from svc_api.core.clock import Clock, WallClock

logger = logging.getLogger("svc_api.backtests")

#: Share of a ``run``/``portfolio`` job's progress given to evaluating chunks; the simulation after
#: them is the rest.
EVALUATE_SHARE = 90.0


def initial_coin_progress(symbols: list[str]) -> dict[str, dict[str, Any]]:
    """Every coin ``running`` at 0 %; see the module example."""
    return {s: {"status": "running", "progress_pct": 0.0} for s in symbols}


class Progress:
    """Turns the executor's progress events into ``progress_pct`` and ``coin_progress`` on the row,
    written at most every ``interval`` seconds (and always for the last event).

    Example:
        >>> p = Progress(None, Work("j", "AB12CD", "full_range", None, ["A", "B"], None, "1h"), 0.0)
        >>> p.apply({"done": 1, "total": 2, "item": "A", "status": "completed", "pct": 50.0})
        >>> p.pct, p.coins["A"], p.coins["B"]
        (50.0, {'status': 'completed', 'progress_pct': 100.0}, {'status': 'running', 'progress_pct': 0.0})
    """

    def __init__(self, store: Any, work: Work, interval: float, *, clock: Clock | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or WallClock()
        self.work = work
        self.interval = interval
        self.pct = 0.0
        self.coins = initial_coin_progress(work.symbols) if work.coins_total > 1 else None
        self._written = 0.0

    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one event into the state."""
        share = 100.0 if self.work.kind == "full_range" else EVALUATE_SHARE
        self.pct = round(share * float(event["pct"]) / 100.0, 3)
        if self.coins is not None and event.get("item") in self.coins:
            self.coins[event["item"]] = {"status": event["status"], "progress_pct": 100.0}

    def __call__(self, event: dict[str, Any]) -> None:
        self.apply(event)
        now = time.monotonic()
        if now - self._written >= self.interval or event.get("done") == event.get("total"):
            self._written = now
            self.write()

    def write(self) -> None:
        """Store the current state on the row (a lost write is only a stale progress figure)."""
        values: dict[str, Any] = {"progress_pct": self.pct, "heartbeat_at": self.clock.seconds()}
        if self.coins is not None:
            values["coin_progress"] = json.dumps(self.coins)
        try:
            with self.store.write() as conn:
                queries.update_running(conn, self.work.job_id, values)
        except Exception:
            logger.warning("progress of %s not written", self.work.job_id, exc_info=True)
        event = {
            "channel": "jobs",
            "event": "progress",
            "job_id": self.work.job_id,
            "status": "running",
            "progress_pct": self.pct,
        }
        if self.coins is not None:
            event["coin_progress"] = self.coins
        pubsub.publish(self.store, pubsub.user_topic(self.work.svc_id), event)

    def final_coins(self) -> dict[str, dict[str, Any]] | None:
        """The coin progress of a completed job: coins never reported count as completed.

        Example:
            >>> Progress(None, Work("j", "AB12CD", "full_range", None, ["A", "B"], None, "1h"), 0.0
            ...          ).final_coins()["A"]
            {'status': 'completed', 'progress_pct': 0.0}
        """
        if self.coins is None:
            return None
        return {
            c: v if v["status"] != "running" else {**v, "status": "completed"} for c, v in self.coins.items()
        }
