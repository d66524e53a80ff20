"""Multigrid over the population lattice, for the large closed chains of
:func:`qmodels.analytic.ctmc.ctmc`: BiCGSTAB preconditioned by one V-cycle
of aggregation multigrid whose aggregates come from the *states*, not from
the matrix.

Why.  On a closed phase-type network the ILU(0)-preconditioned BiCGSTAB
(:mod:`._ilu0`) needs more iterations as the population grows (the
three-tier chain of ``benchmarks.bench_ctmc --ph``: 107 at 40 users,
174,000 states; 183 at 60 users, 583,400), because its slow modes are
smooth over the lattice of counts and no incomplete factorisation carries
them.  A coarse grid does: the same solves took 16 and 22 iterations
with the hierarchy below, 1.45 s against the D-ILU BiCGSTAB's 1.96 s at 40
users and 6.3 s against 11.2 s at 60 (one core, the solve of the pinned
system alone, hierarchy set-up included).

The hierarchy (:func:`coarsening`).  A state of the compiled build is a
row of counts, one group of columns per station (its jobs by class and
phase).  Each level lumps states that differ little:

1. first the phases: one station's group of columns at a time, the widest
   first, is replaced by its total, so that states differing only in the
   phases at that station become one aggregate (a coarsening by the
   group's phase count, 2 to 4 on the benchmark models);
2. then the counts: two stations' totals (k, k+1, cyclically) are halved
   together, so that neighbouring points of the lattice pair up (halving
   one count alone lumps nothing on a closed chain, whose counts sum to the
   population).

A step that lumps fewer than 10 % of the states is combined with the next
one; the levels stop at :data:`COARSEST` aggregates, which a complete
sparse LU solves.  Lumping all phases in one step (14x on the three-tier
chain) gave 28 iterations at 40 users against 14 for the one-station-at-a-
time steps: unsmoothed aggregation needs gentle coarsening (Vanek, Mandel
& Brezina, Computing 56(3), 1996, on aggregates and their size).

The operators.  Level l+1's matrix is the Galerkin product A_{l+1} = R A_l P
with R the aggregation (sum over an aggregate) and P the tentative
prolongator, piecewise constant with weights: on the finest level the
state's mean holding time 1/q_i, the unknowns' shape within an aggregate
on a chain whose phases mix fast (their stationary probabilities are in
proportion to the time spent in them), and 1 on the coarser levels.  The
pinned system A (Q^T without one state's row and column: a nonsingular
M-matrix whose columns sum to at least 0; :mod:`._ctmc_solve`) keeps both
properties under R A P with positive weights: off-diagonal entries <= 0,
column sums sum_{j in J} w_j (column sum of A)_j >= 0, so every level is a
nonsingular M-matrix (irreducible, one column strictly dominant) and has
an ILU(0) (Meijerink & van der Vorst, Math. Comp. 31(137), 1977).  This
is the aggregation multigrid of Horton & Leutenegger (ACM SIGMETRICS 1994)
and De Sterck, Manteuffel, McCormick et al. (SIAM J. Sci. Comput. 30(5),
2008) made linear (fixed weights), used as a preconditioner (Saad,
*Iterative Methods for Sparse Linear Systems*, 2nd ed. 2003, sec. 13.6 on
algebraic multigrid and sec. 9.3 on preconditioned Krylov methods).

The cycle (:func:`_vcycle`): on each level above the coarsest, r
restricted to the coarser level (z = 0: no smoothing on the way down), the
coarser level solved by the same cycle, its correction prolonged, z = P
z_c, and one smoothing step z += LU^-1 (r - A z) (ILU(0)); the coarsest
level by its complete LU (SuperLU, Li, ACM TOMS 31(3), 2005): a V(0,1)
cycle.  A smoothing step on the way down as well, z = LU^-1 r and its
residual restricted, doubles each level's work for a few iterations
fewer: on the finest level the three-tier chain at 40 users took 16
iterations without it against 15 with it (1.45 s against 1.79 s); on the
coarser levels, at 10^6 states (``benchmarks.bench_ctmc --ph``), the
three-tier chain took 21 iterations without it against 19 (the solve 5.4-5.5
s against 5.8 s of CPU) and the two-queue chain 18 against 17 (3.3 against
3.5 s).  The
Krylov method is BiCGSTAB right-preconditioned by the cycle (van der
Vorst, SIAM J. Sci. Stat. Comput. 13(2), 1992; Saad 2003, alg. 7.7),
stopped where its recursive residual is at most rtol ||b|| or, earlier,
where the iterate's balance residual max |pi Q| is 1e-4 of what the
caller accepts (:func:`mg_bicgstab`); the caller checks the answer
(max |pi Q|, :func:`._ctmc_solve.finish`): on a stiff pinned system,
whose unknowns span many orders of magnitude, the true residual stalls
near 1e-11 ||b|| while max |pi Q| is far within the acceptance, and
restarts there only cost iterations (29 against 15 on the chain above).
The cycle's matrices and factors are held in single precision
(:data:`CYCLE_DTYPE`).  The coarse levels of the pinned system are made
from the Galerkin products of the unpinned chain, which the choice of the
pin (:func:`probable_state`) needs anyway (:func:`pinned_levels`).

Assumptions: the states are the compiled build's rows of counts whose
stations keep no order of their jobs (``ordered`` all False: the columns
of an order-keeping station hold codes, not counts); numba is installed
(in plain Python the kernels would be far slower than the ILU(0) solve
they replace); the hierarchy must fit the memory budget
(:func:`hierarchy_bytes`).  Elsewhere :func:`mg_bicgstab` is not called or
returns None, and the caller's other solvers answer.
"""

