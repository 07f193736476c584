"""Static checks: parameter ranges, impossible comparisons, exits on the wrong side.

Each check raises StrategyCompileError quoting the phrase it rejects.

Example:
    >>> from svc_engine.strategy import ast as A
    >>> value_bounds(A.Ind("rsi", (14,)))
    (0.0, 100.0)
"""

from __future__ import annotations

import math

from svc_engine.strategy import ast as A
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.tokens import Token
from svc_engine.strategy.vocab import FIELD_BOUNDS, PATTERNS, SPECS

INF = math.inf
DEFAULT_OUTPUT = {"macd": "line", "stoch": "%k", "dmi": "adx", "supertrend": "line", "stochrsi": "%k"}
# Ranges of single lines where they differ from their indicator's.
OUTPUT_BOUNDS = {
    ("aroon", "oscillator"): (-100.0, 100.0),
    ("supertrend", "direction"): (-1.0, 1.0),
    ("supertrend", "line"): (0.0, INF),
    ("bb", "%b"): (-INF, INF),
    ("bb", "bandwidth"): (0.0, INF),
}


def _error(message: str, text: str, start: int, end: int, suggestion: str | None = None) -> None:
    phrase = text[start:end].strip()
    raise StrategyCompileError(
        f"{message} in {phrase!r} (position {start})", phrase=phrase, position=start, suggestion=suggestion
    )


def check_indicator(
    key: str, params: list[Token], output: str, source: A.Node | None, text: str, start: Token, end: int
) -> A.Ind:
    """Validate parameters and output of an indicator phrase and build its node.

    >>> check_indicator("rsi", [], "", None, "RSI", Token("word", "rsi", 0, 3), 3)
    Ind(name='rsi', params=(14,), output='', source=None)
    """
    spec = SPECS[key]
    where = (text, start.pos, end)
    if len(params) > len(spec.params):
        _error(f"{spec.display} takes at most {len(spec.params)} parameter(s)", *where)
    values: list[float] = []
    for i, param in enumerate(spec.params):
        tok = params[i] if i < len(params) else None
        value = param.default if tok is None else tok.value
        if tok is not None and tok.pct:
            _error(f"the {param.name} of {spec.display} is not a percentage", *where)
        if param.integer and value != int(value):
            _error(f"the {param.name} of {spec.display} must be a whole number, not {value:g}", *where)
        if not param.low <= value <= param.high:
            _error(
                f"the {param.name} of {spec.display} must be between {param.low:g} and "
                f"{param.high:g}, not {value:g}",
                *where,
            )
        values.append(int(value) if param.integer else float(value))
    if key == "macd" and values[0] >= values[1]:
        _error("the fast period of MACD must be shorter than the slow one", *where)
    output = _check_output(spec.key, spec.outputs, output, where)
    if source == A.Field("close"):
        source = None
    if source is not None and not spec.sourced:
        _error(f"{spec.display} is computed from the candles and takes no source series", *where)
    return A.Ind(key, tuple(values), output, source)


def _check_output(key: str, outputs: tuple[str, ...], output: str, where: tuple[str, int, int]) -> str:
    display = SPECS[key].display
    if outputs == ("",):
        if output:
            _error(f"{display} has no {output} line", *where)
        return ""
    if not output:
        if key in DEFAULT_OUTPUT:
            return DEFAULT_OUTPUT[key]
        _error(f"say which {display} line: {', '.join(outputs)}", *where)
    if output not in outputs:
        _error(f"{display} has no {output} line (it has {', '.join(outputs)})", *where)
    return output


def value_bounds(node: A.Node) -> tuple[float, float]:
    """The range a value can take, (-inf, inf) when unknown.

    >>> value_bounds(A.Field("volume"))
    (0.0, inf)
    """
    if isinstance(node, A.Num):
        return (node.value, node.value)
    if isinstance(node, A.Lag):
        return value_bounds(node.expr)
    if isinstance(node, A.Field):
        return FIELD_BOUNDS.get(node.name, (-INF, INF))
    if isinstance(node, A.Ind):
        if (node.name, node.output) in OUTPUT_BOUNDS:
            return OUTPUT_BOUNDS[(node.name, node.output)]
        averages = ("max", "min", "sma", "ema", "wma", "dema", "tema", "hma")
        if node.name in averages and node.source is not None:
            return value_bounds(node.source)
        return SPECS[node.name].bounds
    return (-INF, INF)


