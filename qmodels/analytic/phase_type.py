"""Phase-type (Coxian) forms of the model's time shapes, for the exact CTMC.

The CTMC (:mod:`qmodels.analytic.ctmc`) puts a job's service phase, and an
open class's inter-arrival phase, in its state.  Every shape is turned here
into a **Coxian** distribution: phases 0, 1, ..., m - 1 in series, phase i
exponential of rate mu_i, after which the time goes on to phase i + 1 with
probability q_i or ends with probability 1 - q_i (q_{m-1} = 0).  A Coxian
always starts in phase 0, so entering service (or starting an inter-arrival
time) is one deterministic move of the chain; every acyclic phase-type
distribution has a Coxian form of the same order (Cumani, "On the canonical
representation of homogeneous Markov processes modelling failure-time
distributions", Microelectron. Reliab. 22(3), 1982; O'Cinneide,
"Characterization of phase-type distributions", Stoch. Models 6(1), 1990).

Exact forms (the distribution the simulator draws is the one the chain has):

* exponential: one phase of rate 1/m;
* Erlang-k: k phases of rate k/m, q_i = 1 (i < k - 1);
* hyperexponential: the model's balanced-means H2 of SCV c^2 (Whitt 1982;
  Tijms, *A First Course in Stochastic Models*, Wiley 2003, app. B:
  p1 = (1 + sqrt((c^2 - 1)/(c^2 + 1)))/2, rates 2 p_i / m), or the
  branches given (probabilities and rates, or a three-moment fit:
  :meth:`~qmodels.model.distributions.HyperExponential.branches`, scaled
  to the mean), written as the Coxian of :func:`hyper_to_coxian`.

Fits (the chain's distribution differs from the model's; every answer with
one is labelled approximate, and the fit is named in its assumptions):

* SCV c^2 < 1 (deterministic, uniform, a lognormal, Pareto or empirical
  shape of low variability): the acyclic phase-type distribution of fewest
  phases matching the first three moments (Bobbio, Horvath & Telek,
  "Matching three moments with minimal acyclic phase type distributions",
  Stoch. Models 21(2-3), 2005: :func:`aph_three_moments`) where one of at
  most ``max_phases`` phases has them; else the mixture of Erlang-(k-1)
  and Erlang-k with one rate, k = ceil(1/c^2), which matches the mean and
  the SCV (Tijms 2003, app. B: p = (k c^2 - sqrt(k (1 + c^2) - k^2 c^2)) /
  (1 + c^2), mu = (k - p) / m); when k would pass ``max_phases`` (a
  deterministic time always does), an Erlang of ``max_phases`` phases (the
  mean matched, SCV 1/max_phases instead of c^2).  The third moment
  matters in a network: on network 92 of ``ctmc-fewjobs`` (three jobs
  cycling through two deterministic queues and a lognormal one of SCV
  0.78, E[X^3]/E[X]^3 = 5.66) the two-moment fit (its third moment 4.44)
  gave X 3.0 % below the simulator, the three-moment fit 0.7 %; the
  simulator fed with samples of the two-moment fit agrees with the chain
  of it to 0.1 %, so the gap was the shape, not the chain.  In an M/G/1 queue the mean wait is
  proportional to 1 + c^2 (Pollaczek-Khinchine; Kleinrock, *Queueing
  Systems* vol. 1, 1975, eq. 5.105), so an Erlang-k in place of a
  deterministic time overstates the mean wait by the factor 1 + 1/k (5 % at
  the default k = 20; the response time less).
* c^2 = 1: the exponential (two moments matched).
* c^2 > 1, a lognormal: the phase-type closest to it in Kullback-Leibler
  divergence with its mean and SCV, among the H3 (:func:`lognormal_hyper`)
  and the mixture of two Erlang-2 (:func:`lognormal_hyper_erlang`):
  :func:`lognormal_ph`.  A mixture of two Erlang-2 up to SCV 1.5 (its
  density vanishes at 0, as the lognormal's does; a hyperexponential's is
  largest there), the H3 above (the Erlang mixture is the closer in
  divergence up to SCV 2.3, but its queue figures were not, past 1.5: the
  measurements are in :func:`lognormal_ph`).  The three-moment H2 of a
  lognormal of SCV 4 to 8 sat 3-6 % high in X on closed networks, the H3
  within 1 %; at SCV 1.1 to 1.5 the H3 (then an H2) was 1.0-1.2 % low,
  the Erlang mixture 0.3-0.7 % (``python -m validation.lognormal_fit``); a
  lognormal stream of SCV 1.25 into a deterministic queue
  (``ctmc-open-fitted`` network 23) had R 10.1 % high with the H3, 4.3 %
  with the Erlang mixture.
* c^2 > 1, another shape: the H2 matching the first three moments where
  one exists (a finite third moment m3 with m1 m3 >= 1.5 m2^2; Whitt,
  "Approximating a point process by a renewal process, I: two basic
  methods", Oper. Res. 30(1), 1982; Tijms 2003, app. B), else the
  balanced-means H2 (two moments, Whitt 1982).  A Pareto of c^2 > 1
  (alpha < 1 + sqrt 2) has no third moment.
"""

from __future__ import annotations

import cmath
import functools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidValueError, UnsupportedModelError
from ..model.distributions import (
    Deterministic,
    Distribution,
    Empirical,
    Erlang,
    Exponential,
    HyperExponential,
    Lognormal,
    Pareto,
    Uniform,
    unit_moments,
)

__all__ = ["Coxian", "coxian_of", "hyper_to_coxian", "mixed_erlang", "h2_balanced",
           "h2_three_moments", "relative_moments", "fit_moments", "DEFAULT_MAX_PHASES",
           "closer_fit", "capped_fit", "capped_scvs", "coarser_caps", "richardson_weights",
           "richardson"]

