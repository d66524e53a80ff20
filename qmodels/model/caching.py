"""A cache as a station of a network: :class:`CacheStation`, and Che's
approximation, the one implementation the analytic methods and
:class:`qmodels.physical.cache.Cache` share.

A :class:`CacheStation` is a :class:`~qmodels.model.Queue` (its service is
the lookup) that holds a cache of ``cache_capacity`` items out of a catalog
with the request probabilities ``popularity`` (the independent reference
model, IRM), replaced by LRU, FIFO or RANDOM.  A job leaving it goes to the
station ``hit`` or to the station ``miss``:

- the analytic methods read the class's routing row at the station, which
  must be the cache's split by Che's approximation,
  ``{hit: h, miss: 1 - h}`` (:meth:`CacheStation.split`): their answers are
  then approximate in the hit ratio, by the error of Che's approximation;
- the simulator runs the cache item by item: each job leaving the station
  requests an item drawn from the popularity, the cache looks it up and
  updates its contents, and the job goes to ``hit`` or ``miss`` by the
  outcome (:mod:`qmodels.sim.engine`, ``cache_lookup``).

References
----------
.. [Che] H. Che, Y. Tung & Z. Wang, "Hierarchical Web caching systems:
   modeling, design and experimental results", IEEE J. Selected Areas in
   Communications 20(7), 2002, pp. 1305-1314 (LRU's characteristic time
   T_C: sum_i (1 - exp(-q_i T_C)) = C; hit probability 1 - exp(-q_i T_C)).
.. [MGL] V. Martina, M. Garetto & E. Leonardi, "A unified approach to the
   performance analysis of caching systems", IEEE INFOCOM 2014 (FIFO and
   RANDOM under the IRM: h_i = q_i T_C / (1 + q_i T_C), sum_i h_i = C).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from .._validate import check_count, is_symbolic
from ..errors import InvalidValueError, ProblemTooLargeError, RoutingError, UnknownNameError
from .stations import SINK, Queue

__all__ = ["CacheStation", "CACHE_POLICIES", "che_characteristic_time", "che_hit_ratios",
           "che_hit_ratio", "check_caches", "fill_cache_rows", "probability_vector",
           "MAX_CATALOG"]

#: the replacement policies a cache knows
CACHE_POLICIES = ("lru", "fifo", "random")

#: catalogs larger than this are refused (the per-item arrays alone would
#: take gigabytes); Che's solve is vectorised and takes about a second at 10^7
MAX_CATALOG = 50_000_000

#: |row entry - Che's split| a cache station's routing row may differ by
SPLIT_TOLERANCE = 1e-9


# ---------------------------------------------------------------------------
# Che's approximation on a probability vector
# ---------------------------------------------------------------------------

def _occupancy(q, T, policy, n, C):
    """f(T) = (expected items in the cache at characteristic time T) - C.

    LRU ([Che]): sum_i (1 - exp(-q_i T)); FIFO/RANDOM ([MGL]):
    sum_i q_i T / (1 + q_i T).  Written as the small terms to avoid
    cancellation: sum (1 - e) when the cache is less than half the catalog,
    (n - C) - sum e (e = exp(-q T) or 1 / (1 + q T)) when it is more.
    """
    x = q * T
    if C <= n / 2:
        inside = -np.expm1(-x) if policy == "lru" else x / (1.0 + x)
        return float(inside.sum()) - C
    out = np.exp(-x) if policy == "lru" else 1.0 / (1.0 + x)
    return (n - C) - float(out.sum())


def che_characteristic_time(q: np.ndarray, capacity: float, policy: str) -> float:
    """Che's characteristic time T_C (in requests) of a cache of
    ``capacity`` items fed by the IRM with the probability vector ``q``
    (validated by the caller).

    Solves, for 0 < C < n+ (n+ the number of items with q_i > 0)::

        LRU ([Che]):          sum_i (1 - exp(-q_i T_C)) = C
        FIFO, RANDOM ([MGL]): sum_i q_i T_C / (1 + q_i T_C) = C

    Both sides increase strictly with T_C, from 0 at T_C = 0 to n+, so the
    root is unique.  It is bracketed in closed form: each term is at most
    q_i T, so the left side is <= T and T_C >= C; each term is at least its
    value at the smallest positive q, so T_C <= -log(1 - C/n+) / q_min (LRU)
    or C / ((n+ - C) q_min) (FIFO/RANDOM).  Brent's method on log T then
    finds it to a relative error of about 1e-14.

    Returns 0 for C = 0 and ``inf`` for C >= n+ (every requested item fits).
    """
    q = q[q > 0]
    n = q.size
    C = float(capacity)
    if C <= 0:
        return 0.0
    if C >= n:
        return math.inf
    from scipy.optimize import brentq

    qmin = float(q.min())
    lo = math.log(C)
    # the bound in log space: 1 / q_min overflows for a subnormal q_min
    hi = math.log(-math.log1p(-C / n) if policy == "lru" else C / (n - C)) - math.log(qmin)
    top = math.log(sys.float_info.max)
    hi = max(min(hi, top), lo + 1e-12)

    def f(x):
        return _occupancy(q, math.exp(x), policy, n, C)

    flo, fhi = f(lo), f(hi)
    if flo >= 0:
        return math.exp(lo)
    while fhi < 0:  # rounding, or a root beyond the float range
        if hi >= top:
            raise InvalidValueError(
                f"cache of {C:g} items: Che's characteristic time exceeds the float range "
                f"(the smallest request probability is {qmin!r}); drop items that are "
                "practically never requested")
        hi = min(hi + 1.0, top)
        fhi = f(hi)
    return math.exp(brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))


def che_hit_ratios(q: np.ndarray, capacity: float, T: float, policy: str) -> np.ndarray:
    """Per-item hit probabilities at characteristic time T: LRU ([Che])
    h_i = 1 - exp(-q_i T); FIFO and RANDOM ([MGL]) h_i = q_i T / (1 + q_i T).
    T = 0 gives 0 for every item, T = inf 1 for every requested item."""
    if T == 0:
        return np.zeros_like(q)
    if math.isinf(T):
        return (q > 0).astype(float) if float(capacity) < q.size else np.ones_like(q)
    x = q * T
    return -np.expm1(-x) if policy == "lru" else x / (1.0 + x)


def che_hit_ratio(q: np.ndarray, capacity: float, policy: str) -> float:
    """h = sum_i q_i h_i, the probability that a request hits, by Che's
    approximation ([Che] for LRU, [MGL] for FIFO and RANDOM)."""
    T = che_characteristic_time(q, capacity, policy)
    if T == 0 or math.isinf(T):  # exactly 0 or 1, not a rounded sum
        return float(T != 0)
    h = float(np.dot(q, che_hit_ratios(q, capacity, T, policy)))
    return min(max(h, 0.0), 1.0)


def probability_vector(raw, who: str, *, normalize: bool = False) -> np.ndarray:
    """``raw`` (a sequence of numbers) as a read-only float vector of request
    probabilities: non-empty, at most :data:`MAX_CATALOG` items, each finite
    and >= 0, not all 0, summing to 1 within 1e-9 (or divided by its sum
    with ``normalize``); an :class:`InvalidValueError` (or
    :class:`ProblemTooLargeError`) naming ``who`` and the offending item
    otherwise.  The one check behind :class:`qmodels.Popularity` and a cache
    station's ``popularity``."""
    try:
        q = np.array(raw, dtype=float).ravel()
    except (TypeError, ValueError):
        raise InvalidValueError(
            f"{who}: probabilities must be real numbers, got {raw!r}") from None
    if q.size == 0:
        raise InvalidValueError(f"{who}: probabilities is empty (no items)")
    if q.size > MAX_CATALOG:
        raise ProblemTooLargeError(f"{who}: a catalog of {q.size} items exceeds {MAX_CATALOG}")
    bad = np.flatnonzero(~np.isfinite(q) | (q < 0))
    if bad.size:
        k = int(bad[0])
        raise InvalidValueError(
            f"{who}: probability of item {k} must be a finite non-negative number, got {q[k]!r}")
    with np.errstate(over="ignore"):
        s = float(q.sum())
    if s <= 0:
        raise InvalidValueError(f"{who}: every probability is 0 (nothing is requested)")
    if normalize:
        if not 2.2250738585072014e-308 <= s < math.inf:
            # weights whose sum overflows (1e308 each) or is subnormal:
            # divide by the largest first, which changes no ratio
            q = q / q.max()
            s = float(q.sum())
        q = q / s
    elif abs(s - 1.0) > 1e-9:
        raise InvalidValueError(
            f"{who}: probabilities must sum to 1, got {s!r} (qmodels.Popularity(weights, "
            "normalize=True) divides weights by their sum)")
    q.flags.writeable = False
    return q


