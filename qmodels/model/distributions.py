"""Shapes of service and inter-arrival time distributions.

The *mean* always comes from the model (a station's service time, a class's
arrival rate); a distribution object gives only the shape, described by its
squared coefficient of variation (SCV, c^2 = Var/mean^2).  Analytic solvers
use the mean (product-form) or the SCV (M/G/1, G/G/1 approximations); the
simulator draws from the full distribution.  A station's ``distribution``
is the shape of every class's service there unless a class gives its own
(``Closed/Open(distribution={station: shape})``).

References: Law, *Simulation Modeling and Analysis*, 5th ed. (2015), ch. 6
and 8 (distributions and their generation); Whitt, "Approximating a point
process by a renewal process" (1982) for the two-moment fits (balanced-means
hyperexponential for SCV > 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidValueError

__all__ = [
    "unit_moments",
    "Distribution",
    "Exponential",
    "Deterministic",
    "Erlang",
    "HyperExponential",
    "h2_from_moments",
    "Lognormal",
    "Uniform",
    "Empirical",
    "Pareto",
    "is_exponential",
]


@dataclass(frozen=True)
class Distribution:
    """Base class: a distribution shape with a given mean supplied later."""

    name = "distribution"

    @property
    def scv(self) -> float:
        """Squared coefficient of variation."""
        raise NotImplementedError


@dataclass(frozen=True)
class Exponential(Distribution):
    """Exponential (memoryless), SCV 1 — the product-form assumption."""

    name = "exponential"

    @property
    def scv(self):
        return 1.0


@dataclass(frozen=True)
class Deterministic(Distribution):
    """Constant time, SCV 0."""

    name = "deterministic"

    @property
    def scv(self):
        return 0.0


@dataclass(frozen=True)
class Erlang(Distribution):
    """Erlang-k: sum of k exponential phases of mean m/k; SCV 1/k."""

    k: int = 2
    name = "erlang"

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise InvalidValueError(f"Erlang: k must be an integer >= 1, got {self.k!r}")

    @property
    def scv(self):
        return 1.0 / self.k


@dataclass(frozen=True, init=False)
class HyperExponential(Distribution):
    """Hyperexponential service: with probability p_i an exponential time
    of rate mu_i.  Given either way:

    * ``HyperExponential(scv)``: the two-phase H2 with balanced means
      (p_1 / mu_1 = p_2 / mu_2) of that SCV >= 1 (Whitt 1982; Law 2015,
      sec. 6.2.5; Tijms, *A First Course in Stochastic Models*, Wiley
      2003, app. B): p1 = (1 + sqrt((c2-1)/(c2+1)))/2, rates 2 p_i / m;
    * ``HyperExponential(probs=[p_1, ...], rates=[mu_1, ...])``: the given
      branches (two or more), E[X^j] = j! sum_i p_i / mu_i^j (Kleinrock,
      *Queueing Systems* vol. 1, 1975, sec. 4.5; Tijms 2003, app. B).  As
      for every shape the *mean* comes from the model (the station's or the
      class's service time): the rates fix the shape and are scaled by
      ``mean / model mean`` (a station given ``service=h.mean`` has exactly
      these rates);
    * :meth:`from_moments`: the H2 whose first three moments are given.

    ``scv_value`` is the SCV (given, or that of the branches)."""

    scv_value: float = 4.0
    probs: tuple | None = None
    rates: tuple | None = None
    name = "hyperexponential"

    def __init__(self, scv_value=None, probs=None, rates=None, **unknown):
        if unknown:
            raise InvalidValueError(
                f"HyperExponential has no parameter {next(iter(unknown))!r}: it takes scv_value, "
                "or probs and rates")
        if probs is None and rates is None:
            v = 4.0 if scv_value is None else scv_value
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or v < 1:
                raise InvalidValueError(
                    f"HyperExponential: scv must be a finite number >= 1, got {v!r}")
            object.__setattr__(self, "scv_value", v)
            object.__setattr__(self, "probs", None)
            object.__setattr__(self, "rates", None)
            return
        if probs is None or rates is None:
            raise InvalidValueError(
                "HyperExponential: give probs and rates together (the branch probabilities "
                "and their exponential rates)")
        p, r = _branch_list(probs, "probs"), _branch_list(rates, "rates")
        if len(p) != len(r) or len(p) < 2:
            raise InvalidValueError(
                f"HyperExponential: probs and rates must be two lists of one length >= 2 "
                f"(one entry per branch), got {len(p)} probs and {len(r)} rates")
        if any(not x > 0 for x in p) or abs(sum(p) - 1.0) > 1e-9:
            raise InvalidValueError(
                f"HyperExponential: probs must be positive and sum to 1, got {list(p)}")
        if any(not (x > 0 and math.isfinite(x)) for x in r):
            raise InvalidValueError(
                f"HyperExponential: rates must be positive finite numbers, got {list(r)}")
        m1 = sum(a / b for a, b in zip(p, r))
        m2 = 2.0 * sum(a / (b * b) for a, b in zip(p, r))
        c2 = max(m2 / (m1 * m1) - 1.0, 1.0)   # >= 1 for every mixture (rounding aside)
        if scv_value is not None and abs(float(scv_value) - c2) > 1e-9 * c2:
            raise InvalidValueError(
                f"HyperExponential: scv_value {scv_value!r} disagrees with the branches' SCV "
                f"{c2!r}; give the branches alone")
        object.__setattr__(self, "scv_value", c2)
        object.__setattr__(self, "probs", p)
        object.__setattr__(self, "rates", r)

    @classmethod
    def from_moments(cls, m1, m2, m3) -> HyperExponential:
        """The two-phase hyperexponential with raw moments E[X] = m1,
        E[X^2] = m2, E[X^3] = m3 (mean m1: give the station ``service=m1``
        to have it exactly).  One exists, and is then unique, iff the SCV
        c^2 = m2/m1^2 - 1 > 1 and m1 m3 > (3/2) m2^2 (Whitt, "Approximating
        a point process by a renewal process, I: two basic methods", Oper.
        Res. 30(1), 1982; Tijms 2003, app. B, p. 447; at m1 m3 = (3/2) m2^2
        the fit degenerates to an exponential); anything else is refused
        by name.  The branch means x_i = 1/mu_i are the two support points
        of the distribution with moments a_j = m_j / j! (since E[X^j] = j!
        sum_i p_i x_i^j): x_1, x_2 the roots of x^2 - s x + P with s = (a_3
        - a_1 a_2)/(a_2 - a_1^2), P = s a_1 - a_2, and p_1 = (a_1 - x_2) /
        (x_1 - x_2)."""
        fit = h2_from_moments(m1, m2, m3)
        return cls(probs=fit[0], rates=fit[1])

    @property
    def scv(self):
        return float(self.scv_value)

    @property
    def mean(self) -> float:
        """The mean of the given branches, sum p_i / mu_i (1 for the
        balanced form, which is given by its SCV alone)."""
        if self.probs is None:
            return 1.0
        return float(sum(p / r for p, r in zip(self.probs, self.rates)))

    def branches(self) -> tuple:
        """``(probs, rates)`` of the shape at mean 1: the balanced-means H2
        of the SCV (p1 = (1 + sqrt((c2-1)/(c2+1)))/2, rates 2 p_i; a single
        branch of rate 1 at SCV 1), or the given branches with their rates
        multiplied by their mean.  Every reader of the shape (moments,
        sampler, phase-type, transforms, file exports) uses this one."""
        if self.probs is None:
            c2 = float(self.scv_value)
            if c2 == 1.0:
                return (1.0,), (1.0,)
            p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
            ps = tuple(p for p in (p1, 1.0 - p1) if p > 0)
            return ps, tuple(2.0 * p for p in ps)
        m = self.mean
        return tuple(self.probs), tuple(r * m for r in self.rates)


def _branch_list(xs, what: str) -> tuple:
    bad = InvalidValueError(f"HyperExponential: {what} must be a list of numbers, got "
                            f"{_shown(xs)}")
    if isinstance(xs, (str, bytes, Mapping)):
        raise bad
    try:
        out = tuple(float(x) for x in xs)
    except (TypeError, ValueError, OverflowError):
        raise bad from None
    if any(isinstance(x, bool) for x in xs):
        raise bad
    return out


def h2_from_moments(m1, m2, m3) -> tuple:
    """``(probs, rates)`` of the H2 with raw moments m1, m2, m3; see
    :meth:`HyperExponential.from_moments` (the formula and its source).
    Raises :class:`InvalidValueError` naming the moments when no H2 has
    them."""
    try:
        a1, a2, a3 = (float(m1), float(m2) / 2.0, float(m3) / 6.0)
    except (TypeError, ValueError):
        raise InvalidValueError(
            f"HyperExponential.from_moments: moments must be numbers, got {m1!r}, {m2!r}, "
            f"{m3!r}") from None
    if not all(math.isfinite(x) and x > 0 for x in (a1, a2, a3)):
        raise InvalidValueError(
            f"HyperExponential.from_moments: moments must be positive and finite, got "
            f"m1={m1!r}, m2={m2!r}, m3={m3!r}")
    m1f, m2f, m3f = a1, 2.0 * a2, 6.0 * a3
    c2 = m2f / (m1f * m1f) - 1.0
    if c2 <= 1.0 + 1e-12:
        raise InvalidValueError(
            f"HyperExponential.from_moments: m1={m1!r}, m2={m2!r} give SCV {c2:.6g}; a "
            "hyperexponential has SCV > 1 (use Exponential for SCV 1, Erlang or a phase-type "
            "fit below)")
    if m1f * m3f <= 1.5 * m2f * m2f * (1.0 + 1e-12):
        raise InvalidValueError(
            f"HyperExponential.from_moments: m1={m1!r}, m2={m2!r}, m3={m3!r}: no two-phase "
            f"hyperexponential has these moments, it needs m1 m3 > 1.5 m2^2 (here "
            f"{m1f * m3f:.6g} <= {1.5 * m2f * m2f:.6g}; Whitt 1982, Tijms 2003 app. B)")
    s = (a3 - a1 * a2) / (a2 - a1 * a1)
    P = s * a1 - a2
    disc = s * s - 4.0 * P
    if not (disc > 0 and P > 0):   # cannot happen past the two checks above (rounding aside)
        raise InvalidValueError(
            f"HyperExponential.from_moments: m1={m1!r}, m2={m2!r}, m3={m3!r} have no "
            "two-phase hyperexponential (no two positive branch means)")
    r = math.sqrt(disc)
    x1, x2 = (s + r) / 2.0, (s - r) / 2.0
    p1 = (a1 - x2) / (x1 - x2)
    if not (x2 > 0 and 0.0 < p1 < 1.0):
        raise InvalidValueError(
            f"HyperExponential.from_moments: m1={m1!r}, m2={m2!r}, m3={m3!r} have no "
            "two-phase hyperexponential (a branch probability outside (0, 1))")
    return (p1, 1.0 - p1), (1.0 / x1, 1.0 / x2)


@dataclass(frozen=True)
class Lognormal(Distribution):
    """Lognormal with the given SCV: sigma^2 = ln(1 + c2), mu = ln m - sigma^2/2."""

    scv_value: float = 1.0
    name = "lognormal"

    def __post_init__(self):
        v = self.scv_value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise InvalidValueError(f"Lognormal: scv must be a finite number > 0, got {v!r}")

    @property
    def scv(self):
        return float(self.scv_value)


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on [m (1 - spread), m (1 + spread)], 0 <= spread <= 1;
    SCV = spread^2 / 3."""

    spread: float = 1.0
    name = "uniform"

    def __post_init__(self):
        s = self.spread
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not (0 <= s <= 1):
            raise InvalidValueError(f"Uniform: spread must be in [0, 1], got {s!r}")

    @property
    def scv(self):
        return self.spread**2 / 3.0


def _shown(x, limit: int = 60) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True)
class Empirical(Distribution):
    """Resampling of observed times, rescaled so that their mean equals the
    model's mean (the samples give the shape)."""

    samples: tuple = ()
    name = "empirical"

    def __post_init__(self):
        bad = InvalidValueError(
            "Empirical: samples must be a flat sequence of numbers (the observed times), got "
            f"{_shown(self.samples)}")
        if isinstance(self.samples, (str, bytes, Mapping)):
            raise bad
        try:
            arr = np.asarray(self.samples, dtype=float).ravel()
        except (TypeError, ValueError, OverflowError):
            raise bad from None
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0) or arr.max() <= 0:
            raise InvalidValueError(
                "Empirical: samples must be a non-empty set of finite non-negative numbers "
                "with a positive mean"
            )
        object.__setattr__(self, "samples", tuple(float(x) for x in arr))

    @property
    def unit_samples(self) -> np.ndarray:
        """The samples divided by their mean (mean 1: the shape).  Samples
        whose sum or square leaves the floating-point range (1e200, or
        subnormal ones) are first divided by their largest, which changes
        no ratio, so the shape stays finite."""
        arr = np.asarray(self.samples, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            m = arr.mean()
            if np.isfinite(m) and m > 0 and np.isfinite(1.0 / m):
                return arr / m
            a = arr / arr.max()
            return a / a.mean()

    @property
    def scv(self):
        arr = np.asarray(self.samples)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            v = float(arr.var() / arr.mean() ** 2)
        if math.isfinite(v):
            return v
        # the same ratio on samples scaled into range (scv is scale-free)
        a = self.unit_samples
        return float(a.var())


@dataclass(frozen=True)
class Pareto(Distribution):
    """Pareto (type I) of shape ``alpha`` > 2 (a finite variance): P(X > x)
    = (x_m / x)^alpha for x >= x_m, scaled so that its mean alpha x_m /
    (alpha - 1) is the model's mean; SCV = 1 / (alpha (alpha - 2)) (Law
    2015, sec. 6.2.2; Johnson, Kotz & Balakrishnan, *Continuous Univariate
    Distributions* 1, 2nd ed. 1994, ch. 20).  A power-law tail: its k-th
    moment is infinite for k >= alpha, so with alpha <= 4 an FCFS queue's
    waiting times have no finite variance constant and no simulation run
    gives a trustworthy interval there (the simulator says so)."""

    alpha: float = 3.0
    name = "pareto"

    def __post_init__(self):
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) \
                or a <= 2:
            raise InvalidValueError(
                f"Pareto: alpha must be a finite number > 2 (a finite variance), got {a!r}")

    @property
    def scv(self):
        a = float(self.alpha)
        return 1.0 / (a * (a - 2.0))


