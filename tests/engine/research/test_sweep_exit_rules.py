"""Sweeps of strategies with exit rules (docs/exits.md): for each kind of rule (exit condition,
trailing stop, holding time, end of the day, break-even move, market entry), with parameters inside
the rule, every row equals ``sv.backtest`` of its combination alone, every statistic; on the
embedded market, on the real candles of the shared datasets, on every executor, and through
walk-forward."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import polars as pl
import pytest

import svc_engine as sv
from svc_engine.executors import LocalExecutor, SerialExecutor
from svc_engine.research import Template, sweep, walk_forward
from svc_engine.research.demo import random_walk

RSI = "RSI({n}) crosses above 30"
#: kind -> (strategy template, grid, the exit reason the rule must produce in some trade)
KINDS: dict[str, tuple[dict[str, str], dict[str, list], str]] = {
    "exit condition": (
        {"entry": RSI, "tp": "4%", "sl": "2%", "exit": "exit when RSI({n}) rises above {level}"},
        {"n": [7, 14], "level": [55, 70]},
        "signal",
    ),
    "trailing stop": (
        {"entry": RSI, "tp": "no take profit", "sl": "trailing stop {trail}%"},
        {"n": [7, 14], "trail": [1, 2.5]},
        "trailing_stop",
    ),
    "trailing ATR stop with activation": (
        {"entry": RSI, "tp": "5%", "sl": "trailing stop of {mult} x ATR(14) after {after}% profit"},
        {"n": [7], "mult": [1.5, 3], "after": [0.5, 1]},
        "trailing_stop",
    ),
    "holding time": (
        {"entry": RSI, "tp": "4%", "sl": "2%", "exit": "after {hold} candles"},
        {"n": [7, 14], "hold": [3, 12]},
        "time",
    ),
    "end of the day": (
        {"entry": RSI, "tp": "{tp}%", "sl": "2%", "exit": "exit at the end of the day"},
        {"n": [7, 14], "tp": [3, 5]},
        "signal",
    ),
    "break-even move": (
        {"entry": RSI, "tp": "4%", "sl": "2%", "exit": "move the stop to break-even after {be}% profit"},
        {"n": [7, 14], "be": [0.5, 1]},
        "breakeven",
    ),
    "market entry and exit condition": (
        {
            "entry": "SMA({fast}) crosses above SMA({slow}), buy at market",
            "tp": "no take profit",
            "sl": "no stop loss",
            "exit": "exit when SMA({fast}) crosses below SMA({slow})",
        },
        {"fast": [5, 10], "slow": [20, 30]},
        "signal",
    ),
    "short, condition or time": (
        {
            "entry": "RSI({n}) crosses below 70",
            "tp": "3%",
            "sl": "trailing stop 2%",
            "exit": "exit when RSI({n}) drops below {level} or after 24 candles",
            "market_type": "futures",
            "position_side": "short",
        },
        {"n": [7, 14], "level": [30, 40]},
        "signal",
    ),
}
SETTINGS = {"commission_pct": 0.1, "spread_pct": 0.02}


@pytest.fixture(scope="module")
def frames() -> dict[str, pl.DataFrame]:
    return {"AAA": random_walk(1_500, seed=1), "BBB": random_walk(1_500, seed=2, vol=0.015)}


@pytest.fixture(scope="module")
def window(frames) -> tuple[int, int]:
    t = frames["AAA"]["open_time"].dt.epoch("s")  # random_walk times are Datetime("ms", "UTC")
    return int(t[300]), int(t[1_400])


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def assert_rows_equal_backtests(result: sv.SweepResult, strategy: dict, frames, window, **settings) -> set:
    """Every statistic of every row equals the backtest of its combination alone; returns the exit
    reasons of those backtests' trades."""
    template, reasons = Template.of(strategy), set()
    for row in result.rows.iter_rows(named=True):
        kwargs = template.render({name: row[name] for name in template.names})
        alone = sv.backtest(  # market: a sweep's year when none is known (a backtest would state it)
            sv.compile_strategy(**kwargs), frames[row["coin"]], "1h", *window, market="crypto", **settings
        )
        for name, value in alone.summary.items():
            assert _same(row[name], value), (row["combo"], row["coin"], name, row[name], value)
        reasons |= set(alone.trades["exit_reason"].to_list())
    return reasons


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_row_of_an_exit_rule_sweep_equals_its_backtest(kind, frames, window) -> None:
    strategy, grid, reason = KINDS[kind]
    result = sweep(strategy, grid, frames, "1h", *window, executor=SerialExecutor(), **SETTINGS)
    n_combos = math.prod(len(v) for v in grid.values())
    assert result.rows.height == 2 * n_combos and result.rows["total_trades"].min() > 0
    reasons = assert_rows_equal_backtests(result, strategy, frames, window, **SETTINGS)
    assert reason in reasons, (kind, reasons)
    for name in (p for p in grid if len(grid[p]) > 1):  # changing one parameter alone changes a result
        others = ["coin", *(p for p in grid if p != name)]
        varied = result.rows.group_by(others).agg(pl.col("final_balance").n_unique().alias("k"))
        assert varied["k"].max() > 1, (kind, name)


