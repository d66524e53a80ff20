"""Laplace-Stieltjes transforms of inter-arrival time shapes, for the exact
solution of a GI/M/c queue (:mod:`qmodels.analytic.qna`).

The transform of a non-negative random time T is A*(s) = E[exp(-s T)]
(Kleinrock, *Queueing Systems* vol. 1, 1975, sec. 2.7 and appendix II).
A shape of :mod:`qmodels.model.distributions` fixes T up to its mean, so
each transform here is of the shape scaled to MEAN 1, as a function of the
dimensionless t = s E[T]; a stream of mean inter-arrival time m has
A*(s) = A(s m).  Each transform gives, accurately where the plain formula
would cancel:

* ``lst(t)``        A(t) = E[exp(-t T)];
* ``complement(t)`` 1 - A(t) = E[1 - exp(-t T)] (no cancellation as t -> 0);
* ``slope(t1, t2)`` the divided difference (A(t1) - A(t2)) / (t2 - t1)
  = E[T exp(-t1 T) phi1((t2 - t1) T)], phi1(x) = (1 - exp(-x)) / x, which is
  -A'(t1) = E[T exp(-t1 T)] at t1 = t2 (no 0/0).

Closed forms: exponential, Erlang, hyperexponential (a mix of
exponentials), deterministic, uniform, empirical (a finite mix of point
masses).  Lognormal and Pareto have none: their expectations are
integrated numerically (``scipy.integrate.quad``, relative tolerance
:data:`QUAD_RTOL`; an integral whose error estimate exceeds
:data:`QUAD_CHECK` relative raises :class:`~qmodels.errors.UnsupportedModelError`
naming the stream).  :func:`thinned` is the stream kept by independent
Bernoulli(p) thinning, again a renewal stream (Cox, *Renewal Theory*, 1962,
sec. 9.2; its inter-arrival time is a geometric sum of the original ones).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...errors import InvalidValueError, UnsupportedModelError
from ...model.distributions import (
    Deterministic,
    Empirical,
    Erlang,
    Exponential,
    HyperExponential,
    Lognormal,
    Pareto,
    Uniform,
)

__all__ = ["unit_transform", "thinned", "Transform", "QUAD_RTOL", "QUAD_CHECK"]

#: relative tolerance asked of ``scipy.integrate.quad`` (lognormal, Pareto)
QUAD_RTOL = 1e-11
#: an integral whose own error estimate exceeds this (relative) is refused
QUAD_CHECK = 1e-7

# 32-point Gauss-Legendre nodes and weights on [0, 1] (Abramowitz & Stegun
# 1964, eq. 25.4.29), for the divided differences of the closed forms
_GL_X, _GL_W = np.polynomial.legendre.leggauss(32)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W


def _phi1(x):
    """phi1(x) = (1 - exp(-x)) / x for x >= 0, phi1(0) = 1 (no cancellation:
    expm1)."""
    x = np.asarray(x, dtype=float)
    small = x < 1e-8
    safe = np.where(small, 1.0, x)
    return np.where(small, 1.0 - 0.5 * x, -np.expm1(-safe) / safe)


class Transform:
    """The transform of a shape scaled to mean 1 (module docstring).

    Subclasses give ``lst``, ``complement`` and ``deriv`` (-A'(t) =
    E[T exp(-t T)]); ``slope`` defaults to the direct quotient where A falls
    by more than half between t1 and t2 (no cancellation worth a bit), else
    to the mean of -A' over [t1, t2] by 32-point Gauss-Legendre (A is
    analytic there, so the rule is exact to rounding)."""

    name = "transform"

    def lst(self, t: float) -> float:
        raise NotImplementedError

    def complement(self, t: float) -> float:
        raise NotImplementedError

    def deriv(self, t: float) -> float:
        raise NotImplementedError

    def slope(self, t1: float, t2: float) -> float:
        lo, hi = (t1, t2) if t1 <= t2 else (t2, t1)
        a_lo, a_hi = self.lst(lo), self.lst(hi)
        if hi > lo and a_hi < 0.5 * a_lo:
            return (a_lo - a_hi) / (hi - lo)
        return float(sum(w * self.deriv(lo + x * (hi - lo)) for x, w in zip(_GL_X, _GL_W)))


class _Exponential(Transform):
    """Exponential of mean 1: A(t) = 1 / (1 + t) (Kleinrock 1975, appendix II,
    the transform pairs)."""

    name = "exponential"

    def lst(self, t):
        return 1.0 / (1.0 + t)

    def complement(self, t):
        return t / (1.0 + t)

    def deriv(self, t):
        return 1.0 / (1.0 + t) ** 2

    def slope(self, t1, t2):
        return 1.0 / ((1.0 + t1) * (1.0 + t2))


class _Mix(Transform):
    """A mix of exponentials, probability p_i of rate r_i (sum p_i / r_i = 1):
    A(t) = sum p_i r_i / (r_i + t), the mix of the exponential transforms
    (Kleinrock 1975, ch. 4, the hyperexponential as parallel stages);
    slope = sum p_i r_i / ((r_i + t1)(r_i + t2)), from
    1/(r + t1) - 1/(r + t2) = (t2 - t1) / ((r + t1)(r + t2))."""

    name = "hyperexponential"

    def __init__(self, p, r):
        self.p, self.r = np.asarray(p, float), np.asarray(r, float)

    def lst(self, t):
        return float(np.sum(self.p * self.r / (self.r + t)))

    def complement(self, t):
        return float(np.sum(self.p * t / (self.r + t)))

    def deriv(self, t):
        return float(np.sum(self.p * self.r / (self.r + t) ** 2))

    def slope(self, t1, t2):
        return float(np.sum(self.p * self.r / ((self.r + t1) * (self.r + t2))))


class _Erlang(Transform):
    """Erlang-k of mean 1 (k phases of rate k): A(t) = (1 + t/k)^-k, the
    k-th power of a phase's transform (Kleinrock 1975, ch. 4, the method of
    stages), -A'(t) = (1 + t/k)^-(k+1)."""

    name = "erlang"

    def __init__(self, k: int):
        self.k = int(k)

    def _log(self, t):
        return -self.k * math.log1p(t / self.k)

    def lst(self, t):
        return math.exp(self._log(t))

    def complement(self, t):
        return -math.expm1(self._log(t))

    def deriv(self, t):
        return math.exp(-(self.k + 1) * math.log1p(t / self.k))