def _catalog(popularity, who: str) -> np.ndarray:
    """The request probabilities of ``popularity`` (an object with
    ``probabilities``, such as :class:`qmodels.Zipf`, or a sequence), as a
    read-only float array summing to 1."""
    raw = getattr(popularity, "probabilities", popularity)
    if raw is None or isinstance(raw, (str, bytes, Mapping)):
        raise InvalidValueError(
            f"{who}: popularity must be a Zipf, a Popularity or a sequence of probabilities, "
            f"got {popularity!r}")
    if isinstance(raw, (list, tuple)) and any(is_symbolic(x) for x in raw):
        raise InvalidValueError(f"{who}: popularity is symbolic; a cache is simulated item by "
                                "item and its hit ratio is numeric: substitute numbers")
    return probability_vector(raw, f"{who}: popularity")


# ---------------------------------------------------------------------------
# the station
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheStation(Queue):
    """A queue whose service is a cache lookup, and whose jobs leave for
    the ``hit`` or the ``miss`` station by the cache's answer.

    Parameters (besides :class:`~qmodels.model.Queue`'s; ``service`` is the
    lookup time, 0 for a routing-only cache)
    ----------
    cache_capacity : int >= 0
        Items the cache holds (equal-size items).
    popularity : Zipf, Popularity or sequence of probabilities
        Request probability of each catalog item (the IRM); the catalog is
        its length.
    policy : {"lru", "fifo", "random"}
    hit, miss : str
        Station a job goes to after a hit, after a miss (``"sink"``: it
        leaves, for an open class; the reference station of a closed class
        ends its cycle there).

    A class routed into the station leaves it by the routing row
    ``station.split()``, ``{hit: h, miss: 1 - h}`` with h Che's hit ratio
    (:attr:`hit_ratio`): a class that gives no row for the station gets it
    filled in; one that gives it must give that split.  The analytic
    methods solve that split (Che's approximation: [Che] for LRU, [MGL] for
    FIFO and RANDOM), the simulator replaces it by the item-level cache.
    Most users build it from the element: ``qm.Cache(100, qm.Zipf(0.8,
    10_000)).station("cache", hit="mem", miss="disk")``.
    """

    cache_capacity: int = field(default=0, kw_only=True)
    popularity: Any = field(default=None, kw_only=True, compare=False, repr=False)
    policy: str = field(default="lru", kw_only=True)
    hit: str = field(default="", kw_only=True)
    miss: str = field(default="", kw_only=True)
    catalog_digest: str = field(default="", kw_only=True, repr=False)

    kind: ClassVar[str] = "queue"

    def __post_init__(self):
        super().__post_init__()
        who = f"cache station {self.name!r}"
        if is_symbolic(self.cache_capacity):
            raise InvalidValueError(f"{who}: cache_capacity is symbolic; substitute a number")
        object.__setattr__(self, "cache_capacity",
                           check_count(self.cache_capacity, f"{who}: cache_capacity",
                                       minimum=0))
        q = _catalog(self.popularity, who)
        object.__setattr__(self, "popularity", q)
        # (hashlib here, not at import: OpenSSL's start is ~4 ms of every
        # `import qmodels`, and most networks have no cache)
        import hashlib

        object.__setattr__(self, "catalog_digest", hashlib.sha1(q.tobytes()).hexdigest())
        pol = self.policy
        if not isinstance(pol, str) or pol.lower() not in CACHE_POLICIES:
            raise InvalidValueError(
                f"{who}: policy must be one of {', '.join(CACHE_POLICIES)}, got {pol!r}")
        object.__setattr__(self, "policy", pol.lower())
        for attr in ("hit", "miss"):
            v = getattr(self, attr)
            if not isinstance(v, str) or not v.strip():
                raise InvalidValueError(
                    f"{who}: {attr} must name the station a job goes to after a {attr} "
                    f"('sink' to leave), got {v!r}")
        if self.hit == self.miss:
            raise InvalidValueError(f"{who}: hit and miss are the same station {self.hit!r}")

    @property
    def items(self) -> int:
        """Catalog size."""
        return int(self.popularity.size)

    @cached_property
    def hit_ratio(self) -> float:
        """Che's hit ratio h of the cache (the analytic split)."""
        return che_hit_ratio(self.popularity, self.cache_capacity, self.policy)

    def split(self) -> dict:
        """The routing row of a class leaving the station:
        ``{hit: h, miss: 1 - h}`` (Che's hit ratio h)."""
        h = self.hit_ratio
        return {self.hit: h, self.miss: 1.0 - h}


