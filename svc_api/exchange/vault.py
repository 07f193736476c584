"""Exchange keys and secrets encrypted at rest (Fernet: AES-128-CBC + HMAC-SHA256).

The encryption keys come from ``EXCHANGE_ENCRYPTION_KEYS`` (comma-separated, newest first) or, by
default, the file ``<var>/exchange_keys`` (one per line, made on first use, mode 0600). The first key
encrypts; every key decrypts, so a rotation (:func:`rotate`) adds a key in front, re-encrypts every
row with it and then drops the old ones. Plain keys and secrets are never logged nor returned.

Example:
    >>> keyring = Keyring([Fernet.generate_key().decode()])
    >>> token = keyring.encrypt("my-secret")
    >>> token != "my-secret", keyring.decrypt(token)
    (True, 'my-secret')
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet


class Keyring:
    """The encryption keys, newest first."""

    def __init__(self, keys: list[str]) -> None:
        if not keys:
            raise ValueError("at least one exchange encryption key is needed")
        self.keys = keys
        self._fernet = MultiFernet([Fernet(k.encode()) for k in keys])

    def encrypt(self, plain: str) -> str:
        """``plain`` encrypted with the newest key."""
        return self._fernet.encrypt(plain.encode()).decode()

    def decrypt(self, token: str) -> str:
        """The plain text of ``token`` (``ValueError`` when no key opens it)."""
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken:
            raise ValueError("an exchange credential cannot be decrypted with the configured keys") from None

    def rotate_token(self, token: str) -> str:
        """``token`` re-encrypted with the newest key."""
        return self._fernet.rotate(token.encode()).decode()


def key_file(var_dir: Path) -> Path:
    """Where the keys live when no environment variable names them."""
    return Path(var_dir) / "exchange_keys"


def keyring_of(settings: object) -> Keyring:
    """The keyring of the settings: ``exchange_encryption_keys`` or the key file (created once).

    Example:
        >>> import tempfile
        >>> from types import SimpleNamespace
        >>> s = SimpleNamespace(exchange_encryption_keys=(), var_dir=Path(tempfile.mkdtemp()))
        >>> keyring_of(s).keys == keyring_of(s).keys
        True
    """
    configured = tuple(getattr(settings, "exchange_encryption_keys", ()) or ())
    if configured:
        return Keyring(list(configured))
    path = key_file(Path(settings.var_dir))  # type: ignore[attr-defined]
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: read theirs
        else:
            with os.fdopen(fd, "w") as out:
                out.write(Fernet.generate_key().decode() + "\n")
    return Keyring([line.strip() for line in path.read_text().splitlines() if line.strip()])


def write_keys(var_dir: Path, keys: list[str]) -> None:
    """Replace the key file's keys (newest first), atomically."""
    path = key_file(var_dir)
    partial = path.with_suffix(".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write("".join(k + "\n" for k in keys))
    os.replace(partial, path)


def digest(value: str) -> str:
    """A one-way digest (to find a link by its key without storing the key in clear).

    Example:
        >>> len(digest("k" * 64))
        64
    """
    return hashlib.sha256(value.encode()).hexdigest()


def new_key() -> str:
    """A fresh encryption key."""
    return Fernet.generate_key().decode()
