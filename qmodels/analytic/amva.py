"""Approximate MVA for closed multi-class networks: Schweitzer-Bard and
Linearizer (Chandy & Neuse).

Assumptions: those of :mod:`.multiclass` (BCMP product form); the fixed
point replaces the exact lattice recursion, so the cost is independent of
the populations.  Multi-server and load-dependent stations: the
load-dependent MVA residence time with the marginal probabilities at
N - e_c estimated around the approximate mean (Akyildiz & Bolch 1988; see
:mod:`.amva_ld`), or, for c-server queues with ``multiserver="seidmann"``,
Seidmann's transformation.
"""

from __future__ import annotations

import warnings
from typing import cast

import numpy as np

from .._jit import lazyjit
from .._validate import is_symbolic
from ..errors import ConvergenceWarning, InvalidValueError, UnsupportedModelError
from ..model.network import LoadDependent, Network, Queue
from ..results import Result
from ._common import (
    _KIND_DELAY,
    _KIND_FIXED,
    _KIND_LD,
    _check_capacities,
    _check_classes,
    _check_options,
    _ps_notes,
    _require_numeric,
    _result,
    _run,
    _shape,
    _utilisation,
)
from ._kernels import amva_fixed_point, class_start
from .amva_ld import (
    ld_core_kernel,
    ld_factor,
    ld_falling_note,
    ld_note,
    ld_p_empty,
    ld_table,
    ld_work,
)
from .contract import answers


@lazyjit()
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
    return amva_fixed_point(D, is_delay, Z, n, F, Q, tol, max_iter)


_MULTISERVER = ("marginal", "seidmann")


def _check_multiserver(multiserver) -> None:
    """The ``multiserver`` option of the approximate solvers (also
    :func:`qmodels.analytic.batch.schweitzer_batch`): one of
    :data:`_MULTISERVER`, else :class:`~qmodels.errors.InvalidValueError`."""
    if multiserver not in _MULTISERVER:
        raise InvalidValueError(
            f"multiserver must be one of {', '.join(map(repr, _MULTISERVER))}, "
            f"got {multiserver!r}")


def _amva_prepare(net: Network, solver: str, multiserver: str = "marginal",
                  falling_rates: bool = False, class_dependent_fcfs: bool = False):
    """Expanded demand matrix for the approximations.

    A c-server queue becomes, with ``multiserver="seidmann"``, a single
    server of demand D/c plus a delay of demand D (c-1)/c (Seidmann,
    Schweitzer & Shalev-Oren 1987); with ``"marginal"`` it stays one
    load-dependent column with a(j) = min(j, c), as does every general
    load-dependent station (see :mod:`.amva_ld`).  Returns (Dx, kind, owner,
    Z, N, notes, scale, mult, nmult) where ``owner[j]`` is the original
    station of column j and ``kind`` is 0 delay, 1 single server,
    2 load-dependent (multipliers ``mult[j, :nmult[j]]``).

    Built once per network and options (``net.lowered.memo``: the network
    is immutable), so a repeated solve and the points of a sweep that share
    the network skip the checks and the expansion; the callers read the
    arrays and never write them, and get their own list of notes."""
    _check_multiserver(multiserver)
    out = net.lowered.memo(
        ("amva.prepare", solver, multiserver, bool(falling_rates), bool(class_dependent_fcfs)),
        lambda: _amva_prepare_build(net, solver, multiserver, falling_rates,
                                    class_dependent_fcfs))
    Dx, kind, owner, Z, N, notes, scale, mult, nmult = out
    return Dx, kind, owner, Z, N, list(notes), scale, mult, nmult


def _amva_prepare_build(net: Network, solver: str, multiserver: str, falling_rates: bool,
                        class_dependent_fcfs: bool):
    """:func:`_amva_prepare` itself (the refusals and the expansion)."""
    if net.is_symbolic:
        raise UnsupportedModelError(
            f"{solver} is numeric; {_symbolic_where(net)} is a sympy expression: "
            "substitute numbers, or use qmodels.symbolic")
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
    # (residual MVA keeps an FCFS queue with class-dependent times FCFS in
    # its own equations: it passes class_dependent_fcfs=True)
    _check_capacities(net, ntot, solver, fcfs_as_ps=class_dependent_fcfs)
    _check_classes(net, D, Z, N)
    notes = _ps_notes(net)
    # the columns depend on the structure, |N| and which stations some
    # class loads: one expansion per family of networks (a sweep's points
    # that change service times, populations or think times share it)
    used = cast(np.ndarray, (D > 0).any(axis=0))
    src, scale, kind, col_notes, mult, nmult = net.lowered.family(
        ("amva.columns", solver, multiserver, bool(falling_rates), ntot, used.tobytes()),
        lambda: _amva_columns(net, solver, multiserver, falling_rates, ntot, used))
    owner = np.array(src, np.int64)
    Dx = D[:, owner] * np.array(scale)[None, :]
    return (Dx, np.array(kind, dtype=np.int64), owner, Z, N, notes + list(col_notes),
            np.array(scale), mult, nmult)


