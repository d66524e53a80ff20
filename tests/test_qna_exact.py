"""QNA's exact cases (issue 27, "every answer is what it says"): a station
fed by one external renewal stream alone with exponential FCFS service is a
GI/M/c queue, solved exactly from the Laplace transform of the inter-arrival
time; the answer is labelled exact only when every visited station is.

Every reference here is computed by a different method than the solver's
(qmodels.analytic.qna.gi_m_c_wait finds sigma by Brent's method on
1 - A(x / rho) = x and sums Takacs's formula):

* GI/M/1: sigma by fixed-point iteration of sigma = A*(mu (1 - sigma))
  (monotone from 0; Kleinrock, Queueing Systems vol. 1, 1975, sec. 6.4),
  by the roots of the polynomial it becomes for H2 and E2 arrivals, and for
  D/M/1 in closed form with Lambert's W;
* GI/M/c (c = 2, 3): the continuous-time Markov chain of the PH/M/c queue
  (Erlang and hyperexponential arrivals are phase-type, so the queue is
  exactly Markov), built here by hand; and, for deterministic and empirical
  arrivals, the Markov chain embedded at arrival instants, whose transition
  over a fixed inter-arrival time x is the matrix exponential of the
  pure-death generator (Kleinrock 1975, sec. 6.1);
* the simulator, for one bursty network.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic.qna import gi_m_c_wait
from qmodels.analytic.queues.transforms import thinned, unit_transform
from qmodels.errors import UnstableError
from qmodels.model.distributions import (
    Deterministic,
    Empirical,
    Erlang,
    HyperExponential,
    Lognormal,
    Pareto,
    Uniform,
)


def _one(interarrival, lam, S, c=1):
    return qm.Network([qm.Queue("q", S * c, servers=c)],
                      [qm.Open("j", lam, interarrival=interarrival, visits={"q": 1})])


def _h2(scv, lam):
    """Balanced-means H2 of SCV ``scv`` and rate ``lam`` (Whitt 1982, as
    qmodels.model.distributions.HyperExponential documents): branch
    probabilities p_i = (1 +- sqrt((c2 - 1)/(c2 + 1)))/2, rates 2 p_i lam."""
    r = math.sqrt((scv - 1.0) / (scv + 1.0))
    p = np.array([(1 + r) / 2, (1 - r) / 2])
    return p, 2.0 * p * lam


def _fixed_point(A, mu, tol=1e-15):
    """sigma = A(mu (1 - sigma)) by fixed-point iteration from 0 (increasing,
    bounded by the root in (0, 1) when rho < 1), accelerated by Aitken's
    delta-squared (Steffensen's method) while the steps stay in (0, 1)."""
    def F(s):
        return A(mu * (1.0 - s))

    s = 0.0
    for _ in range(10_000):
        s1 = F(s)
        s2 = F(s1)
        d = s2 - 2 * s1 + s
        acc = s - (s1 - s) ** 2 / d if d != 0 else s2
        nxt = acc if 0 < acc < 1 else s2
        if abs(nxt - s) < tol:
            return F(nxt)
        s = nxt
    raise AssertionError("no convergence")


# ---------------------------------------------------------------------------
# GI/M/1 by hand
# ---------------------------------------------------------------------------

def test_h2_m_1_the_issue_example():
    # lambda = 1, S = 0.6 (rho 0.6), H2 of SCV 8
    p, r = _h2(8.0, 1.0)

    def A(s):
        return float(np.sum(p * r / (r + s)))

    mu = 1 / 0.6
    sigma = _fixed_point(A, mu)
    # the same root from the cubic sigma (r1 + m)(r2 + m) = p1 r1 (r2 + m) +
    # p2 r2 (r1 + m) with m = mu (1 - sigma): expand in sigma and take the
    # root in (0, 1) other than 1
    poly = np.polynomial.Polynomial
    m = poly([mu, -mu])
    s = poly([0.0, 1.0])
    eq = s * (r[0] + m) * (r[1] + m) - p[0] * r[0] * (r[1] + m) - p[1] * r[1] * (r[0] + m)
    roots = [x.real for x in eq.roots() if abs(x.imag) < 1e-12 and 1e-9 < x.real < 1 - 1e-9]
    assert len(roots) == 1 and roots[0] == pytest.approx(sigma, rel=1e-12)
    R_hand = 0.6 + sigma / (mu * (1 - sigma))        # W = sigma / (mu (1 - sigma))
    assert R_hand == pytest.approx(3.956, abs=5e-4)
    r_ = qm.qna(_one(HyperExponential(8), 1.0, 0.6))
    assert float(r_.R["j"]) == pytest.approx(R_hand, rel=1e-12)
    assert r_.exactness == "exact" and r_.error is None
    # the simulator's 3.945 +- 0.055 (issue 27) covers it; KLB's 3.81 does not
    assert abs(float(r_.R["j"]) - 3.945) < 0.055


def test_solve_sends_the_issue_example_to_qna_and_says_exact():
    # qm.solve reaches the phase-type chain first (H2 held exactly); QNA's
    # GI/M/1 answer, asked for by name, is exact too and says why
    net = _one(HyperExponential(8), 1.0, 0.6)
    auto = qm.solve(net)
    assert auto.exactness == "exact" and float(auto.R["j"]) == pytest.approx(3.956, abs=5e-4)
    r = qm.solve(net, method="qna")
    assert r.method == "qna" and r.exactness == "exact" and r.error is None
    assert float(r.R["j"]) == pytest.approx(3.956, abs=5e-4)
    assert r.info["solved_as"] == ["GI/M/1, exact from the inter-arrival transform"]
    assert any(n.startswith("EXACT") and "'q' (GI/M/1" in n for n in r.notes)
    assert not any("APPROXIMATION" in n for n in r.notes)


def test_d_m_1_by_lambert_w():
    # sigma = exp(-(1 - sigma)/rho) is solved by sigma = -rho W0(-exp(-1/rho)/rho)
    from scipy.special import lambertw

    lam, S = 1.0, 0.6
    rho = lam * S
    sigma = float((-rho * lambertw(-math.exp(-1 / rho) / rho, 0)).real)
    assert sigma == pytest.approx(_fixed_point(lambda s: math.exp(-s / lam), 1 / S), rel=1e-12)
    R = S / (1 - sigma)                               # S + sigma S / (1 - sigma)
    assert R == pytest.approx(0.888, abs=5e-4)
    r = qm.qna(_one(Deterministic(), lam, S))
    assert float(r.R["j"]) == pytest.approx(R, rel=1e-12) and r.exactness == "exact"


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.9])
def test_e2_m_1_by_its_quadratic(rho):
    # A*(s) = (2 lam / (2 lam + s))^2; sigma (2 lam + mu (1 - sigma))^2 = 4 lam^2
    # has the root 1; dividing it out leaves
    # mu^2 sigma^2 - (mu^2 + 4 lam mu) sigma + 4 lam^2 = 0 (lam = 1)
    lam, mu = 1.0, 1.0 / rho
    a, b, c = mu * mu, -(mu * mu + 4 * lam * mu), 4 * lam * lam
    sigma = (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)
    assert sigma == pytest.approx(_fixed_point(lambda s: (2 / (2 + s)) ** 2, mu), rel=1e-12)
    r = qm.qna(_one(Erlang(2), lam, rho))
    assert float(r.R["j"]) == pytest.approx(rho + sigma / (mu * (1 - sigma)), rel=1e-12)


