"""The house plan, checked: the import-linter contracts of pyproject.toml (svc_engine never imports
svc_api; entry points above domains above core; the engine's layers), domains meeting only through
each other's ``service.py``, no import circle in either package, no svc_engine module importing
another's private name, and no module over 400 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
SHARED = {
    "core",
    "settings",
    "app",
    "cli",
    "workers",
    "routing",
    "schema",
    "migrations",
    "seeds",
    "client",
    "apidoc",
}
"""Not domains: the core, the entry points, and the generated description and client (which read every
domain's contract models)."""
EDUCATION_SHARED = {"app", "contract", "conventions", "fields", "idempotency", "money", "tables"}
"""The education sub-app's own shared layer; its domains (catalog, commerce, learning, ...) are
packages under ``svc_api.education`` and meet through each other's ``service.py`` too."""
MAX_LINES = 400


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("svc_api", "svc_engine")


def _domain(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "svc_api" or len(parts) < 2 or parts[1] in SHARED:
        return None
    if parts[1] == "education" and len(parts) > 2:
        return None if parts[2] in EDUCATION_SHARED else f"education.{parts[2]}"
    return parts[1]


def _joins_a_sibling_table(importer: str, imported: str) -> bool:
    """The education subdomains share one marketplace schema: a subdomain's ``queries`` may join
    another's tables (the catalog's ratings read learning's reviews), never call its code."""
    ours, theirs = _domain(importer) or "", _domain(imported) or ""
    return (
        ours.startswith("education.")
        and theirs.startswith("education.")
        and importer.endswith(".queries")
        and imported == f"svc_api.{theirs}.tables"
    )


def test_import_linter_contracts_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True) == 0


def test_a_domain_uses_another_only_through_its_service(graph: grimp.ImportGraph) -> None:
    wrong = []
    for importer in sorted(m for m in graph.modules if _domain(m)):
        for imported in graph.find_modules_directly_imported_by(importer):
            theirs = _domain(imported)
            if theirs and theirs != _domain(importer) and imported != f"svc_api.{theirs}.service":
                if _joins_a_sibling_table(importer, imported):
                    continue
                wrong.append(f"{importer} -> {imported}")
    assert wrong == []


@pytest.mark.parametrize("package", ["svc_api", "svc_engine"])
def test_no_import_circle(graph: grimp.ImportGraph, package: str) -> None:
    """Imports under ``if TYPE_CHECKING:`` count too: a type named across a circle is a circle."""
    modules = sorted(m for m in graph.modules if m.startswith(f"{package}."))
    circles = []
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith(f"{package}.") and graph.chain_exists(imported, module, as_packages=False):
                circles.append(f"{module} -> {imported}")
    assert circles == []


LONG_TABLES = {
    "svc_engine/strategy/vocab.py": "the vocabulary as data: one IndSpec entry per indicator, a table that"
    " grows by one entry per indicator and has a dozen short functions around it",
}
"""Modules allowed over the limit, by name, with the reason."""


@pytest.mark.parametrize("package", ["svc_api", "svc_engine"])
def test_no_module_is_over_400_lines(package: str) -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for path in (ROOT / package).rglob("*.py")
        if "versions" not in path.parts
    }
    assert {name: n for name, n in sizes.items() if n > MAX_LINES and name not in LONG_TABLES} == {}


def _private_imports(package: str) -> list[str]:
    """``from <package>.x import _name`` anywhere in ``package``, function bodies included."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == package:
                names = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}.{n}" for n in names]
    return found


def test_no_svc_engine_module_imports_a_private_name_of_another() -> None:
    """A name another module needs is part of its module's surface: public, documented, kept."""
    assert _private_imports("svc_engine") == []


def test_route_modules_open_no_transaction() -> None:
    """Routes parse and shape; the services open the transactions (one rule, one place)."""
    opening = re.compile(r"\bstore\.(read|write)\(")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "svc_api").rglob("routes.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if opening.search(line)
    ]
    assert found == []
