"""Held resources: the :class:`TokenPool` (a passive resource of several
tokens held across a stretch of stations), the chains of stations a class
given by visits holds pools along (:func:`pool_chains`), and the stations a
class visits while it holds a token (:func:`class_pool_span`), read from its
routing or from the pool's ``path``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._validate import MAX_INT64, check_count, check_name, is_symbolic
from ..errors import InvalidValueError, UnknownNameError, UnsupportedModelError

if TYPE_CHECKING:
    from .network import Network

__all__ = ["TokenPool", "pool_chains", "class_pool_span", "held_reach"]


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
    model them exactly, :mod:`qmodels.analytic.decomposition` approximately (a
    flow-equivalent server, Lazowska et al. 1984, ch. 9).

    Parameters
    ----------
    name : str
    tokens : int >= 1
    acquire, release : str
        Station names; ``release`` may equal ``acquire``.
    classes : tuple of str, optional
        Classes that use the pool (default: every class).
    path : tuple of str, optional
        The stations a job visits, in this order, while it holds a token:
        ``path[0] == acquire`` and ``path[-1] == release``.  Needed for a
        class given by ``visits`` (which has no order of visits): each
        visit to ``acquire`` then starts one passage along the path, so
        every station of the path must have the visit ratio of ``acquire``
        (one packet = one passage).  Nested paths (a switch port taken
        while a buffer slot is held) and paths that overlap in a
        contiguous stretch are allowed.  Classes given by ``routing``
        ignore it (their routing says where the token is held).
    """

    name: str
    tokens: int
    acquire: str
    release: str
    classes: tuple | None = None
    path: tuple | None = field(default=None, kw_only=True)

    def __post_init__(self):
        check_name(self.name, "token pool")
        object.__setattr__(
            self, "tokens",
            check_count(self.tokens, f"token pool {self.name!r}: tokens", minimum=1,
                        maximum=MAX_INT64),
        )
        check_name(self.acquire, f"token pool {self.name!r}: acquire station")
        check_name(self.release, f"token pool {self.name!r}: release station")
        if self.classes is not None:
            object.__setattr__(self, "classes", tuple(self.classes))
        if self.path is not None:
            if isinstance(self.path, str) or not isinstance(self.path, Iterable):
                raise InvalidValueError(
                    f"token pool {self.name!r}: path must be a sequence of station names, "
                    f"got {self.path!r}")
            path = tuple(self.path)
            for st in path:
                check_name(st, f"token pool {self.name!r}: path station")
            if not path or path[0] != self.acquire or path[-1] != self.release:
                raise InvalidValueError(
                    f"token pool {self.name!r}: path {list(path)} must start at acquire "
                    f"{self.acquire!r} and end at release {self.release!r}")
            if len(set(path)) != len(path):
                raise InvalidValueError(
                    f"token pool {self.name!r}: path {list(path)} visits a station twice")
            object.__setattr__(self, "path", path)


def _merge_paths(a: tuple, b: tuple, who: str) -> tuple:
    """One chain from two pool paths that share stations (contiguously)."""
    def contains(x, y):
        return any(x[i:i + len(y)] == y for i in range(len(x) - len(y) + 1))

    if contains(a, b):
        return a
    if contains(b, a):
        return b
    for first, second in ((a, b), (b, a)):
        for L in range(min(len(first), len(second)) - 1, 0, -1):
            if first[-L:] == second[:L] and not set(first[:-L]) & set(second[L:]):
                return first + second[L:]
    raise InvalidValueError(
        f"{who}: pool paths {list(a)} and {list(b)} share stations but not as one "
        "contiguous stretch in the same order")


