"""Tests of qmodels.analytic.convolution (normalising constants, Buzen's algorithm).

Reference values come from a textbook (Jain 1991, ch. 35), a hand
derivation written here, a brute-force sum over every state of the product
form written here, or an independent method of ours (exact MVA).  None is
pasted from running the module under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic.convolution import convolution, log_normalizing_constant
from qmodels.analytic.mva import mva
from qmodels.errors import InvalidValueError, UnsupportedModelError

# ---------------------------------------------------------------------------
# independent helpers
# ---------------------------------------------------------------------------


def _compositions(n: int, parts: int):
    """Every way to put n identical jobs into ``parts`` places."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _compositions(n - first, parts - 1):
            yield (first,) + rest


def _rates(station, s: int) -> float:
    """Rate multiplier a(s) with s jobs present (a(0) unused)."""
    if isinstance(station, qm.Delay):
        return float(s)
    if isinstance(station, qm.Queue):
        return float(min(s, station.servers))
    rm = station.rate_multipliers
    return float(rm[min(s, len(rm)) - 1])


def brute_force(net: qm.Network):
    """Every state of a closed multi-class product-form network, summed.

    The state is n_rk (class r at station k) plus m_r class-r jobs thinking.
    Weight (BCMP 1975; Bolch et al. 2006 eq. 8.29):
        prod_k |n_k|! / prod_{i<=|n_k|} a_k(i) * prod_r D_rk^n_rk / n_rk!
        * prod_r Z_r^m_r / m_r!
    From the probabilities: Q_rk = E[n_rk]; the class-r completion rate at
    station k is E[n_rk / |n_k| * a_k(|n_k|)] / S_rk (processor sharing of
    the station's rate), so X_r = that / V_rk; P(|n_k| = s).
    """
    D = np.asarray(net.demands, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    V = np.asarray(net.visits, dtype=float)
    R, K = D.shape
    pops = [c.population for c in net.classes]
    Z = [c.think_time for c in net.classes]
    total = sum(pops)
    per_class = [list(_compositions(pops[r], K + 1)) for r in range(R)]
    Q = np.zeros((R, K))
    rate = np.zeros((R, K))
    busy = np.zeros(K)
    marg = np.zeros((K, total + 1))
    thinking = np.zeros(R)
    G = 0.0
    for combo in itertools.product(*per_class):
        n = np.array([c[:K] for c in combo], dtype=int)  # (R, K)
        m = [c[K] for c in combo]
        w = 1.0
        for r in range(R):
            if m[r]:
                w *= Z[r] ** m[r] / math.factorial(m[r])
        for k, stn in enumerate(net.stations):
            tot = int(n[:, k].sum())
            f = float(math.factorial(tot))
            for i in range(1, tot + 1):
                f /= _rates(stn, i)
            for r in range(R):
                f *= D[r, k] ** n[r, k] / math.factorial(n[r, k])
            w *= f
        if w == 0.0:
            continue
        G += w
        thinking += w * np.array(m, dtype=float)
        for k, stn in enumerate(net.stations):
            tot = int(n[:, k].sum())
            marg[k, tot] += w
            if tot:
                busy[k] += w
                for r in range(R):
                    Q[r, k] += w * n[r, k]
                    if S[r, k] > 0:
                        rate[r, k] += w * n[r, k] / tot * _rates(stn, tot) / S[r, k]
    Q /= G
    rate /= G
    thinking /= G
    X = np.zeros(R)
    for r in range(R):
        k = int(np.argmax(V[r] * (S[r] > 0)))
        if V[r, k] > 0 and S[r, k] > 0:
            X[r] = rate[r, k] / V[r, k]
        elif Z[r] > 0:
            X[r] = thinking[r] / Z[r]  # Little's law at the think station
    return {"G": G, "X": X, "Q": Q, "P_busy": busy / G, "marginals": marg / G}


def naive_buzen(D, N):
    """Buzen's recursion in plain floating point (no scaling, no logs):
    g(n) <- g(n) + D_k g(n-1) (Buzen 1973, eq. 7)."""
    g = np.zeros(N + 1)
    g[0] = 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        for d in D:
            for n in range(1, N + 1):
                g[n] = g[n] + d * g[n - 1]
    return g


def _net(stations, pops, demands, think=None):
    classes = []
    for r, N in enumerate(pops):
        z = 0.0 if think is None else think[r]
        classes.append(qm.Closed(f"c{r}", N, think_time=z,
                                 demands={s.name: demands[r][k] for k, s in enumerate(stations)}))
    return qm.Network(stations, classes)


# ---------------------------------------------------------------------------
# textbook reference values
# ---------------------------------------------------------------------------


def test_jain_example_35_3_normalising_constants():
    # Jain, The Art of Computer Systems Performance Analysis, 1991,
    # Example 35.3 / Table 35.3: y_CPU = 1, y_A = 3, y_B = 2, N = 3:
    # G(1) = 6, G(2) = 25, G(3) = 90.
    stations = [qm.Queue("cpu", 1.0), qm.Queue("a", 3.0), qm.Queue("b", 2.0)]
    net = _net(stations, [3], [[1.0, 3.0, 2.0]])
    G = np.exp(log_normalizing_constant(net))
    assert G == pytest.approx([1, 6, 25, 90], rel=1e-12)
    r = convolution(net, marginals=True)
    # Example 35.4: P(n_A >= 2) = y_A^2 G(1) / G(3) = 9 * 6 / 90 = 0.6
    pa = r.info["marginals"]["a"]
    assert pa[2:].sum() == pytest.approx(0.6, rel=1e-12)
    # and X = G(2)/G(3) = 25/90 (Jain eq. 35.8, in units of y)
    assert r.X["c0"] == pytest.approx(25 / 90, rel=1e-12)
    assert r.info["log_G"] == pytest.approx(math.log(90), rel=1e-12)


def test_jain_example_35_5_terminals():
    # Jain 1991, Example 35.5: terminals Z = 4.68, D_CPU = 0.78, D_A = 2.34,
    # D_B = 1.56, N = 3.  Published: X = 0.264, U = .206 / .618 / .412,
    # R = 6.694, P(n_A = 0, 2, 3) = .383, .211, .070, mean Q_A = .97,
    # variance .87.  By hand (scale 0.78: y = 6 (Z), 1, 3, 2):
    # delay column 1, 6, 18, 36; + CPU: 1, 7, 25, 61; + A: 1, 10, 55, 226;
    # + B: 1, 12, 79, 384, so G(3) = 384 * 0.78^3 and X = 79 / (384 * .78).
    stations = [qm.Queue("cpu", 0.78), qm.Queue("a", 2.34), qm.Queue("b", 1.56)]
    net = _net(stations, [3], [[0.78, 2.34, 1.56]], think=[4.68])
    lg = log_normalizing_constant(net)
    assert np.exp(lg) / 0.78 ** np.arange(4) == pytest.approx([1, 12, 79, 384], rel=1e-12)
    r = convolution(net, marginals=True)
    assert r.X["c0"] == pytest.approx(79 / (384 * 0.78), rel=1e-12)
    assert r.X["c0"] == pytest.approx(0.264, abs=5e-4)
    assert [r.U[k] for k in ("cpu", "a", "b")] == pytest.approx([0.206, 0.618, 0.412], abs=1e-3)
    assert r.R["c0"] == pytest.approx(6.694, abs=2e-3)
    pa = r.info["marginals"]["a"]
    assert pa[[0, 2, 3]] == pytest.approx([0.383, 0.211, 0.070], abs=5e-4)
    j = np.arange(4)
    assert (j * pa).sum() == pytest.approx(0.97, abs=5e-3)
    assert (j**2 * pa).sum() - (j * pa).sum() ** 2 == pytest.approx(0.87, abs=5e-3)


def test_marginals_two_station_truncated_geometric():
    # Two single-server stations, N jobs: P(n_1 = j) ∝ D1^j D2^(N-j), i.e.
    # (rho = D1/D2) P(n_1 = j) = rho^j (1 - rho) / (1 - rho^(N+1)).
    D1, D2, N = 0.3, 0.5, 12
    net = _net([qm.Queue("a", D1), qm.Queue("b", D2)], [N], [[D1, D2]])
    r = convolution(net, marginals=True)
    rho = D1 / D2
    j = np.arange(N + 1)
    expect = rho**j * (1 - rho) / (1 - rho ** (N + 1))
    assert r.info["marginals"]["a"] == pytest.approx(expect, rel=1e-12, abs=1e-300)
    assert r.info["marginals"]["b"] == pytest.approx(expect[::-1], rel=1e-12)
    assert r.Q["a"] == pytest.approx((j * expect).sum(), rel=1e-12)
    # equal demands: uniform
    net = _net([qm.Queue("a", 0.4), qm.Queue("b", 0.4)], [N], [[0.4, 0.4]])
    m = convolution(net, marginals=True).info["marginals"]["a"]
    assert m == pytest.approx(np.full(N + 1, 1 / (N + 1)), rel=1e-12)


def test_marginals_are_read_only():
    net = _net([qm.Queue("a", 0.3), qm.Queue("b", 0.5)], [3], [[0.3, 0.5]])
    m = convolution(net, marginals=True).info["marginals"]
    with pytest.raises(ValueError):
        m["a"][0] = 1.0
    assert "marginals" not in convolution(net).info


# ---------------------------------------------------------------------------
# against exact MVA (single class) and the brute-force sum (multi-class)
# ---------------------------------------------------------------------------

# demands and think times are 0 or at least 1e-6 s: a time near the smallest float
# makes N / T overflow, which the solvers refuse by design (_common._check_cycles)
_demand = st.one_of(st.just(0.0), st.floats(1e-6, 2.0))
station_strategy = st.one_of(
    st.tuples(st.just("delay"), _demand),
    st.tuples(st.just("queue"), _demand, st.integers(1, 4)),
    st.tuples(st.just("ld"), st.floats(0.01, 2.0),
              st.lists(st.floats(0.3, 4.0), min_size=1, max_size=4)),
)


def _stations(spec):
    out = []
    for i, s in enumerate(spec):
        name = f"s{i}"
        if s[0] == "delay":
            out.append(qm.Delay(name, s[1]))
        elif s[0] == "queue":
            out.append(qm.Queue(name, s[1], servers=s[2], discipline="ps"))
        else:
            out.append(qm.LoadDependent(name, s[1], rate_multipliers=tuple(s[2])))
    return out


def _mva_u_differs(station, N):
    """Two load-dependent shapes where qmodels.analytic.mva.mva_single does not
    report U = 1 - P(empty) (as results.py defines it): multipliers
    1, 2, ..., N (solved as a delay, U = X D) and all-ones multipliers in
    a network that also has a multi-server station (U = 0).  For these the
    test checks U against the utilisation law or the marginals instead."""
    if not isinstance(station, qm.LoadDependent):
        return False
    a = station.rate_multipliers
    return all(x == 1.0 for x in a) or (len(a) >= N and all(a[i] == i + 1 for i in range(N)))


@settings(deadline=None, max_examples=60)
@given(
    spec=st.lists(station_strategy, min_size=1, max_size=4),
    N=st.integers(0, 25),
    Z=st.floats(0.0, 3.0),
)
def test_single_class_equals_exact_mva(spec, N, Z):
    stations = _stations(spec)
    if Z == 0 and all(s.service == 0 for s in stations):
        Z = 1.0
    net = qm.Network(stations, [qm.Closed("c", N, think_time=Z,
                                          visits={s.name: 1.0 for s in stations})])
    try:
        a = convolution(net)
    except InvalidValueError as e:
        # a cycle too short for a float throughput is refused, by both alike
        assert "overflows a float" in str(e)
        with pytest.raises(InvalidValueError, match="overflows a float"):
            mva(net)
        return
    b = mva(net)
    assert a.X["c"] == pytest.approx(b.X["c"], rel=1e-9, abs=1e-12)
    for s in stations:
        assert a.Q[s.name] == pytest.approx(b.Q[s.name], rel=1e-8, abs=1e-11)
        if not _mva_u_differs(s, N):
            assert a.U[s.name] == pytest.approx(b.U[s.name], rel=1e-8, abs=1e-11)
        elif all(x == 1.0 for x in s.rate_multipliers):
            # a fixed-rate server: 1 - P(empty) = X D (utilisation law)
            assert a.U[s.name] == pytest.approx(a.X["c"] * s.service, rel=1e-9, abs=1e-12)
        if N > 0 and b.X[s.name] > 0:
            assert a.R[s.name] == pytest.approx(b.R[s.name], rel=1e-8, abs=1e-11)
    if N > 0:
        assert a.R["c"] == pytest.approx(b.R["c"], rel=1e-8, abs=1e-11)
    # Little's law over the whole cycle: sum Q + X Z = N
    assert sum(a.Q[s.name] for s in stations) + a.X["c"] * Z == pytest.approx(N, rel=1e-9,
                                                                              abs=1e-9)


@settings(deadline=None, max_examples=40)
@given(
    spec=st.lists(station_strategy, min_size=1, max_size=3),
    pops=st.lists(st.integers(0, 3), min_size=2, max_size=3),
    data=st.data(),
)
def test_multi_class_equals_brute_force(spec, pops, data):
    stations = _stations(spec)
    R, K = len(pops), len(stations)
    # 0 or a normal-sized float: the brute force works in plain floats
    value = st.one_of(st.just(0.0), st.floats(1e-3, 2.0))
    demands = [[data.draw(value) for _ in range(K)] for _ in range(R)]
    think = [data.draw(value) for _ in range(R)]
    for r in range(R):
        if sum(demands[r]) + think[r] == 0:
            think[r] = 1.0
    net = _net(stations, pops, demands, think)
    ref = brute_force(net)
    res = convolution(net, marginals=True)
    assert math.exp(res.info["log_G"]) == pytest.approx(ref["G"], rel=1e-9)
    for r, c in enumerate(net.class_names):
        assert res.X[c] == pytest.approx(ref["X"][r], rel=1e-9, abs=1e-12)
        for k, s in enumerate(net.station_names):
            assert res.Q[s, c] == pytest.approx(ref["Q"][r, k], rel=1e-9, abs=1e-12)
    for k, s in enumerate(stations):
        m = res.info["marginals"][s.name]
        assert m == pytest.approx(ref["marginals"][k], rel=1e-9, abs=1e-12)
        if isinstance(s, qm.LoadDependent):
            assert res.U[s.name] == pytest.approx(ref["P_busy"][k], rel=1e-9, abs=1e-12)


def test_multi_class_by_hand():
    # Two classes, one job each; class 0 demands cpu 1, disk 1; class 1
    # cpu 2, disk 1; two single-server PS stations.  By hand (Bolch et al.
    # 2006, eq. 8.29: F_k = |n_k|! prod_r D_rk^n_rk / n_rk!), the states:
    # weights (A,B at cpu)=2!*1*2=4, (A cpu,B disk)=1*1=1, (A disk,B cpu)=1*2=2,
    # (both at disk)=2!*1*1=2; G = 9.  X_A = G(0,1)/G(1,1) = (2+1)/9 = 1/3,
    # X_B = G(1,0)/G(1,1) = (1+1)/9 = 2/9.
    stations = [qm.Queue("cpu", 1.0, discipline="ps"), qm.Queue("disk", 1.0, discipline="ps")]
    net = _net(stations, [1, 1], [[1.0, 1.0], [2.0, 1.0]])
    r = convolution(net)
    assert math.exp(r.info["log_G"]) == pytest.approx(9.0, rel=1e-12)
    assert r.X["c0"] == pytest.approx(1 / 3, rel=1e-12)
    assert r.X["c1"] == pytest.approx(2 / 9, rel=1e-12)
    # Q_A,cpu = (4 + 1) / 9
    assert r.Q["cpu", "c0"] == pytest.approx(5 / 9, rel=1e-12)


def test_multi_class_equals_multiclass_exact():
    import qmodels.analytic.multiclass as mc
    stations = [qm.Delay("think", 2.0), qm.Queue("cpu", 0.1, discipline="ps"), qm.Queue("disk", 0.2, servers=2, discipline="ps"),
                qm.LoadDependent("raid", 0.3, rate_multipliers=(1, 1.6, 2.0))]
    net = _net(stations, [3, 2, 2], [[2.0, 0.1, 0.2, 0.3], [1.0, 0.3, 0.1, 0.2],
                                     [0.5, 0.05, 0.4, 0.1]])
    a, b = convolution(net), mc.solve_exact(net)
    for c in net.class_names:
        assert a.X[c] == pytest.approx(b.X[c], rel=1e-9)
        for s in net.station_names:
            assert a.Q[s, c] == pytest.approx(b.Q[s, c], rel=1e-9, abs=1e-12)


@settings(deadline=None, max_examples=25)
@given(spec=st.lists(station_strategy, min_size=1, max_size=3), N=st.integers(0, 4),
       d=st.lists(st.floats(0.0, 2.0), min_size=3, max_size=3))
def test_class_with_population_zero_changes_nothing(spec, N, d):
    stations = _stations(spec)
    K = len(stations)
    dem = [s.service for s in stations]
    if sum(dem) == 0:
        dem[0] = 1.0
    one = _net(stations, [N], [dem], think=[0.5])
    two = _net(stations, [N, 0], [dem, d[:K]], think=[0.5, 0.0])
    a, b = convolution(one), convolution(two)
    assert b.X["c1"] == 0.0
    assert b.X["c0"] == pytest.approx(a.X["c0"], rel=1e-12, abs=1e-15)
    for s in one.station_names:
        assert b.Q[s, "c0"] == pytest.approx(a.Q[s], rel=1e-12, abs=1e-15)
        assert b.Q[s, "c1"] == 0.0


def test_population_zero_class_sees_arrival_theorem():
    # A class with no jobs reports what one arriving job would see: at a
    # single-server station S (1 + Q(N)); here Q = N/2 for two equal
    # stations (symmetry), so R_1 per station = S (1 + N/2).
    stations = [qm.Queue("a", 0.2, discipline="ps"), qm.Queue("b", 0.2, discipline="ps")]
    net = _net(stations, [4, 0], [[0.2, 0.2], [0.1, 0.1]])
    r = convolution(net)
    assert r.R["a", "c1"] == pytest.approx(0.1 * (1 + 2), rel=1e-12)
    assert r.R["c1"] == pytest.approx(2 * 0.1 * 3, rel=1e-12)


# ---------------------------------------------------------------------------
# large populations
# ---------------------------------------------------------------------------


def test_n_100000_matches_exact_mva():
    stations = [qm.Queue("cpu", 0.010), qm.Queue("disk1", 0.025), qm.Queue("disk2", 0.02),
                qm.Delay("net", 0.5)]
    N = 100_000
    net = qm.Network(stations, [qm.Closed("tx", N, think_time=3.0,
                                          visits={s.name: 1 for s in stations})])
    a, b = convolution(net), mva(net)
    assert np.isfinite(a.info["log_G"])
    assert a.X["tx"] == pytest.approx(b.X["tx"], rel=1e-9)
    for s in net.station_names:
        assert a.Q[s] == pytest.approx(b.Q[s], rel=1e-9)
        assert a.U[s] == pytest.approx(b.U[s], rel=1e-9)


def test_n_100000_with_multiserver_matches_exact_mva():
    stations = [qm.Queue("cpu", 0.04, servers=4), qm.Queue("disk", 0.012),
                qm.LoadDependent("raid", 0.02, rate_multipliers=(1, 1.8, 2.4, 2.8))]
    N = 100_000
    net = qm.Network(stations, [qm.Closed("tx", N, think_time=1.0,
                                          visits={s.name: 1 for s in stations})])
    a, b = convolution(net), mva(net)
    assert a.X["tx"] == pytest.approx(b.X["tx"], rel=1e-9)
    for s in net.station_names:
        assert a.Q[s] == pytest.approx(b.Q[s], rel=1e-9)
        assert a.U[s] == pytest.approx(b.U[s], rel=1e-9)


def test_n_1000_where_naive_convolution_overflows():
    D = [3.0, 2.0, 1.5]
    N = 1000
    g = naive_buzen(D, N)
    assert not np.isfinite(g[N])  # 3^1000 ~ 1e477 overflows a double
    with np.errstate(invalid="ignore"):
        assert not np.isfinite(g[N - 1] / g[N])
    net = _net([qm.Queue(f"s{k}", d) for k, d in enumerate(D)], [N], [D])
    a, b = convolution(net, marginals=True), mva(net)
    assert a.X["c0"] == pytest.approx(b.X["c0"], rel=1e-10)
    assert a.X["c0"] == pytest.approx(1 / 3, rel=1e-10)  # saturated bottleneck
    for s in net.station_names:
        assert a.Q[s] == pytest.approx(b.Q[s], rel=1e-9)
        m = a.info["marginals"][s]
        assert m.sum() == pytest.approx(1.0, rel=1e-12)
        assert (np.arange(N + 1) * m).sum() == pytest.approx(a.Q[s], rel=1e-9)


# ---------------------------------------------------------------------------
# marginal properties
# ---------------------------------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(spec=st.lists(station_strategy, min_size=1, max_size=4), N=st.integers(0, 30),
       Z=_demand)
