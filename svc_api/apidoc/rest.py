"""The REST routes in the API description (the platform's, its webhooks and ``/education/v1``),
built from each route's contract (:class:`svc_api.core.contract.Op`): parameters from the path and
the query model, the body from the body model, the success reply from the reply model, and the
answers every route of its house shares beside the route's own (education: 429, 503, its error
envelope, 413 on a change; the platform: 429, 503 and the API's error envelope).

Example:
    >>> paths, models = rest_paths()
    >>> paths["/education/v1/catalog"]["get"]["operationId"], paths["/health"]["get"]["tags"]
    ('edu_catalog', ['platform'])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starlette.routing import BaseRoute, Mount, Route

from svc_api.apidoc.families import headers, ref
from svc_api.core.contract import Answer, Op

JsonDict = dict[str, Any]
_PARAM = re.compile(r"{([a-z_]+)(?::[a-z]+)?}")
_CHANGES = frozenset({"post", "put", "patch", "delete"})
_SESSION: JsonDict = {"sessionToken": []}
_KEY: JsonDict = {"apiKey": [], "apiSecret": []}
SECURITY = {"public": [{}, _SESSION], "identified": [_SESSION, _KEY], "session": [_SESSION]}
"""An education route's access -> who the description says may call it."""


@dataclass(frozen=True)
class House:
    """What every REST route under one prefix shares: its answers (``components/responses``), the
    schema of its error body, whether a change may answer 413, and who may call by default."""

    shared: tuple[tuple[str, str], ...]
    error: str
    too_large: bool
    """Whether a change may answer 413 (education bounds its bodies at 64 KiB)."""
    keyed: bool
    """Whether a change takes an ``Idempotency-Key`` header (education's; the families take a field)."""
    security: tuple[JsonDict, ...] = ({},)


EDUCATION = House(
    (("429", "EduRateLimited"), ("503", "EduUnavailable"), ("default", "EduError")), "EduError", True, True
)
PLATFORM = House(
    (("429", "RateLimited"), ("503", "Unavailable"), ("default", "Error")), "Error", False, False
)
PREFIXES = {"/education/v1": EDUCATION, "": PLATFORM}


def rest_paths() -> tuple[JsonDict, list[type]]:
    """The path items of every REST route that declares its contract, and their models.

    Example:
        >>> _, models = rest_paths()
        >>> any(m.__name__ == "EduCatalogPage" for m in models)
        True
    """
    from svc_api.education.idempotency import needs_key
    from svc_api.routing import routes  # the routes import every domain

    paths: JsonDict = {}
    models: list[type] = []
    for prefix, route in _flat(routes()):
        op: Op | None = getattr(route.endpoint, "op", None)
        if op is None:
            continue
        house = PREFIXES[prefix]
        path = prefix + _PARAM.sub(r"{\1}", route.path)
        policy = getattr(route.endpoint, "policy", None)
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            key = house.keyed and needs_key(method, prefix + route.path)
            security = op.security or (SECURITY[policy.access] if policy is not None else house.security)
            item = _operation(op, house, path, method.lower(), list(security), key)
            paths.setdefault(path, {})[method.lower()] = item
        models += [m for m in (op.query, op.body, op.reply) if m is not None]
        models += [a.reply for a in op.errors if a.reply is not None]
    return paths, models


def _flat(found: Iterable[BaseRoute], prefix: str = "") -> Iterable[tuple[str, Route]]:
    for route in found:
        if isinstance(route, Mount):  # education's app wraps its router in the access check
            inner = route.routes or getattr(getattr(route.app, "router", None), "routes", [])
            yield from _flat(inner, prefix + route.path)
        elif isinstance(route, Route):
            yield prefix, route


def _operation(
    op: Op, house: House, path: str, method: str, security: list[JsonDict], idempotent: bool
) -> JsonDict:
    item: JsonDict = {
        "tags": [op.tag],
        "operationId": op.operation_id,
        "summary": op.summary,
    }
    if op.description:
        item["description"] = op.description
    item["security"] = security
    parameters = [_path_parameter(op, name) for name in _PARAM.findall(path)]
    if idempotent:
        parameters.append({"$ref": "#/components/parameters/EduIdempotencyKey"})
    parameters += list(op.parameters)
    if op.query is not None:
        parameters += _query_parameters(op.query)
    if parameters:
        item["parameters"] = parameters
    if op.body is not None:
        content = {"application/json": {"schema": ref(op.body.__name__)}}
        needed = bool(op.body.required_names()) or getattr(op.body, "needed", False)
        item["requestBody"] = {"required": needed, "content": content}
    elif op.request is not None:
        item["requestBody"] = op.request
    item["responses"] = _responses(op, house, method)
    return item


def _path_parameter(op: Op, name: str) -> JsonDict:
    declared = op.path.get(name)
    if declared is None:
        raise ValueError(f"{op.operation_id}: the path parameter {name!r} is not declared")
    if isinstance(declared, str):
        return {"$ref": f"#/components/parameters/{declared}"}
    return {"name": name, "in": "path", "required": True, **declared}


def _query_parameters(model: Any) -> list[JsonDict]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    required = set(schema.get("required", ()))
    out = []
    for name, prop in schema.get("properties", {}).items():
        parameter: JsonDict = {"name": name, "in": "query", "required": name in required}
        if "description" in prop:
            parameter["description"] = prop.pop("description")
        prop.pop("title", None)
        if name in getattr(model, "repeatable", ()):
            parameter |= {"style": "form", "explode": True}
        parameter["schema"] = prop
        out.append(parameter)
    return out


def _responses(op: Op, house: House, method: str) -> JsonDict:
    success: JsonDict = {"description": op.done, "headers": headers()}
    for name in op.headers:
        success["headers"][name] = {"$ref": f"#/components/headers/{name}"}
    if op.content is not None:
        success["content"] = op.content
    elif op.reply is not None:
        success["content"] = {"application/json": {"schema": ref(op.reply.__name__)}}
    out: JsonDict = {str(op.status): success}
    for answer in op.errors:
        out[str(answer.status)] = _answer(answer, house)
    if method in _CHANGES and house.too_large:
        out.setdefault("413", {"$ref": "#/components/responses/EduBodyTooLarge"})
    for status, shared in house.shared:
        out.setdefault(status, {"$ref": f"#/components/responses/{shared}"})
    return out


def _answer(answer: Answer, house: House) -> JsonDict:
    if answer.shared is not None:
        return {"$ref": f"#/components/responses/{answer.shared}"}
    body = ref(answer.reply.__name__ if answer.reply is not None else house.error)
    return {
        "description": answer.text,
        "headers": headers(retry=answer.status in (429, 503)),
        "content": {"application/json": {"schema": body}},
    }
