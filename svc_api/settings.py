"""Configuration of the service: every value from an environment variable, with an embedded default.

Nothing needs configuring: the defaults give an SQLite file and a secret key under ``var/`` of the
checkout, in-memory rate limits and the local executor.

Example:
    >>> s = Settings.from_env({"DATABASE_URL": "sqlite:///:memory:", "SECRET_KEY": "k" * 32})
    >>> s.database_url, s.session_ttl_seconds
    ('sqlite:///:memory:', 2592000)
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Settings:
    """All settings of the service (see :meth:`from_env` for the variable of each).

    Example:
        >>> Settings(database_url="sqlite:///x.db", secret_key=b"k" * 32).store_retry_after
        5
    """

    database_url: str
    secret_key: bytes = field(repr=False)
    var_dir: Path = REPO / "var"
    data_dir: Path | None = None
    redis_url: str | None = None
    ray_address: str | None = None
    cors_origins: tuple[str, ...] = ()
    session_ttl_seconds: int = 30 * 24 * 3600
    store_retry_after: int = 5
    general_message: str = "Welcome to svc."
    banner_urls: tuple[str, ...] = ()
    app_version: str = "1.0.0"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the settings from ``environ`` (default ``os.environ``).

        Variables: ``DATABASE_URL``, ``SVC_VAR_DIR``, ``DATA_DIR``, ``REDIS_URL``, ``RAY_ADDRESS``,
        ``CORS_ORIGINS`` (comma-separated), ``SECRET_KEY`` (generated once and kept in
        ``<var>/secret_key`` when unset), ``SESSION_TTL_SECONDS``, ``STORE_RETRY_AFTER``,
        ``SVC_GENERAL_MESSAGE``, ``SVC_BANNER_URLS`` (comma-separated), ``SVC_APP_VERSION``.

        Example:
            >>> Settings.from_env({"SECRET_KEY": "s" * 32, "CORS_ORIGINS": "https://a.io, https://b.io"}).cors_origins
            ('https://a.io', 'https://b.io')
        """
        env = os.environ if environ is None else environ
        var_dir = Path(env.get("SVC_VAR_DIR") or REPO / "var")
        data_dir = env.get("DATA_DIR")
        return cls(
            database_url=env.get("DATABASE_URL") or f"sqlite:///{var_dir / 'svc.db'}",
            secret_key=_secret_key(env.get("SECRET_KEY"), var_dir),
            var_dir=var_dir,
            data_dir=Path(data_dir) if data_dir else None,
            redis_url=env.get("REDIS_URL") or None,
            ray_address=env.get("RAY_ADDRESS") or None,
            cors_origins=_csv(env.get("CORS_ORIGINS")),
            session_ttl_seconds=_positive_int(env, "SESSION_TTL_SECONDS", 30 * 24 * 3600),
            store_retry_after=_positive_int(env, "STORE_RETRY_AFTER", 5),
            general_message=env.get("SVC_GENERAL_MESSAGE", "Welcome to svc."),
            banner_urls=_csv(env.get("SVC_BANNER_URLS")),
            app_version=env.get("SVC_APP_VERSION", "1.0.0"),
        )


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


def _secret_key(value: str | None, var_dir: Path) -> bytes:
    """The HMAC key: ``SECRET_KEY``, else one generated on first use and kept under ``var_dir``."""
    if value:
        if len(value) < 16:
            raise ValueError("SECRET_KEY must be at least 16 characters")
        return value.encode()
    path = var_dir / "secret_key"
    if not path.exists():
        var_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(secrets.token_hex(32))
        tmp.chmod(0o600)
        # Two processes starting together: the first link wins and both read the winner's key.
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path.read_text().strip().encode()