def test_marginals_sum_to_one_and_mean_is_queue_length(spec, N, Z):
    stations = _stations(spec)
    if Z == 0 and all(s.service == 0 for s in stations):
        Z = 1.0
    net = qm.Network(stations, [qm.Closed("c", N, think_time=Z,
                                          visits={s.name: 1 for s in stations})])
    r = convolution(net, marginals=True)
    for s in stations:
        m = r.info["marginals"][s.name]
        assert m.shape == (N + 1,)
        assert np.all(m >= 0)
        assert m.sum() == pytest.approx(1.0, rel=1e-10)
        assert (np.arange(N + 1) * m).sum() == pytest.approx(r.Q[s.name], rel=1e-9, abs=1e-12)
        if isinstance(s, qm.LoadDependent):
            assert r.U[s.name] == pytest.approx(1 - m[0], rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------------------
# curve, registry, degenerate cases
# ---------------------------------------------------------------------------


def test_curve_equals_exact_mva_curve():
    stations = [qm.Queue("cpu", 0.05, servers=2), qm.Queue("disk", 0.08), qm.Delay("d", 0.3)]
    net = qm.Network(stations, [qm.Closed("tx", 30, think_time=1.0,
                                          visits={s.name: 1 for s in stations})])
    a, b = convolution(net, curve=True).curve, mva(net, curve=True).curve
    assert a.X == pytest.approx(b.X, rel=1e-10)
    assert a.Q == pytest.approx(b.Q, rel=1e-9, abs=1e-12)
    assert a.U == pytest.approx(b.U, rel=1e-9, abs=1e-12)
    assert a.R[1:] == pytest.approx(b.R[1:], rel=1e-9)


def test_registered_as_method():
    net = _net([qm.Queue("a", 0.3), qm.Queue("b", 0.5)], [3], [[0.3, 0.5]])
    r = qm.solve(net, method="convolution")
    assert r.method == "convolution"
    assert r.X["c0"] == pytest.approx(mva(net).X["c0"], rel=1e-12)


def test_zero_demand_station_one_station_and_n_zero():
    # zero demand: contributes nothing, Q = U = 0
    net = _net([qm.Queue("a", 0.5), qm.Queue("idle", 0.0)], [5], [[0.5, 0.0]])
    r = convolution(net, marginals=True)
    assert r.X["c0"] == pytest.approx(2.0, rel=1e-12)  # one saturated server
    assert r.Q["idle"] == 0.0 and r.U["idle"] == 0.0
    assert r.info["marginals"]["idle"] == pytest.approx([1, 0, 0, 0, 0, 0])
    # one station with think time: the machine-repairman M/M/1//N, N = 2,
    # Z = 1, S = 1: p(0) : p(1) : p(2) = 1 : 2 : 2 (Z^-n N!/(N-n)! S^n),
    # so U = 4/5 and X = U / S = 0.8.
    net = _net([qm.Queue("a", 1.0)], [2], [[1.0]], think=[1.0])
    r = convolution(net, marginals=True)
    assert r.X["c0"] == pytest.approx(0.8, rel=1e-12)
    assert r.info["marginals"]["a"] == pytest.approx([0.2, 0.4, 0.4], rel=1e-12)
    # N = 0: nothing moves; a visit would take its service time
    net = _net([qm.Queue("a", 0.5), qm.Delay("t", 1.0)], [0], [[0.5, 1.0]])
    r = convolution(net, marginals=True, curve=True)
    assert r.X["c0"] == 0.0 and r.Q["a"] == 0.0 and r.U["a"] == 0.0
    assert r.R["c0"] == pytest.approx(1.5)
    assert r.info["marginals"]["a"].tolist() == [1.0]
    assert r.info["log_G"] == 0.0


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_rejects_open_class():
    net = qm.Network([qm.Queue("a", 0.1)], [qm.Closed("c", 2, visits={"a": 1}),
                                            qm.Open("o", 1.0, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="class 'o' is open"):
        convolution(net)


def test_rejects_token_pool():
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2)],
                     [qm.Closed("c", 2, visits={"a": 1, "b": 1})],
                     pools=[qm.TokenPool("buf", 1, "a", "b")])
    with pytest.raises(UnsupportedModelError, match="token pool 'buf'"):
        convolution(net)


