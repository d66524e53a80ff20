"""Load-dependent and multi-server stations in approximate MVA: the
marginal-probability treatment used by :func:`.amva.schweitzer` and
:func:`.amva.linearizer`.

The exact residence time of class c at a load-dependent station k (rate
multiplier a(j) with j jobs present; a(j) = a(L) for j > L) needs the
marginal queue-length probabilities at the population with one class-c job
removed (Reiser & Lavenberg 1980, eq. for load-dependent centres; Bolch,
Greiner, de Meer & Trivedi 2006, sec. 8.2, load-dependent MVA):

    R_ck(N) = D_ck sum_{j>=1} (j / a(j)) p_k(j - 1 | N - e_c)          (1)

Approximate MVA has no p_k(. | N - e_c).  Akyildiz & Bolch (1988) estimate
these marginals from the estimate of the mean Q_k(N - e_c) that Schweitzer's
(or Linearizer's) approximation already provides; their simplest choice,
the one Bolch et al. (2006, sec. 9.1, SCAT for multiple-server nodes) give,
puts all the mass on the two integers around that mean A = Q_k(N - e_c):

    p(m) = m + 1 - A,  p(m + 1) = A - m,   m = floor(A)                 (2)

(the two-point distribution of mean A with the least spread).  With (2),
(1) becomes the linear interpolation at 1 + A of phi(j) = j / a(j):

    R_ck = D_ck ((1 - f) phi(m + 1) + f phi(m + 2)),   f = A - m        (3)

For a c-server queue (a(j) = min(j, c)), (1) is the multi-server MVA
residence time D/c (1 + Q(N - e_c) + sum_{j<=c-2} (c - 1 - j) p(j | N - e_c))
that Akyildiz & Bolch approximate.

What is adapted, and why: Akyildiz & Bolch treat c-server queues only; here
(1)-(3) are applied unchanged to any multipliers a(j) (for a general
``LoadDependent`` station, (1) is the exact formula and (2) the same
estimate of its marginals).  Their weight-function refinement of (2) (a
spread of the marginals fitted to their test networks) is not used: it has
no meaning for general a(j).  Properties that follow from (3) and are
tested: a(j) = 1 gives D (1 + A), Schweitzer's own single-server formula; a
delay-like a(j) = j gives D; with one job (A = 0) R = D / a(1), exact.
A is clipped to [0, |N| - 1] (at most |N| - 1 others can be present).

The utilisation of a general load-dependent station is 1 - P(empty), with
P(empty) = 1 - sum_c X_c D_ck E[1 / a(J + 1)] from the exact marginal
recursion p(j | N) = (1/a(j)) sum_c X_c D_ck p(j - 1 | N - e_c) (same
references as (1)) under the estimate (2); a c-server queue keeps the
utilisation law X D / c.

References
----------
M. Reiser, S. S. Lavenberg, "Mean-value analysis of closed multichain
queuing networks", JACM 27(2):313-322, 1980.
I. F. Akyildiz, G. Bolch, "Mean value analysis approximation for multiple
server queueing networks", Performance Evaluation 8, 1988 (zbMATH 0636.90032).
G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, "Queueing Networks and
Markov Chains", 2nd ed., Wiley 2006, sec. 8.2 (load-dependent MVA) and
sec. 9.1 (Bard-Schweitzer and SCAT; multiple-server nodes).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import jitable, lazyjit
from ._kernels import amva_start

__all__ = ["ld_factor", "ld_fixed_point", "ld_core_kernel"]

_KD, _KF, _KL = 0, 1, 2  # column kinds: delay, single server, load-dependent


@jitable
def _two_point(A, amax):
    """(j1, f): the two-point distribution (2) of mean ``A`` (clipped to
    [0, amax]; a NaN estimate counts as empty) puts 1 - f on j1 - 1 and f on
    j1 others present."""
    if not A > 0.0:
        A = 0.0
    if A > amax:
        A = amax
    m = math.floor(A)
    return int(m) + 1, A - m


@jitable
def ld_factor(A, mult, L, amax):
    """R / D of eq. (3) for an estimated mean ``A`` = Q_k(N - e_c) at a
    station with multipliers ``mult[:L]`` (the last one holds beyond):
    the interpolation of phi(j) = j / a(j) at 1 + A, with A clipped to
    [0, amax]."""
    j1, f = _two_point(A, amax)
    a1 = mult[min(j1, L) - 1]
    r = j1 / a1
    if f > 0.0:
        a2 = mult[min(j1 + 1, L) - 1]
        r = (1.0 - f) * r + f * ((j1 + 1) / a2)
    return r


@jitable
def _ld_class_sweep(d, kind, z, n, Q, Qt, G, R, err, mult, nmult, amax, omega):
    """One class's update in a Gauss-Seidel sweep (see :func:`ld_core_kernel`);
    as ``_kernels.amva_class_sweep`` with load-dependent columns added and
    the step damped by ``omega`` (Q += omega (Q_new - Q); ``err`` measures
    the undamped change, so the fixed point and the stopping rule are those
    of the undamped iteration)."""
    K = d.shape[0]
    inv = 1.0 / n if n > 0 else 0.0
    tot = z
    for k in range(K):
        dk = d[k]
        r = 0.0
        if dk != 0.0:
            if kind[k] == _KD:
                r = dk
            else:
                a = Qt[k] - Q[k] * inv + G[k]
                if a < 0.0:
                    a = 0.0
                if kind[k] == _KF:
                    r = dk * (1.0 + a)
                else:
                    r = dk * ld_factor(a, mult[k], nmult[k], amax)
        R[k] = r
        tot += r
    x = n / tot if n > 0 else 0.0
    scale = n if n > 1.0 else 1.0
    for k in range(K):
        q = x * R[k]
        e = abs(q - Q[k]) / scale
        if e > err:
            err = e
        q = Q[k] + omega * (q - Q[k])
        Qt[k] += q - Q[k]
        Q[k] = q
    return x, err


@jitable
def ld_fixed_point(D, kind, mult, nmult, Z, n, F, Q, tol, max_iter):
    """Fixed point of approximate MVA at population n with load-dependent
    columns (``kind`` 2, multipliers ``mult[k, :nmult[k]]``).

    The estimate of Q_k(n - e_c) is that of ``amva._core_kernel``
    (Schweitzer 1979 with F = 0; Chandy & Neuse 1982 otherwise); a
    load-dependent column turns it into R_ck by eq. (3) of this module,
    the others as before (delay D, single server D (1 + A)).  Classes are
    updated one after the other (Gauss-Seidel); stops when a sweep changes
    no Q_ck by more than tol max(n_c, 1).  A load-dependent station whose
    phi(j) = j / a(j) falls steeply can make the plain iteration oscillate:
    each sweep whose largest change does not shrink halves the step
    (Q += omega (Q_new - Q), omega down to 1/64; the fixed point is the
    same), each sweep that shrinks it again lengthens the step by 1.25 (up
    to 1), and a converged damped run is confirmed by one undamped sweep.
    ``Q`` is updated in place.  Returns (X, R, sweeps, converged).

    A ``jitable`` helper: the body of :func:`ld_core_kernel` (the
    multi-class solvers) and of the rows of
    :func:`qmodels.analytic.batch.schweitzer_batch`, so both run the same
    operations."""
    C, K = D.shape
    ntot = 0.0
    for c in range(C):
        ntot += n[c]
    amax = ntot - 1.0 if ntot > 1.0 else 0.0
    G, Qt = amva_start(n, F, Q)
    X = np.zeros(C)
    R = np.zeros((C, K))
    it = 0
    converged = False
    omega = 1.0
    last = math.inf
    while it < max_iter:
        it += 1
        err = 0.0
        for c in range(C):
            X[c], err = _ld_class_sweep(D[c], kind, Z[c], n[c], Q[c], Qt, G[c], R[c], err,
                                        mult, nmult, amax, omega)
        if err <= tol:
            if omega == 1.0:
                converged = True
                break
            omega = 1.0  # confirm with one undamped sweep (X, R of the fixed point)
        elif err >= last and omega > 1.0 / 64.0:
            omega *= 0.5  # a sweep that did not shrink the change: damp
        elif err < last and omega < 1.0:
            # shrinking again: step back up, or a damped run crawls (a
            # K = 20, N = 200 network with 2- and 3-server stations stuck at
            # omega = 1/64 for 10,000 sweeps converges in 250 so)
            omega = min(1.0, 1.25 * omega)
        last = err
    return X, R, it, converged


@lazyjit()
def ld_core_kernel(D, kind, mult, nmult, Z, n, F, Q, tol, max_iter):
    """:func:`ld_fixed_point` as a kernel of its own (plain Python for small
    problems, compiled above lazyjit's threshold): the fixed point of
    approximate MVA with load-dependent columns.  ``Q`` is updated in place.
    Returns (X, R, sweeps, converged)."""
    return ld_fixed_point(D, kind, mult, nmult, Z, n, F, Q, tol, max_iter)


def ld_work(C: int, K: int) -> int:
    """Loop-trip estimate for the approximate MVA kernels (lazyjit picks plain
    Python below its threshold): C K per sweep, a few hundred sweeps."""
    return int(C) * int(K) * 200


def ld_p_empty(X, d, A, mult, L, amax) -> float:
    """P(empty) at a load-dependent station at N: the exact relation
    p(j | N) = (1 / a(j)) sum_c X_c D_c p(j - 1 | N - e_c) for j >= 1
    (Reiser & Lavenberg 1980; Bolch et al. 2006, sec. 8.2) summed over j,
    P(empty) = 1 - sum_c X_c D_c E[1 / a(J + 1)], with each
    p(. | N - e_c) the two-point estimate (2) around ``A[c]``; clipped to
    [0, 1].  ``X``, ``d`` and ``A`` are per class."""
    busy = 0.0
    for c in range(len(X)):
        if X[c] > 0 and d[c] > 0:
            busy += X[c] * d[c] * _inv_rate(A[c], mult, L, amax)
    return min(max(1.0 - busy, 0.0), 1.0)


def _inv_rate(A, mult, L, amax):
    """E[1 / a(J + 1)] under the two-point distribution (2) of mean A
    (A clipped to [0, amax] as in :func:`ld_factor`)."""
    j1, f = _two_point(A, amax)
    r = 1.0 / mult[min(j1, L) - 1]
    if f > 0.0:
        r = (1.0 - f) * r + f / mult[min(j1 + 1, L) - 1]
    return r


def ld_note(name: str, mult, servers: int | None) -> str:
    """The note a result carries for a station under eq. (1)-(3)."""
    what = (f"{servers} servers" if servers else
            "load-dependent, rate multipliers " + ", ".join(f"{x:g}" for x in mult[:6])
            + (", ..." if len(mult) > 6 else ""))
    return (f"station {name!r} ({what}) approximated after Akyildiz & Bolch (1988): "
            "its marginal queue-length probabilities at N - e_c are the two-point "
            "distribution around the estimated mean Q(N - e_c) (SCAT, Bolch et al. 2006, "
            "sec. 9.1) in the load-dependent MVA residence time")


def ld_falling_note(name: str) -> str:
    """The warning note for a station whose rate falls with load: its exact
    marginals can be bimodal, which (2) cannot follow."""
    return (f"station {name!r}: its rate falls with load (a(j+1) < a(j)); the two-point "
            "estimate of its marginals can then be far off (throughput errors of 70% and more "
            "measured by validation/amva_ld_accuracy.py): check with method='exact' or 'sim'")


def ld_table(cols: list) -> tuple[np.ndarray, np.ndarray]:
    """(mult, nmult) arrays for the kernel from per-column multiplier tuples
    (None for columns that are not load-dependent)."""
    L = max([len(a) for a in cols if a] + [1])
    mult = np.ones((len(cols), L))
    nmult = np.zeros(len(cols), np.int64)
    for x, a in enumerate(cols):
        if a:
            mult[x, :len(a)] = a
            nmult[x] = len(a)
    return mult, nmult
