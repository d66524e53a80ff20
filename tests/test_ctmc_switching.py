"""The exact CTMC with class switching: a job's class is part of its state.

References, each independent of the chain build under test:

* product form: the chain reduction of exact MVA (qm.mva), itself checked
  against Schwetman's published example (CSD-TR-355, 1982, fig. 9) and a
  hand-built CTMC in tests/test_class_switching.py, and for the open chain
  the Jackson closed form derived there;
* outside product form (FCFS with class-dependent times in one chain,
  Erlang service, finite capacity with blocking): the simulator, within
  four half-widths of its interval;
* the compiled build against the Python builder (same states in the same
  order, same rates), as tests/test_ctmc_compiled.py does without
  switching.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import qmodels as qm
from qmodels.analytic import requires
from qmodels.errors import UnsupportedModelError
from qmodels.testing import assert_operational_laws, networks
from tests.test_class_switching import cache_closed, cache_open, schwetman_fig9
from tests.test_ctmc_compiled import _assert_same

TOL = 1e-8


def _match_exact(net, r, e, rtol=TOL):
    """X per class and Q, X per station and class of ``r`` equal those of
    ``e`` to ``rtol`` (R only where the class visits: the reduction reports
    0 elsewhere, the CTMC the arrival-theorem value)."""
    np.testing.assert_allclose(r.class_throughput, e.class_throughput, rtol=rtol)
    np.testing.assert_allclose(r.station_queue_length, e.station_queue_length, rtol=rtol,
                               atol=rtol * 1e-3)
    np.testing.assert_allclose(r.station_throughput, e.station_throughput, rtol=rtol,
                               atol=rtol * 1e-3)
    np.testing.assert_allclose(r.class_response_time, e.class_response_time, rtol=rtol)
    V = np.asarray(net.visits) > 0
    np.testing.assert_allclose(np.asarray(r.station_response_time)[V],
                               np.asarray(e.station_response_time)[V], rtol=rtol)


# ---------------------------------------------------------------------------
# (a) closed product form: the chain reduction of exact MVA
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", [schwetman_fig9, cache_closed])
def test_closed_product_form_chain_equals_exact_mva(make):
    net = make()
    r = qm.ctmc(net)
    assert r.method == "ctmc" and r.exactness == "exact"
    assert any("chains c1+c2" in n or "chains hit+miss" in n for n in r.notes)
    _match_exact(net, r, qm.mva(net))
    # the population is the chain's: every split among its classes is a state
    assert r.station_queue_length.sum() == pytest.approx(3.0 if make is schwetman_fig9 else 4.0)
    assert_operational_laws(r)


def test_r_where_a_class_never_goes_is_the_arrival_theorem_value_of_its_chain():
    """A hit never visits the disk; the time it would spend there on arrival
    is S (1 + Q_disk) with one job fewer in its chain (Reiser & Lavenberg
    1980, the arrival theorem per chain), the reduction's Q at N - 1."""
    r = qm.ctmc(cache_closed(4))
    q3 = qm.mva(cache_closed(3)).station_queue_length[:, 2].sum()
    assert r.station_response_time[0, 2] == pytest.approx(0.08 * (1 + q3), rel=TOL)


def test_where_the_jobs_start_does_not_matter():
    """Schwetman's jobs all start as class 1; start them as class 2 and the
    chain (and its answer) is the same."""
    a = schwetman_fig9()
    from dataclasses import replace

    b = qm.Network(a.stations, [replace(a.classes[0], population=1),
                                replace(a.classes[1], population=2)])
    ra, rb = qm.ctmc(a), qm.ctmc(b)
    assert ra.info["states"] == rb.info["states"]
    np.testing.assert_allclose(rb.station_queue_length, ra.station_queue_length, rtol=1e-10)


def test_a_chain_beside_another_class():
    base = cache_closed(3)
    net = qm.Network(base.stations, base.classes + (
        qm.Closed("batch", 2, visits={"cache": 1.0, "disk": 2.0}),))
    _match_exact(net, qm.ctmc(net), qm.mva(net))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(kind="closed", class_switching=True, product_form=True, max_classes=3,
                max_stations=3, max_population=2))
def test_generated_closed_product_form_chains_equal_exact_mva(net):
    try:
        e = qm.mva(net)
    except UnsupportedModelError:
        return
    r = qm.ctmc(net)
    assert r.exactness == "exact"
    np.testing.assert_allclose(r.class_throughput, e.class_throughput, rtol=1e-7)
    np.testing.assert_allclose(r.station_queue_length, e.station_queue_length, rtol=1e-7,
                               atol=1e-10)


# ---------------------------------------------------------------------------
# (b) open product form: the Jackson solution of the chain
# ---------------------------------------------------------------------------

