"""The drivers' plumbing, against a recording fake of the kernels: what is loaded, how signals are
chunked and clipped, which arguments reach ``simulate``/``simulate_portfolio``, progress and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from svc_engine.data import Catalog, DataStore
from svc_engine.executors import LocalExecutor, SerialExecutor
from svc_engine.sim import drivers
from svc_engine.sim.drivers import (
    FullRangeResult,
    backtest,
    chunk_bounds,
    estimate,
    estimate_cost_credits,
    estimate_duration_seconds,
    evaluate_signals,
    first_and_stop,
    full_range,
    plan_chunks,
    portfolio,
)
from svc_engine.sim.settings import Settings

H = 3_600_000  # one hour in ms


@dataclass(frozen=True)
class SmaCross:
    """Long when the fast mean crosses above the slow one; windows only, so ``candle_count`` suffices."""

    candle_count: int = 24

    def evaluate(self, klines: pl.DataFrame) -> pl.DataFrame:
        fast = pl.col("close").rolling_mean(self.candle_count // 4)
        slow = pl.col("close").rolling_mean(self.candle_count)
        fire = (fast > slow) & (fast.shift(1) <= slow.shift(1))
        return klines.filter(fire.fill_null(False)).select(
            "open_time",
            side=pl.lit("long"),
            limit_price=pl.lit(None, pl.Float64),
            tp_price=pl.col("close") * 1.03,
            sl_price=pl.col("close") * 0.98,
        )


@dataclass
class FakeResult:
    klines: pl.DataFrame
    signals: pl.DataFrame
    kwargs: dict[str, Any]
    summary: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.summary = {
            "total_trades": self.signals.height,
            "total_signals": self.signals.height,
            "total_return_pct": float(self.klines["close"][-1] / self.klines["close"][0] - 1) * 100,
            "final_balance": 100.0,
            "max_drawdown_pct": 0.0,
            "avg_signals_per_month": 0.0,
        }
        # What FullRangeResult.combined reads of a result: no trades, the default balance.
        self.trades = pl.DataFrame(
            {"return_pct": [], "pnl": []}, schema={"return_pct": pl.Float64, "pnl": pl.Float64}
        )
        self.settings = Settings()

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "all_positions": [], "trades": []}


class FakeSim:
    """Stands in for ``svc_engine.sim``: records each call and returns what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def simulate(self, klines: pl.DataFrame, signals: pl.DataFrame, **kwargs: Any) -> FakeResult:
        self.calls.append(("simulate", (klines, signals), kwargs))
        return FakeResult(klines, signals, kwargs)

    def simulate_portfolio(self, klines_by_coin: dict, signals_by_coin: dict, **kwargs: Any) -> dict:
        self.calls.append(("simulate_portfolio", (klines_by_coin, signals_by_coin), kwargs))
        return {"klines": klines_by_coin, "signals": signals_by_coin, **kwargs}


@pytest.fixture
def sim(monkeypatch: pytest.MonkeyPatch) -> FakeSim:
    fake = FakeSim()
    monkeypatch.setattr(drivers, "_sim", lambda: fake)
    return fake


# Slices of the real files: BTC's last 3000 hours, ETH's first 3000, SOL's hours 500..3500.
SLICES = {"BTCUSDT": (-3000, 3000), "ETHUSDT": (0, 3000), "SOLUSDT": (500, 3000)}


