"""The strategy program: frozen expression-tree nodes and their JSON form.

Numeric nodes (a value per candle): `Num`, `Field`, `Ind`, `Lag`, `Arith`, `PctOff`.
Condition nodes (true/false per candle): `Compare`, `Cross`, `Between`, `Within`, `Streak`,
`Candles`, `NewExtreme`, `TrendEvent`, `After`, `And`, `Or`, `Not`.
Exit nodes (a price per firing candle): `PctTarget`, `AtrTarget`, `LevelTarget`, `RiskReward`.

Nodes are frozen and hashable, so equal sub-trees are computed once, and `to_data` gives a plain
dict with a fixed key order, so the same tree always serialises to the same bytes.

Example:
    >>> node = Compare(">", Field("close"), Ind("ema", (200,)))
    >>> from_data(to_data(node)) == node
    True
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class Node:
    """Base of every node."""

    def children(self) -> tuple[Node, ...]:
        """Direct child nodes, in field order.

        >>> Lag(Field("close"), 1).children()
        (Field(name='close'),)
        """
        out: list[Node] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Node):
                out.append(value)
            elif isinstance(value, tuple):
                out.extend(v for v in value if isinstance(v, Node))
        return tuple(out)

    def walk(self) -> list[Node]:
        """This node and all its descendants, depth first.

        >>> len(Lag(Field("close"), 1).walk())
        2
        """
        out: list[Node] = [self]
        for child in self.children():
            out.extend(child.walk())
        return out


# ---- numeric -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Num(Node):
    """A constant."""

    value: float


@dataclass(frozen=True, slots=True)
class Field(Node):
    """A candle field: open, high, low, close, volume or typical (typical price)."""

    name: str


@dataclass(frozen=True, slots=True)
class Ind(Node):
    """An indicator: vocabulary name, parameters, output line and optional source series."""

    name: str
    params: tuple[float, ...]
    output: str = ""
    source: Node | None = None


@dataclass(frozen=True, slots=True)
class Lag(Node):
    """The value of `expr` `n` candles ago."""

    expr: Node
    n: int


@dataclass(frozen=True, slots=True)
class Arith(Node):
    """`left op right` with op one of + - * /."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class PctOff(Node):
    """`expr` moved by `pct` percent (positive: above, negative: below)."""

    pct: float
    expr: Node


@dataclass(frozen=True, slots=True)
class Tf(Node):
    """`expr` computed on the candles of a higher `timeframe` ("1d", "4h", "1w"), as known at the
    close of each candle: the value of the latest higher-timeframe candle that has closed."""

    expr: Node
    timeframe: str


