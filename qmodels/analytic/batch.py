"""Batched single-class solves: one call for a whole sweep of parameter sets.

A sweep, a bottleneck map or a calibration evaluates the same kind of
network thousands of times with different numbers.  Here a batch is plain
arrays with a leading batch axis (demands shaped (B, K), think times (B,),
populations) and each solver runs every row in one compiled loop, in
parallel over the rows, instead of B Python calls.

* :func:`mva_batch` -- exact single-class MVA, row for row the same
  numbers as :func:`qmodels.analytic.mva.mva_single` (bit for bit for delay and
  single-server stations; rows with multi-server stations take the same
  log-space convolution route as ``mva_single``).
* :func:`schweitzer_batch` -- Schweitzer-Bard approximate MVA, row for row
  the single-class case of :func:`qmodels.analytic.amva.schweitzer`: bit for
  bit with the default ``multiserver="marginal"`` (c-server queues as
  load-dependent stations, the same fixed point), to rounding with
  ``multiserver="seidmann"``.

Both return a :class:`BatchResult` whose names follow
:mod:`qmodels.results`: ``throughput`` X, ``response_time`` R (per cycle,
excluding think time), ``queue_length`` Q, ``utilization`` U (per server).
"""

from __future__ import annotations

import math
import numbers
import types
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._jit import HAVE_NUMBA, register_jitables, stamp_helpers, with_shipped
from ..errors import ConvergenceWarning, InvalidValueError, PopulationError
from ..results import FrameReport, label_dict, label_of
from ._common import _check_options
from ._kernels import amva_class_sweep, amva_fixed_point, class_start, mva_step
from .amva import _check_multiserver
from .amva_ld import ld_fixed_point

__all__ = ["BatchResult", "mva_batch", "schweitzer_batch"]

#: Below this many inner-loop trips (rows x population x stations) the
#: kernels run as plain Python: no numba import, no compile, no cache load.
LAZY_THRESHOLD = 20_000

prange = range  # numba.prange when compiled (see _compiled)


# ---------------------------------------------------------------------------
# result
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchResult(FrameReport):
    """Figures of a batch of single-class closed networks.

    Attributes
    ----------
    method : str
        ``"exact"`` or ``"schweitzer"``.
    throughput : ndarray (B,)
        X, cycles per second (through the reference station).
    response_time : ndarray (B,)
        R = N/X - Z, time per cycle excluding think time (at N = 0 the
        no-contention value, the sum of the demands).
    queue_length : ndarray (B, K)
        Q, mean number present at each station.
    utilization : ndarray (B, K)
        U, busy fraction of one server: X D / c (a delay station: X D).
    residence_time : ndarray (B, K)
        Q / X, time per cycle spent at each station (D at N = 0).
    population, think_time, demands, servers, delay
        The inputs, broadcast to (B,) and (B, K).
    curve : dict or None
        With ``curve=True``: ``"population"`` (n = 0..Nmax), ``"X"`` and
        ``"R"`` shaped (B, Nmax+1), ``"Q"`` and ``"U"`` shaped
        (B, Nmax+1, K), every row solved for every n up to the largest
        population of the batch.
    iterations, converged : ndarray (B,) or None
        Schweitzer only: iterations per row and whether the row reached
        ``tol`` before ``max_iter``.
    station_names : tuple of str
    """

    method: str
    throughput: np.ndarray
    response_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    residence_time: np.ndarray
    population: np.ndarray
    think_time: np.ndarray
    demands: np.ndarray
    servers: np.ndarray
    delay: np.ndarray
    station_names: tuple
    curve: Any = None
    iterations: Any = None
    converged: Any = None
    #: what each row is: exact (``mva_batch``) or approximate
    #: (``schweitzer_batch``); see :mod:`qmodels.results`
    exactness: str = ""
    assumptions: tuple = ()
    notes: tuple = ()
    warnings: tuple = ()
    error: Any = None

    def __post_init__(self):
        ex, assumed = label_of(self.method, self.exactness, self.assumptions)
        object.__setattr__(self, "exactness", ex)
        object.__setattr__(self, "assumptions", assumed)
        for name in ("throughput", "response_time", "queue_length", "utilization",
                     "residence_time", "population", "think_time", "demands", "servers",
                     "delay", "iterations", "converged"):
            arr = getattr(self, name)
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False
        if self.curve is not None:
            for arr in self.curve.values():
                arr.flags.writeable = False

    X = property(lambda self: self.throughput)
    R = property(lambda self: self.response_time)
    Q = property(lambda self: self.queue_length)
    U = property(lambda self: self.utilization)

    def __len__(self):
        return self.throughput.shape[0]

    def to_frame(self):
        """A pandas DataFrame, one row per configuration: N, Z, X, R, then
        ``D[k]``, ``Q[k]``, ``U[k]`` per station (and ``iterations``,
        ``converged`` for Schweitzer)."""
        import pandas as pd

        data: dict[str, Any] = {"N": self.population, "Z": self.think_time,
                                "X": self.throughput, "R": self.response_time}
        for k, name in enumerate(self.station_names):
            data[f"D[{name}]"] = self.demands[:, k]
        for k, name in enumerate(self.station_names):
            data[f"Q[{name}]"] = self.queue_length[:, k]
        for k, name in enumerate(self.station_names):
            data[f"U[{name}]"] = self.utilization[:, k]
        if self.iterations is not None:
            data["iterations"] = self.iterations
            data["converged"] = self.converged
        frame = pd.DataFrame(data, index=pd.RangeIndex(len(self), name="row"))
        frame.attrs.update(label_dict(self))
        return frame

    def __repr__(self):
        B, K = self.queue_length.shape
        if B == 0:
            return f"BatchResult({self.method}, 0 rows x {K} stations)"
        return (f"BatchResult({self.method}, {B} rows x {K} stations: X in "
                f"[{self.throughput.min():.6g}, {self.throughput.max():.6g}])")