@pytest.fixture(scope="session")
def store(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> DataStore:
    data = DataStore(tmp_path_factory.mktemp("drivers-store"))
    for symbol, (offset, length) in SLICES.items():
        frame = pl.read_parquet(shared_datasets / "crypto" / f"{symbol}-1h.parquet")
        data.write_klines("crypto", symbol, "1h", frame.slice(offset, length))
    return data


def _frame(store: DataStore, symbol: str) -> pl.DataFrame:
    return pl.read_parquet(store.path("crypto", symbol, "1h"))


# -- chunks ----------------------------------------------------------------------------------------


def test_plan_chunks_is_one_per_started_block() -> None:
    assert [plan_chunks(n) for n in (0, 1, 100_000, 100_001, 4_351_448)] == [1, 1, 1, 2, 44]


def test_chunk_bounds_cover_rows_without_overlap() -> None:
    assert chunk_bounds(0, 10, 4) == [(0, 2), (2, 5), (5, 8), (8, 10)]
    assert chunk_bounds(5, 7, 10) == [(5, 6), (6, 7)]
    with pytest.raises(ValueError, match="chunks must be at least 1, got 0"):
        chunk_bounds(0, 10, 0)


def test_first_and_stop_select_the_inclusive_range() -> None:
    frame = pl.DataFrame({"open_time": [0, H, 2 * H, 3 * H]})
    assert first_and_stop(frame, 3600, 7200) == (1, 3)
    assert first_and_stop(frame, None, None) == (0, 4)
    assert first_and_stop(frame, 0.5, 3600) == (1, 2)
    with pytest.raises(ValueError, match=r"range \[1, 3599\] selects no candle of the series"):
        first_and_stop(frame, 1, 3599)


@pytest.mark.parametrize("chunks", [2, 7, 50])
def test_chunked_signals_equal_one_piece(store: DataStore, chunks: int) -> None:
    klines, strategy = _frame(store, "BTCUSDT"), SmaCross()
    whole = strategy.evaluate(klines).filter(pl.col("open_time") >= klines["open_time"][100])
    assert whole.height > 40  # the comparison below is about many signals, not none
    for executor in (SerialExecutor(), LocalExecutor(max_workers=2)):
        chunked = evaluate_signals(strategy, klines, 100, chunks=chunks, executor=executor)
        assert chunked.equals(whole)


def test_evaluating_no_rows_is_refused(store: DataStore) -> None:
    with pytest.raises(ValueError, match=r"rows \[5, 5\) select no candle of 3000"):
        evaluate_signals(SmaCross(), _frame(store, "ETHUSDT"), 5, 5)


def test_signals_of_a_chunk_stay_inside_it(store: DataStore) -> None:
    klines = _frame(store, "BTCUSDT")
    signals = evaluate_signals(SmaCross(), klines, 1000, 1200, chunks=3)
    times = klines["open_time"]
    assert signals["open_time"].min() >= times[1000]
    assert signals["open_time"].max() <= times[1199]


# -- backtest --------------------------------------------------------------------------------------


def test_backtest_loads_warmup_evaluates_and_simulates_the_range(store: DataStore, sim: FakeSim) -> None:
    frame = _frame(store, "BTCUSDT")
    start, end = frame["open_time"][500] // 1000, frame["open_time"][2499] // 1000
    events: list[dict] = []
    result = backtest(
        SmaCross(),
        "BTCUSDT",
        "1h",
        start,
        end,
        store=store,
        chunks=4,
        progress=events.append,
        executor=SerialExecutor(),
        commission_pct=0.1,
    )
    assert result.klines.equals(frame.slice(500, 2000))
    expected = SmaCross().evaluate(frame).filter(pl.col("open_time").is_between(start * 1000, end * 1000))
    assert result.signals.equals(expected)
    # the span of the loaded data (warm-up included), so that a range warning names the data
    first, last = result.kwargs.pop("data_span")
    assert first < start * 1000 and last == end * 1000
    assert result.kwargs == {
        "timeframe": "1h",
        "symbol": "BTCUSDT",
        "start_ts": start,
        "end_ts": end,
        "market": "crypto",
        "commission_pct": 0.1,
    }
    assert [e["item"] for e in events] == ["chunk 1/4", "chunk 2/4", "chunk 3/4", "chunk 4/4"]
    assert events[-1]["pct"] == 100.0


def test_backtest_of_a_frame_uses_its_earlier_candles_as_warmup(store: DataStore, sim: FakeSim) -> None:
    frame = _frame(store, "ETHUSDT")
    start = frame["open_time"][24] // 1000
    result = backtest(SmaCross(), frame, "1h", start, None, chunks=3)
    assert result.klines.height == 3000 - 24
    assert result.signals.equals(SmaCross().evaluate(frame).filter(pl.col("open_time") >= start * 1000))
    assert "market" not in result.kwargs and result.kwargs["symbol"] is None


def test_backtest_refuses_bad_settings_before_loading(sim: FakeSim) -> None:
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['comission_pct'\]"):
        backtest(SmaCross(), "NOSUCH", "1h", comission_pct=0.1)
    with pytest.raises(ValueError, match="intrabar='detail' is not supported by this engine"):
        full_range(SmaCross(), ["NOSUCH"], "1h", intrabar="detail")
    with pytest.raises(ValueError, match=r"min_loss_pct \(60.0\) exceeds max_loss_pct \(50.0\)"):
        portfolio(SmaCross(), ["NOSUCH", "OTHER"], "1h", min_loss_pct=60)
    assert sim.calls == []


def test_backtest_refuses_an_inverted_range_and_a_non_strategy() -> None:
    with pytest.raises(ValueError, match="inverted range: start_ts 10 is after end_ts 5"):
        backtest(SmaCross(), "BTCUSDT", "1h", 10, 5)
    with pytest.raises(TypeError, match="not a strategy: list"):
        backtest([1], "BTCUSDT", "1h")


# -- full_range ------------------------------------------------------------------------------------


def test_full_range_runs_each_coin_on_its_history_and_reports_errors(store: DataStore, sim: FakeSim) -> None:
    events: list[dict] = []
    result = full_range(
        SmaCross(),
        ["BTCUSDT", "NOPEUSDT", "ETHUSDT"],
        "1h",
        store=store,
        progress=events.append,
        executor=LocalExecutor(max_workers=2),
    )
    assert isinstance(result, FullRangeResult)
    assert list(result.results) == ["BTCUSDT", "ETHUSDT"]
    assert result.results["ETHUSDT"].klines.equals(_frame(store, "ETHUSDT"))
    assert result.results["BTCUSDT"].signals.equals(SmaCross().evaluate(_frame(store, "BTCUSDT")))
    assert list(result.errors) == ["NOPEUSDT"]
    assert result.errors["NOPEUSDT"].startswith("DataNotFoundError: ")
    assert "NOPEUSDT" in result.errors["NOPEUSDT"]
    summary = result.summary
    assert (summary["coins"], summary["completed"], summary["failed"]) == (3, 2, 1)
    trades = result.results["BTCUSDT"].signals.height + result.results["ETHUSDT"].signals.height
    assert summary["total_trades"] == trades
    assert result.to_dict()["errors"] == result.errors
    assert result.to_dict()["coins"] == ["BTCUSDT", "ETHUSDT"]
    assert result.timeframe == "1h"
    assert len(events) == 3 and {e["total"] for e in events} == {3} and events[-1]["pct"] == 100.0
    assert sorted((e["item"], e["status"]) for e in events) == [
        ("BTCUSDT", "completed"),
        ("ETHUSDT", "completed"),
        ("NOPEUSDT", "failed"),
    ]


def test_full_range_with_no_runnable_coin_says_why(store: DataStore, sim: FakeSim) -> None:
    with pytest.raises(ValueError, match=r"no coin could be backtested: NOPEUSDT: DataNotFoundError"):
        full_range(SmaCross(), ["NOPEUSDT"], "1h", store=store)


def test_full_range_refuses_empty_and_repeated_coins() -> None:
    with pytest.raises(ValueError, match="coins is empty"):
        full_range(SmaCross(), [], "1h")
    with pytest.raises(ValueError, match="coins lists ETHUSDT more than once"):
        full_range(SmaCross(), ["ETHUSDT", "BTCUSDT", "ETHUSDT"], "1h")


# -- portfolio -------------------------------------------------------------------------------------


def test_portfolio_clips_each_coin_from_start_and_keeps_coin_order(store: DataStore, sim: FakeSim) -> None:
    sol = _frame(store, "SOLUSDT")
    start = sol["open_time"][0] // 1000 + 10 * 3600  # after ETH's first candle, 10 h into SOL's
    events: list[dict] = []
    out = portfolio(
        SmaCross(),
        ["SOLUSDT", "ETHUSDT"],
        "1h",
        divide=2,
        initial_balance=50,
        start_ts=start,
        store=store,
        progress=events.append,
        commission_pct=0.3,
    )
    eth = _frame(store, "ETHUSDT")
    assert out["klines"]["SOLUSDT"].equals(sol.slice(10))
    assert out["klines"]["ETHUSDT"].equals(eth.filter(pl.col("open_time") >= start * 1000))
    full_signals = SmaCross().evaluate(sol).filter(pl.col("open_time") >= start * 1000)
    assert out["signals"]["SOLUSDT"].equals(full_signals)
    assert out["coins"] == ["SOLUSDT", "ETHUSDT"]
    assert (out["divide"], out["initial_balance"], out["start_ts"], out["timeframe"]) == (2, 50, start, "1h")
    assert (out["commission_pct"], out["market"]) == (0.3, "crypto")
    assert [e["done"] for e in events] == [1, 2] and events[-1]["pct"] == 100.0


def test_portfolio_names_the_coin_that_failed(store: DataStore, sim: FakeSim) -> None:
    with pytest.raises(LookupError) as info:
        portfolio(SmaCross(), ["ETHUSDT", "NOPEUSDT"], "1h", store=store, executor=SerialExecutor())
    assert "while computing item 'NOPEUSDT' (2 of 2)" in info.value.__notes__


# -- estimate --------------------------------------------------------------------------------------


def test_estimate_full_range_counts_every_candle_one_chunk_per_coin(store: DataStore) -> None:
    out = estimate(SmaCross(), ["BTCUSDT", "ETHUSDT"], "1h", catalog=Catalog(store), workers=2)
    assert out == {
        "mode": "full_range",
        "chunks": 2,
        "total_candles": 6000,
        "candles_by_coin": {"BTCUSDT": 3000, "ETHUSDT": 3000},
        "estimated_cost_credits": 3,
        "estimated_duration_seconds": 0.502,
    }


def test_estimate_range_clips_to_the_data(store: DataStore) -> None:
    eth = _frame(store, "ETHUSDT")
    first, last = eth["open_time"][0] // 1000, eth["open_time"][-1] // 1000
    out = estimate(SmaCross(), ["ETHUSDT"], "1h", first - 86_400, first + 99 * 3600, catalog=Catalog(store))
    assert (out["mode"], out["start_ts"], out["end_ts"]) == ("range", first, first + 99 * 3600)
    assert (out["total_candles"], out["chunks"]) == (100, 1)
    whole = estimate(SmaCross(), "ETHUSDT", "1h", 0, 10**10, catalog=Catalog(store))
    assert (whole["start_ts"], whole["end_ts"], whole["total_candles"]) == (first, last, 3000)


@pytest.mark.parametrize(
    ("coins", "start", "end", "message"),
    [
        (["ETHUSDT"], 1, None, "got only start_ts"),
        (["ETHUSDT"], None, 1, "got only end_ts"),
        (["ETHUSDT"], 10, 5, "inverted range: start_ts 10 is after end_ts 5"),
        (["ETHUSDT", "BTCUSDT"], 1, 5, "range mode takes exactly one coin, got 2: ETHUSDT, BTCUSDT"),
        (["ETHUSDT"], 1, 5, r"range \[1, 5\] selects no candle of ETHUSDT 1h; the data covers 2024-01-01"),
        ([], None, None, "coins is empty"),
    ],
)
def test_estimate_refuses_bad_requests(
    store: DataStore, coins: list[str], start: int | None, end: int | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        estimate(SmaCross(), coins, "1h", start, end, catalog=Catalog(store))


def test_cost_and_duration_formulas() -> None:
    assert estimate_cost_credits(0, 1, "range") == 1
    assert estimate_cost_credits(4_351_448, 44, "range") == 88
    assert estimate_cost_credits(72_540, 25, "full_range") == 26
    assert estimate_cost_credits(60_000, 20, "portfolio") == 23
    assert estimate_duration_seconds(3_000_000, 1, 1) == 2.5
    assert estimate_duration_seconds(3_000_000, 4, 4) == 1.0
    assert estimate_duration_seconds(3_000_000, 4, 3) == 1.5
    with pytest.raises(ValueError, match="unknown mode 'run'"):
        estimate_cost_credits(1, 1, "run")
    with pytest.raises(ValueError, match="chunks and workers must be at least 1, got 0 and 1"):
        estimate_duration_seconds(1, 0, 1)
