"""Walk-forward analysis: choose parameters in sample, trade them out of sample, move on.

Windows follow each other over the candles of the first coin: an in-sample window of ``in_sample``
candles (or a duration such as ``"90d"``) is followed by an out-of-sample window of
``out_of_sample``; the next pair starts ``out_of_sample`` later. *Rolling* in-sample windows keep
their size; *anchored* ones all start at the first candle and grow. In each in-sample window a
:func:`~svc_engine.research.sweep` picks the combination with the best ``by`` (mean over coins; a
tie goes to the first combination), then that combination is backtested on the out-of-sample window.

No out-of-sample candle can influence a choice: the in-sample sweep is given the candles up to the
window's last one only (its warm-up reaches back, never forward). The out-of-sample backtest may
warm its indicators up on earlier candles, as any range backtest does.

The out-of-sample runs each start flat with the initial balance; the stitched equity chains them
(each window's equity scaled by the growth of the windows before it). It is the first coin's; the
trades of every coin are in ``trades`` and each window's mean over coins in ``windows``.

Example:
    >>> from svc_engine.research.demo import random_walk
    >>> wf = walk_forward("RSI({n}) crosses above 30", {"n": [7, 14]}, {"X": random_walk(900, seed=4)},
    ...                   "1h", in_sample=400, out_of_sample=200, by="total_return_pct", spread_pct=0)
    >>> wf.windows.height, wf.windows.columns[:3]
    (3, ['window', 'is_start', 'is_end'])
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data import DataStore, load_klines
from svc_engine.data.schema import timeframe_ms
from svc_engine.data.times import TIME, ms_array, to_seconds, with_time
from svc_engine.executors import Executor
from svc_engine.research.compiling import compile_combinations
from svc_engine.research.params import Template, combinations, split_settings
from svc_engine.research.purged import gap_candles, purge_windows, window_ms
from svc_engine.research.sweeper import sweep
from svc_engine.sim import perf


def plan_windows(
    times: np.ndarray,
    in_sample: int | str | timedelta,
    out_of_sample: int | str | timedelta,
    tf_ms: int,
    *,
    anchored: bool = False,
) -> list[tuple[int, int, int, int]]:
    """``(is_first, is_last, oos_first, oos_last)`` row indices of each window pair over ``times``;
    pairs whose out-of-sample window would be empty are left out.

    Example:
        >>> plan_windows(np.arange(10), 4, 3, 1)
        [(0, 3, 4, 6), (3, 6, 7, 9)]
        >>> plan_windows(np.arange(10), 4, 3, 1, anchored=True)
        [(0, 3, 4, 6), (0, 6, 7, 9)]
    """
    n = times.shape[0]
    out: list[tuple[int, int, int, int]] = []
    is_n, is_ms = window_ms(in_sample, tf_ms)
    oos_n, oos_ms = window_ms(out_of_sample, tf_ms)

    def advance(start: int, count: int | None, ms: int | None) -> int:
        """The first row after a window of ``count`` rows or ``ms`` time from ``start``."""
        if count is not None:
            return start + count
        return int(np.searchsorted(times, times[start] + ms, "left")) if start < n else n

    oos_first = advance(0, is_n, is_ms)
    while oos_first < n:
        oos_stop = min(n, advance(oos_first, oos_n, oos_ms))
        if anchored:
            is_first = 0
        elif is_n is not None:
            is_first = oos_first - is_n
        else:
            is_first = int(np.searchsorted(times, times[oos_first] - is_ms, "left"))
        out.append((is_first, oos_first - 1, oos_first, oos_stop - 1))
        oos_first = oos_stop
    return out


@dataclass(slots=True)
class WalkForwardResult:
    """Windows with their chosen parameters and in/out-of-sample figures, the out-of-sample trades
    and the stitched out-of-sample equity."""

    windows: pl.DataFrame
    trades: pl.DataFrame
    equity: pl.DataFrame
    summary: dict[str, Any]
    params: list[str]
    by: str
    coverage: dict[str, list[Any]] = field(default_factory=dict)
    """Per coin, the range each out-of-sample window covered (``BacktestResult.coverage``)."""

    def gap(self) -> pl.DataFrame:
        """Per window: ``by`` in sample (the best cell), out of sample, and their difference.

        Example:
            >>> w = pl.DataFrame({"window": [0], "is_value": [2.0], "oos_value": [0.5]})
            >>> WalkForwardResult(w, pl.DataFrame(), pl.DataFrame(), {}, [], "s").gap()["gap"].to_list()
            [1.5]
        """
        return self.windows.select(
            "window", "is_value", "oos_value", (pl.col("is_value") - pl.col("oos_value")).alias("gap")
        )

    def plot(self, path: str | os.PathLike[str] | None = None, *, plotlyjs: str | bool = True) -> Any:
        """Stitched out-of-sample equity above, in-sample vs out-of-sample ``by`` per window below
        (needs the ``plot`` extra); written to ``path`` (``.html``) when given."""
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=2, cols=1, row_heights=[0.6, 0.4], vertical_spacing=0.08)
        eq = self.equity
        fig.add_trace(go.Scattergl(x=eq["open_time"], y=eq["equity"], name="out-of-sample equity"), 1, 1)
        w = self.windows
        labels = [str(v) for v in w["window"].to_list()]
        fig.add_trace(go.Bar(x=labels, y=w["is_value"], name=f"in-sample {self.by}"), 2, 1)
        fig.add_trace(go.Bar(x=labels, y=w["oos_value"], name=f"out-of-sample {self.by}"), 2, 1)
        fig.update_layout(title=f"walk-forward by {self.by}", barmode="group", width=1000, height=650)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            fig.write_html(path, include_plotlyjs=plotlyjs, full_html=True)
        return fig


def _upto(ms: int) -> pl.Expr:
    return pl.col("open_time") <= pl.lit(ms, pl.Int64).cast(TIME)


def _frames(
    coins: str | Sequence[str] | Mapping[str, pl.DataFrame],
    timeframe: str,
    start_ts: float | None,
    end_ts: float | None,
    warmup: int,
    market: str | None,
    store: DataStore | None,
) -> dict[str, pl.DataFrame]:
    if isinstance(coins, Mapping):
        frames = {k: with_time(v) for k, v in coins.items()}
    else:
        store = store if store is not None else DataStore()
        listed = [coins] if isinstance(coins, str) else list(coins)
        frames = {
            c: load_klines(
                c, timeframe, start_ts, end_ts, market or store.find_market(c), warmup, store=store
            )
            for c in listed
        }
    if not frames:
        raise ValueError("coins is empty")
    return frames


def walk_forward(
    strategy: str | Mapping[str, Any],
    params: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    coins: str | Sequence[str] | Mapping[str, pl.DataFrame],
    timeframe: str,
    *,
    in_sample: int | str | timedelta,
    out_of_sample: int | str | timedelta,
    anchored: bool = False,
    by: str = "sharpe_ratio",
    start_ts: float | None = None,
    end_ts: float | None = None,
    executor: Executor | None = None,
    market: str | None = None,
    store: DataStore | None = None,
    purge: int | str | timedelta = 0,
    embargo: int | str | timedelta = 0,
    **settings: Any,
) -> WalkForwardResult:
    """Walk a parameter choice forward through time (see the module docstring).

    ``strategy``, ``params`` and ``settings`` are those of :func:`~svc_engine.research.sweep`;
    ``coins`` symbols or name -> kline frame; windows are laid over the first coin's candles
    inside ``[start_ts, end_ts]`` (seconds), the candles before ``start_ts`` serving as warm-up.
    ``purge`` (candles or a duration; at least the longest holding time of a trade) and ``embargo``
    end each in-sample window that much before its out-of-sample window (:mod:`.purged`).

    Example:
        >>> walk_forward("close > SMA({n})", {"n": [5]}, {}, "1h", in_sample=10, out_of_sample=5)
        Traceback (most recent call last):
        ...
        ValueError: coins is empty
    """
    from svc_engine.sim.drivers import backtest, first_and_stop

    start_ts, end_ts = to_seconds(start_ts), to_seconds(end_ts)
    tf_ms = timeframe_ms(timeframe)
    template = Template.of(strategy)
    combos = combinations(params)
    from svc_engine.sim.drivers import warmup_of

    strategies, _ = compile_combinations(template, combos, settings)
    warmup = max(warmup_of(x) for x in set(strategies))
    frames = _frames(coins, timeframe, start_ts, end_ts, warmup, market, store)
    first_coin = next(iter(frames.values()))
    first, stop = first_and_stop(first_coin, start_ts, end_ts)
    times = ms_array(first_coin["open_time"])[first:stop]
    plan = purge_windows(
        plan_windows(times, in_sample, out_of_sample, tf_ms, anchored=anchored),
        gap_candles(purge, tf_ms) + gap_candles(embargo, tf_ms),
    )
    if not plan:
        raise ValueError(f"{len(times)} candles hold no in-sample plus out-of-sample window")
    rows, trades, equities = [], [], []
    coverage: dict[str, list[Any]] = {}
    carry = None
    for w, (a, b, c, d) in enumerate(plan):
        is_lo, is_hi, oos_lo, oos_hi = (int(times[x]) for x in (a, b, c, d))
        past = {k: f.filter(_upto(is_hi)) for k, f in frames.items()}
        result = sweep(
            strategy,
            combos,
            past,
            timeframe,
            is_lo / 1000,
            is_hi / 1000,
            executor=executor,
            market=market,
            **settings,
        )
        order = [pl.col(by).is_null(), pl.col(by), pl.col("combo")]
        best = result.cells(by).sort(order, descending=[False, True, False]).row(0, named=True)
        combo = combos[best["combo"]]
        _, chosen_settings = split_settings(template, combo, settings)
        chosen = strategies[best["combo"]]
        oos_values, oos_returns, oos_trades = [], [], 0
        for coin, frame in frames.items():
            upto = frame.filter(_upto(oos_hi))
            run = backtest(
                chosen, upto, timeframe, oos_lo / 1000, oos_hi / 1000, market=market, **chosen_settings
            )
            traded = run.summary["total_trades"] > 0  # no trade: no out-of-sample figure at all
            oos_trades += int(run.summary["total_trades"])
            oos_values.append(run.summary.get(by) if traded else None)
            oos_returns.append(run.summary["total_return_pct"] if traded else None)
            coverage.setdefault(coin, []).append(run.coverage)
            trades.append(run.trades.with_columns(pl.lit(coin).alias("coin"), pl.lit(w).alias("window")))
            if coin == next(iter(frames)):
                eq = run.equity["equity"].to_numpy()
                initial = run.settings.initial_balance
                scale = 1.0 if carry is None else carry / initial
                equities.append(
                    pl.DataFrame({"open_time": run.equity["open_time"], "equity": eq * scale, "window": w})
                )
                carry = float(eq[-1] * scale)
        present = [v for v in oos_values if v is not None]
        returned = [v for v in oos_returns if v is not None]
        rows.append(
            {
                "window": w,
                "is_start": is_lo,
                "is_end": is_hi,
                "oos_start": oos_lo,
                "oos_end": oos_hi,
                **{p: combo[p] for p in combo},
                "combo": best["combo"],
                "is_value": best[by],
                "oos_value": float(np.mean(present)) if present else None,
                "oos_return_pct": float(np.mean(returned)) if returned else None,
                "oos_trades": oos_trades,
            }
        )
    windows = pl.DataFrame(rows, infer_schema_length=None).with_columns(
        pl.col("is_start", "is_end", "oos_start", "oos_end").cast(TIME)
    )
    equity = pl.concat(equities)
    all_trades = pl.concat(trades, how="diagonal_relaxed") if trades else pl.DataFrame()
    return WalkForwardResult(
        windows=windows,
        trades=all_trades,
        equity=equity,
        summary=_summary(windows, equity, tf_ms, market, settings),
        params=list(combos[0]),
        by=by,
        coverage=coverage,
    )


def _summary(
    windows: pl.DataFrame, equity: pl.DataFrame, tf_ms: int, market: str | None, settings: Mapping[str, Any]
) -> dict[str, Any]:
    eq = equity["equity"].to_numpy()
    t = equity["open_time"].dt.epoch("ms").to_numpy()
    initial = float(settings.get("initial_balance", 100.0))
    rets = perf.period_returns(np.concatenate([[initial], eq]))
    is_mean = windows["is_value"].mean()
    oos_mean = windows["oos_value"].mean()
    return {
        "windows": windows.height,
        "oos_total_return_pct": (float(eq[-1]) / initial - 1) * 100,
        "oos_cagr_pct": perf.cagr_pct(initial, float(eq[-1]), int(t[0]), int(t[-1])),
        "oos_sharpe_ratio": perf.sharpe_ratio(rets, perf.periods_per_year(tf_ms, market or "crypto")),
        "is_mean": is_mean,
        "oos_mean": oos_mean,
        "efficiency": oos_mean / is_mean if is_mean and oos_mean is not None else None,
    }
