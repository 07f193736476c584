"""The trader corpus of issue 20: at least 300 conditions with the meaning each must compile to
(>= 97% must), and at least 60 inputs that must be refused (none may compile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_engine.strategy import StrategyCompileError, compile_strategy

CORPUS = Path(__file__).parent / "corpus"


def rows(name: str) -> list[str]:
    return [line for line in (CORPUS / name).read_text().splitlines() if line and not line.startswith("#")]


def meaning(side: str, text: str) -> str:
    settings = {"market_type": "futures", "position_side": "short"} if side == "short" else {}
    return compile_strategy(text, **settings).describe().split("; ")[0]


def test_accepted_corpus_compiles_to_its_meaning() -> None:
    lines = rows("accepted.txt")
    assert len(lines) >= 300
    wrong = []
    for line in lines:
        head, expected = line.split(" => ", 1)
        side, text = head.split(" | ", 1)
        try:
            got = meaning(side, text)
        except StrategyCompileError as err:
            got = f"refused: {err}"
        if got != expected:
            wrong.append((text, expected, got))
    share = 1 - len(wrong) / len(lines)
    print(f"corpus: {len(lines) - len(wrong)}/{len(lines)} = {share:.1%} compile to their meaning")
    assert share >= 0.97, wrong
    assert not wrong, wrong  # today every line does


@pytest.mark.parametrize("line", rows("refused.txt"))
def test_refused_corpus(line: str) -> None:
    text, why = line.split(" => ", 1)
    with pytest.raises(StrategyCompileError) as info:
        compile_strategy(text)
    assert why in str(info.value)


def test_refused_corpus_size() -> None:
    assert len(rows("refused.txt")) >= 60


def test_every_accepted_line_reads_back_to_itself() -> None:
    # describe() shows what will run: its wording compiles to the very same strategy.
    for line in rows("accepted.txt")[:400]:
        head, _ = line.split(" => ", 1)
        side, text = head.split(" | ", 1)
        settings = {"market_type": "futures", "position_side": "short"} if side == "short" else {}
        strategy = compile_strategy(text, **settings)
        assert compile_strategy(strategy.wording["entry"], **settings) == strategy, text


@pytest.mark.parametrize("line", rows("exits.txt"))
def test_exit_corpus(line: str) -> None:
    head, wording = line.split(" => ", 1)
    kind, text = head.split(" | ", 1)
    if kind == "exit":
        strategy = compile_strategy("close above SMA(20)", exit_condition=text)
        assert strategy.wording["exit"] == wording
        assert compile_strategy("close above SMA(20)", exit_condition=wording) == strategy
    else:
        strategy = compile_strategy("close above SMA(20)", None, text)
        assert strategy.wording["sl"] == wording
        assert compile_strategy("close above SMA(20)", None, wording) == strategy
