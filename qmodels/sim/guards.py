"""Size guards of the simulator: refuse, before any array is allocated, a
run whose state would not fit in memory or whose replications could not
finish, with the estimate and the way out.

The state of one run (:class:`qmodels.sim.run._Run`) holds, per job slot,
``NJI`` integers and ``NJF`` floats plus four event-heap entries, and a
buffer of uniform variates large enough for the worst single event: every
job may move once in an unblocking cascade, each move drawing a route, two
service times (an Erlang-k time takes k uniforms) and a think or
inter-arrival time, so ``(J + C + 8) (2 k_max + 6)`` uniforms, drawn twice
that many at a time and copied once when refilled.
"""

from __future__ import annotations

from ..errors import ProblemTooLargeError
from ..model import CacheStation, Closed, Open
from ..model.distributions import Erlang
from .engine import NJF, NJI
from .flatten import acc_layout

__all__ = ["check_sim_size", "MAX_RUN_BYTES", "MAX_REPLICATIONS", "MAX_ERLANG_PHASES"]

#: Largest estimated memory of one run's state (2 GiB).
MAX_RUN_BYTES = 2 * 2**30
#: Most independent replications one call may ask for.
MAX_REPLICATIONS = 100_000

#: Most phases of an Erlang the simulator draws: each variate sums k
#: exponentials (k logarithms), so the run's work grows with k, not only
#: its memory (k = 10^4 took 10-46 s for 10^4 services on the 2-core
#: reference machine, k = 10^6 did not finish).  An Erlang with more
#: phases has SCV 1/k < 0.001: all but deterministic.
MAX_ERLANG_PHASES = 1000

#: the open job slots a run starts with (qmodels.sim.run._Run)
_OPEN_SLOTS = 256


def _erlang_k(network) -> int:
    ks = [2]
    shapes = [s.distribution for s in network.stations]
    shapes += [d for c in network.classes for d in (c.distribution or {}).values()]
    for d in shapes:
        if isinstance(d, Erlang):
            ks.append(int(d.k))
    for c in network.classes:
        if isinstance(c, Open) and isinstance(c.interarrival, Erlang):
            ks.append(int(c.interarrival.k))
    return max(ks)


def run_bytes(network) -> float:
    """Estimated bytes of one run's state (see the module docstring)."""
    from ..model.forkjoin import forkjoins

    # a closed job and the tasks of its fork, as qmodels.sim.run._Run sizes
    # its job table (fork-joins do not nest); an open job forks as many
    # (in floats: a count past 2**63 gives an estimate past the limit, not
    # an OverflowError)
    T = float(max([f.n_tasks for f in forkjoins(network.stations)], default=0))
    J = float(sum(int(c.population) for c in network.classes if isinstance(c, Closed)))
    J *= 1.0 + T
    if any(isinstance(c, Open) for c in network.classes):
        J += _OPEN_SLOTS + T
    J = max(J, 1.0)
    C = len(network.classes)
    per_job = 8.0 * (NJI + NJF + 4)
    uniforms = float(J + C + 8) * (2 * _erlang_k(network) + 6)
    return J * per_job + 4 * 8.0 * uniforms + cache_bytes(network)


def cache_bytes(network) -> float:
    """Bytes of the caches' arrays in one run (:mod:`qmodels.sim.engine`,
    ``Q``): per catalog item its cumulative probability and its slot, and
    for LRU its two list links; per cache slot one item id."""
    total = 0.0
    for s in network.stations:
        if isinstance(s, CacheStation):
            n = float(s.items)
            total += 8.0 * (n * (2 + (2 if s.policy == "lru" else 0))
                            + min(s.cache_capacity, n))
    return total


def _check_erlang_work(network) -> None:
    """Refuse an Erlang service or inter-arrival time with more than
    :data:`MAX_ERLANG_PHASES` phases, naming the station or class."""
    where = [(f"station {s.name!r} service", s.distribution) for s in network.stations]
    where += [(f"class {c.name!r} service at station {st!r}", d) for c in network.classes
              for st, d in (c.distribution or {}).items()]
    where += [(f"class {c.name!r} inter-arrival time", c.interarrival)
              for c in network.classes if isinstance(c, Open)]
    for who, d in where:
        if isinstance(d, Erlang) and int(d.k) > MAX_ERLANG_PHASES:
            raise ProblemTooLargeError(
                f"{who}: Erlang with k = {int(d.k)} phases; the simulator draws k exponentials "
                f"per variate and takes k <= {MAX_ERLANG_PHASES} (the run's time grows with "
                f"k): its SCV 1/k = {1 / int(d.k):.3g} is all but deterministic, so use "
                f"distribution=qm.Deterministic(), or qm.Erlang({MAX_ERLANG_PHASES})")


def check_sim_size(network, replications: int) -> None:
    """Raise :class:`ProblemTooLargeError` when one run's state passes
    :data:`MAX_RUN_BYTES` or ``replications`` passes
    :data:`MAX_REPLICATIONS`; called before anything is built."""
    _check_erlang_work(network)
    need = run_bytes(network)
    if need > MAX_RUN_BYTES:
        from ..model.forkjoin import forkjoins

        pop = sum(int(c.population) for c in network.classes if isinstance(c, Closed))
        big = max(forkjoins(network.stations), key=lambda f: f.n_tasks, default=None)
        cb = cache_bytes(network)
        if cb > need / 2:
            why = ("the cache stations' catalogs (" + ", ".join(
                f"{s.name!r}: {s.items} items" for s in network.stations
                if isinstance(s, CacheStation)) + ")")
            out = ("each catalog item takes 16 to 32 bytes: simulate a smaller catalog (a "
                   "Zipf catalog's hit ratio depends mostly on its head), or solve "
                   "analytically (Che's split)")
        elif big is not None and big.n_tasks > 1:
            why = (f"fork-join {big.name!r} with {big.n_tasks} tasks per fork"
                   + (f" and {pop} closed jobs" if pop else ""))
            out = ("each task is a job slot: give the fork-join fewer tasks, or solve it "
                   "analytically (method='bounds')")
        else:
            why = f"{pop} closed jobs"
            out = ("solve it analytically (method='bounds', 'schweitzer' or 'linearizer' cost "
                   "the same at any population; 'exact' up to its own limit) or simulate a "
                   "scaled-down population")
        raise ProblemTooLargeError(
            f"simulation of {why} needs about {need / 2**30:.3g} GiB for one run's state "
            f"(limit {MAX_RUN_BYTES / 2**30:.3g} GiB): {out}")
    if replications > MAX_REPLICATIONS:
        C, K, P = len(network.classes), len(network.stations), len(network.pools)
        # each replication keeps its figures (about the accumulator vector
        # of acc_layout, twice: time averages and ratios) and C x 3 percentiles
        kept = float(replications) * 8 * (2 * acc_layout(C, K, P)["size"] + 3 * C)
        raise ProblemTooLargeError(
            f"replications={replications}: each is a separate run with its own warm-up, and "
            f"their observations alone take about {kept / 2**30:.3g} GiB (limit "
            f"{MAX_REPLICATIONS} replications): for narrower intervals use a longer horizon, "
            "precision=... (replications are added until it is reached) or "
            "method='batch_means'")
