"""The parameters of the trend-break detector, with the contract's defaults and their checks.

Example:
    >>> TrendParams.from_kwargs(window=99).window
    99
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class TrendParams:
    """Every knob of ``design/trend-semantics.md``; defaults are the contract's.

    Example:
        >>> TrendParams().left, TrendParams().right, TrendParams().touch_tol
        (10, 5, 0.1)
    """

    left: int = 10
    right: int = 5
    min_gap: int = 5
    window: int = 199
    min_touches: int = 2
    touch_tol: float = 0.1
    break_tol: float = 0.0
    retest_tol: float = 0.2
    retest_min: int = 2
    retest_max: int = 20
    atr_period: int = 14

    @classmethod
    def from_kwargs(cls, **kwargs: object) -> TrendParams:
        """Build from keyword arguments, refusing unknown names and out-of-range values.

        Example:
            >>> TrendParams.from_kwargs(lookback=3)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            ValueError: unknown trend parameter 'lookback'; known: left, right, min_gap, window, ...
        """
        known = [f.name for f in fields(cls)]
        for name in kwargs:
            if name not in known:
                raise ValueError(f"unknown trend parameter {name!r}; known: {', '.join(known)}")
        params = cls(**kwargs)  # type: ignore[arg-type]
        params.check()
        return params

    def check(self) -> None:
        """Raise ``ValueError`` naming the first parameter out of range.

        Example:
            >>> TrendParams(retest_min=30).check()
            Traceback (most recent call last):
            ...
            ValueError: trend parameter retest_max must be >= retest_min (30), got 20
        """
        for name in ("left", "right", "min_gap", "window", "atr_period", "retest_min"):
            _int_at_least(name, getattr(self, name), 1)
        _int_at_least("min_touches", self.min_touches, 2)
        _int_at_least("retest_max", self.retest_max, self.retest_min, "retest_min")
        _int_at_least("window", self.window, self.min_gap, "min_gap")
        for name in ("touch_tol", "break_tol", "retest_tol"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(f"trend parameter {name} must be a finite number >= 0, got {value!r}")


def _int_at_least(name: str, value: object, low: int, low_name: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        bound = f"{low_name} ({low})" if low_name else str(low)
        raise ValueError(f"trend parameter {name} must be >= {bound}, got {value!r}")
