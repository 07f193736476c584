"""The typed client's transport: one HTTP call per operation, the reply parsed into its model.

Example:
    >>> from svc_api.client import Client
    >>> client = Client("http://127.0.0.1:8000", session_token="tok")
    >>> client.headers()["Authorization"]
    'Bearer tok'
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel

UNSET: Any = type("Unset", (), {"__repr__": lambda self: "UNSET"})()
"""A field left out of the request (the service applies its default)."""

FAMILIES = {
    "user": ("POST", "request_type"),
    "backtest": ("POST", "action"),
    "tradingdata": ("GET", "request_type"),
}


class ApiFailure(Exception):
    """A reply other than success: its HTTP status and the service's error body.

    Example:
        >>> ApiFailure(404, {"error": "not_found"}).error
        'not_found'
    """

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body if isinstance(body, dict) else {"error": str(body)}
        self.error = self.body.get("error")
        self.code = self.body.get("code")
        super().__init__(f"{status} {self.error}" + (f" ({self.code})" if self.code else ""))


class BaseClient:
    """Credentials and the HTTP connection; :class:`~svc_api.client.Client` adds one method per
    operation. ``transport`` lets tests call an ASGI app directly.

    Example:
        >>> BaseClient("http://x", api_key="svk_1", api_secret="s").headers()["X-API-Key"]
        'svk_1'
    """

    def __init__(
        self,
        base_url: str,
        *,
        session_token: str | None = None,
        api_key: str | None = None,
        api_secret: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.session_token = session_token
        self.api_key, self.api_secret = api_key, api_secret
        self.http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)

    def headers(self) -> dict[str, str]:
        """The credential headers of every call."""
        if self.session_token:
            return {"Authorization": f"Bearer {self.session_token}"}
        if self.api_key:
            return {"X-API-Key": self.api_key, "X-API-Secret": self.api_secret or ""}
        return {}

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def __enter__(self) -> BaseClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, family: str, name: str, fields: dict[str, Any], reply: type[BaseModel]) -> Any:
        method, selector = FAMILIES[family]
        sent = {k: v for k, v in fields.items() if v is not UNSET}
        params = {selector: name}
        if method == "GET":
            response = self.http.get(f"/{family}", params={**params, **sent}, headers=self.headers())
        else:
            response = self.http.post(f"/{family}", params=params, json=sent, headers=self.headers())
        try:
            body = response.json()
        except ValueError:
            body = response.text
        if response.status_code != 200:
            raise ApiFailure(response.status_code, body)
        return reply.model_validate(body["data"] if family == "user" else body)
