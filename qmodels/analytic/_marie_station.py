"""One station of Marie's method in isolation: its service as a phase-type
distribution, and the Markov chain of the station fed by state-dependent
Poisson arrivals (:mod:`qmodels.analytic.marie`).

Phase-type service
------------------
A service time of mean 1 is represented by a phase-type (PH) distribution
(alpha, T): the job starts in phase i with probability alpha_i, moves from
phase i to phase j at rate T_ij and completes at rate t_i = -sum_j T_ij
(M. F. Neuts, *Matrix-Geometric Solutions in Stochastic Models*, 1981,
ch. 2; Bolch, Greiner, de Meer & Trivedi, *Queueing Networks and Markov
Chains*, 2nd ed. 2006, sec. 1.3.1, the Coxian and hyperexponential
phase-type forms).  :func:`phase_type` gives, per shape:

* exponential: one phase (exact);
* Erlang-k: k phases of rate k (exact; at most :func:`max_phases`);
* hyperexponential of SCV c2 (the balanced-means H2 the simulator draws,
  Whitt 1982): two parallel phases, p_1 = (1 + sqrt((c2 - 1)/(c2 + 1)))/2,
  rates 2 p_i (exact);
* deterministic: Erlang-k with the most phases the station's budget allows
  (at most :data:`DETERMINISTIC_PHASES` = 32).  Accuracy rule: the
  Erlang-k has SCV 1/k instead of 0; in an M/E_k/1 queue the mean wait is
  (1 + 1/k)/2 rho S/(1 - rho) against rho S / (2 (1 - rho)) for M/D/1
  (Pollaczek-Khinchine; Kleinrock, *Queueing Systems* 1, 1975, eq. 5.72),
  a relative excess of 1/k in the wait (3.1 % at k = 32), which the note
  states;
* any other shape (lognormal, uniform, empirical, Pareto) by its first two
  moments: for c2 >= 1/2 the Coxian-2 of R. Marie, "Calculating
  equilibrium probabilities for lambda(n)/C_k/1/N queues", ACM SIGMETRICS
  1980 (also Bolch et al. 2006, sec. 1.3.1): mu_1 = 2, a = 1/(2 c2),
  mu_2 = 1/c2 (phase 1, then phase 2 with probability a), whose mean is
  1/2 + a c2 = 1 and whose SCV is c2; for c2 < 1/2 (beyond a Coxian-2's
  reach, which needs c2 >= 1/2) the mixed Erlang E_{k-1,k} of H. C. Tijms,
  *Stochastic Models: an Algorithmic Approach*, Wiley 1994, sec. 1.3.1
  (eq. 1.3.3): k = ceil(1/c2), Erlang-(k-1) with probability
  p = (k c2 - sqrt(k (1 + c2) - k^2 c2)) / (1 + c2), else Erlang-k, every
  phase of rate k - p.  Only the first two moments are matched; the note
  says so.  Where the station's phase budget holds them, the exact CTMC's
  closer fits come first (:func:`_closer`): a lognormal of SCV > 1 as the
  phase-type closest to it in Kullback-Leibler divergence with its mean
  and SCV (an H3, or a mixture of two Erlang-2 at SCV up to 1.5),
  a shape of SCV < 1 as the acyclic phase-type matching its first three
  moments (Bobbio, Horvath & Telek 2005).  In the exact CTMC of eight
  closed networks with a lognormal queue of SCV 1.5-8 (``python -m
  validation.lognormal_fit``) the balanced-means H2 missed the
  simulator's X by up to 1.9 %, the three-moment H2 by up to 6.0 %, the
  H3 by 1.0 %; Marie's Coxian-2 was not in that comparison.

The station's chain
-------------------
Station i with c servers and FCFS service, fed by Poisson arrivals of rate
lambda(n) when it holds n jobs (the flow-equivalent of the rest of the
network), is a quasi-birth-death process on levels n = 0..N, the phase of
each job in service in a level (for c servers, how many busy servers are
in each phase: a multiset).  This is the lambda(n)/C_k/c/N queue of
R. Marie, "An approximate analytical method for general queueing
networks", IEEE Trans. Software Eng. SE-5(5), 1979, and Marie 1980 (Bolch
et al. 2006, sec. 10.1.4, Marie's method).  :class:`SingleClassChain`
solves it by linear level reduction (G. Latouche & V. Ramaswami,
*Introduction to Matrix Analytic Methods in Stochastic Modeling*, SIAM
1999, sec. 10.2; Bolch et al. 2006, sec. 3.2, block-tridiagonal
generators): with A0(n), A1(n), A2(n) the blocks up, within and down from
level n,

    S_N = -A1(N),   R_{n-1} = A0(n-1) S_n^{-1},
    S_{n-1} = -A1(n-1) - R_{n-1} A2(n),
    pi_n = pi_{n-1} R_{n-1},

kept as the conditional phase distribution v_n = pi_n / |pi_n| and the log
of |pi_n| (so that a probability of 1e-400 is a number, not zero).

:class:`MultiClassChain` is the same station with several classes: the
state is the number of jobs of each class present, and the class and phase
of each job in service.  Which waiting job starts next is taken at random
among the waiting ones (random order of service among the waiting jobs, in
place of their order of arrival, which the state does not keep): in a
multi-class M/G/1 queue a class-blind, non-preemptive, work-conserving
order gives every class the same mean wait as FCFS (Kleinrock's
conservation law; Kleinrock 1976, *Queueing Systems* 2, sec. 3.4), so the
substitution keeps the mean figures of a Poisson-fed queue; here it is an
approximation (the arrivals are state dependent).  With one class it is
FCFS exactly.  It is solved by sparse LU (SuperLU through
:func:`scipy.sparse.linalg.spsolve`).

Renewal arrivals (:meth:`SingleClassChain.solve_renewal`,
:class:`RenewalMultiClassChain`): the same chains with the phase of each
class's inter-arrival interval (a phase-type renewal process, its speed set
per level) in the state; the method and its sources are in the module
docstring of :mod:`qmodels.analytic.marie`, "Renewal arrivals".
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import ProblemTooLargeError
from ..model.distributions import Deterministic, Erlang, HyperExponential, is_exponential

__all__ = ["PhaseType", "phase_type", "max_phases", "SingleClassChain", "MultiClassChain",
           "DETERMINISTIC_PHASES", "MAX_CONFIGS", "CHAIN_FLOPS", "arrival_fit",
           "RenewalMultiClassChain"]

#: the most Erlang phases a deterministic service gets (accuracy rule in the
#: module docstring: SCV 1/32, a wait 3.1 % above M/D/1's in a Poisson-fed
#: queue)
DETERMINISTIC_PHASES = 32

#: the most phase configurations (multisets of busy servers' phases, times
#: classes) one level of a station's chain may have: bounds the phases of a
#: c-server station's fit
MAX_CONFIGS = 256

#: the most floating-point operations of one level reduction of a
#: one-class station's chain (about 0.1 s): bounds the phases of the fit
CHAIN_FLOPS = 3e8


class PhaseType:
    """A phase-type distribution of mean 1: ``alpha`` (m,), ``T`` (m, m);
    ``words`` says how it was obtained, ``exact`` whether it is the shape
    itself (not a moment fit)."""

    __slots__ = ("alpha", "T", "t", "words", "exact", "scv")

    def __init__(self, alpha, T, words: str, exact: bool):
        self.alpha = np.asarray(alpha, dtype=float)
        self.T = np.asarray(T, dtype=float)
        self.t = -self.T.sum(axis=1)
        self.words = words
        self.exact = exact
        m1 = float(self.alpha @ np.linalg.solve(-self.T, np.ones(len(self.alpha))))
        inv = np.linalg.inv(-self.T)
        m2 = 2.0 * float(self.alpha @ inv @ inv @ np.ones(len(self.alpha)))
        self.scv = m2 / (m1 * m1) - 1.0

    @property
    def phases(self) -> int:
        return len(self.alpha)


def _configs(servers: int, phases: int) -> int:
    """Multisets of ``servers`` busy servers over ``phases`` phases:
    C(servers + phases - 1, phases - 1)."""
    return math.comb(servers + phases - 1, phases - 1)


def max_phases(servers: int, classes: int = 1, levels: int = 1) -> int:
    """The most phases a station of ``servers`` servers visited by
    ``classes`` classes, whose chain has ``levels`` levels (population + 1),
    may give a service: the largest k (at least 2, at most
    :data:`DETERMINISTIC_PHASES`) whose configurations per level,
    C(c + k C - 1, k C - 1), stay within :data:`MAX_CONFIGS` and, with one
    class, whose level reduction (about 3 b^3 per level for b
    configurations) stays within :data:`CHAIN_FLOPS`."""
    c = max(1, min(int(servers), 10**6))
    k = 2
    while k < DETERMINISTIC_PHASES:
        b = _configs(c, (k + 1) * classes)
        if b > MAX_CONFIGS or (classes == 1 and 3.0 * levels * b**3 > CHAIN_FLOPS):
            break
        k += 1
    return k


def _erlang(k: int, words: str, exact: bool) -> PhaseType:
    T = np.diag(np.full(k, -float(k))) + np.diag(np.full(k - 1, float(k)), 1)
    a = np.zeros(k)
    a[0] = 1.0
    return PhaseType(a, T, words, exact)


def _h2(c2: float, words: str, exact: bool) -> PhaseType:
    """Balanced-means H2 of SCV c2 >= 1 (Whitt 1982)."""
    p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
    p = np.array([p1, 1.0 - p1])
    return PhaseType(p, np.diag(-2.0 * p), words, exact)


def _coxian2(c2: float) -> PhaseType:
    """Marie's (1980) Coxian-2 of mean 1 and SCV c2 >= 1/2."""
    a = 1.0 / (2.0 * c2)
    T = np.array([[-2.0, 2.0 * a], [0.0, -1.0 / c2]])
    return PhaseType([1.0, 0.0], T, f"Coxian-2 of the same mean and SCV {c2:.4g} (Marie 1980)",
                     False)


