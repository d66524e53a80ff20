"""The answer of the simulator: the shared result vocabulary, with intervals.

A :class:`SimResult` answers to the same names as an analytic
:class:`qmodels.results.Result` (``throughput``/``X``, ``response_time``/
``R``, ``queue_length``/``Q``, ``utilization``/``U``, indexed by station,
class or (station, class)), but every figure is an :class:`Estimate`
(mean, confidence interval, number of observations), so
``mva(net).X["tx"]`` and ``simulate(net, seed=1).X["tx"].mean`` compare
directly and ``simulate(...).X["tx"].contains(mva(net).X["tx"])`` is the
honesty check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import _format as h
from .._format import format_table
from ..errors import InvalidValueError
from ..model.network import FrozenMap, Network
from ..results import SIMULATED, Figures, label_dict, label_html, label_lines, label_of
from .stats import _g

__all__ = ["SimResult"]

_SHORT = {"throughput": "X", "response_time": "R", "queue_length": "Q", "utilization": "U"}


class Warned(str):
    """A note that was also issued as a SimulationWarning: it goes to the
    result's ``warnings``."""


def _f(x: float):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


@dataclass(frozen=True)
class SimResult:
    """Simulated figures of one network, each an :class:`Estimate`.

    Attributes
    ----------
    network : Network
    method : str
        Always ``"sim"`` (the solver name); ``output_analysis`` says
        ``"replications"`` or ``"batch_means"``.
    seed : int or None
        The seed the run was started from (with ``SeedSequence(seed)``).
    level : float
        Confidence level of every interval.
    n : int
        Independent observations behind each interval (replications, or
        batches of the single long run).
    horizon : float
        Simulated time per replication (or of the long run), warm-up
        included.
    warmup : float
        Mean simulated time deleted as warm-up (MSER-5 or fixed).
    events : int
        Arrivals at and departures from stations processed, all runs.
    wall_time : float
        Seconds of wall-clock time of the whole call.
    percentiles : mapping
        class -> {50: Estimate, 95: Estimate, 99: Estimate} of the class
        response time (per cycle, excluding think time; per job for an
        open class).
    pools : mapping
        pool -> {"U": tokens in use / tokens, "Q": mean number waiting for
        a token} (Estimates).
    lost : mapping
        open class -> Estimate of arrivals lost per second (finite room).
    hit_ratio : mapping
        cache station -> Estimate of its hit ratio, hits / lookups counted
        in the event loop over each observation window (a replication
        after its warm-up, or a batch), one observation per window, the
        interval as for every figure (Law 2015, sec. 9.4.1 and 9.5.3).
    notes : tuple of str
    """

    network: Network
    seed: object
    level: float
    n: int
    horizon: float
    warmup: float
    events: int
    wall_time: float
    output_analysis: str
    figures: Mapping = field(repr=False)
    percentiles: Mapping = field(default_factory=FrozenMap, repr=False)
    pools: Mapping = field(default_factory=FrozenMap, repr=False)
    lost: Mapping = field(default_factory=FrozenMap, repr=False)
    notes: tuple = ()
    #: what the run could not vouch for (a horizon too short, a precision
    #: not reached, a tail the run cannot see): also issued as
    #: SimulationWarning
    warnings: tuple = ()
    hit_ratio: Mapping = field(default_factory=FrozenMap, repr=False)

    method = "sim"
    #: a simulated answer: estimates with confidence intervals
    exactness = SIMULATED
    error = None

    @property
    def assumptions(self) -> tuple:
        """What the simulated answer rests on: the model as given, with
        classes given by visits routed at random (same visit ratios)."""
        out = label_of("sim")[1]
        V = self.network.visits
        if any(c.routing is None and int((V[i] != 0).sum()) > 1
               for i, c in enumerate(self.network.classes)):
            out += ("classes given by visits or demands routed at random with the same visit "
                    "ratios (not in path order)",)
        from ..model.caching import CacheStation

        caches = [s.name for s in self.network.stations if isinstance(s, CacheStation)]
        if caches:
            out += ("cache station(s) " + ", ".join(map(repr, caches)) + " run item by item "
                    "(requests drawn independently from the popularity, the IRM; each cache "
                    "warmed before the run): jobs go to the hit or miss path by the lookup, "
                    "not by the routing row's Che split",)
        return out

    # -- the shared vocabulary ---------------------------------------------
    @property
    def throughput(self) -> Figures:
        """Class: cycles (closed) or departures (open) per second; station:
        completions per second."""
        return self.figures["throughput"]

    @property
    def response_time(self) -> Figures:
        """Class: time per cycle excluding think time; station: time per
        visit (waiting, service and blocking)."""
        return self.figures["response_time"]

    @property
    def queue_length(self) -> Figures:
        """Time-average number present (waiting, in service and blocked)."""
        return self.figures["queue_length"]

    @property
    def utilization(self) -> Figures:
        """Busy fraction of one server (delay: mean number busy;
        load-dependent: 1 - P(empty))."""
        return self.figures["utilization"]

    X = throughput
    R = response_time
    Q = queue_length
    U = utilization

    @property
    def events_per_second(self) -> float:
        """``events / wall_time``."""
        return self.events / self.wall_time if self.wall_time > 0 else math.inf

    @property
    def pool_utilization(self) -> dict:
        """Token pool name -> mean utilisation (tokens in use / tokens, the
        time average; equal to X_acq H / B by Little's law)."""
        return {name: float(d["U"].mean) for name, d in self.pools.items()}

    @property
    def bottleneck(self) -> tuple:
        """The station(s) or token pool(s) with the largest mean utilisation
        (delay stations excluded; a pool counts with tokens in use /
        tokens), ties within relative 1e-9 reported together."""
        cand = [(self.utilization[s.name].mean, s.name) for s in self.network.stations
                if s.kind != "delay"]
        cand += [(u, n) for n, u in self.pool_utilization.items()]
        cand = [(u, n) for u, n in cand if not math.isnan(u)]
        if not cand:
            return ()
        top = max(u for u, _ in cand)
        if top <= 0:
            return ()
        return tuple(n for u, n in cand if u >= top * (1 - 1e-9))

    # -- display ------------------------------------------------------------
    def plot(self, ax=None, *, analytic=None, metric: str = "U"):
        """One-call plot: each station's ``metric`` with its confidence
        interval (:func:`qmodels.plot.stations`), or against an analytic
        result of the same network (:func:`qmodels.plot.compare`)."""
        from .. import plot

        if analytic is not None:
            return plot.compare(analytic, self, ax=ax, metric=metric)
        return plot.stations(self, ax=ax, metric=metric)

    # -- export -------------------------------------------------------------
    def to_frame(self, kind: str = "stations"):
        """A pandas DataFrame with ``mean``/``low``/``high`` columns under
        each metric (a column MultiIndex: ``df["X"]["mean"]``).

        ``kind``: ``"stations"`` (default), ``"classes"`` or ``"per_class"``.
        """
        import pandas as pd

        net = self.network
        keys: tuple[str, ...] | list[tuple[str, str]]
        metrics: tuple[str, ...]
        index: str | tuple[str, str]
        if kind == "stations":
            keys, metrics, index = net.station_names, ("X", "U", "Q", "R"), "station"
            get = lambda m, k: getattr(self, m)[k]  # noqa: E731
        elif kind == "classes":
            keys, metrics, index = net.class_names, ("X", "R", "Q"), "class"
            get = lambda m, k: getattr(self, m)[k]  # noqa: E731
        elif kind == "per_class":
            keys = [(s, c) for s in net.station_names for c in net.class_names]
            metrics, index = ("X", "U", "Q", "R"), ("station", "class")
            get = lambda m, k: getattr(self, m)[k]  # noqa: E731
        else:
            raise InvalidValueError(
                f"kind must be 'stations', 'classes' or 'per_class', got {kind!r}")
        data = {}
        for m in metrics:
            for part in ("mean", "low", "high"):
                data[(m, part)] = [getattr(get(m, k), part) for k in keys]
        if kind == "per_class":
            idx = pd.MultiIndex.from_tuples(keys, names=list(index))
        else:
            idx = pd.Index(list(keys), name=index)
        df = pd.DataFrame(data, index=idx)
        if kind == "stations" and self.pools:
            # pools as rows: U = tokens in use / tokens, Q = jobs waiting for a token
            nan = float("nan")
            extra = {}
            for m in metrics:
                for part in ("mean", "low", "high"):
                    extra[(m, part)] = [
                        getattr(self.pools[p][m], part) if m in ("U", "Q") else nan
                        for p in self.pools]
            df = pd.concat([df, pd.DataFrame(extra, index=pd.Index(list(self.pools),
                                                                   name=index))])
        df.columns = pd.MultiIndex.from_tuples(df.columns)
        return df

    def to_dict(self) -> dict:
        """The JSON shape of ``qmodels solve --json`` (DESIGN.md): means as
        the numbers, and next to them ``"ci": {"X": [low, high], ...}``,
        ``"n"`` and ``"level"``; plus ``"percentiles"``, ``"events"``,
        ``"wall_time"`` and ``"seed"``."""
        net = self.network

        def block(keys_metrics):
            out = {}
            ci = {}
            for m, e in keys_metrics:
                out[m] = _f(e.mean)
                ci[m] = [_f(e.low), _f(e.high)]
            out["ci"] = ci
            return out

        classes = {}
        for c in net.class_names:
            d = block([("X", self.X[c]), ("R", self.R[c])])
            classes[c] = d
        stations = {}
        for s in net.station_names:
            d = block([("U", self.U[s]), ("Q", self.Q[s]), ("R", self.R[s]), ("X", self.X[s])])
            d["per_class"] = {
                c: block([("U", self.U[s, c]), ("Q", self.Q[s, c]), ("R", self.R[s, c]),
                          ("X", self.X[s, c])])
                for c in net.class_names
            }
            stations[s] = d
        return {
            **label_dict(self),
            "output_analysis": self.output_analysis,
            "level": self.level,
            "n": self.n,
            "classes": classes,
            "stations": stations,
            "bottleneck": list(self.bottleneck),
            "pools": {p: block([("U", d["U"]), ("Q", d["Q"])]) for p, d in self.pools.items()},
            "percentiles": {
                c: {str(q): _f(e.mean) for q, e in p.items()} for c, p in self.percentiles.items()
            },
            "events": int(self.events),
            "wall_time": float(self.wall_time),
            "seed": self.seed if isinstance(self.seed, (int, type(None))) else str(self.seed),
        }

    # -- display --------------------------------------------------------------
    def _head(self) -> str:
        net = self.network
        return (f"sim [simulated] ({self.output_analysis}, n={self.n}, {100 * self.level:g}% "
                "intervals, "
                f"seed={self.seed})" + (f" of {net.name!r}" if net.name else ""))

    def table(self) -> str:
        """A readable text table: mean ± half-width of every figure."""
        net = self.network
        crow = []
        for c in net.classes:
            load = f"N={c.population}" if c.kind == "closed" else f"lambda={c.arrival_rate:g}"
            p = self.percentiles.get(c.name, {})
            p95 = p.get(95)
            crow.append([c.name, load, repr(self.X[c.name]).split(" (")[0],
                         repr(self.R[c.name]).split(" (")[0],
                         "-" if p95 is None else f"{p95.mean:.4g}"])
        ctab = format_table(["class", "workload", "X [1/s]", "R [s]", "R p95 [s]"], crow)
        bn = set(self.bottleneck)
        srow = []
        for s in net.stations:
            name = s.name + (" *" if s.name in bn else "")
            srow.append([name, s.kind] + [repr(getattr(self, m)[s.name]).split(" (")[0]
                                          for m in ("X", "U", "Q", "R")])
        stab = format_table(["station", "kind", "X [1/s]", "U", "Q", "R [s]"], srow)
        lines = [self._head(), "", ctab, "", stab, ""]
        for name, d in self.pools.items():
            lines.append(f"pool {name}: tokens in use (fraction) {repr(d['U']).split(' (')[0]}, "
                         f"waiting {repr(d['Q']).split(' (')[0]}")
        for name, e in self.lost.items():
            if e.mean > 0:
                lines.append(f"class {name}: lost {repr(e).split(' (')[0]} arrivals/s")
        for name, e in self.hit_ratio.items():
            lines.append(f"cache {name}: hit ratio {repr(e).split(' (')[0]}")
        if self.bottleneck:
            lines.append("bottleneck: " + ", ".join(self.bottleneck))
        lines.append(f"{self.events:,} events in {self.wall_time:.3g} s "
                     f"({self.events_per_second:.3g} events/s)")
        lines += label_lines(self)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        """The notebook display: every figure as mean ± half-width, the
        class response-time percentiles, the token pools (tokens, mean
        tokens held as a count, utilisation as a fraction, jobs waiting),
        lost arrivals, the bottleneck, the event count and the notes."""
        net = self.network
        out = [f"<p><b>{h.esc(self._head())}</b></p>"]
        qs = sorted({q for p in self.percentiles.values() for q in p})
        crow = []
        for c in net.classes:
            load = f"N={c.population}" if c.kind == "closed" else f"lambda={c.arrival_rate:g}"
            p = self.percentiles.get(c.name, {})
            crow.append([c.name, load, _pm(self.X[c.name]), _pm(self.R[c.name])]
                        + [_pm(p[q]) if q in p else None for q in qs])
        out.append(h.html_table(["class", "workload", "X [1/s]", "R [s]"]
                           + [f"R p{q} [s]" for q in qs], crow, caption="classes"))
        bn = set(self.bottleneck)
        srow = [[s.name + (" *" if s.name in bn else ""), s.kind]
                + [_pm(getattr(self, m)[s.name]) for m in ("X", "U", "Q", "R")]
                for s in net.stations]
        out.append(h.html_table(["station", "kind", "X [1/s]", "U", "Q", "R [s]"], srow,
                           caption="stations (* bottleneck)"))
        if self.pools:
            tokens = {p.name: p.tokens for p in net.pools}
            prow = []
            for name, d in self.pools.items():
                b = tokens.get(name)
                prow.append([name + (" *" if name in bn else ""), b,
                             None if b is None else _pm(d["U"], b), _pm(d["U"]), _pm(d["Q"])])
            out.append(h.html_table(["pool", "tokens", "tokens in use (mean count)",
                                "U = in use / tokens (fraction)", "jobs waiting (mean count)"],
                               prow, caption="token pools (* bottleneck)"))
        lost = [[name, _pm(e)] for name, e in self.lost.items() if e.mean > 0]
        if lost:
            out.append(h.html_table(["class", "lost [arrivals/s]"], lost, caption="lost arrivals"))
        hits = [[name, _pm(e)] for name, e in self.hit_ratio.items()]
        if hits:
            out.append(h.html_table(["cache station", "hit ratio (hits / lookups)"], hits,
                                    caption="caches, run item by item"))
        if self.bottleneck:
            out.append(h.para("bottleneck: ", bold=", ".join(self.bottleneck)))
        out.append(h.para(f"{self.events:,} events in {self.wall_time:.3g} s "
                          f"({self.events_per_second:.3g} events/s)"))
        out += label_html(self)
        return "\n".join(out)


def _pm(e, scale: float = 1.0) -> str:
    """``mean ± half-width`` of an Estimate (as its repr shows it), both
    multiplied by ``scale``."""
    if scale == 1.0:
        return repr(e).split(" (")[0]
    if e.asymmetric:
        return f"{_g(scale * e.mean)} [{_g(scale * e.low)}, {_g(scale * e.high)}]"
    return f"{_g(scale * e.mean)} ± {_g(scale * e.half_width)}"
