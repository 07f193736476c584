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


def csv(name: str, raw: str) -> tuple[str, ...]:
    """Comma-separated words, each stripped, empty ones left out (``"a, b,"``: ``('a', 'b')``)."""
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def symbols(name: str, raw: str) -> tuple[str, ...]:
    """Comma-separated symbols, upper-cased."""
    return tuple(s.upper() for s in csv(name, raw))


def positive_int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


def one_of(choices: tuple[str, ...]) -> Callable[[str, str], str]:
    """One of ``choices``."""

    def parse(name: str, raw: str) -> str:
        if raw not in choices:
            raise ValueError(f"{name} must be one of {', '.join(choices)}, got {raw!r}")
        return raw

    return parse


def timeframes(name: str, raw: str) -> tuple[str, ...]:
    """Comma-separated timeframes of the engine's data schema, at least one."""
    from svc_engine.data.schema import TIMEFRAMES

    frames = csv(name, raw)
    unknown = [tf for tf in frames if tf not in TIMEFRAMES]
    if unknown or not frames:
        raise ValueError(f"{name} must be comma-separated timeframes of {', '.join(TIMEFRAMES)}, got {raw!r}")
    return frames


def plan_days(defaults: tuple[tuple[str, float], ...]) -> Callable[[str, str], tuple[tuple[str, float], ...]]:
    """``plan=days`` pairs, comma-separated (``free=7,pro=90``); a plan left out keeps its default.

    Example:
        >>> plan_days((("free", 7.0), ("pro", 90.0)))("DAYS", "pro=30")
        (('free', 7.0), ('pro', 30.0))
    """

    def parse(name: str, raw: str) -> tuple[tuple[str, float], ...]:
        days = dict(defaults)
        for pair in csv(name, raw):
            plan, _, value = (p.strip() for p in pair.partition("="))
            if plan not in days:
                raise ValueError(f"{name} names plans of {', '.join(days)} as plan=days, got {pair!r}")
            days[plan] = number(positive=True)(name, value)
        return tuple(days.items())

    return parse
