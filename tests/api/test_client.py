"""The typed client (svc_api.client) against the service running under uvicorn: it signs up, reads
its account and logins as typed models, and a failure raises ApiFailure with the service's body."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_api.accounts.contract import Account, LoginHistoryPage, SessionGrant
from svc_api.apidoc.client_source import client_sources
from svc_api.app import create_app
from svc_api.client import ApiFailure, Client
from svc_api.settings import Settings
from tests.api.fakes.loopback import serve


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "data").mkdir()
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=b"k" * 32,
        var_dir=tmp_path,
        data_dir=tmp_path / "data",
        trend_refresh_seconds=0,
        seed_samples=0,
    )
    with serve(create_app(settings)) as url:
        yield url


def test_committed_client_is_the_generated_one():
    for path, text in client_sources().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run `svc openapi`"


def test_sign_up_and_read_the_account_as_models(base_url: str):
    with Client(base_url) as guest:
        grant = guest.register(email="Client@Example.com", password="client-pass-1", platform="sdk")
    assert isinstance(grant, SessionGrant) and len(grant.svc_id) == 6
    with Client(base_url, session_token=grant.session_token) as me:
        account = me.account_info()
        logins = me.login_history(limit=5)
    assert isinstance(account, Account)
    assert account.svc_id == grant.svc_id and account.plan == "free"
    assert isinstance(logins, LoginHistoryPage)
    assert logins.count == 1 and logins.logins[0].platform == "sdk" and logins.has_more is False


def test_a_failure_raises_with_the_service_error_body(base_url: str):
    with Client(base_url) as guest, pytest.raises(ApiFailure) as failure:
        guest.register(email="not-an-address", password="client-pass-1")
    assert failure.value.status == 400
    assert failure.value.body == {
        "error": "invalid_request",
        "message": "email must be a valid e-mail address",
    }
    with Client(base_url) as guest, pytest.raises(ApiFailure) as failure:
        guest.account_info()
    assert failure.value.status == 401 and failure.value.code == "session_expired"
