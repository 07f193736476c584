"""Every notebook in ``notebooks/`` runs from top to bottom without an error (nbclient, python3 kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _execute(path: Path) -> list[dict]:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    # jupyter_client starts the "python3" kernel with this interpreter (sys.executable): the venv's.
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError naming the cell and the error
    assert all(cell.get("execution_count") for cell in notebook.cells if cell.cell_type == "code")
    return [o for cell in notebook.cells for o in cell.get("outputs", [])]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_without_error(path: Path) -> None:
    outputs = _execute(path)
    assert [o for o in outputs if o.get("output_type") == "error"] == []


@pytest.mark.slow
def test_quickstart_falls_back_to_the_synthetic_market(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_SHARED_DATASETS", "/nonexistent")
    outputs = _execute(NOTEBOOKS[0].parent / "quickstart.ipynb")
    texts = [o.get("text", "") for o in outputs if o.get("output_type") == "stream"]
    assert "no shared datasets: generating a small synthetic market\n" in texts


def test_there_is_a_quickstart_notebook() -> None:
    assert "quickstart.ipynb" in [p.name for p in NOTEBOOKS]
