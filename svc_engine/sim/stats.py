"""Summary figures of `../shared/design/engine-semantics.md` section 7, one small function each, on plain
arrays of trades.

``returns`` are the trades' ``max(leverage * r, -1)`` (fractions) and ``profits`` their money
profit. A figure over an empty set is ``None`` (JSON ``null``), never NaN.

Example:
    >>> import numpy as np
    >>> win_rate(np.array([1.0, -2.0, 3.0, 4.0]))
    75.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

DAYS_PER_MONTH = 30.4375
MS_PER_DAY = 86_400_000


def gain_count(profits: np.ndarray) -> int:
    """Trades with a profit above zero.

    Example:
        >>> gain_count(np.array([1.0, 0.0, -1.0]))
        1
    """
    return int(np.count_nonzero(profits > 0))


def loss_count(profits: np.ndarray) -> int:
    """Trades with a profit below zero.

    Example:
        >>> loss_count(np.array([1.0, 0.0, -1.0]))
        1
    """
    return int(np.count_nonzero(profits < 0))


def win_rate(profits: np.ndarray) -> float:
    """Gains per trade in percent; 0 with no trade.

    Example:
        >>> win_rate(np.array([]))
        0.0
    """
    return gain_count(profits) / profits.shape[0] * 100.0 if profits.shape[0] else 0.0


def total_return_pct(final: float, initial: float) -> float:
    """Return of the balance in percent.

    Example:
        >>> total_return_pct(110.0, 100.0)
        10.000000000000009
    """
    return (final / initial - 1.0) * 100.0


def profit_factor(profits: np.ndarray) -> float | None:
    """Summed profit of gains over the absolute summed profit of losses; None with no loss.

    Example:
        >>> profit_factor(np.array([3.0, -1.5]))
        2.0
    """
    losses = profits[profits < 0]
    if losses.shape[0] == 0:
        return None
    return float(profits[profits > 0].sum() / abs(losses.sum()))


def _mean_pct(returns: np.ndarray) -> float | None:
    return float(returns.mean() * 100.0) if returns.shape[0] else None


def avg_profit_per_trade_pct(returns: np.ndarray) -> float | None:
    """Mean trade return in percent.

    Example:
        >>> avg_profit_per_trade_pct(np.array([0.1, -0.05]))
        2.5
    """
    return _mean_pct(returns)


def avg_win_return_pct(returns: np.ndarray, profits: np.ndarray) -> float | None:
    """Mean return of the gains in percent.

    Example:
        >>> avg_win_return_pct(np.array([0.1, -0.05]), np.array([10.0, -5.0]))
        10.0
    """
    return _mean_pct(returns[profits > 0])


def avg_loss_return_pct(returns: np.ndarray, profits: np.ndarray) -> float | None:
    """Mean return of the losses in percent.

    Example:
        >>> avg_loss_return_pct(np.array([0.1, -0.05]), np.array([10.0, -5.0]))
        -5.0
    """
    return _mean_pct(returns[profits < 0])


def best_trade_pct(returns: np.ndarray) -> float | None:
    """Best trade return in percent.

    Example:
        >>> best_trade_pct(np.array([0.1, -0.05]))
        10.0
    """
    return float(returns.max() * 100.0) if returns.shape[0] else None


def worst_trade_pct(returns: np.ndarray) -> float | None:
    """Worst trade return in percent.

    Example:
        >>> worst_trade_pct(np.array([0.1, -0.05]))
        -5.0
    """
    return float(returns.min() * 100.0) if returns.shape[0] else None


def avg_signals_per_month(total_signals: int, first_open_ms: int, last_close_ms: int) -> float:
    """Signals that placed an order per month of 30.4375 days of the series.

    Example:
        >>> avg_signals_per_month(3, 0, 30 * 86_400_000 + 37_800_000)
        3.0
    """
    days = (last_close_ms - first_open_ms) / MS_PER_DAY
    return total_signals / (days / DAYS_PER_MONTH) if days > 0 else 0.0


def mean_pct(distances: np.ndarray) -> float | None:
    """Mean of fractions, in percent (``avg_stop_loss_pct``, ``avg_target_pct``), over the trades
    that have the level (a NaN distance: a trade without it, docs/exits.md); None when none has.

    Example:
        >>> mean_pct(np.array([0.01, np.nan, 0.03])), mean_pct(np.array([np.nan]))
        (2.0, None)
    """
    return _mean_pct(distances[~np.isnan(distances)])


def finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None, recursively through dicts and lists.

    Example:
        >>> finite({"a": float("nan"), "b": [1.0, float("inf")]})
        {'a': None, 'b': [1.0, None]}
    """
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def trade_summary(returns: np.ndarray, profits: np.ndarray) -> dict[str, Any]:
    """The figures that depend on the trades only.

    Example:
        >>> trade_summary(np.array([0.1]), np.array([10.0]))["profit_factor"] is None
        True
    """
    return {
        "total_trades": int(profits.shape[0]),
        "gain_count": gain_count(profits),
        "loss_count": loss_count(profits),
        "win_rate": win_rate(profits),
        "profit_factor": profit_factor(profits),
        "avg_profit_per_trade_pct": avg_profit_per_trade_pct(returns),
        "avg_win_return_pct": avg_win_return_pct(returns, profits),
        "avg_loss_return_pct": avg_loss_return_pct(returns, profits),
        "best_trade_pct": best_trade_pct(returns),
        "worst_trade_pct": worst_trade_pct(returns),
    }


def buy_sell_counts(sides: np.ndarray) -> tuple[int, int]:
    """Executions of complete trades: a long enters with a buy and exits with a sell, a short the
    other way round (``sides`` 1 long, -1 short).

    Example:
        >>> buy_sell_counts(np.array([1, -1, 1]))
        (3, 3)
    """
    longs = int(np.count_nonzero(sides == 1))
    shorts = int(sides.shape[0]) - longs
    return longs + shorts, shorts + longs


def return_dd_score(final_balance: float, max_drawdown_pct: float) -> float:
    """The score of a divide: ``final_balance * (1 - max_drawdown_pct / 200)``.

    Example:
        >>> return_dd_score(120.0, 10.0)
        114.0
    """
    return final_balance * (1.0 - max_drawdown_pct / 200.0)


def pick_best(candidates: list[int], scores: list[float], rel_tol: float = 1e-12) -> int:
    """The candidate with the greatest score; scores within ``rel_tol`` relative tie, and a tie
    is won by the smaller candidate.

    Example:
        >>> pick_best([1, 2, 3], [100.0, 120.0, 120.0 * (1 + 1e-13)])
        2
    """
    order = sorted(range(len(candidates)), key=lambda x: candidates[x])
    best = order[0]
    for x in order[1:]:
        a, b = scores[x], scores[best]
        if a > b and abs(a - b) > rel_tol * max(abs(a), abs(b)):
            best = x
    return candidates[best]
