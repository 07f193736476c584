"""The routes of the service: the three dispatch families, ``GET /``, health, the API description,
and ``/education/v1``.

Each family's table merges the tables of the route modules; a new operation goes in a route module
and its table is added here.

Example:
    >>> "account_info" in USER.operations, "changelog" in TRADINGDATA.operations
    (True, True)
    >>> [r.path for r in routes()][:3]
    ['/', '/health', '/healthz']
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from svc_api.accounts import routes as account
from svc_api.backtests import routes as backtest_routes
from svc_api.billing import routes as billing_routes
from svc_api.bot import routes as bot_routes
from svc_api.community import routes as community_routes
from svc_api.core.dispatch import Family, Operation, merge
from svc_api.credits import routes as credit_routes
from svc_api.economic import routes as economic_routes
from svc_api.education.app import education_app
from svc_api.exchange import routes as exchange_routes
from svc_api.keys import routes as keys
from svc_api.market import routes as market_routes
from svc_api.marketplace import routes as marketplace_routes
from svc_api.notifications import routes as notification_routes
from svc_api.platform import routes as platform
from svc_api.realtime import routes as realtime
from svc_api.referrals import routes as referral_routes
from svc_api.signals import routes as signal_routes
from svc_api.strategies import routes as strategy_routes
from svc_api.trends import routes as trend_routes

TRADE = (
    frozenset(
        {
            "notification_settings",
            "notifications_mark_read",
            "favorite_coin",
            "strategy_generate",
            "strategy_edit",
            "strategy_rollback",
            "strategy_delete",
            "strategy_visibility",
            "run",
            "full_range",
            "portfolio",
            "delete_backtest",
            "track_trend_break_signal",
            "untrack_trend_break_signal",
            "marketplace_publish",
            "marketplace_update_listing",
            "marketplace_unpublish",
            "marketplace_subscribe",
            "marketplace_unsubscribe",
            "marketplace_review",
            "messenger_link",
            "set_inviter",
            "referral_redeem",
            "iap_verify",
        }
    )
    | community_routes.TRADE
    | exchange_routes.TRADE
)
"""Operations an API key needs the ``trade`` permission for: they spend credits, create, change or
delete. Every other identified operation needs ``read``."""


def _scoped(table: dict[str, Operation]) -> dict[str, Operation]:
    return {name: replace(op, scope="trade") if name in TRADE else op for name, op in table.items()}


USER = Family(
    "user",
    "request_type",
    _scoped(
        merge(
            account.USER,
            credit_routes.USER,
            notification_routes.USER,
            keys.USER,
            strategy_routes.USER,
            backtest_routes.USER,
            market_routes.USER,
            signal_routes.USER,
            marketplace_routes.USER,
            community_routes.USER,
            economic_routes.USER,
            exchange_routes.USER,
            billing_routes.USER,
            referral_routes.USER,
            bot_routes.USER,
        )
    ),
    envelope=True,
)
BACKTEST = Family("backtest", "action", _scoped(merge(backtest_routes.BACKTEST)), envelope=False)
TRADINGDATA = Family(
    "tradingdata",
    "request_type",
    _scoped(
        merge(
            platform.TRADINGDATA,
            market_routes.TRADINGDATA,
            trend_routes.TRADINGDATA,
            marketplace_routes.TRADINGDATA,
            community_routes.TRADINGDATA,
        )
    ),
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


def family_endpoints() -> dict[str, tuple[str, Any]]:
    """Path -> (method, endpoint) of the three families, served by
    :class:`~svc_api.core.direct.DirectEndpoints` ahead of the router (the router keeps them too,
    for its 405 on another method).

    Example:
        >>> sorted(family_endpoints())
        ['/backtest', '/tradingdata', '/user']
    """
    return {path: ("GET" if not f.body else "POST", f.__call__) for path, f in _FAMILIES.items()}


def routes() -> list[BaseRoute]:
    """Every route of the app.

    Example:
        >>> len(routes())
        13
    """
    return [
        *platform.ROUTES,
        Route("/user", USER.__call__, methods=["POST"]),
        Route("/backtest", BACKTEST.__call__, methods=["POST"]),
        Route("/tradingdata", TRADINGDATA.__call__, methods=["GET"]),
        *billing_routes.WEBHOOKS,
        *bot_routes.WEBHOOKS,
        WebSocketRoute("/ws", realtime.endpoint),
        Mount("/education/v1", app=education_app()),
    ]
