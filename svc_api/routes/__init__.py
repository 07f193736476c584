"""The routes of the service: the three dispatch families, ``GET /``, health, the API description,
and ``/education/v1``.

Each family's table merges the tables of the route modules; a new operation goes in a route module
and its table is added here.

Example:
    >>> "account_info" in USER.operations, "changelog" in TRADINGDATA.operations
    (True, True)
    >>> [r.path for r in routes()][:3]
    ['/', '/health', '/openapi.json']
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount, Route, Router

from svc_api.routes import account, keys, platform
from svc_api.routes import backtests as backtest_routes
from svc_api.routes import market as market_routes
from svc_api.routes import strategies as strategy_routes
from svc_api.routes import trends as trend_routes
from svc_api.routes.dispatch import Family, Operation, merge

USER = Family(
    "user",
    "request_type",
    merge(account.USER, keys.USER, strategy_routes.USER, backtest_routes.USER, market_routes.USER),
    envelope=True,
)
BACKTEST = Family("backtest", "action", merge(backtest_routes.BACKTEST), envelope=False)
TRADINGDATA = Family(
    "tradingdata",
    "request_type",
    merge(platform.TRADINGDATA, market_routes.TRADINGDATA, trend_routes.TRADINGDATA),
    envelope=False,
    body=False,
)

_FAMILIES = {"/user": USER, "/backtest": BACKTEST, "/tradingdata": TRADINGDATA}


def operation_for(path: str, selector_value: str | None) -> Operation | None:
    """The operation a request path and selector value dispatch to (None when unknown).

    Example:
        >>> operation_for("/user", "login").access
        'public'
        >>> operation_for("/elsewhere", "login") is None
        True
    """
    family = _FAMILIES.get(path)
    return None if family is None else family.operation(selector_value)


def selector_of(path: str) -> str | None:
    """The query parameter naming the operation on ``path``.

    Example:
        >>> selector_of("/backtest")
        'action'
    """
    family = _FAMILIES.get(path)
    return None if family is None else family.selector


def routes() -> list[BaseRoute]:
    """Every route of the app.

    Example:
        >>> len(routes())
        7
    """
    return [
        Route("/", platform.root, methods=["GET"]),
        Route("/health", platform.health, methods=["GET"]),
        Route("/openapi.json", platform.openapi, methods=["GET"]),
        Route("/user", USER.__call__, methods=["POST"]),
        Route("/backtest", BACKTEST.__call__, methods=["POST"]),
        Route("/tradingdata", TRADINGDATA.__call__, methods=["GET"]),
        Mount("/education/v1", app=Router(routes=[])),
    ]