def _amva_columns(net: Network, solver: str, multiserver: str, falling_rates: bool, ntot: int,
                  used):
    """The expanded columns of :func:`_amva_prepare`: (owner station per
    column, scale, kind, notes, mult, nmult), or the refusal of a falling
    rate."""
    notes: list = []
    src, scale, kind, lds = [], [], [], []
    for k, s in enumerate(net.stations):
        # c >= N servers never queue (at most N - 1 others are present when
        # a job arrives): exactly a delay, the same rule as qmodels.analytic.mva and
        # qmodels.analytic.batch (the exact lattice above looks one job further for
        # population-0 classes)
        kd, a = _shape(net, k, max(ntot, 1))
        if kd == _KIND_DELAY and used[k] and isinstance(s, LoadDependent):
            # a(j) = j up to |N|: a delay, which eq. (3) of amva_ld reproduces
            # exactly, but its utilisation is 1 - P(empty), as in exact MVA
            kd, a = _KIND_LD, tuple(float(x) for x in s.rate_multipliers[: max(ntot, 1)])
        if kd == _KIND_DELAY:
            src.append(k)
            scale.append(1.0)
            kind.append(0)
            lds.append(None)
            continue
        if kd == _KIND_FIXED:
            src.append(k)
            scale.append(1.0 / a[0])
            kind.append(1)
            lds.append(None)
            continue
        c = len(a)
        multi = isinstance(s, Queue)
        if multi and multiserver == "seidmann":
            src += [k, k]
            scale += [1.0 / c, (c - 1) / c]
            kind += [1, 0]
            lds += [None, None]
            notes.append(
                f"station {s.name!r} ({c} servers) approximated as in Seidmann, Schweitzer "
                f"& Shalev-Oren (1987): one server of demand D/{c} plus a delay of "
                f"demand D*{c - 1}/{c}"
            )
            continue
        src.append(k)
        scale.append(1.0)
        kind.append(2)
        lds.append(tuple(a))
        notes.append(ld_note(s.name, a, c if multi else None))
        drop = next((i for i in range(c - 1) if a[i + 1] < a[i]), None)
        if drop is not None:
            if not falling_rates:
                raise UnsupportedModelError(
                    f"station {s.name!r}: its rate falls with load (a({drop + 2}) = "
                    f"{a[drop + 1]:g} < a({drop + 1}) = {a[drop]:g}); {solver}'s two-point "
                    "estimate of the marginals is unreliable there (throughput errors up to "
                    "5x measured by validation/amva_ld_accuracy.py): use method='exact' or "
                    "'sim', or pass falling_rates=True to accept the approximation")
            notes.append(ld_falling_note(s.name))
    mult, nmult = ld_table(lds)
    return tuple(src), tuple(scale), tuple(kind), tuple(notes), mult, nmult


def _symbolic_where(net: Network) -> str:
    """The first symbolic input of ``net``, named for an error message."""
    for cls in net.classes:
        for a in ("population", "think_time"):
            if is_symbolic(getattr(cls, a, 0.0)):
                return f"class {cls.name!r}: {a}"
    for k, s in enumerate(net.stations):
        if is_symbolic(getattr(s, "servers", 1)) or any(
                is_symbolic(a) for a in getattr(s, "rate_multipliers", ())):
            return f"station {s.name!r}: servers or rate multipliers"
        for c, cls in enumerate(net.classes):
            for what, M in (("service time", net.service_times), ("visits", net.visits)):
                if is_symbolic(M[c][k]):
                    return f"station {s.name!r}: {what} of class {cls.name!r}"
    return "an input"


