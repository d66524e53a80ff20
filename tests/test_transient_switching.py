"""The transient CTMC with class switching: a job's class is part of the
chain's state (qmodels.analytic._ctmc_spec), so p(t) = p(0) exp(Q t) runs on
the same chain qm.ctmc solves for the steady state.

References, each independent of the transient under test:

* large t: the steady state of the same chain by qm.ctmc (a linear solve of
  pi Q = 0, not the matrix exponential), itself checked against exact MVA's
  chain reduction and Schwetman (1982) in tests/test_ctmc_switching.py;
* t = 0: the initial state written out by hand from the classes'
  populations (each at its reference station);
* small t: the simulator's replicated cell averages, Student-t interval per
  cell (Law 2015, sec. 9.4.1), against the CTMC's exact cell averages.
"""

from __future__ import annotations

import numpy as np
import pytest

import qmodels as qm
from tests.test_class_switching import (
    cache_closed,
    cache_closed_starting_as_misses,
    schwetman_fig9,
)


@pytest.mark.parametrize("make, start_q", [
    # hand: 4 hits at 'users' (a delay: U counts its busy servers, 4);
    # Schwetman's 3 jobs of class c1 at the CPU; 4 misses at the disk
    (cache_closed, {"Q": [4, 0, 0], "Q_class": [4, 0]}),
    (schwetman_fig9, {"Q": [3, 0, 0], "Q_class": [3, 0]}),
    (cache_closed_starting_as_misses, {"Q": [0, 0, 4], "Q_class": [0, 4]}),
])
def test_switching_transient_starts_from_the_populations_and_tends_to_the_ctmc(make, start_q):
    net = make()
    r = qm.transient(net, 400.0, points=4, method="ctmc")
    assert r.method == "ctmc" and r.exactness == "exact"
    # t = 0: the classes' populations where the user put them; the chain's
    # population (sum over its classes) is all there
    for fig, want in start_q.items():
        np.testing.assert_allclose(r.start[fig], want, atol=1e-12)
    assert r.start["Q_class"].sum() == sum(int(c.population) for c in net.classes)
    # every instant keeps the chain's population (no think time here)
    np.testing.assert_allclose(r.figures["Q_class"].sum(axis=1),
                               sum(int(c.population) for c in net.classes), rtol=1e-9)
    ss = qm.ctmc(net)
    Q = np.asarray(ss.station_queue_length, float)
    np.testing.assert_allclose(r.figures["Q"][-1], Q.sum(axis=0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(r.figures["Q_class"][-1], Q.sum(axis=1), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(r.figures["U"][-1],
                               np.asarray(ss.station_utilization, float).sum(axis=0),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(r.figures["X"][-1],
                               np.asarray(ss.station_throughput, float).sum(axis=0),
                               rtol=1e-6, atol=1e-9)
    # the start is not the limit (the convergence is not a test that
    # cannot fail): hand Q_users(0) = 4 against 3.758 for the cache
    assert np.max(np.abs(r.start["Q"] - Q.sum(axis=0))) > 0.2


def test_where_a_switching_chain_starts_changes_the_path_not_the_limit():
    nets = (cache_closed(), cache_closed_starting_as_misses())
    a, b = (qm.transient(n, 0.1, points=1, method="ctmc") for n in nets)
    # at t = 0.1 the misses started at the disk (4 x 0.08 of work) are
    # still queued there; from the users hardly any job has reached it
    assert b.figures["Q"][0, 2] - a.figures["Q"][0, 2] > 1.0
    a, b = (qm.transient(n, 300.0, points=1, method="ctmc") for n in nets)
    np.testing.assert_allclose(a.figures["Q"][-1], b.figures["Q"][-1], rtol=1e-9)


@pytest.mark.parametrize("make", [cache_closed, cache_closed_starting_as_misses])
def test_switching_transient_against_the_simulator_at_small_t(make):
    """The first 2 time units (two think times), 8 cells: the simulator's
    start is the CTMC's (no note says otherwise), and its cell averages over
    200 replications cover the CTMC's exact cell averages."""
    net = make(2) if make is cache_closed else make()
    exact = qm.transient(net, 2.0, points=8, method="ctmc", average=True)
    sim = qm.transient(net, 2.0, points=8, method="sim", seed=11, replications=200)
    assert not any("start from different states" in n for n in exact.notes + sim.notes)
    inside = total = 0
    for fig in ("Q", "U", "Q_class"):
        names = net.station_names if fig != "Q_class" else net.class_names
        for k, name in enumerate(names):
            e = exact.series(fig, name)
            lo, hi = sim.low[fig][:, k], sim.high[fig][:, k]
            m = sim.figures[fig][:, k]
            # never far: within four half-widths (about 8 standard errors)
            assert np.all(np.abs(m - e) <= 4 * (hi - lo) / 2 + 1e-9), (fig, name, m, e)
            inside += int(np.sum((lo <= e) & (e <= hi)))
            total += len(e)
    # 95 % intervals: fewer than 80 % inside would be far below the level
    assert inside >= 0.8 * total, (inside, total)
