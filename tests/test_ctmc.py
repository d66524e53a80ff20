"""Tests of the exact CTMC solver (qmodels.analytic.ctmc).

Reference values come from independent routes, each named where it is used:
exact MVA (product form), a brute-force product-form sum written here
(BCMP 1975), birth-death formulas (Kleinrock 1975, sec. 3.3-3.6), and small
chains whose generator is written out by hand in the test and solved with
numpy.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic.ctmc import ctmc, marginal
from qmodels.analytic.mva import mva
from qmodels.errors import InvalidValueError, UnknownNameError, UnsupportedModelError

TOL = 1e-9


def solve_generator(G):
    """Stationary vector of a hand-written generator (rows sum to zero):
    pi G = 0, sum pi = 1, by least squares on the stacked system."""
    n = G.shape[0]
    A = np.vstack([G.T, np.ones(n)])
    b = np.zeros(n + 1)
    b[-1] = 1.0
    pi, *_ = np.linalg.lstsq(A, b, rcond=None)
    return pi


def gen(n, rates):
    """Generator from a dict {(i, j): rate}."""
    G = np.zeros((n, n))
    for (i, j), v in rates.items():
        G[i, j] += v
        G[i, i] -= v
    return G


# ---------------------------------------------------------------------------
# product form: CTMC = exact MVA
# ---------------------------------------------------------------------------

station_st = st.one_of(
    st.tuples(st.just("delay"), st.floats(0.05, 2.0), st.just(1)),
    st.tuples(st.just("fcfs"), st.floats(0.05, 2.0), st.integers(1, 3)),
    st.tuples(st.just("ps"), st.floats(0.05, 2.0), st.integers(1, 2)),
    # (c = 1 gives multipliers all 1: the case that once exposed a U = 0 bug
    # in qmodels.analytic.mva next to a multi-server station)
    st.tuples(st.just("ld"), st.floats(0.05, 2.0), st.integers(1, 3)),
)


def _station(i, spec):
    kind, s, c = spec
    name = f"s{i}"
    if kind == "delay":
        return qm.Delay(name, s)
    if kind == "ld":
        return qm.LoadDependent(name, s, rate_multipliers=tuple(1 + 0.5 * j for j in range(c)))
    return qm.Queue(name, s, servers=c, discipline=kind)


@settings(deadline=None, max_examples=40)
@given(
    specs=st.lists(station_st, min_size=1, max_size=3),
    visits=st.lists(st.floats(0.2, 3.0), min_size=3, max_size=3),
    N=st.integers(1, 5),
    Z=st.sampled_from([0.0, 0.5, 2.0]),
)
def test_single_class_closed_equals_mva(specs, visits, N, Z):
    stations = [_station(i, sp) for i, sp in enumerate(specs)]
    v = {s.name: visits[i] for i, s in enumerate(stations)}
    net = qm.Network(stations, [qm.Closed("c", N, think_time=Z, visits=v)])
    r, m = ctmc(net), mva(net)
    assert r.method == "ctmc"
    assert r.X["c"] == pytest.approx(m.X["c"], rel=1e-8)
    assert r.R["c"] == pytest.approx(m.R["c"], rel=1e-8, abs=1e-12)
    for s in net.station_names:
        assert r.Q[s] == pytest.approx(m.Q[s], rel=1e-7, abs=1e-10)
        assert r.U[s] == pytest.approx(m.U[s], rel=1e-7, abs=1e-10)
        assert r.X[s] == pytest.approx(m.X[s], rel=1e-8)
    # population conservation: sum Q + X Z = N
    assert sum(r.Q.stations.values()) + r.X["c"] * Z == pytest.approx(N, rel=1e-9)
    assert r.info["residual"] < 1e-10


def test_routing_given_closed_equals_mva():
    # a central-server model with explicit routing (Lazowska et al. 1984, sec. 8.2 shape)
    net = qm.Network(
        [qm.Queue("cpu", 0.02), qm.Queue("d1", 0.03), qm.Queue("d2", 0.05, servers=2)],
        [qm.Closed("c", 6, think_time=0.3,
                   routing={"cpu": {"d1": 0.5, "d2": 0.3, "cpu": 0.2},
                            "d1": {"cpu": 1.0}, "d2": {"cpu": 1.0}})],
    )
    r, m = ctmc(net), mva(net)
    assert r.X["c"] == pytest.approx(m.X["c"], rel=1e-9)
    for s in net.station_names:
        assert r.Q[s] == pytest.approx(m.Q[s], rel=1e-8)


def test_open_jackson_equals_mva_with_small_truncation():
    net = qm.Network(
        [qm.Queue("a", 0.5), qm.Queue("b", 0.4, servers=2)],
        [qm.Open("o", 1.0, routing={"source": {"a": 1.0}, "a": {"b": 0.6, "sink": 0.4},
                                    "b": {"a": 0.2, "sink": 0.8}})],
    )
    r = ctmc(net, open_limit=60)
    m = mva(net)
    assert r.info["truncation_mass"] < 1e-9
    for s in net.station_names:
        assert r.Q[s] == pytest.approx(m.Q[s], rel=1e-6)
        assert r.U[s] == pytest.approx(m.U[s], rel=1e-6)
    assert r.X["o"] == pytest.approx(1.0, rel=1e-8)
    assert r.R["o"] == pytest.approx(m.R["o"], rel=1e-6)


def test_open_truncation_mass_is_reported_and_warned():
    # M/M/1 at rho = 0.8 truncated at 10 jobs: P(n = 10) of the truncated
    # geometric = (1 - rho) rho^10 / (1 - rho^11)  (Kleinrock 1975, eq. 3.44)
    net = qm.Network([qm.Queue("q", 0.8)], [qm.Open("o", 1.0, visits={"q": 1})])
    with pytest.warns(qm.NumericalWarning, match="truncated at 10 holds probability"):
        r = ctmc(net, open_limit=10)
    rho = 0.8
    assert r.info["truncation_mass"] == pytest.approx((1 - rho) * rho**10 / (1 - rho**11),
                                                      rel=1e-9)
    assert r.info["open_limit"] == 10


def test_default_truncation_grows_until_the_answer_is_exact():
    # M/M/1 at rho = 0.99: Q = rho / (1 - rho) = 99 (Kleinrock 1975, eq.
    # 3.24).  A fixed bound of 40 jobs said 18.6 (with a warning); the
    # default now doubles the bound until the probability at it is <= 1e-9
    import warnings

    net = qm.Network([qm.Queue("q", 0.99)], [qm.Open("o", 1.0, visits={"q": 1})])
    with warnings.catch_warnings():
        warnings.simplefilter("error", qm.NumericalWarning)
        r = ctmc(net)
    assert r.Q["q"] == pytest.approx(0.99 / 0.01, rel=1e-8)
    assert r.R["o"] == pytest.approx(0.99 / 0.01, rel=1e-8)  # R = S / (1 - rho) = 99 s
    assert r.info["open_limit"] > 40 and r.info["truncation_mass"] <= 1e-9


def test_default_truncation_stops_growing_at_its_state_budget(monkeypatch):
    from qmodels.analytic import ctmc as ctmc_mod

    # two stations at rho = 0.99: the chain grows as bound^2; with a budget
    # of 1,000 states the bound stays at 40 (861 states), and says so
    monkeypatch.setattr(ctmc_mod, "GROW_STATES", 1000)
    net = qm.Network([qm.Queue("a", 0.99), qm.Queue("b", 0.99)],
                     [qm.Open("o", 1.0, visits={"a": 1, "b": 1})])
    with pytest.warns(qm.NumericalWarning, match="truncated at 40 holds probability"):
        r = ctmc(net)
    assert r.info["open_limit"] == 40 and r.info["states"] == 861
    assert any("stopped growing at 40" in n and "3444 states" in n for n in r.notes)


def _product_form_multiclass(D, kinds, pops, Z):
    """Brute-force BCMP product form for closed classes (Baskett et al. 1975,
    Theorem 1; Lazowska et al. 1984, sec. 8.2): single-server PS / FCFS with
    class-independent service, f_k(n) = n! prod_r D_rk^n_r / n_r!; delay,
    f_k(n) = prod_r D_rk^n_r / n_r!; think time as a delay.  Returns class
    throughputs X_r = G(N - e_r) / G(N) and queue lengths Q_rk."""
    C, K = D.shape

    def G(pop):
        total = 0.0
        Q = np.zeros((C, K))
        # distribute each class's population over K stations + think
        per_class = []
        for r in range(C):
            per_class.append([c for c in itertools.product(range(pop[r] + 1), repeat=K + 1)
                              if sum(c) == pop[r]])
        for combo in itertools.product(*per_class):
            w = 1.0
            for k in range(K + 1):
                ns = [combo[r][k] for r in range(C)]
                if k == K:
                    dk = Z
                    kind = "delay"
                else:
                    dk = D[:, k]
                    kind = kinds[k]
                if kind == "delay":
                    for r in range(C):
                        w *= dk[r] ** ns[r] / math.factorial(ns[r])
                else:
                    w *= math.factorial(sum(ns))
                    for r in range(C):
                        w *= dk[r] ** ns[r] / math.factorial(ns[r])
            total += w
            for r in range(C):
                for k in range(K):
                    Q[r, k] += w * combo[r][k]
        return total, Q / total

    g, Q = G(pops)
    X = []
    for r in range(C):
        less = list(pops)
        less[r] -= 1
        X.append(G(less)[0] / g)
    return np.array(X), Q


@pytest.mark.parametrize("kinds", [("fcfs", "ps"), ("ps", "delay"), ("fcfs", "fcfs")])
def test_multiclass_equals_brute_force_product_form(kinds):
    # FCFS stations get class-independent service (BCMP type 1); the CTMC
    # keeps the queue order there (two classes), the product form does not
    # need to.
    S = {"a": (0.3, 0.3), "b": (0.5, 0.2)}
    if kinds[1] == "fcfs":
        S["b"] = (0.4, 0.4)
    V = {"x": {"a": 1.0, "b": 2.0}, "y": {"a": 1.5, "b": 0.5}}
    stations = [
        qm.Delay(n, 1.0) if k == "delay" else qm.Queue(n, 1.0, discipline=k)
        for n, k in zip(("a", "b"), kinds, strict=True)
    ]
    Z = (0.4, 1.0)
    classes = [
        qm.Closed(c, p, think_time=z, visits=V[c], service={st_: S[st_][i] for st_ in "ab"})
        for i, (c, p, z) in enumerate(zip(("x", "y"), (3, 2), Z, strict=True))
    ]
    net = qm.Network(stations, classes)
    r = ctmc(net)
    # brute force, one think "station" per class: put each class's Z in
    # its own delay column (a delay shared by classes is still a delay)
    D = np.array([[V[c][s] * S[s][i] for s in "ab"] for i, c in enumerate(("x", "y"))])
    D3 = np.hstack([D, np.diag(Z)])
    X, Q = _product_form_multiclass(D3, list(kinds) + ["delay", "delay"], [3, 2], np.zeros(2))
    for i, c in enumerate(("x", "y")):
        assert r.X[c] == pytest.approx(X[i], rel=1e-9)
        for k, s in enumerate("ab"):
            assert r.Q[s, c] == pytest.approx(Q[i, k], rel=1e-8)


def test_fcfs_class_dependent_service_keeps_the_order():
    # Two classes, one job each, think times ZA, ZB, one FCFS server with
    # SA != SB (not product form).  States by hand: 0 empty, 1 [A], 2 [B],
    # 3 [A,B] (A in service), 4 [B,A].
    ZA, ZB, SA, SB = 1.0, 2.0, 0.5, 1.5
    G = gen(5, {(0, 1): 1 / ZA, (0, 2): 1 / ZB, (1, 0): 1 / SA, (1, 3): 1 / ZB,
                (2, 0): 1 / SB, (2, 4): 1 / ZA, (3, 2): 1 / SA, (4, 1): 1 / SB})
    pi = solve_generator(G)
    XA = (pi[1] + pi[3]) / SA
    XB = (pi[2] + pi[4]) / SB
    net = qm.Network(
        [qm.Queue("q", 1.0)],
        [qm.Closed("A", 1, think_time=ZA, routing={"q": {"q": 1}}, service={"q": SA}),
         qm.Closed("B", 1, think_time=ZB, routing={"q": {"q": 1}}, service={"q": SB})],
    )
    r = ctmc(net)
    assert r.X["A"] == pytest.approx(XA, rel=1e-10)
    assert r.X["B"] == pytest.approx(XB, rel=1e-10)
    assert r.info["states"] == 5
    assert r.U["q"] == pytest.approx(XA * SA + XB * SB, rel=1e-10)


# ---------------------------------------------------------------------------
# single stations: birth-death formulas
# ---------------------------------------------------------------------------

def _birth_death(lam, mu, c, K):
    """M/M/c/K: p_n proportional to prod_{i<=n} lam / (min(i, c) mu)
    (Kleinrock 1975, sec. 3.6; Gross & Harris, 4th ed., sec. 2.5)."""
    w = [1.0]
    for n in range(1, K + 1):
        w.append(w[-1] * lam / (min(n, c) * mu))
    p = np.array(w) / sum(w)
    return p


@settings(deadline=None, max_examples=30)
@given(lam=st.floats(0.1, 5.0), S=st.floats(0.1, 2.0), c=st.integers(1, 4),
       extra=st.integers(0, 6))
def test_mmck_matches_birth_death(lam, S, c, extra):
    K = c + extra
    net = qm.Network(
        [qm.Queue("q", S, servers=c, capacity=K)],
        [qm.Open("o", lam, routing={"source": {"q": 1.0}, "q": {"sink": 1.0}})],
    )
    r = ctmc(net)
    p = _birth_death(lam, 1 / S, c, K)
    n = np.arange(K + 1)
    assert r.info["truncation_mass"] == 0.0
    assert r.info["loss"]["o"] == pytest.approx(p[K], rel=1e-9, abs=1e-14)
    assert r.X["o"] == pytest.approx(lam * (1 - p[K]), rel=1e-9)
    assert r.Q["q"] == pytest.approx(float(n @ p), rel=1e-9)
    assert r.U["q"] == pytest.approx(lam * (1 - p[K]) * S / c, rel=1e-9)
    assert np.allclose(marginal(r, "q"), p, atol=1e-12)


def test_mm1k_against_queues_module():
    from qmodels import queues

    net = qm.Network([qm.Queue("q", 1.0, capacity=5)],
                     [qm.Open("o", 0.8, routing={"source": {"q": 1}, "q": {"sink": 1}})])
    r = ctmc(net)
    ref = queues.mm1k(0.8, 1.0, 5)
    assert r.Q["q"] == pytest.approx(ref.Q, rel=1e-10)
    assert r.R["q"] == pytest.approx(ref.R, rel=1e-10)
    assert r.X["o"] == pytest.approx(ref.X, rel=1e-10)


# ---------------------------------------------------------------------------
# blocking after service: hand-derived chains
# ---------------------------------------------------------------------------

def test_closed_tandem_blocking_by_hand():
    # a (S = 1) -> b (S = 0.5, capacity 1) -> a, N = 3.  States:
    #   0: a = 3, b = 0;  1: a = 2, b = 1;  2: a = 2 with its server blocked, b = 1.
    # 0 -> 1 at 1; 1 -> 0 at 2; 1 -> 2 at 1; 2 -> 1 at 2 (b's job goes to a,
    # a's blocked job enters b).  Balance: pi = (4, 2, 1) / 7.
    net = qm.Network(
        [qm.Queue("a", 1.0), qm.Queue("b", 0.5, capacity=1)],
        [qm.Closed("c", 3, routing={"a": {"b": 1}, "b": {"a": 1}})],
    )
    r = ctmc(net)
    assert r.info["states"] == 3
    assert r.X["c"] == pytest.approx(2 * 3 / 7, rel=1e-12)
    assert r.info["blocked"]["a"] == pytest.approx(1 / 7, rel=1e-12)
    # U counts servers held: a's server is busy or blocked whenever a has jobs
    assert r.U["a"] == pytest.approx(1.0, rel=1e-12)
    assert r.U["b"] == pytest.approx(3 / 7, rel=1e-12)
    assert r.Q["a"] == pytest.approx((3 * 4 + 2 * 2 + 2 * 1) / 7, rel=1e-12)
    assert np.allclose(marginal(r, "b"), [4 / 7, 3 / 7])


def test_open_tandem_blocking_and_loss_by_hand():
    # Poisson lam -> s1 (capacity 1) -> s2 (capacity 1) -> out.  States
    # (n1, n2): 0 (0,0); 1 (1,0); 2 (0,1); 3 (1,1); 4 (1 blocked, 1).
    lam, m1, m2 = 1.2, 2.0, 1.5
    G = gen(5, {(0, 1): lam, (1, 2): m1, (2, 3): lam, (2, 0): m2, (3, 4): m1,
                (3, 1): m2, (4, 2): m2})
    pi = solve_generator(G)
    X = lam * (pi[0] + pi[2])            # accepted arrivals
    loss = pi[1] + pi[3] + pi[4]         # PASTA: arrivals find s1 occupied
    net = qm.Network(
        [qm.Queue("s1", 1 / m1, capacity=1), qm.Queue("s2", 1 / m2, capacity=1)],
        [qm.Open("o", lam, routing={"source": {"s1": 1}, "s1": {"s2": 1}, "s2": {"sink": 1}})],
    )
    r = ctmc(net)
    assert r.info["states"] == 5
    assert r.X["o"] == pytest.approx(X, rel=1e-10)
    assert r.info["loss"]["o"] == pytest.approx(loss, rel=1e-10)
    assert r.info["blocked"]["s1"] == pytest.approx(pi[4], rel=1e-10)
    assert r.Q["s1"] == pytest.approx(pi[1] + pi[3] + pi[4], rel=1e-10)
    assert r.R["o"] == pytest.approx((pi[1] + pi[2] + 2 * pi[3] + 2 * pi[4]) / X, rel=1e-10)


def test_think_stage_blocked_on_full_reference():
    # Z = 1 think, then the reference station q (S = 1, capacity 1), N = 2.
    # States: 0: think 2; 1: think 1, q 1; 2: think 1 done and blocked, q 1.
    # 0 -> 1 at 2/Z; 1 -> 0 at 1/S; 1 -> 2 at 1/Z; 2 -> 1 at 1/S.
    G = gen(3, {(0, 1): 2.0, (1, 0): 1.0, (1, 2): 1.0, (2, 1): 1.0})
    pi = solve_generator(G)
    net = qm.Network([qm.Queue("q", 1.0, capacity=1)],
                     [qm.Closed("c", 2, think_time=1.0, routing={"q": {"q": 1}})])
    r = ctmc(net)
    X = pi[1] + pi[2]
    assert r.X["c"] == pytest.approx(X, rel=1e-10)
    assert r.R["c"] == pytest.approx(2 / X - 1.0, rel=1e-10)


# ---------------------------------------------------------------------------
# token pools
# ---------------------------------------------------------------------------

@settings(deadline=None, max_examples=15)
@given(N=st.integers(1, 4), extra=st.integers(0, 2), S=st.lists(st.floats(0.1, 2.0),
                                                                  min_size=3, max_size=3))
def test_pool_with_enough_tokens_changes_nothing(N, extra, S):
    route = {"a": {"b": 1}, "b": {"d": 1}, "d": {"a": 1}}
    st_ = [qm.Queue("a", S[0]), qm.Queue("b", S[1]), qm.Queue("d", S[2], servers=2)]
    plain = qm.Network(st_, [qm.Closed("c", N, routing=route)])
    pooled = qm.Network(st_, [qm.Closed("c", N, routing=route)],
                        pools=[qm.TokenPool("buf", N + extra, "b", "d")])
    r0, r1 = mva(plain), ctmc(pooled)
    assert r1.X["c"] == pytest.approx(r0.X["c"], rel=1e-9)
    for s in "abd":
        assert r1.Q[s] == pytest.approx(r0.Q[s], rel=1e-8, abs=1e-12)
    assert r1.info["pools"]["buf"]["waiting"] == pytest.approx(0.0, abs=1e-12)


def test_single_token_pool_by_hand():
    # a -> b -> d -> a, N = 2, one token taken before b, given back after d.
    # A job waiting for the token has left a and holds no server.  States:
    # 0: a = 2; 1: a = 1, b = 1; 2: a = 0, 1 waiting, b = 1;
    # 3: a = 1, d = 1; 4: a = 0, 1 waiting, d = 1.
    ma, mb, md = 1.0, 2.0, 1.5
    G = gen(5, {(0, 1): ma, (1, 2): ma, (1, 3): mb, (2, 4): mb, (3, 0): md, (3, 4): ma,
                (4, 1): md})
    pi = solve_generator(G)
    X = md * (pi[3] + pi[4])
    net = qm.Network(
        [qm.Queue("a", 1 / ma), qm.Queue("b", 1 / mb), qm.Queue("d", 1 / md)],
        [qm.Closed("c", 2, routing={"a": {"b": 1}, "b": {"d": 1}, "d": {"a": 1}})],
        pools=[qm.TokenPool("port", 1, "b", "d")],
    )
    r = ctmc(net)
    assert r.info["states"] == 5
    assert r.X["c"] == pytest.approx(X, rel=1e-10)
    assert r.info["pools"]["port"]["waiting"] == pytest.approx(pi[2] + pi[4], rel=1e-10)
    assert r.info["pools"]["port"]["held"] == pytest.approx(1 - pi[0], rel=1e-10)
    assert r.Q["a"] == pytest.approx(2 * pi[0] + pi[1] + pi[3], rel=1e-10)
    # class R counts the token wait; station Qs do not
    assert r.R["c"] == pytest.approx(2 / X, rel=1e-10)
    assert sum(r.Q.stations.values()) + r.info["pools"]["port"]["waiting"] == pytest.approx(2)


def test_pool_holder_blocked_keeps_token():
    # The token is given back when the job *leaves* the release station;
    # a job blocked after service at d keeps it.  Chain by hand:
    # a (S=1) -> d (S=1, pool acquire = release = d, 1 token) -> e (cap 1, S=1) -> a.
    # N = 2.  Check against the same model with the pool released after e
    # replaced by its by-hand meaning: with cap(e) = 1 and one token, at most
    # one job is in {d} and the job blocked at d holds it.  States:
    # 0: a=2; 1: a=1,d=1; 2: a=0,q=1,d=1; 3: a=1,e=1; 4: a=0,d=1,e=1;
    # 5: a=0, d=1 blocked, e=1.
    G = gen(6, {(0, 1): 1, (1, 2): 1, (1, 3): 1, (2, 4): 1, (3, 0): 1, (3, 4): 1,
                (4, 5): 1, (4, 1): 1, (5, 3): 1})
    pi = solve_generator(G)
    net = qm.Network(
        [qm.Queue("a", 1.0), qm.Queue("d", 1.0), qm.Queue("e", 1.0, capacity=1)],
        [qm.Closed("c", 2, routing={"a": {"d": 1}, "d": {"e": 1}, "e": {"a": 1}})],
        pools=[qm.TokenPool("p", 1, "d", "d")],
    )
    r = ctmc(net)
    assert r.info["states"] == 6
    assert r.X["c"] == pytest.approx(pi[3] + pi[4] + pi[5], rel=1e-10)
    assert r.info["pools"]["p"]["held"] == pytest.approx(pi[1] + pi[2] + pi[4] + pi[5])


def test_open_class_with_pool():
    # M/M/1 behind a pool of 2 tokens acquired and released at the same
    # station: the station never holds more than 2, the rest wait in line:
    # in total still M/M/1 (single server, FIFO), so the number in system
    # (station + line) is geometric (Kleinrock 1975, eq. 3.44).
    net = qm.Network([qm.Queue("q", 0.5)],
                     [qm.Open("o", 1.0, routing={"source": {"q": 1}, "q": {"sink": 1}})],
                     pools=[qm.TokenPool("p", 2, "q", "q")])
    r = ctmc(net, open_limit=80)
    rho = 0.5
    total = r.Q["q"] + r.info["pools"]["p"]["waiting"]
    assert total == pytest.approx(rho / (1 - rho), rel=1e-9)
    assert r.R["o"] == pytest.approx(0.5 / (1 - rho), rel=1e-9)
    assert marginal(r, "q")[2] == pytest.approx(rho**2, rel=1e-9)  # P(n >= 2)


# ---------------------------------------------------------------------------
# registry and errors
# ---------------------------------------------------------------------------

def test_registered_as_solve_method():
    net = qm.Network([qm.Queue("q", 0.5)], [qm.Closed("c", 2, visits={"q": 1}, think_time=1)])
    r = qm.solve(net, method="ctmc")
    assert r.method == "ctmc"
    assert r.X["c"] == pytest.approx(mva(net).X["c"], rel=1e-12)


def test_error_blocking_at_a_preemptive_station():
    # (non-exponential service and arrivals are modelled now: tests/test_ctmc_ph.py)
    net = qm.Network([qm.Queue("a", 0.5, discipline="prio-pr"), qm.Queue("b", 0.4, capacity=1)],
                     [qm.Closed("hi", 1, routing={"a": {"b": 1}, "b": {"a": 1}}, priority=0),
                      qm.Closed("lo", 2, routing={"a": {"b": 1}, "b": {"a": 1}}, priority=1)])
    with pytest.raises(UnsupportedModelError,
                       match="station 'a' is preemptive .*next station 'b' has capacity 1"):
        ctmc(net)


def test_error_too_many_states():
    net = qm.Network([qm.Queue(f"s{i}", 0.1) for i in range(4)],
                     [qm.Closed("c", 30, visits={f"s{i}": 1 for i in range(4)})])
    with pytest.raises(UnsupportedModelError, match="more than max_states = 1000 states"):
        ctmc(net, max_states=1000)


def _no_build(monkeypatch):
    """Make building any state fail the test: a refusal must come first."""
    from qmodels.analytic import _ctmc_chain as ctmc_mod

    def fail(*args, **kwargs):
        raise AssertionError("a state was built before the size check refused")

    monkeypatch.setattr(ctmc_mod._Chain, "setup", fail)
    monkeypatch.setattr(ctmc_mod._Chain, "build", fail)


def test_huge_state_space_refused_before_building(monkeypatch):
    # 3 classes of 60 jobs over 8 FCFS queues: C(67, 7)^3 ~ 6.6e26 placements
    # of the jobs alone; the builder would need hours.  The count is made
    # first, so no state is ever built (setup/build patched to fail).
    _no_build(monkeypatch)
    net = qm.Network([qm.Queue(f"s{i}", 0.1) for i in range(8)],
                     [qm.Closed(f"c{j}", 60, visits={f"s{i}": 1 for i in range(8)})
                      for j in range(3)])
    n = math.comb(67, 7) ** 3
    with pytest.raises(UnsupportedModelError,
                       match=rf"at least {re.escape(f'{n:.3g}')} .* c0=60, c1=60, c2=60 .*"
                             r"more than max_states = 200000 states"):
        ctmc(net)


def test_refusal_names_the_exact_count_and_the_limit(monkeypatch):
    # one class of 30 jobs over 4 stations: C(33, 3) = 5456 placements
    _no_build(monkeypatch)
    net = qm.Network([qm.Queue(f"s{i}", 0.1) for i in range(4)],
                     [qm.Closed("c", 30, visits={f"s{i}": 1 for i in range(4)})])
    with pytest.raises(UnsupportedModelError,
                       match="at least 5456 states .*more than max_states = 5455 states"):
        ctmc(net, max_states=5455)


def test_placement_count_is_exact_for_ps_and_a_lower_bound_for_fcfs():
    from qmodels.analytic._ctmc_spec import _placement_lower_bound, _Spec

    # PS stations keep no order: a state is exactly a placement.  Class a:
    # 4 jobs over 3 stations + think stage, C(7, 3) = 35; class b: 3 jobs
    # over 2 stations, C(4, 1) = 4; 35 * 4 = 140 states, built by the BFS.
    st_ = [qm.Queue(f"s{i}", 0.1 * (i + 1), discipline="ps") for i in range(3)]
    cl = [qm.Closed("a", 4, visits={f"s{i}": 1 for i in range(3)}, think_time=1.0),
          qm.Closed("b", 3, visits={"s0": 1, "s1": 2})]
    net = qm.Network(st_, cl)
    assert _placement_lower_bound(_Spec(net, None)) == 140
    assert ctmc(net, max_states=140).info["states"] == 140
    # FCFS stations that keep the queue order have more states than placements
    fc = qm.Network([qm.Queue(f"s{i}", 0.1 * (i + 1)) for i in range(3)], cl)
    states = ctmc(fc).info["states"]
    assert _placement_lower_bound(_Spec(fc, None)) == 140 < states
    # explicit routing a -> b -> a, no think time, FCFS with one class (no
    # order to keep): exactly the 3 placements of 2 jobs over {a, b}
    cyc = qm.Network([qm.Queue("a", 0.2), qm.Queue("b", 0.3), qm.Queue("d", 0.1)],
                     [qm.Closed("c", 2, routing={"a": {"b": 1}, "b": {"a": 1}}),
                      qm.Closed("o", 0, visits={"d": 1})])
    assert _placement_lower_bound(_Spec(cyc, None)) == 3 == ctmc(cyc).info["states"]


def test_no_up_front_count_with_blocking_or_pools():
    from qmodels.analytic._ctmc_spec import _placement_lower_bound, _Spec

    # a capacity that can bind or a pool on a closed class: the placement
    # argument does not hold, the builder counts (its own message)
    blk = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 0.5, capacity=1)],
                     [qm.Closed("c", 3, routing={"a": {"b": 1}, "b": {"a": 1}})])
    assert _placement_lower_bound(_Spec(blk, None)) is None
    with pytest.raises(UnsupportedModelError, match="reached 3 and still growing"):
        ctmc(blk, max_states=2)
    pool = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 0.5), qm.Queue("d", 0.7)],
                      [qm.Closed("c", 2, routing={"a": {"b": 1}, "b": {"d": 1},
                                                  "d": {"a": 1}})],
                      pools=[qm.TokenPool("port", 1, "b", "d")])
    assert _placement_lower_bound(_Spec(pool, None)) is None


def test_error_bad_max_states_and_open_limit():
    net = qm.Network([qm.Queue("q", 0.5)], [qm.Open("o", 1.0, visits={"q": 1})])
    with pytest.raises(InvalidValueError, match="max_states must be an integer >= 1, got 0"):
        ctmc(net, max_states=0)
    with pytest.raises(InvalidValueError, match="open_limit must be an integer >= 1, got 2.5"):
        ctmc(net, open_limit=2.5)


def test_error_capacity_needs_routing():
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0, capacity=1)],
                     [qm.Closed("tx", 3, visits={"a": 1, "b": 1})])
    with pytest.raises(UnsupportedModelError,
                       match="class 'tx': meets finite capacity at 'b'.*explicit routing"):
        ctmc(net)


def test_capacity_that_cannot_bind_needs_no_routing():
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0, capacity=5)],
                     [qm.Closed("tx", 3, visits={"a": 1, "b": 1})])
    assert ctmc(net).X["tx"] == pytest.approx(mva(net).X["tx"], rel=1e-12)


def test_error_pool_needs_routing():
    # a pool held over two stations without a path: the order is unknown
    # (a pool over one station, or one with a path, is accepted)
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                     [qm.Closed("tx", 3, visits={"a": 1, "b": 1})],
                     pools=[qm.TokenPool("buf", 1, "a", "b")])
    with pytest.raises(UnsupportedModelError, match="class 'tx': meets a token pool"):
        ctmc(net)


def test_error_pool_acquire_with_capacity():
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0, capacity=1)],
                     [qm.Closed("tx", 3, routing={"a": {"b": 1}, "b": {"a": 1}})],
                     pools=[qm.TokenPool("buf", 1, "b", "b")])
    with pytest.raises(UnsupportedModelError,
                       match="token pool 'buf': its acquire station 'b' has a finite capacity 1"):
        ctmc(net)


def test_error_two_pools_one_acquire_station():
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                     [qm.Closed("tx", 3, routing={"a": {"b": 1}, "b": {"a": 1}})],
                     pools=[qm.TokenPool("p1", 1, "b", "b"), qm.TokenPool("p2", 1, "b", "a")])
    with pytest.raises(UnsupportedModelError, match="station 'b' acquires two pools"):
        ctmc(net)


def test_error_blocking_at_load_dependent_station():
    net = qm.Network([qm.LoadDependent("raid", 1.0, rate_multipliers=(1, 1.5)),
                      qm.Queue("b", 1.0, capacity=1)],
                     [qm.Closed("tx", 3, routing={"raid": {"b": 1}, "b": {"raid": 1}})])
    with pytest.raises(UnsupportedModelError,
                       match="station 'raid' is load-dependent.*'b' has capacity 1"):
        ctmc(net)


def test_error_blocking_deadlock():
    # two single-room stations swapping jobs with N = 2: each full station's
    # job is blocked on the other -> no way out.
    net = qm.Network([qm.Queue("a", 1.0, capacity=1), qm.Queue("b", 1.0, capacity=1)],
                     [qm.Closed("tx", 2, routing={"a": {"b": 1}, "b": {"a": 1}})])
    with pytest.raises(UnsupportedModelError, match="deadlock"):
        ctmc(net)


def test_error_population_does_not_fit():
    net = qm.Network([qm.Queue("a", 1.0, capacity=1)],
                     [qm.Closed("tx", 2, routing={"a": {"a": 1}})])
    with pytest.raises(UnsupportedModelError, match="class 'tx': population 2 does not fit"):
        ctmc(net)


def test_error_symbolic():
    import sympy as sp

    s = sp.Symbol("s", positive=True)
    net = qm.Network([qm.Queue("a", s)], [qm.Closed("tx", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="ctmc is numeric"):
        ctmc(net)


def test_error_zero_service_time():
    net = qm.Network([qm.Queue("a", 0.0), qm.Queue("b", 1.0)],
                     [qm.Closed("tx", 2, visits={"a": 1, "b": 1})])
    with pytest.raises(UnsupportedModelError,
                       match="class 'tx' at station 'a': service time 0.0 is zero"):
        ctmc(net)


def test_marginal_errors():
    net = qm.Network([qm.Queue("a", 1.0)], [qm.Closed("tx", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="come from a ctmc or convolution result, got method 'exact'"):
        marginal(mva(net), "a")
    with pytest.raises(UnknownNameError, match="unknown station 'zz'"):
        marginal(ctmc(net), "zz")


def test_population_zero():
    net = qm.Network([qm.Queue("a", 1.0)], [qm.Closed("tx", 0, visits={"a": 1})])
    r = ctmc(net)
    assert r.X["tx"] == 0.0
    assert r.Q["a"] == 0.0
    assert r.R["tx"] == pytest.approx(1.0)


def test_open_job_leaving_with_a_token_gives_it_back():
    # the token is taken before s1 and released at s2, but half the jobs
    # leave from s1: they give the token back at the end of their route.
    # With 1 token this is one M/M/1 server (the token) in front of the
    # mixed service: mean 1/m1 + 0.5/m2.  Jobs in s1 or s2: at most one, so
    # P(token held) = lam * (S1 + 0.5 S2) (utilisation law, Little).
    lam, S1, S2 = 0.5, 0.4, 0.6
    net = qm.Network(
        [qm.Queue("s1", S1), qm.Queue("s2", S2)],
        [qm.Open("o", lam, routing={"source": {"s1": 1}, "s1": {"s2": 0.5, "sink": 0.5},
                                    "s2": {"sink": 1}})],
        pools=[qm.TokenPool("t", 1, "s1", "s2")],
    )
    r = ctmc(net, open_limit=60)
    assert r.info["pools"]["t"]["held"] == pytest.approx(lam * (S1 + 0.5 * S2), rel=1e-9)
    assert r.X["o"] == pytest.approx(lam, rel=1e-9)


def _bd_rates(n, up, down):
    """Off-diagonal rates of a birth-death chain on 0..n-1."""
    rows = list(range(n - 1)) + list(range(1, n))
    cols = list(range(1, n)) + list(range(n - 1))
    vals = [up] * (n - 1) + [down] * (n - 1)
    return rows, cols, vals


@pytest.mark.parametrize("up,down,n", [(0.5, 1.0, 60), (1e3, 1.0, 120)])
def test_stationary_vector_of_a_birth_death_chain(up, down, n):
    # pi_k proportional to (up/down)^k (Kleinrock 1975, eq. 3.11), normalised
    # in log space.  The fast solve pins pi_0 = 1; where state 0 is
    # improbable (1e-357 of the mass at up/down = 1000) it is not accurate,
    # says so (None), and the row-of-ones solve answers instead
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    from qmodels.analytic.ctmc import _pinned_solve, _stationary

    rows, cols, vals = _bd_rates(n, up, down)
    logw = np.arange(n) * math.log(up / down)
    ref = np.exp(logw - logw.max())
    ref /= ref.sum()
    pi, resid = _stationary(n, rows, cols, vals, str)
    np.testing.assert_allclose(pi, ref, rtol=1e-9, atol=1e-300)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    Q = (A - sp.diags(np.asarray(A.sum(axis=1)).ravel())).tocsc()
    pinned = _pinned_solve(Q, spsolve)
    if up < down:
        np.testing.assert_allclose(pinned, ref, rtol=1e-9)
    else:
        assert pinned is None


def test_open_chains_past_the_budget_are_refused_before_building():
    # the open part of the lower bound: up to L open jobs over the m stations
    # they reach give C(L + m, m) placements, all reachable without
    # capacities; a 2-station tandem at L = 3 has exactly those 10 states
    import math

    tandem = qm.Network([qm.Queue("a", 0.2), qm.Queue("b", 0.3)],
                        [qm.Open("o", 1.0, route=["a", "b"])])
    r = qm.ctmc(tandem, open_limit=3)
    assert r.info["states"] == math.comb(3 + 2, 2)
    # twelve stations at the default bound (40): C(52, 12) ~ 2e11 states,
    # refused by counting, not by building 50,000 states first
    names = [f"s{i}" for i in range(12)]
    long = qm.Network([qm.Queue(n, 0.01) for n in names], [qm.Open("o", 1.0, route=names)])
    with pytest.raises(qm.ProblemTooLargeError, match="open jobs over the stations"):
        qm.ctmc(long, max_states=50_000)


def test_a_starved_priority_level_is_named_not_called_a_deadlock():
    # one prio queue, the high level (c1, two jobs) returns to it at once, so
    # a c1 job always waits when one finishes and c0 never gets the server:
    # the chain's state with c0 waiting has no way out; neither the CTMC nor
    # the priority method may answer (X of c0 is 0, its R infinite), and the
    # refusal says why
    net = qm.Network([qm.Queue("s0", 1.0, discipline="prio")],
                     [qm.Closed("c0", 1, visits={"s0": 0.25}, priority=1),
                      qm.Closed("c1", 2, visits={"s0": 0.25}, priority=0)])
    for solver in (qm.ctmc, qm.priority):
        with pytest.raises(UnsupportedModelError, match="never get the server"):
            solver(net)


def test_a_starved_class_in_a_one_state_chain_is_refused_by_name():
    # preemptive: the one high-level job returns at once and holds the server
    # forever; the chain is one state, c0's throughput is exactly 0
    net = qm.Network([qm.Queue("s0", 1.0, discipline="prio-pr")],
                     [qm.Closed("c0", 1, visits={"s0": 0.25}, priority=1),
                      qm.Closed("c1", 1, visits={"s0": 0.25}, priority=0)])
    with pytest.raises(UnsupportedModelError, match="class 'c0'.*never complete"):
        qm.ctmc(net)


def _two_entries(interarrival=None):
    # half the arrivals enter q (room for 3; an arrival finding it full is
    # lost), half enter p (unbounded); q sends half its jobs on to p
    return qm.Network(
        [qm.Queue("q", 0.4, capacity=3), qm.Queue("p", 0.3)],
        [qm.Open("o", 1.0, routing={"source": {"q": 0.5, "p": 0.5},
                                    "q": {"p": 0.5, "sink": 0.5}, "p": {"sink": 1.0}},
                 interarrival=interarrival)])


def test_losses_at_one_of_two_entries_hand_derivation():
    # q is an M/M/1/3 fed at 0.5/s (rho = 0.2): it loses p3 = (1 - rho)
    # rho^3 / (1 - rho^4) of its arrivals (Gross & Harris, sec. 2.5), so
    # X_q = 0.5 (1 - p3), X_p = 0.5 + 0.5 X_q and the class completes
    # 1 - 0.5 p3 jobs per second.  The visit ratios per accepted job are
    # not the table's (0.5 and 0.75): sum X_k / sum V_k is wrong here
    rho = 0.5 * 0.4
    p3 = (1 - rho) * rho**3 / (1 - rho**4)
    r = qm.ctmc(_two_entries())
    Xq, Xp = 0.5 * (1 - p3), 0.5 + 0.25 * (1 - p3)
    np.testing.assert_allclose(np.asarray(r.station_throughput, float)[0], [Xq, Xp],
                               rtol=1e-9)
    assert abs(float(r.X["o"]) - (1 - 0.5 * p3)) < 1e-9
    assert abs(float(r.X["o"]) - (Xq + Xp) / 1.25) > 1e-4      # the old, wrong figure
    # Little for the class: R = sum Q_k / X
    Q = np.asarray(r.station_queue_length, float)[0]
    assert abs(float(r.R["o"]) - Q.sum() / float(r.X["o"])) < 1e-9


def test_losses_at_one_of_two_entries_laws_catch_the_wrong_throughput():
    # the law check knows the entry losses: the accepted entries a_k =
    # X_k - sum_j X_j P_jk lie in [0, lambda p0_k] and sum to X; the old
    # X = sum X_k / sum V_k breaks it
    import dataclasses

    from qmodels.analytic.contract import law_violations

    r = qm.ctmc(_two_entries(qm.Erlang(3)))      # answered: no violation
    X = np.asarray(r.station_throughput, float)[0]
    wrong = dataclasses.replace(r, class_throughput=np.array([X.sum() / 1.25]))
    assert any("losses at entry" in v for v in law_violations(wrong))