def pool_chains(net: "Network", cls) -> tuple:
    """The chains of stations a class given by visits traverses in order.

    The ``path`` of every :class:`TokenPool` the class uses is merged with
    the paths it shares stations with (nested paths, or paths overlapping
    in a contiguous stretch, such as a buffer slot held over DMA and switch
    port and a port slot held over port and link) into maximal chains.  A
    visit to a chain's first station starts one passage along the whole
    chain, so every station on a chain must have the visit ratio of its
    first station.  Classes given by routing have no chains (their routing
    is the order); pools the class does not visit are skipped.

    Raises
    ------
    InvalidValueError
        Two paths that share stations out of order, or a chain station
        whose visit ratio differs from the chain's first station.
    UnsupportedModelError
        A class given by visits uses a pool without a ``path`` over more
        than one station.
    """
    from ..errors import UnsupportedModelError

    ci = net.class_index(cls) if isinstance(cls, str) else cls
    c = net.classes[ci]
    if c.routing is not None:
        return ()
    V = net.visits[ci]
    idx = {s: k for k, s in enumerate(net.station_names)}
    paths = []
    for p in net.pools:
        if p.classes is not None and c.name not in p.classes:
            continue
        if is_symbolic(V[idx[p.acquire]]) or float(V[idx[p.acquire]]) == 0.0:
            continue
        if p.path is None:
            if p.acquire == p.release:
                paths.append((p.acquire,))
                continue
            raise UnsupportedModelError(
                f"class {c.name!r} is given by visits and uses token pool {p.name!r}, which "
                "has no path: give TokenPool(..., path=(acquire, ..., release)) so the pool "
                "is held along a known order of stations (or give the class routing)")
        paths.append(tuple(p.path))
    chains: list[tuple] = []
    for path in paths:
        cur = path
        merged = True
        while merged:
            merged = False
            for other in chains:
                if set(other) & set(cur):
                    chains.remove(other)
                    cur = _merge_paths(other, cur, f"class {c.name!r}")
                    merged = True
                    break
        chains.append(cur)
    for ch in chains:
        v0 = V[idx[ch[0]]]
        for s in ch[1:]:
            v = V[idx[s]]
            if is_symbolic(v) or is_symbolic(v0):
                continue
            if abs(float(v) - float(v0)) > 1e-9 * max(1.0, abs(float(v0))):
                raise InvalidValueError(
                    f"class {c.name!r}: station {s!r} lies on the held path {list(ch)} and "
                    f"must be visited as often as {ch[0]!r} ({float(v0):.6g} per cycle), "
                    f"got {float(v):.6g}")
    return tuple(chains)


def held_reach(successors, acquire: str, release: str) -> list:
    """The stations a job can reach from ``acquire`` without going on from
    ``release`` (``release`` included if reached), in the order found;
    ``successors(s)`` gives the stations routing can send a job to from
    ``s``."""
    span = [acquire]
    seen = {acquire}
    frontier = [acquire]
    while frontier:
        s = frontier.pop()
        if s == release:
            continue
        for d in successors(s):
            if d not in seen:
                seen.add(d)
                span.append(d)
                frontier.append(d)
    return span


def class_pool_span(net: Network, pool: TokenPool | str, cls) -> tuple:
    """:func:`pool_span` for the class ``cls`` of ``net`` (any number of
    classes)."""
    pool = _get_pool(net, pool)
    if cls.routing is None:
        if pool.path is not None:
            return tuple(pool.path)
        if pool.acquire == pool.release:
            return (pool.acquire,)
        raise UnsupportedModelError(
            f"token pool {pool.name!r}: class {cls.name!r} gives visits or demands, not "
            "routing, so the stations the pool spans are unknown; give the pool a path "
            "(TokenPool(..., path=(acquire, ..., release))) or the class routing"
        )
    succ: dict[str, list[str]] = {}
    for src, row in cls.routing.items():
        succ[src] = [dst for dst, p in row.items() if float(p) > 0]
    seen = set(held_reach(lambda s: succ.get(s, ()), pool.acquire, pool.release))
    if pool.release not in seen:
        raise UnsupportedModelError(
            f"token pool {pool.name!r}: station {pool.release!r} (release) cannot be reached "
            f"from {pool.acquire!r} (acquire) in class {cls.name!r}'s routing"
        )
    for src, dests in succ.items():
        for d in dests:
            if d in seen and d != pool.acquire and (src not in seen or src == pool.release):
                raise UnsupportedModelError(
                    f"token pool {pool.name!r}: routing {src!r} -> {d!r} enters the pool's "
                    f"sub-path other than through {pool.acquire!r} (acquire); decomposition "
                    "needs a single entry point"
                )
    order = [s for s in net.station_names if s in seen]
    return tuple(order)


def _get_pool(net: Network, pool: TokenPool | str) -> TokenPool:
    if isinstance(pool, TokenPool):
        if pool not in net.pools:
            raise UnsupportedModelError(f"token pool {pool.name!r} is not one of the network's")
        return pool
    for p in net.pools:
        if p.name == pool:
            return p
    raise UnknownNameError(f"unknown token pool {pool!r}")