def is_exponential(dist) -> bool:
    """Whether a service-time shape is the exponential: None (the default),
    :class:`Exponential`, an Erlang of one phase or a hyperexponential of
    SCV 1.  Product form needs it at an FCFS queue (BCMP type 1; Baskett,
    Chandy, Muntz & Palacios 1975); PS and delay stations are insensitive
    to the shape."""
    if dist is None or isinstance(dist, Exponential):
        return True
    if isinstance(dist, Erlang):
        return int(dist.k) == 1
    if isinstance(dist, HyperExponential):
        return float(dist.scv) == 1.0
    return False


def unit_moments(dist, orders=(2, 4)):
    """Raw moments E[S^j] of a time shape scaled to mean 1 (so E[S^j] /
    E[S]^j of the shape at any mean), one per order: a tuple of floats
    (``inf`` for a moment that does not exist), or None for a shape this
    function does not know.  ``None`` is the exponential.

    Exponential: j!.  Erlang-k: Gamma(k + j) / (Gamma(k) k^j).
    Hyperexponential (branch i with probability p_i and rate mu_i at mean
    1, :meth:`HyperExponential.branches`; the balanced form has mu_i = 2
    p_i): sum_i p_i j! mu_i^-j.  Lognormal of SCV c^2:
    (1 + c^2)^(j (j - 1) / 2).  Uniform on [1 - a, 1 + a]:
    ((1 + a)^(j+1) - (1 - a)^(j+1)) / (2 a (j + 1)).  Pareto of shape
    alpha and scale x_m = (alpha - 1) / alpha: alpha x_m^j / (alpha - j)
    for j < alpha, else infinite.  Empirical: the moments of the samples
    divided by their mean.  (Law 2015, sec. 6.2; Johnson, Kotz &
    Balakrishnan, *Continuous Univariate Distributions* 1, 2nd ed. 1994,
    ch. 14, 17, 20, 26.)
    """
    out = []
    for j in orders:
        if dist is None or isinstance(dist, Exponential):
            m = float(math.factorial(j))
        elif isinstance(dist, Deterministic):
            m = 1.0
        elif isinstance(dist, Erlang):
            k = int(dist.k)
            m = math.exp(math.lgamma(k + j) - math.lgamma(k) - j * math.log(k))
        elif isinstance(dist, HyperExponential):
            ps, rs = dist.branches()
            m = sum(p * math.factorial(j) * r ** -j for p, r in zip(ps, rs))
        elif isinstance(dist, Lognormal):
            m = (1.0 + float(dist.scv)) ** (j * (j - 1) / 2.0)
        elif isinstance(dist, Uniform):
            a = float(dist.spread)
            m = 1.0 if a == 0 else ((1 + a) ** (j + 1) - (1 - a) ** (j + 1)) / (2 * a * (j + 1))
        elif isinstance(dist, Pareto):
            al = float(dist.alpha)
            m = al * ((al - 1.0) / al) ** j / (al - j) if j < al else math.inf
        elif isinstance(dist, Empirical):
            m = float(np.mean(dist.unit_samples ** j))
        else:
            return None
        out.append(m)
    return tuple(out)
