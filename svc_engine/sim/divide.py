"""The ``recommended_divide`` search of a portfolio (`../shared/design/engine-semantics.md` section 6): every
candidate divide swept over the same book, the best ``return_dd_score`` chosen; and the kernel settings the
portfolio sweeps share.

Example:
    >>> divide_candidates(7)
    [1, 2, 3, 4, 5, 6]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from svc_engine.sim import nb, run_args, stats
from svc_engine.sim.book import Book
from svc_engine.sim.kernels.args import Terms
from svc_engine.sim.settings import Settings

DIVIDE_CANDIDATES: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20)


def kernel_terms(book: Book, s: Settings) -> Terms:
    """The money and timing settings of the portfolio kernels (:class:`~svc_engine.sim.kernels.args.Terms`):
    those of :func:`~svc_engine.sim.run_args.kernel_terms` with the divide rule's sizing unless
    ``sizing`` is ``risk`` or ``quantity`` (``position_size_pct`` does not apply to a portfolio)."""
    sizing = None if s.sizing != "fraction" else (nb.SIZE_FRACTION, 1.0)
    return run_args.kernel_terms(s, book.hs, book.tf_ms, sizing)


def divide_candidates(n_coins: int) -> list[int]:
    """The divides the search tries: the fixed set, none above the number of coins.

    Example:
        >>> divide_candidates(3)
        [1, 2, 3]
    """
    return [d for d in DIVIDE_CANDIDATES if d <= n_coins]


def recommend_divide(book: Book, s: Settings, requested: int | None = None) -> dict[str, Any]:
    """Sweep every candidate divide and pick the best ``return_dd_score`` (section 6). The divide
    the caller ``requested`` is a candidate too (up to the number of coins, the bound of every
    candidate), so the recommendation never scores worse than it.

    Example:
        >>> recommend_divide.__name__
        'recommend_divide'
    """
    n = len(book.coins)
    tried = divide_candidates(n)
    if requested is not None and requested not in tried and requested <= n:
        tried = sorted([*tried, requested])
    todo = np.asarray(tried + ([] if n in tried else [n]), np.int64)
    bars, orders, rules = book.records()
    finals, dds, n_tr, no_slot, max_open = nb.divide_search_nb(
        bars, orders, rules, kernel_terms(book, s), book.filtered[0], book.memo, todo
    )
    rows = [
        {
            "divide": int(todo[x]),
            "final_balance": float(finals[x]),
            "total_return_pct": stats.total_return_pct(float(finals[x]), s.initial_balance),
            "max_drawdown_pct": float(dds[x]),
            "total_trades": int(n_tr[x]),
            "skipped_no_slot": int(no_slot[x]),
            "score": stats.return_dd_score(float(finals[x]), float(dds[x])),
        }
        for x in range(len(tried))
    ]
    best = stats.pick_best(tried, [r["score"] for r in rows])
    chosen = rows[tried.index(best)]
    return {
        "divide": best,
        "value": best,
        "final_balance": chosen["final_balance"],
        "total_return_pct": chosen["total_return_pct"],
        "max_drawdown_pct": chosen["max_drawdown_pct"],
        "max_concurrent_signals": int(max_open[list(todo).index(n)]),
        "candidates": rows,
        "method": "return_dd_score",
    }