@pytest.mark.parametrize("shape", [Uniform(0.5), Uniform(1.0), Empirical((0.5, 1, 1, 4)),
                                   Lognormal(3.0), Pareto(2.5), Erlang(5)],
                         ids=lambda d: repr(d)[:24])
def test_gi_m_1_by_fixed_point_on_a_separate_transform(shape):
    # the transform by direct numerical integration over the density (or
    # the sum over the samples), sigma by iteration
    from scipy import integrate, stats

    lam, S = 2.0, 0.35
    m = 1 / lam
    if isinstance(shape, Uniform):
        lo, hi = m * (1 - shape.spread), m * (1 + shape.spread)

        def A(s):
            return integrate.quad(lambda x: math.exp(-s * x) / (hi - lo), lo, hi,
                                  epsabs=0, epsrel=1e-13)[0]
    elif isinstance(shape, Empirical):
        x = np.array(shape.samples) / np.mean(shape.samples) * m

        def A(s):
            return float(np.mean(np.exp(-s * x)))
    else:
        if isinstance(shape, Lognormal):
            sd = math.sqrt(math.log1p(shape.scv))
            dist = stats.lognorm(sd, scale=m * math.exp(-sd * sd / 2))
            ml = math.log(m) - sd * sd / 2

            def pdf(x):
                return math.exp(-(math.log(x) - ml) ** 2 / (2 * sd * sd)) / (
                    x * sd * math.sqrt(2 * math.pi)) if x > 0 else 0.0
        elif isinstance(shape, Pareto):
            a = shape.alpha
            xm = m * (a - 1) / a
            dist = stats.pareto(a, scale=xm)

            def pdf(x):
                return a * xm**a / x ** (a + 1) if x >= xm else 0.0
        else:
            k = shape.k
            dist = stats.gamma(k, scale=m / k)

            def pdf(x):
                return (k / m) ** k * x ** (k - 1) * math.exp(-k * x / m) / math.factorial(k - 1)
        assert dist.mean() == pytest.approx(m, rel=1e-9)
        assert pdf(m) == pytest.approx(float(dist.pdf(m)), rel=1e-12)
        cuts = [float(dist.ppf(q)) for q in (0.0, 1e-6, 0.01, 0.5, 0.99, 1 - 1e-9)]

        def A(s):
            f = lambda x: math.exp(-s * x) * pdf(x)  # noqa: E731
            parts = sum(integrate.quad(f, u, v, epsabs=0, epsrel=1e-12, limit=200)[0]
                        for u, v in zip(cuts[:-1], cuts[1:]))
            return parts + integrate.quad(f, cuts[-1], np.inf, epsabs=0, limit=200)[0]

    mu = 1 / S
    sigma = _fixed_point(A, mu, tol=1e-14)
    r = qm.qna(_one(shape, lam, S))
    assert r.exactness == "exact"
    assert float(r.R["j"]) == pytest.approx(S + sigma / (mu * (1 - sigma)), rel=1e-8)


