"""The drivers on the real kernels: chunked equals one piece, Ray equals local, and a one-coin
portfolio with ``divide`` 1 equals the single-coin run (engine-semantics.md sections 6 and 8)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

import svc_engine.sim as sim
from svc_engine.data import DataStore, load_klines
from svc_engine.executors import LocalExecutor, RayExecutor, SerialExecutor
from svc_engine.sim.drivers import (
    backtest,
    evaluate_signals,
    first_and_stop,
    full_range,
    portfolio,
    warmup_of,
)
from svc_engine.strategy import Strategy, compile_strategy

COINS = ["BTCUSDT", "ETHUSDT", "SOLUSDT"]
SLICES = {"BTCUSDT": (-3000, 3000), "ETHUSDT": (0, 3000), "SOLUSDT": (500, 3000)}
SETTINGS = {"commission_pct": 0.1, "min_candles_between_signals": 2, "spread_pct": 0.05}


@dataclass(frozen=True)
class Breakout:
    """Long above the highest close of ``candle_count`` candles, TP 3 %, SL 2 %; windows only."""

    candle_count: int = 20

    def evaluate(self, klines: pl.DataFrame) -> pl.DataFrame:
        top = pl.col("close").shift(1).rolling_max(self.candle_count - 1)
        return klines.filter((pl.col("close") > top).fill_null(False)).select(
            "open_time",
            side=pl.lit("long"),
            limit_price=pl.col("close") * 0.995,
            tp_price=pl.col("close") * 1.03,
            sl_price=pl.col("close") * 0.98,
        )


@pytest.fixture(scope="module")
def store(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> DataStore:
    data = DataStore(tmp_path_factory.mktemp("drivers-real"))
    for symbol, (offset, length) in SLICES.items():
        frame = pl.read_parquet(shared_datasets / "crypto" / f"{symbol}-1h.parquet")
        data.write_klines("crypto", symbol, "1h", frame.slice(offset, length))
    return data


@pytest.fixture(scope="session")
def ray_executor() -> Iterator[RayExecutor]:
    pytest.importorskip("ray")
    from ray import cloudpickle  # the copy Ray serialises tasks with

    # Ray workers cannot import this test module: ship its classes (Breakout) by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        executor = RayExecutor(num_cpus=2, object_store_memory=200 * 1024 * 1024)
    except Exception as error:  # a sandbox without shared memory or sockets
        pytest.skip(f"a local Ray runtime cannot start here: {error}")
    yield executor
    executor.close()


def _range(store: DataStore) -> tuple[int, int]:
    times = pl.read_parquet(store.path("crypto", "BTCUSDT", "1h"))["open_time"]
    return times[300] // 1000, times[2799] // 1000


def test_chunked_backtest_equals_one_piece_trade_for_trade(store: DataStore) -> None:
    start, end = _range(store)
    one = backtest(Breakout(), "BTCUSDT", "1h", start, end, store=store, chunks=1, **SETTINGS)
    assert one.summary["total_trades"] >= 20
    for chunks, executor in ((5, SerialExecutor()), (13, LocalExecutor(max_workers=2))):
        many = backtest(
            Breakout(), "BTCUSDT", "1h", start, end, store=store, chunks=chunks, executor=executor, **SETTINGS
        )
        assert many.trades.equals(one.trades)
        assert many.summary == one.summary
        assert many.signal_counts == one.signal_counts
        assert many.equity.equals(one.equity)


def test_range_backtest_sees_warmup_signals_as_the_whole_history_does(store: DataStore) -> None:
    start, end = _range(store)
    ranged = backtest(Breakout(), "BTCUSDT", "1h", start, end, store=store, **SETTINGS)
    frame = pl.read_parquet(store.path("crypto", "BTCUSDT", "1h"))
    inside = frame.filter(pl.col("open_time").is_between(start * 1000, end * 1000))
    signals = Breakout().evaluate(frame).filter(pl.col("open_time").is_between(start * 1000, end * 1000))
    direct = sim.simulate(
        inside, signals, timeframe="1h", symbol="BTCUSDT", start_ts=start, end_ts=end, **SETTINGS
    )
    assert ranged.trades.equals(direct.trades)
    assert ranged.summary == direct.summary


def test_one_coin_portfolio_with_divide_1_equals_the_single_coin_run(store: DataStore) -> None:
    single = backtest(Breakout(), "ETHUSDT", "1h", store=store, **SETTINGS)
    both = portfolio(Breakout(), ["ETHUSDT"], "1h", divide=1, store=store, **SETTINGS)
    assert single.summary["total_trades"] >= 20
    columns = [c for c in single.trades.columns if c in both.trades.columns]
    assert both.trades.select(columns).equals(single.trades.select(columns))
    assert both.summary["final_balance"] == pytest.approx(single.summary["final_balance"], rel=1e-12)
    assert both.summary["max_drawdown_pct"] == pytest.approx(single.summary["max_drawdown_pct"], rel=1e-12)


def test_full_range_equals_one_backtest_per_coin(store: DataStore) -> None:
    result = full_range(
        Breakout(), COINS, "1h", store=store, executor=LocalExecutor(max_workers=2), **SETTINGS
    )
    for coin in COINS:
        alone = backtest(Breakout(), coin, "1h", store=store, **SETTINGS)
        assert result.results[coin].trades.equals(alone.trades)
    assert result.summary["total_trades"] == sum(r.trades.height for r in result.results.values())
    assert result.errors == {}


@pytest.mark.ray
def test_ray_equals_local_for_backtest_full_range_and_portfolio(
    store: DataStore, ray_executor: RayExecutor
) -> None:
    start, end = _range(store)
    local = LocalExecutor(max_workers=2)
    runs = [
        lambda ex: (
            backtest(
                Breakout(), "BTCUSDT", "1h", start, end, store=store, chunks=4, executor=ex, **SETTINGS
            ).trades
        ),
        lambda ex: pl.concat(
            [
                r.trades
                for r in full_range(
                    Breakout(), COINS, "1h", store=store, executor=ex, **SETTINGS
                ).results.values()
            ]
        ),
        lambda ex: portfolio(Breakout(), COINS, "1h", divide=2, store=store, executor=ex, **SETTINGS).trades,
    ]
    for run in runs:
        on_ray, on_threads = run(ray_executor), run(local)
        assert on_ray.height > 0
        assert on_ray.equals(on_threads)


@pytest.mark.ray
def test_ray_progress_counts_coins(store: DataStore, ray_executor: RayExecutor) -> None:
    events: list[dict] = []
    full_range(Breakout(), COINS, "1h", store=store, executor=ray_executor, progress=events.append)
    assert [e["done"] for e in events] == [1, 2, 3]
    assert {e["total"] for e in events} == {3} and events[-1]["pct"] == 100.0


@pytest.mark.parametrize(
    "entry",
    [
        "price makes a new 20-candle high",
        "SMA(10) crosses above SMA(30)",
        "close crosses above the upper Bollinger band (20, 2)",
        "RSI(14) crosses above 30",
        "EMA(12) crosses above EMA(26)",
    ],
)
def test_compiled_strategy_chunked_equals_one_piece(store: DataStore, entry: str) -> None:
    strategy = pytest.importorskip("svc_engine.strategy").compile_strategy(entry, "3%", "2%")
    start, end = _range(store)
    one = backtest(strategy, "BTCUSDT", "1h", start, end, store=store, chunks=1, **SETTINGS)
    many = backtest(strategy, "BTCUSDT", "1h", start, end, store=store, chunks=11, **SETTINGS)
    assert one.summary["total_signals"] > 10
    assert many.trades.equals(one.trades)
    assert many.signal_counts == one.signal_counts


def test_a_condition_string_is_compiled(store: DataStore) -> None:
    compile_strategy = pytest.importorskip("svc_engine.strategy").compile_strategy
    by_text = backtest("SMA(10) crosses above SMA(30)", "ETHUSDT", "1h", store=store, **SETTINGS)
    by_dict = backtest(
        {"entry_condition": "SMA(10) crosses above SMA(30)", "tp_condition": "3%", "sl_condition": "2%"},
        "ETHUSDT",
        "1h",
        store=store,
        **SETTINGS,
    )
    compiled = compile_strategy("SMA(10) crosses above SMA(30)", "3%", "2%")
    assert by_dict.trades.equals(backtest(compiled, "ETHUSDT", "1h", store=store, **SETTINGS).trades)
    default_tp_sl = compile_strategy("SMA(10) crosses above SMA(30)")
    assert by_text.trades.equals(backtest(default_tp_sl, "ETHUSDT", "1h", store=store, **SETTINGS).trades)
    assert by_text.summary["total_signals"] > 10


@pytest.mark.ray
def test_ray_equals_local_with_a_compiled_strategy(store: DataStore, ray_executor: RayExecutor) -> None:
    strategy = pytest.importorskip("svc_engine.strategy").compile_strategy(
        "price makes a new 20-candle high", "3%", "2%"
    )
    on_ray = full_range(strategy, COINS, "1h", store=store, executor=ray_executor, **SETTINGS)
    local = full_range(strategy, COINS, "1h", store=store, executor=LocalExecutor(max_workers=2), **SETTINGS)
    for coin in COINS:
        assert on_ray.results[coin].trades.height > 0
        assert on_ray.results[coin].trades.equals(local.results[coin].trades)


# ----------------------------------------------------------------------------------------------------
# Recursive indicators (EMA, Wilder RSI/ATR, MACD, Keltner) on real data: chunks and ranges get
# `warmup_candles` of history, so they reproduce the whole history's signals exactly.

RECURSIVE = {
    "rsi_ema_atr": (
        "RSI(14) crosses above 30 and close is above EMA(200)",
        "2 x ATR(14) above entry",
        "1.5 x ATR(14) below entry",
    ),
    "rsi_atr": ("RSI(14) crosses above 30", "2 x ATR(14) above entry", "1.5 x ATR(14) below entry"),
    "macd": ("MACD line crosses above MACD signal line", "3%", "2%"),
    "keltner": ("close crosses above the upper Keltner channel (20, 2)", "2 x ATR(20) above entry", "1%"),
    "ema_of_rsi": ("EMA(9) of RSI(14) crosses above 50", "2%", "1%"),
}


@dataclass(frozen=True)
class CandleCountOnly:
    """A foreign strategy object: only ``candle_count`` and ``evaluate`` (the drivers' fallback)."""

    inner: Strategy

    @property
    def candle_count(self) -> int:
        return self.inner.candle_count

    def evaluate(self, klines: pl.DataFrame) -> pl.DataFrame:
        return self.inner.evaluate(klines)


@pytest.fixture(scope="module")
def btc_1m(shared_datasets: Path) -> pl.DataFrame:
    frame = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1m.parquet")
    return frame.slice(2_000_000, 300_000)


@pytest.fixture(scope="module")
def eth_1h(shared_datasets: Path) -> pl.DataFrame:
    return pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet")


def _compiled(key: str) -> Strategy:
    return compile_strategy(*RECURSIVE[key])


@pytest.mark.parametrize("key", ["rsi_ema_atr", "macd", "keltner"])
def test_recursive_strategy_chunked_equals_one_piece_on_300k_btc_1m(btc_1m: pl.DataFrame, key: str) -> None:
    strategy = _compiled(key)
    start = btc_1m["open_time"][15_000] // 1000  # past EMA(200)'s 10 250-candle warm-up
    one = backtest(strategy, btc_1m, "1m", start, None, chunks=1, **SETTINGS)
    assert one.summary["total_signals"] > 100
    for chunks in (3, 17):
        many = backtest(strategy, btc_1m, "1m", start, None, chunks=chunks, **SETTINGS)
        assert many.trades.equals(one.trades)
        assert many.signal_counts == one.signal_counts
        assert many.summary == one.summary


@pytest.mark.parametrize("key", ["rsi_ema_atr", "rsi_atr", "macd", "keltner", "ema_of_rsi"])
def test_recursive_strategy_chunked_equals_one_piece_on_eth_1h(eth_1h: pl.DataFrame, key: str) -> None:
    strategy = _compiled(key)
    one = backtest(strategy, eth_1h, "1h", chunks=1, **SETTINGS)
    assert one.summary["total_trades"] > 5
    for chunks in (4, 9, 23):
        many = backtest(strategy, eth_1h, "1h", chunks=chunks, executor=SerialExecutor(), **SETTINGS)
        assert many.trades.equals(one.trades)
        assert many.summary == one.summary


def test_candle_count_warmup_alone_changes_rsi_signals(btc_1m: pl.DataFrame) -> None:
    """The premise, on the brief's example: TA-Lib-seeded RSI needs more than candle_count."""
    strategy = compile_strategy("RSI(14) crosses above 30", "3%", "2%")
    foreign = CandleCountOnly(strategy)
    assert warmup_of(foreign) == 16 and warmup_of(strategy) == 1416
    one = evaluate_signals(strategy, btc_1m, chunks=1)
    assert evaluate_signals(strategy, btc_1m, chunks=40).equals(one)
    assert not evaluate_signals(foreign, btc_1m, chunks=40).equals(one)


@pytest.fixture(scope="module")
def eth_store(eth_1h: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> DataStore:
    data = DataStore(tmp_path_factory.mktemp("drivers-eth"))
    data.write_klines("crypto", "ETHUSDT", "1h", eth_1h)
    return data


@pytest.mark.parametrize("key", ["rsi_atr", "macd", "keltner", "ema_of_rsi"])
def test_range_signals_equal_whole_history_signals_inside_the_range(
    eth_store: DataStore, eth_1h: pl.DataFrame, key: str
) -> None:
    strategy = _compiled(key)
    times = eth_1h["open_time"]
    start, end = times[3000] // 1000, times[5200] // 1000
    inside = pl.col("open_time").is_between(start * 1000, end * 1000)
    whole = strategy.evaluate(eth_1h).filter(inside)
    assert whole.height > 5
    loaded = load_klines("ETHUSDT", "1h", start, end, "crypto", warmup_of(strategy), store=eth_store)
    first, stop = first_and_stop(loaded, start, end)
    assert first == min(3000, strategy.warmup_candles)
    for chunks in (1, 5):
        assert evaluate_signals(strategy, loaded, first, stop, chunks=chunks).equals(whole)
    ranged = backtest(strategy, "ETHUSDT", "1h", start, end, store=eth_store, chunks=3, **SETTINGS)
    direct = sim.simulate(
        eth_1h.filter(inside), whole, timeframe="1h", symbol="ETHUSDT", start_ts=start, end_ts=end, **SETTINGS
    )
    assert ranged.trades.equals(direct.trades)
    assert ranged.summary == direct.summary


def test_full_range_answers_the_spec_result_over_every_coin(store: DataStore) -> None:
    """The spec's Backtest result for several coins: every coin's trades and positions tagged with
    their coin, and the single-coin summary figures over all of them, computed by hand here."""
    import numpy as np

    result = full_range(
        Breakout(), COINS, "1h", store=store, executor=LocalExecutor(max_workers=2), **SETTINGS
    )
    served = result.to_dict()
    runs = [result.results[c] for c in COINS]
    assert served["coin"] == ",".join(COINS)
    assert served["total_trades"] == len(served["trades"]) == sum(r.trades.height for r in runs) > 0
    assert served["total_positions"] == sum(r.all_positions.height for r in runs)
    assert [t["coin"] for t in served["trades"]] == [
        c for c, r in zip(COINS, runs, strict=True) for _ in range(r.trades.height)
    ]
    summary = served["summary"]
    returns = np.concatenate([np.asarray(r.trades["return_pct"]) for r in runs])
    profits = np.concatenate([np.asarray(r.trades["pnl"]) for r in runs])
    wins = profits > 0
    assert summary["gain_count"] == int(wins.sum()) and summary["loss_count"] == int((profits < 0).sum())
    assert summary["win_rate"] == pytest.approx(100.0 * wins.sum() / profits.size)
    assert summary["best_trade_pct"] == pytest.approx(returns.max())
    assert summary["worst_trade_pct"] == pytest.approx(returns.min())
    assert summary["final_balance"] == pytest.approx(sum(r.summary["final_balance"] for r in runs))
    mean_return = sum(r.summary["total_return_pct"] for r in runs) / len(runs)  # equal initial balances
    assert summary["total_return_pct"] == pytest.approx(mean_return)
    assert summary["max_drawdown_pct"] == max(r.summary["max_drawdown_pct"] for r in runs)
    assert summary["total_signals"] == sum(r.summary["total_signals"] for r in runs)
    spec = {
        "total_signals",
        "gain_count",
        "loss_count",
        "total_trades",
        "win_rate",
        "final_balance",
        "total_return_pct",
        "max_drawdown_pct",
        "profit_factor",
        "avg_profit_per_trade_pct",
        "avg_signals_per_month",
        "avg_win_return_pct",
        "avg_loss_return_pct",
        "best_trade_pct",
        "worst_trade_pct",
    }
    assert spec <= set(summary) and {"completed", "profitable_coins"} <= set(summary)
    assert served["results"][COINS[0]] == result.results[COINS[0]].to_dict()
