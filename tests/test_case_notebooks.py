"""The afa and manycore case notebooks execute top to bottom (nbclient).

Each must finish well inside 60 s; the kernel imports this checkout's
``qmodels`` (PYTHONPATH set to the repository root).
"""

import os
import pathlib
import time

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["afa", "manycore"])
def test_case_notebook_runs(name, monkeypatch):
    path = ROOT / "notebooks" / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    # committed without outputs
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    assert time.perf_counter() - t0 < 60
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