def _core(Dx, kind, mult, nmult, Z, n, F, Q, tol, max_iter):
    """The fixed point at population n: the single-server kernel when no
    column is load-dependent (unchanged numbers), else
    :func:`.amva_ld.ld_core_kernel`; both run as plain Python below
    lazyjit's threshold (no compile for a small network), compiled above."""
    C, K = Dx.shape
    if not (kind == 2).any():
        return _run(_core_kernel, ld_work(C, K), Dx, kind == 0, Z, n, F, Q, tol, max_iter)
    return _run(ld_core_kernel, ld_work(C, K), Dx, kind, mult, nmult, Z, n, F, Q, tol, max_iter)


def _capacities(kind, mult, nmult) -> np.ndarray:
    """Per expanded column, the most work it completes per second: 1 for a
    single-server column, max a(n) for a load-dependent one, inf for a
    delay (the utilisation law, U = X D / capacity <= 1)."""
    cap = np.full(len(kind), np.inf)
    cap[kind == 1] = 1.0
    for x in np.flatnonzero(kind == 2).tolist():
        cap[x] = float(np.max(mult[x, :max(int(nmult[x]), 1)]))
    return cap


def _scale_by_level(X, who, Dx, b, cap_b, levels) -> None:
    """Fill column ``b`` (capacity ``cap_b``) with the classes ``who`` in
    priority order: each level keeps its throughput while the capacity the
    levels above left allows, the first level that does not fit is scaled
    to what is left, the levels below it to a vanishing share (starved: a
    priority server full with higher levels serves the lower ones only in
    its idle moments, which the approximation does not see)."""
    left = cap_b
    for lv in sorted({int(levels[c]) for c in np.flatnonzero(who)}):
        at = who & (levels == lv)
        load = float(X[at] @ Dx[at, b])
        if load <= left:
            left -= load
            continue
        X[at] *= max(left, 1e-12 * cap_b) / load
        left = 0.0


def saturate(X, Rres, Dx, Z, N, cap, levels=None, prio=None) -> bool:
    """Hold the fixed point to the utilisation law: where the class
    throughputs would load a column past its capacity (sum_j X_j Dx_jx >
    cap_x), that column is saturated, and the throughputs of the classes
    that visit it are scaled down until it is exactly full (the
    bottleneck law X <= cap / D; Denning & Buzen 1978, QSP sec. 5.2).  A
    scaled class's jobs that its other stations no longer hold wait at its
    saturated columns, shared in proportion to its residence times there, so
    that job conservation N_c = X_c (Z_c + sum_x Rres_cx) holds as before.
    At a priority column (``prio[x]``, with the classes' ``levels``, 0
    highest) the capacity goes to the levels in order
    (:func:`_scale_by_level`), not in proportion.
    Updates ``X`` and ``Rres`` in place; True when anything was saturated."""
    scaled = np.zeros(len(X), bool)
    sat = np.zeros(Dx.shape[1], bool)
    for _ in range(Dx.shape[1]):
        u = X @ Dx
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.isfinite(cap), u / cap, 0.0)
        b = int(np.argmax(ratio)) if len(ratio) else 0
        if not len(ratio) or ratio[b] <= 1.0 + 1e-12:
            break
        who = Dx[:, b] > 0
        if prio is not None and prio[b] and levels is not None:
            _scale_by_level(X, who, Dx, b, cap[b], levels)
        else:
            X[who] /= ratio[b]
        scaled |= who
        sat[b] = True
    if not scaled.any():
        return False
    # a column the scaling left full as well (a tie with the one scaled,
    # within rounding) is saturated too: the waiting jobs are shared by
    # every full column, else the first of two identical bottlenecks holds
    # them all, and the iteration takes of the order of N sweeps to even
    # the pair out again (two identical exponential queues at 5e-5 s, one
    # class of 8,192: residual MVA stopped at 10,000 sweeps with their
    # queues at 2,986 and 2,925, where Schweitzer's iteration, never
    # saturated, gives 2,955 each)
    with np.errstate(divide="ignore", invalid="ignore"):
        full = np.where(np.isfinite(cap), (X @ Dx) / cap, 0.0) >= 1.0 - 1e-9
    sat |= full
    for c in np.flatnonzero(scaled & (N > 0)).tolist():
        if X[c] <= 0:
            continue
        at = sat & (Dx[c] > 0)
        extra = N[c] / X[c] - Z[c] - Rres[c].sum()
        if extra > 0 and at.any():
            w = Rres[c, at]
            w = w / w.sum() if w.sum() > 0 else np.full(int(at.sum()), 1.0 / at.sum())
            Rres[c, at] += extra * w
    return True


