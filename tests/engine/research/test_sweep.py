"""``sweep``: every row equals the backtest of its combination alone, on every executor; shared
indicators are computed once per coin; a killed sweep with a sink resumes to the same rows."""

from __future__ import annotations

import math
from collections import Counter

import polars as pl
import pytest

import svc_engine as sv
from svc_engine.executors import LocalExecutor, SerialExecutor
from svc_engine.research import Template, combinations, sweep
from svc_engine.research.demo import random_walk
from svc_engine.research.sweeper import part_path, plan_chunks
from svc_engine.strategy import ema

H = 3_600_000
STRATEGY = {"entry": "RSI({n}) crosses above {level}", "tp": "{tp}%", "sl": "1.5%"}
GRID = {"n": [7, 14], "level": [30, 40], "tp": [2, 3.5], "min_candles_between_signals": [2, 6]}
SETTINGS = {"commission_pct": 0.1}


@pytest.fixture(scope="module")
def frames() -> dict[str, pl.DataFrame]:
    return {"AAA": random_walk(1_500, seed=1), "BBB": random_walk(1_500, seed=2, vol=0.015)}


@pytest.fixture(scope="module")
def window(frames) -> tuple[int, int]:
    t = frames["AAA"]["open_time"].dt.epoch("s")  # random_walk times are Datetime("ms", "UTC")
    return int(t[300]), int(t[1_400])


@pytest.fixture(scope="module")
def serial_result(frames, window):
    return sweep(STRATEGY, GRID, frames, "1h", *window, executor=SerialExecutor(), **SETTINGS)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_every_row_equals_the_backtest_of_its_combination_alone(serial_result, frames, window) -> None:
    rows = serial_result.rows
    assert rows.height == 16 * 2 and rows["coin"].to_list()[:2] == ["AAA", "BBB"]
    for combo in combinations(GRID):
        text = Template.of(STRATEGY).render({k: combo[k] for k in ("n", "level", "tp")})
        gap = combo["min_candles_between_signals"]
        for coin, klines in frames.items():
            alone = sv.backtest(
                sv.compile_strategy(**text),
                klines,
                "1h",
                *window,
                min_candles_between_signals=gap,
                market="crypto",  # a sweep's year when no market is known; a backtest would state it
                **SETTINGS,
            ).summary
            row = rows.filter(
                (pl.col("coin") == coin)
                & (pl.col("n") == combo["n"])
                & (pl.col("level") == combo["level"])
                & (pl.col("tp") == combo["tp"])
                & (pl.col("min_candles_between_signals") == gap)
            ).row(0, named=True)
            for name, value in alone.items():
                assert _same(row[name], value), (combo, coin, name, row[name], value)
    assert rows["total_trades"].sum() > 100


def test_local_executor_gives_identical_rows(serial_result, frames, window) -> None:
    with LocalExecutor(max_workers=2) as ex:
        local = sweep(STRATEGY, GRID, frames, "1h", *window, executor=ex, chunk_combos=3, **SETTINGS)
    assert local.rows.equals(serial_result.rows)


@pytest.mark.ray
def test_ray_executor_gives_identical_rows(serial_result, frames, window, ray_executor) -> None:
    ray = sweep(STRATEGY, GRID, frames, "1h", *window, executor=ray_executor, chunk_combos=5, **SETTINGS)
    assert ray.rows.equals(serial_result.rows)


def test_each_indicator_is_computed_once_per_value_and_coin(frames, monkeypatch) -> None:
    from svc_engine.strategy import ast as A
    from svc_engine.strategy import compiler

    counted: Counter[tuple[str, tuple]] = Counter()
    inner = compiler.VALUE[A.Ind]

    def counting(ctx, node):
        counted[(node.name, node.params)] += 1
        return inner(ctx, node)

    monkeypatch.setitem(compiler.VALUE, A.Ind, counting)
    sweep(STRATEGY, GRID, frames, "1h", executor=SerialExecutor(), **SETTINGS)
    rsi = {k: v for k, v in counted.items() if k[0] == "rsi"}
    assert rsi == {("rsi", (7,)): 2, ("rsi", (14,)): 2}  # once per coin, for 8 combinations each