#: the most phases a *fitted* low-variability shape gets (a deterministic
#: time: Erlang-20, SCV 0.05); exact Erlang shapes keep their own k
DEFAULT_MAX_PHASES = 20


@dataclass(frozen=True)
class Coxian:
    """A Coxian distribution: phase rates ``rates[i]`` and continuation
    probabilities ``cont[i]`` (``cont[-1] == 0``); ``exact`` when it is the
    model's distribution itself, else ``fit`` names the fit (what was
    matched, the phases)."""

    rates: tuple
    cont: tuple
    exact: bool = True
    fit: str = ""
    #: a low-variability fit held to ``max_phases`` phases (its SCV above
    #: the shape's)
    capped: bool = False

    @property
    def phases(self) -> int:
        return len(self.rates)

    def subgenerator(self) -> np.ndarray:
        """T (m x m): -mu_i on the diagonal, mu_i q_i from phase i to
        i + 1 (the start vector is e_0)."""
        m = self.phases
        T = np.zeros((m, m))
        for i, (mu, q) in enumerate(zip(self.rates, self.cont, strict=True)):
            T[i, i] = -mu
            if i + 1 < m:
                T[i, i + 1] = mu * q
        return T

    def moment(self, j: int) -> float:
        """E[X^j] = j! alpha (-T)^-j 1, alpha = e_0, T the sub-generator
        (Neuts, *Matrix-Geometric Solutions in Stochastic Models*, 1981,
        sec. 2.2)."""
        m = self.phases
        M = np.linalg.inv(-self.subgenerator())
        v = np.ones(m)
        for _ in range(j):
            v = M @ v
        return float(math.factorial(j) * v[0])

    @property
    def mean(self) -> float:
        out, reach = 0.0, 1.0
        for mu, q in zip(self.rates, self.cont, strict=True):
            out += reach / mu
            reach *= q
        return out

    @property
    def scv(self) -> float:
        m1 = self.mean
        return self.moment(2) / (m1 * m1) - 1.0


def _exponential(mean: float) -> tuple:
    return (1.0 / mean,), (0.0,)


def _erlang(k: int, mean: float) -> tuple:
    return (k / mean,) * k, (1.0,) * (k - 1) + (0.0,)


def hyper_to_coxian(probs, rates) -> tuple:
    """The Coxian form ``(rates, cont)`` of the hyperexponential sum_i p_i
    Exp(lambda_i): phases in decreasing rate order, q_i = sum_{j>i} w_j (1 -
    lambda_j / lambda_i) with the weights w renormalised to w_j (1 -
    lambda_j/lambda_i) / q_i after each phase (Cumani 1982, the canonical
    form of an acyclic phase-type distribution; for two phases, Tijms 2003,
    app. B: q = p_2 (1 - mu_2/mu_1)).  Follows from equating the Laplace
    transforms, lambda/(s + lambda) (s + mu)/mu = lambda/mu + (1 -
    lambda/mu) lambda/(s + lambda)."""
    pairs = sorted(((float(lam), float(p)) for p, lam in zip(probs, rates, strict=True)
                    if p > 0), reverse=True)
    lams = [lam for lam, _ in pairs]
    w = [p for _, p in pairs]
    tot = sum(w)
    w = [x / tot for x in w]
    out_r, out_q = [], []
    i = 0
    while i < len(lams):
        mu = lams[i]
        rest = [(lams[j], w[j] * (1.0 - lams[j] / mu)) for j in range(i + 1, len(lams))]
        q = sum(x for _, x in rest)
        out_r.append(mu)
        if q <= 1e-15:
            out_q.append(0.0)
            break
        out_q.append(min(q, 1.0))
        for j in range(i + 1, len(lams)):
            w[j] = w[j] * (1.0 - lams[j] / mu) / q
        i += 1
    return tuple(out_r), tuple(out_q)


def h2_balanced(mean: float, c2: float) -> tuple:
    """(probs, rates) of the balanced-means H2 of SCV ``c2`` >= 1 (Whitt
    1982; Tijms 2003, app. B): p1 = (1 + sqrt((c2 - 1)/(c2 + 1)))/2, p2 = 1 -
    p1, mu_i = 2 p_i / mean.  The model's :class:`HyperExponential`."""
    p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
    p2 = 1.0 - p1
    return (p1, p2), (2.0 * p1 / mean, 2.0 * p2 / mean)


def h2_three_moments(m1: float, m2: float, m3: float):
    """(probs, rates) of the H2 with moments m1, m2, m3, or None when none
    exists (it needs c^2 > 1 and m1 m3 >= 1.5 m2^2; Whitt 1982; Tijms 2003,
    app. B).  The means x_i = 1/mu_i of the two branches are the support of
    the two-point distribution with moments a_1 = m1, a_2 = m2/2, a_3 =
    m3/6 (E[X^j] = j! sum p_i x_i^j): x_1, x_2 the roots of x^2 - s x + P
    with s = (a_3 - a_1 a_2)/(a_2 - a_1^2), P = s a_1 - a_2; p_1 = (a_1 -
    x_2)/(x_1 - x_2)."""
    if not all(math.isfinite(x) and x > 0 for x in (m1, m2, m3)):
        return None
    a1, a2, a3 = m1, m2 / 2.0, m3 / 6.0
    var = a2 - a1 * a1
    if var <= 1e-12 * a1 * a1 or m1 * m3 < 1.5 * m2 * m2 * (1.0 + 1e-12):
        return None
    s = (a3 - a1 * a2) / var
    P = s * a1 - a2
    disc = s * s - 4.0 * P
    if disc <= 0 or P <= 0:
        return None
    r = math.sqrt(disc)
    x1, x2 = (s + r) / 2.0, (s - r) / 2.0
    if x2 <= 0:
        return None
    p1 = (a1 - x2) / (x1 - x2)
    if not 0.0 < p1 < 1.0:
        return None
    return (p1, 1.0 - p1), (1.0 / x1, 1.0 / x2)


