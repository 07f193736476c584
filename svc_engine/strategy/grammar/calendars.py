"""The grammar table of one calendar phrase ("on Mondays", "at 14:00 UTC", "between 06:00 and
21:00", "at the session open", "the first candle of the day", "at the end of the day"): its first
word -> the parse rules it can start, tried in the grammar's order.

`CALENDARS` maps a word (the token's folded text; ``NUM`` for a number) to its rules; the rules
that read a word after an optional "on"/"at"/"in" (a day name, "weekend", "session opens") can
start at any word and join every entry in their place. A rule takes the parser and returns the
calendar node, or None without moving when its look-ahead does not fit; when none fits the phrase
is not a calendar (`events.calendar` reads one or two).

Example:
    >>> [rule.__name__ for rule in CALENDARS["between"]]
    ['day_name', 'hours_between', 'week_part', 'session_open']
    >>> from svc_engine.strategy.parser import parse_entry
    >>> parse_entry("at the end of the session").condition
    DayEnd()
"""

from __future__ import annotations

from collections.abc import Callable

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.cursor import Cursor
from svc_engine.strategy.grammar.lookahead import at_comparison
from svc_engine.strategy.grammar.values import number_primary
from svc_engine.strategy.tokens import NUM, WORD, Token
from svc_engine.strategy.vocab import DAY_NAMES

Calendar = Callable[[Cursor], A.Node | None]
WEEKDAY, HOUR = A.Ind("weekday", ()), A.Ind("hour", ())
_DAY = ("day", "session")  # as written: the token of "day" reads as a candle unit


def _lead(p: Cursor) -> int:
    """1 past a leading "on", "at" or "in", else 0."""
    return 1 if p.at("on") or p.at("at") or p.at("in") else 0


def _written(p: Cursor, tok: Token) -> str:
    return p.text[tok.pos : tok.end].lower()


def next_day_open(p: Cursor) -> A.Node | None:
    """ "sell at the next day's open" """
    if p.at("at", "next", "candle", "open") and _written(p, p.peek(2)) in _DAY:
        p.i += 4
        return A.DayStart()
    return None


def day_end(p: Cursor) -> A.Node | None:
    """ "at the end of the session" """
    if p.at("at", "end", "of") and _written(p, p.peek(3)) in (*_DAY, "trading day"):
        p.i += 4
        return A.DayEnd()
    return None


def day_name(p: Cursor) -> A.Node | None:
    """ "on Mondays", "at the Friday close": on that day's candles"""
    k = _lead(p)
    word = p.peek(k)
    if word.kind == WORD and word.text in DAY_NAMES and not at_comparison(p, k + 1):
        p.i += k + 1
        p.accept("close")
        return A.Compare("=", WEEKDAY, A.Num(float(DAY_NAMES[word.text])))
    return None


def hours_between(p: Cursor) -> A.Node | None:
    """ "buy between 06:00 and 21:00" """
    if p.at("between") and p.peek(1).kind == NUM and p.peek(2).text == ":":
        p.i += 1
        low = number_primary(p)
        p.expect("and", "'and' in 'between 06:00 and 21:00'")
        return A.Between(HOUR, low, number_primary(p))
    return None


def at_hour(p: Cursor) -> A.Node | None:
    """ "exit at hour 4" """
    if p.at("at", "hour") and p.peek(2).kind == NUM:
        p.i += 2
        return A.Compare("=", HOUR, number_primary(p))
    return None


def clock(p: Cursor) -> A.Node | None:
    """ "... or 15:00" """
    if p.peek().kind == NUM and p.peek(1).text == ":":
        return A.Compare("=", HOUR, number_primary(p))
    return None


def open_of_next_day(p: Cursor) -> A.Node | None:
    """ "sell at the open of the next day" """
    said_at = p.at("at")
    if (p.at("at", "open", "of", "next", "candle") or p.at("open", "of", "next", "candle")) and _written(
        p, p.peek(4 if said_at else 3)
    ) in _DAY:
        p.i += 5 if said_at else 4
        return A.DayStart()
    return None


