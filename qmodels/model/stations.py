"""Stations: where work is served.  ``Delay`` (infinite servers), ``Queue``
(c servers, a discipline, an optional finite capacity), ``LoadDependent``
(service rate a function of the number present), and ``Power`` (the watts a
station draws busy and idle, for the energy layer).

Times are in seconds and power in watts; any number may be a sympy
expression (see :mod:`qmodels._validate` for how symbols are checked).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._validate import MAX_INT64, Number, check_count, check_name, check_real, is_symbolic
from ..errors import InvalidValueError

__all__ = ["Power", "Station", "Delay", "Queue", "LoadDependent", "SOURCE", "SINK"]

#: Queueing disciplines of a :class:`Queue`; ``PRIORITY_DISCIPLINES`` are
#: those that order classes by their ``priority``.
DISCIPLINES = ("fcfs", "ps", "prio", "prio-pr", "lcfs-pr")
PRIORITY_DISCIPLINES = ("prio", "prio-pr")

#: Reserved routing names for open classes: where jobs enter and leave.
SOURCE = "source"
SINK = "sink"


def _check_distribution(dist, what: str):
    from .distributions import Distribution

    if dist is not None and not isinstance(dist, Distribution):
        raise InvalidValueError(
            f"{what} must be a qmodels.distributions.Distribution, got {dist!r}"
        )


@dataclass(frozen=True, init=False)
class Power:
    """Electrical power of a device per state, in watts.

    ``busy`` is drawn while serving, ``idle`` otherwise; ``read`` and
    ``write`` refine ``busy`` for devices whose power differs by operation
    (the all-flash energy study, :mod:`qmodels.cases.afa`, table of device
    power).  Energy follows from E = P x T (see :mod:`qmodels.physical.energy`).
    """

    busy: Number
    idle: Number = 0.0
    read: Number | None = None
    write: Number | None = None

    def __init__(self, busy=None, idle=0.0, read=None, write=None, **unknown):
        # written out (not the dataclass's) so that a misspelt or missing
        # parameter is an InvalidValueError naming it, not a bare TypeError
        if unknown:
            raise InvalidValueError(
                f"Power has no parameter {next(iter(unknown))!r}: it takes busy, idle, read "
                "and write (watts)")
        if busy is None:
            raise InvalidValueError("Power needs busy= (the watts drawn while serving)")
        for attr, v in (("busy", busy), ("idle", idle), ("read", read), ("write", write)):
            object.__setattr__(self, attr, v)
        self.__post_init__()

    def __post_init__(self):
        object.__setattr__(self, "busy", check_real(self.busy, "power.busy"))
        object.__setattr__(self, "idle", check_real(self.idle, "power.idle"))
        for attr in ("read", "write"):
            v = getattr(self, attr)
            if v is not None:
                object.__setattr__(self, attr, check_real(v, f"power.{attr}"))


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
    element : optional
        The physical element (:mod:`qmodels.physical.elements`) this station
        was built from, set by ``element.station()``, so that its parameters
        can be varied by path (``qm.sweep(net, {"disk.rpm": [...]})``).
        Provenance only: not compared, not saved to model files.
    """

    name: str
    service: Number = 0.0
    power: Power | None = field(default=None, kw_only=True)
    capacity: int | None = field(default=None, kw_only=True)
    distribution: Any = field(default=None, kw_only=True)
    element: Any = field(default=None, kw_only=True, compare=False, repr=False)

    kind: ClassVar[str] = "station"

    def __post_init__(self):
        check_name(self.name, "station")
        if self.name in (SOURCE, SINK):
            raise InvalidValueError(f"station name {self.name!r} is reserved for open routing")
        object.__setattr__(
            self, "service", check_real(self.service, f"station {self.name!r}: service time")
        )
        if self.power is not None and not isinstance(self.power, Power):
            if isinstance(self.power, Mapping):
                object.__setattr__(self, "power", Power(**self.power))
            else:
                raise InvalidValueError(
                    f"station {self.name!r}: power must be a Power, got {self.power!r}"
                )
        if self.capacity is not None:
            cap = check_count(self.capacity, f"station {self.name!r}: capacity", minimum=1,
                              maximum=MAX_INT64)
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

    ``discipline`` is ``"fcfs"`` (default), ``"ps"`` (processor sharing),
    ``"prio"`` (non-preemptive priority by the classes' ``priority``, 0 the
    highest, FCFS within a level), ``"prio-pr"`` (preemptive resume
    priority: a job of a higher level takes the server from the lowest
    level in service, which resumes its remaining work later), or
    ``"lcfs-pr"`` (last come first served, preemptive resume: a single
    server, BCMP type 4, product form).  Priority stations break product
    form: use ``method='priority'`` (an approximation) or ``'sim'``.
    In product-form solvers an FCFS station whose service time differs by
    class is solved as processor sharing (BCMP type 2), which is what
    product form requires; the result says so.
    """

    servers: int = field(default=1, kw_only=True)
    discipline: str = field(default="fcfs", kw_only=True)

    kind: ClassVar[str] = "queue"

    def __post_init__(self):
        super().__post_init__()
        c = check_count(self.servers, f"station {self.name!r}: servers", minimum=1,
                        maximum=MAX_INT64)
        object.__setattr__(self, "servers", c)
        if self.discipline not in DISCIPLINES:
            raise InvalidValueError(
                f"station {self.name!r}: discipline must be one of "
                f"{', '.join(repr(d) for d in DISCIPLINES)}, got {self.discipline!r}"
            )
        if self.discipline == "lcfs-pr" and c != 1:
            raise InvalidValueError(
                f"station {self.name!r}: discipline 'lcfs-pr' is single-server (BCMP type 4), "
                f"got servers={c!r}"
            )
        if self.capacity is not None and not is_symbolic(c) and self.capacity < c:
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
            check_real(a, f"station {self.name!r}: rate_multipliers[{i}]", allow_zero=False)
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
