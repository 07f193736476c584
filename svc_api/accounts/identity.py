"""Registration, login, logout and session tokens.

Passwords are hashed with stdlib scrypt and a per-user salt and compared in constant time. Session
tokens are random; only their SHA-256 is stored. Every login records its IP origin (one record per
origin, see :mod:`svc_api.accounts.service`).

Example:
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
import secrets
from dataclasses import dataclass

from sqlalchemy.engine import Connection

from svc_api.accounts import queries
from svc_api.accounts.plans import effective_plan
from svc_api.core.errors import Conflict, Invalid, Unauthenticated
from svc_api.core.fields import email_address, text

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
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
    now: int,
) -> SessionGrant:
    """Create an account and open its first session.

    Raises:
        Invalid: malformed e-mail, password not 8-256 characters, unknown referral code.
        Conflict: the e-mail is already registered.

    Example:
        >>> with store.write() as conn:
        ...     register(conn, "x", "password1", ip="1.2.3.4", ttl=60, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: email must be a valid e-mail address
    """
    email = email_address(email, "email")
    password = text(password, "password", lo=8, hi=256) or ""
    if queries.svc_id_of_email(conn, email) is not None:
        raise Conflict("an account with this email already exists")
    inviter = _inviter(conn, referral_code)
    salt = secrets.token_hex(16)
    svc_id = _unused_code(conn, "svc_id", 6)
    queries.insert_account(
        conn,
        svc_id=svc_id,
        email=email,
        password_hash=hash_password(password, salt),
        password_salt=salt,
        referral_code=_unused_code(conn, "referral_code", 8),
        inviter_id=inviter,
        created_at=now,
    )
    return _open_session(conn, svc_id, ip=ip, platform=platform, ttl=ttl, now=now)


CHAT_EMAIL_DOMAIN = "messenger.invalid"
"""The domain of the placeholder e-mail of an account a messenger chat created (no mail goes there)."""


def register_chat_account(conn: Connection, *, now: int) -> str:
    """Create an account for a messenger chat that has none: no password (it logs in to the app with
    a one-time code the bot gives), a placeholder e-mail, the ``mail`` channel off. Its ``svc_id``.

    Example:
        >>> with store.write() as conn:
        ...     sid = register_chat_account(conn, now=5)
        ...     queries.svc_id_of_email(conn, f"chat-{sid.lower()}@messenger.invalid") == sid
        True
    """
    svc_id = _unused_code(conn, "svc_id", 6)
    queries.insert_account(
        conn,
        svc_id=svc_id,
        email=f"chat-{svc_id.lower()}@{CHAT_EMAIL_DOMAIN}",
        password_hash="!",  # no password hashes to "!": a password login never matches
        password_salt="!",
        referral_code=_unused_code(conn, "referral_code", 8),
        inviter_id=None,
        created_at=now,
    )
    return svc_id


def login(
    conn: Connection,
    email: object,
    password: object,
    *,
    ip: str,
    ttl: int,
    platform: str = "api",
    now: int,
) -> SessionGrant:
    """Check e-mail and password and open a session.

    Raises:
        Unauthenticated: unknown e-mail or wrong password (one message for both).

    Example:
        >>> with store.write() as conn:
        ...     login(conn, "nobody@example.com", "password1", ip="1.2.3.4", ttl=60, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Unauthenticated: invalid email or password
    """
    if not isinstance(email, str) or not isinstance(password, str):
        raise Invalid("email and password are required strings")
    row = queries.credentials(conn, email.strip().lower())
    # Hash even for an unknown e-mail so that timing does not reveal which e-mails exist.
    salt = row.password_salt if row else "00" * 16
    candidate = hash_password(password, salt)
    if row is None or not hmac.compare_digest(candidate, row.password_hash):
        raise Unauthenticated("invalid email or password")
    return _open_session(conn, row.svc_id, ip=ip, platform=platform, ttl=ttl, now=now)


def logout(conn: Connection, token: str) -> bool:
    """End the session of ``token``; True when it existed.

    Example:
        >>> with store.write() as conn:
        ...     logout(conn, "unknown")
        False
    """
    return queries.delete_session(conn, token_hash(token))


def resolve_session(conn: Connection, token: str, *, now: int) -> tuple[str, str]:
    """The svc_id owning a live session token, and the plan in force.

    Raises:
        SessionExpired: the token's lifetime is over.
        SessionInvalid: the token is unknown or was ended by logout.

    Example:
        >>> with store.read() as conn:
        ...     resolve_session(conn, "nope", now=0)
        Traceback (most recent call last):
        ...
        svc_api.accounts.identity.SessionInvalid: unknown session token
    """
    row = queries.session_with_plan(conn, token_hash(token))
    if row is None:
        raise SessionInvalid("unknown session token")
    if row.expires_at <= now:
        raise SessionExpired("session token expired")
    plan = effective_plan(
        row.plan, license_expires_at=row.license_expires_at, demo_expires_at=row.demo_expires_at, now=now
    )
    return str(row.svc_id), plan


def open_session(
    conn: Connection, svc_id: str, *, ip: str, platform: str, ttl: int, now: int
) -> SessionGrant:
    """A session for an account that proved who it is another way (an exchange key, an identity
    provider): recorded in the login history like a password login.

    Example:
        >>> with store.write() as conn:
        ...     sid = register(conn, "s@example.com", "password1", ip="::1", ttl=60, now=1).svc_id
        ...     open_session(conn, sid, ip="::1", platform="api", ttl=60, now=2).expires_at
        62
    """
    return _open_session(conn, svc_id, ip=ip, platform=platform, ttl=ttl, now=now)


def _open_session(
    conn: Connection, svc_id: str, *, ip: str, platform: str, ttl: int, now: int
) -> SessionGrant:
    token = secrets.token_urlsafe(32)
    queries.insert_session(conn, token_hash=token_hash(token), svc_id=svc_id, now=now, expires_at=now + ttl)
    # Expired sessions of this user are kept one TTL so that they still answer "token_expired".
    queries.delete_sessions_before(conn, svc_id, now - ttl)
    queries.record_login(
        conn,
        login_id=login_id(svc_id, ip),
        svc_id=svc_id,
        ip=ip[:64],
        platform=platform[:32],
        now=now,
        keep_after=now - LOGIN_RETENTION_SECONDS,
    )
    return SessionGrant(svc_id, token, now + ttl)


def login_id(svc_id: str, ip: str) -> str:
    """Stable identifier of one IP origin of one account.

    Example:
        >>> login_id("AB12CD", "10.0.0.1") == login_id("AB12CD", "10.0.0.1")
        True
    """
    return hashlib.sha256(f"{svc_id}|{ip}".encode()).hexdigest()[:24]


def _inviter(conn: Connection, code: object) -> str | None:
    if code is None or code == "":
        return None
    if not isinstance(code, str):
        raise Invalid("referral_code must be a string")
    inviter = queries.svc_id_of_referral(conn, code.strip().upper())
    if inviter is None:
        raise Invalid("unknown referral_code")
    return str(inviter)


def _unused_code(conn: Connection, column: str, length: int) -> str:
    for _ in range(20):
        code = random_code(length)
        if not queries.code_taken(conn, column, code):
            return code
    raise Conflict("could not allocate a unique identifier; retry")
