"""BiCGSTAB preconditioned by the incomplete LU factorisation of zero fill,
ILU(0), compiled: the first solver of a large chain's pinned system
(:mod:`qmodels.analytic._ctmc_solve`).

ILU(0) (Saad, *Iterative Methods for Sparse Linear Systems*, 2nd ed.,
SIAM 2003, sec. 10.3.2, alg. 10.4, the IKJ variant) keeps L and U on A's
own sparsity pattern: for each row i in turn and each k < i in that row,
a_ik <- a_ik / a_kk, then a_ij <- a_ij - a_ik a_kj for the j > k of row k
that row i also holds.  For a nonsingular M-matrix the factorisation
exists with positive pivots (Meijerink & van der Vorst, "An iterative
solution method for linear systems of which the coefficient matrix is a
symmetric M-matrix", Math. Comp. 31(137), 1977; for the nonsymmetric case
Varga, Saff & Mehrmann, "Incomplete factorizations of matrices and
connections with H-matrices", SIAM J. Numer. Anal. 17(6), 1980); minus the
pinned balance equations is one (Stewart, *Introduction to the Numerical
Solution of Markov Chains*, Princeton 1994, ch. 2), so A's factors exist
(with negative pivots); a zero or non-finite pivot (rounding) is reported
and the caller falls back to the Jacobi preconditioner.  The
factors cost one copy of A's values and a pointer per row, and applying
them (a forward and a backward substitution) about two products with A.

BiCGSTAB is van der Vorst's ("Bi-CGSTAB: a fast and smoothly converging
variant of Bi-CG", SIAM J. Sci. Stat. Comput. 13(2), 1992), right
preconditioned (Saad 2003, alg. 7.7 applied to A M^-1, x = M^-1 u), with
the vector updates of one iteration fused in one loop: scipy's version
makes a temporary array per vector operation, which on a chain of 10^5 to
10^6 states costs as much as the products with A.  It stops where the
recursively updated residual ||r|| falls to ``rtol`` ||b||; the caller
checks the answer's own residual (max |pi Q|) all the same.

The same compiled BiCGSTAB with the diagonal alone (Jacobi) and with
ILU(0), on the pinned systems of the three-tier model of
``benchmarks.bench_ctmc`` (``python -m benchmarks.bench_ctmc --precond``,
load 0.6): at N = 30 (73,900 unknowns) 317 against 82 iterations, 1.89
against 0.49 s CPU; at N = 40 (174,000) 479 against 107, 7.55 against
2.21 s (3.4-3.9x).  In a scratch run of the same comparison on network 17
of ``priority-closed-starved-det`` at Erlang-4 (492,803 unknowns): 322
against 63 iterations.  scipy's SuperLU incomplete factorisation
(``spilu``, drop tolerance 1e-2, fill 1) took 21 s just to set up on the
three-tier system at N = 40 (a scratch run).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import jitable, lazyjit


@lazyjit(threshold=0)
def ilu0(indptr, indices, data):
    """(lu, diag, ok): the ILU(0) factors of the CSR matrix (``indptr``,
    ``indices`` sorted within each row, ``data``), L's multipliers below
    and U on and above the diagonal in ``lu`` (A's pattern), ``diag[i]``
    the position of row i's diagonal; ``ok`` False at a missing, zero or
    non-finite pivot."""
    n = len(indptr) - 1
    lu = data.copy()
    diag = np.zeros(n, np.int64)
    where = np.full(n, -1, np.int64)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        for p in range(lo, hi):
            where[indices[p]] = p
        d = -1
        for p in range(lo, hi):
            k = indices[p]
            if k >= i:
                if k == i:
                    d = p
                break
            lu[p] /= lu[diag[k]]
            f = lu[p]
            for q in range(diag[k] + 1, indptr[k + 1]):
                w = where[indices[q]]
                if w >= 0:
                    lu[w] -= f * lu[q]
        for p in range(lo, hi):
            where[indices[p]] = -1
        if d < 0 or lu[d] == 0.0 or not math.isfinite(lu[d]):
            return lu, diag, False
        diag[i] = d
    return lu, diag, True


@jitable
def _substitute(indptr, indices, lu, diag, r, out):
    """out = (L U)^-1 r: forward substitution with the unit lower factor,
    then backward with the upper one."""
    n = len(r)
    for i in range(n):
        s = r[i]
        for p in range(indptr[i], diag[i]):
            s -= lu[p] * out[indices[p]]
        out[i] = s
    for i in range(n - 1, -1, -1):
        s = out[i]
        for p in range(diag[i] + 1, indptr[i + 1]):
            s -= lu[p] * out[indices[p]]
        out[i] = s / lu[diag[i]]


@jitable
def _product(indptr, indices, data, x, out):
    """out = A x, A in CSR."""
    for i in range(len(x)):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * x[indices[p]]
        out[i] = s


@jitable
def _lu_product(indptr, indices, lu, diag, x, w, out):
    """out = L U x with the factors of :func:`ilu0` (L unit lower)."""
    n = len(x)
    for i in range(n):
        s = 0.0
        for p in range(diag[i], indptr[i + 1]):
            s += lu[p] * x[indices[p]]
        w[i] = s
    for i in range(n):
        s = w[i]
        for p in range(indptr[i], diag[i]):
            s += lu[p] * w[indices[p]]
        out[i] = s


@lazyjit(threshold=0)
def bicgstab(indptr, indices, data, lu, diag, b, x, rtol, maxiter):
    """(x, info, iterations): BiCGSTAB on A x = b from ``x`` (updated in
    place), right preconditioned by the factors of :func:`ilu0`; info 0
    converged (||r|| <= rtol ||b||), 1 not within ``maxiter``, -1 broke
    down (an inner product of zero).  (:func:`_bicgstab` with ``kind`` 0.)"""
    return _bicgstab(0, indptr, indices, data, lu, diag, np.empty(0), diag, b, x, rtol,
                     maxiter)


# ---------------------------------------------------------------------------
# D-ILU applied by Eisenstat's trick: the same iterations at half the cost
# ---------------------------------------------------------------------------

@lazyjit(threshold=0)
def dilu(indptr, indices, data):
    """(d, dpos, ok): the pivots of the diagonal incomplete LU (D-ILU) of
    the CSR matrix A = L + D_A + U (``indices`` sorted within each row),
    M = (D + L) D^-1 (D + U) with L and U A's own strict triangles and D
    the diagonal for which M and A have the same diagonal: d_i = a_ii -
    sum_{k<i} a_ik a_ki / d_k over the pairs of A's pattern (Pommerell,
    *Solution of large unsymmetric systems of linear equations*, ETH
    Zurich 1992, sec. 3.3.3; Saad 2003, sec. 10.3.4 on ILU(0) with A's
    off-diagonal values kept); ``dpos[i]`` the position of row i's
    diagonal; ``ok`` False at a missing, zero or non-finite pivot."""
    n = len(indptr) - 1
    d = np.zeros(n)
    dpos = np.full(n, -1, np.int64)
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] >= i:
                if indices[p] == i:
                    dpos[i] = p
                    d[i] = data[p]
                break
        if dpos[i] < 0:
            return d, dpos, False
    for k in range(n):
        dk = d[k]
        if dk == 0.0 or not math.isfinite(dk):
            return d, dpos, False
        for p in range(dpos[k] + 1, indptr[k + 1]):
            j = indices[p]
            # a_jk: below the diagonal of row j (binary search, sorted)
            lo, hi = indptr[j], dpos[j]
            while lo < hi:
                mid = (lo + hi) // 2
                if indices[mid] < k:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < dpos[j] and indices[lo] == k:
                d[j] -= data[lo] * data[p] / dk
    return d, dpos, True


@jitable
def _lower(indptr, indices, data, dpos, d, r, out):
    """out = (D + L)^-1 r (forward substitution over A's strict lower part)."""
    for i in range(len(r)):
        s = r[i]
        for p in range(indptr[i], dpos[i]):
            s -= data[p] * out[indices[p]]
        out[i] = s / d[i]


@jitable
def _upper(indptr, indices, data, dpos, d, r, out):
    """out = (D + U)^-1 r (backward substitution over A's strict upper part)."""
    for i in range(len(r) - 1, -1, -1):
        s = r[i]
        for p in range(dpos[i] + 1, indptr[i + 1]):
            s -= data[p] * out[indices[p]]
        out[i] = s / d[i]


@jitable
def _eisenstat(indptr, indices, data, dpos, d, v, t, w, out):
    """out = M1^-1 A M2^-1 v with M1 = (D + L) D^-1, M2 = D + U: with t =
    M2^-1 v and A = (D + L) + (D + U) + (D_A - 2 D), it is D [t + (D +
    L)^-1 (v + (D_A - 2 D) t)] (Eisenstat, "Efficient implementation of a
    class of preconditioned conjugate gradient methods", SIAM J. Sci.
    Stat. Comput. 2(1), 1981): one backward and one forward substitution,
    each over half of A, where applying M^-1 and A apart costs two
    passes over all of it."""
    _upper(indptr, indices, data, dpos, d, v, t)
    for i in range(len(v)):
        w[i] = v[i] + (data[dpos[i]] - 2.0 * d[i]) * t[i]
    _lower(indptr, indices, data, dpos, d, w, out)
    for i in range(len(v)):
        out[i] = d[i] * (t[i] + out[i])


@jitable
def _true_residual(indptr, indices, data, dpos, d, rh, y):
    """||M1 rh||, the residual of the original system b - A x whose
    preconditioned residual is rh = M1^-1 (b - A x): M1 rh = (D + L) D^-1
    rh."""
    n = len(rh)
    for i in range(n):
        y[i] = rh[i] / d[i]
    tot = 0.0
    for i in range(n):
        s = rh[i]
        for p in range(indptr[i], dpos[i]):
            s += data[p] * y[indices[p]]
        tot += s * s
    return math.sqrt(tot)


@jitable
def _split_start(indptr, indices, data, dpos, d, b, x, bh, u):
    """The split system's right-hand side bh = M1^-1 b = D (D + L)^-1 b
    and start u = M2 x = (D + U) x."""
    _lower(indptr, indices, data, dpos, d, b, bh)
    for i in range(len(b)):
        bh[i] *= d[i]
        s = d[i] * x[i]
        for p in range(dpos[i] + 1, indptr[i + 1]):
            s += data[p] * x[indices[p]]
        u[i] = s


@jitable
def _check(kind, indptr, indices, data, dpos, d, rh, norm, target, goal, work):
    """(done, target): whether the residual ``rh`` (of norm ``norm``)
    means a residual of A x = b within ``goal``: itself for ``kind`` 0;
    for ``kind`` 1 the split system's, and where ``norm`` is below
    ``target`` but the system's own is not within ``goal``, ``target`` is
    lowered in proportion (and by half)."""
    if kind == 0:
        return norm <= goal, target
    if norm > target:
        return False, target
    true = _true_residual(indptr, indices, data, dpos, d, rh, work)
    if true <= goal:
        return True, target
    return False, target * 0.5 * goal / true


@lazyjit(threshold=0)
def bicgstab_dilu(indptr, indices, data, d, dpos, b, x, rtol, maxiter):
    """(x, info, iterations): BiCGSTAB (van der Vorst 1992) on the split
    preconditioned system M1^-1 A M2^-1 u = M1^-1 b, x = M2^-1 u, with
    the D-ILU factors of :func:`dilu` (M = M1 M2) applied by Eisenstat's
    trick (:func:`_eisenstat`); from ``x`` (updated in place); info 0
    converged, 1 not within ``maxiter``, -1 broke down.  It stops where
    the residual of A x = b itself, ||b - A x|| = ||M1 rh|| (rh the
    recursively updated residual of the split system), falls to ``rtol``
    ||b``: checked whenever ||rh|| falls below its own target, which is
    tightened where the two disagree.  The iterations are those of the
    ILU(0)-preconditioned solve to within a few (the three-tier chain of
    ``benchmarks.bench_ctmc`` at 30 users: 78 against 82; a priority
    chain at 10 per class: 46 against 47), each about half the cost."""
    return _bicgstab(1, indptr, indices, data, data, dpos, d, dpos, b, x, rtol, maxiter)


@jitable
def _operator(kind, indptr, indices, data, lu, diag, d, dpos, v, w1, w2, out):
    """out = the preconditioned operator at v: A M^-1 v with the ILU(0)
    factors (``kind`` 0, right preconditioning), M1^-1 A M2^-1 v with the
    D-ILU ones (``kind`` 1, :func:`_eisenstat`)."""
    if kind == 0:
        _substitute(indptr, indices, lu, diag, v, w1)
        _product(indptr, indices, data, w1, out)
    else:
        _eisenstat(indptr, indices, data, dpos, d, v, w1, w2, out)


@jitable
def _bicgstab(kind, indptr, indices, data, lu, diag, d, dpos, b, x, rtol, maxiter):
    """BiCGSTAB (van der Vorst 1992; Saad 2003, alg. 7.7) on the
    preconditioned system op u = bh of :func:`_operator`, x = M^-1 u
    (``kind`` 0: bh = b, M = L U) or M2^-1 u (``kind`` 1: bh = M1^-1 b),
    the vector updates of one iteration fused in one loop; it stops where
    ||b - A x|| <= rtol ||b||: for ``kind`` 0 the recursively updated
    residual is that of A x = b itself, for ``kind`` 1 it is checked by
    :func:`_check`.  Returns (x, info, iterations), x updated in place."""
    n = len(b)
    w1 = np.empty(n)
    w2 = np.empty(n)
    bh = np.empty(n)
    u = np.empty(n)
    if kind == 0:
        for i in range(n):
            bh[i] = b[i]
        _lu_product(indptr, indices, lu, diag, x, w1, u)
    else:
        _split_start(indptr, indices, data, dpos, d, b, x, bh, u)
    r = np.empty(n)
    v = np.zeros(n)
    p = np.zeros(n)
    s = np.empty(n)
    t = np.empty(n)
    _operator(kind, indptr, indices, data, lu, diag, d, dpos, u, w1, w2, t)
    bn = 0.0
    bhn = 0.0
    for i in range(n):
        r[i] = bh[i] - t[i]
        bn += b[i] * b[i]
        bhn += bh[i] * bh[i]
    goal = rtol * math.sqrt(bn)
    target = rtol * math.sqrt(bhn)
    r0 = r.copy()
    rho = 1.0
    alpha = 1.0
    omega = 1.0
    info = 1
    its = maxiter
    for it in range(maxiter):
        rho1 = 0.0
        for i in range(n):
            rho1 += r0[i] * r[i]
        if rho1 == 0.0 or not math.isfinite(rho1):
            info, its = -1, it
            break
        beta = (rho1 / rho) * (alpha / omega) if it > 0 else 0.0
        for i in range(n):
            p[i] = r[i] + beta * (p[i] - omega * v[i])
        _operator(kind, indptr, indices, data, lu, diag, d, dpos, p, w1, w2, v)
        den = 0.0
        for i in range(n):
            den += r0[i] * v[i]
        if den == 0.0 or not math.isfinite(den):
            info, its = -1, it
            break
        alpha = rho1 / den
        sn = 0.0
        for i in range(n):
            s[i] = r[i] - alpha * v[i]
            sn += s[i] * s[i]
        done, target = _check(kind, indptr, indices, data, dpos, d, s, math.sqrt(sn), target,
                              goal, w1)
        if done:
            for i in range(n):
                u[i] += alpha * p[i]
            info, its = 0, it + 1
            break
        _operator(kind, indptr, indices, data, lu, diag, d, dpos, s, w1, w2, t)
        tt = 0.0
        ts = 0.0
        for i in range(n):
            tt += t[i] * t[i]
            ts += t[i] * s[i]
        if tt == 0.0:
            info, its = -1, it
            break
        omega = ts / tt
        rn = 0.0
        for i in range(n):
            u[i] += alpha * p[i] + omega * s[i]
            r[i] = s[i] - omega * t[i]
            rn += r[i] * r[i]
        done, target = _check(kind, indptr, indices, data, dpos, d, r, math.sqrt(rn), target,
                              goal, w1)
        if done:
            info, its = 0, it + 1
            break
        if omega == 0.0:
            info, its = -1, it
            break
        rho = rho1
    if kind == 0:
        _substitute(indptr, indices, lu, diag, u, x)
    else:
        _upper(indptr, indices, data, dpos, d, u, x)
    return x, info, its
