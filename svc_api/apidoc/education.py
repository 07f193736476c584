"""The ``/education/v1`` routes in the API description, built from each route's contract
(:class:`svc_api.education.contract.Op`): parameters from the path and the query model, the body
from the body model, the success reply from the reply model, and the answers every education
route shares (429, 503, the error envelope; 413 on a change) beside the route's own.

Example:
    >>> paths, models = education_paths()
    >>> paths["/education/v1/catalog"]["get"]["operationId"]
    'edu_catalog'
"""

from __future__ import annotations

import re
from typing import Any

from starlette.routing import Route

from svc_api.apidoc.families import headers, ref
from svc_api.education.contract import EduQuery, Op

JsonDict = dict[str, Any]
PREFIX = "/education/v1"
_PARAM = re.compile(r"{([a-z_]+)(?::[a-z]+)?}")
_CHANGES = frozenset({"post", "put", "patch", "delete"})
_SESSION: JsonDict = {"sessionToken": []}
_KEY: JsonDict = {"apiKey": [], "apiSecret": []}
SECURITY = {"public": [{}, _SESSION], "identified": [_SESSION, _KEY], "session": [_SESSION]}
"""A route's access -> who the description says may call it."""
SHARED = {"429": "EduRateLimited", "503": "EduUnavailable", "default": "EduError"}
"""The answers of every education route (``components/responses``)."""


def education_paths() -> tuple[JsonDict, list[type]]:
    """The path items of every education route that declares its contract, and their models.

    Example:
        >>> _, models = education_paths()
        >>> any(m.__name__ == "EduCatalogPage" for m in models)
        True
    """
    from svc_api.education.app import education_app
    from svc_api.education.idempotency import needs_key

    paths: JsonDict = {}
    models: list[type] = []
    for route in education_app().router.routes:
        op = getattr(getattr(route, "endpoint", None), "op", None)
        if op is None or not isinstance(route, Route):
            continue
        path = PREFIX + _PARAM.sub(r"{\1}", route.path)
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            access = route.endpoint.policy.access  # type: ignore[attr-defined]
            key = needs_key(method, PREFIX + route.path)
            paths.setdefault(path, {})[method.lower()] = _operation(op, path, method.lower(), access, key)
        models += [m for m in (op.query, op.body, op.reply) if m is not None]
    return paths, models


def _operation(op: Op, path: str, method: str, access: str, idempotent: bool) -> JsonDict:
    item: JsonDict = {
        "tags": ["education"],
        "operationId": op.operation_id,
        "summary": op.summary,
    }
    if op.description:
        item["description"] = op.description
    item["security"] = list(op.security) if op.security is not None else SECURITY[access]
    parameters = [_path_parameter(op, name) for name in _PARAM.findall(path)]
    if idempotent:
        parameters.append({"$ref": "#/components/parameters/EduIdempotencyKey"})
    parameters += _query_parameters(op.query)
    if parameters:
        item["parameters"] = parameters
    if op.body is not None:
        content = {"application/json": {"schema": ref(op.body.__name__)}}
        item["requestBody"] = {"required": bool(op.body.required_names()), "content": content}
    item["responses"] = _responses(op, method)
    return item


def _path_parameter(op: Op, name: str) -> JsonDict:
    declared = op.path.get(name)
    if declared is None:
        raise ValueError(f"{op.operation_id}: the path parameter {name!r} is not declared")
    if isinstance(declared, str):
        return {"$ref": f"#/components/parameters/{declared}"}
    return {"name": name, "in": "path", "required": True, **declared}


def _query_parameters(model: type[EduQuery]) -> list[JsonDict]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    required = set(schema.get("required", ()))
    out = []
    for name, prop in schema.get("properties", {}).items():
        parameter: JsonDict = {"name": name, "in": "query", "required": name in required}
        if "description" in prop:
            parameter["description"] = prop.pop("description")
        prop.pop("title", None)
        if name in model.repeatable:
            parameter |= {"style": "form", "explode": True}
        parameter["schema"] = prop
        out.append(parameter)
    return out


def _responses(op: Op, method: str) -> JsonDict:
    success: JsonDict = {"description": op.done, "headers": headers()}
    for name in op.headers:
        success["headers"][name] = {"$ref": f"#/components/headers/{name}"}
    if op.content is not None:
        success["content"] = op.content
    elif op.reply is not None:
        success["content"] = {"application/json": {"schema": ref(op.reply.__name__)}}
    out: JsonDict = {str(op.status): success}
    for answer in op.errors:
        out[str(answer.status)] = _answer(answer)
    if method in _CHANGES:
        out.setdefault("413", {"$ref": "#/components/responses/EduBodyTooLarge"})
    for status, shared in SHARED.items():
        out.setdefault(status, {"$ref": f"#/components/responses/{shared}"})
    return out


def _answer(answer: Any) -> JsonDict:
    if answer.shared is not None:
        return {"$ref": f"#/components/responses/{answer.shared}"}
    return {
        "description": answer.text,
        "headers": headers(retry=answer.status in (429, 503)),
        "content": {"application/json": {"schema": ref("EduError")}},
    }