def test_progress_events_count_chunks(frames) -> None:
    events: list[dict] = []
    sweep(STRATEGY, GRID, frames, "1h", executor=SerialExecutor(), chunk_combos=4, progress=events.append)
    assert [e["done"] for e in events] == list(range(1, 9)) and events[-1]["pct"] == 100.0


def test_a_stopped_sweep_resumes_without_recomputing_and_ends_equal(
    serial_result, frames, window, tmp_path
) -> None:
    sink = tmp_path / "run"
    args = (STRATEGY, GRID, frames, "1h", *window)
    partial = sweep(*args, executor=SerialExecutor(), chunk_combos=4, sink=sink, stop_after=3, **SETTINGS)
    assert partial.rows.height == 3 * 4
    chunks = plan_chunks(["AAA", "BBB"], ["1h"], 16, 1, 4)
    stamps = {c.index: part_path(sink, c).stat().st_mtime_ns for c in chunks[:3]}
    events: list[dict] = []
    done = sweep(
        *args, executor=SerialExecutor(), chunk_combos=4, sink=sink, progress=events.append, **SETTINGS
    )
    assert [e["index"] for e in events] == [3, 4, 5, 6, 7]  # only the missing chunks ran
    assert {c.index: part_path(sink, c).stat().st_mtime_ns for c in chunks[:3]} == stamps
    assert done.rows.equals(serial_result.rows)
    with pytest.raises(ValueError, match="different sweep"):
        sweep(*args, executor=SerialExecutor(), chunk_combos=4, sink=sink, commission_pct=0.3)


def test_top_heatmap_and_robustness(serial_result, tmp_path) -> None:
    r = serial_result
    top = r.top(3, "total_return_pct")
    cells = r.cells("total_return_pct")
    assert top["total_return_pct"].to_list() == sorted(cells["total_return_pct"].to_list(), reverse=True)[:3]
    table = r.heatmap("n", "level", "total_return_pct")
    assert table.columns == ["level", "7", "14"] and table["level"].to_list() == [30, 40]
    mean = r.rows.filter((pl.col("n") == 14) & (pl.col("level") == 40))["total_return_pct"].mean()
    assert table["14"][1] == pytest.approx(mean, rel=1e-12)
    fig = r.plot_heatmap("n", "level", "total_return_pct", tmp_path / "heat.html", plotlyjs="cdn")
    page = (tmp_path / "heat.html").read_text()
    assert fig.data[0].type == "heatmap" and "cdn.plot.ly" in page and len(page) < 100_000
    # each cell shows its value (issue 29), as the hover does
    shown = [[float(v) for v in row] for row in fig.data[0].text]
    assert shown == [[float(f"{v:.3g}") for v in row] for row in table.drop("level").rows()]
    assert fig.data[0].texttemplate == "%{text}" and '"texttemplate":"%{text}"' in page
    rob = r.robustness("total_return_pct")
    best = r.top(1, "total_return_pct").row(0, named=True)
    assert rob["best_value"] == best["total_return_pct"] and rob["neighbours"] == 15  # 2x2x2x2 grid
    others = cells.filter(pl.col("combo") != best["combo"])["total_return_pct"]
    assert rob["neighbour_mean"] == pytest.approx(others.mean(), rel=1e-12)


def test_parameters_must_fill_the_strategy_or_name_a_setting(frames) -> None:
    with pytest.raises(ValueError, match="no value for parameter"):
        sweep(STRATEGY, {"n": [7]}, frames, "1h")
    with pytest.raises(ValueError, match="neither a placeholder"):
        sweep("RSI({n}) crosses above 30", {"n": [7], "colour": ["red"]}, frames, "1h")
    with pytest.raises(ValueError, match="bad parameter placeholder"):
        sweep("RSI({n:d}) crosses above 30", {"n": [7]}, frames, "1h")


