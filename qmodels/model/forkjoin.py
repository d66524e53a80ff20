"""Fork-join: a job splits into parallel tasks and goes on when all are done.

A :class:`ForkJoin` is listed in ``Network(stations=[...])`` beside the
ordinary stations and is reached like any of them (by a class's visits,
demands or routing).  A job that reaches it splits into one task per
branch (``tasks[b]`` tasks down branch ``b``, default one); each task
visits the stations of its branch in order, once each; the job continues
(by its class's routing from the fork-join, or the random routing of a
class given by visits) when its last task is done: the join.  The
fork-join does no service itself: its "response time" is the time from
fork to join, its "queue length" the number of jobs forked and not yet
joined, its utilisation 0.

Rules (checked when the :class:`~qmodels.model.Network` is built, each a
typed error naming the fork-join and the station):

* every branch is a non-empty sequence of names of ordinary stations of
  the network (no fork-join inside a branch: no nesting);
* a station lies on at most one branch of one fork-join, once;
* branch stations are reached only through their fork-join: no class may
  name one in its visits, demands or routing (per-class ``service`` times
  there are allowed);
* token pools may not hold a branch station or a fork-join, except a
  pool whose ``path`` runs along consecutive stations of one branch,
  not from its first (the tasks hold it, e.g. a buffer slot per packet
  of a burst; the simulator takes such a network, and
  ``method="forkjoin-pools"`` approximately when it has one fork-join of
  one branch).

Visit ratios: each task visits its branch's stations once per fork, so a
class that visits the fork-join ``V_f`` times per cycle visits a station of
branch ``b`` ``tasks[b] * V_f`` times (:func:`forkjoin_visits`), and the
utilisation law ``U_k = X V_k S_k`` holds there.

KOSMOS's master scattering work over n slaves, a RAID stripe over n disks
and a scatter-gather DMA are fork-joins (Nelson & Tantawi, IEEE Trans.
Computers 37(6), 1988, sec. 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from .._validate import MAX_INT64, check_count, check_name
from ..errors import InvalidValueError, RoutingError, UnknownNameError, UnsupportedModelError
from .stations import Station

__all__ = ["ForkJoin", "forkjoins", "branch_owner", "forkjoin_visits", "check_forkjoins"]


@dataclass(frozen=True, init=False)
class ForkJoin(Station):
    """A fork-join element: jobs split into tasks over ``branches`` and
    join when every task is done.

    Parameters
    ----------
    name : str
    branches : sequence of sequences of str
        Each branch is the stations one task visits, in order, e.g.
        ``[["d1"], ["d2", "link2"]]``.
    tasks : int or sequence of int, optional
        Tasks sent down each branch per fork (default 1 each); an int
        applies to every branch.  Several tasks down one branch queue at
        its stations like any jobs.

    Examples
    --------
    >>> import qmodels as qm
    >>> net = qm.Network(
    ...     stations=[qm.ForkJoin("stripe", branches=[["d1"], ["d2"]]),
    ...               qm.Queue("d1", 0.010), qm.Queue("d2", 0.010)],
    ...     classes=[qm.Open("io", 20.0, visits={"stripe": 1})])
    >>> net.visits.tolist()
    [[1.0, 1.0, 1.0]]
    """

    branches: tuple = ()
    tasks: tuple = ()

    kind: ClassVar[str] = "forkjoin"

    def __init__(self, name, branches=(), *, tasks=None, service=0.0, power=None,
                 capacity=None, distribution=None, element=None):
        # the Station fields a fork-join cannot have are accepted only at
        # their defaults (so dataclasses.replace works)
        check_name(name, "fork-join")
        who = f"fork-join {name!r}"
        if (service != 0 or power is not None or capacity is not None
                or distribution is not None or element is not None):
            raise InvalidValueError(
                f"{who}: a fork-join does no service and holds no room; give its branches "
                "stations the service times, capacities and power (got service="
                f"{service!r}, power={power!r}, capacity={capacity!r}, "
                f"distribution={distribution!r}, element={element!r})")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "service", 0.0)
        object.__setattr__(self, "power", None)
        object.__setattr__(self, "capacity", None)
        object.__setattr__(self, "distribution", None)
        object.__setattr__(self, "element", None)
        object.__setattr__(self, "branches", _check_branches(branches, who))
        object.__setattr__(self, "tasks", _check_tasks(tasks, len(self.branches), who))
        Station.__post_init__(self)

    @property
    def servers(self):
        """A fork-join holds any number of jobs: ``inf``."""
        return math.inf

    @property
    def stations(self) -> tuple:
        """Every branch station, branch by branch."""
        return tuple(s for b in self.branches for s in b)

    @property
    def n_tasks(self) -> int:
        """Tasks per fork (the sum of ``tasks``)."""
        return int(sum(self.tasks))


def _check_branches(branches, who: str) -> tuple:
    if isinstance(branches, (str, bytes)) or not isinstance(branches, Iterable):
        raise InvalidValueError(
            f"{who}: branches must be a list of lists of station names, got {branches!r}")
    out = []
    for b, br in enumerate(branches):
        if isinstance(br, (str, bytes)) or not isinstance(br, Iterable):
            raise InvalidValueError(
                f"{who}: branch {b} must be a list of station names, got {br!r}")
        br = tuple(br)
        if not br:
            raise InvalidValueError(f"{who}: branch {b} is empty (a task must visit a station)")
        for s in br:
            check_name(s, f"{who}: branch {b} station")
        out.append(br)
    if len(out) < 1:
        raise InvalidValueError(f"{who}: needs at least one branch")
    return tuple(out)


def _check_tasks(tasks, nb: int, who: str) -> tuple:
    if tasks is None:
        return (1,) * nb
    if isinstance(tasks, (str, bytes)):
        raise InvalidValueError(f"{who}: tasks must be an integer or a list, got {tasks!r}")
    if not isinstance(tasks, Iterable):
        t = check_count(tasks, f"{who}: tasks", minimum=1, maximum=MAX_INT64)
        return (t,) * nb
    tasks = tuple(tasks)
    if len(tasks) != nb:
        raise InvalidValueError(
            f"{who}: tasks gives {len(tasks)} number(s) for {nb} branch(es): {list(tasks)}")
    # at most 2**63 - 1 (the simulator counts tasks in 64-bit integers)
    return tuple(check_count(t, f"{who}: tasks[{b}]", minimum=1, maximum=MAX_INT64)
                 for b, t in enumerate(tasks))


# ---------------------------------------------------------------------------
# network-level rules (called by Network)
# ---------------------------------------------------------------------------

def forkjoins(stations) -> tuple:
    """The fork-join elements among ``stations``."""
    return tuple(s for s in stations if isinstance(s, ForkJoin))


def branch_owner(stations) -> dict:
    """Branch station name -> (fork-join name, branch index)."""
    out = {}
    for f in forkjoins(stations):
        for b, br in enumerate(f.branches):
            for s in br:
                out[s] = (f.name, b)
    return out


def check_forkjoins(stations, classes, pools) -> None:
    """The rules of the module docstring; typed errors name the fork-join,
    the station and (for a routing rule) the class."""
    fjs = forkjoins(stations)
    if not fjs:
        return
    kinds = {s.name: s for s in stations}
    owner = _check_branch_stations(fjs, kinds)
    for c in classes:
        _check_class(c, owner, kinds)
    fj_names = {f.name for f in fjs}
    for p in pools:
        if _within_one_branch(p, fjs, owner):
            continue
        for s in (p.acquire, p.release) + tuple(p.path or ()):
            if s in owner or s in fj_names:
                what = (f"fork-join {s!r}" if s in fj_names
                        else f"station {s!r} on a branch of fork-join {owner[s][0]!r}")
                raise UnsupportedModelError(
                    f"token pool {p.name!r} holds {what}; token pools across a fork-join are "
                    "not supported")


def _within_one_branch(pool, fjs, owner) -> bool:
    """Whether ``pool`` is held by tasks only, inside one branch: it has a
    ``path`` that is a run of consecutive stations of one branch, not
    starting at the branch's first station (a task enters that station
    straight from the fork, where the simulator takes no tokens).  Such a
    pool (a buffer slot per packet of a burst) is simulated, and solved by
    ``method="forkjoin-pools"``; the analytic fork-join and decomposition
    methods refuse the network."""
    path = tuple(pool.path or ())
    if len(path) < 1 or path[0] != pool.acquire or path[-1] != pool.release:
        return False
    if any(s not in owner for s in path):
        return False
    f_name, b = owner[path[0]]
    if any(owner[s] != (f_name, b) for s in path):
        return False
    br = tuple(next(f for f in fjs if f.name == f_name).branches[b])
    i = br.index(path[0])
    return i > 0 and br[i:i + len(path)] == path


def _check_branch_stations(fjs, kinds) -> dict:
    """Branch stations exist, are ordinary, and lie on one branch once;
    returns station -> (fork-join, branch)."""
    owner: dict[str, tuple] = {}
    for f in fjs:
        for b, br in enumerate(f.branches):
            for s in br:
                if s not in kinds:
                    raise UnknownNameError(
                        f"fork-join {f.name!r}: branch {b} names unknown station {s!r}")
                if isinstance(kinds[s], ForkJoin):
                    raise UnsupportedModelError(
                        f"fork-join {f.name!r}: branch {b} holds fork-join {s!r}; nested "
                        "fork-joins are not supported")
                if s in owner:
                    of, ob = owner[s]
                    where = (f"branch {ob} of fork-join {of!r}" if of != f.name or ob != b
                             else "the same branch twice")
                    raise InvalidValueError(
                        f"fork-join {f.name!r}: station {s!r} (branch {b}) is already on "
                        f"{where}; a station may be on one branch, once")
                owner[s] = (f.name, b)
    return owner


def _check_class(c, owner, kinds) -> None:
    """A class names no branch station in its visits, demands or routing,
    and no service or demand at a fork-join."""
    who = f"class {c.name!r}"
    named = []
    for attr in ("visits", "demands"):
        m = getattr(c, attr)
        if m is not None:
            named += [(s, attr) for s in m]
    if c.routing is not None:
        for src, row in c.routing.items():
            named.append((src, "routing"))
            named += [(d[0] if isinstance(d, tuple) else d, "routing") for d in row]
    for s, attr in named:
        if s in owner:
            of, ob = owner[s]
            raise RoutingError(
                f"{who}: its {attr} names station {s!r}, which is on branch {ob} of "
                f"fork-join {of!r}; branch stations are reached only through their "
                f"fork-join (name {of!r} instead)")
    for s in (c.service or {}):
        if s in kinds and isinstance(kinds[s], ForkJoin):
            raise InvalidValueError(
                f"{who}: gives a service time at fork-join {s!r}, which does no service")
    for s, d in (c.demands or {}).items():
        if s in kinds and isinstance(kinds[s], ForkJoin) and d != 0:
            raise InvalidValueError(
                f"{who}: gives demand {d!r} at fork-join {s!r}, which does no service "
                "(give it visits, and its branch stations service times)")


def forkjoin_visits(stations, vis: list) -> None:
    """Fill in place the visit ratios (class x station lists) of branch
    stations: ``tasks[b] * V_f`` for a station of branch ``b`` of fork-join
    ``f``, since each task visits its branch's stations once per fork."""
    index = {s.name: k for k, s in enumerate(stations)}
    for f in forkjoins(stations):
        kf = index[f.name]
        for br, t in zip(f.branches, f.tasks):
            for s in br:
                for row in vis:
                    row[index[s]] = row[kf] * t


