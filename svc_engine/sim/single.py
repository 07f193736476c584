"""``simulate``: one coin, the user's signals, every rule of the semantics page.

Example:
    >>> import polars as pl
    >>> k = pl.DataFrame({"open_time": [0, 3_600_000, 7_200_000], "open": [10.0, 10.0, 10.5],
    ...                   "high": [10.0, 10.2, 11.5], "low": [10.0, 9.9, 10.4],
    ...                   "close": [10.0, 10.1, 11.2], "volume": [1.0, 1.0, 1.0]})
    >>> s = pl.DataFrame({"open_time": [0], "side": ["long"], "limit_price": [10.0],
    ...                   "tp_price": [11.0], "sl_price": [9.0]})
    >>> r = simulate(k, s, commission_pct=0, spread_pct=0)
    >>> r.trades["exit_reason"].to_list(), round(r.summary["final_balance"], 6)
    (['tp'], 110.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.frames import as_frame, as_klines
from svc_engine.sim import coverage, nb, perf, stats
from svc_engine.sim.inputs import Candles, Signals, prepare_signals, timeframe_name
from svc_engine.sim.kernels.args import Rules, one_coin, plain
from svc_engine.sim.markets import market_of
from svc_engine.sim.perf_fused import equity_rate, equity_stats, fusable
from svc_engine.sim.results import BacktestResult, EquityCurve, positions_frame, signal_counts, trades_frame
from svc_engine.sim.run_args import half_spread, kernel_terms, resolve_settings
from svc_engine.sim.settings import Settings


def fine_arrays(window: Candles, detail: pl.DataFrame | None, wanted: bool) -> tuple[np.ndarray, ...]:
    """(open, high, low, close, first, stop) of the finer series, ``first[k]:stop[k]`` = the fine
    candles inside candle ``k``; empty arrays when no detail is wanted.

    Example:
        >>> [a.shape[0] for a in fine_arrays(None, None, False)]
        [0, 0, 0, 0, 0, 0]
    """
    if not wanted:
        empty = np.zeros(0)
        return empty, empty, empty, empty, np.zeros(0, np.int64), np.zeros(0, np.int64)
    if detail is None:
        raise ValueError("intrabar='detail' needs detail_klines=, a finer series of the same instrument")
    fine = Candles.from_frame(detail, timeframe=None, source="detail_klines")
    if fine.tf_ms >= window.tf_ms:
        raise ValueError(
            f"detail_klines must be finer than the series ({fine.tf_ms} ms >= {window.tf_ms} ms)"
        )
    first = np.searchsorted(fine.t, window.t).astype(np.int64)
    stop = np.searchsorted(fine.t, window.t + window.tf_ms).astype(np.int64)
    return fine.o, fine.h, fine.lo, fine.c, first, stop


def filter_signals(sig: Signals, s: Settings) -> tuple[np.ndarray, ...]:
    """(fate, tp, sl, tp distance, sl distance) after validity and the min/max filter.

    Example:
        >>> from svc_engine.sim.inputs import Signals
        >>> one = lambda x: np.array([x])
        >>> sig = Signals(one(0), one(0), one(np.int8(1)), one(100.0), one(150.0), one(90.0), one(False))
        >>> filter_signals(sig, Settings())[1].tolist()
        [130.0]
    """
    return nb.filter_signals_nb(
        sig.side,
        sig.limit,
        sig.tp,
        sig.sl,
        sig.dup,
        s.min_profit_pct / 100,
        s.max_profit_pct / 100,
        s.min_loss_pct / 100,
        s.max_loss_pct / 100,
        s.signal_filter_mode == "reject",
        sig.open_levels,
    )


def summary_figures(
    trades: np.ndarray,
    total_signals: int,
    final: float,
    initial: float,
    max_dd: float,
    first_open_ms: int,
    last_close_ms: int,
) -> dict[str, Any]:
    """Every summary figure of the API for a set of trades.

    Example:
        >>> summary_figures(np.zeros(0, nb.TRADE_DTYPE), 0, 100.0, 100.0, 0.0, 0, 1)["win_rate"]
        0.0
    """
    return {
        "total_signals": int(total_signals),
        **perf.trade_summary(trades["ret"], trades["profit"]),
        "final_balance": float(final),
        "total_return_pct": stats.total_return_pct(final, initial),
        "max_drawdown_pct": float(max_dd),
        "avg_signals_per_month": stats.avg_signals_per_month(total_signals, first_open_ms, last_close_ms),
    }


def simulate(
    klines: Any,
    signals: Any,
    *,
    timeframe: str | None = None,
    symbol: str | None = None,
    market: str | None = None,
    start_ts: int | None = None,
    end_ts: int | None = None,
    detail_klines: pl.DataFrame | None = None,
    data_span: tuple[int, int] | None = None,
    **settings: Any,
) -> BacktestResult:
    """Backtest the given signals on one coin (sections 1-5 and 7 of the semantics).

    ``klines`` and ``signals`` are polars or pandas frames: candles with any case of ``open high
    low close volume`` and their time as a column or a pandas ``DatetimeIndex``, as datetimes, Unix
    ms or Unix s (`svc_engine.data.frames`). ``timeframe`` defaults to the candles' spacing, and one
    that disagrees with it is refused. ``market`` defaults to the instrument's (``symbol``), else
    to the candles' calendar, stated in the summary as ``market`` and ``market_note``
    (`svc_engine.sim.markets`): it sets the year of the annualised figures and the default spread.
    ``start_ts``/``end_ts`` (Unix seconds, inclusive) make a range run: signals inside the range
    only, a flat start, no candle after the range, open trades closed at its last candle (``end``).
    ``intrabar="detail"`` needs ``detail_klines``, a finer series of the same instrument: the fill
    candle and every candle touching both levels are replayed on it (see ``docs/sim.md``).
    ``data_span`` = (first, last open time in Unix ms) of the whole data when ``klines`` is a cut of
    it (the drivers pass it): a range reaching beyond the data then warns naming the data's range.

    Example:
        >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
        >>> s = pl.DataFrame({"open_time": [0], "side": ["long"], "limit_price": [None],
        ...                   "tp_price": [2.0], "sl_price": [0.5]})
        >>> simulate(k, s, spread_pct=0).all_positions["fate"].to_list()
        ['traded']
    """
    return simulate_prepared(
        prepare(
            klines,
            timeframe=timeframe,
            symbol=symbol,
            market=market,
            start_ts=start_ts,
            end_ts=end_ts,
            detail_klines=detail_klines,
            data_span=data_span,
            **settings,
        ),
        signals,
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """One coin's candles made ready once for many sets of signals (a sweep runs thousands):
    validated arrays, the range's window, the half spread and the finer series.

    Example:
        >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
        >>> len(prepare(k, spread_pct=0).window), prepare(k, spread_pct=0.2).hs
        (2, 0.001)
    """

    settings: Settings
    candles: Candles
    window: Candles
    hs: float
    fine: tuple[np.ndarray, ...]
    klines: pl.DataFrame
    symbol: str | None
    timeframe: str | None
    market: str
    start_ts: float | None = None
    end_ts: float | None = None
    data_span: tuple[int, int] | None = None
    market_note: str | None = None
    """How a market not given was chosen (`svc_engine.sim.markets`), stated in the summary."""


def prepare(
    klines: Any,
    *,
    timeframe: str | None = None,
    symbol: str | None = None,
    market: str | None = None,
    start_ts: int | None = None,
    end_ts: int | None = None,
    detail_klines: pl.DataFrame | None = None,
    data_span: tuple[int, int] | None = None,
    **settings: Any,
) -> Prepared:
    """Validate and cut a coin's candles once, with the arguments of :func:`simulate`.

    ``klines`` may carry ``open_time`` as integer Unix ms or any datetime; the prepared frame (and
    the result's ``klines``) has it as ``Datetime("ms", "UTC")``.
    """
    s = resolve_settings(settings, allow_detail=True)
    klines = as_klines(klines)
    candles = Candles.from_frame(klines, timeframe=timeframe)
    market, note = market_of(market, symbol, candles.t, candles.tf_ms)
    window = candles.in_range(start_ts, end_ts, what=symbol or "the series", span=data_span)
    fine = fine_arrays(window, detail_klines if s.intrabar == "detail" else None, s.intrabar == "detail")
    hs = half_spread(s, market, klines, candles, timeframe)
    return Prepared(
        s, candles, window, hs, fine, klines, symbol, timeframe, market, start_ts, end_ts, data_span, note
    )


def simulate_prepared(p: Prepared, signals: pl.DataFrame, settings: Settings | None = None) -> BacktestResult:
    """:func:`simulate` on prepared candles; ``settings`` replace the prepared ones (the half
    spread is worked out again only when ``spread_pct`` changes).

    Example:
        >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
        >>> from svc_engine.strategy.program import SIGNAL_SCHEMA
        >>> none = pl.DataFrame(schema=SIGNAL_SCHEMA)
        >>> simulate_prepared(prepare(k, spread_pct=0), none).summary["total_trades"]
        0
    """
    s = p.settings if settings is None else settings
    sig = prepare_signals(as_frame(signals), p.candles, p.window)
    run = run_kernels(p, sig, s)
    window = p.window
    hs = (
        p.hs
        if s.spread_pct == p.settings.spread_pct
        else half_spread(s, p.market, p.klines, p.candles, p.timeframe)
    )
    return BacktestResult(
        summary=run.summary,
        trades=trades_frame(run.trades, [window.t]),
        signal_counts=run.counts,
        all_positions=positions_frame(window.t[sig.sidx], sig.side, sig.limit, run.tp, run.sl, run.fate),
        equity_curve=EquityCurve(window.t, run.eq, s.initial_balance),
        settings=s,
        symbol=p.symbol,
        timeframe=p.timeframe or timeframe_name(window.tf_ms),
        klines=p.klines,
        coverage=coverage.covered(
            window.t, window.tf_ms, p.start_ts, p.end_ts, p.candles.t, p.symbol or "the series", p.data_span
        ),
        applied=coverage.applied(s, hs, run.counts, what=p.symbol or "the series"),
    )


@dataclass(frozen=True, slots=True)
class Run:
    """What the kernels give for one set of signals: trade records, fates, levels after the
    filter, equity per candle (its drawdown is worked out when read: `EquityCurve`), signal counts
    and every summary figure."""

    trades: np.ndarray
    fate: np.ndarray
    tp: np.ndarray
    sl: np.ndarray
    eq: np.ndarray
    counts: dict[str, int]
    summary: dict[str, Any]


def run_kernels(p: Prepared, sig: Signals, s: Settings) -> Run:
    """Filter, sweep, mark equity and compute the summary: everything but the frames, so a sweep
    gets each combination's figures without building trades or equity frames.

    Example:
        >>> run_kernels.__name__
        'run_kernels'
    """
    window, fine = p.window, p.fine
    hs = p.hs
    if s.spread_pct != p.settings.spread_pct:
        hs = half_spread(s, p.market, p.klines, p.candles, p.timeframe)
    fate, tp, sl, tp_d, sl_d = filter_signals(sig, s)
    trades = np.zeros(len(sig), nb.TRADE_DTYPE)
    bars, orders = one_coin(
        (window.t, window.o, window.h, window.lo, window.c),
        (sig.sidx, sig.side, sig.limit, tp, sl, tp_d, sl_d),
    )
    rules = Rules(sig.exit_flag, sig.market, sig.hold, sig.moves, *nb.reverse_args(sig, fate, len(window)))
    terms = kernel_terms(s, np.array([hs]), window.tf_ms)
    n_tr, final = nb.single_sweep_nb(*plain(bars, orders, rules, terms), fate, trades, fine)  # type: ignore[call-arg]
    trades = trades[:n_tr]
    comm = s.commission_pct / 100
    eq = np.empty(len(window))
    columns = trade_columns(trades, window.t)
    moments = None
    if fusable(columns["fill_candle"], columns["exit_candle"], len(window)):
        # equity, drawdown and the equity figures in one pass over the candles (bit for bit those
        # of equity_drawdown_nb and perf.statistics' own kernels, which take three more)
        rate = equity_rate(window.tf_ms, p.market, s.risk_free_rate, s.periods_per_year)
        money = (s.initial_balance, comm, s.leverage, hs)
        max_dd, moments = equity_stats(window.c, trades, *money, eq, window.t, rate)
    else:
        max_dd = nb.equity_drawdown_nb(window.c, trades, s.initial_balance, comm, s.leverage, hs, eq)
    counts = signal_counts(fate, portfolio=False)
    summary = summary_figures(
        trades,
        counts["placed"],
        final,
        s.initial_balance,
        max_dd,
        int(window.t[0]),
        int(window.t[-1]) + window.tf_ms,
    )
    summary |= perf.run_figures(
        columns,
        eq,
        window.t,
        window.tf_ms,
        s.initial_balance,
        max_dd,
        [window.c],
        market=p.market,
        risk_free_rate=s.risk_free_rate,
        periods=s.periods_per_year,
        sequential=True,
        moments=moments,
    )
    if p.market_note is not None:
        summary |= {"market": p.market, "market_note": p.market_note}
    return Run(trades, fate, tp, sl, eq, counts, summary)


def trade_columns(trades: np.ndarray, t: np.ndarray) -> dict[str, np.ndarray]:
    """The trades frame's ``return_pct``, ``pnl``, ``fill_time`` and ``exit_time`` as arrays, computed
    as :func:`~svc_engine.sim.results.trades_frame` computes them (so statistics are the same), and
    the ``fill_candle`` and ``exit_candle`` indices they come from.

    Example:
        >>> trade_columns(np.zeros(0, nb.TRADE_DTYPE), np.zeros(0, np.int64))["pnl"].shape
        (0,)
    """
    # contiguous copies of the packed records' fields: gathers and kernels read them twice as fast
    fill, exit_ = np.ascontiguousarray(trades["fill_candle"]), np.ascontiguousarray(trades["exit_candle"])
    return {
        "return_pct": trades["ret"] * 100.0,
        "pnl": np.ascontiguousarray(trades["profit"]),
        "fill_time": t[fill],
        "exit_time": t[exit_],
        "fill_candle": fill,
        "exit_candle": exit_,
    }
