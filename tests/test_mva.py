"""Exact single-class MVA and the open Jackson solver: properties, exact
rational cross-checks, large numbers."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic.mva import mva_single
from qmodels.analytic.open import open_single
from qmodels.errors import InvalidValueError, UnstableError, UnsupportedModelError

# ---------------------------------------------------------------------------
# independent references written here
# ---------------------------------------------------------------------------


def exact_closed(stations, N, Z=Fraction(0)):
    """Exact product-form solution with rational arithmetic by direct
    convolution of the station factors (Buzen 1973; Bolch et al. 2006,
    eq. 8.1-8.5).  ``stations`` is a list of (kind, D, servers) with D a
    Fraction; kind in {"q", "d"}.  Returns X(N) and Q_k(N) as Fractions."""

    def factor(kind, D, c, n):
        if kind == "d":
            return [D**j / math.factorial(j) for j in range(n + 1)]
        out, prod = [], Fraction(1)
        for j in range(n + 1):
            if j > 0:
                prod *= min(j, c)
            out.append(D**j / prod)
        return out

    def conv(a, b):
        return [sum(a[i] * b[n - i] for i in range(n + 1)) for n in range(len(a))]

    fs = [factor(k, D, c, N) for k, D, c in stations]
    fz = [Z**j / math.factorial(j) for j in range(N + 1)]

    def G_without(skip):
        g = fz
        for i, f in enumerate(fs):
            if i != skip:
                g = conv(g, f)
        return g

    G = G_without(None)
    X = G[N - 1] / G[N] if N > 0 else Fraction(0)
    Q = []
    for k in range(len(stations)):
        gm = G_without(k)
        Q.append(sum(j * fs[k][j] * gm[N - j] for j in range(N + 1)) / G[N])
    return X, Q


def random_net(draw_demands, servers, Z, N, delay_idx=None):
    stations = []
    for k, d in enumerate(draw_demands):
        if delay_idx is not None and k == delay_idx:
            stations.append(qm.Delay(f"s{k}", d))
        else:
            stations.append(qm.Queue(f"s{k}", d, servers=servers[k]))
    visits = {s.name: 1 for s in stations}
    return qm.Network(stations, [qm.Closed("c", N, visits=visits, think_time=Z)])


demand = st.floats(min_value=1e-3, max_value=10.0)


@st.composite
def networks(draw, max_k=5, max_n=40, multi=True):
    K = draw(st.integers(1, max_k))
    D = draw(st.lists(demand, min_size=K, max_size=K))
    servers = draw(st.lists(st.integers(1, 4 if multi else 1), min_size=K, max_size=K))
    Z = draw(st.one_of(st.just(0.0), st.floats(min_value=0.0, max_value=20.0)))
    N = draw(st.integers(0, max_n))
    delay_idx = draw(st.one_of(st.none(), st.integers(0, K - 1)))
    return random_net(D, servers, Z, N, delay_idx)


# ---------------------------------------------------------------------------
# exactness
# ---------------------------------------------------------------------------


def test_hand_derived_three_jobs():
    # Two single-server queues D = .05, .08, N = 3, Z = 0.  By hand:
    # n=1: R = .13, X = 7.6923, Q = (.3846, .6154)
    # n=2: R = .05*1.3846 + .08*1.6154 = .19846, X = 10.0775
    # n=3: R = .05*1.6977 + .08*2.3023 = .26907, X = 11.1495
    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                     [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 1})])
    r = qm.mva(net)
    assert r.X["tx"] == pytest.approx(11.1495, abs=1e-4)
    assert r.R["tx"] == pytest.approx(0.26907, abs=1e-5)


def test_two_station_closed_form_large_N():
    # Two single-server queues in a cycle, D1 > D2, r = D2/D1: G(N) = D1^N sum_j r^j,
    # so X(N) = (1/D1) (1 - r^N) / (1 - r^(N+1))  (Buzen 1973).
    D1, D2 = 0.02, 0.015
    r = D2 / D1
    for N in (1, 2, 5, 50, 1000, 10**6):
        net = qm.Network([qm.Queue("a", D1), qm.Queue("b", D2)],
                         [qm.Closed("c", N, visits={"a": 1, "b": 1})])
        res = qm.mva(net)
        expect = (1 / D1) * (1 - r**N) / (1 - r ** (N + 1))
        assert res.X["c"] == pytest.approx(expect, rel=1e-10), N
        assert np.isfinite(res.Q["a"]) and res.Q["a"] + res.Q["b"] == pytest.approx(N, rel=1e-10)


def test_million_jobs_with_delay_and_multiserver_is_finite_and_right():
    # N = 10^6 far beyond N*: X -> 1/Dmax exactly up to a vanishing term; every
    # figure finite; queue of the bottleneck = N - X Z - (others).
    net = qm.Network(
        [qm.Queue("a", 0.01), qm.Queue("b", 0.08, servers=4), qm.Delay("d", 1.0)],
        [qm.Closed("c", 10**6, visits={"a": 1, "b": 1, "d": 1}, think_time=3.0)])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(4 / 0.08, rel=1e-12)
    for f in (r.X, r.Q, r.U, r.R):
        assert all(np.isfinite(v) for v in f.stations.values())
    assert r.Q["a"] == pytest.approx(0.5 / 0.5, rel=1e-6)  # rho_a = 0.5: M/M/1-like tail
    total = sum(r.Q.stations.values()) + r.X["c"] * 3.0
    assert total == pytest.approx(10**6, rel=1e-10)


def test_multiserver_8_servers_N90_against_exact_rationals():
    # The case where the textbook marginal-probability recursion breaks down
    # (Octave's qncsmva returns X = -1.01): an 8-server station saturated
    # at N = 90, with a single server and a think time.
    Da, Db, Z, N = Fraction(1), Fraction(1, 10), Fraction(2), 90
    X, Q = exact_closed([("q", Da, 8), ("q", Db, 1)], N, Z)
    net = qm.Network([qm.Queue("a", 1.0, servers=8), qm.Queue("b", 0.1)],
                     [qm.Closed("c", N, visits={"a": 1, "b": 1}, think_time=2.0)])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(float(X), rel=1e-12)
    assert r.Q["a"] == pytest.approx(float(Q[0]), rel=1e-10)
    assert r.Q["b"] == pytest.approx(float(Q[1]), rel=1e-10)
    assert 0 < r.U["a"] <= 1


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 25), st.lists(st.integers(1, 20), min_size=2, max_size=3),
       st.lists(st.integers(1, 4), min_size=3, max_size=3), st.integers(0, 10))
def test_mva_equals_rational_convolution(N, dnum, servers, znum):
    D = [Fraction(x, 10) for x in dnum]
    Z = Fraction(znum, 2)
    ref_X, ref_Q = exact_closed([("q", d, c) for d, c in zip(D, servers)], N, Z)
    net = qm.Network([qm.Queue(f"s{k}", float(d), servers=c) for k, (d, c) in
                      enumerate(zip(D, servers))],
                     [qm.Closed("c", N, visits={f"s{k}": 1 for k in range(len(D))},
                                think_time=float(Z))])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(float(ref_X), rel=1e-10)
    for k in range(len(D)):
        assert r.Q[f"s{k}"] == pytest.approx(float(ref_Q[k]), rel=1e-9, abs=1e-12)


def test_load_dependent_against_rationals():
    # RAID-like station with rates 1, 1.8, 2.4, 2.8 (then 2.8), a disk and a delay.
    a = [Fraction(1), Fraction(9, 5), Fraction(12, 5), Fraction(14, 5)]
    N, D, Dd, Z = 12, Fraction(1, 2), Fraction(1, 5), Fraction(3)

    def f_ld(n):
        out, prod = [], Fraction(1)
        for j in range(n + 1):
            if j > 0:
                prod *= a[min(j, len(a)) - 1]
            out.append(D**j / prod)
        return out

    fz = [Z**j / math.factorial(j) for j in range(N + 1)]
    fd = [Dd**j for j in range(N + 1)]

    def conv(x, y):
        return [sum(x[i] * y[n - i] for i in range(n + 1)) for n in range(N + 1)]

    G = conv(conv(fz, fd), f_ld(N))
    Gm = conv(fz, fd)
    X = G[N - 1] / G[N]
    p0 = Gm[N] / G[N]
    Qld = sum(j * f_ld(N)[j] * Gm[N - j] for j in range(N + 1)) / G[N]
    net = qm.Network([qm.LoadDependent("raid", 0.5, rate_multipliers=(1, 1.8, 2.4, 2.8)),
                      qm.Queue("disk", 0.2)],
                     [qm.Closed("c", N, visits={"raid": 1, "disk": 1}, think_time=3.0)])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(float(X), rel=1e-12)
    assert r.Q["raid"] == pytest.approx(float(Qld), rel=1e-10)
    assert r.U["raid"] == pytest.approx(1 - float(p0), rel=1e-10)


# ---------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(networks())
def test_operational_laws_hold(net):
    r = qm.mva(net)
    N = net.classes[0].population
    Z = net.classes[0].think_time
    X = r.X["c"]
    for k, s in enumerate(net.stations):
        Xk, Rk, Qk, Uk = r.X[s.name], r.R[s.name], r.Q[s.name], r.U[s.name]
        # forced flow and Little's law per station
        assert Xk == pytest.approx(X * net.visits[0, k], rel=1e-12, abs=1e-15)
        assert Qk == pytest.approx(Xk * Rk, rel=1e-9, abs=1e-12)
        # utilisation law (per server)
        c = 1 if s.kind == "delay" else s.servers
        assert Uk == pytest.approx(Xk * s.service / c, rel=1e-9, abs=1e-15)
        assert Uk <= 1 + 1e-9 or s.kind == "delay"
    # sum of queue lengths plus X Z equals N; interactive response time law
    assert sum(r.Q.stations.values()) + X * Z == pytest.approx(N, rel=1e-9, abs=1e-9)
    if N > 0:
        assert r.R["c"] == pytest.approx(N / X - Z, rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(networks(max_n=30))
def test_curve_monotone_and_consistent(net):
    r = qm.mva(net, curve=True)
    cur = r.curve
    X, R = cur.throughput, cur.response_time
    assert np.all(np.diff(X) >= -1e-12 * np.maximum(X[1:], 1))
    assert np.all(np.diff(R[1:]) >= -1e-9 * np.maximum(R[2:], 1))
    # the last point of the curve is the result
    assert X[-1] == pytest.approx(r.X["c"], rel=1e-14)
    # every point equals a solve at that population
    n = len(X) // 2
    if n > 0:
        rn = qm.mva(net.with_population(n))
        assert X[n] == pytest.approx(rn.X["c"], rel=1e-12)
        np.testing.assert_allclose(cur.queue_length[n], rn.station_queue_length[0], rtol=1e-10,
                                   atol=1e-13)


@settings(max_examples=40, deadline=None)
@given(networks(max_n=40, multi=True))
def test_bounds_bracket_exact_for_all_n(net):
    if all(s.kind == "delay" for s in net.stations):
        return
    cur = qm.mva(net, curve=True).curve
    ns = np.arange(1, len(cur.population))
    if len(ns) == 0:
        return
    df = qm.bounds(net).sweep(ns)
    X = cur.throughput[1:]
    R = cur.response_time[1:]
    tol = 1e-9
    for key in ("aba", "bjb"):
        assert np.all(df[f"X_{key}_lo"].to_numpy() <= X * (1 + tol)), key
        assert np.all(X <= df[f"X_{key}_hi"].to_numpy() * (1 + tol)), key
        assert np.all(df[f"R_{key}_lo"].to_numpy() <= R * (1 + tol) + 1e-12), key
        assert np.all(R <= df[f"R_{key}_hi"].to_numpy() * (1 + tol) + 1e-12), key


@settings(max_examples=30, deadline=None)
@given(networks(max_n=25, multi=False))
def test_single_server_as_one_server_ld_station(net):
    # a queue with c = 1 equals a load-dependent station with rate multipliers (1,)
    # and equals the positive-term convolution route (independent algorithm)
    alt = qm.Network(
        [qm.LoadDependent(s.name, s.service, rate_multipliers=(1.0,)) if s.kind == "queue"
         else s for s in net.stations], net.classes)
    a, b = qm.mva(net), mva_single(alt, algorithm="convolution")
    assert b.X["c"] == pytest.approx(a.X["c"], rel=1e-10)
    for s in net.stations:
        assert b.Q[s.name] == pytest.approx(a.Q[s.name], rel=1e-8, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(networks(max_n=20), st.integers(0, 5))
def test_station_with_c_at_least_N_is_a_delay(net, extra):
    N = net.classes[0].population
    k = 0
    s = net.stations[k]
    as_queue = qm.Network([qm.Queue(s.name, s.service, servers=N + extra + 1)]
                          + list(net.stations[1:]), net.classes)
    as_delay = qm.Network([qm.Delay(s.name, s.service)] + list(net.stations[1:]), net.classes)
    a = mva_single(as_queue, algorithm="convolution")  # no c >= N shortcut on this path
    b = qm.mva(as_delay)
    assert a.X["c"] == pytest.approx(b.X["c"], rel=1e-10)
    assert a.Q[s.name] == pytest.approx(b.Q[s.name], rel=1e-9, abs=1e-12)


def test_population_zero_is_defined():
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("b", 0.2, servers=2)],
                     [qm.Closed("c", 0, visits={"a": 1, "b": 2}, think_time=1)])
    r = qm.mva(net, curve=True)
    assert r.X["c"] == 0 and r.Q["a"] == 0 and r.U["b"] == 0
    assert r.R["c"] == pytest.approx(0.1 + 0.4)  # no-contention response time
    assert len(r.curve.population) == 1


def test_zero_demand_station_and_one_station():
    net = qm.Network([qm.Queue("a", 0.1), qm.Queue("idle", 0.0)],
                     [qm.Closed("c", 4, visits={"a": 1, "idle": 1})])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(10.0) and r.Q["idle"] == 0 and r.U["idle"] == 0
    one = qm.Network([qm.Queue("a", 0.5)], [qm.Closed("c", 3, visits={"a": 1})])
    assert qm.mva(one).X["c"] == pytest.approx(2.0)


def test_unbounded_throughput_is_an_error():
    net = qm.Network([qm.Queue("a", 0.0)], [qm.Closed("c", 3, visits={"a": 1})])
    with pytest.raises(InvalidValueError, match=r"class 'c': all demands and the think time are zero"):
        qm.mva(net)


def test_capacity_and_pools_rejected_by_product_form():
    net = qm.Network([qm.Queue("a", 0.1, capacity=2), qm.Queue("b", 0.1)],
                     [qm.Closed("c", 5, visits={"a": 1, "b": 1})])
    with pytest.raises(UnsupportedModelError,
                       match=r"station 'a': finite capacity 2 can bind \(population 5\)"):
        qm.mva(net)
    ok = qm.Network([qm.Queue("a", 0.1, capacity=5), qm.Queue("b", 0.1)],
                    [qm.Closed("c", 5, visits={"a": 1, "b": 1})])
    qm.mva(ok)  # capacity >= N can never bind
    with pytest.raises(UnsupportedModelError, match=r"algorithm='auto'"):
        mva_single(qm.Network([qm.Queue("a", 0.1, servers=2)],
                              [qm.Closed("c", 5, visits={"a": 1})]), algorithm="recursion")


def test_symbolic_network_rejected_by_numeric_solver():
    import sympy as sp

    net = qm.Network([qm.Queue("a", sp.Symbol("s", positive=True))],
                     [qm.Closed("c", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match=r"network has sympy symbols"):
        qm.mva(net)


# ---------------------------------------------------------------------------
# open networks
# ---------------------------------------------------------------------------


def test_open_jackson_hand_derived():
    # lambda = 2/s; cpu S = .1 visited 3 times (D = .3, rho = .6), disk D = .2
    # (rho = .4).  R = .3/.4 + .2/.6 = 0.75 + 0.33333 (Lazowska et al. 1984, sec. 6.2).
    net = qm.Network([qm.Queue("cpu", 0.1), qm.Queue("disk", 0.2)],
                     [qm.Open("web", 2.0, visits={"cpu": 3, "disk": 1})])
    r = qm.mva(net)
    assert r.R["web"] == pytest.approx(0.75 + 1 / 3, rel=1e-12)
    assert r.U["cpu"] == pytest.approx(0.6) and r.Q["disk"] == pytest.approx(0.4 / 0.6)
    assert r.X["cpu"] == pytest.approx(6.0)


def test_open_multiserver_is_mmc():
    from qmodels.analytic.queues import mmc

    net = qm.Network([qm.Queue("pool", 10.0, servers=4)],
                     [qm.Open("o", 0.35, visits={"pool": 1})])
    r = open_single(net)
    m = mmc(0.35, 10.0, 4)
    assert r.R["pool"] == pytest.approx(m.response_time, rel=1e-10)
    assert r.Q["pool"] == pytest.approx(m.queue_length, rel=1e-10)


def test_open_many_servers_is_finite():
    from qmodels.analytic.queues import mmc

    net = qm.Network([qm.Queue("pool", 1.0, servers=10_000)],
                     [qm.Open("o", 9_900.0, visits={"pool": 1})])
    r = open_single(net)
    assert r.Q["pool"] == pytest.approx(mmc(9_900.0, 1.0, 10_000).queue_length, rel=1e-8)


def test_open_unstable_names_station():
    net = qm.Network([qm.Queue("cpu", 0.1), qm.Queue("disk", 0.6)],
                     [qm.Open("web", 2.0, visits={"cpu": 1, "disk": 1})])
    with pytest.raises(UnstableError, match=r"station 'disk' is unstable: rho = lambda \* D = 1.2 >= 1"):
        qm.mva(net)
    with pytest.raises(UnstableError, match=r"station 'p' is unstable"):
        qm.mva(qm.Network([qm.Queue("p", 1.0, servers=2)],
                          [qm.Open("o", 2.5, visits={"p": 1})]))


def test_unit_rate_load_dependent_next_to_multiserver_reports_utilisation():
    # Regression (found by the CTMC cross-check): a load-dependent station whose
    # multipliers are all 1 is a single server, U = X D = 1 - P(empty), also
    # when another station sends the solve down the convolution path.
    net = qm.Network([qm.LoadDependent("ld", 0.2, rate_multipliers=(1, 1)),
                      qm.Queue("m", 0.3, servers=2)],
                     [qm.Closed("c", 4, visits={"ld": 1, "m": 1})])
    r = qm.mva(net)
    assert r.U["ld"] == pytest.approx(r.X["c"] * 0.2, rel=1e-12)
    assert r.U["ld"] > 0


def test_load_dependent_linear_rates_report_one_minus_p_empty():
    # a(i) = i (an infinite-server-like LD station) must still report
    # U = 1 - P(empty), computed here independently by rational convolution.
    N, D, Db = 3, Fraction(1, 2), Fraction(1, 4)
    f_ld = [D**j / math.factorial(j) for j in range(N + 1)]
    fb = [Db**j for j in range(N + 1)]
    G = [sum(f_ld[i] * fb[n - i] for i in range(n + 1)) for n in range(N + 1)]
    p_empty = fb[N] / G[N]
    net = qm.Network([qm.LoadDependent("ld", 0.5, rate_multipliers=(1, 2, 3)),
                      qm.Queue("b", 0.25)], [qm.Closed("c", N, visits={"ld": 1, "b": 1})])
    assert qm.mva(net).U["ld"] == pytest.approx(1 - float(p_empty), rel=1e-12)


def test_population_zero_load_dependent_lone_job_response():
    net = qm.Network([qm.LoadDependent("ld", 0.6, rate_multipliers=(2, 3))],
                     [qm.Closed("c", 0, visits={"ld": 1})])
    assert qm.mva(net).R["ld"] == pytest.approx(0.3)


def _two_station_ld_reference(mult, S_ld, S_q, N):
    """Exact Q at the load-dependent station of a two-station closed cycle,
    by enumerating the product-form distribution in 60-digit mpmath:
    p(j) ~ f(j) S_q^(N-j), f(j) = prod_{i<=j} S_ld / a(i) (Bolch et al.
    2006, eq. 8.13 with the complement a single queue)."""
    import mpmath

    mpmath.mp.dps = 60
    a = [mpmath.mpf(x) for x in mult]

    def f(j):
        out = mpmath.mpf(1)
        for i in range(1, j + 1):
            out *= mpmath.mpf(S_ld) / a[min(i, len(a)) - 1]
        return out

    w = [f(j) * mpmath.mpf(S_q) ** (N - j) for j in range(N + 1)]
    G = mpmath.fsum(w)
    return float(mpmath.fsum(j * w[j] for j in range(N + 1)) / G)


@pytest.mark.parametrize("mult", [(1, 1e-6, 1e-12), (1, 2, 3, 1e-200), (1, 1e-300),
                                  (1e-12, 1.0), (3, 1e-100, 5)])
def test_load_dependent_rates_near_zero_stay_exact(mult):
    # the audit's Q = -66.55, -inf and +inf: the head/tail split of the
    # arrival theorem must not subtract huge terms
    net = qm.Network([qm.LoadDependent("ld", 1.0, rate_multipliers=mult), qm.Queue("q", 0.5)],
                     [qm.Closed("c", 25, visits={"ld": 1, "q": 1})])
    r = qm.mva(net)
    ref = _two_station_ld_reference(mult, 1.0, 0.5, 25)
    assert r.Q["ld"] == pytest.approx(ref, rel=1e-10, abs=1e-12)
    assert 0 <= r.Q["ld"] <= 25 + 1e-9
    assert r.Q["ld"] + r.Q["q"] == pytest.approx(25, rel=1e-10)


def test_empty_population_class_response_time_honours_the_first_rate_multiplier():
    # N = 0: a lone job sees S/a(1) at a load-dependent station; the class
    # R is the sum over its visits, as the station R and convolution say
    net = qm.Network([qm.LoadDependent("ld", 1.0, rate_multipliers=(2,)), qm.Queue("q", 0.5)],
                     [qm.Closed("c", 0, visits={"ld": 1, "q": 1})])
    r = qm.mva(net)
    assert r.R["ld"] == pytest.approx(0.5)
    assert r.R["c"] == pytest.approx(1.0 / 2 + 0.5)
    assert r.R["c"] == pytest.approx(qm.convolution(net).R["c"])


def _two_server_chain(m, N):
    st = [qm.Queue(f"s{i}", 0.01 * (1 + i % 7), servers=2) for i in range(m)]
    return qm.Network(st, [qm.Closed("c", N, visits={s.name: 1 for s in st}, think_time=1.0)])


def test_complement_networks_from_prefix_and_suffix_equal_the_direct_ones(monkeypatch):
    # the O(M N^2) prefix/suffix route and the O(M^2 N L) direct route build the
    # same G_{-k}; force each and compare (and convolution as a third method)
    from qmodels.analytic import mva as mod

    split = qm.mva(_two_server_chain(60, 30))
    monkeypatch.setattr(mod, "_complement_costs", lambda N, L: (0.0, 1.0))
    direct = qm.mva(_two_server_chain(60, 30))
    assert split.X["c"] == pytest.approx(direct.X["c"], rel=1e-13)
    for k in ("s0", "s3", "s59"):
        assert split.Q[k] == pytest.approx(direct.Q[k], rel=1e-12)
        assert split.U[k] == pytest.approx(direct.U[k], rel=1e-12)
    assert split.X["c"] == pytest.approx(qm.convolution(_two_server_chain(60, 30)).X["c"],
                                         rel=1e-12)


def test_a_thousand_multi_server_stations_is_not_quadratic():
    # the audit's 1,000 two-server stations at N = 30 (did not finish in 120 s)
    net = _two_server_chain(1000, 30)
    r = qm.mva(net)
    D = net.demands[0]
    # the operational laws and the asymptotic bound hold
    assert sum(r.Q[s] for s in net.station_names) + r.X["c"] * 1.0 == pytest.approx(30)
    assert r.X["c"] <= 30 / (1.0 + D.sum()) * (1 + 1e-12) + 1e-12


@pytest.mark.parametrize("N", [2**63, 2**64, 10**23])
def test_population_beyond_what_exact_mva_can_do_is_refused_up_front(N):
    net = qm.Network([qm.Queue("a", 0.01), qm.Queue("b", 0.02)],
                     [qm.Closed("c", N, visits={"a": 1, "b": 1})])
    with pytest.raises(qm.ProblemTooLargeError, match=r"class 'c'.*bounds.*schweitzer.*sim"):
        qm.mva(net)


def test_multi_server_population_that_would_not_fit_in_memory_is_refused():
    # N = 10^9 at a multi-server station: arrays of 8 GB each, refused before allocating
    net = qm.Network([qm.Queue("a", 0.01, servers=4), qm.Queue("b", 0.02)],
                     [qm.Closed("c", 10**9, visits={"a": 1, "b": 1})])
    with pytest.raises(qm.ProblemTooLargeError, match="GiB"):
        qm.mva(net)


@pytest.mark.parametrize("d,N", [(5e-324, 2), (1.1e-308, 2), (3e-308, 100)])
def test_demands_beyond_the_float_range_are_refused_not_inf(d, N):
    # subnormal demands (and tiny ones whose N/D overflows) used to give X = inf
    net = qm.Network([qm.Delay("z", d)], [qm.Closed("c", N, visits={"z": 1})])
    for solver in (qm.mva, qm.convolution):
        with pytest.raises(InvalidValueError, match=r"class 'c'.*'z'"):
            solver(net)


def test_normalising_constant_out_of_range_names_the_stations():
    net = qm.Network([qm.Queue("fast", 1e-300, servers=2), qm.Queue("slow", 1e300)],
                     [qm.Closed("c", 5, visits={"fast": 1, "slow": 1})])
    try:
        r = qm.mva(net)
    except InvalidValueError as e:
        assert "'fast'" in str(e) and "'slow'" in str(e)
    else:  # or it is answered, with finite figures
        assert np.isfinite(r.X["c"]) and np.isfinite(r.Q["slow"])


# -- user audit: a non-exponential FCFS queue is not product form -------------

def _deterministic_pair(n=2, discipline="fcfs", dist=None):
    """Two stations of 0.05 s in a cycle, no think time.  With deterministic FCFS
    service and n = 2 the two jobs alternate without ever waiting (one at
    each station, both always busy), so X = 2 / 0.1 = 20 by hand, where the
    exponential model's MVA gives X(2) = 2 / (0.05 * 3) = 13.33."""
    d = dist if dist is not None else qm.Deterministic()
    return qm.Network([qm.Queue("cpu", 0.05, distribution=d, discipline=discipline),
                       qm.Queue("disk", 0.05, distribution=d, discipline=discipline)],
                      [qm.Closed("tx", n, routing={"cpu": {"disk": 1}, "disk": {"cpu": 1}})])


