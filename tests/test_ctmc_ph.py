"""The CTMC with phase-type service and arrivals, and with priority queues
(qmodels.analytic.ctmc, qmodels.analytic.phase_type), against closed forms
derived independently of the chain:

* M/G/1 (Pollaczek-Khinchine; Kleinrock, *Queueing Systems* vol. 1, 1975,
  eq. 5.105): R = S + lambda E[S^2] / (2 (1 - rho)), through ``qm.mg1``;
* GI/M/1 (Kleinrock 1975, sec. 6.4): sigma the root in (0, 1) of sigma =
  A*(mu (1 - sigma)), A* the Laplace transform of the inter-arrival time,
  R = 1 / (mu (1 - sigma)); solved here by bisection on the transform;
* M/G/1 with non-preemptive priority (Cobham 1954; Kleinrock vol. 2, 1976,
  sec. 3.6) and preemptive-resume priority (Kleinrock vol. 2, sec. 3.7),
  through ``qm.mg1_prio`` / ``qm.mg1_prio_pr``; M/M/c with non-preemptive
  priority through ``qm.mmc_prio``;
* exact MVA on product-form networks (Reiser & Lavenberg 1980), with the
  phases of PS, LCFS-PR and delay stations held in the chain (insensitivity
  checked by the chain itself);
* M/M/1/K (the truncated geometric), through the automatic choice;
* the simulator on a small non-product-form network (slow) and on five
  random ones (FCFS, prio and prio-pr queues, Erlang and H2 service, two
  closed classes).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic import ctmc as C
from qmodels.analytic import phase_type as P
from qmodels.errors import ProblemTooLargeError, UnsupportedModelError

# ---------------------------------------------------------------------------
# the phase-type forms
# ---------------------------------------------------------------------------


def _h2_moments(j, mean, c2):
    p, lam = P.h2_balanced(mean, c2)
    return sum(pi * math.factorial(j) / li ** j for pi, li in zip(p, lam))


@pytest.mark.parametrize("dist, phases", [(None, 1), (qm.Erlang(4), 4),
                                          (qm.HyperExponential(8), 2),
                                          (qm.HyperExponential(1.0), 1)])
def test_exact_shapes_are_exact_coxians(dist, phases):
    cox = P.coxian_of(dist, 2.5)
    assert cox.exact and cox.fit == "" and cox.phases == phases
    assert cox.mean == pytest.approx(2.5, rel=1e-14)
    c2 = 1.0 if dist is None else dist.scv
    assert cox.scv == pytest.approx(c2, rel=1e-12)
    if isinstance(dist, qm.HyperExponential) and dist.scv > 1:
        # the same distribution as the simulator's balanced-means H2: moments 1..4
        for j in (1, 2, 3, 4):
            assert cox.moment(j) == pytest.approx(_h2_moments(j, 2.5, 8.0), rel=1e-12)


def test_hyperexponential_of_three_branches_as_a_coxian():
    # Cumani's canonical form: the same moments as the mixture, order by order
    probs, rates = (0.2, 0.3, 0.5), (1.0, 2.0, 5.0)
    cox = P.Coxian(*P.hyper_to_coxian(probs, rates))
    assert cox.phases == 3 and cox.rates == (5.0, 2.0, 1.0)
    for j in (1, 2, 3, 4, 5):
        want = sum(p * math.factorial(j) / lam ** j for p, lam in zip(probs, rates))
        assert cox.moment(j) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("dist", [qm.Uniform(0.5), qm.Lognormal(0.3), qm.Pareto(3.5),
                                  qm.Empirical((1.0, 2.0, 0.5, 1.5))])
def test_low_variability_fits_match_three_moments(dist):
    # the acyclic phase-type of fewest phases with the shape's first three
    # moments (Bobbio, Horvath & Telek 2005); an APH of n phases has scv >=
    # 1/n, so it has at least ceil(1/scv) of them
    cox = P.coxian_of(dist, 3.0)
    m2, m3 = P.relative_moments(dist)
    assert not cox.exact and cox.phases >= math.ceil(1 / dist.scv)
    assert "first three moments" in cox.fit and "Bobbio" in cox.fit
    assert cox.mean == pytest.approx(3.0, rel=1e-12)
    assert cox.moment(2) == pytest.approx(9.0 * m2, rel=1e-9)
    assert cox.moment(3) == pytest.approx(27.0 * m3, rel=1e-9)


def test_low_variability_fit_falls_back_to_two_moments_within_the_phase_cap():
    # the empirical shape's three moments need 9 phases, its scv (0.2) 5:
    # with max_phases = 6 the mixture of Erlang-4 and Erlang-5 (mean and
    # scv matched; Tijms 2003, app. B)
    dist = qm.Empirical((1.0, 2.0, 0.5, 1.5))
    assert P.coxian_of(dist, 3.0).phases == 9
    cox = P.coxian_of(dist, 3.0, max_phases=6)
    assert not cox.exact and not cox.capped and cox.phases == 5
    assert "Erlang-4 and Erlang-5" in cox.fit and "mean and scv matched" in cox.fit
    assert cox.mean == pytest.approx(3.0, rel=1e-12)
    assert cox.scv == pytest.approx(dist.scv, rel=1e-9)


@pytest.mark.parametrize("n", [2, 3, 5, 12])
def test_aph_third_moment_bounds_close_on_the_erlang(n):
    # at n2 = (n + 1)/n the only APH of order n is the Erlang-n, whose
    # normalised third moment m3 / (m1 m2) is (n + 2)/n (its moments
    # m_j = (n + j - 1)! / ((n - 1)! n^j)): both bounds meet there
    lo, hi = P.aph_bounds((n + 1) / n, n)
    assert lo == pytest.approx((n + 2) / n, rel=1e-9)
    assert hi == pytest.approx((n + 2) / n, rel=1e-9)


def test_aph_third_moment_bounds_published_example():
    # Bobbio, Horvath & Telek's bounds as tabulated in the BuTools manual
    # (APH3rdMomentLowerBound / UpperBound): m1 = 1.9, m2 = 5; order 3:
    # 16.577 .. 17.081, order 4: from 16.079, no upper bound
    lo, hi = P.aph_bounds(5 / 1.9 ** 2, 3)
    assert (lo * 1.9 * 5, hi * 1.9 * 5) == pytest.approx((16.577458, 17.081405), rel=1e-6)
    lo, hi = P.aph_bounds(5 / 1.9 ** 2, 4)
    assert lo * 1.9 * 5 == pytest.approx(16.079377, rel=1e-6) and hi == math.inf


def test_three_moment_h2_fit():
    # the H2 with the moments of a lognormal of scv 4 (1, 5, 125; Whitt
    # 1982): its moments are those given
    r, q = P.hyper_to_coxian(*P.h2_three_moments(1.0, 5.0, 125.0))
    cox = P.Coxian(r, q)
    assert cox.phases == 2
    assert [cox.moment(j) for j in (1, 2, 3)] == pytest.approx([1.0, 5.0, 125.0], rel=1e-10)


def _kl_loss(probs, rates, c2, nodes=200):
    # -E[log h(X)] for X lognormal of mean 1 and scv c2 (Gauss-Hermite in
    # log X, more nodes than the fit's own)
    s2 = math.log1p(c2)
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    x = np.exp(-s2 / 2 + math.sqrt(s2) * z)
    from scipy.special import logsumexp

    logs = np.log(np.asarray(probs) * np.asarray(rates)) - np.outer(x, rates)
    return -float((w / w.sum()) @ logsumexp(logs, axis=1))


def _quad_kl_loss(log_density, c2):
    # -E[log h(X)], X lognormal of mean 1 and scv c2, by adaptive quadrature
    # of the lognormal's density in x (an independent integration of the
    # fit's Gauss-Hermite rule)
    from scipy import integrate, stats

    s = math.sqrt(math.log1p(c2))
    ln = stats.lognorm(s, scale=math.exp(-s * s / 2))
    f = lambda x: -ln.pdf(x) * log_density(x)  # noqa: E731
    a, b = ln.ppf(1e-13), ln.ppf(1 - 1e-13)
    return integrate.quad(f, a, 1.0, limit=400)[0] + integrate.quad(f, 1.0, b, limit=400)[0]


def _hyper_erlang_log_pdf(probs, rates, m):
    def f(x):   # log sum_i p_i r_i^m x^(m-1) e^(-r_i x) / (m-1)!, terms in logs
        logs = [math.log(p) + m * math.log(r) + (m - 1) * math.log(x) - r * x
                - math.lgamma(m) for p, r in zip(probs, rates)]
        top = max(logs)
        return top + math.log(sum(math.exp(v - top) for v in logs))
    return f


def test_hyper_erlang_coxian_has_the_mixtures_moments_and_density():
    # p Erlang(m, a) + (1 - p) Erlang(m, b): E[X^j] = sum_i p_i m (m + 1) ..
    # (m + j - 1) / lambda_i^j, and the density at a few points, against the
    # Coxian's alpha exp(T x) t (Neuts 1981, sec. 2.2)
    from scipy.linalg import expm

    for (p, a, b), m in (((0.7, 5.0, 0.8), 2), ((0.2, 1.5, 9.0), 3), ((0.5, 2.0, 2.0), 2)):
        r, q = P.hyper_erlang_to_coxian((p, 1 - p), (a, b), m)
        cox = P.Coxian(r, q)
        for j in (1, 2, 3):
            want = sum(pi * math.prod(range(m, m + j)) / lam ** j
                       for pi, lam in ((p, a), (1 - p, b)))
            assert cox.moment(j) == pytest.approx(want, rel=1e-10)
        T = cox.subgenerator()
        t = -T.sum(axis=1)
        for x in (0.05, 0.4, 1.0, 3.0):
            dens = float(expm(T * x)[0] @ t)
            assert dens == pytest.approx(math.exp(_hyper_erlang_log_pdf((p, 1 - p), (a, b), m)(x)),
                                         rel=1e-9)


@pytest.mark.parametrize("c2", [1.1, 1.25, 1.5])
def test_a_lognormal_of_scv_to_one_and_a_half_is_the_closest_mixture_of_two_erlang_2(c2):
    cox = P.coxian_of(qm.Lognormal(c2), 2.0)
    assert cox.phases == 4 and "mixture of two Erlang-2" in cox.fit
    assert cox.mean == pytest.approx(2.0, rel=1e-10)
    assert cox.scv == pytest.approx(c2, rel=1e-7)
    # the divergence, integrated apart from the fit's own rule, is below the
    # H3's (the fit chosen is the closer one) and the balanced H2's
    probs, rates = P.lognormal_hyper_erlang(c2, 2)
    mine = _quad_kl_loss(_hyper_erlang_log_pdf(probs, rates, 2), c2)
    h3 = P.lognormal_hyper(c2)
    assert mine < _quad_kl_loss(_hyper_erlang_log_pdf(*h3, 1), c2)
    assert mine < _quad_kl_loss(_hyper_erlang_log_pdf(*qm.HyperExponential(c2).branches(), 1), c2)
    # with three phases allowed, the H3
    assert "H3" in P.coxian_of(qm.Lognormal(c2), 2.0, max_phases=3).fit


@pytest.mark.parametrize("c2", [2.0, 4.0, 8.0])
def test_a_lognormal_of_high_variance_is_the_closest_h3_with_its_mean_and_scv(c2):
    dist = qm.Lognormal(c2)
    cox = P.coxian_of(dist, 2.0)
    assert cox.phases == 3 and "Kullback-Leibler" in cox.fit and "H3" in cox.fit
    if c2 > 2.5:     # past SCV 2.3 the H3 is the closer one in divergence too
        h2e = P.lognormal_hyper_erlang(c2, 2)
        assert _quad_kl_loss(_hyper_erlang_log_pdf(*P.lognormal_hyper(c2), 1), c2) < \
            _quad_kl_loss(_hyper_erlang_log_pdf(*h2e, 2), c2)
    assert cox.mean == pytest.approx(2.0, rel=1e-10)
    assert cox.scv == pytest.approx(c2, rel=1e-7)
    # closer to the lognormal than the two H2s of the same mean and scv
    # (balanced means, Whitt 1982; three moments)
    probs, rates = P.lognormal_hyper(c2)
    mine = _kl_loss(probs, rates, c2)
    balanced = qm.HyperExponential(c2).branches()
    assert mine < _kl_loss(*balanced, c2)
    assert mine < _kl_loss(*P.h2_three_moments(1.0, 1 + c2, (1 + c2) ** 3), c2)


def test_heavy_pareto_falls_back_to_the_balanced_h2():
    dist = qm.Pareto(2.2)                      # scv 1/(2.2 * 0.2) = 2.27, no third moment
    cox = P.coxian_of(dist, 1.0)
    assert "balanced-means H2" in cox.fit and "no third moment" in cox.fit
    assert cox.scv == pytest.approx(dist.scv, rel=1e-12)


def test_deterministic_is_an_erlang_at_the_phase_cap_with_its_error_stated():
    cox = P.coxian_of(qm.Deterministic(), 1.0)
    assert cox.phases == P.DEFAULT_MAX_PHASES == 20 and cox.capped
    assert "Erlang-20" in cox.fit and "max_phases = 20" in cox.fit and "1.05" in cox.fit
    assert P.coxian_of(qm.Deterministic(), 1.0, max_phases=7).phases == 7


def test_phase_type_refusals():
    with pytest.raises(qm.InvalidValueError, match="max_phases must be an integer >= 1"):
        P.coxian_of(qm.Deterministic(), 1.0, max_phases=0)
    with pytest.raises(qm.InvalidValueError, match="station 'x': a phase-type time needs"):
        P.coxian_of(None, 0.0, who="station 'x'")

    class Odd(qm.distributions.Distribution):
        @property
        def scv(self):
            return 2.0

    with pytest.raises(UnsupportedModelError, match="station 'x': no phase-type form of a Odd"):
        P.coxian_of(Odd(), 1.0, who="station 'x'")


# ---------------------------------------------------------------------------
# single queues against closed forms
# ---------------------------------------------------------------------------

def _open_queue(dist=None, arrivals=None, lam=1.0, S=0.6, servers=1):
    return qm.Network([qm.Queue("q", S, distribution=dist, servers=servers)],
                      [qm.Open("j", lam, interarrival=arrivals, visits={"q": 1})])


@pytest.mark.parametrize("dist", [qm.Erlang(2), qm.Erlang(3), qm.Erlang(5),
                                  qm.HyperExponential(2.0), qm.HyperExponential(8.0)])
def test_m_ph_1_equals_pollaczek_khinchine(dist):
    # the open-job bound set so that the truncated mass (~ rho^L) is far below 1e-9
    r = qm.ctmc(_open_queue(dist), open_limit=400 if dist.scv > 1 else 100)
    pk = qm.mg1(1.0, 0.6, dist.scv)
    assert r.R["j"] == pytest.approx(pk.R, rel=1e-9)
    assert r.Q["q"] == pytest.approx(pk.L, rel=1e-9)
    assert r.U["q"] == pytest.approx(0.6, rel=1e-12)
    assert r.exactness == "exact"
    assert any("phase-type, held exactly" in a for a in r.assumptions)


def test_m_d_1_through_the_erlang_fit_converges_as_stated():
    # Erlang-k for a constant: the P-K wait is (1 + 1/k) times the M/D/1
    # wait, exactly (the chain is the M/E_k/1); the note states the factor
    md1 = qm.md1(1.0, 0.6)
    for k in (5, 10, 20, 40):
        r = qm.ctmc(_open_queue(qm.Deterministic()), open_limit=60, max_phases=k)
        assert r.exactness == "approximate"
        assert any(f"Erlang-{k}" in a and "(a fit)" in a for a in r.assumptions)
        assert (r.R["j"] - 0.6) / md1.waiting_time == pytest.approx(1 + 1 / k, rel=1e-9)
    # by default Erlang-20: the wait within 5 %, the response time within 2.1 %
    r = qm.ctmc(_open_queue(qm.Deterministic()))
    assert any("Erlang-20" in a for a in r.assumptions)
    assert abs(r.R["j"] / md1.R - 1) < 0.0215


def _gi_m_1_sigma(lst, mu):
    """The root in (0, 1) of sigma = A*(mu (1 - sigma)) (Kleinrock 1975,
    eq. 6.21), by bisection: f(s) = A*(mu (1 - s)) - s is > 0 near 0 and
    < 0 just below 1 when rho < 1."""
    lo, hi = 1e-15, 1 - 1e-12
    for _ in range(200):
        mid = (lo + hi) / 2
        if lst(mu * (1 - mid)) - mid > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def test_gi_m_1_with_bursty_h2_arrivals():
    # issue 27's case: H2 of SCV 8 (balanced means), rho = 0.6, S = 0.6
    p, lam = P.h2_balanced(1.0, 8.0)
    sigma = _gi_m_1_sigma(lambda s: sum(pi * li / (li + s) for pi, li in zip(p, lam)), 1 / 0.6)
    R = 0.6 / (1 - sigma)
    assert R == pytest.approx(3.956, abs=5e-4)
    r = qm.ctmc(_open_queue(arrivals=qm.HyperExponential(8.0)), open_limit=400)
    assert r.R["j"] == pytest.approx(R, rel=1e-9)
    assert r.X["j"] == pytest.approx(1.0, rel=1e-12)
    assert r.exactness == "exact"
    assert any("class 'j': inter-arrival times: phase-type" in a for a in r.assumptions)


@pytest.mark.parametrize("k", [2, 3])
def test_gi_m_1_with_erlang_arrivals(k):
    sigma = _gi_m_1_sigma(lambda s: (k / (k + s)) ** k, 1 / 0.6)
    r = qm.ctmc(_open_queue(arrivals=qm.Erlang(k)), open_limit=120)
    assert r.R["j"] == pytest.approx(0.6 / (1 - sigma), rel=1e-9)


def test_d_m_1_through_the_fit():
    # D/M/1 (Kleinrock 1975, sec. 6.4: sigma = exp(-mu (1 - sigma))): the
    # Erlang-k fit of the constant inter-arrival time is exactly the E_k/M/1
    # queue (checked to 1e-9); it is 3.4 % above D/M/1 at k = 20, 1.7 % at 40
    mu = 1 / 0.6
    exact = 0.6 / (1 - _gi_m_1_sigma(lambda s: math.exp(-s), mu))
    for k, err in ((20, 0.034), (40, 0.017)):
        r = qm.ctmc(_open_queue(arrivals=qm.Deterministic()), open_limit=60, max_phases=k)
        assert r.exactness == "approximate"
        ek = 0.6 / (1 - _gi_m_1_sigma(lambda s, k=k: (k / (k + s)) ** k, mu))
        assert r.R["j"] == pytest.approx(ek, rel=1e-9)
        assert 0 < r.R["j"] / exact - 1 < err


def _prio_queue(disc, lams, S, dist=None, servers=1, levels=None):
    levels = levels or list(range(len(lams)))
    return qm.Network(
        [qm.Queue("q", 1.0, discipline=disc, distribution=dist, servers=servers)],
        [qm.Open(f"c{i}", lam, visits={"q": 1}, service={"q": s}, priority=lv)
         for i, (lam, s, lv) in enumerate(zip(lams, S, levels))])


@pytest.mark.parametrize("disc, form", [("prio", qm.mg1_prio), ("prio-pr", qm.mg1_prio_pr)])
@pytest.mark.parametrize("dist", [None, qm.Erlang(2)])
def test_two_priority_levels_against_the_m_g_1_formulas(disc, form, dist):
    lams, S = [0.25, 0.3], [0.8, 1.2]
    r = qm.ctmc(_prio_queue(disc, lams, S, dist), open_limit=70)
    scv = 1.0 if dist is None else dist.scv
    for i, m in enumerate(form(lams, S, scv)):
        assert r.R[f"c{i}"] == pytest.approx(m.R, rel=1e-9)
    assert r.exactness == "exact"


@pytest.mark.parametrize("disc, form", [("prio", qm.mg1_prio), ("prio-pr", qm.mg1_prio_pr)])
def test_three_levels(disc, form):
    lams, S = [0.2, 0.15, 0.1], [0.5, 1.0, 1.5]
    r = qm.ctmc(_prio_queue(disc, lams, S), open_limit=40)
    assert r.info["truncation_mass"] < 1e-12
    for i, m in enumerate(form(lams, S, 1.0)):
        assert r.R[f"c{i}"] == pytest.approx(m.R, rel=1e-9)


@pytest.mark.parametrize("disc", ["prio", "prio-pr"])
def test_two_classes_sharing_a_level_are_served_fcfs_between_them(disc):
    # one level: the queue is FCFS over a mixture of service times (Cobham's
    # formula with one level; the order of the classes is in the state, so
    # the load is kept light: 2^n orders of n waiting jobs)
    lams, S = [0.1, 0.03], [0.5, 2.0]
    r = qm.ctmc(_prio_queue(disc, lams, S, levels=[0, 0]), open_limit=13)
    assert r.info["truncation_mass"] < 1e-9
    for i, m in enumerate(qm.mg1_prio(lams, S, 1.0, [0, 0])):
        # (the mass left beyond the bound, 6.5e-10, moves R by 1.3e-8)
        assert r.R[f"c{i}"] == pytest.approx(m.R, rel=3e-8)


@pytest.mark.parametrize("c, lams, limit", [(2, [0.5, 0.4], 40), (3, [0.3, 0.3, 0.3], 24)])
def test_m_m_c_priority_against_cobham(c, lams, limit):
    S = 1.0
    r = qm.ctmc(_prio_queue("prio", lams, [S] * len(lams), servers=c), open_limit=limit)
    assert r.info["truncation_mass"] < 1e-10
    for i, m in enumerate(qm.mmc_prio(lams, S, c)):
        assert r.R[f"c{i}"] == pytest.approx(m.R, rel=1e-9)


def test_preemptive_resume_keeps_the_phase_of_the_preempted_job():
    # Erlang-3 service: a restart (not resume) would lengthen the low class;
    # the formula is for resume (Kleinrock vol. 2, sec. 3.7)
    lams, S = [0.3, 0.2], [0.6, 1.5]
    r = qm.ctmc(_prio_queue("prio-pr", lams, S, qm.Erlang(3)), open_limit=45)
    lo = qm.mg1_prio_pr(lams, S, 1 / 3)[1]
    assert r.R["c1"] == pytest.approx(lo.R, rel=1e-9)


def test_lcfs_pr_is_product_form_with_any_shape():
    # BCMP type 4: the M/G/1 LCFS-PR queue has the M/M/1 mean (insensitive)
    net = qm.Network([qm.Queue("q", 0.6, discipline="lcfs-pr", distribution=qm.Erlang(3))],
                     [qm.Open("j", 1.0, visits={"q": 1})])
    spec = C._Spec(net, 60)
    assert spec.insensitive_shapes == ["q"] and not spec.phased[0]


# ---------------------------------------------------------------------------
# networks: product form with the phases held, labels, the automatic choice
# ---------------------------------------------------------------------------

def _held(monkeypatch):
    """Make the chain hold the phases even where product form makes them
    irrelevant (so that exact MVA checks the phase machinery)."""
    from qmodels.analytic import requires
    monkeypatch.setattr(requires, "product_form", lambda *a, **k: "forced")


@pytest.mark.parametrize("shape", [qm.Erlang(2), qm.HyperExponential(5.0)])
def test_insensitive_stations_with_phases_held_equal_exact_mva(monkeypatch, shape):
    # PS, LCFS-PR and delay stations with Erlang or H2 service: the chain
    # holds every phase, and the figures are those of product form
    net = qm.Network(
        [qm.Queue("cpu", 0.04, discipline="ps", distribution=shape),
         qm.Queue("io", 0.05, discipline="lcfs-pr", distribution=shape),
         qm.Delay("net", 0.1, distribution=shape),
         qm.Queue("disk", 0.03)],
        [qm.Closed("a", 3, visits={"cpu": 2, "io": 1, "net": 1, "disk": 1}, think_time=0.3),
         qm.Closed("b", 2, visits={"cpu": 1, "net": 2, "disk": 1},
                   service={"cpu": 0.07, "net": 0.02, "disk": 0.03})])
    m = qm.mva(net)
    _held(monkeypatch)
    r = qm.ctmc(net)
    assert r.info["states"] > 500 and r.exactness == "exact"
    for c in ("a", "b"):
        assert r.X[c] == pytest.approx(m.X[c], rel=1e-12)
        assert r.R[c] == pytest.approx(m.R[c], rel=1e-12)
    np.testing.assert_allclose(np.asarray(r.station_queue_length),
                               np.asarray(m.station_queue_length), rtol=1e-11, atol=1e-14)


def test_product_form_takes_insensitive_shapes_exponential_and_says_so():
    net = qm.Network([qm.Queue("cpu", 0.04, discipline="ps", distribution=qm.Deterministic()),
                      qm.Queue("disk", 0.03)],
                     [qm.Closed("a", 4, visits={"cpu": 1, "disk": 1})])
    r = qm.ctmc(net)
    assert r.exactness == "exact"
    assert any("taken exponential" in a and "insensitivity" in a for a in r.assumptions)
    assert r.X["a"] == pytest.approx(qm.mva(net).X["a"], rel=1e-12)


def test_fitted_shapes_make_the_answer_approximate_and_named():
    net = qm.Network([qm.Queue("cpu", 0.04), qm.Queue("disk", 0.03, distribution=qm.Lognormal(3))],
                     [qm.Closed("a", 3, visits={"cpu": 1, "disk": 1})])
    r = qm.ctmc(net)
    assert r.exactness == "approximate"
    fit = [a for a in r.assumptions if "(a fit)" in a]
    assert len(fit) == 1 and "station 'disk': service Lognormal (scv 3)" in fit[0]
    assert "Kullback-Leibler" in fit[0] and "3 phases" in fit[0]
    d = r.to_dict()
    assert d["exactness"] == "approximate" and any("Lognormal" in a for a in d["assumptions"])


def test_solve_chooses_the_chain_for_gi_m_1_and_priority_networks():
    r = qm.solve(_open_queue(arrivals=qm.HyperExponential(8.0)))
    assert r.method == "ctmc" and r.exactness == "exact"
    assert r.R["j"] == pytest.approx(3.956, abs=1e-3)
    assert any("method chosen by qm.solve: 'ctmc'" in n for n in r.notes)
    net = qm.Network([qm.Queue("cpu", 0.05, discipline="prio"), qm.Queue("disk", 0.04)],
                     [qm.Closed("hi", 2, visits={"cpu": 1, "disk": 1}, priority=0),
                      qm.Closed("lo", 3, visits={"cpu": 1, "disk": 1}, priority=1,
                                think_time=0.1)])
    r = qm.solve(net)
    assert r.method == "ctmc"
    assert r.X["hi"] == pytest.approx(qm.ctmc(net).X["hi"], rel=1e-12)


def test_blocking_with_phases_in_the_python_builder():
    # M/E_2/1/K: capacity bounds the open jobs (no truncation); the loss
    # probability equals P(K present) (PASTA), and Little's law holds
    net = qm.Network([qm.Queue("q", 0.8, capacity=4, distribution=qm.Erlang(2))],
                     [qm.Open("j", 1.0, routing={"source": {"q": 1}, "q": {"sink": 1}})])
    r = qm.ctmc(net)
    p = qm.marginal(r, "q")
    assert len(p) == 5 and r.info["truncation_mass"] == 0
    assert r.info["loss"]["j"] == pytest.approx(p[4], rel=1e-12)
    assert r.X["j"] == pytest.approx(1.0 - p[4], rel=1e-12)
    assert r.U["q"] == pytest.approx(r.X["j"] * 0.8, rel=1e-12)


def test_a_fit_too_large_at_twenty_phases_is_retried_coarser():
    # Deterministic service at two servers: C(k + 1, 2) phase pairs; at
    # max_states = 3,000 the Erlang-20 chain does not fit, Erlang-10 does
    net = _open_queue(qm.Deterministic(), lam=1.5, S=1.0, servers=2)
    r = qm.ctmc(net, max_states=3000, open_limit=40)
    assert any("Erlang-10" in a for a in r.assumptions)
    with pytest.raises(ProblemTooLargeError):
        qm.ctmc(net, max_states=3000, open_limit=40, max_phases=20)


@pytest.mark.filterwarnings("ignore::qmodels.NumericalWarning")
def test_compiled_and_python_builders_agree_on_a_phase_type_priority_network():
    # (the random comparison lives in tests/test_ctmc_compiled.py)
    net = qm.Network(
        [qm.Queue("a", 0.2, discipline="prio-pr", servers=2, distribution=qm.Erlang(2)),
         qm.Queue("b", 0.3, discipline="prio", servers=2, distribution=qm.HyperExponential(3)),
         qm.Delay("t", 0.5, distribution=qm.Erlang(2))],
        [qm.Closed("x", 2, visits={"a": 1, "b": 1, "t": 1}, priority=1),
         qm.Open("y", 1.0, visits={"a": 1, "b": 0.5}, interarrival=qm.Erlang(2), priority=0)])
    from tests.test_ctmc_compiled import _assert_same

    _assert_same(net, open_limit=3, compiled=False)


@pytest.mark.slow
def test_a_non_product_form_network_against_the_simulator():
    # FCFS with class-dependent Erlang and H2 service, a priority queue and
    # a bursty open stream: the chain is exact, the simulator within its CI
    net = qm.Network(
        [qm.Queue("cpu", 0.05, discipline="prio", distribution=qm.Erlang(2)),
         qm.Queue("disk", 0.08, distribution=qm.HyperExponential(4.0))],
        [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 1}, think_time=0.2, priority=1,
                   service={"cpu": 0.06, "disk": 0.08}),
         qm.Open("bg", 5.0, visits={"cpu": 1}, priority=0,
                 interarrival=qm.HyperExponential(3.0), service={"cpu": 0.03})])
    r = qm.ctmc(net)
    assert r.exactness == "exact"
    s = qm.simulate(net, seed=11, horizon=2e4, replications=6)
    for c in ("tx", "bg"):
        e = s.R[c]
        assert abs(e.mean - r.R[c]) <= max(3 * e.half_width, 0.02 * r.R[c]), (c, e, r.R[c])
    e = s.X["tx"]
    assert abs(e.mean - r.X["tx"]) <= max(3 * e.half_width, 0.01 * r.X["tx"])


# ---------------------------------------------------------------------------
# the automatic choice: the chain before any approximation, its label
# ---------------------------------------------------------------------------

def test_m_m_1_k_by_the_automatic_choice_against_the_truncated_geometric():
    # M/M/1/K (Kleinrock 1975, sec. 3.6): p_n = (1 - rho) rho^n / (1 -
    # rho^(K+1)), n = 0..K; accepted rate lambda (1 - p_K); R = L / X.  A
    # binding capacity is not product form: qm.solve takes the chain
    lam, S, K = 1.2, 0.5, 6
    rho = lam * S
    p = [(1 - rho) * rho ** n / (1 - rho ** (K + 1)) for n in range(K + 1)]
    L = sum(n * x for n, x in enumerate(p))
    X = lam * (1 - p[K])
    net = qm.Network([qm.Queue("q", S, capacity=K)],
                     [qm.Open("j", lam, routing={"source": {"q": 1}, "q": {"sink": 1}})])
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "exact"
    assert r.X["j"] == pytest.approx(X, rel=1e-12)
    assert r.R["j"] == pytest.approx(L / X, rel=1e-12)
    assert r.info["loss"]["j"] == pytest.approx(p[K], rel=1e-12)
    np.testing.assert_allclose(qm.marginal(r, "q"), p, rtol=1e-12)
    assert f"CTMC of {K + 1} states" in " ".join(r.notes)


def test_the_automatic_choice_names_states_fit_moments_and_the_rule_for_k():
    # a closed network with a deterministic FCFS disk: qm.solve takes the
    # chain (not an approximation) with the Erlang-20 fit, its moments and
    # the accuracy rule for k said, and labels the answer approximate
    net = qm.Network([qm.Queue("cpu", 0.04), qm.Queue("disk", 0.05,
                                                       distribution=qm.Deterministic())],
                     [qm.Closed("a", 3, visits={"cpu": 1, "disk": 1}, think_time=0.2)])
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "approximate"
    notes = " ".join(r.notes)
    assert f"CTMC of {r.info['states']:,} states" in notes
    assert "k = 20, the first of 20, 10, 5 phases" in notes and "1 + 1/k" in notes
    fit = [a for a in r.assumptions if "(a fit)" in a]
    assert len(fit) == 1 and "Erlang-20" in fit[0]
    # the moments said are those of the Erlang-20: scv 1/20, E[X^3]/E[X]^3
    # = (k + 1)(k + 2)/k^2 = 1.155 (the constant's: 0 and 1)
    assert "scv 0 -> 0.05" in fit[0] and "E[X^3]/E[X]^3 1 -> 1.155" in fit[0]
    # the same chain as qm.ctmc's, and within 1 % of the Erlang-40 chain
    assert r.X["a"] == pytest.approx(qm.ctmc(net).X["a"], rel=1e-12)
    assert r.X["a"] == pytest.approx(qm.ctmc(net, max_phases=40).X["a"], rel=0.01)


def test_the_automatic_choice_prefers_an_exact_qna_to_a_fitted_chain():
    # M/D/1: the chain would fit the constant by an Erlang-20 (wait + 5 %);
    # QNA solves the M/G/1 queue exactly (Pollaczek-Khinchine), so qm.solve
    # answers by QNA and says why it passed the chain over
    r = qm.solve(_open_queue(qm.Deterministic()))
    assert r.method == "qna" and r.exactness == "exact"
    assert r.R["j"] == pytest.approx(qm.md1(1.0, 0.6).R, rel=1e-12)
    assert any("ctmc: its answer is approximate" in n and "answers this network exactly" in n
               for n in r.notes)
    # an Erlang shape the chain holds exactly stays with the chain
    assert qm.solve(_open_queue(qm.Erlang(3))).method == "ctmc"


def _starved(hi, lo, third=False):
    st = [qm.Queue("p", 0.46, discipline="prio-pr", distribution=qm.Deterministic()),
          qm.Queue("q", 0.137)] + ([qm.Queue("s", 0.2)] if third else [])
    every = {s.name: 1 for s in st}
    return qm.Network(st, [qm.Closed("hi", hi, visits=every, priority=0, think_time=0.11),
                           qm.Closed("lo", lo, visits=every, priority=1)])


def test_the_ctmc_extrapolates_a_starved_class_in_k():
    # a low class starved behind a high one at a deterministic preemptive
    # priority queue: the chain with an Erlang-20 in place of the constant
    # overstates the low class's X by 12 %; the CTMC solves it at k = 20, 10
    # and 5 and extrapolates to scv 0.  Reference: the chains at k = 40 and
    # 80 (finer solves of the same network), linear in the Erlang's scv 1/k
    # through them to scv 0, 2 X(80) - X(40) (Richardson's step; the CTMC at
    # 80 alone is the deterministic time with scv 1/80).  qm.solve keeps the
    # CTMC's answer: the priority method would solve the same chains (also
    # at 20 phases), no finer
    net = _starved(3, 1)
    ref = 2 * qm.ctmc(net, max_phases=80).X["lo"] - qm.ctmc(net, max_phases=40).X["lo"]
    alone = qm.ctmc(net, max_phases=20)
    r = qm.solve(net)
    assert r.method == "ctmc" and r.info["extrapolation"]["phases"] == (20, 10, 5)
    assert abs(r.X["lo"] - ref) < abs(alone.X["lo"] - ref) / 10
    assert abs(r.X["lo"] / ref - 1) < 1e-3


def test_the_priority_method_is_not_asked_where_it_has_no_finer_chain(monkeypatch):
    # the CTMC held the deterministic time at 20 phases, as many as the
    # priority method's whole chain ever gives it: qm.solve does not solve
    # the same chains again there
    import qmodels.analytic.priority as P_mod

    calls = []
    real = P_mod.priority
    monkeypatch.setattr(P_mod, "priority", lambda *a, **k: calls.append(1) or real(*a, **k))
    r = qm.solve(_starved(3, 1))
    assert r.method == "ctmc" and r.info["extrapolation"]["phases"][0] == 20
    assert calls == []


def test_the_automatic_choice_prefers_the_priority_chain_with_more_phases(monkeypatch):
    # with the CTMC held to 5,000 states in qm.solve its deterministic time
    # gets Erlang-5 (the chain at 10 phases has 11,740 states); the priority
    # method's whole chain (up to 250,000 states) gets Erlang-8, extrapolated
    # from 8, 4 and 2: qm.solve takes it and says why
    import qmodels.dispatch as dispatch

    monkeypatch.setitem(dispatch.AUTO_OPTIONS, "ctmc", {"max_states": 5_000})
    net = _starved(4, 2, third=True)
    r = qm.solve(net)
    assert r.method == "priority"
    assert r.info["approximation"] == "the network's own Markov chain (qm.ctmc)"
    assert r.info["extrapolation"]["phases"][0] == 8
    assert any("ctmc: its answer is approximate" in n and "Erlang-8 where it had Erlang-5" in n
               for n in r.notes)


@pytest.mark.parametrize("rho, K", [(0.5, 5), (0.9, 20), (0.95, 80)])
def test_truncation_shortfall_is_exact_for_one_m_m_1_k_queue(rho, K):
    # M/M/1 cut at K jobs is the M/M/1/K queue: its mean queue falls short of
    # the M/M/1 mean rho / (1 - rho) by (K + 1) p_K of it, p_K the chain's
    # probability at the bound (Gross & Harris sec. 2.5; hand derivation in
    # ctmc.shortfall)
    r = qm.ctmc(_open_queue(lam=rho, S=1.0), open_limit=K)
    full = rho / (1 - rho)
    p = r.info["truncation_mass"]
    assert p == pytest.approx((1 - rho) * rho ** K / (1 - rho ** (K + 1)), rel=1e-9)
    assert (full - r.Q["q"]) / full == pytest.approx(C.shortfall(K, p), rel=1e-8)


def _tandem(rho):
    return qm.Network([qm.Queue("a", rho, distribution=qm.Erlang(2)),
                       qm.Queue("b", 0.9 * rho, distribution=qm.HyperExponential(4.0))],
                      [qm.Open("o", 1.0, route=["a", "b"])])


def test_the_automatic_choice_passes_over_a_chain_cut_short_and_says_why():
    # two phase-type queues in tandem at rho 0.95: the default cut stops at
    # 80 open jobs (the next chain passes the growth budget) with p = 0.0032
    # at the bound, (K + 1) p = 26 %; the chain answers R 24.7 where the
    # simulator measures 26.90 +- 0.23 (seed 1, horizon 1.6e6; slow test below)
    with pytest.warns(qm.NumericalWarning, match="short by about 26 %"):
        cut = qm.ctmc(_tandem(0.95))
    assert cut.exactness == "approximate"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", qm.NumericalWarning)   # the chain's is not given
        r = qm.solve(_tandem(0.95))
    assert r.method == "rqna"       # one class at single-server FCFS queues
    assert any("ctmc: its open jobs are cut at 80" in n and "fall short by about 26 %" in n
               for n in r.notes)
    # where the cut holds little the chain stays: (K + 1) p = 0.13 % at rho 0.8
    with pytest.warns(qm.NumericalWarning):
        assert qm.solve(_tandem(0.8)).method == "ctmc"


def test_the_automatic_choice_keeps_a_cut_chain_when_nothing_else_answers():
    # an open class and a closed one sharing an Erlang FCFS queue: only the
    # chain answers (QNA takes no closed class, MVA no Erlang FCFS), so its
    # answer is kept, with its warning, and the note says why
    net = qm.Network([qm.Queue("a", 0.5, distribution=qm.Erlang(2)), qm.Delay("t", 1.0)],
                     [qm.Open("o", 1.95, visits={"a": 1}),
                      qm.Closed("c", 1, visits={"a": 0.1, "t": 1})])
    with pytest.warns(qm.NumericalWarning, match="raise open_limit"):
        r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "approximate"
    assert any("its chain is cut at an open-job bound: no later method answers" in n
               for n in r.notes)


@pytest.mark.slow
def test_the_answer_chosen_over_a_cut_chain_is_the_closer_one():
    net = _tandem(0.95)
    sim = qm.simulate(net, seed=1, horizon=1.6e6, progress=False)
    with pytest.warns(qm.NumericalWarning):
        cut = qm.ctmc(net)
    chosen = qm.solve(net)
    assert abs(chosen.R["o"] - sim.R["o"].mean) < 3 * sim.R["o"].half_width
    assert sim.R["o"].mean - cut.R["o"] > 3 * sim.R["o"].half_width


@pytest.mark.parametrize("arrivals, dist", [(None, qm.Erlang(3)),
                                            (qm.HyperExponential(4.0), None),
                                            (qm.Erlang(2), qm.HyperExponential(2.0))])
def test_the_automatic_choice_is_exact_for_exact_phase_type_shapes(arrivals, dist):
    r = qm.solve(_open_queue(dist, arrivals))
    assert r.method == "ctmc" and r.exactness == "exact"
    assert r.info["truncation_mass"] <= C.TRUNCATION_TOL
    assert not any("(a fit)" in a for a in r.assumptions)
    assert any("held exactly" in a for a in r.assumptions)


def test_a_priority_network_too_large_for_the_budget_goes_to_an_approximation_and_says_why():
    net = qm.Network([qm.Queue("cpu", 0.01, discipline="prio", distribution=qm.Erlang(2)),
                      qm.Queue("disk", 0.02)],
                     [qm.Closed("hi", 200, visits={"cpu": 1, "disk": 1}, priority=0,
                                think_time=1.0),
                      qm.Closed("lo", 200, visits={"cpu": 1, "disk": 1}, priority=1,
                                think_time=1.0)])
    r = qm.solve(net)
    assert r.method != "ctmc" and r.exactness == "approximate"
    assert any("ctmc: the state space has at least" in n for n in r.notes)


# ---------------------------------------------------------------------------
# random non-product-form networks against the simulator
# ---------------------------------------------------------------------------

_SHAPES = (None, qm.Erlang(2), qm.Erlang(3), qm.HyperExponential(3.0), qm.HyperExponential(6.0))


def _random_network(seed):
    """Two or three FCFS queues (or a non-preemptive / preemptive-resume
    priority queue first) with Erlang, H2 or exponential service, two closed
    classes of two or three jobs with their own service times, think times
    and priority levels, each class cycling through a fixed path of
    stations (the think time once per cycle)."""
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 4))
    names = [f"s{k}" for k in range(K)]
    disc = ["fcfs"] * K
    disc[0] = str(rng.choice(["fcfs", "prio", "prio-pr"]))
    stations = [qm.Queue(n, 0.05, discipline=d,
                         distribution=_SHAPES[int(rng.integers(len(_SHAPES)))])
                for n, d in zip(names, disc)]
    classes = []
    for i in range(2):
        path = [names[0]] + [n for n in names[1:] if rng.random() < 0.7]
        if len(path) == 1:
            path.append(names[-1])
        route = {a: {b: 1} for a, b in zip(path, path[1:] + path[:1])}
        classes.append(qm.Closed(
            f"c{i}", int(rng.integers(2, 4)), think_time=float(rng.uniform(0.1, 0.4)),
            routing=route, priority=i,
            service={n: float(rng.uniform(0.02, 0.08)) for n in path}))
    return qm.Network(stations, classes)


# seeds drawn so that the five cover prio (1, 7), prio-pr (4, 10) and FCFS
# only (8), with exponential, Erlang and H2 service (about 1 s each)
@pytest.mark.parametrize("seed", [1, 4, 7, 8, 10])
def test_random_non_product_form_networks_against_the_simulator(seed):
    net = _random_network(seed)
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "exact"
    s = qm.simulate(net, seed=100 + seed, horizon=1e4, replications=5, progress=False)
    for c in ("c0", "c1"):
        for fig, tol in (("X", 0.01), ("R", 0.02)):
            e = getattr(s, fig)[c]
            ref = getattr(r, fig)[c]
            assert abs(e.mean - ref) <= max(3 * e.half_width, tol * ref), (seed, c, fig, e, ref)


def test_mg1_second_moment_of_the_sojourn_holds_the_third_moment_fit():
    # M/G/1 FCFS, lognormal service of scv 0.5 fitted by its first three
    # moments: the queue's second factorial moment is exact.  Takacs:
    # E[W] = lam E[S^2] / (2 (1 - rho)), E[W^2] = 2 E[W]^2 + lam E[S^3] /
    # (3 (1 - rho)) (Kleinrock 1975, sec. 5.7); T = W + S independent, and
    # the distributional form of Little's law for FCFS, E[N (N - 1)] =
    # lam^2 E[T^2] (Keilson & Servi 1988).  A two-moment fit (its third
    # moment lower) misses it.
    lam, S, c2 = 0.6, 1.0, 0.5
    dist = qm.Lognormal(c2)
    net = qm.Network([qm.Queue("q", S, distribution=dist)], [qm.Open("o", lam, visits={"q": 1})])
    r = qm.ctmc(net)
    m2, m3 = (x * S ** (j + 2) for j, x in enumerate(P.relative_moments(dist)))
    rho = lam * S
    W = lam * m2 / (2 * (1 - rho))
    W2 = 2 * W ** 2 + lam * m3 / (3 * (1 - rho))
    T2 = W2 + 2 * W * S + m2
    p = C.marginal(r, "q")
    n = np.arange(len(p))
    assert float(n * (n - 1) @ p) == pytest.approx(lam ** 2 * T2, rel=1e-7)
    assert float(r.R["o"]) == pytest.approx(W + S, rel=1e-9)


def test_mg1_mean_with_a_heavy_lognormal_is_pollaczek_khinchine():
    # the lognormal's H3 keeps its mean and scv, so an M/G/1 queue's mean
    # response is Pollaczek-Khinchine's, S + lam S^2 (1 + c2) / (2 (1 - rho))
    # (Kleinrock 1975, eq. 5.105)
    lam, S, c2 = 0.5, 1.0, 6.0
    net = qm.Network([qm.Queue("q", S, distribution=qm.Lognormal(c2))],
                     [qm.Open("o", lam, visits={"q": 1})])
    r = qm.ctmc(net)
    assert float(r.R["o"]) == pytest.approx(S + lam * S * S * (1 + c2) / (2 * (1 - lam * S)),
                                            rel=1e-6)
