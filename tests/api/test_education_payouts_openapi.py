"""The description of the sales and payout routes is true, on SQLite and PostgreSQL: both are in
openapi.yaml with every method they serve, and schemathesis fuzzes them as a guest, as a plain user
and as an instructor with real sales and a paid statement, finding no 5xx and no reply outside the
schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.python.asgi import shutdown_lifespans
from schemathesis.specs.openapi.checks import response_schema_conformance

from svc_api.core.clock import ManualClock
from svc_api.education.payouts import routes
from svc_api.education.payouts import service as payouts
from tests.api.education_helpers import PUBLICATION, VIDEO_COURSE, publish
from tests.api.test_education_payouts import TR_PROFILE, at, refund, run, sell, seller
from tests.api.test_openapi import document

PREFIX = "/education/v1"
EXAMPLES = 30


def test_both_routes_are_documented_with_every_error_status() -> None:
    paths = document()["paths"]
    for route in routes.ROUTES:
        item = paths[PREFIX + route.path]
        assert set(item) == {m.lower() for m in route.methods or ()} - {"head"}
        assert {"200", "400", "401", "403", "429"} <= set(item["get"]["responses"])


def fuzz(operation: Any, headers: dict[str, str], seen: dict[str, set[int]]) -> None:
    """``EXAMPLES`` generated cases of one operation; fails on a 5xx or a reply outside the schema."""

    @given(case=operation.as_strategy())
    @hypothesis_settings(
        max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def check(case: schemathesis.Case) -> None:
        response = case.call_and_validate(
            headers=headers, checks=[not_a_server_error, response_schema_conformance]
        )
        seen.setdefault(operation.label, set()).add(response.status_code)

    check()


@pytest.fixture
def shop_api(settings: Any, make_api: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An app whose clock moves only when told, the per-minute limits lifted for fuzzing, no
    background workers; the lifespan schemathesis starts is stopped while the store still exists."""
    monkeypatch.setenv("RATE_LIMIT_SCALE", "1000")
    # schemathesis starts the lifespan a second time: no background workers, so none outlives the store
    monkeypatch.setenv("SVC_RUN_WORKERS", "0")
    yield make_api(settings, clock=ManualClock(at(10, 1)))
    shutdown_lifespans()


@pytest.mark.slow
def test_schemathesis_finds_no_server_error_and_no_schema_violation(shop_api: Any) -> None:
    api = shop_api
    teacher = seller(api, TR_PROFILE)
    course, book = publish(api, teacher.svc_id, VIDEO_COURSE), publish(api, teacher.svc_id, PUBLICATION)
    buyer, plain = api.register()["session_token"], api.register()["session_token"]
    sell(api, at(10, 5), buyer, course)
    order = sell(api, at(10, 6), buyer, book)
    refund(api, at(10, 7), buyer, order)
    with api.app.state.services.store.write() as conn:
        payouts.set_fx_rate(conn, "USD", "TRY", "41.25", now=at(11, 24))
    assert run(api, at(11, 25))["payouts"] == 1
    schema = schemathesis.openapi.from_asgi("/openapi.json", api.app)
    operations = [
        result.ok()
        for result in schema.get_all_operations()
        if result.ok().path in {PREFIX + route.path for route in routes.ROUTES}
    ]
    assert len(operations) == 2
    seen: dict[str, set[int]] = {}
    for headers in ({}, {"Authorization": f"Bearer {plain}"}, {"Authorization": f"Bearer {teacher.token}"}):
        for operation in operations:
            fuzz(operation, headers, seen)
    for label, statuses in seen.items():
        assert {200, 401, 403} <= statuses, (label, statuses)
