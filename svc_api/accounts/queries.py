"""Every SQL statement of the accounts domain (identity included), one small function each. They join
the caller's transaction and hold no rules (hashing, plans in force and limits are the service's).
The example runs each of them.

Example:
    >>> with store.write() as conn:
    ...     insert_account(conn, svc_id="AB12CD", email="a@example.com", password_hash="h", password_salt="s",
    ...                    referral_code="REF12345", created_at=1)
    ...     svc_id_of_email(conn, "a@example.com"), svc_id_of_referral(conn, "REF12345")
    ...     code_taken(conn, "svc_id", "AB12CD"), code_taken(conn, "referral_code", "X")
    ...     credentials(conn, "b@example.com"), credentials(conn, "a@example.com").svc_id
    ...     set_plan(conn, "AB12CD", "pro", license_expires_at=99)
    ...     insert_plan_grant(conn, svc_id="AB12CD", plan="pro", days=1, demo=False, expires_at=99,
    ...                       source="test", created_at=1)
    ...     tuple(plan_columns(conn, "AB12CD")), account_row(conn, "AB12CD").email
    ...     account_with_switches(conn, "AB12CD").switch_mail
    ...     set_switches(conn, "AB12CD", {"mail": False}); switches(conn, "AB12CD").mail
    ...     insert_session(conn, token_hash="t1", svc_id="AB12CD", now=1, expires_at=5)
    ...     session_with_plan(conn, "t1").expires_at, delete_sessions_before(conn, "AB12CD", 6)
    ...     delete_session(conn, "t1")
    ...     record_login(conn, login_id="L1", svc_id="AB12CD", ip="::1", platform="api", now=7, keep_after=0)
    ...     [r.login_id for r in logins_after(conn, "AB12CD", limit=5, after=None)]
    ...     lock_account(conn, "AB12CD"), lock_account(conn, "NOPE00"), tuple(inviter_link(conn, "AB12CD"))
    ...     set_inviter_if_unset(conn, "AB12CD", "ZZ99ZZ"), set_inviter_if_unset(conn, "AB12CD", "YY88YY")
    ...     [tuple(r)[:2] for r in referees(conn, "ZZ99ZZ")]
    ('AB12CD', 'AB12CD')
    (True, False)
    (None, 'AB12CD')
    (('pro', 99, 0), 'a@example.com')
    True
    False
    (5, None)
    False
    ['L1']
    (True, False, (None, 1))
    (True, False)
    [('AB12CD', 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.accounts.tables import (
    NOTIFICATION_CHANNELS,
    accounts,
    identities,
    logins,
    notification_settings,
    plan_grants,
    sessions,
)
from svc_api.core.bulk import key_filters
from svc_api.core.prepared import Prepared
from svc_api.core.upsert import insert_new, inserted

_a = accounts.c

# ---- accounts -------------------------------------------------------------------------------------


def svc_id_of_email(conn: Connection, email: str) -> str | None:
    """The account registered with ``email`` (already normalised), or None."""
    return conn.execute(sa.select(_a.svc_id).where(_a.email == email)).scalar()


def credentials(conn: Connection, email: str) -> Row[Any] | None:
    """``(svc_id, password_hash, password_salt)`` of the account of ``email``, or None."""
    query = sa.select(_a.svc_id, _a.password_hash, _a.password_salt).where(_a.email == email)
    return conn.execute(query).first()


def svc_id_of_referral(conn: Connection, code: str) -> str | None:
    """The account whose referral code is ``code``, or None."""
    return conn.execute(sa.select(_a.svc_id).where(_a.referral_code == code)).scalar()


def code_taken(conn: Connection, column: str, code: str) -> bool:
    """True when an account already holds ``code`` in ``column`` (``svc_id`` or ``referral_code``)."""
    col = _a[column]
    return conn.execute(sa.select(col).where(col == code)).first() is not None


def insert_account(conn: Connection, **values: Any) -> None:
    """Store a new account and its notification switches (all on)."""
    conn.execute(accounts.insert().values(**values))
    conn.execute(notification_settings.insert().values(svc_id=values["svc_id"]))


def insert_account_if_missing(conn: Connection, **values: Any) -> None:
    """Insert an account row unless its ``svc_id`` exists (concurrent callers: one row, no error)."""
    conn.execute(insert_new(conn, accounts, ["svc_id"]).values(**values))


def account_row(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The whole account row, or None."""
    return conn.execute(sa.select(accounts).where(_a.svc_id == svc_id)).first()


def set_plan(conn: Connection, svc_id: str, plan: str, **expiry: int) -> None:
    """Set the plan and its expiry column (``license_expires_at`` or ``demo_expires_at``)."""
    conn.execute(accounts.update().where(_a.svc_id == svc_id).values(plan=plan, **expiry))