def test_rejects_binding_capacity():
    net = qm.Network([qm.Queue("a", 0.1, capacity=2), qm.Queue("b", 0.2)],
                     [qm.Closed("c", 3, visits={"a": 1, "b": 1})])
    with pytest.raises(UnsupportedModelError, match="station 'a': finite capacity 2 can bind"):
        convolution(net)
    # a capacity that cannot bind is fine
    net = qm.Network([qm.Queue("a", 0.1, capacity=3), qm.Queue("b", 0.2)],
                     [qm.Closed("c", 3, visits={"a": 1, "b": 1})])
    assert convolution(net).X["c"] > 0


def test_rejects_symbols_and_multi_class_curve():
    s = sp.Symbol("s", positive=True)
    net = qm.Network([qm.Queue("a", s)], [qm.Closed("c", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="sympy symbols"):
        convolution(net)
    net = _net([qm.Queue("a", 0.1, discipline="ps")], [1, 1], [[0.1], [0.2]])
    with pytest.raises(UnsupportedModelError, match="curve=True needs one class; this network has 2"):
        convolution(net, curve=True)


def test_rejects_class_with_no_work():
    net = _net([qm.Queue("a", 0.0, discipline="ps")], [1, 2], [[0.5], [0.0]])
    with pytest.raises(InvalidValueError, match="class 'c1': all demands and the think time are zero"):
        convolution(net)


def test_lattice_kernels_compiled_equal_python_bit_for_bit():
    # The kernels run as Python below their threshold and compiled above it;
    # both call the shared log-add (qmodels.analytic._kernels.log_add), so
    # both must give the same bits.  Reference: Buzen's recursion by hand
    # (W(n) = B(n) + d W(n-1)) on a one-class lattice, in plain floats.
    pytest.importorskip("numba")
    from qmodels.analytic import _logconv
    from qmodels.analytic.convolution import _lat_geometric, _lat_shift

    rng = np.random.default_rng(3)
    dims = np.array([5, 4, 3], np.int64)
    strides = np.array([12, 3, 1], np.int64)
    T = np.log(rng.random(60))
    T[::7] = -np.inf
    logd = np.array([-0.4, 0.3, -np.inf])
    for kern in (_lat_shift, _lat_geometric):
        py = kern.py_func(T, logd, dims, strides)
        jit = kern.compiled()(T, logd, dims, strides)
        assert py.tobytes() == jit.tobytes()
    lg = np.log(rng.random(40))
    lg[2] = -np.inf
    py = _logconv.log_g_add_fixed.py_func(lg, 0.7)
    assert py.tobytes() == _logconv.log_g_add_fixed.compiled()(lg, 0.7).tobytes()
    B = rng.random(9)
    W = B.copy()
    for n in range(1, 9):
        W[n] = B[n] + 0.7 * W[n - 1]
    one = _lat_geometric.compiled()(np.log(B), np.array([math.log(0.7)]),
                                    np.array([9], np.int64), np.array([1], np.int64))
    np.testing.assert_allclose(np.exp(one), W, rtol=1e-13)


def test_a_lattice_too_large_for_memory_is_refused_before_allocating():
    # the audit's 5e8-state multi-class lattice died allocating 15.5 GiB
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2)],
                     [qm.Closed(f"c{i}", 90, visits={"a": 1, "b": 1}) for i in range(4)])
    with pytest.raises(qm.ProblemTooLargeError, match=r"GiB.*schweitzer"):
        convolution(net)