def fill_cache_rows(stations, classes) -> tuple:
    """``classes`` with the routing row each one lacks at a cache station
    it is routed into filled in as the station's split
    (:meth:`CacheStation.split`, Che's hit ratio), so a user need not write
    the split: a class that routes to a cache (as itself, or switching into
    it from another class) and gives no row there leaves it by the split.
    A row the user gives is kept and checked by :func:`check_caches`."""
    caches = {s.name: s for s in stations if isinstance(s, CacheStation)}
    if not caches:
        return tuple(classes)
    entering: dict[str, set] = {}       # class name -> caches it enters
    for c in classes:
        routing = getattr(c, "routing", None)
        if not isinstance(routing, Mapping):
            continue
        for row in routing.values():
            if not isinstance(row, Mapping):
                continue        # _check_parts names the malformed row
            for dst in row:
                if isinstance(dst, tuple):
                    st, cls = dst[0], dst[1]
                else:
                    st, cls = dst, c.name
                if st in caches:
                    entering.setdefault(cls, set()).add(st)
    out = []
    for c in classes:
        routing = getattr(c, "routing", None)
        missing = sorted(n for n in entering.get(getattr(c, "name", None), ())
                         if isinstance(routing, Mapping) and n not in routing)
        if missing:
            c = dataclasses.replace(c, routing={**routing,
                                                **{n: caches[n].split() for n in missing}})
        out.append(c)
    return tuple(out)