def _core_lawful(Dx, kind, mult, nmult, Z, n, F, Q, tol, max_iter):
    """:func:`_core`, held to the utilisation law: when its fixed point
    loads a column past its capacity (multi-class Schweitzer and
    Linearizer can, by a fraction of a per cent near saturation: the
    estimate of the queue an arriving job meets is not the exact
    marginal), the iteration goes on one sweep at a time with
    :func:`saturate` after each sweep, to the fixed point of the
    constrained map (the saturated station full, holding the jobs its
    classes' other stations do not), within ``max_iter`` sweeps in all (an
    unconverged answer is still held to the law).  Returns (X, R, sweeps,
    converged)."""
    X, R, it, conv = _core(Dx, kind, mult, nmult, Z, n, F, Q, tol, max_iter)
    cap = _capacities(kind, mult, nmult)
    if not ((X @ Dx) > cap * (1.0 + 1e-12)).any():
        return X, R, it, conv
    X, R = X.copy(), R.copy()
    saturate(X, R, Dx, Z, n, cap)
    Q[:] = X[:, None] * R
    scale = np.maximum(n, 1.0)
    omega, last = 1.0, np.inf
    for extra in range(1, max_iter - it + 1):     # max_iter sweeps in all
        before = Q.copy()
        X, R, _, _ = _core(Dx, kind, mult, nmult, Z, n, F, Q, tol, 1)
        X, R = X.copy(), R.copy()
        saturate(X, R, Dx, Z, n, cap)
        step = X[:, None] * R - before
        err = float((np.abs(step).max(axis=1) / scale).max())
        if err <= tol:        # the map's own residual |F(Q) - Q|, damped or not
            Q[:] = before + step
            return X, R, it + extra, True
        if err >= last and omega > 1.0 / 64.0:
            omega *= 0.5      # a sweep that did not shrink the change: damp, as
        elif err < last and omega < 1.0:    # the load-dependent kernel does
            omega = min(1.0, 1.25 * omega)
        last = err
        Q[:] = before + omega * step
    return X, R, max(it, max_iter), False


def _amva_estimates(Q, F, n):
    """A[c, x]: the estimate of sum_j Q_jx(N - e_c) that the kernels use,
    Qt_x - Q_cx / N_c + sum_j (N - e_c)_j F_jcx, clipped at 0."""
    C, Kx = Q.shape
    Qt = Q.sum(axis=0)
    A = np.zeros((C, Kx))
    for c in range(C):
        inv = 1.0 / n[c] if n[c] > 0 else 0.0
        m = n - np.eye(C)[c]
        w = np.where((n > 0) & (m > 0), m, 0.0)
        A[c] = np.maximum(Qt - Q[c] * inv + w @ F[:, c, :], 0.0)
    return A


def _amva_visit_time(net, A, n, kind, owner, scale, mult, nmult):
    """Per-visit response time over the columns x of station k, with A_cx
    from :func:`_amva_estimates`: S_ck scale_x (1 + A_cx) at a single-server
    column, S_ck scale_x at a delay column, S_ck times eq. (3) of
    :mod:`.amva_ld` at a load-dependent one.  Defined for every class and
    station, also where the class never goes (the arrival-theorem
    convention of the exact solvers)."""
    C, Kx = A.shape
    T = np.zeros((C, len(net.stations)))
    S = np.asarray(net.service_times, dtype=float)
    amax = max(float(n.sum()) - 1.0, 0.0)
    # every column at once (the same products as column by column)
    f = np.where(kind == 1, 1.0 + A, 1.0)
    for x in np.flatnonzero(kind == 2).tolist():
        for c in range(C):
            f[c, x] = ld_factor(A[c, x], mult[x], nmult[x], amax)
    part = S[:, owner] * scale[None, :] * f
    if len(np.unique(owner)) == len(owner):
        T[:, owner] = part           # one column per station: T = 0 + part
    else:
        for x in range(Kx):          # a station split in two columns (Seidmann)
            T[:, owner[x]] += part[:, x]
    return T