def mixed_erlang(mean: float, c2: float) -> tuple:
    """``(rates, cont, k)``: the mixture of Erlang-(k-1) and Erlang-k with
    one rate mu matching the mean and SCV 1/k <= c2 <= 1/(k-1), k =
    ceil(1/c2) (Tijms 2003, app. B, the E_{k-1,k} fit: p = (k c2 - sqrt(k (1
    + c2) - k^2 c2)) / (1 + c2), mu = (k - p)/mean): k phases of rate mu,
    the time ending after phase k - 1 with probability p."""
    k = max(2, math.ceil(1.0 / c2 - 1e-9))
    p = (k * c2 - math.sqrt(max(k * (1.0 + c2) - k * k * c2, 0.0))) / (1.0 + c2)
    p = min(max(p, 0.0), 1.0)
    mu = (k - p) / mean
    cont = [1.0] * (k - 1) + [0.0]
    cont[k - 2] = 1.0 - p
    return (mu,) * k, tuple(cont), k


def aph_bounds(n2: float, n: int) -> tuple:
    """(lowest, highest) normalised third moment n3 = m3 / (m1 m2) of an
    acyclic phase-type distribution of order ``n`` whose normalised second
    moment is n2 = m2 / m1^2 (Bobbio, Horvath & Telek, "Matching three
    moments with minimal acyclic phase type distributions", Stochastic
    Models 21(2-3), 2005, Theorem 3.1): none (inf, -inf) below n2 = (n +
    1)/n (the Erlang-n's); up to n2 = (n + 4)/(n + 1) the lower bound is
    l(n2) below, beyond it (n + 1) n2 / n; up to n2 = n/(n - 1) the upper
    bound is u(n2) below, beyond it none (inf).
        p = (n + 1)(n2 - 2) / (3 n2 (n - 1)) (-2 sqrt(n + 1) / sqrt(4 (n + 1) - 3 n n2) - 1),
        a = (n2 - 2) / (p (1 - n2) + sqrt(p^2 + p n (n2 - 2) / (n - 1))),
        l = ((3 + a)(n - 1) + 2 a) / ((n - 1)(1 + a p))
            - 2 a (n + 1) / (2 (n - 1) + a p (n a + 2 n - 2)),
        u = (2 (n - 2)(n n2 - n - 1) sqrt(1 + n (n2 - 2) / (n - 1))
             + (n + 2)(3 n n2 - 2 n - 2)) / (n^2 n2)."""
    if n2 < (n + 1.0) / n - 1e-12:
        return math.inf, -math.inf
    if n < 2:
        return 3.0, 3.0           # the exponential: n2 = 2, n3 = 3
    if n2 < (n + 4.0) / (n + 1.0):
        root = cmath.sqrt(4.0 * (n + 1.0) - 3.0 * n * n2)
        p = (n + 1.0) * (n2 - 2.0) / (3.0 * n2 * (n - 1.0)) * (-2.0 * math.sqrt(n + 1.0) / root
                                                                 - 1.0)
        a = (n2 - 2.0) / (p * (1.0 - n2) + cmath.sqrt(p * p + p * n * (n2 - 2.0) / (n - 1.0)))
        lo = (((3.0 + a) * (n - 1.0) + 2.0 * a) / ((n - 1.0) * (1.0 + a * p))
              - 2.0 * a * (n + 1.0) / (2.0 * (n - 1.0) + a * p * (n * a + 2.0 * n - 2.0))).real
    else:
        lo = (n + 1.0) / n * n2
    if n2 <= n / (n - 1.0):
        hi = (2.0 * (n - 2.0) * (n * n2 - n - 1.0) * math.sqrt(max(1.0 + n * (n2 - 2.0) / (n - 1.0),
                                                                  0.0))
              + (n + 2.0) * (3.0 * n * n2 - 2.0 * n - 2.0)) / (n * n * n2)
    else:
        hi = math.inf
    return lo, hi


