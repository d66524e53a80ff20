"""The kernel of exact multi-class MVA: one pass over the population
lattice 0 <= n <= N, with the marginal probabilities of the load-dependent
stations and their complement networks solved in lockstep
(:func:`_exact_kernel`; :mod:`.multiclass` prepares the arrays and builds
the results).

Small lattices run as plain Python, large ones compiled (``lazyjit``); the
pass runs in resumable calls so that a large lattice shows progress
(:mod:`qmodels._progress`) and stops promptly on Ctrl-C.  Every term is
positive: see :func:`_ld_resid` and :func:`_ld_marginals`.
"""

from __future__ import annotations

import numpy as np

from .._jit import jitable, lazyjit
from .._progress import bar as progress_bar

__all__ = ["_exact_kernel"]


@jitable
def _ld_resid(d, p_prev, t_prev, a, L):
    """Residence time per cycle at a load-dependent station (arrival
    theorem; Reiser & Lavenberg 1980; Bolch et al. 2006, eq. 8.35 and, for
    c servers, eq. 8.43), as a sum of positive terms only:

        R = sum_{j>=1} j d / a(j) p(j-1 | n - e_c)
          = d sum_{j=1}^{L-1} j / a(j) p(j-1 | n - e_c)
            + d / a_L (L p(L-1 | n - e_c) + tau1 + tau0)

    with a(j) = a_L for j >= L, ``a[i]`` = a(i+1), ``p_prev[j]`` =
    p(j | n - e_c) for j < L and ``t_prev`` = (tau0, tau1) =
    (sum_{j>=L} p(j), sum_{j>=L} j p(j)) at n - e_c (see
    :func:`_ld_marginals`).  The textbook form d/a_L (1 + Q) + d sum_i
    (i+1)(1/a(i+1) - 1/a_L) p(i) is the same number but cancels when the
    rates span many orders of magnitude (a_L = 1e-200 after 1, 2, 3 gave
    R < 0 and X = inf)."""
    aL = a[L - 1]
    r = 0.0
    for j in range(1, L):
        r += j / a[j - 1] * p_prev[j - 1]
    r += (L * p_prev[L - 1] + t_prev[1] + t_prev[0]) / aL
    return d * r


@jitable
def _residence(D, c, k, kind, ldpos, Qr, Pr, Tr, s, pc, mult, nmult):
    """Residence time per cycle R_ck of class c at station k in subnetwork
    ``s``, from the figures of the lattice point in slot ``pc``: D_ck at a
    delay, D_ck (1 + Q_k) at a fixed-rate queue (Reiser & Lavenberg 1980;
    Lazowska et al. 1984, Algorithm 7.1), :func:`_ld_resid` at a
    load-dependent station present in ``s``, 0 where class c has no demand
    or the station is not in ``s``."""
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
                r = _ld_resid(d, Pr[s, pc, i], Tr[s, pc, i], mult[i], nmult[i])
    return r


@jitable
def _next_point(n, N):
    """Step ``n`` to the next lattice point in C order (class C-1 fastest)."""
    c = n.shape[0] - 1
    while True:
        n[c] += 1
        if n[c] <= N[c]:
            break
        n[c] = 0
        c -= 1


@jitable
def _origin(s, slot, M, Qr, Pr, Tr, Xs):
    """Figures of subnetwork ``s`` at n = 0: empty queues, P(0 jobs) = 1 at
    each of the M load-dependent stations (and empty tails)."""
    K = Qr.shape[2]
    for k in range(K):
        Qr[s, slot, k] = 0.0
    for i in range(M):
        Pr[s, slot, i, 0] = 1.0
        for j in range(1, Pr.shape[3]):
            Pr[s, slot, i, j] = 0.0
        Tr[s, slot, i, 0] = 0.0
        Tr[s, slot, i, 1] = 0.0
    for c in range(Xs.shape[1]):
        Xs[s, c] = 0.0