def single_class_start(e, p, s, queue, z: float, n: float):
    """Q (1, K) at the fixed point of a single-class approximate MVA whose
    column equations solve for Q_x given X (:func:`._kernels.class_start`:
    Q_x = X e_x (p_x + s_x X) / (1 - a X e_x) at a queue, X e_x at a
    delay, a = (N - 1)/N, X the root of X Z + sum_x Q_x(X) = N by a
    safeguarded Newton iteration), or None where it does not exist.  In
    plain floats (25-35 us a start; bisection to the last bit, numpy on
    each step, took 60-1,100 steps and made Linearizer on a 3-station
    network 3.3 -> 10.6 ms a solve); not :mod:`scipy.optimize`, whose
    import takes half a second of a process's first answer.  With these
    starts Linearizer on that network (N = 12, one class) takes 1.5 ms (7
    sweeps in all, 192 before) and 1.35 ms at a light load where it took
    0.95 ms (11 sweeps before, 7 now: the seven starts cost more than the
    sweeps they save; the mean of 300 repeated ``qm.solve`` calls each).

    The callers' iterations start here: from N spread evenly they need of
    the order of N sweeps where two queues are nearly tied near saturation
    (their difference shrinks by about U a a sweep; one class of 8,192
    jobs over queues of 5e-5 s, 3e-5 s and 5.0005e-5 s and a delay of
    0.114 s: residual MVA, the middle queue deterministic, stopped at its
    10,000-sweep limit with 2,514 and 3,397 jobs at the tied pair,
    unconverged; Linearizer, all exponential, at 69,346 sweeps;
    Schweitzer at 10,000 with 2,541 and 3,370, its fixed point 2,528 and
    3,383)."""
    Q = np.empty((1, len(e)))
    if not class_start(e.tolist(), p.tolist(), s.tolist(), queue.tolist(), float(z),
                       float(n), Q[0]):
        return None
    return Q


def _fixed_point_start(Dx, kind, Z, n, F, Q) -> None:
    """``Q`` set to the single-class fixed point of the core at ``n`` with
    the corrections ``F`` (:func:`single_class_start`: Chandy & Neuse's
    estimate a_x = (n - 1)/n Q_x + G_x, G_x = (n - 1) F_x, so p_x = 1 +
    G_x; F = 0 is Schweitzer's estimate); unchanged for several classes,
    load-dependent columns or where the start does not exist.  The start
    of :func:`schweitzer` and of each of :func:`linearizer`'s core solves."""
    if Dx.shape[0] != 1 or (kind == 2).any():
        return
    nn = float(n[0])
    G = (nn - 1.0) * F[0, 0] if nn > 1 else np.zeros(Dx.shape[1])
    start = single_class_start(Dx[0], 1.0 + G, np.zeros(Dx.shape[1]), kind == 1,
                               float(Z[0]), nn)
    if start is not None:
        Q[:] = start


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


def _amva_result(net, method, cols, X, R, notes, info, A, n):
    """The Result: residence times per station, utilisations (a general
    load-dependent station: 1 - P(empty) by :func:`.amva_ld.ld_p_empty`),
    per-visit times from the estimates ``A``.  ``cols`` is (Dx, kind, owner,
    scale, mult, nmult) from :func:`_amva_prepare`."""
    Dx, kind, owner, scale, mult, nmult = cols
    if len(np.unique(owner)) == len(owner):
        Rres = np.zeros((R.shape[0], len(net.stations)))
        Rres[:, owner] = R           # one column per station
    else:
        P = np.zeros((len(owner), len(net.stations)))
        P[np.arange(len(owner)), owner] = 1.0
        Rres = R @ P
    D = np.asarray(net.demands, dtype=float)
    ld = [x for x in range(len(owner)) if kind[x] == 2
          and isinstance(net.stations[owner[x]], LoadDependent)]
    amax = max(float(n.sum()) - 1.0, 0.0)
    P0 = np.array([ld_p_empty(X, Dx[:, x], A[:, x], mult[x], nmult[x], amax) for x in ld])
    U = _utilisation(net, X, D, P0, owner[np.array(ld, np.int64)])
    T = _amva_visit_time(net, A, n, kind, owner, scale, mult, nmult)
    return _result(net, method, X, Rres, U, notes, info, visit_time=T)


def _warn_unconverged(solver, max_iter, info):
    warnings.warn(
        f"{solver} stopped at max_iter={max_iter} before reaching tol; "
        "the answer is approximate beyond its method",
        ConvergenceWarning,
        stacklevel=3,
    )
    info["converged"] = False


