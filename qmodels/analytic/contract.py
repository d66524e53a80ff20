"""What every analytic answer promises, enforced in one place.

Each public solver of this package is wrapped by :func:`answers`; the
result it returns passes through :func:`finish` before the caller sees it:

1. **The label.**  The result says what it is (``exactness``: exact,
   approximate or bound), which method made it and what it assumed
   (:data:`qmodels.results.METHOD_LABELS`, plus what the solver added).  A
   product-form solver asked for ``fcfs_as_ps=True`` solves the processor
   sharing substitute of every FCFS queue whose mean service time differs
   by class (BCMP type 2 instead of type 1; Baskett, Chandy, Muntz &
   Palacios, JACM 22(2), 1975): its answer is labelled approximate, names
   the stations, and carries the error measured for that substitution.

2. **The laws.**  No answer leaves a solver that an operational law refutes
   (Denning & Buzen, "The operational analysis of queueing network models",
   Computing Surveys 10(3), 1978; Lazowska, Zahorjan, Graham & Sevcik,
   *Quantitative System Performance* (QSP), 1984, ch. 3 and 5):

   * every figure finite and non-negative;
   * Little's law at every station and class, Q = X R (QSP sec. 3.2.2);
   * the forced flow law X_k = V_k X (QSP eq. 3.3);
   * the utilisation law U = X S / c at a queue, U = X S at a delay
     (QSP eq. 3.1), and U <= 1 per server at every queue (which bounds X by
     c/D: the bottleneck law, QSP sec. 5.2), X_k S_k <= max a(n) at a
     load-dependent station;
   * job conservation for a closed class, sum_k Q_k + X Z = N (the
     interactive response time law, QSP eq. 3.5), and X = lambda for an
     open class without finite room (X <= lambda where arrivals can be lost);
   * the response time law R = sum_k V_k R_k (QSP sec. 3.2.3);
   * R >= the class's no-contention time: its demands (D / sigma at a
     load-dependent station, the longest branch at a fork-join).

   A violation raises :class:`~qmodels.errors.LawViolationError` naming the
   law, the station and class, and the values; ``qm.solve(net)`` then
   passes the method over.  The approximations are built to hold these laws
   (their fixed points impose them); the check is what makes that a
   promise, not a hope.

3. **The error.**  An approximate answer carries the error envelope
   measured for its method on networks like the one solved
   (:mod:`qmodels.analytic.envelopes`), in ``error`` and in a note, or a
   warning that it lies outside every measured envelope.

4. **The route.**  A method that routes jobs (:data:`ROUTING_METHODS`:
   QNA, the CTMC, the decomposition) routes a class given by visit ratios
   at random; outside product form, where the order of visits changes the
   answer, the result carries a warning that says so and how to give the
   path (:func:`qmodels.model.lowered.random_routing_warning`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import sys
from collections.abc import Mapping

import numpy as np

from .. import _jit
from ..errors import LawViolationError
from ..model.network import Closed, Delay, LoadDependent, Network, Open, Queue
from ..results import APPROXIMATE, Result
from . import _laws_fast, requires

__all__ = ["answers", "finish", "law_violations", "check_laws", "as_ps"]

#: methods whose answer follows each class's routing (a class given by
#: visit ratios is routed at random), with the name the warning gives them
ROUTING_METHODS = {"qna": "QNA", "ctmc": "the CTMC", "decomposition": "the decomposition"}

#: relative tolerance of the law checks (an iterative method's own
#: tolerance is added to it)
RTOL = 1e-6


# ---------------------------------------------------------------------------
# the laws
# ---------------------------------------------------------------------------

class _Laws:
    """Collects violations: each a sentence naming the law, where, and the
    values."""

    def __init__(self, rtol: float, atol: float):
        self.rtol, self.atol = rtol, atol
        self.out: list[str] = []

    def close(self, law, where, actual, expected):
        a, e = float(actual), float(expected)
        if not (math.isfinite(a) and math.isfinite(e)):
            if a != e:
                self.out.append(f"{law} at {where}: {a:.10g} != {e:.10g}")
            return
        if abs(a - e) > self.atol + self.rtol * max(abs(a), abs(e)):
            self.out.append(f"{law} at {where}: {a:.10g} != {e:.10g}")

    def at_most(self, law, where, actual, limit):
        if float(actual) > float(limit) * (1 + self.rtol) + self.atol:
            self.out.append(f"{law} at {where}: {float(actual):.10g} > {float(limit):.10g}")

    def at_least(self, law, where, actual, limit):
        if float(actual) < float(limit) * (1 - self.rtol) - self.atol:
            self.out.append(f"{law} at {where}: {float(actual):.10g} < {float(limit):.10g}")

    # the same three on arrays: ``where(*index)`` names an offending entry

    def all_close(self, a, e) -> bool:
        """Every entry of the finite array ``a`` within tolerance of ``e``
        (False also where ``e`` is not finite): the usual case, in few
        array operations (each costs a microsecond or more on a small
        array, most of a repeated solve's check)."""
        ok = np.abs(a - e) <= np.minimum(
            self.atol + self.rtol * np.maximum(np.abs(a), np.abs(e)), _BIG)
        return np.count_nonzero(ok) == ok.size

    def close_all(self, law, where, actual, expected):
        a, e = np.asarray(actual, float), np.asarray(expected, float)
        # ``actual`` is finite here (:func:`law_violations` checks every
        # figure first); an expected value that is not finite, or any entry
        # out of tolerance, takes the exact route below
        if self.all_close(a, e):
            return
        both = np.isfinite(a) & np.isfinite(e)
        with np.errstate(invalid="ignore"):
            far = np.abs(a - e) > self.atol + self.rtol * np.maximum(np.abs(a), np.abs(e))
        bad = np.where(both, far, a != e)
        for idx in zip(*np.nonzero(bad)):
            self.out.append(f"{law} at {where(*idx)}: {a[idx]:.10g} != {e[idx]:.10g}")

    def at_most_all(self, law, where, actual, limit):
        a, m = np.asarray(actual, float), np.asarray(limit, float)
        over = a > m * (1 + self.rtol) + self.atol
        if not np.count_nonzero(over):
            return
        for idx in zip(*np.nonzero(over)):
            self.out.append(f"{law} at {where(*idx)}: {a[idx]:.10g} > {m[idx]:.10g}")

    def at_least_all(self, law, where, actual, limit):
        a, m = np.asarray(actual, float), np.asarray(limit, float)
        under = a < m * (1 - self.rtol) - self.atol
        if not np.count_nonzero(under):
            return
        for idx in zip(*np.nonzero(under)):
            self.out.append(f"{law} at {where(*idx)}: {a[idx]:.10g} < {m[idx]:.10g}")


#: the largest double: a tolerance bound capped here makes an infinite
#: difference fail the fast comparison of :meth:`_Laws.close_all`
_BIG = float(np.finfo(float).max)


def _pool_waiting(result) -> float:
    """Mean number of jobs waiting for a token (at no station), summed over
    the pools (``info["pools"][p]["waiting"]``; 0 without pools).  A pool
    held by fork-join tasks (``"counts": "tasks"``) counts tasks, whose jobs
    are in the fork-join's queue length: not added."""
    info = getattr(result, "info", None)
    pools = info.get("pools") if isinstance(info, Mapping) else None
    if not isinstance(pools, Mapping):
        return 0.0
    return sum(float(d.get("waiting", 0.0)) for d in pools.values()
               if isinstance(d, Mapping) and d.get("counts") != "tasks")


def _no_contention(net: Network, c: int, in_branch) -> float:
    """The least time per cycle of class ``c`` without think time: its
    demands outside fork-joins (D / sigma at a load-dependent station,
    sigma = max_n a(n)/n; :func:`qmodels.analytic.laws.job_speed`), plus at
    each fork-join its visits times its longest branch (a join waits for
    the slowest task: E max >= max E)."""
    from ..model.forkjoin import critical_path_demand
    from .laws import job_speed

    lb = critical_path_demand(net, c)
    D = np.asarray(net.demands, dtype=float)[c]
    for k, s in enumerate(net.stations):
        if isinstance(s, LoadDependent) and not in_branch[k] and D[k] > 0:
            lb -= D[k] * (1.0 - 1.0 / float(job_speed(s)))
    return lb


def _entry_lossy(net: Network) -> dict:
    """{class index: (P, p0)} of the open classes given by a routing table
    that enter the network at two stations or more, one of them of finite
    capacity: an arrival that finds its first station full is lost
    (:mod:`qmodels.analytic.ctmc`), so the accepted jobs enter at station k
    with a probability that differs from the table's p0[k] and the visit
    ratios per accepted job are not the table's.  P[j, k] the table's
    station-to-station probabilities (QNA's reading of the table)."""
    from .qna import _routing_arrays, _visit_routing

    index = {s.name: k for k, s in enumerate(net.stations)}
    K = len(net.stations)
    V = np.asarray(net.visits, dtype=float)
    pooled = {s for p in net.pools for s in (p.acquire, p.release)} if net.pools else set()
    out = {}
    for c, cls in enumerate(net.classes):
        if not isinstance(cls, Open):
            continue
        routing = getattr(cls, "routing", None)
        if routing is None:
            if pooled & {s.name for s, v in zip(net.stations, V[c]) if v > 0}:
                continue        # (held chains followed as units: not these equations)
            # a class given by visits, routed at random (qmodels.sim.flatten)
            p0, P = _visit_routing(V[c])
        elif any(not isinstance(dst, str) for row in routing.values() for dst in row):
            continue            # (class switching: the chain's laws hold instead)
        else:
            p0, P = _routing_arrays(cls, index, K)
        entries = np.flatnonzero(p0 > 0)
        # losses at entry change the accepted jobs' visits where they can
        # also enter elsewhere, or leave without any visit (p0 summing < 1)
        if (len(entries) >= 2 or float(p0.sum()) < 1.0 - 1e-12) and any(
                net.stations[k].capacity is not None for k in entries):
            out[c] = (P, p0)
    return out


class _Structure:
    """What the law checks read from the structure of a network (names,
    masks of the stations with servers, of the queues, of the fork-join
    branches and of the visited stations, the load-dependent capacities,
    the class-switching chains, the class types): shared by a network and
    the points of a sweep that change only its numbers
    (:meth:`~qmodels.model.lowered.Lowered.family`)."""

    def __init__(self, net: Network):
        from ..model.forkjoin import branch_owner

        self.cls_names = [c.name for c in net.classes]
        self.st_names = [s.name for s in net.stations]
        self.V = np.asarray(net.visits, float)
        owner = branch_owner(net.stations)
        self.in_branch = np.array([s.name in owner for s in net.stations], dtype=bool)
        self.servers = np.array([float(st.servers) if isinstance(st, Queue) else
                                 1.0 if isinstance(st, Delay) else np.nan
                                 for st in net.stations])
        self.has = np.isfinite(self.servers)
        self.has_all = bool(self.has.all())
        self.has_cols = np.flatnonzero(self.has)
        self.servers_has = self.servers[self.has]
        self.queues = np.array([isinstance(st, Queue) for st in net.stations], dtype=bool)
        self.qcols = np.flatnonzero(self.queues)
        self.ones_q = np.ones(len(self.qcols))
        self.ld = [(k, st.name, max(float(a) for a in st.rate_multipliers))
                   for k, st in enumerate(net.stations) if isinstance(st, LoadDependent)]
        self.pooled_classes = bool(net.pools) and len(net.classes) > 1
        self.pools = bool(net.pools)
        self.has_open = bool(net.open_classes)
        self.cap_lossy = any(s.capacity is not None for s in net.stations)
        self.entry_lossy = _entry_lossy(net) if self.cap_lossy else {}
        self.chain = {n: [net.class_index(m) for m in ch] for ch in net.chains if len(ch) > 1
                      for n in ch}
        self.closed = [isinstance(c, Closed) for c in net.classes]
        self.visited = (self.V > 0) & ~self.in_branch[None, :]
        # V where a class's response time sums its visits (outside
        # fork-join branches), and the mask of the stations its jobs are at
        self.V_visited = np.where(self.visited, self.V, 0.0)
        self.outside = (~self.in_branch).astype(float)


class _Plan:
    """What the law checks read from the model, derived once per network
    (``net.lowered.memo``: the network is immutable, so a repeated solve
    pays for it once): the structure's tables (:class:`_Structure`, shared
    with the points of a sweep that change only numbers), S, the think
    times, populations and arrival rates, whether a finite capacity can
    bind and each class's no-contention time.  Only the answer's figures
    are read per call."""

    def __init__(self, net: Network):
        self.__dict__.update(net.lowered.family("contract.structure",
                                                lambda: _Structure(net)).__dict__)
        self.S = np.asarray(net.service_times, float)
        closed = None if net.open_classes else int(sum(int(c.population) for c in net.classes))
        self.blocking = requires.capacities(net, closed) is not None
        # X S / c where the station has servers (the whole of S / c when
        # every station has them)
        self.S_per_server = self.S[:, self.has] / self.servers_has
        self.think = np.array([float(getattr(c, "think_time", 0.0)) for c in net.classes])
        self.pop = [float(c.population) if cl else 0.0
                    for c, cl in zip(net.classes, self.closed)]
        self.lam = [0.0 if cl else float(c.arrival_rate)
                    for c, cl in zip(net.classes, self.closed)]
        self.total_pop = float(sum(self.pop))
        self._lb = None
        self._net = net

    def no_contention(self, c: int) -> float:
        """Class ``c``'s no-contention time (:func:`_no_contention`), all
        classes computed on first use."""
        if self._lb is None:
            self._lb = [_no_contention(self._net, i, self.in_branch)
                        for i in range(len(self.cls_names))]
        return self._lb[c]

    def where(self, c, k):
        return f"station {self.st_names[k]!r}, class {self.cls_names[c]!r}"

    def fast(self):
        """(plan, has_cols, qcols) of the compiled check
        (:func:`qmodels.analytic._laws_fast.laws_hold`), or None for a
        network whose laws are not the plain ones it covers (token pools,
        class switching, blocking, losses at entry, load-dependent
        stations); derived on first use."""
        if "_fast" not in self.__dict__:
            self._fast = None
            if not (self.pools or self.chain or self.blocking or self.entry_lossy or self.ld):
                lb = [self.no_contention(c) for c in range(len(self.cls_names))]
                buf = np.concatenate((self.V.ravel(), self.V_visited.ravel(),
                                      self.S_per_server.ravel(), self.outside, self.think,
                                      self.pop, self.lam, lb,
                                      np.asarray(self.closed, dtype=float)))
                self._fast = (np.ascontiguousarray(buf, dtype=float),
                              np.ascontiguousarray(self.has_cols, dtype=np.int64),
                              np.ascontiguousarray(self.qcols, dtype=np.int64))
        return self._fast


def _plan(net: Network) -> _Plan:
    return net.lowered.memo("contract.plan", lambda: _Plan(net))


def _station_laws(plan, chk, uchk, X, Q, R, U, Xc) -> None:
    """Little, forced flow and the utilisation law per (class, station);
    U <= 1 per station.  With ``blocking`` (a finite capacity that can
    bind) a server is busy while it serves and while it holds a job blocked
    after service, so U >= X S / c there.  ``uchk`` checks the
    utilisations: fractions of one, whose absolute tolerance is not scaled
    by the largest figure of the answer (a starved class's R of 1e12 must
    not let U = 1.03 pass).  Checked on whole arrays (a 5 x 100 answer in
    well under a millisecond); sentences only for what fails."""
    where = plan.where
    V, S = plan.V, plan.S
    XR, VX = X * R, V * Xc[:, None]
    if plan.entry_lossy:
        # an open class losing arrivals at one of several entries: its
        # accepted jobs' visit ratios are not the table's, so in place of
        # X_k = V_k X the traffic equations with losses at entry, X_k =
        # a_k + sum_j X_j P_jk, the accepted entries 0 <= a_k <= lambda p0_k
        # summing to X (Jackson's equations with the lost part of each
        # entry's stream taken out; Gross & Harris, sec. 4.2)
        VX = VX.copy()
        for c, (P, p0) in plan.entry_lossy.items():
            VX[c] = X[c]
            a = X[c] - X[c] @ P
            lam = plan.lam[c]
            for k in range(len(a)):
                w = f"station {plan.st_names[k]!r}, class {plan.cls_names[c]!r}"
                chk.at_least("traffic equation with losses at entry a_k >= 0", w, a[k], 0.0)
                chk.at_most("traffic equation with losses at entry a_k <= lambda p0_k", w,
                            a[k], lam * p0[k])
            # (the jobs that make no visit, lambda (1 - sum p0), are never lost)
            chk.close("traffic equation with losses at entry sum a_k + lambda (1 - sum p0) = X",
                      f"class {plan.cls_names[c]!r}",
                      float(a.sum()) + lam * max(1.0 - float(p0.sum()), 0.0), float(Xc[c]))
    if not chk.all_close(np.concatenate((Q.ravel(), X.ravel())),
                         np.concatenate((XR.ravel(), VX.ravel()))):
        # (both laws at once when they hold; each on its own to say where not)
        chk.close_all("Little's law Q = X R", where, Q, XR)
        chk.close_all("forced flow law X_k = V_k X", where, X, VX)
    if len(plan.has_cols):
        cols = plan.has_cols
        if plan.has_all:
            busy, Uh = X * plan.S_per_server, U
        else:
            busy, Uh = X[:, plan.has] * plan.S_per_server, U[:, plan.has]

        def where_u(c, j):
            return where(c, cols[j])

        if plan.blocking:
            uchk.at_least_all("utilisation law U >= X S / c (blocking holds servers)",
                              where_u, Uh, busy)
        else:
            uchk.close_all("utilisation law U = X S / c", where_u, Uh, busy)
    if len(plan.qcols):
        qcols = plan.qcols
        Uq = U[:, qcols]
        uchk.at_most_all("utilisation U <= 1 per server (X <= c / D)",
                         lambda j: f"station {plan.st_names[qcols[j]]!r}",
                         Uq[0] if len(Uq) == 1 else Uq.sum(axis=0), plan.ones_q)
    for k, name, amax in plan.ld:
        chk.at_most("capacity of a load-dependent station X S <= max a(n)",
                    f"station {name!r}", float(np.dot(X[:, k], S[:, k])), amax)


def _class_laws(net, plan, chk, result, Q, R, Rc, Xc) -> None:
    """Conservation, the response time law and the no-contention bound per
    class.  With ``blocking`` a job can wait outside every station (at the
    end of its think time, for a full station), so the jobs at stations and
    thinking are at most N and R at least the sum over its stations; the
    interactive response time law N = X (R + Z) holds whatever happens."""
    waiting = _pool_waiting(result)
    blocking, in_branch = plan.blocking, plan.in_branch
    pooled_classes = plan.pooled_classes
    if pooled_classes and not plan.has_open:
        # the solvers give the jobs waiting for tokens in total only; with
        # blocking, jobs waiting to enter a full station are in neither sum
        total = sum(Q[c][~in_branch].sum() + Xc[c] * plan.think[c]
                    for c in range(len(plan.cls_names)))
        law = chk.at_most if blocking else chk.close
        law("job conservation sum Q + W_token + X Z = N", "all classes",
            total + waiting, plan.total_pop)
    lossy = _lossy(plan, result)
    chain = plan.chain
    w = 0.0 if pooled_classes else (waiting if plan.pools else 0.0)
    # (matrix products: a reduction costs several times more on small arrays)
    Rsum = (plan.V_visited * R) @ np.ones(R.shape[1]) if not pooled_classes else None
    Qsum = Q @ plan.outside
    for c, name in enumerate(plan.cls_names):
        where = f"class {name!r}"
        if Xc[c] > 0 and not pooled_classes and c in plan.entry_lossy:
            # visit ratios per accepted job unknown (entry losses): Little's
            # law for the class, X R = sum_k Q_k over its stations
            law = chk.at_least if blocking else chk.close
            law("Little's law for the class X R = sum Q_k (+ W_token)", where,
                Rc[c] * Xc[c], float(Qsum[c]) + w)
        elif Xc[c] > 0 and not pooled_classes:
            law = chk.at_least if blocking else chk.close
            law("response time law R = sum V_k R_k (+ W_token / X)", where, Rc[c],
                float(Rsum[c]) + w / Xc[c])
        if name in chain:       # class switching: conservation holds per chain
            _chain_laws(net, chk, c, chain[name], Q, Rc, Xc, in_branch, lossy, plan)
            continue
        if plan.closed[c]:
            if Xc[c] > 0:
                chk.close("interactive response time law N = X (R + Z)", where,
                          Xc[c] * (Rc[c] + plan.think[c]), plan.pop[c])
            if not pooled_classes:
                law = chk.at_most if blocking else chk.close
                law("job conservation sum Q + W_token + X Z = N", where,
                    Qsum[c] + w + Xc[c] * plan.think[c], plan.pop[c])
        else:
            lam = plan.lam[c]
            chk.at_most("flow conservation X <= lambda", where, Xc[c], lam)
            if not lossy:
                chk.close("flow conservation X = lambda", where, Xc[c], lam)
        if Xc[c] > 0 and c not in plan.entry_lossy:
            # (with losses at entry an accepted job's visits are fewer than
            # the table's where it could also have made none or gone
            # elsewhere, so its no-contention time is not the table's)
            chk.at_least("R >= the no-contention time (sum of demands)", where, Rc[c],
                         plan.no_contention(c))


def _lossy(plan, result) -> bool:
    """Whether arrivals can be lost: a finite capacity, or an answer
    truncated at a bound on the open jobs (``info["truncation_mass"]``):
    then X <= lambda, not X = lambda."""
    info = getattr(result, "info", None)
    trunc = float(info.get("truncation_mass", 0.0) or 0.0) if isinstance(info, Mapping) else 0.0
    return bool(plan.cap_lossy or trunc > 0)


def _chain_laws(net, chk, c, members, Q, Rc, Xc, in_branch, lossy, plan) -> None:
    """The laws of class ``c`` in a class-switching chain (``members``:
    the chain's class indices; :mod:`qmodels.analytic.switching`): the
    response time law and the no-contention bound per class as always;
    conservation per chain, X_h sum_c R_c = N_h and sum Q = N_h (closed),
    X_h = Lambda_h, the chain's arrival rate (open)."""
    cls = net.classes[c]
    where = f"class {cls.name!r} (chain {'+'.join(net.class_names[m] for m in members)})"
    V = plan.V
    if isinstance(cls, Closed):
        N = float(sum(int(net.classes[m].population) for m in members))
        if Xc[c] > 0:
            chk.close("interactive response time law N = X (R + Z) per chain", where,
                      Xc[c] * float(sum(Rc[m] for m in members)), N)
        chk.close("job conservation per chain sum Q = N", where,
                  float(Q[np.ix_(members, np.flatnonzero(~in_branch))].sum()), N)
    else:
        lam = float(sum(float(net.classes[m].arrival_rate) for m in members))
        chk.at_most("flow conservation per chain X <= Lambda", where, Xc[c], lam)
        if not lossy:
            chk.close("flow conservation per chain X = Lambda", where, Xc[c], lam)
    if Xc[c] > 0 and V[c].any():
        chk.at_least("R >= the no-contention time (sum of demands)", where, float(Rc[c]),
                     plan.no_contention(c))


def law_violations(result, *, rtol: float = RTOL, atol: float = 1e-12) -> list[str]:
    """Every operational law ``result`` breaks (module docstring), as
    sentences naming the law, the station and class, and the values; empty
    when it obeys them all.  Numeric analytic results only (a symbolic
    result is exact by construction: ``[]``).  What the checks read from
    the model is derived once per network (:class:`_Plan`)."""
    net = result.network
    if net.is_symbolic:
        return []
    X = np.asarray(result.station_throughput, float)
    Q = np.asarray(result.station_queue_length, float)
    R = np.asarray(result.station_response_time, float)
    U = np.asarray(result.station_utilization, float)
    Xc = np.asarray(result.class_throughput, float)
    Rc = np.asarray(result.class_response_time, float)
    if _laws_pass_compiled(result, rtol, atol, X, Q, R, U, Xc, Rc):
        return []
    # every figure in one array (U last): finiteness, the scale of the
    # absolute tolerance (U excluded) and the sign in three reductions
    allv = np.concatenate((X.ravel(), Q.ravel(), R.ravel(), Xc.ravel(), Rc.ravel(), U.ravel()))
    n_scaled = allv.size - U.size
    if np.count_nonzero(np.isfinite(allv)) == allv.size:
        scale = max(1.0, float(np.abs(allv[:n_scaled]).max(initial=0.0)))
        chk = _Laws(rtol, atol * scale)
        if not np.count_nonzero(allv < -chk.atol):
            return _all_laws(net, result, chk, rtol, atol, X, Q, R, U, Xc, Rc)
    # some figure is not finite or negative: say which
    scale = max([1.0] + [float(np.abs(a[np.isfinite(a)]).max(initial=0.0))
                         for a in (X, Q, R, Xc, Rc)])
    chk = _Laws(rtol, atol * scale)
    for name, a in (("throughput", X), ("queue length", Q), ("response time", R),
                    ("utilisation", U), ("class throughput", Xc),
                    ("class response time", Rc)):
        if not np.isfinite(a).all():
            chk.out.append(f"{name}: not finite ({a[~np.isfinite(a)][:3].tolist()})")
        elif (a < -chk.atol).any():
            chk.out.append(f"{name}: negative ({float(a.min()):.6g})")
    if chk.out:
        return chk.out
    return _all_laws(net, result, chk, rtol, atol, X, Q, R, U, Xc, Rc)


#: law checks made by this process so far (:func:`_laws_pass_compiled`)
_CHECKS = [0]
#: the compiled check runs from this many checks on, in a process where
#: numba is already imported: a repeated or swept solve, which gains about
#: 110 us a check, and never a one-off solve, which would pay numba's
#: start-up (0.6 s where nothing compiled has run yet; 0-30 ms to load the
#: kernel from numba's cache where something has)
COMPILED_AFTER = 64


def _laws_pass_compiled(result, rtol, atol, X, Q, R, U, Xc, Rc) -> bool:
    """Whether the compiled check (:mod:`._laws_fast`) passes the answer:
    True only where it ran and every law holds within half the tolerance;
    False where it did not run (before :data:`COMPILED_AFTER` checks or
    with numba not yet imported by this process; a network outside its
    plain laws; figures of unexpected shapes) or where some comparison
    failed, and the numpy check then decides."""
    kernel = _laws_fast.laws_hold
    _CHECKS[0] += 1
    if not (_jit.HAVE_NUMBA and (kernel.threshold == 0 or (
            _CHECKS[0] > COMPILED_AFTER and "numba" in sys.modules))):
        return False
    plan = _plan(result.network)
    fast = plan.fast()
    if fast is None:
        return False
    C, K = X.shape if X.ndim == 2 else (0, 0)
    if not (C and Q.shape == R.shape == U.shape == (C, K) and Xc.shape == Rc.shape == (C,)):
        return False
    lossy = _lossy(plan, result)
    fig = np.concatenate((X.ravel(), Q.ravel(), R.ravel(), U.ravel(), Xc, Rc))
    table, has_cols, qcols = fast
    return bool(kernel.compiled()(fig, table, has_cols, qcols, C, K, float(rtol), float(atol),
                                  lossy))


def _all_laws(net, result, chk, rtol, atol, X, Q, R, U, Xc, Rc) -> list:
    """The station and class laws on finite, non-negative figures, into one
    list of violations (utilisations checked with the unscaled tolerance)."""
    plan = _plan(net)
    uchk = _Laws(rtol, atol)
    uchk.out = chk.out          # one list of violations
    _station_laws(plan, chk, uchk, X, Q, R, U, Xc)
    _class_laws(net, plan, chk, result, Q, R, Rc, Xc)
    return chk.out


def _tolerance(result) -> float:
    """The law checks' relative tolerance for ``result``: :data:`RTOL`,
    plus ten times an iterative method's own tolerance."""
    info = getattr(result, "info", None)
    tol = info.get("tol") if isinstance(info, Mapping) else None
    try:
        t = float(tol)
    except (TypeError, ValueError):
        t = 0.0
    return RTOL + (10.0 * t if math.isfinite(t) and t > 0 else 0.0)


def check_laws(result) -> None:
    """Raise :class:`~qmodels.errors.LawViolationError` when ``result``
    breaks an operational law (:func:`law_violations`)."""
    bad = law_violations(result, rtol=_tolerance(result))
    if not bad:
        return
    info = getattr(result, "info", None)
    conv = isinstance(info, Mapping) and info.get("converged") is False
    shown = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
    raise LawViolationError(
        f"method {result.method!r} gave an answer that breaks the operational laws: {shown}"
        + (" (the method did not converge: raise max_iter)" if conv else
           ": the answer is not returned; use another method (qm.solve(net) tries the next) "
           "or method='sim'"),
        method=result.method, violations=bad)


# ---------------------------------------------------------------------------
# the processor-sharing substitute (fcfs_as_ps=True)
# ---------------------------------------------------------------------------

def as_ps(net: Network) -> tuple[Network, list[str]]:
    """``net`` with every FCFS queue whose mean service time differs by
    class (:func:`qmodels.analytic._common.fcfs_as_ps_stations`) turned
    into a processor-sharing queue, and the names of those stations (the
    network itself and ``[]`` when there are none)."""
    from ._common import fcfs_as_ps_stations

    names = fcfs_as_ps_stations(net)
    if not names:
        return net, []
    chosen = set(names)
    stations = tuple(dataclasses.replace(s, discipline="ps") if s.name in chosen else s
                     for s in net.stations)
    return dataclasses.replace(net, stations=stations), names


def _fcfs_as_ps_assumption(names) -> str:
    shown = ", ".join(repr(n) for n in names[:8]) + (
        f" and {len(names) - 8} more" if len(names) > 8 else "")
    return (f"FCFS station(s) {shown} with class-dependent mean service times solved as "
            "processor sharing (fcfs_as_ps=True; BCMP type 2 in place of FCFS)")


# ---------------------------------------------------------------------------
# finishing an answer
# ---------------------------------------------------------------------------

def _set(result, **values) -> None:
    """Set fields of a result the solver has just made (no one else holds
    it yet)."""
    for k, v in values.items():
        object.__setattr__(result, k, v)


def finish(result, *, network: Network | None = None, substituted=(), check: bool = True):
    """The label, the law check and the error envelope of a fresh analytic
    result (module docstring); returns it.

    ``network`` is the model the user gave, when the solver answered for a
    substitute (the processor-sharing one of ``substituted`` stations);
    the result then refers to the user's model.  A result already finished
    (a solver's answer passed through another) is not checked again."""
    if not isinstance(result, Result):
        return result
    if result.__dict__.get("_finished") and network is None and not substituted:
        return result
    if network is not None:
        _set(result, network=network)
        result.__dict__.pop("_totals", None)
    if substituted:
        _set(result, exactness=APPROXIMATE,
             assumptions=tuple(result.assumptions) + (_fcfs_as_ps_assumption(substituted),))
    if check and not result.network.is_symbolic and not result.__dict__.get("_finished"):
        check_laws(result)
    if not result.__dict__.get("_finished"):
        # before the envelope: an answer approximate by Che's split alone
        # carries that family's measured error too (or the unmeasured warning)
        _label_caches(result)
    if (result.exactness == APPROXIMATE and not result.network.is_symbolic
            and (result.method != "ctmc" or result.info.get("fits"))):
        # (a CTMC answer is approximate by a fitted shape, whose error is
        # measured, or by its truncation, which it states itself)
        from .envelopes import attach

        cut = result.error if result.method == "ctmc" else None
        attach(result, substituted=bool(substituted))
        if cut and cut.get("source") == "truncation" and cut.get("truncation_mass"):
            # the truncation's own figures stay beside the envelope's
            object.__setattr__(result, "error", {**result.error, **cut,
                                                 "validated": result.error["validated"]})
    if result.method in ROUTING_METHODS and not result.network.is_symbolic:
        _warn_random_route(result)
    result.__dict__["_finished"] = True
    return result


def _label_caches(result) -> None:
    """A network with cache stations is solved with each cache's split by
    Che's approximation (:class:`~qmodels.model.CacheStation`): the answer
    is approximate by that approximation's error wherever it is not exact
    (an empty cache, one that holds every requested item, a uniform
    popularity: h = C / n by symmetry), and says so."""
    net = result.network
    caches = net.lowered.memo("contract.caches", lambda: _caches(net))
    if not caches:
        return
    approx = []
    for s in caches:
        q = s.popularity[s.popularity > 0]
        if 0.0 < s.hit_ratio < 1.0 and q.max() - q.min() > 1e-12 * q.max():
            approx.append(f"{s.name!r} (h = {s.hit_ratio:.6g}, {s.policy})")
    if not approx:
        return
    note = ("cache hit ratios by Che's approximation (Che, Tung & Wang 2002; Martina, "
            "Garetto & Leonardi 2014 for FIFO and RANDOM) at " + ", ".join(approx)
            + "; the simulator runs the caches item by item")
    _set(result, exactness=APPROXIMATE, assumptions=tuple(result.assumptions) + (note,))


def _caches(net: Network) -> tuple:
    """The cache stations of ``net`` (most networks have none: a repeated
    solve's check then costs one lookup, not a pass over the stations)."""
    from ..model.caching import CacheStation

    return tuple(s for s in net.stations if isinstance(s, CacheStation))


def _warn_random_route(result) -> None:
    """Add the random-routing warning to a routing method's answer for a
    model outside product form (contract point 4)."""
    from ..model.lowered import random_routing_warning

    net = result.network
    if requires.product_form(net) is None:
        return  # the means depend on the routing only through the visit ratios
    msg = random_routing_warning(net, ROUTING_METHODS[result.method])
    if msg is not None and msg not in result.warnings:
        _set(result, warnings=tuple(result.warnings) + (msg,))


def _switching(fn, net, args, kwargs, switching: bool, fcfs_as_ps: bool = False):
    """``fn``'s answer for a network with class switching: by the chain
    reduction (:mod:`qmodels.analytic.switching`) where the solver is
    declared to take it (``switching=True``), else its refusal by name.
    With ``fcfs_as_ps`` the FCFS queues whose mean service time differs by
    class, within a chain or between chains (on the reduced network, whose
    chains carry their populations), are solved as processor sharing and
    the answer is labelled approximate."""
    from . import switching as sw

    if switching == "native":
        return finish(fn(net, *args, **kwargs))
    if not switching:
        raise sw.refusal(fn.__name__)
    if kwargs.get("curve"):
        from ..errors import UnsupportedModelError

        raise UnsupportedModelError(
            "curve=True with class switching: the curve is over chain populations; solve "
            "each population with net.with_population(...)")
    if not fcfs_as_ps:
        return finish(sw.expand(finish(fn(sw.reduce(net), *args, **kwargs)), net))
    within = sw.fcfs_within_chains(net)
    chosen = set(within)
    ps = dataclasses.replace(net, stations=tuple(
        dataclasses.replace(s, discipline="ps") if s.name in chosen else s
        for s in net.stations)) if within else net
    reduced, across = as_ps(sw.reduce(ps))
    names = within + [n for n in across if n not in chosen]
    r = sw.expand(finish(fn(reduced, *args, **kwargs)), net)
    return finish(r, substituted=names)


def answers(*, fcfs_as_ps: bool = False, switching: bool | str = False):
    """Decorate a public solver ``f(net, ...) -> Result`` so that its answer
    passes through :func:`finish`.  With ``fcfs_as_ps`` the solver also
    takes ``fcfs_as_ps=False`` (keyword): ``True`` solves the
    processor-sharing substitute (:func:`as_ps`) and labels the answer
    approximate.  A network with class switching is solved by the chain
    reduction when ``switching`` (a product-form solver), by the solver
    itself when ``switching="native"`` (the CTMC, whose state holds each
    job's class), else refused naming the solver."""

    def deco(fn):
        if fcfs_as_ps:
            @functools.wraps(fn)
            def solver(net, *args, fcfs_as_ps: bool = False, **kwargs):
                _check_flag(fcfs_as_ps)
                if isinstance(net, Network) and net.has_class_switching:
                    return _switching(fn, net, args, kwargs, switching, fcfs_as_ps)
                if fcfs_as_ps and isinstance(net, Network) and not net.is_symbolic:
                    sub, names = as_ps(net)
                    if names:
                        r = fn(sub, *args, **kwargs)
                        return finish(r, network=net, substituted=names)
                return finish(fn(net, *args, **kwargs))

            sig = inspect.signature(fn)
            params = list(sig.parameters.values())
            extra = inspect.Parameter("fcfs_as_ps", inspect.Parameter.KEYWORD_ONLY,
                                      default=False, annotation=bool)
            solver.__signature__ = sig.replace(parameters=params + [extra])
        else:
            @functools.wraps(fn)
            def solver(net, *args, **kwargs):
                if isinstance(net, Network) and net.has_class_switching:
                    return _switching(fn, net, args, kwargs, switching)
                return finish(fn(net, *args, **kwargs))
        return solver

    return deco


def _check_flag(value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        from ..errors import InvalidValueError

        raise InvalidValueError(f"fcfs_as_ps must be True or False, got {value!r}")