# ---------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------

def _as_float_array(x, what):
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{what} must be an array of numbers, got {x!r}") from None
    return a


def _check_nonneg(a, what, index_names):
    bad = ~np.isfinite(a) | (a < 0)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = ", ".join(f"{n} {i}" for n, i in zip(index_names, idx))
        raise InvalidValueError(
            f"{what}[{', '.join(map(str, idx))}] ({where}) must be a finite non-negative "
            f"number, got {float(a[idx])!r}"
        )


def _check_inputs(demands, think_times, population, servers, delay):
    D = _as_float_array(demands, "demands")
    if D.ndim != 2 or D.shape[1] == 0:
        raise InvalidValueError(
            f"demands must be shaped (B, K) with K >= 1 stations, got shape {D.shape}"
        )
    B, K = D.shape
    _check_nonneg(D, "demands", ("row", "station"))
    Z = _as_float_array(think_times, "think_times")
    if Z.ndim == 0:
        Z = np.full(B, float(Z))
    if Z.shape != (B,):
        raise InvalidValueError(f"think_times must be a number or shaped ({B},), got {Z.shape}")
    _check_nonneg(Z, "think_times", ("row",))

    if isinstance(population, numbers.Integral) and not isinstance(population, bool):
        pop = np.full(B, int(population), dtype=np.int64)
        if population < 0:
            raise PopulationError(f"population must be an integer >= 0, got {population!r}")
    else:
        raw = np.asarray(population, dtype=object)
        if raw.ndim == 0:
            raw = np.full(B, raw.item(), dtype=object)
        if raw.shape != (B,):
            raise PopulationError(
                f"population must be an integer or shaped ({B},), got shape {raw.shape}"
            )
        pop = np.empty(B, dtype=np.int64)
        for b, v in enumerate(raw):
            ok = False
            if isinstance(v, (bool, np.bool_)):
                ok = False
            elif isinstance(v, numbers.Integral):
                ok = v >= 0
            elif isinstance(v, numbers.Real) and math.isfinite(v) and float(v).is_integer():
                ok = v >= 0
            if not ok:
                raise PopulationError(
                    f"population[{b}] must be an integer >= 0, got {v!r}"
                )
            pop[b] = int(v)

    if servers is None:
        c = np.ones((B, K), dtype=np.int64)
    else:
        sv = _as_float_array(servers, "servers")
        try:
            sv = np.broadcast_to(sv, (B, K))
        except ValueError:
            raise InvalidValueError(
                f"servers must be shaped ({K},) or ({B}, {K}), got {sv.shape}"
            ) from None
        bad = ~np.isfinite(sv) | (sv < 1) | (sv != np.floor(sv))
        if bad.any():
            b, k = (int(i) for i in np.argwhere(bad)[0])
            raise InvalidValueError(
                f"servers[{b}, {k}] (row {b}, station {k}) must be an integer >= 1, "
                f"got {float(sv[b, k])!r}"
            )
        c = sv.astype(np.int64)
    if delay is None:
        dl = np.zeros((B, K), dtype=np.bool_)
    else:
        dv = np.asarray(delay)
        if dv.dtype != np.bool_:
            raise InvalidValueError(f"delay must be booleans, got dtype {dv.dtype}")
        try:
            dl = np.array(np.broadcast_to(dv, (B, K)))
        except ValueError:
            raise InvalidValueError(
                f"delay must be shaped ({K},) or ({B}, {K}), got {dv.shape}"
            ) from None
    for b in np.flatnonzero((pop > 0) & (D.sum(axis=1) + Z <= 0)):
        raise InvalidValueError(
            f"row {int(b)}: all demands and the think time are zero, so the throughput "
            "is unbounded"
        )
    return D, Z, pop, np.ascontiguousarray(c), np.ascontiguousarray(dl)


