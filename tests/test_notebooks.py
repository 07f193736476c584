"""Every notebook in ``notebooks/`` runs from top to bottom without an error (nbclient, python3 kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_without_error(path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    # jupyter_client starts the "python3" kernel with this interpreter (sys.executable): the venv's.
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError naming the cell and the error
    outputs = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    assert [o for o in outputs if o.get("output_type") == "error"] == []
    assert all(cell.get("execution_count") for cell in notebook.cells if cell.cell_type == "code")


def test_there_is_a_quickstart_notebook() -> None:
    assert "quickstart.ipynb" in [p.name for p in NOTEBOOKS]
