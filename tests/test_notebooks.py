"""Every notebook in notebooks/ runs top to bottom (nbclient, fresh kernel).

Notebooks are kept in git without outputs; this is what keeps them from
rotting.  Each runs headless (matplotlib's Agg backend) from the
notebooks/ folder, with a per-cell timeout.
"""

from __future__ import annotations

import os
import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
    nbclient = pytest.importorskip("nbclient", reason="the notebooks extra is not installed")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # qm.plot.explore draws its static figure: no slider to move headless, and
    # widget comm traffic can stall nbclient until the timeout (nbclient #312)
    monkeypatch.setenv("QMODELS_NO_WIDGETS", "1")
    # the kernel imports this checkout's qmodels, whatever else is installed
    root = str(path.parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [root] + [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep) if x]))
    nb = nbformat.read(path, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{path.name} is committed with outputs; clear them")
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors


def test_notebooks_folder_is_not_empty_once_cases_exist():
    cases = pathlib.Path(__file__).parent.parent / "qmodels" / "cases"
    names = [p.stem for p in cases.glob("*.py") if not p.stem.startswith("_")]
    if names:
        stems = {p.stem for p in NOTEBOOKS}
        missing = [n for n in names if n not in stems]
        assert not missing, f"case studies without a notebook: {missing}"
    assert os.path.isdir(cases)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_use_only_the_public_api(path):
    # a notebook is what a user copies from: no private module (qmodels.x._y)
    import re

    nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                     if c.cell_type == "code")
    private = re.findall(r"(?:from|import)\s+(qmodels(?:\.\w+)*\._\w+)", code)
    assert not private, f"{path.name} imports private modules: {sorted(set(private))}"