def test_open_chain_equals_the_open_product_form_solution():
    lam = 8.0
    net = cache_open(lam)
    r = qm.ctmc(net)
    assert r.exactness == "exact" and r.info["truncation_mass"] <= 1e-9
    _match_exact(net, r, qm.mva(net))
    # by hand (as tests/test_class_switching.py): M/M/1-PS loads 0.28 and
    # 0.192, split at the cache by each class's share of the demand
    rc, rd = lam * (0.02 + 0.3 * 0.05), lam * 0.3 * 0.08
    nc, nd = rc / (1 - rc), rd / (1 - rd)
    np.testing.assert_allclose(r.station_queue_length,
                               [[nc * 0.02 / 0.035, 0.0], [nc * 0.015 / 0.035, nd]], rtol=TOL)
    np.testing.assert_allclose(r.class_throughput, [lam, lam], rtol=TOL)


def test_open_load_is_the_chains():
    """The switched-to class has no arrivals of its own: its load is carried
    by the chain's rate, and a chain past saturation is refused."""
    net = cache_open(31.0)      # cache load 31 x 0.035 = 1.085
    with pytest.raises(qm.UnstableError, match="'cache'"):
        qm.ctmc(net)


# ---------------------------------------------------------------------------
# (c) outside product form: the simulator
# ---------------------------------------------------------------------------

def fcfs_cache(n: int = 4, capacity=None) -> qm.Network:
    """The cache of tests/test_class_switching.py with an FCFS cache that
    serves hits (0.02 s) and misses (0.05 s) at different means, and an
    Erlang-3 disk (optionally of finite capacity): not product form."""
    return qm.Network(
        stations=[qm.Delay("users", 1.0), qm.Queue("cache", 0.02),
                  qm.Queue("disk", 0.08, distribution=qm.Erlang(3), capacity=capacity)],
        classes=[
            qm.Closed("hit", population=n, reference="users", routing={
                "users": {"cache": 1.0},
                "cache": {"users": 0.7, "disk": {"miss": 0.3}}}),
            qm.Closed("miss", population=0, service={"cache": 0.05}, routing={
                "disk": {"cache": 1.0},
                "cache": {"users": {"hit": 1.0}}}),
        ])


@pytest.mark.parametrize("capacity", [None, 1])
def test_non_product_form_chain_against_the_simulator(capacity):
    net = fcfs_cache(4, capacity)
    with pytest.raises(UnsupportedModelError):
        qm.mva(net)
    r = qm.ctmc(net)
    assert r.exactness == "exact"
    assert r.info["build"] == ("compiled" if capacity is None else "python")
    if capacity is not None:
        assert r.info["blocked"]["cache"] > 0      # misses wait at the cache for the disk
    assert_operational_laws(r)
    s = qm.simulate(net, seed=11, horizon=20000.0, replications=5, progress=False)
    for ci, c in enumerate(net.class_names):
        for ki, k in enumerate(net.station_names):
            if net.visits[ci, ki] == 0:
                continue
            for metric, exact in (("queue_length", r.station_queue_length[ci, ki]),
                                  ("throughput", r.station_throughput[ci, ki])):
                est = s.figures[metric][k, c]
                assert abs(est.mean - exact) <= max(4 * est.half_width, 1e-3 * exact), \
                    (metric, k, c, est, exact)
        est = s.figures["response_time"][c]
        assert abs(est.mean - r.class_response_time[ci]) <= 4 * est.half_width, (c, est)


@pytest.mark.parametrize("make", [schwetman_fig9, fcfs_cache])
def test_compiled_build_numbers_the_states_of_the_python_builder(make):
    _assert_same(make())


@pytest.mark.filterwarnings("ignore::qmodels.NumericalWarning")  # (truncated on purpose)
def test_compiled_build_of_an_open_chain_equals_the_python_builder():
    _assert_same(cache_open(8.0), open_limit=6)


def test_pools_with_switching_are_refused_by_name():
    base = cache_closed(2)
    net = qm.Network(base.stations, base.classes,
                     pools=[qm.TokenPool("slots", 1, acquire="cache", release="cache")])
    with pytest.raises(UnsupportedModelError, match="token pool 'slots'.*class switching"):
        qm.ctmc(net)


# ---------------------------------------------------------------------------
# (d) the automatic choice
# ---------------------------------------------------------------------------

def test_auto_picks_the_ctmc_for_a_small_non_product_form_chain():
    net = fcfs_cache(3)
    assert requires.for_ctmc(net) is None
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "exact"
    assert "chosen by qm.solve: 'ctmc'" in r.notes[-1]
    _match_exact(net, r, qm.ctmc(net), rtol=1e-12)


def test_auto_picks_the_ctmc_for_fcfs_times_that_differ_within_a_chain():
    """Exponential service everywhere, but an FCFS queue that serves the
    classes of one chain at different means: the reduction refuses it, so
    the requirement of 'exact' must say so and 'auto' go to the CTMC."""
    net = qm.Network(
        stations=[qm.Delay("users", 1.0), qm.Queue("cache", 0.02), qm.Queue("disk", 0.08)],
        classes=cache_closed(3).classes)
    assert "'cache'" in requires.for_exact(net)
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "exact"


def test_auto_still_picks_the_reduction_in_product_form():
    assert "product form" in requires.for_ctmc(cache_closed())
    assert qm.solve(cache_closed()).method == "exact"
