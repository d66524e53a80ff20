"""What each analytic method requires of a model, checked on its lowered
form (:class:`~qmodels.model.lowered.Lowered`).

Each requirement is a function ``(net) -> str | None``: ``None`` when the
network meets it, else one sentence naming the station, class or pool that
does not (and why).  The solvers raise
:class:`~qmodels.errors.UnsupportedModelError` with that sentence and the
way out; :func:`qmodels.solve` with no method reads the same sentences to
choose the most exact method that applies, and to explain a refusal.

Station kinds are *accepted by name*: a product-form solver takes delay
stations, FCFS queues with exponential service, processor-sharing and
LCFS-PR queues (BCMP types 1-4; Baskett, Chandy, Muntz & Palacios, "Open,
closed and mixed networks of queues with different classes of customers",
JACM 22(2), 1975) and load-dependent stations.  A kind or discipline added
to the model later is refused here until a method says it handles it, so
no solver can answer a new kind as if it were an old one.
"""

from __future__ import annotations

import numpy as np

from .._validate import is_symbolic
from ..model.network import Network
from ..model.stations import PRIORITY_DISCIPLINES

__all__ = [
    "PRODUCT_FORM_DISCIPLINES",
    "product_form",
    "service_shapes",
    "numeric",
    "closed_only",
    "one_closed_class",
]

#: queue disciplines under which product form holds (BCMP 1975): FCFS with
#: exponential service (type 1), processor sharing (type 2), LCFS
#: preemptive-resume (type 4); a delay station is type 3
PRODUCT_FORM_DISCIPLINES = ("fcfs", "ps", "lcfs-pr")


def numeric(net: Network) -> str | None:
    """Numbers only (no sympy symbols)."""
    if net.lowered.symbolic:
        return "the network has sympy symbols (a numeric method needs numbers)"
    return None


#: the method that answers for a station kind or discipline product form
#: refuses (what a refusal names as the way out)
HANDLED_BY = {"forkjoin": "method='forkjoin'", "prio": "method='priority' (an approximation)",
              "prio-pr": "method='priority' (an approximation)"}


def way_out(net: Network) -> str:
    """The methods to point to for the first station :func:`station_kinds`
    refuses: the one that handles its kind or discipline (if any), and the
    simulator."""
    low = net.lowered
    for k, kind in enumerate(low.kind):
        key = kind if kind not in ("delay", "queue", "ld") else low.discipline[k]
        if key in HANDLED_BY and low.visited[k] and not low.acts_fcfs[k]:
            return f"use {HANDLED_BY[key]} or method='sim'"
    return "use qm.solve(net) to pick a method that can, or method='sim'"


def mixed_priority(net: Network) -> int | None:
    """The index of the first priority queue (``prio``, ``prio-pr``) that
    classes of several levels visit, or None (with one level it serves
    FCFS, the order within a level)."""
    low = net.lowered
    for k, d in enumerate(low.discipline):
        if d in PRIORITY_DISCIPLINES and low.visited[k] and not low.acts_fcfs[k]:
            return k
    return None


def class_switching(net: Network) -> str | None:
    """No class changes class on its way (the methods that do not reduce
    the routing chains, :mod:`qmodels.analytic.switching`)."""
    if net.has_class_switching:
        chains = "; ".join("+".join(ch) for ch in net.chains if len(ch) > 1)
        return f"classes switch class (chains {chains}), which the method does not model"
    return None


def station_kinds(net: Network) -> str | None:
    """Every station a class visits is of a kind product form knows."""
    low = net.lowered
    if (set(low.kind) <= {"delay", "queue", "ld"}
            and set(low.discipline) <= {"delay", *PRODUCT_FORM_DISCIPLINES}):
        return None     # (delay stations have discipline "delay", ld ones "ps")
    visited = net.lowered.visited
    for k, kind in enumerate(low.kind):
        name = low.station_names[k]
        if kind == "forkjoin":
            f = net.stations[k]
            return f"fork-join {name!r} ({len(f.branches)} branches joined) breaks product form"
        if kind not in ("delay", "queue", "ld"):
            return (f"station {name!r} is a {kind!r} element, which has no product-form "
                    "solution")
        if kind == "queue" and visited[k] and low.discipline[k] not in PRODUCT_FORM_DISCIPLINES:
            if low.acts_fcfs[k]:
                continue        # a priority queue with one level present serves FCFS
            if low.discipline[k] in PRIORITY_DISCIPLINES:
                return (f"station {name!r}: discipline {low.discipline[k]!r} with classes of "
                        f"priority levels {list(low.levels(k))} breaks product form")
            return (f"station {name!r}: discipline {low.discipline[k]!r} breaks product form "
                    f"(which needs one of {', '.join(PRODUCT_FORM_DISCIPLINES)})")
    return None


