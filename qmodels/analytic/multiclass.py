"""Multi-class product-form networks: exact MVA over the population lattice
(its kernel in :mod:`._lattice`), open and mixed networks.  Approximate MVA
(Schweitzer-Bard, Linearizer) is in :mod:`.amva`.

Assumptions (product form; Baskett, Chandy, Muntz & Palacios, "Open, closed
and mixed networks of queues with different classes of customers", JACM
22(2), 1975 -- "BCMP"): delay stations (BCMP type 3), queueing stations whose
service rate depends at most on the total number present (single-server,
c-server or load-dependent), probabilistic routing without class switching,
no finite capacity that can bind, no simultaneous resource possession.

A queueing station whose mean service time differs by class is solved as
processor sharing (BCMP type 2): FCFS with class-dependent exponential
service has no product form, PS with the same means does, and that is the
network solved here; every result from such a network carries a note saying
so.  Input outside the assumptions raises
:class:`~qmodels.errors.UnsupportedModelError` naming the station.

Notation (Lazowska et al., QSP 1984, ch. 7): classes c = 1..C with
populations N_c (closed) or arrival rates lambda_c (open), stations k with
demands D_ck = V_ck S_ck, think times Z_c.  Figures follow
:mod:`qmodels.results`: class X is cycles per second, class R the time per
cycle excluding think time, station figures per visit.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import (
    PopulationError,
    ProblemTooLargeError,
    UnstableError,
    UnsupportedModelError,
)
from ..model.network import Delay, LoadDependent, Network, Open, Queue
from ..results import FrameReport, Result, label_of
from ._common import (
    _KIND_FIXED,
    _KIND_LD,
    _check_capacities,
    _check_classes,
    _check_size,
    _ps_notes,
    _require_numeric,
    _result,
    _shape,
    _utilisation,
)
from ._lattice import _exact_kernel
from .contract import answers
from .open import _open_exact, _open_parts, _rates

__all__ = ["solve_exact", "Lattice"]

#: Largest number of subnetworks (2**M for M multi-server / load-dependent
#: stations) times lattice points that the exact solver accepts.
_MAX_LD_WORK = 2e8
#: Largest number of lattice points (time) and of stored floats (memory) the
#: exact solver accepts; beyond, it names the approximations.
_MAX_POINTS = 1e9
_MAX_FLOATS = 2e8
#: Time: the lattice recursion costs about _SECONDS_PER_UNIT per population
#: vector x class x station (x 2**M complement networks), measured on one
#: x86-64 core (4 classes x 25-40 jobs, 3-6 stations: 0.15-0.24 us; a point's
#: fixed overhead folded in); beyond _MAX_SECONDS of estimated time the exact
#: solver refuses with the estimate (4 classes x 150 jobs ran 349 s before).
_SECONDS_PER_UNIT = 2e-7
_MAX_SECONDS = 60.0



def _closed_arrays(net: Network, D, Z, N, solver: str):
    """Station kinds and packed multipliers for the lattice kernel."""
    ntot = int(sum(N))
    K = D.shape[1]
    kind = np.zeros(K, np.int64)
    ldpos = np.full(K, -1, np.int64)
    Dk = np.array(D, dtype=float)
    ld_st: list[int] = []
    mults: list[Any] = []
    for k in range(K):
        kd, a = _shape(net, k, ntot + 1)
        if kd == _KIND_FIXED:
            Dk[:, k] = Dk[:, k] / a[0]
        elif kd == _KIND_LD:
            ldpos[k] = len(ld_st)
            ld_st.append(k)
            mults.append(a)
        kind[k] = kd
    M = len(ld_st)
    Lmax = max([len(a) for a in mults], default=1)
    mult = np.ones((max(M, 1), Lmax))
    nmult = np.ones(max(M, 1), np.int64)
    for i, a in enumerate(mults):
        mult[i, : len(a)] = a
        mult[i, len(a):] = a[-1]
        nmult[i] = len(a)
    return Dk, kind, ldpos, np.array(ld_st, np.int64), mult[:M] if M else mult[:0], nmult[:M]


def exact_seconds(points: int, C: int, K: int, M: int = 0) -> float:
    """Estimated seconds of the exact multi-class recursion: population
    vectors x classes x stations (x 2**M complement networks for M
    multi-server or load-dependent stations) x _SECONDS_PER_UNIT.  The
    recursion does O(C K) work per population vector (Reiser & Lavenberg
    1980; Lazowska et al. 1984, sec. 7.4.2), once per complement network
    (the networks without each subset of those stations, see
    :func:`solve_exact`)."""
    return float(points) * max(C, 1) * max(K, 1) * (2 ** M) * _SECONDS_PER_UNIT


def _lattice_size(N) -> int:
    out = 1
    for n in N:
        out *= int(n) + 1
    return out


def _closed_exact_arrays(net: Network, D, Z, N, curve: bool, progress=None):
    """Run the lattice kernel; return (X, R, P0, kind, ld_st, Dk)."""
    Dk, kind, ldpos, ld_st, mult, nmult = _closed_arrays(net, D, Z, N, "exact MVA")
    M = len(ld_st)
    Lsize = _lattice_size(N)
    if M and (2 ** M) * Lsize > _MAX_LD_WORK:
        names = ", ".join(repr(net.stations[k].name) for k in ld_st)
        raise ProblemTooLargeError(
            f"exact multi-class MVA with {M} multi-server/load-dependent stations ({names}) "
            f"solves 2^{M} complement networks over {Lsize} population vectors, more than "
            f"{_MAX_LD_WORK:.0e}: use method='schweitzer' or 'linearizer'"
        )
    C, K = Dk.shape
    window = Lsize if curve else min(Lsize, Lsize // (N[0] + 1) + 1) if C else 1
    floats = (2 ** M) * window * (K + M * (mult.shape[1] + 2) if M else K)
    if curve:
        floats += Lsize * C * (2 * K + 1)
    if Lsize > _MAX_POINTS or floats > _MAX_FLOATS:
        pops = ", ".join(f"{c.name}={n}" for c, n in zip(net.classes, N, strict=True))
        raise ProblemTooLargeError(
            f"exact multi-class MVA over populations ({pops}) visits {Lsize:.3g} population "
            f"vectors and stores {floats:.3g} numbers (limits {_MAX_POINTS:.0e} and "
            f"{_MAX_FLOATS:.0e}{', curve=True stores every point' if curve else ''}): "
            "use method='schweitzer' or 'linearizer'"
        )
    est = exact_seconds(Lsize, C, K, M)
    if est > _MAX_SECONDS:
        pops = ", ".join(f"{c.name}={n}" for c, n in zip(net.classes, N, strict=True))
        raise ProblemTooLargeError(
            f"exact multi-class MVA over populations ({pops}) visits {Lsize:.3g} population "
            f"vectors x {C} classes x {K} stations{f' x 2^{M} subnetworks' if M else ''}: "
            f"an estimated {est:.3g} s (about {_SECONDS_PER_UNIT:.1e} s per vector x class x "
            f"station on one core), more than the {_MAX_SECONDS:g} s limit; use "
            "method='schweitzer' or 'linearizer' (approximate MVA, seconds), or 'bounds'"
        )
    Nv = np.asarray(N, dtype=np.int64)
    if M == 0:
        mult = np.ones((0, 1))
        nmult = np.zeros(0, np.int64)
    X, R, P0, F = _exact_kernel(
        Dk, kind, ldpos, ld_st, mult, nmult, np.asarray(Z, dtype=float), Nv, bool(curve),
        progress)
    return X, R, P0, kind, ld_st, Dk, F


def _unit_scale(net: Network, D, N) -> np.ndarray:
    """Per station: per-visit time = S_ck x F_ck x scale_k, F from the
    lattice kernel.  1/a for a constant-rate station (its kernel demand is
    D/a), 1/a(1) for a station no class visits (nobody is ever there), 1
    otherwise."""
    ntot = int(sum(N))
    used = (np.asarray(D) > 0).any(axis=0)
    out = np.ones(len(net.stations))
    for k, s in enumerate(net.stations):
        if not used[k]:
            if isinstance(s, LoadDependent):
                out[k] = 1.0 / float(s.rate_multipliers[0])
            continue
        kd, a = _shape(net, k, ntot + 1, unused_delay=False)
        if kd == _KIND_FIXED:
            out[k] = 1.0 / a[0]
    return out


# ---------------------------------------------------------------------------
# the lattice object (curve=True)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Lattice(FrameReport):
    """Exact figures at every population vector 0 <= n <= N of a closed
    multi-class network (``solve_exact(net, curve=True).curve``).

    Arrays are indexed by class or station first, then by the populations
    ``n_1, ..., n_C`` of the classes in network order:

    * ``throughput`` (alias ``X``): X[c, n_1, ..., n_C], cycles per second;
    * ``residence_time``: R[c, k, n...], time per cycle class c spends at
      station k (for n_c = 0: what one arriving class-c job would see);
    * ``class_queue_length``: Q[c, k, n...] = X_c R_ck;
    * ``queue_length`` (alias ``Q``): Q[k, n...], summed over classes;
    * ``utilization`` (alias ``U``): U[c, k, n...].

    ``at(populations)`` returns the full :class:`~qmodels.results.Result`
    at one lattice point; ``to_frame()`` one row per lattice point.
    """

    network: Any
    populations: tuple
    throughput: np.ndarray
    residence_time: np.ndarray
    utilization: np.ndarray
    notes: tuple = ()
    visit_time: np.ndarray | None = None

    X = property(lambda self: self.throughput)
    U = property(lambda self: self.utilization)

    #: exact product-form figures (the multi-class MVA lattice)
    method = "exact"
    exactness = "exact"
    assumptions = label_of("exact")[1]
    warnings: tuple = ()
    error = None

    @property
    def class_queue_length(self) -> np.ndarray:
        return self.throughput[:, None] * self.residence_time

    @property
    def queue_length(self) -> np.ndarray:
        return self.class_queue_length.sum(axis=0)

    Q = queue_length

    @property
    def response_time(self) -> np.ndarray:
        """R[c, n...]: class response time per cycle, excluding think time."""
        return self.residence_time.sum(axis=1)

    R = response_time

    def _index(self, populations) -> tuple:
        net = self.network
        names = net.class_names
        if isinstance(populations, dict):
            unknown = [k for k in populations if k not in names]
            if unknown:
                raise PopulationError(f"unknown class {unknown[0]!r} in populations")
            pops = [populations.get(c, None) for c in names]
            pops = [self.populations[i] if p is None else p for i, p in enumerate(pops)]
        else:
            pops = list(populations) if np.ndim(populations) else [populations]
        if len(pops) != len(names):
            raise PopulationError(
                f"give one population per class ({len(names)}), got {len(pops)}"
            )
        out = []
        for i, (c, p) in enumerate(zip(names, pops, strict=True)):
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not (
                0 <= int(p) <= self.populations[i]
            ):
                raise PopulationError(
                    f"class {c!r}: population {p!r} is outside the lattice "
                    f"0..{self.populations[i]}"
                )
            out.append(int(p))
        return tuple(out)

    def at(self, populations) -> Result:
        """The Result at population vector ``populations`` (a sequence in
        class order, or a mapping class name -> population; missing classes
        keep their full population)."""
        idx = self._index(populations)
        net = self.network
        new = tuple(
            dataclasses.replace(c, population=idx[i]) for i, c in enumerate(net.classes)
        )
        sub = Network(net.stations, new, name=net.name, pools=net.pools)
        sl = (slice(None),) + idx
        X = self.throughput[sl]
        Rr = self.residence_time[(slice(None), slice(None)) + idx]
        U = self.utilization[(slice(None), slice(None)) + idx]
        T = None if self.visit_time is None else self.visit_time[
            (slice(None), slice(None)) + idx]
        return _result(sub, "exact", X, Rr, U, self.notes,
                       {"algorithm": "multi-class MVA lattice", "population": idx},
                       visit_time=T)

    def to_frame(self):
        """A pandas DataFrame with one row per lattice point: index the
        populations ``N[c]``; columns ``X[c]``, ``R[c]`` per class and
        ``Q[k]`` per station."""
        import pandas as pd

        net = self.network
        cn, sn = net.class_names, net.station_names
        shape = self.throughput.shape[1:]
        grid = np.indices(shape).reshape(len(shape), -1)
        index = pd.MultiIndex.from_arrays(list(grid), names=[f"N[{c}]" for c in cn])
        data = {}
        X = self.throughput.reshape(len(cn), -1)
        R = self.response_time.reshape(len(cn), -1)
        Q = self.queue_length.reshape(len(sn), -1)
        for i, c in enumerate(cn):
            data[f"X[{c}]"] = X[i]
        for i, c in enumerate(cn):
            data[f"R[{c}]"] = R[i]
        for k, s in enumerate(sn):
            data[f"Q[{s}]"] = Q[k]
        return pd.DataFrame(data, index=index)

    def __repr__(self):
        pops = ", ".join(f"{c}: 0..{n}" for c, n in zip(self.network.class_names,
                                                      self.populations, strict=True))
        return f"Lattice({pops}; {self.throughput[0].size} population vectors)"


# ---------------------------------------------------------------------------
# closed, open and mixed exact solutions
# ---------------------------------------------------------------------------

def _closed_exact(net: Network, curve: bool, progress=None) -> Result:
    C = len(net.classes)
    D = np.asarray(net.demands, dtype=float)
    Z = np.array([float(c.think_time) for c in net.classes])
    N = [int(c.population) for c in net.classes]
    _check_capacities(net, sum(N), "exact multi-class MVA")
    _check_classes(net, D, Z, N)
    notes = _ps_notes(net)
    X, R, P0, kind, ld_st, _, F = _closed_exact_arrays(net, D, Z, N, curve, progress)
    S = np.asarray(net.service_times, dtype=float)
    Tv = S[None, :, :] * F * _unit_scale(net, D, N)[None, None, :]
    info = {
        "algorithm": "multi-class MVA lattice"
        + (" with complement networks for load-dependent stations" if len(ld_st) else ""),
        "population": tuple(N),
        "lattice_points": _lattice_size(N),
    }
    last = X.shape[0] - 1
    U = _utilisation(net, X[last], D, P0[last], ld_st)
    lat = None
    if curve:
        shape = tuple(n + 1 for n in N)
        K = D.shape[1]
        Ul = np.empty((X.shape[0], C, K))
        for r in range(X.shape[0]):
            Ul[r] = _utilisation(net, X[r], D, P0[r], ld_st)
        lat = Lattice(
            network=net,
            populations=tuple(N),
            throughput=np.moveaxis(X, 0, -1).reshape((C,) + shape),
            residence_time=np.moveaxis(R, 0, -1).reshape((C, K) + shape),
            utilization=np.moveaxis(Ul, 0, -1).reshape((C, K) + shape),
            notes=tuple(notes),
            visit_time=np.moveaxis(Tv, 0, -1).reshape((C, K) + shape),
        )
        for arr in (lat.throughput, lat.residence_time, lat.utilization, lat.visit_time):
            arr.flags.writeable = False
    return _result(net, "exact", X[last], R[last], U, notes, info, curve=lat,
                   visit_time=Tv[last])


@answers()
def solve_exact(net: Network, *, curve: bool = False, progress: bool | None = None) -> Result:
    """Exact product-form solution of a multi-class network
    (``method="exact"``; :func:`qmodels.analytic.mva.mva` sends every network with
    more than one class here).

    Parameters
    ----------
    net : Network
        Closed, open or mixed classes; delay, queueing (any number of
        servers) and load-dependent stations.
    curve : bool
        Closed networks only: also return the figures at every population
        vector 0 <= n <= N as a :class:`Lattice` in ``result.curve``.
    progress : bool or None
        A progress bar over a large lattice (some 10^6 points or more):
        ``None`` shows one in a terminal or Jupyter, not in CI
        (:mod:`qmodels._progress`).

    Returns
    -------
    Result
        method ``"exact"``; ``info["algorithm"]`` says which route.

    Notes
    -----
    *Closed.*  Exact MVA over the population lattice (Reiser & Lavenberg,
    "Mean-value analysis of closed multichain queuing networks", JACM 27(2),
    1980; Lazowska et al., QSP 1984, sec. 7.4.2, Algorithm 7.1; Bolch et al.,
    *Queueing Networks and Markov Chains*, 2nd ed. 2006, sec. 8.2.1):

        R_ck(n) = D_ck (1 + Q_k(n - e_c))    (queue; delay: D_ck)
        X_c(n) = n_c / (Z_c + sum_k R_ck(n)),  Q_k(n) = sum_c X_c(n) R_ck(n)

    Cost O(K C prod_c (N_c + 1)), memory O(K prod_{c>1} (N_c + 1)); a
    lattice whose estimated time (:func:`exact_seconds`) passes 60 s is
    refused with a :class:`~qmodels.errors.ProblemTooLargeError` stating it.
    Multi-server and load-dependent stations use the arrival theorem with
    marginal probabilities (Bolch et al. 2006, eqs. 8.35-8.37, 8.43); the
    probability of an empty station, whose textbook form 1 - sum_j p(j)
    cancels catastrophically near saturation, is computed instead as a
    product of throughput ratios of the network and of the network without
    that station, p_k(0|n) = p_k(0|n-e_c) X_c(n) / X_c^{-k}(n), since
    p_k(0|n) = G_{-k}(n)/G(n) (Bolch et al. 2006, eq. 8.13; G. Casale, "A
    note on stable flow-equivalent aggregation in closed networks",
    Queueing Systems 60, 2008; Casale & Serazzi, "Stabilization techniques
    for load-dependent queueing networks algorithms", 2005).  Every term is
    positive.  With M such stations 2^M subnetworks are solved in lockstep.

    *Open.*  BCMP product form: each station is independent with load
    rho_k = sum_c lambda_c D_ck; single server R_ck = D_ck/(1 - rho_k)
    (Lazowska et al. 1984, sec. 7.3); multi-server/load-dependent: the
    birth-death chain of the total number (Bolch et al. 2006, eq. 6.6),
    split among classes in proportion to lambda_c D_ck.  UnstableError names
    the first station with rho >= 1.

    *Mixed.*  Open classes are solved first; at each single-server queue
    the closed classes see demands inflated to D_ck / (1 - U_k^open), and
    the open classes then have R_ok = D_ok (1 + Q_k^closed) / (1 - U_k^open)
    (Lazowska et al. 1984, sec. 7.4.3; Bolch et al. 2006, sec. 8.2).  A
    multi-server/load-dependent station loaded by both open and closed
    classes raises UnsupportedModelError.

    References
    ----------
    M. Reiser, S. S. Lavenberg, JACM 27(2):313-322, 1980.
    E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative
    System Performance*, Prentice-Hall 1984, ch. 7.
    G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and
    Markov Chains*, 2nd ed., Wiley 2006, ch. 8.

    Examples
    --------
    QSP p. 142: two classes, two stations, one job each (demands differ by
    class, so the stations are processor sharing: the product-form model).

    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu", discipline="ps"), qm.Queue("disk", discipline="ps")],
    ...     [qm.Closed("A", 1, demands={"cpu": 1, "disk": 3}),
    ...      qm.Closed("B", 1, demands={"cpu": 2, "disk": 4})])
    >>> r = solve_exact(net)
    >>> round(r.X["A"] * 19, 9), round(r.X["B"] * 19, 9)
    (3.0, 2.0)
    """
    _require_numeric(net, "exact MVA")
    if net.is_closed:
        return _closed_exact(net, curve, progress)
    if curve:
        raise UnsupportedModelError(
            "curve=True needs a closed network (the lattice is over closed populations)"
        )
    if net.is_open:
        return _open_exact(net)
    return _mixed_exact(net, progress)


# ---------------------------------------------------------------------------
# mixed networks: open load at load-dependent stations summed out
# ---------------------------------------------------------------------------


def _log_beta(rho: float, mult, nmax: int, name: str) -> np.ndarray:
    """log beta(n), n = 0..nmax: the open jobs summed out of a load-dependent
    station that holds n closed jobs,

        beta(n) = sum_{m>=0} C(n+m, m) rho^m / A(n+m),  A(j) = prod_{i<=j} a(i),

    with rho = sum_o lambda_o D_ok the open load (BCMP product form: the
    station factor (n+m)!/(n! m!) ... / A(n+m), summed over the open count m;
    Bolch et al. 2006, sec. 8.2.3; Baskett et al. 1975).  Past the last
    multiplier a(j) = a_L, so with x = rho / a_L < 1 the tail is a negative
    binomial series, sum_{m>=m0} C(n+m, m) x^m = (1-x)^-(n+1) I_x(m0, n+1)
    (regularised incomplete beta), and the head m < m0 a finite sum: all
    terms positive, kept in log space.
    """
    from scipy.special import betainc, gammaln

    a = np.asarray(mult, dtype=float)
    L = len(a)
    aL = a[-1]
    x = rho / aL
    if x >= 1:
        raise UnstableError(
            f"station {name!r} is unstable: open load rho = {rho:.6g} reaches its limiting "
            f"rate a_L = {aL:.6g} (rho / a_L = {x:.6g} >= 1)", station=name, rho=float(x))
    logA = np.concatenate(([0.0], np.cumsum(np.log(a))))  # log A(0..L)
    out = np.empty(nmax + 1)
    lrho = math.log(rho)
    for n in range(nmax + 1):
        m0 = max(0, L - 1 - n)
        terms = [gammaln(n + m + 1) - gammaln(n + 1) - gammaln(m + 1) + m * lrho - logA[n + m]
                 for m in range(m0)]
        inc = 1.0 if m0 == 0 else float(betainc(m0, n + 1, x))
        if inc > 0:
            terms.append((L - 1 - n) * math.log(aL) - logA[L - 1] - (n + 1) * math.log1p(-x)
                         + math.log(inc))
        hi = max(terms)
        out[n] = hi + math.log(sum(math.exp(v - hi) for v in terms))
    return out


#: Most terms of :func:`_log_beta` (one per closed population 0..N+1 per
#: shared station, plus the finite head): a Python loop measured at about
#: 1.2e-5 s a term (N = 2e5 at a two-server station: 2.4 s), so 5e6 is
#: about a minute.
MAX_BETA_STEPS = 5e6


def _shared_ld_stations(net: Network, D, rho, is_open) -> dict:
    """Multi-server and load-dependent stations loaded by both open and
    closed classes: name -> (index, multipliers)."""
    out = {}
    Dc = D[~is_open]
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay) or rho[k] <= 0 or not np.any(Dc[:, k] > 0):
            continue
        if isinstance(s, Queue) and s.servers > 1:
            out[s.name] = (k, _rates(s))
        elif isinstance(s, LoadDependent) and any(
                float(x) != float(s.rate_multipliers[0]) for x in s.rate_multipliers):
            out[s.name] = (k, tuple(float(x) for x in s.rate_multipliers))
    return out


def _mixed_exact(net: Network, progress=None) -> Result:
    _check_capacities(net, None, "the mixed product-form solver")
    D = np.asarray(net.demands, dtype=float)
    C, K = D.shape
    is_open = np.array([isinstance(c, Open) for c in net.classes])
    lam = np.array([float(getattr(c, "arrival_rate", 0.0)) for c in net.classes])
    lam[~is_open] = 0.0
    notes = _ps_notes(net)
    ci: np.ndarray = np.flatnonzero(~is_open)
    oi = np.flatnonzero(is_open)
    Dc = D[ci]
    rho_all = lam[oi] @ D[oi]
    shared = _shared_ld_stations(net, D, rho_all, is_open)
    rho, factor, p0 = _open_parts(net, D[oi], lam[oi], False, closed_D=Dc,
                                  shared=set(shared))
    Nc = [int(net.classes[i].population) for i in ci]
    # the closed classes see each shared load-dependent station with the open
    # jobs summed out: rates a'(j) = beta(j-1)/beta(j) (exact, see _log_beta)
    steps = sum(sum(Nc) + 2 + len(mult) ** 2 / 2 for _, mult in shared.values())
    _check_size(f"the mixed solver's open-job sums at {len(shared)} shared multi-server or "
                f"load-dependent station(s) for {sum(Nc)} closed jobs", steps, sum(Nc) + 2.0,
                MAX_BETA_STEPS, 2e8)
    lbeta = {name: _log_beta(float(rho[k]), mult, sum(Nc) + 1, name)
             for name, (k, mult) in shared.items()}
    stations = tuple(
        LoadDependent(s.name, s.service, rate_multipliers=tuple(
            np.exp(lbeta[s.name][:-2] - lbeta[s.name][1:-1]).tolist()) or (1.0,))
        if s.name in shared else s for s in net.stations)
    # ... and demands inflated by 1/(1 - U_open) at single-server queues
    # (Lazowska et al. 1984, sec. 7.4.3; Bolch et al. 2006, sec. 8.2)
    inflate = np.ones(K)
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay) or s.name in shared:
            continue
        if rho[k] > 0 and np.any(Dc[:, k] > 0):
            inflate[k] = 1.0 / (1.0 - rho[k] / _single_rate(s))
    closed_net = Network(stations, tuple(net.classes[i] for i in ci), name=net.name)
    Zc = np.array([float(net.classes[i].think_time) for i in ci])
    _check_classes(closed_net, Dc, Zc, Nc)
    Xc_, Rc_, P0c, kind, ld_st, _, Fc_ = _closed_exact_arrays(
        closed_net, Dc * inflate[None, :], Zc, Nc, False, progress
    )
    Xcl, Rcl = Xc_[0], Rc_[0]
    Qk_closed = (Xcl[:, None] * Rcl).sum(axis=0)
    X = np.zeros(C)
    Rres = np.zeros((C, K))
    X[ci] = Xcl
    Rres[ci] = Rcl
    X[oi] = lam[oi]
    # open classes: R_ok = D_ok (1 + Q_k^closed) / (1 - U_k^open) at
    # single-server queues (QSP sec. 7.4.3), D_ok at delays.  The same
    # factors times S give the per-visit time where a class never goes.
    S = np.asarray(net.service_times, dtype=float)
    Tv = np.zeros((C, K))
    Tv[ci] = S[ci] * Fc_[0] * _unit_scale(closed_net, Dc, Nc)[None, :] * inflate[None, :]
    for k, s in enumerate(net.stations):
        if s.name in shared:
            continue
        if isinstance(s, Delay):
            f = 1.0
        elif np.any(Dc[:, k] > 0):
            f = (1.0 + Qk_closed[k]) * inflate[k] / _single_rate(s)
        else:
            f = factor[k]
        Rres[oi, k] = D[oi, k] * f
        Tv[oi, k] = S[oi, k] * f
    U = X[:, None] * D
    Ucl = _utilisation(closed_net, Xcl, Dc, P0c[0], ld_st)
    for k, s in enumerate(net.stations):
        if isinstance(s, Queue):
            U[oi, k] /= s.servers
        elif isinstance(s, LoadDependent) and rho[k] > 0 and s.name not in shared:
            U[oi, k] = (1 - p0[k]) * U[oi, k] / rho[k]
    U[ci] = Ucl
    if shared:
        _shared_open_figures(net, closed_net, shared, lbeta, inflate, rho, lam, D, oi, X, Rres,
                             U, Tv)
        notes.append("open load at the shared multi-server/load-dependent station(s) "
                     f"{', '.join(map(repr, shared))} summed out exactly (Bolch et al. 2006, "
                     "sec. 8.2.3)")
    info = {"algorithm": "mixed MVA (open load inflates closed demands)",
            "population": tuple(Nc)}
    return _result(net, "exact", X, Rres, U, notes, info, visit_time=Tv)


def _shared_open_figures(net, closed_net, shared, lbeta, inflate, rho, lam, D, oi, X, Rres,
                         U, Tv):
    """Open-class residence times and every class's utilisation at the shared
    load-dependent stations, from the marginal p_k(j) of closed jobs there
    (normalising constants of the closed network with the open load summed
    out everywhere, :mod:`.convolution`): E[open jobs | j closed] =
    (j+1) rho beta(j+1)/beta(j), and P(station empty) = p_k(0) / beta(0)."""
    from .convolution import convolution

    # single-server queues with open load: rate a (1 - U_open), the same
    # inflation the closed solution used
    eff = tuple(
        LoadDependent(s.name, s.service, rate_multipliers=(_single_rate(s) / inflate[k],))
        if inflate[k] != 1.0 else s for k, s in enumerate(closed_net.stations))
    marg_net = Network(eff, closed_net.classes, name=closed_net.name)
    marg = convolution(marg_net, marginals=True).info["marginals"]
    for name, (k, _) in shared.items():
        p = np.asarray(marg[name], dtype=float)
        lb = lbeta[name]
        j = np.arange(len(p))
        q_open = float(np.sum(p * (j + 1) * rho[k] * np.exp(lb[j + 1] - lb[j])))
        share = lam[oi] * D[oi, k] / rho[k]
        Rres[oi, k] = np.where(lam[oi] > 0, q_open * share / np.where(lam[oi] > 0, lam[oi], 1),
                               0.0)
        # per-visit time of an open job there: (1 + E[jobs seen]) S / rate,
        # from its residence where it visits; by PASTA the same for any
        # open class, so one that never visits sees it too
        S = np.asarray(net.service_times, dtype=float)
        R_unit = q_open / rho[k]  # residence per unit of open demand
        Tv[oi, k] = S[oi, k] * R_unit
        s = net.stations[k]
        if isinstance(s, LoadDependent):
            busy = 1.0 - float(p[0]) * math.exp(-lb[0])
            w = X * D[:, k]
            U[:, k] = busy * w / w.sum()
        else:
            U[:, k] = X * D[:, k] / s.servers


def _single_rate(s) -> float:
    if isinstance(s, LoadDependent):
        return float(s.rate_multipliers[0])
    return 1.0