def aph_three_moments(m1: float, m2: float, m3: float, max_phases: int):
    """``(rates, cont)`` of a Coxian of the fewest phases (at most
    ``max_phases``) with the moments m1, m2, m3, or None where no acyclic
    phase-type distribution of that order has them (Bobbio, Horvath &
    Telek 2005, sec. 4: the order n is the least whose bounds
    (:func:`aph_bounds`) hold n3 strictly inside).  With n2 = m2 / m1^2
    and n3 = m3 / (m1 m2), two forms:

    * n3 < 2 n2 - 1 (or n2 > 2): an exponential phase of rate lambda, then
      with probability p an Erlang-(n - 1) of rate mu, where
      b = 2 (4 - n (3 n2 - 4)) / (n2 (4 + n - n n3) + sqrt(n n2)
          sqrt(12 n2^2 (n + 1) + 16 n3 (n + 1) + n2 (n (n3 - 15)(n3 + 1) - 8 (n3 + 3)))),
      a = (b n2 - 2)(n - 1) b / ((b - 1) n), p = (b - 1)/a,
      lambda = (p a + 1)/m1, mu = (n - 1) lambda / a;
    * else: an Erlang-(n - 1) of rate mu, then with probability p an
      exponential phase of rate lambda, f a root of
      c4 f^4 + c3 f^3 + c2 f^2 + c1 f + c0 = 0 with c4 = n2 (3 n2 - 2 n3)(n - 1)^2,
      c3 = 2 n2 (n3 - 3)(n - 1)^2, c2 = 6 (n - 1)(n - n2), c1 = 4 n (2 - n),
      c0 = n (n - 2), and a = 2 (f - 1)(n - 1) / ((n - 1)(n2 f^2 - 2 f + 2) - n),
      p = (f - 1) a, lambda = (a + p)/m1, mu = (n - 1)/(m1 - p/lambda)
      (the root giving 0 <= p <= 1 and positive rates).

    The sum of independent parts does not depend on their order, so each
    form is a Coxian (every phase entered from the one before).  The
    moments of the result are checked (relative 1e-8); a form that misses
    them is not returned."""
    if not (m1 > 0 and math.isfinite(m2) and math.isfinite(m3)):
        return None
    n1, n2, n3 = m1, m2 / (m1 * m1), m3 / (m1 * m2)
    n = 2
    while n <= max_phases:
        lo, hi = aph_bounds(n2, n)
        if lo < n3 < hi:
            break
        n += 1
    else:
        return None
    out = None
    if n2 > 2.0 or n3 < 2.0 * n2 - 1.0:
        disc = (12.0 * n2 * n2 * (n + 1.0) + 16.0 * n3 * (n + 1.0)
                + n2 * (n * (n3 - 15.0) * (n3 + 1.0) - 8.0 * (n3 + 3.0)))
        b = (2.0 * (4.0 - n * (3.0 * n2 - 4.0))
             / (n2 * (4.0 + n - n * n3) + math.sqrt(n * n2) * cmath.sqrt(disc))).real
        a = (b * n2 - 2.0) * (n - 1.0) * b / ((b - 1.0) * n)
        p = (b - 1.0) / a
        lam = (p * a + 1.0) / n1
        mu = (n - 1.0) * lam / a
        if 0.0 <= p <= 1.0 and lam > 0 and mu > 0:
            out = (lam,) + (mu,) * (n - 1), (p,) + (1.0,) * (n - 2) + (0.0,)
    else:
        coef = [n2 * (3.0 * n2 - 2.0 * n3) * (n - 1.0) ** 2, 2.0 * n2 * (n3 - 3.0) * (n - 1.0) ** 2,
                6.0 * (n - 1.0) * (n - n2), 4.0 * n * (2.0 - n), n * (n - 2.0)]
        for f in np.roots(coef):
            if abs(f.imag) > 1e-9:
                continue
            f = float(f.real)
            den = (n - 1.0) * (n2 * f * f - 2.0 * f + 2.0) - n
            if abs(den) < 1e-14:
                continue
            a = 2.0 * (f - 1.0) * (n - 1.0) / den
            p = (f - 1.0) * a
            lam = (a + p) / n1
            if not lam > 0 or not n1 - p / lam > 0:
                continue
            mu = (n - 1.0) / (n1 - p / lam)
            if 0.0 <= p <= 1.0 and mu > 0:
                out = (mu,) * (n - 1) + (lam,), (1.0,) * (n - 2) + (p, 0.0)
                break
    if out is None:
        return None
    cox = Coxian(*out)
    if any(abs(cox.moment(j) / m - 1.0) > 1e-8 for j, m in ((1, m1), (2, m2), (3, m3))):
        return None
    return out


#: phases of the hyperexponential fitted to a lognormal of SCV > 1
#: (:func:`lognormal_hyper`), and the Gauss-Hermite nodes of its fit
LOGNORMAL_BRANCHES = 3
_LOGNORMAL_NODES = 80


def _lognormal_nodes(c2: float) -> tuple:
    """Nodes and weights of E[g(X)], X the lognormal of mean 1 and SCV
    ``c2``: log X is normal of variance s^2 = log(1 + c2) and mean -s^2/2
    (Johnson, Kotz & Balakrishnan, *Continuous Univariate Distributions*
    vol. 1, 2nd ed., Wiley 1994, ch. 14, eq. 14.8a), so E[g(X)] =
    E[g(exp(-s^2/2 + s Z))], Z standard normal, by Gauss-Hermite
    quadrature of :data:`_LOGNORMAL_NODES` nodes (probabilists' weight
    exp(-z^2/2); Abramowitz & Stegun 1964, 25.4.46)."""
    s2 = math.log1p(c2)
    z, w = _hermite_nodes()
    return np.exp(-s2 / 2.0 + math.sqrt(s2) * z), w


@functools.lru_cache(maxsize=1)
def _hermite_nodes() -> tuple:
    z, w = np.polynomial.hermite_e.hermegauss(_LOGNORMAL_NODES)
    return z, w / w.sum()


def _lognormal_loglik(c2: float, log_density) -> float:
    """E[log h(X)], X the lognormal of mean 1 and SCV ``c2``, for the
    density h whose log ``log_density`` gives at an array of points: the
    Kullback-Leibler divergence of h from the lognormal is its entropy term
    minus this, so the larger, the closer (:func:`lognormal_hyper`)."""
    x, w = _lognormal_nodes(c2)
    return float(w @ log_density(x))


def _hyper_erlang_log_density(p, lam, m: int):
    """log of the density sum_i p_i lam_i^m x^(m-1) e^(-lam_i x) / (m-1)!
    (m = 1: a hyperexponential), as a function of an array of points."""
    from scipy.special import gammaln, logsumexp

    p, lam = np.asarray(p, dtype=float), np.asarray(lam, dtype=float)
    return lambda x: logsumexp(np.log(p) + m * np.log(lam) + (m - 1) * np.log(x)[:, None]
                               - np.outer(x, lam) - gammaln(m), axis=1)


#: the Erlang order of the hyper-Erlang fit of a lognormal of SCV > 1
#: (:func:`lognormal_ph`): at SCV 1.0001 to 1.5 (where it is used) the
#: mixtures of two Erlang-3 and Erlang-4 were farther from the lognormal in
#: divergence than that of two Erlang-2 (E[log h(X)] at SCV 1.5: -0.932,
#: -0.978, -1.064), and at SCV 1.05 to 8 they only grew farther
HYPER_ERLANG_ORDER = 2
#: the largest SCV of a lognormal fitted by a hyper-Erlang
#: (:func:`lognormal_ph`; a measured rule, see there)
HYPER_ERLANG_MAX_SCV = 1.5


