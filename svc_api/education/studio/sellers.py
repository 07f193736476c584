"""Who may teach, and whether they are ready to sell.

Instructor routes need one of the roles :data:`ROLES` (403 otherwise): an approved community leader
holds ``community_leader``, a community admin ``admin``; ``svc admin edu role SVC_ID ROLE`` grants any
of them. Seller readiness is five gates, each ``passed``, ``missing`` (with what it lacks) or
``not_required``:

- ``contract``: the seller contract accepted in an onboarding session;
- ``tax``: legal entity and tax or ID number;
- ``e_document``: the e-document type, for Turkey-based sellers only;
- ``ap_bank``: the bank account (plus SWIFT/BIC and payout currency for international sellers);
- ``identity``: confirmed by an operator (``svc admin edu confirm-identity SVC_ID``).

Submitting a product for review needs ``contract`` and ``identity``; payouts need every gate (the
balance accrues meanwhile). Onboarding sessions bring the contract and the payout profile: one open
at a time (409), none once every gate passes (409).

Example:
    >>> gates(None)["identity"]["state"]
    'missing'
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.accounts import service as accounts
from svc_api.core.errors import ApiError, Conflict, Forbidden, Invalid, NotFound
from svc_api.education.studio import profile as payout_profile
from svc_api.education.studio import queries
from svc_api.education.studio.contract import EduOnboardingSubmit

ROLES = ("community_leader", "admin", "moderator", "leader", "owner")
CONTRACT_VERSION = "2026-11"
ONBOARDING_SECONDS = 24 * 3600
SUBMIT_GATES = ("contract", "identity")


def instructor_role(conn: Connection, svc_id: str) -> str | None:
    """The account's instructor role, or None."""
    granted = queries.role(conn, svc_id)
    if granted is not None:
        return granted
    community = accounts.community_role(conn, svc_id)
    return {"leader": "community_leader", "admin": "admin"}.get(community)


def require_instructor(conn: Connection, svc_id: str) -> str:
    """403 unless the account holds an instructor role; the role."""
    role = instructor_role(conn, svc_id)
    if role is None:
        raise Forbidden(
            "instructor routes need the leader role: become an approved community leader",
            code="not_instructor",
        )
    return role


def grant_role(conn: Connection, svc_id: str, role: str | None, *, now: int) -> None:
    """Grant an instructor role (None takes a granted one back); 400 unknown role, 404 unknown account."""
    if role is not None and role not in ROLES:
        raise Invalid(f"role must be one of {', '.join(ROLES)}")
    accounts.community_role(conn, svc_id)  # 404 for an unknown account
    queries.set_role(conn, svc_id, role, now)


def _gate(passed: bool, lacks: list[str], required: bool = True) -> dict[str, Any]:
    if not required:
        return {"state": "not_required", "lacks": []}
    return {"state": "passed" if passed else "missing", "lacks": [] if passed else lacks}


def gates(row: Row[Any] | None) -> dict[str, dict[str, Any]]:
    """The five gates of a profile row (None: nothing given yet)."""
    get = (lambda name: getattr(row, name)) if row is not None else (lambda name: None)
    country = get("country")
    international = country is not None and country != "TR"
    bank = [
        name
        for name in ("bank_account", *(("swift_bic", "payout_currency") if international else ()))
        if not get(name)
    ]
    return {
        "contract": _gate(
            get("contract_accepted_at") is not None, ["accept the seller contract in an onboarding session"]
        ),
        "tax": _gate(bool(get("legal_entity") and get("tax_id")), ["legal_entity", "tax_id"]),
        "e_document": _gate(
            bool(get("e_document_type")),
            ["e_document_type" if country else "country"],
            required=not international,
        ),
        "ap_bank": _gate(bool(country) and not bank, bank or ["country"]),
        "identity": _gate(get("identity_confirmed_at") is not None, ["an operator confirms your identity"]),
    }


def status(conn: Connection, svc_id: str) -> dict[str, Any]:
    """The seller status route's reply."""
    role = require_instructor(conn, svc_id)
    row = queries.profile(conn, svc_id)
    checked = gates(row)
    return {
        "role": role,
        "gates": checked,
        "ready_to_submit": all(checked[name]["state"] == "passed" for name in SUBMIT_GATES),
        "ready_for_payouts": all(gate["state"] != "missing" for gate in checked.values()),
        "country": row.country if row is not None else None,
    }