class _Points(Transform):
    """A finite mix of point masses x_i (weights w_i, sum w_i x_i = 1):
    A(t) = sum w_i exp(-t x_i); the deterministic time is the one point
    x = 1, the empirical shape its rescaled samples each of weight 1/n."""

    def __init__(self, x, w, name):
        self.x, self.w, self.name = np.asarray(x, float), np.asarray(w, float), name

    def lst(self, t):
        return float(np.sum(self.w * np.exp(-t * self.x)))

    def complement(self, t):
        return float(np.sum(self.w * -np.expm1(-t * self.x)))

    def deriv(self, t):
        return float(np.sum(self.w * self.x * np.exp(-t * self.x)))

    def slope(self, t1, t2):
        lo, hi = min(t1, t2), max(t1, t2)
        return float(np.sum(self.w * self.x * np.exp(-lo * self.x) * _phi1((hi - lo) * self.x)))


class _Uniform(Transform):
    """Uniform on [lo, hi], lo + hi = 2 (mean 1), width d = hi - lo:
    A(t) = exp(-t lo) phi1(t d) (Kleinrock 1975, appendix II, with
    phi1(x) = (1 - exp(-x))/x), -A'(t) = exp(-t lo) (lo phi1(t d)
    + d phi2(t d)), phi2(x) = int_0^1 u exp(-x u) du."""

    name = "uniform"

    def __init__(self, spread: float):
        self.lo, self.d = 1.0 - spread, 2.0 * spread

    def lst(self, t):
        return math.exp(-t * self.lo) * float(_phi1(t * self.d))

    def complement(self, t):
        # 1 - A = (1 - exp(-t lo)) + exp(-t lo) (1 - phi1(t d)), each term >= 0
        x = t * self.d
        return -math.expm1(-t * self.lo) + math.exp(-t * self.lo) * _one_minus_phi1(x)

    def deriv(self, t):
        x = t * self.d
        return math.exp(-t * self.lo) * (self.lo * float(_phi1(x)) + self.d * _phi2(x))


def _one_minus_phi1(x: float) -> float:
    """1 - phi1(x) = (x - 1 + exp(-x)) / x >= 0, below 0.5 by its Taylor series
    x/2! - x^2/3! + x^3/4! - ... (no cancellation)."""
    if x < 0.5:
        term, s = 0.5 * x, 0.0
        for n in range(1, 30):
            s += term
            term *= -x / (n + 2)
        return s
    return (x + math.expm1(-x)) / x


def _phi2(x: float) -> float:
    """phi2(x) = int_0^1 u exp(-x u) du = (1 - exp(-x)(1 + x)) / x^2, by its
    series sum_n (-x)^n / (n! (n + 2)) below 0.5."""
    if x < 0.5:
        s, fact = 0.0, 1.0
        for n in range(0, 30):
            if n:
                fact *= -x / n
            s += fact / (n + 2)
        return s
    return (-math.expm1(-x) - x * math.exp(-x)) / (x * x)