def insert_plan_grant(conn: Connection, **values: Any) -> None:
    """Record one plan grant."""
    conn.execute(plan_grants.insert().values(**values))


_PLAN = sa.select(_a.plan, _a.license_expires_at, _a.demo_expires_at).where(
    _a.svc_id == sa.bindparam("svc_id")
)


def plan_columns(conn: Connection, svc_id: str) -> Row[Any] | None:
    """``(plan, license_expires_at, demo_expires_at)`` of ``svc_id``, or None."""
    return conn.execute(_PLAN, {"svc_id": svc_id}).first()


def plan_columns_of(conn: Connection, svc_ids: Sequence[str]) -> dict[str, Row[Any]]:
    """:func:`plan_columns` of many accounts, a round trip per chunk of ids; unknown ids are absent."""
    cols = (_a.svc_id, _a.plan, _a.license_expires_at, _a.demo_expires_at)
    out: dict[str, Row[Any]] = {}
    for among in key_filters(conn, _a.svc_id, svc_ids):
        out.update((r.svc_id, r) for r in conn.execute(sa.select(*cols).where(among)))
    return out


_WITH_SWITCHES = accounts.outerjoin(notification_settings, notification_settings.c.svc_id == _a.svc_id)
# Built once: account_info is among the most frequent reads. The channel switches come in the same
# round trip (outer join: no row means every channel on); their columns are all NOT NULL, so a NULL
# ``switch_*`` value can only mean the row is absent.
_ACCOUNT = Prepared(
    sa.select(
        _a.svc_id,
        _a.plan,
        _a.license_expires_at,
        _a.demo_expires_at,
        _a.credits,
        _a.community_role,
        _a.exchange_linked,
        _a.messenger_linked,
        _a.identity_linked,
        *(notification_settings.c[name].label(f"switch_{name}") for name in NOTIFICATION_CHANNELS),
    )
    .select_from(_WITH_SWITCHES)
    .where(_a.svc_id == sa.bindparam("svc_id"))
)


