"""``simulate_portfolio``: many coins sharing one balance in ``divide`` slots
(`../shared/design/engine-semantics.md` section 6).

Example:
    >>> import polars as pl
    >>> k = pl.DataFrame({"open_time": [0, 3_600_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
    ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
    >>> r = simulate_portfolio({"A": k, "B": k}, {}, spread_pct=0)
    >>> r.recommended_divide["divide"], r.summary["final_balance"]
    (1, 100.0)
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.times import TIME, time_series
from svc_engine.sim import coverage, nb, perf, stats
from svc_engine.sim.book import Book
from svc_engine.sim.divide import kernel_terms, recommend_divide
from svc_engine.sim.inputs import Candles, Signals, prepare_signals, timeframe_name
from svc_engine.sim.results import PortfolioResult, positions_frame, signal_counts, trades_frame
from svc_engine.sim.settings import Settings
from svc_engine.sim.single import (
    filter_signals,
    half_spread,
    resolve_settings,
    summary_figures,
    trade_columns,
)

MAX_DIVIDE = 20


def _empty_signals() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "open_time": TIME,
            "side": pl.Utf8,
            "limit_price": pl.Float64,
            "tp_price": pl.Float64,
            "sl_price": pl.Float64,
        }
    )


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0), dtype=dtype)


def build_book(
    klines_by_coin: dict[str, pl.DataFrame],
    signals_by_coin: dict[str, pl.DataFrame],
    coins: list[str],
    s: Settings,
    *,
    timeframe: str | None,
    start_ts: int | None,
    end_ts: int | None,
    market: str | dict[str, str],
    data_spans: dict[str, tuple[int, int] | None] | None = None,
) -> Book:
    """Validate every coin, clip it to the range, and concatenate candles and signals.

    Example:
        >>> build_book({}, {}, [], Settings(), timeframe=None, start_ts=None, end_ts=None, market="crypto")
        Traceback (most recent call last):
        ...
        ValueError: a portfolio needs at least one coin
    """
    if not coins:
        raise ValueError("a portfolio needs at least one coin")
    stray = sorted(set(signals_by_coin) - set(coins))
    if stray:
        raise ValueError(f"signals for coins that are not in the portfolio: {stray}")
    windows, sigs, hs, series = [], [], [], []
    for coin in coins:
        if coin not in klines_by_coin:
            raise ValueError(f"no klines for coin {coin!r}")
        candles = Candles.from_frame(klines_by_coin[coin], timeframe=timeframe, source=f"klines[{coin}]")
        try:
            span = (data_spans or {}).get(coin)
            window = candles.in_range(start_ts, end_ts, what=f"the series of {coin}", span=span)
        except ValueError as exc:
            raise ValueError(f"coin {coin!r}: {exc}") from None
        frame = signals_by_coin.get(coin)
        sigs.append(prepare_signals(_empty_signals() if frame is None else frame, candles, window))
        where = market.get(coin, "crypto") if isinstance(market, dict) else market
        hs.append(half_spread(s, where, klines_by_coin[coin], candles, timeframe))
        windows.append(window)
        series.append((candles, span))
    tf = {w.tf_ms for w in windows}
    if len(tf) > 1:
        raise ValueError(f"all coins of a portfolio share one timeframe; got lengths {sorted(tf)} ms")
    t = _concat([w.t for w in windows], np.int64)
    union = np.unique(t)
    side = _concat([x.side for x in sigs], np.int8)
    limit = _concat([x.limit for x in sigs], np.float64)
    filtered = [filter_signals(x, s) for x in sigs]  # per coin: each knows whether its levels may be open
    return Book(
        coins=list(coins),
        windows=windows,
        off=np.cumsum([0] + [len(w) for w in windows]).astype(np.int64),
        t=t,
        o=_concat([w.o for w in windows], np.float64),
        h=_concat([w.h for w in windows], np.float64),
        lo=_concat([w.lo for w in windows], np.float64),
        c=_concat([w.c for w in windows], np.float64),
        union=union,
        upos=np.searchsorted(union, t).astype(np.int64),
        sidx=_concat([x.sidx for x in sigs], np.int64),
        side=side,
        limit=limit,
        soff=np.cumsum([0] + [len(x) for x in sigs]).astype(np.int64),
        filtered=tuple(_concat([f[n] for f in filtered], filtered[0][n].dtype) for n in range(5)),
        hs=np.asarray(hs, np.float64),
        tf_ms=tf.pop(),
        memo=np.zeros(side.shape[0], nb.OUTCOME_DTYPE),
        rules=merge_rules(sigs, windows, [f[0] for f in filtered]),
        start_ts=start_ts,
        end_ts=end_ts,
        series=tuple(series),
    )


def merge_rules(
    sigs: list[Signals], windows: list[Candles], fates: list[np.ndarray] | None = None
) -> tuple[np.ndarray, ...]:
    """The coins' exit rules as the portfolio kernels take them: (exit flags per candle, market
    orders, holding times, stop moves per signal, stop-and-reverse per signal, the side of the
    valid signal per candle from the filter's ``fates``), concatenated coin by coin; an array
    stays empty when no coin uses its rule, and a coin without it gets the neutral value (no flag,
    a limit order, no holding time, no move, no reverse).

    Example:
        >>> [a.shape for a in merge_rules([], [])]
        [(0,), (0,), (0,), (0, 4), (0,), (0,)]
    """
    pairs = list(zip(sigs, windows, strict=True))

    def used(name: str) -> bool:
        return any(getattr(x, name).size for x in sigs)

    flags = [x.exit_flag if x.exit_flag.size else np.zeros(len(w), np.bool_) for x, w in pairs]
    orders = [x.market if x.market.size else np.zeros(len(x), np.bool_) for x in sigs]
    hold = [x.hold if x.hold.size else np.zeros(len(x), np.int64) for x in sigs]
    moves = [x.moves if x.moves.size else np.full((len(x), 4), np.nan) for x in sigs]
    reverse = [x.reverse if x.reverse.size else np.zeros(len(x), np.bool_) for x in sigs]
    sides: list[np.ndarray] = []
    if used("reverse") and fates is not None:
        sides = [
            nb.reverse_sides(len(w), x.sidx, x.side, f) for x, w, f in zip(sigs, windows, fates, strict=True)
        ]
    return (
        _concat(flags if used("exit_flag") else [], np.bool_),
        _concat(orders if used("market") else [], np.bool_),
        _concat(hold if used("hold") else [], np.int64),
        np.ascontiguousarray(np.concatenate(moves) if used("moves") else np.zeros((0, 4))),
        _concat(reverse if sides else [], np.bool_),
        _concat(sides, np.int8),
    )


def _coin_result(
    book: Book, ci: int, trades: np.ndarray, fate: np.ndarray, s: Settings, market: str = "crypto"
) -> dict[str, Any]:
    mine = trades[trades["coin"] == ci]
    w = book.windows[ci]
    eq, dd = np.empty(len(w)), np.empty(len(w))
    max_dd = nb.equity_drawdown_nb(
        w.c, mine, s.initial_balance, s.commission_pct / 100, s.leverage, float(book.hs[ci]), eq, dd
    )
    profit = float(mine["profit"].sum())
    counts = signal_counts(fate[book.soff[ci] : book.soff[ci + 1]], portfolio=True)
    figures = summary_figures(
        mine,
        counts["placed"],
        s.initial_balance + profit,
        s.initial_balance,
        max_dd,
        int(w.t[0]),
        int(w.t[-1]) + book.tf_ms,
    )
    figures |= perf.run_figures(
        trade_columns(mine, w.t),
        eq,
        w.t,
        book.tf_ms,
        s.initial_balance,
        max_dd,
        [w.c],
        market=market,
        risk_free_rate=s.risk_free_rate,
        periods=s.periods_per_year,
    )
    return figures | {"total_return_pct": profit / s.initial_balance * 100.0}


def simulate_portfolio(
    klines_by_coin: dict[str, pl.DataFrame],
    signals_by_coin: dict[str, pl.DataFrame],
    *,
    coins: list[str] | None = None,
    divide: int | None = None,
    initial_balance: float = 100,
    timeframe: str | None = None,
    start_ts: int | None = None,
    end_ts: int | None = None,
    data_spans: dict[str, tuple[int, int] | None] | None = None,
    market: str | dict[str, str] = "crypto",
    **settings: Any,
) -> PortfolioResult:
    """Backtest many coins sharing one balance in ``divide`` slots, and search the best divide.

    ``coins`` (default: the keys of ``klines_by_coin``) sets the order of fills at one time;
    ``divide`` defaults to the number of coins capped at 20; ``position_size_pct`` does not apply.
    ``market`` names the market of every coin, or maps coin -> market (it sets the default spread).
    ``data_spans`` maps a coin whose frame is a cut of its data to that data's (first, last open
    time, ms), as ``simulate``'s ``data_span``.

    Example:
        >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
        >>> simulate_portfolio({"X": k}, {}, spread_pct=0).divide
        1
    """
    s = resolve_settings({**settings, "initial_balance": initial_balance})
    coins = list(klines_by_coin) if coins is None else list(coins)
    if not coins:
        raise ValueError("a portfolio needs at least one coin")
    if len(set(coins)) != len(coins):
        raise ValueError(f"coins must be distinct: {coins}")
    divide = min(len(coins), MAX_DIVIDE) if divide is None else divide
    if isinstance(divide, bool) or not isinstance(divide, numbers.Integral) or divide < 1:
        raise ValueError(f"divide must be a whole number >= 1 (got {divide!r})")
    divide = int(divide)
    book = build_book(
        klines_by_coin,
        signals_by_coin,
        coins,
        s,
        timeframe=timeframe,
        start_ts=start_ts,
        end_ts=end_ts,
        market=market,
        data_spans=data_spans,
    )
    recommended = recommend_divide(book, s, divide)
    fate = book.filtered[0].copy()
    trades = np.zeros(book.sidx.shape[0], nb.TRADE_DTYPE)
    eq = np.empty(book.union.shape[0])
    bars, orders, rules = book.records()
    terms = kernel_terms(book, s)
    n_tr, final, max_open = nb.portfolio_sweep_nb(
        bars, orders, rules, terms, fate, book.memo, trades, eq, divide
    )
    trades = trades[:n_tr]
    return _portfolio_result(
        book,
        s,
        divide,
        trades,
        fate,
        eq,
        float(final),
        int(max_open),
        recommended,
        timeframe or timeframe_name(book.tf_ms),
        _calendar_market(market),
    )


def _calendar_market(market: str | dict[str, str]) -> str:
    """The market whose calendar annualises a portfolio: the coins' one market, else crypto's."""
    if isinstance(market, str):
        return market
    names = set(market.values())
    return names.pop() if len(names) == 1 else "crypto"


def _portfolio_result(
    book: Book,
    s: Settings,
    divide: int,
    trades: np.ndarray,
    fate: np.ndarray,
    eq: np.ndarray,
    final: float,
    max_open: int,
    recommended: dict[str, Any],
    timeframe: str | None,
    market: str = "crypto",
) -> PortfolioResult:
    dd, max_dd = nb.drawdown_nb(eq, s.initial_balance)
    counts = signal_counts(fate, portfolio=True)
    buys, sells = stats.buy_sell_counts(trades["side"])
    summary = {
        **summary_figures(
            trades,
            counts["placed"],
            final,
            s.initial_balance,
            max_dd,
            int(book.union[0]),
            int(book.union[-1]) + book.tf_ms,
        ),
        "initial_balance": s.initial_balance,
        "buy_count": buys,
        "sell_count": sells,
        "avg_stop_loss_pct": stats.mean_pct(trades["sl_dist"]),
        "avg_target_pct": stats.mean_pct(trades["tp_dist"]),
        "skipped_no_slot": counts["skipped_no_slot"],
        "skipped_coin_busy": counts["skipped_coin_busy"],
        "max_concurrent_positions": max_open,
    }
    coin_of_signal = np.repeat(np.arange(len(book.coins)), np.diff(book.soff))
    _, tp, sl, _, _ = book.filtered
    sig_time = book.t[book.off[coin_of_signal] + book.sidx]
    profits = {
        coin: float(trades["profit"][trades["coin"] == ci].sum()) for ci, coin in enumerate(book.coins)
    }
    trades_df = trades_frame(trades, [w.t for w in book.windows], book.coins)
    summary |= perf.run_figures(
        trades_df,
        eq,
        book.union,
        book.tf_ms,
        s.initial_balance,
        max_dd,
        [w.c for w in book.windows],
        market=market,
        risk_free_rate=s.risk_free_rate,
        periods=s.periods_per_year,
    )
    return PortfolioResult(
        coverage={
            coin: coverage.covered(
                w.t, book.tf_ms, book.start_ts, book.end_ts, x.t, f"the series of {coin}", span
            )
            for coin, w, (x, span) in zip(book.coins, book.windows, book.series, strict=True)
        },
        applied=coverage.applied(s, float(book.hs.max(initial=0.0)), counts, what="the portfolio")
        | {"spread_pct": {coin: float(h) * 200 for coin, h in zip(book.coins, book.hs, strict=True)}},
        summary=summary,
        trades=trades_df,
        signal_counts=counts,
        all_positions=positions_frame(
            sig_time,
            book.side,
            book.limit,
            tp,
            sl,
            fate,
            np.asarray(book.coins, dtype=object)[coin_of_signal],
        ),
        equity=pl.DataFrame(
            {"open_time": time_series("open_time", book.union), "equity": eq, "drawdown_pct": dd}
        ),
        coin_results={
            coin: _coin_result(book, ci, trades, fate, s, market) for ci, coin in enumerate(book.coins)
        },
        per_coin_contribution=profits,
        recommended_divide=recommended,
        coins=book.coins,
        divide=divide,
        settings=s,
        timeframe=timeframe,
    )