from __future__ import annotations

import numpy as np

from .._jit import HAVE_NUMBA, jitable, lazyjit

#: from this many states of a closed chain the lattice multigrid is the
#: first solver (the pinned three-tier solve: at 73,900 unknowns it took
#: 0.61 s and the D-ILU solve 0.60 s, at 116,900 0.68 s and 0.99 s)
MG_STATES = 100_000
#: the levels stop at this many aggregates (solved by a complete LU)
COARSEST = 3000
#: the most aggregates the coarsest level may keep where the lattice stops
#: coarsening before COARSEST (else no multigrid)
COARSE_MOST = 4 * COARSEST
#: a coarsening step is taken alone when it lumps at least this fraction
#: of the states away (else it is combined with the next)
STEP_GAIN = 0.1
#: the precision of the cycle's matrices and ILU(0) factors: single.  The
#: cycle only preconditions (BiCGSTAB's products, residuals and vectors are
#: double, and every answer is checked), and its passes over the matrices
#: are bound by memory: 4-byte values for 8 cut the cycle from 81 to 68 ms
#: at 1,001,001 states, the same 17 iterations (the two-queue chain of
#: ``benchmarks.bench_ctmc --ph`` at 500 users: the multigrid's solve 3.7
#: s against 4.1 s in double; the answers' X differed by 1e-13)
CYCLE_DTYPE = np.float32
#: the most BiCGSTAB iterations (each two cycles); the three-tier chains
#: took 16 (40 users) and 22 (60 users)
MG_MAXITER = 200
#: bytes of the hierarchy per nonzero of the pinned matrix (the finest
#: ILU(0)'s values, the coarser levels' matrices and factors: their
#: nonzeros summed to 0.6 of the finest level's on the three-tier chain at
#: 40 users, counted as 1.0 at 28 bytes each) and per state (BiCGSTAB's
#: and the cycle's vectors): upper estimates
BYTES_NNZ = 8 + 28
BYTES_STATE = 8 * 16


