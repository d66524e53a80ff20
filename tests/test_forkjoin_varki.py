"""Closed fork-joins by Varki's mean value technique (method='forkjoin-varki')
beside the independence recursion (method='forkjoin').

References: hand derivations written here (a lone job's two exponential
tasks; the minimum of j exponentials), exact MVA for a one-branch
fork-join (a tandem: product form), and the exact chain of the queue
lengths of :mod:`validation.forkjoin_exact` (itself checked here against
the same hand derivation and exact MVA).  The tolerance against the chain
is the largest error the ``forkjoin-closed-exact`` catalog measured
(``qmodels/analytic/envelopes.json``, written by ``python -m
validation.envelopes --write --family forkjoin-closed-exact``).
"""

from __future__ import annotations

import warnings

import pytest

import qmodels as qm
from qmodels.analytic import envelopes as env_mod
from qmodels.analytic.forkjoin import expected_max
from qmodels.analytic.forkjoin_varki import VARIANTS, forkjoin_varki, stage_means
from qmodels.errors import InvalidValueError, UnsupportedModelError
from validation import forkjoin_exact
from validation.forkjoin_accuracy import closed_net


def two_tasks(a, b, N=1, Z=0.0):
    return qm.Network([qm.ForkJoin("fj", [["qa"], ["qb"]]), qm.Queue("qa", 1.0 / a),
                       qm.Queue("qb", 1.0 / b)],
                      [qm.Closed("c", N, think_time=Z, visits={"fj": 1})])


def one_branch_pair(N=5):
    """A one-branch fork-join (a tandem q0 -> q1) among a cpu and a delay,
    and the same network without the fork-join (product form)."""
    fj = qm.Network([qm.ForkJoin("fj", [["q0", "q1"]]), qm.Queue("q0", 1.0), qm.Queue("q1", 0.5),
                     qm.Queue("cpu", 0.3), qm.Delay("d", 1.0)],
                    [qm.Closed("c", N, think_time=2.0, visits={"fj": 1, "cpu": 2, "d": 1})])
    flat = qm.Network([qm.Queue("q0", 1.0), qm.Queue("q1", 0.5), qm.Queue("cpu", 0.3),
                       qm.Delay("d", 1.0)],
                      [qm.Closed("c", N, think_time=2.0,
                                 visits={"q0": 1, "q1": 1, "cpu": 2, "d": 1})])
    return fj, flat


def _envelope(method: str) -> dict:
    found = [e for e in env_mod.envelopes()
             if e["method"] == method and e.get("catalog") == "forkjoin-closed-exact"]
    assert len(found) == 1, "run python -m validation.envelopes --write --family " \
                            "forkjoin-closed-exact"
    return found[0]


# ---------------------------------------------------------------------------
# hand derivations
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("a,b", [(1.0, 2.0), (3.0, 0.5), (1.0, 1.0)])
def test_two_tasks_of_a_lone_job(variant, a, b):
    # E[max(A, B)] = E[A] + E[B] - E[min(A, B)] = 1/a + 1/b - 1/(a + b)
    want = 1 / a + 1 / b - 1 / (a + b)
    r = forkjoin_varki(two_tasks(a, b), variant=variant)
    assert float(r.R["c"]) == pytest.approx(want, rel=1e-9)
    assert float(r.R["fj"]) == pytest.approx(want, rel=1e-9)
    assert float(r.X["c"]) == pytest.approx(1 / want, rel=1e-9)
    assert r.exactness == "exact"
    assert forkjoin_exact.solve(two_tasks(a, b))["R"] == pytest.approx(want, rel=1e-9)


def test_stage_means_of_homogeneous_branches_are_the_minimum_of_j_exponentials():
    # with j of K exponential tasks of mean S unfinished, the next ends after
    # the minimum of j exponentials: mean S / j
    assert stage_means([[2.0]] * 5) == pytest.approx([2.0 / j for j in range(1, 6)])


