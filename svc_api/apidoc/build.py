"""The API description, built from the operation tables and their models (``svc openapi``).

``base.yaml`` holds what no model knows: the prose, the security schemes, the shared headers and
responses, the REST routes not declared by models, and the component schemas they use.
The family operations and every model's schema are added to it; component schemas nothing refers to
any more are left out. ``svc_api/openapi.yaml`` is the rendered result, committed, and a test fails
when it differs from what this module builds.

Example:
    >>> doc = document()
    >>> doc["openapi"], "/user#account_info" in doc["paths"]
    ('3.1.0', True)
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic.json_schema import models_json_schema

from svc_api.apidoc.families import family_paths
from svc_api.apidoc.rest import rest_paths

JsonDict = dict[str, Any]
OUTPUT = Path(__file__).resolve().parents[1] / "openapi.yaml"
"""Where the rendered description is committed (and served from, as ``/openapi.json``)."""


def _load(name: str) -> Any:
    return yaml.safe_load(resources.files("svc_api.apidoc").joinpath(name).read_text(encoding="utf-8"))


def document() -> JsonDict:
    """The whole description as a dict (a new one each call; the inputs are read once).

    Example:
        >>> "Account" in document()["components"]["schemas"]
        True
    """
    return json.loads(_built())


@cache
def _built() -> str:
    from svc_api.routing import BACKTEST, TRADINGDATA, USER  # the routes import every domain

    doc = _load("base.yaml")
    models: list[type] = []
    family_items: JsonDict = {}
    for family in (USER, BACKTEST, TRADINGDATA):
        paths, used = family_paths(family)
        family_items.update(paths)
        models += used
    rest, used = rest_paths()
    models += used
    doc["paths"] = {**_ordered(_with(doc["paths"], rest), family_items)}
    schemas = doc["components"]["schemas"]
    declared = schemas_of(models)
    if twice := sorted(set(declared) & set(schemas)):
        raise ValueError(f"schemas declared by models and written in base.yaml: {', '.join(twice)}")
    schemas.update(declared)
    doc["components"]["schemas"] = _referenced(doc, schemas)
    doc["components"].pop("x-header-sets", None)
    doc["components"].pop("x-education", None)
    return json.dumps(doc)


def _with(written: JsonDict, declared: JsonDict) -> JsonDict:
    """The hand-written path items of ``base.yaml`` and the declared ones, in the written order
    (a declared route takes the place of its path); an operation in both is an error."""
    out = {path: dict(item) for path, item in written.items()}
    for path, item in declared.items():
        twice = set(out.get(path, {})) & set(item)
        if twice:
            raise ValueError(f"{path} {sorted(twice)} is declared by its route and written in base.yaml")
        out.setdefault(path, {}).update(item)
    return out


def _ordered(rest: JsonDict, families: JsonDict) -> JsonDict:
    """The platform routes first (``/`` and health), then the families, then the others."""
    head = {p: v for p, v in rest.items() if p in ("/", "/health", "/healthz", "/readyz", "/openapi.json")}
    tail = {p: v for p, v in rest.items() if p not in head}
    return {**head, **families, **tail}


def schemas_of(models: list[type]) -> JsonDict:
    """The component schemas of ``models`` and of every model they use, by class name; two models
    of one name are an error (the description has one namespace).

    Example:
        >>> from svc_api.core.contract import NoFields
        >>> sorted(schemas_of([NoFields]))
        ['NoFields']
    """
    unique = list(dict.fromkeys(models))
    names: dict[str, type] = {}
    for model in unique:
        other = names.setdefault(model.__name__, model)
        if other is not model:
            raise ValueError(f"two models named {model.__name__}: {other.__module__} and {model.__module__}")
    _, defs = models_json_schema(
        [(m, "validation") for m in unique], ref_template="#/components/schemas/{model}"
    )
    out = defs.get("$defs", {})
    for name in out:
        if name not in names and any(n.split("__")[-1] == name for n in names):
            raise ValueError(f"a nested model name collides: {name}")
    return out


def _referenced(doc: JsonDict, schemas: JsonDict) -> JsonDict:
    """The schemas reachable from the paths and shared responses (a replaced hand-written schema
    that nothing uses any more is left out)."""
    seen: set[str] = set()
    todo = [doc["paths"], doc["components"].get("responses", {})]
    while todo:
        for name in _refs(todo.pop()):
            if name not in seen and name in schemas:
                seen.add(name)
                todo.append(schemas[name])
    return {name: schema for name, schema in schemas.items() if name in seen}


def _refs(node: Any) -> list[str]:
    prefix = "#/components/schemas/"
    if isinstance(node, dict):
        found = [node["$ref"][len(prefix) :]] if str(node.get("$ref", "")).startswith(prefix) else []
        return found + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def render() -> str:
    """The description as the YAML text committed in ``svc_api/openapi.yaml``.

    Example:
        >>> render().startswith("# Generated by `svc openapi`")
        True
    """
    head = (
        "# Generated by `svc openapi` from the operation tables and models (svc_api/apidoc); do not edit.\n"
    )
    return head + yaml.safe_dump(document(), sort_keys=False, width=110, allow_unicode=True)
