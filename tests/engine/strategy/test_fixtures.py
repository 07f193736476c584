"""Data-driven language tests: every phrasing in fixtures/phrasings.txt compiles to its canonical
wording (which compiles back to the same strategy), and every malformed input in fixtures/errors.txt
fails with exactly its message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_engine.strategy import Strategy, StrategyCompileError, compile_strategy

FIXTURES = Path(__file__).parent / "fixtures"
LINE = re.compile(r"^(entry|tp|sl|spot_short) \| (long|short) \| (.*?) => (.*)$")
BASE_ENTRY = "close above SMA(20)"


def load(name: str) -> list[tuple[str, str, str, str]]:
    rows = []
    for raw in (FIXTURES / name).read_text().splitlines():
        if raw and not raw.startswith("#"):
            match = LINE.match(raw)
            assert match, f"bad fixture line: {raw!r}"
            rows.append(match.groups())
    return rows


def compile_part(kind: str, side: str, text: str) -> Strategy:
    market = "futures" if side == "short" else "spot"
    if kind == "spot_short":
        return compile_strategy(text, market_type="spot", position_side=side)
    if kind == "entry":
        return compile_strategy(text, market_type=market, position_side=side)
    if kind == "tp":
        return compile_strategy(BASE_ENTRY, text, market_type=market, position_side=side)
    return compile_strategy(BASE_ENTRY, None, text, market_type=market, position_side=side)


PHRASINGS = load("phrasings.txt")


def test_phrasing_fixture_size() -> None:
    inputs = {(k, s, t) for k, s, t, _ in PHRASINGS}
    assert len(inputs) == len(PHRASINGS) >= 150
    assert {(k, s) for k, s, _, _ in PHRASINGS} == {
        (k, s) for k in ("entry", "tp", "sl") for s in ("long", "short")
    }


@pytest.mark.parametrize(("kind", "side", "text", "canonical"), PHRASINGS, ids=[p[2] for p in PHRASINGS])
def test_phrasing(kind: str, side: str, text: str, canonical: str) -> None:
    strategy = compile_part(kind, side, text)
    assert strategy.wording[kind] == canonical
    again = compile_part(kind, side, canonical)
    assert again == strategy
    assert again.to_json() == strategy.to_json()


ERRORS = load("errors.txt")


def test_error_fixture_size() -> None:
    assert len({(k, s, t) for k, s, t, _ in ERRORS}) == len(ERRORS) >= 40


@pytest.mark.parametrize(("kind", "side", "text", "message"), ERRORS, ids=[e[2] or "<empty>" for e in ERRORS])
def test_error(kind: str, side: str, text: str, message: str) -> None:
    with pytest.raises(StrategyCompileError) as info:
        compile_part(kind, side, text)
    assert str(info.value) == message
    err = info.value
    if err.position is not None and err.phrase:
        assert text[err.position :].startswith(err.phrase)


def test_error_fields() -> None:
    with pytest.raises(StrategyCompileError) as info:
        compile_part("entry", "long", "close is above the bolinger upper band")
    err = info.value
    assert (err.phrase, err.position, err.suggestion, err.field) == ("bolinger", 19, "bollinger", "entry")
    assert isinstance(err, ValueError)


def test_settings_errors() -> None:

    with pytest.raises(StrategyCompileError, match="market_type must be one of spot, futures, not 'margin'"):
        compile_strategy("close above SMA(20)", market_type="margin")
    with pytest.raises(StrategyCompileError, match="position_side must be one of long, short, not 'both'"):
        compile_strategy("close above SMA(20)", market_type="futures", position_side="both")
    with pytest.raises(StrategyCompileError, match="signal_mode must be one of"):
        compile_strategy("close above SMA(20)", signal_mode="loud")


mutations = st.tuples(
    st.sampled_from(["delete", "insert", "swap", "truncate"]), st.integers(0, 50), st.integers(0, 50)
)


@settings(max_examples=200, deadline=None)
@given(
    source=st.sampled_from(PHRASINGS),
    donor=st.sampled_from(PHRASINGS),
    edits=st.lists(mutations, min_size=1, max_size=3),
    kind=st.sampled_from(["entry", "tp", "sl"]),
)
def test_mangled_phrasings_fail_cleanly_or_compile_to_a_fixed_point(
    source: tuple[str, ...], donor: tuple[str, ...], edits: list[tuple[str, int, int]], kind: str
) -> None:
    words = source[2].split()
    extra = donor[2].split()
    for op, i, j in edits:
        if not words:
            break
        i %= len(words)
        if op == "delete":
            del words[i]
        elif op == "insert" and extra:
            words.insert(i, extra[j % len(extra)])
        elif op == "swap":
            j %= len(words)
            words[i], words[j] = words[j], words[i]
        else:
            words[i] = words[i][: j % (len(words[i]) + 1)]
    text = " ".join(words)
    try:
        strategy = compile_part(kind, "long", text)
    except StrategyCompileError as err:
        assert str(err)
        return
    again = compile_part(kind, "long", strategy.wording[kind])
    assert again == strategy
