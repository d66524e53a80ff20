"""The law checks of :mod:`qmodels.analytic.contract` on the common network,
compiled: one pass over an answer's figures that says whether every law
holds, and nothing more.

A repeated solve of a small network spends most of its time in the checks
when they run as numpy operations on small arrays (exact MVA of one class
at 50 stations and 1,000 jobs: 131 of 275 us a solve, each of the forty
or so array operations costing a microsecond or more); this kernel does
the same comparisons in a few microseconds.

It covers the networks whose laws are the plain ones (no token pools, no
class switching, no finite capacity that can block, no losses at entry,
no load-dependent station): every figure finite and non-negative;
Little's law Q = X R and the forced flow law X_k = V_k X at every (class,
station); the utilisation law U = X S / c where the station has servers,
U <= 1 per server at every queue; per class the response time law R =
sum_k V_k R_k, the interactive response time law N = X (R + Z) and job
conservation sum_k Q_k + X Z = N (closed), X <= lambda and, without
losses, X = lambda (open); R >= the no-contention time.  The sources of
each law are in :mod:`qmodels.analytic.contract`'s docstring.

It only ever *passes* an answer: each comparison uses half the tolerance
the contract states (so that a different order of summation, a few units
in the last place, cannot pass what the contract's own check fails), and
where it does not pass, the contract's numpy check runs and decides, with
its sentences.  So the verdict is the contract's whether or not this
kernel ran.
"""

from __future__ import annotations

import math

from .._jit import jitable, lazyjit

#: the largest double (the contract's cap on an array comparison's bound)
_BIG = 1.7976931348623157e308


@jitable
def _near(a: float, e: float, atol: float, rtol: float) -> bool:
    """|a - e| within atol + rtol max(|a|, |e|) (False at a NaN)."""
    return abs(a - e) <= min(atol + rtol * max(abs(a), abs(e)), _BIG)


@jitable
def _scale(fig, n, C):
    """The scale of the absolute tolerance: 1 or the largest |figure|
    (the utilisations excepted); -1 where a figure is not finite."""
    m = 4 * n + 2 * C
    scale = 1.0
    for i in range(m):
        if not math.isfinite(fig[i]):
            return -1.0
        if i < 3 * n or i >= 4 * n:
            scale = max(scale, abs(fig[i]))
    return scale


@jitable
def _stations_hold(fig, plan, has_cols, qcols, C, K, r, a, au):
    """Little, forced flow and the utilisation law per (class, station),
    U <= 1 per server at every queue."""
    n = C * K
    h = len(has_cols)
    for c in range(C):
        xc = fig[4 * n + c]
        for k in range(K):
            x = fig[c * K + k]
            if not _near(fig[n + c * K + k], x * fig[2 * n + c * K + k], a, r):
                return False
            if not _near(x, plan[c * K + k] * xc, a, r):
                return False
        for j in range(h):
            k = has_cols[j]
            busy = fig[c * K + k] * plan[2 * n + c * h + j]
            if not _near(fig[3 * n + c * K + k], busy, au, r):
                return False
    for j in range(len(qcols)):
        s = 0.0
        for c in range(C):
            s += fig[3 * n + c * K + qcols[j]]
        if not s <= 1.0 + r + au:
            return False
    return True


@jitable
def _classes_hold(fig, plan, h, C, K, r, a, lossy):
    """The response time law, conservation (closed) or X = lambda (open)
    and the no-contention bound per class."""
    n = C * K
    o0 = 2 * n + C * h
    c0 = o0 + K
    for c in range(C):
        xc, rc = fig[4 * n + c], fig[4 * n + C + c]
        z, pop, lam = plan[c0 + c], plan[c0 + C + c], plan[c0 + 2 * C + c]
        lb, closed = plan[c0 + 3 * C + c], plan[c0 + 4 * C + c] > 0.5
        rsum = 0.0
        qsum = 0.0
        for k in range(K):
            rsum += plan[n + c * K + k] * fig[2 * n + c * K + k]
            qsum += fig[n + c * K + k] * plan[o0 + k]
        if xc > 0 and not _near(rc, rsum, a, r):
            return False
        if closed:
            if xc > 0 and not _near(xc * (rc + z), pop, a, r):
                return False
            if not _near(qsum + xc * z, pop, a, r):
                return False
        else:
            if not xc <= lam * (1 + r) + a:
                return False
            if not lossy and not _near(xc, lam, a, r):
                return False
        if xc > 0 and not rc >= lb * (1 - r) - a:
            return False
    return True


@lazyjit(threshold=1 << 62)
def laws_hold(fig, plan, has_cols, qcols, C, K, rtol, atol, lossy):
    """True when the answer in ``fig`` obeys every law above within half
    the contract's tolerance (``rtol``; ``atol`` scaled by the answer's
    largest figure, U excepted, as the contract scales it).

    ``fig``: X, Q, R, U (each C x K, row-major), then the class X and R.
    ``plan``: V and V where the class's R sums its visits (C x K each), S /
    c at the ``has_cols`` stations (C x len(has_cols)), the 0/1 mask of the
    stations outside fork-join branches (K), then per class the think time,
    the population, the arrival rate, the no-contention time and 1.0 for a
    closed class (C each).  ``lossy``: arrivals can be lost (X = lambda not
    required)."""
    n = C * K
    scale = _scale(fig, n, C)
    if scale < 0:
        return False
    r = 0.5 * rtol
    a = 0.5 * atol * scale      # the scaled tolerance (figures other than U)
    au = 0.5 * atol             # the utilisations' own
    for i in range(4 * n + 2 * C):
        if fig[i] < -a:
            return False
    return (_stations_hold(fig, plan, has_cols, qcols, C, K, r, a, au)
            and _classes_hold(fig, plan, len(has_cols), C, K, r, a, lossy))