def service_shapes(net: Network) -> str | None:
    """No FCFS queue that a class visits has a non-exponential service
    shape, for any class (BCMP type 1 needs exponential service, one shape
    for every class; PS, LCFS-PR and delay stations are insensitive to the
    shape, class-dependent shapes included, types 2-4)."""
    low = net.lowered
    bad = np.flatnonzero(low.acts_fcfs & ~low.exponential & low.visited)
    for k in bad[:1].tolist():
        return (f"station {low.station_names[k]!r}: FCFS with {low.shape_words(k)} breaks "
                "product form, which needs one exponential service shape at an FCFS queue")
    return None


def arrival_shapes(net: Network) -> str | None:
    """Every open class arrives as a Poisson stream (exponential
    inter-arrival times, or a MAP of one phase).  Product form needs it (BCMP's open classes are
    Poisson; Baskett et al. 1975): a burstier stream waits longer, a
    smoother one shorter (GI/M/1 at rho = 0.6: R = 6.6 S with
    hyperexponential arrivals of SCV 8, 1.48 S with deterministic ones,
    2.5 S with Poisson arrivals; Kleinrock 1975, sec. 6.4)."""
    from ..model.distributions import is_exponential
    from ..model.map import MAP

    for c in net.classes:
        d = getattr(c, "interarrival", None)
        if isinstance(d, MAP) and d.phases > 1:
            return (f"class {c.name!r}: a MAP stream ({d.phases} phases, interval scv "
                    f"{float(d.scv):.4g}, index of dispersion {float(d.idc):.4g}) breaks "
                    "product form, which needs Poisson arrivals")
        if d is not None and not isinstance(d, MAP) and not is_exponential(d):
            return (f"class {c.name!r}: {type(d).__name__} inter-arrival times (scv "
                    f"{float(d.scv):g}) break product form, which needs Poisson arrivals")
    return None


def fcfs_class_dependent(net: Network) -> str | None:
    """No FCFS queue that several classes visit serves them with different
    mean service times (BCMP type 1 needs one exponential service rate for
    every class at an FCFS station; a class-dependent one is product form
    only under processor sharing, type 2).  A priority queue that classes of
    one level visit serves FCFS and counts too."""
    return net.lowered.memo(("requires.fcfs_class_dependent",),
                            lambda: _fcfs_class_dependent(net))


def _fcfs_class_dependent(net: Network) -> str | None:
    low = net.lowered
    V = low.visits
    S = low.service_times
    C = len(low.class_names)
    if C < 2:
        return None
    # a class that never has a job there (population 0, arrival rate 0, in
    # its whole routing chain: a class jobs switch to has jobs) changes nothing
    amount = [float(low.population[i] if not low.is_open[i] else low.arrival_rate[i])
              for i in range(C)] if not low.symbolic else [1.0] * C
    chain_amount = {ch: sum(amount[net.class_index(n)] for n in ch) for ch in net.chains}
    live = [i for i in range(C) if low.symbolic
            or chain_amount[net.chain_of(low.class_names[i])] > 0]
    # (a visit of zero service time, what demands={station: 0} makes, is no use)
    D = low.demands
    for k in np.flatnonzero(low.acts_fcfs & low.visited).tolist():
        who = [i for i in live if V[i][k] != 0 and (low.symbolic or float(D[i][k]) > 0)]
        if len(who) < 2:
            continue
        if low.symbolic:
            differs = any(S[i][k] != S[who[0]][k] for i in who[1:])
        else:
            times = np.array([float(S[i][k]) for i in who])
            big = float(times.max())
            differs = big - float(times.min()) > 1e-12 * max(1.0, abs(big))
        if differs:
            shown = ", ".join(f"{low.class_names[i]!r} {S[i][k]:.4g} s" if not low.symbolic
                              else f"{low.class_names[i]!r} {S[i][k]}" for i in who[:4])
            return (f"station {low.station_names[k]!r}: FCFS with class-dependent mean service "
                    f"times ({shown}{', ...' if len(who) > 4 else ''}) breaks product form, "
                    "which needs one exponential service rate for every class at an FCFS "
                    "queue (fcfs_as_ps=True solves it as processor sharing, an approximation)")
    return None


