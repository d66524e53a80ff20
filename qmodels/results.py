"""Result objects shared by every solver.

One vocabulary everywhere (analytic solvers and the simulator):

========================  =====  ============================================
name                      alias  meaning
========================  =====  ============================================
``throughput``            ``X``  class: cycles (closed) or jobs (open) per s;
                                 station: visits (completions) per s
``response_time``         ``R``  class: time per cycle excluding think time,
                                 R = N/X - Z; station: time per visit
``queue_length``          ``Q``  mean number present (waiting + in service)
``utilization``           ``U``  busy fraction of one server, X S / c (a
                                 delay station: X S, the mean number busy; a
                                 load-dependent station: 1 - P(empty))
========================  =====  ============================================

Each is a :class:`Figures` mapping indexed by a station name, a class name,
or a ``(station, class)`` pair.

What an answer is
-----------------
Every result says, as data, what kind of answer it is (``exactness``):
``"exact"`` (the model's exact value, within floating point or a stated
truncation), ``"approximate"`` (an approximation: its note gives the error
measured on networks like this one, or says it was never measured there),
``"bound"`` (proven bounds) or ``"simulated"`` (an estimate with
confidence intervals); the ``method`` that made it; the ``assumptions`` it
rests on (``"Poisson arrivals"``, ``"FCFS solved as processor sharing at
'disk'"``, ...); its ``notes`` and ``warnings``; and for an approximation
its measured ``error`` envelope.  ``table()``, ``to_dict()`` (the JSON of
``qmodels solve --json``), ``to_frame()`` (in ``attrs``) and the notebook
display all carry them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._format import fmt, format_table, note_lines
from ._validate import FrozenMap
from .errors import InvalidValueError
from .model.network import Network

__all__ = ["Figures", "Result", "Curve", "format_table", "Report", "NetworkReport", "FrameReport",
           "EXACT", "APPROXIMATE", "BOUND", "SIMULATED", "EXACTNESS", "METHOD_LABELS",
           "label_of", "label_dict", "label_lines", "label_html"]

#: what an answer is (``exactness`` of every result)
EXACT, APPROXIMATE, BOUND, SIMULATED = "exact", "approximate", "bound", "simulated"
EXACTNESS = (EXACT, APPROXIMATE, BOUND, SIMULATED)

_PRODUCT_FORM = ("product form (BCMP): Poisson arrivals; FCFS service exponential with one "
                 "mean for all classes; no binding capacity or held resource")

#: the label an answer of each method carries unless its solver says more:
#: (exactness, assumptions).  A solver states further assumptions it made
#: for the model at hand (a truncation, a substitution) on the result.
METHOD_LABELS = {
    "exact": (EXACT, (_PRODUCT_FORM,)),
    "convolution": (EXACT, (_PRODUCT_FORM,)),
    "exact-symbolic": (EXACT, (_PRODUCT_FORM,)),
    "ctmc": (EXACT, ("a continuous-time Markov chain: exponential service and Poisson "
                     "arrivals",)),
    "schweitzer": (APPROXIMATE, (_PRODUCT_FORM,
                                 "Schweitzer-Bard estimate of the queue an arriving job sees")),
    "linearizer": (APPROXIMATE, (_PRODUCT_FORM,
                                 "Chandy-Neuse Linearizer estimate of the queue an arriving "
                                 "job sees")),
    "mva-residual": (APPROXIMATE, ("closed classes; FCFS queues with general service through "
                                   "the mean residual service (Reiser 1979)",
                                   "Schweitzer-Bard estimate of the queue an arriving job "
                                   "sees")),
    "marie": (APPROXIMATE, ("closed classes; each FCFS queue with general service solved alone "
                            "as a lambda(n)/PH/c queue fed by the flow-equivalent of the rest "
                            "of the network, iterated with a product-form substitute (Marie "
                            "1979, 1980; several classes: Baynat & Dallery 1996)",)),
    "qna": (APPROXIMATE, ("open classes; every flow described by its rate and SCV, each "
                          "station an independent GI/G/m queue (Whitt 1983)",)),
    "rqna": (APPROXIMATE, ("one open class, single-server FCFS queues, Markovian routing; "
                           "every flow described by its rate and index of dispersion for "
                           "counts (IDC) over time, merging flows taken independent; each "
                           "queue's mean workload by the robust-queueing formula (Whitt & "
                           "You 2018, 2022)",)),
    "priority": (APPROXIMATE, ("priority queues (closed) as the whole network's CTMC where "
                               "it is small (exact then, and labelled so), else a "
                               "finite-source priority chain fed by the flow-equivalent "
                               "server of the rest, or past its budget Sevcik's shadow "
                               "server; (open) the single-station priority formulas on "
                               "Poisson flows, a class's immediate returns merged into one "
                               "longer service (Whitt 1983)",)),
    "forkjoin": (APPROXIMATE, ("one class, exponential single-server queues and delays; "
                               "branch times taken independent",)),
    "forkjoin-varki": (APPROXIMATE, ("one closed class, exponential single-server queues "
                                     "(delays outside fork-joins); Varki's stage mean value "
                                     "equation for each fork-join",)),
    "decomposition": (APPROXIMATE, ("held resources by flow-equivalent servers (the "
                                    "decomposition)",)),
    "forkjoin-pools": (APPROXIMATE, ("one closed class, one fork-join whose tasks hold token "
                                     "pools along one branch: the branch by the decomposition, "
                                     "its tasks done one at a time in entry order, the rest as "
                                     "a flow-equivalent server",)),
    "bounds": (BOUND, ("operational laws; balanced job, geometric and proportional bounds "
                       "only where product form holds",)),
    "sim": (SIMULATED, ("the model as given, simulated: figures are estimates with "
                        "confidence intervals",)),
    "passage": (EXACT, ("an open product-form network; one fixed, overtake-free path of "
                        "FCFS ./M/1 queues (a last delay, or one M/M/c queue)",)),
    "ctmc-passage": (EXACT, ("closed classes; exponential service at FCFS and PS queues "
                             "and delays, exponential think times; the tagged job's chain "
                             "within its state budget",)),
}


def label_of(method: str, exactness: str = "", assumptions=()) -> tuple:
    """(exactness, assumptions) of an answer of ``method``: the values
    given, else the method's defaults (:data:`METHOD_LABELS`); an unknown
    method with no exactness given is ``"approximate"`` (never presumed
    exact)."""
    base_ex, base_as = METHOD_LABELS.get(method, (APPROXIMATE, ()))
    ex = exactness or base_ex
    if ex not in EXACTNESS:
        raise InvalidValueError(
            f"exactness must be one of {', '.join(EXACTNESS)}, got {exactness!r}")
    return ex, tuple(assumptions) if assumptions else tuple(base_as)


def label_dict(r) -> dict:
    """The label of any result as plain data: ``method``, ``exactness``,
    ``assumptions``, ``notes``, ``warnings`` and (approximations)
    ``error``, the measured error envelope or None."""
    err = getattr(r, "error", None)
    return {
        "method": getattr(r, "method", None),
        "exactness": getattr(r, "exactness", None),
        "assumptions": list(getattr(r, "assumptions", ()) or ()),
        "notes": list(getattr(r, "notes", ()) or ()),
        "warnings": list(getattr(r, "warnings", ()) or ()),
        "error": None if err is None else _plain_tree(err),
    }


def _plain_tree(x):
    if isinstance(x, Mapping):
        return {str(k): _plain_tree(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain_tree(v) for v in x]
    return _plain(x)


def label_lines(r) -> list[str]:
    """The text lines of a result's label: its assumptions, warnings and
    notes (what ``table()`` prints under the figures)."""
    out = note_lines(getattr(r, "assumptions", ()) or (), prefix="assumes: ")
    out += note_lines(getattr(r, "warnings", ()) or (), prefix="WARNING: ")
    out += note_lines(getattr(r, "notes", ()) or ())
    return out


def label_html(r) -> list[str]:
    """The notebook paragraphs of a result's label (assumptions, warnings,
    notes)."""
    from ._format import esc

    out = [f"<p><small>assumes: {esc(a)}</small></p>"
           for a in getattr(r, "assumptions", ()) or ()]
    out += [f"<p><b>warning: {esc(w)}</b></p>" for w in getattr(r, "warnings", ()) or ()]
    from ._format import notes as _notes

    return out + _notes(getattr(r, "notes", ()) or ())


def headline(r) -> str:
    """``"<method> solution [<exactness>]"``, the first words of a table."""
    return f"{r.method} solution [{getattr(r, 'exactness', '?')}]"

_METRIC_NAMES = {
    "throughput": "X",
    "response_time": "R",
    "queue_length": "Q",
    "utilization": "U",
}


_F64 = np.dtype(np.float64)


def _num(x):
    """Python float for numeric values, the expression itself for sympy."""
    if isinstance(x, (float, int, np.floating, np.integer)):
        return float(x)
    return x


def _or_nan(x) -> float:
    """float(x), NaN for None (a figure the solver does not report)."""
    return float("nan") if x is None else float(x)


@runtime_checkable
class Report(Protocol):
    """What every result object offers, whichever solver made it.

    ``table()`` the plain-text table (also the ``repr``), ``to_dict()``
    plain data for JSON, ``to_frame()`` a pandas DataFrame, and
    ``_repr_html_()`` the notebook display.  :class:`Result`,
    ``SimResult``, ``SymbolicResult``, ``Bounds``, ``QueueMetrics``,
    ``EnergyReport``, the decomposition's token curve, the batch and lattice
    results, ``BottleneckRegions`` and the case studies' ``CaseReport`` all
    satisfy it (``isinstance(r, qmodels.results.Report)``; a test holds
    every one of them to it).
    """

    def table(self) -> str: ...

    def to_dict(self) -> dict: ...

    def to_frame(self): ...

    def _repr_html_(self) -> str: ...


@runtime_checkable
class NetworkReport(Report, Protocol):
    """A :class:`Report` about a whole network, which also names its
    ``bottleneck`` (stations or pools, ties together)."""

    @property
    def bottleneck(self) -> tuple: ...


def _plain(x):
    """JSON-friendly scalars: numpy numbers to Python, the rest unchanged."""
    if isinstance(x, np.generic):
        return x.item()
    return x


class FrameReport:
    """``table()``, ``to_dict()`` and ``_repr_html_()`` for a result whose
    natural form is one table: all three derive from its ``to_frame()``."""

    def table(self) -> str:
        text = self.to_frame().to_string()
        if hasattr(self, "exactness"):
            text = "\n".join([f"{getattr(self, 'method', '')} [{self.exactness}]", text,
                              *label_lines(self)])
        return text

    def to_dict(self) -> dict:
        frame = self.to_frame().reset_index()
        out = {"columns": [str(c) for c in frame.columns],
               "rows": [[_plain(v) for v in row] for row in frame.itertuples(index=False)]}
        return {**label_dict(self), **out} if hasattr(self, "exactness") else out

    def _repr_html_(self) -> str:
        return self.to_frame().to_html()


#: ties named one by one in a table's bottleneck line; the rest are counted
_MAX_NAMED_TIES = 20


class Figures(Mapping):
    """One metric, per station, per class and per (station, class).

    ``f["disk"]`` is the station total, ``f["tx"]`` the class figure,
    ``f["disk", "tx"]`` class ``tx`` at station ``disk``.  Iterating yields
    station names then class names that have a value.
    """

    __slots__ = ("metric", "_station", "_class", "_pair")

    def __init__(self, metric: str, station: Mapping, klass: Mapping, pair: Mapping):
        self.metric = metric
        self._station = dict(station)
        self._class = dict(klass)
        self._pair = dict(pair)

    def __getitem__(self, key):
        if isinstance(key, tuple):
            if len(key) != 2:
                raise KeyError(f"{self.metric}: use (station, class), got {key!r}")
            if key in self._pair:
                return self._pair[key]
            if key[::-1] in self._pair:
                return self._pair[key[::-1]]
            raise KeyError(f"{self.metric}: no figure for station/class pair {key!r}")
        if key in self._station:
            return self._station[key]
        if key in self._class:
            return self._class[key]
        if self.metric == "utilization":
            raise KeyError(f"utilization is per station; {key!r} is not a station")
        raise KeyError(f"{self.metric}: unknown station or class {key!r}")

    def __iter__(self):
        yield from self._station
        yield from self._class

    def __len__(self):
        return len(self._station) + len(self._class)

    @property
    def stations(self) -> dict:
        """Station totals, station name -> value."""
        return dict(self._station)

    @property
    def classes(self) -> dict:
        """Class figures, class name -> value."""
        return dict(self._class)

    @property
    def per_class(self) -> dict:
        """(station, class) -> value."""
        return dict(self._pair)

    def __repr__(self):
        parts = [f"{k}: {fmt(v)}" for k, v in {**self._station, **self._class}.items()]
        return f"{self.metric}({', '.join(parts)})"


@dataclass(frozen=True)
class Curve(FrameReport):
    """Figures for every population n = 0..N of a single-class closed model:
    what a throughput (TPS) curve plots.

    Arrays: ``population`` (n,), ``throughput`` X(n), ``response_time``
    R(n) (class, excluding think time), ``queue_length`` Q_k(n) and
    ``utilization`` U_k(n) shaped (n, stations).
    """

    population: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    station_names: tuple
    class_name: str = ""
    #: the network the curve was solved for (so that ``plot()`` can draw its
    #: bounds and N*); None when the curve was built without one
    network: Any = field(default=None, repr=False, compare=False)
    #: the method whose figures these are (its label: :data:`METHOD_LABELS`)
    method: str = field(default="exact", compare=False)

    notes = ()
    warnings = ()
    error = None

    @property
    def exactness(self) -> str:
        """What the curve's figures are (the label of :attr:`method`)."""
        return label_of(self.method)[0]

    @property
    def assumptions(self) -> tuple:
        return label_of(self.method)[1]

    X = property(lambda self: self.throughput)
    R = property(lambda self: self.response_time)
    Q = property(lambda self: self.queue_length)
    U = property(lambda self: self.utilization)

    def to_frame(self):
        """A pandas DataFrame indexed by population, with X, R and per
        station Q and U columns (``Q[disk]``, ``U[disk]``)."""
        import pandas as pd

        data = {"X": self.throughput, "R": self.response_time}
        for k, name in enumerate(self.station_names):
            data[f"Q[{name}]"] = self.queue_length[:, k]
        for k, name in enumerate(self.station_names):
            data[f"U[{name}]"] = self.utilization[:, k]
        return pd.DataFrame(data, index=pd.Index(self.population, name="N"))

    def plot(self, ax=None, **kwargs):
        """Plot X(n) (the TPS curve) with the ABA and BJB bounds and N* of
        its network; see :func:`qmodels.plot.throughput_curve`."""
        from .plot import throughput_curve

        return throughput_curve(self, ax=ax, **kwargs)

    def __repr__(self):
        n = len(self.population)
        last = n - 1
        return (
            f"Curve(class {self.class_name!r}, n = 0..{int(self.population[last])}: "
            f"X(N) = {fmt(self.throughput[last])}, R(N) = {fmt(self.response_time[last])})"
        )


