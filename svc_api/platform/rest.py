"""The contracts of the platform's own REST routes: ``GET /`` (the platform config), the health
probes and ``GET /openapi.json``, with their reply models.

Example:
    >>> HEALTH.operation_id, Health.model_validate({"status": "ok", "store": "ok"}).store
    ('health', 'ok')
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from svc_api.core.contract import Op, Shape


class PlatformConfig(Shape):
    """What clients read at start-up (cached a minute)."""

    GENERAL: str
    banner_urls: list[str]
    supported_coins: list[str]
    app_version: str


class Health(Shape):
    """The service and its store answer."""

    status: Literal["ok"]
    store: Literal["ok"]


class WorkerHealth(Shape):
    """One background worker's state."""

    state: Literal["running", "stopped", "failing"]


class Liveness(Shape):
    """The process serves; ``store`` says whether the store answers."""

    status: Literal["ok"]
    store: Literal["ok", "unavailable"]
    workers: dict[str, WorkerHealth] = Field(
        description="Each background worker this process runs, by name (strategy_generation,"
        " backtest_runner, trend_refresh); empty when they run in `svc worker`."
    )


class OpenApiDocument(Shape):
    """The OpenAPI description (this document)."""

    openapi: str
    paths: dict[str, object]


ROOT = Op(
    "platformConfig",
    "Platform configuration (public, no credentials; clients cache it).",
    PlatformConfig,
    done="Platform config.",
    tag="platform",
)
HEALTH = Op(
    "health",
    "Liveness and store reachability.",
    Health,
    done="The service and its store answer.",
    tag="platform",
)
HEALTHZ = Op(
    "healthz",
    "Liveness, the store's state and each background worker's health (always 200).",
    Liveness,
    done="The process serves; `store` says whether the store answers.",
    tag="platform",
)
READYZ = Op(
    "readyz",
    "Readiness, 200 while the store answers, 503 while it does not.",
    Health,
    done="Ready for traffic.",
    tag="platform",
)
OPENAPI = Op(
    "openapiDocument",
    "This document as JSON.",
    OpenApiDocument,
    done="The OpenAPI description.",
    tag="platform",
)
