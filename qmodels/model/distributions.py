"""Shapes of service and inter-arrival time distributions.

The *mean* always comes from the model (a station's service time, a class's
arrival rate); a distribution object gives only the shape, described by its
squared coefficient of variation (SCV, c^2 = Var/mean^2).  Analytic solvers
use the mean (product-form) or the SCV (M/G/1, G/G/1 approximations); the
simulator draws from the full distribution.

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


@dataclass(frozen=True)
class HyperExponential(Distribution):
    """Two-phase hyperexponential with balanced means for a given SCV >= 1
    (Whitt 1982; Law 2015, sec. 6.2.5): p1 = (1 + sqrt((c2-1)/(c2+1)))/2,
    rates 2 p_i / m."""

    scv_value: float = 4.0
    name = "hyperexponential"

    def __post_init__(self):
        v = self.scv_value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 1:
            raise InvalidValueError(
                f"HyperExponential: scv must be a finite number >= 1, got {v!r}"
            )

    @property
    def scv(self):
        return float(self.scv_value)


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

    Exponential: j!.  Erlang-k: Gamma(k + j) / (Gamma(k) k^j).  Balanced
    two-phase hyperexponential (branch i with probability p_i and mean
    1 / (2 p_i)): sum_i p_i j! (2 p_i)^-j.  Lognormal of SCV c^2:
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
            c2 = float(dist.scv)
            p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
            m = sum(p * math.factorial(j) * (2.0 * p) ** -j for p in (p1, 1.0 - p1) if p > 0)
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
