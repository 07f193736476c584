"""The instrument precision manifest and formatting prices and quantities to it.

``manifest.json`` ships in the package: ``version`` 1, ``updated_at`` (ISO 8601) and, per market, the
group ``defaults`` plus per-symbol overrides of ``price_precision``, ``quantity_precision``,
``tick_size``, ``step_size``, ``min_quantity`` and ``min_notional``. A symbol without an override
(an imported pair, say) takes its market's defaults. Arithmetic is ``Decimal``: a price is rounded to
the nearest tick (half up), a quantity down to the step (never more than the caller holds).

Example:
    >>> format_price("crypto", "BTCUSDT", 91234.5678)
    '91234.57'
    >>> format_quantity("crypto", "BTCUSDT", 0.123456789)
    '0.12345'
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation
from functools import cache
from importlib import resources
from typing import Any

from svc_engine.instruments.universe import check_market

_FIELDS = ("price_precision", "quantity_precision", "tick_size", "step_size", "min_quantity", "min_notional")


@dataclass(frozen=True, slots=True)
class Precision:
    """The exchange rules of one instrument, exact as ``Decimal``.

    Example:
        >>> p = precision("crypto", "DOGEUSDT")
        >>> p.price_precision, p.tick_size, p.min_notional
        (5, Decimal('0.00001'), Decimal('5'))
    """

    market: str
    symbol: str
    price_precision: int
    quantity_precision: int
    tick_size: Decimal
    step_size: Decimal
    min_quantity: Decimal
    min_notional: Decimal

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values: precisions as integers, sizes as numbers.

        Example:
            >>> precision("forex", "USDJPY").to_dict()["tick_size"]
            0.001
        """
        return {
            "market": self.market,
            "symbol": self.symbol,
            **{
                f: (getattr(self, f) if f.endswith("precision") else float(getattr(self, f))) for f in _FIELDS
            },
        }


@cache
def _text() -> str:
    return resources.files("svc_engine.instruments").joinpath("manifest.json").read_text("utf-8")


@cache
def _exact() -> dict[str, Any]:
    doc = json.loads(_text(), parse_float=Decimal)
    for market, group in doc["markets"].items():
        for symbol, over in {"<defaults>": {}, **group["symbols"]}.items():
            _check_rules(market, symbol, {**group["defaults"], **over})
    return doc


def _check_rules(market: str, symbol: str, rules: dict[str, Any]) -> None:
    for size, digits in (("tick_size", "price_precision"), ("step_size", "quantity_precision")):
        value = Decimal(rules[size])
        if value <= 0 or value.quantize(Decimal(1).scaleb(-rules[digits])) != value:
            raise ValueError(
                f"manifest {market}/{symbol}: {size} {value} does not fit {digits} {rules[digits]}"
            )


def manifest() -> dict[str, Any]:
    """The whole precision manifest as JSON-ready data (a fresh copy the caller may change).

    Example:
        >>> doc = manifest()
        >>> doc["version"], sorted(doc["markets"])[0]
        (1, 'commodities')
    """
    return copy.deepcopy(_parsed())


@cache
def _parsed() -> dict[str, Any]:
    return json.loads(_text())


def precision(market: str, symbol: str) -> Precision:
    """The precision rules of one instrument (the market's defaults when it has no override).

    Example:
        >>> precision("crypto", "btcusdt").quantity_precision
        5
    """
    key = check_market(market)
    group = _exact()["markets"][key]
    sym = str(symbol).strip().upper()
    rules = {**group["defaults"], **group["symbols"].get(sym, {})}
    return Precision(
        market=key,
        symbol=sym,
        price_precision=int(rules["price_precision"]),
        quantity_precision=int(rules["quantity_precision"]),
        **{f: Decimal(rules[f]) for f in ("tick_size", "step_size", "min_quantity", "min_notional")},
    )


def _decimal(value: float | int | str | Decimal, what: str) -> Decimal:
    try:
        # str() of a float is its shortest round-trip repr, so 0.1 stays 0.1 rather than 0.1000000000000000055
        exact = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        raise ValueError(f"{what} {value!r} is not a number") from None
    if not exact.is_finite():
        raise ValueError(f"{what} {value!r} is not finite")
    return exact


def _fit(value: Decimal, size: Decimal, digits: int, rounding: str, what: str) -> str:
    try:
        steps = (value / size).to_integral_value(rounding=rounding)
        fitted = (steps * size).quantize(Decimal(1).scaleb(-digits))
    except InvalidOperation:
        raise ValueError(f"{what} {value} is too large to format") from None
    return str(fitted.copy_abs() if fitted.is_zero() else fitted)  # never print "-0.00"


def format_price(market: str, symbol: str, price: float | int | str | Decimal) -> str:
    """A price rounded to the nearest tick and printed with exactly ``price_precision`` decimals.

    Example:
        >>> format_price("crypto", "BTCUSDT", 0.005), format_price("forex", "USDJPY", "151.2")
        ('0.01', '151.200')
    """
    rules = precision(market, symbol)
    return _fit(_decimal(price, "price"), rules.tick_size, rules.price_precision, ROUND_HALF_UP, "price")


def format_quantity(market: str, symbol: str, quantity: float | int | str | Decimal) -> str:
    """A quantity rounded down to the step and printed with exactly ``quantity_precision`` decimals.

    Example:
        >>> format_quantity("crypto", "DOGEUSDT", 1234.99), format_quantity("us_stocks", "AAPL", 3)
        ('1234', '3')
    """
    rules = precision(market, symbol)
    value = _decimal(quantity, "quantity")
    return _fit(value, rules.step_size, rules.quantity_precision, ROUND_DOWN, "quantity")