def pools(net: Network) -> str | None:
    """No token pool (simultaneous resource possession)."""
    if net.pools:
        p = net.pools[0]
        return (f"token pool {p.name!r} ({p.tokens} tokens held from {p.acquire!r} to "
                f"{p.release!r}) breaks product form")
    return None


def capacities(net: Network, population=None) -> str | None:
    """No finite capacity that can bind: a closed network of ``population``
    jobs never fills a station of capacity >= population; with open
    classes (``population=None``) any capacity can bind."""
    low = net.lowered
    for k, cap in enumerate(low.capacity):
        if cap is None:
            continue
        if population is not None and not is_symbolic(population) and cap >= population:
            continue
        return (f"station {low.station_names[k]!r}: finite capacity {cap} can bind "
                f"(population {population if population is not None else 'open'})")
    return None


def product_form(net: Network, population=None, fcfs_as_ps: bool = False) -> str | None:
    """BCMP product form: :func:`station_kinds`, :func:`pools`,
    :func:`capacities`, :func:`arrival_shapes`, :func:`service_shapes` and
    :func:`fcfs_class_dependent` (unless ``fcfs_as_ps``: the user asked
    for the processor-sharing substitute), in that order (checked once per
    network, population and flag: the lowered form keeps the answer)."""
    low = net.lowered

    def check():
        # the checks of the structure alone once per family of networks
        # (Lowered.family: a sweep's points that change only numbers); the
        # first reason in the order above is the one given
        kinds = low.family("requires.kinds_pools", lambda: station_kinds(net) or pools(net))
        if kinds is not None:
            return kinds
        cap = capacities(net, population)
        if cap is not None:
            return cap
        return (low.family("requires.shapes",
                           lambda: arrival_shapes(net) or service_shapes(net))
                or (None if fcfs_as_ps else fcfs_class_dependent(net)))

    return low.memo(("requires.product_form", population, bool(fcfs_as_ps)), check)


def closed_only(net: Network) -> str | None:
    """Closed classes only."""
    low = net.lowered
    if low.is_open.any():
        names = [n for n, o in zip(low.class_names, low.is_open) if o]
        return f"class {names[0]!r} is open (the method solves closed classes only)"
    return None


def one_closed_class(net: Network) -> str | None:
    """Exactly one class, closed."""
    low = net.lowered
    if len(low.class_names) != 1 or low.is_open[0]:
        return (f"the method needs one closed class; the network has "
                f"{len(low.class_names)} class(es)"
                + (", open" if low.is_open.any() else ""))
    return closed_only(net)


def closed_population(net: Network):
    """The total closed population (``None`` when a class is open)."""
    low = net.lowered
    if low.is_open.any():
        return None
    return int(low.population.sum())


# ---------------------------------------------------------------------------
# per method: what qm.solve(net) checks before choosing it
# ---------------------------------------------------------------------------

def for_exact(net: Network) -> str | None:
    """``exact``: numbers and BCMP product form."""
    return numeric(net) or product_form(net, closed_population(net))


def for_amva(net: Network) -> str | None:
    """``schweitzer`` / ``linearizer``: numbers, closed classes, product form."""
    return numeric(net) or closed_only(net) or product_form(net, closed_population(net))


def for_decomposition(net: Network) -> str | None:
    """``decomposition``: numbers, one closed class, token pools, and
    otherwise product form (exponential FCFS, no binding capacity)."""
    why = numeric(net) or one_closed_class(net)
    if why:
        return why
    if not net.pools:
        return "the network has no token pool (the decomposition is for held resources)"
    return station_kinds(net) or capacities(net, closed_population(net)) or service_shapes(net)


