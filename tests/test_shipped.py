"""Machine code shipped in a wheel (qmodels._shipped, setup.py's build hook).

A wheel built with ``make wheel`` carries the simulator's event loop
compiled for the generic CPU of its architecture, so that the first
``qm.simulate`` after ``pip install`` runs machine code at once instead of
waiting for numba.  These tests build that code as the wheel build does
(``qmodels warm-up --ship``), then, in fresh processes with an empty numba
cache:

* the shipped code is loaded and nothing is compiled, and every pinned
  simulator run of ``test_sim_pins`` (computed by a host compile, reproduced
  by the Python twin) comes out bit for bit the same;
* code built from another source, another numba, another interpreter or
  platform, or a damaged file is not loaded, and the simulator compiles as
  before;
* end to end, a wheel built from the source tree contains the code and an
  installation of it loads it.  The default run builds that wheel with the
  code the fixture compiled (setup.py's ``QMODELS_SHIP_FROM``), so its
  build compiles nothing again; a wheel whose build hook compiles the code,
  as ``make wheel`` builds it, is a slow test (``make test-slow``).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

import qmodels as qm
from qmodels import _shipped
from qmodels._jit import _signature
from qmodels.sim import engine as E
from qmodels.sim import run as sim_run

ROOT = pathlib.Path(qm.__file__).parent.parent

# ``make test`` runs ``--dist loadfile``: every test of this file on one
# xdist worker, in a row, so that the module's ``shipped`` fixture, which
# compiles every shipped kernel (about 2.5 minutes), is built once.  (An
# ``xdist_group`` mark with ``--dist loadgroup`` did not: pytest 9 ignores
# the group suffix pytest-xdist 3.8 writes into the node id, the tests
# were spread over both workers and the fixture built on each, 157 and
# 160 s.)
@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """A folder of shipped machine code, built as setup.py builds it."""
    pytest.importorskip("numba")
    dest = tmp_path_factory.mktemp("kernels")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "qmodels", "warm-up", "--ship", str(dest)],
                         env=env, capture_output=True, text=True, timeout=1200, cwd=dest)
    assert out.returncode == 0, out.stderr
    assert "generic CPU" in out.stdout
    return dest


_USE = textwrap.dedent("""
    import json
    import qmodels._jit as J
    from qmodels.sim import engine as E
    from qmodels.sim import run
    started = []
    J._compile_in_child = lambda *a: started.append(a) or None  # a compile would show here
    from tests.test_sim_pins import PINNED, _figures, cases
    same = {name: _figures(net, kw) == PINNED[name] for name, net, kw in cases()}
    print(json.dumps({"state": run.ENGINE._state, "children": len(started),
                      "compiled": sum(E.run.stats.cache_misses.values()),
                      "loaded": sum(E.run.stats.cache_hits.values()), "same": same}))
""")


def _code(folder, kernel="qmodels.sim.engine.run", ext="json") -> pathlib.Path:
    """The one file of ``kernel``'s shipped code (of its one signature)."""
    (path,) = pathlib.Path(folder).glob(f"{kernel}.*.{ext}")
    return path


def _fresh(tmp_path, kernels):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), QMODELS_KERNELS=str(kernels),
               QMODELS_JIT="background", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _USE], env=env, capture_output=True, text=True,
                         timeout=1200, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_shipped_code_is_loaded_and_reproduces_every_pinned_run(shipped, tmp_path):
    got = _fresh(tmp_path, shipped)
    assert got["state"] == "compiled"
    assert got["children"] == 0 and got["compiled"] == 0 and got["loaded"] == 1
    assert got["same"] and all(got["same"].values()), got["same"]


_ANALYTIC = textwrap.dedent("""
    import json
    import qmodels as qm
    from qmodels._jit import LAZY_KERNELS
    from qmodels.analytic import _probe
    nets = list(_probe._networks()) + [qm.Network(
        [qm.Queue("cpu", 0.02, servers=2), qm.Queue("disk", 0.03)],
        [qm.Closed("a", 60, think_time=1.0, visits={"cpu": 1, "disk": 1}),
         qm.Closed("b", 60, think_time=0.5, visits={"cpu": 2, "disk": 0.5})])]
    from qmodels.analytic import batch
    from tests.test_shipped import _probe_batch
    for k in LAZY_KERNELS:
        k.threshold = 0  # every solve below runs machine code
    batch.LAZY_THRESHOLD = 0
    out = {"X": [], "misses": 0, "hits": {}}
    for net in nets:
        for solve in (qm.mva, qm.schweitzer, qm.convolution):
            r = solve(net)
            out["X"].append([float(r.X[c]) for c in net.class_names])
    out["batch"] = _probe_batch(batch)
    for d in [k.compiled() for k in LAZY_KERNELS if k._compiled is not None] + \
            batch.compiled_kernels():
        out["misses"] += sum(d.stats.cache_misses.values())
        out["hits"][d.py_func.__name__] = sum(d.stats.cache_hits.values())
    print(json.dumps(out))
""")


