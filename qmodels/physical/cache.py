"""Caches and working sets: hit ratios from popularity, and the memory cliff.

Three things live here:

- popularity models, :class:`Zipf` and :class:`Popularity` (an empirical
  vector of request probabilities), under the independent reference model
  (IRM: each request is for item i with probability q_i, independently of
  every other request);
- :class:`Cache`, a cache of ``capacity`` items with an LRU, FIFO or
  RANDOM replacement policy: per-item and overall hit ratios from Che's
  approximation, :meth:`Cache.split` to turn one route of a network into a
  hit path and a miss path, :meth:`Cache.station` with ``hit=`` and
  ``miss=`` to put the cache itself in a network (a
  :class:`~qmodels.model.CacheStation`: the analytic methods solve Che's
  split, the simulator runs the cache item by item inside its event loop
  and routes each job by the lookup's outcome), and :meth:`Cache.simulate`,
  an item-by-item simulation of the same cache alone with a batch-means
  confidence interval;
- :class:`WorkingSet`, a planner's rule for the demand of a node that holds
  ``data / nodes`` bytes in ``memory`` bytes: the spilled part is paid at a
  slow-tier cost per byte, so the demand per node falls faster than
  ``1 / nodes`` until the share fits (KOSMOS's super-linear speed-up), and
  a sequential re-scan under LRU shows the all-or-nothing cliff of the IOR
  re-read (:mod:`qmodels.cases.manycore`).

The hit ratios are numeric: Che's characteristic time solves a
transcendental equation, so a symbolic capacity or popularity is refused
(:class:`~qmodels.errors.UnsupportedModelError`).  :class:`WorkingSet`
accepts sympy expressions throughout.

References
----------
.. [Che] H. Che, Y. Tung & Z. Wang, "Hierarchical Web caching systems:
   modeling, design and experimental results", IEEE J. Selected Areas in
   Communications 20(7), 2002, pp. 1305-1314 (the characteristic
   time T_C of an LRU cache: sum_i (1 - exp(-q_i T_C)) = C, hit
   probability 1 - exp(-q_i T_C)).
.. [FRR] C. Fricker, P. Robert & J. Roberts, "A versatile and accurate
   approximation for LRU cache performance", 24th International
   Teletraffic Congress (ITC 24), 2012 (why Che's approximation is
   accurate: the number of distinct items requested in time T
   concentrates around its mean when many items share the cache, so the
   error vanishes as the catalog and the cache grow).
.. [MGL] V. Martina, M. Garetto & E. Leonardi, "A unified approach to the
   performance analysis of caching systems", IEEE INFOCOM 2014 (FIFO and
   RANDOM under the IRM: an item stays a time T_C after its
   insertion regardless of requests, giving h_i = q_i T_C / (1 + q_i T_C)
   with sum_i h_i = C).
.. [Gelenbe] E. Gelenbe, "A unified approach to the evaluation of a class
   of replacement algorithms", IEEE Trans. Computers C-22(6), 1973 (FIFO
   and RANDOM have the same stationary distribution of cache contents
   under the IRM, P(S) proportional to prod_{i in S} q_i).
.. [King] W. F. King III, "Analysis of demand paging algorithms", IFIP
   Congress 1971 (exact LRU under the IRM: the ordered
   content (i_1 .. i_C), most recent first, has probability
   prod_k q_{i_k} / (1 - q_{i_1} - ... - q_{i_{k-1}})).
.. [Jel] P. R. Jelenkovic, "Asymptotic approximation of the move-to-front
   search cost distribution and least-recently used caching fault
   probabilities", Annals of Applied Probability 9(2), 1999, pp. 430-464
   (for q_i ~ c / i^alpha, alpha > 1, the LRU miss ratio over the optimal
   static one tends to (1 - 1/alpha) Gamma(1 - 1/alpha)^alpha; Che's
   approximation reproduces the constant, ``tests/test_cache.py``).
.. [LIRS] S. Jiang & X. Zhang, "LIRS: an efficient low inter-reference
   recency set replacement policy", SIGMETRICS 2002, sec. 1 (LRU on a loop
   larger than the cache misses every reference).
.. [LK] A. M. Law & W. D. Kelton, *Simulation Modeling and Analysis*, 3rd
   ed., McGraw-Hill 2000, sec. 9.5.3 (batch means).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from .._jit import njit
from .._validate import Number, check_count, check_real, is_symbolic
from ..errors import InvalidValueError, ProblemTooLargeError, UnsupportedModelError
from ..model.caching import (
    MAX_CATALOG,
    che_characteristic_time,
    che_hit_ratios,
    probability_vector,
)
from ._common import Element, _any_sym, _nonneg, _pos

__all__ = ["Zipf", "Popularity", "Cache", "CacheSimResult", "WorkingSet", "POLICIES",
           "characteristic_time", "item_hit_ratios", "simulate_cache", "loop_hit_ratio",
           "exact_hit_ratio"]

#: the replacement policies :class:`Cache` knows
POLICIES = ("lru", "fifo", "random")

#: catalogs larger than this are refused (the per-item arrays alone would
#: take gigabytes); Che's solve is vectorised and takes about a second at 10^7
MAX_ITEMS = MAX_CATALOG
#: Most requests (warm-up included) :func:`simulate_cache` serves: at about
#: 0.5 microsecond each on the 2-core reference machine (10^7 in 5 s), a
#: couple of minutes.
MAX_SIM_REQUESTS = 200_000_000


def _numeric(value, what):
    if is_symbolic(value):
        raise UnsupportedModelError(
            f"{what} is symbolic ({value}); cache hit ratios are numeric (Che's "
            f"characteristic time solves a transcendental equation): substitute numbers")
    return value


# ---------------------------------------------------------------------------
# popularity
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Zipf:
    """Zipf popularity: item i (1-based rank) is requested with probability
    q_i = i^-alpha / sum_{j=1}^{items} j^-alpha.

    Parameters
    ----------
    alpha : float >= 0
        The exponent (0 is uniform; web and video catalogs are often
        measured between 0.6 and 1.2; alpha may equal or exceed 1, the sum
        is finite because the catalog is).
    items : int >= 1
        Catalog size.

    Examples
    --------
    >>> import qmodels as qm
    >>> qm.Zipf(1.0, 3).probabilities.round(4).tolist()
    [0.5455, 0.2727, 0.1818]
    """

    alpha: float
    items: int

    def __post_init__(self):
        a = check_real(_numeric(self.alpha, "Zipf: alpha"), "Zipf: alpha")
        object.__setattr__(self, "alpha", float(a))
        n = check_count(_numeric(self.items, "Zipf: items"), "Zipf: items", minimum=1)
        if n > MAX_ITEMS:
            from ..errors import ProblemTooLargeError

            raise ProblemTooLargeError(f"Zipf: items = {n} exceeds {MAX_ITEMS}")
        object.__setattr__(self, "items", n)

    @cached_property
    def probabilities(self) -> np.ndarray:
        """q_i, i = 1..items, most popular first (a read-only float array)."""
        ranks = np.arange(1, self.items + 1, dtype=float)
        w = ranks ** -self.alpha if self.alpha else np.ones(self.items)
        q = w / w.sum()
        q.flags.writeable = False
        return q


@dataclass(frozen=True, eq=False)
class Popularity:
    """An empirical popularity: the request probability of each item.

    Parameters
    ----------
    probabilities : sequence of float
        q_i >= 0, one per item, summing to 1 (within 1e-9), or any
        non-negative weights with ``normalize=True``.  Items with q_i = 0
        are never requested (they count in ``items`` but never in a cache).
    normalize : bool
        Divide the weights by their sum.

    Examples
    --------
    >>> import qmodels as qm
    >>> qm.Popularity([3, 1], normalize=True).probabilities.tolist()
    [0.75, 0.25]
    """

    probabilities: np.ndarray
    normalize: bool = field(default=False, kw_only=True)

    def __post_init__(self):
        raw = self.probabilities
        try:
            q = probability_vector(raw, "Popularity", normalize=self.normalize)
        except InvalidValueError:
            if isinstance(raw, (list, tuple)):      # name a symbolic item
                for k, v in enumerate(raw):
                    _numeric(v, f"Popularity: probability of item {k}")
            raise
        object.__setattr__(self, "probabilities", q)

    @property
    def items(self) -> int:
        return int(self.probabilities.size)


def _probabilities(q) -> np.ndarray:
    """q as a validated probability vector (no copy if it is a popularity's)."""
    if isinstance(q, (Zipf, Popularity)):
        return q.probabilities
    return Popularity(q).probabilities


def _policy(policy, who):
    if not isinstance(policy, str) or policy.lower() not in POLICIES:
        raise InvalidValueError(
            f"{who}: policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    return policy.lower()


def _popularity(p):
    if isinstance(p, (Zipf, Popularity)):
        return p
    if isinstance(p, (list, tuple, np.ndarray)):
        return Popularity(p)
    raise InvalidValueError(
        f"Cache: popularity must be a Zipf, a Popularity or a sequence of probabilities, "
        f"got {p!r}")


# ---------------------------------------------------------------------------
# Che's approximation
# ---------------------------------------------------------------------------

def characteristic_time(q, capacity, policy: str = "lru") -> float:
    """Che's characteristic time T_C (in requests) of a cache of
    ``capacity`` items fed by the IRM with probabilities ``q``: the root of
    sum_i (1 - exp(-q_i T_C)) = C for LRU ([Che]) and of
    sum_i q_i T_C / (1 + q_i T_C) = C for FIFO and RANDOM ([MGL]), solved
    (bracket, uniqueness, accuracy) by
    :func:`qmodels.model.caching.che_characteristic_time`.

    Returns 0 for C = 0 and ``inf`` for C >= n+ (every requested item fits).
    ``q``: a :class:`Zipf`, a :class:`Popularity` or a probability vector
    (validated as a :class:`Popularity`).
    """
    q = _probabilities(q)
    policy = _policy(policy, "characteristic_time")
    C = check_real(_numeric(capacity, "characteristic_time: capacity"),
                   "characteristic_time: capacity")
    return che_characteristic_time(q, float(C), policy)


def item_hit_ratios(q, capacity, policy: str = "lru") -> np.ndarray:
    """Per-item hit probabilities h_i of Che's approximation.

    LRU ([Che]): h_i = 1 - exp(-q_i T_C); FIFO and RANDOM ([MGL]):
    h_i = q_i T_C / (1 + q_i T_C); T_C from :func:`characteristic_time`.
    C = 0 gives 0 for every item, C >= n+ gives 1 for every requested item.
    """
    pop = q if isinstance(q, (Zipf, Popularity)) else Popularity(q)
    policy = _policy(policy, "item_hit_ratios")
    return _hit_ratios_at(pop.probabilities, capacity, characteristic_time(pop, capacity, policy),
                          policy)


def _hit_ratios_at(q, capacity, T, policy) -> np.ndarray:
    """h_i at characteristic time T (see :func:`item_hit_ratios`)."""
    return che_hit_ratios(q, capacity, T, policy)


def loop_hit_ratio(items, capacity, policy: str = "lru") -> float:
    """Hit ratio of a cache re-reading a loop of ``items`` distinct items in
    the same order for ever (a sequential re-scan: not the IRM).

    LRU and FIFO: 1 if the loop fits, else 0: each item is evicted just
    before its reuse ([LIRS]; with every reference a miss, FIFO evicts in
    LRU's order).  RANDOM keeps part of the loop.  Between two references to
    an item there are F - 1 others, (F - 1)(1 - h) of them misses, each
    evicting the item with probability 1/C; taking that count at its mean
    (a mean-field step in the spirit of [Che], derived here, not from a
    paper) gives h = (1 - 1/C)^((F - 1)(1 - h)), whose root below 1 is::

        h = -W0(-a exp(-a)) / a,   a = -(F - 1) log(1 - 1/C)

    (W0 the principal Lambert W; h = 1 is the other root, the loop fitting).
    Measured against the item simulator: within 0.01 absolute for
    F >= 100, 0.001 for F >= 1000 (it overestimates small loops, up to
    0.09 at F = 10, C = 9: the count of misses is not at its mean);
    ``tests/test_cache.py`` checks F = 1000.  At F = 2C it gives 0.20, well below the
    C / F = 0.5 a random subset of the loop would give.
    """
    F = check_count(_numeric(items, "loop_hit_ratio: items"), "loop_hit_ratio: items",
                    minimum=1)
    C = check_count(_numeric(capacity, "loop_hit_ratio: capacity"),
                    "loop_hit_ratio: capacity", minimum=0)
    policy = _policy(policy, "loop_hit_ratio")
    if C >= F:
        return 1.0
    if C == 0 or policy != "random" or C == 1:
        return 0.0
    from scipy.special import lambertw

    a = -(F - 1) * math.log1p(-1.0 / C)
    if a <= 1:  # only the root h = 1 (cannot happen for F > C >= 2, kept as a guard)
        return 1.0
    return float(min(max(-lambertw(-a * math.exp(-a), 0).real / a, 0.0), 1.0))


# ---------------------------------------------------------------------------
# the cache element
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Cache(Element):
    """A cache of ``capacity`` items in front of a slower store.

    Parameters
    ----------
    capacity : int >= 0
        Items the cache holds (pages, blocks, objects of equal size).
    popularity : Zipf, Popularity or sequence of probabilities
        The request probability of each item (the IRM).
    policy : {"lru", "fifo", "random"}
        Replacement policy.
    lookup : float, optional
        Seconds per lookup, for :meth:`station` (a hit served at memory
        speed, say); not needed for hit ratios or :meth:`split`.

    Notes
    -----
    Hit ratios come from Che's approximation ([Che] for LRU, [MGL] for
    FIFO and RANDOM): an item stays in the cache for the characteristic
    time T_C (in requests) after its last request (LRU) or after its
    insertion (FIFO, RANDOM), so::

        LRU:         h_i = 1 - exp(-q_i T_C),        sum_i h_i = C
        FIFO/RANDOM: h_i = q_i T_C / (1 + q_i T_C),  sum_i h_i = C

    and the overall hit ratio is h = sum_i q_i h_i.  Assumptions: the IRM
    (no temporal locality beyond popularity; a sequential re-scan is not
    IRM, see :class:`WorkingSet` ``access="scan"``), equal-size items, a
    stationary cache (warm).  Accuracy: for uniform popularity it is exact
    (h = C / n, by symmetry); for large caches under Zipf it is
    asymptotically exact ([FRR]; it reproduces [Jel]'s LRU constant).
    Measured against the item simulator on a Zipf catalog of 1,000 items,
    alpha 0.6-1.2, C = 10, 50, 200: at most 0.001 absolute for LRU and
    0.006 for FIFO/RANDOM (whose version is coarser for small caches);
    against the exact [King] / [Gelenbe] laws on 7 items, up to 0.015 (LRU)
    and 0.027 (FIFO/RANDOM): do not use it for a handful of items
    (``python -m validation.cache_che_accuracy``).  Numeric only: a
    symbolic capacity is refused.

    Examples
    --------
    A web tier: every request costs CPU, a hit is served from memory, a miss
    goes to disk.  The cache's split puts the hit and miss visit ratios in
    the class's visits, and the disk demand falls as the cache grows:

    >>> import qmodels as qm
    >>> def model(capacity):
    ...     cache = qm.Cache(capacity, qm.Zipf(0.8, 10_000))
    ...     return qm.Network(
    ...         [qm.Queue("cpu", 0.002), qm.Queue("mem", 0.0002), qm.Queue("disk", 0.008)],
    ...         [qm.Closed("req", 20, think_time=0.1,
    ...                    visits={"cpu": 1, **cache.split(hit="mem", miss="disk")})])
    >>> for c in (100, 1_000, 5_000):  # capacity, disk demand (ms), throughput (1/s)
    ...     net = model(c)
    ...     print(c, round(net.demands[0, 2] * 1e3, 3), round(qm.mva(net).X["req"], 1))
    100 6.747 140.8
    1000 4.507 170.8
    5000 1.667 189.4
    """

    capacity: int
    popularity: object
    policy: str = "lru"
    lookup: Number | None = None

    default_name: ClassVar[str] = "cache"

    def __post_init__(self):
        c = check_count(_numeric(self.capacity, "Cache: capacity"), "Cache: capacity",
                        minimum=0)
        object.__setattr__(self, "capacity", c)
        object.__setattr__(self, "popularity", _popularity(self.popularity))
        object.__setattr__(self, "policy", _policy(self.policy, "Cache"))
        if self.lookup is not None:
            object.__setattr__(self, "lookup", _nonneg(self.lookup, "Cache: lookup"))

    # -- analytic ---------------------------------------------------------------
    @property
    def items(self) -> int:
        """Catalog size."""
        return self.popularity.items

    @cached_property
    def characteristic_time(self) -> float:
        """T_C in requests (0 for an empty cache, ``inf`` when every
        requested item fits); see :func:`characteristic_time`."""
        return characteristic_time(self.popularity, self.capacity, self.policy)

    @cached_property
    def item_hit_ratios(self) -> np.ndarray:
        """h_i for each item (in the popularity's order), a read-only array."""
        # at the T_C already solved for this cache (one root-finding, not two)
        h = _hit_ratios_at(self.popularity.probabilities, self.capacity,
                           self.characteristic_time, self.policy)
        h.flags.writeable = False
        return h

    @cached_property
    def hit_ratio(self) -> float:
        """h = sum_i q_i h_i, the probability that a request hits."""
        T = self.characteristic_time
        if T == 0 or math.isinf(T):  # exactly 0 or 1, not a rounded sum
            return float(T != 0)
        h = float(np.dot(self.popularity.probabilities, self.item_hit_ratios))
        return min(max(h, 0.0), 1.0)

    @property
    def miss_ratio(self) -> float:
        """1 - h."""
        return 1.0 - self.hit_ratio

    def split(self, hit: str | None, miss: str, visits=1.0) -> dict:
        """The hit path and the miss path of one route, as a mapping.

        Returns ``{hit: visits h, miss: visits (1 - h)}``: with ``visits``
        1 it is a routing row (probabilities summing to 1); with the visit
        ratio of the route it is the visit ratios to put in a class's
        ``visits``.  ``hit=None`` drops the hit path (a hit costs nothing
        downstream); the stations behind ``miss`` see the miss traffic only.
        Flow is conserved: the two entries sum to ``visits``.
        """
        v = check_real(visits, "Cache.split: visits")
        if not isinstance(miss, str) or not miss.strip():
            raise InvalidValueError(f"Cache.split: miss must be a station name, got {miss!r}")
        if hit is None:
            return {miss: v * self.miss_ratio}
        if not isinstance(hit, str) or not hit.strip():
            raise InvalidValueError(f"Cache.split: hit must be a station name, got {hit!r}")
        if hit == miss:
            raise InvalidValueError(
                f"Cache.split: hit and miss are the same station {hit!r}")
        return {hit: v * self.hit_ratio, miss: v * self.miss_ratio}

    def station(self, name: str | None = None, *, hit: str | None = None,
                miss: str | None = None, **kw):
        """A station for this cache.

        Without ``hit`` and ``miss``: a :class:`~qmodels.model.Queue` whose
        service is the lookup (``lookup`` must be set).  With them: a
        :class:`~qmodels.model.CacheStation` (service ``lookup``, 0 if
        unset) that sends each job on to ``hit`` or ``miss``; classes
        routed through it give it the row :meth:`split` ``(hit, miss)``
        (Che's split, which the analytic methods solve), and the simulator
        runs this cache item by item instead, routing each job by the
        cache's state.  ``kw`` goes to the station (``servers``,
        ``discipline``, ``distribution``, ``power``, ``capacity``).
        """
        if hit is None and miss is None:
            return super().station(name, **kw)
        if hit is None or miss is None:
            raise InvalidValueError(
                "Cache.station: give both hit and miss (the stations a job goes to after a "
                "hit and after a miss; 'sink' to leave), or neither for a plain lookup queue")
        from ..model.caching import CacheStation

        for own in ("cache_capacity", "popularity", "policy", "catalog_digest"):
            kw.pop(own, None)  # this element's own (a sweep passes the station's back)
        kw.setdefault("servers", 1)
        return CacheStation(name or self.default_name,
                            0.0 if self.lookup is None else self.lookup,
                            cache_capacity=self.capacity,
                            popularity=self.popularity.probabilities, policy=self.policy,
                            hit=hit, miss=miss, element=self, **kw)

    @property
    def service_time(self):
        if self.lookup is None:
            raise InvalidValueError(
                "Cache: lookup (seconds per lookup) is not set; give lookup=... to build "
                "a lookup station")
        return self.lookup

    # -- simulation -------------------------------------------------------------
    def simulate(self, requests: int = 1_000_000, *, seed: int = 1, warmup: int | None = None,
                 batches: int = 20, level: float = 0.95) -> "CacheSimResult":
        """Item-by-item simulation of this cache under the IRM.

        ``warmup`` requests (default: 10 x capacity, at least 10 % of
        ``requests``) fill the cache and are discarded; the next
        ``requests`` are cut into ``batches`` equal batches whose hit ratios
        give a Student-t confidence interval at ``level`` (batch means,
        [LK] sec. 9.5.3: batches of many times the cache's turnover are
        nearly independent).  Requests are drawn with a
        :class:`numpy.random.Generator` seeded with ``seed``, in chunks, and
        RANDOM's victims from the same generator: the same seed gives the
        same numbers.
        """
        return simulate_cache(self, requests, seed=seed, warmup=warmup, batches=batches,
                              level=level)


@dataclass(frozen=True)
class CacheSimResult:
    """Hit ratio of a simulated cache with its confidence interval."""

    hit_ratio: float
    half_width: float
    level: float
    requests: int
    warmup: int
    batches: int
    policy: str
    seed: int
    batch_hit_ratios: tuple = field(repr=False)

    @property
    def ci(self) -> tuple:
        """(low, high) at ``level``."""
        return (self.hit_ratio - self.half_width, self.hit_ratio + self.half_width)

    def contains(self, value: float) -> bool:
        lo, hi = self.ci
        return lo <= value <= hi


_LRU, _FIFO, _RANDOM = 0, 1, 2


@njit
def _cache_run(reqs, victims, policy, capacity, where, slots, prev, nxt, state, hits):
    """Serve ``reqs`` in order; hits[k] = 1 if request k hits.

    State (kept across calls): ``where[i]`` is item i's slot (-1: not
    cached); ``slots`` the item in each slot (FIFO, RANDOM); ``prev``/``nxt``
    the LRU list (most recent at ``state[1]``, least at ``state[2]``);
    ``state[0]`` the items cached, ``state[3]`` FIFO's next victim slot.
    """
    for k in range(reqs.size):
        i = reqs[k]
        if where[i] >= 0:
            hits[k] = 1
            if policy == _LRU and state[1] != i:  # move to front
                p = prev[i]
                nx = nxt[i]
                nxt[p] = nx
                if nx >= 0:
                    prev[nx] = p
                else:
                    state[2] = p
                prev[i] = -1
                nxt[i] = state[1]
                prev[state[1]] = i
                state[1] = i
            continue
        hits[k] = 0
        if capacity == 0:
            continue
        if policy == _LRU:
            if state[0] == capacity:  # evict the tail
                t = state[2]
                where[t] = -1
                p = prev[t]
                state[2] = p
                if p >= 0:
                    nxt[p] = -1
                else:
                    state[1] = -1
                state[0] -= 1
            where[i] = 0
            prev[i] = -1
            nxt[i] = state[1]
            if state[1] >= 0:
                prev[state[1]] = i
            else:
                state[2] = i
            state[1] = i
            state[0] += 1
        else:
            if state[0] < capacity:
                s = state[0]
                state[0] += 1
            elif policy == _FIFO:
                s = state[3]
                state[3] = (s + 1) % capacity
                where[slots[s]] = -1
            else:
                s = victims[k]
                where[slots[s]] = -1
            slots[s] = i
            where[i] = s


def simulate_cache(cache: Cache, requests: int = 1_000_000, *, seed: int = 1,
                   warmup: int | None = None, batches: int = 20,
                   level: float = 0.95) -> CacheSimResult:
    """Item-by-item simulation of ``cache``; see :meth:`Cache.simulate`."""
    requests = check_count(requests, "simulate_cache: requests", minimum=1)
    batches = check_count(batches, "simulate_cache: batches", minimum=2)
    seed = check_count(seed, "simulate_cache: seed", minimum=0)
    if not 0 < float(level) < 1:
        raise InvalidValueError(f"simulate_cache: level must be in (0, 1), got {level!r}")
    if requests < batches:
        raise InvalidValueError(
            f"simulate_cache: requests = {requests} is fewer than batches = {batches}")
    q = cache.popularity.probabilities
    n = q.size
    # a cache of at least n items holds every item: it behaves as one of
    # exactly n (never full, nothing evicted), which bounds its slots
    C = min(int(cache.capacity), n)
    if warmup is None:
        warmup = max(10 * C, requests // 10)
    warmup = check_count(warmup, "simulate_cache: warmup", minimum=0)
    if requests + warmup > MAX_SIM_REQUESTS:
        raise ProblemTooLargeError(
            f"simulate_cache: requests = {requests} and warmup = {warmup} make "
            f"{requests + warmup:.3g} requests, past the limit {MAX_SIM_REQUESTS:.0e} (each "
            "is drawn and served one by one, about a microsecond each): ask for fewer "
            "requests (the half-width shrinks as 1/sqrt(requests)), or use the analytic "
            "Cache.hit_ratio (Che's approximation)")
    cdf = np.cumsum(q)
    cdf /= cdf[-1]
    policy = {"lru": _LRU, "fifo": _FIFO, "random": _RANDOM}[cache.policy]
    rng = np.random.default_rng(seed)
    where = np.full(n, -1, dtype=np.int64)
    slots = np.full(max(C, 1), -1, dtype=np.int64)
    prev = np.full(n if policy == _LRU else 1, -1, dtype=np.int64)
    nxt = np.full(n if policy == _LRU else 1, -1, dtype=np.int64)
    state = np.array([0, -1, -1, 0], dtype=np.int64)
    chunk = 1 << 20

    def run(count):
        hit = 0
        while count:
            m = min(count, chunk)
            # inverse-cdf sampling; the clip guards a u within rounding of 1
            reqs = np.minimum(np.searchsorted(cdf, rng.random(m), side="right"), n - 1)
            victims = (rng.integers(0, C, m) if policy == _RANDOM and C
                       else np.zeros(1, dtype=np.int64))
            flags = np.empty(m, dtype=np.uint8)
            _cache_run(reqs.astype(np.int64), victims.astype(np.int64), policy, C, where,
                       slots, prev, nxt, state, flags)
            hit += int(flags.sum())
            count -= m
        return hit

    run(warmup)
    size = requests // batches
    ratios = np.array([run(size) / size for _ in range(batches)])
    from scipy.stats import t as student

    mean = float(ratios.mean())
    hw = float(student.ppf(0.5 + float(level) / 2, batches - 1)
               * ratios.std(ddof=1) / math.sqrt(batches))
    return CacheSimResult(mean, hw, float(level), size * batches, warmup, batches,
                          cache.policy, seed, tuple(float(r) for r in ratios))


# ---------------------------------------------------------------------------
# working sets
# ---------------------------------------------------------------------------

_ACCESS = ("random", "scan")


@dataclass(frozen=True)
class WorkingSet(Element):
    """Demand of one node of a data-parallel job whose share of the data
    may not fit in its memory (a planner's model, not a law).

    Parameters
    ----------
    data : bytes of the whole data set, split evenly over the nodes.
    nodes : number of nodes (a positive integer or a sympy symbol).
    memory : bytes of memory per node available to the data.
    time_per_byte : s per byte processed from memory (the in-memory work).
    spill_time_per_byte : s per byte that has to come from the slow tier
        (disk, SSD, a remote node) because it was not resident, on top of
        ``time_per_byte``.
    passes : how many times the job touches its whole share (iterations of
        a graph algorithm, say); default 1.
    access : {"random", "scan"}
        How the share is touched within a pass (see Notes).

    Notes
    -----
    With d = data / nodes bytes per node and M = memory::

        D = passes (d time_per_byte + d m(d) spill_time_per_byte)   [s]

    where m(d) is the fraction of the bytes touched that are not resident:

    ``access="random"`` (default)
        Each touch picks a byte (page) uniformly at random (the IRM with
        uniform popularity).  For any demand-paging policy (LRU, FIFO,
        RANDOM) the stationary miss ratio is then exactly 1 - M/d when
        d > M: by symmetry every page is resident with probability M/d
        (it is Che's formula with uniform q, which is exact:
        :class:`Cache` with a uniform :class:`Popularity`).  So
        d m(d) = max(d - M, 0), the spilled bytes, and D is continuous at
        the switch point d = M, i.e. nodes* = data / M.
    ``access="scan"``
        Each pass reads the share sequentially, in the same order, as an
        iterative job or an IOR re-read does.  Under LRU a loop larger than
        the memory evicts every page before its reuse ([LIRS]): m(d) = 1
        when d > M and 0 otherwise, the all-or-nothing cliff
        (:mod:`qmodels.cases.manycore`'s IOR model).  D jumps at nodes*.

    Below nodes* (d > M) the demand per node is
    passes ((time_per_byte + spill_time_per_byte) d - spill_time_per_byte M)
    for random access: adding nodes shrinks both the share and the spilled
    part, so the speed-up D(1) / D(n) exceeds n (super-linear) until the
    share fits; above nodes* D = passes d time_per_byte falls as 1/n.  At
    n = nodes* the speed-up over one node is
    nodes* (1 + (spill/time)(1 - M/data)).

    What it ignores: the cold start (the first pass reads everything once,
    add it to ``time_per_byte`` if it matters), memory taken by code,
    buffers and the OS, skewed access (a hot subset fits long before the
    whole share does: use :class:`Cache` with a :class:`Zipf` popularity),
    prefetching and overlap of spill I/O with computation, communication
    between nodes (model it as its own station) and load imbalance.

    Examples
    --------
    >>> import sympy as sp
    >>> import qmodels as qm
    >>> n = sp.Symbol("n", positive=True)
    >>> ws = qm.WorkingSet(data=64e9, nodes=n, memory=8e9, time_per_byte=1e-9,
    ...                    spill_time_per_byte=1e-8)
    >>> ws.switch_nodes
    8.0
    >>> [round(float(ws.demand.subs(n, k)), 1) for k in (1, 4, 8, 16)]
    [624.0, 96.0, 8.0, 4.0]
    """

    data: Number
    nodes: Number
    memory: Number
    time_per_byte: Number
    spill_time_per_byte: Number
    passes: Number = 1
    access: str = "random"

    default_name: ClassVar[str] = "node"

    def __post_init__(self):
        for name in ("data", "memory", "time_per_byte", "passes"):
            object.__setattr__(self, name, _pos(getattr(self, name), f"WorkingSet: {name}"))
        object.__setattr__(self, "spill_time_per_byte",
                           _nonneg(self.spill_time_per_byte, "WorkingSet: spill_time_per_byte"))
        object.__setattr__(self, "nodes",
                           check_count(self.nodes, "WorkingSet: nodes", minimum=1)
                           if not is_symbolic(self.nodes)
                           else _pos(self.nodes, "WorkingSet: nodes"))
        if self.access not in _ACCESS:
            raise InvalidValueError(
                f"WorkingSet: access must be 'random' or 'scan', got {self.access!r}")

    @property
    def per_node(self):
        """d = data / nodes, bytes per node."""
        return self.data / self.nodes

    @property
    def switch_nodes(self):
        """nodes* = data / memory: from this many nodes on, the share fits."""
        return self.data / self.memory

    @property
    def spilled(self):
        """Bytes per pass that come from the slow tier: max(d - M, 0) for
        random access, d (if d > M, else 0) for a scan."""
        d, M = self.per_node, self.memory
        if self.access == "random":
            if _any_sym(d, M):
                import sympy as sp

                return sp.Max(d - M, 0)
            return max(d - M, 0)
        if _any_sym(d, M):
            import sympy as sp

            return sp.Piecewise((d, d > M), (0, True))
        return d if d > M else 0

    @property
    def demand(self):
        """D = passes (d time_per_byte + spilled spill_time_per_byte), s.

        A numeric D that leaves the floating-point range (an overflow to
        inf, or an underflow to 0 from positive parameters) is refused by
        name rather than returned (a speed-up of inf / inf would be NaN)."""
        D = self.passes * (self.per_node * self.time_per_byte
                           + self.spilled * self.spill_time_per_byte)
        if _any_sym(D):
            return D
        with np.errstate(over="ignore", under="ignore"):
            v = float(D)
        if not 0 < v < math.inf:
            raise InvalidValueError(
                f"WorkingSet: the demand per node, passes ({self.passes!r}) x (data / nodes "
                f"({self.per_node!r} B) x time_per_byte ({self.time_per_byte!r}) + spilled "
                f"bytes x spill_time_per_byte ({self.spill_time_per_byte!r})), is {v!r}: "
                "outside the floating-point range; state data and times in larger or "
                "smaller units (e.g. GB and seconds per GB)")
        return D

    @property
    def service_time(self):
        return self.demand

    @property
    def speedup(self):
        """D(1 node) / D(nodes): above ``nodes`` while the share spills
        (super-linear), equal to it only when nothing spills at 1 node."""
        import dataclasses

        return dataclasses.replace(self, nodes=1).demand / self.demand

    def piecewise(self):
        """D as a sympy Piecewise in its two regimes (spilling, fitting)."""
        import sympy as sp

        d, M, p = self.per_node, self.memory, self.passes
        t, s = self.time_per_byte, self.spill_time_per_byte
        spill = (d - M) if self.access == "random" else d
        return sp.Piecewise((p * (d * t + spill * s), sp.sympify(d) > M), (p * d * t, True))


#: most terms (ordered or unordered cache contents) exact_hit_ratio sums
EXACT_MAX_TERMS = 2_000_000


def exact_hit_ratio(probabilities, capacity: int, policy: str = "lru") -> float:
    """The exact stationary hit ratio of a small cache under the independent
    reference model, the reference Che's approximation is measured against.

    LRU ([King]): the cache's contents in recency order s_1..s_C have
    probability prod_i q_{s_i} / (1 - q_{s_1} - ... - q_{s_{i-1}}), and the
    hit ratio is the mean of q_{s_1} + ... + q_{s_C} over them.  FIFO and
    RANDOM ([Gelenbe]): the content set S has probability proportional to
    prod_{i in S} q_i (a product form), and the hit ratio is the mean of
    sum_{i in S} q_i.  Sums over every ordered (LRU) or unordered content of
    ``capacity`` items, so only for small catalogs: more than
    :data:`EXACT_MAX_TERMS` terms is a ProblemTooLargeError.
    """
    import itertools

    from ..errors import ProblemTooLargeError

    q = [float(x) for x in probabilities]
    n, C = len(q), int(capacity)
    if policy not in POLICIES:
        raise InvalidValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if not 0 <= C <= n:
        raise InvalidValueError(f"capacity must be 0..{n} (the items), got {capacity!r}")
    terms = math.perm(n, C) if policy == "lru" else math.comb(n, C)
    if terms > EXACT_MAX_TERMS:
        raise ProblemTooLargeError(
            f"the exact {policy} hit ratio of {C} of {n} items sums {terms:.3g} cache contents "
            f"(limit {EXACT_MAX_TERMS:.0e}): use Cache(...).hit_ratio (Che) or simulate()")
    if policy == "lru":
        total = 0.0
        for seq in itertools.permutations(range(n), C):
            p, used = 1.0, 0.0
            for i in seq:
                p *= q[i] / (1.0 - used)
                used += q[i]
            total += p * used
        return total
    num = den = 0.0
    for s_ in itertools.combinations(range(n), C):
        w = math.prod(q[i] for i in s_)
        num += w * sum(q[i] for i in s_)
        den += w
    return num / den
