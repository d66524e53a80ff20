"""The end-to-end response-time distribution of an open class, exactly,
where a closed form exists: percentiles for service-level targets.

An open class whose jobs follow one fixed path of stations (``route=[...]``,
a routing table that sends every job of the class from each station to one
next station, or a single station) through an open product-form network
has an end-to-end response time equal to the **sum of independent
sojourn times** at the stations of the path when

* every station of the path is a single-server FCFS queue with exponential
  service, the same mean for every class (a ./M/1 node of a Jackson or
  Kelly network), except that the **last** station may be an
  infinite-server delay with exponential service, and a path of one station
  may be an M/M/c FCFS queue or an exponential delay;
* the path is *overtake-free*: no job (of any class) can leave a station of
  the path and reach a later station of it by any other way than the path
  itself.

Independence of the sojourn times along an overtake-free path of ./M/1
nodes is Walrand & Varaiya's theorem ("Sojourn times and the overtaking
condition in Jacksonian networks", Adv. Appl. Probab. 12(4), 1980,
1000-1018), which extends Reich's for tandems ("Waiting times when queues
are in tandem", Ann. Math. Statist. 28, 1957, 768-773).  At a ./M/1 FCFS
node with total arrival rate lambda and service rate mu the sojourn time is
exponential with rate mu - lambda (Kleinrock, *Queueing Systems* vol. 1,
1975, eq. 3.27 / Harchol-Balter, *Performance Modeling and Design of
Computer Systems*, 2013, sec. 13.3); at an M/M/c FCFS node it is the
service time Exp(mu) plus, with the Erlang-C probability C(c, a), a wait
Exp(c mu - lambda) (Kleinrock 1975, eq. 3.40; Gross et al., *Fundamentals
of Queueing Theory*, 4th ed., 2008, eq. 2.36); at an exponential delay it is
the service time.  The sum is a phase-type distribution (the closure of
phase-type distributions under convolution: Neuts, *Matrix-Geometric
Solutions in Stochastic Models*, 1981, Theorem 2.2.2), whose CDF is
1 - alpha exp(T t) 1; the quantiles are found by bracketing and Brent's
method on it.

Anything else (a multi-server or delay station inside the path, random
routing, processor sharing, non-exponential shapes, non-Poisson arrivals)
is refused by name: the simulator estimates percentiles for any model
(``qm.simulate(...).percentiles``).  A closed class is answered by the
passage time of a tagged job in the network's Markov chain (method
``"ctmc-passage"``, :mod:`.passage_ctmc`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidValueError, UnknownNameError, UnsupportedModelError
from ..model.network import SINK, SOURCE, Delay, Network, Open, Queue
from ..results import METHOD_LABELS
from . import requires

__all__ = ["ResponseTimeDistribution", "response_time_distribution"]


@dataclass(frozen=True, repr=False)
class ResponseTimeDistribution:
    """The phase-type distribution (alpha, T) of an open class's end-to-end
    response time (module docstring).

    ``cdf(t)``, ``quantile(p)`` (0 < p < 1), ``percentile(q)`` (0 < q < 100),
    ``mean``; the label (``method``, ``exactness``, ``assumptions``,
    ``notes``) as every answer carries it."""

    network: Network
    cls: str
    path: tuple
    alpha: np.ndarray
    T: np.ndarray
    method: str = "passage"
    exactness: str = "exact"
    assumptions: tuple = METHOD_LABELS["passage"][1]
    notes: tuple = ()
    warnings: tuple = ()
    stations: dict = field(default_factory=dict)

    @property
    def mean(self) -> float:
        """alpha (-T)^-1 1 (Neuts 1981, eq. 2.2.2)."""
        return float(self.alpha @ np.linalg.solve(-self.T, np.ones(len(self.alpha))))

    def cdf(self, t) -> float:
        """P(R <= t) = 1 - alpha exp(T t) 1."""
        t = float(t)
        if t <= 0:
            return 0.0
        tail = float(self.alpha @ _expm(self.T * t) @ np.ones(len(self.alpha)))
        return min(1.0, max(0.0, 1.0 - tail))

    def quantile(self, p: float) -> float:
        """The p-quantile: the t with cdf(t) = p (the CDF is continuous and
        strictly increasing)."""
        from scipy.optimize import brentq

        p = float(p)
        if not 0.0 < p < 1.0:
            raise InvalidValueError(f"quantile p={p!r} must lie in (0, 1)")
        hi = max(self.mean, 1e-300)
        while self.cdf(hi) < p:
            hi *= 2.0
        return float(brentq(lambda t: self.cdf(t) - p, 0.0, hi, xtol=1e-14 * hi,
                            rtol=1e-13, maxiter=500))

    def percentile(self, q: float) -> float:
        """The q-th percentile (q in (0, 100))."""
        return self.quantile(float(q) / 100.0)

    def to_dict(self) -> dict:
        from ..results import label_dict

        d = {"class": self.cls, "path": list(self.path), "mean": self.mean,
             "percentiles": {str(q): self.percentile(q) for q in (50, 90, 95, 99, 99.9)}}
        d.update(label_dict(self))
        return d

    def __repr__(self):
        from .._format import fmt

        qs = ", ".join(f"p{q:g} {fmt(self.percentile(q))}" for q in (50, 95, 99))
        return (f"ResponseTimeDistribution(class {self.cls!r} along {' -> '.join(self.path)}: "
                f"mean {fmt(self.mean)}, {qs}) [{self.exactness}]")


def _expm(A: np.ndarray) -> np.ndarray:
    """exp(A) of a small matrix by scaling and squaring with a Taylor
    polynomial (Moler & Van Loan, "Nineteen dubious ways to compute the
    exponential of a matrix, twenty-five years later", SIAM Review 45(1),
    2003, sec. 3, method 3): A / 2^s with ||A / 2^s||_1 <= 1/2, the series
    to degree 18 (truncation below 0.5^19 / 19! ~ 2e-23 relative), then s
    squarings.  Plain numpy products: a phase-type generator here has a few
    phases, and scipy's Pade routine calls LAPACK, whose threads stall
    for milliseconds per call on a busy machine (a sizing asks for
    hundreds of these)."""
    norm = float(np.abs(A).sum(axis=0).max()) if A.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    B = A / (2.0 ** s)
    E = np.eye(len(A))
    term = np.eye(len(A))
    for k in range(1, 19):
        term = term @ B / k
        E = E + term
    for _ in range(s):
        E = E @ E
    return E


def _path(net: Network, cls: Open) -> list[str]:
    """The fixed path of ``cls``, or a refusal naming why it has none."""
    V = np.asarray(net.visits, float)[net.class_names.index(cls.name)]
    visited = [s for s, v in zip(net.station_names, V) if v > 0]
    if cls.routing is None:
        if len(visited) == 1:
            return visited
        raise UnsupportedModelError(
            f"class {cls.name!r}: given by visit ratios to {len(visited)} stations, its jobs "
            "are routed at random, and a random path has no closed-form response-time "
            f"distribution; give the path in order (route={visited!r}, if that is the order) "
            "or simulate for percentiles")
    rows = {k: dict(v) for k, v in cls.routing.items()}
    path, here = [], SOURCE
    while True:
        nxt = {d: p for d, p in rows.get(here, {}).items() if p > 0}
        if len(nxt) != 1:
            raise UnsupportedModelError(
                f"class {cls.name!r}: from {here!r} its jobs go to {sorted(nxt)} at random; "
                "the closed form needs one fixed path (each station sending the class's jobs "
                "to one next station): simulate for percentiles")
        (d,) = nxt
        if d == SINK:
            return path
        if d in path:
            raise UnsupportedModelError(
                f"class {cls.name!r}: its path returns to station {d!r}; the closed form "
                "needs each station once (feedback makes the sojourns dependent)")
        path.append(d)
        here = d


def _edges(net: Network) -> dict:
    """Station -> the stations some job can go to next (any class)."""
    out: dict = {s: set() for s in net.station_names}
    V = np.asarray(net.visits, float)
    for i, c in enumerate(net.classes):
        if c.routing is not None:
            for a, row in c.routing.items():
                if a in out:
                    out[a] |= {b for b, p in row.items() if p > 0 and b in out}
        elif V[i].sum() > 1.0 + 1e-12:
            # visit ratios summing past one: the simulator and QNA route at
            # random among the visited stations (qna._visit_routing); a sum
            # of at most one is a single visit, with no move between stations
            seen = [s for s, v in zip(net.station_names, V[i]) if v > 0]
            for a in seen:
                out[a] |= set(seen)
    return out


def _overtake_free(net: Network, path: list[str]) -> str | None:
    """Walrand & Varaiya's condition: from no station of the path can a job
    reach a later one except along the path; the first way found, or None."""
    edges = _edges(net)
    pos = {s: i for i, s in enumerate(path)}
    for i, a in enumerate(path):
        nxt = path[i + 1] if i + 1 < len(path) else None
        todo = [b for b in edges[a] if b != nxt]
        seen = set(todo)
        while todo:
            b = todo.pop()
            if b in pos and pos[b] > i:
                return (f"a job can leave {a!r} and reach {b!r}, later on the path, another "
                        "way than along it (so it can overtake)")
            for c in edges[b]:
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
    return None


def _station_ph(net, k, lam, last, single):
    """(alpha, T, description) of the sojourn at station k, or a refusal."""
    from .queues.markovian import erlang_c

    st = net.stations[k]
    S = np.asarray(net.service_times, float)[:, k]
    used = S[np.asarray(net.visits, float)[:, k] > 0]
    mu = 1.0 / float(used[0])
    if isinstance(st, Delay):
        if not (last or single):
            raise UnsupportedModelError(
                f"station {st.name!r}: a delay inside the path lets later jobs overtake; the "
                "closed form takes a delay only as the path's last station")
        return np.array([1.0]), np.array([[-mu]]), f"{st.name}: delay, Exp({mu:.6g})"
    if not isinstance(st, Queue) or st.discipline not in ("fcfs",):
        what = getattr(st, "discipline", type(st).__name__)
        raise UnsupportedModelError(
            f"station {st.name!r}: {what} has no exponential sojourn time; the closed form "
            "takes FCFS queues (and a last delay): simulate for percentiles")
    c = int(st.servers)
    if c == 1:
        rate = mu - lam
        return np.array([1.0]), np.array([[-rate]]), f"{st.name}: ./M/1, Exp({rate:.6g})"
    if not single:
        raise UnsupportedModelError(
            f"station {st.name!r}: {c} servers let later jobs overtake inside it; the closed "
            "form takes c-server queues only on a one-station path")
    C = float(erlang_c(c, lam / mu))
    alpha = np.array([C, 1.0 - C])
    T = np.array([[-(c * mu - lam), c * mu - lam], [0.0, -mu]])
    return alpha, T, f"{st.name}: M/M/{c}, wait with prob. {C:.6g} then service"


def _convolve(a1, T1, a2, T2):
    """Phase-type sum (Neuts 1981, Theorem 2.2.2): first (a1, T1), then
    (a2, T2) from the exit of the first."""
    n1, n2 = len(a1), len(a2)
    exit1 = -T1 @ np.ones(n1)
    T = np.zeros((n1 + n2, n1 + n2))
    T[:n1, :n1] = T1
    T[:n1, n1:] = np.outer(exit1, a2)
    T[n1:, n1:] = T2
    alpha = np.concatenate([a1, (1.0 - a1.sum()) * a2])
    return alpha, T


def _class_named(net, cls: str | None) -> str:
    """The name of class ``cls`` of network ``net`` (default: its only
    class), or a typed refusal naming what is wrong."""
    if not isinstance(net, Network):
        raise InvalidValueError(f"expected a Network, got {type(net).__name__}")
    if cls is None:
        if len(net.classes) != 1:
            raise InvalidValueError(
                f"the network has {len(net.classes)} classes: name one (cls=...)")
        cls = net.classes[0].name
    if cls not in net.class_names:
        raise UnknownNameError(f"no class {cls!r} (the network has {list(net.class_names)})")
    return cls


def response_time_distribution(net: Network, cls: str | None = None) -> ResponseTimeDistribution:
    """The exact end-to-end response-time distribution of class ``cls``
    (default: the only class), where the module docstring's conditions
    hold; a closed class by
    :func:`.passage_ctmc.closed_response_time_distribution`.

    Raises
    ------
    UnsupportedModelError
        Naming the class or station that breaks a condition (random
        routing, a c-server queue or delay inside the path, PS, a path that
        lets jobs overtake, a non-product-form network).
    UnstableError
        An open station at or past saturation (as the open solver).
    """
    cls = _class_named(net, cls)
    why = requires.numeric(net) or requires.class_switching(net)
    if why:
        raise UnsupportedModelError(why)
    klass = net.classes[net.class_names.index(cls)]
    if not isinstance(klass, Open):
        # a closed class: the passage time of a tagged job in the network's
        # chain (method "ctmc-passage", :mod:`.passage_ctmc`)
        from .passage_ctmc import closed_response_time_distribution

        return closed_response_time_distribution(net, cls)
    if net.closed_classes:
        raise UnsupportedModelError(
            f"the network has closed classes ({', '.join(c.name for c in net.closed_classes)}); "
            "the closed form holds for open networks")
    why = requires.product_form(net)
    if why:
        raise UnsupportedModelError(f"{why}; the closed form needs an open product-form network")
    from .mva import mva

    base = mva(net)       # stability, with the open solvers' typed errors
    path = _path(net, klass)
    why = _overtake_free(net, path)
    if why:
        raise UnsupportedModelError(f"class {cls!r}: {why}; the closed form needs an "
                                    "overtake-free path (Walrand & Varaiya 1980)")
    lam_st = np.asarray(base.station_throughput, float).sum(axis=0)
    alpha = T = None
    desc = {}
    for i, name in enumerate(path):
        k = net.station_names.index(name)
        a, t, d = _station_ph(net, k, float(lam_st[k]), i == len(path) - 1, len(path) == 1)
        desc[name] = d
        alpha, T = (a, t) if alpha is None else _convolve(alpha, T, a, t)
    assumptions = METHOD_LABELS["passage"][1] + ((
        "sojourn times independent along an overtake-free path of ./M/1 nodes (Walrand & "
        "Varaiya 1980)",) if len(path) > 1 else ())
    return ResponseTimeDistribution(net, cls, tuple(path), alpha, T, assumptions=assumptions,
                                    notes=("phase-type sum of the stations' sojourn times: "
                                           + "; ".join(desc.values()),),
                                    stations=desc)

