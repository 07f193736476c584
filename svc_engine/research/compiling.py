"""Compiling a sweep's strategies: one per combination, from parts shared across the grid.

Example:
    >>> from svc_engine.research.params import Template
    >>> s, _ = compile_combinations(Template.of("close > SMA({n})"), [{"n": 5}, {"n": 9}], {})
    >>> [x.indicators for x in s]
    [['SMA(5)'], ['SMA(9)']]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from svc_engine.research.params import PARTS, Template, split_settings
from svc_engine.sim.settings import Settings
from svc_engine.sim.single import resolve_settings


def compile_combinations(
    template: Template, combos: list[dict[str, Any]], base: Mapping[str, Any]
) -> tuple[list[Any], list[Settings]]:
    """(strategy, validated settings) of every combination: the template rendered with the
    combination's placeholders and compiled from shared parts (:class:`PartsCache`), the settings
    ``base`` with the combination's setting parameters. An error names its combination.

    Example:
        >>> compile_combinations(Template.of("close > SMA({n})"), [{"n": 0}], {})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.strategy.errors.StrategyCompileError: ...
    """
    parts = PartsCache()
    settings_seen: dict[str, Settings] = {}
    strategies, resolved = [], []
    for k, combo in enumerate(combos):
        try:
            values, settings = split_settings(template, combo, base)
            strategies.append(parts.compile(template.render(values)))
            key = json.dumps(settings, sort_keys=True, default=str)
            if key not in settings_seen:
                settings_seen[key] = resolve_settings(settings)
            resolved.append(settings_seen[key])
        except ValueError as error:
            error.add_note(f"in combination {k}: {combo}")
            raise
    return strategies, resolved


class PartsCache:
    """Compiles a grid's strategies part by part: an entry condition is parsed once per distinct
    wording, the take-profit and stop-loss once per distinct pair, the exit rule once per distinct
    wording, and each strategy assembled from them. ``compile_strategy`` checks these parts apart
    from each other (only the take-profit against the stop-loss), so this equals
    ``compile_strategy`` of the whole.

    Example:
        >>> from svc_engine.strategy import compile_strategy
        >>> c = PartsCache()
        >>> c.compile({"entry_condition": "RSI(7) crosses above 30", "tp_condition": "3%"}) == (
        ...     compile_strategy("RSI(7) crosses above 30", "3%"))
        True
        >>> kw = {"entry_condition": "RSI(7) crosses above 30, buy at market",
        ...       "sl_condition": "trailing stop 2%",
        ...       "exit_condition": "move the stop to entry after 1% profit, exit after 5 candles"}
        >>> c.compile(kw) == compile_strategy(**kw)
        True
    """

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], Any] = {}
        self.exits: dict[tuple[str, Any, Any], Any] = {}
        self.rules: dict[tuple[str, Any], Any] = {}

    def compile(self, kwargs: Mapping[str, Any]) -> Any:
        """The ``compile_strategy(**kwargs)`` strategy, from cached parts."""
        from dataclasses import replace

        from svc_engine.strategy import compile_strategy

        if "long_entry" in kwargs:  # two sides: compiled whole (each side's parts are small)
            from svc_engine.strategy.sides import long_short_of

            key = (json.dumps(dict(kwargs), sort_keys=True, default=str), "")
            if key not in self.entries:
                self.entries[key] = long_short_of(kwargs)
            return self.entries[key]
        options = {k: v for k, v in kwargs.items() if k not in PARTS}
        okey = json.dumps(options, sort_keys=True, default=str)
        ekey = (okey, kwargs["entry_condition"])
        if ekey not in self.entries:  # the entry, its price and order type
            self.entries[ekey] = compile_strategy(kwargs["entry_condition"], **options)
        tp, sl, rule = kwargs.get("tp_condition"), kwargs.get("sl_condition"), kwargs.get("exit_condition")
        xkey, rkey = (okey, tp, sl), (okey, rule)
        if xkey not in self.exits:
            self.exits[xkey] = compile_strategy("close > open", tp, sl, **options)
        if rkey not in self.rules:  # the exit condition, holding time and break-even move
            self.rules[rkey] = compile_strategy("close > open", exit_condition=rule, **options)
        x, r = self.exits[xkey], self.rules[rkey]
        return replace(self.entries[ekey], tp=x.tp, sl=x.sl, exit=r.exit, hold=r.hold, breakeven=r.breakeven)