def _mixed_erlang(c2: float, kmax: int) -> PhaseType:
    """Tijms' (1994) E_{k-1,k} of mean 1 and SCV c2 < 1 (k = ceil(1/c2),
    at most ``kmax``: beyond, Erlang-kmax)."""
    k = int(math.ceil(1.0 / c2 - 1e-12))
    if k > kmax:
        return _erlang(kmax, f"Erlang-{kmax} (SCV {1.0 / kmax:.3g} in place of {c2:.4g}: "
                             "the station's phase budget)", False)
    if k <= 1:
        return _erlang(1, "exponential", True)
    p = (k * c2 - math.sqrt(max(k * (1.0 + c2) - k * k * c2, 0.0))) / (1.0 + c2)
    p = min(max(p, 0.0), 1.0)
    mu = k - p
    T = np.diag(np.full(k, -mu)) + np.diag(np.full(k - 1, mu), 1)
    T[k - 2, k - 1] = mu * (1.0 - p)
    a = np.zeros(k)
    a[0] = 1.0
    return PhaseType(a, T, f"mixed Erlang E_{k - 1},{k} of the same mean and SCV {c2:.4g} "
                           "(Tijms 1994)", False)


def phase_type(dist, kmax: int = DETERMINISTIC_PHASES) -> PhaseType:
    """The phase-type form of mean 1 of a service shape (module docstring),
    with at most ``kmax`` phases (:func:`max_phases`)."""
    if is_exponential(dist):
        return _erlang(1, "exponential", True)
    if isinstance(dist, Erlang):
        k = int(dist.k)
        if k <= kmax:
            return _erlang(k, f"Erlang-{k}", True)
        return _erlang(kmax, f"Erlang-{kmax} in place of Erlang-{k} (the station's phase "
                             "budget)", False)
    if isinstance(dist, HyperExponential):
        c2 = float(dist.scv)
        if dist.probs is not None:     # the given branches at mean 1
            ps, rs = dist.branches()
            return PhaseType(np.array(ps), np.diag(-np.array(rs)),
                             f"hyperexponential of {len(ps)} given branches (SCV {c2:.4g})",
                             True)
        return _h2(c2, f"balanced-means hyperexponential of SCV {c2:.4g}", True)
    if isinstance(dist, Deterministic):
        k = int(kmax)
        return _erlang(k, f"Erlang-{k} in place of deterministic (SCV {1.0 / k:.3g}; a "
                          f"Poisson-fed queue's wait {100.0 / k:.2g} % above M/D/1's)", False)
    c2 = float(dist.scv)
    if not math.isfinite(c2) or c2 <= 0.0:
        return _erlang(int(kmax), f"Erlang-{int(kmax)} in place of a shape of SCV {c2:g}",
                       False)
    better = _closer(dist, c2, int(kmax))
    if better is not None:
        return better
    if c2 >= 1.0:
        return _coxian2(c2)
    return _mixed_erlang(c2, kmax)


