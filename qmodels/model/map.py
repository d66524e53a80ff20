"""Markovian arrival processes (MAP): correlated, non-renewal arrival streams.

A MAP of ``n`` phases (Neuts, "A versatile Markovian point process", J.
Appl. Prob. 16, 1979; Lucantoni, "New results on the single server queue
with a batch Markovian arrival process", Stochastic Models 7(1), 1991) is
a continuous-time Markov chain on the phases with generator D = D0 + D1:
``D1[i, j]`` is the rate of the transitions i -> j that carry an arrival,
``D0[i, j]`` (i != j) that of the hidden ones, and ``D0[i, i]`` = -(total
rate out of i).  After an arrival the next inter-arrival time starts in the
phase D1's row chose, so successive inter-arrival times may be correlated.

Special cases: a Poisson stream (n = 1); a phase-type renewal process with
representation (alpha, T) is D0 = T, D1 = t alpha with t = -T 1 (Neuts,
*Matrix-Geometric Solutions in Stochastic Models*, 1981, ch. 2;
:meth:`MAP.from_renewal`); a Markov-modulated Poisson process (MMPP) has a
diagonal D1 (Fischer & Meier-Hellstern, "The Markov-modulated Poisson
process (MMPP) cookbook", Performance Evaluation 18(2), 1993;
:meth:`MAP.mmpp2`).

Unlike a :class:`~qmodels.model.distributions.Distribution` shape, a MAP
fixes its own time scale: its rate is lambda = pi D1 1, pi the stationary
vector of D (pi D = 0, pi 1 = 1), and an open class given
``interarrival=MAP(...)`` takes that rate (:class:`~qmodels.model.network.Open`
refuses another one by name).  It is not a ``Distribution``: a method that
reads only an inter-arrival SCV would treat the stream as renewal, so each
method says whether it takes a MAP.

The descriptors (:attr:`MAP.scv`, :meth:`MAP.lag_correlation`,
:attr:`MAP.idc`) follow Neuts 1979/1981 and Heffes & Lucantoni, "A
Markov modulated characterization of packetized voice and data traffic
and related statistical multiplexer performance", IEEE JSAC 4(6), 1986;
also Buchholz, Kriege & Felko, *Input Modeling with Phase-Type
Distributions and Markov Models*, Springer 2014, sec. 2.3 (MAPs and their
moments, joint moments and autocorrelations), and Casale, Zhang & Smirni,
"KPC-Toolbox: simple yet effective trace fitting using Markovian arrival
processes", QEST 2008 (the asymptotic index of dispersion).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import InvalidValueError

__all__ = ["MAP"]

#: relative tolerance on the rows of D0 + D1 summing to zero (as
#: ROUTING_TOLERANCE for routing rows)
ROW_TOLERANCE = 1e-9

#: the most phases a MAP may have (the exact chain multiplies its states by
#: this; a larger one is refused by name)
MAX_PHASES = 64


def _matrix(x, what: str, who: str) -> tuple:
    """``x`` as a square tuple of tuples of finite floats, or an
    :class:`InvalidValueError` naming ``what``."""
    bad = InvalidValueError(f"{who}: {what} must be a square matrix of finite numbers (a list "
                            f"of rows), got {_shown(x)}")
    if isinstance(x, (str, bytes, dict)):
        raise bad
    try:
        rows = [list(r) for r in x]
    except TypeError:
        raise bad from None
    if any(isinstance(v, (bool, str, bytes)) for r in rows for v in r):
        raise bad
    try:
        out = tuple(tuple(float(v) for v in r) for r in rows)
    except (TypeError, ValueError, OverflowError):
        raise bad from None
    n = len(out)
    if n == 0 or any(len(r) != n for r in out):
        raise InvalidValueError(
            f"{who}: {what} must be a square matrix (n rows of n numbers), got rows of lengths "
            f"{[len(r) for r in out]}")
    if not all(math.isfinite(v) for r in out for v in r):
        raise bad
    return out


def _shown(x, limit: int = 80) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True, init=False)
class MAP:
    """A Markovian arrival process given by its two rate matrices.

    ``MAP(D0, D1)``: ``D1[i][j]`` >= 0 the rate of arrivals that
    take the phase from i to j, ``D0[i][j]`` >= 0 (i != j) that of hidden
    phase changes, ``D0[i][i]`` < 0; every row of D0 + D1 sums to 0
    (relative tolerance :data:`ROW_TOLERANCE`), D0 + D1 is irreducible and
    D1 has a positive entry.  Each violation raises
    :class:`~qmodels.errors.InvalidValueError` naming the entry.

    Use it as an open class's stream: ``qm.Open("web",
    interarrival=qm.MAP.mmpp2(0.1, 0.3, 5.0, 0.5), route=[...])`` (the
    class's arrival rate is then :attr:`rate`).
    """

    D0: tuple
    D1: tuple

    name: ClassVar[str] = "map"

    def __init__(self, D0=None, D1=None, **unknown):
        if unknown:
            raise InvalidValueError(
                f"MAP has no parameter {next(iter(unknown))!r}: it takes D0 and D1")
        who = "MAP"
        if D0 is None or D1 is None:
            raise InvalidValueError("MAP: give D0 and D1 (the hidden and the arrival rates)")
        d0 = _matrix(D0, "D0", who)
        d1 = _matrix(D1, "D1", who)
        n = len(d0)
        if len(d1) != n:
            raise InvalidValueError(
                f"{who}: D0 is {n}x{n} but D1 is {len(d1)}x{len(d1)}; both are n x n, n the "
                "number of phases")
        if n > MAX_PHASES:
            raise InvalidValueError(
                f"{who}: {n} phases, more than the {MAX_PHASES} a MAP may have here")
        for i in range(n):
            for j in range(n):
                if d1[i][j] < 0:
                    raise InvalidValueError(
                        f"{who}: D1[{i}][{j}] = {d1[i][j]!r} is negative (D1 holds the rates "
                        "of transitions with an arrival, all >= 0)")
                if i != j and d0[i][j] < 0:
                    raise InvalidValueError(
                        f"{who}: D0[{i}][{j}] = {d0[i][j]!r} is negative (off the diagonal D0 "
                        "holds rates of hidden transitions, all >= 0)")
            if not d0[i][i] < 0:
                raise InvalidValueError(
                    f"{who}: D0[{i}][{i}] = {d0[i][i]!r} must be negative (minus the total "
                    f"rate out of phase {i})")
            out = -d0[i][i]
            total = sum(d0[i]) + sum(d1[i])
            if abs(total) > ROW_TOLERANCE * out:
                raise InvalidValueError(
                    f"{who}: row {i} of D0 + D1 sums to {total:.12g}, not 0 (D0[{i}][{i}] must "
                    f"be minus the sum of the row's other rates, {out - total:.12g}; relative "
                    f"tolerance {ROW_TOLERANCE:g})")
        if not any(v > 0 for r in d1 for v in r):
            raise InvalidValueError(f"{who}: D1 has no positive rate (the stream never "
                                    "arrives)")
        # irreducible: every phase reaches every other along positive rates
        adj = [[j for j in range(n) if j != i and (d0[i][j] > 0 or d1[i][j] > 0)]
               for i in range(n)]
        for start, graph in (("forward", adj), ("backward", None)):
            if graph is None:
                graph = [[i for i in range(n) if j in adj[i]] for j in range(n)]
            seen = {0}
            todo = [0]
            while todo:
                for j in graph[todo.pop()]:
                    if j not in seen:
                        seen.add(j)
                        todo.append(j)
            if len(seen) != n:
                missing = sorted(set(range(n)) - seen)
                raise InvalidValueError(
                    f"{who}: D0 + D1 is not irreducible: phase(s) {missing} "
                    f"{'cannot be reached from' if start == 'forward' else 'cannot reach'} "
                    "phase 0 (a MAP's phase process must be one communicating class)")
        object.__setattr__(self, "D0", d0)
        object.__setattr__(self, "D1", d1)

    # -- constructors --------------------------------------------------------
    @classmethod
    def mmpp2(cls, r1, r2, lam1, lam2) -> MAP:
        """The two-state Markov-modulated Poisson process: the environment
        leaves state 1 at rate ``r1`` and state 2 at rate ``r2``; in state
        i arrivals are Poisson of rate ``lam_i``.  D0 = [[-r1 - lam1, r1],
        [r2, -r2 - lam2]], D1 = diag(lam1, lam2) (Fischer &
        Meier-Hellstern 1993, sec. 2; Heffes & Lucantoni 1986).  Its rate
        is (lam1 r2 + lam2 r1) / (r1 + r2)."""
        vals = {}
        for what, v, positive in (("r1", r1, True), ("r2", r2, True), ("lam1", lam1, False),
                                  ("lam2", lam2, False)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(v) or v < 0 or (positive and v == 0):
                kind = "positive" if positive else "non-negative"
                raise InvalidValueError(
                    f"MAP.mmpp2: {what} must be a finite {kind} number, got {v!r}")
            vals[what] = float(v)
        r1, r2, lam1, lam2 = vals["r1"], vals["r2"], vals["lam1"], vals["lam2"]
        return cls([[-r1 - lam1, r1], [r2, -r2 - lam2]], [[lam1, 0.0], [0.0, lam2]])

    @classmethod
    def from_renewal(cls, dist=None, rate: float = 1.0) -> MAP:
        """The renewal process of phase-type inter-arrival times of shape
        ``dist`` and rate ``rate`` (mean 1/rate), as a MAP: D0 = T, D1 = t
        alpha, t = -T 1 (Neuts 1981, ch. 2; Buchholz et al. 2014, sec.
        2.3).  ``dist``: None or :class:`Exponential` (Poisson, one
        phase), :class:`Erlang` (k phases in series, each of rate k rate),
        :class:`HyperExponential` (its branches, started with their
        probabilities: :meth:`HyperExponential.branches` at mean 1/rate).
        Other shapes are not phase-type and are refused by name."""
        from .distributions import Erlang, Exponential, HyperExponential

        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer, np.floating)) \
                or not math.isfinite(rate) or rate <= 0:
            raise InvalidValueError(
                f"MAP.from_renewal: rate must be a finite positive number, got {rate!r}")
        lam = float(rate)
        if dist is None or isinstance(dist, Exponential):
            return cls([[-lam]], [[lam]])
        if isinstance(dist, Erlang):
            k = int(dist.k)
            mu = k * lam
            d0 = [[0.0] * k for _ in range(k)]
            d1 = [[0.0] * k for _ in range(k)]
            for i in range(k):
                d0[i][i] = -mu
                if i + 1 < k:
                    d0[i][i + 1] = mu
            d1[k - 1][0] = mu
            return cls(d0, d1)
        if isinstance(dist, HyperExponential):
            ps, rs = dist.branches()
            mus = [r * lam for r in rs]
            n = len(ps)
            d0 = [[(-mus[i] if i == j else 0.0) for j in range(n)] for i in range(n)]
            d1 = [[mus[i] * ps[j] for j in range(n)] for i in range(n)]
            return cls(d0, d1)
        raise InvalidValueError(
            f"MAP.from_renewal: {type(dist).__name__} is not a phase-type shape (give "
            "Exponential, Erlang or HyperExponential)")

    # -- matrices ------------------------------------------------------------
    @property
    def d0(self) -> np.ndarray:
        """D0 as a float array (a copy)."""
        return np.array(self.D0, dtype=float)

    @property
    def d1(self) -> np.ndarray:
        """D1 as a float array (a copy)."""
        return np.array(self.D1, dtype=float)

    @property
    def phases(self) -> int:
        """The number of phases n."""
        return len(self.D0)

    @property
    def is_mmpp(self) -> bool:
        """Whether D1 is diagonal (a Markov-modulated Poisson process)."""
        return all(v == 0 for i, r in enumerate(self.D1) for j, v in enumerate(r) if i != j)

    @property
    def stationary(self) -> np.ndarray:
        """pi: the stationary vector of the phase process, pi (D0 + D1) = 0,
        pi 1 = 1 (Neuts 1979; Lucantoni 1991, sec. 2)."""
        D = self.d0 + self.d1
        n = D.shape[0]
        A = np.vstack([D.T, np.ones(n)])
        b = np.zeros(n + 1)
        b[-1] = 1.0
        pi = np.linalg.lstsq(A, b, rcond=None)[0]
        return pi

    @property
    def rate(self) -> float:
        """lambda = pi D1 1, the long-run arrival rate (the fundamental
        rate; Neuts 1979; Lucantoni 1991, eq. (2))."""
        return float(self.stationary @ self.d1.sum(axis=1))

    @property
    def arrival_phases(self) -> np.ndarray:
        """phi = pi D1 / lambda: the phase just after an arrival in the
        stationary interval sequence, the stationary vector of P =
        (-D0)^-1 D1, the embedded chain at arrivals (Buchholz et al. 2014,
        sec. 2.3; Lucantoni 1991)."""
        v = self.stationary @ self.d1
        return v / v.sum()

    def moment(self, k: int = 1) -> float:
        """E[X^k] of the stationary inter-arrival time X: k! phi (-D0)^-k 1
        (a phase-type distribution with initial vector phi and
        sub-generator D0; Neuts 1981, ch. 2; Buchholz et al. 2014, sec.
        2.3)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidValueError(f"MAP.moment: k must be an integer >= 1, got {k!r}")
        M = np.linalg.inv(-self.d0)
        v = self.arrival_phases
        for _ in range(int(k)):
            v = v @ M
        return float(math.factorial(int(k)) * v.sum())

    @property
    def mean(self) -> float:
        """E[X] = phi (-D0)^-1 1 = 1 / lambda."""
        return self.moment(1)

    @property
    def scv(self) -> float:
        """The squared coefficient of variation of the stationary
        inter-arrival time, E[X^2] / E[X]^2 - 1 (its marginal alone: the
        correlation between intervals is :meth:`lag_correlation`)."""
        m1 = self.moment(1)
        return self.moment(2) / (m1 * m1) - 1.0

    def lag_correlation(self, k: int = 1) -> float:
        """rho_k, the correlation of inter-arrival times k apart in the
        stationary interval sequence: (phi M P^k M 1 - (phi M 1)^2) /
        (2 phi M^2 1 - (phi M 1)^2), M = (-D0)^-1, P = M D1 (Neuts 1979;
        Buchholz et al. 2014, sec. 2.3, the joint moments E[X_0 X_k] =
        phi M P^k M 1).  Zero for every k for a renewal process."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidValueError(
                f"MAP.lag_correlation: k must be an integer >= 1, got {k!r}")
        M = np.linalg.inv(-self.d0)
        P = M @ self.d1
        phi = self.arrival_phases
        one = np.ones(self.phases)
        m1 = float(phi @ M @ one)
        var = 2.0 * float(phi @ M @ M @ one) - m1 * m1
        joint = float(phi @ M @ np.linalg.matrix_power(P, int(k)) @ M @ one)
        return (joint - m1 * m1) / var

    @property
    def idc(self) -> float:
        """The asymptotic index of dispersion for counts, I = lim_{t->inf}
        Var N(t) / E N(t), N(t) the arrivals in (0, t]:

            I = 1 + 2 (lambda^2 - pi D1 (D + 1 pi)^-1 D1 1) / lambda,

        D = D0 + D1 (the linear growth rate of Var N(t); Neuts 1979;
        Heffes & Lucantoni 1986 for the MMPP; Buchholz et al. 2014, sec.
        2.3).  It equals scv (1 + 2 sum_k rho_k), the limit of the index of
        dispersion for intervals (Casale et al. 2008); 1 for a Poisson
        stream, the interval SCV for a renewal stream, and for the MMPP2
        1 + 2 (lam1 - lam2)^2 r1 r2 / ((r1 + r2)^2 (lam1 r2 +
        lam2 r1)) (Fischer & Meier-Hellstern 1993)."""
        D0, D1 = self.d0, self.d1
        D = D0 + D1
        pi = self.stationary
        n = D.shape[0]
        one = np.ones(n)
        lam = float(pi @ D1 @ one)
        Z = np.linalg.inv(D + np.outer(one, pi))
        return 1.0 + 2.0 * (lam * lam - float(pi @ D1 @ Z @ D1 @ one)) / lam

    def __repr__(self):
        return f"MAP(D0={[list(r) for r in self.D0]}, D1={[list(r) for r in self.D1]})"

    def describe(self) -> str:
        """One line: phases, rate, SCV, lag-1 correlation, index of
        dispersion."""
        return (f"MAP of {self.phases} phase(s): rate {self.rate:.6g}, interval SCV "
                f"{self.scv:.4g}, lag-1 correlation {self.lag_correlation(1):.4g}, index of "
                f"dispersion {self.idc:.4g}")