def _can_compare(op: str, lo: float, hi: float, c: float) -> bool:
    """Whether `x op c` can hold for some x in [lo, hi]."""
    return {">": hi > c, "<": lo < c, ">=": hi >= c, "<=": lo <= c, "=": lo <= c <= hi}[op]


_FLIP = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "=": "="}


def check_condition(node: A.Node, text: str, start: Token, end: int) -> None:
    """Reject conditions that can never be true, and bad counts.

    >>> from svc_engine.strategy import ast as A
    >>> check_condition(A.Compare(">", A.Ind("rsi", (14,)), A.Num(50.0)), "", Token("num", "", 0, 0), 0)
    """
    where = (text, start.pos, end)
    for item in node.walk():
        if isinstance(item, A.Ind) and item.name == "ichimoku" and item.output == "cloud":
            _error("the Ichimoku cloud is a zone: say 'above the cloud' or 'below the cloud'", *where)
    if isinstance(node, A.Compare | A.Cross):
        _check_pair(node, where)
    elif isinstance(node, A.Between):
        _check_between(node, where)
    elif isinstance(node, A.Within) and node.pct <= 0:
        _error("'within' needs a positive percentage", *where)


# Candle fields that can never exceed (fall below) a range's own source on the same candle.
_WITHIN_HIGH = {"high": {"open", "high", "low", "close", "typical"}, "close": {"close"}}
_WITHIN_LOW = {"low": {"open", "high", "low", "close", "typical"}, "close": {"close"}}


def _beyond_own_range(op: str, left: A.Node, right: A.Node) -> bool:
    """`close > highest high of the last N candles including the current one` can never hold."""
    if not (isinstance(left, A.Field) and isinstance(right, A.Ind) and right.name in ("max", "min")):
        return False
    source = right.source.name if isinstance(right.source, A.Field) else ""
    source = "close" if right.source is None else source
    if right.name == "max" and op in (">", "above"):
        return left.name in _WITHIN_HIGH.get(source, set())
    if right.name == "min" and op in ("<", "below"):
        return left.name in _WITHIN_LOW.get(source, set())
    return False


def _check_pair(node: A.Compare | A.Cross, where: tuple[str, int, int]) -> None:
    left, right = node.left, node.right
    op = node.op if isinstance(node, A.Compare) else node.direction
    if _beyond_own_range(op, left, right) or _beyond_own_range(_FLIP.get(op, op), right, left):
        _error(
            "this can never be true: the range includes the current candle, so price cannot pass it; "
            "say 'the previous N candles' (or 'the last N candles', which in a condition are the N before "
            "the current one)",
            *where,
        )
    if isinstance(left, A.Num) and isinstance(right, A.Num):
        _error("this compares two numbers, which is always true or always false", *where)
    if left == right:
        _error("this compares a value with itself", *where)
    if isinstance(node, A.Compare):
        op, value, const = node.op, left, right
        if isinstance(left, A.Num):
            op, value, const = _FLIP[op], right, left
        if isinstance(const, A.Num):
            lo, hi = value_bounds(value)
            if not _can_compare(op, lo, hi, const.value):
                _error(f"this can never be true: the value stays within [{lo:g}, {hi:g}]", *where)
        return
    if isinstance(right, A.Num):
        lo, hi = value_bounds(left)
        c = right.value
        if (
            (node.direction == "above" and not (lo <= c < hi))
            or (node.direction == "below" and not (lo < c <= hi))
            or (node.direction == "either" and not (lo < c < hi))
        ):
            _error(f"this can never happen: the value stays within [{lo:g}, {hi:g}]", *where)
    elif isinstance(left, A.Num):
        _error("put the changing value first, as in 'RSI(14) crosses above 30'", *where)


def _check_between(node: A.Between, where: tuple[str, int, int]) -> None:
    if isinstance(node.low, A.Num) and isinstance(node.high, A.Num):
        if node.low.value > node.high.value:
            _error(f"the range is empty: {node.low.value:g} is above {node.high.value:g}", *where)
        lo, hi = value_bounds(node.expr)
        if node.high.value < lo or node.low.value > hi:
            _error(f"this can never be true: the value stays within [{lo:g}, {hi:g}]", *where)


