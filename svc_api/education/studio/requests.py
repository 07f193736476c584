"""The instructor studio as the routes call it: each request in one transaction of its own (seller
onboarding, products and their curriculum, submissions, bundles, answers to learners' questions).
The rules are in :mod:`.sellers`, :mod:`.products` and :mod:`.bundles`, which work inside a
caller's transaction.

Example:
    >>> seller_status(store, "NOPE00")
    Traceback (most recent call last):
    ...
    svc_api.core.errors.NotFound: unknown account NOPE00
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.store import Store
from svc_api.education.learning import service as learning
from svc_api.education.studio import bundles, products, sellers
from svc_api.education.studio import contract as models
from svc_api.education.uploads import service as uploads

Check = Callable[[str], None]
"""The caller's If-Match check of a resource's current ETag."""


def _media(conn: Connection, leader_id: str) -> products.Media:
    """The leader's processed uploads, as the curriculum and submission rules look them up."""
    return lambda upload_id: uploads.processed_media(conn, leader_id, upload_id)


def seller_status(store: Store, svc_id: str) -> dict[str, Any]:
    """Whether the account sells here, and how far its onboarding got."""
    with store.read() as conn:
        return sellers.status(conn, svc_id)


def start_onboarding(store: Store, svc_id: str, *, now: int) -> dict[str, Any]:
    """Open a seller onboarding session."""
    with store.write() as conn:
        return sellers.start_onboarding(conn, svc_id, now=now)


def onboarding_form(store: Store, token: str, *, now: int) -> dict[str, Any]:
    """What the hosted onboarding page asks for."""
    with store.read() as conn:
        return sellers.onboarding_form(conn, token, now=now)


def complete_onboarding(
    store: Store, token: str, form: models.EduOnboardingSubmit, *, now: int
) -> dict[str, Any]:
    """Accept the contract and the payout profile sent on the onboarding page."""
    with store.write() as conn:
        return sellers.complete_onboarding(conn, token, form, now=now)


def create_product(
    store: Store, svc_id: str, fields: models.EduStudioProductCreate, *, currency: str, now: int
) -> dict[str, Any]:
    """A new draft product."""
    with store.write() as conn:
        return products.create(conn, svc_id, fields, currency=currency, now=now)


def read_product(store: Store, svc_id: str, product_id: str) -> dict[str, Any]:
    """A product as its instructor sees it in the studio."""
    with store.read() as conn:
        return products.read(conn, svc_id, product_id)


def update_product(
    store: Store,
    svc_id: str,
    product_id: str,
    fields: models.EduStudioProductPatch,
    check: Check,
    *,
    currency: str,
    now: int,
) -> dict[str, Any]:
    """Change a product's draft."""
    with store.write() as conn:
        return products.update(conn, svc_id, product_id, fields, check, currency=currency, now=now)


def submit_product(store: Store, svc_id: str, product_id: str, *, now: int) -> dict[str, Any]:
    """Submit a product's draft for review."""
    with store.write() as conn:
        return products.submit(conn, svc_id, product_id, _media(conn, svc_id), now=now)


def replace_curriculum(
    store: Store,
    svc_id: str,
    product_id: str,
    tree: models.EduStudioCurriculumRequest,
    check: Check,
    *,
    now: int,
) -> dict[str, Any]:
    """Replace a product's draft curriculum."""
    with store.write() as conn:
        return products.replace_curriculum(
            conn, svc_id, product_id, tree, check, _media(conn, svc_id), now=now
        )


def unpublish(store: Store, svc_id: str, product_id: str, *, now: int) -> dict[str, Any]:
    """Take a product off sale."""
    with store.write() as conn:
        return products.unpublish(conn, svc_id, product_id, now=now)


def create_bundle(
    store: Store, svc_id: str, fields: models.EduBundleCreate, *, currency: str, now: int
) -> dict[str, Any]:
    """A new bundle of the instructor's products."""
    with store.write() as conn:
        return bundles.create(conn, svc_id, fields, currency=currency, now=now)


def read_bundle(store: Store, svc_id: str, bundle_id: str) -> dict[str, Any]:
    """A bundle as its instructor sees it."""
    with store.read() as conn:
        return bundles.read(conn, svc_id, bundle_id)


def update_bundle(
    store: Store,
    svc_id: str,
    bundle_id: str,
    fields: models.EduBundlePatch,
    check: Check,
    *,
    currency: str,
    now: int,
) -> dict[str, Any]:
    """Change a bundle."""
    with store.write() as conn:
        return bundles.update(conn, svc_id, bundle_id, fields, check, currency=currency, now=now)


def answer(store: Store, svc_id: str, question_id: str, text: str, *, now: int) -> dict[str, Any]:
    """An instructor's answer to a learner's question (403 not an instructor)."""
    with store.write() as conn:
        sellers.require_instructor(conn, svc_id)
        # learning's answer still reads a body (its own domain's conversion is to come)
        return learning.answer(conn, svc_id, question_id, {"body": text}, now=now)


def require_instructor(store: Store, svc_id: str) -> None:
    """403 unless the account holds an instructor role (checked before the body is read)."""
    with store.read() as conn:
        sellers.require_instructor(conn, svc_id)