def test_settings_parameters_and_sizing_with_exit_rules(frames, window) -> None:
    strategy, grid, _ = KINDS["trailing stop"]
    grid = {**grid, "position_size_pct": [50, 100]}
    settings = {**SETTINGS, "min_candles_between_signals": 3}
    result = sweep(strategy, grid, frames, "1h", *window, **settings)
    for size in (50, 100):
        part = result.rows.filter(pl.col("position_size_pct") == size).drop("position_size_pct")
        sub = sv.SweepResult(part, ["n", "trail"], result.combos)
        assert_rows_equal_backtests(sub, strategy, frames, window, position_size_pct=size, **settings)
    risk = {**SETTINGS, "sizing": "risk", "risk_pct": 1}
    result = sweep(strategy, KINDS["trailing stop"][1], frames, "1h", *window, **risk)
    assert_rows_equal_backtests(result, strategy, frames, window, **risk)


def test_exit_rules_on_real_candles_of_the_shared_datasets(shared_datasets) -> None:
    """SMA crossover with market entries, a trailing stop and an exit condition or holding time, on
    the real BTCUSDT and ETHUSDT 1h candles from February to early September 2024 (the candles
    before February are the warm-up)."""
    since = int(datetime(2023, 12, 1, tzinfo=UTC).timestamp() * 1000)
    files = {c: shared_datasets / "crypto" / f"{c}-1h.parquet" for c in ("BTCUSDT", "ETHUSDT")}
    frames = {c: pl.read_parquet(f).filter(pl.col("open_time") >= since) for c, f in files.items()}
    window = ("2024-02-01", "2024-09-05T23:00:00")
    strategy = {
        "entry": "SMA({fast}) crosses above SMA({slow}), buy at market",
        "tp": "no take profit",
        "sl": "trailing stop {trail}%",
        "exit": "exit when SMA({fast}) crosses below SMA({slow}) or after {hold} candles",
    }
    grid = {"fast": [10, 20], "slow": [50], "trail": [3, 8], "hold": [48, 240]}
    with LocalExecutor(max_workers=2) as ex:
        result = sweep(strategy, grid, frames, "1h", *window, executor=ex, commission_pct=0.1)
    assert result.rows.height == 16 and result.rows["total_trades"].min() > 20
    reasons = assert_rows_equal_backtests(result, strategy, frames, window, commission_pct=0.1)
    assert {"signal", "time", "trailing_stop"} <= reasons


@pytest.fixture(scope="module")
def small(frames, window):
    strategy, grid, _ = KINDS["short, condition or time"]
    return strategy, grid, sweep(strategy, grid, frames, "1h", *window, executor=SerialExecutor(), **SETTINGS)


def test_local_executor_gives_identical_rows_with_exit_rules(small, frames, window) -> None:
    strategy, grid, serial = small
    with LocalExecutor(max_workers=2) as ex:
        local = sweep(strategy, grid, frames, "1h", *window, executor=ex, chunk_combos=1, **SETTINGS)
    assert local.rows.equals(serial.rows)


@pytest.mark.ray
def test_ray_executor_gives_identical_rows_with_exit_rules(small, frames, window, ray_executor) -> None:
    strategy, grid, serial = small
    ray = sweep(strategy, grid, frames, "1h", *window, executor=ray_executor, chunk_combos=2, **SETTINGS)
    assert ray.rows.equals(serial.rows)


def test_walk_forward_chooses_and_runs_exit_rule_parameters(frames) -> None:
    strategy, grid, _ = KINDS["exit condition"]
    klines = frames["AAA"]
    wf = walk_forward(
        strategy,
        grid,
        {"X": klines},
        "1h",
        in_sample=500,
        out_of_sample=300,
        by="total_return_pct",
        executor=SerialExecutor(),
        **SETTINGS,
    )
    assert wf.windows.height == 4 and "signal" in set(wf.trades["exit_reason"].to_list())
    for row in wf.windows.iter_rows(named=True):
        is_lo, is_hi, oos_lo, oos_hi = (
            int(row[k].timestamp() * 1000) for k in ("is_start", "is_end", "oos_start", "oos_end")
        )
        cells = sweep(
            strategy,
            grid,
            {"X": klines.filter(pl.col("open_time") <= row["is_end"])},
            "1h",
            is_lo / 1000,
            is_hi / 1000,
            **SETTINGS,
        ).cells("total_return_pct")
        assert row["is_value"] == cells["total_return_pct"].max()
        kwargs = Template.of(strategy).render({"n": row["n"], "level": row["level"]})
        upto = klines.filter(pl.col("open_time") <= row["oos_end"])
        alone = sv.backtest(
            sv.compile_strategy(**kwargs), upto, "1h", oos_lo / 1000, oos_hi / 1000, **SETTINGS
        )
        assert row["oos_value"] == alone.summary["total_return_pct"]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"market_type": "futures", "position_side": "short"},
        {"hold": 30, "breakeven": 0.5},
        {"entry_order": "market"},
    ],
)
def test_strategies_with_rules_compiled_part_by_part_equal_whole_compiles(options) -> None:
    from svc_engine.research.compiling import PartsCache

    cache = PartsCache()
    side = "below" if options.get("position_side") == "short" else "above"
    rules = (
        None,
        f"exit when RSI(14) crosses {side} 50",
        "after 12 candles",
        "move the stop to entry after 1% profit, exit when the day ends",
    )
    for n in (7, 14):
        for sl in ("2%", "trailing stop 1.5%", "no stop loss"):
            for rule in rules:
                kwargs = {
                    "entry_condition": f"RSI({n}) crosses {side} 30",
                    "tp_condition": "3%",
                    "sl_condition": sl,
                    "exit_condition": rule,
                    **options,
                }
                assert cache.compile(kwargs) == sv.compile_strategy(**kwargs), kwargs
    assert (len(cache.entries), len(cache.exits), len(cache.rules)) == (2, 3, 4)