# ---- conditions --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compare(Node):
    """`left op right` with op one of > < >= <= ==."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Cross(Node):
    """`left` crosses `right` from below (direction "above") or from above ("below")."""

    direction: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Between(Node):
    """`low <= expr <= high`."""

    expr: Node
    low: Node
    high: Node


@dataclass(frozen=True, slots=True)
class Within(Node):
    """`|expr - ref| <= pct% of |ref|`."""

    expr: Node
    pct: float
    ref: Node


@dataclass(frozen=True, slots=True)
class Streak(Node):
    """`expr` rose (or fell) on each of the last `n` candles."""

    direction: str
    n: int
    expr: Node


@dataclass(frozen=True, slots=True)
class Held(Node):
    """`cond` held on each of the last `n` candles, this one included ("the %B closes below 0.2 for
    3 days in a row")."""

    cond: Node
    n: int


@dataclass(frozen=True, slots=True)
class Candles(Node):
    """The last `n` candles were all green (close > open) or all red (close < open)."""

    color: str
    n: int


@dataclass(frozen=True, slots=True)
class NewExtreme(Node):
    """`expr` above the highest (or below the lowest) of its previous `n` values."""

    kind: str
    n: int
    expr: Node


@dataclass(frozen=True, slots=True)
class TrendEvent(Node):
    """A trend-line event: break_up, break_down, return_up or return_down."""

    event: str


@dataclass(frozen=True, slots=True)
class TfCond(Node):
    """`cond` evaluated on the candles of a higher `timeframe`, true on the candle whose close also
    closes a higher candle on which it held ("on the daily chart 3 green candles in a row")."""

    cond: Node
    timeframe: str


@dataclass(frozen=True, slots=True)
class DayEnd(Node):
    """The candle's close ends a UTC day (its close time is a multiple of 24 h): "at the end of the
    day" in an exit rule."""


@dataclass(frozen=True, slots=True)
class DayStart(Node):
    """The candle is the first of its UTC day in the series: the session's opening candle ("at the
    session open", "the first candle of the day")."""


@dataclass(frozen=True, slots=True)
class Pattern(Node):
    """A candle pattern by TA-Lib's definition, completed on this candle: `name` (see
    `vocab.PATTERNS`) and `side`, "bullish" or "bearish" for a pattern that has both, "" for a
    one-sided one (hammer: bullish; shooting star: bearish; doji: neither)."""

    name: str
    side: str = ""


@dataclass(frozen=True, slots=True)
class After(Node):
    """`cond` now, and `prior` true on at least one of the `window` candles before this one
    ("X then Y", "Y after X", "Y within 5 candles after X"; window 1: "right after"). A program
    stored before the window existed meant the previous candle, which is what the default keeps."""

    cond: Node
    prior: Node
    window: int = 1


@dataclass(frozen=True, slots=True)
class And(Node):
    """All items true."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or(Node):
    """Any item true."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Not(Node):
    """Item false."""

    item: Node


# ---- exits -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PctTarget(Node):
    """`pct` percent from the entry, on the profit side (TP) or the loss side (SL)."""

    pct: float


@dataclass(frozen=True, slots=True)
class AtrTarget(Node):
    """`mult` x ATR(`period`) of the signal candle from the entry."""

    mult: float
    period: int


@dataclass(frozen=True, slots=True)
class LevelTarget(Node):
    """At the value of `expr` on the signal candle."""

    expr: Node


@dataclass(frozen=True, slots=True)
class RiskReward(Node):
    """Take profit at `ratio` times the stop distance."""

    ratio: float


@dataclass(frozen=True, slots=True)
class Trailing(Node):
    """A trailing stop: `pct` percent or `atr_mult` x ATR(`atr_period`) of the signal candle behind
    the best price reached, from the entry on or once that price is `after_pct` percent in profit."""

    pct: float = 0.0
    atr_mult: float = 0.0
    atr_period: int = 14
    after_pct: float = 0.0


@dataclass(frozen=True, slots=True)
class NoTarget(Node):
    """No take-profit (or no stop-loss): the trade leaves by its exit rules or at the end."""


CONDITIONS = (
    Compare,
    Cross,
    Between,
    Within,
    Streak,
    Held,
    Candles,
    NewExtreme,
    TrendEvent,
    Pattern,
    DayEnd,
    DayStart,
    TfCond,
    After,
    And,
    Or,
    Not,
)
NUMERIC = (Num, Field, Ind, Lag, Arith, PctOff, Tf)
TARGETS = (PctTarget, AtrTarget, LevelTarget, RiskReward, NoTarget, Trailing)
REGISTRY: dict[str, type[Node]] = {cls.__name__: cls for cls in (*CONDITIONS, *NUMERIC, *TARGETS)}


def to_data(node: Node | None) -> Any:
    """A JSON-ready dict of the tree (``{"node": <class>, <fields in declaration order>}``).

    >>> to_data(Lag(Field("close"), 2))
    {'node': 'Lag', 'expr': {'node': 'Field', 'name': 'close'}, 'n': 2}
    """
    if node is None:
        return None
    out: dict[str, Any] = {"node": type(node).__name__}
    for f in fields(node):
        out[f.name] = _value_to_data(getattr(node, f.name))
    return out


def _value_to_data(value: Any) -> Any:
    if isinstance(value, Node):
        return to_data(value)
    if isinstance(value, tuple):
        return [_value_to_data(v) for v in value]
    return value


def from_data(data: Any) -> Any:
    """Rebuild a tree from `to_data` output; raises ValueError on an unknown node.

    >>> from_data({"node": "Num", "value": 2.0})
    Num(value=2.0)
    """
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("node") not in REGISTRY:
        raise ValueError(f"not a strategy node: {data!r}")
    cls = REGISTRY[data["node"]]
    kwargs = {f.name: _value_from_data(data[f.name]) for f in fields(cls) if f.name in data}
    return cls(**kwargs)


def _value_from_data(value: Any) -> Any:
    if isinstance(value, dict):
        return from_data(value)
    if isinstance(value, list):
        return tuple(_value_from_data(v) for v in value)
    return value
