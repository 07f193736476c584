"""``svc serve`` runs uvicorn with the app factory; settings for the app come from the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from svc_api.cli.serve import command as serve
from svc_api.settings import Settings


def test_serve_runs_the_factory_on_loopback_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    monkeypatch.setattr("uvicorn.run", lambda *a, **kw: calls.append((a, kw)))
    result = CliRunner().invoke(serve, [])
    assert result.exit_code == 0, result.output
    [(args, kwargs)] = calls
    assert args == ("svc_api.app:create_app",)
    assert (kwargs["factory"], kwargs["host"], kwargs["port"], kwargs["workers"]) == (
        True,
        "127.0.0.1",
        8000,
        1,
    )
    CliRunner().invoke(serve, ["--host", "0.0.0.0", "--port", "9001", "--workers", "2"])
    assert (calls[1][1]["host"], calls[1][1]["port"], calls[1][1]["workers"]) == ("0.0.0.0", 9001, 2)
    assert CliRunner().invoke(serve, ["--port", "0"]).exit_code == 2


def test_settings_from_environment_and_generated_secret(tmp_path: Path) -> None:
    env = {"SVC_VAR_DIR": str(tmp_path / "var"), "REDIS_URL": "redis://127.0.0.1:6379/0", "DATA_DIR": "/data"}
    first = Settings.from_env(env)
    assert first.database_url == f"sqlite:///{tmp_path / 'var' / 'svc.db'}"
    assert (first.redis_url, first.data_dir, first.ray_address) == (
        "redis://127.0.0.1:6379/0",
        Path("/data"),
        None,
    )
    assert len(first.secret_key) == 64
    assert (tmp_path / "var" / "secret_key").stat().st_mode & 0o777 == 0o600
    assert Settings.from_env(env).secret_key == first.secret_key  # persisted, not regenerated
    with pytest.raises(ValueError, match="SESSION_TTL_SECONDS must be a positive integer"):
        Settings.from_env({**env, "SESSION_TTL_SECONDS": "soon"})
    with pytest.raises(ValueError, match="SECRET_KEY must be at least 16 characters"):
        Settings.from_env({**env, "SECRET_KEY": "short"})
