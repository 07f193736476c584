"""The portfolio kernels' typed records (`svc_engine.sim.kernels.args`): built from a book and the
settings in one place, and the divide search over them gives what the portfolio run gives at each
candidate divide."""

from __future__ import annotations

import numpy as np

from svc_engine.research.demo import random_walk
from svc_engine.sim import nb
from svc_engine.sim.divide import divide_candidates, kernel_terms
from svc_engine.sim.kernels.args import Bars, Orders, Rules, Terms
from svc_engine.sim.multi import build_book, simulate_portfolio
from svc_engine.sim.run_args import resolve_settings
from svc_engine.strategy import compile_strategy

SETTINGS = {"commission_pct": 0.1, "spread_pct": 0.05, "max_wait_days": 2, "min_candles_between_signals": 3}


def _book():
    frames = {f"C{i}": random_walk(600, seed=i) for i in range(3)}
    st = compile_strategy("RSI(7) crosses above 40", "2%", "1.5%")
    sigs = {k: st.evaluate(v) for k, v in frames.items()}
    s = resolve_settings(SETTINGS)
    book = build_book(
        frames, sigs, list(frames), s, timeframe="1h", start_ts=None, end_ts=None, market="crypto"
    )
    return frames, sigs, s, book


def test_the_records_carry_the_book_and_the_settings() -> None:
    _, _, s, book = _book()
    bars, orders, rules = book.records()
    terms = kernel_terms(book, s)
    assert isinstance(bars, Bars) and isinstance(orders, Orders) and isinstance(rules, Rules)
    assert bars.n_times == book.union.shape[0] == 600 and bars.off.tolist() == [0, 600, 1200, 1800]
    assert orders.soff[-1] == book.sidx.shape[0] > 0 and orders.tp is book.filtered[1]
    assert isinstance(terms, Terms)
    assert (terms.initial, terms.comm, terms.lev, terms.tf_ms) == (100.0, 0.001, 1.0, 3_600_000)
    assert (terms.wait_ms, terms.gap, terms.sizing, terms.size) == (2 * 86_400_000, 3, nb.SIZE_FRACTION, 1.0)
    assert terms.hs.tolist() == [0.00025] * 3


def test_the_divide_search_on_records_equals_the_portfolio_at_each_divide() -> None:
    frames, sigs, s, book = _book()
    bars, orders, rules = book.records()
    todo = np.asarray(divide_candidates(3), np.int64)
    finals, dds, n_tr, _, _ = nb.divide_search_nb(
        bars, orders, rules, kernel_terms(book, s), book.filtered[0], book.memo, todo
    )
    for x, d in enumerate(todo.tolist()):
        r = simulate_portfolio(frames, sigs, divide=d, timeframe="1h", **SETTINGS)
        assert r.summary["final_balance"] == finals[x] and r.summary["max_drawdown_pct"] == dds[x]
        assert r.summary["total_trades"] == n_tr[x] > 0
    assert len(set(finals.tolist())) == 3  # the divide changes the run
