"""The exact reference for closed fork-join networks used by the
fork-join validations: the chain of queue lengths that ``qm.ctmc`` solves
for a network with fork-joins (:mod:`qmodels.analytic._ctmc_forkjoin`,
where the model, the state and its source are described: one closed
class, exponential service, single-server FCFS queues on the branches,
one task per branch).  This module only reads its answer into the
mapping the validation scripts use; there is one implementation.
"""

from __future__ import annotations

import qmodels as qm

__all__ = ["solve", "MAX_STATES"]

#: the largest chain this reference builds (the library's breadth-first
#: build; it counts the states first and refuses a larger chain)
MAX_STATES = 400_000


def solve(net, max_states: int = MAX_STATES) -> dict:
    """Exact mean values of a closed single-class fork-join network:
    {"X": class throughput, "R": class response time (think time
    excluded), "R_station": {fork-join or outside station: mean time per
    visit}, "Q_station": {...}, "states": number of states}.  Refuses
    (:class:`~qmodels.errors.UnsupportedModelError`, by name) what the
    chain does not model, and (:class:`~qmodels.errors.ProblemTooLargeError`)
    a chain of more than ``max_states`` states."""
    from qmodels.model.forkjoin import branch_owner

    r = qm.ctmc(net, max_states=max_states)
    own = branch_owner(net.stations)
    top = [s.name for s in net.stations if s.name not in own]
    cls = net.class_names[0]
    return {"X": float(r.X[cls]), "R": float(r.R[cls]), "states": int(r.info["states"]),
            "R_station": {x: float(r.station_response_time[0][net.station_index(x)])
                          for x in top},
            "Q_station": {x: float(r.station_queue_length[0][net.station_index(x)])
                          for x in top}}
