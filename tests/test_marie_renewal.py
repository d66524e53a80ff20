"""Marie's method with renewal arrivals at the general stations
(:mod:`qmodels.analytic.marie`, "Renewal arrivals"; the chains in
:mod:`qmodels.analytic._marie_station`).

References, independent of the solver: the exact CTMC (``qm.ctmc``, exact
for Erlang and balanced-means hyperexponential service, whose phases it
keeps in the state), the Poisson-fed chains of the same module (the
renewal chain with one-phase intervals must be them), and the moments of a
sum of independent times written out by hand.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import marie as M
from qmodels.analytic._marie_station import (
    MultiClassChain,
    RenewalMultiClassChain,
    SingleClassChain,
    _exp_ph,
    arrival_fit,
    phase_type,
)
from qmodels.model.distributions import Erlang, HyperExponential


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


def _cycle(shapes, S, N, Z=0.0):
    names = [f"q{k}" for k in range(len(S))]
    st = [qm.Queue(n, s, distribution=d) for n, s, d in zip(names, S, shapes)]
    route = {names[k]: {names[(k + 1) % len(S)]: 1.0} for k in range(len(S))}
    return qm.Network(st, [qm.Closed("c", N, think_time=Z, routing=route)])


E8, H5 = Erlang(8), HyperExponential(5.0)


@pytest.mark.parametrize("shapes,S,N", [
    ((E8, E8), (1.0, 1.0), 2),
    ((E8, E8), (1.0, 0.7), 4),
    ((H5, H5), (1.0, 1.0), 3),
    ((E8, H5), (0.8, 1.0), 4),
    ((Erlang(3), H5), (1.0, 0.5), 5),
])
def test_two_stations_in_a_cycle_are_exact(shapes, S, N):
    # the complement of each station is the other one: its passage time is
    # the other's service (shape and all), and the speeds matched to
    # Marie's conditional rates make each chain the whole network's.  With
    # Poisson arrivals (the method before) two Erlang-8 stations with 2
    # jobs lose 8.6 % of X.
    # (group_max=1: every station alone; by default the two queues are one
    # subsystem, the whole network's chain, exact as well)
    net = _cycle(shapes, S, N)
    r, e = qm.marie(net, group_max=1), qm.ctmc(net)
    assert float(r.X["c"]) == pytest.approx(float(e.X["c"]), rel=1e-6)
    np.testing.assert_allclose(r.station_queue_length, e.station_queue_length, rtol=1e-5)
    assert r.info["arrivals"], "renewal arrivals were not used"
    whole = qm.marie(net)
    assert whole.info["subsystems"] == [["q0", "q1"]] and whole.exactness == "exact"
    assert float(whole.X["c"]) == pytest.approx(float(e.X["c"]), rel=1e-9)


def test_poisson_arrivals_were_the_error():
    # the same network with the renewal source switched off: the error the
    # change removes (a test that fails if the switch does nothing)
    net = _cycle((E8, E8), (1.0, 1.0), 2)
    e = float(qm.ctmc(net).X["c"])
    old = M.RENEWAL
    try:
        M.RENEWAL = False
        poisson = float(qm.marie(qm.Network(list(net.stations), list(net.classes)),
                                 group_max=1).X["c"])
    finally:
        M.RENEWAL = old
    assert abs(poisson - e) / e > 0.05


def test_exponential_complement_keeps_poisson():
    # an Erlang queue whose complement is one exponential queue: the
    # passage time is exponential (SCV 1), Poisson arrivals are kept, and
    # the answer is exact as before
    net = _cycle((E8, None), (1.0, 1.0), 3)
    r, e = qm.marie(net, group_max=1), qm.ctmc(net)
    assert r.info["arrivals"] == {}
    assert float(r.X["c"]) == pytest.approx(float(e.X["c"]), rel=1e-7)


def test_passage_moments_by_hand():
    # a job leaving q0 crosses q1 (deterministic 0.5: its second moment
    # 0.25), q2 (exponential 1.0: 2.0), then thinks (exponential 2.0: 8.0)
    # before q0 again: mean 3.5, second moment E[(T1 + T2 + T3)^2] =
    # sum E[Ti^2] + 2 sum_{i<j} E[Ti] E[Tj] = 10.25 + 2 (0.5 + 1 + 2) = 17.25
    net = qm.Network(
        [qm.Queue("q0", 1.0, distribution=E8),
         qm.Queue("q1", 0.5, distribution=qm.Deterministic()),
         qm.Queue("q2", 1.0)],
        [qm.Closed("c", 3, think_time=2.0, routing={"q0": {"q1": 1.0}, "q1": {"q2": 1.0},
                                                      "q2": {"q0": 1.0}})])
    plan = M._Plan(net)
    c2 = M._passage_scv(net, plan, 0, 0)
    assert c2 == pytest.approx(17.25 / 3.5**2 - 1.0, rel=1e-12)


def test_passage_with_random_routing_counts_the_straight_return():
    # a class given by visits (no think time) goes from q0 back to q0 with
    # probability V0 / (V0 + V1) = 1/3 (the simulator's random routing), a
    # zero time, else to q1 (exponential, mean 1) and from there back to
    # q0 after a geometric number of q1 visits.  By first-step analysis:
    # from q1, M1 = 1 + (2/3) M1 -> 3, M2 = 2 + 2 (2/3) M1 + (2/3) M2 -> 18;
    # from q0's exit: m1 = (2/3) 3 = 2, m2 = (2/3) 18 = 12, SCV 12/4 - 1 = 2.
    net = qm.Network([qm.Queue("q0", 1.0, distribution=E8), qm.Queue("q1", 1.0)],
                     [qm.Closed("c", 2, visits={"q0": 1.0, "q1": 2.0})])
    plan = M._Plan(net)
    assert M._passage_scv(net, plan, 0, 0) == pytest.approx(2.0, rel=1e-12)


def test_one_phase_intervals_are_the_poisson_chain():
    # single class: an exponential interval is Poisson, whatever the speeds
    ch = SingleClassChain(phase_type(Erlang(4)), 0.8, 2, 5)
    lam = np.array([1.3, 1.1, 0.9, 0.7, 0.4, 0.0])
    lp, nu = ch.solve(lam[:-1])
    lp2, nu2 = ch.solve_renewal(lam, _exp_ph())
    np.testing.assert_allclose(np.exp(lp2), np.exp(lp), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(nu2[1:], nu[1:], rtol=1e-9)
    # several classes: the renewal chain with Poisson classes is the base chain
    base = MultiClassChain([phase_type(Erlang(2))] * 2, [0.5, 0.9], 1, (3, 3), 10_000)
    rng = np.random.default_rng(7)
    lam2 = rng.uniform(0.2, 1.5, size=(2, 3, 3))
    lam2[0, 2, :] = 0.0
    lam2[1, :, 2] = 0.0
    ren = RenewalMultiClassChain(base, [None, None])
    np.testing.assert_allclose(np.exp(ren.solve(lam2)), np.exp(base.solve(lam2)),
                               rtol=1e-9, atol=1e-14)


def test_renewal_chain_matches_the_conditional_rates():
    # the speeds are found so that the chain's arrival rate in every level
    # is the one asked for (Marie's flow balance); the intervals' phases
    # then shift the distribution away from the Poisson chain's
    ch = SingleClassChain(phase_type(Erlang(8)), 1.0, 1, 4)
    lam = np.array([0.9, 0.85, 0.8, 0.7, 0.0])
    arr = arrival_fit(1.0 / 8.0, 8)
    lp, nu = ch.solve_renewal(lam, arr)
    P = np.exp(lp)
    # flow balance between levels n and n + 1: P(n) lam(n) = P(n+1) nu(n+1)
    np.testing.assert_allclose(P[:-1] * lam[:-1], P[1:] * nu[1:], rtol=1e-8)
    lp0, _ = ch.solve(lam[:-1])
    assert np.abs(np.exp(lp0) - P).max() > 0.01


def test_arrival_fit_moments():
    for c2, kmax in ((0.125, 8), (0.3, 8), (0.6, 4), (3.0, 4)):
        a = arrival_fit(c2, kmax)
        mean = float(a.alpha @ np.linalg.solve(-a.T, np.ones(a.phases)))
        assert mean == pytest.approx(1.0, rel=1e-12)
        assert a.scv == pytest.approx(c2, rel=1e-9)
    assert arrival_fit(1.02, 8) is None       # within 5 % of Poisson


def test_worst_catalog_case_against_the_ctmc(monkeypatch):
    # network 96 of `python -m validation.envelopes --family marie-fewjobs`
    # (Marie's worst there: X -8.1 % against the simulator, every station
    # alone), its deterministic queues as Erlang-8 so that the CTMC is
    # exact: two classes over two PS queues and two FCFS queues whose mean
    # service differs by class.  The two exponential PS queues join the
    # FCFS queues' subsystem: the whole network in one chain (28,847
    # states, the FCFS order kept), the CTMC's answer.  With the two FCFS
    # queues one subsystem and the PS queues outside (12,769 states here;
    # 193,921 at the catalog's Erlang-32, past the 6,000 states the
    # subsystems had before the multigrid): measured against the CTMC,
    # class c0's X -2.1 %, c1's -3.4 %, R +2.1 % and +3.5 %.
    D = Erlang(8)

    def network():
        return qm.Network(
            [qm.Queue("s0", 1.0, discipline="ps"), qm.Queue("s1", 1.0, discipline="ps"),
             qm.Queue("s2", 1.0, distribution=D), qm.Queue("s3", 1.0, distribution=D)],
            [qm.Closed("c0", 4, routing={"s3": {"s0": 1.0}, "s0": {"s1": 1.0},
                                         "s1": {"s2": 1.0}, "s2": {"s3": 1.0}},
                       service={"s0": 0.799, "s1": 0.763, "s2": 0.913, "s3": 0.997}),
             qm.Closed("c1", 2, routing={"s0": {"s2": 1.0}, "s2": {"s1": 1.0},
                                         "s1": {"s3": 1.0}, "s3": {"s0": 1.0}},
                       service={"s0": 0.714, "s1": 0.304, "s2": 0.609, "s3": 0.375})])

    net = network()
    r, e = _quiet(qm.marie, net), qm.ctmc(net)
    assert r.info["subsystems"] == [["s0", "s1", "s2", "s3"]] and r.exactness == "exact"
    for c in net.class_names:
        assert float(r.X[c]) == pytest.approx(float(e.X[c]), rel=1e-9)
        assert float(r.R[c]) == pytest.approx(float(e.R[c]), rel=1e-9)
    # the PS queues kept outside: the pair
    real = M._place_kind
    monkeypatch.setattr(M, "_place_kind", lambda net, plan, k: None
                        if net.stations[k].discipline == "ps" else real(net, plan, k))
    r = _quiet(qm.marie, network())
    assert r.info["subsystems"] == [["s2", "s3"]]

    def errors(r):
        eX = {c: abs(float(r.X[c]) - float(e.X[c])) / float(e.X[c]) for c in net.class_names}
        eR = {c: abs(float(r.R[c]) - float(e.R[c])) / float(e.R[c]) for c in net.class_names}
        return eX, eR

    eX, eR = errors(r)
    assert eX["c0"] < 0.03 and eX["c1"] < 0.04, eX
    assert max(eR.values()) < 0.04, eR
    # every station alone (the subsystems off): class c0's X -4.9 %, class
    # c1's -5.3 % (Poisson arrivals: the renewal chains would need more
    # than RENEWAL_STATES states and RENEWAL_WORK here; with 6,000 states
    # and the work allowed, c0's error is -3.7 % and c1's stays: what is
    # left there is not the arrivals' shape but the multi-class chain's
    # random order among waiting jobs and the classes' independent
    # arrivals, which the subsystem keeps)
    monkeypatch.setattr(M, "SUBSYSTEMS", False)
    eX, eR = errors(_quiet(qm.marie, network()))
    assert eX["c0"] < 0.05, eX
    assert eX["c1"] < 0.055, eX
    assert max(eR.values()) < 0.06, eR
    assert max(eX.values()) > 0.045          # the subsystem's gain
    # with room for the renewal chains, class c0 gains
    monkeypatch.setattr(M, "RENEWAL_STATES", 6_000)
    monkeypatch.setattr(M, "RENEWAL_WORK", 1e11)
    r2 = _quiet(qm.marie, network())
    assert set(r2.info["arrivals"]) == {"s2", "s3"}
    assert abs(float(r2.X["c0"]) - float(e.X["c0"])) / float(e.X["c0"]) < 0.04


def test_worst_phase_type_catalog_case_a_one_job_class(monkeypatch):
    # network 40 of `python -m validation.envelopes --family marie-ph`,
    # Marie's worst there: an Erlang-6 queue and a hyperexponential one
    # (SCV 3.56) in a cycle, class c0 of 3 jobs and class c1 of one, each
    # with a think time.  Class c1's arrivals at a queue are its returns,
    # one passage through the rest apart: with Poisson arrivals for the
    # one-job class its X was 10.3 % high against the CTMC, with the
    # passage's renewal interval 9.5 % (what is left: the classes'
    # arrivals independent of each other, the random order among waiting
    # jobs).  Both queues are now one subsystem (their joint chain) whose
    # complement, the think times, is product form: exact.  The station-
    # by-station figures are pinned with the subsystems off.
    back = {"s1": {"s0": 1.0}, "s0": {"s1": 1.0}}

    def network():
        return qm.Network(
            [qm.Queue("s0", 1.0, distribution=Erlang(6)),
             qm.Queue("s1", 1.0, distribution=HyperExponential(3.56))],
            [qm.Closed("c0", 3, think_time=0.69, routing=back,
                       service={"s0": 0.643, "s1": 0.921}),
             qm.Closed("c1", 1, think_time=0.51, routing=back,
                       service={"s0": 0.563, "s1": 0.281})])

    net = network()
    e = qm.ctmc(net)
    joint = _quiet(qm.marie, net)
    assert joint.info["subsystems"] == [["s0", "s1"]]
    for c in net.class_names:
        assert float(joint.X[c]) == pytest.approx(float(e.X[c]), rel=1e-6)
        assert float(joint.R[c]) == pytest.approx(float(e.R[c]), rel=1e-6)
    monkeypatch.setattr(M, "SUBSYSTEMS", False)
    net = network()
    r = _quiet(qm.marie, net)
    assert "class 'c1'" in r.info["arrivals"]["s0"]
    eX = {c: abs(float(r.X[c]) - float(e.X[c])) / float(e.X[c]) for c in net.class_names}
    eR = {c: abs(float(r.R[c]) - float(e.R[c])) / float(e.R[c]) for c in net.class_names}
    assert eX["c1"] < 0.096 and eX["c0"] < 0.01, eX
    assert max(eR.values()) < 0.102, eR
    # still short of the 5 % goal
    assert eX["c1"] > 0.05
