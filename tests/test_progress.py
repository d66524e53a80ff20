"""Progress bars (qmodels._progress) and the long calls that show them: one
rule for all (off in CI and with progress=False, on with True, by default
only in a terminal or Jupyter), and splitting a long computation into the
calls a bar needs changes no number."""

from __future__ import annotations

import numpy as np
import pytest

import qmodels as qm
from qmodels import _progress
from qmodels.analytic import _lattice


def test_the_bar_follows_one_rule(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.delenv("CI", raising=False)
    assert _progress.bar(False, 10, "x") is None
    b = _progress.bar(True, 10, "x")
    assert b is not None and b.total == 10
    b.close()
    # default: only in a terminal or a notebook (pytest captures stderr)
    monkeypatch.setattr(_progress, "in_notebook", lambda: False)
    monkeypatch.setattr(_progress.sys.stderr, "isatty", lambda: False, raising=False)
    assert _progress.bar(None, 10, "x") is None
    monkeypatch.setattr(_progress, "in_notebook", lambda: True)
    b = _progress.bar(None, 10, "x")
    assert b is not None
    b.close()
    monkeypatch.setenv("CI", "true")  # never in CI, even when asked
    assert _progress.bar(True, 10, "x") is None


def _two_class_ld():
    return qm.Network(
        [qm.Queue("cpu", 0.02, servers=2), qm.Queue("disk", 0.03),
         qm.LoadDependent("net", 0.05, rate_multipliers=(1.0, 1.5, 1.8))],
        [qm.Closed("a", 12, think_time=1.0, visits={"cpu": 1, "disk": 1, "net": 1}),
         qm.Closed("b", 9, think_time=0.5, visits={"cpu": 2, "disk": 0.5, "net": 0.3})])


class _Recorder:
    def __init__(self, total):
        self.total, self.done, self.closed = total, 0, False

    def update(self, k):
        self.done += k

    def close(self):
        self.closed = True


@pytest.mark.parametrize("compiled", [False, True])
def test_a_lattice_run_in_many_calls_equals_one_call(monkeypatch, compiled):
    if compiled:
        pytest.importorskip("numba")
    net = _two_class_ld()
    kernel = _lattice._lattice_run
    monkeypatch.setattr(kernel, "threshold", 0 if compiled else 10**12)
    whole = qm.mva(net, curve=True)
    bars = []

    def recorder(progress, total, desc, unit="it"):
        bars.append(_Recorder(total))
        return bars[-1]

    monkeypatch.setattr(_lattice, "progress_bar", recorder)
    # 13 x 10 = 130 lattice points, 4 complement networks, 2 classes, 3
    # stations: 24 trips a point, so 7 points a call
    monkeypatch.setattr(_lattice, "LATTICE_CHUNK_WORK", 7 * 24)
    split = qm.mva(net, curve=True, progress=True)
    assert len(bars) == 1 and bars[0].total == 130 and bars[0].done == 130 and bars[0].closed
    for name in net.class_names:
        assert split.X[name] == whole.X[name]
    for k in net.station_names:
        assert split.Q[k] == whole.Q[k]
    np.testing.assert_array_equal(split.curve.X, whole.curve.X)


def test_calibration_counts_its_model_evaluations_on_a_bar(monkeypatch):
    from qmodels.cases import _base

    bars = []

    def recorder(progress, total, desc, unit="it"):
        bars.append(_Recorder(total))
        return bars[-1]

    monkeypatch.setattr(_base, "progress_bar", recorder)
    calls = []

    def residuals(v):
        calls.append(v)
        return [v["a"] / 2.0 - 1.0, v["b"] / 3.0 - 1.0]

    fit = _base.fit_parameters(residuals, {"a": 1.0, "b": 1.0}, progress=True)
    assert fit["a"] == pytest.approx(2.0, rel=1e-6) and fit["b"] == pytest.approx(3.0, rel=1e-6)
    assert bars[0].done == len(calls) > 0 and bars[0].closed
