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
from ..model import Closed, Open
from ..model.distributions import Erlang
from .engine import NJF, NJI
from .flatten import acc_layout

__all__ = ["check_sim_size", "MAX_RUN_BYTES", "MAX_REPLICATIONS"]

#: Largest estimated memory of one run's state (2 GiB).
MAX_RUN_BYTES = 2 * 2**30
#: Most independent replications one call may ask for.
MAX_REPLICATIONS = 100_000

#: the open job slots a run starts with (qmodels.sim.run._Run)
_OPEN_SLOTS = 256


def _erlang_k(network) -> int:
    ks = [2]
    for s in network.stations:
        if isinstance(s.distribution, Erlang):
            ks.append(int(s.distribution.k))
    for c in network.classes:
        if isinstance(c, Open) and isinstance(c.interarrival, Erlang):
            ks.append(int(c.interarrival.k))
    return max(ks)


def run_bytes(network) -> float:
    """Estimated bytes of one run's state (see the module docstring)."""
    J = sum(int(c.population) for c in network.classes if isinstance(c, Closed))
    if any(isinstance(c, Open) for c in network.classes):
        J += _OPEN_SLOTS
    J = max(J, 1)
    C = len(network.classes)
    per_job = 8.0 * (NJI + NJF + 4)
    uniforms = float(J + C + 8) * (2 * _erlang_k(network) + 6)
    return J * per_job + 4 * 8.0 * uniforms


def check_sim_size(network, replications: int) -> None:
    """Raise :class:`ProblemTooLargeError` when one run's state passes
    :data:`MAX_RUN_BYTES` or ``replications`` passes
    :data:`MAX_REPLICATIONS`; called before anything is built."""
    need = run_bytes(network)
    if need > MAX_RUN_BYTES:
        pop = sum(int(c.population) for c in network.classes if isinstance(c, Closed))
        k = _erlang_k(network)
        why = (f"an Erlang shape with k = {k} phases (k uniforms per service time)"
               if k > 1000 else f"{pop} closed jobs")
        out = ("an Erlang with that many phases is all but deterministic: use "
               "distribution=qm.Deterministic()" if k > 1000 else
               "solve it analytically (method='bounds', 'schweitzer' or 'linearizer' cost the "
               "same at any population; 'exact' up to its own limit) or simulate a "
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
