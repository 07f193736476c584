"""The trend notebook runs from top to bottom (nbclient, 120 s budget) and shows a scan."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "trend_scan.ipynb"


def test_trend_scan_notebook_runs(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "signals" in text
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1
    api = [o for o in outputs if "'coin_name'" in o.get("data", {}).get("text/plain", "")]
    assert api and "'trend_data'" in api[0]["data"]["text/plain"]