def _probe_batch(batch):
    """Throughputs of batched solves that reach every parallel kernel."""
    import numpy as np

    D = np.array([[0.05, 0.03, 0.02], [0.04, 0.03, 0.01], [0.2, 0.01, 0.01]])
    got = [batch.mva_batch(D, 1.0, 7).X.tolist()]
    for multiserver in ("marginal", "seidmann"):
        got.append(batch.schweitzer_batch(D, 1.0, 7, servers=np.array([1, 3, 1]),
                                          multiserver=multiserver).X.tolist())
    got.append(batch.schweitzer_batch(D, 1.0, 7).X.tolist())
    return got


def test_shipped_analytic_kernels_are_loaded_and_agree_with_python(shipped, tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), QMODELS_KERNELS=str(shipped),
               PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _ANALYTIC], env=env, capture_output=True,
                         text=True, timeout=1200, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["misses"] == 0  # nothing compiled: every kernel's code was shipped
    assert got["hits"] and all(n >= 1 for n in got["hits"].values()), got["hits"]
    assert {"_mva_rows", "_schweitzer_rows", "_schweitzer_ld_rows"} <= set(got["hits"])
    # the same solves here as plain Python (every threshold out of reach)
    from qmodels._jit import LAZY_KERNELS
    from qmodels.analytic import _probe, batch

    for w, g in zip(_probe_batch(batch), got["batch"]):  # batched: below the threshold here
        assert g == pytest.approx(w, rel=1e-12)

    nets = list(_probe._networks()) + [qm.Network(
        [qm.Queue("cpu", 0.02, servers=2), qm.Queue("disk", 0.03)],
        [qm.Closed("a", 60, think_time=1.0, visits={"cpu": 1, "disk": 1}),
         qm.Closed("b", 60, think_time=0.5, visits={"cpu": 2, "disk": 0.5})])]
    saved = [(k, k.threshold) for k in LAZY_KERNELS]
    try:
        for k, _ in saved:
            k.threshold = 10**18
        want = [[float(r.X[c]) for c in net.class_names]
                for net in nets for r in (qm.mva(net), qm.schweitzer(net), qm.convolution(net))]
    finally:
        for k, t in saved:
            k.threshold = t
    assert len(want) == len(got["X"])
    for w, g in zip(want, got["X"]):
        assert g == pytest.approx(w, rel=1e-12)


def test_the_probe_ships_every_lazy_kernel(shipped):
    from qmodels._jit import LAZY_KERNELS
    from qmodels.analytic import _probe  # noqa: F401  (every kernel module imported)

    kernels = {json.loads(f.read_text())["kernel"] for f in shipped.glob("*.json")}
    want = {f"{k.py_func.__module__}.{k.__name__}" for k in LAZY_KERNELS}
    # and every parallel kernel the batched solvers hand to batch._run
    import ast

    from qmodels.analytic import batch

    tree = ast.parse(pathlib.Path(batch.__file__).read_text())
    parallel = {node.args[0].id for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_run"
                and node.args and isinstance(node.args[0], ast.Name)}
    assert len(parallel) >= 3
    want |= {f"qmodels.analytic.batch.{name}" for name in parallel}
    assert want and want <= kernels
    assert "qmodels.sim.engine.run" in kernels


def _kernel_functions() -> dict:
    """Every shipped kernel's Python function by name (nothing compiled)."""
    import importlib
    import pkgutil

    from qmodels import analytic
    from qmodels._jit import LAZY_KERNELS

    for mod in pkgutil.iter_modules(analytic.__path__):  # every kernel's module
        importlib.import_module(f"qmodels.analytic.{mod.name}")

    funcs = {f"{k.py_func.__module__}.{k.__name__}": k.py_func for k in LAZY_KERNELS}
    funcs["qmodels.sim.engine.run"] = E.run.py_func
    return funcs


def test_a_kernels_source_files_are_the_packages_own():
    # _ctmc_solve holds a contextlib.contextmanager: its wrapper carries the
    # module's name but contextlib's code; a file of the standard library
    # counted in the digest once sorted differently by where the tree sat
    root = pathlib.Path(qm.__file__).parent.resolve()
    funcs = _kernel_functions()
    assert "qmodels.analytic._ctmc_solve._cut" in funcs
    for name, func in funcs.items():
        files = _shipped.source_files(func)
        assert files, name
        module_file = pathlib.Path(sys.modules[func.__module__].__file__).resolve()
        assert module_file in {pathlib.Path(f) for f in files}, name
        for f in files:
            assert pathlib.Path(f).resolve().is_relative_to(root), (name, f)


