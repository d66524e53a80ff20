"""qm.ctmc on open fork-joins: the chain of queue lengths
(qmodels.analytic._ctmc_forkjoin) with the open jobs present (a fork-join's
jobs forked and not joined counted) truncated at a cut that doubles until
the probability at it is at most 1e-9.

References, each independent of the chain:

* the exact mean response time of the 2-way fork-join of M/M/1 queues with
  equal rates (Flatto & Hahn, "Two parallel queues created by arrivals
  with two demands I", SIAM J. Appl. Math. 44(5), 1984), as Nelson &
  Tantawi state it for k = 2 ("Approximate analysis of fork/join
  synchronization in parallel queues", IEEE Trans. Computers 37(6), 1988,
  the exact two-server result their scaling approximation starts from):
  R_2 = (12 - rho) / 8 * 1 / (mu - lambda) (Thomasian, "Analysis of
  fork/join and related queueing systems", ACM Computing Surveys 47(2),
  2014, Table I and eq. (8): R_2 = R + S_2 with the synchronisation delay
  S_2 = (1 - rho / 4) R / 2 and R = 1 / (mu - lambda), the M/M/1 time);
* a one-branch fork-join is a tandem of FCFS queues: an open Jackson
  network (product form), exact MVA;
* the simulator (unequal branches, within its 95 % half-widths);
* the Python builder (_Chain.build), which the compiled kernel must follow
  state for state and rate for rate, and the closed-form state count.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import _ctmc_forkjoin as F
from qmodels.errors import NumericalWarning, UnstableError, UnsupportedModelError

FIELDS = ("class_throughput", "class_response_time", "station_throughput",
          "station_queue_length", "station_response_time", "station_utilization")


def _two_way(lam, mu):
    """The 2-way fork-join of two M/M/1 queues of rate mu, Poisson arrivals."""
    return qm.Network([qm.ForkJoin("f", [["a"], ["b"]]), qm.Queue("a", 1.0 / mu),
                       qm.Queue("b", 1.0 / mu)], [qm.Open("o", lam, route=["f"])])


def _open_fork(branches, lam, outside=(), route=None, visits=None, name="fj"):
    names = [[f"{name}{b}_{q}" for q in range(len(br))] for b, br in enumerate(branches)]
    st_ = [qm.ForkJoin(name, names)]
    for br, nm in zip(branches, names, strict=True):
        st_ += [qm.Queue(x, s) for x, s in zip(nm, br, strict=True)]
    st_ += list(outside)
    if visits is not None:
        return qm.Network(st_, [qm.Open("o", lam, visits=visits)])
    return qm.Network(st_, [qm.Open("o", lam, route=route or [name])])


@pytest.mark.parametrize("lam, mu", [(0.3, 1.0), (0.5, 1.0), (0.7, 1.0), (1.0, 4.0)])
def test_two_way_fork_join_is_flatto_hahn(lam, mu):
    rho = lam / mu
    exact = (12.0 - rho) / 8.0 / (mu - lam)      # Flatto & Hahn 1984 (module docstring)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        r = qm.ctmc(_two_way(lam, mu))
    assert r.method == "ctmc" and r.exactness == "exact"
    assert float(r.R["o"]) == pytest.approx(exact, rel=1e-8)
    assert r.info["fork_join_time"]["f"] == pytest.approx(exact, rel=1e-8)
    # each branch alone is an M/M/1 queue: R = 1 / (mu - lambda), U = rho
    for q in ("a", "b"):
        assert float(r.R[q]) == pytest.approx(1.0 / (mu - lam), rel=1e-8)
        assert float(r.U[q]) == pytest.approx(rho, rel=1e-8)
    # every arrival accepted but the truncation's: X = lambda (1 - mass)
    assert float(r.X["o"]) == pytest.approx(lam, rel=1e-8)
    assert 0.0 <= r.info["truncation_mass"] <= 1e-9
    assert r.info["open_limit"] >= 40
    assert any("truncated at" in a for a in r.assumptions)
    assert any(f"truncated at {r.info['open_limit']}" in n for n in r.notes)


def test_one_branch_open_fork_join_is_the_tandem_by_exact_mva():
    # one branch of two queues, with a 2-server queue and a delay outside:
    # a tandem of queues, an open product-form network
    fj = qm.Network([qm.ForkJoin("fj", [["q0", "q1"]]), qm.Queue("q0", 0.2),
                     qm.Queue("q1", 0.1), qm.Queue("cpu", 0.3, servers=2), qm.Delay("d", 1.0)],
                    [qm.Open("o", 2.0, route=["cpu", "fj", "d"])])
    tandem = qm.Network([qm.Queue("q0", 0.2), qm.Queue("q1", 0.1),
                         qm.Queue("cpu", 0.3, servers=2), qm.Delay("d", 1.0)],
                        [qm.Open("o", 2.0, route=["cpu", "q0", "q1", "d"])])
    r, m = qm.ctmc(fj, open_limit=30), qm.mva(tandem)
    assert r.info["truncation_mass"] <= 1e-9
    assert float(r.X["o"]) == pytest.approx(2.0, rel=1e-8)
    assert float(r.R["o"]) == pytest.approx(float(m.R["o"]), rel=1e-7)
    for k in ("q0", "q1", "cpu", "d"):
        assert float(r.Q[k]) == pytest.approx(float(m.Q[k]), rel=1e-7)
    assert float(r.Q["fj"]) == pytest.approx(float(m.Q["q0"] + m.Q["q1"]), rel=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("branches, lam", [([[0.4], [0.25]], 1.5),
                                           ([[0.3], [0.2, 0.1]], 2.0)])
def test_unequal_branches_against_the_simulator(branches, lam):
    net = _open_fork(branches, lam)
    r = qm.ctmc(net)
    assert r.exactness == "exact" and r.info["truncation_mass"] <= 1e-9
    s = qm.simulate(net, seed=11, horizon=20000.0, replications=5, progress=False)
    for a, est in ((float(r.X["o"]), s.X["o"]), (float(r.R["o"]), s.R["o"]),
                   (float(r.R["fj"]), s.R["fj"]), (float(r.Q["fj"]), s.Q["fj"]),
                   (float(r.R["fj0_0"]), s.R["fj0_0"]), (float(r.U["fj1_0"]), s.U["fj1_0"])):
        assert abs(a - est.mean) <= est.half_width, (a, est.mean, est.half_width)


def _open_nets():
    cpu2 = qm.Queue("cpu", 0.05, servers=2)
    yield "two", _open_fork([[0.2], [0.3]], 2.0), 6
    yield "three-tandem", _open_fork([[0.1, 0.15], [0.4], [0.25]], 1.5,
                                     outside=[qm.Queue("cpu", 0.1)], route=["cpu", "fj"]), 4
    yield "visits-self-loops", _open_fork([[0.1, 0.2], [0.3]], 1.0,
                                          outside=[cpu2, qm.Delay("d", 0.2)],
                                          visits={"fj": 1, "cpu": 2, "d": 0.5}), 4
    yield "one-branch", _open_fork([[0.2, 0.1, 0.3]], 2.0, outside=[qm.Delay("d", 1.0)],
                                   route=["d", "fj"]), 6
    yield "routing-table", qm.Network(
        [qm.Queue("cpu", 0.04, servers=2), qm.ForkJoin("f", [["a"], ["b"]]),
         qm.Queue("a", 0.1), qm.Queue("b", 0.2)],
        [qm.Open("o", 2.0, routing={"source": {"cpu": 1.0},
                                    "cpu": {"f": 0.6, "sink": 0.4},
                                    "f": {"cpu": 0.5, "sink": 0.5}})]), 5


OPEN = list(_open_nets())


@pytest.mark.parametrize("name, net, cut", OPEN, ids=[n for n, _, _ in OPEN])
def test_compiled_build_is_the_python_build_on_open_chains(name, net, cut):
    pytest.importorskip("numba")
    ch = F._Chain(net, cut)
    count = F.count_states(net, None, cut)
    (s1, r1, c1, v1, b1) = F.build(ch, 0, 10**7, count, compiled=False)
    (s2, r2, c2, v2, b2) = F.build(ch, 0, 10**7, count, compiled=True)
    assert (b1, b2) == ("python", "compiled")
    assert np.array_equal(s1, s2)
    assert np.array_equal(r1, r2) and np.array_equal(c1, c2) and np.array_equal(v1, v2)
    assert len(s1) == count          # the closed-form count: every split of n <= cut
    # no state holds more than cut jobs, and some hold exactly cut
    tot = [ch.total(tuple(x)) for x in s1.tolist()]
    assert max(tot) == cut and min(tot) == 0
    # the kernel's plain-Python twin too
    states, n, rows, cols, vals, nnz, status = F._fj_bfs.py_func(
        *F.kernel_args(ch, 0, 10**7, count))
    assert status == 0 and np.array_equal(states[:n], s1)
    assert np.array_equal(rows[:nnz], r1) and np.array_equal(vals[:nnz], v1)


@pytest.mark.parametrize("name, net, cut", OPEN, ids=[n for n, _, _ in OPEN])
def test_open_answers_are_those_of_the_python_path(name, net, cut):
    pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        a = F.solve(net, 10**6, compiled=False, open_limit=cut)
        b = F.solve(net, 10**6, compiled=True, open_limit=cut)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-10, atol=1e-14)
    assert b.info["truncation_mass"] == pytest.approx(a.info["truncation_mass"], rel=1e-9)


def test_a_small_cut_is_labelled_and_warned():
    # Flatto-Hahn network at rho = 0.7 cut at 10 jobs: mass at the bound
    # well above 1e-6, so approximate, a warning and the numbers to say so
    with pytest.warns(NumericalWarning, match="truncated at 10"):
        r = qm.ctmc(_two_way(0.7, 1.0), open_limit=10)
    assert r.info["open_limit"] == 10 and r.info["truncation_mass"] > 1e-6
    assert r.exactness == "approximate"
    assert any("raise open_limit" in w for w in r.warnings)
    # the truncated chain turns arrivals away: X = lambda (1 - mass) (PASTA)
    assert float(r.X["o"]) == pytest.approx(0.7 * (1 - r.info["truncation_mass"]), rel=1e-9)


def test_the_cut_stops_growing_at_the_state_budget_with_a_note():
    # rho = 0.9: the mass at the cut falls slowly; the default cut doubles
    # from 40 while the next chain has at most 20,000 states, then says so
    with pytest.warns(NumericalWarning):
        r = qm.ctmc(_two_way(0.9, 1.0))
    assert r.info["open_limit"] == 80 and r.info["states"] == 81 ** 2
    assert r.info["truncation_mass"] > 1e-9 and r.exactness == "approximate"
    assert any("stopped growing at 80" in n for n in r.notes)


def test_auto_picks_the_chain_for_a_small_open_fork_join():
    r = qm.solve(_two_way(0.5, 1.0))
    assert r.method == "ctmc" and r.exactness == "exact"
    assert float(r.R["o"]) == pytest.approx((12 - 0.5) / 8 / 0.5, rel=1e-8)
    # three branches of two queues: the chain at the first cut passes the
    # automatic budget, and the fork-join approximation answers
    big = _open_fork([[0.1, 0.1], [0.1, 0.1], [0.1, 0.1]], 2.0)
    assert F.count_states(big, None, 40) > 50_000
    assert qm.solve(big).method == "forkjoin"


@pytest.mark.parametrize("net, match", [
    (qm.Network([qm.ForkJoin("f", [["a"], ["b"]]), qm.Queue("a", 0.1), qm.Queue("b", 0.1)],
                [qm.Open("o", 1.0, route=["f"], interarrival=qm.Erlang(2))]),
     "class 'o': inter-arrival times Erlang; the fork-join chain needs Poisson"),
    (qm.Network([qm.ForkJoin("f", [["a"], ["b"]]), qm.Queue("a", 0.1),
                 qm.Queue("b", 0.1, discipline="ps")], [qm.Open("o", 1.0, route=["f"])]),
     "station 'b' on branch 1 of fork-join 'f' is a 'ps' queue"),
    (qm.Network([qm.ForkJoin("f", [["a"], ["b"]]), qm.Queue("a", 0.1), qm.Queue("b", 0.1)],
                [qm.Open("o", 1.0, route=["f"]), qm.Open("p", 1.0, route=["f"])]),
     "the fork-join chain models one class; the network has 2"),
    (qm.Network([qm.ForkJoin("f", [["a"], ["b"]], tasks=[2, 1]), qm.Queue("a", 0.1),
                 qm.Queue("b", 0.1)], [qm.Open("o", 1.0, route=["f"])]),
     "one task per branch"),
])
def test_what_the_chain_does_not_model_is_refused_by_name(net, match):
    with pytest.raises(UnsupportedModelError, match=match):
        qm.ctmc(net)


def test_an_unstable_branch_is_refused_by_name():
    net = _open_fork([[0.4], [0.6]], 2.0)
    with pytest.raises(UnstableError, match="station 'fj1_0' is unstable.*1.2"):
        qm.ctmc(net)
