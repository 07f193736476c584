"""The route families in the API description: one OpenAPI operation per selector value.

Each operation of ``/user``, ``/backtest`` and ``/tradingdata`` is written under its own path key,
the family's path with a fragment naming it (``/user#register``): a fragment is never sent, so every
client calls the family's path, and the operation's selector parameter has that one value (its
default too, so generated clients fill it in). Its request and reply schemas come from the
operation's models; its errors are its own :class:`~svc_api.core.contract.ErrorDoc` plus those every
operation of its access shares.

Example:
    >>> from svc_api.routing import USER
    >>> paths, models = family_paths(USER)
    >>> paths["/user#account_info"]["post"]["operationId"]
    'account_info'
"""

from __future__ import annotations

from typing import Any

from svc_api.core.contract import ErrorDoc, Fields
from svc_api.core.dispatch import Family, Operation

JsonDict = dict[str, Any]
STD = "#/components/headers/"
_HEADERS = ("X-Correlation-ID", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
SHARED = {
    "400": "Error",
    "401": "Unauthorized",
    "429": "RateLimited",
    "503": "Unavailable",
}
"""Status -> the shared response (``components/responses``) every operation may answer."""


def ref(name: str) -> JsonDict:
    """A reference to a component schema.

    Example:
        >>> ref("Error")
        {'$ref': '#/components/schemas/Error'}
    """
    return {"$ref": f"#/components/schemas/{name}"}


def headers(*, retry: bool = False) -> JsonDict:
    """The headers every response carries (and ``Retry-After`` with ``retry``).

    Example:
        >>> sorted(headers(retry=True))[0]
        'Retry-After'
    """
    names = _HEADERS + (("Retry-After",) if retry else ())
    return {name: {"$ref": STD + name} for name in names}


def family_paths(family: Family) -> tuple[JsonDict, list[type]]:
    """The path items of every operation of ``family`` and the models they reference; an operation
    without both models is an error (each is declared by them)."""
    paths: JsonDict = {}
    models: list[type] = []
    method = "post" if family.body else "get"
    for name, op in family.operations.items():
        if op.request is None or op.reply is None:
            raise ValueError(f"/{family.name} operation {name!r} declares no request or reply model")
        item = _operation(family, name, op)
        paths[f"/{family.name}#{name}"] = {method: item}
        models += [m for m in (op.request, op.reply) if m is not None]
    return paths, models


def operation_id(family: Family, name: str) -> str:
    """The operationId of a family operation: its name, prefixed on ``/backtest`` (``run`` alone
    would say nothing in a generated client).

    Example:
        >>> from svc_api.routing import BACKTEST
        >>> operation_id(BACKTEST, "run")
        'backtest_run'
    """
    return f"backtest_{name}" if family.name == "backtest" else name


def _operation(family: Family, name: str, op: Operation) -> JsonDict:
    assert op.request is not None and op.reply is not None
    item: JsonDict = {
        "tags": [family.name],
        "operationId": operation_id(family, name),
        "summary": op.summary or f"`{name}`",
        "security": _security(op),
        "parameters": [_selector(family, name)],
    }
    if op.request.__doc__ and op.request.__doc__ != Fields.__doc__:
        item["description"] = op.request.__doc__.strip()
    _request(item, family, op.request)
    item["responses"] = _responses(family, op, ref(op.reply.__name__))
    return item


def _selector(family: Family, name: str) -> JsonDict:
    return {
        "name": family.selector,
        "in": "query",
        "required": True,
        "schema": {"type": "string", "enum": [name], "default": name},
    }


def _security(op: Operation) -> list[JsonDict]:
    session: JsonDict = {"sessionToken": []}
    key: JsonDict = {"apiKey": [], "apiSecret": []}
    if op.access == "public":
        return [{}, session, key]
    return [session] if op.access == "session" else [session, key]


def _request(item: JsonDict, family: Family, model: type[Fields]) -> None:
    if family.body:
        required = bool(model.required_names())
        content = {"application/json": {"schema": ref(model.__name__)}}
        item["requestBody"] = {"required": required, "content": content}
        return
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    required = set(schema.get("required", ()))
    for field, prop in schema.get("properties", {}).items():
        parameter: JsonDict = {"name": field, "in": "query", "required": field in required}
        if "description" in prop:
            parameter["description"] = prop.pop("description")
        prop.pop("title", None)
        parameter["schema"] = prop
        item["parameters"].append(parameter)


def _responses(family: Family, op: Operation, reply: JsonDict) -> JsonDict:
    if family.envelope:
        reply = {
            "type": "object",
            "required": ["ok", "data"],
            "properties": {
                "ok": {"const": True},
                "data": reply,
                "timestamp": {"type": "integer", "description": "The service's time (Unix seconds)."},
            },
        }
    out: JsonDict = {
        "200": {
            "description": "The operation's reply.",
            "headers": headers(),
            "content": {"application/json": {"schema": reply}},
        }
    }
    own: dict[int, list[ErrorDoc]] = {}
    for error in op.errors:
        own.setdefault(error.status, []).append(error)
    statuses = set(own) | {int(s) for s in SHARED}
    if op.access != "public" or op.scope == "trade":
        statuses.add(403)
    for status in sorted(statuses):
        out[str(status)] = _error_response(status, own.get(status, []))
    out["default"] = {"$ref": "#/components/responses/Error"}
    return out


def _error_response(status: int, errors: list[ErrorDoc]) -> JsonDict:
    shared = SHARED.get(str(status), "Error")
    if not errors:
        return {"$ref": f"#/components/responses/{shared}"}
    lines = [f"- `{e.error}`" + (f" (`code: {e.code}`)" if e.code else "") + f": {e.when}" for e in errors]
    if str(status) in SHARED:
        lines.append(f"- and the shared answer of every operation (`components/responses/{shared}`).")
    return {
        "description": "\n".join(lines),
        "headers": headers(retry=status in (429, 503)),
        "content": {"application/json": {"schema": ref("Error")}},
    }