@dataclass(frozen=True)
class Result:
    """The answer of an analytic solver for one network.

    Arrays are shaped (classes, stations) in the network's order.

    Attributes
    ----------
    method : str
        Solver name (``exact``, ``schweitzer``, ``jackson``, ...).
    network : Network
    class_throughput, class_response_time : ndarray (classes,)
    station_throughput, station_queue_length, station_response_time,
    station_utilization : ndarray (classes, stations)
        Per class at each station; station R is per visit.
    notes : tuple of str
        Assumptions the solver made (e.g. FCFS with class-dependent service
        solved as processor sharing).
    curve : Curve, qmodels.multiclass.Lattice or None
        Figures for n = 0..N (single class) or for every point of the
        population lattice (several classes), when requested.
    info : mapping
        Solver specifics (iterations, tolerance, ...).
    exactness : str
        ``"exact"``, ``"approximate"`` or ``"bound"`` (see the module
        docstring); the method's default unless the solver says more.
    assumptions : tuple of str
        What the answer rests on (the method's, plus any the solver made
        for this model).
    warnings : tuple of str
        What the reader must not miss (an approximation outside every
        validated envelope, a method that did not converge).
    error : mapping or None
        For an approximation, the error envelope measured on networks like
        this one (:mod:`qmodels.analytic.envelopes`), else None.
    """

    method: str
    network: Network
    class_throughput: Any  # array-like in, read-only ndarray after construction
    class_response_time: Any  # array-like in, read-only ndarray after construction
    station_throughput: Any  # array-like in, read-only ndarray after construction
    station_queue_length: Any  # array-like in, read-only ndarray after construction
    station_response_time: Any  # array-like in, read-only ndarray after construction
    station_utilization: Any  # array-like in, read-only ndarray after construction
    notes: tuple = ()
    curve: Any = None  # Curve | multiclass.Lattice | None
    info: Mapping = field(default_factory=FrozenMap)
    exactness: str = ""
    assumptions: tuple = ()
    warnings: tuple = ()
    error: Any = None  # Mapping | None

    def __post_init__(self):
        dtype = object if self.network.is_symbolic else float
        for name in (
            "class_throughput",
            "class_response_time",
            "station_throughput",
            "station_queue_length",
            "station_response_time",
            "station_utilization",
        ):
            arr = np.array(getattr(self, name), dtype=dtype)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "notes", tuple(self.notes))
        if not isinstance(self.info, FrozenMap):
            object.__setattr__(self, "info", FrozenMap(self.info))
        ex, assumed = label_of(self.method, self.exactness, self.assumptions)
        object.__setattr__(self, "exactness", ex)
        object.__setattr__(self, "assumptions", assumed)
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @classmethod
    def _owned(cls, method: str, network: Network, class_throughput, class_response_time,
               station_throughput, station_queue_length, station_response_time,
               station_utilization, notes: tuple = (), curve=None,
               info: FrozenMap | None = None, exactness: str = "",
               assumptions: tuple = ()) -> Result:
        """A Result that takes its arrays over instead of copying them: the
        lean constructor of a solver's hot path (a repeated solve of one
        network pays ~2 us here instead of ~8 us for six copies).

        The caller promises what the copies of ``__post_init__`` otherwise
        ensure: a numeric network; float64 ndarrays of the final shapes,
        (classes,) and (classes, stations); nobody else keeps a writeable
        reference to them or to their memory (fresh arrays, or views of a
        kernel's fresh output); ``notes`` a tuple; ``info`` a FrozenMap.
        They are made read-only here, as the ordinary constructor's are.
        Anything else takes the ordinary route (same figures, copied)."""
        arrays = (class_throughput, class_response_time, station_throughput,
                  station_queue_length, station_response_time, station_utilization)
        ok = not network.is_symbolic and type(info) is FrozenMap
        for a in arrays:
            if not ok or type(a) is not np.ndarray or a.dtype != _F64:
                return cls(method, network, *arrays, notes=notes, curve=curve,
                           info=FrozenMap() if info is None else info,
                           exactness=exactness, assumptions=assumptions)
            a.setflags(write=False)
        self = object.__new__(cls)
        d = self.__dict__
        d["method"] = method
        d["network"] = network
        d["class_throughput"] = class_throughput
        d["class_response_time"] = class_response_time
        d["station_throughput"] = station_throughput
        d["station_queue_length"] = station_queue_length
        d["station_response_time"] = station_response_time
        d["station_utilization"] = station_utilization
        d["notes"] = tuple(notes)
        d["curve"] = curve
        d["info"] = info
        d["exactness"], d["assumptions"] = label_of(method, exactness, assumptions)
        d["warnings"] = ()
        d["error"] = None
        return self

    # -- totals -------------------------------------------------------------
    def _station_totals(self):
        """Station totals (X, Q, U, R) over the classes: computed once per
        result (it is immutable) and kept read-only, since every figure
        mapping, the bottleneck and each display reads them."""
        hit = self.__dict__.get("_totals")
        if hit is None:
            hit = self.__dict__["_totals"] = self._compute_totals()
            for a in hit:
                a.setflags(write=False)
        return hit

    def _compute_totals(self):
        X = self.station_throughput.sum(axis=0)
        Q = self.station_queue_length.sum(axis=0)
        U = self.station_utilization.sum(axis=0)
        R = []
        V = self.network.visits
        for k in range(len(self.network.stations)):
            x = X[k]
            if self.network.is_symbolic:
                R.append(Q[k] / x if x != 0 else 0)
            elif x > 0:
                R.append(Q[k] / x)
            else:
                w = V[:, k]
                R.append(float(np.dot(w, self.station_response_time[:, k]) / w.sum())
                         if w.sum() > 0 else 0.0)
        return X, Q, U, np.array(R, dtype=X.dtype)

    def _figures(self, metric: str) -> Figures:
        net = self.network
        sn, cn = net.station_names, net.class_names
        X, Q, U, R = self._station_totals()
        per = {
            "throughput": self.station_throughput,
            "queue_length": self.station_queue_length,
            "utilization": self.station_utilization,
            "response_time": self.station_response_time,
        }[metric]
        tot = {"throughput": X, "queue_length": Q, "utilization": U, "response_time": R}[metric]
        station = {s: _num(tot[k]) for k, s in enumerate(sn)}
        pair = {(s, c): _num(per[i, k]) for i, c in enumerate(cn) for k, s in enumerate(sn)}
        if metric == "throughput":
            klass = {c: _num(self.class_throughput[i]) for i, c in enumerate(cn)}
        elif metric == "response_time":
            klass = {c: _num(self.class_response_time[i]) for i, c in enumerate(cn)}
        elif metric == "queue_length":
            from .model.forkjoin import branch_mask  # jobs, not the tasks of their forks

            jobs = ~np.array(branch_mask(net), dtype=bool)
            klass = {c: _num(self.station_queue_length[i][jobs].sum()) for i, c in enumerate(cn)}
        else:
            klass = {}
        return Figures(metric, station, klass, pair)

    @property
    def throughput(self) -> Figures:
        return self._figures("throughput")

    @property
    def response_time(self) -> Figures:
        return self._figures("response_time")

    @property
    def queue_length(self) -> Figures:
        return self._figures("queue_length")

    @property
    def utilization(self) -> Figures:
        return self._figures("utilization")

    X = throughput
    R = response_time
    Q = queue_length
    U = utilization

    @property
    def pool_utilization(self) -> dict:
        """Token pool name -> utilisation, tokens held / tokens = X_acq H / B
        (Little's law with H the mean holding time), for solvers that report
        it in ``info["pools"]`` (decomposition, CTMC); empty otherwise."""
        pools = self.info.get("pools") if isinstance(self.info, Mapping) else None
        if not pools:
            return {}
        return {name: float(d["utilization"]) for name, d in pools.items()
                if isinstance(d, Mapping) and "utilization" in d}

    def _pool_figures(self, name: str, X=None) -> dict:
        """One pool's figures for the displays: ``tokens`` (the solver's, or
        the model's when the solver does not repeat it, as the CTMC), mean
        tokens ``held``, jobs ``waiting`` and the mean holding time per
        acquisition ``holding_time`` (the solver's, else Little's law
        H = held / X_acquire; QSP sec. 3.2.2), None where unknown.  ``X`` is
        the station throughput totals when the caller has them."""
        d = self.info["pools"][name]
        p = next((q for q in self.network.pools if q.name == name), None)
        tokens = d.get("tokens")
        if tokens is None and p is not None:
            tokens = p.tokens
        hold = d.get("holding_time")
        if hold is None and p is not None and "held" in d:
            if X is None:
                X = self._station_totals()[0]
            x_acq = float(X[self.network.station_index(p.acquire)])
            hold = float(d["held"]) / x_acq if x_acq > 0 else None
        return {"tokens": tokens, "held": d.get("held"), "waiting": d.get("waiting"),
                "holding_time": hold}

    @property
    def bottleneck(self) -> tuple:
        """The most utilised station(s) or token pool(s), ties (relative
        1e-9) reported together.  Delay stations never count as
        bottlenecks; a held resource counts with its utilisation (tokens
        held / tokens, :attr:`pool_utilization`), so a buffer pool that is
        held nearly all the time is named even when no station is busy."""
        net = self.network
        if net.is_symbolic:
            return ()
        _, _, U, _ = self._station_totals()
        cand = [
            (float(U[k]), s.name) for k, s in enumerate(net.stations) if s.kind != "delay"
        ]
        cand += [(u, name) for name, u in self.pool_utilization.items()]
        if not cand:
            return ()
        top = max(u for u, _ in cand)
        if top <= 0:
            return ()
        return tuple(n for u, n in cand if u >= top * (1 - 1e-9))

    # -- export -------------------------------------------------------------
    def to_frame(self, kind: str = "stations"):
        """A pandas DataFrame.

        ``kind="stations"`` (default): one row per station with D, X, U, Q,
        R totals and a ``bottleneck`` flag; ``"classes"``: one row per class
        with N or lambda, Z, X, R; ``"per_class"``: one row per (station,
        class) pair.  ``attrs`` carries the label: ``method``,
        ``exactness``, ``assumptions``, ``notes``, ``warnings``, ``error``.
        """
        frame = self._frame(kind)
        frame.attrs.update(label_dict(self))
        return frame

    def _frame(self, kind: str):
        import pandas as pd

        net = self.network
        if kind == "stations":
            X, Q, U, R = self._station_totals()
            bn = set(self.bottleneck)
            rows = []
            for k, s in enumerate(net.stations):
                rows.append({
                    "station": s.name,
                    "kind": s.kind,
                    "servers": s.servers,
                    "D": _num(net.demands[:, k].sum()),
                    "X": _num(X[k]),
                    "U": _num(U[k]),
                    "Q": _num(Q[k]),
                    "R": _num(R[k]),
                    "bottleneck": s.name in bn,
                })
            for name, u in self.pool_utilization.items():
                d = self._pool_figures(name, X)
                rows.append({
                    "station": name, "kind": "pool", "servers": d["tokens"],
                    "D": float("nan"), "X": float("nan"), "U": u,
                    "Q": _or_nan(d["waiting"]),
                    "R": _or_nan(d["holding_time"]),
                    "bottleneck": name in bn,
                })
            return pd.DataFrame(rows).set_index("station")
        if kind == "classes":
            rows = []
            for i, c in enumerate(net.classes):
                rows.append({
                    "class": c.name,
                    "type": c.kind,
                    "N": getattr(c, "population", None),
                    "lambda": getattr(c, "arrival_rate", None),
                    "Z": getattr(c, "think_time", None),
                    "X": _num(self.class_throughput[i]),
                    "R": _num(self.class_response_time[i]),
                })
            return pd.DataFrame(rows).set_index("class")
        if kind == "per_class":
            rows = []
            for i, c in enumerate(net.classes):
                for k, s in enumerate(net.stations):
                    rows.append({
                        "station": s.name,
                        "class": c.name,
                        "D": _num(net.demands[i, k]),
                        "X": _num(self.station_throughput[i, k]),
                        "U": _num(self.station_utilization[i, k]),
                        "Q": _num(self.station_queue_length[i, k]),
                        "R": _num(self.station_response_time[i, k]),
                    })
            return pd.DataFrame(rows).set_index(["station", "class"])
        raise InvalidValueError(f"kind must be 'stations', 'classes' or 'per_class', got {kind!r}")

    def to_dict(self) -> dict:
        """The JSON shape of ``qmodels solve --json`` (see README):
        ``{"method", "exactness", "assumptions", "notes", "warnings",
        "error", "classes": {c: {X, R}}, "stations": {k: {U, Q, R, X,
        "per_class": {c: {U, Q, R, X}}}}, "bottleneck": [...]}``."""
        net = self.network
        X, Q, U, R = self._station_totals()

        def f(v):
            v = _num(v)
            return v if isinstance(v, float) else str(v)

        classes = {
            c.name: {"X": f(self.class_throughput[i]), "R": f(self.class_response_time[i])}
            for i, c in enumerate(net.classes)
        }
        stations = {}
        for k, s in enumerate(net.stations):
            stations[s.name] = {
                "U": f(U[k]),
                "Q": f(Q[k]),
                "R": f(R[k]),
                "X": f(X[k]),
                "per_class": {
                    c.name: {
                        "U": f(self.station_utilization[i, k]),
                        "Q": f(self.station_queue_length[i, k]),
                        "R": f(self.station_response_time[i, k]),
                        "X": f(self.station_throughput[i, k]),
                    }
                    for i, c in enumerate(net.classes)
                },
            }
        out = {
            **label_dict(self),
            "classes": classes,
            "stations": stations,
            "bottleneck": list(self.bottleneck),
        }
        pu = self.pool_utilization
        if pu:
            out["pools"] = {
                name: {"U": u, "held": float(self.info["pools"][name].get("held", u)),
                       "waiting": float(self.info["pools"][name].get("waiting", 0.0)),
                       "tokens": self._pool_figures(name, X)["tokens"]}
                for name, u in pu.items()}
        return out

    # -- display ------------------------------------------------------------
    def plot(self, ax=None, **kwargs):
        """One-call plot: the throughput curve with its bounds and N* for a
        single closed class (:func:`qmodels.plot.throughput_curve`), else
        the utilisation of each station (:func:`qmodels.plot.stations`), also
        for a model that exact MVA cannot trace (token pools, blocking: a
        CTMC, decomposition or simulated result has no exact curve)."""
        from . import plot
        from .errors import UnsupportedModelError

        if len(self.network.classes) == 1 and self.network.classes[0].kind == "closed" \
                and not self.network.is_symbolic:
            try:
                return plot.throughput_curve(self, ax=ax, **kwargs)
            except UnsupportedModelError:
                if kwargs or isinstance(getattr(self, "curve", None), Curve):
                    raise
        return plot.stations(self, ax=ax, **kwargs)

    def table(self) -> str:
        """A readable text table (what ``qmodels solve`` prints)."""
        net = self.network
        X, Q, U, R = self._station_totals()
        head = headline(self) + (f" of {net.name!r}" if net.name else "")
        crow = []
        for i, c in enumerate(net.classes):
            load = f"N={c.population}" if c.kind == "closed" else f"lambda={fmt(c.arrival_rate)}"
            crow.append([c.name, load, _num(self.class_throughput[i]),
                         _num(self.class_response_time[i])])
        ctab = format_table(["class", "workload", "X [1/s]", "R [s]"], crow)
        bn = set(self.bottleneck)
        srow = []
        for k, s in enumerate(net.stations):
            name = s.name + (" *" if s.name in bn else "")
            srow.append([name, s.kind, "inf" if s.kind == "delay" else str(s.servers),
                         _num(net.demands[:, k].sum()), _num(X[k]), _num(U[k]), _num(Q[k]),
                         _num(R[k])])
        stab = format_table(
            ["station", "kind", "c", "D [s]", "X [1/s]", "U", "Q", "R [s]"], srow
        )
        lines = [head, "", ctab, "", stab, ""]
        pu = self.pool_utilization
        for name, u in pu.items():
            d = self.info["pools"][name]
            tokens = self._pool_figures(name, X)["tokens"]
            lines.append(f"pool {name}{' *' if name in bn else ''}: tokens {tokens}, "
                         f"held {fmt(d.get('held', 0.0))}, U = {fmt(u)}, "
                         f"waiting {fmt(d.get('waiting', 0.0))}")
        names = self.bottleneck
        if names:
            at = {s.name: k for k, s in enumerate(net.stations)}
            shown = names[:_MAX_NAMED_TIES]
            us = ", ".join(f"{b} (U = {fmt(pu[b] if b in pu else U[at[b]])})" for b in shown)
            if len(names) > len(shown):
                us += f", ... ({len(names)} tied)"
            tie = " (tie)" if len(names) > 1 else ""
            lines.append(f"bottleneck{tie}: {us}")
        lines += label_lines(self)
        return "\n".join(lines)

    def __repr__(self):
        return self.table()

    def _repr_html_(self):
        """The notebook display: the class and station tables of
        :meth:`table` (same units), a table of the token pools when the
        solver reports them (tokens, mean tokens held, utilisation, holding
        time, jobs waiting), the bottleneck and the notes."""
        from . import _format as h

        net = self.network
        X, Q, U, R = self._station_totals()
        out = [h.title(headline(self), net.name)]
        crow = []
        for i, c in enumerate(net.classes):
            load = f"N={c.population}" if c.kind == "closed" else f"lambda={fmt(c.arrival_rate)}"
            crow.append([c.name, load, _num(self.class_throughput[i]),
                         _num(self.class_response_time[i])])
        out.append(h.html_table(["class", "workload", "X [1/s]", "R [s]"], crow, caption="classes"))
        bn = set(self.bottleneck)
        srow = [[s.name + (" *" if s.name in bn else ""), s.kind,
                 "inf" if s.kind == "delay" else str(s.servers),
                 _num(net.demands[:, k].sum()), _num(X[k]), _num(U[k]), _num(Q[k]), _num(R[k])]
                for k, s in enumerate(net.stations)]
        out.append(h.html_table(["station", "kind", "c", "D [s]", "X [1/s]", "U", "Q", "R [s]"],
                           srow, caption="stations (* bottleneck)"))
        pu = self.pool_utilization
        if pu:
            prow = []
            for name, u in pu.items():
                d = self._pool_figures(name, X)
                prow.append([name + (" *" if name in bn else ""), d["tokens"],
                             d["held"], u, d["holding_time"], d["waiting"]])
            out.append(h.html_table(
                ["pool", "tokens", "tokens held (mean count)",
                 "U = X H / tokens (fraction)", "H [s]", "jobs waiting (mean count)"],
                prow, caption="token pools (* bottleneck)"))
        if self.bottleneck:
            out.append(h.para("bottleneck: ", bold=", ".join(self.bottleneck)))
        out += label_html(self)
        return "\n".join(out)

    def _repr_latex_(self):
        if not self.network.is_symbolic:
            return None
        import sympy as sp

        parts = [
            rf"X_{{\mathrm{{{c}}}}} = {sp.latex(self.class_throughput[i])}"
            for i, c in enumerate(self.network.class_names)
        ]
        return "$" + r",\quad ".join(parts) + "$"
