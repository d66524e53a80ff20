"""The batched window figures and percentiles of the batch-means analysis
(qmodels.sim.windows) against the one-window forms they replace: the same
numbers, bit for bit."""

from __future__ import annotations

import math
import warnings

import numpy as np

import qmodels as qm
import qmodels.sim.api as api
from qmodels.sim.stats import histogram_percentiles
from qmodels.sim.windows import PERCENTILES, _percentiles_of, _seg_first_cell, _window, _windows


class _F:
    def __init__(self, C):
        self.hist_lo = np.linspace(-3.0, -1.0, C)
        self.hist_step = 0.01


class _R:
    def __init__(self, C):
        self.f = _F(C)


def test_batched_percentiles_equal_the_scalar_ones_bit_for_bit():
    rng = np.random.default_rng(5)
    B, C, nb = 7, 3, 400
    h = np.zeros((B, C, nb), dtype=np.int64)
    h[:, :, 120:260] = rng.integers(0, 4, (B, C, 140))
    h[:, :, 130:140] = 0          # runs of empty bins inside the range
    h[2, 1] = 0                   # an empty row: NaN
    h[4, 0] = 0
    h[4, 0, 200] = 1              # a single observation
    run = _R(C)
    got = _percentiles_of(run, h)
    for b in range(B):
        for c in range(C):
            ref = histogram_percentiles(h[b, c], run.f.hist_lo[c], run.f.hist_step,
                                        [q / 100.0 for q in PERCENTILES])
            for j, v in enumerate(ref):
                assert (math.isnan(v) and math.isnan(got[b, c, j])) or v == got[b, c, j]


def test_batched_windows_equal_one_window_each_bit_for_bit():
    net = qm.Network([qm.Queue("a", 0.3, servers=2), qm.Queue("b", 0.2), qm.Delay("d", 0.5)],
                     [qm.Closed("c", 4, routing={"a": {"b": 0.6, "d": 0.4}, "b": {"a": 1.0},
                                                 "d": {"a": 1.0}}),
                      qm.Open("o", arrival_rate=0.5, routing={"source": {"a": 1.0},
                                                             "a": {"sink": 1.0}})])
    seen = {}
    orig = api._batches

    def spy(run, *rest):
        seen["run"] = run
        return orig(run, *rest)

    api._batches = spy
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            qm.simulate(net, seed=3, horizon=200.0, method="batch_means", progress=False)
    finally:
        api._batches = orig
    run = seen["run"]
    n = run.cells_done
    a = [0, 3, 10, 57, n - 5]
    b = [n, 9, 40, 58, n]
    many = _windows(run, a, b)
    for i, (ai, bi) in enumerate(zip(a, b)):
        one = _window(run, ai, bi)
        for key, v in one.items():
            assert np.array_equal(v, many[key][i], equal_nan=True), key


def test_first_cell_of_each_segment():
    seg = np.array([0, 1, 1, 1, 2, 2, 3, 5, 5, 6])   # the last entry: after the end
    assert _seg_first_cell(seg) == {0: 0, 1: 1, 2: 4, 3: 6, 5: 7}


def test_a_replication_stopped_before_two_cells_is_refused_by_name():
    # max_events = 5 on a horizon of 1,000 s: the pilot replications end in
    # their first cell, nothing to estimate from (windows.need_two_cells)
    import pytest

    import qmodels as qm
    from qmodels.errors import InvalidValueError

    net = qm.Network([qm.Queue("q", 0.5)], [qm.Open("o", 1.0, visits={"q": 1})])
    with pytest.raises(InvalidValueError, match="before two cells of its horizon"):
        qm.simulate(net, seed=1, horizon=1000, max_events=5, progress=False)
