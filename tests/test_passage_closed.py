"""The response-time distribution of a closed class as the passage time of
a tagged job (qmodels.analytic.passage_ctmc, method "ctmc-passage")
against a hand derivation, exact MVA and the CTMC's means (Little's law
and the arrival theorem), the simulator's percentiles, and the sizing of
a percentile target against a brute-force scan."""

from __future__ import annotations

import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic.passage_ctmc import closed_response_time_distribution
from qmodels.errors import ProblemTooLargeError, UnsupportedModelError


def _cycle(n, s=(0.5, 0.3), think=0.0):
    return qm.Network([qm.Queue("a", s[0]), qm.Queue("b", s[1])],
                      [qm.Closed("c", n, route=["a", "b"], think_time=think)])


@pytest.mark.parametrize("think", [0.0, 1.0])
def test_one_job_cycle_is_the_hypoexponential_sum(think):
    # one job alone: its response time is S_a + S_b, independent Exp(m1)
    # and Exp(m2); convolving the densities,
    # P(R <= t) = 1 - (m2 e^{-m1 t} - m1 e^{-m2 t}) / (m2 - m1)
    m1, m2 = 1 / 0.5, 1 / 0.3
    d = qm.response_time_distribution(_cycle(1, think=think))
    assert d.method == "ctmc-passage" and d.exactness == "exact"
    for t in (0.05, 0.3, 1.0, 2.5, 6.0):
        want = 1 - (m2 * math.exp(-m1 * t) - m1 * math.exp(-m2 * t)) / (m2 - m1)
        assert d.cdf(t) == pytest.approx(want, abs=1e-11)
    assert d.mean == pytest.approx(1 / m1 + 1 / m2, rel=1e-12)
    for q in (50, 95, 99):
        t = d.percentile(q)
        assert 1 - (m2 * math.exp(-m1 * t) - m1 * math.exp(-m2 * t)) / (m2 - m1) \
            == pytest.approx(q / 100, abs=1e-9)


@pytest.mark.parametrize("n", [2, 3, 6])
@pytest.mark.parametrize("think", [0.0, 0.7])
def test_cycle_mean_is_the_mva_response_time(n, think):
    net = _cycle(n, think=think)
    d = qm.response_time_distribution(net)
    assert d.mean == pytest.approx(float(qm.mva(net).R["c"]), rel=1e-8)
    # more jobs, a stochastically longer cycle: the median grows with n
    assert d.percentile(50) > qm.response_time_distribution(_cycle(n - 1, think=think)) \
        .percentile(50)


def test_multiclass_means_are_mva_per_class():
    # product form: FCFS rates equal across classes, a 2-server queue, a
    # delay, one class by (random) visit ratios with think time, one on a route
    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08, servers=2),
                      qm.Delay("net", 0.1)],
                     [qm.Closed("a", 2, visits={"cpu": 3, "disk": 2, "net": 1}, think_time=1.0),
                      qm.Closed("b", 2, route=["cpu", "disk", "net"])])
    r = qm.mva(net)
    for c in ("a", "b"):
        d = qm.response_time_distribution(net, c)
        assert d.mean == pytest.approx(float(r.R[c]), rel=1e-8)
        assert d.cdf(d.percentile(95)) == pytest.approx(0.95, abs=1e-9)


def test_visit_ratios_without_think_time_match_mva():
    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                     [qm.Closed("a", 4, visits={"cpu": 3, "disk": 2})])
    d = qm.response_time_distribution(net)
    assert d.mean == pytest.approx(float(qm.mva(net).R["a"]), rel=1e-8)


