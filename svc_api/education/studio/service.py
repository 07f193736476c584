"""The studio's rules, as other education domains and the routes see them: instructor roles and
seller readiness (:mod:`.sellers`), the payout profile (:mod:`.profile`).

Example:
    >>> "community_leader" in ROLES
    True
"""

from __future__ import annotations

from svc_api.education.studio.products import decide
from svc_api.education.studio.products import pending as pending_submissions
from svc_api.education.studio.sellers import (
    ROLES,
    complete_onboarding,
    confirm_identity,
    grant_role,
    payout_details,
    ready_for_payouts,
    require_instructor,
    require_ready_to_submit,
    start_onboarding,
    status,
)

__all__ = [
    "ROLES",
    "complete_onboarding",
    "confirm_identity",
    "decide",
    "grant_role",
    "payout_details",
    "pending_submissions",
    "ready_for_payouts",
    "require_instructor",
    "require_ready_to_submit",
    "start_onboarding",
    "status",
]