class _Quad(Transform):
    """A shape without a closed-form transform: E[g(T)] integrated
    numerically on its density, over a variable in which the integrand is
    smooth: z = (ln T - mu) / s, standard normal, for the lognormal;
    w = ln(T / x_m), of density alpha exp(-alpha w) on [0, inf), for the
    Pareto.  The range is split where t T = 1 (where exp(-t T) turns)."""

    def __init__(self, name, who):
        self.name, self.who = name, who

    def _pieces(self, t_scale):
        """[(f(v) -> (T, density), lo, hi)]: the variable's pieces."""
        raise NotImplementedError

    def _expect(self, g, t_scale: float) -> float:
        from scipy.integrate import IntegrationWarning, quad

        val = err = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IntegrationWarning)
            for lo, hi in self._pieces(t_scale):
                def f(v):
                    x, dens = self._point(v)
                    return g(x) * dens if dens > 0.0 else 0.0

                v, e = quad(f, lo, hi, limit=400, epsabs=0.0, epsrel=QUAD_RTOL)
                val, err = val + v, err + e
        if not (math.isfinite(val) and math.isfinite(err)) or err > QUAD_CHECK * abs(val) + 1e-300:
            raise UnsupportedModelError(
                f"{self.who}: the Laplace transform of its {self.name} inter-arrival time did "
                f"not converge numerically (value {val:.6g}, error estimate {err:.3g}); this "
                "station cannot be solved exactly: use method='sim'")
        return val

    def lst(self, t):
        return self._expect(lambda x: math.exp(-t * x), t)

    def complement(self, t):
        return self._expect(lambda x: -math.expm1(-t * x), t)

    def deriv(self, t):
        return self._expect(lambda x: x * math.exp(-t * x), t)

    def slope(self, t1, t2):
        lo, hi = min(t1, t2), max(t1, t2)
        d = hi - lo
        return self._expect(lambda x: x * math.exp(-lo * x) * float(_phi1(d * x)), hi)


class _Lognormal(_Quad):
    """Lognormal of mean 1 and SCV c2: T = exp(mu + s Z), s^2 = ln(1 + c2),
    mu = -s^2/2, Z standard normal (Law 2015, sec. 6.2.2); integrated over
    z in [-40, 40] (the normal mass outside is below 1e-300), split at 0
    and where t T = 1."""

    def __init__(self, scv, who):
        super().__init__("lognormal", who)
        self.s = math.sqrt(math.log1p(float(scv)))
        self.mu = -0.5 * self.s * self.s
        self._c = 1.0 / math.sqrt(2.0 * math.pi)

    def _point(self, z):
        e = self.mu + self.s * z
        return (math.exp(e) if e < 700.0 else math.inf), self._c * math.exp(-0.5 * z * z)

    def _pieces(self, t):
        lo, hi = -40.0, min(40.0, (700.0 - self.mu) / self.s)
        pts = {lo, hi, 0.0}
        if t > 0:
            zs = (-math.log(t) - self.mu) / self.s
            # and where exp(-t T) phi(z) peaks: z0 = -W(t s e^mu) (Lambert W)
            z0 = -_lambert_w(t * self.s * math.exp(self.mu))
            pts.update(z for z in (zs, z0) if lo < z < hi)
        pts = sorted(pts)
        return list(zip(pts[:-1], pts[1:]))


def _lambert_w(x: float) -> float:
    """The principal branch W(x) >= 0 for x >= 0 (w e^w = x), by Newton's
    method from log1p(x) (Corless et al., "On the Lambert W function",
    Adv. Comput. Math. 5, 1996)."""
    w = math.log1p(x)
    if x > 3.0:
        w = math.log(x) - math.log(math.log(x))
    for _ in range(60):
        ew = math.exp(w)
        step = (w * ew - x) / (ew * (w + 1.0))
        w -= step
        if abs(step) <= 1e-15 * max(1.0, abs(w)):
            break
    return w


class _Pareto(_Quad):
    """Pareto of shape alpha, mean 1: x_m = (alpha - 1)/alpha, density
    alpha x_m^alpha / x^(alpha + 1) on [x_m, inf) (Johnson, Kotz &
    Balakrishnan 1994, ch. 20); integrated in w = ln(x / x_m), density
    alpha exp(-alpha w) on [0, inf), split where t T = 1."""

    def __init__(self, alpha, who):
        super().__init__("Pareto", who)
        self.alpha = float(alpha)
        self.xm = (self.alpha - 1.0) / self.alpha

    def _point(self, w):
        if w > 700.0:      # the density has underflowed long before
            return self.xm * math.exp(700.0), 0.0
        return self.xm * math.exp(w), self.alpha * math.exp(-self.alpha * w)

    def _pieces(self, t):
        ws = math.log(1.0 / (t * self.xm)) if t > 0 else 0.0
        if ws > 0.0:
            return [(0.0, ws), (ws, math.inf)]
        return [(0.0, math.inf)]


