"""Batch sweeps described in a TOML file: ``svc sweep spec.toml`` runs :func:`run_spec`.

A spec names the strategy (with ``{name}`` parameters), the grid or the list of combinations, the
coins (symbols of the data store, or Parquet files), the timeframes, the range, the settings and the
report. Results go to a directory: ``parts/`` (one Parquet file per finished chunk: a killed run
resumes from them), then ``results.parquet`` (every row) and ``report.html`` (top combinations,
a heatmap, robustness).

Example spec::

    timeframes = ["1h"]
    coins = ["BTCUSDT", "ETHUSDT"]          # or: [files] BTC = "data/BTCUSDT-1h.parquet"
    start = "2023-01-01"                     # ISO dates, datetimes or Unix seconds
    end = "2024-12-31"
    chunk_combos = 50                        # optional

    [strategy]
    entry = "RSI({n}) crosses above {level}"
    tp = "{tp}%"
    sl = "2%"
    exit = "exit when RSI({n}) rises above 70"   # optional: exit rules (docs/exits.md)

    [grid]                                   # or [[combos]] tables, one per combination
    n = [7, 14, 21]
    level = [25, 30, 35]
    tp = [2, 3, 4]

    [settings]
    commission_pct = 0.1

    [sample]                                 # optional: a random sample of a grid too large to run
    n = 500
    seed = 1

    [report]
    by = "sharpe_ratio"
    top = 20
    heatmap = ["n", "level"]

Example:
    >>> spec = parse_spec('coins = ["X"]\\n[strategy]\\nentry = "close > SMA({n})"\\n[grid]\\nn = [5, 10]\\n')
    >>> spec.kwargs()["params"], spec.report["by"]
    ({'n': [5, 10]}, 'sharpe_ratio')
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from svc_engine.data.times import to_seconds
from svc_engine.executors import Executor, ProgressFn
from svc_engine.research.report import report_html
from svc_engine.research.results import SweepResult
from svc_engine.research.sweeper import sweep

_KEYS = frozenset(
    {
        "strategy",
        "grid",
        "combos",
        "coins",
        "files",
        "timeframes",
        "timeframe",
        "start",
        "end",
        "market",
        "settings",
        "report",
        "chunk_combos",
        "sample",
    }
)
_REPORT = {"by": "sharpe_ratio", "top": 20, "heatmap": None, "plotlyjs": True, "bootstrap": 1000, "seed": 0}


@dataclass(frozen=True, slots=True)
class Spec:
    """A parsed sweep description; ``base`` is the folder relative file paths start from."""

    strategy: Any
    params: Any
    coins: list[str] | None
    files: dict[str, Path] | None
    timeframes: list[str]
    start: float | None
    end: float | None
    market: str | None
    settings: dict[str, Any]
    chunk_combos: int | None
    report: dict[str, Any] = field(default_factory=lambda: dict(_REPORT))

    def kwargs(self) -> dict[str, Any]:
        """The :func:`sweep` arguments (Parquet files read into frames).

        Example:
            >>> Spec("close > SMA({n})", {"n": [5]}, ["X"], None, ["1h"], None, None, None, {}, None
            ...      ).kwargs()["coins"]
            ['X']
        """
        coins: Any = self.coins
        if self.files is not None:
            coins = {name: pl.read_parquet(path) for name, path in self.files.items()}
        return {
            "strategy": self.strategy,
            "params": self.params,
            "coins": coins,
            "timeframes": self.timeframes,
            "start_ts": self.start,
            "end_ts": self.end,
            "market": self.market,
            "chunk_combos": self.chunk_combos,
            **self.settings,
        }


def parse_spec(text: str, base: str | os.PathLike[str] = ".") -> Spec:
    """A :class:`Spec` from TOML text; unknown keys and missing parts are refused by name.

    Example:
        >>> parse_spec('coins = ["X"]\\ncolour = 1\\n[strategy]\\nentry = "close > open"\\n[grid]\\nn=[1]')
        Traceback (most recent call last):
        ...
        ValueError: unknown key(s) in the spec: colour
    """
    data = tomllib.loads(text)
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) in the spec: {', '.join(unknown)}")
    if "strategy" not in data:
        raise ValueError("the spec has no [strategy]")
    if ("grid" in data) == ("combos" in data):
        raise ValueError("the spec needs exactly one of [grid] or [[combos]]")
    if ("coins" in data) == ("files" in data):
        raise ValueError("the spec needs exactly one of coins = [...] or [files]")
    tfs = data.get("timeframes", data.get("timeframe", "1h"))
    files = None
    if "files" in data:
        files = {name: Path(base) / str(path) for name, path in data["files"].items()}
    coins = data.get("coins")
    report = dict(_REPORT) | dict(data.get("report", {}))
    params = data.get("grid", data.get("combos"))
    if "sample" in data:
        if "grid" not in data:
            raise ValueError("[sample] draws from a [grid]; [[combos]] are run as they are")
        from svc_engine.research.search import random_combinations

        sample = data["sample"]
        params = random_combinations(params, int(sample["n"]), seed=int(sample.get("seed", 0)))
    return Spec(
        strategy=data["strategy"],
        params=params,
        coins=[coins] if isinstance(coins, str) else coins,
        files=files,
        timeframes=[tfs] if isinstance(tfs, str) else list(tfs),
        start=to_seconds(data.get("start")),
        end=to_seconds(data.get("end")),
        market=data.get("market"),
        settings=dict(data.get("settings", {})),
        chunk_combos=data.get("chunk_combos"),
        report=report,
    )


def load_spec(path: str | os.PathLike[str]) -> Spec:
    """:func:`parse_spec` of a file; relative Parquet paths start at its folder.

    Example:
        >>> load_spec("/nonexistent/spec.toml")
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/spec.toml'
    """
    path = Path(path)
    return parse_spec(path.read_text(), path.parent)


def run_spec(
    spec: Spec,
    out: str | os.PathLike[str],
    *,
    executor: Executor | None = None,
    progress: ProgressFn | bool | None = None,
    stop_after: int | None = None,
    store: Any = None,
) -> SweepResult:
    """Run a spec into ``out``: ``parts/`` as chunks finish, then ``results.parquet`` and
    ``report.html``. A second run of the same spec into the same folder computes only the chunks
    that have no part yet.

    Example:
        >>> run_spec.__name__
        'run_spec'
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = sweep(
        **spec.kwargs(),
        executor=executor,
        progress=progress,
        sink=out / "parts",
        stop_after=stop_after,
        store=store,
    )
    if stop_after is not None:
        return result
    tmp = out / "results.parquet.tmp"
    result.rows.write_parquet(tmp)
    os.replace(tmp, out / "results.parquet")
    (out / "report.html").write_text(report_html(result, spec.report, title=_title(spec)))
    return result


def _title(spec: Spec) -> str:
    entry = spec.strategy if isinstance(spec.strategy, str) else spec.strategy.get("entry", "")
    return f"sweep: {entry}"
