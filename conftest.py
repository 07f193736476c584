"""Doctest set-up shared by the service's docstrings.

A docstring of ``svc_api`` that uses ``store`` gets one: a fresh SQLite store already migrated to
head (a copy of a file migrated once per test process), so an example shows the call it teaches,
not the set-up. ``Store`` is there too, for examples that open a store of their own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem

from svc_api.core.store import Store


@pytest.fixture(scope="session")
def _doctest_store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from svc_api.migrations import migrate

    path = tmp_path_factory.mktemp("doctest-store") / "svc.db"
    store = Store(f"sqlite:///{path}")
    migrate(store)
    store.dispose()
    return path


def _uses_store(item: pytest.Item) -> bool:
    if not isinstance(item, DoctestItem) or item.dtest is None:
        return False
    if not item.dtest.name.startswith("svc_api."):
        return False
    return any("store" in example.source for example in item.dtest.examples)


@pytest.fixture(autouse=True)
def _doctest_store(request: pytest.FixtureRequest, doctest_namespace: dict[str, object]) -> None:
    """``store`` for the ``svc_api`` doctests that use one (a migrated copy per example)."""
    if not _uses_store(request.node):
        return
    path = request.getfixturevalue("tmp_path") / "svc.db"
    shutil.copyfile(request.getfixturevalue("_doctest_store_template"), path)
    doctest_namespace["Store"] = Store
    doctest_namespace["store"] = Store(f"sqlite:///{path}")