def _general_stations(net: Network, *, ld: bool) -> str | None:
    """Every station a class visits is a delay or a queue whose discipline
    the two-moment methods model (FCFS, PS, LCFS-PR: PS and LCFS-PR are
    insensitive to the service shape), or, with ``ld``, a load-dependent
    station with exponential service."""
    low = net.lowered
    for k, kind in enumerate(low.kind):
        if not low.visited[k] or kind == "delay":
            continue
        name = low.station_names[k]
        if kind == "queue":
            if low.discipline[k] not in PRODUCT_FORM_DISCIPLINES and not low.acts_fcfs[k]:
                return f"station {name!r}: discipline {low.discipline[k]!r} is not modelled"
            continue
        if kind == "ld" and ld and low.exponential[k]:
            continue
        what = ("a load-dependent station" if kind == "ld" else f"a {kind!r} element")
        return f"station {name!r} is {what}, outside the method's stations"
    return None


def _general_service(net: Network) -> str | None:
    """Product form fails for a reason the two-moment methods model: an
    FCFS queue with general service, an FCFS queue whose mean service time
    differs by class, or (open classes) a non-Poisson arrival stream; else
    the product-form methods, exact or Linearizer, answer at least as
    well."""
    if (service_shapes(net) is None and fcfs_class_dependent(net) is None
            and arrival_shapes(net) is None):
        return ("every FCFS queue has exponential service of one mean for all classes and "
                "every arrival stream is Poisson: the product-form methods answer")
    return None


def for_qna(net: Network) -> str | None:
    """``qna``: numbers, open classes, an FCFS queue with general service,
    no pools or finite room, delays and FCFS/PS/LCFS-PR queues."""
    low = net.lowered
    if not low.is_open.all():
        return "the network has closed classes (QNA is for open networks)"
    return (numeric(net) or _general_service(net) or pools(net) or capacities(net, None)
            or _general_stations(net, ld=False))


def for_rqna(net: Network) -> str | None:
    """``rqna``: numbers, one open class, single-server FCFS queues only (no
    delays, multi-server, PS/LCFS-PR, priority or load-dependent stations),
    no pools or finite room, and something product form does not model (a
    non-Poisson stream or non-exponential service)."""
    low = net.lowered
    if not low.is_open.all():
        return "the network has closed classes (RQNA is for open networks)"
    if len(low.class_names) != 1:
        return (f"the network has {len(low.class_names)} classes (RQNA is single-class, "
                "Whitt & You 2022)")
    why = numeric(net) or _general_service(net) or pools(net) or capacities(net, None)
    if why:
        return why
    for k, kind in enumerate(low.kind):
        if not low.visited[k]:
            continue
        name = low.station_names[k]
        if kind != "queue":
            return f"station {name!r} is a {kind!r} station (RQNA models single-server queues)"
        if int(low.servers[k]) != 1:
            return (f"station {name!r} has {int(low.servers[k])} servers (RQNA models "
                    "single-server queues)")
        if low.discipline[k] != "fcfs":
            return (f"station {name!r}: discipline {low.discipline[k]!r} (RQNA models FCFS "
                    "queues)")
    return None


def for_mva_residual(net: Network) -> str | None:
    """``mva-residual``: numbers, closed classes, an FCFS queue with general
    service, no pools or binding capacity, delays and FCFS/PS/LCFS-PR
    queues (and load-dependent stations with exponential service)."""
    return (numeric(net) or closed_only(net) or _general_service(net) or pools(net)
            or capacities(net, closed_population(net)) or _general_stations(net, ld=True))


def for_marie(net: Network) -> str | None:
    """``marie``: what ``mva-residual`` requires (numbers, closed classes, an
    FCFS queue with general service or class-dependent times, no pools or
    binding capacity, delays and FCFS/PS/LCFS-PR queues, load-dependent
    stations with exponential service).  Its size (population lattice,
    station chains) is checked by the solver before any allocation
    (:class:`~qmodels.errors.ProblemTooLargeError`: ``qm.solve(net)`` then
    passes it over).  No class switching (the solver refuses it by name)."""
    return class_switching(net) or for_mva_residual(net)


#: the largest Markov chain ``qm.solve(net)`` builds (states) before it
#: turns to an approximation; ``method="ctmc"`` itself goes to its own
#: ``max_states`` (200,000 by default)
AUTO_CTMC_STATES = 50_000