def coarsening(states: np.ndarray, off, width, coarsest: int | None = None) -> list:
    """The aggregation maps of the levels: ``maps[0][i]`` the level-1
    aggregate of state i (a row of ``states``), ``maps[l][a]`` the level
    l+1 aggregate of level-l aggregate a; empty when the states do not
    coarsen (see the module docstring for the steps).  ``off`` and
    ``width`` give each station's columns; the levels stop at ``coarsest``
    aggregates (default :data:`COARSEST`)."""
    coarsest = COARSEST if coarsest is None else coarsest
    # a copy the steps below change in place (counts fit the build's int32)
    key = np.array(states, dtype=np.int32 if states.dtype == np.int32 else np.int64)
    groups = [list(range(int(o), int(o) + int(w))) for o, w in zip(off, width) if int(w) > 0]
    merged = [len(g) == 1 for g in groups]
    order = sorted((k for k in range(len(groups)) if len(groups[k]) > 1),
                   key=lambda k: -len(groups[k]))
    K = len(groups)
    maps: list = []
    n = key.shape[0]
    halving = 0
    while n > coarsest:
        cand = key
        lumped = False
        for _attempt in range(K + len(order) + 1):
            if order:
                k = order.pop(0)
                cand = _merge(cand, groups[k])
                merged[k] = True
            else:
                if K < 2:
                    break
                k1, k2 = halving % K, (halving + 1) % K
                halving += 1
                for k in (k1, k2):
                    if not merged[k]:
                        cand = _merge(cand, groups[k])
                        merged[k] = True
                cand[:, groups[k1][0]] //= 2
                cand[:, groups[k2][0]] //= 2
            uniq, agg = _lump(cand)
            if len(uniq) <= (1.0 - STEP_GAIN) * n:
                lumped = True
                break
        if not lumped:
            break
        maps.append(agg)
        key = uniq
        n = len(uniq)
    # a lattice that stops coarsening well above COARSEST would leave a
    # coarsest level too large for its complete LU: no multigrid there
    return maps if n <= COARSE_MOST else []


def _merge(key: np.ndarray, cols: list) -> np.ndarray:
    """``key`` with the columns ``cols`` replaced by their total (in the
    first, 0 in the others), in place."""
    for c in cols[1:]:
        key[:, cols[0]] += key[:, c]
        key[:, c] = 0
    return key


def _lump(key: np.ndarray):
    """(distinct rows, each row's index among them), the rows in the order
    of their codes (mixed radix over the columns' spans, one product of
    the rows with the radices: a pass over them, where a column at a time
    took one each)."""
    span = key.max(axis=0).astype(np.int64) + 1
    if float(np.prod(span.astype(float))) < 2.0**62:
        radix = np.ones(len(span), dtype=np.int64)
        for c in range(len(span) - 2, -1, -1):
            radix[c] = radix[c + 1] * span[c + 1]
        code = key.astype(np.int64, copy=False) @ radix
        _, first, agg = np.unique(code, return_index=True, return_inverse=True)
        return key[first], agg.ravel().astype(np.int64)
    uniq, agg = np.unique(key, axis=0, return_inverse=True)
    return uniq, agg.ravel().astype(np.int64)


def restrict(maps: list, keep: np.ndarray) -> list:
    """The maps for the states ``keep`` (indices of the states the maps
    were made for): aggregates left empty are dropped and the rest
    renumbered, level by level."""
    out = []
    idx = np.asarray(keep)
    for agg in maps:
        used, new = np.unique(agg[idx], return_inverse=True)
        out.append(new.ravel().astype(np.int64))
        idx = used
    return out


def unpinned_levels(Q, maps, q=None) -> list | None:
    """The Galerkin products of the transposed generator Q^T over the maps:
    ``[(indptr, indices, data), ...]`` (CSR) for levels 1 .. L, made with
    the mean holding times 1/q_i as the finest weights and 1 on the coarser
    levels (so each level's columns still sum to 0: a transposed
    generator); None where a state has no way out.  Q is CSC (its arrays
    those of Q^T in CSR).  :func:`probable_state` solves the coarsest, and
    :func:`pinned_levels` makes the pinned system's levels from them."""
    q = -Q.diagonal()
    if not np.all(q > 0):
        return None
    ip, ix, data, w = Q.indptr, Q.indices, Q.data, 1.0 / q
    out = []
    for agg in maps:
        nc = int(agg.max()) + 1
        ip, ix, data = _galerkin(_unsigned(ip), _unsigned(ix), data, agg, w, nc)
        out.append((ip, ix, data))
        w = np.ones(nc)
    return out


