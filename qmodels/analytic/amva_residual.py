"""Approximate MVA with a residual-service correction for FCFS stations
with general service, closed networks (``method="mva-residual"``): an
APPROXIMATION.

A job arriving at a single-server FCFS queue waits for the jobs queued
before it (a full service each) and for the residual service of the job in
service.  With service SCV c^2 the mean residual of a service in progress
is S (1 + c^2) / 2 (the mean residual life of a renewal interval;
Kleinrock 1975, sec. 5.2), so the arrival-theorem response time becomes

    R_ck = S_ck + sum_j S_jk (Q_jk - U_jk) + sum_j U_jk S_jk (1 + c_k^2) / 2
         = S_ck + sum_j S_jk Q_jk + sum_j U_jk S_jk (c_k^2 - 1) / 2

with Q_jk, U_jk the mean number and utilisation of class j at station k as
seen by the arriving class-c job, i.e. at population N - e_c (Reiser's
approximation for non-exponential FCFS service in MVA; Bolch, Greiner,
de Meer & Trivedi 2006, ch. 10, approximate MVA for closed
non-product-form networks; M. Reiser, "A queueing network analysis of
computer communication networks with window flow control", IEEE Trans.
Commun. 27(8), 1979).  Here both are estimated by Schweitzer's
approximation, Q_jk(N - e_c) = (N_j - [j = c]) / N_j Q_jk(N) and the same
for U_jk, and the equations are iterated to a fixed point as Schweitzer-Bard
MVA is (:func:`qmodels.analytic.amva.schweitzer`).  With c^2 = 1 and
class-independent service times the correction vanishes and the method is
Schweitzer's.

A c-server FCFS queue is split as in Seidmann, Schweitzer & Shalev-Oren
(1987): one server of service time S/c (same SCV) plus a delay of S (c-1)/c;
the correction applies to the single-server part (the two published
approximations combined here; their joint accuracy is what the validation
catalog measures, no paper is claimed for it).  PS queues and delays are
insensitive to the service shape (BCMP types 2, 3) and are treated as in
product form.

Assumptions: closed classes; no token pools; no capacity that can bind;
load-dependent stations only with exponential service (treated as in
:func:`~qmodels.analytic.amva.schweitzer`).  Refused with
:class:`~qmodels.errors.UnsupportedModelError` naming the station or class.
Accuracy: over 60 random closed networks (``python -m validation.nonexp``,
table in ``validation/nonexp_table.md``) the class throughput was within
32 % of the simulator's (6.2 % on average; Schweitzer with the shapes
ignored: 107 %, 13 %) and the response time within 47 % (7.9 %); the
documented tolerances are 35 % (X) and 50 % (R).  The worst cases have few
jobs at a highly variable queue: the arriving job meets a service younger
than the time-average one the residual S (1 + c^2)/2 assumes, so the
correction overshoots.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import UnsupportedModelError
from ..model.distributions import is_exponential
from ..model.network import LoadDependent, Network
from ..results import Result
from ._common import _check_options
from .amva import (
    _amva_estimates,
    _amva_init,
    _amva_prepare,
    _amva_result,
    _capacities,
    _check_multiserver,
    _warn_unconverged,
    saturate,
    single_class_start,
)
from .amva_ld import ld_factor
from .contract import answers

__all__ = ["mva_residual"]

_SOLVER = "residual MVA (method='mva-residual')"


def _adapter(net: Network, multiserver: str):
    """The network's service SCV per station (1 where the shape does not
    matter) and a copy without service shapes for the product-form
    preparation of :func:`qmodels.analytic.amva._amva_prepare`, after the
    refusals particular to this method; built once per network and
    ``multiserver`` (a repeated solve reuses them)."""
    _check_multiserver(multiserver)
    return net.lowered.memo(("mva-residual.adapter", multiserver),
                            lambda: _build_adapter(net, multiserver))


def _build_adapter(net: Network, multiserver: str):
    if net.classes and not net.is_closed:
        raise UnsupportedModelError(
            f"{_SOLVER} handles closed classes only; this network has open classes "
            f"({', '.join(repr(c.name) for c in net.open_classes)}): use method='qna' for an "
            "open network, method='sim' for a mixed one")
    scv = np.ones(len(net.stations))
    fcfs = np.zeros(len(net.stations), bool)
    acts_fcfs = net.lowered.acts_fcfs     # FCFS, or a priority queue one level visits
    plain = []
    low = net.lowered
    for k, s in enumerate(net.stations):
        # one shape per station (refused by name where it differs by class
        # at an FCFS or load-dependent station; PS and delay stations are
        # insensitive to it, BCMP types 2-4)
        d = low.one_shape(k, _SOLVER) if (acts_fcfs[k] or isinstance(s, LoadDependent)) \
            else None
        if is_exponential(d):
            plain.append(s)
            fcfs[k] = bool(acts_fcfs[k])
            continue
        if isinstance(s, LoadDependent):
            raise UnsupportedModelError(
                f"station {s.name!r}: load-dependent with {type(d).__name__} service (scv "
                f"{d.scv:g}); {_SOLVER} corrects single- and multi-server FCFS queues only: use "
                "method='sim'")
        if acts_fcfs[k]:
            if s.servers > 1 and multiserver != "seidmann":
                raise UnsupportedModelError(
                    f"station {s.name!r}: {s.servers}-server FCFS with {type(d).__name__} "
                    f"service; {_SOLVER} corrects multi-server queues only in Seidmann's "
                    "decomposition: use multiserver='seidmann' (the default)")
            scv[k] = float(d.scv)
            fcfs[k] = True
        plain.append(dataclasses.replace(s, distribution=None))
    own = any(c.distribution for c in net.classes)
    stripped = net if all(a is b for a, b in zip(plain, net.stations)) and not own else \
        dataclasses.replace(net, stations=tuple(plain), classes=tuple(
            dataclasses.replace(c, distribution=None) if c.distribution else c
            for c in net.classes))
    scv.flags.writeable = False
    fcfs.flags.writeable = False
    return stripped, scv, fcfs


def _single_class_start(Dx, Sx, Vx, kind, resid, Z, N):
    """The fixed point of :func:`residual_fixed_point` for one class
    without load-dependent columns, as the iteration's start (None for
    anything else): :func:`qmodels.analytic.amva.single_class_start` with
    e_x = Vx_x Sx_x, p_x = 1 and s_x = r_x a Dx_x, i.e. per column
    Q_x = X e_x (1 + r_x a X Dx_x) / (1 - a X e_x) at a queue (r_x the
    residual term (c_x^2 - 1)/2, 0 at PS): the residual correction's
    R = S (1 + a Q + r a U) with U = X Dx, solved for Q."""
    if Dx.shape[0] != 1 or (kind == 2).any() or N[0] < 1:
        return None
    n = float(N[0])
    a = (n - 1.0) / n
    q = kind == 1
    s = np.where(q, resid * a * Dx[0], 0.0)
    return single_class_start(Vx[0] * Sx[0], np.ones(Dx.shape[1]), s, q, float(Z[0]), n)


def residual_fixed_point(Dx, Sx, Vx, kind, corr, resid, mult, nmult, Z, N, Q, tol, max_iter):
    """Fixed point of residual MVA over the expanded columns x.

    Per visit, for class c at column x (``Sx`` service time, ``Vx`` visits):
    a delay column (kind 0): Sx_cx; a single-server column (kind 1) with
    ``corr[x]`` (an FCFS queue):
    Sx_cx + sum_j Sx_jx Qe_jx + (c_x^2 - 1)/2 sum_j Sx_jx Ue_jx, else
    (PS) Sx_cx (1 + sum_j Qe_jx); a load-dependent column (kind 2):
    Sx_cx times :func:`qmodels.analytic.amva_ld.ld_factor` at sum_j Qe_jx.
    Qe, Ue are Schweitzer's estimates at N - e_c: the class-N_j figures
    times (N_j - [j = c]) / N_j.  Then X_c = N_c / (Z_c + sum_x Vx_cx R_cx),
    Q_cx = X_c Vx_cx R_cx, U_cx = X_c Dx_cx; classes updated in turn
    (Gauss-Seidel).  ``resid[x]`` is (c_x^2 - 1)/2.

    After each sweep the throughputs are held to the utilisation law
    (:func:`saturate`).  This is needed: with c^2 < 1 the correction is
    negative, and at a saturated station Schweitzer's estimate of the queue
    an arriving job meets, (N - 1)/N Q, with the time-average residual
    S (1 + c^2)/2 puts the station's queue at 1 + (N - 1)(1 + c^2)/2 < N
    jobs when U = 1, so the unconstrained fixed point lies past U = 1 (a
    saturated deterministic queue of N = 10 with a delay: U = 1.046).  The
    true saturated closed chain meets a service that has just begun, not a
    time-average one; the constrained fixed point puts that station at
    U = 1 holding the jobs the others do not (a CTMC with Erlang phases
    gives U = 0.9994 there).  Returns (X, Rres, sweeps, converged); ``Q``
    updated in place.
    """
    C, Kx = Dx.shape
    X = np.zeros(C)
    U = X[:, None] * Dx
    Rres = np.zeros((C, Kx))
    amax = max(float(N.sum()) - 1.0, 0.0)
    cap = _capacities(kind, mult, nmult)
    for it in range(1, max_iter + 1):
        err = 0.0
        before = Q.copy()
        for c in range(C):
            if N[c] <= 0:
                continue
            inv = 1.0 / N[c]
            Qe = Q.sum(axis=0) - Q[c] * inv
            sq = (Sx * Q).sum(axis=0) - Sx[c] * Q[c] * inv
            su = (Sx * U).sum(axis=0) - Sx[c] * U[c] * inv
            r = np.where(kind == 0, Sx[c], np.where(corr, Sx[c] + sq + resid * su,
                                                      Sx[c] * (1.0 + Qe)))
            for x in np.flatnonzero(kind == 2):
                r[x] = Sx[c, x] * ld_factor(max(Qe[x], 0.0), mult[x], nmult[x], amax)
            res = Vx[c] * r
            X[c] = N[c] / (Z[c] + res.sum())
            new = X[c] * res
            err = max(err, float(np.abs(new - Q[c]).max()) * inv)
            Q[c] = new
            U[c] = X[c] * Dx[c]
            Rres[c] = res
        if saturate(X, Rres, Dx, Z, N, cap):
            # the change of the sweep is measured on the constrained figures
            # (the unconstrained step overshoots by the same amount each sweep)
            Q[:] = X[:, None] * Rres
            U[:] = X[:, None] * Dx
            err = float((np.abs(Q - before).max(axis=1) / np.maximum(N, 1)).max())
        if err <= tol:
            return X, Rres, it, True
    return X, Rres, max_iter, False


@answers()
def mva_residual(net: Network, *, tol: float = 1e-8, max_iter: int = 10000,
                 multiserver: str = "seidmann", falling_rates: bool = False) -> Result:
    """Approximate MVA with the residual-service correction for FCFS
    stations with general service, closed networks
    (``method="mva-residual"``; APPROXIMATE).

    Parameters
    ----------
    net : Network
        Closed classes; FCFS queues with any service shape (one or several
        servers), PS queues, delays, exponential load-dependent stations.
    tol : float
        Stop when max_ck |Q_ck(new) - Q_ck(old)| / N_c <= tol.
    max_iter : int
        Sweep limit; reaching it emits
        :class:`~qmodels.errors.ConvergenceWarning` and sets
        ``info["converged"] = False``.
    multiserver : {"seidmann", "marginal"}
        c-server queues: Seidmann's split (default; needed for a
        non-exponential c-server FCFS queue) or, for exponential ones only,
        the load-dependent marginal estimate of
        :func:`~qmodels.analytic.amva.schweitzer`.
    falling_rates : bool
        As in :func:`~qmodels.analytic.amva.schweitzer`.

    Returns
    -------
    Result
        method ``"mva-residual"``; ``info["iterations"]``,
        ``info["service_scv"]``; ``notes`` says it is an approximation.

    Raises
    ------
    UnsupportedModelError
        Open or mixed classes, token pools, a capacity that can bind, a
        load-dependent station with non-exponential service, a
        non-exponential c-server FCFS queue with ``multiserver="marginal"``,
        symbolic input.

    Notes
    -----
    Equations in the module docstring and :func:`residual_fixed_point`.
    Exact for one job (no queueing).  With exponential service the
    correction vanishes and the answer is Schweitzer-Bard MVA's, except at
    an FCFS queue whose mean service time differs by class, where this
    method keeps FCFS (sum_j S_jk Q_jk) and product-form solvers answer for
    processor sharing.

    References
    ----------
    M. Reiser, "A queueing network analysis of computer communication
    networks with window flow control", IEEE Trans. Commun. 27(8), 1979.
    G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, Queueing Networks and
    Markov Chains, 2nd ed., Wiley 2006, ch. 10.
    P. Schweitzer, "Approximate analysis of multiclass closed networks of
    queues", 1979.
    A. Seidmann, P. Schweitzer, S. Shalev-Oren, "Computerized closed
    queueing network models of flexible manufacturing systems", Large Scale
    Systems 12:91-107, 1987.
    """
    _check_options(tol, max_iter)
    stripped, scv, fcfs = _adapter(net, multiserver)
    Dx, kind, owner, Z, N, notes, scale, mult, nmult = _amva_prepare(
        stripped, _SOLVER, multiserver, falling_rates, class_dependent_fcfs=True)
    S = np.asarray(net.service_times, dtype=float)
    V = np.asarray(net.visits, dtype=float)
    Sx = S[:, owner] * scale[None, :]
    Vx = V[:, owner]
    corr = (kind == 1) & fcfs[owner]
    resid = np.where(corr, (scv[owner] - 1.0) / 2.0, 0.0)
    Q = _single_class_start(Dx, Sx, Vx, kind, resid, Z, N)
    if Q is None:
        Q = _amva_init(Dx, N)
    X, R, it, conv = residual_fixed_point(Dx, Sx, Vx, kind, corr, resid, mult, nmult, Z, N, Q,
                                          float(tol), int(max_iter))
    notes = ["APPROXIMATION: MVA with a residual-service correction for FCFS stations with "
             "general service (Reiser 1979; Bolch et al. 2006, ch. 10), arrival-instant "
             "figures by Schweitzer's estimate"] + notes
    info = {"algorithm": "residual-service approximate MVA (Schweitzer estimates)",
            "iterations": int(it), "converged": bool(conv), "tol": float(tol),
            "multiserver": multiserver, "service_scv": scv.tolist()}
    if not conv:
        _warn_unconverged(_SOLVER, max_iter, info)
    F = np.zeros((len(N), len(N), Dx.shape[1]))
    return _amva_result(net, "mva-residual", (Dx, kind, owner, scale, mult, nmult), X, R, notes,
                        info, _amva_estimates(Q, F, N), N)
