"""The spec's "Limits can vary by account and endpoint; the response headers are authoritative": the
operations that cost more than a read (key generation, backtest launches, checkout) are counted per
account at limits of their own, and an operator sets an account's limits with ``svc admin
rate-limit``, for all its requests or one endpoint group; each response's ``X-RateLimit-*`` headers
tell the limit that applied to it. On SQLite and PostgreSQL, rate limits at their real size."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from svc_api.cli import main as svc
from tests.api.education_helpers import call

if TYPE_CHECKING:
    from tests.api.conftest import Api


@pytest.fixture
def real_api(make_api: Any, settings: Any, cli_env: None, monkeypatch: pytest.MonkeyPatch) -> Api:
    """An app whose limits are the real ones (the other tests scale them up a hundred times)."""
    monkeypatch.setenv("RATE_LIMIT_SCALE", "1")
    return make_api(settings)


def _limit(reply: Any) -> tuple[int, int]:
    return int(reply.headers["x-ratelimit-limit"]), int(reply.headers["x-ratelimit-remaining"])


def _admin(*args: str) -> Any:
    done = CliRunner().invoke(svc, ["admin", "rate-limit", *args])
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def _until_limit(ask: Any, expected: int) -> Any:
    """The server reads overrides every few seconds: ask until the headers show ``expected``."""
    deadline = time.monotonic() + 10
    while True:
        reply = ask()
        if _limit(reply)[0] == expected or time.monotonic() > deadline:
            return reply
        time.sleep(0.2)


def test_key_generation_has_a_limit_of_its_own_and_the_headers_say_so(real_api: Api) -> None:
    token = real_api.register()["session_token"]
    first = real_api.user("api_key_generate", {"label": "bot"}, token=token)
    assert first.status_code == 200 and _limit(first) == (5, 4)
    read = real_api.user("account_info", token=token)
    assert read.status_code == 200 and _limit(read) == (60, 59)  # free, session: 30 x 2, apart
    for left in (3, 2, 1, 0):
        again = real_api.user("api_key_generate", {"label": "bot"}, token=token)
        assert again.status_code == 400 and _limit(again) == (5, left)  # one key at most, but counted
    over = real_api.user("api_key_generate", {"label": "bot"}, token=token)
    assert over.status_code == 429 and _limit(over) == (5, 0)
    assert (over.json()["error"], over.json()["reason"]) == ("too_many_requests", "rate_limit_exceeded")
    assert int(over.headers["retry-after"]) >= 1
    assert real_api.user("account_info", token=token).status_code == 200  # reads are not held back


def test_a_checkout_and_a_launch_are_counted_at_their_own_limits(real_api: Api) -> None:
    token = real_api.register()["session_token"]
    headers = {"Authorization": f"Bearer {token}"}
    for action in ("run", "full_range", "portfolio"):  # one group: ten launches a minute in all
        launch = real_api.post("/backtest", params={"action": action}, json={}, headers=headers)
        assert launch.status_code == 400 and _limit(launch)[0] == 10, launch.text
    assert _limit(launch)[1] == 7
    reply = call(real_api, "POST", "/checkouts", token, json={"product_id": "prd_nope"})
    assert reply.status_code == 422 and _limit(reply) == (10, 9)  # no such product, but counted
    listing = call(real_api, "GET", "/orders", token)
    assert _limit(listing)[0] == 60


def test_an_operators_override_sets_an_accounts_limits(real_api: Api) -> None:
    user = real_api.register()
    token, svc_id = user["session_token"], user["svc_id"]
    pair = real_api.user("api_key_generate", {"label": "bot"}, token=token).json()["data"]
    key = (pair["api_key"], pair["api_secret"])
    assert _limit(real_api.user("account_info", key=key))[0] == 30  # free plan, API key
    shown = _admin("set", svc_id.lower(), "7", "--reason", "load test of a partner")
    assert (shown["svc_id"], shown["endpoint"], shown["per_minute"]) == (svc_id, "default", 7)
    by_key = _until_limit(lambda: real_api.user("account_info", key=key), 7)
    assert _limit(by_key)[0] == 7
    assert _limit(real_api.user("account_info", token=token))[0] == 14  # a session: twice, as for plans
    replies = [real_api.user("account_info", key=key) for _ in range(7)]
    assert [r.status_code for r in replies].count(429) >= 1 and _limit(replies[-1]) == (7, 0)

    _admin("set", svc_id, "2", "--endpoint", "key_generation", "--reason", "abuse")
    generate = _until_limit(lambda: real_api.user("api_key_generate", {"label": "x"}, token=token), 2)
    assert _limit(generate)[0] == 2
    assert [o["endpoint"] for o in _admin("show", svc_id)["overrides"]] == ["default", "key_generation"]
    assert _admin("clear", svc_id)["removed"] == 2
    back = _until_limit(lambda: real_api.user("account_info", token=token), 60)
    assert _limit(back)[0] == 60


def test_the_operator_command_refuses_what_it_cannot_apply(real_api: Api) -> None:
    runner = CliRunner()
    unknown = runner.invoke(svc, ["admin", "rate-limit", "set", "NOPE00", "10", "--reason", "x"])
    assert unknown.exit_code == 1 and "unknown account NOPE00" in unknown.output
    svc_id = real_api.register()["svc_id"]
    for args, why in (
        (["0"], "0 is not in the range"),
        (["10", "--endpoint", "everything"], "'everything' is not one of"),
        (["10", "--reason", " "], "a reason is required"),
    ):
        reason = [] if "--reason" in args else ["--reason", "x"]
        done = runner.invoke(svc, ["admin", "rate-limit", "set", svc_id, *args, *reason])
        assert done.exit_code != 0 and why in done.output, done.output
