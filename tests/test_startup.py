"""What a cold start loads (issue 30: ``qmodels solve`` from a cold shell).

Not timed (the machine's load decides a time): what is checked is which
modules a start imports, the part of the start-up the code controls.
``python -m benchmarks.bench_cli`` measures the times.
"""

from __future__ import annotations

import os
import subprocess
import sys

import qmodels

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(qmodels.__file__)), "examples",
                       "two_tier.yaml")

def _modules_after(code: str) -> set:
    root = os.path.dirname(os.path.dirname(os.path.abspath(qmodels.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, env=env).stdout
    return set(out.split())


def test_import_qmodels_loads_the_model_only():
    mods = _modules_after("import qmodels")
    loaded = sorted(m for m in mods if m.startswith(("qmodels.analytic", "qmodels.dispatch",
                                                    "qmodels.results", "qmodels.sim",
                                                    "qmodels.whatif", "qmodels.io")))
    assert not loaded, loaded


def test_solve_loads_no_other_command():
    mods = _modules_after(
        "import contextlib, io\n"
        "from qmodels.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['solve', {EXAMPLE!r}])")
    other = sorted(m for m in mods if m.startswith(("qmodels.whatif", "qmodels.cases",
                                                   "qmodels.sim", "qmodels.plot")))
    assert not other, other
    assert "qmodels.dispatch" in mods   # it did solve


def test_version_loads_no_command():
    mods = _modules_after(
        "import contextlib, io\n"
        "from qmodels.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--version'])\n"
        "    except SystemExit:\n"
        "        pass")
    assert not [m for m in mods if m.startswith(("qmodels.whatif", "qmodels.cases",
                                                "qmodels.io", "qmodels.dispatch"))]


def test_solve_loads_no_heavy_library_nor_unused_stdlib():
    # scipy, sympy, pandas, networkx, numba, matplotlib: the solvers and
    # layers that need them import them on first use; importlib.resources
    # (with zipfile, tempfile, shutil), html and fractions serve other
    # commands, the notebook displays and exact-fraction values only
    mods = _modules_after(
        "import contextlib, io\n"
        "from qmodels.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['solve', {EXAMPLE!r}])")
    heavy = ("scipy", "sympy", "pandas", "networkx", "numba", "matplotlib", "jsonschema",
             "importlib.resources", "zipfile", "tempfile", "html", "fractions")
    assert not sorted(m for m in heavy if m in mods)