def check_exit(kind: str, side: str, target: A.Node, direction: str | None, text: str, tok: Token) -> None:
    """Reject a take-profit or stop-loss on the wrong side of the entry, or with a bad size.

    >>> check_exit("tp", "long", A.PctTarget(2.0), "above", "2%", Token("num", "2%", 0, 2))
    """
    where = (text, tok.pos, len(text))
    label = "take profit" if kind == "tp" else "stop loss"
    profit_up = side == "long"
    wanted = "above" if profit_up == (kind == "tp") else "below"
    if direction in ("above", "below") and direction != wanted:
        _error(f"a {side} {label} must lie {wanted} the entry, not {direction}", *where)
    if isinstance(target, A.PctTarget):
        if target.pct <= 0:
            _error(f"the {label} percentage must be positive", *where)
        if wanted == "below" and target.pct >= 100:
            _error(f"a {label} {target.pct:g}% below the entry would be at or below zero", *where)
    elif isinstance(target, A.AtrTarget):
        if target.mult <= 0:
            _error(f"the ATR multiple of the {label} must be positive", *where)
        if not 1 <= target.period <= 10_000:
            _error("the period of ATR must be between 1 and 10000", *where)
    elif isinstance(target, A.Trailing):
        if kind == "tp":
            _error("a trailing stop is a stop loss, not a take profit", *where)
        if (target.pct > 0) == (target.atr_mult > 0):
            _error("a trailing stop needs one distance: a percentage or N x ATR", *where)
        if not (0 <= target.pct < 100 and target.atr_mult >= 0 and target.after_pct >= 0):
            _error("the trailing distance must lie between 0% and 100%, its start at a profit >= 0", *where)
        if not 1 <= target.atr_period <= 10_000:
            _error("the period of ATR must be between 1 and 10000", *where)
    elif isinstance(target, A.RiskReward):
        if kind == "sl":
            _error("risk reward sets the take profit from the stop; give the stop loss as a level", *where)
        if target.ratio <= 0:
            _error("the reward-to-risk ratio must be positive", *where)
    elif isinstance(target, A.LevelTarget):
        if isinstance(target.expr, A.Num) and target.expr.value <= 0:
            _error(f"a {label} price must be positive", *where)
        hint = level_side(target.expr)
        if hint is not None and hint != ("upper" if wanted == "above" else "lower"):
            lies = "above" if hint == "upper" else "below"
            _error(f"a {side} {label} must lie {wanted} the entry, but this level lies {lies} price", *where)


def level_side(expr: A.Node) -> str | None:
    """Where a level lies relative to price when that is known: "upper", "lower" or None.

    >>> level_side(A.Ind("bb", (20, 2.0), "upper"))
    'upper'
    """
    if isinstance(expr, A.Lag):
        return level_side(expr.expr)
    if isinstance(expr, A.PctOff):
        inner = level_side(expr.expr)
        sign = "upper" if expr.pct > 0 else "lower"
        return sign if inner in (None, sign) else None
    if isinstance(expr, A.Ind):
        if expr.output in ("upper", "lower"):
            return expr.output
        if expr.name == "max" and expr.source in (A.Field("high"), None):
            return "upper"
        if expr.name == "min" and expr.source in (A.Field("low"), None):
            return "lower"
    return None


def check_tree(node: A.Node, text: str) -> None:
    """Run the parser's checks on a tree built in Python (builder or JSON); `text` is its wording.

    >>> try:
    ...     check_tree(A.Ind("rsi", (0,)), "RSI(0)")
    ... except StrategyCompileError as err:
    ...     print(err.message)
    the period of RSI must be between 1 and 10000, not 0 in 'RSI(0)' (position 0)
    """
    whole = Token("word", text, 0, len(text))
    for item in node.walk():
        if isinstance(item, A.Ind) and item.name in SPECS:
            params = [Token("num", str(v), 0, 0, value=float(v)) for v in item.params]
            check_indicator(item.name, params, item.output, item.source, text, whole, len(text))
        elif isinstance(item, A.Pattern) and (
            item.name not in PATTERNS or (item.side or "") not in PATTERNS[item.name].sides
        ):
            _error(f"no candle pattern {item.side} {item.name}".replace("  ", " "), text, 0, len(text))
        elif isinstance(item, A.Lag | A.Streak | A.Candles | A.NewExtreme) and item.n < 1:
            _error("a number of candles must be at least 1", text, 0, len(text))
        elif isinstance(item, A.CONDITIONS):
            check_condition(item, text, whole, len(text))