def account_with_switches(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The columns of the Account resource and ``switch_<channel>`` (None: no settings row); None for
    an unknown account."""
    return _ACCOUNT.first(conn, {"svc_id": svc_id})


def lock_account(conn: Connection, svc_id: str) -> bool:
    """Lock the account row until the transaction ends (``FOR UPDATE`` on PostgreSQL; SQLite's write
    transaction holds the database lock already); False when there is no such account."""
    query = sa.select(_a.svc_id).where(_a.svc_id == svc_id).with_for_update()
    return conn.execute(query).first() is not None


# ---- inviter and referees -------------------------------------------------------------------------


def inviter_link(conn: Connection, svc_id: str) -> Row[Any] | None:
    """``(inviter_id, created_at)`` of ``svc_id``, or None."""
    return conn.execute(sa.select(_a.inviter_id, _a.created_at).where(_a.svc_id == svc_id)).first()


def set_inviter_if_unset(conn: Connection, svc_id: str, inviter_id: str) -> bool:
    """Set the inviter of ``svc_id`` unless one is set: one conditional ``UPDATE``, so of racing
    callers exactly one gets True."""
    unset = sa.and_(_a.svc_id == svc_id, _a.inviter_id.is_(None))
    update = accounts.update().where(unset).values(inviter_id=inviter_id)
    return conn.execute(update).rowcount == 1


def referees(conn: Connection, inviter_id: str) -> list[Row[Any]]:
    """``(svc_id, created_at, plan, license_expires_at, demo_expires_at)`` of the accounts invited by
    ``inviter_id``, newest first."""
    query = (
        sa.select(_a.svc_id, _a.created_at, _a.plan, _a.license_expires_at, _a.demo_expires_at)
        .where(_a.inviter_id == inviter_id)
        .order_by(_a.created_at.desc(), _a.svc_id)
    )
    return list(conn.execute(query))


# ---- notification switches ------------------------------------------------------------------------

_PREFERENCES = sa.select(notification_settings).where(
    notification_settings.c.svc_id == sa.bindparam("svc_id")
)


def switches(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The notification settings row of ``svc_id``, or None."""
    return conn.execute(_PREFERENCES, {"svc_id": svc_id}).first()


def set_switches(conn: Connection, svc_id: str, changes: dict[str, bool]) -> None:
    """Write channel switches, creating the settings row when it is missing."""
    table = notification_settings
    updated = conn.execute(table.update().where(table.c.svc_id == svc_id).values(**changes))
    if updated.rowcount == 0:
        conn.execute(table.insert().values(svc_id=svc_id, **changes))


def delivery_rows(conn: Connection, svc_ids: list[str]) -> list[Row[Any]]:
    """``svc_id``, ``email`` and the channel switches (None: no settings row) of many accounts."""
    table = notification_settings
    query = sa.select(
        _a.svc_id, _a.email, *(table.c[n].label(f"switch_{n}") for n in NOTIFICATION_CHANNELS)
    ).select_from(accounts.outerjoin(table, table.c.svc_id == _a.svc_id))
    return [r for among in key_filters(conn, _a.svc_id, svc_ids) for r in conn.execute(query.where(among))]


def account_ids_after(conn: Connection, after: str | None, limit: int) -> list[str]:
    """Account ids in order after ``after``, the platform's own (``_``-prefixed) left out."""
    query = (
        sa.select(_a.svc_id)
        .where(~_a.svc_id.startswith("_", autoescape=True))
        .order_by(_a.svc_id)
        .limit(limit)
    )
    if after is not None:
        query = query.where(_a.svc_id > after)
    return [str(r) for r in conn.execute(query).scalars()]


def set_account_columns(conn: Connection, svc_id: str, **values: Any) -> bool:
    """Change columns of one account; False when there is no such account."""
    return conn.execute(accounts.update().where(_a.svc_id == svc_id).values(**values)).rowcount == 1


# ---- sessions -------------------------------------------------------------------------------------


def insert_session(conn: Connection, *, token_hash: str, svc_id: str, now: int, expires_at: int) -> None:
    """Store a session by the hash of its token."""
    values = {"token_hash": token_hash, "svc_id": svc_id, "created_at": now, "expires_at": expires_at}
    conn.execute(sessions.insert().values(**values))


def delete_sessions_before(conn: Connection, svc_id: str, expired_before: int) -> None:
    """Forget the sessions of ``svc_id`` that expired before ``expired_before``."""
    c = sessions.c
    conn.execute(sessions.delete().where(c.svc_id == svc_id, c.expires_at < expired_before))


def delete_session(conn: Connection, token_hash: str) -> bool:
    """End one session; True when it existed."""
    return conn.execute(sessions.delete().where(sessions.c.token_hash == token_hash)).rowcount > 0


# Built once: it runs on every request with a session token.
_SESSION_LOOKUP = Prepared(
    sa.select(
        sessions.c.svc_id,
        sessions.c.expires_at,
        _a.plan,
        _a.license_expires_at,
        _a.demo_expires_at,
    )
    .join(accounts, _a.svc_id == sessions.c.svc_id)
    .where(sessions.c.token_hash == sa.bindparam("token_hash"))
)


def session_with_plan(conn: Connection, token_hash: str) -> Row[Any] | None:
    """Owner, expiry and the owner's plan columns of a stored session, or None."""
    return _SESSION_LOOKUP.first(conn, {"token_hash": token_hash})


# ---- logins ---------------------------------------------------------------------------------------


def record_login(
    conn: Connection, *, login_id: str, svc_id: str, ip: str, platform: str, now: int, keep_after: int
) -> None:
    """Update (or create) the record of one IP origin, and forget the origins not seen since
    ``keep_after``."""
    c = logins.c
    seen = logins.update().where(c.login_id == login_id).values(login_at=now, platform=platform)
    updated = conn.execute(seen)
    if updated.rowcount == 0:
        conn.execute(
            logins.insert().values(
                login_id=login_id, svc_id=svc_id, ip_address=ip, platform=platform, login_at=now
            )
        )
    conn.execute(logins.delete().where(c.svc_id == svc_id, c.login_at < keep_after))


def logins_after(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """Up to ``limit`` login records of ``svc_id``, newest first, after ``(login_at, login_id)``."""
    c = logins.c
    query = sa.select(logins).where(c.svc_id == svc_id)
    if after is not None:
        at, lid = after
        query = query.where(sa.or_(c.login_at < at, sa.and_(c.login_at == at, c.login_id > lid)))
    return list(conn.execute(query.order_by(c.login_at.desc(), c.login_id).limit(limit)))


def identity_owner(conn: Connection, issuer: str, subject: str) -> str | None:
    """The account an identity is linked to."""
    i = identities.c
    query = sa.select(i.svc_id).where(i.issuer == issuer, i.subject == subject)
    return conn.execute(query).scalar()


def identity_of(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The identity linked to an account."""
    return conn.execute(sa.select(identities).where(identities.c.svc_id == svc_id)).first()


def link_identity(conn: Connection, **values: Any) -> bool:
    """Link an identity; False when the identity or the account has one already (a race lost)."""
    return inserted(conn, identities, values)
