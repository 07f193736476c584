"""The relational store: engine and transactions, tables, migrations.

Example:
    >>> store = Store("sqlite:///:memory:")
    >>> migrate(store)[0]
    1
"""

from svc_api.store.engine import Store, StoreUnavailable
from svc_api.store.migrations import MIGRATIONS, Migration, applied_versions, migrate

__all__ = ["MIGRATIONS", "Migration", "Store", "StoreUnavailable", "applied_versions", "migrate"]