@functools.lru_cache(maxsize=256)
def lognormal_hyper_erlang(c2: float, m: int) -> tuple | None:
    """``(probs, rates)`` of the mixture p Erlang(m, a) + (1 - p)
    Erlang(m, b) (a hyper-Erlang of two branches of a common order m, the
    family of Thummler, Buchholz & Telek, "A novel approach for phase-type
    fitting with the EM algorithm", IEEE Trans. Dependable Secure Comput.
    3(3), 2006), mean 1 and SCV ``c2`` >= 1/m, closest to the lognormal of
    that SCV in Kullback-Leibler divergence (as :func:`lognormal_hyper`).

    With u = 1/a, v = 1/b the branch means are m u and m v, and mean and
    SCV fix the first two moments of the branch scale: p u + (1 - p) v =
    1/m and p u^2 + (1 - p) v^2 = (1 + c2) / (m (m + 1)) (E[X^2] = m (m +
    1) / lambda^2 of an Erlang(m, lambda)), so with sigma^2 = (1 + c2)/(m
    (m + 1)) - 1/m^2, u = 1/m - sigma sqrt((1 - p)/p) and v = 1/m + sigma
    sqrt(p/(1 - p)): one free parameter p, in (sigma^2/(sigma^2 + 1/m^2),
    1) for u > 0, found by bounded scalar searches on logit p over four
    brackets (the same answer every run).  Unlike a hyperexponential, whose
    density is largest at 0, an Erlang-m branch has density ~ x^(m-1) near
    0, as a lognormal has almost none there: at SCV 1.05 to 2 the
    divergence of this fit (m = 2) is 0.012-0.030 nats, the H3's of
    :func:`lognormal_hyper` 0.048-0.10.  None where the search fails."""
    from scipy.optimize import minimize_scalar

    m1 = 1.0 / m
    var = (1.0 + c2) / (m * (m + 1.0)) - m1 * m1
    if not var > 0:
        return None
    sd = math.sqrt(var)
    lo = math.log(var / (m1 * m1)) + 1e-9          # logit of the least p with u > 0

    def branch(t):
        p = 1.0 / (1.0 + math.exp(-t))
        return p, m1 - sd * math.sqrt((1.0 - p) / p), m1 + sd * math.sqrt(p / (1.0 - p))

    def loss(t):
        p, u, v = branch(t)
        if not (u > 0 and 0 < p < 1):
            return math.inf
        return -_lognormal_loglik(c2, _hyper_erlang_log_density((p, 1 - p), (1 / u, 1 / v), m))

    best = None
    edges = [lo, lo + 4.0, lo + 8.0, lo + 12.0, lo + 20.0]
    for a, b in zip(edges, edges[1:]):
        with np.errstate(all="ignore"):
            r = minimize_scalar(loss, bounds=(a, b), method="bounded",
                                options={"xatol": 1e-10})
        if np.isfinite(r.fun) and (best is None or r.fun < best.fun):
            best = r
    if best is None:
        return None
    p, u, v = branch(float(best.x))
    return (p, 1.0 - p), (1.0 / u, 1.0 / v)


def hyper_erlang_to_coxian(probs, rates, m: int) -> tuple:
    """The Coxian form ``(rates, cont)`` of p Erlang(m, a) + (1 - p)
    Erlang(m, b), a >= b: m phases of rate a, then m of rate b.  An
    Exp(b) is, in law, an Exp(a) followed with probability 1 - b/a by an
    Exp(b) (the identity of :func:`hyper_to_coxian`), so Erlang(m, b) =
    Erlang(m, a) + Erlang(L, b) with L binomial(m, 1 - b/a), and the time
    leaves after the m + l-th phase with probability c_m = p + (1 - p)
    (b/a)^m (l = 0) and c_{m+l} = (1 - p) C(m, l) (1 - b/a)^l (b/a)^(m-l)
    (Cumani 1982: every acyclic phase-type distribution has such a form);
    the continuation after phase i is 1 - c_i / (the mass not yet left)."""
    (p, q), (a, b) = probs, rates
    if a < b:
        p, q, a, b = q, p, b, a
    r = b / a
    leave = [0.0] * (m - 1) + [p + q * r ** m] + [
        q * math.comb(m, j) * (1.0 - r) ** j * r ** (m - j) for j in range(1, m + 1)]
    while len(leave) > m and leave[-1] <= 0.0:
        leave.pop()                 # b = a: the b phases are never reached
    cont, rest = [], 1.0
    for c in leave:
        cont.append(0.0 if rest <= 0.0 else min(1.0, max(0.0, 1.0 - c / rest)))
        rest -= c
    cont[-1] = 0.0
    return (a,) * m + (b,) * (len(leave) - m), tuple(cont)


