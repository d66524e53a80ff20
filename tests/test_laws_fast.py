"""The compiled law check (qmodels.analytic._laws_fast) against the
contract's numpy check: it may only pass what the numpy check passes, and
it must pass the exact answers it exists to speed up and fail the broken
ones (else it would be a kernel that never runs)."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic import _laws_fast, contract

FIGURES = ("station_throughput", "station_queue_length", "station_response_time",
           "station_utilization", "class_throughput", "class_response_time")


@pytest.fixture(autouse=True)
def kernel_on(monkeypatch):
    """The compiled check runs whether or not numba is already imported."""
    monkeypatch.setattr(_laws_fast.laws_hold, "threshold", 0)


def _compiled(res):
    a = [np.asarray(getattr(res, f), float) for f in FIGURES]
    return contract._laws_pass_compiled(res, contract.RTOL, 1e-12, *a)


def _numpy(res):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(contract, "_laws_pass_compiled", lambda *a: False)
        return contract.law_violations(res)


@st.composite
def networks(draw):
    K = draw(st.integers(1, 4))
    stations = []
    for k in range(K):
        # (processor sharing: product form whatever the classes' demands,
        # so the answers come from the fast exact solvers)
        kind = draw(st.sampled_from(["delay", "q1", "q3"]))
        stations.append(qm.Delay(f"s{k}", 1.0) if kind == "delay" else
                        qm.Queue(f"s{k}", 1.0, servers=3 if kind == "q3" else 1,
                                 discipline="ps"))
    demand = st.sampled_from([0.0, 1e-6, 0.01, 0.2, 1.0, 50.0])
    classes = []
    for c in range(draw(st.integers(1, 2))):
        dem = {f"s{k}": draw(demand) for k in range(K)}
        dem["s0"] = max(dem["s0"], 0.01)
        classes.append(qm.Closed(f"c{c}", draw(st.integers(1, 30)),
                                 think_time=draw(st.sampled_from([0.0, 1.0])), demands=dem))
    if draw(st.booleans()):
        dem = {f"s{k}": draw(st.sampled_from([0.0, 0.01, 0.1])) for k in range(K)}
        classes.append(qm.Open("o", draw(st.sampled_from([0.0, 0.5, 2.0])), demands=dem))
    return qm.Network(stations, classes)


def _perturbed(res, field, index, factor):
    a = np.array(getattr(res, field), dtype=float)
    a.flat[index % a.size] *= factor
    return dataclasses.replace(res, **{field: a})


@settings(deadline=None, max_examples=120)
@given(networks(), st.sampled_from(["auto", "schweitzer", "linearizer"]),
       st.sampled_from(FIGURES), st.integers(0, 100),
       st.sampled_from([1e-12, 4e-7, 5e-7, 6e-7, 1e-6, 2e-6, 1e-3, 0.5]),
       st.sampled_from([1.0, -1.0]))
def test_the_compiled_check_passes_only_what_the_numpy_check_passes(
        net, method, field, index, eps, sign):
    try:
        res = qm.solve(net, method=method)
    except qm.errors.QModelsError:
        return
    assert _compiled(res)          # an exact answer: the kernel passes it
    bad = _perturbed(res, field, index, 1.0 + sign * eps)
    if _compiled(bad):
        assert _numpy(bad) == []
    # whichever check ran, law_violations says what the numpy check says
    assert contract.law_violations(bad) == _numpy(bad)


@pytest.mark.parametrize("field", FIGURES)
def test_each_figure_broken_by_a_thousandth_fails_the_compiled_check(field):
    net = qm.Network([qm.Delay("z", 1.0), qm.Queue("cpu", 0.05), qm.Queue("disk", 0.03, servers=2)],
                     [qm.Closed("a", 12, think_time=0.5, visits={"z": 1, "cpu": 1, "disk": 2}),
                      qm.Closed("b", 5, visits={"z": 1, "cpu": 3, "disk": 1})])
    res = qm.mva(net)
    assert _compiled(res)
    for index in range(np.asarray(getattr(res, field)).size):
        if np.asarray(getattr(res, field)).flat[index] == 0:
            continue
        bad = _perturbed(res, field, index, 1.001)
        assert not _compiled(bad), (field, index)
        assert _numpy(bad), (field, index)


def test_a_utilisation_over_one_and_a_nan_fail_it():
    net = qm.Network([qm.Queue("cpu", 0.05)], [qm.Closed("a", 3, visits={"cpu": 1})])
    res = qm.mva(net)
    over = dataclasses.replace(res, station_utilization=np.array([[1.01]]),
                               station_throughput=np.array([[1.01 / 0.05]]))
    assert not _compiled(over)
    nan = _perturbed(res, "station_response_time", 0, np.nan)
    assert not _compiled(nan)
    assert contract.law_violations(nan)


def test_networks_outside_the_plain_laws_are_left_to_the_numpy_check():
    ld = qm.Network([qm.LoadDependent("l", 0.1, rate_multipliers=(1.0, 1.5))],
                    [qm.Closed("a", 3, visits={"l": 1})])
    assert contract._plan(ld).fast() is None
    assert not _compiled(qm.mva(ld))
    plain = qm.Network([qm.Queue("q", 0.1)], [qm.Closed("a", 3, visits={"q": 1})])
    assert contract._plan(plain).fast() is not None


def _consistent(net, R):
    """A result for the one closed class of ``net`` (visits V, service S,
    single servers, no think time) built from per-visit times ``R`` (1, K)
    so that every law holds: X = N / sum V R, X_k = V_k X, Q = X R, U = X S."""
    V = np.asarray(net.visits, float)
    S = np.asarray(net.service_times, float)
    N = float(net.classes[0].population)
    Rc = float((V * R).sum())
    Xc = N / Rc
    X = V * Xc
    res = qm.mva(net)
    return dataclasses.replace(res, class_throughput=np.array([Xc]),
                               class_response_time=np.array([Rc]), station_throughput=X,
                               station_queue_length=X * R, station_response_time=R,
                               station_utilization=X * S)


def test_each_law_broken_alone_fails_the_compiled_check():
    """Answers that break one law and keep the others (so that a kernel
    missing that law's comparison would pass them: each case fails if its
    law is taken out of the kernel, checked by hand)."""
    net = qm.Network([qm.Queue("a", 0.02), qm.Queue("b", 0.03), qm.Queue("c", 0.01)],
                     [qm.Closed("t", 3, visits={"a": 1, "b": 2, "c": 1})])
    R = np.array([[0.05, 0.06, 0.02]])
    good = _consistent(net, R)
    assert _compiled(good) and _numpy(good) == []

    def with_(base, **arrays):
        return dataclasses.replace(base, **arrays)

    Q = np.array(good.station_queue_length)
    X = np.array(good.station_throughput)
    U = np.array(good.station_utilization)
    S = np.asarray(net.service_times, float)
    cases = {}
    # Little's law alone: jobs moved between stations, the totals kept
    Qm = Q.copy()
    Qm[0, 0] += 0.01
    Qm[0, 2] -= 0.01
    cases["Little"] = with_(good, station_queue_length=Qm)
    # the forced flow law alone: X_a up, X_c down with Q and U following
    Xm, Qm, Um = X.copy(), Q.copy(), U.copy()
    Xm[0, 0] *= 1.01
    Qm[0, 0] = Xm[0, 0] * R[0, 0]
    Qm[0, 2] -= Qm[0, 0] - Q[0, 0]
    Xm[0, 2] = Qm[0, 2] / R[0, 2]
    Um = Xm * S
    cases["forced flow"] = with_(good, station_throughput=Xm, station_queue_length=Qm,
                                 station_utilization=Um)
    # the utilisation law alone
    Um = U.copy()
    Um[0, 1] *= 1.01
    cases["utilisation law"] = with_(good, station_utilization=Um)
    # the no-contention bound alone: one job, every time 0.9 of its service
    # time (U at most 0.74)
    one = qm.Network(net.stations, [qm.Closed("t", 1, visits={"a": 1, "b": 2, "c": 1})])
    cases["no-contention bound"] = _consistent(one, 0.9 * S)
    # U <= 1 alone: one station, 3 jobs, R = 1.5 S: X S = 2, the other laws hold
    single = qm.Network([qm.Queue("a", 0.02)], [qm.Closed("t", 3, visits={"a": 1})])
    cases["U <= 1"] = _consistent(single, np.array([[0.03]]))
    for law, bad in cases.items():
        assert not _compiled(bad), law
        found = _numpy(bad)
        assert found, law