def test_default_chunks_keep_a_coin_whole_when_coins_fill_the_workers() -> None:
    assert [c.label for c in plan_chunks(["A", "B", "C", "D"], ["1h"], 100, 2, None)] == [
        "A 1h #0-99",
        "B 1h #0-99",
        "C 1h #0-99",
        "D 1h #0-99",
    ]


@pytest.mark.parametrize(
    "options",
    [{}, {"market_type": "futures", "position_side": "short"}, {"entry_price": ema(20)}],
)
def test_strategies_compiled_part_by_part_equal_whole_compiles(options) -> None:
    from svc_engine.research.sweeper import PartsCache

    cache = PartsCache()
    side = "below" if options.get("position_side") == "short" else "above"
    for n in (7, 14):
        for tp in ("2%", "1.5 x ATR(14)", "risk reward 2"):
            kwargs = {
                "entry_condition": f"RSI({n}) crosses {side} 30",
                "tp_condition": tp,
                "sl_condition": "2%",
                **options,
            }
            assert cache.compile(kwargs) == sv.compile_strategy(**kwargs)
    assert len(cache.entries) == 2 and len(cache.exits) == 3


def test_symbols_from_a_store_equal_backtests_of_the_symbols(tmp_path) -> None:
    from svc_engine.data import DataStore

    store = DataStore(tmp_path / "store")
    for n, symbol in enumerate(("AAAUSDT", "BBBUSDT")):
        store.write_klines("crypto", symbol, "1h", random_walk(1_200, seed=40 + n))
    grid = {"n": [7, 14], "level": [30], "tp": [2]}
    rows = sweep(
        STRATEGY, grid, ["AAAUSDT", "BBBUSDT"], "1h", "2024-01-10", "2024-02-15", store=store, progress=True
    ).rows
    for row in rows.iter_rows(named=True):
        text = Template.of(STRATEGY).render({"n": row["n"], "level": 30, "tp": 2})
        alone = sv.backtest(
            sv.compile_strategy(**text), row["coin"], "1h", "2024-01-10", "2024-02-15", store=store
        )
        assert row["final_balance"] == alone.summary["final_balance"]
        assert row["sharpe_ratio"] == alone.summary["sharpe_ratio"]
    assert rows.height == 4


def test_several_timeframes_give_one_row_each(tmp_path) -> None:
    from svc_engine.data import DataStore

    store = DataStore(tmp_path / "store")
    store.write_klines("crypto", "AAAUSDT", "1h", random_walk(3_000, seed=44))
    grid = {"n": [7, 14], "level": [35], "tp": [2]}
    rows = sweep(STRATEGY, grid, "AAAUSDT", ["1h", "4h"], store=store, spread_pct=0).rows
    assert rows.height == 4 and rows["timeframe"].to_list() == ["1h", "4h", "1h", "4h"]
    row = rows.filter((pl.col("timeframe") == "4h") & (pl.col("n") == 14)).row(0, named=True)
    text = Template.of(STRATEGY).render({"n": 14, "level": 35, "tp": 2})
    alone = sv.backtest(sv.compile_strategy(**text), "AAAUSDT", "4h", store=store, spread_pct=0)
    assert row["final_balance"] == alone.summary["final_balance"] and row["total_trades"] > 0


def test_exit_rules_in_the_template_equal_backtests(frames) -> None:
    strategy = {
        "entry": "RSI({n}) crosses above 30",
        "tp": "4%",
        "sl": "2%",
        "exit": "RSI({n}) crosses above {out}",
    }
    grid = {"n": [7, 14], "out": [60, 70]}
    rows = sweep(strategy, grid, frames, "1h", spread_pct=0.02).rows
    assert rows.height == 8
    for row in rows.iter_rows(named=True):
        st = sv.compile_strategy(
            f"RSI({row['n']}) crosses above 30",
            "4%",
            "2%",
            exit_condition=f"RSI({row['n']}) crosses above {row['out']}",
        )
        alone = sv.backtest(st, frames[row["coin"]], "1h", spread_pct=0.02).summary
        assert row["final_balance"] == alone["final_balance"] and row["total_trades"] == alone["total_trades"]
    assert rows["total_trades"].sum() > 0
