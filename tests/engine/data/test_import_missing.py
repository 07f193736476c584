"""An import with a missing path imports the rest, names the missing ones and fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import svc_api.cli.data as cli
from svc_engine.data import DataStore
from svc_engine.data.importers import MissingPathsError, import_paths
from svc_engine.research.demo import random_walk


def test_the_other_paths_are_imported_and_the_missing_ones_named(tmp_path: Path) -> None:
    good = tmp_path / "crypto" / "BTCUSDT-1h.parquet"
    good.parent.mkdir()
    random_walk(50).write_parquet(good)
    store = DataStore(tmp_path / "store")
    with pytest.raises(MissingPathsError) as info:
        import_paths([tmp_path / "nope.csv", good, tmp_path / "gone.zip"], store=store)
    assert info.value.missing == [tmp_path / "nope.csv", tmp_path / "gone.zip"]
    assert [r.rows_added for r in info.value.results] == [50]
    assert store.path("crypto", "BTCUSDT", "1h").exists()
    assert "the other paths were imported: crypto/BTCUSDT 1h 50 added" in str(info.value)


def test_the_command_exits_non_zero_after_importing_the_rest(tmp_path: Path) -> None:
    good = tmp_path / "crypto" / "ETHUSDT-1h.parquet"
    good.parent.mkdir()
    random_walk(30).write_parquet(good)
    root = tmp_path / "store"
    args = ["--data-dir", str(root), "import", str(good), str(tmp_path / "x.csv")]
    res = CliRunner().invoke(cli.command, args)
    assert res.exit_code == 1
    assert res.output.startswith(f"Error: no such file or directory: {tmp_path}/x.csv (the other paths")
    assert DataStore(root).path("crypto", "ETHUSDT", "1h").exists()