def test_a_cycle_that_may_visit_nothing_has_an_atom_at_zero():
    # one job, visit ratio 0.5 with a think time: a cycle visits a with
    # probability 0.5 (else it thinks again), so
    # P(R <= t) = 0.5 + 0.5 (1 - e^{-t/S}) and the p75 is S ln 2
    net = qm.Network([qm.Queue("a", 0.4)], [qm.Closed("c", 1, visits={"a": 0.5},
                                                      think_time=1.0)])
    d = qm.response_time_distribution(net)
    assert d.cdf(0.0) == pytest.approx(0.5, abs=1e-12)
    for t in (0.1, 0.3, 1.5):
        assert d.cdf(t) == pytest.approx(0.5 + 0.5 * (1 - math.exp(-t / 0.4)), abs=1e-11)
    assert d.percentile(40) == 0.0
    assert d.percentile(75) == pytest.approx(0.4 * math.log(2), rel=1e-9)
    assert d.mean == pytest.approx(float(qm.mva(net).R["c"]), rel=1e-12)


def test_class_dependent_fcfs_matches_the_ctmc_mean():
    # outside product form (FCFS service differs by class): the arrival
    # theorem does not hold, the Palm start distribution still does; the
    # mean must be the CTMC solver's R (Little's law on its chain)
    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                     [qm.Closed("a", 2, route=["cpu", "disk"], service={"cpu": 0.02}),
                      qm.Closed("b", 2, route=["cpu", "disk"], think_time=0.5)])
    r = qm.solve(net, method="ctmc")
    for c in ("a", "b"):
        assert qm.response_time_distribution(net, c).mean == pytest.approx(float(r.R[c]),
                                                                            rel=1e-8)


def test_one_ps_station_shares_among_all_jobs():
    # N jobs, no think time, one PS station: all N always there, so the
    # tagged job is served at mu / N throughout: its time is Exp(mu / N),
    # P(R <= t) = 1 - exp(-t mu / N)
    n, s = 3, 0.2
    net = qm.Network([qm.Queue("p", s, discipline="ps")], [qm.Closed("c", n, visits={"p": 1})])
    d = qm.response_time_distribution(net)
    for t in (0.1, 0.5, 2.0):
        assert d.cdf(t) == pytest.approx(1 - math.exp(-t / (n * s)), abs=1e-11)
    assert d.percentile(95) == pytest.approx(-n * s * math.log(0.05), rel=1e-9)


def test_ps_multiclass_means_are_mva_per_class():
    # PS with class-dependent service and a 2-server PS queue: product form
    net = qm.Network([qm.Queue("cpu", 0.05, discipline="ps"),
                      qm.Queue("web", 0.06, discipline="ps", servers=2), qm.Queue("disk", 0.08)],
                     [qm.Closed("a", 3, visits={"cpu": 3, "disk": 2, "web": 1}, think_time=1.0),
                      qm.Closed("b", 2, route=["cpu", "disk", "web"],
                                service={"cpu": 0.02, "web": 0.1})])
    r = qm.mva(net)
    for c in ("a", "b"):
        assert qm.response_time_distribution(net, c).mean == pytest.approx(float(r.R[c]),
                                                                            rel=1e-8)


def _three_stations():
    return qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08, servers=2),
                       qm.Delay("net", 0.1)],
                      [qm.Closed("a", 5, route=["cpu", "disk", "net"], think_time=0.5)])


def _class_dependent_fcfs():
    # outside product form: FCFS service differs by class at cpu
    return qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                      [qm.Closed("a", 2, route=["cpu", "disk"], service={"cpu": 0.02}),
                       qm.Closed("b", 2, route=["cpu", "disk"], think_time=0.5)])


@pytest.mark.slow
@pytest.mark.parametrize("make, seed", [(_three_stations, 1), (_class_dependent_fcfs, 3)])
def test_percentiles_within_the_simulators_interval(make, seed):
    from qmodels.sim.flatten import HIST_BINS, HIST_DECADES

    net = make()
    s = qm.simulate(net, seed=seed, horizon=2000, replications=5, progress=False)
    res = math.expm1(math.log(10.0) * HIST_DECADES / HIST_BINS)  # histogram resolution
    for c in net.class_names:
        d = qm.response_time_distribution(net, c)
        for q in (50, 95, 99):
            est = s.percentiles[c][q]
            exact = d.percentile(q)
            assert float(est.low) - res * exact <= exact <= float(est.high) + res * exact


