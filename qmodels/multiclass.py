"""Multi-class product-form networks: exact MVA over the population lattice,
approximate MVA (Schweitzer-Bard, Linearizer), open and mixed networks.

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
import warnings
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ._jit import njit
from .errors import (
    ConvergenceWarning,
    InvalidValueError,
    PopulationError,
    UnstableError,
    UnsupportedModelError,
)
from .model import Closed, Delay, LoadDependent, Network, Open, Queue
from .mva import _check_capacities, _open_ld_station, _require_numeric
from .results import Result

__all__ = ["solve_exact", "schweitzer", "linearizer", "Lattice"]

#: Largest number of subnetworks (2**M for M multi-server / load-dependent
#: stations) times lattice points that the exact solver accepts.
_MAX_LD_WORK = 2e8
#: Largest number of lattice points (time) and of stored floats (memory) the
#: exact solver accepts; beyond, it names the approximations.
_MAX_POINTS = 1e9
_MAX_FLOATS = 2e8

_KIND_DELAY, _KIND_FIXED, _KIND_LD = 0, 1, 2


# ---------------------------------------------------------------------------
# model preparation
# ---------------------------------------------------------------------------

def _ps_notes(net: Network) -> list[str]:
    """One note naming the FCFS queueing stations whose mean service time
    differs by class: they are solved as processor sharing (BCMP type 2)."""
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    used = V > 0
    big = np.where(used, S, -np.inf).max(axis=0)
    small = np.where(used, S, np.inf).min(axis=0)
    multi = used.sum(axis=0) >= 2
    with np.errstate(invalid="ignore"):
        differs = multi & (big - small > 1e-12 * np.maximum(1.0, np.abs(big)))
    names = [
        s.name for k, s in enumerate(net.stations)
        if differs[k] and not isinstance(s, Delay) and getattr(s, "discipline", "fcfs") != "ps"
    ]
    if not names:
        return []
    shown = ", ".join(repr(n) for n in names[:8]) + (
        f" and {len(names) - 8} more" if len(names) > 8 else "")
    return [
        f"FCFS station(s) {shown} with class-dependent service times are solved as "
        "processor sharing (BCMP type 2), which product form requires"
    ]


def _shape(s, used: bool, ntot: int):
    """(kind, multipliers) of a station in a closed network of total
    population ``ntot`` (callers pass |N| + 1: the arrival theorem for a
    class of population 0 looks at one job more than the network holds).

    A station with zero demand for every class, a c-server queue with
    c >= ntot, and a load-dependent station with a(j) = j for j <= ntot never
    queue: they are delays (exactly).  A load-dependent station with one
    constant rate a is a single server of demand D/a (returned as ``fixed``
    with the multiplier (a,)).  Only the first ``ntot`` multipliers can ever
    be used.
    """
    if not used or isinstance(s, Delay):
        return _KIND_DELAY, None
    if isinstance(s, Queue):
        c = int(s.servers)
        if c == 1:
            return _KIND_FIXED, (1.0,)
        if c >= ntot:
            return _KIND_DELAY, None
        return _KIND_LD, tuple(float(i) for i in range(1, c + 1))
    if isinstance(s, LoadDependent):
        a = [float(x) for x in s.rate_multipliers][: max(1, ntot)]
        if all(x == a[0] for x in a):
            return _KIND_FIXED, (a[0],)
        if len(a) >= ntot and all(a[i] == i + 1 for i in range(ntot)):
            return _KIND_DELAY, None
        return _KIND_LD, tuple(a)
    raise UnsupportedModelError(f"station {s.name!r}: unknown kind {s.kind!r}")


def _check_classes(net: Network, D, Z, N):
    for c, cls in enumerate(net.classes):
        if isinstance(cls, Closed) and N[c] > 0 and D[c].sum() + Z[c] <= 0:
            raise InvalidValueError(
                f"class {cls.name!r}: all demands and the think time are zero, "
                "so the throughput is unbounded"
            )


def _check_options(tol, max_iter):
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not (
        math.isfinite(tol) and tol > 0
    ):
        raise InvalidValueError(f"tol must be a finite positive number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InvalidValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")


# ---------------------------------------------------------------------------
# exact closed multi-class MVA: the lattice kernel
# ---------------------------------------------------------------------------

@njit
def _ld_resid(d, q_prev, p_prev, a, L):
    """Residence time per cycle at a load-dependent station (arrival
    theorem; Reiser & Lavenberg 1980; Bolch et al. 2006, eq. 8.35 and, for
    c servers, eq. 8.43):

        R = sum_{j>=1} j d / a(j) p(j-1 | n - e_c)
          = d / a_L (1 + Q(n - e_c))
            + d sum_{i=0}^{L-1} (i+1) (1/a(i+1) - 1/a_L) p(i | n - e_c)

    with a(j) = a_L for j >= L; ``a[i]`` is a(i+1)."""
    aL = a[L - 1]
    r = d / aL * (1.0 + q_prev)
    for i in range(L - 1):
        r += d * (i + 1) * (1.0 / a[i] - 1.0 / aL) * p_prev[i]
    return r


@njit
def _exact_kernel(D, kind, ldpos, ld_st, mult, nmult, Z, N, want_curve):
    """Exact multi-class MVA over the population lattice 0 <= n <= N.

    Lattice points are numbered in C order (class C-1 fastest); n - e_c is
    ``idx - stride[c]``, so a single pass visits every point after all its
    predecessors.  Without ``want_curve`` only a window of ``stride[0] + 1``
    points is kept (a ring buffer).

    Load-dependent stations: the marginals p_k(j | n), j >= 1, follow the
    positive-term recursion p_k(j|n) = (1/a(j)) sum_c D_ck X_c(n)
    p_k(j-1 | n-e_c) (Bolch et al. 2006, eq. 8.37), while p_k(0 | n) is NOT
    taken as one minus the rest (the unstable step) but as
    p_k(0|n) = p_k(0|n-e_c) X_c(n) / X_c^{-k}(n), from
    p_k(0|n) = G_{-k}(n)/G(n) and X_c(n) = G(n-e_c)/G(n), where -k is the
    network without station k (Casale 2008; Casale & Serazzi 2005).  The
    complement networks are solved in lockstep: subnetwork ``s`` (a bit
    mask over the M load-dependent stations) needs s minus one bit, which
    has a smaller number, so masks are visited in increasing order.

    Returns X (rows, C), R (rows, C, K) residence per cycle, P0
    (rows, M) for the full network and F (rows, C, K), the residence per
    unit of demand a class-c job has at station k (the per-visit time over
    the service time; defined also where class c never goes: the
    arrival-theorem value); rows = all lattice points with ``want_curve``,
    else just N.  For a class with n_c = 0, R is what one arriving job of
    that class would see (arrival theorem at n).
    """
    C, K = D.shape
    M = ld_st.shape[0]
    Lmax = mult.shape[1]
    stride = np.ones(C, np.int64)
    for c in range(C - 2, -1, -1):
        stride[c] = stride[c + 1] * (N[c + 1] + 1)
    L = stride[0] * (N[0] + 1)
    W = L if want_curve else min(L, stride[0] + 1)
    nm = 1 << M
    full = nm - 1
    Qr = np.zeros((nm, W, K))
    Pr = np.zeros((nm, W, max(M, 1), Lmax))
    Xs = np.zeros((nm, C))
    R = np.zeros((C, K))
    rows = L if want_curve else 1
    Xo = np.zeros((rows, C))
    Ro = np.zeros((rows, C, K))
    Fo = np.ones((rows, C, K))
    Po = np.ones((rows, max(M, 1)))
    n = np.zeros(C, np.int64)
    prev = np.zeros(C, np.int64)
    for idx in range(L):
        if idx > 0:
            c = C - 1
            while True:
                n[c] += 1
                if n[c] <= N[c]:
                    break
                n[c] = 0
                c -= 1
        slot = idx % W
        c0 = -1
        for c in range(C):
            if n[c] > 0:
                prev[c] = (idx - stride[c]) % W
                if c0 < 0:
                    c0 = c
        for s in range(nm):
            if idx == 0:
                for k in range(K):
                    Qr[s, slot, k] = 0.0
                for i in range(M):
                    Pr[s, slot, i, 0] = 1.0
                    for j in range(1, Lmax):
                        Pr[s, slot, i, j] = 0.0
                for c in range(C):
                    Xs[s, c] = 0.0
                continue
            for c in range(C):
                if n[c] == 0:
                    Xs[s, c] = 0.0
                    continue
                pc = prev[c]
                tot = Z[c]
                for k in range(K):
                    d = D[c, k]
                    r = 0.0
                    if d > 0.0:
                        kk = kind[k]
                        if kk == 0:
                            r = d
                        elif kk == 1:
                            r = d * (1.0 + Qr[s, pc, k])
                        else:
                            i = ldpos[k]
                            if (s >> i) & 1:
                                r = _ld_resid(d, Qr[s, pc, k], Pr[s, pc, i], mult[i], nmult[i])
                    R[c, k] = r
                    tot += r
                # tot = 0 only in a subnetwork where class c has nowhere to
                # be: such states have G = 0 and are never used (see p0)
                Xs[s, c] = n[c] / tot if tot > 0.0 else np.inf
            for k in range(K):
                q = 0.0
                for c in range(C):
                    if n[c] > 0 and R[c, k] > 0.0:
                        q += Xs[s, c] * R[c, k]
                Qr[s, slot, k] = q
            for i in range(M):
                if not (s >> i) & 1:
                    continue
                k = ld_st[i]
                for j in range(1, nmult[i]):
                    acc = 0.0
                    for c in range(C):
                        if n[c] > 0 and D[c, k] > 0.0:
                            acc += D[c, k] * Xs[s, c] * Pr[s, prev[c], i, j - 1]
                    Pr[s, slot, i, j] = acc / mult[i, j - 1]
                sm = s & ~(1 << i)
                # a class present at n with nowhere to go but station i:
                # station i is never empty (G_{-i}(n) = 0)
                trapped = False
                for c in range(C):
                    if n[c] > 0 and Xs[sm, c] == np.inf:
                        trapped = True
                if trapped:
                    Pr[s, slot, i, 0] = 0.0
                else:
                    Pr[s, slot, i, 0] = Pr[s, prev[c0], i, 0] * Xs[s, c0] / Xs[sm, c0]
        if want_curve or idx == L - 1:
            row = idx if want_curve else 0
            # classes absent at n: what an arriving job would see
            for c in range(C):
                if n[c] > 0:
                    continue
                for k in range(K):
                    d = D[c, k]
                    r = 0.0
                    if d > 0.0:
                        kk = kind[k]
                        if kk == 0:
                            r = d
                        elif kk == 1:
                            r = d * (1.0 + Qr[full, slot, k])
                        else:
                            i = ldpos[k]
                            r = _ld_resid(d, Qr[full, slot, k], Pr[full, slot, i], mult[i],
                                          nmult[i])
                    R[c, k] = r
            for c in range(C):
                Xo[row, c] = Xs[full, c]
                for k in range(K):
                    Ro[row, c, k] = R[c, k]
            for i in range(M):
                Po[row, i] = Pr[full, slot, i, 0]
            # residence per unit of demand a class-c job would have at every
            # station, visited or not (arrival theorem at n - e_c, or at n
            # for a class absent at n)
            for c in range(C):
                src = prev[c] if n[c] > 0 else slot
                for k in range(K):
                    kk = kind[k]
                    f = 1.0
                    if kk == 1:
                        f = 1.0 + Qr[full, src, k]
                    elif kk != 0:
                        i = ldpos[k]
                        f = _ld_resid(1.0, Qr[full, src, k], Pr[full, src, i], mult[i],
                                      nmult[i])
                    Fo[row, c, k] = f
    return Xo, Ro, Po, Fo


def _closed_arrays(net: Network, D, Z, N, solver: str):
    """Station kinds and packed multipliers for the lattice kernel."""
    ntot = int(sum(N))
    K = D.shape[1]
    kind = np.zeros(K, np.int64)
    ldpos = np.full(K, -1, np.int64)
    Dk = np.array(D, dtype=float)
    ld_st: list[int] = []
    mults: list[Any] = []
    # a 2-D array reduced over axis 0: an array (numpy's stub also allows a scalar)
    used = cast(np.ndarray, (Dk > 0).any(axis=0))
    for k, s in enumerate(net.stations):
        kd, a = _shape(s, bool(used[k]), ntot + 1)
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


def _lattice_size(N) -> int:
    out = 1
    for n in N:
        out *= int(n) + 1
    return out


def _closed_exact_arrays(net: Network, D, Z, N, curve: bool):
    """Run the lattice kernel; return (X, R, P0, kind, ld_st, Dk)."""
    Dk, kind, ldpos, ld_st, mult, nmult = _closed_arrays(net, D, Z, N, "exact MVA")
    M = len(ld_st)
    Lsize = _lattice_size(N)
    if M and (2 ** M) * Lsize > _MAX_LD_WORK:
        names = ", ".join(repr(net.stations[k].name) for k in ld_st)
        raise UnsupportedModelError(
            f"exact multi-class MVA with {M} multi-server/load-dependent stations ({names}) "
            f"solves 2^{M} complement networks over {Lsize} population vectors, more than "
            f"{_MAX_LD_WORK:.0e}: use method='schweitzer' or 'linearizer'"
        )
    C, K = Dk.shape
    window = Lsize if curve else min(Lsize, Lsize // (N[0] + 1) + 1) if C else 1
    floats = (2 ** M) * window * (K + M * mult.shape[1] if M else K)
    if curve:
        floats += Lsize * C * (2 * K + 1)
    if Lsize > _MAX_POINTS or floats > _MAX_FLOATS:
        pops = ", ".join(f"{c.name}={n}" for c, n in zip(net.classes, N, strict=True))
        raise UnsupportedModelError(
            f"exact multi-class MVA over populations ({pops}) visits {Lsize:.3g} population "
            f"vectors and stores {floats:.3g} numbers (limits {_MAX_POINTS:.0e} and "
            f"{_MAX_FLOATS:.0e}{', curve=True stores every point' if curve else ''}): "
            "use method='schweitzer' or 'linearizer'"
        )
    Nv = np.asarray(N, dtype=np.int64)
    if M == 0:
        mult = np.ones((0, 1))
        nmult = np.zeros(0, np.int64)
    X, R, P0, F = _exact_kernel(
        Dk, kind, ldpos, ld_st, mult, nmult, np.asarray(Z, dtype=float), Nv, bool(curve)
    )
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
        kd, a = _shape(s, True, ntot + 1)
        if kd == _KIND_FIXED:
            out[k] = 1.0 / a[0]
    return out


def _divisors(net) -> np.ndarray:
    """Per station divisor of X D in the utilisation: servers for a queue,
    the constant rate a of a constant-rate load-dependent station, else 1."""
    out = np.ones(len(net.stations))
    for k, s in enumerate(net.stations):
        if isinstance(s, Queue):
            out[k] = s.servers
        elif isinstance(s, LoadDependent):
            a = s.rate_multipliers
            if all(x == a[0] for x in a):
                out[k] = float(a[0])
    return out


def _utilisation(net, X, D, P0row, ld_st):
    """Per class utilisation (classes, stations): X_c D_ck / c for queues,
    X_c D_ck for delays (the mean number busy); for a load-dependent
    station 1 - P(empty), split among classes in proportion to X_c D_ck."""
    U = X[:, None] * D / _divisors(net)[None, :]
    for i, k in enumerate(ld_st):
        if isinstance(net.stations[k], LoadDependent):
            w = U[:, k]
            tot = w.sum()
            U[:, k] = (1.0 - P0row[i]) * w / tot if tot > 0 else 0.0
    return U


def _result(net, method, X, Rres, U, notes, info, curve=None, visit_time=None):
    """Assemble a Result from class throughputs X (C,), residence times per
    cycle Rres (C, K) and utilisations U (C, K).  ``visit_time`` (C, K) is
    the per-visit response time a class would have where it never goes
    (the arrival-theorem value S_ck (1 + Q_k(N - e_c)) at a single server;
    Reiser & Lavenberg 1980); without it, the service time."""
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    Q = X[:, None] * Rres
    Xk = X[:, None] * V
    zero = S if visit_time is None else visit_time
    with np.errstate(divide="ignore", invalid="ignore"):
        Rk = np.where(V > 0, Rres / np.where(V > 0, V, 1.0), zero)
    Rc = Rres.sum(axis=1)
    return Result(
        method=method,
        network=net,
        class_throughput=X,
        class_response_time=Rc,
        station_throughput=Xk,
        station_queue_length=Q,
        station_response_time=Rk,
        station_utilization=U,
        notes=tuple(notes),
        curve=curve,
        info=info,
    )


# ---------------------------------------------------------------------------
# the lattice object (curve=True)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Lattice:
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

def _closed_exact(net: Network, curve: bool) -> Result:
    C = len(net.classes)
    D = np.asarray(net.demands, dtype=float)
    Z = np.array([float(c.think_time) for c in net.classes])
    N = [int(c.population) for c in net.classes]
    _check_capacities(net, sum(N), "exact multi-class MVA")
    _check_classes(net, D, Z, N)
    notes = _ps_notes(net)
    X, R, P0, kind, ld_st, _, F = _closed_exact_arrays(net, D, Z, N, curve)
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


def _open_parts(net: Network, D, lam, ld_ok: bool, closed_D=None):
    """Open-class load per station and the residence factor r_k = Q_k/rho_k.

    Returns (rho (K,), factor (K,), p0 (K,) or None, inflate (K,)).  For a
    single-server queue the factor is 1/(1 - rho) (Lazowska et al. 1984,
    sec. 7.3: R_ck = D_ck / (1 - U_k)); for a delay 1; for a multi-server or
    load-dependent station the total number present is the birth-death
    chain of load rho (Bolch et al. 2006, eq. 6.6), split among classes in
    proportion to their load (BCMP PS).
    """
    K = D.shape[1]
    rho = lam @ D
    factor = np.ones(K)
    p0 = np.ones(K)
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay):
            continue
        single = (isinstance(s, Queue) and s.servers == 1) or (
            isinstance(s, LoadDependent)
            and all(float(x) == float(s.rate_multipliers[0]) for x in s.rate_multipliers)
        )
        if single:
            a = 1.0 if isinstance(s, Queue) else float(s.rate_multipliers[0])
            u = rho[k] / a
            if u >= 1:
                raise UnstableError(
                    f"station {s.name!r} is unstable: open load rho = sum_c lambda_c D_ck"
                    f"{'' if a == 1 else ' / a'} = {u:.6g} >= 1",
                    station=s.name,
                    rho=float(u),
                )
            factor[k] = 1.0 / (a * (1.0 - u))
            p0[k] = 1.0 - u
            continue
        if closed_D is not None and np.any(closed_D[:, k] > 0) and rho[k] > 0:
            raise UnsupportedModelError(
                f"station {s.name!r}: a multi-server/load-dependent station loaded by both "
                f"open (rho = {rho[k]:.6g}) and closed classes is not supported by the "
                "mixed MVA solver: use method='sim'"
            )
        mult = tuple(range(1, s.servers + 1)) if isinstance(s, Queue) else s.rate_multipliers
        if rho[k] > 0:
            q, p0k = _open_ld_station(float(rho[k]), 1.0, mult, s.name)
            factor[k] = q / rho[k]
            p0[k] = p0k
        else:
            factor[k] = 1.0 / float(mult[0])
    return rho, factor, p0


def _open_exact(net: Network) -> Result:
    _check_capacities(net, None, "the open product-form solver")
    D = np.asarray(net.demands, dtype=float)
    lam = np.array([float(c.arrival_rate) for c in net.classes])
    notes = _ps_notes(net)
    rho, factor, p0 = _open_parts(net, D, lam, True)
    Rres = D * factor[None, :]
    U = lam[:, None] * D
    for k, s in enumerate(net.stations):
        if isinstance(s, Queue):
            U[:, k] /= s.servers
        elif isinstance(s, LoadDependent):
            U[:, k] = (1 - p0[k]) * U[:, k] / rho[k] if rho[k] > 0 else 0.0
    info = {"algorithm": "BCMP open product form"}
    S = np.asarray(net.service_times, dtype=float)
    return _result(net, "exact", lam, Rres, U, notes, info,
                   visit_time=S * factor[None, :])


def _mixed_exact(net: Network) -> Result:
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
    rho, factor, p0 = _open_parts(net, D[oi], lam[oi], False, closed_D=Dc)
    # closed classes see demands inflated by 1/(1 - U_open) at single-server
    # queues (Lazowska et al. 1984, sec. 7.4.3; Bolch et al. 2006, sec. 8.2)
    inflate = np.ones(K)
    for k, s in enumerate(net.stations):
        if isinstance(s, Delay):
            continue
        if rho[k] > 0 and np.any(Dc[:, k] > 0):
            inflate[k] = 1.0 / (1.0 - rho[k] / _single_rate(s))
    closed_net = Network(net.stations, tuple(net.classes[i] for i in ci), name=net.name)
    Zc = np.array([float(net.classes[i].think_time) for i in ci])
    Nc = [int(net.classes[i].population) for i in ci]
    _check_classes(closed_net, Dc, Zc, Nc)
    Xc_, Rc_, P0c, kind, ld_st, _, Fc_ = _closed_exact_arrays(
        closed_net, Dc * inflate[None, :], Zc, Nc, False
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
        elif isinstance(s, LoadDependent) and rho[k] > 0:
            U[oi, k] = (1 - p0[k]) * U[oi, k] / rho[k]
    U[ci] = Ucl
    info = {"algorithm": "mixed MVA (open load inflates closed demands)",
            "population": tuple(Nc)}
    return _result(net, "exact", X, Rres, U, notes, info, visit_time=Tv)


def _single_rate(s) -> float:
    if isinstance(s, LoadDependent):
        return float(s.rate_multipliers[0])
    return 1.0


def solve_exact(net: Network, *, curve: bool = False) -> Result:
    """Exact product-form solution of a multi-class network
    (``method="exact"``; :func:`qmodels.mva.mva` sends every network with
    more than one class here).

    Parameters
    ----------
    net : Network
        Closed, open or mixed classes; delay, queueing (any number of
        servers) and load-dependent stations.
    curve : bool
        Closed networks only: also return the figures at every population
        vector 0 <= n <= N as a :class:`Lattice` in ``result.curve``.

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

    Cost O(K C prod_c (N_c + 1)), memory O(K prod_{c>1} (N_c + 1)).
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
    QSP p. 142: two classes, two stations, one job each.

    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("cpu"), qm.Queue("disk")],
    ...     [qm.Closed("A", 1, demands={"cpu": 1, "disk": 3}),
    ...      qm.Closed("B", 1, demands={"cpu": 2, "disk": 4})])
    >>> r = solve_exact(net)
    >>> round(r.X["A"] * 19, 9), round(r.X["B"] * 19, 9)
    (3.0, 2.0)
    """
    _require_numeric(net, "exact MVA")
    if net.is_closed:
        return _closed_exact(net, curve)
    if curve:
        raise UnsupportedModelError(
            "curve=True needs a closed network (the lattice is over closed populations)"
        )
    if net.is_open:
        return _open_exact(net)
    return _mixed_exact(net)


# ---------------------------------------------------------------------------
# approximate MVA: Schweitzer-Bard and Linearizer
# ---------------------------------------------------------------------------

@njit
def _core_kernel(D, is_delay, Z, n, F, Q, tol, max_iter):
    """Fixed point of approximate MVA at population n (floats).

    Q_jk(n - e_c) is estimated as (n_j - [j = c]) (Q_jk(n)/n_j + F_jck)
    (Chandy & Neuse 1982, the "core"; F = 0 is the Schweitzer-Bard
    estimate (n_c - 1)/n_c Q_ck(n), Schweitzer 1979, Bard 1979).  Then
    R_ck = D_ck (1 + sum_j Q_jk(n - e_c)) (delay: D_ck),
    X_c = n_c / (Z_c + sum_k R_ck), Q_ck = X_c R_ck.  Classes are updated
    one after the other with the newest Q (a Gauss-Seidel sweep: same fixed
    point, fewer sweeps).  Stops when a sweep changes no Q_ck by more than
    tol max(n_c, 1).  ``Q`` is updated in place.  Returns (X, R,
    sweeps, converged).
    """
    C, K = D.shape
    G = np.zeros((C, K))
    for c in range(C):
        for k in range(K):
            g = 0.0
            for j in range(C):
                m = n[j] - (1.0 if j == c else 0.0)
                if n[j] > 0 and m > 0:
                    g += m * F[j, c, k]
            G[c, k] = g
    X = np.zeros(C)
    R = np.zeros((C, K))
    Qt = np.zeros(K)
    for k in range(K):
        t = 0.0
        for c in range(C):
            t += Q[c, k]
        Qt[k] = t
    it = 0
    converged = False
    while it < max_iter:
        it += 1
        err = 0.0
        for c in range(C):
            inv = 1.0 / n[c] if n[c] > 0 else 0.0
            tot = Z[c]
            for k in range(K):
                d = D[c, k]
                r = 0.0
                if d != 0.0:
                    if is_delay[k]:
                        r = d
                    else:
                        a = Qt[k] - Q[c, k] * inv + G[c, k]
                        if a < 0.0:
                            a = 0.0
                        r = d * (1.0 + a)
                R[c, k] = r
                tot += r
            x = n[c] / tot if n[c] > 0 else 0.0
            X[c] = x
            scale = n[c] if n[c] > 1.0 else 1.0
            for k in range(K):
                q = x * R[c, k]
                e = abs(q - Q[c, k])
                if e > err * scale:
                    err = e / scale
                Qt[k] += q - Q[c, k]
                Q[c, k] = q
        if err <= tol:
            converged = True
            break
    return X, R, it, converged


def _amva_prepare(net: Network, solver: str):
    """Expanded demand matrix for the approximations: each c-server queue
    becomes a single server of demand D/c plus a delay of demand D (c-1)/c
    (Seidmann, Schweitzer & Shalev-Oren 1987).  Returns (Dx, is_delay, owner,
    Z, N, notes) where ``owner[j]`` is the original station of column j."""
    _require_numeric(net, solver)
    if not net.is_closed:
        raise UnsupportedModelError(
            f"{solver} handles closed classes only; this network has open classes "
            f"({', '.join(c.name for c in net.open_classes)}): use method='exact'"
        )
    D = np.asarray(net.demands, dtype=float)
    Z = np.array([float(c.think_time) for c in net.classes])
    N = np.array([int(c.population) for c in net.classes], dtype=float)
    ntot = int(N.sum())
    _check_capacities(net, ntot, solver)
    _check_classes(net, D, Z, N)
    notes = _ps_notes(net)
    src, scale, is_delay = [], [], []
    # a 2-D array reduced over axis 0: an array (numpy's stub also allows a scalar)
    used = cast(np.ndarray, (D > 0).any(axis=0))
    for k, s in enumerate(net.stations):
        # c >= N servers never queue (at most N - 1 others are present when
        # a job arrives): exactly a delay, the same rule as qmodels.mva and
        # qmodels.batch (the exact lattice above looks one job further for
        # population-0 classes)
        kd, a = _shape(s, bool(used[k]), max(ntot, 1))
        if kd == _KIND_DELAY:
            src.append(k)
            scale.append(1.0)
            is_delay.append(True)
        elif kd == _KIND_FIXED:
            src.append(k)
            scale.append(1.0 / a[0])
            is_delay.append(False)
        else:
            c = len(a)
            if not all(a[i] == i + 1 for i in range(c)):
                raise UnsupportedModelError(
                    f"station {s.name!r}: load-dependent rates {s.rate_multipliers} are not "
                    f"those of a multi-server queue; {solver} approximates only c-server "
                    "queues: use method='exact'"
                )
            src += [k, k]
            scale += [1.0 / c, (c - 1) / c]
            is_delay += [False, True]
            notes.append(
                f"station {s.name!r} ({c} servers) approximated as in Seidmann, Schweitzer "
                f"& Shalev-Oren (1987): one server of demand D/{c} plus a delay of "
                f"demand D*{c - 1}/{c}"
            )
    owner = np.array(src, np.int64)
    Dx = D[:, owner] * np.array(scale)[None, :]
    return Dx, np.array(is_delay, dtype=np.bool_), owner, Z, N, notes, np.array(scale)


def _amva_visit_time(net, Q, F, n, is_delay, owner, scale):
    """Per-visit response time S_ck sum_x scale_x (1 + A_cx) over the
    columns x of station k, with A_cx the estimate of sum_j Q_jx(N - e_c)
    that :func:`_core_kernel` uses (0 at delay columns): defined for every
    class and station, also where the class never goes (the arrival-theorem
    convention of the exact solvers)."""
    C, Kx = Q.shape
    Qt = Q.sum(axis=0)
    T = np.zeros((C, len(net.stations)))
    S = np.asarray(net.service_times, dtype=float)
    for c in range(C):
        inv = 1.0 / n[c] if n[c] > 0 else 0.0
        for x in range(Kx):
            if is_delay[x]:
                f = 1.0
            else:
                g = sum((n[j] - (1.0 if j == c else 0.0)) * F[j, c, x] for j in range(C)
                        if n[j] > 0 and n[j] - (1.0 if j == c else 0.0) > 0)
                f = 1.0 + max(Qt[x] - Q[c, x] * inv + g, 0.0)
            T[c, owner[x]] += S[c, owner[x]] * scale[x] * f
    return T



def _amva_init(Dx, n):
    """Initial estimate: each class spread evenly over the stations it
    visits (Chandy & Neuse 1982, step 1)."""
    C, K = Dx.shape
    Q = np.zeros((C, K))
    for c in range(C):
        used = Dx[c] > 0
        m = used.sum()
        if m and n[c] > 0:
            Q[c, used] = n[c] / m
    return Q


def _amva_result(net, method, Dx, owner, X, R, notes, info, visit_time=None):
    P = np.zeros((len(owner), len(net.stations)))
    P[np.arange(len(owner)), owner] = 1.0
    Rres = R @ P
    D = np.asarray(net.demands, dtype=float)
    U = _utilisation(net, X, D, np.ones(0), np.zeros(0, np.int64))
    return _result(net, method, X, Rres, U, notes, info, visit_time=visit_time)


def _warn_unconverged(solver, max_iter, info):
    warnings.warn(
        f"{solver} stopped at max_iter={max_iter} before reaching tol; "
        "the answer is approximate beyond its method",
        ConvergenceWarning,
        stacklevel=3,
    )
    info["converged"] = False


def schweitzer(net: Network, *, tol: float = 1e-8, max_iter: int = 10000) -> Result:
    """Schweitzer-Bard approximate MVA for closed multi-class networks
    (``method="schweitzer"``).

    Parameters
    ----------
    net : Network
        Closed classes; delay, single-server and c-server queues.
    tol : float
        Stop when max_ck |Q_ck(new) - Q_ck(old)| / N_c <= tol.
    max_iter : int
        Iteration limit; reaching it emits
        :class:`~qmodels.errors.ConvergenceWarning` and sets
        ``info["converged"] = False``.

    Returns
    -------
    Result
        method ``"schweitzer"``; ``info["iterations"]``.

    Notes
    -----
    The exact recursion needs Q_k(n - e_c) at every smaller population;
    Schweitzer's estimate replaces it by the figures at N itself,
    Q_jk(N - e_c) = Q_jk(N) for j != c and (N_c - 1)/N_c Q_ck(N) for j = c
    (Schweitzer 1979; Bard 1979; Lazowska et al. 1984, sec. 7.4.2.2,
    Algorithm 7.2), and iterates R_ck = D_ck (1 + sum_j Q_jk(N - e_c)),
    X_c = N_c/(Z_c + sum_k R_ck), Q_ck = X_c R_ck to a fixed point.  Cost
    O(C K) per iteration.

    Multi-server queues: a c-server station of demand D is replaced by one
    server of demand D/c in series with a delay of demand D (c - 1)/c
    (Seidmann, Schweitzer & Shalev-Oren 1987); exact for one job and in
    saturation.  The result says so in ``notes``.  General load-dependent
    rates raise UnsupportedModelError.

    References
    ----------
    P. Schweitzer, "Approximate analysis of multiclass closed networks of
    queues", Proc. Int. Conf. Stochastic Control and Optimization,
    Amsterdam 1979.
    Y. Bard, "Some extensions to multiclass queueing network analysis",
    Proc. 4th Int. Symp. on Modelling and Performance Evaluation of Computer
    Systems, 1979.
    A. Seidmann, P. Schweitzer, S. Shalev-Oren, "Computerized closed
    queueing network models of flexible manufacturing systems", Large
    Scale Systems 12:91-107, 1987.
    """
    _check_options(tol, max_iter)
    Dx, is_delay, owner, Z, N, notes, scale = _amva_prepare(net, "Schweitzer MVA")
    C, Kx = Dx.shape
    Q = _amva_init(Dx, N)
    F = np.zeros((C, C, Kx))
    X, R, it, conv = _core_kernel(Dx, is_delay, Z, N, F, Q, float(tol), int(max_iter))
    info = {"algorithm": "Schweitzer-Bard approximate MVA", "iterations": int(it),
            "converged": bool(conv), "tol": float(tol)}
    if not conv:
        _warn_unconverged("Schweitzer MVA", max_iter, info)
    T = _amva_visit_time(net, Q, F, N, is_delay, owner, scale)
    return _amva_result(net, "schweitzer", Dx, owner, X, R, notes, info, visit_time=T)


def linearizer(net: Network, *, tol: float = 1e-8, max_iter: int = 10000,
               passes: int = 3) -> Result:
    """Linearizer approximate MVA for closed multi-class networks
    (``method="linearizer"``).

    Parameters
    ----------
    net : Network
        Closed classes; delay, single-server and c-server queues.
    tol : float
        Tolerance of each inner fixed point (as in :func:`schweitzer`).
    max_iter : int
        Iteration limit of each inner fixed point; reaching it emits
        :class:`~qmodels.errors.ConvergenceWarning` and sets
        ``info["converged"] = False``.
    passes : int
        Number of refinements of the fractional deviations F (Chandy &
        Neuse use a small fixed number; 3 by default).

    Returns
    -------
    Result
        method ``"linearizer"``; ``info["iterations"]`` counts inner
        iterations over all fixed points, ``info["passes"]`` the passes.

    Notes
    -----
    Linearizer (Chandy & Neuse 1982) refines Schweitzer's estimate by
    assuming that the fractional deviation

        F_jck = Q_jk(N - e_c)/(N - e_c)_j - Q_jk(N)/N_j

    is the same at N and at N - e_c, so that
    Q_jk(N - e_c) = (N - e_c)_j (Q_jk(N)/N_j + F_jck).  Each pass solves
    the core fixed point (see :func:`schweitzer`) at N and at every N - e_c
    with the current F, then updates F from those solutions; a final core
    solution at N gives the answer.  Cost O(C^2 K) per pass and inner
    iteration.  Multi-server queues as in :func:`schweitzer` (Seidmann et
    al. 1987), with a note.

    References
    ----------
    K. M. Chandy, D. Neuse, "Linearizer: a heuristic algorithm for queueing
    network models of computing systems", CACM 25(2):126-134, 1982.
    """
    _check_options(tol, max_iter)
    if isinstance(passes, bool) or not isinstance(passes, (int, np.integer)) or passes < 1:
        raise InvalidValueError(f"passes must be an integer >= 1, got {passes!r}")
    Dx, is_delay, owner, Z, N, notes, scale = _amva_prepare(net, "Linearizer")
    C, Kx = Dx.shape
    F = np.zeros((C, C, Kx))
    Q0 = _amva_init(Dx, N)
    Nm = [N - np.eye(C)[c] for c in range(C)]
    Qm = [_amva_init(Dx, np.maximum(Nm[c], 0)) for c in range(C)]
    total = 0
    conv_all = True
    tol, max_iter = float(tol), int(max_iter)
    for _ in range(int(passes)):
        _, _, it, conv = _core_kernel(Dx, is_delay, Z, N, F, Q0, tol, max_iter)
        total += it
        conv_all &= conv
        for c in range(C):
            if N[c] < 1:
                continue
            _, _, it, conv = _core_kernel(Dx, is_delay, Z, Nm[c], F, Qm[c], tol, max_iter)
            total += it
            conv_all &= conv
        Fn = np.zeros_like(F)
        for c in range(C):
            if N[c] < 1:
                continue
            for j in range(C):
                if N[j] > 0 and Nm[c][j] > 0:
                    Fn[j, c, :] = Qm[c][j] / Nm[c][j] - Q0[j] / N[j]
        F = Fn
    X, R, it, conv = _core_kernel(Dx, is_delay, Z, N, F, Q0, tol, max_iter)
    total += it
    conv_all &= conv
    info = {"algorithm": "Linearizer (Chandy-Neuse) approximate MVA",
            "iterations": int(total), "passes": int(passes),
            "converged": bool(conv_all), "tol": tol}
    if not conv_all:
        _warn_unconverged("Linearizer", max_iter, info)
    T = _amva_visit_time(net, Q0, F, N, is_delay, owner, scale)
    return _amva_result(net, "linearizer", Dx, owner, X, R, notes, info, visit_time=T)


# ---------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------

def _register():
    from .solvers import register

    register("schweitzer", schweitzer,
             "Schweitzer-Bard approximate MVA (closed, multi-class; Seidmann multi-server)")
    register("linearizer", linearizer,
             "Linearizer (Chandy-Neuse) approximate MVA (closed, multi-class)")


_register()
