"""The education marketplace's routes, mounted by the service at ``/education/v1``.

Every change needs an ``Idempotency-Key`` (:mod:`svc_api.education.idempotency`); the rest of the
request path (correlation id, authentication, rate limits, the error envelope, which gives these
routes the ``{error: <message>, code}`` shape) is the service's own.

Example:
    >>> app = education_app()
    >>> "/catalog" in [route.path for route in app.app.routes]
    True
"""

from __future__ import annotations

from starlette.routing import Router

from svc_api.education.catalog import routes as catalog
from svc_api.education.commerce import routes as commerce
from svc_api.education.idempotency import HeaderIdempotency
from svc_api.education.learning import routes as learning
from svc_api.education.payouts import routes as payouts
from svc_api.education.studio import routes as studio
from svc_api.education.uploads import routes as uploads


def education_app() -> HeaderIdempotency:
    """The ASGI app behind ``/education/v1``."""
    return HeaderIdempotency(
        Router(
            routes=[
                *catalog.ROUTES,
                *commerce.ROUTES,
                *learning.ROUTES,
                *studio.ROUTES,
                *uploads.ROUTES,
                *payouts.ROUTES,
            ]
        )
    )
