"""Linking an exchange account to a service account, and logging in with it.

The key and secret must be exactly 64 characters (a 400 when linking, a 401 when logging in, as the
spec's table says), the exchange must name the account (502 otherwise), the key must allow spot
trading and whitelist the order proxy's address (400 saying which). Key and secret are stored
encrypted (:mod:`svc_api.exchange.vault`); a digest of the key and the exchange's account ID find a
link again.

Example:
    >>> credential("k" * 64, "api_key", status=400) == "k" * 64
    True
    >>> credential("short", "api_key", status=401)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.ApiError: 401 invalid_exchange_credentials
"""

from __future__ import annotations

from typing import Any

from svc_api.accounts import service as accounts
from svc_api.core.errors import ApiError, Invalid, NotFound
from svc_api.exchange import queries
from svc_api.exchange.interface import Credentials, Exchange, ExchangeUnavailable, InvalidCredentials, KeyInfo
from svc_api.exchange.vault import Keyring, digest

KEY_LENGTH = 64


def credential(value: object, name: str, *, status: int) -> str:
    """An ``api_key`` or ``api_secret`` of exactly 64 characters; else ``status`` (no ``code``)."""
    if not isinstance(value, str) or len(value) != KEY_LENGTH:
        raise ApiError(
            status,
            "invalid_exchange_credentials",
            extra={"message": f"{name} must be exactly {KEY_LENGTH} characters"},
        )
    return value


def _key_info(exchange: Exchange, creds: Credentials, *, refused_status: int) -> KeyInfo:
    try:
        info = exchange.key_info(creds)
    except InvalidCredentials:
        detail = {"message": "the exchange refused this API key and secret"}
        raise ApiError(refused_status, "exchange_refused_key", extra=detail) from None
    except ExchangeUnavailable as exc:
        raise ApiError(
            502, "exchange_unavailable", extra={"message": f"the exchange gave no usable answer: {exc}"}
        ) from None
    if not info.account_id:
        raise ApiError(502, "exchange_unavailable", extra={"message": "the exchange returned no account ID"})
    return info


def link(
    store: Any,
    exchange: Exchange,
    keyring: Keyring,
    svc_id: str,
    creds: Credentials,
    *,
    proxy_ip: str,
    now: int,
) -> dict[str, Any]:
    """Link the caller's exchange account (replacing a previous link): ``{exchange, account_id,
    linked}``; the key pair is checked for its length (:func:`credential`)."""
    info = _key_info(exchange, creds, refused_status=400)
    if not info.can_trade_spot:
        raise Invalid("this API key cannot trade spot: enable spot trading for it on the exchange")
    if info.ip_whitelist is None or proxy_ip not in info.ip_whitelist:
        raise Invalid(
            f"this API key must be restricted to the order proxy's address {proxy_ip}: "
            "add it to the key's IP whitelist"
        )
    with store.write() as conn:
        other = queries.link_of_account(conn, exchange.name, info.account_id)
        if other is not None and other.svc_id != svc_id:
            raise ApiError(
                409, "conflict", extra={"message": "this exchange account is linked to another account"}
            )
        queries.save_link(
            conn,
            svc_id=svc_id,
            exchange=exchange.name,
            account_id=info.account_id,
            linked_at=now,
            key_digest=digest(creds.api_key),
            api_key_enc=keyring.encrypt(creds.api_key),
            api_secret_enc=keyring.encrypt(creds.api_secret),
        )
        accounts.set_connection(conn, svc_id, "exchange", True)
    return {"exchange": exchange.name, "account_id": info.account_id, "linked": True}


def unlink(store: Any, svc_id: str) -> dict[str, Any]:
    """Forget the caller's exchange keys (404 when none are linked)."""
    with store.write() as conn:
        if not queries.delete_link(conn, svc_id):
            raise NotFound("no exchange account is linked")
        accounts.set_connection(conn, svc_id, "exchange", False)
    return {"linked": False}


def login(
    store: Any, exchange: Exchange, creds: Credentials, *, ip: str, platform: str, ttl: int, now: int
) -> dict[str, Any]:
    """A session for the account whose linked exchange account the key belongs to: 401 for a key
    refused (a key or secret not 64 characters is 401 before, :func:`credential`), 400 when no
    account linked that exchange identity."""
    info = _key_info(exchange, creds, refused_status=401)
    with store.write() as conn:
        row = queries.link_of_account(conn, exchange.name, info.account_id)
        if row is None:
            raise Invalid("no account is linked to this exchange identity: register, then link the exchange")
        return accounts.open_session(conn, row.svc_id, ip=ip, platform=platform, ttl=ttl, now=now).to_dict()


def stored_credentials(conn: Any, keyring: Keyring, svc_id: str) -> tuple[str, Credentials] | None:
    """(exchange name, decrypted credentials) of the caller's link, or None."""
    row = queries.link(conn, svc_id)
    if row is None:
        return None
    return row.exchange, Credentials(keyring.decrypt(row.api_key_enc), keyring.decrypt(row.api_secret_enc))


def rotate_encryption(store: Any, keyring: Keyring) -> int:
    """Re-encrypt every stored key and secret with the keyring's newest key; how many links."""
    with store.write() as conn:
        rows = queries.all_links(conn)
        for row in rows:
            queries.set_secrets(
                conn,
                row.svc_id,
                keyring.rotate_token(row.api_key_enc),
                keyring.rotate_token(row.api_secret_enc),
            )
    return len(rows)
