"""The approach to steady state, simulated: the mean figures per time cell
over independent replications that all start from the same state.

Every replication starts empty of open jobs with every closed job at the
start of its cycle (thinking when the class has a think time, else routed
from the think stage to its first station at time 0: :func:`engine._start`),
and runs to ``t_end``; its time is cut into ``points`` equal cells and the
loop's cell snapshots give, per cell, the time-average of every station's
queue length and utilisation and the completions per unit time of every
station and class.  Cell i of all replications are independent and
identically distributed observations of the same transient quantity, so
their mean has a Student-t interval (Law, *Simulation Modeling and
Analysis*, 5th ed., 2015, sec. 9.4.1, eq. 9.1) -- a transient is what
independent replications estimate without any warm-up deletion (Law 2015,
sec. 9.4, "terminating simulations").

A cell average is not the value at one instant: over a cell of width h
it is (1/h) of the integral of E[Q(t)] over the cell, which differs from
E[Q] at the cell's midpoint by O(h^2) times the curvature.  The CTMC route
(:func:`qmodels.analytic.transient.ctmc_transient`) gives both.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_count, check_real
from ..errors import InvalidValueError
from ..model.network import Network
from .api import _run_one
from .flatten import flatten
from .guards import check_sim_size
from .parallel import check_workers, run_in_order
from .stats import estimate
from .windows import _window

__all__ = ["simulate_transient"]

#: figures kept per cell: name in the result -> key of the window figures
KEYS = {"Q": "Q_st", "U": "U_st", "X": "X_st", "X_class": "X_cl", "Q_class": "Q_cl"}


def _one(network, flat, child, t_end, points, cap_events):
    run, status, seg = _run_one(network, flat, child, t_end, None, False, cap_events,
                                ncell=points)
    n = run.cells_done
    out = {name: np.full((points,) + np.shape(_window(run, 0, 1)[key]), np.nan)
           for name, key in KEYS.items()}
    for i in range(n):
        w = _window(run, i, i + 1)
        for name, key in KEYS.items():
            out[name][i] = w[key]
    return out, int(run.events), n


def simulate_transient(network: Network, t_end: float, *, points: int = 50, seed,
                       replications: int = 30, level: float = 0.95,
                       max_events: float | None = None, workers: int | None = None,
                       client=None, progress=None) -> dict:
    """Simulated transient of ``network`` over ``[0, t_end]``: a dict of the
    cell edges, and per figure (``Q``, ``U``, ``X`` per station,
    ``X_class``, ``Q_class`` per class) arrays of the mean, low and high of
    each cell (shape (points, stations) or (points, classes)).

    ``replications`` (>= 2) independent runs from the same initial state
    (module docstring), replication i from child i of ``SeedSequence(seed)``,
    on ``workers`` processes or a dask ``client`` if given (the same numbers
    whatever the split)."""
    if not isinstance(network, Network):
        raise InvalidValueError(f"expected a Network, got {type(network).__name__}")
    t_end = float(check_real(t_end, "t_end (the transient's end)", allow_zero=False))
    points = check_count(points, "points", minimum=2)
    replications = check_count(replications, "replications (an interval needs two)",
                               minimum=2)
    if not 0 < float(level) < 1:
        raise InvalidValueError(f"level={level!r} must lie in (0, 1)")
    if seed is None:
        raise InvalidValueError("seed= is required (the same seed gives the same numbers)")
    nproc = check_workers(workers, client)
    check_sim_size(network, int(replications))
    flat = flatten(network)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    cap = math.inf if max_events is None else float(max_events)
    children = ss.spawn(int(replications))
    from .._progress import bar as progress_bar

    bar = progress_bar(progress, int(replications), "simulating transient", unit="run")
    runs, events, short = [], 0, 0
    try:
        for out, ev, n in run_in_order(
                _one, [(network, flat, ch, t_end, int(points), cap) for ch in children],
                nproc, client):
            runs.append(out)
            events += ev
            short += n < points
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    res = {"edges": t_end * np.arange(1, int(points) + 1) / int(points), "events": events,
           "replications": int(replications), "level": float(level), "notes": []}
    if short:
        res["notes"].append(f"max_events stopped {short} replication(s) before t_end: their "
                            "later cells are missing from the means")
    for name in KEYS:
        stack = np.stack([r[name] for r in runs])           # (reps, points, m)
        mean = np.full(stack.shape[1:], np.nan)
        low, high = mean.copy(), mean.copy()
        for idx in np.ndindex(*stack.shape[1:]):
            e = estimate(stack[(slice(None),) + idx], level)
            mean[idx], low[idx], high[idx] = e.mean, e.low, e.high
        res[name] = (mean, low, high)
    return res
