"""Scratch arrays: an evaluation of its own writes large indicator arrays into arrays the thread
kept from its previous one (`svc_engine.scratch.keep` / `take`), with the same values."""

from __future__ import annotations

import threading

import numpy as np
import polars as pl
import pytest

from svc_engine import scratch
from svc_engine.indicators.averages import ema_nb, sma_nb
from svc_engine.indicators.momentum import rsi_nb
from svc_engine.indicators.ranges import atr_nb
from svc_engine.strategy import compile_strategy
from svc_engine.strategy.compiler import Context

BIG = scratch.ADVISE_BYTES // 8 + 1_000  # the smallest series whose arrays are kept, and some


@pytest.fixture(autouse=True)
def _nothing_kept() -> None:
    scratch.drop_kept()


def _klines(n: int) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0, 0.002, n)))
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * 60_000,
            "open": close,
            "high": close * 1.001,
            "low": close * 0.999,
            "close": close,
            "volume": rng.lognormal(2.0, 1.0, n),
        }
    )


@pytest.mark.parametrize(
    "kernel",
    [
        lambda x, out=None: rsi_nb(x, 14, out),
        lambda x, out=None: ema_nb(x, 20, out),
        lambda x, out=None: sma_nb(x, 5, out),
        lambda x, out=None: atr_nb(x + 1.0, x - 1.0, x, 14, out),
    ],
)
@pytest.mark.parametrize("size", [3, 40, 1_000])
def test_kernels_write_into_the_given_array_the_values_of_a_fresh_one(kernel, size: int) -> None:  # type: ignore[no-untyped-def]
    x = np.cumsum(np.random.default_rng(size).normal(0, 1, size)) + 100.0
    given = np.full(size, 7.0)  # old contents: every value must be written
    out = kernel(x, given)
    assert out is given
    assert np.array_equal(out, kernel(x), equal_nan=True)


def test_take_gives_back_a_kept_array_of_the_size_once() -> None:
    a, b = np.empty(BIG), np.empty(BIG + 1)
    scratch.keep([a, b, np.empty(10)])  # the small one is left to the allocator
    assert scratch.take(10) is None
    assert scratch.take(BIG) is a and scratch.take(BIG) is None
    assert scratch.take(BIG + 1) is b


def test_kept_bytes_are_capped_newest_first() -> None:
    size = scratch.KEEP_BYTES // 8 // 2  # two fit exactly
    old, mid, new = np.empty(size), np.empty(size), np.empty(size)
    scratch.keep([old])
    scratch.keep([mid])
    scratch.keep([new])
    taken = [scratch.take(size) for _ in range(3)]
    assert taken[0] is new and taken[1] is mid and taken[2] is None


def test_kept_arrays_belong_to_their_thread() -> None:
    scratch.keep([np.empty(BIG)])
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(scratch.take(BIG)))
    worker.start()
    worker.join()
    assert seen == [None] and scratch.take(BIG) is not None


def test_an_evaluation_reuses_its_previous_arrays_and_gives_the_same_signals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    k = _klines(BIG)
    strategy = compile_strategy("RSI(14) crosses above 40 and close is above EMA(50) and close > SMA(30)")
    first = strategy.evaluate(k)
    taken: list[np.ndarray | None] = []
    real = scratch.take
    monkeypatch.setattr(scratch, "take", lambda n: taken.append(real(n)) or taken[-1])
    second = strategy.evaluate(k)
    assert len(taken) == 2 and all(t is not None for t in taken)  # RSI and EMA wrote into kept arrays
    assert first.height > 50 and first.equals(second)
    assert first.equals(strategy.evaluate(k, context=Context(k)))  # a shared context: fresh arrays


def test_a_shared_or_small_context_lends_nothing() -> None:
    assert Context(_klines(BIG)).buffer() is None
    assert Context(_klines(100), scratch=True).buffer() is None
    ctx = Context(_klines(BIG), scratch=True)
    lent = ctx.buffer()
    assert lent is not None and lent.size == BIG
    ctx.release()
    assert not ctx.cache and scratch.take(BIG) is lent