def lognormal_ph(c2: float, max_phases: int) -> tuple | None:
    """The phase-type of at most ``max_phases`` phases, mean 1 and SCV
    ``c2`` > 1, closest to the lognormal in Kullback-Leibler divergence
    among the H3 of :func:`lognormal_hyper` and, up to SCV
    :data:`HYPER_ERLANG_MAX_SCV`, the hyper-Erlangs of
    :func:`lognormal_hyper_erlang` (order :data:`HYPER_ERLANG_ORDER`):
    ``(rates, cont, words)``, its Coxian form and its name, or None.

    Why the SCV bound, a measured rule: the mixture of two Erlang-2 is the
    closer in divergence up to SCV 2.3, but the closer fit did not give the
    closer queue figures past 1.5.  Against the simulator, with the H3 ->
    with the Erlang mixture: ``python -m validation.lognormal_fit`` (two
    queues in a cycle) X at SCV 1.1, 1.25, 1.5 -1.21 -> -0.33 %, -1.07 ->
    -0.51 %, -1.03 -> -0.72 %, at SCV 2 -0.56 -> -1.04 %; the catalogs'
    networks with a lognormal of SCV 1.1 to 1.45 (``ctmc-fewjobs`` 7, 31,
    41, ``ctmc-nonexp`` 4, 9, ``ctmc-open-fitted`` 23, ``priority-closed``
    6, 11; ``python -m validation.envelopes``) X or R 1.44 -> 0.40 %, 0.51
    -> 0.60 %, 0.44 -> 0.43 %, 0.14 -> 0.07 %, 0.47 -> 0.26 %, 10.07 ->
    4.29 % (R: a lognormal stream into a constant server), 0.38 -> 0.39
    %, 0.33 -> 0.08 %, and those of SCV 1.55 to 2 0.55 -> 1.41 %
    (``ctmc-fewjobs`` 66, SCV 1.92), 0.18 -> 0.67 % (48, 1.99), 1.81 ->
    4.02 % (``ctmc-open-fitted`` 15, 1.99), 2.56 -> 3.31 %
    (``priority-closed`` 14, 1.57).  The bound was chosen on these same
    networks: their errors at SCV up to 1.5 are not out-of-sample."""
    found = []
    if max_phases >= LOGNORMAL_BRANCHES:
        h = lognormal_hyper(c2)
        if h is not None:
            ll = _lognormal_loglik(c2, _hyper_erlang_log_density(*h, 1))
            found.append((ll, hyper_to_coxian(*h),
                          f"the H{len(h[0])} closest to it in Kullback-Leibler divergence"))
    m = HYPER_ERLANG_ORDER
    if 2 * m <= max_phases and c2 <= HYPER_ERLANG_MAX_SCV:
        h = lognormal_hyper_erlang(c2, m)
        if h is not None:
            ll = _lognormal_loglik(c2, _hyper_erlang_log_density(*h, m))
            found.append((ll, hyper_erlang_to_coxian(*h, m),
                          f"the mixture of two Erlang-{m} closest to it in Kullback-Leibler "
                          f"divergence (a hyper-Erlang, Thummler, Buchholz & Telek 2006)"))
    if not found:
        return None
    ll, (rates, cont), words = max(found, key=lambda f: f[0])
    return rates, cont, words


@functools.lru_cache(maxsize=256)
def lognormal_hyper(c2: float) -> tuple | None:
    """``(probs, rates)`` of the hyperexponential of
    :data:`LOGNORMAL_BRANCHES` branches, mean 1 and SCV ``c2`` > 1, that
    is closest to the lognormal of that SCV in Kullback-Leibler divergence
    (the most likely one under the lognormal: maximise E[log h(X)], X
    lognormal, as the EM fit of a phase-type distribution to a density
    does; Asmussen, Nerman & Olsson, "Fitting phase-type distributions via
    the EM algorithm", Scand. J. Statist. 23(4), 1996), subject to the mean
    and the SCV matched (so that a Pollaczek-Khinchine mean is kept).  The
    expectation is taken by Gauss-Hermite quadrature in log X (80 nodes);
    SLSQP from six seeded starts (the same answer every run).  None where
    no start converges.

    Why not the three-moment H2: a lognormal of SCV 4 to 8 has its third
    moment in a far tail that a closed network with few jobs hardly
    visits; the H2 that matches it puts the rest of its mass in too fast a
    branch.  Two single-server queues in a cycle (the lognormal of mean 1,
    an exponential of 0.5 to 1, 2 to 6 jobs, think time 0 to 3), X against
    the simulator (10 replications, half-widths 0.2-1 %): SCV 1.5 to 8,
    three-moment H2 -0.7 % to +6.0 %, balanced-means H2 -1.9 % to -0.2 %,
    this fit -1.0 % to -0.2 % (eight networks; ``python -m
    validation.lognormal_fit``)."""
    from scipy.optimize import minimize

    k = LOGNORMAL_BRANCHES

    def unpack(th):
        p = np.exp(th[:k] - th[:k].max())
        return p / p.sum(), np.exp(th[k:])

    def loss(th):
        return -_lognormal_loglik(c2, _hyper_erlang_log_density(*unpack(th), 1))

    cons = ({"type": "eq", "fun": lambda th: float(np.sum(unpack(th)[0] / unpack(th)[1])) - 1.0},
            {"type": "eq",
             "fun": lambda th: float(np.sum(2.0 * unpack(th)[0] / unpack(th)[1] ** 2)) - 1.0 - c2})
    best = None
    for seed in range(6):
        rng = np.random.default_rng(seed)
        th0 = np.r_[rng.normal(0.0, 0.3, k),
                    np.log(np.geomspace(0.05, 5.0, k)) + rng.normal(0, 0.2, k)]
        with np.errstate(all="ignore"):
            r = minimize(loss, th0, constraints=cons, method="SLSQP",
                         options={"maxiter": 500, "ftol": 1e-12})
        if r.success and (best is None or r.fun < best.fun):
            best = r
    if best is None:
        return None
    p, lam = unpack(best.x)
    if abs(float(np.sum(p / lam)) - 1.0) > 1e-8 \
            or abs(float(np.sum(2 * p / lam ** 2)) - 1.0 - c2) > 1e-7 * (1.0 + c2):
        return None
    return tuple(float(v) for v in p), tuple(float(v) for v in lam)


def relative_moments(dist: Distribution, orders=(2, 3)) -> tuple | None:
    """E[X^j] / E[X]^j of a shape for each order (inf when infinite), None
    for a shape not known (:func:`qmodels.model.distributions.unit_moments`)."""
    return unit_moments(dist, orders)


