"""Transient analysis: how a network's mean figures approach steady state
from a known start (a cold start, a burst, the moment after a failover).

``qm.transient(net, t_end)`` answers on the grid t_i = i t_end / points:

``method="ctmc"``
    exact: the state probabilities p(t) = p(0) exp(Q t) of the network's
    CTMC (:mod:`qmodels.analytic.transient`), for the models the CTMC
    holds within its state budget; at each instant, or averaged over each
    cell with ``average=True``.
``method="sim"``
    the simulator: ``replications`` independent runs from the same start,
    the cell averages of each figure with a Student-t interval per cell
    (:mod:`qmodels.sim.transient`); any model the simulator runs.
``method="auto"`` (default)
    the CTMC when its chain fits ``max_states``, else the simulator.

The start: no open job, and every closed job at the beginning of its cycle.
An open stream with non-exponential (phase-type) inter-arrival times starts
at the beginning of an inter-arrival time in both methods (the CTMC's first
arrival phase; the simulator's first arrival a full draw after 0).
With a think time that is the think stage for both methods.  Without one the
CTMC puts the jobs at the class's reference station.  The simulator does the
same for a class given by routing (a class of a class-switching chain other
than the chain's first: at the first station of its routing), while a class
given by visits is routed from the think stage to a first station at time 0,
drawn from its routing: the two transients then start from different states
(the result says so).

Class switching: the CTMC's state holds each job's class, so its transient
runs on the chain ``qm.ctmc`` solves; the user splits a closed chain's
population among its classes by the classes' populations, and that split is
the start of both methods.

The answer also carries the steady state (``steady``: ``qm.solve`` of the
same network, labelled as it labels itself) and, per station, the time after
which the figure stays within 5 % of it (:meth:`Transient.settling_time`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ._format import fmt, format_table
from .errors import InvalidValueError, ProblemTooLargeError, UnsupportedModelError
from .model.map import MAP
from .model.network import Closed, Network
from .results import label_dict, label_lines

__all__ = ["Transient", "transient"]

#: figure -> (what it is, per station or per class)
FIGURES = {"Q": ("mean queue length", "station"), "U": ("utilisation", "station"),
           "X": ("completions per unit time", "station"),
           "Q_class": ("jobs of the class at the stations", "class")}


@dataclass(frozen=True, repr=False)
class Transient:
    """Transient figures of a network on a time grid (module docstring).

    Attributes
    ----------
    network : Network
    method : str
        ``"ctmc"`` or ``"sim"``.
    exactness : str
        ``"exact"`` (CTMC) or ``"simulated"``.
    times : numpy.ndarray
        The grid t_1 .. t_points (cell ends).
    kind : str
        ``"instant"`` (the value at t_i) or ``"cell average"`` (the average
        over (t_{i-1}, t_i]).
    figures : mapping
        ``"Q"``, ``"U"``, ``"X"`` (points, stations) and ``"Q_class"``
        (points, classes): arrays of means.
    low, high : mapping
        The confidence bounds of each figure (simulated; empty for the CTMC).
    initial : str
        The initial state, in words.
    start : mapping
        The figures at t = 0 (the initial state's; per figure, an array
        over stations or classes) when the method knows them exactly (the
        CTMC), else empty.
    steady : Result or None
        The steady state of the same network (``qm.solve``), if it has one.
    """

    network: Network
    method: str
    exactness: str
    times: np.ndarray
    kind: str
    figures: Mapping
    low: Mapping = field(default_factory=dict)
    high: Mapping = field(default_factory=dict)
    initial: str = ""
    steady: object = None
    level: float | None = None
    assumptions: tuple = ()
    notes: tuple = ()
    warnings: tuple = ()
    info: Mapping = field(default_factory=dict)
    start: Mapping = field(default_factory=dict)

    # -- access ----------------------------------------------------------
    def _names(self, fig: str) -> list[str]:
        if fig not in FIGURES:
            raise InvalidValueError(f"unknown figure {fig!r}: one of {sorted(FIGURES)}")
        per = FIGURES[fig][1]
        return self.network.station_names if per == "station" else self.network.class_names

    def series(self, fig: str, name: str) -> np.ndarray:
        """The figure ``fig`` of station (or class) ``name`` over the grid."""
        names = self._names(fig)
        if name not in names:
            raise InvalidValueError(f"no {FIGURES[fig][1]} {name!r} (have {names})")
        return np.asarray(self.figures[fig])[:, names.index(name)]

    def steady_value(self, fig: str, name: str) -> float:
        """The steady-state value of ``fig`` at ``name`` (NaN without one)."""
        r = self.steady
        if r is None:
            return math.nan
        try:
            if fig == "Q":
                return float(r.Q[name])
            if fig == "U":
                return float(r.U[name])
            if fig == "X":
                return float(r.X[name])
            k = ~_branch_mask(self.network)
            ci = self.network.class_names.index(name)
            return float(np.asarray(r.station_queue_length, float)[ci, k].sum())
        except (KeyError, ValueError, TypeError, AttributeError):
            return math.nan

    def settling_time(self, fig: str = "Q", tol: float = 0.05) -> dict:
        """Per station (or class): the first grid time from which the figure
        stays within ``tol`` (relative; absolute below a steady value of
        1e-9) of its steady-state value to the end of the grid -- for a
        simulated transient, from which every cell's interval reaches into
        that band; NaN if it never does (or there is no steady state)."""
        out = {}
        for name in self._names(fig):
            y = self.series(fig, name)
            ss = self.steady_value(fig, name)
            if not math.isfinite(ss):
                out[name] = math.nan
                continue
            band = tol * max(abs(ss), 1e-9)
            ok = np.abs(y - ss) <= band
            if self.low:
                # simulated: within the band, or an interval reaching into it
                j = self._names(fig).index(name)
                lo, hi = np.asarray(self.low[fig])[:, j], np.asarray(self.high[fig])[:, j]
                ok |= (lo <= ss + band) & (hi >= ss - band)
            if not ok[-1]:
                out[name] = math.nan
                continue
            bad = np.flatnonzero(~ok)
            out[name] = float(self.times[bad[-1] + 1] if bad.size else self.times[0])
        return out

    # -- shapes a user wants -----------------------------------------------
    def to_frame(self):
        """Long table: time, figure, name, value (and low, high when
        simulated), steady (the steady-state value); ``attrs`` carry the
        label."""
        import pandas as pd

        rows = []
        for fig in FIGURES:
            names = self._names(fig)
            for j, name in enumerate(names):
                ss = self.steady_value(fig, name)
                for i, t in enumerate(self.times):
                    row = {"time": float(t), "figure": fig, "name": name,
                           "value": float(self.figures[fig][i, j]), "steady": ss}
                    if self.low:
                        row["low"] = float(self.low[fig][i, j])
                        row["high"] = float(self.high[fig][i, j])
                    rows.append(row)
        df = pd.DataFrame(rows)
        df.attrs.update(label_dict(self), kind=self.kind, initial=self.initial)
        return df

    def to_dict(self) -> dict:
        d = {"method": self.method, "exactness": self.exactness, "kind": self.kind,
             "initial": self.initial, "times": [float(t) for t in self.times],
             "figures": {f: {n: [float(v) for v in self.series(f, n)] for n in self._names(f)}
                         for f in FIGURES}}
        if self.low:
            d["low"] = {f: {n: [float(v) for v in np.asarray(self.low[f])[:, j]]
                            for j, n in enumerate(self._names(f))} for f in FIGURES}
            d["high"] = {f: {n: [float(v) for v in np.asarray(self.high[f])[:, j]]
                             for j, n in enumerate(self._names(f))} for f in FIGURES}
        if self.start:
            d["start"] = {f: {n: float(np.asarray(self.start[f])[j])
                              for j, n in enumerate(self._names(f))} for f in FIGURES}
        d["steady"] = {f: {n: self.steady_value(f, n) for n in self._names(f)} for f in FIGURES}
        d.update(label_dict(self))
        return d

    def plot(self, fig: str = "Q", names=None, ax=None, steady: bool = True):
        """The figure over time from t = 0, one line per station (or class),
        the simulated interval as a band, the steady state dashed; returns
        the Axes.

        A cell average (the simulator's, or the CTMC's with ``average=True``)
        is the mean over its cell (t_{i-1}, t_i], so it is drawn as a step
        over the whole cell, the first from t_0 = 0; an instant value is a
        point of the curve, which starts at t = 0 from the initial state
        when the result holds it (the CTMC's ``start``)."""
        from .plot import _axes

        ax = _axes(ax)
        x, steps = self._plot_x()
        for name in names or self._names(fig):
            y = self._plot_y(self.series(fig, name), fig, name, steps)
            (line,) = ax.plot(x, y, label=name, drawstyle="steps-post" if steps else None)
            if self.low:
                j = self._names(fig).index(name)
                lo = self._plot_y(np.asarray(self.low[fig])[:, j], fig, name, steps, band=True)
                hi = self._plot_y(np.asarray(self.high[fig])[:, j], fig, name, steps, band=True)
                ax.fill_between(x if steps else self.times, lo, hi,
                                step="post" if steps else None, alpha=0.25,
                                color=line.get_color())
            ss = self.steady_value(fig, name)
            if steady and math.isfinite(ss):
                ax.axhline(ss, ls="--", lw=0.8, color=line.get_color())
        ax.set_xlabel("time")
        ax.set_ylabel(f"{fig}: {FIGURES[fig][0]}")
        ax.set_title(f"transient, {self.method} [{self.exactness}], {self.kind}")
        ax.legend()
        return ax

    def _plot_x(self):
        """(x data, drawn as steps): the cell edges 0, t_1 .. t_n for cell
        averages; 0, t_1 .. t_n for instants with a start, else t_1 .. t_n."""
        t = np.asarray(self.times, float)
        if self.kind == "cell average":
            return np.concatenate([[0.0], t]), True
        if self.start:
            return np.concatenate([[0.0], t]), False
        return t, False

    def _plot_y(self, y, fig, name, steps, band=False):
        """y data matching :meth:`_plot_x`: a cell's value repeated at its
        end edge (steps-post), or the value at t = 0 before the instants."""
        y = np.asarray(y, float)
        if steps:
            return np.concatenate([y, y[-1:]])
        if band or not self.start:
            return y
        j = self._names(fig).index(name)
        return np.concatenate([[float(np.asarray(self.start[fig])[j])], y])

    def table(self, rows: int = 6) -> str:
        names = self.network.station_names
        idx = np.unique(np.linspace(0, len(self.times) - 1, min(rows, len(self.times)))
                        .round().astype(int))
        body = [[fmt(self.times[i])] + [fmt(self.figures["Q"][i, k]) for k in range(len(names))]
                for i in idx]
        body.append(["steady"] + [fmt(self.steady_value("Q", n)) for n in names])
        settle = self.settling_time("Q")
        body.append(["settles (5 %)"] + [fmt(settle[n]) for n in names])
        head = [f"Transient, {self.method} solution [{self.exactness}], Q per station "
                f"({self.kind})", f"  from: {self.initial}"]
        head += label_lines(self)
        return "\n".join(head) + "\n" + format_table(["t"] + [f"Q[{n}]" for n in names], body)

    def __repr__(self):
        return self.table()

    def _repr_html_(self):
        import html

        return "<pre>" + html.escape(self.table()) + "</pre>"


def _branch_mask(net: Network) -> np.ndarray:
    from .model.forkjoin import branch_owner

    owner = branch_owner(net.stations)
    return np.array([s.name in owner for s in net.stations], dtype=bool)


def _sim_start(net: Network, c) -> str | None:
    """Where the simulator puts a closed job without think time at t = 0: a
    class given by routing at its reference station (a class of a switching
    chain other than the chain's first at the first station of its own
    routing: :func:`qmodels.sim.flatten._explicit_routing`); None for a class
    given by visits, whose first station is drawn from its routing."""
    if c.routing is None:
        return None
    for chain in net.chains:
        if c.name in chain and len(chain) > 1 and chain[0] != c.name:
            return next(iter(c.routing))
    return c.reference


def _start_words(net: Network, method: str) -> str:
    parts = ["no open job"] if net.open_classes else []
    if any(getattr(c, "interarrival", None) is not None for c in net.open_classes):
        parts.append("each open stream at the start of an inter-arrival time"
                     + (" (a MAP stream in its phase 0)"
                        if any(isinstance(c.interarrival, MAP) for c in net.open_classes)
                        else ""))
    for c in net.classes:
        if not isinstance(c, Closed) or int(c.population) == 0:
            continue
        if float(c.think_time) > 0:
            parts.append(f"the {int(c.population)} jobs of class {c.name!r} thinking")
        elif method == "ctmc" and c.reference is not None:
            parts.append(f"the {int(c.population)} jobs of class {c.name!r} at its reference "
                         f"station {c.reference!r}")
        elif method == "ctmc":
            parts.append(f"the {int(c.population)} jobs of class {c.name!r} at its reference "
                         "station")
        elif _sim_start(net, c) is not None:
            parts.append(f"the {int(c.population)} jobs of class {c.name!r} at station "
                         f"{_sim_start(net, c)!r}")
        else:
            parts.append(f"the {int(c.population)} jobs of class {c.name!r} routed to a first "
                         "station at t = 0")
    return "; ".join(parts) or "an empty network"


def _differs(net: Network) -> bool:
    """True when the CTMC's and the simulator's starts differ: a closed
    class without think time given by visits that can start at more than
    one station, or given by routing and started by the simulator elsewhere
    than at its reference station (:func:`_sim_start`)."""
    V = np.asarray(net.visits, float)
    for i, c in enumerate(net.classes):
        if not (isinstance(c, Closed) and int(c.population) > 0 and float(c.think_time) == 0):
            continue
        if c.routing is None and np.count_nonzero(V[i] > 0) > 1:
            return True
        if c.routing is not None and _sim_start(net, c) != c.reference:
            return True
    return False


def transient(net: Network, t_end: float, *, points: int = 50, method: str = "auto",
              seed=None, replications: int = 30, level: float = 0.95,
              average: bool = False, max_states: int = 50_000, open_limit: int | None = None,
              workers: int | None = None, client=None, progress=None) -> Transient:
    """How ``net``'s mean figures evolve over ``[0, t_end]`` from the start
    described in the module docstring.

    Parameters
    ----------
    net : Network
    t_end : float
        The end of the time grid (the model's time unit).
    points : int
        Grid points t_i = i t_end / points (default 50).
    method : "auto", "ctmc" or "sim"
        See the module docstring; ``auto`` takes the CTMC when the chain
        fits ``max_states``, else simulates.
    seed, replications, level, workers, client, progress
        The simulator's (``seed`` defaults to 1: the same run every time).
    average : bool
        CTMC only: cell averages instead of instants (the simulator always
        gives cell averages).
    max_states, open_limit
        The CTMC's state budget and open-job truncation.

    Returns
    -------
    Transient

    Raises
    ------
    InvalidValueError
        A bad time, grid or method.
    ProblemTooLargeError, UnsupportedModelError
        ``method="ctmc"`` on a chain over budget or a model it cannot hold.
    """
    if method not in ("auto", "ctmc", "sim"):
        raise InvalidValueError(f"method={method!r}: transient takes 'auto', 'ctmc' or 'sim'")
    notes, assumptions = [], []
    if method in ("auto", "ctmc"):
        from .analytic.transient import ctmc_transient

        try:
            raw = ctmc_transient(net, t_end, points=points, average=average,
                                 max_states=max_states, open_limit=open_limit)
        except (ProblemTooLargeError, UnsupportedModelError) as e:
            if method == "ctmc":
                raise
            notes.append(f"the CTMC cannot hold this model ({e}); simulated instead")
        else:
            notes.append(f"the CTMC has {raw['states']} states; p(t) by the action of the "
                         "matrix exponential (Al-Mohy & Higham 2011)")
            if raw["mass_drift"] > 1e-9:
                notes.append(f"the probabilities summed to 1 within {raw['mass_drift']:.1e} "
                             "before renormalising")
            assumptions += list(raw["assumptions"])
            return _wrap(net, "ctmc", raw["exactness"], raw, None, None, None, notes,
                         assumptions, list(raw["warnings"]))
    if average is True and method == "sim":
        notes.append("the simulator gives cell averages (average=True is its only kind)")
    from .sim.transient import simulate_transient

    if seed is None:
        seed = 1
        notes.append("seed 1 (pass seed= for another run)")
    raw = simulate_transient(net, t_end, points=points, seed=seed, replications=replications,
                             level=level, workers=workers, client=client, progress=progress)
    notes.append(f"{raw['replications']} independent replications, {raw['events']} events; "
                 f"{int(level * 100)} % Student-t interval per cell")
    notes += raw["notes"]
    lo = {k: raw[k][1] for k in FIGURES}
    hi = {k: raw[k][2] for k in FIGURES}
    means = {k: raw[k][0] for k in FIGURES}
    return _wrap(net, "sim", "simulated", {**means, "edges": raw["edges"], "average": True},
                 lo, hi, level, notes, assumptions)


def _wrap(net, method, exactness, raw, lo, hi, level, notes, assumptions,
          warns=None) -> Transient:
    steady = None
    warns = list(warns or [])
    try:
        from .dispatch import solve

        steady = solve(net)
    except Exception as e:  # noqa: BLE001 - no steady state is an answer too
        notes.append(f"no steady state to compare with ({type(e).__name__}: "
                     f"{str(e).splitlines()[0][:160]})")
    if _differs(net):
        notes.append("a closed class without think time starts at its reference station in "
                     "the CTMC but elsewhere in the simulator (at a station drawn from its "
                     "routing, or the first of its routing for a class of a switching chain "
                     "other than the chain's first): the two methods' transients start from "
                     "different states")
    figs = {k: np.asarray(raw[k], float) for k in FIGURES}
    return Transient(
        network=net, method=method, exactness=exactness, times=np.asarray(raw["edges"]),
        kind="cell average" if raw.get("average") else "instant", figures=figs,
        low=lo or {}, high=hi or {}, initial=_start_words(net, method), steady=steady,
        level=level, assumptions=tuple(assumptions), notes=tuple(notes),
        warnings=tuple(warns), info={"states": raw.get("states")},
        start={k: np.asarray(v, float) for k, v in (raw.get("start") or {}).items()})
