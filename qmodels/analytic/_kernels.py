"""Inner steps shared by several compiled kernels of the analytic layer.

Each is a plain Python function marked :func:`qmodels._jit.jitable`: called
from Python (the small problems that ``lazyjit`` and the batch solvers run
uncompiled) it is itself; called from a kernel that numba compiles, numba
compiles it into that kernel (``numba.extending.register_jitable``).  One
copy of each step therefore serves every solver that takes it, and the
solvers that must agree bit for bit (``mva_batch`` with ``mva``,
``schweitzer_batch`` with ``schweitzer``) run the very same operations.
Importing this module does not import numba.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import jitable

__all__ = ["log_add", "mva_step", "amva_class_sweep", "amva_start", "amva_fixed_point",
           "class_start"]


@jitable
def log_add(a, b):
    """log(e^a + e^b) without overflow; -inf + -inf stays -inf:
    max(a, b) + log1p(exp(-|a - b|))."""
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@jitable
def mva_step(D, is_delay, Z, n, Q, R):
    """One step n - 1 -> n of exact single-class MVA (Reiser & Lavenberg
    1980; Lazowska et al. 1984, sec. 6.3, Algorithm 6.1):
    R_k(n) = D_k (1 + Q_k(n-1)) (delay: D_k), X(n) = n / (Z + sum_k R_k(n)),
    Q_k(n) = X(n) R_k(n).  ``Q`` (in: Q(n-1), out: Q(n)) and ``R`` are
    updated in place; returns X(n)."""
    K = D.shape[0]
    tot = Z
    for k in range(K):
        if is_delay[k]:
            R[k] = D[k]
        else:
            R[k] = D[k] * (1.0 + Q[k])
        tot += R[k]
    X = n / tot
    for k in range(K):
        Q[k] = X * R[k]
    return X


@jitable
def amva_class_sweep(d, is_delay, z, n, Q, Qt, G, R, err):
    """Update one class in a sweep of approximate MVA (Chandy & Neuse 1982;
    with G = 0 Schweitzer 1979 and Bard 1979):
    R_k = d_k (1 + max(0, Qt_k - Q_k / n + G_k)) (delay: d_k),
    X = n / (z + sum_k R_k), Q_k = X R_k.

    ``d``, ``is_delay``, ``Q``, ``G`` and ``R`` are the class's rows over the
    stations, ``Qt`` the totals over all classes; ``Q``, ``Qt`` and ``R``
    are updated in place.  ``err`` is the largest change so far in this
    sweep, relative to max(n, 1) of its class; returns (X, err) with the
    class's changes folded in.  A station of zero demand adds exact zeros.
    """
    K = d.shape[0]
    inv = 1.0 / n if n > 0 else 0.0
    tot = z
    for k in range(K):
        dk = d[k]
        r = 0.0
        if dk != 0.0:
            if is_delay[k]:
                r = dk
            else:
                a = Qt[k] - Q[k] * inv + G[k]
                if a < 0.0:
                    a = 0.0
                r = dk * (1.0 + a)
        R[k] = r
        tot += r
    x = n / tot if n > 0 else 0.0
    scale = n if n > 1.0 else 1.0
    for k in range(K):
        q = x * R[k]
        e = abs(q - Q[k])
        if e > err * scale:
            err = e / scale
        Qt[k] += q - Q[k]
        Q[k] = q
    return x, err


@jitable
def amva_start(n, F, Q):
    """(G, Qt) for an approximate-MVA fixed point at population n:
    G_ck = sum_j (n_j - [j = c]) F_jck over the classes present (the
    Linearizer correction of Chandy & Neuse 1982; 0 for Schweitzer's F = 0)
    and Qt_k = sum_c Q_ck."""
    C, K = Q.shape
    G = np.zeros((C, K))
    for c in range(C):
        for k in range(K):
            g = 0.0
            for j in range(C):
                m = n[j] - (1.0 if j == c else 0.0)
                if n[j] > 0 and m > 0:
                    g += m * F[j, c, k]
            G[c, k] = g
    Qt = np.zeros(K)
    for k in range(K):
        t = 0.0
        for c in range(C):
            t += Q[c, k]
        Qt[k] = t
    return G, Qt


@jitable
def amva_fixed_point(D, is_delay, Z, n, F, Q, tol, max_iter):
    """Fixed point of approximate MVA at population n (floats), delay and
    single-server columns only: Gauss-Seidel sweeps of
    :func:`amva_class_sweep` over the classes (Schweitzer 1979 and Bard
    1979 with F = 0; Chandy & Neuse 1982 otherwise) until a sweep changes
    no Q_ck by more than tol max(n_c, 1).  ``Q`` is updated in place.
    Returns (X, R, sweeps, converged).  The body of
    ``amva._core_kernel`` and of the single-server rows of
    ``batch.schweitzer_batch``."""
    C, K = D.shape
    G, Qt = amva_start(n, F, Q)
    X = np.zeros(C)
    R = np.zeros((C, K))
    it = 0
    converged = False
    while it < max_iter:
        it += 1
        err = 0.0
        for c in range(C):
            X[c], err = amva_class_sweep(D[c], is_delay, Z[c], n[c], Q[c], Qt, G[c], R[c], err)
        if err <= tol:
            converged = True
            break
    return X, R, it, converged


@jitable
def class_start(e, p, s, queue, z, n, Q):
    """Q (length K, written) at the fixed point of a single-class
    approximate MVA whose column equations solve for Q_x given X: Q_x = X
    e_x (p_x + s_x X) / (1 - a X e_x) at a queue (``queue[x]`` true and e_x
    > 0), X e_x elsewhere (a delay), a = (N - 1)/N (Schweitzer's estimate
    of the queue an arriving job meets), with X the root of f(X) = X Z +
    sum_x Q_x(X) - N on [0, 1/(a max e_x)) (f(0) = -N, f grows without
    bound at the pole; increasing where p_x > 0 and s_x >= -a e_x p_x / 2).
    Returns False (``Q`` then undefined) where p_x <= 0 at a queue, N < 1,
    a figure is not finite or the root is not found.

    The root by Newton's method kept inside the bracket that each step
    narrows, bisecting where a step would leave it (a safeguarded Newton
    iteration; Press et al., *Numerical Recipes*, 3rd ed., 2007, sec. 9.4,
    rtsafe), from the light-load throughput X = N / (Z + sum_x e_x p_x).
    The arguments are read by index only, so the Python caller passes
    lists (plain floats: numpy's per-element cost on a few entries would be
    most of the time) and a compiled kernel passes arrays: the same
    operations, hence the same bits, in :func:`qmodels.analytic.amva.schweitzer`
    and in each row of :func:`qmodels.analytic.batch.schweitzer_batch`."""
    K = len(e)
    if n < 1:
        return False
    a = (n - 1.0) / n
    lin = z              # the delays' and think time's part of f: X (Z + sum e_x)
    light = 0.0
    emax = 0.0
    nq = 0
    bent = False
    for k in range(K):
        if queue[k] and e[k] > 0:
            if not p[k] > 0:
                return False
            light += e[k] * p[k]
            emax = max(emax, e[k])
            nq += 1
            if s[k] != 0:
                bent = True
        else:
            lin += e[k]
    light += lin
    x = n / light if light > 0 else 0.0
    if nq > 0 and a > 0.0:
        lo = 0.0
        hi = 1.0 / (a * emax)
        x = min(x, 0.5 * hi) if x > 0 else 0.5 * hi
        found = False
        for _ in range(100):
            f = x * lin - n
            df = lin
            for k in range(K):
                if queue[k] and e[k] > 0:
                    den = 1.0 - a * x * e[k]
                    num = x * e[k] * (p[k] + s[k] * x)
                    f += num / den
                    df += (e[k] * (p[k] + 2.0 * s[k] * x) * den + a * e[k] * num) / (den * den)
            if f == 0.0:
                found = True    # the root itself
                break
            if f > 0:
                hi = x
            else:
                lo = x
            nxt = x - f / df if df > 0 else 0.5 * (lo + hi)
            if not (lo < nxt and nxt < hi):
                nxt = 0.5 * (lo + hi)
            # (a start: 1e-13 is plenty, and the last bits of f are
            # rounding, where the steps would only wander)
            done = abs(nxt - x) <= 1e-13 * x
            x = nxt
            if done:
                found = True
                break
        if not found:
            return False
    elif bent or not x > 0:
        return False
    for k in range(K):
        if queue[k] and e[k] > 0:
            q = x * e[k] * (p[k] + s[k] * x) / (1.0 - a * x * e[k])
        else:
            q = x * e[k]
        if not math.isfinite(q):
            return False
        Q[k] = q
    return True
