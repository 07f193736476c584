"""What a fresh install shows before anyone fills it: each seed loads a bundled, marked sample into
a store that has none of that kind of data, and does nothing otherwise.

``create_app``'s start-up plants them when ``SVC_SEED_SAMPLES`` is on (the default; the tests turn it
off and plant what they need).

Example:
    >>> [seed.__name__ for seed in SEEDS]
    ['economic_sample', 'changelog_sample', 'education_sample']
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from svc_api.core.objectstore import from_settings
from svc_api.core.store import StoreUnavailable
from svc_api.economic import service as economic
from svc_api.education import sample as education
from svc_api.platform import service as platform

logger = logging.getLogger(__name__)


def economic_sample(services: Any) -> Any:
    """The sample news and calendar (``source: sample``), calendar dates relative to now."""
    return economic.fill_sample_if_empty(services.store, services.clock.now())


def changelog_sample(services: Any) -> bool:
    """The bundled changelog (``svc_api/platform/changelog.json``) when the store has none; whether
    it was written."""
    return platform.seed_changelog_if_empty(services.store, platform.CHANGELOG)


def education_sample(services: Any) -> int:
    """The sample education catalog (products marked ``sample``) when the catalog is empty; how many
    products were added."""
    settings = services.settings
    objects = from_settings(settings)
    return education.fill_sample_if_empty(
        services.store, objects, now=services.clock.now(), currency=settings.edu_currency
    )


SEEDS: list[Callable[[Any], Any]] = [economic_sample, changelog_sample, education_sample]


def plant(services: Any) -> dict[str, Any]:
    """Run every seed; a seed whose store is down is skipped (the next start-up tries again).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> import tempfile
        >>> settings = Settings(database_url="sqlite://", secret_key=b"k" * 32, var_dir=tempfile.mkdtemp())
        >>> services = Services(settings, migrate=migrate)
        >>> first = plant(services)
        >>> first["economic_sample"]["news"], first["education_sample"]
        ({'added': 15, 'unchanged': 0}, 3)
        >>> plant(services)
        {'economic_sample': None, 'changelog_sample': False, 'education_sample': 0}
    """
    planted: dict[str, Any] = {}
    for seed in SEEDS:
        try:
            planted[seed.__name__] = seed(services)
        except StoreUnavailable as exc:
            logger.warning("seed %s skipped: %s", seed.__name__, exc)
    return planted
