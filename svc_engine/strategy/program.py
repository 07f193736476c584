"""The compiled strategy: entry condition, entry price, exits, sides; wording, JSON and signals.
The signal methods (`evaluate`, `signal_arrays`, ...) come from `StrategySignals` in `signals`.

Example:
    >>> s = compile_strategy("RSI(14) crosses above 30 and close is above EMA(200)")
    >>> s.candle_count, s.indicators
    (200, ['EMA(200)', 'RSI(14)'])
    >>> s.describe().split("; ")[1:]
    ['take profit 2% above entry', 'stop loss 1% below entry']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from svc_engine.strategy import ast as A
from svc_engine.strategy.checks import check_exit, check_tree
from svc_engine.strategy.compiler import lookback, settle
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.exits import parse_exit, parse_exit_rule
from svc_engine.strategy.parser import parse_entry
from svc_engine.strategy.reverse import refuse_reverse
from svc_engine.strategy.signals import MOVE_COLUMNS, SIGNAL_SCHEMA, StrategySignals
from svc_engine.strategy.tokens import Token
from svc_engine.strategy.wording import render, render_exit, render_exit_rule

VERSION = 1
DEFAULT_TP_PCT = 2.0
DEFAULT_SL_PCT = 1.0
MARKET_TYPES = ("spot", "futures")
POSITION_SIDES = ("long", "short")
SIGNAL_MODES = ("signal_orders", "signal_only", "full")

__all__ = [
    "DEFAULT_SL_PCT",
    "DEFAULT_TP_PCT",
    "MARKET_TYPES",
    "MOVE_COLUMNS",
    "POSITION_SIDES",
    "SIGNAL_MODES",
    "SIGNAL_SCHEMA",
    "VERSION",
    "Strategy",
    "compile_strategy",
]


@dataclass(frozen=True, slots=True)
class Strategy(StrategySignals):
    """A compiled strategy program. Build it with `compile_strategy` or `Strategy.from_parts`."""

    entry: A.Node
    tp: A.Node
    sl: A.Node
    entry_price: A.Node | None = None
    market_type: str = "spot"
    position_side: str = "long"
    signal_mode: str = "signal_orders"
    exit: A.Node | None = None
    """Exit condition: closes the position at the next candle's open (docs/exits.md)."""
    hold: int = 0
    """Most candles a trade is held (0: no limit); it then closes at the next candle's open."""
    entry_order: str = "limit"
    """``limit`` (at the entry price) or ``market`` (at the next candle's open)."""
    breakeven: float = 0.0
    """Profit in percent after which the stop moves to the entry (0: never)."""

    @property
    def has_rules(self) -> bool:
        """Whether the strategy uses exit rules, market entries or a missing TP/SL (docs/exits.md),
        which the single-coin simulator runs (the portfolio refuses them).

        >>> compile_strategy("close above 1").has_rules
        False
        """
        none = isinstance(self.tp, A.NoTarget) or isinstance(self.sl, A.NoTarget | A.Trailing)
        moves = self.hold > 0 or self.breakeven > 0
        return self.exit is not None or moves or self.entry_order == "market" or none

    @property
    def candle_count(self) -> int:
        """Candles needed before the first signal: the warm-up of every indicator, plus one.

        >>> compile_strategy("RSI(14) crosses above 30").candle_count
        16
        """
        return max(lookback(n) for n in self._roots()) + 1

    @property
    def warmup_candles(self) -> int:
        """Candles of history that make every value, hence every signal, equal to the whole
        history's: `candle_count`, plus ``ceil(100 / alpha)`` for each recursive smoothing (EMA,
        Wilder's RSI/ATR, MACD, Keltner), composed through sources. Drivers warm chunks up with it.

        >>> compile_strategy("RSI(14) crosses above 30").warmup_candles
        1416
        >>> compile_strategy("SMA(10) crosses above SMA(30)").warmup_candles
        31
        """
        return max(settle(n) for n in self._roots()) + 1

    def _roots(self) -> list[A.Node]:
        nodes = [self.entry, self.tp, self.sl]
        if self.entry_price is not None:
            nodes.append(self.entry_price)
        if self.exit is not None:
            nodes.append(self.exit)
        return nodes

    @property
    def indicators(self) -> list[str]:
        """Canonical names of the indicators used, sorted.

        >>> compile_strategy("close above EMA(20)", "2 x ATR(14)").indicators
        ['ATR(14)', 'EMA(20)']
        """
        names: set[str] = set()
        for root in (self.entry, self.tp, self.sl, self.entry_price):
            for node in root.walk() if root is not None else []:
                if isinstance(node, A.Ind):
                    names.add(render(node))
                elif isinstance(node, A.AtrTarget):
                    names.add(f"ATR({node.period})")
        return sorted(names)

    @property
    def wording(self) -> dict[str, str]:
        """Canonical wording of each part: ``entry``, ``tp``, ``sl``.

        >>> compile_strategy("price > SMA 20", "risk reward 2").wording["tp"]
        'take profit at risk reward 2'
        """
        entry = render(self.entry)
        if self.entry_price is not None:
            entry += f", limit at {render(self.entry_price)}"
        if self.entry_order == "market":
            entry += f", {'buy' if self.position_side == 'long' else 'sell'} at market"
        words = {
            "entry": entry,
            "tp": render_exit("tp", self.position_side, self.tp),
            "sl": render_exit("sl", self.position_side, self.sl),
        }
        if self.exit is not None or self.hold or self.breakeven:
            words["exit"] = render_exit_rule(self.exit, self.hold, self.breakeven)
        return words

    def describe(self) -> str:
        """The whole strategy in canonical words.

        >>> compile_strategy("rsi(14) under 30", "3%", "2%").describe()
        'long when RSI(14) is below 30; take profit 3% above entry; stop loss 2% below entry'
        """
        w = self.wording
        rule = f"; {w['exit']}" if "exit" in w else ""
        return f"{self.position_side} when {w['entry']}; {w['tp']}; {w['sl']}{rule}"

    def to_data(self) -> dict[str, Any]:
        """The stored program as plain data (see `to_json`).

        >>> compile_strategy("close above 1").to_data()["tp"]
        {'node': 'PctTarget', 'pct': 2.0}
        """
        return {
            "version": VERSION,
            "market_type": self.market_type,
            "position_side": self.position_side,
            "signal_mode": self.signal_mode,
            "entry": A.to_data(self.entry),
            "entry_price": A.to_data(self.entry_price),
            "tp": A.to_data(self.tp),
            "sl": A.to_data(self.sl),
        } | self._rule_data()

    def _rule_data(self) -> dict[str, Any]:
        # Only where used, so the programs stored before exit rules keep their exact bytes.
        out: dict[str, Any] = {}
        if self.exit is not None:
            out["exit"] = A.to_data(self.exit)
        if self.hold:
            out["hold"] = self.hold
        if self.entry_order != "limit":
            out["entry_order"] = self.entry_order
        if self.breakeven:
            out["breakeven"] = self.breakeven
        return out

    def to_json(self) -> str:
        """Deterministic JSON of the program: same strategy, same bytes.

        >>> compile_strategy("close above 1").to_json()[:40]
        '{"entry":{"left":{"name":"close","node":'
        """
        return json.dumps(self.to_data(), sort_keys=True, separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Strategy:
        """Load a program written by `to_json`.

        >>> s = compile_strategy("close is above SMA(50)")
        >>> Strategy.from_json(s.to_json()) == s
        True
        """
        data = json.loads(text)
        if data.get("version") != VERSION:
            raise ValueError(f"unsupported strategy version {data.get('version')!r}")
        # Rebuilt through the compiler so a hand-edited program gets every check a sentence gets.
        return compile_strategy(
            A.from_data(data["entry"]),
            A.from_data(data["tp"]),
            A.from_data(data["sl"]),
            entry_price=A.from_data(data["entry_price"]),
            market_type=data["market_type"],
            position_side=data["position_side"],
            signal_mode=data["signal_mode"],
            exit_condition=A.from_data(data.get("exit")),
            hold=int(data.get("hold", 0)),
            entry_order=data.get("entry_order", "limit"),
            breakeven=float(data.get("breakeven", 0.0)),
        )

    @classmethod
    def from_parts(
        cls,
        entry: Any,
        tp: Any = None,
        sl: Any = None,
        *,
        entry_price: Any = None,
        market_type: str = "spot",
        position_side: str = "long",
        signal_mode: str = "signal_orders",
    ) -> Strategy:
        """Build a strategy from builder objects, trees, strings or numbers (a number is a percent).

        >>> from svc_engine.strategy import build as sb
        >>> s = Strategy.from_parts(sb.rsi(14).crosses_above(30), tp=3, sl=sb.atr_target(2, 14))
        >>> s.wording["sl"]
        'stop loss 2 x ATR(14) below entry'
        """
        return compile_strategy(
            entry,
            tp,
            sl,
            market_type=market_type,
            position_side=position_side,
            signal_mode=signal_mode,
            entry_price=entry_price,
        )


def _node_of(value: Any) -> Any:
    return getattr(value, "node", value)


def _check_settings(market_type: str, position_side: str, signal_mode: str) -> None:
    if market_type not in MARKET_TYPES:
        raise StrategyCompileError(
            f"market_type must be one of {', '.join(MARKET_TYPES)}, not {market_type!r}"
        )
    if position_side not in POSITION_SIDES:
        raise StrategyCompileError(
            f"position_side must be one of {', '.join(POSITION_SIDES)}, not {position_side!r}"
        )
    if signal_mode not in SIGNAL_MODES:
        raise StrategyCompileError(
            f"signal_mode must be one of {', '.join(SIGNAL_MODES)}, not {signal_mode!r}"
        )
    if market_type == "spot" and position_side == "short":
        raise StrategyCompileError("a spot strategy cannot go short; use market_type 'futures'")


def _compile_entry(entry: Any, position_side: str) -> tuple[A.Node, A.Node | None, bool]:
    if isinstance(entry, str):
        refuse_reverse(entry, "entry")
        try:
            parsed = parse_entry(entry)
        except StrategyCompileError as err:
            raise err.in_field("entry") from None
        if parsed.side is not None and parsed.side != position_side:
            raise StrategyCompileError(
                f"entry_condition: the condition says {parsed.side} but position_side is {position_side}",
                phrase=entry,
                position=0,
                field="entry",
            )
        return parsed.condition, parsed.price, parsed.market
    node = _node_of(entry)
    if not isinstance(node, A.CONDITIONS):
        raise StrategyCompileError(
            f"entry_condition: expected a condition, got {type(entry).__name__}", field="entry"
        )
    try:
        check_tree(node, render(node))
    except StrategyCompileError as err:
        raise err.in_field("entry") from None
    return node, None, False


def _compile_exit(kind: str, value: Any, side: str) -> A.Node:
    default = DEFAULT_TP_PCT if kind == "tp" else DEFAULT_SL_PCT
    if value is None or (isinstance(value, str) and not value.strip()):
        return A.PctTarget(default)
    try:
        if isinstance(value, str):
            parsed = parse_exit(value)
            check_exit(kind, side, parsed.target, parsed.direction, value, parsed.token)
            return parsed.target
        if isinstance(value, int | float) and not isinstance(value, bool):
            target: A.Node = A.PctTarget(float(value))
        else:
            node = _node_of(value)
            if isinstance(node, A.TARGETS):
                target = node
            elif isinstance(node, A.NUMERIC):
                target = A.LevelTarget(node)
            else:
                raise StrategyCompileError(f"expected a level or a target, got {type(value).__name__}")
        text = render_exit(kind, side, target)
        check_tree(target, text)
        check_exit(kind, side, target, None, text, Token("word", text, 0, len(text)))
        return target
    except StrategyCompileError as err:
        raise err.in_field(kind) from None


def compile_strategy(
    entry_condition: Any,
    tp_condition: Any = None,
    sl_condition: Any = None,
    *,
    market_type: str = "spot",
    position_side: str | None = "long",
    signal_mode: str = "signal_orders",
    entry_price: Any = None,
    exit_condition: Any = None,
    hold: int = 0,
    entry_order: str | None = None,
    breakeven: float = 0.0,
) -> Strategy:
    """Compile a trader's entry, take-profit and stop-loss conditions into a `Strategy`.

    Conditions are sentences (see docs/strategy.md) or builder expressions from
    `svc_engine.strategy.build`. A missing take-profit is 2% from the entry, a missing stop-loss 1%.
    Raises `StrategyCompileError` with the phrase, its position and a suggestion.

    >>> s = compile_strategy("close above SMA(20)", "3%", market_type="futures", position_side="short")
    >>> s.wording["tp"]
    'take profit 3% below entry'
    """
    position_side = position_side or "long"  # the API leaves it out for spot strategies
    _check_settings(market_type, position_side, signal_mode)
    entry, price, market = _compile_entry(entry_condition, position_side)
    if entry_price is not None:
        price = _node_of(entry_price)
        if not isinstance(price, A.NUMERIC):
            raise StrategyCompileError("entry_price must be a value such as sv.ema(20)", field="entry")
        check_tree(price, render(price))
    tp = _compile_exit("tp", tp_condition, position_side)
    sl = _compile_exit("sl", sl_condition, position_side)
    if isinstance(tp, A.RiskReward) and isinstance(sl, A.NoTarget):
        raise StrategyCompileError("tp_condition: risk reward needs a stop loss to measure", field="tp")
    exit_node, hold, said_breakeven = _compile_rule(exit_condition, hold)
    breakeven = said_breakeven or float(breakeven)
    if breakeven < 0 or breakeven != breakeven:
        raise StrategyCompileError("breakeven must be a profit in percent >= 0", field="exit")
    if isinstance(tp, A.RiskReward) and isinstance(sl, A.Trailing):
        raise StrategyCompileError("tp_condition: risk reward needs a fixed stop loss to measure", field="tp")
    order = entry_order or ("market" if market else "limit")
    if order not in ("limit", "market"):
        raise StrategyCompileError(f"entry_order must be 'limit' or 'market', not {order!r}", field="entry")
    if order == "market" and price is not None:
        raise StrategyCompileError("entry_condition: a market entry has no limit price", field="entry")
    return Strategy(
        entry, tp, sl, price, market_type, position_side, signal_mode, exit_node, hold, order, breakeven
    )


def _compile_rule(value: Any, hold: int) -> tuple[A.Node | None, int, float]:
    """The exit condition (text, builder or tree), the holding time and a break-even move."""
    if not isinstance(hold, int) or isinstance(hold, bool) or hold < 0 or hold > 1_000_000:
        raise StrategyCompileError(f"hold must be a whole number of candles >= 0, not {hold!r}", field="exit")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, hold, 0.0
    if isinstance(value, str):
        refuse_reverse(value, "exit")
    try:
        if isinstance(value, str):
            rule = parse_exit_rule(value)
            return rule.condition, rule.hold or hold, rule.breakeven
        node = _node_of(value)
        if not isinstance(node, A.CONDITIONS):
            raise StrategyCompileError(f"expected a condition, got {type(value).__name__}")
        check_tree(node, render(node))
        return node, hold, 0.0
    except StrategyCompileError as err:
        raise err.in_field("exit") from None