def check_caches(stations, classes) -> None:
    """Every cache station's hit and miss are known stations (or
    ``"sink"``), and every class routed through it leaves it by Che's split
    (:meth:`CacheStation.split`), the one routing the analytic methods and
    the simulator both honour.  A class given by visits or demands gives
    the split in its visit ratios; only the simulator needs its routing
    (:func:`qmodels.sim.flatten.flatten` refuses it there)."""
    names = {s.name for s in stations}
    for s in stations:
        if not isinstance(s, CacheStation):
            continue
        for attr in ("hit", "miss"):
            dest = getattr(s, attr)
            if dest != SINK and dest not in names:
                raise UnknownNameError(
                    f"cache station {s.name!r}: {attr} names unknown station {dest!r}")
        want = s.split()
        for c in classes:
            row = (c.routing or {}).get(s.name)
            if row is None:
                continue
            who = f"class {c.name!r} at cache station {s.name!r}"
            for key, p in row.items():
                if isinstance(key, tuple):
                    raise RoutingError(
                        f"{who}: a class switch on leaving a cache ({key!r}) is not modelled; "
                        f"route to {s.hit!r} / {s.miss!r} as the same class")
                if key not in want:
                    raise RoutingError(
                        f"{who}: routes to {key!r}; a cache sends a job to its hit station "
                        f"{s.hit!r} or its miss station {s.miss!r} only")
                if is_symbolic(p):
                    raise RoutingError(f"{who}: routing entry {key!r} is symbolic ({p}); a "
                                       f"cache's split is Che's hit ratio, give station.split()")
            for key, w in want.items():
                p = float(row.get(key, 0.0))
                if abs(p - w) > SPLIT_TOLERANCE:
                    raise RoutingError(
                        f"{who}: routes {p!r} of its jobs to {key!r}, but the cache's split by "
                        f"Che's approximation gives {w!r}; give the row station.split() "
                        f"({ {k: round(v, 6) for k, v in want.items()} })")