def probable_state(Q, maps, levels: list | None = None, q=None) -> int | None:
    """A state the chain makes probable, to pin the solve at: the aggregated
    chain's stationary vector on the coarsest level (the last of
    ``levels``, :func:`unpinned_levels`, made here if not given: a
    transposed generator, solved by a complete LU with one balance
    equation replaced by sum(y) = 1), prolonged to the states (x_i = y_a /
    q_i, a the coarsest aggregate of state i) and its largest entry taken;
    None where the maps are empty or the solve fails.  On the three-tier
    chain at 52 users it picked a state of probability 0.32 of the most
    probable (0.4 s), where the smallest exit rate pins one of 3e-9 and the
    multigrid took 25 iterations instead of 16; on the two-queue chain of
    640,801 states, 0.058 (21 iterations, 22 at the smallest exit rate).
    Q is CSC (its arrays those of Q^T in CSR); ``q`` as for
    :func:`unpinned_levels`."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import splu

    if not maps:
        return None
    q = -Q.diagonal() if q is None else q
    if levels is None:
        levels = unpinned_levels(Q, maps, q)
    if levels is None:
        return None
    ip, ix, data = levels[-1]
    nc = len(ip) - 1
    C = sp.csr_matrix((data, ix, ip), shape=(nc, nc))
    C = sp.vstack([C[:-1], sp.csr_matrix(np.ones((1, nc)))]).tocsc()
    rhs = np.zeros(nc)
    rhs[-1] = 1.0
    try:
        with np.errstate(all="ignore"):
            y = splu(C, permc_spec="COLAMD").solve(rhs)
    except RuntimeError:
        return None
    if not np.all(np.isfinite(y)):
        return None
    for agg in reversed(maps):
        y = y[agg]
    return int(np.argmax(y / q))


def pinned_levels(Q, maps, levels: list, p: int, b, q=None) -> list:
    """The Galerkin products of the system pinned at state ``p`` (Q^T
    without row and column p, :func:`._ctmc_solve.pinned_system`) over the
    maps restricted to the other states (:func:`restrict`; ``b`` its
    right-hand side, the rates out of p), made from the
    unpinned ones (:func:`unpinned_levels`) rather than afresh: R and P are
    linear, so level l's pinned matrix is the unpinned one minus p's row
    aggregated, r_l (r_1[b] = sum_{j in b} Q^T[p, j] / q_j), from the row
    of p's aggregate a_l, minus p's column aggregated, c_l (c_1[a] =
    sum_{i in a} Q^T[i, p] / q_p), from its column, plus the corner
    Q^T[p, p] / q_p = -1 (in both r_l and c_l: taken away twice, so the
    correction's corner is +1, subtracted); an aggregate left empty (p alone
    in it) is dropped, as :func:`restrict` drops it.  Entries are sums with
    p's share taken away, so an entry near 0 may keep a rounding residue
    (about 1e-16 of p's share): the levels only precondition, and every
    answer is checked (max |pi Q|).  On the two-queue chain of 1,001,001
    states (``benchmarks.bench_ctmc --ph``, 500 users) this took 0.13 s of
    CPU against 0.50 s for the Galerkin products of the pinned system made
    afresh (the unpinned ones, made once for the pin, 0.48 s).  ``q`` as
    for :func:`unpinned_levels`."""
    import scipy.sparse as sp

    q = -Q.diagonal() if q is None else q
    wp = 1.0 / q[p]
    lo, hi = Q.indptr[p], Q.indptr[p + 1]
    # row p of Q^T (column p of Q, CSC) weighted by 1/q_j, and row p of Q
    # (column p of Q^T) weighted by 1/q_p
    row = np.zeros(Q.shape[0])
    row[Q.indices[lo:hi]] = Q.data[lo:hi] / q[Q.indices[lo:hi]]
    # row p of Q: the pinned system's b = -Q[p, rest], Q[p, p] = -q_p put back
    colp = np.insert(-np.asarray(b, dtype=float), p, -q[p]) * wp
    sizes = np.ones(Q.shape[0], dtype=np.int64)
    a = p
    out = []
    for agg, (ip, ix, data) in zip(maps, levels, strict=True):
        nc = len(ip) - 1
        row = np.bincount(agg, weights=row, minlength=nc)
        colp = np.bincount(agg, weights=colp, minlength=nc)
        sizes = np.bincount(agg, weights=sizes, minlength=nc).astype(np.int64)
        a = int(agg[a])
        nzr = np.flatnonzero(row)
        nzc = np.flatnonzero(colp)
        corr = sp.csr_matrix(
            (np.concatenate((row[nzr], colp[nzc], [1.0])),
             (np.concatenate((np.full(len(nzr), a), nzc, [a])),
              np.concatenate((nzr, np.full(len(nzc), a), [a])))), shape=(nc, nc))
        M = sp.csr_matrix((data, ix, ip), shape=(nc, nc)) - corr
        if sizes[a] == 1:                       # p alone: the aggregate goes
            keep = np.concatenate((np.arange(a), np.arange(a + 1, nc)))
            M = M[keep][:, keep].tocsr()
        M.sort_indices()
        out.append((M.indptr, M.indices, M.data))
    return out


def hierarchy_bytes(A) -> int:
    """An upper estimate of the bytes :func:`mg_bicgstab` adds to A's own."""
    return BYTES_NNZ * A.nnz + BYTES_STATE * A.shape[0]


class _Level:
    """One level of the hierarchy: its matrix (CSR arrays), ILU(0) factors,
    map to the next level's aggregates and prolongation weights."""

    __slots__ = ("ip", "ix", "data", "lu", "diag", "agg", "w", "nc", "u")

    def __init__(self, ip, ix, data, lu, diag, agg, w, nc):
        self.ip, self.ix, self.data = ip, ix, data
        self.lu, self.diag, self.agg, self.w, self.nc = lu, diag, agg, w, nc
        self.u = np.empty(len(ip) - 1)      # the smoothing step's work vector


def _unsigned(a: np.ndarray) -> np.ndarray:
    """An index array viewed as unsigned (same bits; every index here is
    >= 0): numba then leaves out the negative-index wraparound test of
    every ``x[indices[p]]``, which made its product 1.8x slower than
    SciPy's (5.5 against 3.0 ms on 2 million nonzeros)."""
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)