def test_product_form_solvers_refuse_a_non_exponential_fcfs_queue():
    """Exact MVA, convolution, Schweitzer, Linearizer, the open and mixed
    solvers and the decomposition used to answer a deterministic (or
    Erlang, hyperexponential) FCFS queue as if it were exponential: 13.33
    where the true X is 20 (by hand above; the simulator agrees).  They
    refuse it now, naming the station, as their assumptions say."""
    net = _deterministic_pair()
    for method in ("exact", "convolution", "schweitzer", "linearizer", "decomposition"):
        with pytest.raises(UnsupportedModelError, match="station 'cpu': FCFS with "
                                                        "Deterministic service"):
            qm.solve(net, method=method)
    s = qm.simulate(net, seed=1, horizon=200.0, replications=3, progress=False)
    # the simulator: 20 up to the jobs in progress at the horizon's edges
    assert s.X["tx"].mean == pytest.approx(20.0, rel=1e-3)
    opened = qm.Network([qm.Queue("q", 0.05, distribution=qm.Erlang(2))],
                        [qm.Open("o", 5.0, visits={"q": 1})])
    with pytest.raises(UnsupportedModelError, match="station 'q'"):
        qm.mva(opened)


def test_insensitive_and_exponential_shapes_stay_product_form():
    """PS is insensitive to the service shape (BCMP type 2), and an Erlang
    of one phase is the exponential: both keep the exponential answer,
    X(2) = 2 / (0.05 * 3) for two balanced stations (Reiser-Lavenberg by
    hand)."""
    ps = _deterministic_pair(discipline="ps")
    assert qm.mva(ps).X["tx"] == pytest.approx(2 / 0.15, rel=1e-12)
    e1 = _deterministic_pair(dist=qm.Erlang(1))
    assert qm.mva(e1).X["tx"] == pytest.approx(2 / 0.15, rel=1e-12)
    # a non-exponential FCFS station no class visits does not matter
    idle = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("spare", 0.05,
                                                      distribution=qm.Deterministic())],
                      [qm.Closed("tx", 2, visits={"cpu": 1, "spare": 0})])
    assert qm.mva(idle).X["tx"] == pytest.approx(2 / 0.1, rel=1e-12)