def for_ctmc(net: Network) -> str | None:
    """``ctmc`` (as ``qm.solve(net)`` chooses it): numbers, what the chain
    models (service and inter-arrival times of any shape, as phase-type
    distributions: exact for exponential, Erlang and hyperexponential,
    fitted otherwise, then labelled approximate; FCFS, PS, priority and
    LCFS-PR queues, delays, load-dependent stations, finite room, token
    pools, class switching; a route that fixes the order of visits where
    capacities or pools make it matter; closed fork-joins as
    :func:`_for_ctmc_forkjoin` says), and a state space not proven larger than
    :data:`AUTO_CTMC_STATES` (counted before any state is built; a chain
    that outgrows it while being built is refused then)."""
    why = numeric(net)
    if why:
        return why
    if for_exact(net) is None:
        return ("the network is product form: the exact recursion answers it, and its chain "
                "is larger")
    from ..errors import UnsupportedModelError
    from ._ctmc_spec import _check_size, _Spec

    low = net.lowered
    if "forkjoin" in low.kind:
        return _for_ctmc_forkjoin(net)
    for k, kind in enumerate(low.kind):
        if kind not in ("delay", "queue", "ld") and low.visited[k]:
            return f"station {low.station_names[k]!r} is a {kind!r} element"
    try:
        spec = _Spec(net, None)
        _check_size(spec, AUTO_CTMC_STATES)
    except UnsupportedModelError as e:
        return str(e).replace("max_states =", "the automatic choice's budget of")
    return None


def _for_ctmc_forkjoin(net: Network) -> str | None:
    """``ctmc`` on a network with fork-joins: the chain of queue lengths
    (:mod:`qmodels.analytic._ctmc_forkjoin`) models it (one closed class
    or one open class of Poisson arrivals, exponential service,
    single-server FCFS queues on the branches, one task per branch, no
    capacity, pool or load-dependent station; each refusal names the class
    or station), and its states, counted exactly before any is built,
    number at most :data:`AUTO_CTMC_STATES` (an open class's: the chain
    truncated at the first cut, ``DEFAULT_OPEN_LIMIT`` jobs present; the
    solve grows the cut only within its budget)."""
    from ..model.network import Open
    from ._ctmc_forkjoin import count_states, refusal
    from ._ctmc_spec import DEFAULT_OPEN_LIMIT

    why = refusal(net)
    if why:
        return why
    cut = DEFAULT_OPEN_LIMIT if isinstance(net.classes[0], Open) else None
    n = count_states(net, AUTO_CTMC_STATES, cut)
    if n > AUTO_CTMC_STATES:
        return (f"the fork-join chain has {n:,} states or more, more than the automatic choice's "
                f"budget of {AUTO_CTMC_STATES:,}")
    return None


def has_kind(net: Network, kind: str) -> bool:
    """Some station of the network is of ``kind`` (e.g. ``"forkjoin"``)."""
    return kind in net.lowered.kind


def for_priority(net: Network) -> str | None:
    """``priority``: numbers and a priority queue (``prio``, ``prio-pr``)
    that classes of several levels visit (with one level the queue is
    FCFS, and the product-form methods answer)."""
    why = numeric(net)
    if why:
        return why
    if mixed_priority(net) is None:
        return "no priority queue is visited by classes of several priority levels"
    return pools(net)


def for_forkjoin(net: Network) -> str | None:
    """``forkjoin``: numbers and a fork-join element (the method itself
    refuses, by name, what it does not model: several classes, multi-server
    queues, ...)."""
    if not has_kind(net, "forkjoin"):
        return "the network has no fork-join"
    return numeric(net) or pools(net)


def for_forkjoin_pools(net: Network) -> str | None:
    """``forkjoin-pools``: a fork-join whose tasks hold token pools along
    its one branch, one closed class, product form elsewhere (the method's
    own :func:`~qmodels.analytic.forkjoin_pools.refusal`, every reason
    naming the station, pool or class)."""
    if not has_kind(net, "forkjoin"):
        return "the network has no fork-join"
    if not net.pools:
        return "the network has no token pool (method='forkjoin' solves fork-joins without)"
    from .forkjoin_pools import refusal

    return numeric(net) or refusal(net)
