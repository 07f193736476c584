"""The API description: valid OpenAPI 3.1, complete (every route and selector of the app), served at
``/openapi.json``, and true: schemathesis fuzzes every operation against the ASGI app as a guest, with
an API key and with a session token, and finds no 5xx and no reply that breaks the schema."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance
from starlette.routing import Mount, Route

from svc_api.app import create_app
from svc_api.routes import BACKTEST, TRADINGDATA, USER
from svc_api.settings import Settings

EXAMPLES = 25
WITH_PARAMETERS = {"POST /user", "POST /backtest", "GET /tradingdata"}  # negative mode needs inputs
FAMILIES = {"/user": USER, "/backtest": BACKTEST, "/tradingdata": TRADINGDATA}


def document() -> dict[str, Any]:
    text = resources.files("svc_api").joinpath("openapi.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    # Fuzzing sends hundreds of requests from one client: lift the per-minute limits.
    monkeypatch.setenv("RATE_LIMIT_SCALE", "1000")
    settings_ = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}", secret_key=b"k" * 32, var_dir=tmp_path
    )
    return create_app(settings_)


async def _post(
    client: httpx.AsyncClient, request_type: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    r = await client.post("/user", params={"request_type": request_type}, json=body, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["data"]


def identities(app: Any) -> dict[str, dict[str, str]]:
    """Headers of a guest, of an API key and of a session, for one fresh account."""

    async def make() -> dict[str, dict[str, str]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            grant = await _post(
                client, "register", {"email": "fuzz@example.com", "password": "fuzz-password-1"}
            )
            session = {"Authorization": f"Bearer {grant['session_token']}"}
            key = await _post(client, "api_key_generate", {"label": "fuzz", "permissions": ["read"]}, session)
        return {
            "guest": {},
            "api_key": {"X-API-Key": key["api_key"], "X-API-Secret": key["api_secret"]},
            "session": session,
        }

    return asyncio.run(make())


def test_document_is_valid_openapi_3_1():
    doc = document()
    validate(doc)
    assert doc["openapi"] == "3.1.0"


def test_every_route_and_selector_is_documented(app):
    doc = document()
    served = {r.path for r in app.routes if isinstance(r, Route)}
    assert served == set(doc["paths"])
    assert [r.path for r in app.routes if isinstance(r, Mount)] == ["/education/v1"]
    for path, family in FAMILIES.items():
        operation = doc["paths"][path]["post" if family.body else "get"]
        [selector] = [p for p in operation["parameters"] if p["name"] == family.selector]
        assert selector["required"] is True and selector["in"] == "query"
        assert set(selector["schema"].get("enum", [])) == set(family.operations), path


def test_every_documented_method_is_served(app):
    doc = document()
    for route in app.routes:
        if isinstance(route, Route):
            documented = {m.upper() for m in doc["paths"][route.path]}
            assert documented == set(route.methods or ()) - {"HEAD"}, route.path


def test_served_at_openapi_json(app):
    async def fetch() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.get("/openapi.json")

    r = asyncio.run(fetch())
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    assert json.loads(r.content) == document()


def fuzz(
    operation: schemathesis.APIOperation,
    headers: dict[str, str],
    seen: dict[str, set[int]],
    mode: schemathesis.GenerationMode = schemathesis.GenerationMode.POSITIVE,
) -> None:
    """EXAMPLES generated cases of one operation; fails on a 5xx or a reply outside the schema."""
    checks = [not_a_server_error, response_schema_conformance]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def run(case: schemathesis.Case) -> None:
        response = case.call_and_validate(headers=headers, checks=checks)
        seen.setdefault(operation.label, set()).add(response.status_code)

    run()


@pytest.mark.slow
def test_schemathesis_finds_no_server_error_and_no_schema_violation(app):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    who = identities(app)
    operations = [result.ok() for result in schema.get_all_operations()]
    # Schemathesis leaves out the document's own endpoint (test_served_at_openapi_json covers it).
    assert {op.label for op in operations} == {
        "GET /",
        "GET /health",
        "POST /user",
        "POST /backtest",
        "GET /tradingdata",
    }
    seen: dict[str, set[int]] = {}
    # Session last: a fuzzed `logout` may end it. Invalid requests (negative mode) as a guest and by key.
    for name in ("guest", "api_key", "session"):
        for operation in operations:
            fuzz(operation, who[name], seen)
            if name != "session" and operation.label in WITH_PARAMETERS:
                fuzz(operation, who[name], seen, schemathesis.GenerationMode.NEGATIVE)
    # The fuzzing reached real replies, not only rejections.
    assert 200 in seen["POST /user"] and 200 in seen["GET /tradingdata"]
    assert 405 in seen["POST /backtest"]