# ---------------------------------------------------------------------------
# GI/M/c against Markov chains built here
# ---------------------------------------------------------------------------

def _ph_m_c_wait(alpha, T, mu, c, N):
    """Mean wait in the PH/M/c queue from its Markov chain on (n, phase),
    n = 0..N: the phase moves by T, an arrival (exit rate t0 = -T 1) adds a
    job and restarts the phase by alpha, a departure at rate min(n, c) mu.
    Returns (Wq, P(n = N)) (the latter to check the truncation)."""
    alpha, T = np.asarray(alpha, float), np.asarray(T, float)
    m = len(alpha)
    t0 = -T.sum(axis=1)
    n_states = (N + 1) * m
    Q = np.zeros((n_states, n_states))
    for n in range(N + 1):
        blk = slice(n * m, (n + 1) * m)
        Q[blk, blk] += T - np.diag(np.diag(T)) if m > 1 else 0.0
        if n < N:
            Q[blk, (n + 1) * m:(n + 2) * m] += np.outer(t0, alpha)
        if n > 0:
            Q[blk, (n - 1) * m:n * m] += np.eye(m) * min(n, c) * mu
    np.fill_diagonal(Q, 0.0)
    np.fill_diagonal(Q, -Q.sum(axis=1))
    # p Q = 0 with one balance equation replaced by sum p = 1
    A = Q.T.copy()
    A[0, :] = 1.0
    b = np.zeros(n_states)
    b[0] = 1.0
    p = np.linalg.solve(A, b).reshape(N + 1, m).sum(axis=1)
    lam = 1.0 / float(alpha @ np.linalg.solve(-T, np.ones(m)))
    Lq = float(sum((n - c) * p[n] for n in range(c + 1, N + 1)))
    return Lq / lam, p[-1]


