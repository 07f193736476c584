"""Hostile and clumsy input through the app: malformed JSON is a 400 that says what is wrong, never
a 500; rejected values are quoted by a short prefix only; e-mails with hidden characters and
out-of-bounds backtest settings are refused before anything is charged; every response says
``nosniff`` and replies that may carry secrets are ``no-store``; the SQLite file is private (0600);
bodies over the limit are a 413 with or without ``Content-Length``. Then a fuzz run: hostile JSON
bodies against every operation of every family, and not one 500."""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc_api.routing import BACKTEST, TRADINGDATA, USER

if TYPE_CHECKING:
    from tests.api.conftest import Api


def _raw(api: Api, request_type: str, content: bytes, **headers: str) -> Any:
    return api.post(
        "/user",
        params={"request_type": request_type},
        content=content,
        headers={"Content-Type": "application/json", **headers},
    )


@pytest.mark.parametrize("request_type", ["register", "login"])
def test_deep_nesting_is_a_400_that_says_so(api: Api, request_type: str) -> None:
    reply = _raw(api, request_type, b"[" * 5000 + b"]" * 5000)
    assert reply.status_code == 400
    assert reply.json() == {"error": "invalid_json", "message": "the body nests deeper than 64 levels"}
    nested = b'{"email": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3001
    assert _raw(api, request_type, nested).status_code == 400


@pytest.mark.parametrize("request_type", ["register", "login"])
def test_a_lone_surrogate_is_a_400_that_says_so(api: Api, request_type: str) -> None:
    body = b'{"email": "a\\ud800@example.com", "password": "correct horse"}'
    reply = _raw(api, request_type, body)
    assert reply.status_code == 400
    assert reply.json()["message"] == "the body holds a lone UTF-16 surrogate, which is not text"
    # A surrogate pair is a real character and is fine as text (the address itself is then judged).
    pair = b'{"email": "a\\ud83d\\ude00@example.com", "password": "correct horse"}'
    assert _raw(api, request_type, pair).status_code in (200, 400, 401)
    assert _raw(api, request_type, b'{"email": NaN}').json()["message"] == (
        "the body holds NaN, which JSON does not allow"
    )


def test_a_huge_rejected_value_is_quoted_by_a_short_prefix(api: Api) -> None:
    token = api.register()["session_token"]
    reply = api.user("strategy_detail", {"strategy_name": "x" * 900_000}, token=token)
    assert reply.status_code == 400
    assert len(reply.content) < 600
    assert reply.json()["message"].endswith("... (truncated)") or len(reply.json()["message"]) < 320


