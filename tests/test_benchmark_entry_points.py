"""Every benchmark case's entry point of ours imports and runs on a tiny
model, so a moved module breaks CI rather than silently dropping our
solvers from ``python -m benchmarks`` (the multi-class cases once printed
"not there yet; peers timed alone" for months after a restructure).  No
timing here: the figures live in ``benchmarks/``."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from benchmarks import __main__ as runner
from benchmarks import _util, cases, cases_more

#: issue 22's cases (benchmarks/cases_more.py): their own models, checked below
MORE = list(cases_more.TITLES)
TIMED = [c for c in cases.CASE_IDS
         if not c.startswith(("multiserver", "convolution", "sim-parallel")) and c not in MORE]


@pytest.mark.parametrize("cid", TIMED)
def test_our_entry_point_of_every_timed_case_resolves_and_solves(cid):
    label, fn, kw = cases.ours(cid)
    assert callable(fn)
    # the label names where the function really lives
    module, name = label.rsplit(".", 1)
    assert getattr(importlib.import_module(module), name) is fn
    if cid.startswith("batch"):
        D = np.array([[0.01, 0.02], [0.02, 0.01]])
        res = cases._batch_call(fn, D, np.array([1.0, 2.0]), 5)()
        assert cases._batch_X(res, 2, 5).shape[0] == 2
        return
    D = np.array([[0.01, 0.02, 0.03]] * (3 if cid.startswith(("mvaC", "schweitzer")) else 1))
    net = cases.network(D, np.full(len(D), 3), np.ones(len(D)))
    if cid.startswith("bounds"):
        # the figures the peers are compared on: [X lower, X upper] of each set
        figs = cases._bounds_figures(fn(net, **kw), ("aba", "bjb", "gb", "pb"))
        assert all(0 < lo <= hi for lo, hi in figs)
        return
    X, Q = cases._answer(fn(net, **kw))
    assert X.shape == (len(D),) and np.all(X > 0)


def test_a_missing_implementation_of_ours_fails_the_run(monkeypatch, capsys):
    def gone(cid):
        raise ModuleNotFoundError("No module named 'qmodels.moved'", name="qmodels.moved")

    monkeypatch.setattr(cases, "ours", gone)
    monkeypatch.setattr(cases, "environment",
                        lambda args, peers_needed: {"lines": [], "_peers": {}})
    monkeypatch.setattr(runner, "_load_sim", lambda: (None, None))
    code = runner.main(["-k", "mva1-K50-N1000", "--repeat", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ERROR: " in out and "FAILED" in out


def test_errors_are_ours_only():
    rows = [_util.skipped("c", "qmodels", "ours", runner.ERROR + "boom"),
            _util.skipped("c", "octave", "peer", "UNAVAILABLE - not installed")]
    assert runner.errors(rows) == rows[:1]


def test_the_simulator_plugin_imports():
    sim, error = runner._load_sim()
    assert error is None and sim is not None
    assert callable(sim.run_qmodels) and set(sim.CASES) == {
        "sim-mm1", "sim-closed4", "sim-tandem-block", "sim-prio2", "sim-fj3"}
    for case in sim.CASES:  # every model builds, and C++ knows it
        assert sim.network(case) is not None and case in sim.CPP_MODEL


def test_the_overhead_and_cli_scripts_import_and_run(capsys):
    from benchmarks import bench_cli, bench_overhead

    assert bench_overhead.main(["-n", "2"]) == 0
    assert "overhead" in capsys.readouterr().out
    assert callable(bench_cli.main)


def test_every_issue22_case_is_in_the_runner():
    assert set(MORE) <= set(cases.CASE_IDS)
    assert {"forkjoin-open-K4", "priority-closed-2c", "qna-open-tandem3", "residual-closed-3",
            "decomp-vs-ctmc-mem", "cli-solve-two-tier"} <= set(MORE)


@pytest.mark.parametrize("cid", [c for c in MORE if c != "cli-solve-two-tier"])
def test_issue22_entry_point_solves_its_case(cid):
    label, fn, kw = cases.ours(cid)
    # the label names the solver qm.solve dispatches to, which must exist
    method = label.split("'")[1]
    from qmodels.dispatch import METHODS, solver

    m = METHODS[method]
    assert f"{m.module}.{m.function}" in label and callable(solver(method))
    res = fn(cases_more.network(cid), **kw)
    assert res.method == method or method in res.method
    figs = cases_more.answer(cid, res)
    assert figs and all(a.size and np.all(np.isfinite(a)) and np.all(a > 0) for a in figs)


def _args(**kw):
    import argparse

    return argparse.Namespace(**{"repeat": 1, "min_time": 0.0, "peer_budget": 5.0,
                                 "peers": None, **kw})


@pytest.mark.parametrize("cid", [c for c in MORE if c != "cli-solve-two-tier"])
def test_issue22_case_runs_with_one_row_of_ours(cid):
    rows = cases.run_case(cid, _args(), {"_peers": {}})
    ours = [r for r in rows if r["role"] == "ours"]
    assert len(ours) == 1 and ours[0]["time_s"] > 0 and not runner.errors(rows)
    if cid == "decomp-vs-ctmc-mem":
        # the exact CTMC beside it; the decomposition is an approximation, and
        # on this model (validation/catalog.py's memory case) it is within 2 %
        ref = next(r for r in rows if r["role"] == "reference")
        assert ref["maxrel"] is not None and ref["maxrel"] < 0.02
    else:
        # line-solver: its row (run, or UNAVAILABLE with the reason)
        assert any(r["impl"].startswith("line-solver") for r in rows)
    # --peers without line: no line-solver row at all
    if cid != "decomp-vs-ctmc-mem":
        rows = cases.run_case(cid, _args(peers={"c"}), {"_peers": {}})
        assert not any(r["impl"].startswith("line-solver") for r in rows)


def test_line_models_peer_is_unavailable_without_line_solver(monkeypatch):
    import sys

    from benchmarks import peers

    monkeypatch.setitem(sys.modules, "line_solver", None)
    with pytest.raises(peers.Unavailable, match="model API not importable"):
        peers.LineModels()


def test_the_cli_case_runs_qmodels_solve_as_a_process():
    label, fn, _ = cases.ours("cli-solve-two-tier")
    out = fn(cases_more.network("cli-solve-two-tier"))
    assert "bottleneck" in out and "X [1/s]" in out
    with pytest.raises(RuntimeError, match="exited"):
        fn(cases_more.network("cli-solve-two-tier") + ".missing")


def test_the_scaling_table_is_printed_and_its_failure_fails_the_run(monkeypatch):
    """``python -m benchmarks`` prints the simulator's scaling table (issue
    32); a table that cannot be made (here: the one-process run and a
    parallel one differ) is an ERROR block, which fails the run."""
    from benchmarks import bench_sim_parallel

    monkeypatch.setattr(bench_sim_parallel, "report", lambda quick=False: ["w s speed-up", "1 2 1"])
    block = cases.extras(type("A", (), {"quick": True})(), {}, ["sim-parallel-scaling"])[0]
    assert block.startswith("== sim-parallel-scaling") and "speed-up" in block

    def differ(quick=False):
        raise AssertionError("tables differ")

    monkeypatch.setattr(bench_sim_parallel, "report", differ)
    block = cases.extras(type("A", (), {"quick": True})(), {}, ["sim-parallel-scaling"])[0]
    assert "ERROR: AssertionError: tables differ" in block


@pytest.mark.parametrize("module", ["bench_sim_parallel", "bench_sweep"])
def test_importing_a_benchmark_after_numba_threads_started_breaks_no_compile(module):
    """A benchmark module asks for one numba thread per process only when it
    is the program.  Imported into a process whose numba thread pool already
    runs (a test worker), it once set ``NUMBA_NUM_THREADS=1``, and the
    worker's next compile raised "Cannot set NUMBA_NUM_THREADS to a
    different value once the threads have been launched" (four cache tests
    failed so in CI).  Run in a fresh process: a parallel kernel starts the
    pool, the module is imported, a new function compiles."""
    code = textwrap.dedent(f"""
        import os
        os.environ["NUMBA_NUM_THREADS"] = "2"
        import numba, numpy as np

        @numba.njit(parallel=True)
        def total(a):
            s = 0.0
            for i in numba.prange(a.size):
                s += a[i]
            return s

        total(np.ones(4))
        del os.environ["NUMBA_NUM_THREADS"]
        from benchmarks import {module}
        assert "NUMBA_NUM_THREADS" not in os.environ

        @numba.njit
        def after(x):
            return x + 1

        assert after(1) == 2
    """)
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("NUMBA_NUM_THREADS", None)
    run = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
