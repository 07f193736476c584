"""What the service keeps and for how long, and one pass that removes what expired.

Kept (docs/api.md, "Retention"):

- **backtest results**: a finished job (its row and its objects under ``backtests/<svc_id>/<job_id>/``)
  for ``BACKTEST_RETENTION_DAYS`` after its launch, by the plan in force at the pass (default free 7,
  starter and plus 30, pro 90, investor 365 days); a running job is never touched;
- **mail files** of the embedded default (``<var>/mail/*.eml``) for ``MAIL_RETENTION_DAYS`` (14);
- **uploads left incomplete**: aborted by the uploads worker once their 24-hour lease runs out, their
  parts removed from the store (:mod:`svc_api.education.uploads.processing`); not repeated here.

The order of a deletion: the store row first, its object keys queued in the same transaction, the
objects after the commit (:mod:`svc_api.core.objectqueue`). No reader ever finds a row whose object is
gone; a crash between the two leaves queued keys that the next pass deletes.

Example:
    >>> from svc_api.settings import Settings
    >>> policy = Policy.from_settings(Settings(database_url="sqlite://", secret_key=b"k" * 32))
    >>> policy.backtest_days["free"], policy.backtest_days["pro"], policy.mail_days
    (7.0, 90.0, 14.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from svc_api.accounts import service as accounts
from svc_api.backtests import service as backtests
from svc_api.core.objectqueue import drain, pending
from svc_api.core.objectstore import ObjectStore, from_settings
from svc_api.notifications import service as notifications


@dataclass(frozen=True, slots=True)
class Policy:
    """Days each kind of artefact is kept."""

    backtest_days: dict[str, float]
    mail_days: float

    @classmethod
    def from_settings(cls, settings: Any) -> Policy:
        """The policy of ``settings``; a plan of the settings that accounts does not define, or a
        plan without a retention, is a ``ValueError`` (the worker then does not start)."""
        days = dict(settings.backtest_retention_days)
        unknown, missing = set(days) - set(accounts.PLANS), set(accounts.PLANS) - set(days)
        if unknown or missing:
            raise ValueError(
                f"BACKTEST_RETENTION_DAYS must give every plan of {', '.join(accounts.PLANS)}: "
                f"unknown {sorted(unknown)}, missing {sorted(missing)}"
            )
        return cls(days, float(settings.mail_retention_days))


def run_once(services: Any, policy: Policy, objects: ObjectStore | None = None) -> dict[str, int]:
    """One retention pass at the service clock's ``now``: expired backtests (rows, then their
    objects), then the mail files; the counts.

    The queue is drained even when nothing expired in this pass, so that a pass killed after its
    commit is finished by the next.
    """
    now = int(services.clock.now())
    objects = objects if objects is not None else from_settings(services.settings)
    expired = backtests.expire_results(services.store, policy.backtest_days, now=now)
    removed = drain(services.store, objects)
    mail = notifications.expire_mail(services.settings, days=policy.mail_days, now=now)
    return {
        "backtests_deleted": expired["deleted"],
        "backtests_scanned": expired["scanned"],
        "objects_deleted": removed,
        "objects_pending": pending(services.store),
        "mail_files_deleted": mail,
    }