@pytest.mark.parametrize(
    "email",
    [
        "a\x00b@example.com",
        "a\u202eb@example.com",
        "a\u2066@example.com",
        "ab\u200f@example.com",
        "a\tb@example.com",
    ],
)
def test_hidden_characters_in_an_email_are_refused(api: Api, email: str) -> None:
    reply = api.user("register", {"email": email, "password": "correct horse battery"})
    assert reply.status_code == 400
    assert reply.json()["message"] == "email must be a valid e-mail address"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("leverage", 1000),
        ("leverage", 0),
        ("initial_balance", -5),
        ("initial_balance", 0),
        ("initial_balance", 1e13),
    ],
)
def test_out_of_bounds_run_settings_are_refused_and_not_charged(api: Api, field: str, value: float) -> None:
    token = api.register()["session_token"]
    body = {
        "strategy_name": "nosuch1",
        "coin": "BTC",
        "timeframe": "1h",
        "start_ts": 1_700_000_000,
        "end_ts": 1_700_086_400,
        field: value,
    }
    reply = api.post(
        "/backtest", params={"action": "run"}, json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert reply.status_code == 400, reply.text
    assert field in reply.json()["message"]
    history = api.user("credits_history", token=token).json()["data"]["transactions"]
    assert [t for t in history if t["action"] == "backtest"] == []


def test_security_headers(api: Api) -> None:
    reply = api.user("register", {"email": "h@example.com", "password": "correct horse battery"})
    assert reply.headers["cache-control"] == "no-store"
    assert reply.headers["x-content-type-options"] == "nosniff"
    token = reply.json()["data"]["session_token"]
    key = api.user("api_key_generate", {"label": "k"}, token=token)
    assert key.headers["cache-control"] == "no-store"
    login = api.user("login", {"email": "h@example.com", "password": "correct horse battery"})
    assert login.headers["cache-control"] == "no-store"
    public = api.get("/")
    assert public.headers["x-content-type-options"] == "nosniff"
    assert "no-store" not in public.headers.get("cache-control", "")
    private = api.get(
        "/tradingdata", params={"request_type": "changelog"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert private.headers["cache-control"] == "no-store"


def test_the_sqlite_file_is_private(api: Api) -> None:
    url = sa.make_url(api.app.state.services.settings.database_url)
    if url.get_backend_name() != "sqlite":
        pytest.skip("PostgreSQL keeps its own files")
    api.register()
    mode = stat.S_IMODE(os.stat(str(url.database)).st_mode)
    assert mode == 0o600


def test_bodies_over_the_limit_are_a_413_with_or_without_content_length(api: Api) -> None:
    big = b'{"email": "' + b"x" * (1 << 20) + b'"}'
    declared = _raw(api, "register", big)
    assert declared.status_code == 413
    assert declared.json()["error"] == "payload_too_large"

    async def chunks() -> Any:
        for _ in range(40):
            yield b"x" * 65536

    streamed = api.post("/user", params={"request_type": "register"}, content=chunks())
    assert streamed.status_code == 413


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=40),
        st.text(alphabet=st.characters(codec="utf-8"), min_size=2000, max_size=4000),
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=8,
    )


HOSTILE_RAW = [
    b"[" * 3000,
    b'{"a": "\\udfff"}',
    b'{"x": 1e999}',
    b'{"x": -Infinity}',
    b"\xff\xfe",
    b"null",
    b'"string"',
    b"{" + b'"k": 1, ' * 1000 + b'"z": 2}',
    b'{"strategy_name": {"$gt": ""}}',
]


def _families() -> list[tuple[str, str, str]]:
    out = [("POST", "/user", name) for name in USER.operations]
    out += [("POST", "/backtest", name) for name in BACKTEST.operations]
    return out + [("GET", "/tradingdata", name) for name in TRADINGDATA.operations]


def test_fuzz_every_operation_never_answers_500(api: Api) -> None:
    token = api.register()["session_token"]
    auth = {"Authorization": f"Bearer {token}"}
    statuses: dict[int, int] = {}

    def send(method: str, path: str, name: str, body: Any, raw: bytes | None = None) -> None:
        selector = "action" if path == "/backtest" else "request_type"
        if method == "GET":
            params = (
                {selector: name, **{str(k)[:20]: json.dumps(v)[:200] for k, v in (body or {}).items()}}
                if isinstance(body, dict)
                else {selector: name}
            )
            reply = api.get(path, params=params, headers=auth)
        else:
            content = raw if raw is not None else json.dumps(body).encode()
            reply = api.post(
                path,
                params={selector: name},
                content=content,
                headers={**auth, "Content-Type": "application/json"},
            )
        statuses[reply.status_code] = statuses.get(reply.status_code, 0) + 1
        assert reply.status_code != 500, (path, name, reply.text[:300])

    for method, path, name in _families():
        if name in ("logout",):
            continue
        for raw in HOSTILE_RAW:
            send(method, path, name, None, raw)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        target=st.sampled_from([f for f in _families() if f[2] != "logout"]),
        body=st.dictionaries(
            st.sampled_from(
                [
                    "email",
                    "password",
                    "strategy_name",
                    "coin",
                    "coins",
                    "timeframe",
                    "job_id",
                    "limit",
                    "cursor",
                    "symbol",
                    "start_ts",
                    "leverage",
                    "long_entry_condition",
                    "permissions",
                    "label",
                    "all",
                    "page",
                ]
            ),
            _json_values(),
            max_size=6,
        ),
    )
    def fuzz(target: tuple[str, str, str], body: dict[str, Any]) -> None:
        send(*target, body)

    fuzz()
    assert 500 not in statuses and sum(statuses.values()) > 200