def test_stage_means_sum_to_the_expected_maximum():
    # sum_j P(exactly j unfinished at t) = P(max > t), integrated: E[max]
    for br in ([[0.5], [1.0], [1.5]], [[1.0, 0.5], [0.7, 0.35], [2.0]], [[1.0], [0.4, 0.4]]):
        assert sum(stage_means(br)) == pytest.approx(expected_max(br), rel=1e-8)
    # two tasks of rates a, b: the last unfinished one alone lasts
    # E[max] - E[min] = 1/a + 1/b - 2/(a + b)
    a, b = 1.0, 3.0
    m1, m2 = stage_means([[1 / a], [1 / b]])
    assert m2 == pytest.approx(1 / (a + b))
    assert m1 == pytest.approx(1 / a + 1 / b - 2 / (a + b))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("N", [1, 3, 8])
def test_one_branch_fork_join_is_exact_mva(variant, N):
    fj, flat = one_branch_pair(N)
    r = forkjoin_varki(fj, variant=variant)
    m = qm.mva(flat)
    assert float(r.X["c"]) == pytest.approx(float(m.X["c"]), rel=1e-12)
    assert float(r.R["c"]) == pytest.approx(float(m.R["c"]), rel=1e-12)
    assert float(r.R["fj"]) == pytest.approx(float(m.R["q0"]) + float(m.R["q1"]), rel=1e-12)
    assert r.exactness == "exact"


def test_exact_chain_of_a_one_branch_fork_join_is_exact_mva():
    fj, flat = one_branch_pair(5)
    ref = forkjoin_exact.solve(fj)
    m = qm.mva(flat)
    assert ref["X"] == pytest.approx(float(m.X["c"]), rel=1e-10)
    assert ref["R"] == pytest.approx(float(m.R["c"]), rel=1e-10)


# ---------------------------------------------------------------------------
# against the exact chain, within the measured envelope
# ---------------------------------------------------------------------------

SMALL = [(2, 5, 0.0, False, False, True), (2, 5, 2.0, True, True, False),
         (3, 3, 2.0, True, False, True), (4, 2, 0.0, False, True, False),
         (4, 5, 2.0, True, False, False), (8, 2, 0.0, False, False, True)]


