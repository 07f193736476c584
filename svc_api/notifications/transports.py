"""How a message leaves the service: e-mail as ``.eml`` files (the embedded default) or over SMTP,
and chat messages through a Telegram-compatible bot HTTP API.

A transport raises :class:`DeliveryFailed` when a message did not go out; the outbox retries it.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> mail = MailFiles(Path(tempfile.mkdtemp()), "svc <noreply@svc.invalid>")
    >>> mail.send("ob1", "a@example.com", "Hello", "Body")
    >>> (mail.directory / "ob1.eml").read_text().count("Subject: Hello")
    1
"""

from __future__ import annotations

import os
import smtplib
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx


class DeliveryFailed(Exception):
    """A message was not delivered (the reason is the message); it may be retried."""


class Transport(Protocol):
    """Sends one message: ``key`` names it (the outbox id), ``address`` is where it goes."""

    def send(self, key: str, address: str, title: str, body: str) -> None: ...


def _email(key: str, sender: str, address: str, title: str, body: str) -> EmailMessage:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, address, title
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = f"<{key}@svc.invalid>"
    message.set_content(body)
    return message


class MailFiles:
    """E-mail written as ``<directory>/<key>.eml``: a retried message replaces its own file, so each
    message exists once however often it was attempted."""

    idempotent = True

    def __init__(self, directory: Path, sender: str) -> None:
        self.directory, self.sender = directory, sender

    def send(self, key: str, address: str, title: str, body: str) -> None:
        """Write the message atomically (a temporary file renamed into place)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.directory / f"{key}.eml"
        partial = final.with_suffix(".eml.part")
        try:
            partial.write_bytes(bytes(_email(key, self.sender, address, title, body)))
            os.replace(partial, final)
        except OSError as exc:
            raise DeliveryFailed(f"cannot write {final}: {exc.strerror}") from None


def expire_mail_files(directory: Path, *, older_than: float) -> int:
    """Remove the mail files (and partial files a crash left) last written before ``older_than``
    (Unix seconds); the number removed. A missing directory removes nothing.

    The files are the mail of the embedded default (no SMTP): no store row points to one (the
    outbox row only records that it was delivered), so a file goes alone.

    Example:
        >>> import os, tempfile
        >>> d = Path(tempfile.mkdtemp()); (d / "a.eml").write_text("x"); os.utime(d / "a.eml", (5, 5))
        1
        >>> expire_mail_files(d, older_than=10), expire_mail_files(d / "none", older_than=10)
        (1, 0)
    """
    removed = 0
    if not directory.is_dir():
        return 0
    for path in directory.iterdir():
        if not path.name.endswith((".eml", ".eml.part")):
            continue  # only what MailFiles writes: an operator's file beside them stays
        try:
            if path.stat().st_mtime < older_than:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue  # a concurrent pass took it
    return removed


def mail_directory(settings: Any) -> Path:
    """Where :class:`MailFiles` writes (``<var>/mail``)."""
    return Path(settings.var_dir) / "mail"


class Smtp:
    """E-mail over SMTP to ``smtp://host:port`` (one connection per message)."""

    def __init__(self, url: str, sender: str, timeout: float = 10.0) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 25
        self.sender, self.timeout = sender, timeout

    def send(self, key: str, address: str, title: str, body: str) -> None:
        """Hand the message to the SMTP server."""
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as smtp:
                smtp.send_message(_email(key, self.sender, address, title, body))
        except (OSError, smtplib.SMTPException) as exc:
            raise DeliveryFailed(f"SMTP {self.host}:{self.port}: {exc}") from None


class BotApi:
    """A Telegram-compatible bot HTTP API's ``sendMessage`` under ``<base>/bot<token>/``: the outbox's
    chat transport (the bot itself, :mod:`svc_api.bot`, reads updates through its library)."""

    def __init__(self, base_url: str, token: str, timeout: float = 10.0) -> None:
        self.client = httpx.Client(base_url=f"{base_url.rstrip('/')}/bot{token}/", timeout=timeout)

    def _call(self, method: str, payload: dict[str, Any]) -> Any:
        try:
            response = self.client.post(method, json=payload)
            reply = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise DeliveryFailed(f"bot API {method}: {exc}") from None
        if not isinstance(reply, dict) or reply.get("ok") is not True:
            detail = reply.get("description") if isinstance(reply, dict) else None
            raise DeliveryFailed(f"bot API {method} answered {response.status_code}: {detail}")
        return reply.get("result")

    def send(self, key: str, address: str, title: str, body: str) -> None:
        """Send ``title`` and ``body`` to the chat ``address``."""
        self._call("sendMessage", {"chat_id": address, "text": f"{title}\n\n{body}"})

    def send_chat(self, chat: str, text: str, buttons: tuple[tuple[tuple[str, str], ...], ...] = ()) -> None:
        """Send ``text`` to ``chat`` with rows of inline ``(label, callback data)`` buttons."""
        payload: dict[str, Any] = {"chat_id": chat, "text": text}
        if buttons:
            keyboard = [[{"text": label, "callback_data": data} for label, data in row] for row in buttons]
            payload["reply_markup"] = {"inline_keyboard": keyboard}
        self._call("sendMessage", payload)

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


def transports_for(settings: Any) -> dict[str, Transport]:
    """The transport of each channel the settings configure: ``mail`` always (files under
    ``<var>/mail`` unless ``SMTP_URL``), ``bot`` and ``messenger`` with ``BOT_API_URL``.

    Example:
        >>> from types import SimpleNamespace
        >>> s = SimpleNamespace(smtp_url=None, mail_from="x@y", var_dir=Path("/tmp/v"), bot_api_url=None)
        >>> sorted(transports_for(s))
        ['mail']
    """
    mail: Transport = (
        Smtp(settings.smtp_url, settings.mail_from)
        if settings.smtp_url
        else MailFiles(mail_directory(settings), settings.mail_from)
    )
    out: dict[str, Transport] = {"mail": mail}
    if settings.bot_api_url:
        bot = BotApi(settings.bot_api_url, settings.bot_token)
        out["bot"] = out["messenger"] = bot
    return out
