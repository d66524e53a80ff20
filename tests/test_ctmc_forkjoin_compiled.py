"""The compiled build of the fork-join chain (qmodels.analytic._ctmc_forkjoin
._fj_bfs) against the Python builder it follows (_Chain.build, kept as the
reference and as the build of small chains).

References: that independent builder (the kernel must number the same
states in the same order and give the same triplets, so the same
generator), the closed-form state count (count_states), the answers of
the Python path (same pi, figures to 1e-12), and exact MVA on a one-branch
fork-join, which is a tandem of queues (product form).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic import _ctmc_forkjoin as F
from qmodels.errors import ProblemTooLargeError

pytest.importorskip("numba")

FIELDS = ("class_throughput", "class_response_time", "station_throughput",
          "station_queue_length", "station_response_time", "station_utilization")


def _fork(branches, N, Z=1.0, outside=(), route=None, visits=None, name="fj"):
    """A fork-join of branches of queues (lists of service times) and
    outside stations; a route through them or visit ratios."""
    names = [[f"{name}{b}_{q}" for q in range(len(br))] for b, br in enumerate(branches)]
    st_ = [qm.ForkJoin(name, names)]
    for br, nm in zip(branches, names, strict=True):
        st_ += [qm.Queue(x, s) for x, s in zip(nm, br, strict=True)]
    st_ += list(outside)
    if route is None and visits is None:
        visits = {name: 1}
    cls = (qm.Closed("c", N, think_time=Z, route=route) if route is not None
           else qm.Closed("c", N, think_time=Z, visits=visits))
    return qm.Network(st_, [cls])


def _networks():
    """Named networks: 2 to 6 branches, tandem branches, outside delays and
    multi-server queues, thinking or not, routes and random routing (whose
    rows route a node back to itself: self-loops in the triplets), two
    fork-joins in one network."""
    cpu2 = qm.Queue("cpu", 0.05, servers=2)
    yield "two", _fork([[0.2], [0.3]], 6)
    yield "three-tandem", _fork([[0.1, 0.15], [0.4], [0.25]], 5, outside=[qm.Queue("cpu", 0.1)],
                                route=["cpu", "fj"])
    yield "four-Z0", _fork([[0.1], [0.2], [0.3], [0.15]], 5, Z=0.0,
                           outside=[qm.Queue("cpu", 0.05, servers=3)], route=["cpu", "fj"])
    yield "five", _fork([[0.1], [0.12], [0.14], [0.16, 0.05], [0.2]], 3,
                        outside=[qm.Delay("d", 0.5)], route=["fj", "d"])
    yield "six", _fork([[0.1 + 0.02 * b] for b in range(6)], 2)
    yield "visits-self-loops", _fork([[0.1, 0.2], [0.3]], 4, Z=0.5,
                                     outside=[cpu2, qm.Delay("d", 0.2)],
                                     visits={"fj": 1, "cpu": 2, "d": 0.5})
    yield "visits-Z0", _fork([[0.3], [0.2, 0.1, 0.05]], 5, Z=0.0,
                             outside=[qm.Queue("cpu", 0.05, servers=2)],
                             visits={"fj": 1, "cpu": 1.5})
    yield "one-branch-tandem", _fork([[0.2, 0.1, 0.3]], 7, outside=[qm.Delay("d", 1.0)],
                                     route=["d", "fj"])
    two = qm.Network([qm.Queue("cpu", 0.04, servers=2), qm.ForkJoin("f", [["a"], ["b"]]),
                      qm.Queue("a", 0.1), qm.Queue("b", 0.2),
                      qm.ForkJoin("g", [["x1", "x2"], ["y"], ["z"]]), qm.Queue("x1", 0.05),
                      qm.Queue("x2", 0.07), qm.Queue("y", 0.15), qm.Queue("z", 0.1)],
                     [qm.Closed("c", 4, think_time=0.3, reference="cpu",
                                routing={"cpu": {"f": 0.6, "g": 0.4}, "f": {"cpu": 1.0},
                                         "g": {"cpu": 0.7, "f": 0.3}})])
    yield "two-fork-joins", two


NETS = list(_networks())


def _both(net):
    ch = F._Chain(net)
    N = int(net.classes[0].population)
    count = F.count_states(net)
    ref = F.build(ch, N, 10**7, count, compiled=False)
    new = F.build(ch, N, 10**7, count, compiled=True)
    return ch, N, count, ref, new


def _assert_same_chain(ref, new):
    (s1, r1, c1, v1, b1), (s2, r2, c2, v2, b2) = ref, new
    assert (b1, b2) == ("python", "compiled")
    # the same states in the same breadth-first order
    assert s1.shape == s2.shape and np.array_equal(s1, s2)
    # the same triplets in the same order: the same generator, bit for bit
    assert np.array_equal(r1, r2) and np.array_equal(c1, c2)
    assert np.array_equal(v1, v2)


@pytest.mark.parametrize("name, net", NETS, ids=[n for n, _ in NETS])
def test_compiled_build_is_the_python_build(name, net):
    ch, N, count, ref, new = _both(net)
    _assert_same_chain(ref, new)
    assert len(new[0]) == count  # and the closed-form count
    # the kernel's plain-Python twin (what runs where numba is missing) too
    states, n, rows, cols, vals, nnz, status = F._fj_bfs.py_func(
        *F.kernel_args(ch, N, 10**7, count))
    assert status == 0
    _assert_same_chain(ref, (states[:n], rows[:nnz], cols[:nnz], vals[:nnz], "compiled"))


def test_the_python_builders_own_lists_are_what_build_returns():
    # build(compiled=False) is _Chain.build, only put in arrays
    net = NETS[1][1]
    ch = F._Chain(net)
    order, rows, cols, vals = ch.build(5, 10**6)
    s, r, c, v, _ = F.build(ch, 5, 10**6, len(order), compiled=False)
    assert [tuple(x) for x in s.tolist()] == order
    assert r.tolist() == rows and c.tolist() == cols and v.tolist() == vals


def test_growing_past_the_expected_size_changes_nothing():
    # the arrays start at `expect` states and grow by doubling: a wrong
    # guess costs time, never a state or a rate
    net = NETS[2][1]
    ch, N, count, ref, _ = _both(net)
    states, n, rows, cols, vals, nnz, status = F._fj_bfs.compiled()(
        *F.kernel_args(ch, N, 10**7, 1))
    assert status == 0
    _assert_same_chain(ref, (states[:n], rows[:nnz], cols[:nnz], vals[:nnz], "compiled"))


def test_max_states_passed_in_the_build_is_refused():
    net = NETS[1][1]
    ch = F._Chain(net)
    count = F.count_states(net)
    with pytest.raises(ProblemTooLargeError, match="more than max_states = 50 states"):
        F.build(ch, 5, 50, count, compiled=True)


@pytest.mark.parametrize("name, net", NETS, ids=[n for n, _ in NETS])
def test_answers_are_those_of_the_python_path(name, net):
    a = F.solve(net, 10**6, compiled=False)
    b = F.solve(net, 10**6, compiled=True)
    assert a.info["build"] == "python-forkjoin" and b.info["build"] == "compiled-forkjoin"
    for f in FIELDS:
        np.testing.assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-12, atol=1e-15)
    assert b.info["fork_join_time"] == pytest.approx(a.info["fork_join_time"], rel=1e-12)
    for k, m in a.info["marginals"].items():
        np.testing.assert_allclose(b.info["marginals"][k], m, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("N", [4, 25])
def test_one_branch_fork_join_built_compiled_is_the_tandem_by_exact_mva(N):
    # a one-branch fork-join is a tandem of FCFS queues: product form, exact MVA
    fj = qm.Network([qm.ForkJoin("fj", [["q0", "q1"]]), qm.Queue("q0", 1.0),
                     qm.Queue("q1", 0.5), qm.Queue("cpu", 0.3, servers=2), qm.Delay("d", 1.0)],
                    [qm.Closed("c", N, think_time=2.0, visits={"fj": 1, "cpu": 2, "d": 1})])
    tandem = qm.Network([qm.Queue("q0", 1.0), qm.Queue("q1", 0.5),
                         qm.Queue("cpu", 0.3, servers=2), qm.Delay("d", 1.0)],
                        [qm.Closed("c", N, think_time=2.0,
                                   visits={"q0": 1, "q1": 1, "cpu": 2, "d": 1})])
    r, m = F.solve(fj, 10**6, compiled=True), qm.mva(tandem)
    assert r.info["build"] == "compiled-forkjoin"
    assert float(r.X["c"]) == pytest.approx(float(m.X["c"]), rel=1e-9)
    for k in ("q0", "q1", "cpu", "d"):
        assert float(r.Q[k]) == pytest.approx(float(m.Q[k]), rel=1e-8, abs=1e-12)
    assert float(r.Q["fj"]) == pytest.approx(float(m.Q["q0"] + m.Q["q1"]), rel=1e-8)


def test_qm_ctmc_picks_the_compiled_build_by_size():
    small = _fork([[0.2], [0.3]], 3)
    big = _fork([[0.1], [0.2], [0.3]], 12, outside=[qm.Queue("cpu", 0.05, servers=2)],
                route=["cpu", "fj"])
    assert F.count_states(big) * F._Chain(big).L >= F._fj_bfs.threshold
    assert qm.ctmc(small).info["build"] == "python-forkjoin"
    r = qm.ctmc(big)
    assert r.info["build"] == "compiled-forkjoin" and "compiled build" in r.notes[0]
    ref = F.solve(big, 10**6, compiled=False)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(r, f), getattr(ref, f), rtol=1e-12, atol=1e-15)


@st.composite
def _random_fork(draw):
    nb = draw(st.integers(1, 6))
    branches = [[draw(st.sampled_from([0.05, 0.1, 0.2, 0.4])) for _ in
                 range(draw(st.integers(1, 3)))] for _ in range(nb)]
    Z = draw(st.sampled_from([0.0, 0.5]))
    outside = []
    if draw(st.booleans()):
        outside.append(qm.Queue("cpu", 0.05, servers=draw(st.integers(1, 3))))
    if draw(st.booleans()):
        outside.append(qm.Delay("d", 0.3))
    names = ["fj"] + [s.name for s in outside]
    if draw(st.booleans()):
        visits = {x: draw(st.sampled_from([0.5, 1.0, 2.0])) for x in names}
        visits["fj"] = 1.0
        return _fork(branches, draw(st.integers(1, 4)), Z=Z, outside=outside, visits=visits)
    return _fork(branches, draw(st.integers(1, 4)), Z=Z, outside=outside,
                 route=draw(st.permutations(names)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random_fork())
def test_random_fork_joins_build_the_same_chain(net):
    if sum(len(b) for b in net.station("fj").branches) > 10 and F.count_states(net) > 20_000:
        return  # keep the Python reference quick
    _, _, count, ref, new = _both(net)
    _assert_same_chain(ref, new)
    assert len(new[0]) == count
