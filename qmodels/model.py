"""The model: stations, workload classes and the network that joins them.

A model is plain, immutable data, validated once on construction.  Times are
in seconds, rates per second, power in watts.  Any number may instead be a
sympy expression; validation then raises only when a condition is *provably*
false (a symbol declared ``positive=True`` passes a non-negativity check).

Notation (Lazowska et al., *Quantitative System Performance*, 1984, ch. 3):
``S`` service time per visit, ``V`` visit ratio, ``D = V S`` service demand,
``Z`` think time, ``N`` population, ``lambda`` arrival rate.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

import numpy as np

from .errors import (
    DuplicateNameError,
    InvalidValueError,
    PopulationError,
    RoutingError,
    UnknownNameError,
    UnreachableStationError,
)

__all__ = [
    "Power",
    "Station",
    "Delay",
    "Queue",
    "LoadDependent",
    "Closed",
    "Open",
    "Network",
    "TokenPool",
    "FrozenMap",
    "ROUTING_TOLERANCE",
    "SOURCE",
    "SINK",
]

#: Absolute tolerance on a routing row sum: ``|sum_j p_ij - 1| <= 1e-9``.
ROUTING_TOLERANCE = 1e-9
#: Reserved routing names for open classes: where jobs enter and leave.
SOURCE = "source"
SINK = "sink"

Number = Union[int, float, Any]  # Any: a sympy expression


# ---------------------------------------------------------------------------
# value checks (numbers or sympy expressions)
# ---------------------------------------------------------------------------

def _is_symbolic(x) -> bool:
    """A sympy expression with free symbols (a sympy number such as
    Rational(1, 7) is a number: exact, but not symbolic)."""
    return (hasattr(x, "free_symbols") and not isinstance(x, numbers.Number)
            and bool(x.free_symbols))


def _is_exact_number(x) -> bool:
    """Kept as given after validation: ints, fractions, sympy numbers."""
    return (isinstance(x, numbers.Rational) and not isinstance(x, bool)) or (
        hasattr(x, "free_symbols") and not x.free_symbols)


def _sympify_number(x):
    return x


def _check_real(value, what: str, *, allow_zero: bool = True, allow_inf: bool = False):
    """Return ``value`` (a float, or a sympy expression) or raise
    :class:`InvalidValueError` naming ``what``.

    Numbers must be real, not NaN, finite (unless ``allow_inf``) and
    non-negative (positive unless ``allow_zero``).  Symbolic values fail only
    when the condition is provably false.
    """
    kind = "non-negative" if allow_zero else "positive"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}")
    value = _sympify_number(value)
    if _is_symbolic(value):
        if value.is_extended_real is False:
            raise InvalidValueError(f"{what} must be real, got {value}")
        if value.is_negative is True or (not allow_zero and value.is_zero is True):
            raise InvalidValueError(f"{what} must be {kind}, got {value}")
        if not allow_inf and value.is_finite is False:
            raise InvalidValueError(f"{what} must be finite, got {value}")
        return value
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        raise InvalidValueError(f"{what} must be real, got {value!r}")
    if isinstance(value, numbers.Integral):
        # kept exact (a visit ratio of 1 stays 1 in symbolic expressions)
        if value < 0 or (value == 0 and not allow_zero):
            raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}")
        return int(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}") from None
    if math.isnan(v) or (math.isinf(v) and not allow_inf) or v < 0 or (v == 0 and not allow_zero):
        raise InvalidValueError(f"{what} must be a finite {kind} number, got {value!r}")
    # exact inputs (Fraction, sympy Rational, sqrt(2)) stay exact for the
    # symbolic solvers; numeric arrays convert them to float
    return value if _is_exact_number(value) else v


def _check_count(value, what: str, *, minimum: int, error=InvalidValueError):
    """An integer >= minimum; never rounded. Integral floats (10.0) are taken
    as the integer they are; 10.3, True, NaN are rejected."""
    desc = "a non-negative integer" if minimum == 0 else f"an integer >= {minimum}"

    def bad():
        return error(f"{what} must be {desc}, got {value!r}")

    if isinstance(value, bool) or value is None:
        raise bad()
    if _is_symbolic(value) and value.free_symbols:
        if value.is_integer is False or (value - minimum).is_negative is True:
            raise bad()
        return value
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) or hasattr(value, "free_symbols"):
        try:
            fv = float(value)
        except (TypeError, ValueError):
            raise bad() from None
        if not math.isfinite(fv) or not fv.is_integer():
            raise bad()
        v = int(fv)
    else:
        raise bad()
    if v < minimum:
        raise bad()
    return v


def _check_name(name, what: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidValueError(f"{what} name must be a non-empty string, got {name!r}")
    return name


def _check_distribution(dist, what: str):
    from .distributions import Distribution

    if dist is not None and not isinstance(dist, Distribution):
        raise InvalidValueError(
            f"{what} must be a qmodels.distributions.Distribution, got {dist!r}"
        )


class FrozenMap(Mapping):
    """An immutable, hashable mapping (insertion ordered)."""

    __slots__ = ("_d", "_h")

    def __init__(self, data=()):
        self._d = dict(data)
        self._h = None

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __hash__(self):
        if self._h is None:
            self._h = hash(tuple(self._d.items()))
        return self._h

    def __eq__(self, other):
        if isinstance(other, Mapping):
            return dict(self._d) == dict(other)
        return NotImplemented

    def __repr__(self):
        return repr(self._d)


def _freeze(mapping, what: str):
    if mapping is None:
        return None
    if not isinstance(mapping, Mapping):
        raise InvalidValueError(f"{what} must be a mapping, got {type(mapping).__name__}")
    return FrozenMap(mapping)


# ---------------------------------------------------------------------------
# stations
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Power:
    """Electrical power of a device per state, in watts.

    ``busy`` is drawn while serving, ``idle`` otherwise; ``read`` and
    ``write`` refine ``busy`` for devices whose power differs by operation
    (Kim et al., the all-flash energy study in CASES.md, table of device
    power).  Energy follows from E = P x T (see :mod:`qmodels.energy`).
    """

    busy: Number
    idle: Number = 0.0
    read: Number | None = None
    write: Number | None = None

    def __post_init__(self):
        object.__setattr__(self, "busy", _check_real(self.busy, "power.busy"))
        object.__setattr__(self, "idle", _check_real(self.idle, "power.idle"))
        for attr in ("read", "write"):
            v = getattr(self, attr)
            if v is not None:
                object.__setattr__(self, attr, _check_real(v, f"power.{attr}"))


@dataclass(frozen=True)
class Station:
    """Base class of stations. Use :class:`Delay`, :class:`Queue` or
    :class:`LoadDependent`.

    Parameters
    ----------
    name : str
        Unique within the network (and distinct from every class name).
    service : float or sympy expression
        Mean service time per visit, in seconds, for every class that does
        not give its own (see ``Closed(service=...)``).
    power : Power, optional
    capacity : int, optional
        Finite room (jobs present, in service included).  Product-form
        solvers reject a capacity that can bind; the simulator and the CTMC
        solver model it.  A full station blocks the sender after its service
        (blocking after service); an open arrival finding it full is lost.
    distribution : qmodels.distributions.Distribution, optional
        Shape of the service time (default exponential).  Product-form
        solvers use only the mean; the simulator draws from the shape.
    """

    name: str
    service: Number = 0.0
    power: Power | None = field(default=None, kw_only=True)
    capacity: int | None = field(default=None, kw_only=True)
    distribution: Any = field(default=None, kw_only=True)

    kind: ClassVar[str] = "station"

    def __post_init__(self):
        _check_name(self.name, "station")
        if self.name in (SOURCE, SINK):
            raise InvalidValueError(f"station name {self.name!r} is reserved for open routing")
        object.__setattr__(
            self, "service", _check_real(self.service, f"station {self.name!r}: service time")
        )
        if self.power is not None and not isinstance(self.power, Power):
            if isinstance(self.power, Mapping):
                object.__setattr__(self, "power", Power(**self.power))
            else:
                raise InvalidValueError(
                    f"station {self.name!r}: power must be a Power, got {self.power!r}"
                )
        if self.capacity is not None:
            cap = _check_count(self.capacity, f"station {self.name!r}: capacity", minimum=1)
            object.__setattr__(self, "capacity", cap)
        _check_distribution(self.distribution, f"station {self.name!r}: distribution")

    # -- service-rate shape ------------------------------------------------
    def rate_multiplier(self, n: int):
        """Service-rate multiplier with ``n`` jobs present: the station
        completes jobs at rate ``rate_multiplier(n) / S``."""
        raise NotImplementedError

    @property
    def max_rate_multiplier(self):
        """sup_n rate_multiplier(n); ``inf`` for a delay station."""
        raise NotImplementedError

    @property
    def min_rate_multiplier(self):
        """inf_{n>=1} rate_multiplier(n)."""
        raise NotImplementedError

    @property
    def servers(self):
        return 1


@dataclass(frozen=True)
class Delay(Station):
    """Infinite-server (delay) station: every job is served at once, no
    queueing; the response time per visit equals the service time.

    BCMP type 3 (Baskett, Chandy, Muntz & Palacios 1975)."""

    kind: ClassVar[str] = "delay"

    def rate_multiplier(self, n):
        return n

    @property
    def max_rate_multiplier(self):
        return math.inf

    @property
    def min_rate_multiplier(self):
        return 1

    @property
    def servers(self):
        return math.inf


@dataclass(frozen=True)
class Queue(Station):
    """Queueing station with ``servers`` identical servers.

    ``discipline`` is ``"fcfs"`` (default) or ``"ps"`` (processor sharing).
    In product-form solvers an FCFS station whose service time differs by
    class is solved as processor sharing (BCMP type 2), which is what
    product form requires; the result says so.
    """

    servers: int = field(default=1, kw_only=True)
    discipline: str = field(default="fcfs", kw_only=True)

    kind: ClassVar[str] = "queue"

    def __post_init__(self):
        super().__post_init__()
        c = _check_count(self.servers, f"station {self.name!r}: servers", minimum=1)
        object.__setattr__(self, "servers", c)
        if self.discipline not in ("fcfs", "ps"):
            raise InvalidValueError(
                f"station {self.name!r}: discipline must be 'fcfs' or 'ps', got {self.discipline!r}"
            )
        if self.capacity is not None and not _is_symbolic(c) and self.capacity < c:
            raise InvalidValueError(
                f"station {self.name!r}: capacity {self.capacity} is smaller than servers {c}"
            )

    def rate_multiplier(self, n):
        return min(n, self.servers)

    @property
    def max_rate_multiplier(self):
        return self.servers

    @property
    def min_rate_multiplier(self):
        return 1


@dataclass(frozen=True)
class LoadDependent(Station):
    """Load-dependent station: with ``n`` jobs present it serves at rate
    ``rate_multipliers[n-1] / service``; beyond the list the last value holds.

    A RAID group that serves 1, 1.8, 2.4, 2.8 requests at once is
    ``LoadDependent("raid", 0.020, rate_multipliers=(1, 1.8, 2.4, 2.8))``.
    A ``Queue(servers=c)`` is the special case ``(1, 2, ..., c)``.
    """

    rate_multipliers: tuple = field(default=(1.0,), kw_only=True)

    kind: ClassVar[str] = "ld"

    def __post_init__(self):
        super().__post_init__()
        rm = self.rate_multipliers
        if isinstance(rm, (str, bytes)) or not isinstance(rm, Iterable):
            raise InvalidValueError(
                f"station {self.name!r}: rate_multipliers must be a sequence, got {rm!r}"
            )
        rm = tuple(rm)
        if not rm:
            raise InvalidValueError(f"station {self.name!r}: rate_multipliers is empty")
        checked = tuple(
            _check_real(a, f"station {self.name!r}: rate_multipliers[{i}]", allow_zero=False)
            for i, a in enumerate(rm)
        )
        object.__setattr__(self, "rate_multipliers", checked)

    def rate_multiplier(self, n):
        if n <= 0:
            return 0
        rm = self.rate_multipliers
        return rm[min(n, len(rm)) - 1]

    @property
    def max_rate_multiplier(self):
        return max(self.rate_multipliers)

    @property
    def min_rate_multiplier(self):
        return min(self.rate_multipliers)


# ---------------------------------------------------------------------------
# classes
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Class:
    name: str
    visits: Mapping | None = field(default=None, kw_only=True)
    routing: Mapping | None = field(default=None, kw_only=True)
    demands: Mapping | None = field(default=None, kw_only=True)
    service: Mapping | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "class"

    def __post_init__(self):
        _check_name(self.name, "class")
        who = f"class {self.name!r}"
        given = [k for k in ("visits", "routing", "demands") if getattr(self, k) is not None]
        if len(given) != 1:
            raise InvalidValueError(
                f"{who}: give exactly one of visits, routing or demands (got {given or 'none'})"
            )
        if self.demands is not None and self.service is not None:
            raise InvalidValueError(f"{who}: give either demands or service times, not both")
        for attr in ("visits", "demands", "service"):
            m = getattr(self, attr)
            if m is None:
                continue
            m = _freeze(m, f"{who}: {attr}")
            noun = {"visits": "visit ratio", "demands": "demand", "service": "service time"}[attr]
            checked = FrozenMap(
                (k, _check_real(v, f"{who}: {noun} at station {k!r}")) for k, v in m.items()
            )
            object.__setattr__(self, attr, checked)
        if self.routing is not None:
            r = _freeze(self.routing, f"{who}: routing")
            rows = {}
            for src, row in r.items():
                row = _freeze(row, f"{who}: routing row {src!r}")
                rows[src] = FrozenMap(
                    (dst, _check_real(p, f"{who}: routing probability {src!r} -> {dst!r}"))
                    for dst, p in row.items()
                )
            object.__setattr__(self, "routing", FrozenMap(rows))


@dataclass(frozen=True)
class Closed(_Class):
    """A closed class: ``population`` jobs circulate for ever.

    Parameters
    ----------
    name : str
    population : int
        Non-negative integer (never rounded: 10.3 is an error).
    visits : mapping station -> visit ratio per cycle, or
    routing : mapping station -> {station: probability}; visit ratios come
        from the traffic equations v = v P with v[reference] = 1, or
    demands : mapping station -> demand D (visit ratio 1, service time D).
    service : mapping station -> mean service time for this class
        (overrides the station's own service time).
    think_time : float
        Z, a delay outside the stations (an infinite-server terminal stage).
    reference : str, optional
        The station whose visit ratio is 1 when routing is given (default:
        the first station of the routing, resolved here so that the model
        never depends on the order of a mapping once built: a model file
        written with sorted keys keeps its reference station).
    """

    population: int = 0
    think_time: Number = field(default=0.0, kw_only=True)
    reference: str | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "closed"

    def __post_init__(self):
        super().__post_init__()
        who = f"class {self.name!r}"
        object.__setattr__(
            self,
            "population",
            _check_count(self.population, f"{who}: population", minimum=0,
                         error=PopulationError),
        )
        object.__setattr__(self, "think_time", _check_real(self.think_time, f"{who}: think time"))
        if self.reference is None and self.routing is not None and len(self.routing):
            object.__setattr__(self, "reference", next(iter(self.routing)))


@dataclass(frozen=True)
class Open(_Class):
    """An open class: jobs arrive at ``arrival_rate`` per second and leave.

    With ``routing``, the row ``"source"`` gives where arrivals enter and a
    station's row may send jobs to ``"sink"``.  ``interarrival`` is the shape
    of the inter-arrival time (default exponential: Poisson arrivals).
    """

    arrival_rate: Number = 0.0
    interarrival: Any = field(default=None, kw_only=True)

    kind: ClassVar[str] = "open"

    def __post_init__(self):
        super().__post_init__()
        _check_distribution(self.interarrival, f"class {self.name!r}: interarrival")
        object.__setattr__(
            self,
            "arrival_rate",
            _check_real(self.arrival_rate, f"class {self.name!r}: arrival rate"),
        )


# ---------------------------------------------------------------------------
# held resources
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TokenPool:
    """A passive resource: ``tokens`` units held across several stations.

    A job takes one token before it enters station ``acquire`` (waiting, in
    FIFO order, while none is free) and gives it back when it completes
    station ``release``; it holds the token at every station in between
    (simultaneous resource possession).  An interface buffer of B packet
    slots, or a switch input port that holds one packet (``tokens=1``), is a
    pool.  Product-form solvers reject pools; the simulator and the CTMC
    model them exactly, :mod:`qmodels.decomposition` approximately (a
    flow-equivalent server, Lazowska et al. 1984, ch. 9).

    Parameters
    ----------
    name : str
    tokens : int >= 1
    acquire, release : str
        Station names; ``release`` may equal ``acquire``.
    classes : tuple of str, optional
        Classes that use the pool (default: every class).
    """

    name: str
    tokens: int
    acquire: str
    release: str
    classes: tuple | None = None

    def __post_init__(self):
        _check_name(self.name, "token pool")
        object.__setattr__(
            self, "tokens",
            _check_count(self.tokens, f"token pool {self.name!r}: tokens", minimum=1),
        )
        _check_name(self.acquire, f"token pool {self.name!r}: acquire station")
        _check_name(self.release, f"token pool {self.name!r}: release station")
        if self.classes is not None:
            object.__setattr__(self, "classes", tuple(self.classes))


# ---------------------------------------------------------------------------
# network
# ---------------------------------------------------------------------------

def _solve_traffic(cls: _Class, station_names: list[str]):
    """Visit ratios of one class from its routing (traffic equations).

    Closed: v = v P, v[ref] = 1 (Lazowska et al. 1984, sec. 3.2).
    Open:   v = p0 + v P, i.e. v = p0 (I - P)^-1 (Jackson 1963).
    """
    who = f"class {cls.name!r}"
    routing = cls.routing
    assert routing is not None
    is_open = isinstance(cls, Open)
    known = set(station_names)
    nodes: list[str] = []
    for src, row in routing.items():
        if src == SINK or (src == SOURCE and not is_open):
            raise RoutingError(f"{who}: routing row {src!r} is not allowed")
        if src != SOURCE and src not in known:
            raise UnknownNameError(f"{who}: routing names unknown station {src!r}")
        if src != SOURCE and src not in nodes:
            nodes.append(src)
        total = 0.0
        symbolic = False
        for dst, p in row.items():
            if dst == SOURCE or (dst == SINK and not is_open):
                raise RoutingError(f"{who}: routing {src!r} -> {dst!r} is not allowed")
            if dst != SINK and dst not in known:
                raise UnknownNameError(f"{who}: routing names unknown station {dst!r}")
            if dst != SINK and dst not in nodes:
                nodes.append(dst)
            if _is_symbolic(p):
                symbolic = True
            total = total + p
        if not symbolic and abs(float(total) - 1.0) > ROUTING_TOLERANCE:
            raise RoutingError(
                f"{who}: routing row {src!r} sums to {float(total):.12g}, not 1 "
                f"(tolerance {ROUTING_TOLERANCE:g})"
            )
    for node in nodes:
        if node not in routing:
            raise RoutingError(f"{who}: station {node!r} has no routing row (where do jobs go?)")
    if is_open and SOURCE not in routing:
        raise RoutingError(f"{who}: open routing needs a {SOURCE!r} row (where jobs enter)")

    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for src, row in routing.items():
        for dst, p in row.items():
            if not (not _is_symbolic(p) and float(p) == 0.0):
                g.add_edge(src, dst)
    if is_open:
        start = SOURCE
    else:
        ref = getattr(cls, "reference", None)
        start = ref if ref is not None else nodes[0]
        if start not in routing:
            raise RoutingError(f"{who}: reference station {start!r} is not in the routing")
    reach = nx.descendants(g, start) | {start}
    unreachable = [n for n in nodes if n not in reach]
    if unreachable:
        raise UnreachableStationError(
            f"{who}: station(s) {', '.join(map(repr, unreachable))} cannot be reached "
            f"from {start!r}"
        )
    target = SINK if is_open else start
    if is_open and SINK not in g:
        raise RoutingError(f"{who}: open routing never sends jobs to {SINK!r}")
    back = nx.ancestors(g, target) | {target}
    trapped = [n for n in nodes if n not in back]
    if trapped:
        dest = "leave the network" if is_open else f"return to {start!r}"
        raise RoutingError(
            f"{who}: jobs at station(s) {', '.join(map(repr, trapped))} can never {dest}"
        )

    symbolic = any(_is_symbolic(p) for row in routing.values() for p in row.values())
    idx = {n: i for i, n in enumerate(nodes)}
    m = len(nodes)
    if symbolic:
        import sympy as sp

        P = sp.zeros(m, m)
        p0 = sp.zeros(1, m)
        for src, row in routing.items():
            for dst, p in row.items():
                if dst == SINK:
                    continue
                if src == SOURCE:
                    p0[0, idx[dst]] += p
                else:
                    P[idx[src], idx[dst]] += p
        if is_open:
            v = p0 * (sp.eye(m) - P).inv()
        else:
            r = idx[start]
            # v (I - P) = 0 with v[r] = 1: drop equation r, fix v[r].
            A = (sp.eye(m) - P).T
            keep = [i for i in range(m) if i != r]
            sol = A[keep, keep].LUsolve(-A[keep, r])
            v = sp.zeros(1, m)
            v[0, r] = 1
            for j, i in enumerate(keep):
                v[0, i] = sol[j]
        return {n: sp.simplify(v[0, idx[n]]) for n in nodes}

    P = np.zeros((m, m))
    p0 = np.zeros(m)
    for src, row in routing.items():
        for dst, p in row.items():
            if dst == SINK:
                continue
            if src == SOURCE:
                p0[idx[dst]] += float(p)
            else:
                P[idx[src], idx[dst]] += float(p)
    A = (np.eye(m) - P).T
    if is_open:
        rhs = p0
        try:
            v = np.linalg.solve(A, rhs)
        except np.linalg.LinAlgError:
            raise RoutingError(f"{who}: traffic equations are singular") from None
    else:
        r = idx[start]
        keep = [i for i in range(m) if i != r]
        v = np.zeros(m)
        v[r] = 1.0
        if keep:
            try:
                v[keep] = np.linalg.solve(A[np.ix_(keep, keep)], -A[keep, r])
            except np.linalg.LinAlgError:
                raise RoutingError(f"{who}: traffic equations are singular") from None
    if not np.all(np.isfinite(v)) or np.any(v < -1e-9):
        raise RoutingError(f"{who}: traffic equations have no valid solution (visits {v})")
    return {n: max(float(v[idx[n]]), 0.0) for n in nodes}


@dataclass(frozen=True)
class Network:
    """A queueing network: stations and the classes of work that visit them.

    Parameters
    ----------
    stations : sequence of Station
    classes : sequence of Closed / Open
    name : str, optional
    pools : sequence of TokenPool, optional
        Held resources (buffers, ports) spanning several stations.

    Derived, read-only attributes (arrays shaped (classes, stations), in the
    order of ``class_names`` x ``station_names``): ``visits`` V,
    ``service_times`` S, ``demands`` D = V S.  With sympy values they are
    object arrays.

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network(
    ...     stations=[qm.Queue("cpu", 0.010), qm.Queue("disk", 0.025)],
    ...     classes=[qm.Closed("tx", population=5, think_time=1.0,
    ...                        visits={"cpu": 1, "disk": 0.5})])
    >>> net.demands.tolist()
    [[0.01, 0.0125]]
    """

    stations: Sequence[Any]
    classes: Sequence[Any]
    name: str = ""
    pools: Sequence[Any] = ()

    visits: np.ndarray = field(init=False, repr=False, compare=False, hash=False)
    service_times: np.ndarray = field(init=False, repr=False, compare=False, hash=False)
    demands: np.ndarray = field(init=False, repr=False, compare=False, hash=False)
    is_symbolic: bool = field(init=False, repr=False, compare=False, hash=False)
    # solvers' per-network derived data (never part of the model's value)
    _cache: dict = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        stations = tuple(self.stations)
        classes = tuple(self.classes)
        object.__setattr__(self, "stations", stations)
        object.__setattr__(self, "classes", classes)
        if not stations:
            raise InvalidValueError("a network needs at least one station")
        if not classes:
            raise InvalidValueError("a network needs at least one class")
        seen: dict[str, str] = {}
        for s in stations:
            if not isinstance(s, Station) or type(s) is Station:
                raise InvalidValueError(f"not a station (Delay, Queue, LoadDependent): {s!r}")
            if s.name in seen:
                raise DuplicateNameError(f"duplicate station name {s.name!r}")
            seen[s.name] = "station"
        for c in classes:
            if not isinstance(c, (Closed, Open)):
                raise InvalidValueError(f"not a class (Closed, Open): {c!r}")
            if c.name in seen:
                raise DuplicateNameError(
                    f"class name {c.name!r} is already used by a {seen[c.name]}"
                )
            seen[c.name] = "class"

        pools = tuple(self.pools)
        object.__setattr__(self, "pools", pools)
        for p in pools:
            if not isinstance(p, TokenPool):
                raise InvalidValueError(f"not a TokenPool: {p!r}")
            if p.name in seen:
                raise DuplicateNameError(
                    f"pool name {p.name!r} is already used by a {seen[p.name]}"
                )
            seen[p.name] = "pool"
            for st in (p.acquire, p.release):
                if not any(s.name == st for s in stations):
                    raise UnknownNameError(f"token pool {p.name!r}: unknown station {st!r}")
            for cn in p.classes or ():
                if not any(c.name == cn for c in classes):
                    raise UnknownNameError(f"token pool {p.name!r}: unknown class {cn!r}")

        names = [s.name for s in stations]
        index = {n: k for k, n in enumerate(names)}
        C, K = len(classes), len(stations)
        vis: list[list[Any]] = [[0.0] * K for _ in range(C)]
        svc: list[list[Any]] = [[s.service for s in stations] for _ in range(C)]
        for ci, c in enumerate(classes):
            who = f"class {c.name!r}"
            if c.routing is not None:
                v = _solve_traffic(c, names)
            elif c.demands is not None:
                v = {}
                for st, d in c.demands.items():
                    if st not in index:
                        raise UnknownNameError(f"{who}: demands name unknown station {st!r}")
                    v[st] = 1.0
                    svc[ci][index[st]] = d
            else:
                v = dict(c.visits)
            for st, val in v.items():
                if st not in index:
                    raise UnknownNameError(f"{who}: visits name unknown station {st!r}")
                vis[ci][index[st]] = val
            if c.service is not None:
                for st, val in c.service.items():
                    if st not in index:
                        raise UnknownNameError(
                            f"{who}: service times name unknown station {st!r}"
                        )
                    svc[ci][index[st]] = val
            if isinstance(c, Closed) and c.reference is not None and c.reference not in index:
                raise UnknownNameError(f"{who}: reference names unknown station {c.reference!r}")

        symbolic = any(_is_symbolic(x) for row in vis + svc for x in row) or any(
            _is_symbolic(getattr(c, a, 0.0))
            for c in classes
            for a in ("population", "think_time", "arrival_rate")
        ) or any(
            _is_symbolic(getattr(s, "servers", 1)) for s in stations
        ) or any(_is_symbolic(a) for s in stations for a in getattr(s, "rate_multipliers", ()))
        dtype = object if symbolic else float
        V = np.array(vis, dtype=dtype).reshape(C, K)
        S = np.array(svc, dtype=dtype).reshape(C, K)
        D = V * S
        for arr in (V, S, D):
            arr.flags.writeable = False
        object.__setattr__(self, "visits", V)
        object.__setattr__(self, "service_times", S)
        object.__setattr__(self, "demands", D)
        object.__setattr__(self, "is_symbolic", symbolic)
        object.__setattr__(self, "_cache", {})

    # -- names and lookups -------------------------------------------------
    @property
    def station_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stations)

    @property
    def class_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classes)

    def station(self, name: str) -> Station:
        for s in self.stations:
            if s.name == name:
                return s
        raise UnknownNameError(f"unknown station {name!r}")

    def klass(self, name: str):
        """The class called ``name``."""
        for c in self.classes:
            if c.name == name:
                return c
        raise UnknownNameError(f"unknown class {name!r}")

    def station_index(self, name: str) -> int:
        return self.station_names.index(self.station(name).name)

    def class_index(self, name: str) -> int:
        return self.class_names.index(self.klass(name).name)

    # -- workload shape ----------------------------------------------------
    @property
    def closed_classes(self) -> tuple:
        return tuple(c for c in self.classes if isinstance(c, Closed))

    @property
    def open_classes(self) -> tuple:
        return tuple(c for c in self.classes if isinstance(c, Open))

    @property
    def is_closed(self) -> bool:
        return all(isinstance(c, Closed) for c in self.classes)

    @property
    def is_open(self) -> bool:
        return all(isinstance(c, Open) for c in self.classes)

    @property
    def is_mixed(self) -> bool:
        return not (self.is_closed or self.is_open)

    @property
    def populations(self) -> tuple:
        """Population per class (0 for open classes)."""
        return tuple(getattr(c, "population", 0) for c in self.classes)

    @property
    def think_times(self) -> tuple:
        return tuple(getattr(c, "think_time", 0.0) for c in self.classes)

    @property
    def arrival_rates(self) -> tuple:
        return tuple(getattr(c, "arrival_rate", 0.0) for c in self.classes)

    @property
    def servers(self) -> tuple:
        """Servers per station (``inf`` for delay stations)."""
        return tuple(s.servers for s in self.stations)

    def with_population(self, population, cls: str | None = None) -> "Network":
        """A copy with the population of class ``cls`` (default: the only
        closed class) set to ``population``."""
        import dataclasses

        closed = self.closed_classes
        if cls is None:
            if len(closed) != 1:
                raise InvalidValueError("name the class whose population to set")
            cls = closed[0].name
        target = self.klass(cls)
        if not isinstance(target, Closed):
            raise InvalidValueError(f"class {cls!r} is open: it has no population")
        new = tuple(
            dataclasses.replace(c, population=population) if c.name == cls else c
            for c in self.classes
        )
        return Network(self.stations, new, name=self.name, pools=self.pools)

    def to_dict(self) -> dict:
        """The model-file form of this network: plain data (str, int, float,
        lists, dicts) that :meth:`from_dict` turns back into an equal
        network, whatever the order of its keys.  See
        :func:`qmodels.modelfile.to_dict`."""
        from .modelfile import to_dict

        return to_dict(self)

    @classmethod
    def from_dict(cls, data) -> "Network":
        """A network from its model-file form (a parsed YAML/JSON model file);
        raises :class:`~qmodels.errors.ModelFileError` listing every error
        with its path.  See :func:`qmodels.modelfile.from_dict`."""
        from .modelfile import from_dict

        return from_dict(data)

    def graph(self):
        """The routing as a ``networkx.DiGraph``.

        Nodes are station names (with attribute ``station``), plus
        ``"source"``/``"sink"`` where open routing uses them.  Edge attribute
        ``p`` maps class name -> routing probability.  Classes given by
        visits or demands add no edges (their order of visits is unknown).
        """
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for s in self.stations:
            g.add_node(s.name, station=s)
        for c in self.classes:
            if c.routing is None:
                continue
            for src, row in c.routing.items():
                for dst, p in row.items():
                    if not g.has_edge(src, dst):
                        g.add_edge(src, dst, p={})
                    g.edges[src, dst]["p"][c.name] = p
        return g

    def __repr__(self):
        st = ", ".join(f"{s.name}:{s.kind}" for s in self.stations)
        cl = ", ".join(
            f"{c.name}(N={c.population})" if isinstance(c, Closed)
            else f"{c.name}(lambda={c.arrival_rate})"
            for c in self.classes
        )
        title = f" {self.name!r}" if self.name else ""
        return f"Network{title}(stations=[{st}], classes=[{cl}])"
