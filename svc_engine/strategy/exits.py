"""Take-profit and stop-loss phrases -> exit targets.

`2%`, `2 x ATR(14) above entry`, `at the upper Bollinger band`, `risk reward 2` (also `2R`,
`1:2`, `2 times the risk`). The words `take profit`, `stop loss`, `at` are optional; a direction word
(`above`/`below` entry) is returned so the caller can reject an exit on the wrong side.

Example:
    >>> parse_exit("take profit at 2 x ATR(14)").target
    AtrTarget(mult=2.0, period=14)
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_engine.strategy import ast as A
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.grammar.lookahead import at_time_exit
from svc_engine.strategy.parser import DOWN_WORDS, EXIT_PREFIXES, UP_WORDS, Parser
from svc_engine.strategy.tokens import COMMA, END, NUM, WORD, Token

NONE_WORDS = {"take", "profit", "tp", "target", "stop", "loss", "sl", "stoploss"}


@dataclass(frozen=True, slots=True)
class Exit:
    """A parsed take-profit or stop-loss: the target and the direction word if one was said."""

    target: A.Node
    direction: str | None
    token: Token


def parse_exit(text: str) -> Exit:
    """Parse a take-profit or stop-loss condition into a target.

    >>> parse_exit("take profit at 2 x ATR(14)").target
    AtrTarget(mult=2.0, period=14)
    """
    p = Parser(text)
    p.in_exit = True
    bare = [t.text for t in p.toks[:-1]]
    if (
        bare in (["none"], ["no"])
        or (bare[:1] == ["no"] and set(bare[1:]) <= NONE_WORDS)
        or (bare[:1] == ["without"] and set(bare[1:]) <= NONE_WORDS)
    ):
        return Exit(A.NoTarget(), None, p.toks[0])
    if p.peek().kind == NUM and p.peek().pct and p.peek(1).text in ("trailing", "trail"):
        # "a 20% trailing stop": the same as "trailing stop 20%"
        return parse_exit(
            f"trailing stop {text[p.peek().pos : p.peek().end]} {text[p.peek(3).pos :]}".strip()
            if p.peek(2).text == "stop" and p.peek(3).kind != END
            else f"trailing stop {text[p.peek().pos : p.peek().end]}"
        )
    if p.at("trailing") or p.at("trail"):
        return _trailing(p)
    said_roi = any(t.text == "roi" for t in p.toks)
    while p.peek().text in {
        "take",
        "profit",
        "tp",
        "target",
        "stop",
        "loss",
        "sl",
        "stoploss",
        "exit",
        "place",
        "set",
        "put",
        "on",
        "order",
        "of",
        "=",
        "roi",
        "minimal",
        "cut",
    }:
        p.i += 1

    first = p.peek()
    if first.kind == END:
        p.fail("expected a level (a percentage, N x ATR, a band, risk reward N)")
    if said_roi and first.kind == NUM and not first.pct and 0 < first.value < 1 and p.peek(1).kind == END:
        p.i += 1  # "minimal roi 0.05": freqtrade's return on investment, 5%
        return Exit(A.PctTarget(round(first.value * 100, 10)), None, first)
    if first.text == "-" and p.peek(1).kind == NUM:
        fraction = p.peek(1)
        if not fraction.pct and 0 < fraction.value < 1 and p.peek(2).kind == END:
            p.i += 2  # "stoploss -0.05", as freqtrade writes a 5% stop
            return Exit(A.PctTarget(round(fraction.value * 100, 10)), None, fraction)
        p.fail("a take-profit or stop-loss distance must be positive; the side sets its direction")
    direction = None
    if p.accept("at"):
        direction = "at"
    elif p.at_any(UP_WORDS | DOWN_WORDS) and first.kind == WORD:
        direction = "above" if p.take().text in UP_WORDS else "below"
    target = _exit_target(p, direction)
    if isinstance(target, Exit):
        return target
    if p.peek().kind != END:
        p.fail("expected the end of the condition")
    return Exit(target, direction, first)


def _exit_target(p: Parser, direction: str | None) -> A.Node | Exit:
    first = p.peek()
    if p.at("risk") or p.at("rr") or p.at("reward"):
        return _risk_reward(p)
    if first.kind == NUM and p.peek(1).text == ":" and p.peek(2).kind == NUM:
        return _risk_reward(p)  # "a 2:1 reward to risk ratio"
    turtle = _turtle_n(p)
    if turtle is not None:
        return Exit(turtle, direction, first)
    if first.kind == NUM and p.peek(1).text in ("r", "rr"):
        p.i += 2
        return A.RiskReward(first.value)
    if first.kind == NUM and p.peek(1).text in ("times", "x", "*") and p.peek(2).text in ("risk", "stop"):
        p.i += 3
        p.accept("distance")
        p.accept("loss")
        return A.RiskReward(first.value)
    nxt, after = p.peek(1), p.peek(2)
    pct_of_entry = not (
        nxt.text in UP_WORDS | DOWN_WORDS and after.kind != END and after.text not in ("entry", "from")
    )
    if first.kind == NUM and first.pct and pct_of_entry:
        p.i += 1
        for word in ("profit", "gain", "loss", "from", "of"):
            p.accept(word)
        way = _entry_direction(p)
        return Exit(A.PctTarget(first.value), way or direction, first)
    if first.kind == NUM and (p.peek(1).text in ("x", "times", "*", "atr") or p.peek(1).text == "average"):
        return _atr_target(p, direction)
    level = p.value()
    if (
        isinstance(level, A.Arith)
        and level.op == "*"
        and isinstance(level.left, A.Num)
        and isinstance(level.right, A.Ind)
        and level.right.name == "atr"
    ):
        return Exit(A.AtrTarget(level.left.value, int(level.right.params[0])), direction, first)
    return A.LevelTarget(level)


def _trailing(p: Parser) -> Exit:
    """ "trailing stop 2%", "trailing stop of 2 x ATR(14)", "trailing stop 3% after 2% profit"."""
    first = p.take()
    for word in ("stop", "loss", "sl", "of", "at", "by"):
        p.accept(word)
    tok = p.number("the trailing distance (a percentage or N x ATR)")
    if tok.pct:
        target = A.Trailing(pct=tok.value)
    else:
        p.accept("x") or p.accept("times") or p.accept("*")
        atr = p.primary()
        if not (isinstance(atr, A.Ind) and atr.name == "atr"):
            p.fail("expected a percentage or N x ATR(14) after 'trailing stop'", tok)
        assert isinstance(atr, A.Ind)
        target = A.Trailing(atr_mult=tok.value, atr_period=int(atr.params[0]))
    p.accept("behind") and (p.accept("price") or p.accept("high") or True)
    if p.accept("after") or p.accept("once") or p.accept("activated") or p.accept("from"):
        p.accept("at")
        p.accept("price")
        p.accept("is")
        after = p.number("the profit that starts the trailing stop (a percentage)")
        if not after.pct or after.value <= 0:
            p.fail("the trailing stop starts after a positive percentage of profit, as in 'after 1%'", after)
        for word in ("profit", "gain", "in", "up"):
            p.accept(word)
        target = A.Trailing(target.pct, target.atr_mult, target.atr_period, after.value)
    if p.peek().kind != END:
        p.fail("expected the end of the trailing stop (or 'after N% profit')")
    return Exit(target, None, first)


def _entry_direction(p: Parser) -> str | None:
    way = None
    if p.at_any(UP_WORDS | DOWN_WORDS):
        way = "above" if p.take().text in UP_WORDS else "below"
        p.accept("from")
    p.accept("entry") and (p.accept("price") or True)
    return way


def _atr_target(p: Parser, direction: str | None) -> Exit:
    first = p.take()
    p.accept("x") or p.accept("times") or p.accept("*")
    atr = p.primary()
    if not (isinstance(atr, A.Ind) and atr.name == "atr"):
        p.fail("expected ATR after the multiplier, as in '2 x ATR(14)'", first)
    assert isinstance(atr, A.Ind)
    way = _entry_direction(p)
    return Exit(A.AtrTarget(first.value, int(atr.params[0])), way or direction, first)


#: The Turtles' N: the 20-day average true range (Curtis Faith, The Original Turtle Trading Rules).
TURTLE_N = 20


def _turtle_n(p: Parser) -> A.Node | None:
    """ "2N", "2 N below entry", "1/2 N": a multiple of N, the ATR(20)."""
    first = p.peek()
    if first.kind != NUM or first.pct:
        return None
    mult, k = first.value, 1
    if p.peek(1).text == "/" and p.peek(2).kind == NUM and p.peek(2).value > 0:
        mult, k = first.value / p.peek(2).value, 3
    if p.peek(k).text != "n":
        return None
    p.i += k + 1
    return A.AtrTarget(mult, TURTLE_N)


def _risk_reward(p: Parser) -> A.Node:
    for word in ("risk", "/", "to", "reward", "rr", "ratio", "of", "=", "at"):
        p.accept(word)
    tok = p.number("the reward-to-risk ratio")
    if p.accept(":") or p.peek().kind == NUM:
        # "1:2", "2:1", "1 to 3": the reward is the larger part, as traders write either order.
        second = p.number("the second number of the ratio")
        if min(tok.value, second.value) <= 0:
            p.fail("the parts of a ratio must be positive", tok)
        for word in ("reward", "risk", "ratio", "rr"):
            p.accept(word)
        return A.RiskReward(max(tok.value, second.value) / min(tok.value, second.value))
    return A.RiskReward(tok.value)


@dataclass(frozen=True, slots=True)
class ExitRule:
    """An exit in words: a condition that closes the position at the next open, and/or a holding
    time in candles (0: none)."""

    condition: A.Node | None
    hold: int
    breakeven: float = 0.0


def parse_exit_rule(text: str) -> ExitRule:
    """Parse "exit when SMA(10) crosses below SMA(30)", "close the position when RSI rises above 70
    or after 24 candles", "after 48 candles".

    >>> parse_exit_rule("exit when RSI(14) crosses above 70 or after 24 candles").hold
    24
    >>> parse_exit_rule("after 12 candles").condition is None
    True
    """
    p = Parser(text)
    if p.peek().kind == END:
        raise StrategyCompileError("the exit condition is empty", phrase="", position=0)
    for tok in p.toks:
        if tok.text in ("trailing", "trail"):
            p.fail("a trailing stop is a stop loss: give it as the stop, as in 'trailing stop 2%'", tok)
    breakeven = _breakeven(p)
    _skip_frame(p)
    condition: A.Node | None = None
    if _day_end(p):
        condition = A.DayEnd()
    elif not at_time_exit(p) and (p.peek().kind != END or not breakeven):
        if p.peek().kind == END:
            p.fail("expected a condition after 'exit when'")
        condition = p.condition()
    hold = 0
    p.accept("for", "long", "position") or p.accept("for", "short", "position")
    p.accept("then")
    p.accept("sell") or p.accept("exit") or p.accept("cover")  # "if RSI is greater than 70 sell"
    p.accept("or")
    if at_time_exit(p):
        p.i += 1
        hold = p.integer("the number of candles to hold")
        p.i += 1  # "candle"
    if p.peek().kind != END:
        p.fail("expected 'or after N candles' or the end of the exit condition")
    return ExitRule(condition, hold, breakeven)


def _skip_frame(p: Parser) -> None:
    """The words that frame an exit rule: "exit when", "close the position if", "sell once" ("close"
    only with position/trade/out after it: "exit when close falls ..." keeps the close)."""
    while not at_time_exit(p):
        if p.at("close") and p.peek(1).text in (
            "position",
            "trade",
            "out",
            "long",
            "short",
            "all",
            "when",
            "if",
            "once",
        ):
            p.i += 2
        elif p.at("at", "close") and p.peek(2).text in ("when", "if", "once"):
            p.i += 3  # "sell at the close when ..."
        elif p.peek().text in EXIT_PREFIXES and p.peek().text != "close":
            p.i += 1
        elif p.peek().text in ("long", "short") and p.i and p.toks[p.i - 1].text in EXIT_PREFIXES:
            p.i += 1  # "exit the long when ..."
        else:
            return


def _day_end(p: Parser) -> bool:
    """ "at the end of the day", "at the end of the UTC day", "the day ends", "at the daily close"."""
    start = p.i
    raw = p.text.lower()
    p.accept("at")
    if p.accept("end", "of"):
        p.accept("utc")
        tok = p.peek()
        if tok.text == "candle" and raw[tok.pos : tok.end] in ("day", "session", "trading day"):
            p.i += 1
            return True
    elif (
        p.peek().text == "candle"
        and raw[p.peek().pos : p.peek().end] == "day"
        and p.peek(1).text in ("end", "ends")
        and p.peek(2).kind == END
    ):
        p.i += 2
        return True
    elif p.accept("daily", "close"):
        return True
    p.i = start
    return False


def _breakeven(p: Parser) -> float:
    """ "move the stop to break-even (to entry) after 1% (profit)", then optionally ', ...'."""
    start = p.i
    for word in ("move", "the", "stop", "loss", "sl", "to"):
        p.accept(word)
    if not (p.accept("break", "even") or p.accept("breakeven") or p.accept("entry")):
        p.i = start
        return 0.0
    if not (p.accept("after") or p.accept("once") or p.accept("when")):
        p.fail("say when the stop moves to entry, as in 'move the stop to break-even after 1% profit'")
    p.accept("price") or p.accept("is")
    tok = p.number("the profit that moves the stop to entry (a percentage)")
    if not tok.pct or tok.value <= 0:
        p.fail("the stop moves to entry after a positive percentage of profit, as in 'after 1%'", tok)
    for word in ("profit", "gain", "in", "up"):
        p.accept(word)
    while p.peek().kind == COMMA or p.at("and") or p.at("then"):
        p.i += 1
    return tok.value