def _setup(A, maps, budget, coarse=None):
    """(levels, coarse LU) or None (a zero pivot, or past the budget);
    ``coarse`` the coarse levels' matrices if made already
    (:func:`pinned_levels`), else the Galerkin products are made here."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import splu

    from . import _ilu0

    levels = []
    ip, ix, data = A.indptr, A.indices, A.data
    w = 1.0 / np.abs(A.diagonal())
    used = 8 * A.nnz
    for agg in maps:
        lu, diag, ok = _ilu0.ilu0(ip, ix, data)
        if not ok:
            return None
        n = len(ip) - 1
        nc = int(agg.max()) + 1
        levels.append(_Level(_unsigned(ip), _unsigned(ix), data.astype(CYCLE_DTYPE),
                             lu.astype(CYCLE_DTYPE), _unsigned(diag), _unsigned(agg), w, nc))
        if coarse is None:
            ip, ix, data = _galerkin(_unsigned(ip), _unsigned(ix), data, agg, w, nc)
        else:
            ip, ix, data = coarse[len(levels) - 1]
        used += 28 * len(ix) + 8 * 4 * n
        if used > budget:
            return None
        w = np.ones(nc)
    try:
        coarse = splu(sp.csc_matrix(sp.csr_matrix((data, ix, ip), shape=(len(ip) - 1,) * 2)),
                      permc_spec="COLAMD")
    except RuntimeError:        # singular: not an M-matrix after all
        return None
    return levels, coarse


@lazyjit(threshold=0)
def _galerkin(ip, ix, data, agg, w, nc):
    """(indptr, indices, data) of the Galerkin product R A P (CSR, indices
    sorted within each row): R sums over an aggregate (``agg``), P the
    prolongator with weights ``w``, so that entry (I, J) is the sum of
    a_ij w_j over i in I, j in J.  One pass over A's rows, aggregate by
    aggregate, into arrays grown by doubling (a coarse row has at most as
    many entries as its fine rows together).  On the finest level of the
    three-tier chain at 1,005,937 states: 0.36 s, where a first pass
    counting each coarse row's entries and a second filling them took
    0.44 s; 0.28 s with the indices viewed unsigned (:func:`_unsigned`)."""
    n = len(ip) - 1
    start = np.zeros(nc + 1, np.int64)
    for i in range(n):
        start[agg[i] + 1] += 1
    for a in range(nc):
        start[a + 1] += start[a]
    order = np.empty(n, np.int64)
    fill = start[:nc].copy()
    for i in range(n):
        order[fill[agg[i]]] = i
        fill[agg[i]] += 1
    cptr = np.zeros(nc + 1, np.int64)
    cap = max(ip[n] // 2, 16)
    cix = np.empty(cap, np.int64)
    cval = np.empty(cap)
    where = np.full(nc, -1, np.int64)
    c = 0
    for a in range(nc):
        most = 0
        for k in range(start[a], start[a + 1]):
            i = order[k]
            most += ip[i + 1] - ip[i]
        if c + most > cap:
            cap = max(2 * cap, c + most)
            grown = np.empty(cap, np.int64)
            grown[:c] = cix[:c]
            cix = grown
            grownv = np.empty(cap)
            grownv[:c] = cval[:c]
            cval = grownv
        lo = c
        for k in range(start[a], start[a + 1]):
            i = order[k]
            for p in range(ip[i], ip[i + 1]):
                j = ix[p]
                b = agg[j]
                if where[b] < lo:
                    where[b] = c
                    cix[c] = b
                    cval[c] = 0.0
                    c += 1
                cval[where[b]] += data[p] * w[j]
        for k in range(lo + 1, c):          # insertion sort: a row has a few entries
            b, v = cix[k], cval[k]
            m = k - 1
            while m >= lo and cix[m] > b:
                cix[m + 1] = cix[m]
                cval[m + 1] = cval[m]
                m -= 1
            cix[m + 1] = b
            cval[m + 1] = v
        cptr[a + 1] = c
    return cptr, cix[:c].copy(), cval[:c].copy()


@jitable
def _smooth(ip, ix, data, lu, diag, r, z, u):
    """z += LU^-1 (r - A z): the residual's row and the forward substitution
    with L's row in one pass over the row, the backward substitution with
    U adding to z as it goes (z's entries are all read by then)."""
    n = len(r)
    for i in range(n):
        s = r[i]
        for p in range(ip[i], ip[i + 1]):
            s -= data[p] * z[ix[p]]
        for p in range(ip[i], diag[i]):
            s -= lu[p] * u[ix[p]]
        u[i] = s
    for i in range(n - 1, -1, -1):
        s = u[i]
        for p in range(diag[i] + 1, ip[i + 1]):
            s -= lu[p] * u[ix[p]]
        s /= lu[diag[i]]
        u[i] = s
        z[i] += s


@lazyjit(threshold=0)
def _restrict(agg, r, rc):
    """rc = R r: each aggregate's sum of r (``rc`` overwritten).  One pass;
    ``np.bincount`` with weights took 7.8 ms of the 73 ms cycle at 10^6
    states (it checks the labels and converts them first)."""
    for a in range(len(rc)):
        rc[a] = 0.0
    for i in range(len(r)):
        rc[agg[i]] += r[i]


@lazyjit(threshold=0)
def _up(ip, ix, data, lu, diag, r, z, u, agg, w, zc):
    """The coarse correction prolonged, z = P zc (``z`` is overwritten),
    then the smoothing step z += LU^-1 (r - A z)."""
    for i in range(len(z)):
        z[i] = w[i] * zc[agg[i]]
    _smooth(ip, ix, data, lu, diag, r, z, u)


def _vcycle(levels, coarse, r):
    """z = M^-1 r: one V-cycle (module docstring)."""
    rs = [r]
    for lev in levels:
        rc = np.empty(lev.nc)
        _restrict(lev.agg, rs[-1], rc)
        rs.append(rc)
    zc = coarse.solve(rs[-1])
    for lev, r_l in zip(reversed(levels), reversed(rs[:-1])):
        z = np.empty(len(r_l))
        _up(lev.ip, lev.ix, lev.data, lev.lu, lev.diag, r_l, z, lev.u, lev.agg, lev.w, zc)
        zc = z
    return zc


#: fresh starts of BiCGSTAB from its current iterate after a breakdown (an
#: inner product of zero: it happened within 2e-12 of the answer on a
#: chain of 255 states)
RESTARTS = 3
#: the iteration from which each iterate is offered to the caller's
#: acceptance test (one product with Q^T) to stop early
#: (:func:`mg_bicgstab`'s ``accept``)
CHECK_FROM = 4


class _Accepted(Exception):
    """Raised by the iteration's callback with an iterate the caller's test
    accepts: SciPy's BiCGSTAB has no other way to stop."""

    def __init__(self, x):
        super().__init__()
        self.x = x


def mg_bicgstab(A, b, maps, budget: int, x0=None, rtol: float = 1e-14,
                maxiter: int = MG_MAXITER, accept=None, coarse=None):
    """(x, iterations) with A x = b by SciPy's BiCGSTAB right-preconditioned
    by the lattice multigrid (module docstring), stopping where its
    recursive residual is at most ``rtol`` ||b||, or, given ``accept`` (a
    test of an iterate: the caller's own acceptance of an answer with a
    margin, :func:`._ctmc_solve.balance`), from iteration
    :data:`CHECK_FROM` on where ``accept`` passes the iterate; from ``x0``
    if given, else 0; after a breakdown it starts afresh from its iterate
    (at most :data:`RESTARTS` times), and after those or ``maxiter``
    iterations it returns its iterate as it is: the caller checks every
    answer (max |pi Q|).  None where it cannot run (numba missing, no
    coarsening, a zero pivot, past the ``budget`` bytes) or its iterate is
    not finite.  ``coarse``: the coarse levels' matrices if made already
    (:func:`pinned_levels`), else the Galerkin products are made here.

    Why ``accept``: the caller accepts an answer whose max |pi Q| is at
    most 1e-12 x the largest rate and asks for 1e-4 of that.  On the
    two-queue chain of ``benchmarks.bench_ctmc --ph`` at 400 jobs (640,801
    states) the iterates' balance residual fell to 4e-5 of the acceptance
    at iteration 15 and then stagnated near 5e-6 of it from iteration 17,
    while the recursive residual reached ``rtol`` at 20; the answer at 15
    differed from the one at 20 by 3e-11 in sum |d pi|."""
    from scipy.sparse.linalg import LinearOperator, bicgstab

    if not HAVE_NUMBA or not maps or hierarchy_bytes(A) > budget:
        return None
    A = A.tocsr()
    A.sort_indices()
    built = _setup(A, maps, budget, coarse)
    if built is None:
        return None
    levels, coarse = built
    M = LinearOperator(A.shape, matvec=lambda r: _vcycle(levels, coarse, r), dtype=float)
    x = np.zeros(A.shape[0]) if x0 is None else np.array(x0, dtype=float)
    b = np.asarray(b, dtype=float)
    done = [0]

    def count(xk):
        done[0] += 1
        if accept is not None and done[0] >= CHECK_FROM and accept(xk):
            raise _Accepted(xk)

    with np.errstate(all="ignore"):
        for _start in range(RESTARTS + 1):
            try:
                x, info = bicgstab(A, b, x0=x, rtol=rtol, atol=0.0,
                                   maxiter=max(maxiter - done[0], 1), M=M, callback=count)
            except _Accepted as stop:
                x = stop.x
                break
            if info >= 0 or done[0] >= maxiter or not np.all(np.isfinite(x)):
                break               # converged, out of iterations, or lost
            # info < 0: a breakdown; afresh from the iterate
    return (x, done[0]) if np.all(np.isfinite(x)) else None
