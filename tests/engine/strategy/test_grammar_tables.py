"""The grammar tables of a predicate's tail (svc_engine.strategy.grammar.tails), of a predicate
without a subject (grammar.starts) and of the words that start a value (grammar.primaries): a word
that starts several rules tries them in the grammar's order, and the first whose look-ahead fits
wins; a rule that skips words without a result hands the rest to the word it stopped at."""

from __future__ import annotations

import pytest

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.calendars import CALENDARS
from svc_engine.strategy.grammar.conditions import AFTER_WORDS
from svc_engine.strategy.grammar.indicators import KEY_PARAMS, KEY_READS, PARAM_FORMS, SPEED_LEADS
from svc_engine.strategy.grammar.numbers import NUMBER_RULES
from svc_engine.strategy.grammar.predicates import TAIL_LEADS
from svc_engine.strategy.grammar.primaries import PRIMARIES
from svc_engine.strategy.grammar.starts import SUBJECTLESS
from svc_engine.strategy.grammar.tails import NUM_TAILS, TAIL_PARSERS
from svc_engine.strategy.grammar.values import SIGNS, TERM_OPS
from svc_engine.strategy.parser import parse_entry


def test_a_shared_word_keeps_the_grammar_order() -> None:
    assert [r.__name__ for r in TAIL_PARSERS["up"]] == ["up_days", "supertrend_side", "moves_by"]
    assert [r.__name__ for r in TAIL_PARSERS["break"]] == ["breaks_out", "crosses"]
    assert [r.__name__ for r in TAIL_PARSERS["rise"]] == ["crosses", "moves_by", "streak"]
    assert [r.__name__ for r in NUM_TAILS] == ["calendar_value", "std_band", "times", "pct_off", "points_off"]
    assert [r.__name__ for _, r in SUBJECTLESS["at"]] == ["calendar", "at_least_run"]
    assert [r.__name__ for _, r in SUBJECTLESS["candle"]] == [
        "day_end",
        "calendar",
        "pattern",
        "candle_color",
        "gap_event",
    ]
    assert [r.__name__ for _, r in PRIMARIES["previous"]] == ["previous_value", "candle_before", "previous"]
    assert [r.__name__ for r in CALENDARS["at"]] == [
        "next_day_open",
        "day_end",
        "day_name",
        "at_hour",
        "open_of_next_day",
        "week_part",
        "opens_at",
        "session_open",
        "first_candle",
    ]
    assert [r.__name__ for r in NUMBER_RULES["candle"]] == [
        "indicator_multiple",
        "candle_extreme",
        "period_of_indicator",
        "same_average",
        "candle_period",
    ]
    assert [f.__name__ for f in PARAM_FORMS["over"]] == ["period_words"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("close is up 4 candles in a row", A.Streak("rise", 4, A.Field("close"))),
        ("Supertrend(10, 3) is up", A.Compare(">", A.Ind("supertrend", (10, 3.0), "direction"), A.Num(0.0))),
        ("close rises above 5", A.Cross("above", A.Field("close"), A.Num(5.0))),
        ("close rises for 3 candles", A.Streak("rise", 3, A.Field("close"))),
        ("close breaks out to a new 50-candle high", A.NewExtreme("high", 50, A.Field("close"))),
        ("close breaks below 5", A.Cross("below", A.Field("close"), A.Num(5.0))),
        ("hour is 14", A.Compare("=", A.Ind("hour", ()), A.Num(14.0))),
        ("close is 2% above 100", A.Compare(">", A.Field("close"), A.PctOff(2.0, A.Num(100.0)))),
        ("close stays above 5", A.Compare(">", A.Field("close"), A.Num(5.0))),
        ("at 14:00 UTC", A.Compare("=", A.Ind("hour", ()), A.Num(14.0))),
        ("at the end of the day", A.DayEnd()),
        (
            "close crosses above 50% of high",
            A.Cross("above", A.Field("close"), A.Arith("*", A.Num(0.5), A.Field("high"))),
        ),
        (
            "close above the 20 candle high",
            A.Compare(">", A.Field("close"), A.Lag(A.Ind("max", (20,), "", A.Field("high")), 1)),
        ),
    ],
)
def test_the_first_rule_that_fits_wins(text: str, expected: A.Node) -> None:
    assert parse_entry(text).condition == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("at least 3 green candles", A.Candles("green", 3)),  # "at least" skipped, the number leads
        ("at the close on Friday", A.Compare("=", A.Ind("weekday", ()), A.Num(5.0))),
        ("three white soldiers", A.Pattern("three white soldiers", "")),  # a number's word is a pattern's
        ("the first candle of the day", A.DayStart()),
        ("the day ends", A.DayEnd()),
        (
            "the current low is above its previous close",
            A.Compare(">", A.Field("low"), A.Lag(A.Field("close"), 1)),
        ),
        ("close is above the previous candle", A.Compare(">", A.Field("close"), A.Lag(A.Field("close"), 1))),
    ],
)
def test_a_skipped_word_hands_over_to_the_next(text: str, expected: A.Node) -> None:
    assert parse_entry(text).condition == expected


def test_the_keyword_tables_name_their_rules() -> None:
    """The word decides: a tail's leading words, an indicator's speed word, the phrases and
    parameters one indicator's name starts, the words of arithmetic and of "after"."""
    assert list(TAIL_LEADS) == ["back", "close", "open"]  # in the order they may follow each other
    assert {w: r.__name__ for w, r in SPEED_LEADS.items()} == {
        "fast": "qualified",
        "slow": "qualified",
        "short": "speed_word",
        "long": "speed_word",
    }
    assert {k: r.__name__ for k, r in KEY_READS.items()} == {
        "rsi": "relative_to_coin",
        "roc": "roc_over_time",
    }
    assert sorted(KEY_PARAMS) == ["bb", "stddev", "zscore"]
    assert TERM_OPS[("divided", "by")] == "/" and SIGNS["minus"] == "-"
    assert AFTER_WORDS[("right", "after")] == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("close crosses back above 5", A.Cross("above", A.Field("close"), A.Num(5.0))),
        ("close opens above 5", A.Compare(">", A.Field("open"), A.Num(5.0))),
        ("close crosses 5 to the upside", A.Cross("above", A.Field("close"), A.Num(5.0))),
        (
            "MACD histogram turns negative",
            A.Cross("below", A.Ind("macd", (12, 26, 9), "histogram"), A.Num(0.0)),
        ),
        ("a resistance trend line breaks", A.TrendEvent("break_up")),
        (
            "close above 5 times 2 divided by 4",
            A.Compare(">", A.Field("close"), A.Arith("/", A.Arith("*", A.Num(5.0), A.Num(2.0)), A.Num(4.0))),
        ),
    ],
)
def test_a_keyword_table_reads_its_phrase(text: str, expected: A.Node) -> None:
    assert parse_entry(text).condition == expected