def ready_for_payouts(conn: Connection, svc_id: str) -> bool:
    """Whether every gate passes (the payout run pays only such sellers)."""
    return all(gate["state"] != "missing" for gate in gates(queries.profile(conn, svc_id)).values())


def payout_details(conn: Connection, svc_id: str) -> dict[str, Any] | None:
    """The payout profile of a seller, or None when none was given."""
    row = queries.profile(conn, svc_id)
    if row is None or row.country is None:
        return None
    return {name: getattr(row, name) for name in payout_profile.FIELDS}


def require_ready_to_submit(conn: Connection, svc_id: str) -> None:
    """422 naming the gates that block a submission."""
    checked = gates(queries.profile(conn, svc_id))
    blocking = [name for name in SUBMIT_GATES if checked[name]["state"] != "passed"]
    if blocking:
        raise ApiError(
            422,
            "seller_not_ready",
            extra={"message": f"these seller gates must pass first: {', '.join(blocking)}"},
        )


def start_onboarding(conn: Connection, svc_id: str, *, now: int) -> dict[str, Any]:
    """Open an onboarding session (201); 409 while one is open or when every gate passes."""
    require_instructor(conn, svc_id)
    if ready_for_payouts(conn, svc_id):
        raise Conflict("every seller gate already passes", code="onboarding_complete")
    if queries.open_onboarding(conn, svc_id, now) is not None:
        raise Conflict("an onboarding session is already open", code="onboarding_open")
    session_id, token = "ob_" + secrets.token_hex(8), secrets.token_urlsafe(24)
    queries.insert_onboarding(
        conn,
        session_id=session_id,
        svc_id=svc_id,
        token=token,
        state="open",
        created_at=now,
        expires_at=now + ONBOARDING_SECONDS,
    )
    return {
        "session_id": session_id,
        "state": "open",
        "onboarding_url": f"/education/v1/seller/onboarding/{token}",
        "expires_at": now + ONBOARDING_SECONDS,
        "contract_version": CONTRACT_VERSION,
        "profile_fields": list(payout_profile.FIELDS),
    }


def _open_session(conn: Connection, token: str, now: int) -> Row[Any]:
    session = queries.onboarding_by_token(conn, token)
    if session is None:
        raise NotFound("no such onboarding session")
    if session.state != "open" or session.expires_at <= now:
        raise Conflict("this onboarding session is finished or expired", code="session_closed")
    return session


def onboarding_form(conn: Connection, token: str, *, now: int) -> dict[str, Any]:
    """What the hosted onboarding page asks for (404 unknown, 409 finished or expired)."""
    session = _open_session(conn, token, now)
    return {
        "session_id": session.session_id,
        "expires_at": session.expires_at,
        "contract_version": CONTRACT_VERSION,
        "submit": {
            "accept_contract": True,
            "payout_profile": {name: "..." for name in payout_profile.FIELDS},
        },
        "rules": payout_profile.__doc__.split("Example:")[0].strip(),
    }


def complete_onboarding(
    conn: Connection, token: str, form: EduOnboardingSubmit | Mapping[str, Any], *, now: int
) -> dict[str, Any]:
    """The onboarding page's submission ``{accept_contract: true, payout_profile: {...}}`` (its
    model, or the body as sent, then checked by the model: 400 a broken rule): 404 unknown session,
    409 finished or expired."""
    if not isinstance(form, EduOnboardingSubmit):
        form = EduOnboardingSubmit.parse(form)
    checked = form.payout_profile
    session = _open_session(conn, token, now)
    if not queries.complete_onboarding(conn, session.session_id, now):
        raise Conflict("this onboarding session is finished", code="session_closed")
    queries.save_profile(
        conn, session.svc_id, now, contract_accepted_at=now, contract_version=CONTRACT_VERSION, **checked
    )
    return {
        "session_id": session.session_id,
        "state": "completed",
        "gates": gates(queries.profile(conn, session.svc_id)),
    }


def confirm_identity(conn: Connection, svc_id: str, *, now: int) -> None:
    """The operator confirms a seller's identity (404 unknown account)."""
    accounts.community_role(conn, svc_id)
    queries.save_profile(conn, svc_id, now, identity_confirmed_at=now)