def closer_fit(dist: Distribution, mean: float, max_phases: int) -> Coxian | None:
    """The fits of a shape that is not phase-type beyond its first two
    moments, where at most ``max_phases`` phases hold them (the module
    docstring): a lognormal of SCV > 1 as the H3 closest to it in
    Kullback-Leibler divergence with its mean and SCV
    (:func:`lognormal_hyper`; needs 3 phases), a shape of SCV < 1 as the
    acyclic phase-type of fewest phases matching its first three moments
    (:func:`aph_three_moments`); None otherwise (the two-moment and capped
    forms of :func:`coxian_of`).  The exact CTMC's fits, and Marie's where
    its station's phase budget holds them."""
    name = type(dist).__name__
    c2 = float(dist.scv)
    if c2 > 1.0 + 1e-12 and isinstance(dist, Lognormal):
        h = lognormal_ph(round(c2, 12), max_phases)
        if h is None:
            return None
        r, q, words = h
        cox = Coxian(tuple(x / mean for x in r), q, False,
                     f"{name} (scv {c2:.4g}) as {words} with its mean and scv (Asmussen, "
                     f"Nerman & Olsson 1996), {len(r)} phases")
        if abs(cox.mean / mean - 1.0) > 1e-8 or abs(cox.scv - c2) > 1e-7 * (1.0 + c2):
            return None
        return cox
    if not 0.0 < c2 < 1.0 - 1e-12 or math.ceil(1.0 / c2 - 1e-9) > max_phases:
        return None       # (an APH of n phases has scv >= 1/n)
    mom = relative_moments(dist)
    fit = None if mom is None else aph_three_moments(1.0, mom[0], mom[1], max_phases)
    if fit is None:
        return None
    r = tuple(x / mean for x in fit[0])
    return Coxian(r, fit[1], False,
                  f"{name} (scv {c2:.4g}) as the acyclic phase-type of fewest phases "
                  f"matching its first three moments (Bobbio, Horvath & Telek 2005), "
                  f"{len(r)} phases")


def _fitted(dist: Distribution, mean: float, max_phases: int) -> Coxian:
    """The fit of a shape that is not phase-type (see the module
    docstring)."""
    name = type(dist).__name__
    c2 = float(dist.scv)
    closer = closer_fit(dist, mean, max_phases)
    if closer is not None:
        return closer
    if c2 < 1.0 - 1e-12:
        k_need = math.inf if c2 <= 0 else max(2, math.ceil(1.0 / c2 - 1e-9))
        if k_need > max_phases:
            k = int(max_phases)
            r, q = _erlang(k, mean)
            why = (f"{name} (scv {c2:.4g}) as an Erlang-{k} (mean matched, scv {1 / k:.4g}; "
                   f"k capped at max_phases = {max_phases}: in an M/G/1 queue the mean wait "
                   f"is then overstated by the factor (1 + 1/k)/(1 + scv) = "
                   f"{(1 + 1 / k) / (1 + c2):.4g}, Pollaczek-Khinchine)")
            return Coxian(r, q, False, why, capped=True)
        r, q, k = mixed_erlang(mean, c2)
        return Coxian(r, q, False,
                      f"{name} (scv {c2:.4g}) as a mixture of Erlang-{k - 1} and Erlang-{k} "
                      f"(Tijms 2003, app. B; mean and scv matched, {k} phases)")
    if c2 <= 1.0 + 1e-12:
        r, q = _exponential(mean)
        return Coxian(r, q, False, f"{name} (scv {c2:.4g}) as an exponential (mean and scv "
                                   "matched)")
    mom = relative_moments(dist)
    fit = None
    if mom is not None:
        fit = h2_three_moments(mean, mom[0] * mean ** 2, mom[1] * mean ** 3)
    if fit is not None:
        r, q = hyper_to_coxian(*fit)
        return Coxian(r, q, False,
                      f"{name} (scv {c2:.4g}) as the H2 matching its first three moments "
                      f"(Whitt 1982; Tijms 2003, app. B), {len(r)} phases")
    r, q = hyper_to_coxian(*h2_balanced(mean, c2))
    why = ("no third moment" if mom is not None and not math.isfinite(mom[1])
           else "no H2 has its third moment")
    return Coxian(r, q, False,
                  f"{name} (scv {c2:.4g}) as the balanced-means H2 (Whitt 1982; mean and scv "
                  f"matched, {why}), {len(r)} phases")


def fit_moments(dist: Distribution, cox: Coxian) -> str:
    """The moments of a shape and of its phase-type fit, side by side, as
    said in a result's assumptions: the SCV and the normalised third moment
    E[X^3]/E[X]^3 of each (:func:`relative_moments`; the fit's from
    :meth:`Coxian.moment`), the mean being matched by every fit."""
    m1 = cox.mean
    fit = (cox.moment(2) / m1 ** 2 - 1.0, cox.moment(3) / m1 ** 3)
    rel = relative_moments(dist)
    shape = (float(dist.scv), rel[1] if rel is not None else math.nan)
    return (f"moments (mean matched): scv {shape[0]:.4g} -> {fit[0]:.4g}, "
            f"E[X^3]/E[X]^3 {shape[1]:.4g} -> {fit[1]:.4g}")