def test_the_source_digest_does_not_depend_on_where_the_tree_sits(tmp_path):
    # a wheel's build hook checks shipped code against a copy of the tree
    # (build/lib): the digest of every kernel must be the same there
    copy = tmp_path / "zz" / "copy"
    shutil.copytree(ROOT / "qmodels", copy / "qmodels",
                    ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    here = {name: _shipped.source_digest(f) for name, f in _kernel_functions().items()}
    code = textwrap.dedent("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import tests.test_shipped as T
        from qmodels import _shipped
        digests = {n: _shipped.source_digest(f) for n, f in T._kernel_functions().items()}
        print(json.dumps([_shipped.__file__, digests]))
    """)
    env = dict(os.environ, PYTHONPATH=f"{copy}{os.pathsep}{ROOT}", QMODELS_KERNELS="")
    out = subprocess.run([sys.executable, "-c", code, str(copy)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    where, there = json.loads(out.stdout.strip().splitlines()[-1])
    assert pathlib.Path(where).is_relative_to(copy)
    assert there == here

def test_code_from_another_source_is_not_loaded(shipped, tmp_path):
    # the engine's source changed since the build (an edit, another version):
    # the stale code stays unused, the simulator compiles as usual
    stale = tmp_path / "stale"
    shutil.copytree(shipped, stale)
    facts_file = _code(stale)
    facts = json.loads(facts_file.read_text())
    facts["source"] = "0" * 64
    facts_file.write_text(json.dumps(facts))
    got = _fresh(tmp_path, stale)
    assert got["loaded"] == 0 and got["compiled"] == 1  # no child could start: compiled here
    assert all(got["same"].values())


def _facts_edited(shipped, tmp_path, **change) -> pathlib.Path:
    d = tmp_path / "edited"
    shutil.copytree(shipped, d)
    f = _code(d)
    facts = json.loads(f.read_text())
    facts.update(change)
    f.write_text(json.dumps(facts))
    return d


class _Uncompiled:
    """The event loop's dispatcher as a fresh process sees it: no machine
    code yet; compiling it would be a failure of the test."""

    def __init__(self):
        self.py_func = E.run.py_func
        self.targetctx = E.run.targetctx
        self.overloads = {}
        self._cache = None

    def typeof_pyval(self, v):
        return E.run.typeof_pyval(v)

    def compile(self, sig):  # pragma: no cover - fails the test if reached
        raise AssertionError("compiled instead of loading")


@pytest.mark.parametrize("key, value, says", [
    ("source", "0" * 64, "source"),
    ("numba", "0.0.1", "numba"),
    ("llvmlite", "0.0.1", "llvmlite"),
    ("python", "cpython-27", "python"),
    ("triple", "aarch64-unknown-linux-gnu", "triple"),
    ("signature", "(int64,)", "signature"),
])
def test_a_mismatch_says_what_differs(shipped, tmp_path, key, value, says):
    sig = _signature(E.run, sim_run._probe_args())
    assert _shipped.check(E.run, sig, str(shipped)) is None
    d = _facts_edited(shipped, tmp_path, **{key: value})
    why = _shipped.check(E.run, sig, str(d))
    assert why is not None and says in why and value in why
    assert _shipped.load_all(_Uncompiled(), str(d)) == 0


def test_missing_damaged_or_turned_off_code_is_not_loaded(shipped, tmp_path, monkeypatch):
    sig = _signature(E.run, sim_run._probe_args())
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no shipped machine code" in _shipped.check(E.run, sig, str(empty))
    d = tmp_path / "damaged"
    shutil.copytree(shipped, d)
    code = _code(d, ext="nbk")
    code.write_bytes(code.read_bytes()[: 1000])  # a truncated download
    assert _shipped.check(E.run, sig, str(d)) is None  # the facts still match ...
    assert _shipped.load_all(_Uncompiled(), str(d)) == 0  # ... the code does not load
    code.unlink()
    assert "missing" in _shipped.check(E.run, sig, str(d))
    _code(d).write_text("{not json")
    assert "unreadable" in _shipped.check(E.run, sig, str(d))
    monkeypatch.setenv("QMODELS_KERNELS", "")
    assert "turned off" in _shipped.check(E.run, sig)
    monkeypatch.setenv("QMODELS_KERNELS", str(shipped))
    assert _shipped.kernels_dir() == str(shipped)
    monkeypatch.delenv("QMODELS_KERNELS")
    assert _shipped.kernels_dir() == _shipped.KERNELS_DIR


def test_code_for_other_argument_types_is_never_registered(shipped, tmp_path):
    # facts that match, over a file holding another kernel's code (another
    # signature): refused, nothing compiled; the stand-in cache serves only
    # its own signature, so no other call can pick it up
    sig = _signature(E.run, sim_run._probe_args())
    d = tmp_path / "swapped"
    shutil.copytree(shipped, d)
    other = next(p for p in d.glob("qmodels.analytic.mva._log_convolve.*.nbk"))
    shutil.copy(other, _code(d, ext="nbk"))
    assert _shipped.check(E.run, sig, str(d)) is None
    assert _shipped.load_all(_Uncompiled(), str(d)) == 0
    one = _shipped._OneResult(object(), sig)
    assert one.load_overload(sig, None) is one.cres
    assert one.load_overload(sig[:-1], None) is None


def test_survey_and_check_say_what_is_usable(shipped, tmp_path, monkeypatch, capsys):
    from qmodels.cli import main

    rows = _shipped.survey(str(shipped))
    assert rows and all(why is None for _, _, why in rows), rows
    assert "qmodels.sim.engine.run" in {k for k, _, _ in rows}
    monkeypatch.setenv("QMODELS_KERNELS", str(shipped))
    assert main(["warm-up", "--check"]) == 0
    out = capsys.readouterr().out
    assert f"{len(rows)} of {len(rows)} usable" in out and "shipped code: usable" in out
    # stale facts, a lost code file and a kernel this version lacks are each named
    d = _facts_edited(shipped, tmp_path, source="0" * 64)
    _code(d, "qmodels.analytic.mva._mva_fixed_kernel", "nbk").unlink()
    (d / "qmodels.gone.kernel.0.json").write_text(json.dumps({"kernel": "qmodels.gone.kernel"}))
    why = {k: w for k, _, w in _shipped.survey(str(d))}
    assert "source" in why["qmodels.sim.engine.run"]
    assert "missing" in why["qmodels.analytic.mva._mva_fixed_kernel"]
    assert "unusable facts" in why["qmodels.gone.kernel.0"]
    monkeypatch.setenv("QMODELS_KERNELS", str(d))
    assert main(["warm-up", "--check"]) == 0
    out = capsys.readouterr().out
    assert f"{len(rows) - 2} of {len(rows) + 1} usable" in out and "built for source" in out
    monkeypatch.setenv("QMODELS_KERNELS", "")
    assert _shipped.survey() == []
    assert main(["warm-up", "--check"]) == 0
    assert "turned off" in capsys.readouterr().out


def test_shipping_needs_the_generic_cpu():
    pytest.importorskip("numba")
    from numba.core import config

    if str(config.CPU_NAME).lower() == "generic":
        pytest.skip("this process compiles for the generic CPU already")
    with pytest.raises(RuntimeError, match="NUMBA_CPU_NAME=generic"):
        _shipped.save(E.run, (), "unused")


def test_warm_up_command(monkeypatch, capsys):
    from qmodels._jit import Resumable
    from qmodels.cli import main

    monkeypatch.setattr(sim_run, "ENGINE", Resumable(E.run))  # as a fresh process has it
    monkeypatch.setenv("QMODELS_JIT", "python")
    assert main(["warm-up"]) == 0
    assert "plain Python" in capsys.readouterr().out
    pytest.importorskip("numba")
    monkeypatch.setattr(sim_run, "ENGINE", Resumable(E.run))
    monkeypatch.setenv("QMODELS_JIT", "sync")
    assert main(["warm-up"]) == 0
    assert "machine code is ready" in capsys.readouterr().out
    assert _signature(E.run, sim_run._probe_args()) in E.run.overloads


_WHEEL_USE = textwrap.dedent("""
    import json
    import qmodels as qm
    import qmodels._jit as J
    from qmodels.sim import engine as E
    from qmodels.sim import run
    J._compile_in_child = lambda *a: None
    net = qm.Network([qm.Delay("users", 0.5), qm.Queue("cpu", 0.01, servers=2),
                      qm.Queue("disk", 0.02)],
                     [qm.Closed("tx", 8, visits={"users": 1, "cpu": 1, "disk": 0.7})])
    r = qm.simulate(net, seed=3, horizon=100.0, replications=2, progress=False)
    print(json.dumps({"file": qm.__file__, "X": r.X["tx"].mean,
                      "compiled": sum(E.run.stats.cache_misses.values()),
                      "loaded": sum(E.run.stats.cache_hits.values())}))
""")


def _source_copy(tmp_path) -> pathlib.Path:
    """A copy of the source tree, as `make wheel` would build it (without
    its own shipped code or byte code)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("setup.py", "setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "qmodels", src / "qmodels",
                    ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    return src


def _pip_wheel(tmp_path, src, **env):
    """``pip wheel`` of ``src`` as `make wheel` runs it (no build isolation:
    the project's environment runs the build hook), with ``env`` added."""
    env = dict({k: v for k, v in os.environ.items()
                if k not in ("PYTHONPATH", "QMODELS_AOT", "QMODELS_SHIP_FROM")},
               PIP_DISABLE_PIP_VERSION_CHECK="1", **env)
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation",
                           "--no-deps", "-w", str(tmp_path / "dist"), str(src)],
                          env=env, capture_output=True, text=True, timeout=1200, cwd=tmp_path)


def _wheel_ships_and_loads(tmp_path, **env) -> set:
    """Build a wheel from a copy of the source tree (``env`` says how the
    build hook gets its machine code), check that it holds the simulator's,
    install it far from the source tree and check that a run there loads
    that code, compiles nothing and equals the source tree's run; the names
    of the wheel's kernel files."""
    out = _pip_wheel(tmp_path, _source_copy(tmp_path), **env)
    assert out.returncode == 0, out.stderr
    (whl,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(whl).namelist()
    shipped = {n for n in names if n.startswith("qmodels/_kernels/")}
    assert any(n.startswith("qmodels/_kernels/qmodels.sim.engine.run.") and n.endswith(".nbk")
               for n in shipped)
    assert {n[:-4] for n in shipped if n.endswith(".nbk")} == \
        {n[:-5] for n in shipped if n.endswith(".json")}
    site = tmp_path / "site"
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                          "--target", str(site), str(whl)],
                         env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # the installed copy, first on the path; numba's cache empty and nowhere
    # near the source tree
    run_env = dict(os.environ, PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(tmp_path / "cache"),
                   QMODELS_JIT="background")
    run_env.pop("QMODELS_KERNELS", None)
    out = subprocess.run([sys.executable, "-c", _WHEEL_USE], env=run_env, capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert pathlib.Path(got["file"]).is_relative_to(site)
    assert got["compiled"] == 0 and got["loaded"] == 1
    # the same run as the source tree's loop (machine code or twin alike)
    r = qm.simulate(qm.Network([qm.Delay("users", 0.5), qm.Queue("cpu", 0.01, servers=2),
                                qm.Queue("disk", 0.02)],
                               [qm.Closed("tx", 8, visits={"users": 1, "cpu": 1,
                                                           "disk": 0.7})]),
                    seed=3, horizon=100.0, replications=2, progress=False)
    assert got["X"] == r.X["tx"].mean
    return {n.rpartition("/")[2] for n in shipped}


def test_a_wheel_ships_the_code_and_its_installation_loads_it(shipped, tmp_path):
    # the wheel ships the code the `shipped` fixture compiled
    # (QMODELS_SHIP_FROM) instead of compiling it all again: the compile of
    # `warm-up --ship` is the fixture's, proven by the tests above; that
    # setup.py runs it is test_a_wheel_build_compiles_the_code_it_ships (slow)
    pytest.importorskip("wheel")
    names = _wheel_ships_and_loads(tmp_path, QMODELS_SHIP_FROM=str(shipped))
    assert names == {p.name for p in shipped.iterdir() if p.suffix in (".nbk", ".json")}


def test_a_wheel_build_refuses_code_it_cannot_ship(shipped, tmp_path):
    pytest.importorskip("wheel")
    src = _source_copy(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    stale = _facts_edited(shipped, tmp_path, source="0" * 64)
    for folder, says in [(tmp_path / "missing", "no such folder"), (empty, "no kernels"),
                         (stale, "qmodels.sim.engine.run: built for source '000")]:
        out = _pip_wheel(tmp_path, src, QMODELS_SHIP_FROM=str(folder))
        assert out.returncode != 0
        assert f"QMODELS_SHIP_FROM={folder}: " in out.stderr + out.stdout
        assert says in out.stderr + out.stdout
    assert not list((tmp_path / "dist").glob("*.whl"))


@pytest.mark.slow
def test_a_wheel_build_compiles_the_code_it_ships(tmp_path):
    # as `make wheel` builds it: setup.py's hook runs `warm-up --ship` itself
    pytest.importorskip("numba")
    pytest.importorskip("wheel")
    _wheel_ships_and_loads(tmp_path, QMODELS_AOT="require")
