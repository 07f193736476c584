"""Canonical wording: the tree back to words, one fixed phrasing per node, that parses to the same tree.

Example:
    >>> from svc_engine.strategy import ast as A
    >>> render(A.And((A.Cross("above", A.Ind("rsi", (14,)), A.Num(30.0)),
    ...               A.Compare(">", A.Field("close"), A.Ind("ema", (200,))))))
    'RSI(14) crosses above 30 and close is above EMA(200)'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc_engine.strategy import ast as A
from svc_engine.strategy.vocab import DAY_NAMES, SPECS

COMPARE_WORDS = {">": "is above", "<": "is below", ">=": "is at least", "<=": "is at most", "=": "equals"}
ARITH_WORDS = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}
FIELD_WORDS = {"typical": "typical price"}
TREND_WORDS = {
    "break_up": "a trend line breaks upward",
    "break_down": "a trend line breaks downward",
    "break": "a trend line breaks",
    "return_up": "price returns to the trend line broken upward",
    "return_down": "price returns to the trend line broken downward",
    "return": "price returns to the broken trend line",
}


def fmt(value: float) -> str:
    """A number as written: no trailing ``.0``.

    >>> fmt(2.0), fmt(1.5), fmt(-0.25)
    ('2', '1.5', '-0.25')
    """
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def render(node: A.Node) -> str:
    """Canonical wording of a condition or a value.

    >>> from svc_engine.strategy import ast as A
    >>> render(A.Lag(A.Field("close"), 1))
    'previous close'
    """
    method = _RENDERERS.get(type(node))
    if method is None:
        raise TypeError(f"no wording for {type(node).__name__}")
    return method(node)


def render_exit_rule(condition: A.Node | None, hold: int, breakeven: float = 0.0) -> str:
    """Canonical wording of an exit rule ("" when there is none).

    >>> from svc_engine.strategy import ast as A
    >>> render_exit_rule(A.Cross("below", A.Ind("sma", (10,)), A.Ind("sma", (30,))), 24)
    'exit when SMA(10) crosses below SMA(30) or after 24 candles'
    """
    parts = []
    if condition is not None:
        parts.append(f"exit when {render(condition)}")
    if hold:
        parts.append(f"after {hold} candles" if parts else f"exit after {hold} candles")
    rule = " or ".join(parts)
    if breakeven:
        move = f"move the stop to entry after {fmt(breakeven)}% profit"
        return f"{move}, {rule}" if rule else move
    return rule


def render_exit(kind: str, side: str, target: A.Node) -> str:
    """Canonical wording of a take-profit ("tp") or stop-loss ("sl") for a position side.

    >>> from svc_engine.strategy import ast as A
    >>> render_exit("sl", "short", A.PctTarget(1.0))
    'stop loss 1% above entry'
    """
    label = "take profit" if kind == "tp" else "stop loss"
    if isinstance(target, A.NoTarget):
        return f"no {label}"
    if isinstance(target, A.Trailing):
        size = f"{fmt(target.pct)}%" if target.pct else f"{fmt(target.atr_mult)} x ATR({target.atr_period})"
        after = f" after {fmt(target.after_pct)}% profit" if target.after_pct else ""
        return f"trailing stop {size}{after}"
    up = (side == "long") == (kind == "tp")
    way = "above" if up else "below"
    if isinstance(target, A.PctTarget):
        return f"{label} {fmt(target.pct)}% {way} entry"
    if isinstance(target, A.AtrTarget):
        return f"{label} {fmt(target.mult)} x ATR({target.period}) {way} entry"
    if isinstance(target, A.RiskReward):
        return f"{label} at risk reward {fmt(target.ratio)}"
    assert isinstance(target, A.LevelTarget)
    return f"{label} at {render(target.expr)}"


# ---- values --------------------------------------------------------------------------------------

_ADDITIVE = 1
_MULTIPLICATIVE = 2
_ATOM = 3


def _level(node: A.Node) -> int:
    if isinstance(node, A.Arith):
        return _ADDITIVE if node.op in "+-" else _MULTIPLICATIVE
    if isinstance(node, A.PctOff) or (isinstance(node, A.Num) and node.value < 0):
        return _MULTIPLICATIVE
    return _ATOM


def _wrap(node: A.Node, minimum: int) -> str:
    text = render(node)
    return f"({text})" if _level(node) < minimum else text


def _num(node: A.Num) -> str:
    return fmt(node.value)


def _field(node: A.Field) -> str:
    return FIELD_WORDS.get(node.name, node.name)


def _ind(node: A.Ind) -> str:
    spec = SPECS[node.name]
    params = ", ".join(fmt(p) for p in node.params)
    if node.name in ("max", "min"):
        return _range(node, previous=False)
    if node.name == "roct":
        base = f"ROC over {_span(int(node.params[0]))}"
        return base + (f" of {_wrap(node.source, _ATOM)}" if node.source is not None else "")
    if node.name == "vwap":
        base = "VWAP" if node.params == (0,) else f"VWAP({params})"
    elif node.name == "macd":
        base = f"MACD {node.output}({params})"
    elif node.name == "stoch":
        base = f"stochastic {node.output.upper()}({params})"
    elif node.name == "bb" and node.output == "%b":
        base = f"Bollinger %B({params})"
    elif node.name == "bb":
        base = (
            f"Bollinger bandwidth({params})"
            if node.output == "bandwidth"
            else f"{node.output} Bollinger band({params})"
        )
    elif node.name in ("keltner", "donchian"):
        base = f"{node.output} {spec.display} channel({params})"
    elif node.name == "dmi":
        base = f"{node.output.upper()}({params})"
    elif node.name == "supertrend":
        base = f"Supertrend({params})" if node.output == "line" else f"Supertrend direction({params})"
    elif node.name == "stochrsi":
        base = f"StochRSI {node.output.upper()}({params})"
    elif node.name in ("aroon", "ichimoku"):
        base = f"{spec.display} {node.output}({params})"
    elif not node.params:
        base = spec.display
    else:
        base = f"{spec.display}({params})"
    if node.source is not None:
        base += f" of {_wrap(node.source, _ATOM)}"
    return base


def _span(minutes: int) -> str:
    """A span of time in its largest whole unit: ``4 hours``, ``2 weeks``, ``90 minutes``."""
    for unit, size in (("week", 10_080), ("hour", 60), ("minute", 1)):
        if minutes % size == 0:
            count = minutes // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    raise AssertionError(minutes)


_WEEKDAY = A.Ind("weekday", ())
_DAY_WORDS = {number: name.capitalize() for name, number in DAY_NAMES.items()}


def _side(node: A.Node, subject: A.Node) -> str:
    """A side of a comparison; a day of the week by its name ("day of week equals Monday")."""
    if subject == _WEEKDAY and isinstance(node, A.Num) and node.value in _DAY_WORDS:
        return _DAY_WORDS[int(node.value)]
    return render(node)


def _is_range(node: A.Node | None) -> bool:
    return isinstance(node, A.Ind) and node.name in ("max", "min")


def _range(node: A.Ind, previous: bool) -> str:
    """``highest close of the last 20 candles including the current candle``, or of ``the previous
    20 candles`` (the range lagged by one candle, as a channel is drawn)."""
    source = _wrap(node.source, _ATOM) if node.source is not None else "close"
    inner = node.source.expr if isinstance(node.source, A.Lag) and node.source.n == 1 else node.source
    if _is_range(inner) and not source.startswith("("):
        source = f"({source})"  # the inner range's period phrase would otherwise end the outer one
    n = ", ".join(fmt(p) for p in node.params)
    span = f"the previous {n} candles" if previous else f"the last {n} candles including the current candle"
    return f"{SPECS[node.name].display} {source} of {span}"


TF_WORDS = {"1d": "daily", "1w": "weekly", "1h": "hourly"}


def _tf(node: A.Tf) -> str:
    word = TF_WORDS.get(node.timeframe, node.timeframe)
    return f"{word} {_wrap(node.expr, _ATOM)}"


def _lag(node: A.Lag) -> str:
    if node.n == 1 and isinstance(node.expr, A.Field):
        return f"previous {render(node.expr)}"
    if node.n == 1 and isinstance(node.expr, A.Ind) and _is_range(node.expr):
        return _range(node.expr, previous=True)
    unit = "candle" if node.n == 1 else "candles"
    # "EMA(10) of RSI(14) 1 candle ago" would lag the source; parenthesise the whole indicator.
    sourced = (
        isinstance(node.expr, A.Ind) and node.expr.source is not None and node.expr.name not in ("max", "min")
    )
    inner = f"({render(node.expr)})" if sourced else _wrap(node.expr, _ATOM)
    return f"{inner} {node.n} {unit} ago"


def _arith(node: A.Arith) -> str:
    own = _level(node)
    right_min = own + 1  # operators associate to the left
    return f"{_wrap(node.left, own)} {ARITH_WORDS[node.op]} {_wrap(node.right, right_min)}"


def _pctoff(node: A.PctOff) -> str:
    way = "above" if node.pct > 0 else "below"
    return f"{fmt(abs(node.pct))}% {way} {_wrap(node.expr, _ATOM)}"


# ---- conditions ----------------------------------------------------------------------------------


def _compare(node: A.Compare) -> str:
    right = node.right
    if isinstance(right, A.PctOff) and (node.op, right.pct > 0) in ((">", True), ("<", False)):
        return f"{render(node.left)} is {render(right)}"
    if isinstance(right, A.PctOff) and right.pct < 0 and node.op in (">=", "<="):
        # below a level, "at least N% below" is the smaller side (<=), "at most N% below" the larger
        word = "at least" if node.op == "<=" else "at most"
        return f"{render(node.left)} is {word} {render(right)}"
    return f"{render(node.left)} {COMPARE_WORDS[node.op]} {_side(right, node.left)}"


def _cross(node: A.Cross) -> str:
    if node.direction == "either":
        return f"{render(node.left)} crosses {render(node.right)}"
    return f"{render(node.left)} crosses {node.direction} {render(node.right)}"


def _between(node: A.Between) -> str:
    low, high = _side(node.low, node.expr), _side(node.high, node.expr)
    return f"{render(node.expr)} is between {low} and {high}"


def _within(node: A.Within) -> str:
    return f"{render(node.expr)} is within {fmt(node.pct)}% of {render(node.ref)}"


def _streak(node: A.Streak) -> str:
    verb = "rises" if node.direction == "rise" else "falls"
    return f"{render(node.expr)} {verb} for {node.n} candles in a row"


def _candles(node: A.Candles) -> str:
    return f"{node.n} {node.color} candles in a row"


def _new_extreme(node: A.NewExtreme) -> str:
    return f"{render(node.expr)} makes a new {node.n}-candle {node.kind}"


def _trend(node: A.TrendEvent) -> str:
    return TREND_WORDS[node.event]


def _pattern(node: A.Pattern) -> str:
    return f"{node.side} {node.name} pattern" if node.side else f"{node.name} pattern"


def _compound(node: A.Node) -> bool:
    return isinstance(node, A.And | A.Or | A.Not | A.After | A.TfCond)


def _after(node: A.After) -> str:
    def part(n: A.Node) -> str:
        return f"({render(n)})" if _compound(n) else render(n)

    if node.window == 1:
        return f"{part(node.cond)} right after {part(node.prior)}"
    return f"{part(node.cond)} within {node.window} candles after {part(node.prior)}"


def _and(node: A.And) -> str:
    return " and ".join(f"({render(n)})" if isinstance(n, A.Or) else render(n) for n in node.items)


def _or(node: A.Or) -> str:
    return " or ".join(f"({render(n)})" if isinstance(n, A.Or) else render(n) for n in node.items)


def _not(node: A.Not) -> str:
    inner = node.item
    if isinstance(inner, A.Compare | A.Between | A.Within) and render(inner).count(" is ") == 1:
        return render(inner).replace(" is ", " is not ", 1)
    return f"not ({render(inner)})" if isinstance(inner, A.And | A.Or) else f"not {render(inner)}"


_RENDERERS: dict[type, Callable[[Any], str]] = {  # each takes the node type it is keyed by
    A.Num: _num,
    A.Field: _field,
    A.Ind: _ind,
    A.Lag: _lag,
    A.Arith: _arith,
    A.PctOff: _pctoff,
    A.Tf: _tf,
    A.Compare: _compare,
    A.Cross: _cross,
    A.Between: _between,
    A.Within: _within,
    A.Streak: _streak,
    A.Held: lambda node: f"{render(node.cond)} for {node.n} candles in a row",
    A.Candles: _candles,
    A.NewExtreme: _new_extreme,
    A.TrendEvent: _trend,
    A.Pattern: _pattern,
    A.DayEnd: lambda node: "the day ends",
    A.DayStart: lambda node: "the day opens",
    A.TfCond: lambda node: f"on the {TF_WORDS.get(node.timeframe, node.timeframe)} chart {render(node.cond)}",
    A.After: _after,
    A.And: _and,
    A.Or: _or,
    A.Not: _not,
}
