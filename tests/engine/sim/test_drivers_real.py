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
from svc_engine.data import DataStore
from svc_engine.executors import LocalExecutor, RayExecutor, SerialExecutor
from svc_engine.sim.drivers import backtest, full_range, portfolio

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
    import cloudpickle

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


RECURSIVE = pytest.mark.xfail(
    strict=True,
    reason="the strategy's EMA/RSI are seeded recursive filters: a value depends on more than candle_count"
    " earlier candles, so time chunks (and a range's warm-up) change signals (engine-semantics 1 and 8)",
)


@pytest.mark.parametrize(
    "entry",
    [
        "price makes a new 20-candle high",
        "SMA(10) crosses above SMA(30)",
        "close crosses above the upper Bollinger band (20, 2)",
        pytest.param("RSI(14) crosses above 30", marks=RECURSIVE),
        pytest.param("EMA(12) crosses above EMA(26)", marks=RECURSIVE),
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
        "ETHUSDT", "1h", store=store, **SETTINGS,
    )  # fmt: skip
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
