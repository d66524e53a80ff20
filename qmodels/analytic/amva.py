"""Approximate MVA for closed multi-class networks: Schweitzer-Bard and
Linearizer (Chandy & Neuse).

Assumptions: those of :mod:`.multiclass` (BCMP product form); the fixed
point replaces the exact lattice recursion, so the cost is independent of
the populations.  Multi-server stations use Seidmann's approximation.
"""

from __future__ import annotations

import warnings
from typing import cast

import numpy as np

from .._jit import njit
from ..errors import ConvergenceWarning, InvalidValueError, UnsupportedModelError
from ..model.network import Network
from ..results import Result
from ._common import (
    _KIND_DELAY,
    _KIND_FIXED,
    _check_capacities,
    _check_classes,
    _check_options,
    _ps_notes,
    _require_numeric,
    _result,
    _shape,
    _utilisation,
)
from ._kernels import amva_class_sweep


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
            X[c], err = amva_class_sweep(D[c], is_delay, Z[c], n[c], Q[c], Qt, G[c], R[c], err)
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
        # a job arrives): exactly a delay, the same rule as qmodels.analytic.mva and
        # qmodels.analytic.batch (the exact lattice above looks one job further for
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
