"""Parsers of environment values, each ``(variable name, raw text) -> value`` raising a
``ValueError`` that names the variable (the tunables of :mod:`svc_api.settings`).

Example:
    >>> int_at_least(1)("WORKERS", "3"), number(positive=True)("SCALE", "2.5"), percent("FEE", "12.5")
    (3, 2.5, 12.5)
    >>> int_at_least(1)("WORKERS", "0")
    Traceback (most recent call last):
    ...
    ValueError: WORKERS must be an integer >= 1, got '0'
"""

from __future__ import annotations

import math
from collections.abc import Callable


def int_at_least(low: int) -> Callable[[str, str], int]:
    def parse(name: str, raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            value = low - 1
        if value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {raw!r}")
        return value

    return parse


def number(*, positive: bool) -> Callable[[str, str], float]:
    def parse(name: str, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
            raise ValueError(f"{name} must be a number {'> 0' if positive else '>= 0'}, got {raw!r}")
        return value

    return parse


def text(name: str, raw: str) -> str:
    return raw


def percent(name: str, raw: str) -> float:
    """A percentage of 0-100 with at most two decimals (a whole number of basis points)."""
    value = number(positive=False)(name, raw)
    if value > 100 or abs(value * 100 - round(value * 100)) > 1e-9:
        raise ValueError(f"{name} must be a percentage of 0-100 with at most two decimals, got {raw!r}")
    return value