def _erlang_ph(k, lam):
    T = np.diag([-k * lam] * k) + np.diag([k * lam] * (k - 1), 1)
    return np.eye(k)[0], T


@pytest.mark.parametrize("c", [1, 2, 3])
@pytest.mark.parametrize("shape,rho", [(Erlang(2), 0.5), (Erlang(3), 0.8),
                                       (HyperExponential(4.0), 0.5),
                                       (HyperExponential(8.0), 0.6)],
                         ids=["E2-0.5", "E3-0.8", "H4-0.5", "H8-0.6"])
def test_gi_m_c_against_the_markov_chain(shape, rho, c):
    lam = 1.0
    if isinstance(shape, Erlang):
        alpha, T = _erlang_ph(shape.k, lam)
    else:
        p, r = _h2(shape.scv, lam)
        alpha, T = p, np.diag(-r)
    S = rho * c / lam
    wq, tail = _ph_m_c_wait(alpha, T, 1 / S, c, N=260)
    assert tail < 1e-13
    r = qm.qna(_one(shape, lam, rho, c))   # station S = rho c, c servers
    assert r.exactness == "exact"
    assert float(r.R["j"]) == pytest.approx(S + wq, rel=1e-9)


def _death(S, c, N):
    """Generator of the pure-death process on 0..N with rates min(n, c) / S."""
    D = np.zeros((N + 1, N + 1))
    for n in range(1, N + 1):
        D[n, n - 1] = min(n, c) / S
        D[n, n] = -D[n, n - 1]
    return D


def _embedded_wait(kernel, S, c):
    """Mean wait of a GI/M/c queue from the Markov chain embedded just
    before arrivals (Kleinrock 1975, sec. 6.1): a job joins (n -> n + 1),
    then over the inter-arrival time the system empties as a pure-death
    process; ``kernel`` = E[expm(D T)], D = :func:`_death`, averaged over
    the inter-arrival time T.  An arrival that finds n >= c waits for
    n - c + 1 completions at rate c / S."""
    N = kernel.shape[0] - 1
    up = np.eye(N + 1, k=1)
    up[N, N] = 1.0                         # (truncation: checked below)
    P = up @ kernel
    A = P.T - np.eye(N + 1)
    A[0, :] = 1.0
    b = np.zeros(N + 1)
    b[0] = 1.0
    q = np.linalg.solve(A, b)
    assert q[-1] < 1e-13
    n = np.arange(N + 1)
    return float(np.sum(q[c:] * (n[c:] - c + 1)) * S / c)


def _point_kernel(points, weights, S, c, N=130):
    from scipy.linalg import expm

    D = _death(S, c, N)
    return sum(w * expm(D * x) for x, w in zip(points, weights))


def _lattice_kernel(h, weights, S, c, N):
    """E[expm(D T)] for T = k h with probability weights[k - 1]: powers of
    expm(D h)."""
    from scipy.linalg import expm

    E = expm(_death(S, c, N) * h)
    K, Ek = np.zeros_like(E), np.eye(len(E))
    for w in weights:
        Ek = Ek @ E
        K += w * Ek
    return K


@pytest.mark.parametrize("c", [1, 2, 3])
@pytest.mark.parametrize("shape", [Deterministic(), Empirical((1.0, 2.0, 2.0, 7.0)),
                                   Empirical((0.0, 1.0, 3.0))],
                         ids=["D", "Emp-1227", "Emp-013"])
