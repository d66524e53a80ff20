"""method='priority': immediate feedback at an open priority queue, and the
whole-network chain of small closed networks.  References: the exact chain
(qm.ctmc, an independent construction of the same semantics) and, for a
deterministic service the chain only fits by phases, the simulator."""

import warnings

import numpy as np
import pytest

import qmodels as qm
from qmodels.errors import InvalidValueError


def _feedback_station(disc, shape):
    # class a: 1.6 visits per job, class b: 1.3, both by visit ratios (the
    # random routing sends a job straight back with probability (1 - 1/T))
    return qm.Network([qm.Queue("p", 1.0, discipline=disc, distribution=shape)],
                      [qm.Open("a", 0.3, visits={"p": 1.6}, service={"p": 0.6}, priority=0),
                       qm.Open("b", 0.4, visits={"p": 1.3}, service={"p": 0.5}, priority=1)])


def _ctmc(net):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return qm.ctmc(net)


@pytest.mark.parametrize("shape", [None, qm.Erlang(4), qm.HyperExponential(3.0)])
def test_preemptive_queue_with_feedback_is_exact(shape):
    # at a preemptive queue a job sent back brings its work at once as far
    # as every class's count is concerned (module docstring): the chain and
    # the compound-geometric M/G/1 agree to the chain's truncation
    net = _feedback_station("prio-pr", shape)
    a = qm.priority(net)
    r = _ctmc(net)
    assert r.exactness == "exact"
    for c in net.class_names:
        assert float(a.R[c]) == pytest.approx(float(r.R[c]), rel=1e-6)


def test_preemptive_feedback_against_the_hand_formula():
    # class a alone above b: M/M/1 with Bernoulli feedback q = (1 - 1/T) V / T
    # = 0.375 * 1 = 0.375 (T = V = 1.6): an entry of mean 0.6 / 0.625 = 0.96
    # at rate 0.3; exponential visits make the compound exponential (scv
    # 0.375 + 0.625), so R = 0.96 / (1 - 0.288)
    net = _feedback_station("prio-pr", None)
    a = qm.priority(net)
    assert float(a.R["a"]) == pytest.approx(0.96 / (1.0 - 0.3 * 0.96), rel=1e-12)


@pytest.mark.parametrize("shape", [None, qm.Erlang(4), qm.HyperExponential(3.0)])
def test_hol_queue_with_feedback_close_to_the_chain(shape):
    # head of line: the job sent back rejoins after the next job started, so
    # the compound entry is an approximation; measured (2026-11-28) against
    # the chain: 1.8 .. 4.2 % (the per-visit Poisson form: 0.1 .. 12.8 %)
    net = _feedback_station("prio", shape)
    a = qm.priority(net)
    r = _ctmc(net)
    for c in net.class_names:
        assert float(a.R[c]) == pytest.approx(float(r.R[c]), rel=0.05)


@pytest.mark.slow
def test_open_catalog_network_5_against_the_simulator():
    # priority-open network 5 (validation/envelopes.py): deterministic
    # preemptive queue, class c0 with 1.36 visits by visit ratios; the
    # per-visit Poisson form missed c1's R by 32.6 %, the compound entry
    # is exact (2026-11-28: 0.02 % against the catalog's simulation)
    from validation.envelopes import CATALOGS, networks

    net = networks(CATALOGS["priority-open"])[5]
    a = qm.priority(net)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = qm.simulate(net, seed=11, horizon=4e5, replications=8, progress=False)
    for c in net.class_names:
        assert float(a.R[c]) == pytest.approx(float(s.R[c]), rel=0.02)


def _small_closed():
    # priority-closed network 33's shape: a HOL queue and an exponential
    # FCFS queue, the low class (3 jobs) nearly starved by the high (6)
    return qm.Network([qm.Queue("p", 1.0, discipline="prio"), qm.Queue("s0", 0.536)],
                      [qm.Closed("c0", 3, visits={"p": 1.52, "s0": 1.01},
                                 service={"p": 0.279}, priority=1),
                       qm.Closed("c1", 6, visits={"p": 1.33, "s0": 0.78},
                                 service={"p": 0.424}, priority=0)])