def week_part(p: Cursor) -> A.Node | None:
    """ "on weekends" (Saturday and Sunday), "on weekdays" """
    k = _lead(p)
    word = p.peek(k)
    if word.text in ("weekend", "weekday") and not at_comparison(p, k + 1):
        p.i += k + 1
        if word.text == "weekend":
            return A.Compare(">=", WEEKDAY, A.Num(6.0))
        return A.Compare("<=", WEEKDAY, A.Num(5.0))
    return None


def opens_at(p: Cursor) -> A.Node | None:
    """ "the candle opens at 14:00", "at 14:00 UTC" """
    lead = 3 if p.at("candle", "open", "at") else (1 if p.at("at") else 0)
    if lead and p.peek(lead).kind == NUM and p.peek(lead + 1).text == ":":
        p.i += lead
        return A.Compare("=", HOUR, number_primary(p))
    return None


def session_open(p: Cursor) -> A.Node | None:
    """The session's first candle: "(at the) session open(s)", "the day opens"."""
    k = _lead(p)
    if _written(p, p.peek(k)) in _DAY and p.peek(k + 1).text in ("open", "opening", "start", "starts"):
        p.i += k + 2
        p.accept("candle")
        return A.DayStart()
    return None


def first_candle(p: Cursor) -> A.Node | None:
    """ "the first candle of the day" """
    j = _lead(p)
    if (
        p.peek(j).text == "first"
        and p.peek(j + 1).text == "candle"
        and p.peek(j + 2).text == "of"
        and _written(p, p.peek(j + 3)) in _DAY
    ):
        p.i += j + 4
        return A.DayStart()
    return None


_ANY = None  # a rule that can start at any word (it reads past an optional "on"/"at"/"in")
_ORDER: tuple[tuple[tuple[str, ...] | None, Calendar], ...] = (
    (("at",), next_day_open),
    (("at",), day_end),
    (_ANY, day_name),
    (("between",), hours_between),
    (("at",), at_hour),
    ((NUM,), clock),
    (("at", "open"), open_of_next_day),
    (_ANY, week_part),
    (("candle", "at"), opens_at),
    (_ANY, session_open),
    (("on", "at", "in", "first"), first_candle),
)


def _in_order(rules: list[Calendar]) -> tuple[Calendar, ...]:
    place = {rule: n for n, (_, rule) in enumerate(_ORDER)}
    return tuple(sorted(set(rules), key=place.__getitem__))


def _table() -> dict[str, tuple[Calendar, ...]]:
    table: dict[str, list[Calendar]] = {}
    for words, rule in _ORDER:
        for word in words or ():
            table.setdefault(word, []).append(rule)
    return {word: _in_order(rules + list(ANYWHERE)) for word, rules in table.items()}


ANYWHERE: tuple[Calendar, ...] = tuple(rule for words, rule in _ORDER if words is _ANY)
"""The rules of a word that starts no rule of its own."""
CALENDARS = _table()
"""The first word of a calendar phrase -> its rules in the grammar's order (``NUM`` keys those a
number starts, `ANYWHERE` those of any word)."""
# A number's text can be a rule's word too ("first"): its rules and the word's, in order.
_NUM_CALENDARS = {word: _in_order([*rules, *CALENDARS[NUM]]) for word, rules in CALENDARS.items()}


def calendar_one(p: Cursor) -> A.Node | None:
    """One calendar phrase at the cursor, or None: the rules its first word can start
    (`CALENDARS`), tried in the grammar's order."""
    tok = p.peek()
    if tok.kind == NUM:
        rules = _NUM_CALENDARS.get(tok.text, CALENDARS[NUM])
    else:
        rules = CALENDARS.get(tok.text, ANYWHERE)
    for rule in rules:
        node = rule(p)
        if node is not None:
            return node
    return None
