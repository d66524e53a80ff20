"""Every answer is what it says (issue 27): one regression test per defect
the issue lists, each against a reference computed here, independently of
the package's solvers (a closed form with its citation, a Markov chain whose
generator the test builds itself, or a simulation with its interval), and
hypothesis properties over generated networks: every analytic method either
refuses by name or answers within the operational laws, under a label it
deserves, and an answer labelled exact equals the CTMC.

The CLI's JSON is tested in ``test_truth_cli.py``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

import qmodels as qm
from qmodels.analytic.contract import law_violations
from qmodels.errors import LawViolationError, QModelsError, UnsupportedModelError
from qmodels.results import METHOD_LABELS
from qmodels.testing import assert_operational_laws, closed_networks, networks

# ---------------------------------------------------------------------------
# independent references
# ---------------------------------------------------------------------------

def stationary(states, rates) -> np.ndarray:
    """The stationary vector of the CTMC on ``states`` whose transitions
    are ``rates`` = {(from, to): rate} (pi Q = 0, sum pi = 1), by a sparse
    LU with the last balance equation replaced by the normalisation."""
    idx = {s: i for i, s in enumerate(states)}
    n = len(states)
    rows, cols, vals = [], [], []
    out = np.zeros(n)
    for (a, b), r in rates.items():
        i, j = idx[a], idx[b]
        rows.append(j)          # the transpose: (Q^T)[j, i] = q(i -> j)
        cols.append(i)
        vals.append(r)
        out[i] += r
    rows += list(range(n))
    cols += list(range(n))
    vals += list(-out)
    A = sps.csr_matrix((vals, (rows, cols)), shape=(n, n)).tolil()
    A[n - 1, :] = np.ones(n)
    b = np.zeros(n)
    b[n - 1] = 1.0
    pi = spla.spsolve(A.tocsc(), b)
    assert np.all(pi > -1e-12) and abs(pi.sum() - 1) < 1e-9
    return pi


def _add(rates, a, b, r):
    if r > 0:
        rates[(a, b)] = rates.get((a, b), 0.0) + r


def gim1_response_time(S: float, lst) -> float:
    """Mean response time of the GI/M/1 queue: R = S / (1 - sigma), sigma
    the root in (0, 1) of sigma = A*(mu (1 - sigma)), A* the Laplace-Stieltjes
    transform of the inter-arrival time, mu = 1/S (Kleinrock, *Queueing
    Systems* vol. 1, 1975, sec. 6.4, eqs. 6.21-6.22; Gross & Harris,
    *Fundamentals of Queueing Theory*, sec. 5.3)."""
    mu = 1.0 / S
    sigma = brentq(lambda s: lst(mu * (1.0 - s)) - s, 1e-12, 1.0 - 1e-12, xtol=1e-15)
    return S / (1.0 - sigma)


def h2_lst(mean: float, scv: float):
    """The LST of the two-phase hyperexponential with balanced means
    (Whitt 1982): p1 = (1 + sqrt((c2 - 1)/(c2 + 1)))/2, rates 2 p_i / m."""
    p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    p2 = 1.0 - p1
    l1, l2 = 2 * p1 / mean, 2 * p2 / mean
    return lambda s: p1 * l1 / (l1 + s) + p2 * l2 / (l2 + s)


def mm1k(lam: float, S: float, K: int) -> tuple[float, float]:
    """(X, R) of the M/M/1/K queue: p_n proportional to rho^n, n = 0..K,
    X = lambda (1 - p_K), R = L / X (Kleinrock 1975, sec. 3.6)."""
    rho = lam * S
    p = np.array([rho ** n for n in range(K + 1)])
    p /= p.sum()
    L = float(np.dot(np.arange(K + 1), p))
    X = lam * (1.0 - p[K])
    return X, L / X


def erlang_queue_with_think(N: int, D: float, Z: float, k: int) -> tuple[float, float]:
    """(U, X) of a closed class of N jobs cycling between a delay of mean
    Z (exponential) and one FCFS server whose service is Erlang-k of mean D
    (k exponential phases of rate k/D: a deterministic time as k grows).
    State (jobs at the queue n, phase p of the one in service)."""
    states = [(0, 0)] + [(n, p) for n in range(1, N + 1) for p in range(1, k + 1)]
    rates: dict = {}
    for n, p in states:
        if n < N:
            _add(rates, (n, p), (n + 1, p if n else 1), (N - n) / Z)
        if n:
            nxt = (n, p + 1) if p < k else ((n - 1, 1) if n > 1 else (0, 0))
            _add(rates, (n, p), nxt, k / D)
    pi = stationary(states, rates)
    U = 1.0 - float(pi[0])
    return U, U / D


def fcfs_cycle(stations, service, populations):
    """A closed multi-class network of jobs cycling ``stations[0] ->
    stations[1] -> ... -> stations[0]``; ``stations[0]`` a delay (infinite
    server), the others one FCFS server each; ``service[c][k]`` the mean
    (exponential) service time of class c at station k.  The state is the
    order of the classes in each FCFS queue (the head in service) and the
    number of each class at the delay.  Returns (X per class, Q per class
    and station), X counted at the delay (the reference)."""
    C, K = len(populations), len(stations)
    start = (tuple(populations),) + ((),) * (K - 1)
    states, seen, todo = [], {start}, [start]
    rates: dict = {}
    while todo:
        s = todo.pop()
        states.append(s)
        moves = []
        z = s[0]
        for c in range(C):        # leave the delay, join the tail of station 1
            if z[c]:
                nz = tuple(z[i] - (i == c) for i in range(C))
                t = (nz, s[1] + (c,)) + s[2:]
                moves.append((t, z[c] / service[c][0]))
        for k in range(1, K):     # the head of station k completes
            if s[k]:
                c = s[k][0]
                rest = s[:k] + (s[k][1:],) + s[k + 1:]
                if k + 1 < K:
                    t = rest[:k + 1] + (rest[k + 1] + (c,),) + rest[k + 2:]
                else:
                    t = (tuple(rest[0][i] + (i == c) for i in range(C)),) + rest[1:]
                moves.append((t, 1.0 / service[c][k]))
        for t, r in moves:
            _add(rates, s, t, r)
            if t not in seen:
                seen.add(t)
                todo.append(t)
    pi = stationary(states, rates)
    X = np.zeros(C)
    Q = np.zeros((C, K))
    for p, s in zip(pi, states):
        for c in range(C):
            X[c] += p * s[0][c] / service[c][0]
            Q[c, 0] += p * s[0][c]
            for k in range(1, K):
                Q[c, k] += p * s[k].count(c)
    return X, Q


def forkjoin_cycle(N: int, Sa: float, Sb: float, Z: float) -> tuple[float, float, float]:
    """(X, U_a, U_b) of N jobs cycling between a delay of mean Z and a
    fork-join of two single-server FCFS exponential branches a and b: a
    job splits into one task per branch and leaves when both are done.  A
    branch serves its tasks in the order of the forks, so the state is
    (jobs in the fork-join n, tasks done at a m_a, at b m_b) with
    min(m_a, m_b) = 0 (a job whose two tasks are done has left)."""
    states = [(n, a, b) for n in range(N + 1) for a in range(n + 1) for b in range(n + 1)
              if min(a, b) == 0]
    rates: dict = {}
    for s in states:
        n, a, b = s
        if n < N:
            _add(rates, s, (n + 1, a, b), (N - n) / Z)
        if n - a > 0:
            _add(rates, s, (n - 1, 0, b - 1) if b else (n, a + 1, 0), 1.0 / Sa)
        if n - b > 0:
            _add(rates, s, (n - 1, a - 1, 0) if a else (n, 0, b + 1), 1.0 / Sb)
    pi = stationary(states, rates)
    X = sum(p * (N - s[0]) / Z for p, s in zip(pi, states))
    Ua = sum(p for p, s in zip(pi, states) if s[0] > s[1])
    Ub = sum(p for p, s in zip(pi, states) if s[0] > s[2])
    return float(X), float(Ua), float(Ub)


def hand_mva(D, Z, N):
    """Exact single-class MVA (Reiser & Lavenberg 1980; QSP sec. 6.3):
    ``D`` the demands of single-server queues, delays folded into ``Z``.
    Returns (X, R) at population N, R excluding Z."""
    Q = np.zeros(len(D))
    X = R = 0.0
    for n in range(1, N + 1):
        Rk = D * (1.0 + Q)
        R = float(Rk.sum())
        X = n / (Z + R)
        Q = X * Rk
    return X, R


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def _label_is_honest(r) -> None:
    """The label every answer carries (issue 27, Deliver 1)."""
    assert r.exactness in ("exact", "approximate", "bound"), r.exactness
    assert r.method in METHOD_LABELS, r.method
    if r.exactness == "approximate":
        assert isinstance(r.error, dict), (r.method, r.error)


def test_the_hand_built_chains_agree_with_known_answers():
    # the references' own check: each hand-built chain against an answer
    # known in closed form
    # Erlang-1 service is exponential: the machine-repairman model, whose
    # X is exact MVA's (hand_mva, Reiser & Lavenberg 1980)
    U, X = erlang_queue_with_think(10, 1.0, 4.0, 1)
    assert X == pytest.approx(hand_mva(np.array([1.0]), 4.0, 10)[0], rel=1e-12)
    # one class through the FCFS cycle is product form: exact MVA again
    X2, Q2 = fcfs_cycle(["z", "a", "b"], [[1.0, 0.3, 0.5]], [4])
    assert X2[0] == pytest.approx(hand_mva(np.array([0.3, 0.5]), 1.0, 4)[0], rel=1e-12)
    # one job in the fork-join: cycle Z + E max(Exp, Exp) = Z + Sa + Sb - 1/(1/Sa + 1/Sb)
    X3, _, _ = forkjoin_cycle(1, 0.1, 0.4, 1.0)
    assert X3 == pytest.approx(1.0 / (1.0 + 0.5 - 1.0 / 12.5), rel=1e-12)


# ---------------------------------------------------------------------------
# defect 1: the arrival shape of an open class was ignored
# ---------------------------------------------------------------------------

S_GI = 0.6


def _gi_net(d):
    return qm.Network([qm.Queue("q", S_GI)],
                      [qm.Open("j", 1.0, interarrival=d, visits={"q": 1})])


GI_CASES = {
    "H2 scv 8": (qm.HyperExponential(8), gim1_response_time(S_GI, h2_lst(1.0, 8.0))),
    "deterministic": (qm.Deterministic(), gim1_response_time(S_GI, lambda s: math.exp(-s))),
}


def test_gim1_references_are_the_published_figures():
    assert GI_CASES["H2 scv 8"][1] == pytest.approx(3.956, abs=5e-4)
    assert GI_CASES["deterministic"][1] == pytest.approx(0.888, abs=5e-4)


@pytest.mark.parametrize("case", list(GI_CASES))
def test_product_form_refuses_a_non_poisson_stream_by_name(case):
    d, _ = GI_CASES[case]
    net = _gi_net(d)
    for call in (lambda: qm.mva(net), lambda: qm.solve(net, method="exact"),
                 lambda: qm.size(net, "R<=2", vary="arrival_rate", method="exact")):
        with pytest.raises(UnsupportedModelError) as e:
            call()
        assert "class 'j'" in str(e.value) and "inter-arrival" in str(e.value)


@pytest.mark.parametrize("case", list(GI_CASES))
def test_bounds_give_only_what_holds_for_a_non_poisson_stream(case):
    d, ref = GI_CASES[case]
    b = qm.bounds(_gi_net(d))
    assert b.exactness == "bound"
    assert b.bjb is None and b.gb is None and b.pb is None   # they rest on product form
    assert any("class 'j'" in n and "BJB" in n for n in b.notes)
    # what is given holds for the true answer (the GI/M/1 closed form)
    assert b.response_time_lower <= ref <= b.response_time_upper
    assert b.throughput_lower <= 1.0 <= b.throughput_upper


@pytest.mark.parametrize("case", list(GI_CASES))
def test_solve_pairs_its_label_with_a_value_that_deserves_it(case):
    d, ref = GI_CASES[case]
    r = _quiet(qm.solve, _gi_net(d))
    _label_is_honest(r)
    R = float(r.R["j"])
    if r.exactness == "exact":
        assert R == pytest.approx(ref, rel=1e-9), (r.method, R, ref)
    else:
        assert r.exactness == "approximate" and METHOD_LABELS[r.method][0] == "approximate"
        assert any(r.method.upper() in n.upper() or "APPROXIMAT" in n for n in r.notes)
        if r.error.get("validated"):
            # inside a measured envelope: the error is at most the envelope's
            assert abs(R - ref) / ref <= r.error["R"]["max"] + 1e-9, (R, ref, r.error)
        else:
            assert any("error unmeasured" in w for w in r.warnings), r.warnings
        # and the approximation is a fair one here (QNA's KLB: -3.8 % for H2)
        assert R == pytest.approx(ref, rel=0.10), (r.method, R, ref)


# ---------------------------------------------------------------------------
# defect 2: FCFS with class-dependent service was solved as PS, "exact"
# ---------------------------------------------------------------------------

def _fcfs_open():
    # utilisation: a 10 x 0.002 + 2.5 x 0.05 = 0.145, b 10 x 0.004 + 2.5 x 0.3 = 0.79
    return qm.Network(
        [qm.Queue("a", 0.002), qm.Queue("b", 0.004)],
        [qm.Open("small", 10.0, visits={"a": 1, "b": 1}, service={"a": 0.002, "b": 0.004}),
         qm.Open("big", 2.5, visits={"a": 1, "b": 1}, service={"a": 0.05, "b": 0.3})])


def test_exact_refuses_class_dependent_fcfs_naming_the_station():
    net = _fcfs_open()
    for call in (lambda: qm.mva(net), lambda: qm.solve(net, method="exact")):
        with pytest.raises(UnsupportedModelError) as e:
            call()
        assert "station 'a'" in str(e.value) and "FCFS" in str(e.value)


def test_fcfs_as_ps_is_asked_for_and_labelled_approximate():
    r = qm.solve(_fcfs_open(), method="exact", fcfs_as_ps=True)
    assert r.exactness == "approximate"
    sub = [a for a in r.assumptions if "processor sharing" in a]
    assert sub and "'a'" in sub[0] and "'b'" in sub[0]
    assert isinstance(r.error, dict)
    assert r.network == _fcfs_open()      # the answer refers to the model given


def test_fcfs_simulation_is_far_from_the_processor_sharing_answer():
    net = _fcfs_open()
    ps = qm.solve(net, method="exact", fcfs_as_ps=True)
    sim = qm.simulate(net, seed=27)
    small = sim.R["small"]
    # the FCFS truth (a small job waits behind big ones at b) against PS
    # (it shares b's server): 0.97 +- 0.05 s against 0.021 s
    assert small.mean - small.half_width > 10 * float(ps.R["small"])
    # and qm.solve does not call any answer exact here unless by the CTMC
    r = _quiet(qm.solve, net)
    _label_is_honest(r)
    assert r.exactness != "exact" or r.method == "ctmc"


FCFS_CLOSED_SERVICE = [[0.5, 0.002, 0.004], [1.0, 0.05, 0.3]]   # z, a, b per class


def _fcfs_closed(n_small=2, n_big=2):
    route = {"z": {"a": 1}, "a": {"b": 1}, "b": {"z": 1}}
    (zs, as_, bs), (zb, ab, bb) = FCFS_CLOSED_SERVICE
    return qm.Network(
        [qm.Delay("z", 1.0), qm.Queue("a", 0.002), qm.Queue("b", 0.004)],
        [qm.Closed("small", n_small, routing=route, reference="z",
                   service={"z": zs, "a": as_, "b": bs}),
         qm.Closed("big", n_big, routing=route, reference="z",
                   service={"z": zb, "a": ab, "b": bb})])


def test_closed_class_dependent_fcfs_goes_to_the_ctmc_labelled_exact():
    net = _fcfs_closed()
    r = _quiet(qm.solve, net)
    assert r.method == "ctmc" and r.exactness == "exact"
    X, Q = fcfs_cycle(["z", "a", "b"], FCFS_CLOSED_SERVICE, [2, 2])
    np.testing.assert_allclose(np.asarray(r.class_throughput), X, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(r.station_queue_length), Q, rtol=1e-9, atol=1e-12)
    # the processor-sharing substitute is measurably different (why exact refuses)
    ps = qm.solve(net, method="exact", fcfs_as_ps=True)
    assert abs(float(ps.R["small"]) - float(r.R["small"])) > 0.01 * float(r.R["small"])


# ---------------------------------------------------------------------------
# defect 3: approximations broke the laws
# ---------------------------------------------------------------------------

def _deterministic_queue(Z, N=10, D=1.0):
    return qm.Network([qm.Queue("q", D, distribution=qm.Deterministic()), qm.Delay("z", Z)],
                      [qm.Closed("c", N, visits={"q": 1, "z": 1})])


#: Z -> largest relative difference of X from the Erlang-100 chain allowed
#: (measured: 0.02 % saturated at Z = 4, N* = 5; 2.1 % at Z = 6, N* = 7)
RESIDUAL_TOL = {2.0: 0.005, 4.0: 0.005, 6.0: 0.03}


@pytest.mark.parametrize("Z", list(RESIDUAL_TOL))
def test_residual_mva_holds_the_laws_at_a_saturated_deterministic_queue(Z):
    net = _deterministic_queue(Z)
    r = _quiet(qm.solve, net, method="mva-residual")
    _label_is_honest(r)
    assert float(r.U["q"]) <= 1.0
    assert float(r.X["c"]) <= 1.0 / 1.0        # 1 / D_max
    assert float(r.R["c"]) >= (1.0 + Z) * (1 - 1e-12)     # the sum of demands
    assert law_violations(r) == []
    # Erlang-100 phases stand for the deterministic time (the chain built here)
    U_ref, X_ref = erlang_queue_with_think(10, 1.0, Z, 100)
    assert abs(float(r.X["c"]) - X_ref) / X_ref <= RESIDUAL_TOL[Z], (float(r.X["c"]), X_ref)
    assert abs(float(r.U["q"]) - U_ref) / U_ref <= RESIDUAL_TOL[Z]


def _sweep_net():
    return qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.5, distribution=qm.Deterministic()),
                       qm.Delay("z", 1.0)],
                      [qm.Closed("c", 5, visits={"cpu": 1, "disk": 1, "z": 1})])


def test_sweep_auto_says_which_method_answered_and_keeps_u_at_most_one():
    net = _sweep_net()
    df = _quiet(qm.sweep, net, {"c.population": [1, 2, 5, 10, 20]}, method="auto",
                progress=False)
    assert {"method", "exactness"} <= set(df.columns)
    assert df.attrs["method"] == "auto"
    # what auto chose, per row: the phase-type chain (the constant as an
    # Erlang-20, so approximate) fits the automatic budget at every population
    assert set(df["method"]) == {"ctmc"}
    assert set(df["exactness"]) == {"approximate"}
    queues = df[(df.scope == "station") & df.name.isin(["cpu", "disk"])]
    assert (queues.U <= 1.0).all(), queues[["c.population", "name", "U"]]
    cls = df[df.scope == "class"]
    assert (cls.X <= 1 / 0.5 * (1 + 1e-12)).all()            # 1 / D_max
    assert (cls.R >= 0.2 + 0.5 + 1.0 - 1e-12).all()           # the sum of demands


def test_sweep_method_column_follows_what_auto_chose_per_row():
    # a capacity of 3 at the disk binds only with more than 3 jobs: product
    # form (exact MVA) up to 3, the CTMC of the blocking network beyond
    net = qm.Network([qm.Queue("cpu", 0.02), qm.Queue("disk", 0.05, capacity=3),
                      qm.Delay("z", 0.5)],
                     [qm.Closed("c", 1, routing={"z": {"cpu": 1}, "cpu": {"disk": 1},
                                                 "disk": {"z": 1}}, reference="z")])
    df = _quiet(qm.sweep, net, {"c.population": [1, 2, 3, 4, 6]}, method="auto",
                progress=False)
    cls = df[df.scope == "class"].set_index("c.population")
    assert list(cls["method"]) == ["exact", "exact", "exact", "ctmc", "ctmc"]
    assert set(cls["exactness"]) == {"exact"}
    for n in (1, 2, 3):      # against exact MVA by hand (the delay folded into Z)
        X, _ = hand_mva(np.array([0.02, 0.05]), 0.5, n)
        assert cls.loc[n, "X"] == pytest.approx(X, rel=1e-9)
    disk = df[(df.scope == "station") & (df.name == "disk")]
    assert (disk.U <= 1.0).all() and (disk.Q <= 3.0 + 1e-9).all()


#: (S_a, S_b, Z) of two unequal branches
FORKJOINS = [(0.1, 0.4, 1.0), (0.3, 0.4, 0.5), (0.05, 0.2, 0.1)]


@pytest.mark.parametrize("N", [5, 10])
@pytest.mark.parametrize("Sa,Sb,Z", FORKJOINS)
def test_closed_forkjoin_with_unequal_branches_holds_u_at_most_one(Sa, Sb, Z, N):
    net = qm.Network([qm.ForkJoin("fj", branches=[["a"], ["b"]]), qm.Queue("a", Sa),
                      qm.Queue("b", Sb), qm.Delay("z", Z)],
                     [qm.Closed("c", N, visits={"fj": 1, "z": 1})])
    r = _quiet(qm.solve, net, method="forkjoin")
    _label_is_honest(r)
    assert float(r.U["a"]) <= 1.0 and float(r.U["b"]) <= 1.0
    assert float(r.X["c"]) <= 1.0 / max(Sa, Sb)
    assert law_violations(r) == []
    # against the fork-join chain built here (measured within 0.1 %)
    X, Ua, Ub = forkjoin_cycle(N, Sa, Sb, Z)
    assert float(r.X["c"]) == pytest.approx(X, rel=0.02)
    assert float(r.U["b"]) == pytest.approx(Ub, rel=0.02)
    # the library's exact chain (qm.solve's choice) on the same cycle as a
    # fixed route is the chain built here
    cyc = qm.Network(net.stations, [qm.Closed("c", N, route=["fj", "z"])])
    e = _quiet(qm.solve, cyc)
    assert e.method == "ctmc" and e.exactness == "exact"
    assert float(e.X["c"]) == pytest.approx(X, rel=1e-9)
    assert float(e.U["a"]) == pytest.approx(Ua, rel=1e-9)
    assert float(e.U["b"]) == pytest.approx(Ub, rel=1e-9)


# ---------------------------------------------------------------------------
# defect 5: a proven bound below zero
# ---------------------------------------------------------------------------

def _long_think(net, Z):
    c = net.classes[0]
    return qm.Network(net.stations, [dataclasses.replace(c, think_time=Z)], name=net.name)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(closed_networks(max_classes=1, max_stations=4, max_population=8, multi_server=False,
                       load_dependent=False, product_form=True),
       st.floats(1.0, 1000.0))
def test_proportional_and_geometric_bounds_stay_above_the_demands(net, Z):
    net = _long_think(net, Z)
    N = int(net.classes[0].population)
    if N == 0:
        return
    b = qm.bounds(net)
    D = np.asarray(net.demands, float)[0]
    delay = np.array([isinstance(s, qm.Delay) for s in net.stations])
    Dq, Zd = D[~delay], float(D[delay].sum())
    total = float(D.sum())
    X_true, R_true = hand_mva(Dq, Z + Zd, N)
    R_true += Zd                           # class R counts the delay stations' time
    if not ((D > 0) & ~delay).any():
        return                             # X = N/(Z + D) exactly: no PB or GB to test
    assert b.gb is not None and b.pb is not None
    for key in ("aba", "bjb", "gb", "pb"):
        x_lo, x_hi, r_lo, r_hi = getattr(b, key)
        assert r_lo >= 0.0, (key, r_lo)
        assert r_lo >= total * (1 - 1e-12), (key, r_lo, total)
        assert r_lo <= R_true * (1 + 1e-9) and (r_hi >= R_true * (1 - 1e-9)), (key, b, R_true)
        assert x_lo <= X_true * (1 + 1e-9) and x_hi >= X_true * (1 - 1e-9), (key, X_true)


# ---------------------------------------------------------------------------
# defect 6: auto refused an M/M/1/K and said "simulate it"
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("lam", [1.0, 2.0, 3.0])
def test_auto_answers_mm1k_with_the_ctmc_equal_to_the_closed_form(lam):
    S, K = 0.5, 3
    net = qm.Network([qm.Queue("q", S, capacity=K)], [qm.Open("j", lam, visits={"q": 1})])
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "exact"
    X, R = mm1k(lam, S, K)
    assert float(r.X["j"]) == pytest.approx(X, rel=1e-9)
    assert float(r.R["j"]) == pytest.approx(R, rel=1e-9)
    assert law_violations(r) == []


# ---------------------------------------------------------------------------
# properties: every method, every generated network
# ---------------------------------------------------------------------------

#: every analytic method qm.solve offers, but the simulator and the symbolic
#: one (the generated networks are numeric)
ANALYTIC = tuple(m for m in qm.methods() if m not in ("auto", "sim", "exact-symbolic"))
ALL_DISCIPLINES = ("fcfs", "ps", "prio", "prio-pr", "lcfs-pr")
#: the CTMC's budget in these tests (its own refusal above it is a skip)
MAX_STATES = 1500


def vocabulary(max_population: int = 3, max_stations: int = 3) -> st.SearchStrategy:
    """Networks in the whole vocabulary: mixed classes, service and
    arrival shapes, priority levels and disciplines, fork-joins, finite
    capacities, token pools; and product-form ones, which the exact methods
    answer (so that the exact-versus-CTMC property meets them)."""
    common = dict(kind="any", max_classes=2, max_stations=max_stations,
                  max_population=max_population)
    return st.one_of(
        networks(**common, distributions=True, priorities=True, disciplines=ALL_DISCIPLINES,
                 forkjoins=True, capacities=True),
        networks(**common, distributions=True, priorities=True, disciplines=ALL_DISCIPLINES,
                 capacities=True, pools=True),
        networks(**common, capacities=True, pools=True),
        networks(**common, product_form=True),
    )


def _blocking_or_loss(net) -> bool:
    """A finite capacity can bind: open jobs may be lost (X < lambda) and a
    server may be held by a job blocked after service (U >= X S / c), which
    :func:`qmodels.testing.assert_operational_laws` (X = lambda, U = X S / c)
    does not model; :func:`law_violations` checks the inequalities there."""
    from qmodels.analytic import requires

    closed = None if net.open_classes else int(sum(c.population for c in net.classes))
    return requires.capacities(net, closed) is not None


def _solve(net, method):
    opts = {"max_states": MAX_STATES} if method == "ctmc" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return qm.solve(net, method=method, **opts)


def _check_bounds(net, b) -> None:
    assert b.exactness == "bound", b.exactness
    assert b.error is None
    assert 0 <= b.throughput_lower <= b.throughput_upper * (1 + 1e-9), b
    assert 0 <= b.response_time_lower <= b.response_time_upper * (1 + 1e-9), b


def _check_result(net, r) -> None:
    """Issue 27, Deliver 1-3 on one answer (see the property below)."""
    assert r.network == net
    _label_is_honest(r)
    bad = law_violations(r)
    assert bad == [], bad
    if not _blocking_or_loss(net):
        # a CTMC truncated at an open-job bound turns away the fraction of
        # arrivals at the bound (its X is lambda (1 - m)): the one law it
        # bends, by m, which an approximate answer's error states
        m = float(r.info.get("truncation_mass") or 0.0) if r.method == "ctmc" else 0.0
        assert_operational_laws(r, rtol=1e-5 + 2 * m, atol=1e-8)


def _answer_or_refusal(net, method):
    """The answer of ``method``, or None when it refuses by name with a typed
    error; a law violation is a failure (the contract repairs the methods at
    their source)."""
    try:
        return _solve(net, method)
    except LawViolationError as e:
        pytest.fail(f"{method} broke a law instead of answering within them: {e}")
    except QModelsError:
        return None


def _every_method(net):
    for method in ANALYTIC:
        r = _answer_or_refusal(net, method)
        if r is None:
            continue
        if method == "bounds":
            _check_bounds(net, r)
        else:
            _check_result(net, r)
    r = _answer_or_refusal(net, "auto")
    if r is not None:
        assert any("method chosen by qm.solve" in n for n in r.notes)
        _check_result(net, r)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(vocabulary())
def test_every_method_answers_within_the_laws_under_its_label_or_refuses(net):
    _every_method(net)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(vocabulary(max_population=5, max_stations=4))
def test_every_method_answers_within_the_laws_under_its_label_or_refuses_more(net):
    _every_method(net)


# ---------------------------------------------------------------------------
# found by the properties: the CTMC answered an unstable open network with
# the figures of its truncation, and a truncated answer carried no error
# ---------------------------------------------------------------------------

UNSTABLE = {
    # an open queue loaded past its server: no steady state (Kleinrock 1975, sec. 3.2)
    "station": (qm.Network([qm.Queue("s0", 1.0)], [qm.Open("c0", 1.5, visits={"s0": 1})]),
                "station 's0'"),
    # one token held while served at a delay of 1 s, asked for 2 / s x 0.5 visits:
    # by Little's law the token is held all the time (load 1), a queue at rho = 1
    "pool": (qm.Network([qm.Delay("s0", 1.0)], [qm.Open("c0", 2.0, visits={"s0": 0.5})],
                        pools=[qm.TokenPool("pool", 1, "s0", "s0")]), "token pool 'pool'"),
    # one token for the open class at a PS server that a closed job shares:
    # the closed job is there at least 1 / 1.1 of the time (its 1 s of
    # service per 0.1 s of thought), and then the open job gets half the
    # server, so the open class is served at most 0.909 / 2 + 0.091 = 0.545
    # jobs / s < lambda = 0.8, though neither load check above sees it
    "crowded pool": (qm.Network(
        [qm.Queue("s0", 1.0, discipline="ps")],
        [qm.Open("o", 0.8, visits={"s0": 1}), qm.Closed("c", 1, visits={"s0": 1}, think_time=0.1)],
        pools=[qm.TokenPool("pool", 1, "s0", "s0", classes=("o",))]), "do not settle"),
}


@pytest.mark.parametrize("case", list(UNSTABLE))
@pytest.mark.parametrize("method", ["ctmc", "auto"])
def test_an_unstable_open_load_is_refused_not_truncated(case, method):
    net, name = UNSTABLE[case]
    with pytest.raises(qm.errors.UnstableError) as e:
        _quiet(qm.solve, net, method=method)
    assert name in str(e.value)


def test_a_stable_open_chain_near_saturation_is_still_answered():
    # the CTMC's refusal of open jobs that do not settle must not take a
    # stable queue near saturation for one: M/M/1 at rho = 0.995, whose
    # truncation doubles eight times, R = S / (1 - rho) (Kleinrock 1975, 3.2)
    net = qm.Network([qm.Queue("a", 0.995)], [qm.Open("o", 1.0, visits={"a": 1})])
    r = _quiet(qm.ctmc, net)
    m, L = r.info["truncation_mass"], r.info["open_limit"]
    assert r.exactness == "exact" and L >= 1280
    assert float(r.R["o"]) == pytest.approx(0.995 / 0.005, rel=1e-9 + 100 * L * m)


def test_a_truncated_ctmc_answer_is_approximate_with_its_error():
    # the chain truncated at 30 open jobs is the M/M/1/30 queue: the mass at
    # the bound is its p_K, and X = lambda (1 - p_K) (Kleinrock 1975, sec. 3.6)
    lam, S, K = 0.95, 1.0, 30
    net = qm.Network([qm.Queue("q", S)], [qm.Open("j", lam, visits={"q": 1})])
    r = _quiet(qm.ctmc, net, open_limit=K)
    X, R = mm1k(lam, S, K)
    p_K = 1.0 - X / lam
    assert r.exactness == "approximate"
    assert isinstance(r.error, dict) and r.error["truncation_mass"] == pytest.approx(p_K, rel=1e-9)
    assert float(r.X["j"]) == pytest.approx(X, rel=1e-9)
    assert float(r.R["j"]) == pytest.approx(R, rel=1e-9)
    assert law_violations(r) == []
    assert any("truncat" in w for w in r.warnings)


def _reference(net, ref):
    """The CTMC answer ``ref`` of ``net`` (``qm.solve(net, method="ctmc",
    max_states=MAX_STATES)``, or None where it refused) when it is exact,
    with the relative tolerances (X, R) its own truncation justifies; None
    otherwise.

    A chain with open classes is truncated at ``L = info["open_limit"]``
    open jobs; the probability at the bound, m = ``info["truncation_mass"]``
    (at most 1e-9 for an answer labelled exact), is the fraction of
    arrivals it turns away, so its X is low by about m; what it misses of
    the number present is the tail beyond L, of order L m / (1 - rho) with
    rho <= 0.9 the busiest station's open load in these networks (the
    strategies' ``stable=True``): R within 100 L m (measured: at most 40 L m
    over 150 product-form networks)."""
    if ref is None or ref.exactness != "exact":
        return None
    m = float(ref.info.get("truncation_mass") or 0.0)
    L = float(ref.info.get("open_limit") or 0.0)
    return ref, 1e-9 + 10 * m, 1e-9 + 100 * L * m


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = np.maximum(np.abs(a), np.abs(b))
    return np.where(scale > 0, np.abs(a - b) / np.where(scale > 0, scale, 1.0), 0.0)


def exact_or_ctmc(max_population=3):
    """Networks the exact methods answer (product form) and networks of the
    whole vocabulary, small enough for the chain."""
    return st.one_of(networks(kind="any", max_classes=2, max_stations=3,
                              max_population=max_population, product_form=True),
                     vocabulary(max_population=max_population))


def _exact_equals_ctmc(net):
    answers = {}
    for method in ANALYTIC + ("auto",):
        try:
            answers[method] = _solve(net, method)
        except QModelsError:
            pass
    refd = _reference(net, answers.get("ctmc"))
    if refd is None:
        return
    ref, tol_x, tol_r = refd
    Xr = np.asarray(ref.class_throughput, float)
    Rr = np.asarray(ref.class_response_time, float)
    for method, r in answers.items():
        if method == "bounds":
            # a proven bound holds for the exact answer
            i = net.class_index(r.class_name)
            assert r.throughput_lower <= Xr[i] * (1 + tol_x) + 1e-12, (r, Xr[i])
            assert r.throughput_upper >= Xr[i] * (1 - tol_x) - 1e-12, (r, Xr[i])
            if Xr[i] > 0:
                assert r.response_time_lower <= Rr[i] * (1 + tol_r) + 1e-12, (r, Rr[i])
                assert r.response_time_upper >= Rr[i] * (1 - tol_r) - 1e-12, (r, Rr[i])
            continue
        if r.exactness != "exact":
            continue
        X = np.asarray(r.class_throughput, float)
        R = np.asarray(r.class_response_time, float)
        live = Xr > 0
        assert _rel(X, Xr).max(initial=0) <= tol_x, (method, r.method, X, Xr)
        assert _rel(R[live], Rr[live]).max(initial=0) <= tol_r, (method, r.method, R, Rr)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(exact_or_ctmc())
def test_every_answer_labelled_exact_equals_the_ctmc(net):
    _exact_equals_ctmc(net)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(exact_or_ctmc(max_population=5))
def test_every_answer_labelled_exact_equals_the_ctmc_more(net):
    _exact_equals_ctmc(net)


def test_conservation_with_pools_and_blocking_is_an_inequality():
    # found by the properties: two closed classes, a pool, and a station of
    # capacity 1 that c1's jobs wait to enter at the end of their think time
    # (in no station): the central law check called sum Q + W + X Z = N
    # broken (3.49 != 5) and refused the CTMC's right answer.  References:
    # c0's two jobs share one token held over a delay of 1.1 s, a single
    # server: X = 1 / 1.1; c1 is the machine-repairman model (3 jobs, think
    # 0.5 s, one server of 0.986 s, those that find it busy wait in order):
    # exact MVA
    net = qm.Network(
        [qm.Delay("s0", 1.1), qm.Queue("s2", 0.986, capacity=1)],
        [qm.Closed("c0", 2, visits={"s0": 1}),
         qm.Closed("c1", 3, visits={"s2": 1}, think_time=0.5)],
        pools=[qm.TokenPool("pool", 1, "s0", "s0", classes=("c1", "c0"))])
    r = _quiet(qm.ctmc, net)
    assert r.exactness == "exact" and law_violations(r) == []
    assert float(r.X["c0"]) == pytest.approx(1 / 1.1, rel=1e-9)
    assert float(r.X["c1"]) == pytest.approx(hand_mva(np.array([0.986]), 0.5, 3)[0], rel=1e-9)
    assert _quiet(qm.solve, net).method == "ctmc"


def test_an_open_class_that_may_skip_a_full_station_is_checked_by_its_accepted_jobs():
    # found by the longer property run: an open class given by visits 0.25
    # to one queue of room 1 makes one visit with probability 0.25 and none
    # otherwise (qmodels.sim.flatten); arrivals that find the queue full are
    # lost, so the accepted jobs visit it less than 0.25 times each and the
    # table's forced flow and no-contention time do not hold for them.
    # Hand derivation: the queue is an M/M/1/1 loss system fed at
    # 2 x 0.25 = 0.5 / s, busy 0.5 / 1.5 = 1/3 of the time (Erlang's loss
    # formula), so it serves 0.5 x 2/3 = 1/3 / s; the class's accepted jobs
    # are 1.5 + 1/3 / s, whose mean time in the network is (1/3 x 1) / (11/6).
    net = qm.Network([qm.Queue("s0", 1.0, capacity=1)],
                     [qm.Open("c0", 2.0, visits={"s0": 0.25})])
    r = qm.ctmc(net)
    assert float(r.X["c0"]) == pytest.approx(1.5 + 1 / 3, rel=1e-12)
    assert float(r.R["c0"]) == pytest.approx((1 / 3) / (11 / 6), rel=1e-12)
    assert not law_violations(r)
