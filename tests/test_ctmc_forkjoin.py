"""qm.ctmc on closed fork-join networks: the exact chain of queue lengths
(:mod:`qmodels.analytic._ctmc_forkjoin`).

References: a hand derivation (a lone job's two exponential tasks), exact
MVA of a tandem (a one-branch fork-join is a tandem: product form), the
simulator (an independent implementation: it follows each task), and the
breadth-first build against the closed-form state count.
"""

from __future__ import annotations

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import requires
from qmodels.analytic._ctmc_forkjoin import _Chain, count_states
from qmodels.errors import ProblemTooLargeError, UnsupportedModelError


def two_tasks(a, b, N=1, Z=0.0):
    return qm.Network([qm.ForkJoin("fj", [["qa"], ["qb"]]), qm.Queue("qa", 1.0 / a),
                       qm.Queue("qb", 1.0 / b)],
                      [qm.Closed("c", N, think_time=Z, visits={"fj": 1})])


def three_branches(N=5, Z=1.0):
    """Three branches of different lengths and speeds, a cpu outside."""
    return qm.Network(
        [qm.Queue("cpu", 0.1), qm.ForkJoin("fj", [["a1", "a2"], ["b"], ["c"]]),
         qm.Queue("a1", 0.2), qm.Queue("a2", 0.15), qm.Queue("b", 0.4), qm.Queue("c", 0.25)],
        [qm.Closed("job", N, think_time=Z, route=["cpu", "fj"])])


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (1.0, 3.0), (0.5, 7.0)])
def test_lone_job_two_tasks_hand_formula(a, b):
    # hand derivation: E[max(A, B)] = E[A] + E[B] - E[min(A, B)] for
    # independent exponentials of rates a and b, min ~ Exp(a + b)
    want = 1.0 / a + 1.0 / b - 1.0 / (a + b)
    r = qm.ctmc(two_tasks(a, b))
    assert r.exactness == "exact" and r.method == "ctmc"
    assert float(r.R["c"]) == pytest.approx(want, rel=1e-10)
    assert r.info["fork_join_time"]["fj"] == pytest.approx(want, rel=1e-10)
    assert float(r.X["c"]) == pytest.approx(1.0 / want, rel=1e-10)


@pytest.mark.parametrize("N", [1, 3, 6])
def test_one_branch_fork_join_is_the_tandem_by_exact_mva(N):
    fj = qm.Network([qm.ForkJoin("fj", [["q0", "q1"]]), qm.Queue("q0", 1.0),
                     qm.Queue("q1", 0.5), qm.Queue("cpu", 0.3), qm.Delay("d", 1.0)],
                    [qm.Closed("c", N, think_time=2.0, visits={"fj": 1, "cpu": 2, "d": 1})])
    tandem = qm.Network([qm.Queue("q0", 1.0), qm.Queue("q1", 0.5), qm.Queue("cpu", 0.3),
                         qm.Delay("d", 1.0)],
                        [qm.Closed("c", N, think_time=2.0,
                                   visits={"q0": 1, "q1": 1, "cpu": 2, "d": 1})])
    r, m = qm.ctmc(fj), qm.mva(tandem)
    assert float(r.X["c"]) == pytest.approx(float(m.X["c"]), rel=1e-10)
    assert float(r.R["c"]) == pytest.approx(float(m.R["c"]), rel=1e-10)
    for k in ("q0", "q1", "cpu", "d"):
        assert float(r.Q[k]) == pytest.approx(float(m.Q[k]), rel=1e-9, abs=1e-12)
        assert float(r.U[k]) == pytest.approx(float(m.U[k]), rel=1e-9)
    # the jobs forked and not joined: the tasks on the one branch
    assert float(r.Q["fj"]) == pytest.approx(float(m.Q["q0"] + m.Q["q1"]), rel=1e-9)
    # fork-join time = time through the tandem
    assert r.info["fork_join_time"]["fj"] == pytest.approx(
        float(m.R["q0"] + m.R["q1"]), rel=1e-9)


def test_three_branches_agree_with_the_simulator():
    net = three_branches(N=5)
    r = qm.ctmc(net)
    s = qm.simulate(net, seed=7, horizon=20000.0, replications=4, progress=False)
    for a, est in ((float(r.X["job"]), s.X["job"]), (float(r.R["job"]), s.R["job"]),
                   (float(r.R["fj"]), s.R["fj"]), (float(r.Q["fj"]), s.Q["fj"]),
                   (float(r.U["b"]), s.U["b"])):
        assert abs(a - est.mean) <= est.half_width, (a, est.mean, est.half_width)


@pytest.mark.parametrize("net", [two_tasks(1.0, 2.0, N=4, Z=0.5), three_branches(N=4),
                                 three_branches(N=3, Z=0.0)])