def test_small_closed_network_is_its_own_chain():
    net = _small_closed()
    a = qm.priority(net)
    r = _ctmc(net)
    assert a.exactness == "exact" and a.method == "priority"
    np.testing.assert_allclose(np.asarray(a.class_throughput, dtype=float),
                               np.asarray(r.class_throughput, dtype=float), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(a.class_response_time, dtype=float),
                               np.asarray(r.class_response_time, dtype=float), rtol=1e-9)
    assert any("Markov chain" in n for n in a.notes)


def test_the_approximation_misses_that_network():
    # why the chain is used where it fits: the flow-equivalent-server
    # approximation (max_states=0) misses the starved class's throughput by
    # 10.1 % there (2026-11-28), the order at the FCFS queue it cannot see
    net = _small_closed()
    a = qm.priority(net, max_states=0)
    r = _ctmc(net)
    assert any("finite-source" in n for n in a.notes) and a.exactness == "approximate"
    err = abs(float(a.X["c0"]) - float(r.X["c0"])) / float(r.X["c0"])
    assert 0.05 < err < 0.15


def test_fitted_shape_keeps_the_approximate_label():
    # a deterministic service is an Erlang fit in the chain: approximate
    net = qm.Network([qm.Queue("p", 1.0, discipline="prio-pr", distribution=qm.Deterministic()),
                      qm.Delay("z", 1.0)],
                     [qm.Closed("hi", 2, visits={"p": 1, "z": 1}, service={"p": 0.3},
                                priority=0),
                      qm.Closed("lo", 2, visits={"p": 1, "z": 1}, service={"p": 0.4},
                                priority=1)])
    a = qm.priority(net)
    assert a.exactness == "approximate"
    assert any("Markov chain" in n for n in a.notes)


def test_past_max_states_the_approximation_answers():
    net = _small_closed()
    a = qm.priority(net, max_states=50)
    assert any("finite-source" in n for n in a.notes)


@pytest.mark.parametrize("bad", [-1, 2.5, True, "10"])
def test_max_states_is_checked(bad):
    with pytest.raises(InvalidValueError, match="max_states"):
        qm.priority(_small_closed(), max_states=bad)


def test_whole_chain_before_the_surrogate_factors(monkeypatch):
    # two priority queues whose joint chain is (made) past its budget: the
    # whole network's chain is tried before the surrogate factors (up to
    # SURROGATE_CTMC_STATES even where max_states is smaller)
    from qmodels.analytic import _prio_fes

    monkeypatch.setattr(_prio_fes, "JOINT_BUDGET", 10)
    net = qm.Network([qm.Queue("p", 1.0, discipline="prio-pr"),
                      qm.Queue("h", 1.0, discipline="prio"), qm.Delay("z", 1.0)],
                     [qm.Closed("a", 2, visits={"p": 1.0, "h": 0.8, "z": 1.0},
                                service={"p": 0.3, "h": 0.2, "z": 0.4}, priority=0),
                      qm.Closed("b", 2, visits={"p": 1.2, "h": 1.0, "z": 0.6},
                                service={"p": 0.25, "h": 0.35, "z": 0.3}, priority=1)])
    for ms in (1, 60_000):
        a = qm.priority(net, max_states=ms)
        assert any("Markov chain" in n for n in a.notes) and a.exactness == "exact"
    r = _ctmc(net)
    np.testing.assert_allclose(np.asarray(a.class_throughput, dtype=float),
                               np.asarray(r.class_throughput, dtype=float), rtol=1e-9)
    # with no chain of the whole network allowed, the surrogate factors answer
    b = qm.priority(net, max_states=0)
    assert any("finite-source" in n for n in b.notes)
