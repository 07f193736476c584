"""Registration, login, logout and session tokens.

Passwords are hashed with stdlib scrypt and a per-user salt and compared in constant time. Session
tokens are random; only their SHA-256 is stored. Every login records its IP origin (one record per
origin, see :mod:`svc_api.accounts.service`).

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.migrations import migrate
    >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
    >>> with store.write() as conn:
    ...     grant = register(conn, "ana@example.com", "correct horse", ip="127.0.0.1", ttl=3600, now=1000)
    >>> len(grant.svc_id), grant.expires_at
    (6, 4600)
    >>> with store.read() as conn:
    ...     resolve_session(conn, grant.session_token, now=2000) == (grant.svc_id, "free")
    True
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.accounts.plans import effective_plan
from svc_api.accounts.tables import accounts, logins, notification_settings, sessions
from svc_api.core.errors import Conflict, Invalid, Unauthenticated
from svc_api.core.prepared import Prepared

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]{2,}$")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
LOGIN_RETENTION_SECONDS = 180 * 24 * 3600


class SessionInvalid(Exception):
    """The token is missing, malformed, unknown or ended by logout."""


class SessionExpired(SessionInvalid):
    """The token was valid and its lifetime is over."""


@dataclass(frozen=True)
class SessionGrant:
    """What register and login return.

    Example:
        >>> SessionGrant("AB12CD", "tok", 10).to_dict()
        {'svc_id': 'AB12CD', 'session_token': 'tok', 'expires_at': 10}
    """

    svc_id: str
    session_token: str
    expires_at: int

    def to_dict(self) -> dict[str, object]:
        """The reply body of register and login."""
        return {"svc_id": self.svc_id, "session_token": self.session_token, "expires_at": self.expires_at}


def hash_password(password: str, salt: str) -> str:
    """scrypt of ``password`` with ``salt`` (hex in, hex out).

    Example:
        >>> len(hash_password("secret", "00" * 16))
        64
    """
    return hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), **_SCRYPT).hex()


def token_hash(token: str) -> str:
    """The stored form of a session token.

    Example:
        >>> token_hash("abc")[:8]
        'ba7816bf'
    """
    return hashlib.sha256(token.encode()).hexdigest()


def random_code(length: int = 6) -> str:
    """Random uppercase alphanumeric code (svc_id, referral code).

    Example:
        >>> code = random_code()
        >>> len(code), code.isupper() or code.isdigit()
        (6, True)
    """
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def register(
    conn: Connection,
    email: object,
    password: object,
    *,
    ip: str,
    ttl: int,
    platform: str = "api",
    referral_code: object = None,
    now: int | None = None,
) -> SessionGrant:
    """Create an account and open its first session.

    Raises:
        Invalid: malformed e-mail, password not 8-256 characters, unknown referral code.
        Conflict: the e-mail is already registered.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     register(conn, "x", "password1", ip="1.2.3.4", ttl=60)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: email must be a valid e-mail address
    """
    now = int(time.time()) if now is None else now
    email = _email(email)
    password = _password(password)
    if conn.execute(sa.select(accounts.c.svc_id).where(accounts.c.email == email)).first():
        raise Conflict("an account with this email already exists")
    inviter = _inviter(conn, referral_code)
    salt = secrets.token_hex(16)
    svc_id = _unused_code(conn, accounts.c.svc_id, 6)
    conn.execute(
        accounts.insert().values(
            svc_id=svc_id,
            email=email,
            password_hash=hash_password(password, salt),
            password_salt=salt,
            referral_code=_unused_code(conn, accounts.c.referral_code, 8),
            inviter_id=inviter,
            created_at=now,
        )
    )
    conn.execute(notification_settings.insert().values(svc_id=svc_id))
    return _open_session(conn, svc_id, ip=ip, platform=platform, ttl=ttl, now=now)


def login(
    conn: Connection,
    email: object,
    password: object,
    *,
    ip: str,
    ttl: int,
    platform: str = "api",
    now: int | None = None,
) -> SessionGrant:
    """Check e-mail and password and open a session.

    Raises:
        Unauthenticated: unknown e-mail or wrong password (one message for both).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     login(conn, "nobody@example.com", "password1", ip="1.2.3.4", ttl=60)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Unauthenticated: invalid email or password
    """
    now = int(time.time()) if now is None else now
    if not isinstance(email, str) or not isinstance(password, str):
        raise Invalid("email and password are required strings")
    row = conn.execute(
        sa.select(accounts.c.svc_id, accounts.c.password_hash, accounts.c.password_salt).where(
            accounts.c.email == email.strip().lower()
        )
    ).first()
    # Hash even for an unknown e-mail so that timing does not reveal which e-mails exist.
    salt = row.password_salt if row else "00" * 16
    candidate = hash_password(password, salt)
    if row is None or not hmac.compare_digest(candidate, row.password_hash):
        raise Unauthenticated("invalid email or password")
    return _open_session(conn, row.svc_id, ip=ip, platform=platform, ttl=ttl, now=now)


def logout(conn: Connection, token: str) -> bool:
    """End the session of ``token``; True when it existed.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     logout(conn, "unknown")
        False
    """
    result = conn.execute(sessions.delete().where(sessions.c.token_hash == token_hash(token)))
    return result.rowcount > 0


# Built once: it runs on every request with a session token.
_SESSION_LOOKUP = Prepared(
    sa.select(
        sessions.c.svc_id,
        sessions.c.expires_at,
        accounts.c.plan,
        accounts.c.license_expires_at,
        accounts.c.demo_expires_at,
    )
    .join(accounts, accounts.c.svc_id == sessions.c.svc_id)
    .where(sessions.c.token_hash == sa.bindparam("token_hash"))
)


def resolve_session(conn: Connection, token: str, *, now: int | None = None) -> tuple[str, str]:
    """The svc_id owning a live session token, and the plan in force.

    Raises:
        SessionExpired: the token's lifetime is over.
        SessionInvalid: the token is unknown or was ended by logout.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     resolve_session(conn, "nope")
        Traceback (most recent call last):
        ...
        svc_api.accounts.identity.SessionInvalid: unknown session token
    """
    now = int(time.time()) if now is None else now
    row = _SESSION_LOOKUP.first(conn, {"token_hash": token_hash(token)})
    if row is None:
        raise SessionInvalid("unknown session token")
    if row.expires_at <= now:
        raise SessionExpired("session token expired")
    plan = effective_plan(
        row.plan, license_expires_at=row.license_expires_at, demo_expires_at=row.demo_expires_at, now=now
    )
    return str(row.svc_id), plan


def _open_session(
    conn: Connection, svc_id: str, *, ip: str, platform: str, ttl: int, now: int
) -> SessionGrant:
    token = secrets.token_urlsafe(32)
    conn.execute(
        sessions.insert().values(
            token_hash=token_hash(token), svc_id=svc_id, created_at=now, expires_at=now + ttl
        )
    )
    # Expired sessions of this user are kept one TTL so that they still answer "token_expired".
    conn.execute(sessions.delete().where(sessions.c.svc_id == svc_id, sessions.c.expires_at < now - ttl))
    _record_login(conn, svc_id, ip=ip, platform=platform, now=now)
    return SessionGrant(svc_id, token, now + ttl)


def login_id(svc_id: str, ip: str) -> str:
    """Stable identifier of one IP origin of one account.

    Example:
        >>> login_id("AB12CD", "10.0.0.1") == login_id("AB12CD", "10.0.0.1")
        True
    """
    return hashlib.sha256(f"{svc_id}|{ip}".encode()).hexdigest()[:24]


def _record_login(conn: Connection, svc_id: str, *, ip: str, platform: str, now: int) -> None:
    lid = login_id(svc_id, ip)
    updated = conn.execute(
        logins.update().where(logins.c.login_id == lid).values(login_at=now, platform=platform[:32])
    )
    if updated.rowcount == 0:
        conn.execute(
            logins.insert().values(
                login_id=lid, svc_id=svc_id, ip_address=ip[:64], platform=platform[:32], login_at=now
            )
        )
    conn.execute(
        logins.delete().where(logins.c.svc_id == svc_id, logins.c.login_at < now - LOGIN_RETENTION_SECONDS)
    )


def _email(value: object) -> str:
    if not isinstance(value, str) or not _EMAIL.match(value.strip()) or len(value) > 320:
        raise Invalid("email must be a valid e-mail address")
    return value.strip().lower()


def _password(value: object) -> str:
    if not isinstance(value, str) or not 8 <= len(value) <= 256:
        raise Invalid("password must be a string of 8-256 characters")
    return value


def _inviter(conn: Connection, code: object) -> str | None:
    if code is None or code == "":
        return None
    if not isinstance(code, str):
        raise Invalid("referral_code must be a string")
    row = conn.execute(
        sa.select(accounts.c.svc_id).where(accounts.c.referral_code == code.strip().upper())
    ).first()
    if row is None:
        raise Invalid("unknown referral_code")
    return str(row.svc_id)


def _unused_code(conn: Connection, column: sa.Column, length: int) -> str:
    for _ in range(20):
        code = random_code(length)
        if conn.execute(sa.select(column).where(column == code)).first() is None:
            return code
    raise Conflict("could not allocate a unique identifier; retry")
