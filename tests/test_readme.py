"""Every Python block of the README runs, in order as one session, on the embedded market and on
the shared real candles (BTCUSDT, ETHUSDT, SOLUSDT 1h), with no range that misses or only partly
meets the data (a ``RangeWarning`` fails the run). A statement whose comment names an error
(``# StrategyCompileError: ...``) must raise it. Ray is swapped for the local executor here (same
results, tests/engine/test_executors.py), so the run needs no Ray cluster."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def _statements(block: str) -> list[tuple[str, str | None]]:
    """(source, the error its comment names or None) of each top-level statement of a block."""
    lines = block.splitlines()
    out = []
    for node in ast.parse(block).body:
        text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        named = re.search(r"#\s*([A-Z]\w*Error)\b", lines[node.end_lineno - 1])
        out.append((text, named.group(1) if named else None))
    return out


def _run_readme(data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import svc_engine as sv
    from svc_engine.sim.coverage import RangeWarning

    monkeypatch.setenv("DATA_DIR", str(data_dir))
    monkeypatch.chdir(tmp_path)  # the plots are written here
    monkeypatch.setattr(sv, "RayExecutor", lambda **_: sv.LocalExecutor(), raising=False)
    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RangeWarning)
        for block in BLOCKS:
            for source, error in _statements(block):
                code = compile(source, "README.md", "exec")
                if error is None:
                    exec(code, namespace)
                    continue
                with pytest.raises(Exception) as raised:
                    exec(code, namespace)
                assert type(raised.value).__name__ == error, source


def test_the_readme_has_python_blocks_and_names_its_errors() -> None:
    statements = [s for b in BLOCKS for s in _statements(b)]
    assert len(BLOCKS) >= 4 and (
        'sv.compile_strategy("RSI(14) crosses above 120")',
        "StrategyCompileError",
    ) in [(s.split("#")[0].strip(), e) for s, e in statements]


@pytest.mark.slow
def test_readme_blocks_run_on_the_embedded_market(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from svc_engine.data import DataStore
    from svc_engine.data.synthetic import generate_market

    data = tmp_path / "embedded"
    generate_market(DataStore(str(data)))
    _run_readme(data, monkeypatch, tmp_path)


@pytest.mark.slow
def test_readme_blocks_run_on_the_shared_real_candles(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared_datasets: Path
) -> None:
    import polars as pl

    from svc_engine.data import DataStore

    data = tmp_path / "real"
    store = DataStore(str(data))
    for coin in ("BTCUSDT", "ETHUSDT", "SOLUSDT"):
        path = shared_datasets / "crypto" / f"{coin}-1h.parquet"
        store.write_klines("crypto", coin, "1h", pl.read_parquet(path), source=str(path))
    _run_readme(data, monkeypatch, tmp_path)