def _closer(dist, c2: float, kmax: int) -> PhaseType | None:
    """The exact CTMC's fits of a shape beyond its first two moments
    (:func:`qmodels.analytic.phase_type.closer_fit`: a lognormal of SCV > 1
    as its KL-closest H3 or mixture of two Erlang-2, a shape of SCV < 1 by three moments, Bobbio,
    Horvath & Telek 2005) where the station's phase budget ``kmax`` holds
    them, as a PhaseType of mean 1; None otherwise (the two-moment forms
    below)."""
    from .phase_type import closer_fit

    cox = closer_fit(dist, 1.0, kmax)
    if cox is None:
        return None
    alpha = np.zeros(cox.phases)
    alpha[0] = 1.0
    return PhaseType(alpha, cox.subgenerator(), cox.fit, False)


# ---------------------------------------------------------------------------
# one class: level reduction
# ---------------------------------------------------------------------------

def _multisets(b: int, m: int) -> list:
    """Count vectors of ``b`` busy servers over ``m`` phases."""
    out = []
    for combo in itertools.combinations_with_replacement(range(m), b):
        v = [0] * m
        for i in combo:
            v[i] += 1
        out.append(tuple(v))
    return out


class SingleClassChain:
    """The lambda(n)/PH/c/N queue of one class (module docstring), for a
    service of mean ``S`` (phase-type ``ph`` scaled by S), ``c`` servers and
    levels 0..N.  :meth:`solve` takes lambda(0..N-1) and returns log P(n)
    (n = 0..N, normalised) and the conditional completion rate nu(n)."""

    def __init__(self, ph: PhaseType, S: float, c: int, N: int):
        self.N = int(N)
        self.c = int(min(c, max(N, 1)))
        m = ph.phases
        alpha, T, t = ph.alpha, ph.T / S, ph.t / S
        top = min(self.c, self.N)
        cfg = [_multisets(b, m) for b in range(top + 1)]
        index = [{v: j for j, v in enumerate(level)} for level in cfg]
        self.local, self.free, self.up, self.rate = [], [], [], []
        for b in range(top + 1):
            nb = len(cfg[b])
            L = np.zeros((nb, nb))
            F = np.zeros((nb, len(cfg[b - 1]))) if b > 0 else np.zeros((1, 0))
            U = np.zeros((nb, len(cfg[b + 1]))) if b < top else None
            d = np.zeros(nb)
            for j, v in enumerate(cfg[b]):
                for i in range(m):
                    if not v[i]:
                        continue
                    L[j, j] += v[i] * T[i, i]
                    d[j] += v[i] * t[i]
                    for h in range(m):
                        if h != i and T[i, h] > 0:
                            w = list(v)
                            w[i] -= 1
                            w[h] += 1
                            L[j, index[b][tuple(w)]] += v[i] * T[i, h]
                    if b > 0:
                        w = list(v)
                        w[i] -= 1
                        F[j, index[b - 1][tuple(w)]] += v[i] * t[i]
                if U is not None:
                    for h in range(m):
                        if alpha[h] > 0:
                            w = list(v)
                            w[h] += 1
                            U[j, index[b + 1][tuple(w)]] += alpha[h]
            self.local.append(L)
            self.free.append(F)
            self.up.append(U)
            self.rate.append(d)
        # a completion while jobs wait: the next one starts in phase h
        full = cfg[top]
        B = np.zeros((len(full), len(full)))
        for j, v in enumerate(full):
            for i in range(m):
                if v[i] and t[i] > 0:
                    for h in range(m):
                        if alpha[h] > 0:
                            w = list(v)
                            w[i] -= 1
                            w[h] += 1
                            B[j, index[top][tuple(w)]] += v[i] * t[i] * alpha[h]
        self.busy = B
        self.width = len(full)

    @staticmethod
    def work(ph: PhaseType, c: int, N: int) -> float:
        """Floating-point operations of one :meth:`solve` (about)."""
        b = _configs(max(1, min(int(c), max(int(N), 1))), ph.phases)
        return float(N + 1) * (3.0 * b**3 + 4.0 * b * b)

    def _level(self, n: int) -> int:
        return min(n, self.c)

    def _down(self, n: int):
        """A2(n): level n to n - 1."""
        return self.free[n] if n <= self.c else self.busy

    def solve(self, lam):
        """(log P(n), nu(n)) for n = 0..N given arrival rates ``lam[n]``,
        n = 0..N-1 (level reduction, module docstring)."""
        N = self.N
        lam = np.asarray(lam, dtype=float)
        R = [None] * N
        b = self._level(N)
        S = -self.local[b]
        for n in range(N, 0, -1):
            lo = self._level(n - 1)
            up = self.up[lo] * lam[n - 1] if n - 1 < self.c else None
            # R_{n-1} = A0(n-1) S_n^{-1}
            if up is None:
                Rn = lam[n - 1] * np.linalg.inv(S)
            else:
                Rn = np.linalg.solve(S.T, up.T).T
            R[n - 1] = Rn
            if n - 1 >= 1:
                S = lam[n - 1] * np.eye(len(self.local[lo])) - self.local[lo] \
                    - Rn @ self._down(n)
        logp = np.zeros(N + 1)
        nu = np.zeros(N + 1)
        v = np.ones(1)
        dead = False
        for n in range(1, N + 1):
            if dead:
                logp[n] = -np.inf
                nu[n] = nu[n - 1]
                continue
            w = v @ R[n - 1]
            r = float(w.sum())
            if not (r > 0 and math.isfinite(r)):
                dead = True
                logp[n] = -np.inf
                nu[n] = nu[n - 1] if n > 1 else float(self.rate[1].mean())
                continue
            v = w / r
            logp[n] = logp[n - 1] + math.log(r)
            nu[n] = float(v @ self.rate[self._level(n)])
        top = logp.max()
        logp -= top + math.log(np.exp(logp - top).sum())
        return logp, nu

    def solve_renewal(self, lam, arr: PhaseType, sweeps: int = 50, tol: float = 1e-10):
        """(log P(n), nu(n)) of the chain with renewal arrivals whose
        conditional arrival rate in each level n, r(n) E[t_a | n] (the
        exit rate of the arrival phase given the level), is ``lam[n]``:
        the speeds r(n) found by the fixed point r <- r lam / (r E[t_a | n])
        (module docstring of :mod:`qmodels.analytic.marie`)."""
        lam = np.asarray(lam, dtype=float)
        ok = lam[:-1] > 0
        target = np.log(np.where(ok, lam[:-1], 1.0))
        # warm start: the last call's speeds relative to its rates (the
        # outer iteration calls again with rates that change little)
        x = target + getattr(self, "_warm", 0.0)
        prev = None
        for _ in range(max(1, int(sweeps))):
            r = np.concatenate([np.where(ok, np.exp(x), 0.0), [0.0]])
            logp, nu, eff = self._renewal(r, arr)
            if np.isnan(logp).any() or np.isnan(nu).any() or np.isnan(eff).any() \
                    or np.isposinf(logp).any() or not np.isfinite(logp[0]):
                raise np.linalg.LinAlgError("the renewal chain's levels did not solve")
            with np.errstate(divide="ignore"):
                f = np.where(ok & (eff[:-1] > 0), np.log(np.maximum(eff[:-1], 1e-300)) - target,
                             0.0)
            if float(np.abs(f).max(initial=0.0)) <= tol:
                break
            self._warm = np.where(ok, x - target, 0.0)
            x, prev = _secant_step(x, f, prev, target)
        return logp, nu

    def _renewal(self, lam, arr: PhaseType):
        """(log P(n), nu(n)) as :meth:`solve`, the arrivals a renewal
        process of phase-type inter-arrival times ``arr`` (mean 1) sped up
        to rate ``lam[n]`` in level n; at level N (no job outside) the
        arrival phase is void and restarts from ``arr.alpha`` at the next
        departure.  Linear level reduction on the larger blocks (module
        docstring), level 0 by its null vector."""
        N = self.N
        lam = np.asarray(lam, dtype=float)
        key = id(arr)
        if getattr(self, "_rkey", None) != key:
            self._rblocks = _renewal_blocks(self, arr)
            self._rkey = key
        blocks = self._rblocks

        def within(n):
            (Ak, Lk), _u, _d, _nu = blocks[n]
            return Lk if Ak is None else lam[n] * Ak + Lk

        R = [None] * N
        S = within(N)
        for n in range(N, 0, -1):
            up = lam[n - 1] * blocks[n - 1][1]
            # R_{n-1} = A0(n-1) (-S_n)^{-1}
            Rn = np.linalg.solve(-S.T, up.T).T
            R[n - 1] = Rn
            S = within(n - 1) + Rn @ blocks[n][2]
        # level 0: v S_0 = 0, v >= 0
        m = S.shape[0]
        if m == 1:
            v = np.ones(1)
        else:
            M = S.T.copy()
            M[-1, :] = 1.0
            rhs = np.zeros(m)
            rhs[-1] = 1.0
            v = np.maximum(np.linalg.solve(M, rhs), 0.0)
            v /= v.sum()
        logp = np.zeros(N + 1)
        nu = np.zeros(N + 1)
        eff = np.zeros(N + 1)
        exit_ = [np.kron(arr.t, np.ones(len(blocks[n][3]) // len(arr.t))) if n < N else None
                 for n in range(N + 1)]
        eff[0] = lam[0] * float(v @ exit_[0]) if N > 0 else 0.0
        for n in range(1, N + 1):
            w = np.maximum(v @ R[n - 1], 0.0)
            r = float(w.sum())
            if not (r > 0 and math.isfinite(r)):
                logp[n:] = -np.inf
                nu[n:] = nu[n - 1] if n > 1 else float(self.rate[1].mean())
                break
            v = w / r
            logp[n] = logp[n - 1] + math.log(r)
            nu[n] = float(v @ blocks[n][3])
            if n < N:
                eff[n] = lam[n] * float(v @ exit_[n])
        top = logp.max()
        logp -= top + math.log(np.exp(logp - top).sum())
        return logp, nu, eff


# ---------------------------------------------------------------------------
# several classes: sparse chain on the population lattice
# ---------------------------------------------------------------------------

class MultiClassChain:
    """The multi-class station of the module docstring: ``phs[d]`` the
    phase-type of class d (mean 1), ``S[d]`` its mean service time (0: the
    class never comes: its count stays 0), ``c`` servers, the lattice of
    per-class counts 0..N_d (``dims`` = N_d + 1, C order).  :meth:`solve`
    takes the arrival rates lambda_d(n) on the lattice, (C, *dims), and
    returns log P(n) on the lattice."""

    def __init__(self, phs, S, c: int, dims, max_states: int):
        self.dims = tuple(int(x) for x in dims)
        C = len(self.dims)
        self.C = C
        types = [(d, i) for d in range(C) if S[d] > 0 for i in range(phs[d].phases)]
        rates = {d: (phs[d].alpha, phs[d].T / S[d], phs[d].t / S[d])
                 for d in range(C) if S[d] > 0}
        total = int(sum(x - 1 for x in self.dims))
        c = int(min(c, max(total, 1)))
        self.c = c
        states, index = self._enumerate(types, c, max_states)
        self.size = len(states)
        self.lattice_of = np.array([s[0] for s in states], dtype=np.int64)
        fixed_r, fixed_c, fixed_v = [], [], []
        arr_r, arr_c, arr_p, arr_class, arr_src = [], [], [], [], []
        strides = np.cumprod((1,) + self.dims[::-1][:-1])[::-1]
        for j, (flat, cnt, cfg) in enumerate(states):
            n_tot = sum(cnt)
            for d in range(C):
                if S[d] <= 0 or cnt[d] >= self.dims[d] - 1:
                    continue
                cnt2 = list(cnt)
                cnt2[d] += 1
                f2 = flat + int(strides[d])
                if n_tot < c:
                    alpha = rates[d][0]
                    for i in range(len(alpha)):
                        if alpha[i] > 0:
                            k = index[(f2, _add(cfg, (d, i)))]
                            arr_r.append(j), arr_c.append(k), arr_p.append(alpha[i])
                            arr_class.append(d), arr_src.append(flat)
                else:
                    k = index[(f2, cfg)]
                    arr_r.append(j), arr_c.append(k), arr_p.append(1.0)
                    arr_class.append(d), arr_src.append(flat)
            busy = {}
            for x in cfg:
                busy[x] = busy.get(x, 0) + 1
            waiting = list(cnt)
            for (d, _i), m in busy.items():
                waiting[d] -= m
            W = sum(waiting)
            for (d, i), m in busy.items():
                _a, T, t = rates[d]
                for h in range(T.shape[0]):
                    if h != i and T[i, h] > 0:
                        k = index[(flat, _add(_remove(cfg, (d, i)), (d, h)))]
                        fixed_r.append(j), fixed_c.append(k), fixed_v.append(m * T[i, h])
                if t[i] <= 0:
                    continue
                f2 = flat - int(strides[d])
                base = _remove(cfg, (d, i))
                if W == 0:
                    k = index[(f2, base)]
                    fixed_r.append(j), fixed_c.append(k), fixed_v.append(m * t[i])
                    continue
                for e in range(C):
                    if waiting[e] <= 0:
                        continue
                    ae = rates[e][0]
                    for h in range(len(ae)):
                        if ae[h] > 0:
                            k = index[(f2, _add(base, (e, h)))]
                            fixed_r.append(j), fixed_c.append(k)
                            fixed_v.append(m * t[i] * waiting[e] / W * ae[h])
        self.fixed = (np.array(fixed_r, np.int64), np.array(fixed_c, np.int64),
                      np.array(fixed_v, float))
        self.arrivals = (np.array(arr_r, np.int64), np.array(arr_c, np.int64),
                         np.array(arr_p, float), np.array(arr_class, np.int64),
                         np.array(arr_src, np.int64))

    def _enumerate(self, types, c, max_states):
        C = self.C
        states, index = [], {}
        # a class that never comes (S = 0) is never there: only the lattice
        # points without it (else its jobs would wait with no service)
        live = {d for d, _i in types}
        for cnt in itertools.product(*(range(x) if d in live else range(1)
                                       for d, x in enumerate(self.dims))):
            flat = int(np.ravel_multi_index(cnt, self.dims)) if C else 0
            b = min(sum(cnt), c)
            for combo in itertools.combinations_with_replacement(types, b):
                per = [0] * C
                for d, _i in combo:
                    per[d] += 1
                if any(per[d] > cnt[d] for d in range(C)):
                    continue
                index[(flat, combo)] = len(states)
                states.append((flat, cnt, combo))
                if len(states) > max_states:
                    raise ProblemTooLargeError(
                        f"the station's chain has more than {max_states:,} states")
        return states, index

    @staticmethod
    def count(phs, S, c: int, dims) -> int:
        """The number of states (counted, not built)."""
        C = len(dims)
        m = [phs[d].phases if S[d] > 0 else 0 for d in range(C)]
        total = 0
        for cnt in itertools.product(*(range(x) if m[d] else range(1)
                                       for d, x in enumerate(dims))):
            b = min(sum(cnt), c)
            # configurations of b busy servers with at most cnt[d] of class d
            poly = np.zeros(b + 1)
            poly[0] = 1.0
            for d in range(C):
                if m[d] == 0:
                    continue
                f = np.array([math.comb(j + m[d] - 1, m[d] - 1) if j <= cnt[d] else 0
                              for j in range(b + 1)], float)
                poly = np.convolve(poly, f)[: b + 1]
            total += int(poly[b])
        return total

    def solve(self, lam):
        """log P on the lattice (shape ``dims``) given ``lam`` (C, *dims),
        the arrival rate of each class in each population."""
        fr, fc, fv = self.fixed
        ar, ac, ap, acl, asrc = self.arrivals
        lam = np.asarray(lam, dtype=float).reshape(self.C, -1)
        av = ap * lam[acl, asrc]
        rows = np.concatenate([fr, ar])
        cols = np.concatenate([fc, ac])
        vals = np.concatenate([fv, av])
        pi = _pinned_stationary(rows, cols, vals, self.size)
        P = np.bincount(self.lattice_of, weights=pi, minlength=int(np.prod(self.dims)))
        with np.errstate(divide="ignore"):
            return np.log(P / P.sum()).reshape(self.dims)


def _add(cfg: tuple, x) -> tuple:
    return tuple(sorted(cfg + (x,)))


def _remove(cfg: tuple, x) -> tuple:
    lst = list(cfg)
    lst.remove(x)
    return tuple(lst)


# ---------------------------------------------------------------------------
# one class, renewal arrivals: the complement as a phase-type source
# ---------------------------------------------------------------------------

def arrival_fit(c2: float, kmax: int) -> PhaseType | None:
    """The phase-type inter-arrival time of mean 1 and SCV ``c2`` fed to a
    one-class station's chain (:meth:`SingleClassChain.solve_renewal`), or
    None where Poisson arrivals (SCV 1) are kept: within 5 % of SCV 1, or
    no finite positive SCV.  c2 > 1: the balanced-means H2 (Whitt 1982);
    c2 < 1: Tijms' mixed Erlang E_{k-1,k} with at most ``kmax`` phases (then
    Erlang-kmax, the closest the budget allows)."""
    if not math.isfinite(c2) or c2 <= 0.0 or abs(c2 - 1.0) <= 0.05:
        return None
    if c2 > 1.0:
        return _h2(c2, f"balanced-means H2 of SCV {c2:.3g}", False)
    if kmax < 2:
        return None
    return _mixed_erlang(c2, kmax)


def _renewal_blocks(chain: "SingleClassChain", arr: PhaseType):
    """The blocks of the one-class chain with phase-type arrivals, per level
    n: (within, up, down) without the arrival rate (module docstring of
    :mod:`qmodels.analytic.marie`, "renewal arrivals")."""
    A, a, beta = arr.T, arr.t, arr.alpha
    ma = len(beta)
    N, c = chain.N, chain.c
    out = []
    for n in range(N + 1):
        b = min(n, c)
        L = chain.local[b]
        w = L.shape[0]
        if n < N:
            inner = (np.kron(A, np.eye(w)), np.kron(np.eye(ma), L))
        else:
            inner = (None, L)
        if n < N:
            U = chain.up[b] if n < c else np.eye(w)
            if n + 1 < N:
                up = np.kron(np.outer(a, beta), U)
            else:
                up = np.kron(a[:, None], U)
        else:
            up = None
        if n >= 1:
            D = chain.free[n] if n <= c else chain.busy
            down = np.kron(np.eye(ma), D) if n < N else np.kron(beta[None, :], D)
        else:
            down = None
        rate = chain.rate[b]
        nu = np.kron(np.ones(ma), rate) if n < N else rate
        out.append((inner, up, down, nu))
    return out


# ---------------------------------------------------------------------------
# several classes, renewal arrivals
# ---------------------------------------------------------------------------

def _exp_ph() -> PhaseType:
    return _erlang(1, "exponential", True)


class RenewalMultiClassChain:
    """:class:`MultiClassChain` with the arrivals of each class d a renewal
    process of phase-type intervals ``arrs[d]`` (mean 1; None: Poisson, one
    phase) sped up to r_d(n) at lattice point n (module docstring of
    :mod:`qmodels.analytic.marie`, "renewal arrivals").  The state is the
    base chain's state and the interval phase of every class; an arrival of
    class d, and a departure of class d while none of its jobs was outside
    (the interval starts afresh), draw the next phase from ``alpha_d``.
    :meth:`solve` finds the speeds whose conditional arrival rates are the
    given lambda_d(n) (the secant steps of
    :meth:`SingleClassChain.solve_renewal`)."""

    def __init__(self, base: MultiClassChain, arrs):
        self.base = base
        C, dims = base.C, base.dims
        self.C, self.dims = C, dims
        phs = [a if a is not None else _exp_ph() for a in arrs]
        self.phs = phs
        m = [p.phases for p in phs]
        P = int(np.prod(m))
        self.P = P
        U = np.indices(m).reshape(C, P) if C else np.zeros((0, 1), np.int64)
        stride = np.cumprod([1] + m[::-1][:-1])[::-1]
        L = int(np.prod(dims))
        coords = np.array(np.unravel_index(base.lattice_of, dims))      # (C, nb)
        nb = base.size
        self.size = nb * P
        self.lattice_of = np.repeat(base.lattice_of, P)
        uf = np.arange(P)

        def with_phase(ufs, d, h):
            return ufs + (h - U[d, ufs]) * stride[d]

        const_r, const_c, const_v = [], [], []
        var_r, var_c, var_v, var_m = [], [], [], []
        # (a) service events of the base chain
        fr, fc, fv = base.fixed
        dep = base.lattice_of[fr] != base.lattice_of[fc]
        cls = np.full(len(fr), -1)
        if len(fr):
            diff = coords[:, fr] - coords[:, fc]                        # (C, E)
            cls[dep] = np.argmax(diff[:, dep], axis=0)
        full = np.zeros(len(fr), bool)
        if len(fr):
            full[dep] = coords[cls[dep], fr[dep]] == np.asarray(dims)[cls[dep]] - 1
        keep = ~full
        rr = (fr[keep][:, None] * P + uf[None, :]).ravel()
        cc = (fc[keep][:, None] * P + uf[None, :]).ravel()
        const_r.append(rr), const_c.append(cc)
        const_v.append(np.repeat(fv[keep], P))
        for e in np.flatnonzero(full):
            d = int(cls[e])
            for h in np.flatnonzero(phs[d].alpha > 0):
                const_r.append(fr[e] * P + uf)
                const_c.append(fc[e] * P + with_phase(uf, d, h))
                const_v.append(np.full(P, fv[e] * phs[d].alpha[h]))
        # (b) arrivals: the interval of class d ends (rate r_d t_d[i]), the
        # next starts in phase h
        ar, ac, ap, acl, asrc = base.arrivals
        for d in range(C):
            sel = np.flatnonzero(acl == d)
            if not len(sel):
                continue
            t, alpha = phs[d].t, phs[d].alpha
            for h in np.flatnonzero(alpha > 0):
                rr = (ar[sel][:, None] * P + uf[None, :]).ravel()
                cc = (ac[sel][:, None] * P + with_phase(uf, d, h)[None, :]).ravel()
                vv = (ap[sel][:, None] * t[U[d]][None, :] * alpha[h]).ravel()
                mm = np.repeat(d * L + asrc[sel], P)
                nz = vv > 0
                var_r.append(rr[nz]), var_c.append(cc[nz]), var_v.append(vv[nz])
                var_m.append(mm[nz])
        # (c) the interval's phase moves (while a class-d job is outside)
        for d in range(C):
            A = phs[d].T
            if A.shape[0] == 1:
                continue
            outside = coords[d] < dims[d] - 1
            js = np.flatnonzero(outside)
            for i in range(A.shape[0]):
                for h in range(A.shape[0]):
                    if h == i or A[i, h] <= 0:
                        continue
                    us = uf[U[d] == i]
                    rr = (js[:, None] * P + us[None, :]).ravel()
                    cc = (js[:, None] * P + with_phase(us, d, h)[None, :]).ravel()
                    var_r.append(rr), var_c.append(cc)
                    var_v.append(np.full(len(rr), A[i, h]))
                    var_m.append(np.repeat(d * L + base.lattice_of[js], len(us)))
        def cat(xs, t):
            return (np.concatenate(xs).astype(t) if xs else np.zeros(0, t))
        self.const = (cat(const_r, np.int64), cat(const_c, np.int64), cat(const_v, float))
        self.var = (cat(var_r, np.int64), cat(var_c, np.int64), cat(var_v, float),
                    cat(var_m, np.int64))
        # the exit rate of each class's interval phase in each state
        self.exit = np.stack([np.tile(phs[d].t[U[d]], nb) for d in range(C)]) if C else None
        self.outside = np.stack([np.repeat(coords[d] < dims[d] - 1, P) for d in range(C)])

    def _solve(self, r):
        """(log P on the lattice, conditional arrival rates (C, L)) for
        speeds ``r`` (C, L)."""
        L = int(np.prod(self.dims))
        cr, cc, cv = self.const
        vr, vc, vv, vm = self.var
        rows = np.concatenate([cr, vr])
        cols = np.concatenate([cc, vc])
        vals = np.concatenate([cv, vv * r.reshape(-1)[vm]])
        pi = _pinned_stationary(rows, cols, vals, self.size)
        Pl = np.bincount(self.lattice_of, weights=pi, minlength=L)
        eff = np.zeros((self.C, L))
        for d in range(self.C):
            w = np.bincount(self.lattice_of, weights=pi * self.exit[d], minlength=L)
            with np.errstate(divide="ignore", invalid="ignore"):
                eff[d] = np.where(Pl > 0, w / Pl, 0.0) * r[d]
        with np.errstate(divide="ignore"):
            return np.log(Pl / Pl.sum()).reshape(self.dims), eff

    def solve(self, lam, sweeps: int = 50, tol: float = 1e-9):
        """log P on the lattice given the conditional arrival rates ``lam``
        (C, *dims)."""
        L = int(np.prod(self.dims))
        lam = np.asarray(lam, dtype=float).reshape(self.C, L)
        ok = lam > 0
        target = np.log(np.where(ok, lam, 1.0))
        x = target + getattr(self, "_warm", 0.0)
        prev = None
        logp = None
        for _ in range(max(1, int(sweeps))):
            r = np.where(ok, np.exp(x), 0.0)
            logp, eff = self._solve(r)
            if np.isnan(logp).any() or np.isnan(eff).any() or np.isposinf(logp).any() \
                    or not np.isfinite(logp.flat[0]):
                raise np.linalg.LinAlgError("the renewal chain did not solve")
            good = ok & (eff > 0)
            f = np.where(good, np.log(np.where(good, eff, 1.0)) - target, 0.0)
            if float(np.abs(f).max(initial=0.0)) <= tol:
                break
            self._warm = np.where(ok, x - target, 0.0)
            x, prev = _secant_step(x, f, prev, target)
        return logp


def _secant_step(x, f, prev, target):
    """Per level, a secant step on log r towards f = 0 (the slope held to
    0.2..5, 2 at the first step: the plain step r <- r lambda / eff
    oscillates), kept within e^8 of the target; returns (x, prev)."""
    slope = np.full_like(x, 2.0)
    if prev is not None:
        dx, df = x - prev[0], f - prev[1]
        with np.errstate(divide="ignore", invalid="ignore"):
            est = np.where(np.abs(dx) > 1e-14, df / dx, 2.0)
        slope = np.clip(np.nan_to_num(est, nan=2.0), 0.2, 5.0)
    prev = (x.copy(), f)
    return np.clip(x - f / slope, target - 8.0, target + 8.0), prev


def _pinned_stationary(rows, cols, vals, n):
    """The unnormalised stationary vector of the chain whose off-diagonal
    rates are (rows, cols, vals), pi(0) = 1: pi Q = 0 with state 0 (the
    empty station, which a finite chain fed by positive rates visits)
    pinned, the balance equations of the other states (Q^T restricted to
    them, state 0's column moved to the right-hand side) solved by SuperLU
    (Stewart 1994, sec. 2.3).  Replacing an equation by the dense row sum
    pi = 1 instead would add a dense row.  The states are enumerated
    lattice point by lattice point, the busy servers' configurations within
    each: kept in that order (permc_spec="NATURAL"), SuperLU's factors of
    an 11,000-state chain hold 3.8 million entries and take 3.6 s; its
    default COLAMD ordering gives 6 million and 30 s."""
    from scipy.sparse.linalg import spsolve

    pi = np.ones(n)
    if n > 1:
        sub, rhs = pinned_system(rows, cols, vals, n)
        pi[1:] = spsolve(sub, rhs, permc_spec="NATURAL")
    return np.maximum(pi, 0.0)


def pinned_system(rows, cols, vals, n):
    """(A, b) of the balance equations pi Q = 0 of the states 1..n-1 with
    pi(0) = 1 (:func:`_pinned_stationary`): Q's off-diagonal rates
    (rows, cols, vals) with the diagonal minus each row's sum, transposed,
    state 0's row and column taken out, its column moved to the right-hand
    side (Stewart 1994, sec. 2.3).  A in CSC form, n >= 2."""
    from scipy.sparse import coo_matrix

    out = np.bincount(rows, weights=vals, minlength=n)
    rows = np.concatenate([rows, np.arange(n)])
    cols = np.concatenate([cols, np.arange(n)])
    vals = np.concatenate([vals, -out])
    At = coo_matrix((vals, (cols, rows)), shape=(n, n)).tocsc()
    return At[1:, :][:, 1:].tocsc(), -np.asarray(At[1:, 0].todense()).ravel()