# ---------------------------------------------------------------------------
# compiled kernels (plain Python below LAZY_THRESHOLD)
# ---------------------------------------------------------------------------

_COMPILED: dict[str, Any] = {}


def _compiled(func):
    """``func`` compiled with numba (parallel over rows), once."""
    name = func.__name__
    if name not in _COMPILED:
        import numba

        register_jitables()
        g = dict(func.__globals__)
        g["prange"] = numba.prange
        clone = types.FunctionType(func.__code__, g, name, func.__defaults__, func.__closure__)
        clone.__qualname__ = func.__qualname__
        clone.__module__ = func.__module__
        _COMPILED[name] = with_shipped(stamp_helpers(numba.njit(parallel=True, cache=True)(clone)))
    return _COMPILED[name]


def _run(func, work, *args):
    if work < LAZY_THRESHOLD or not HAVE_NUMBA:
        # an overflow is reported as a typed error afterwards (_check_finite)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return func(*args)
    return _compiled(func)(*args)


def compiled_kernels() -> list:
    """The parallel kernels compiled so far (``qmodels warm-up`` compiles
    them all through :mod:`._probe`)."""
    return list(_COMPILED.values())


def _mva_rows(D, is_delay, Z, nrun, pop, rows, want_curve, nmax,
              Xo, Qo, Xc, Qc):
    """Exact MVA for the listed rows (Reiser & Lavenberg 1980; Lazowska et
    al. 1984, Algorithm 6.1):  R_k(n) = D_k (1 + Q_k(n-1)) (delay: D_k),
    X(n) = n / (Z + sum_k R_k(n)),  Q_k(n) = X(n) R_k(n), for n = 1..nrun_b,
    recording X and Q at n = pop_b.  Each step is :func:`._kernels.mva_step`,
    the step of :func:`qmodels.analytic.mva._mva_fixed_kernel`, so every row
    equals a one-by-one solve bit for bit.  Rows are independent: the
    outer loop runs in parallel."""
    K = D.shape[1]
    for i in prange(rows.shape[0]):
        b = rows[i]
        Q = np.zeros(K)
        R = np.zeros(K)
        X = 0.0
        for k in range(K):
            Qo[b, k] = 0.0
        Xo[b] = 0.0
        for n in range(1, nrun[b] + 1):
            X = mva_step(D[b], is_delay[b], Z[b], n, Q, R)
            if n == pop[b]:
                Xo[b] = X
                for k in range(K):
                    Qo[b, k] = Q[k]
            if want_curve:
                Xc[b, n] = X
                for k in range(K):
                    Qc[b, n, k] = Q[k]


def _mva_rows_span(D, is_delay, Z, nrun, pop, rows, want_curve, n0, n1, Qs, Rs,
                   Xo, Qo, Xc, Qc):
    """Steps n = n0..min(n1, nrun_b) of :func:`_mva_rows` for each listed
    row, resuming from ``Qs[b]`` = Q(n0 - 1) (updated in place): the same
    steps in the same order, so the same numbers."""
    K = D.shape[1]
    for i in prange(rows.shape[0]):
        b = rows[i]
        Q = Qs[b]
        R = Rs[b]
        top = min(n1, nrun[b])
        for n in range(n0, top + 1):
            X = mva_step(D[b], is_delay[b], Z[b], n, Q, R)
            if n == pop[b]:
                Xo[b] = X
                for k in range(K):
                    Qo[b, k] = Q[k]
            if want_curve:
                Xc[b, n] = X
                for k in range(K):
                    Qc[b, n, k] = Q[k]


#: Steps (rows x n x stations) of one call of :func:`_mva_rows_span`: a
#: batch past it runs in spans of n so that it returns to Python (where
#: Ctrl-C is seen) within a second (about 0.07 s a span on the 2-core
#: reference machine: 4 rows at N = 2 x 10^7, two stations, in 5.7 s; five
#: times that with the machine five times oversubscribed).
INTERRUPT_WORK = 2_000_000