_FALLING_DOC = """falling_rates : bool
        Accept a load-dependent station whose rate falls with load
        (a(j+1) < a(j), e.g. thrashing).  Its exact marginals can be
        bimodal, which the two-point estimate cannot follow: over 600 random
        such networks the throughput was off by up to 2.6x (Schweitzer) and
        5.5x (Linearizer), so by default the solver refuses with
        :class:`~qmodels.errors.UnsupportedModelError` naming the station;
        with ``True`` it answers and says so in ``notes``."""

_MULTISERVER_DOC = """multiserver : {"marginal", "seidmann"}
        How a c-server queue is treated: ``"marginal"`` (default) as a
        load-dependent station, its marginal probabilities estimated after
        Akyildiz & Bolch (1988), see :mod:`qmodels.analytic.amva_ld`;
        ``"seidmann"`` as one server of demand D/c plus a delay of demand
        D (c - 1)/c (Seidmann, Schweitzer & Shalev-Oren 1987).  Over 600
        random networks with c-server queues (``python -m
        validation.amva_ld_accuracy``, seeds 1-3) the marginal treatment
        was closer to exact MVA: largest throughput error 14% vs 19%
        (Schweitzer), 12% vs 14% (Linearizer); mean 2.8% vs 4.8%, 1.2% vs
        1.9%.
        General load-dependent stations always use the marginal treatment."""


@answers(fcfs_as_ps=True)
def schweitzer(net: Network, *, tol: float = 1e-8, max_iter: int = 10000,
               multiserver: str = "marginal", falling_rates: bool = False) -> Result:
    """Schweitzer-Bard approximate MVA for closed multi-class networks
    (``method="schweitzer"``).

    Parameters
    ----------
    net : Network
        Closed classes; delay, single-server, c-server and load-dependent
        stations (product form: the assumptions of exact MVA otherwise).
    tol : float
        Stop when max_ck |Q_ck(new) - Q_ck(old)| / N_c <= tol.
    max_iter : int
        Iteration limit; reaching it emits
        :class:`~qmodels.errors.ConvergenceWarning` and sets
        ``info["converged"] = False``.
    MULTISERVER
    FALLING

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
    O(C K) per iteration, independent of the populations.  The iteration
    starts from N_c spread evenly over the class's stations (Lazowska et
    al., Algorithm 7.2), except with one class and no load-dependent
    column, where the fixed point itself is the root of one equation in X
    (:func:`single_class_start`) and the sweeps start there: from the even
    start two queues nearly tied near saturation took more than 10,000
    sweeps (8,192 jobs; queues of 5e-5 s, 3e-5 s and 5.0005e-5 s and a
    delay of 0.114 s: stopped unconverged), now 1.

    Load-dependent stations (and c-server queues with
    ``multiserver="marginal"``): R_ck = D_ck sum_j (j / a(j))
    p_k(j - 1 | N - e_c), the exact load-dependent MVA formula (Reiser &
    Lavenberg 1980; Bolch et al. 2006, sec. 8.2), with the marginals
    p_k(. | N - e_c) estimated from the estimate of the mean
    Q_k(N - e_c) above as a two-point distribution on the integers around it
    (Akyildiz & Bolch 1988; Bolch et al. 2006, sec. 9.1, SCAT for
    multiple-server nodes); equations and what is adapted in
    :mod:`qmodels.analytic.amva_ld`.  Exact for one job; a(j) = 1 gives the
    single-server formula back.  Utilisation of a general load-dependent
    station: 1 - P(empty) from the same two-point estimate at Q_k(N).  The
    result names the treatment of each such station in ``notes``.

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
    I. F. Akyildiz, G. Bolch, "Mean value analysis approximation for
    multiple server queueing networks", Performance Evaluation
    8, 1988 (zbMATH 0636.90032).
    """
    _check_options(tol, max_iter)
    Dx, kind, owner, Z, N, notes, scale, mult, nmult = _amva_prepare(
        net, "Schweitzer MVA", multiserver, falling_rates)
    C, Kx = Dx.shape
    Q = _amva_init(Dx, N)
    F = np.zeros((C, C, Kx))
    _fixed_point_start(Dx, kind, Z, N, F, Q)   # (one class: its fixed point, F = 0)
    X, R, it, conv = _core_lawful(Dx, kind, mult, nmult, Z, N, F, Q, float(tol), int(max_iter))
    info = {"algorithm": "Schweitzer-Bard approximate MVA", "iterations": int(it),
            "converged": bool(conv), "tol": float(tol), "multiserver": multiserver}
    if not conv:
        _warn_unconverged("Schweitzer MVA", max_iter, info)
    return _amva_result(net, "schweitzer", (Dx, kind, owner, scale, mult, nmult), X, R, notes,
                        info, _amva_estimates(Q, F, N), N)