def test_point_mass_arrivals_against_the_embedded_chain(shape, c):
    lam, rho = 1.5, 0.7
    S = rho * c / lam
    if isinstance(shape, Deterministic):
        pts, wts = [1 / lam], [1.0]
    else:
        x = np.asarray(shape.samples) / np.mean(shape.samples) / lam
        pts, wts = x, np.full(len(x), 1 / len(x))
    ref = _embedded_wait(_point_kernel(pts, wts, S, c), S, c)
    r = qm.qna(_one(shape, lam, S / c, c))
    assert r.exactness == "exact"
    assert float(r.R["j"]) == pytest.approx(S + ref, rel=1e-9)


def test_gi_m_c_many_servers_stay_accurate():
    # exponential arrivals through the transform: Erlang C, for c up to 200
    from qmodels.analytic.qna import erlang_c_prob

    tr = unit_transform(None)
    for c in (2, 10, 50, 200):
        for rho in (0.05, 0.5, 0.95):
            w, pw, sigma = gi_m_c_wait(tr, rho, c)
            C = erlang_c_prob(c, c * rho)
            assert pw == pytest.approx(C, rel=1e-9)
            assert w == pytest.approx(C / (c * (1 - rho)), rel=1e-9)
            assert sigma == pytest.approx(rho, rel=1e-12)
    # deterministic arrivals, 40 servers: against the embedded chain
    lam, rho, c = 1.0, 0.9, 40
    S = rho * c / lam
    w, _, _ = gi_m_c_wait(unit_transform(Deterministic()), rho, c)
    ref = _embedded_wait(_point_kernel([1.0], [1.0], S, c, N=250), S, c)
    assert w * S == pytest.approx(ref, rel=1e-8)


def test_thinned_entry_streams():
    # a renewal stream split at random is renewal; each part a GI/M/c queue
    lam, p = 2.0, 0.3
    net = qm.Network([qm.Queue("a", 0.5), qm.Queue("b", 1.0, servers=2)],
                     [qm.Open("j", lam, interarrival=Deterministic(),
                              routing={"source": {"a": p, "b": 1 - p}, "a": {"sink": 1},
                                       "b": {"sink": 1}})])
    r = qm.qna(net)
    assert r.exactness == "exact" and r.info["exact_stations"] == ["a", "b"]
    # a: inter-arrival time = (geometric number of arrivals) / lam, values
    # k / lam with probability p (1 - p)^(k - 1) (cut where below 1e-18)
    ks = np.arange(1, 120)
    wts = p * (1 - p) ** (ks - 1)
    assert wts.sum() == pytest.approx(1, abs=1e-15)
    ref_a = _embedded_wait(_lattice_kernel(1 / lam, wts, 0.5, 1, N=40), 0.5, 1)
    assert float(r.R["a"]) == pytest.approx(0.5 + ref_a, rel=1e-9)
    ks = np.arange(1, 40)
    wts = (1 - p) * p ** (ks - 1)
    assert wts.sum() == pytest.approx(1, abs=1e-15)
    ref_b = _embedded_wait(_lattice_kernel(1 / lam, wts, 1.0, 2, N=90), 1.0, 2)
    assert float(r.R["b"]) == pytest.approx(1.0 + ref_b, rel=1e-9)


# ---------------------------------------------------------------------------
# labels
# ---------------------------------------------------------------------------

def test_a_tandem_behind_a_gi_m_1_is_approximate_and_says_where():
    net = qm.Network([qm.Queue("a", 0.6), qm.Queue("b", 0.5)],
                     [qm.Open("j", 1.0, interarrival=HyperExponential(8),
                              routing={"source": {"a": 1}, "a": {"b": 1}, "b": {"sink": 1}})])
    r = qm.qna(net)
    assert r.exactness == "approximate" and r.error is not None
    assert r.info["exact_stations"] == ["a"]
    # the first station is still the exact GI/M/1 value
    assert float(r.R["a"]) == pytest.approx(float(qm.qna(_one(HyperExponential(8), 1, .6)).R["j"]),
                                            rel=1e-12)
    note = next(n for n in r.notes if n.startswith("APPROXIMATION"))
    assert "'b' (GI/G/1, Kraemer & Langenbach-Belz)" in note
    assert "solved exactly: 'a' (GI/M/1" in note
    assert "departure SCV" in note
    assert any("departures by Whitt's approximation" in a for a in r.assumptions)


