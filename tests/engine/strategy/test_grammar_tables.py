"""The grammar table of a predicate's tail (svc_engine.strategy.grammar.tails): a word that starts
several rules tries them in the grammar's order, and the first whose look-ahead fits wins."""

from __future__ import annotations

import pytest

from svc_engine.strategy import ast as A
from svc_engine.strategy.grammar.tails import NUM_TAILS, TAIL_PARSERS
from svc_engine.strategy.parser import parse_entry


def test_a_shared_word_keeps_the_grammar_order() -> None:
    assert [r.__name__ for r in TAIL_PARSERS["up"]] == ["up_days", "supertrend_side", "moves_by"]
    assert [r.__name__ for r in TAIL_PARSERS["break"]] == ["breaks_out", "crosses"]
    assert [r.__name__ for r in TAIL_PARSERS["rise"]] == ["crosses", "moves_by", "streak"]
    assert [r.__name__ for r in NUM_TAILS] == ["calendar_value", "std_band", "times", "pct_off", "points_off"]


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
    ],
)
def test_the_first_rule_that_fits_wins(text: str, expected: A.Node) -> None:
    assert parse_entry(text).condition == expected