@answers(fcfs_as_ps=True)
def linearizer(net: Network, *, tol: float = 1e-8, max_iter: int = 10000,
               passes: int = 3, multiserver: str = "marginal",
               falling_rates: bool = False) -> Result:
    """Linearizer approximate MVA for closed multi-class networks
    (``method="linearizer"``).

    Parameters
    ----------
    net : Network
        Closed classes; delay, single-server, c-server and load-dependent
        stations.
    tol : float
        Tolerance of each inner fixed point (as in :func:`schweitzer`).
    max_iter : int
        Iteration limit of each inner fixed point; reaching it emits
        :class:`~qmodels.errors.ConvergenceWarning` and sets
        ``info["converged"] = False``.
    passes : int
        Number of refinements of the fractional deviations F (Chandy &
        Neuse use a small fixed number; 3 by default).
    MULTISERVER
    FALLING

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
    iteration.  Load-dependent stations (and c-server queues with
    ``multiserver="marginal"``) as in :func:`schweitzer`: the marginals at
    N - e_c are estimated around Linearizer's estimate of Q_k(N - e_c)
    (the Akyildiz & Bolch 1988 marginal estimate inside Linearizer, as
    they do), with a note.

    References
    ----------
    K. M. Chandy, D. Neuse, "Linearizer: a heuristic algorithm for queueing
    network models of computing systems", CACM 25(2):126-134, 1982.
    I. F. Akyildiz, G. Bolch, "Mean value analysis approximation for
    multiple server queueing networks", Performance Evaluation
    8, 1988 (zbMATH 0636.90032).
    """
    _check_options(tol, max_iter)
    if isinstance(passes, bool) or not isinstance(passes, (int, np.integer)) or passes < 1:
        raise InvalidValueError(f"passes must be an integer >= 1, got {passes!r}")
    Dx, kind, owner, Z, N, notes, scale, mult, nmult = _amva_prepare(
        net, "Linearizer", multiserver, falling_rates)
    C, Kx = Dx.shape
    F = np.zeros((C, C, Kx))
    Q0 = _amva_init(Dx, N)
    Nm = [N - np.eye(C)[c] for c in range(C)]
    Qm = [_amva_init(Dx, np.maximum(Nm[c], 0)) for c in range(C)]
    total = 0
    conv_all = True
    tol, max_iter = float(tol), int(max_iter)
    for _ in range(int(passes)):
        _fixed_point_start(Dx, kind, Z, N, F, Q0)
        _, _, it, conv = _core(Dx, kind, mult, nmult, Z, N, F, Q0, tol, max_iter)
        total += it
        conv_all &= conv
        for c in range(C):
            if N[c] < 1:
                continue
            _fixed_point_start(Dx, kind, Z, Nm[c], F, Qm[c])
            _, _, it, conv = _core(Dx, kind, mult, nmult, Z, Nm[c], F, Qm[c], tol, max_iter)
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
    _fixed_point_start(Dx, kind, Z, N, F, Q0)
    X, R, it, conv = _core_lawful(Dx, kind, mult, nmult, Z, N, F, Q0, tol, max_iter)
    total += it
    conv_all &= conv
    info = {"algorithm": "Linearizer (Chandy-Neuse) approximate MVA",
            "iterations": int(total), "passes": int(passes),
            "converged": bool(conv_all), "tol": tol, "multiserver": multiserver}
    if not conv_all:
        _warn_unconverged("Linearizer", max_iter, info)
    return _amva_result(net, "linearizer", (Dx, kind, owner, scale, mult, nmult), X, R, notes,
                        info, _amva_estimates(Q0, F, N), N)


for _f in (schweitzer, linearizer):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.replace("MULTISERVER", _MULTISERVER_DOC).replace(
            "FALLING", _FALLING_DOC)