@pytest.mark.parametrize("make,exact", [
    # feedback into the GI/M/1 station: its arrivals are not the renewal stream
    (lambda: qm.Network([qm.Queue("a", 0.3)],
                        [qm.Open("j", 1.0, interarrival=Erlang(2),
                                 routing={"source": {"a": 1}, "a": {"a": 0.2, "sink": 0.8}})]),
     []),
    # two classes at one station, one of them not Poisson
    (lambda: qm.Network([qm.Queue("a", 0.3)],
                        [qm.Open("j", 1.0, interarrival=Erlang(2), visits={"a": 1}),
                         qm.Open("k", 0.5, visits={"a": 1})]), []),
    # a non-exponential service shape: GI/G/1
    (lambda: qm.Network([qm.Queue("a", 0.3, distribution=Erlang(2))],
                        [qm.Open("j", 1.0, interarrival=Erlang(2), visits={"a": 1})]), []),
    # exponential tandem M/M/1 -> M/D/1 (Burke: Poisson departures) -> a PS queue
    # with hyperexponential service -> FCFS behind it (not Poisson in QNA)
    (lambda: qm.Network([qm.Queue("a", 0.3), qm.Queue("b", 0.4, distribution=Deterministic()),
                         qm.Queue("c", 0.2, discipline="ps", distribution=HyperExponential(3)),
                         qm.Queue("d", 0.1)],
                        [qm.Open("j", 1.0, routing={"source": {"a": 1}, "a": {"b": 1},
                                                    "b": {"c": 1}, "c": {"d": 1},
                                                    "d": {"sink": 1}})]),
     ["a", "b"]),
    # a Jackson network with feedback and a delay: exact
    (lambda: qm.Network([qm.Queue("a", 0.1, servers=2), qm.Queue("b", 0.2), qm.Delay("z", 1)],
                        [qm.Open("j", 2.0, routing={"source": {"a": 1}, "a": {"b": 0.5, "z": 0.2,
                                                                              "sink": 0.3},
                                                    "b": {"a": 1}, "z": {"a": 1}})]),
     ["a", "b", "z"]),
    # a delay after the GI/M/1 station is exact whatever arrives
    (lambda: qm.Network([qm.Queue("a", 0.3), qm.Delay("z", 1)],
                        [qm.Open("j", 1.0, interarrival=Deterministic(),
                                 routing={"source": {"a": 1}, "a": {"z": 1}, "z": {"sink": 1}})]),
     ["a", "z"]),
])
def test_exactness_per_station(make, exact):
    net = make()
    r = qm.qna(net)
    assert r.info["exact_stations"] == exact
    everything = len(exact) == sum(1 for h in r.info["solved_as"] if h)
    assert r.exactness == ("exact" if everything else "approximate")
    assert (r.error is None) == everything


def test_an_md1_behind_exponential_stations_is_pollaczek_khinchine():
    # Burke: the M/M/1's departures are Poisson, so the M/D/1 behind it is exact
    net = qm.Network([qm.Queue("a", 0.3), qm.Queue("b", 0.4, distribution=Deterministic())],
                     [qm.Open("j", 2.0, routing={"source": {"a": 1}, "a": {"b": 1},
                                                 "b": {"sink": 1}})])
    r = qm.qna(net)
    assert r.exactness == "exact"
    lam, s = 2.0, 0.4
    assert float(r.R["b"]) == pytest.approx(s + lam * s * s / (2 * (1 - lam * s)), rel=1e-12)
    # the same behind a Jackson loop: the flow out of it is on no cycle, so
    # Poisson (Melamed 1979); the simulator gave 1.2488 +- 0.0054 for R_c
    net = qm.Network([qm.Queue("a", 0.2), qm.Queue("b", 0.3),
                      qm.Queue("c", 0.5, distribution=Deterministic())],
                     [qm.Open("j", 1.5, routing={"source": {"a": 1}, "a": {"b": 0.4, "c": 0.6},
                                                 "b": {"a": 1}, "c": {"sink": 1}})])
    r = qm.qna(net)
    assert r.exactness == "exact"
    lam, s = 1.5, 0.5
    assert float(r.R["c"]) == pytest.approx(s + lam * s * s / (2 * (1 - lam * s)), rel=1e-12)


