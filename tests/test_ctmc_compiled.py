"""The compiled CTMC build (qmodels.analytic._ctmc_fast) against the Python
builder it replaces for networks without pools or reachable capacities
(qmodels.analytic._ctmc_chain._Chain, kept: it still builds the others).

The reference is that independent builder: the compiled kernel must number
the same states in the same order and produce the same off-diagonal rates,
and the figures taken from them must equal those of the Python path (same
pi, expectations to 1e-12).  The iterative solve of a large chain is checked
against exact MVA (product form, an independent method) and against the LU.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic import _ctmc_fast as F
from qmodels.analytic import ctmc as C
from qmodels.analytic._ctmc_chain import _Chain
from qmodels.analytic._ctmc_spec import _Spec
from qmodels.errors import ProblemTooLargeError

# the random chains truncate open classes at a few jobs on purpose
pytestmark = pytest.mark.filterwarnings("ignore::qmodels.NumericalWarning")

FIELDS = ("class_throughput", "class_response_time", "station_throughput",
          "station_queue_length", "station_response_time", "station_utilization")


def _both(net, open_limit=None, compiled=True):
    """(reference states, rows, cols, vals, its Result) and the same from
    the compiled build, on the same stationary vector."""
    spec = _Spec(net, open_limit)
    chain = _Chain(spec)
    states, rows, cols, vals = chain.build(10**6)
    spec2 = _Spec(net, open_limit)
    chain2 = _Chain(spec2)
    lay = F.layout(spec2, chain2)
    assert lay is not None
    S, n, r2, c2, v2, nnz, status = F.build(lay, 10**6, compiled=compiled)
    assert status == 0
    pi, resid = C._stationary(len(states), rows, cols, vals, str)
    ref = C._figures(net, spec, chain, states, pi, resid)
    new = C._result(net, spec2, n, resid,
                    C._compiled_sums(spec2, lay, S[:n], n, pi, compiled))
    return (states, rows, cols, vals, ref), (lay, S[:n], r2[:nnz], c2[:nnz], v2[:nnz], new)


def _assert_same(net, open_limit=None, compiled=True):
    (states, rows, cols, vals, ref), (lay, S, r2, c2, v2, new) = _both(net, open_limit,
                                                                        compiled)
    # identical state order: the compiled row of every reference state, in order
    assert S.shape[0] == len(states)
    assert np.array_equal(S, np.array([lay.encode(x) for x in states]).reshape(S.shape))
    assert [lay.decode(x)[0] for x in S] == [x[0] for x in states]
    # identical generator (same triplets, same order, same sums)
    assert np.array_equal(r2, rows) and np.array_equal(c2, cols)
    np.testing.assert_allclose(v2, vals, rtol=1e-12, atol=0)
    for f in FIELDS:
        np.testing.assert_allclose(np.asarray(getattr(new, f)), np.asarray(getattr(ref, f)),
                                   rtol=1e-12, atol=1e-15, err_msg=f)
    assert new.info["states"] == ref.info["states"]
    assert new.info["truncation_mass"] == pytest.approx(ref.info["truncation_mass"],
                                                        rel=1e-12, abs=1e-300)
    for k, p in ref.info["marginals"].items():
        np.testing.assert_allclose(new.info["marginals"][k], p, rtol=1e-12, atol=1e-15)
    assert new.notes == ref.notes


STATION = st.one_of(
    st.tuples(st.just("delay"), st.just(1)),
    st.tuples(st.just("fcfs"), st.integers(1, 2)),
    st.tuples(st.just("ps"), st.integers(1, 2)),
    st.tuples(st.just("ld"), st.integers(1, 3)),
)
CLASS = st.tuples(
    st.sampled_from(["closed", "closed", "open"]),
    st.integers(0, 3),                          # population (closed)
    st.sampled_from([0.0, 0.7]),                # think time (closed)
    st.floats(0.3, 3.0),                        # arrival rate (open)
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=3, max_size=3),  # visits
    st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3),                  # service
)


def _network(stations, classes):
    sts = []
    for i, (kind, c) in enumerate(stations):
        name = f"s{i}"
        if kind == "delay":
            sts.append(qm.Delay(name, 0.1))
        elif kind == "ld":
            sts.append(qm.LoadDependent(name, 0.1, rate_multipliers=tuple(
                1 + 0.5 * j for j in range(c))))
        else:
            sts.append(qm.Queue(name, 0.1, servers=c, discipline=kind))
    cls = []
    for j, (kind, N, Z, lam, visits, service) in enumerate(classes):
        v = {s.name: visits[i] for i, s in enumerate(sts) if visits[i] > 0}
        if not v:
            v = {sts[0].name: 1.0}
        srv = {s.name: service[i] for i, s in enumerate(sts)}
        if kind == "closed":
            cls.append(qm.Closed(f"c{j}", N, think_time=Z, visits=v, service=srv))
        else:
            cls.append(qm.Open(f"o{j}", lam, visits=v, service=srv))
    return qm.Network(sts, cls)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(stations=st.lists(STATION, min_size=1, max_size=3),
       classes=st.lists(CLASS, min_size=1, max_size=3),
       open_limit=st.integers(1, 3))
def test_compiled_build_equals_the_python_builder_on_random_chains(stations, classes,
                                                                   open_limit):
    net = _network(stations, classes)
    _assert_same(net, open_limit=open_limit, compiled=True)


@settings(deadline=None, max_examples=15)
@given(stations=st.lists(STATION, min_size=1, max_size=2),
       classes=st.lists(CLASS, min_size=1, max_size=2))
def test_the_plain_python_run_of_the_kernels_is_the_same(stations, classes):
    # below lazyjit's threshold the kernels run as Python (no numba)
    _assert_same(_network(stations, classes), open_limit=2, compiled=False)


SHAPES = st.sampled_from([None, qm.Erlang(2), qm.Erlang(3), qm.HyperExponential(4.0)])
PH_STATION = st.tuples(st.sampled_from(["delay", "fcfs", "ps", "prio", "prio-pr", "lcfs-pr",
                                        "ld"]),
                       st.integers(1, 2), SHAPES)
PH_CLASS = st.tuples(CLASS, st.integers(0, 2), SHAPES)   # (class, priority, inter-arrival)


def _ph_network(stations, classes):
    sts = []
    for i, (kind, c, shape) in enumerate(stations):
        name = f"s{i}"
        if kind == "delay":
            sts.append(qm.Delay(name, 0.1, distribution=shape))
        elif kind == "ld":
            sts.append(qm.LoadDependent(name, 0.1, rate_multipliers=(1, 1.5), distribution=shape))
        else:
            sts.append(qm.Queue(name, 0.1, servers=1 if kind == "lcfs-pr" else c,
                                discipline=kind, distribution=shape))
    cls = []
    for j, ((kind, N, Z, lam, visits, service), prio, arr) in enumerate(classes):
        v = {s.name: visits[i] for i, s in enumerate(sts) if visits[i] > 0} or {sts[0].name: 1.0}
        srv = {s.name: service[i] for i, s in enumerate(sts)}
        if kind == "closed":
            cls.append(qm.Closed(f"c{j}", N, think_time=Z, visits=v, service=srv,
                                 priority=prio))
        else:
            cls.append(qm.Open(f"o{j}", lam, visits=v, service=srv, priority=prio,
                               interarrival=arr))
    return qm.Network(sts, cls)


@settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(stations=st.lists(PH_STATION, min_size=1, max_size=3),
       classes=st.lists(PH_CLASS, min_size=1, max_size=2),
       open_limit=st.integers(1, 2))
def test_phases_priorities_and_phase_type_arrivals_build_the_same_chain(stations, classes,
                                                                        open_limit):
    # service phases (Erlang, H2 as a Coxian) at every kind of station, the
    # queue orders of prio, prio-pr and lcfs-pr, phase-type arrival streams:
    # the kernel numbers the same states in the same order as _Chain
    net = _ph_network(stations, classes)
    try:
        _assert_same(net, open_limit=open_limit, compiled=True)
    except qm.UnsupportedModelError as e:
        # a class starved for ever by a higher level (a reducible chain): a
        # property of the model, refused alike by both builders
        assert "closed classes of states" in str(e)


def test_order_keeping_fcfs_with_explicit_routing_and_open_classes():
    # two classes with different service at one FCFS server: the queue order
    # is part of the state; explicit routing with a think stage; an open class
    net = qm.Network(
        [qm.Queue("cpu", 0.02), qm.Queue("d1", 0.03, servers=2), qm.Delay("t", 0.2)],
        [qm.Closed("a", 3, think_time=0.5, service={"cpu": 0.02, "d1": 0.05, "t": 0.2},
                   routing={"cpu": {"d1": 0.5, "cpu": 0.2, "t": 0.3},
                            "d1": {"cpu": 1.0}, "t": {"cpu": 1.0}}),
         qm.Closed("b", 2, service={"cpu": 0.07, "d1": 0.01, "t": 0.2},
                   visits={"cpu": 2, "d1": 1}),
         qm.Open("o", 2.0, routing={"source": {"cpu": 1.0}, "cpu": {"d1": 0.4, "sink": 0.6},
                                    "d1": {"sink": 1.0}})])
    lay = F.layout(_Spec(net, 3), _Chain(_Spec(net, 3)))
    assert lay is not None and lay.ordered[0] and lay.ordered[1]
    _assert_same(net, open_limit=3)


def test_pools_and_reachable_capacities_stay_with_the_python_builder():
    pooled = qm.Network(
        [qm.Queue("a", 0.1), qm.Queue("b", 0.2)],
        [qm.Closed("c", 3, routing={"a": {"b": 1.0}, "b": {"a": 1.0}})],
        pools=[qm.TokenPool("p", 1, "a", "b")])
    spec = _Spec(pooled, None)
    assert F.layout(spec, _Chain(spec)) is None
    capped = qm.Network(
        [qm.Queue("a", 0.1), qm.Queue("b", 0.2, capacity=2)],
        [qm.Closed("c", 3, routing={"a": {"b": 1.0}, "b": {"a": 1.0}})])
    spec = _Spec(capped, None)
    assert F.layout(spec, _Chain(spec)) is None
    # and the solver still answers them (the Python builder)
    assert qm.ctmc(capped).info["states"] > 0


def _three_class_ps(N):
    """Three closed classes of N jobs over three PS queues, class-dependent
    service: (C(N + 2, 2))^3 states (91,125 at N = 8); product form (BCMP)."""
    S = {"a": {"q1": 0.01, "q2": 0.02, "q3": 0.03}, "b": {"q1": 0.03, "q2": 0.01, "q3": 0.02},
         "c": {"q1": 0.02, "q2": 0.03, "q3": 0.01}}
    return qm.Network([qm.Queue(f"q{i}", 0.01, discipline="ps") for i in (1, 2, 3)],
                      [qm.Closed(c, N, visits={"q1": 1, "q2": 1, "q3": 1}, service=S[c])
                       for c in "abc"])


def test_a_large_chain_is_solved_iteratively_and_equals_exact_mva():
    net = _three_class_ps(3)   # 10^3 = 1,000 states: below the iterative threshold
    small = qm.ctmc(net)
    assert small.info["linear_solver"] == "lu"
    net = _three_class_ps(5)   # 21^3 = 9,261 states: BiCGSTAB
    r, m = qm.ctmc(net), qm.mva(net)
    assert r.info["states"] == 21**3
    assert r.info["linear_solver"] == "bicgstab"
    assert any("BiCGSTAB" in n for n in r.notes)
    for c in "abc":
        assert r.X[c] == pytest.approx(m.X[c], rel=1e-10)
    for s in net.station_names:
        assert r.Q[s] == pytest.approx(m.Q[s], rel=1e-10)


def test_bicgstab_agrees_with_the_lu_on_a_non_product_form_chain(monkeypatch):
    # FCFS with class-dependent service keeps the queue order: not product
    # form, so the LU is the reference for the iterative solve
    net = qm.Network(
        [qm.Queue("q1", 0.05), qm.Queue("q2", 0.05, discipline="ps")],
        [qm.Closed("a", 4, service={"q1": 0.05, "q2": 0.02}, visits={"q1": 1, "q2": 1}),
         qm.Closed("b", 4, service={"q1": 0.01, "q2": 0.03}, visits={"q1": 1, "q2": 1})])
    monkeypatch.setattr(C, "ITERATIVE_FROM", 10)
    it = qm.ctmc(net)
    monkeypatch.setattr(C, "ITERATIVE_FROM", 10**9)
    lu = qm.ctmc(net)
    assert it.info["linear_solver"] == "bicgstab" and lu.info["linear_solver"] == "lu"
    assert it.info["states"] == lu.info["states"] > 100
    for f in FIELDS:
        np.testing.assert_allclose(np.asarray(getattr(it, f)), np.asarray(getattr(lu, f)),
                                   rtol=1e-10, atol=1e-13, err_msg=f)


def test_too_large_for_memory_is_refused_with_the_estimate_before_building(monkeypatch):
    net = _three_class_ps(8)

    def no_build(*a, **k):
        raise AssertionError("built before the memory check")

    monkeypatch.setattr(F, "build", no_build)
    monkeypatch.setattr(F, "memory_budget", lambda: 10 * 2**20)  # 10 MiB
    with pytest.raises(ProblemTooLargeError, match=r"91,125 states and [\d,]+ nonzero rates, "
                                                   r"needing about [\d.]+ GiB"):
        qm.ctmc(net)


def test_the_estimate_bounds_the_count_of_a_counted_chain():
    # no order-keeping station: the estimate is an upper bound, exact here
    # (every placement of every class is reachable)
    net = _three_class_ps(4)
    spec = _Spec(net, None)
    lay = F.layout(spec, _Chain(spec))
    states, nnz, nbytes, upper = F.estimate(spec, lay, 10**6)
    assert upper and states == 15**3 == qm.ctmc(net).info["states"]
    assert nnz >= states and nbytes > 0


def test_more_states_than_max_states_is_refused_by_the_compiled_build():
    # an open M/H2/1 truncated at 300 jobs: the count before building (up
    # to 300 jobs in one place, 301 placements) passes 500, but the job in
    # service has two phases, 601 states: the build itself stops
    net = qm.Network([qm.Queue("q", 0.5, distribution=qm.HyperExponential(4))],
                     [qm.Open("o", 1.0, visits={"q": 1})])
    spec = _Spec(net, 300)
    assert F.layout(spec, _Chain(spec)) is not None
    with pytest.raises(ProblemTooLargeError, match=r"more than max_states = 500 states "
                                                   r"\(reached 501"):
        qm.ctmc(net, max_states=500, open_limit=300)
    # and the M/M/1 at 600 jobs is refused by the count, before building
    mm1 = qm.Network([qm.Queue("q", 0.5)], [qm.Open("o", 1.0, visits={"q": 1})])
    with pytest.raises(ProblemTooLargeError, match=r"at least 601 states"):
        qm.ctmc(mm1, max_states=500, open_limit=600)


def test_the_ctmc_benchmark_imports_and_runs(capsys):
    # no timing here: the figures live in benchmarks/README.md
    from benchmarks import bench_ctmc

    assert bench_ctmc.main(["-N", "2", "--decomposition", "3"]) == 0
    out = capsys.readouterr().out
    assert "states 216," in out and "maxrel vs exact MVA" in out and "B=16" in out