class _Thinned(Transform):
    """The stream kept by Bernoulli(p) thinning of a renewal stream, scaled
    back to mean 1: its inter-arrival time is a geometric(p) sum of the
    original ones (Cox 1962, sec. 9.2), so with the original unit-mean A,
    A_p(t) = p A(p t) / (1 - (1 - p) A(p t)),
    1 - A_p(t) = B / (p + (1 - p) B) with B = 1 - A(p t), and
    slope_p(t1, t2) = p^2 slope(p t1, p t2) / ((p + (1 - p) B1)(p + (1 - p) B2))."""

    def __init__(self, base: Transform, p: float):
        self.base, self.p = base, float(p)
        self.name = f"{base.name}, thinned with p = {p:.6g}"

    def lst(self, t):
        p = self.p
        B = self.base.complement(p * t)
        return p * (1.0 - B) / (p + (1.0 - p) * B)

    def complement(self, t):
        p = self.p
        B = self.base.complement(p * t)
        return B / (p + (1.0 - p) * B)

    def deriv(self, t):
        return self.slope(t, t)

    def slope(self, t1, t2):
        p = self.p
        B1, B2 = self.base.complement(p * t1), self.base.complement(p * t2)
        return p * p * self.base.slope(p * t1, p * t2) / ((p + (1 - p) * B1) * (p + (1 - p) * B2))


def thinned(tr: Transform, p: float) -> Transform:
    """``tr``'s stream kept by independent Bernoulli(p) thinning, 0 < p <= 1,
    scaled to mean 1 (:class:`_Thinned`); ``tr`` itself for p = 1."""
    if not 0.0 < p <= 1.0:
        raise InvalidValueError(f"thinning probability must be in (0, 1], got {p!r}")
    return tr if p == 1.0 else _Thinned(tr, p)


def unit_transform(dist, who: str = "the stream") -> Transform:
    """The transform of the shape ``dist`` (None: exponential) scaled to
    mean 1 (module docstring).  ``who`` names the stream in errors.

    >>> tr = unit_transform(Erlang(2))
    >>> round(tr.lst(1.0), 12)   # (1 + 1/2)^-2
    0.444444444444
    >>> round(unit_transform(HyperExponential(8.0)).slope(0.0, 0.0), 12)  # the mean
    1.0
    """
    if dist is None or isinstance(dist, Exponential):
        return _Exponential()
    if isinstance(dist, Deterministic):
        return _Points([1.0], [1.0], "deterministic")
    if isinstance(dist, Erlang):
        return _Exponential() if int(dist.k) == 1 else _Erlang(int(dist.k))
    if isinstance(dist, HyperExponential):
        # balanced means (Whitt 1982; as the simulator draws it):
        # p1 = (1 + r)/2, p2 = (1 - r)/2 = 1 / ((c2 + 1)(1 + r)),
        # r = sqrt((c2 - 1)/(c2 + 1)); rate_i = 2 p_i (mean 1)
        c2 = float(dist.scv)
        if c2 == 1.0:
            return _Exponential()
        if dist.probs is not None:     # the given branches at mean 1
            ps, rs = dist.branches()
            return _Mix(list(ps), list(rs))
        r = math.sqrt((c2 - 1.0) / (c2 + 1.0))
        p2 = 1.0 / ((c2 + 1.0) * (1.0 + r))
        p1 = 1.0 - p2
        if not p2 > 0.0:
            raise UnsupportedModelError(
                f"{who}: HyperExponential scv {c2!r} is too large for a transform in floating "
                "point: use a smaller scv")
        return _Mix([p1, p2], [2.0 * p1, 2.0 * p2])
    if isinstance(dist, Uniform):
        s = float(dist.spread)
        return _Points([1.0], [1.0], "deterministic") if s == 0.0 else _Uniform(s)
    if isinstance(dist, Empirical):
        x, n = np.unique(dist.unit_samples, return_counts=True)
        return _Points(x, n / n.sum(), "empirical")
    if isinstance(dist, Lognormal):
        return _Lognormal(dist.scv, who)
    if isinstance(dist, Pareto):
        return _Pareto(dist.alpha, who)
    raise UnsupportedModelError(
        f"{who}: no Laplace transform for a {type(dist).__name__} inter-arrival time")
