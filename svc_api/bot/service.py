"""The bot's chat use cases: account handoff, account and plan, app login codes, the API key and
signal preferences. Each takes the app's services, the chat and the time, runs its own transactions
through the other domains' services, and returns the :class:`~svc_api.bot.replies.Reply` to send.

Only the chat linked to an account acts for it; every use case but ``/start`` first finds that link.

Example:
    >>> from svc_api.core.services import Services
    >>> from svc_api.migrations import migrate
    >>> from svc_api.settings import Settings
    >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32), migrate=migrate)
    >>> reply = start(services, "42", None, now=1_000)
    >>> reply.text.startswith("Welcome! Your new account is ")
    True
    >>> account(services, "43", now=1_000).text.startswith("This chat is not linked")
    True
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from svc_api.accounts import service as accounts
from svc_api.billing import service as billing
from svc_api.bot import preferences, queries
from svc_api.bot.replies import Reply, button
from svc_api.bot.texts import HELP, NOT_LINKED, account_page, plans_page, when
from svc_api.core.errors import ServiceError, Unauthenticated
from svc_api.core.store import Store
from svc_api.keys import service as apikeys
from svc_api.notifications import service as notifications
from svc_api.strategies import service as strategies

LOGIN_CODE_TTL = 10 * 60
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def linked_account(services: Any, chat: str) -> str | None:
    """The account ``chat`` acts for (None: not linked)."""
    with services.store.read() as conn:
        return notifications.account_of_chat(conn, chat)


def start(services: Any, chat: str, code: str | None, *, now: int) -> Reply:
    """``/start``: a new account for an unknown chat, or ``/start CODE``: link an existing one."""
    with services.store.write() as conn:
        current = notifications.account_of_chat(conn, chat)
        if code:
            if current is not None:
                return Reply(
                    f"This chat is already linked to account {current}. Send /unlink first to link another."
                )
            svc_id = notifications.link_by_code(conn, code, chat, now=now)
            if svc_id is None:
                return Reply(
                    "That code is unknown, used or expired: ask the app for a new one (messenger link)."
                )
            return Reply(
                f"This chat is now linked to account {svc_id}: it receives its notifications and "
                f"signals, and acts for it.\n\n{HELP}"
            )
        if current is not None:
            return Reply(f"This chat is linked to account {current}.\n\n{HELP}")
        svc_id = accounts.register_chat_account(conn, now=now)
        notifications.link_chat(conn, svc_id, chat, now=now)
        login = _new_login_code(conn, svc_id, now=now)
    return Reply(
        f"Welcome! Your new account is {svc_id}: this chat is linked to it.\n"
        f"To log in to the app, enter the one-time code {login} (valid {LOGIN_CODE_TTL // 60} minutes; "
        f"send /login for a new one). This message is deleted shortly.\n\n{HELP}",
        secret=True,
    )


def unlink(services: Any, chat: str, *, now: int) -> Reply:
    """``/unlink``: the chat stops acting for and hearing from its account at once."""
    with services.store.write() as conn:
        svc_id = notifications.unlink_chat(conn, chat)
        queries.drop_callbacks(conn, chat_id=chat)
    if svc_id is None:
        return Reply(NOT_LINKED)
    return Reply(
        f"This chat is no longer linked to account {svc_id}. Its buttons no longer work. "
        "Link again with /start CODE (a code from the app)."
    )


def account(services: Any, chat: str, *, now: int) -> Reply:
    """``/account``: plan, credits, licence and demo expiry, active strategies, connections."""
    with services.store.read() as conn:
        svc_id = notifications.account_of_chat(conn, chat)
        if svc_id is None:
            return Reply(NOT_LINKED)
        info = accounts.account_info(conn, svc_id, now=now)
    return Reply(account_page(info, strategies.MAX_ACTIVE))


def plans(services: Any, chat: str, *, now: int) -> Reply:
    """``/plans``: prices of the plan table and how to pay with the account's ``svc_id``."""
    svc_id = linked_account(services, chat)
    if svc_id is None:
        return Reply(NOT_LINKED)
    limits = {
        "requests": accounts.RATE_LIMITS,
        "strategies": strategies.MAX_ACTIVE,
        "coins": strategies.MAX_COINS,
    }
    return Reply(plans_page(svc_id, billing.PRICES, limits))


def login(services: Any, chat: str, *, now: int) -> Reply:
    """``/login``: a one-time code to log in to the app (``messenger_login``); deleted shortly."""
    with services.store.write() as conn:
        svc_id = notifications.account_of_chat(conn, chat)
        if svc_id is None:
            return Reply(NOT_LINKED)
        code = _new_login_code(conn, svc_id, now=now)
    return Reply(
        f"Your one-time app login code: {code} (valid {LOGIN_CODE_TTL // 60} minutes, "
        "works once). This message is deleted shortly.",
        secret=True,
    )


def _new_login_code(conn: Any, svc_id: str, *, now: int) -> str:
    code = "".join(secrets.choice(_ALPHABET) for _ in range(8))
    queries.add_login_code(conn, code_hash=_code_hash(code), svc_id=svc_id, expires_at=now + LOGIN_CODE_TTL)
    return code


def _code_hash(code: str) -> str:
    return hashlib.sha256(code.strip().upper().encode()).hexdigest()