def test_state_count_before_the_build_is_the_built_count(net):
    ch = _Chain(net)
    order, *_ = ch.build(int(net.classes[0].population), 10 ** 6)
    assert count_states(net) == len(order)


def test_budget_refused_before_the_build_by_count():
    net = three_branches(N=8)
    n = count_states(net)
    with pytest.raises(ProblemTooLargeError, match=f"{n:,} states or more, more than max_states = 100"):
        qm.ctmc(net, max_states=100)
    assert qm.ctmc(net, max_states=n).info["states"] == n


def test_auto_prefers_the_chain_and_falls_back_to_forkjoin_past_the_budget():
    small = three_branches(N=4)
    r = qm.solve(small)
    assert r.method == "ctmc" and r.exactness == "exact"
    big = qm.Network(
        [qm.ForkJoin("fj", [[f"q{i}"] for i in range(8)])]
        + [qm.Queue(f"q{i}", 1.0 + 0.1 * i) for i in range(8)],
        [qm.Closed("c", 12, think_time=1.0, visits={"fj": 1})])
    assert count_states(big) > requires.AUTO_CTMC_STATES
    assert "budget" in requires.for_ctmc(big)
    r = qm.solve(big)
    assert r.method == "forkjoin"
    assert any("ctmc" in n and "budget" in n for n in r.notes)


def _branch(station, **kw):
    st = [qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0), station]
    return qm.Network(st, [qm.Closed("c", 2, visits={"fj": 1}, **kw)])


@pytest.mark.parametrize("net, words", [
    (_branch(qm.Delay("b", 1.0)), r"station 'b' on branch 1 of fork-join 'fj' is a 'delay'"),
    (_branch(qm.Queue("b", 1.0, discipline="ps")), r"station 'b' on branch 1.*'ps' queue"),
    (_branch(qm.Queue("b", 1.0, servers=2)), r"station 'b'.*with 2 server"),
    (_branch(qm.Queue("b", 1.0, distribution=qm.Erlang(2))),
     r"station 'b'.*exponential service"),
    (qm.Network([qm.ForkJoin("fj", [["a"], ["b"]], tasks=[2, 1]), qm.Queue("a", 1.0),
                 qm.Queue("b", 1.0)], [qm.Closed("c", 1, visits={"fj": 1})]),
     r"fork-join 'fj': tasks \[2, 1\]"),
    (qm.Network([qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                [qm.Closed("c", 1, visits={"fj": 1}), qm.Closed("d", 1, visits={"fj": 1})]),
     r"one class; the network has 2 \('c', 'd'\)"),
    (qm.Network([qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                [qm.Open("o", 0.1, visits={"fj": 1}, interarrival=qm.Erlang(2))]),
     r"class 'o': inter-arrival times Erlang; the fork-join chain needs Poisson"),
])
def test_refusals_name_what_the_chain_cannot_do(net, words):
    with pytest.raises(UnsupportedModelError, match=words):
        qm.ctmc(net)
    why = requires.for_ctmc(net)
    assert why is not None
    import re
    assert re.search(words, why)
    # the automatic choice passes the chain over and says why
    try:
        r = qm.solve(net)
    except UnsupportedModelError:
        return
    assert r.method != "ctmc"


def test_multi_server_outside_and_delay_outside_keep_the_laws():
    # outside the fork-joins a c-server queue completes at min(n, c)/S; the
    # contract checks Little, forced flow, U = X S / c and conservation
    net = qm.Network(
        [qm.Queue("cpu", 0.3, servers=2), qm.Delay("d", 0.5),
         qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 0.2), qm.Queue("b", 0.35)],
        [qm.Closed("c", 5, think_time=0.5, route=["cpu", "fj", "d"])])
    r = qm.ctmc(net)
    X = float(r.X["c"])
    assert float(r.U["cpu"]) == pytest.approx(X * 0.3 / 2, rel=1e-9)
    assert float(np.sum(r.station_queue_length[0][[0, 1, 2]])) + X * 0.5 == \
        pytest.approx(5.0, rel=1e-9)


def test_population_zero_reports_a_lone_jobs_times():
    # hand derivation as above: a lone job's fork-join time 1/a + 1/b - 1/(a+b)
    r = qm.ctmc(two_tasks(1.0, 2.0, N=0))
    assert float(r.X["c"]) == 0.0 and float(r.Q["fj"]) == 0.0
    assert float(r.R["c"]) == pytest.approx(1.0 + 0.5 - 1.0 / 3.0, rel=1e-10)


def test_a_huge_population_is_refused_by_its_lower_bound_at_once():
    net = two_tasks(1.0, 2.0, N=10 ** 6, Z=1.0)
    # thinking and the fork-join: at least N + 1 states, past any budget here
    with pytest.raises(ProblemTooLargeError, match="1,000,001 states or more"):
        qm.ctmc(net, max_states=10 ** 5)
    assert "budget" in requires.for_ctmc(net)
