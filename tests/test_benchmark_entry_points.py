"""Every benchmark case's entry point of ours imports and runs on a tiny
model, so a moved module breaks CI rather than silently dropping our
solvers from ``python -m benchmarks`` (the multi-class cases once printed
"not there yet; peers timed alone" for months after a restructure).  No
timing here: the figures live in ``benchmarks/``."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from benchmarks import __main__ as runner
from benchmarks import _util, cases

TIMED = [c for c in cases.CASE_IDS if not c.startswith(("multiserver", "convolution"))]


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
    assert callable(sim.run_qmodels) and set(sim.CASES) == {"sim-mm1", "sim-closed4",
                                                            "sim-tandem-block"}


def test_the_overhead_and_cli_scripts_import_and_run(capsys):
    from benchmarks import bench_cli, bench_overhead

    assert bench_overhead.main(["-n", "2"]) == 0
    assert "overhead" in capsys.readouterr().out
    assert callable(bench_cli.main)
