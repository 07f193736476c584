"""Retention of finished jobs: each row deleted in the transaction that queues its objects for
deletion (:mod:`svc_api.core.objectqueue`), so that no row ever points to a missing object.

Example:
    >>> RETENTION_PAGE
    500
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from svc_api.accounts import service as accounts
from svc_api.backtests import queries
from svc_api.backtests.artifacts import job_keys
from svc_api.core.errors import NotFound
from svc_api.core.objectqueue import queue_deletes

DAY = 86_400
RETENTION_PAGE = 500
"""Candidate rows one transaction of a retention pass looks at."""


def expire_results(
    store: Any, days_by_plan: Mapping[str, float], *, now: int, scan: int = 20_000
) -> dict[str, int]:
    """Delete the finished jobs kept longer than their owner's plan allows (``days_by_plan``, the
    plan in force at ``now``; an unknown plan counts as ``free``), each row in the same transaction
    as the queueing of its objects (:mod:`svc_api.core.objectqueue`): the objects go after the row,
    never before. Looks at up to ``scan`` candidates, oldest first; ``{"scanned", "deleted",
    "objects_queued"}``. Running jobs are never touched.

    Example:
        >>> expire_results(store, {"free": 7}, now=10**9)
        {'scanned': 0, 'deleted': 0, 'objects_queued': 0}
    """
    shortest = min(days_by_plan.values())
    free = days_by_plan.get("free", shortest)
    plans: dict[str, float] = {}
    out = {"scanned": 0, "deleted": 0, "objects_queued": 0}
    after: tuple[int, str] | None = None
    # Rows younger than the shortest retention cannot have expired: the scan stops there, and a
    # long-kept plan's rows are passed over by the keyset (they do not block the rows behind them).
    while out["scanned"] < scan:
        with store.write() as conn:
            rows = queries.finished_before(conn, int(now - shortest * DAY), after=after, limit=RETENTION_PAGE)
            for row in rows:
                if row.svc_id not in plans:
                    try:
                        plan = accounts.current_plan(conn, row.svc_id, now=now)
                    except NotFound:
                        plan = "free"
                    plans[row.svc_id] = days_by_plan.get(plan, free)
                kept = row.created_at >= now - plans[row.svc_id] * DAY
                if kept or not queries.delete_finished(conn, row.job_id):
                    continue
                keys = job_keys(row.svc_id, row.job_id, json.loads(row.coins), row.kind)
                queue_deletes(conn, keys, now=now)
                out["deleted"] += 1
                out["objects_queued"] += len(keys)
        out["scanned"] += len(rows)
        if len(rows) < RETENTION_PAGE:
            break
        after = (int(rows[-1].created_at), rows[-1].job_id)
    return out
