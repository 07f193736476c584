"""The education marketplace's routes, mounted by the service at ``/education/v1``.

Each route declares who may call it (:func:`svc_api.education.conventions.route`), applied first
by :class:`~svc_api.education.conventions.Authorise`; every change needs an ``Idempotency-Key``
(:mod:`svc_api.education.idempotency`); the rest of the
request path (correlation id, authentication, rate limits, the error envelope, which gives these
routes the ``{error: <message>, code}`` shape) is the service's own.

Example:
    >>> app = education_app()
    >>> "/catalog" in [route.path for route in app.router.routes]
    True
"""

from __future__ import annotations

from starlette.routing import Router

from svc_api.education.catalog import routes as catalog
from svc_api.education.commerce import routes as commerce
from svc_api.education.conventions import Authorise
from svc_api.education.idempotency import HeaderIdempotency
from svc_api.education.learning import routes as learning
from svc_api.education.payouts import routes as payouts
from svc_api.education.studio import routes as studio
from svc_api.education.uploads import routes as uploads


def education_app() -> Authorise:
    """The ASGI app behind ``/education/v1``."""
    router = Router(
        routes=[
            *catalog.ROUTES,
            *commerce.ROUTES,
            *learning.ROUTES,
            *studio.ROUTES,
            *uploads.ROUTES,
            *payouts.ROUTES,
        ]
    )
    return Authorise(HeaderIdempotency(router), router)
