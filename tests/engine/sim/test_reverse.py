"""Stop-and-reverse (docs/sim.md): each valid opposite signal closes the open position at the next
open and opens the other side at that same open; by hand, in words, in a portfolio, in chunks, in a
sweep, and backtesting.py's own README example (SmaCross on GOOG, exclusive_orders=True) trade for
trade."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import svc_engine as sv
from svc_engine.data.times import ms_columns
from svc_engine.sim import simulate, simulate_portfolio
from svc_engine.strategy import StrategyCompileError, compile_strategy

H = 3_600_000
FREE = {"commission_pct": 0, "spread_pct": 0, "min_candles_between_signals": 1, "timeframe": "1h"}


def candles(opens: list[float]) -> pl.DataFrame:
    o = np.array(opens, float)
    c = np.r_[o[1:], o[-1]]  # each close is the next open: prices easy to follow
    return pl.DataFrame(
        {
            "open_time": np.arange(o.size) * H,
            "open": o,
            "high": np.maximum(o, c) + 0.05,
            "low": np.minimum(o, c) - 0.05,
            "close": c,
            "volume": np.ones(o.size),
        }
    )


def signals(rows: list[tuple[int, str]], order: str = "market", reverse: bool = True) -> pl.DataFrame:
    inf = np.inf
    return pl.DataFrame(
        [
            {
                "open_time": i * H,
                "side": side,
                "limit_price": None,
                "tp_price": inf if side == "long" else -inf,
                "sl_price": -inf if side == "long" else inf,
                "order": order,
                "reverse": reverse,
            }
            for i, side in rows
        ],
        schema={
            "open_time": pl.Int64,
            "side": pl.Utf8,
            "limit_price": pl.Float64,
            "tp_price": pl.Float64,
            "sl_price": pl.Float64,
            "order": pl.Utf8,
            "reverse": pl.Boolean,
        },
    )


def trades(k: pl.DataFrame, sig: pl.DataFrame, **kw: object) -> list[tuple[str, int, int, float, float, str]]:
    t = ms_columns(simulate(k, sig, **(FREE | kw)).trades)
    return [
        (
            r["side"],
            r["fill_time"] // H,
            r["exit_time"] // H,
            r["entry_price"],
            r["exit_price"],
            r["exit_reason"],
        )
        for r in t.iter_rows(named=True)
    ]


K = candles([10, 10, 11, 12, 11, 10, 9, 10, 11, 12])


def test_an_opposite_signal_closes_at_the_next_open_and_opens_the_other_side_there() -> None:
    sig = signals([(0, "long"), (3, "short"), (6, "long")])
    assert trades(K, sig) == [
        ("long", 1, 4, 10.0, 11.0, "reverse"),  # short signal at the close of 3: out at the open of 4
        ("short", 4, 7, 11.0, 10.0, "reverse"),  # ... and in at that same open
        ("long", 7, 9, 10.0, 12.0, "end"),  # the last trade ends at the last close
    ]
    r = simulate(K, sig, **FREE)
    assert (
        r.signal_counts["placed"] == r.signal_counts["filled"] == 3 and r.signal_counts["skipped_busy"] == 0
    )
    # money: 100 -> 110 -> 110 * (1 + 1/11) = 120 -> 120 * 1.2 = 144; equity at each close marks the open side
    assert r.summary["final_balance"] == pytest.approx(144.0, rel=1e-12)
    eq = r.equity["equity"].to_list()
    assert eq[3] == pytest.approx(110.0) and eq[4] == pytest.approx(110.0 * (1 + 1 / 11))  # short, close 10
    # without reverse the short signal at 3 is busy and the long runs to the end
    plain = signals([(0, "long"), (3, "short"), (6, "long")], reverse=False)
    assert trades(K, plain) == [("long", 1, 9, 10.0, 12.0, "end")]


def test_what_does_not_reverse() -> None:
    # a same-side signal while long is busy; the opposite one reverses as usual
    assert trades(K, signals([(0, "long"), (2, "long"), (4, "short")])) == [
        ("long", 1, 5, 10.0, 10.0, "reverse"),
        ("short", 5, 9, 10.0, 12.0, "end"),
    ]
    # an opposite signal inside the minimum gap of the trade's signal neither closes nor opens
    got = simulate(
        K, signals([(0, "long"), (2, "short"), (5, "short")]), **(FREE | {"min_candles_between_signals": 4})
    )
    assert got.all_positions["fate"].to_list() == ["traded", "skipped_min_gap", "traded"]
    assert ms_columns(got.trades)["exit_time"].to_list() == [6 * H, 9 * H]
    # a limit order still waiting when the opposite signal comes keeps waiting: that signal is busy
    waiting = signals([(0, "long")], order="limit").with_columns(pl.lit(9.0).alias("limit_price"))
    both = pl.concat([waiting, signals([(1, "short")], order="market")])
    assert simulate(K, both, **FREE).all_positions["fate"].to_list() == ["traded", "skipped_busy"]
    # a stop reached inside a candle still comes first (candle 5: low 8.95 under the 9.5 stop); the
    # opposite signal at its close then opens from a free coin, at the next open as any market order
    stopped = signals([(0, "long"), (5, "short")]).with_columns(
        pl.when(pl.col("side") == "long").then(9.5).otherwise(pl.col("sl_price")).alias("sl_price")
    )
    assert trades(K, stopped) == [("long", 1, 5, 10.0, 9.5, "sl"), ("short", 6, 9, 9.0, 12.0, "end")]
    # the opposite signal on the last candle: the trade ends there at its close, the new order expires
    last = simulate(K, signals([(0, "long"), (9, "short")]), **FREE)
    assert last.all_positions["fate"].to_list() == ["traded", "expired"]
    assert ms_columns(last.trades)["exit_reason"].to_list() == ["end"]


def test_costs_apply_on_both_sides_of_a_reversal() -> None:
    c, h = 0.001, 0.0005
    r = simulate(
        K, signals([(0, "long"), (3, "short")]), **(FREE | {"commission_pct": 0.1, "spread_pct": 0.1})
    )
    long_r = 11 * (1 - h) * (1 - c) / (10 * (1 + h) * (1 + c)) - 1
    e, x = 11 * (1 - h), 12 * (1 + h)
    short_r = (e * (1 - c) - x * (1 + c)) / e
    assert r.trades["return_pct"].to_list() == pytest.approx([long_r * 100, short_r * 100], rel=1e-12)


def test_in_words_and_refused_where_it_cannot_run() -> None:
    words = [
        {"exit_condition": "reverse on the opposite signal"},
        {"exit_condition": "and stop and reverse"},
        {"short_entry": "SMA(5) crosses below SMA(10), sell at market, and reverse on the opposite signal"},
        {"reverse": True},
    ]
    base = {
        "long_entry": "SMA(5) crosses above SMA(10), buy at market",
        "short_entry": "SMA(5) crosses below SMA(10), sell at market",
        "tp": "no take profit",
        "sl": "no stop loss",
    }
    built = [sv.long_short(**(base | w)) for w in words]
    assert all(b == built[0] for b in built) and built[0].reverse
    assert built[0].describe().endswith("| reverse on the opposite signal")
    assert not sv.long_short(**base).reverse
    with pytest.raises(StrategyCompileError, match=r"needs both sides; build it with sv\.long_short"):
        compile_strategy("close > open", exit_condition="reverse on the opposite signal")
    with pytest.raises(StrategyCompileError, match="needs both sides"):
        compile_strategy("close > open, and reverse on the opposite signal")
    # the parabolic stop and reverse is still an indicator
    assert compile_strategy("close crosses above the parabolic stop and reverse").indicators == [
        "parabolic SAR(0.02, 0.2)"
    ]


def test_the_live_evaluator_refuses_it_clearly() -> None:
    from svc_engine.live import watchlist

    sar = sv.long_short("close > open", "close < open", reverse=True)
    with pytest.raises(ValueError, match=r"stop-and-reverse .* is not evaluated live"):
        watchlist([sar], [(0, "BTCUSDT")], "1h")


def _goog() -> tuple[pl.DataFrame, object]:
    from backtesting.test import GOOG

    k = pl.DataFrame(
        {
            "open_time": GOOG.index.values.astype("datetime64[ms]").astype(np.int64),
            "open": GOOG.Open.values,
            "high": GOOG.High.values,
            "low": GOOG.Low.values,
            "close": GOOG.Close.values,
            "volume": GOOG.Volume.values.astype(float),
        }
    )
    return k, GOOG


SMA_CROSS = dict(
    long_entry="SMA(10) crosses above SMA(20), buy at market",
    short_entry="SMA(10) crosses below SMA(20), sell at market",
    tp="no take profit",
    sl="no stop loss",
    exit_condition="reverse on the opposite signal",
)


def test_backtesting_py_readme_sma_cross_trade_for_trade() -> None:
    backtesting = pytest.importorskip("backtesting")
    from backtesting import Backtest, Strategy
    from backtesting.lib import crossover
    from backtesting.test import SMA

    assert backtesting.__version__ == "0.6.6"

    class SmaCross(Strategy):  # backtesting.py's README, word for word
        def init(self) -> None:
            price = self.data.Close
            self.ma1 = self.I(SMA, price, 10)
            self.ma2 = self.I(SMA, price, 20)

        def next(self) -> None:
            if crossover(self.ma1, self.ma2):
                self.buy()
            elif crossover(self.ma2, self.ma1):
                self.sell()

    k, goog = _goog()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its progress bar and the open-trade warning
        theirs = Backtest(goog, SmaCross, commission=0.002, exclusive_orders=True).run()
    # The same costs here: commission 0.2% of each side's value, no spread (backtesting.py's
    # default spread is 0); both fill at the next open; no minimum gap; no stop (so no filter applies).
    strategy = sv.long_short(**SMA_CROSS)
    ours = sv.backtest(strategy, k, "1d", commission_pct=0.2, spread_pct=0, min_candles_between_signals=1)
    bt, t = theirs._trades, ms_columns(ours.trades)
    assert len(bt) == 93 and t.height == 94
    closed = t.head(93)
    times = lambda col: bt[col].to_numpy().astype("datetime64[ms]").astype(np.int64)  # noqa: E731
    assert np.array_equal(closed["fill_time"].to_numpy(), times("EntryTime"))
    assert np.array_equal(closed["exit_time"].to_numpy(), times("ExitTime"))
    assert closed["side"].to_list() == ["long" if x > 0 else "short" for x in bt["Size"]]
    np.testing.assert_allclose(closed["entry_price"].to_numpy(), bt["EntryPrice"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(closed["exit_price"].to_numpy(), bt["ExitPrice"].to_numpy(), rtol=1e-12)
    assert set(closed["exit_reason"]) == {"reverse"}
    # P&L: the same per unit traded (backtesting.py buys whole shares, we a fraction of the balance).
    # A long stake A buys A / (E (1 + c)) units, a short one sells A / E (engine-semantics section 5).
    c, long = 0.002, closed["side"].to_numpy() == "long"
    r = closed["return_pct"].to_numpy() / 100
    per_unit = closed["entry_price"].to_numpy() * np.where(long, 1 + c, 1.0) * r
    np.testing.assert_allclose(per_unit, (bt["PnL"] / bt["Size"].abs()).to_numpy(), rtol=1e-6, atol=1e-9)
    # backtesting.py's ReturnPct divides by the entry value without its commission
    np.testing.assert_allclose(
        r * np.where(long, 1 + c, 1.0), bt["ReturnPct"].to_numpy(), rtol=1e-6, atol=1e-12
    )
    # The trade still open at the end: backtesting.py leaves it open (not in its trade list); we
    # close it at the last candle's close, reason 'end' (engine-semantics section 4, rule 4).
    (still,) = theirs._strategy.trades
    end = t.row(-1, named=True)
    assert (end["side"], end["exit_reason"], end["exit_price"]) == ("long", "end", k["close"][-1])
    assert end["fill_time"] == int(np.datetime64(still.entry_time, "ms").astype(np.int64))
    assert end["entry_price"] == pytest.approx(still.entry_price, rel=1e-12)


def test_everywhere_the_same_trades_single_chunks_full_range_portfolio_sweep(tmp_path: Path) -> None:
    from svc_engine.data import DataStore
    from svc_engine.executors import SerialExecutor

    k, _ = _goog()
    strategy = sv.long_short(**SMA_CROSS)
    kw = {"commission_pct": 0.1, "spread_pct": 0.05, "min_candles_between_signals": 1}
    one = sv.backtest(strategy, k, "1d", **kw)
    assert one.trades.height == 94
    chunked = sv.backtest(strategy, k, "1d", chunks=4, executor=SerialExecutor(), **kw)
    assert chunked.trades.equals(one.trades)
    store = DataStore(str(tmp_path))
    store.write_klines("us_stocks", "GOOG", "1d", k)
    every = sv.full_range(strategy, ["GOOG"], "1d", store=store, executor=SerialExecutor(), **kw)
    assert every.results["GOOG"].trades.equals(one.trades)
    # a portfolio of one coin in one slot equals the single coin; two coins share the balance
    p = simulate_portfolio({"G": k}, {"G": strategy.evaluate(k)}, divide=1, timeframe="1d", **kw)
    cols = ["fill_time", "exit_time", "side", "entry_price", "exit_price", "exit_reason", "pnl"]
    assert p.trades.select(cols).equals(one.trades.select(cols))
    assert p.summary["final_balance"] == pytest.approx(one.summary["final_balance"], rel=1e-12)
    half = k.with_columns(pl.col("open", "high", "low", "close") * 0.5)
    two = simulate_portfolio(
        {"G": k, "H": half}, {c: strategy.evaluate(k) for c in "GH"}, divide=2, timeframe="1d", **kw
    )
    assert two.trades.height == 188 and set(two.trades["exit_reason"]) == {"reverse", "end"}
    assert two.signal_counts["skipped_coin_busy"] == 0
    # a sweep row equals the backtest of its combination
    grid = {"fast": [10], "slow": [20, 30]}
    spec = {
        "long": "SMA({fast}) crosses above SMA({slow}), buy at market",
        "short": "SMA({fast}) crosses below SMA({slow}), sell at market",
        "tp": "no take profit",
        "sl": "no stop loss",
        "exit": "reverse on the opposite signal",
    }
    rows = sv.sweep(spec, grid, {"G": k}, "1d", blocks=0, **kw).rows.sort("combo")
    assert rows["total_trades"].to_list()[0] == 94
    assert rows["final_balance"][0] == pytest.approx(one.summary["final_balance"], rel=1e-12)
    sides = {
        "long_entry": spec["long"].format(fast=10, slow=30),
        "short_entry": spec["short"].format(fast=10, slow=30),
    }
    other = sv.long_short(**(SMA_CROSS | sides))
    assert rows["final_balance"][1] == pytest.approx(
        sv.backtest(other, k, "1d", **kw).summary["final_balance"]
    )


def test_intrabar_detail_reverses_as_the_conservative_rules_where_no_level_is_inside(
    shared_datasets: Path,
) -> None:
    from svc_engine.data import resample

    fine = pl.scan_parquet(shared_datasets / "crypto" / "BTCUSDT-1m.parquet").slice(176_500, 6_000).collect()
    coarse = resample(fine, "15m")
    faster = {
        "long_entry": "SMA(5) crosses above SMA(10), buy at market",
        "short_entry": "SMA(5) crosses below SMA(10), sell at market",
    }
    sar = sv.long_short(**(SMA_CROSS | faster))
    sig = sar.evaluate(coarse)
    kw = FREE | {"timeframe": "15m", "commission_pct": 0.1}
    plain = simulate(coarse, sig, **kw)
    detail = simulate(coarse, sig, intrabar="detail", detail_klines=fine, **kw)
    assert plain.trades.height > 20 and set(plain.trades["exit_reason"]) == {"reverse", "end"}
    assert detail.trades.equals(plain.trades)