@jitable
def _mva_step(s, slot, n, prev, D, kind, ldpos, Qr, Pr, Tr, mult, nmult, Z, R, Xs):
    """One MVA step of subnetwork ``s`` at lattice point n (slot ``slot``):
    R_ck(n) from the point n - e_c (slot ``prev[c]``), then
    X_c(n) = n_c / (Z_c + sum_k R_ck(n)) and Q_k(n) = sum_c X_c(n) R_ck(n)."""
    C, K = D.shape
    for c in range(C):
        if n[c] == 0:
            Xs[s, c] = 0.0
            continue
        pc = prev[c]
        tot = Z[c]
        for k in range(K):
            r = _residence(D, c, k, kind, ldpos, Qr, Pr, Tr, s, pc, mult, nmult)
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


@jitable
def _ld_marginals(s, slot, n, prev, c0, D, ld_st, Pr, Tr, Xs, mult, nmult):
    """Marginals p_i(j | n), j < L, of the load-dependent stations of
    subnetwork ``s``: the positive-term recursion for j >= 1 (Bolch et al.
    2006, eq. 8.37), p(j | n) = (1/a(j)) sum_c D_ci X_c(n) p(j-1 | n - e_c),
    and p_i(0 | n) = p_i(0 | n - e_c) X_c(n) / X_c^{-i}(n) (Casale 2008),
    with c = ``c0`` the first class present.  The tail beyond L, where
    a(j) = a_L, is kept as tau0 = sum_{j>=L} p(j) and tau1 = sum_{j>=L} j p(j);
    summing the same recursion over j >= L gives, in positive terms,

        tau0(n) = (1/a_L) sum_c D_ci X_c(n) (p(L-1) + tau0)(n - e_c)
        tau1(n) = (1/a_L) sum_c D_ci X_c(n) (L p(L-1) + tau1 + tau0)(n - e_c)

    A class with X = inf in subnetwork ``s`` has nowhere to go there (G = 0:
    the subnetwork's figures at such n are never used, see p0 below); it is
    left out of the sums, which keeps them finite (inf x 0 would be NaN).
    """
    C = D.shape[0]
    for i in range(ld_st.shape[0]):
        if not (s >> i) & 1:
            continue
        k = ld_st[i]
        L = nmult[i]
        for j in range(1, L):
            acc = 0.0
            for c in range(C):
                if n[c] > 0 and D[c, k] > 0.0 and Xs[s, c] < np.inf:
                    acc += D[c, k] * Xs[s, c] * Pr[s, prev[c], i, j - 1]
            Pr[s, slot, i, j] = acc / mult[i, j - 1]
        t0 = 0.0
        t1 = 0.0
        for c in range(C):
            if n[c] > 0 and D[c, k] > 0.0 and Xs[s, c] < np.inf:
                w = D[c, k] * Xs[s, c]
                pl = Pr[s, prev[c], i, L - 1]
                u0 = Tr[s, prev[c], i, 0]
                t0 += w * (pl + u0)
                t1 += w * (L * pl + Tr[s, prev[c], i, 1] + u0)
        Tr[s, slot, i, 0] = t0 / mult[i, L - 1]
        Tr[s, slot, i, 1] = t1 / mult[i, L - 1]
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


@jitable
def _record(row, slot, M, n, prev, D, kind, ldpos, Qr, Pr, Tr, mult, nmult, R, Xs, Xo, Ro,
            Po, Fo):
    """Store the full network's figures at the current point in output row
    ``row``; for a class absent at n, R is what one arriving job of that
    class would see (arrival theorem at n).  ``Fo`` gets the residence per
    unit of demand of every class at every station, visited or not (arrival
    theorem at n - e_c, or at n for a class absent at n)."""
    C, K = D.shape
    full = Xs.shape[0] - 1
    for c in range(C):
        src = prev[c] if n[c] > 0 else slot
        for k in range(K):
            kk = kind[k]
            f = 1.0
            if kk == 1:
                f = 1.0 + Qr[full, src, k]
            elif kk != 0:
                i = ldpos[k]
                f = _ld_resid(1.0, Pr[full, src, i], Tr[full, src, i], mult[i], nmult[i])
            Fo[row, c, k] = f
    for c in range(C):
        if n[c] > 0:
            continue
        for k in range(K):
            R[c, k] = _residence(D, c, k, kind, ldpos, Qr, Pr, Tr, full, slot, mult, nmult)
    for c in range(C):
        Xo[row, c] = Xs[full, c]
        for k in range(K):
            Ro[row, c, k] = R[c, k]
    for i in range(M):
        Po[row, i] = Pr[full, slot, i, 0]