def test_batched_sweep_and_symbolic_mva_refuse_a_non_exponential_fcfs_queue():
    """The two other exact-MVA routes: a sweep's batched kernel and the
    symbolic MVA answered the deterministic cycle as exponential too
    (X(2) = 2/3 with unit services, where the jobs alternate without
    waiting: X = 1 by hand).  Both refuse it now, naming the station."""
    net = qm.Network([qm.Queue("cpu", 1, distribution=qm.Deterministic()), qm.Queue("disk", 1)],
                     [qm.Closed("tx", 2, routing={"cpu": {"disk": 1}, "disk": {"cpu": 1}})])
    with pytest.raises(UnsupportedModelError, match="station 'cpu'.*sweep|sweep.*station 'cpu'"):
        qm.sweep(net, {"tx.population": [1, 2]}, progress=False)
    with pytest.raises(UnsupportedModelError, match="station 'cpu': FCFS"):
        qm.mva_symbolic(net)
    with pytest.raises(UnsupportedModelError, match="station 'cpu': FCFS"):
        qm.solve(net, method="exact-symbolic")


def test_subnormal_multiserver_demand_next_to_a_delay_stays_finite():
    """A 2-server queue whose demand is subnormal (2.2e-308 s) beside a 2 s
    delay: the scaled delay once overflowed (delay / demand > 1e308) and the
    solve was refused as 'not finite'.  The queue is then never busy, so
    X = N / (Z + D_delay) = 3 / 2 exactly (found by the random profile of
    test_convolution's cross-check, which convolution passed)."""
    net = qm.Network([qm.Delay("s0", 2.0), qm.Queue("s1", 2.2250738585072014e-308, servers=2)],
                     [qm.Closed("c", 3, visits={"s0": 1.0, "s1": 1.0})])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(1.5, rel=1e-12)
    assert r.X["c"] == pytest.approx(qm.convolution(net).X["c"], rel=1e-12)