def coxian_of(dist, mean: float, max_phases: int = DEFAULT_MAX_PHASES,
              who: str = "") -> Coxian:
    """The Coxian form of a time of shape ``dist`` (None: exponential) and
    mean ``mean`` > 0: exact for the exponential, Erlang and
    hyperexponential shapes, else the fit of the module docstring (at most
    ``max_phases`` phases for a low-variability shape).  ``who`` names the
    station or class in a refusal."""
    if not (isinstance(mean, (int, float)) and math.isfinite(mean) and mean > 0):
        raise InvalidValueError(f"{who}: a phase-type time needs a positive finite mean, "
                                f"got {mean!r}")
    if dist is None or isinstance(dist, Exponential):
        return Coxian(*_exponential(mean))
    if isinstance(dist, Erlang):
        return Coxian(*_erlang(int(dist.k), mean))
    if isinstance(dist, HyperExponential):
        if float(dist.scv) <= 1.0:
            return Coxian(*_exponential(mean))
        probs, rates = dist.branches()     # at mean 1: balanced, or the given branches
        return Coxian(*hyper_to_coxian(probs, [r / mean for r in rates]))
    if isinstance(dist, (Deterministic, Uniform, Lognormal, Pareto, Empirical)):
        if isinstance(max_phases, bool) or not isinstance(max_phases, (int, np.integer)) \
                or max_phases < 1:
            raise InvalidValueError(f"max_phases must be an integer >= 1, got {max_phases!r}")
        return _fitted(dist, float(mean), int(max_phases))
    raise UnsupportedModelError(
        f"{who}: no phase-type form of a {type(dist).__name__} shape; use method='sim'")


# ---------------------------------------------------------------------------
# the phase cap, and answers carried past it
# ---------------------------------------------------------------------------

def capped_fit(scv: float, phases: int) -> bool:
    """Whether a low-variability fit of at most ``phases`` Erlang phases
    holds a shape of this scv above its own (scv < 1/phases: the Erlang
    cap of the module docstring)."""
    return scv < 1.0 - 1e-12 and (scv <= 0.0 or int(np.ceil(1.0 / scv - 1e-9)) > phases)


def _fitted_shapes(net) -> list:
    """The time shapes of ``net`` that are fitted (not phase-type:
    deterministic, uniform, lognormal, Pareto, empirical): the service
    shapes, one per class and station that has one and visits it, and the
    open classes' inter-arrival shapes (both fitted alike,
    :func:`coxian_of`)."""
    out = []
    V = np.asarray(net.visits, dtype=float)
    shapes = net.lowered.shapes or [[s.distribution for s in net.stations]] * len(net.classes)
    phase_type = (Erlang, Exponential, HyperExponential)
    for c, row in enumerate(shapes):
        for j, d in enumerate(row):
            if d is None or V[c, j] <= 0 or isinstance(d, phase_type):
                continue
            out.append(d)
    for cls in net.classes:
        d = getattr(cls, "interarrival", None)
        if isinstance(d, Distribution) and not isinstance(d, phase_type):
            out.append(d)
    return out


def capped_scvs(net, k: int) -> list:
    """The scvs of the time shapes of ``net`` (a
    :class:`~qmodels.Network`) that a fit of at most ``k`` phases holds
    above their own (a deterministic, uniform, lognormal, Pareto or
    empirical shape of scv below 1 needing more than ``k`` Erlang phases),
    one per class and station that has one."""
    return [t for t in (float(d.scv) for d in _fitted_shapes(net)) if capped_fit(t, k)]


def coarser_caps(net, k: int) -> list:
    """The phase caps below ``k`` at which a network whose low-variance
    shapes are held at ``k`` is solved again for :func:`richardson`: k/2
    and k/4 (Erlang-1, the exponential, included), each raised to the
    phases the low-variance shapes a cap of ``k`` fits without the cap
    need (:func:`coxian_of`: three moments, or a mixture of Erlangs of
    ceil(1/scv) phases), so that only the capped shapes change between the
    solves; strictly decreasing."""
    need = max([coxian_of(d, 1.0, k).phases for d in _fitted_shapes(net)
                if 0.0 < float(d.scv) < 1.0 - 1e-12 and not capped_fit(float(d.scv), k)] + [1])
    out = []
    for c in (k // 2, k // 4):
        c = max(c, need)
        if c < (out[-1] if out else k):
            out.append(c)
    return out


def richardson_weights(t0: float, pts) -> list:
    """The weights w_i of the values F(t_i) at the points ``pts`` in the
    value at ``t0`` of the polynomial through them (Lagrange's form: w_i =
    prod_{j != i} (t0 - t_j) / (t_i - t_j)); they sum to 1.  With t_i =
    1/k, 2/k, 4/k and t0 = 0: 8/3, -2, 1/3; with 1/k, 2/k: 2, -1
    (Richardson & Gaunt, "The deferred approach to the limit", Phil.
    Trans. R. Soc. A 226, 1927, 299-361)."""
    n = len(pts)
    return [float(np.prod([(t0 - pts[j]) / (pts[i] - pts[j]) for j in range(n) if j != i]))
            for i in range(n)]


def richardson(runs, t0: float, ts, admissible):
    """Figures carried to the scv ``t0`` of a shape from solves at the
    fitted scvs ``ts`` (finest first, increasing: Erlang-k, -k/2, -k/4,
    ...): ``runs`` one mapping {name: array} per solve, each figure taken
    as the polynomial of degree len(runs) - 1 in the fitted scv
    (:func:`richardson_weights`).  Linear in the scv is what the
    Pollaczek-Khinchine mean of an M/G/1 queue is (Kleinrock 1975, eq.
    5.105: exact there); a network's figures are curved beyond that, so
    the highest degree is tried first.  Where ``admissible(figures)`` is
    false (a figure left its range) the next lower degree is tried, down to
    the linear step of the two finest.  Every expectation under the
    stationary vector is linear in that vector, so one set of weights
    carries them all and the identities between them that are linear
    (job conservation, U = X S) hold for the result.  Returns (figures,
    degree, weights) or None."""
    ts = [float(t) for t in ts]
    if any(not b > a for a, b in zip(ts, ts[1:])) or not t0 < ts[0]:
        return None
    for n in range(len(runs), 1, -1):
        w = richardson_weights(t0, ts[:n])
        out = {key: sum(wi * np.asarray(r[key], dtype=float) for wi, r in zip(w, runs))
               for key in runs[0]}
        if admissible(out):
            return out, n - 1, w
    return None