@lazyjit()
def _lattice_run(D, kind, ldpos, ld_st, mult, nmult, Z, N, stride, want_curve, Qr, Pr, Tr, Xs,
                 R, Xo, Ro, Po, Fo, n, prev, i0, i1):
    """Lattice points i0 <= idx < i1 of :func:`_exact_kernel` (its state in
    the arrays passed: a run split into calls computes the same numbers)."""
    C, K = D.shape
    M = ld_st.shape[0]
    L = stride[0] * (N[0] + 1)
    W = Qr.shape[1]
    nm = 1 << M
    for idx in range(i0, i1):
        if idx > 0:
            _next_point(n, N)
        slot = idx % W
        c0 = -1
        for c in range(C):
            if n[c] > 0:
                prev[c] = (idx - stride[c]) % W
                if c0 < 0:
                    c0 = c
        for s in range(nm):
            if idx == 0:
                _origin(s, slot, M, Qr, Pr, Tr, Xs)
                continue
            _mva_step(s, slot, n, prev, D, kind, ldpos, Qr, Pr, Tr, mult, nmult, Z, R, Xs)
            _ld_marginals(s, slot, n, prev, c0, D, ld_st, Pr, Tr, Xs, mult, nmult)
        if want_curve or idx == L - 1:
            _record(idx if want_curve else 0, slot, M, n, prev, D, kind, ldpos, Qr, Pr, Tr,
                    mult, nmult, R, Xs, Xo, Ro, Po, Fo)


#: loop trips (lattice points x complement networks x classes x stations)
#: per call of the lattice kernel: a fraction of a second compiled, so a
#: large lattice shows progress and stops promptly on Ctrl-C
LATTICE_CHUNK_WORK = 20_000_000


def _exact_kernel(D, kind, ldpos, ld_st, mult, nmult, Z, N, want_curve, progress=False):
    """Exact multi-class MVA over the population lattice 0 <= n <= N.

    Lattice points are numbered in C order (class C-1 fastest); n - e_c is
    ``idx - stride[c]``, so a single pass visits every point after all its
    predecessors.  Without ``want_curve`` only a window of ``stride[0] + 1``
    points is kept (a ring buffer).  The pass runs in calls of
    :func:`_lattice_run` (plain Python for a small lattice, compiled for a
    large one), with a progress bar for a large one (:mod:`qmodels._progress`).

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
    L = int(stride[0] * (N[0] + 1))
    W = L if want_curve else min(L, int(stride[0]) + 1)
    nm = 1 << M
    Qr = np.zeros((nm, W, K))
    Pr = np.zeros((nm, W, max(M, 1), Lmax))
    Tr = np.zeros((nm, W, max(M, 1), 2))
    Xs = np.zeros((nm, C))
    R = np.zeros((C, K))
    rows = L if want_curve else 1
    Xo = np.zeros((rows, C))
    Ro = np.zeros((rows, C, K))
    Po = np.ones((rows, max(M, 1)))
    Fo = np.ones((rows, C, K))
    n = np.zeros(C, np.int64)
    prev = np.zeros(C, np.int64)
    per_point = nm * max(C, 1) * max(K, 1)
    args = (D, kind, ldpos, ld_st, mult, nmult, Z, N, stride, want_curve, Qr, Pr, Tr, Xs, R, Xo,
            Ro, Po, Fo, n, prev)
    # one form for the whole pass: the split into calls changes no number
    run = _lattice_run.py_func if L * per_point < _lattice_run.threshold \
        else _lattice_run.compiled()
    step = max(1, LATTICE_CHUNK_WORK // per_point)
    bar = progress_bar(progress, L, "exact MVA lattice", unit="pt") if L > step else None
    try:
        for i0 in range(0, L, step):
            i1 = min(L, i0 + step)
            run(*args, i0, i1)
            if bar is not None:
                bar.update(i1 - i0)
    finally:
        if bar is not None:
            bar.close()
    return Xo, Ro, Po, Fo