def _mva_rows_interruptible(D, eff_delay, Z, nrun, pop, rows, curve, nmax, X, Q, Xc, Qc):
    """:func:`_mva_rows` over ``rows``, in one call up to
    :data:`INTERRUPT_WORK` steps, else in spans of populations."""
    K = D.shape[1]
    work = int(nrun[rows].sum()) * K
    if work <= INTERRUPT_WORK:
        _run(_mva_rows, work, D, eff_delay, Z, nrun, pop, rows, bool(curve), nmax, X, Q, Xc, Qc)
        return
    B = D.shape[0]
    Qs = np.zeros((B, K))
    Rs = np.zeros((B, K))
    top = int(nrun[rows].max())
    step = max(1, INTERRUPT_WORK // max(len(rows) * K, 1))
    for n0 in range(1, top + 1, step):
        n1 = min(top, n0 + step - 1)
        _run(_mva_rows_span, (n1 - n0 + 1) * len(rows) * K, D, eff_delay, Z, nrun, pop, rows,
             bool(curve), n0, n1, Qs, Rs, X, Q, Xc, Qc)


def _schweitzer_rows(Dx, is_delay, Z, pop, Q0, tol, max_iter, Xo, Ro, Qo, its, conv):
    """Schweitzer-Bard fixed point for every row (Schweitzer 1979; Bard
    1979; Lazowska et al. 1984, sec. 7.4.2.2, Algorithm 7.2), single class:
    R_k = D_k (1 + (N-1)/N Q_k) (delay: D_k), X = N/(Z + sum_k R_k),
    Q_k = X R_k, until no Q_k moves by more than tol max(N, 1).  Each
    sweep is :func:`._kernels.amva_class_sweep` with G = 0, the class
    update of :func:`qmodels.analytic.amva.schweitzer` (its
    ``_core_kernel``); columns of zero demand (which only ever add exact
    zeros) are skipped.  Rows in parallel."""
    B, K = Dx.shape
    for b in prange(B):
        n = float(pop[b])
        cols = np.empty(K, dtype=np.int64)
        m = 0
        for k in range(K):
            Ro[b, k] = 0.0
            Qo[b, k] = 0.0
            if Dx[b, k] != 0.0:
                cols[m] = k
                m += 1
        d = np.empty(m)
        dly = np.empty(m, dtype=np.bool_)
        Q = np.empty(m)
        Qt = np.empty(m)
        R = np.zeros(m)
        G = np.zeros(m)  # Schweitzer-Bard: no Linearizer correction
        for j in range(m):
            k = cols[j]
            d[j] = Dx[b, k]
            dly[j] = is_delay[b, k]
            Q[j] = Q0[b, k]
        # from the fixed point of one class (``amva.schweitzer``'s start)
        start = np.empty(m)
        if class_start(d, np.ones(m), np.zeros(m), ~dly, Z[b], n, start):
            for j in range(m):
                Q[j] = start[j]
        for j in range(m):
            Qt[j] = Q[j]
        it = 0
        done = False
        x = 0.0
        while it < max_iter:
            it += 1
            x, err = amva_class_sweep(d, dly, Z[b], n, Q, Qt, G, R, 0.0)
            if err <= tol:
                done = True
                break
        Xo[b] = x
        for j in range(m):
            Ro[b, cols[j]] = R[j]
            Qo[b, cols[j]] = Q[j]
        its[b] = it
        conv[b] = done


def _schweitzer_ld_rows(D, kind, is_delay, mult, nmult, has_ld, Z, pop, Q0, tol, max_iter,
                        Xo, Ro, Qo, its, conv):
    """Schweitzer-Bard fixed point for every row with c-server queues as
    load-dependent stations (Akyildiz & Bolch 1988; eqs. (1)-(3) of
    :mod:`qmodels.analytic.amva_ld`): each row runs the fixed point that
    :func:`qmodels.analytic.amva.schweitzer` runs for that row's network,
    one class, one column per station -- :func:`.amva_ld.ld_fixed_point`
    when a column is load-dependent (``kind`` 2, multipliers
    ``mult[b, k, :nmult[b, k]]``), else :func:`._kernels.amva_fixed_point`
    (the choice of ``amva._core``) -- from the same start ``Q0``, and
    reports Q = X R as ``schweitzer``'s result does.  Rows in parallel."""
    B, K = D.shape
    for b in prange(B):
        Db = np.empty((1, K))
        Qb = np.empty((1, K))
        for k in range(K):
            Db[0, k] = D[b, k]
            Qb[0, k] = Q0[b, k]
        Zb = np.empty(1)
        Zb[0] = Z[b]
        nb = np.empty(1)
        nb[0] = float(pop[b])
        F = np.zeros((1, 1, K))  # Schweitzer-Bard: no Linearizer correction
        if not has_ld[b]:
            # from the fixed point of one class, as ``amva.schweitzer`` starts
            # (its ``_fixed_point_start`` with F = 0: p = 1, s = 0)
            start = np.empty(K)
            queue = np.empty(K, dtype=np.bool_)
            for k in range(K):
                queue[k] = kind[b, k] == 1
            if class_start(Db[0], np.ones(K), np.zeros(K), queue, Zb[0], nb[0], start):
                for k in range(K):
                    Qb[0, k] = start[k]
        if has_ld[b]:
            X, R, it, done = ld_fixed_point(Db, kind[b], mult[b], nmult[b], Zb, nb, F, Qb,
                                            tol, max_iter)
        else:
            X, R, it, done = amva_fixed_point(Db, is_delay[b], Zb, nb, F, Qb, tol, max_iter)
        Xo[b] = X[0]
        for k in range(K):
            Ro[b, k] = R[0, k]
            Qo[b, k] = X[0] * R[0, k]
        its[b] = it
        conv[b] = done


# ---------------------------------------------------------------------------
# public solvers
# ---------------------------------------------------------------------------

def _finish(method, D, Z, pop, c, dl, X, Q, names, curve=None, its=None, conv=None):
    B, K = D.shape
    U = X[:, None] * D / np.where(dl, 1.0, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        # sum_k Q_k / X, as mva_single (n/X - Z cancels when Z >> R)
        R = np.where(X > 0, Q.sum(axis=1) / np.where(X > 0, X, 1.0), D.sum(axis=1))
        res = np.where(X[:, None] > 0, Q / np.where(X > 0, X, 1.0)[:, None], D)
    R = np.where(pop > 0, np.maximum(R, 0.0), R)
    if names is None:
        names = tuple(str(k) for k in range(K))
    else:
        names = tuple(str(n) for n in names)
        if len(names) != K:
            raise InvalidValueError(f"station_names has {len(names)} names for {K} stations")
    return BatchResult(method=method, throughput=X, response_time=R, queue_length=Q,
                       utilization=U, residence_time=res, population=pop, think_time=Z,
                       demands=D, servers=c, delay=dl, station_names=names, curve=curve,
                       iterations=its, converged=conv)


def mva_batch(demands, think_times, population, *, servers=None, delay=None,
              curve: bool = False, station_names=None) -> BatchResult:
    """Exact single-class MVA for a batch of B networks with K stations.

    Parameters
    ----------
    demands : array_like (B, K)
        Service demand D = V S of each station, seconds per cycle.
    think_times : float or array_like (B,)
        Think time Z per row (a delay outside the stations).
    population : int or array_like (B,)
        N, the same for the whole batch or one per row (integers >= 0).
    servers : array_like (K,) or (B, K), optional
        Servers per station (default 1).
    delay : array_like of bool (K,) or (B, K), optional
        True where the station is an infinite-server delay.
    curve : bool
        Also return every population n = 0..max(N) for every row
        (``result.curve``).
    station_names : sequence of str, optional
        Column names for :meth:`BatchResult.to_frame`.

    Returns
    -------
    BatchResult
        method ``"exact"``.

    Raises
    ------
    InvalidValueError
        A negative, NaN or infinite demand or think time (naming the row
        and column), servers that are not integers >= 1, bad shapes, a
        row with jobs and no work at all.
    PopulationError
        A population that is not a non-negative integer.

    Notes
    -----
    Rows whose stations are all delays or single servers run the MVA
    recursion (Reiser & Lavenberg, JACM 27(2), 1980; Lazowska et al., QSP
    1984, sec. 6.3, Algorithm 6.1) in one compiled loop over the rows
    (numba, parallel over rows), O(B N K), with exactly the operations of
    :func:`qmodels.analytic.mva.mva_single`, so each row equals the one-by-one
    solve bit for bit.  A c-server station with c >= N is a delay
    (exactly).  Rows with a c-server station, 1 < c < N, need the marginal
    probabilities at that station; they take the stable log-space
    convolution route of ``mva_single`` (Bolch et al. 2006, eq. 8.13), one
    row at a time: slower, to 1e-12 of the one-by-one solve.

    Small batches (fewer than ``LAZY_THRESHOLD`` loop trips) run as plain
    Python; larger ones compile once (cached on disk) and run in parallel.

    Examples
    --------
    >>> r = mva_batch([[0.05, 0.08], [0.05, 0.04]], 0.0, 3)
    >>> r.X.round(4).tolist()   # row 0 by hand: R(3) = .084884 + .184186
    [11.1495, 16.5312]
    """
    D, Z, pop, c, dl = _check_inputs(demands, think_times, population, servers, delay)
    B, K = D.shape
    nmax = int(pop.max()) if B else 0
    nrun = np.full(B, nmax, dtype=np.int64) if curve else pop.copy()
    # station shape as in qmodels.analytic.mva._station_shape, for the run length
    eff_delay = dl | ((c > 1) & (c >= np.maximum(nrun, 1)[:, None]))
    ld = (~eff_delay) & (c > 1)
    ld_rows = np.flatnonzero(ld.any(axis=1))
    fast_rows = np.flatnonzero(~ld.any(axis=1)).astype(np.int64)

    _check_batch_budget(nrun, c, ld, fast_rows, ld_rows, K, curve)
    X = np.zeros(B)
    Q = np.zeros((B, K))
    rows_c = B if curve else 0
    Xc = np.zeros((rows_c, nmax + 1))
    Qc = np.zeros((rows_c, nmax + 1, K))
    if len(fast_rows):
        _mva_rows_interruptible(D, eff_delay, Z, nrun, pop, fast_rows, curve, nmax, X, Q,
                                Xc, Qc)
    if len(ld_rows):
        from .mva import _ld_solution

        for b in ld_rows:
            shapes: list[tuple[str, tuple[float, ...] | None]] = []
            for k in range(K):
                if eff_delay[b, k]:
                    shapes.append(("delay", None))
                elif c[b, k] == 1:
                    shapes.append(("fixed", None))
                else:
                    shapes.append(("ld", tuple(float(i) for i in range(1, c[b, k] + 1))))
            xs, qs, _ = _ld_solution(D[b], shapes, float(Z[b]), int(nrun[b]))
            X[b] = xs[pop[b]]
            Q[b] = qs[pop[b]]
            if curve:
                Xc[b] = xs
                Qc[b] = qs
    _check_finite(X)
    cur = None
    if curve:
        n = np.arange(nmax + 1)
        Uc = Xc[:, :, None] * D[:, None, :] / np.where(dl, 1.0, c)[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            Rc = np.where(Xc > 0, Qc.sum(axis=2) / np.where(Xc > 0, Xc, 1.0),
                          D.sum(axis=1)[:, None])
        Rc[:, 1:] = np.maximum(Rc[:, 1:], 0.0)
        cur = {"population": n, "X": Xc, "R": Rc, "Q": Qc, "U": Uc}
    return _finish("exact", D, Z, pop, c, dl, X, Q, station_names, curve=cur)


def _check_batch_budget(nrun, c, ld, fast_rows, ld_rows, K, curve) -> None:
    """Refuse, before allocating, a batch whose exact recursion would pass
    the limits of :func:`qmodels.analytic.mva.mva_single` (the same work
    model: N K per row, plus the log-space convolution steps of its
    c-server stations), summed over the rows, so that a batch or a sweep
    refuses what ``qmodels solve`` refuses (N = 10^12 ran for hours)."""
    from ._common import _check_size
    from .mva import _LOG_STEP, MAX_FLOATS, MAX_WORK, _complement_costs

    work = float(nrun[fast_rows].astype(float).sum()) * K
    # the batch's own arrays: demands, servers, delay flags, Q and R state
    # per row and station, X and the populations per row
    floats = float(len(nrun)) * (5 * K + 3)
    for b in ld_rows:
        N = int(nrun[b])
        L = [int(x) for x in c[b][ld[b]]]
        work += float(N) * K + _LOG_STEP * min(_complement_costs(N, L))
        floats = max(floats, float(len(nrun)) * (5 * K + 3) + float(N + 1) * (4 + 3 * len(L)))
        if work > MAX_WORK:
            break
    if curve:
        floats += float(len(nrun)) * (int(nrun.max()) + 1) * (2 * K + 3)
    worst = int(np.argmax(nrun)) if len(nrun) else 0
    _check_size(f"exact MVA of a batch of {len(nrun)} row(s) (row {worst}: N = "
                f"{int(nrun[worst]) if len(nrun) else 0})", work, floats, MAX_WORK, MAX_FLOATS)


def _check_finite(X):
    bad = np.flatnonzero(~np.isfinite(X))
    if len(bad):
        raise InvalidValueError(
            f"row {int(bad[0])}: throughput overflows (demands and think time too small "
            "for floating point)"
        )


def _even_start(D, pop):
    """Approximate MVA's start for each row: its N jobs spread evenly over
    the columns with demand (as ``amva._amva_init``)."""
    used = D > 0
    m = used.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(used & (pop > 0)[:, None] & (m > 0)[:, None],
                        (pop / np.where(m > 0, m, 1))[:, None], 0.0)


def _outputs(B, width):
    """The arrays the row kernels fill: X, R, Q, iterations, converged."""
    return (np.zeros(B), np.zeros((B, width)), np.zeros((B, width)),
            np.zeros(B, dtype=np.int64), np.zeros(B, dtype=np.bool_))


def _seidmann_run(D, Z, pop, c, dl, tol, max_iter):
    """(X, Q, iterations, converged) with c-server queues split after
    Seidmann: 2K columns, 2k the queueing part, 2k+1 the delay part (zero
    when absent); zero columns add exact zeros."""
    B, K = D.shape
    ntot = np.maximum(pop, 1)[:, None]
    as_delay = dl | (D == 0) | ((c > 1) & (c >= ntot))
    multi = (~as_delay) & (c > 1)
    Dx = np.zeros((B, 2 * K))
    isd = np.zeros((B, 2 * K), dtype=np.bool_)
    cf = c.astype(float)
    Dx[:, 0::2] = np.where(as_delay, 0.0, np.where(multi, D / cf, D))
    Dx[:, 1::2] = np.where(as_delay, D, np.where(multi, D * (cf - 1) / cf, 0.0))
    isd[:, 1::2] = True
    Q0 = _even_start(Dx, pop)
    X, Rx, Qx, its, conv = _outputs(B, 2 * K)
    work = B * 2 * K * 50
    _run(_schweitzer_rows, work, Dx, isd, Z, pop, Q0, tol, max_iter, X, Rx, Qx, its, conv)
    return X, Qx[:, 0::2] + Qx[:, 1::2], its, conv


def _marginal_run(D, Z, pop, c, dl, tol, max_iter):
    """(X, Q, iterations, converged) with c-server queues as load-dependent
    columns, a(j) = min(j, c): the columns of ``amva._amva_prepare``
    (a station of zero demand, a delay and a c-server queue with c >= N
    are delays, exactly, as in ``amva._shape``) and the start of
    ``amva._amva_init`` (N spread evenly over the stations with demand)."""
    B, K = D.shape
    ntot = np.maximum(pop, 1)[:, None]
    as_delay = dl | (D == 0) | ((c > 1) & (c >= ntot))
    kind = np.where(as_delay, 0, np.where(c > 1, 2, 1)).astype(np.int64)
    ld = kind == 2
    L = int(c[ld].max()) if ld.any() else 1
    j = np.arange(1, L + 1, dtype=float)
    mult = np.where(ld[:, :, None] & (j <= c[:, :, None]), j, 1.0)
    nmult = np.where(ld, c, 0).astype(np.int64)
    Q0 = _even_start(D, pop)
    X, R, Q, its, conv = _outputs(B, K)
    work = B * K * 100
    _run(_schweitzer_ld_rows, work, np.ascontiguousarray(D), kind, kind == 0,
         np.ascontiguousarray(mult), nmult, ld.any(axis=1), Z, pop, Q0, tol, max_iter,
         X, R, Q, its, conv)
    return X, Q, its, conv


def _hold_to_capacity(D, Z, pop, c, dl, X, Q, its, conv, tol, max_iter, multiserver) -> None:
    """Rows whose fixed point loads a station past its capacity (U > 1, an
    unconverged iterate or the estimate near saturation) are solved again
    by :func:`qmodels.analytic.amva.schweitzer`, which holds its fixed point
    to the utilisation law: the batch answers what ``schweitzer`` answers for
    that row's network.  Updates the arrays in place."""
    U = X[:, None] * D / np.where(dl, 1.0, c)
    bad = np.flatnonzero(((U > 1.0 + 1e-12) & ~dl).any(axis=1))
    if not len(bad):
        return
    from ..model.network import Closed, Delay, Network, Queue
    from .amva import schweitzer

    K = D.shape[1]
    for b in bad.tolist():
        st = [Delay(f"s{k}", float(D[b, k])) if dl[b, k]
              else Queue(f"s{k}", float(D[b, k]), servers=int(c[b, k])) for k in range(K)]
        net = Network(st, [Closed("c", int(pop[b]), think_time=float(Z[b]),
                                  visits={f"s{k}": 1 for k in range(K)})])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = schweitzer(net, tol=tol, max_iter=max_iter, multiserver=multiserver)
        X[b] = float(r.class_throughput[0])
        Q[b] = np.asarray(r.station_queue_length[0], float)
        its[b] = int(r.info["iterations"])
        conv[b] = bool(r.info["converged"])


def schweitzer_batch(demands, think_times, population, *, servers=None, delay=None,
                     tol: float = 1e-8, max_iter: int = 10_000, multiserver: str = "marginal",
                     station_names=None) -> BatchResult:
    """Schweitzer-Bard approximate MVA for a batch of single-class networks.

    Parameters
    ----------
    demands, think_times, population, servers, delay, station_names
        As for :func:`mva_batch`.
    tol : float
        A row stops when an iteration moves no Q_k by more than
        tol max(N, 1).
    max_iter : int
        Iteration limit per row; rows that reach it are flagged in
        ``result.converged`` and a :class:`~qmodels.errors.ConvergenceWarning`
        names how many and the first.
    multiserver : {"marginal", "seidmann"}
        How a c-server queue (1 < c < N) is treated, as in
        :func:`qmodels.analytic.amva.schweitzer`: ``"marginal"`` (default)
        as a load-dependent station whose marginal probabilities at N - 1
        are estimated around the approximate mean (Akyildiz & Bolch 1988);
        ``"seidmann"`` as one server of demand D/c plus a delay of demand
        D (c - 1)/c (Seidmann, Schweitzer & Shalev-Oren 1987).

    Returns
    -------
    BatchResult
        method ``"schweitzer"``, with ``iterations`` and ``converged``.

    Raises
    ------
    InvalidValueError, PopulationError
        As for :func:`mva_batch`; also a ``tol``, ``max_iter`` or
        ``multiserver`` that is not allowed.

    Notes
    -----
    Schweitzer's estimate Q_k(N - 1) = (N - 1)/N Q_k(N) (Schweitzer 1979;
    Bard 1979; Lazowska et al., QSP 1984, sec. 7.4.2.2, Algorithm 7.2) turns
    the MVA recursion into a fixed point: R_k = D_k (1 + (N-1)/N Q_k), X =
    N/(Z + sum_k R_k), Q_k = X R_k, iterated from its fixed point found as
    the root of one equation in X (where no column is load-dependent:
    :func:`qmodels.analytic._kernels.class_start`, as ``schweitzer``
    starts), else from Q_k = N / (number of stations with demand).  A
    c-server station with c >= N is a delay (exactly).  With
    ``multiserver="marginal"`` a c-server queue with c < N has R_k = D_k
    sum_j (j / min(j, c)) p_k(j - 1 | N - 1), the load-dependent MVA
    residence time (Reiser & Lavenberg 1980; Bolch et al. 2006, sec. 8.2),
    with p_k(. | N - 1) the two-point distribution around the estimate
    (N-1)/N Q_k (Akyildiz & Bolch 1988; Bolch et al. 2006, sec. 9.1; eqs.
    (1)-(3) of :mod:`qmodels.analytic.amva_ld`); each row runs the very
    fixed point of :func:`qmodels.analytic.amva.schweitzer` (the same
    compiled-or-Python helpers, the same damping and stopping rule), so it
    equals ``schweitzer`` of that row's network bit for bit. With
    ``multiserver="seidmann"`` a c-server station of demand D is one server
    of demand D/c plus a delay of demand D (c-1)/c (Seidmann, Schweitzer &
    Shalev-Oren, Large Scale Systems 12, 1987); its Q is the sum of both
    parts; rows follow ``schweitzer(..., multiserver="seidmann")`` (to
    rounding: the batch adds the parts' Q, ``schweitzer`` their residence
    times).  Rows run in parallel.

    Examples
    --------
    >>> r = schweitzer_batch([[0.05, 0.08]], 0.0, 1)
    >>> r.X.round(6).tolist()   # one job: no queueing, X = 1/(0.05+0.08)
    [7.692308]
    """
    _check_options(tol, max_iter)
    _check_multiserver(multiserver)
    D, Z, pop, c, dl = _check_inputs(demands, think_times, population, servers, delay)
    B = D.shape[0]
    run = _seidmann_run if multiserver == "seidmann" else _marginal_run
    X, Q, its, conv = run(D, Z, pop, c, dl, float(tol), int(max_iter))
    _check_finite(X)
    _hold_to_capacity(D, Z, pop, c, dl, X, Q, its, conv, float(tol), int(max_iter), multiserver)
    if not conv.all():
        bad = np.flatnonzero(~conv)
        warnings.warn(
            f"Schweitzer MVA: {len(bad)} of {B} rows stopped at max_iter={max_iter} before "
            f"reaching tol={tol:g} (first: row {int(bad[0])}); their answers are flagged in "
            "result.converged",
            ConvergenceWarning,
            stacklevel=2,
        )
    return _finish("schweitzer", D, Z, pop, c, dl, X, Q, station_names, its=its, conv=conv)