@pytest.mark.parametrize("station, why", [
    (qm.Queue("a", 0.5, discipline="lcfs-pr"), "lcfs-pr"),
    (qm.Queue("a", 0.5, discipline="ps", distribution=qm.Erlang(3)), "Erlang"),
    (qm.Queue("a", 0.5, distribution=qm.Erlang(2)), "Erlang"),
    (qm.LoadDependent("a", 0.5, rate_multipliers=(1, 2)), "load-dependent"),
])
def test_refusals_name_the_station(station, why):
    net = qm.Network([station, qm.Queue("b", 0.3)],
                     [qm.Closed("c", 2, route=["a", "b"])])
    with pytest.raises(UnsupportedModelError, match=f"'a'.*{why}|{why}.*'a'"):
        qm.response_time_distribution(net)


def test_refuses_priorities_and_open_classes():
    net = qm.Network([qm.Queue("a", 0.5, discipline="prio"), qm.Queue("b", 0.3)],
                     [qm.Closed("hi", 1, route=["a", "b"]),
                      qm.Closed("lo", 1, route=["a", "b"], priority=1)])
    with pytest.raises(UnsupportedModelError, match="'a'.*prio"):
        qm.response_time_distribution(net, "hi")
    mixed = qm.Network([qm.Queue("a", 0.5), qm.Queue("b", 0.3)],
                       [qm.Closed("c", 1, route=["a", "b"]), qm.Open("o", 0.5, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="'o' is open"):
        qm.response_time_distribution(mixed, "c")


def test_refuses_past_the_state_budget():
    with pytest.raises(ProblemTooLargeError, match="max_states = 20"):
        closed_response_time_distribution(_cycle(30), max_states=20)


def test_size_speed_for_a_p95_matches_a_brute_force_scan():
    from qmodels.whatif.size import _speed_up

    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08), qm.Delay("net", 0.1)],
                     [qm.Closed("a", 4, route=["cpu", "disk", "net"], think_time=0.5)])
    s = qm.size(net, "R_p95<=0.45", vary="speed", station="disk")
    assert any("ctmc-passage" in n for n in s.notes)

    def p95(v):
        return qm.response_time_distribution(_speed_up(net, "disk", v)).percentile(95)

    grid = np.linspace(1.0, 4.0, 61)       # steps of 0.05
    first = next(v for v in grid if p95(v) <= 0.45)
    assert first - 0.05 < s.answer <= first + 1e-9
    assert p95(s.answer) <= 0.45 < p95(s.beyond)


def test_size_population_for_a_p95_matches_a_brute_force_scan():
    from qmodels.whatif.size import _set

    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08), qm.Delay("net", 0.1)],
                     [qm.Closed("a", 1, route=["cpu", "disk", "net"], think_time=0.5)])
    s = qm.size(net, "R_p95<=0.7")
    p95 = [qm.response_time_distribution(_set(net, "population", "a", n)).percentile(95)
           for n in range(1, 12)]
    first_bad = next(n for n, v in enumerate(p95, start=1) if v > 0.7)
    assert s.answer == first_bad - 1 and s.exactness == "exact"
    assert any("ctmc-passage" in n for n in s.notes)


def test_size_servers_for_a_p95_tries_every_count():
    # the p95 of this cycle is not monotone in the servers at b (its mean
    # is): the fewest servers meeting the target is found by trying each
    def net_with(c):
        return qm.Network([qm.Queue("a", 0.5), qm.Queue("b", 0.3, servers=c)],
                          [qm.Closed("c", 4, route=["a", "b"])])

    p95 = {c: qm.response_time_distribution(net_with(c)).percentile(95) for c in (1, 2, 3, 4)}
    means = [qm.response_time_distribution(net_with(c)).mean for c in (1, 2, 3, 4)]
    assert all(a > b for a, b in zip(means, means[1:]))
    target = 0.5 * (p95[2] + p95[3])
    s = qm.size(net_with(1), f"R_p95<={target!r}", vary="servers", station="b")
    want = next(c for c in (1, 2, 3, 4) if p95[c] <= target)
    assert s.answer == want
