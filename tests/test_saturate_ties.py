"""Tied bottlenecks at saturation: the approximate-MVA fixed points held to
the utilisation law (:func:`qmodels.analytic.amva.saturate`) share the
waiting jobs among every full column, so identical stations get identical
figures and the iteration converges.

Before: two identical exponential queues with one class of 8,192 jobs; the
first saturation of residual MVA put every waiting job at the first of the
two, and the difference between them then shrank by a factor of about
U (N - 1) / N per sweep: 10,000 sweeps (the limit) left 2,986 and 2,925
jobs, with a ConvergenceWarning.  Schweitzer's iteration on the same
product-form network (never saturated there) gives 2,955.5 each, the
reference below (an independent implementation of the same fixed point:
with exponential service the residual correction is zero).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm


def _tied(N, mid=None, classes=1):
    stations = [qm.Queue("tx", 5e-5), qm.Queue("mid", 3e-5, distribution=mid),
                qm.Queue("rx", 5e-5), qm.Delay("path", 0.114)]
    cls = [qm.Closed("tcp", N, visits={"tx": 1, "mid": 1, "rx": 1, "path": 1})]
    if classes == 2:
        cls.append(qm.Closed("ack", max(1, N // 4), visits={"tx": 2, "mid": 1, "rx": 2,
                                                            "path": 1}))
    return qm.Network(stations, cls)


def _solve(net, method):
    with warnings.catch_warnings():
        warnings.simplefilter("error", qm.errors.ConvergenceWarning)
        return qm.solve(net, method=method)


@pytest.mark.parametrize("N", [64, 8192])
def test_residual_mva_at_tied_bottlenecks_is_schweitzer_on_product_form(N):
    net = _tied(N)
    r = _solve(net, "mva-residual")
    s = _solve(net, "schweitzer")
    assert r.info["converged"]
    Q = np.asarray(r.station_queue_length)[0]
    assert Q[0] == pytest.approx(Q[2], rel=1e-12)
    # (each iteration stops where no queue moves by more than 1e-8 N a sweep)
    np.testing.assert_allclose(np.asarray(r.station_queue_length),
                               np.asarray(s.station_queue_length), rtol=1e-6, atol=1e-6 * N)
    np.testing.assert_allclose(r.class_throughput, s.class_throughput, rtol=1e-7)


@pytest.mark.parametrize("classes", [1, 2])
def test_residual_mva_at_tied_bottlenecks_converges_with_general_service(classes):
    r = _solve(_tied(8192, mid=qm.Deterministic(), classes=classes), "mva-residual")
    assert r.info["converged"] and r.info["iterations"] < 1000
    Q = np.asarray(r.station_queue_length)
    np.testing.assert_allclose(Q[:, 0], Q[:, 2], rtol=1e-9)
    # the bottleneck law, the pair full
    U = np.asarray(r.station_utilization).sum(axis=0)
    assert U[0] == pytest.approx(U[2], rel=1e-12) and U[0] <= 1 + 1e-9


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 20000), d=st.floats(1e-4, 1.0), z=st.floats(0.0, 10.0),
       scv=st.sampled_from([0.0, 0.5, 1.0, 4.0]))
def test_identical_queues_get_identical_figures(N, d, z, scv):
    # two identical exponential queues around a third of another shape: the
    # residual fixed point is symmetric in them, and so must its answer be
    mid = None if scv == 1.0 else (qm.Deterministic() if scv == 0.0 else
                                   qm.HyperExponential(scv) if scv > 1 else qm.Erlang(2))
    net = qm.Network([qm.Queue("a", d), qm.Queue("m", d / 2, distribution=mid),
                      qm.Queue("b", d), qm.Delay("z", z)],
                     [qm.Closed("c", N, visits={"a": 1, "m": 1, "b": 1, "z": 1})])
    r = _solve(net, "mva-residual")
    Q = np.asarray(r.station_queue_length)[0]
    assert Q[0] == pytest.approx(Q[2], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("eps", [1e-9, 1e-4])
def test_residual_mva_at_nearly_tied_queues_converges_to_its_fixed_point(eps):
    # queues of 5e-5 s and 5e-5 (1 + eps) s, not tied within saturate's
    # 1e-9: from N spread evenly the iteration stopped at 10,000 sweeps
    # (2,514 and 3,397 jobs at eps = 1e-4); from the single-class root of
    # the fixed point it converges in a few sweeps.  The answer must satisfy
    # the method's own equations (Bolch et al. 2006, ch. 10, with
    # Schweitzer's estimate at N - 1, a = (N - 1)/N): per queue
    # Q = X V S (1 + a Q + (c^2 - 1)/2 a U) (c^2 = 1 at the exponential
    # ones, 0 at the deterministic one), at the delay Q = X V S
    N = 8192
    S = {"tx": 5e-5, "mid": 3e-5, "rx": 5e-5 * (1 + eps)}
    net = qm.Network([qm.Queue("tx", S["tx"]), qm.Queue("mid", S["mid"],
                                                         distribution=qm.Deterministic()),
                      qm.Queue("rx", S["rx"]), qm.Delay("path", 0.114)],
                     [qm.Closed("tcp", N, visits={"tx": 1, "mid": 1, "rx": 1, "path": 1})])
    r = _solve(net, "mva-residual")
    assert r.info["converged"] and r.info["iterations"] < 100
    X = float(r.X["tcp"])
    a = (N - 1) / N
    for name, s in S.items():
        k = net.station_names.index(name)
        q = float(np.asarray(r.station_queue_length)[0, k])
        u = X * s
        rc = -0.5 if name == "mid" else 0.0
        # (within the iteration's own tolerance: it stops where no queue
        # moves by more than 1e-8 N in a sweep)
        assert q == pytest.approx(X * s * (1 + a * q + rc * a * u), rel=1e-6, abs=1e-7 * N)
    k = net.station_names.index("path")
    assert float(np.asarray(r.station_queue_length)[0, k]) == pytest.approx(X * 0.114, rel=1e-12)


def test_linearizer_at_nearly_tied_queues_converges():
    # the same slow mode in Linearizer's core solves (8,192 jobs, queues of
    # 5e-5 s and 5.0005e-5 s, exponential: 69,346 sweeps in all, stopped
    # unconverged); each core solve now starts at its single-class fixed
    # point.  Reference: exact MVA (product form), whose X Linearizer
    # meets within 1e-5 here (its queues within 3 %)
    net = qm.Network([qm.Queue("tx", 5e-5), qm.Queue("mid", 3e-5),
                      qm.Queue("rx", 5e-5 * (1 + 1e-4)), qm.Delay("path", 0.114)],
                     [qm.Closed("tcp", 8192, visits={"tx": 1, "mid": 1, "rx": 1, "path": 1})])
    r = _solve(net, "linearizer")
    x = _solve(net, "exact")
    assert r.info["converged"] and r.info["iterations"] < 200
    np.testing.assert_allclose(r.class_throughput, x.class_throughput, rtol=1e-5)
    np.testing.assert_allclose(r.station_queue_length, x.station_queue_length, rtol=0.03)


def test_the_single_class_start_is_the_root_by_hand():
    # one queue of demand D and a think time Z, Schweitzer's estimate:
    # N = X Z + X D / (1 - a X D), a = (N - 1)/N, i.e. the quadratic
    # a D Z X^2 - (N a D + Z + D) X + N = 0, whose smaller root lies below
    # the pole 1 / (a D)
    from qmodels.analytic.amva import single_class_start

    N, D, Z = 10.0, 0.1, 1.0
    a = (N - 1) / N
    b = N * a * D + Z + D
    # (the smaller root in the form without cancellation: 2c / (b + sqrt))
    X = 2 * N / (b + np.sqrt(b * b - 4 * a * D * Z * N))
    Q = single_class_start(np.array([D]), np.ones(1), np.zeros(1), np.array([True]), Z, N)
    assert Q[0, 0] == pytest.approx(X * D / (1 - a * X * D), rel=1e-12)
    assert X * Z + Q[0, 0] == pytest.approx(N, rel=1e-12)