@pytest.mark.parametrize("args", SMALL)
@pytest.mark.parametrize("method", ["forkjoin-varki", "forkjoin"])
def test_against_the_exact_chain_within_the_envelope(method, args):
    net = closed_net(*args)
    ref = forkjoin_exact.solve(net)
    env = _envelope(method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = qm.solve(net, method=method)
    eX = abs(float(r.X["c"]) - ref["X"]) / ref["X"]
    eR = abs(float(r.R["c"]) - ref["R"]) / ref["R"]
    assert eX <= env["error"]["X"]["max"] + 1e-9
    assert eR <= env["error"]["R"]["max"] + 1e-9
    assert r.exactness == "approximate"
    assert r.error is not None      # a measured envelope matches the network


def test_auto_keeps_the_method_of_the_smaller_measured_error():
    # both methods measured on the same exact catalog; auto chooses between
    # them by it (the independence recursion: see the envelopes)
    ours, varki = _envelope("forkjoin"), _envelope("forkjoin-varki")
    better = "forkjoin" if (ours["error"]["X"]["max"] <= varki["error"]["X"]["max"]
                            and ours["error"]["R"]["max"] <= varki["error"]["R"]["max"]) \
        else "forkjoin-varki"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the exact chain answers where it fits (2,275 states at N = 5) ...
        assert qm.solve(closed_net(4, 5, 0.0, True, False, True)).method == "ctmc"
        # ... the approximations past its budget (6.2 million states at N = 30)
        r = qm.solve(closed_net(4, 30, 0.0, True, False, True))
    assert r.method == better


def test_stage_equation_is_below_the_mean_of_the_bounds():
    # Varki's mean value equation is the optimistic end (a lower bound on the
    # fork-join time), the mean of the bounds sits above it
    net = closed_net(4, 5, 0.0, False, False, False)
    mve = float(forkjoin_varki(net, variant="mve").R["fj"])
    mean = float(forkjoin_varki(net, variant="mean").R["fj"])
    ref = forkjoin_exact.solve(net)["R_station"]["fj"]
    assert mve < mean and mve < ref


# ---------------------------------------------------------------------------
# refusals
# ---------------------------------------------------------------------------

def test_refusals_are_typed_and_named():
    open_net = qm.Network([qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0),
                           qm.Queue("b", 1.0)], [qm.Open("o", 0.5, visits={"fj": 1})])
    with pytest.raises(UnsupportedModelError, match=r"class 'o' is open.*method='forkjoin'"):
        forkjoin_varki(open_net)
    delay = qm.Network([qm.ForkJoin("fj", [["a"], ["lnk"]]), qm.Queue("a", 1.0),
                        qm.Delay("lnk", 1.0)], [qm.Closed("c", 2, visits={"fj": 1})])
    with pytest.raises(UnsupportedModelError, match=r"branch station 'lnk' is a delay"):
        forkjoin_varki(delay)
    with pytest.raises(InvalidValueError, match=r"variant must be one of mean, mve.*'best'"):
        forkjoin_varki(two_tasks(1.0, 2.0), variant="best")
    tasks = qm.Network([qm.ForkJoin("fj", [["a"], ["b"]], tasks=[2, 1]), qm.Queue("a", 1.0),
                        qm.Queue("b", 1.0)], [qm.Closed("c", 2, visits={"fj": 1})])
    with pytest.raises(UnsupportedModelError, match=r"fork-join 'fj': tasks \[2, 1\]"):
        forkjoin_varki(tasks)
    two = qm.Network([qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                     [qm.Closed("c", 2, visits={"fj": 1}), qm.Closed("d", 1, visits={"fj": 1})])
    with pytest.raises(UnsupportedModelError, match=r"forkjoin-varki solves one class"):
        forkjoin_varki(two)
    erl = qm.Network([qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1.0, distribution=qm.Erlang(2)),
                      qm.Queue("b", 1.0)], [qm.Closed("c", 2, visits={"fj": 1})])
    with pytest.raises(UnsupportedModelError, match=r"station 'a'.*exponential"):
        forkjoin_varki(erl)


def test_zero_jobs_and_curve():
    net = closed_net(3, 4, 2.0, True, False, True)
    r0 = forkjoin_varki(net.with_population(0))
    assert float(r0.X["c"]) == 0.0
    r = forkjoin_varki(net, curve=True)
    assert list(r.curve.population) == [0, 1, 2, 3, 4]
    assert float(r.curve.throughput[-1]) == pytest.approx(float(r.X["c"]))
    # the first step is the lone job's exact answer
    one = forkjoin_exact.solve(net.with_population(1))
    assert float(r.curve.throughput[1]) == pytest.approx(one["X"], rel=1e-9)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_branch_of_zero_time_changes_nothing(variant):
    # a task of zero service time is done at its fork: the fork-join is the
    # same as without that branch
    def net(extra):
        br = [["a"], ["b"]] + ([["z"]] if extra else [])
        st = [qm.ForkJoin("fj", br), qm.Queue("a", 1.0), qm.Queue("b", 0.5),
              qm.Queue("cpu", 0.3)] + ([qm.Queue("z", 0.0)] if extra else [])
        return qm.Network(st, [qm.Closed("c", 3, think_time=1.0, visits={"fj": 1, "cpu": 1})])
    with_z = forkjoin_varki(net(True), variant=variant)
    without = forkjoin_varki(net(False), variant=variant)
    assert float(with_z.X["c"]) == pytest.approx(float(without.X["c"]), rel=1e-12)
    assert float(with_z.R["fj"]) == pytest.approx(float(without.R["fj"]), rel=1e-12)