def _two_station_reference(S1, c, S2, N, dps=40):
    """(Q at the c-server station, X) of a closed cycle of a c-server queue
    (service time S1) and a single server (S2) with N jobs, by enumerating
    the product form (Bolch et al. 2006, eq. 8.5) in ``dps``-digit mpmath:
    P(j at station 1) ~ S1^j / prod_{i<=j} min(i, c) * S2^(N-j)."""
    import mpmath

    mpmath.mp.dps = dps
    S1, S2 = mpmath.mpf(S1), mpmath.mpf(S2)
    f = [mpmath.mpf(1)]
    for j in range(1, N + 1):
        f.append(f[-1] * S1 / min(j, c))
    w = [f[j] * S2 ** (N - j) for j in range(N + 1)]
    G = mpmath.fsum(w)
    Q = mpmath.fsum(j * w[j] for j in range(N + 1)) / G
    X = mpmath.fsum(f[j] * S2 ** (N - 1 - j) for j in range(N)) / G
    return float(Q), float(X)


def test_accuracy_with_ten_thousand_servers_is_as_documented():
    # The worst case the audit found: c = 10^4 servers balanced against a
    # single server of the same capacity, N = 2 10^4.  The convolution's
    # docstring states X to ~4e-12 and Q to ~3e-9 (log-space rounding over
    # 10^4 chained steps), exact MVA Q to ~6e-11: pinned with a factor of
    # about 3 of room, against a 40-digit enumeration.
    S1, c, S2, N = 1.0, 10_000, 1e-4, 20_000
    q, x = _two_station_reference(S1, c, S2, N)
    net = qm.Network([qm.Queue("pool", S1, servers=c), qm.Queue("disk", S2)],
                     [qm.Closed("j", N, visits={"pool": 1, "disk": 1})])
    a, b = convolution(net), mva(net)
    assert a.X["j"] == pytest.approx(x, rel=2e-11)
    assert a.Q["pool"] == pytest.approx(q, rel=1e-8)
    assert b.X["j"] == pytest.approx(x, rel=1e-12)
    assert b.Q["pool"] == pytest.approx(q, rel=2e-10)
    # the two stations hold all N jobs
    assert a.Q["pool"] + a.Q["disk"] == pytest.approx(N, rel=1e-8)
