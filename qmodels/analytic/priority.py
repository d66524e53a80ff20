"""Networks with priority stations: an approximation (``method='priority'``).

A queue with discipline ``"prio"`` (non-preemptive, head of line) or
``"prio-pr"`` (preemptive resume) serving classes of different priority
levels (``Closed/Open(priority=...)``, 0 the highest) breaks product form;
this module answers such networks approximately.

Open networks (every class open)
--------------------------------
Each station is solved on its own with the class flows the traffic
equations give it (lambda_c V_ck), taken as Poisson (the Jackson/BCMP
decomposition; exact for a single station, an approximation downstream of
a priority queue, whose departures are not Poisson).  A priority station
gets the exact single-station formulas of :mod:`qmodels.analytic.queues.priority`:
M/G/1 non-preemptive (Cobham 1954) and preemptive resume (Kleinrock 1976,
vol. 2, sec. 3.7) for one server, M/M/c non-preemptive with one service
rate (Cobham 1954) for c servers; every other station is solved as the
open product-form solver solves it.

A class routed straight back to a single-server priority station with
probability q (the self-loop of the random routing of visit ratios,
q = (1 - 1/T) V_k / T with T = sum V, or a routing table's k -> k entry)
enters it at lambda V_k (1 - q) with one compound-geometric service per
entry, mean S / (1 - q) and scv q + (1 - q) scv_k (the elimination of
immediate feedback of W. Whitt, "The Queueing Network Analyzer", Bell
System Technical Journal 62(9), 2779-2815, 1983); its time per visit is
the entry's over 1 / (1 - q).  At a preemptive station that is exact: the
number of class-c jobs present changes only by arrivals and by visit
completions that leave (probability 1 - q each), whichever class-c job
is served, and the levels above c never see c, so the counts are those of
the queue whose entries bring all their visits' work at once (the
argument of L. Takacs, "A single-server queue with feedback", Bell System
Technical Journal 42(2), 505-519, 1963, for one class).  Taking each visit
as a Poisson arrival instead missed the low class's time by 33 % on
network 5 of ``priority-open`` (deterministic service, 1.36 visits).
At a head-of-line station a job sent back rejoins its level after the
next job has started, so there it is an approximation.

Closed networks (every class closed)
------------------------------------
When a priority station serves two levels or more and the network's own
Markov chain has at most ``max_states`` states (default
:data:`WHOLE_STATES`; the tries below), that chain is solved (``qm.ctmc``:
the priority rules, the random routing of visit ratios and the think
times of the simulator) and the answer is labelled as the chain's: exact,
or approximate where a service shape is fitted by phases.  Among the
networks of the ``priority-closed`` catalog it answers is
network 33, where the approximation below missed the starved low class's
throughput by 10 % against this chain (an exponential FCFS queue in the
rest: the order of its jobs, which the rest's flow-equivalent server does
not see).

Otherwise, where the populations are small enough (the budgets of
:mod:`qmodels.analytic._prio_fes`: the population lattice and the chain's
states), the priority stations that serve two levels or more are solved
exactly as a finite-source priority queue -- one Markov chain for all of
them, with two-moment phase-type service, FCFS within a level, preemption
or head-of-line order, and the routing's direct moves between them (a
job sent straight back queues again) -- whose sources are the rest of the
network, replaced by its flow-equivalent server (Norton's theorem:
Chandy, Herzog & Woo 1975; multiclass, Kritzinger, van Wyk & Krzesinski
1982) computed by the multiclass MVA recursion.  That is exact when the
rest is one PS queue or one delay with no think time, and its error
elsewhere comes from the rest's equilibrium assumption and the think
times' shape (that module's docstring gives the equations; the measured
envelope of the whole method on ``priority-closed`` of
``validation/envelopes.py`` is in ``qmodels/analytic/envelopes.json``).
When the joint chain of several priority stations is past its budget, the
whole network's chain is tried again, up to :data:`SURROGATE_CTMC_STATES`
states with a fitted low-variance shape of at most ``KMAX`` phases (the
stations' own chains have no more there); past that too, each priority
station is solved in its own chain with the others in the rest's
recursion (shadow-server form, below, times surrogate factors fitted to
each one's own chain).  On ``priority-closed`` the surrogate factors
missed network 9's starved low class by 16.6 % in X against the simulator
(two priority queues; the rest's figures differ between the two
stations' chains), and network 8's by 6.4 % (three levels over a
preemptive and a HOL queue); their whole chains (121,226 and 202,359
states, a few seconds each) are within 1.8 % and 1.1 %.

So the whole network's chain comes first, in three tries: a fitted
low-variance shape as an Erlang-20 where the chain has at most
:data:`CTMC_STATES` states, else as an Erlang-8 up to
:data:`ERLANG8_STATES`, else an Erlang-4, up to ``max_states`` (default
:data:`WHOLE_STATES`, a million states); only past that does the
approximation above answer.  Where a low level starves behind a high one
the approximation is weakest (the flow-equivalent server 20 % to 58 %
low against the exact chain or the simulator: the envelopes of
``priority-closed-starved-fes`` and ``priority-closed-starved-det-fes``),
the whole chain within a few per cent.

Deterministic (and other low-variance) service: a shape of scv below
1/k is held at an Erlang-k (scv 1/k) in these chains, and a starved
class's throughput is sensitive to that: on network 26 of
``priority-closed`` (a HOL queue, the low class at 1 % of the server) the
whole chain with an Erlang-8 is 37 % above the simulator, with an
Erlang-32 8 %.  Each such chain is therefore solved again with k/2 and
k/4 phases there and the three answers (X and the queue lengths)
extrapolated to the shape's own scv by the quadratic through them in the
fitted scv (Richardson's deferred approach to the limit; linear in the
scv is what the Pollaczek-Khinchine mean of an M/G/1 queue is, and a
starved class is curved beyond that:
the CTMC's own extrapolation, :func:`qmodels.analytic.ctmc._carried`,
which falls back to the linear step of the two finest where the quadratic
leaves the figures' range).  The priority stations' own chain (8 to 32 phases) is
extrapolated linearly from k and k/2.  On network 26 the whole chain's
answers at k = 8, 16, 32 extrapolate to within 1 % of the simulator; the
priority station's chain, Erlang-32 and -16 extrapolated, is 4.6 % below
it (the rest's flow-equivalent server; 5.2 % above before, the fit's
error partly hiding the server's).

Past the budgets: Sevcik's shadow-server approximation (Sevcik, "Priority scheduling
disciplines in queueing network models of computer systems", Proc. IFIP
Congress 77, 1977, 565-570; compared with the MVA priority approximation
by Bryant, Krzesinski, Lakshmi & Chandy, ACM TOCS 2(4), 1984) inside
Schweitzer's approximate MVA: at a priority station the classes of a level
see a server whose capacity is what the levels above leave,
H_rk = 1 - sum_{s in hi(r)} U_sk, and queue among their own level only.
A job of class r arriving at a single-server queue k finds the
arrival-instant numbers A_sk and busy fractions B_sk of Schweitzer's
(1979) rule, A_sk = Q_sk (N_s - [s = r]) / N_s (B likewise from U); with
``lv(r)`` the classes of r's own level and m_sk = S_sk (1 + scv_k) / 2 the
residual service of the job in service (Kleinrock 1975, sec. 5.5):

* ``prio-pr``:
  R_rk = [S_rk + sum_{s in lv(r)} ((A_sk - B_sk) S_sk + B_sk m_sk)] / H_rk
* ``prio`` (head of line; the job in service, of any level, finishes):
  R_rk = S_rk + [sum_{s in lv(r)} (A_sk - B_sk) S_sk + sum_s B_sk m_sk] / H_rk
* ``fcfs``: ``prio`` with one level (the waiting work plus the residual
  of the job in service, the M/G/1 form of the arrival theorem);
* ``ps`` and ``lcfs-pr``: R_rk = S_rk (1 + sum_s A_sk) (insensitive);
* delay: R_rk = S_rk.

With one class (or one level) these are Schweitzer's equations.  Higher
levels act only through H_rk: their jobs present at the arrival instant
are not counted again (counting them as well, the MVA form of Cobham's
formula, overestimated the lower classes' times by up to 42 % against the
simulator on the networks of ``validation/priority_networks.py``).
Multi-server, load-dependent stations and mixed (open and closed)
networks are refused by name.

The result carries a note naming the approximation.  Its measured error
against the simulator is in ``tests/test_priority.py``; against an exact
chain in ``tests/test_priority_closed.py``.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConvergenceWarning, InvalidValueError, UnsupportedModelError
from ..model.network import Closed, Network, Open, Queue
from ..model.stations import PRIORITY_DISCIPLINES
from ..results import Result
from ._common import _check_options, _refuse_held_or_bounded, _require_numeric, _result
from ._prio_fes import KMAX
from .amva import saturate
from .contract import answers

__all__ = ["priority"]

_PRIO = PRIORITY_DISCIPLINES

#: the largest chain of the whole closed network that ``priority`` solves
#: with a fitted low-variance shape of ``CTMC_PHASES`` phases (a chain of
#: 15,750 states, solved three times for the phase extrapolation, takes
#: about 2 s).  The approximation below misses a starved low class badly
#: where its service is deterministic: two queues, HOL deterministic 0.5
#: over 6 high jobs (think 0.1) and 3 low ones: the flow-equivalent
#: server's chain gives the low class X 0.0145, the simulator 0.0256 +-
#: 0.0006 (43 % low); the whole chain (15,750 states) 0.0256
CTMC_STATES = 20_000
#: the phases of a fitted low-variance shape in that chain (a deterministic
#: service an Erlang-20; a starved class's throughput is sensitive to the
#: fit)
CTMC_PHASES = 20
#: the largest chain of the whole closed network ``priority`` solves before
#: it approximates (the default of ``max_states``); past
#: :data:`CTMC_STATES` a fitted low-variance shape gets ``KMAX`` phases (8)
#: there, as in the priority stations' own chains, then 4.  Past
#: :data:`CTMC_STATES` the approximation was still far off where a low
#: level starves: a third exponential queue (0.2 s) added to the network
#: above gives a chain of 97,888 states with an Erlang-20 (40,264 with an
#: Erlang-8, solved with Erlang-4 and -2 for the extrapolation in 1.8 s):
#: the flow-equivalent server gives the low class 0.0404, the simulator
#: 0.0504 +- 0.0013 (20 % low), the whole chain at Erlang-8 extrapolated
#: 0.0503; on ``priority-closed-starved-det`` the flow-equivalent server
#: was 58 % low on a network whose chain (216,983 states at Erlang-8) now
#: answers.  The bound was 60,000 while such chains (three stations,
#: preemptive, a 3-D lattice of counts and phases) defeated the Jacobi
#: BiCGSTAB and filled the complete LU for minutes; the multigrid stage of
#: :mod:`._ctmc_solve` solves them (network 25 of that catalog, 33,253
#: states at Erlang-4: 67 s before, 3.7 s now for the three chains of the
#: extrapolation).  Measured on that catalog's 30 networks (one process,
#: two shared cores, ``qm.priority`` end to end): 28 answered by the chain
#: (2 past 250,000 states even at Erlang-4), median 3.1 s, slowest 35 s
#: (network 13: chains of 161,514 + 49,886 + 17,976 states); with the
#: bound at 60,000, median 1.7 s and slowest 21 s, but 7 networks left to
#: the flow-equivalent server.  That bound (250,000) now holds the
#: Erlang-8 tier (:data:`ERLANG8_STATES`); the Erlang-4 tier goes on to
#: this one, where those 2 networks' chains answer in place of the
#: flow-equivalent server (simulator: network 17's low class X 0.014108,
#: the server's 0.010481, 25.7 % low; its chain at Erlang-4, -2, -1 of
#: 492,804 + 261,872 + 146,406 states, extrapolated, 0.014009, 0.7 % low,
#: 14.7 s CPU; network 1: 0.30894, the server's 0.32433, 5.0 % high, the
#: chains of 886,964 + 474,422 + 268,151 states 0.30649, 0.8 % low, 57 s CPU
#: and 1.1 GB at the peak; a scratch run on this 2-core machine)
WHOLE_STATES = 1_000_000
#: the largest chain solved with a fitted low-variance shape as an
#: Erlang-8 (the tier between :data:`CTMC_STATES` and
#: :data:`WHOLE_STATES`; past it the shape is an Erlang-4, whose chains are
#: about half the size)
ERLANG8_STATES = 250_000
#: where the priority stations' joint chain is past its budget (the
#: surrogate factors' case, the slowest and least accurate form), the
#: whole network's chain is tried again up to this many states with an
#: Erlang-8 (network 8 of ``priority-closed``, 202,359 states, is built and
#: solved by the compiled chain in 3 to 8 s; the surrogate factors took as
#: long, 6.4 % off)
SURROGATE_CTMC_STATES = 250_000

_NOTE_CLOSED = (
    "approximation: shadow-server priority approximation (Sevcik 1977) in Schweitzer's "
    "approximate MVA; not exact")
_NOTE_FES = (
    "approximation: each priority station solved exactly as a finite-source priority queue "
    "(a Markov chain; two-moment phase-type service) fed by the flow-equivalent server of "
    "the rest of the network (Norton's theorem, multiclass MVA); not exact")
_NOTE_CTMC = (
    "small enough to be solved as the network's own Markov chain (qm.ctmc): exact but for a "
    "fitted service shape")
_NOTE_OPEN = (
    "approximation: per-station priority formulas (Cobham 1954; preemptive resume, "
    "Kleinrock 1976) on the traffic equations' class flows taken as Poisson; exact for a "
    "single station, approximate downstream of a priority queue")


def _arrays(net: Network):
    """V, S (classes x stations), the scv per station, the station code
    (0 delay, 1 PS-like, 2 FCFS, 3 prio, 4 prio-pr), the servers, and the
    priority level per class, read from the lowered form and built once per
    network (a repeated solve reuses them)."""
    return net.lowered.memo("priority.arrays", lambda: _build_arrays(net))


def _build_arrays(net: Network):
    low = net.lowered
    V = np.asarray(net.visits, dtype=float)
    S = np.asarray(net.service_times, dtype=float)
    K = len(net.stations)
    scv = np.ones(K)
    code = np.zeros(K, dtype=np.int64)
    servers = np.ones(K, dtype=np.int64)
    for k, kind in enumerate(low.kind):
        if kind == "delay":
            continue
        if kind != "queue":
            what = "load-dependent ones" if kind == "ld" else f"a {kind!r}"
            raise UnsupportedModelError(
                f"station {low.station_names[k]!r}: method='priority' handles delay and queue "
                f"stations, not {what}; use method='sim'")
        if low.discipline[k] in ("ps", "lcfs-pr"):
            scv[k] = 1.0 if low.class_shaped[k] else float(low.scv[k])   # insensitive
        else:
            low.one_shape(k, "method='priority'")   # refused where the shape differs by class
            scv[k] = float(low.scv[k])
        servers[k] = int(low.servers[k])
        code[k] = {"ps": 1, "lcfs-pr": 1, "fcfs": 2, "prio": 3, "prio-pr": 4}[low.discipline[k]]
    level = np.asarray(low.priority, dtype=np.int64)
    for a in (V, S, scv, code, servers, level):
        a.flags.writeable = False
    return V, S, scv, code, servers, level


def _ps_twin(net: Network) -> Network:
    """The same network with PS in place of each priority discipline (built
    once per network)."""
    def build():
        stations = [Queue(s.name, s.service, servers=s.servers, discipline="ps",
                          distribution=s.distribution, power=s.power)
                    if isinstance(s, Queue) and s.discipline in _PRIO else s
                    for s in net.stations]
        return Network(stations, net.classes, name=net.name)
    return net.lowered.memo("priority.ps_twin", build)


@answers()
def priority(net: Network, *, tol: float = 1e-10, max_iter: int = 100_000,
             max_states: int = WHOLE_STATES) -> Result:
    """Approximate means of a network with priority stations.

    Parameters
    ----------
    net : Network
        All classes open, or all closed (see the module docstring for the
        equations of each case).
    tol : float
        Closed networks: stop when no queue length changes by more than
        ``tol`` (relative to the population) in an iteration.
    max_iter : int
        Closed networks: iterations before a :class:`ConvergenceWarning`.
    max_states : int
        Closed networks with a priority queue serving two levels or more:
        the largest chain of the whole network solved (``qm.ctmc``) before
        the approximation is used (default :data:`WHOLE_STATES`; 0 never):
        with a low-variance shape as an Erlang-20 up to :data:`CTMC_STATES`
        states, past that as an Erlang-8 up to :data:`ERLANG8_STATES`,
        else an Erlang-4 (each extrapolated to the shape's scv, module
        docstring).  A chain near the default bound takes about a minute
        and a gigabyte.

    Returns
    -------
    Result
        With a note saying which approximation was used.

    Raises
    ------
    UnsupportedModelError
        Symbolic values, token pools, finite capacities, a load-dependent
        station, a mix of open and closed classes; in a closed network a
        multi-server queue; in an open network a multi-server priority
        queue that is preemptive, has class-dependent service times or a
        non-exponential shape (no closed form).
    UnstableError
        Open: a station loaded to rho >= 1.

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network([qm.Queue("q", 1.0, discipline="prio")],
    ...     [qm.Open("hi", 0.3, visits={"q": 1}, priority=0),
    ...      qm.Open("lo", 0.3, visits={"q": 1}, priority=1)])
    >>> r = qm.solve(net, method="priority")
    >>> # Cobham: 1 + 0.6/0.7 and 1 + 0.6/0.28
    >>> [round(float(x), 6) for x in r.station_response_time[:, 0]]
    [1.857143, 3.142857]
    """
    if not isinstance(net, Network):
        raise InvalidValueError(f"priority needs a qmodels Network, got {type(net).__name__}")
    _check_options(tol, max_iter)
    if isinstance(max_states, bool) or not isinstance(max_states, (int, np.integer)) \
            or max_states < 0:
        raise InvalidValueError(f"max_states must be an integer >= 0, got {max_states!r}")
    solver = "method='priority'"
    _require_numeric(net, solver)
    _refuse_held_or_bounded(net, solver)
    if all(isinstance(c, Open) for c in net.classes):
        return _open(net)
    if all(isinstance(c, Closed) for c in net.classes):
        return _closed(net, tol, max_iter, int(max_states))
    raise UnsupportedModelError(
        f"{solver} solves all-open or all-closed networks; this one mixes open classes "
        f"({', '.join(c.name for c in net.open_classes)}) with closed ones: use method='sim'")


def _open(net: Network) -> Result:
    """Open network: product form for every station but the priority ones,
    which get the single-station priority formulas."""
    from .mva import mva
    from .queues.priority import mg1_prio, mg1_prio_pr, mmc_prio

    V, S, scv, code, servers, level = _arrays(net)
    # the same network with PS in place of each priority discipline: its
    # other stations' figures do not depend on that choice (Jackson/BCMP:
    # each station of an open product-form network is solved on its own)
    base = mva(_ps_twin(net))
    lam = np.array([float(c.arrival_rate) for c in net.classes])
    # the probability that a class leaving station k is routed straight back
    # to it (the simulator's random routing of visit ratios, or the routing
    # table's k -> k entry); ones for Z: an open class ends no cycle by thinking
    loop = np.einsum("ckk->ck", _direct_routes(net, V, np.ones(len(net.classes))))
    Rk = np.array(base.station_response_time, dtype=float)
    U = np.array(base.station_utilization, dtype=float)
    for k, s in enumerate(net.stations):
        if code[k] < 3:
            continue
        used = [c for c in range(len(net.classes)) if V[c, k] > 0]
        if not used:
            continue
        levels = [int(level[c]) for c in used]
        c_k = int(servers[k])
        if c_k == 1:
            # a job sent straight back (self-loop q) brings its next visits'
            # work with it: one entry of compound-geometric service, mean
            # S / (1 - q) and scv q + (1 - q) scv (Whitt 1983's elimination
            # of immediate feedback; module docstring)
            q = np.array([loop[c, k] for c in used])
            flows = [lam[c] * V[c, k] * (1.0 - q[j]) for j, c in enumerate(used)]
            times = [S[c, k] / (1.0 - q[j]) for j, c in enumerate(used)]
            shapes = [q[j] + (1.0 - q[j]) * scv[k] for j in range(len(used))]
            form = mg1_prio if s.discipline == "prio" else mg1_prio_pr
            out = form(flows, times, shapes, levels)
            for j, (c, m) in enumerate(zip(used, out)):
                Rk[c, k] = m.R * (1.0 - q[j])   # per visit: the entry's time over its visits
            continue
        else:
            flows = [lam[c] * V[c, k] for c in used]
            times = [S[c, k] for c in used]
            expo = bool(net.lowered.exponential[k])
            if s.discipline == "prio-pr" or not expo \
                    or max(times) - min(times) > 1e-12 * max(times):
                raise UnsupportedModelError(
                    f"station {s.name!r}: {c_k} servers with discipline {s.discipline!r}"
                    f"{', non-exponential service' if not expo else ''}"
                    f" and service times {times}: the only multi-server priority closed form is "
                    "non-preemptive M/M/c with one rate (Cobham 1954); use method='sim'")
            out = mmc_prio(flows, times[0], c_k, levels)
        for c, m in zip(used, out):
            Rk[c, k] = m.R
    Rres = V * Rk
    res = _result(net, "priority", lam, Rres, U, [_NOTE_OPEN],
                  {"approximation": "per-station priority formulas, Poisson flows"},
                  visit_time=Rk)
    if _open_exact(net, V, code):
        # each class that meets a priority queue visits it once and nothing
        # else, on a Poisson stream: Cobham's and Kleinrock's formulas are the
        # exact M/G/1 (M/M/c) priority answers there
        object.__setattr__(res, "exactness", "exact")
    return res


def _open_exact(net: Network, V, code) -> bool:
    """True when every class visiting a priority station visits it alone,
    once, on a Poisson stream (the single-station formulas are exact), and
    the other stations are product form (their figures are Jackson's)."""
    from . import requires

    if requires.arrival_shapes(net) is not None:
        return False
    for c in range(len(net.classes)):
        prio = [k for k in range(len(net.stations)) if code[k] >= 3 and V[c, k] > 0]
        if prio and (np.count_nonzero(V[c] > 0) != 1 or abs(V[c, prio[0]] - 1.0) > 1e-12):
            return False
    twin = _ps_twin(net)
    return requires.product_form(twin) is None


def _closed(net: Network, tol: float, max_iter: int, max_states: int = 0) -> Result:
    import warnings

    V, S, scv, code, servers, level = _arrays(net)
    for k, s in enumerate(net.stations):
        if code[k] > 0 and servers[k] > 1 and V[:, k].any():
            raise UnsupportedModelError(
                f"station {s.name!r}: {servers[k]} servers; method='priority' on a closed "
                "network handles single-server queues and delays: use method='sim'")
    N = np.array([int(c.population) for c in net.classes], dtype=float)
    Z = np.array([float(c.think_time) for c in net.classes])
    D = V * S
    for c, cls in enumerate(net.classes):
        if N[c] > 0 and D[c].sum() + Z[c] <= 0:
            raise InvalidValueError(
                f"class {cls.name!r}: all demands and the think time are zero, so the "
                "throughput is unbounded")
    mixed = [k for k in range(len(code)) if code[k] >= 3
             and len({int(level[c]) for c in range(len(N)) if V[c, k] > 0 and N[c] > 0}) > 1]
    if mixed and max_states > 0:
        # the whole chain: Erlang-20 where it is small, Erlang-8 up to
        # ERLANG8_STATES, Erlang-4 up to max_states
        for phases, budget in ((CTMC_PHASES, min(max_states, CTMC_STATES)),
                               (KMAX, min(max_states, ERLANG8_STATES)),
                               (KMAX // 2, max_states)):
            whole = _ctmc_closed(net, budget, phases)
            if whole is not None:
                return whole
    # the surrogate factors' case: the whole chain at Erlang-8 up to
    # SURROGATE_CTMC_STATES even where max_states is smaller (where it is
    # not, the tiers above have already refused that chain)
    instead = (lambda: _ctmc_closed(net, SURROGATE_CTMC_STATES, KMAX)) \
        if 0 < max_states < SURROGATE_CTMC_STATES else None
    fes = _fes_closed(net, V, S, scv, code, level, N, Z, tol, max_iter, instead)
    if isinstance(fes, Result):
        return fes
    if fes is not None:
        X, Rk, it, converged, note = fes
        notes = [_NOTE_FES] + ([note] if note else [])
        info = {"approximation": "finite-source priority chain with the flow-equivalent "
                                 "server of the rest", "iterations": it}
    else:
        X, Rk, it = _closed_fixed_point(V, S, scv, code, level, N, Z, tol, max_iter)
        converged = it < max_iter
        notes = [_NOTE_CLOSED]
        info = {"approximation": "shadow server (Sevcik 1977), Schweitzer AMVA",
                "iterations": it}
    if not converged:
        warnings.warn(f"method='priority' did not converge in {max_iter} iterations",
                      ConvergenceWarning, stacklevel=3)
        notes.append(f"not converged in {max_iter} iterations")
    U = X[:, None] * D
    return _result(net, "priority", X, V * Rk, U, notes, info, visit_time=Rk)




def _ctmc_closed(net: Network, max_states: int, max_phases: int | None = None
                 ) -> Result | None:
    """The closed network solved as its own Markov chain (``qm.ctmc``: the
    priority rules, routing and think times of the simulator) when that
    chain has at most ``max_states`` states; None otherwise.  Labelled
    as the chain is: exact, or approximate where a service shape is fitted
    (deterministic, lognormal, ...).  A low-variance shape held at the
    phase cap k: the chain again with k/2 and k/4 phases, the answers
    extrapolated to the shape's scv (module docstring)."""
    import warnings

    from ..errors import ProblemTooLargeError
    from .ctmc import ctmc

    def chain(k):
        with warnings.catch_warnings():
            # the random routing of visit ratios is the simulator's (the
            # module docstring of qmodels.sim.flatten), as in the other forms
            warnings.simplefilter("ignore")
            return ctmc(net, max_states=max_states, max_phases=k)

    try:
        r = chain(max_phases)
    except ProblemTooLargeError:
        return None
    V = np.asarray(net.visits, dtype=float)
    D = np.asarray(net.demands, dtype=float)
    X = np.array([float(r.X[c]) for c in net.class_names])
    Rk = np.asarray(r.station_response_time, dtype=float)
    notes = [_NOTE_CTMC] + list(r.notes)
    info = {"approximation": "the network's own Markov chain (qm.ctmc)",
            "states": r.info["states"]}
    k1 = int(r.info.get("max_phases") or 0)
    if r.info.get("phase_capped") and k1 >= 4:
        # a low-variance shape held at k1 phases (scv 1/k1 above its own):
        # the chain again at k1/2 and k1/4 phases (Erlang-1: exponential), the
        # answers extrapolated to the shape's scv as qm.ctmc does
        # (ctmc._carried: Richardson in the fitted scv)
        from .ctmc import _carried

        c = _carried(net, r, k1, chain)
        ex = c.info.get("extrapolation")
        if ex:
            X = np.array([float(c.X[n]) for n in net.class_names])
            Rk = np.asarray(c.station_response_time, dtype=float)
            notes.append(c.notes[-1])
            info["states"] = ex["states"]
            info["extrapolation"] = {"phases": ex["phases"], "degree": ex["degree"]}
    U = X[:, None] * D   # single servers: X D per class
    res = _result(net, "priority", X, V * Rk, U, notes, info, visit_time=Rk)
    object.__setattr__(res, "exactness", r.exactness)
    object.__setattr__(res, "assumptions", tuple(r.assumptions))
    return res


def _direct_routes(net: Network, V, Z) -> np.ndarray:
    """direct[c, k, j]: the probability that a class-c job leaving station k
    goes straight to station j (no think time in between).  A class given
    by a routing table: its k -> j entry (0 when j is its reference station
    and the think time is positive: the cycle ends there).  A class given by
    visits or demands is routed at random as in the simulator
    (:mod:`qmodels.sim.flatten`: with T = sum_k V_k, a visit ends the cycle
    with probability 1/T, else the next station is j with probability
    V_j / T): (1 - 1/T) V_j / T (0 for T < 1) with a think time, and V_j / T
    without one (an empty cycle takes no time)."""
    C, K = V.shape
    direct = np.zeros((C, K, K))
    names = [s.name for s in net.stations]
    for c, cls in enumerate(net.classes):
        if cls.routing is not None:
            ref = getattr(cls, "reference", None)
            for k, src in enumerate(names):
                row = dict(cls.routing.get(src, {}))
                for j, dst in enumerate(names):
                    if not (dst == ref and Z[c] > 0):
                        direct[c, k, j] = float(row.get(dst, 0.0))
            continue
        T = float(V[c].sum())
        if T <= 0:
            continue
        if Z[c] > 0:
            row = (1.0 - 1.0 / T) * V[c] / T if T >= 1.0 else np.zeros(K)
        else:
            row = V[c] / T
        direct[c] = row[None, :]
    return direct


def _fes_closed(net, V, S, scv, code, level, N, Z, tol, max_iter, instead=None):
    """The closed-network approximation of :mod:`qmodels.analytic._prio_fes`
    where a priority station serves two levels or more and the budgets
    hold; None otherwise (the shadow-server fixed point answers)."""
    from . import _prio_fes

    mixed = [k for k in range(len(code)) if code[k] >= 3
             and len({int(level[c]) for c in range(len(N)) if V[c, k] > 0 and N[c] > 0}) > 1]
    if not mixed:
        return None
    for k in mixed:
        n_lv = len({int(level[c]) for c in range(len(N)) if V[c, k] > 0})
        if not _prio_fes.fits(N, float(scv[k]), n_lv, code[k] == 4):
            return None
    direct = _direct_routes(net, V, Z)
    return _prio_fes.solve_closed(V, S, scv, code, level, N, Z, direct, tol=max(tol, 1e-9),
                                  max_iter=min(max_iter, 200), memo=net.lowered.memo,
                                  instead=instead)


def _closed_fixed_point(V, S, scv, code, level, N, Z, tol, max_iter):
    """The closed-network equations of the module docstring, iterated from
    an even spread of each class over its stations; returns (X, R per
    visit, iterations)."""
    C, K = V.shape
    D = V * S
    m = S * (1.0 + scv[None, :]) / 2.0  # residual service of the job in service
    used = V > 0
    Q = np.where(used, N[:, None] / np.maximum(used.sum(axis=1, keepdims=True), 1), 0.0)
    X = np.zeros(C)
    Rk = S.copy()
    cap = np.where(code > 0, 1.0, np.inf)     # single-server queues; delays unbounded
    same = level[None, :] == level[:, None]  # [r, s]: s in lv(r)
    above = level[None, :] < level[:, None]  # [r, s]: s in hi(r)
    for it in range(1, max_iter + 1):
        Ub = X[:, None] * D  # utilisation per class
        for r in range(C):
            if N[r] == 0:
                continue
            f = np.where(np.arange(C) == r, (N - 1) / np.maximum(N, 1), 1.0)
            A = Q * f[:, None]
            B = Ub * f[:, None]
            W = A - B  # waiting at the arrival instant
            for k in range(K):
                if not used[r, k]:
                    continue
                kind = code[k]
                if kind == 0:
                    Rk[r, k] = S[r, k]
                elif kind == 1:
                    Rk[r, k] = S[r, k] * (1.0 + A[:, k].sum())
                else:
                    le = same[r] if kind >= 3 else np.ones(C, dtype=bool)
                    hi = above[r] if kind >= 3 else np.zeros(C, dtype=bool)
                    stretch = max(1.0 - B[hi, k].sum(), 1e-12)
                    if kind == 4:
                        Rk[r, k] = (S[r, k] + (W[le, k] * S[le, k]).sum()
                                    + (B[le, k] * m[le, k]).sum()) / stretch
                    else:
                        Rk[r, k] = S[r, k] + ((W[le, k] * S[le, k]).sum()
                                              + (B[:, k] * m[:, k]).sum()) / stretch
        Rres = V * Rk
        Xn = np.where(N > 0, N / np.maximum(Rres.sum(axis=1) + Z, 1e-300), 0.0)
        # held to the utilisation law (amva.saturate): the shadow server's
        # estimate can load a priority queue past U = 1
        if saturate(Xn, Rres, D, Z, N, cap, levels=level, prio=code >= 3):
            Rk = np.where(used, Rres / np.where(used, V, 1.0), Rk)
        Qn = Xn[:, None] * Rres
        delta = np.max(np.abs(Qn - Q) / np.maximum(N[:, None], 1.0)) if C else 0.0
        # the throughputs must settle too: with no think time and one station
        # a class's Q is its N whatever its X, so Q alone can look converged
        # after one sweep while X is still that of an empty network
        with np.errstate(invalid="ignore", divide="ignore"):
            dx = np.abs(Xn - X) / np.maximum(np.maximum(Xn, X), 1e-300)
        delta = max(delta, float(np.max(dx, initial=0.0)))
        Q, X = Qn, Xn
        if delta < tol:
            return X, Rk, it
    return X, Rk, max_iter
