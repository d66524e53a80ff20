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
    # as a user runs it: widgets installed, nothing set; qmodels tells the
    # headless run apart itself (no widget whose comm traffic could stall
    # nbclient, jupyter/nbclient#312; text progress bars)
    monkeypatch.delenv("QMODELS_NO_WIDGETS", raising=False)
    monkeypatch.delenv("QMODELS_WIDGETS", raising=False)
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
    _check_saved_outputs(nb, path.name)


def _check_saved_outputs(nb, name):
    """No widget view in a headless run's outputs, and every progress bar
    saved at its final state (its last line at 100 %)."""
    import re

    for c in nb.cells:
        streams: dict = {}
        for o in c.get("outputs", []):
            assert "application/vnd.jupyter.widget-view+json" not in o.get("data", {}), (
                f"{name}: a widget was shown in a headless run: {c.source[:80]!r}")
            if o.get("output_type") == "stream":
                streams[o["name"]] = streams.get(o["name"], "") + o["text"]
        # a bar rewrites its line with carriage returns: what a reader sees
        # of each line is its last segment
        for text in streams.values():
            for line in text.split("\n"):
                shown = line.rstrip("\r").split("\r")[-1]
                pct = re.match(r"^[^|]*?:\s*(\d+)%\|", shown)
                assert pct is None or pct.group(1) == "100", (
                    f"{name}: a progress bar saved short of its end: {shown!r}")


def test_nbconvert_execute_runs_a_notebook_with_widgets_installed(tmp_path):
    """``jupyter nbconvert --execute`` of the many-core notebook, as a user
    runs it: ipywidgets installed, no QMODELS_NO_WIDGETS.  It once hung at
    the ``qm.plot.explore`` cell (920 s) and saved progress bars frozen at
    "simulating: 70%"."""
    import subprocess
    import sys

    pytest.importorskip("ipywidgets", reason="the notebooks extra is not installed")
    pytest.importorskip("nbconvert", reason="the notebooks extra is not installed")
    nbformat = pytest.importorskip("nbformat")
    src = pathlib.Path(__file__).parent.parent / "notebooks" / "manycore.ipynb"
    root = str(src.parent.parent)
    # the kernel's own matplotlib backend (inline), as for a user
    env = {k: v for k, v in os.environ.items()
           if k not in ("QMODELS_NO_WIDGETS", "QMODELS_WIDGETS", "CI", "MPLBACKEND")}
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep) if x])
    out = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", str(src),
         "--output-dir", str(tmp_path), "--ExecutePreprocessor.timeout=300"],
        cwd=str(src.parent), env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    nb = nbformat.read(tmp_path / src.name, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
    _check_saved_outputs(nb, src.name)
    # the explorer drew its figure (a static image, not a widget)
    explore = [c for c in nb.cells if "qm.plot.explore(" in c.source]
    assert explore and any("image/png" in o.get("data", {}) for c in explore
                           for o in c.get("outputs", []))


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