# ---------------------------------------------------------------------------
# numbers: extremes, refusals
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [Deterministic(), HyperExponential(8), Lognormal(4.0),
                                   Pareto(2.5), Uniform(1.0), Empirical((1, 2, 3, 10))],
                         ids=lambda d: type(d).__name__)
@pytest.mark.parametrize("c", [1, 3])
def test_the_answer_depends_on_rho_only_for_any_rates(shape, c):
    base = float(qm.qna(_one(shape, 1.0, 0.6, c)).R["j"])
    for lam in (1e-9, 1e9):
        r = qm.qna(_one(shape, lam, 0.6 / lam, c))
        assert r.exactness == "exact"
        assert float(r.R["j"]) * lam == pytest.approx(base, rel=1e-8)
    # tiny and near-saturated loads stay finite
    for lam, S in ((1e-9, 1e-9), (1e9, 1e-18), (1.0, 1 - 1e-9)):
        R = float(qm.qna(_one(shape, lam, S, c)).R["j"])
        assert math.isfinite(R) and R >= S * c


def test_transform_identities():
    for shape in (None, Deterministic(), Erlang(4), HyperExponential(8), Uniform(0.7),
                  Empirical((0, 1, 5)), Lognormal(2.0), Pareto(3.0)):
        tr = unit_transform(shape)
        assert tr.slope(0.0, 0.0) == pytest.approx(1.0, rel=1e-9)          # mean 1
        for t in (1e-7, 0.3, 5.0):
            assert tr.lst(t) + tr.complement(t) == pytest.approx(1.0, rel=1e-12)
            # the divided difference against the plain quotient where it is safe
            assert tr.slope(t, 2 * t + 1) == pytest.approx(
                (tr.lst(t) - tr.lst(2 * t + 1)) / (t + 1), rel=1e-8)
            assert tr.slope(t, t) == pytest.approx(tr.deriv(t), rel=1e-9)
        th = thinned(tr, 0.25)
        assert th.slope(0.0, 0.0) == pytest.approx(1.0, rel=1e-9)


def test_gi_m_c_wait_refuses_saturation():
    with pytest.raises(UnstableError):
        gi_m_c_wait(unit_transform(Deterministic()), 1.0, 2)


def test_an_unresolvable_transform_falls_back_to_the_labelled_approximation():
    # SCV 1e300: the root 1 - sigma lies below 1e-300; the two-moment value
    # stays, labelled approximate, and the station says why
    r = qm.qna(_one(HyperExponential(1e300), 1.0, 0.5))
    assert r.exactness == "approximate" and math.isfinite(float(r.R["j"]))
    assert "exact GI/M/1 solution failed" in r.info["solved_as"][0]


# ---------------------------------------------------------------------------
# the simulator
# ---------------------------------------------------------------------------

def test_a_bursty_split_stream_agrees_with_the_simulator():
    net = qm.Network([qm.Queue("a", 0.8, servers=2), qm.Queue("b", 0.5)],
                     [qm.Open("j", 2.0, interarrival=HyperExponential(6.0),
                              routing={"source": {"a": 0.7, "b": 0.3}, "a": {"sink": 1},
                                       "b": {"sink": 1}})])
    r = qm.qna(net)
    assert r.exactness == "exact"
    s = qm.simulate(net, seed=5, horizon=1e5, replications=10, progress=False)
    for k in ("a", "b"):
        est = s.R[k]
        assert abs(float(r.R[k]) - float(est)) <= est.half_width, (k, float(r.R[k]), float(est))
