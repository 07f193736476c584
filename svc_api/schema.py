"""Every table of the service, for migrations and tests: importing this module loads each domain's
``tables.py`` onto the one shared :data:`~svc_api.core.tables.metadata`.

Example:
    >>> len(load_all().tables) >= 17
    True
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.accounts import tables as _accounts  # noqa: F401
from svc_api.backtests import tables as _backtests  # noqa: F401
from svc_api.billing import tables as _billing  # noqa: F401
from svc_api.bot import tables as _bot  # noqa: F401
from svc_api.community import tables as _community  # noqa: F401
from svc_api.core.tables import metadata
from svc_api.credits import tables as _credits  # noqa: F401
from svc_api.economic import tables as _economic  # noqa: F401
from svc_api.education import tables as _education  # noqa: F401
from svc_api.exchange import tables as _exchange  # noqa: F401
from svc_api.keys import tables as _keys  # noqa: F401
from svc_api.limits import tables as _limits  # noqa: F401
from svc_api.market import tables as _market  # noqa: F401
from svc_api.marketplace import tables as _marketplace  # noqa: F401
from svc_api.notifications import tables as _notifications  # noqa: F401
from svc_api.platform import tables as _platform  # noqa: F401
from svc_api.referrals import tables as _referrals  # noqa: F401
from svc_api.signals import tables as _signals  # noqa: F401
from svc_api.strategies import tables as _strategies  # noqa: F401
from svc_api.trends import tables as _trends  # noqa: F401


def load_all() -> sa.MetaData:
    """The metadata with every domain's tables on it.

    Example:
        >>> "backtest_jobs" in load_all().tables
        True
    """
    return metadata
