"""``sweep``: one strategy with named parameters over many combinations, coins and timeframes.

The work is cut into chunks of (coin, timeframe, block of combinations) that run on any executor
(threads, Ray, in process). A chunk loads its coin once, builds one evaluation context whose
indicator cache every combination of the chunk shares (an indicator is computed once per distinct
parameter value), validates the candles and works out the spread once, and simulates each
combination with the same kernels as :func:`svc_engine.sim.backtest`, so a row equals the
backtest of that combination alone. A chunk returns summary rows only (no trades or equity):
memory grows with the rows, never with trades, equity or the grid's indicators. Without a sink all
chunks go to the executor at once (the candles travel to the workers once); with ``sink`` they run
in waves whose rows are written as Parquet part files before the next wave starts.

With ``sink``, a run that is killed resumes where it stopped: a chunk whose part file exists is not
computed again (the directory's ``sweep.json`` must describe the same sweep).

A chunk, its planning and its run on a worker are in `svc_engine.research.chunks`.

Example:
    >>> from svc_engine.research.demo import random_walk
    >>> k = random_walk(400, seed=1)
    >>> r = sweep("RSI({n}) crosses above {level}", {"n": [7, 14], "level": [30, 35]}, {"BTC": k}, "1h",
    ...           spread_pct=0)
    >>> r.rows.height, r.params
    (4, ['n', 'level'])
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from svc_engine.data import DataStore
from svc_engine.data.times import ms_array, to_seconds, with_time
from svc_engine.executors import Executor, LocalExecutor, ProgressFn, SerialExecutor
from svc_engine.research.chunks import (  # noqa: F401
    INT_FIGURES,
    MOMENTS,
    WAVE_PER_WORKER,
    Chunk,
    Plan,
    plan_chunks,
    run_chunk,
)
from svc_engine.research.compiling import PartsCache, compile_combinations
from svc_engine.research.params import Template, combinations
from svc_engine.research.progress import progress_of
from svc_engine.research.results import SweepResult
from svc_engine.research.signals import strategy_signals
from svc_engine.sim.drivers import warmup_of

__all__ = [
    "Chunk",
    "PartsCache",
    "Plan",
    "fingerprint",
    "part_path",
    "plan_chunks",
    "run_chunk",
    "strategy_signals",
    "sweep",
]

#: Workers the default chunk plan assumes when results go to a sink (resumable on any machine).
SINK_WORKERS = 8


def _coins(coins: str | Sequence[str] | Mapping[str, pl.DataFrame]) -> tuple[list[str], dict | None]:
    if isinstance(coins, Mapping):
        frames = dict(coins)
        if not frames:
            raise ValueError("coins is empty: name at least one symbol or give one kline frame")
        return list(frames), {k: with_time(v) for k, v in frames.items()}
    listed = [coins] if isinstance(coins, str) else list(coins)
    if not listed or len(set(listed)) != len(listed):
        raise ValueError(f"coins must name distinct symbols, at least one (got {listed})")
    return listed, None


def fingerprint(spec: Mapping[str, Any]) -> str:
    """A short hash of a sweep's description (what a resumed run must match).

    Example:
        >>> fingerprint({"a": 1}) == fingerprint({"a": 1}), len(fingerprint({}))
        (True, 16)
    """
    text = json.dumps(spec, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _check_sink(sink: Path, spec: dict[str, Any]) -> None:
    sink.mkdir(parents=True, exist_ok=True)
    manifest = sink / "sweep.json"
    want = {"fingerprint": fingerprint(spec), "spec": spec}
    if manifest.exists():
        have = json.loads(manifest.read_text())
        if have.get("fingerprint") != want["fingerprint"]:
            raise ValueError(
                f"{sink} holds parts of a different sweep (fingerprint {have.get('fingerprint')},"
                f" this one {want['fingerprint']}): use another directory or empty it"
            )
        return
    _atomic_write(manifest, json.dumps(want, sort_keys=True, default=str, indent=1).encode())


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def part_path(sink: Path, chunk: Chunk) -> Path:
    """Where a chunk's rows are written under ``sink``.

    Example:
        >>> part_path(Path("out"), Chunk(3, "A", "1h", 0, 1)).name
        'part-000003.parquet'
    """
    return sink / f"part-{chunk.index:06d}.parquet"


def _write_part(sink: Path, chunk: Chunk, frame: pl.DataFrame) -> None:
    path = part_path(sink, chunk)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    frame.write_parquet(tmp)
    os.replace(tmp, path)


@contextmanager
def _executor(executor: Executor | None, items: int) -> Iterator[Executor]:
    if executor is not None:
        yield executor
        return
    with SerialExecutor() if items <= 1 else LocalExecutor() as own:
        yield own


def sweep(
    strategy: str | Mapping[str, Any],
    params: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    coins: str | Sequence[str] | Mapping[str, pl.DataFrame],
    timeframes: str | Sequence[str] = "1h",
    start_ts: float | None = None,
    end_ts: float | None = None,
    *,
    executor: Executor | None = None,
    chunk_combos: int | None = None,
    progress: ProgressFn | bool | None = None,
    sink: str | os.PathLike[str] | None = None,
    market: str | None = None,
    store: DataStore | None = None,
    stop_after: int | None = None,
    blocks: int = 16,
    **settings: Any,
) -> SweepResult:
    """Backtest every combination of ``params`` on every coin and timeframe.

    ``strategy`` has ``{name}`` placeholders (see :mod:`svc_engine.research.params`): an entry
    condition, or a mapping with ``entry``/``tp``/``sl`` and ``compile_strategy`` options.
    ``params`` is a grid (name -> values) or a list of combinations. ``coins`` are symbols of the
    data store, or a mapping name -> kline frame (then ``timeframes`` is that frame's one
    timeframe). ``start_ts``/``end_ts`` (Unix seconds, a ``datetime`` or an ISO string) and
    ``settings`` are those of :func:`svc_engine.sim.backtest`. ``progress`` is a callback of the
    executors' events, or ``True`` for a progress bar. ``sink`` is a directory for Parquet part
    files (resumable). ``stop_after`` stops after that many chunks (what a kill would do; tests).
    ``blocks`` (even, default 16; 0 for none) is the number of blocks of candles over which each row
    keeps the moments of its per-candle returns, for :meth:`SweepResult.pbo` and
    :meth:`SweepResult.deflated` (S x 5 numbers per row: memory stays flat in candles).

    Returns a :class:`SweepResult`: one row per combination, coin and timeframe.

    Example:
        >>> sweep("close > SMA({n})", {"n": [5]}, [], "1h")
        Traceback (most recent call last):
        ...
        ValueError: coins must name distinct symbols, at least one (got [])
    """
    start_ts, end_ts = to_seconds(start_ts), to_seconds(end_ts)
    names, frames = _coins(coins)
    tfs = [timeframes] if isinstance(timeframes, str) else list(timeframes)
    if not tfs:
        raise ValueError("timeframes is empty")
    if frames is not None and len(tfs) != 1:
        raise ValueError("kline frames carry one timeframe each: give exactly one timeframe")
    if start_ts is not None and end_ts is not None and start_ts > end_ts:
        raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
    template = Template.of(strategy)
    combos = combinations(params)
    strategies, resolved = compile_combinations(template, combos, settings)
    plan = Plan(
        strategies=tuple(strategies),
        settings=tuple(resolved),
        frames=frames,
        market=market,
        store=store,
        start_ts=start_ts,
        end_ts=end_ts,
        warmup=max(warmup_of(s) for s in set(strategies)),
        blocks=_check_blocks(blocks),
    )
    combos_frame = pl.DataFrame(combos).with_row_index("combo").with_columns(pl.col("combo").cast(pl.Int64))
    with _executor(executor, len(names) * len(tfs) * len(combos)) as ex:
        # with a sink the plan must not depend on the machine, or a resumed run would not match
        workers = ex.workers if sink is None else SINK_WORKERS
        chunks = plan_chunks(names, tfs, len(combos), workers, chunk_combos)
        spec = {
            "strategy": dict(template.parts) | dict(template.options),
            "combos": combos,
            "coins": names,
            "frames": _frames_key(frames),
            "timeframes": tfs,
            "start_ts": start_ts,
            "end_ts": end_ts,
            "settings": settings,
            "market": market,
            "chunks": [c.label for c in chunks],
        }
        if blocks != 16:  # the default leaves the fingerprints of earlier sinks as they were
            spec["blocks"] = blocks
        parts = _run(ex, plan, chunks, None if sink is None else Path(sink), spec, progress, stop_after)
    rows = _assemble(parts, combos_frame, names, tfs)
    _warn_unequal_coverage(rows)
    moments = None
    if MOMENTS in rows.columns:
        if blocks and rows[MOMENTS].null_count() == 0:
            moments = rows[MOMENTS].to_numpy().reshape(rows.height, blocks, 5)
        rows = rows.drop(MOMENTS)
    source = {
        "template": template,
        "combos": combos,
        "settings": settings,
        "frames": frames,
        "market": market,
        "store": store,
        "start_ts": start_ts,
        "end_ts": end_ts,
    }
    return SweepResult(rows=rows, params=list(combos[0]), combos=combos_frame, moments=moments, source=source)


def _warn_unequal_coverage(rows: pl.DataFrame) -> None:
    """Warn when coins of one timeframe covered different ranges: their cells average unequal histories."""
    if "covered_from" not in rows.columns or rows.is_empty():
        return
    spans = rows.group_by("timeframe", "coin", maintain_order=True).agg(
        pl.col("covered_from").first(), pl.col("covered_to").first()
    )
    for (tf,), group in spans.group_by("timeframe", maintain_order=True):
        if group.select("covered_from", "covered_to").unique().height > 1:
            from svc_engine.sim.coverage import RangeWarning

            each = "; ".join(
                f"{r['coin']} {r['covered_from']:%Y-%m-%d %H:%M} .. {r['covered_to']:%Y-%m-%d %H:%M}"
                for r in group.iter_rows(named=True)
            )
            warnings.warn(
                f"the coins of {tf} cover different ranges ({each} UTC): a cell averages them as they are; "
                "give start_ts/end_ts inside every coin's data to compare like with like",
                RangeWarning,
                stacklevel=3,
            )


def _check_blocks(blocks: int) -> int:
    if blocks and (blocks < 2 or blocks % 2):
        raise ValueError(f"blocks must be 0 or an even number of at least 2, got {blocks}")
    return int(blocks)


def _frames_key(frames: dict[str, pl.DataFrame] | None) -> Any:
    if frames is None:
        return None
    ends = {k: ms_array(v["open_time"])[[0, -1]].tolist() for k, v in frames.items()}
    return {k: [v.height, *ends[k], float(v["close"].sum())] for k, v in frames.items()}


def _run(
    ex: Executor,
    plan: Plan,
    chunks: list[Chunk],
    sink: Path | None,
    spec: dict[str, Any],
    progress: ProgressFn | bool | None,
    stop_after: int | None,
) -> list[pl.DataFrame]:
    if sink is not None:
        _check_sink(sink, spec)
    todo = [c for c in chunks if sink is None or not part_path(sink, c).exists()]
    kept: list[pl.DataFrame] = []
    wave = max(1, WAVE_PER_WORKER * ex.workers)
    done = len(chunks) - len(todo)
    with progress_of(progress, len(chunks)) as report:
        if sink is None and stop_after is None:
            # one map: the plan (candles included) travels to the workers once; rows are small
            def relay(event: dict[str, Any]) -> None:
                if report is not None:
                    report(_event(done + event["done"], len(chunks), todo[event["index"]]))

            labels = [c.label for c in todo]
            return ex.map(run_chunk, todo, shared=plan, labels=labels, progress=relay)
        for w in range(0, len(todo), wave):
            batch = todo[w : w + wave]
            if stop_after is not None:
                batch = batch[: max(0, stop_after - w)]
                if not batch:
                    break
            frames = ex.map(run_chunk, batch, shared=plan, labels=[c.label for c in batch])
            for chunk, frame in zip(batch, frames, strict=True):
                if sink is not None:
                    _write_part(sink, chunk, frame)
                else:
                    kept.append(frame)
                done += 1
                if report is not None:
                    report(_event(done, len(chunks), chunk))
    if sink is not None:
        kept = [pl.read_parquet(part_path(sink, c)) for c in chunks if part_path(sink, c).exists()]
    return kept


def _event(done: int, total: int, chunk: Chunk) -> dict[str, Any]:
    return {
        "done": done,
        "total": total,
        "item": chunk.label,
        "index": chunk.index,
        "status": "completed",
        "pct": round(100.0 * done / total, 6),
    }


def _assemble(
    parts: list[pl.DataFrame], combos: pl.DataFrame, coins: list[str], tfs: list[str]
) -> pl.DataFrame:
    if not parts:
        return pl.DataFrame()
    rows = pl.concat(parts, how="diagonal_relaxed")
    order = {c: i for i, c in enumerate(coins)}
    tf_order = {t: i for i, t in enumerate(tfs)}
    rows = rows.with_columns(
        pl.col("coin").replace_strict(order, return_dtype=pl.Int64).alias("_c"),
        pl.col("timeframe").replace_strict(tf_order, return_dtype=pl.Int64).alias("_t"),
    ).sort("combo", "_c", "_t")
    figures = [c for c in rows.columns if c not in ("combo", "coin", "timeframe", "_c", "_t")]
    joined = rows.join(combos, on="combo", how="left", maintain_order="left")
    params = [c for c in combos.columns if c != "combo"]
    return joined.select("combo", *params, "coin", "timeframe", *figures)
