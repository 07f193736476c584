"""The cost of one request's field checks, three ways in one run (issue 33: "measure both on the
request path and choose"): the hand calls the request models replaced, the pydantic model the
dispatcher runs (``accounts.contract.Register``), and a msgspec ``Struct`` running the same rules.
It prints the microseconds per request of each and the difference to the hand calls.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_contract.py --benchmark-only -s``
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from svc_api.accounts.contract import Register
from svc_api.core.contract import NoFields
from svc_api.core.fields import email_address, text

BODY = {"email": "Ana@Example.com", "password": "a-long-password", "platform": "ios", "referral_code": None}
ROUNDS = 20_000


def hand(body: dict[str, Any]) -> tuple[str, str, str, Any]:
    """What the register route did before its model: the same rules, called one by one."""
    platform = text(body.get("platform", "api"), "platform", hi=32)
    return (
        platform,
        email_address(body.get("email")),
        text(body.get("password"), "password", lo=8, hi=256) or "",
        body.get("referral_code"),
    )


def _msgspec() -> Callable[[dict[str, Any]], Any] | None:
    try:
        import msgspec
    except ImportError:
        return None

    class RegisterStruct(msgspec.Struct, frozen=True):
        email: Any = None
        password: Any = None
        platform: Any = "api"
        referral_code: Any = None

        def __post_init__(self) -> None:
            text(self.platform, "platform", hi=32)
            email_address(self.email)
            text(self.password, "password", lo=8, hi=256)

    return lambda body: msgspec.convert(body, RegisterStruct)


def _per_call_us(fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(ROUNDS):
            fn()
        best = min(best, (time.perf_counter() - start) / ROUNDS * 1e6)
    return best


@pytest.mark.benchmark(group="contract")
def test_request_model_cost(benchmark: Any) -> None:
    convert = _msgspec()
    figures = {
        "hand calls": _per_call_us(lambda: hand(BODY)),
        "pydantic Register": _per_call_us(lambda: Register.model_validate(BODY)),
        "pydantic NoFields (account_info)": _per_call_us(lambda: NoFields.model_validate({})),
    }
    if convert is not None:
        figures["msgspec Struct"] = _per_call_us(lambda: convert(BODY))
    benchmark(Register.model_validate, BODY)
    base = figures["hand calls"]
    print()
    for name, us in figures.items():
        print(f"  {name:34s} {us:6.2f} us per request ({us - base:+.2f} us against the hand calls)")
    assert Register.model_validate(BODY).email == hand(BODY)[1]
