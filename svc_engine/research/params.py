"""Named parameters in strategy conditions, and the combinations a sweep runs.

A parameter is written ``{name}`` anywhere in a condition's words: ``RSI({n}) crosses above
{level}``, ``take profit {tp}%``, ``stop loss {atr_mult} x ATR(14) below entry``. A name is a Python
identifier. A value replaces its placeholder as written: whole numbers as integers (``14``), other
numbers in their shortest exact form (``2.5``), strings as they are. A parameter named like a
simulation setting (``min_candles_between_signals``, ``position_size_pct``, ...) and used in no
condition sets that setting for its combinations.

Combinations are either a grid (a mapping of name -> values: every combination, the first name
varying slowest) or a list of mappings (exactly those combinations).

Example:
    >>> t = Template.of("RSI({n}) crosses above {level}")
    >>> t.names, t.render({"n": 14, "level": 30.0})["entry_condition"]
    (('level', 'n'), 'RSI(14) crosses above 30')
    >>> combinations({"n": [7, 14], "level": [30, 35]})
    [{'n': 7, 'level': 30}, {'n': 7, 'level': 35}, {'n': 14, 'level': 30}, {'n': 14, 'level': 35}]
"""

from __future__ import annotations

import itertools
import numbers
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from svc_engine.sim.settings import Settings

#: The parts of a strategy a template may hold, as ``compile_strategy`` names them.
PARTS: tuple[str, ...] = (
    "entry_condition",
    "tp_condition",
    "sl_condition",
    "exit_condition",
    "long_entry",
    "short_entry",
)
_SHORT = {
    "entry": "entry_condition",
    "tp": "tp_condition",
    "sl": "sl_condition",
    "exit": "exit_condition",
    "long": "long_entry",
    "short": "short_entry",
}


def format_value(value: Any) -> str:
    """A parameter value as it is written into a condition.

    Example:
        >>> format_value(14), format_value(2.0), format_value(0.1), format_value("EMA(20)")
        ('14', '2', '0.1', 'EMA(20)')
    """
    if hasattr(value, "item") and not isinstance(value, str):  # NumPy scalars
        value = value.item()
    if isinstance(value, bool):
        raise ValueError(f"a parameter value must be a number or words, got {value!r}")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        return str(int(f)) if f.is_integer() else repr(f)
    if isinstance(value, str):
        return value
    raise ValueError(f"a parameter value must be a number or words, got {type(value).__name__}")


def _placeholders(text: str) -> set[str]:
    names: set[str] = set()
    for _, field, spec, conversion in string.Formatter().parse(text):
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise ValueError(f"bad parameter placeholder {{{field}}} in {text!r}: write {{name}}")
        names.add(field)
    return names


@dataclass(frozen=True, slots=True)
class Template:
    """A strategy with ``{name}`` placeholders: its parts and the compile options kept as given."""

    parts: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, Any], ...]
    names: tuple[str, ...]

    @classmethod
    def of(cls, strategy: str | Mapping[str, Any]) -> Template:
        """A template from an entry condition, or a mapping of ``entry``/``tp``/``sl``/``exit`` (or
        their ``compile_strategy`` names) and other ``compile_strategy`` options; ``long`` and
        ``short`` instead of ``entry`` make a two-sided strategy (``sv.long_short``, whose
        options such as ``reverse`` it takes).

        Example:
            >>> Template.of({"entry": "close > SMA({n})", "tp": "{tp}%", "market_type": "spot"}).names
            ('n', 'tp')
        """
        given = {"entry_condition": strategy} if isinstance(strategy, str) else dict(strategy)
        parts, options = {}, {}
        for key, value in given.items():
            name = _SHORT.get(key, key)
            if name in PARTS and value is not None:
                parts[name] = str(value)
            else:
                options[name] = value
        two = "long_entry" in parts or "short_entry" in parts
        if two and not ("long_entry" in parts and "short_entry" in parts and "entry_condition" not in parts):
            raise ValueError(
                "a two-sided sweep strategy needs 'long' and 'short' entry conditions, and no 'entry'"
            )
        if not two and "entry_condition" not in parts:
            raise ValueError("a sweep's strategy needs an entry condition")
        names = sorted(set().union(*(_placeholders(text) for text in parts.values())))
        return cls(tuple(parts.items()), tuple(options.items()), tuple(names))

    def render(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``compile_strategy`` keyword arguments with every placeholder replaced.

        Example:
            >>> Template.of("close > SMA({n})").render({"n": 20})
            {'entry_condition': 'close > SMA(20)'}
        """
        missing = [n for n in self.names if n not in values]
        if missing:
            raise ValueError(f"no value for parameter(s) {', '.join(missing)}")
        text = {n: format_value(values[n]) for n in self.names}
        return {name: part.format(**text) for name, part in self.parts} | dict(self.options)


def combinations(params: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every combination of a grid (first name slowest), or the given list of combinations.

    Example:
        >>> combinations([{"n": 7}, {"n": 9}])
        [{'n': 7}, {'n': 9}]
        >>> combinations({"n": []})
        Traceback (most recent call last):
        ...
        ValueError: parameter 'n' has no value
    """
    if isinstance(params, Mapping):
        names = list(params)
        values = []
        for name in names:
            vs = params[name]
            vs = [vs] if isinstance(vs, str | numbers.Number) else list(vs)
            if not vs:
                raise ValueError(f"parameter {name!r} has no value")
            values.append(vs)
        combos = [dict(zip(names, row, strict=True)) for row in itertools.product(*values)]
    else:
        combos = [dict(c) for c in params]
        keys = {tuple(c) for c in combos}
        if len({frozenset(k) for k in keys}) > 1:
            raise ValueError("every combination of the list must name the same parameters")
    if not combos:
        raise ValueError("no combination to run")
    return combos


def split_settings(
    template: Template, combo: Mapping[str, Any], base: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(condition values, settings) of one combination: names used in the template fill it, names
    of simulation settings override ``base``; any other name is refused.

    Example:
        >>> t = Template.of("close > SMA({n})")
        >>> split_settings(t, {"n": 5, "position_size_pct": 50}, {"spread_pct": 0})
        ({'n': 5}, {'spread_pct': 0, 'position_size_pct': 50})
    """
    values = {k: v for k, v in combo.items() if k in template.names}
    settings = dict(base)
    for key, value in combo.items():
        if key in template.names:
            continue
        if key not in Settings.names():
            raise ValueError(
                f"parameter {key!r} is neither a placeholder of the strategy"
                f" ({', '.join(template.names) or 'none'}) nor a setting"
            )
        settings[key] = value.item() if hasattr(value, "item") else value
    return values, settings