def login_with_code(services: Any, code: str, *, ip: str, platform: str, now: int) -> dict[str, Any]:
    """``messenger_login``: a session for the account of a one-time code from ``/login`` (checked
    by :func:`svc_api.bot.contract.login_code`; 401 for an unknown, used or expired code).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32), migrate=migrate)
        >>> login_with_code(services, "NOPE2345", ip="::1", platform="api", now=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Unauthenticated: that login code is unknown, used or expired
    """
    ttl = services.settings.session_ttl_seconds
    with services.store.write() as conn:
        svc_id = queries.use_login_code(conn, _code_hash(code), now=now)
        if svc_id is None:
            raise Unauthenticated("that login code is unknown, used or expired")
        return accounts.open_session(conn, svc_id, ip=ip, platform=platform, ttl=ttl, now=now).to_dict()


def key(services: Any, chat: str, args: list[str], *, now: int) -> Reply:
    """``/key generate LABEL`` (secret shown once, deleted shortly), ``/key status``, ``/key revoke``:
    the rules of ``api_key_generate`` / ``api_key_status`` / ``api_key_revoke``."""
    svc_id = linked_account(services, chat)
    if svc_id is None:
        return Reply(NOT_LINKED)
    verb = args[0].lower() if args else "status"
    try:
        if verb == "generate":
            label = apikeys.label_of(" ".join(args[1:]) or "messenger bot")
            made = apikeys.generate(
                services.store,
                svc_id,
                label,
                ["read", "trade"],
                secret_key=services.settings.secret_key,
                now=now,
            )
            ttl = int(services.settings.bot_secret_ttl)
            return Reply(
                f"Your API key: {made['api_key']}\nSecret: {made['api_secret']}\n\n"
                f"Copy the secret now: it is shown once and this message is deleted in {ttl} seconds. "
                "Anyone with both can use your account through the API.",
                secret=True,
            )
        if verb == "status":
            state = apikeys.status(services.store, svc_id)
            if not state["has_key"]:
                return Reply("You have no API key. Send /key generate LABEL to make one.")
            k = state["key"]
            with services.store.write() as conn:
                revoke = button(
                    conn, chat, svc_id, "Revoke this key", "revoke", {"api_key": k["api_key"]}, now=now
                )
            return Reply(
                f"API key {k['api_key']} ({k['label']}), permissions {', '.join(k['permissions'])}, "
                f"made {when(k['created_at'])}.",
                buttons=((revoke,),),
            )
        if verb == "revoke":
            state = apikeys.status(services.store, svc_id)
            if not state["has_key"]:
                return Reply("You have no API key to revoke.")
            return revoke_key(services, svc_id, state["key"]["api_key"])
    except ServiceError as exc:
        return Reply(f"Refused: {exc.message or exc.error}.")
    return Reply("Use /key generate LABEL, /key status or /key revoke.")


def revoke_key(services: Any, svc_id: str, api_key: str) -> Reply:
    """Revoke the account's key (for good, the slot freed at once)."""
    try:
        apikeys.revoke(services.store, svc_id, api_key, now=services.clock.now())
    except ServiceError as exc:
        return Reply(f"Refused: {exc.message or exc.error}.", edit=True)
    return Reply(f"API key {api_key} is revoked: it no longer works.", edit=True)


def signal_settings(services: Any, chat: str, args: list[str], *, now: int) -> Reply:
    """``/signals [strategies ...|coins ...|mute 2h|unmute|mode notify|ask|size N]``: show or set."""
    with services.store.write() as conn:
        svc_id = notifications.account_of_chat(conn, chat)
        if svc_id is None:
            return Reply(NOT_LINKED)
        problem = preferences.change(conn, svc_id, args, now=now)
        if problem is not None:
            return Reply(problem)
        return settings_page(conn, chat, svc_id, now=now)


def settings_page(conn: Any, chat: str, svc_id: str, *, now: int, edit: bool = False) -> Reply:
    """The preferences with their quick buttons."""
    prefs = preferences.preferences_of(conn, [svc_id])[svc_id]
    other = "ask" if prefs.mode == "notify" else "notify"

    def b(label: str, values: dict[str, Any]) -> tuple[str, str]:
        return button(conn, chat, svc_id, label, "prefs", values, now=now)

    rows = (
        (b("Mute 1 h", {"mute": 3600}), b("Mute 8 h", {"mute": 8 * 3600}), b("Mute 24 h", {"mute": 86_400})),
        (b("Unmute", {"muted_until": 0}), b(f"Mode: {other}", {"mode": other})),
    )
    text = (
        f"Signal preferences of {svc_id}:\n{prefs.describe(now)}\n\nChange with /signals strategies A,B "
        "| coins BTC,ETH | mute 2h | unmute | mode notify|ask | size 250 "
        "('all' clears a list)."
    )
    return Reply(text, buttons=rows, edit=edit)


def press_preferences(services: Any, chat: str, svc_id: str, values: dict[str, Any], *, now: int) -> Reply:
    """A button of ``/signals`` (or a signal's mute button: ``from_signal``)."""
    changes = {k: values[k] for k in ("muted_until", "mode") if k in values}
    if "mute" in values:
        changes["muted_until"] = now + int(values["mute"])
    with services.store.write() as conn:
        preferences.set_values(conn, svc_id, changes)
        if values.get("from_signal"):
            return Reply(f"Signals muted until {when(changes.get('muted_until', 0))}.", notice="Muted")
        return settings_page(conn, chat, svc_id, now=now, edit=True)


def keep_update(store: Store, update_id: int, payload: str, *, now: int) -> bool:
    """Queue an update the messenger delivered to the webhook; False when it was queued before (the
    messenger delivers again when unsure it was heard)."""
    with store.write() as conn:
        return queries.queue_update(conn, update_id, payload, now=now)