def branch_mask(net) -> list:
    """Per station of ``net``: whether it lies on a fork-join branch (its
    visitors are tasks, not jobs)."""
    own = branch_owner(net.stations)
    return [s.name in own for s in net.stations]


def critical_path_demand(net, ci: int) -> float:
    """The no-contention time of one cycle of class ``ci`` (numeric): the
    demands of the stations outside fork-joins plus, for each fork-join it
    visits V_f times, V_f times its longest branch (the sum over the
    branch's stations of the service time per task).  A fork-join section
    is never faster than its slowest branch (E max >= max E), so this is a
    lower bound on the cycle time without think time.  Without fork-joins
    it is ``sum_k D_k``, computed as exactly that sum."""
    import numpy as np

    D = np.asarray(net.demands, dtype=float)[ci]
    fjs = forkjoins(net.stations)
    if not fjs:
        return float(D.sum())
    mask = branch_mask(net)
    S = np.asarray(net.service_times, dtype=float)[ci]
    V = np.asarray(net.visits, dtype=float)[ci]
    index = {s: k for k, s in enumerate(net.station_names)}
    tot = float(sum(D[k] for k in range(len(D)) if not mask[k]))
    for f in fjs:
        kf = index[f.name]
        tot += V[kf] * max(sum(S[index[s]] for s in br) for br in f.branches)
    return tot
