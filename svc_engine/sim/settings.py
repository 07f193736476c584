"""The settings of a simulation: one frozen dataclass with the API's defaults, validated once.

Example:
    >>> Settings.from_kwargs(commission_pct=0.1).commission_pct
    0.1
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

FILTER_MODES: tuple[str, ...] = ("clamp", "reject")
INTRABAR_MODES: tuple[str, ...] = ("conservative", "detail")
MARKET_TYPES: tuple[str, ...] = ("spot", "futures")
SIZINGS: tuple[str, ...] = ("fraction", "risk", "quantity")


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting of a backtest, with the defaults of the API (percentages in percent).

    Example:
        >>> s = Settings()
        >>> (s.commission_pct, s.min_candles_between_signals, s.signal_filter_mode)
        (0.2, 4, 'clamp')
    """

    commission_pct: float = 0.2
    position_size_pct: float = 100.0
    min_candles_between_signals: int = 4
    max_wait_days: float = 30.0
    min_profit_pct: float = 0.1
    max_profit_pct: float = 30.0
    min_loss_pct: float = 0.1
    max_loss_pct: float = 50.0
    signal_filter_mode: str = "clamp"
    spread_pct: float | None = None
    intrabar: str = "conservative"
    initial_balance: float = 100.0
    leverage: float = 1.0
    market_type: str = "spot"
    sizing: str = "fraction"
    """How a fill's stake is sized: ``fraction`` (``position_size_pct`` of the balance), ``risk``
    (``risk_pct`` of the balance lost at the stop) or ``quantity`` (``quantity`` units)."""
    risk_pct: float | None = None
    quantity: float | None = None
    risk_free_rate: float = 0.0
    """Yearly risk-free rate as a fraction (0.04 = 4 %), for Sharpe and Sortino."""
    periods_per_year: float | None = None
    """Candles per year for annualising; ``None``: from the timeframe and the market's calendar."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The names of every setting.

        Example:
            >>> Settings.names()[:2]
            ('commission_pct', 'position_size_pct')
        """
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_kwargs(cls, **kw: Any) -> Settings:
        """Build validated settings; unknown names and bad values raise ``ValueError``.

        Example:
            >>> Settings.from_kwargs(min_profit_pct=5, max_profit_pct=1)
            Traceback (most recent call last):
            ...
            ValueError: min_profit_pct (5.0) exceeds max_profit_pct (1.0)
        """
        unknown = sorted(set(kw) - set(cls.names()))
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown}; known settings: {', '.join(cls.names())}")
        values = {name: _coerce(name, value) for name, value in kw.items() if value is not None}
        for nullable in ("spread_pct", "periods_per_year", "risk_pct", "quantity"):
            if nullable in kw and kw[nullable] is None:
                values[nullable] = None
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        """Refuse values out of range, with a message naming the setting.

        Example:
            >>> Settings(leverage=3).validate()
            Traceback (most recent call last):
            ...
            ValueError: spot requires leverage 1 (got 3); use market_type='futures'
        """
        _check_range("commission_pct", self.commission_pct, 0.0, 100.0, low_open=False)
        _check_range("position_size_pct", self.position_size_pct, 0.0, 100.0, low_open=True)
        _check_range("max_wait_days", self.max_wait_days, 0.0, math.inf, low_open=True)
        for name in ("min_profit_pct", "max_profit_pct", "min_loss_pct", "max_loss_pct"):
            _check_range(name, getattr(self, name), 0.0, math.inf, low_open=True)
        _check_range("initial_balance", self.initial_balance, 0.0, math.inf, low_open=True)
        _check_range("leverage", self.leverage, 1.0, 1000.0, low_open=False)
        if self.min_candles_between_signals < 0:
            raise ValueError(
                f"min_candles_between_signals must be >= 0 (got {self.min_candles_between_signals})"
            )
        if not (math.isfinite(self.risk_free_rate) and -1.0 < self.risk_free_rate < 1.0):
            raise ValueError(
                f"risk_free_rate must be a yearly fraction in (-1, 1) (got {self.risk_free_rate!r})"
            )
        if self.periods_per_year is not None:
            _check_range("periods_per_year", self.periods_per_year, 0.0, math.inf, low_open=True)
        if self.spread_pct is not None:
            _check_range("spread_pct", self.spread_pct, 0.0, 100.0, low_open=False)
        _check_pair("min_profit_pct", self.min_profit_pct, "max_profit_pct", self.max_profit_pct)
        _check_pair("min_loss_pct", self.min_loss_pct, "max_loss_pct", self.max_loss_pct)
        _check_choice("signal_filter_mode", self.signal_filter_mode, FILTER_MODES)
        _check_choice("intrabar", self.intrabar, INTRABAR_MODES)
        _check_choice("market_type", self.market_type, MARKET_TYPES)
        _check_choice("sizing", self.sizing, SIZINGS)
        if self.sizing == "risk":
            if self.risk_pct is None:
                raise ValueError("sizing='risk' needs risk_pct, the percent of the balance a stop loses")
            _check_range("risk_pct", self.risk_pct, 0.0, 100.0, low_open=True)
        if self.sizing == "quantity":
            if self.quantity is None:
                raise ValueError("sizing='quantity' needs quantity, the units bought or sold per trade")
            _check_range("quantity", self.quantity, 0.0, math.inf, low_open=True)
        if self.market_type == "spot" and self.leverage != 1:
            raise ValueError(f"spot requires leverage 1 (got {self.leverage:g}); use market_type='futures'")


def _coerce(name: str, value: Any) -> Any:
    if name in ("signal_filter_mode", "intrabar", "market_type", "sizing"):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string (got {value!r})")
        return value
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number (got {value!r})")
    number = float(value)  # any Real: int, float, Fraction, NumPy scalars
    if name == "min_candles_between_signals":
        if number != int(number):
            raise ValueError(f"{name} must be a whole number of candles (got {value!r})")
        return int(number)
    return number


def _check_range(name: str, value: float, low: float, high: float, *, low_open: bool) -> None:
    below = value <= low if low_open else value < low
    if not math.isfinite(value) or below or value > high:
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        upper = "" if math.isinf(high) else f" and <= {high:g}"
        raise ValueError(f"{name} must be a finite number {bound}{upper} (got {value!r})")


def _check_pair(low_name: str, low: float, high_name: str, high: float) -> None:
    if low > high:
        raise ValueError(f"{low_name} ({low!r}) exceeds {high_name} ({high!r})")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)} (got {value!r})")
