"""Measured error envelopes of the approximate methods (issue 27: every
answer is what it says).

``python -m validation.envelopes [--quick] [--write | --out DIR] [--family NAME ...]
[--worst N] [--workers K]`` (or ``--scheduler ADDRESS`` of a dask cluster
instead of ``--workers``); ``make validate`` runs it with ``--out
build/validation`` after the catalog report, ``make envelopes`` with
``--write``.

Each *catalog* below draws a seeded family of networks, solves every one
with one or more approximate methods and with a reference, and records per
(method, catalog) an *envelope*: the number of networks, the largest and
mean relative error of the class throughput X and of the class response
time R (per cycle, think time excluded), and the *box* of model features
the family spans (:func:`qmodels.analytic.envelopes.features` of each
network and the method's own answer: min..max of each numeric feature, the
set of workloads).  A method that answers in several forms (its answer's
``info["approximation"]``: ``marie``'s one subsystem, pairs or stations
alone; ``priority``'s own chain or finite-source chain with the
flow-equivalent server) gets one envelope per form it answered the
catalog in, each of that form's networks alone and carrying its ``form``
(:func:`envelopes_of`).  ``qmodels.analytic.envelopes.attach`` then gives
an approximate answer the worst envelope of its form whose box holds its
network.

The relative error of a network is the largest over its classes of
|approx - ref| / ref.  The reference is, by preference, the exact CTMC
(``qm.ctmc``: exponential service, Poisson arrivals, small state space),
exact MVA (``qm.mva``) for the product-form approximations, otherwise the
simulator (``qm.simulate``, 10 replications, made 4x and then 16x longer
while the relative 95 % half-width of a class R exceeds 2 %; the envelope
records the largest half-width left as ``sim_halfwidth``).  The X of an
open class without losses is its arrival rate in every answer (flow
conservation): its reference is that rate, not the simulator's estimate of
it, so the X error of an open network is 0 unless the method loses jobs.

A network a method refuses (:class:`qmodels.UnsupportedModelError`) is
counted as refused.  An answer that breaks an operational law
(:class:`qmodels.errors.LawViolationError`, or a queue loaded past U = 1
per server that the contract let through: checked here too), any other
exception, and an approximation that stops unconverged are *defects*:
listed loudly at the end (the exit status is 1), never counted.

Options: ``--write`` writes ``qmodels/analytic/envelopes.json`` and
``validation/envelopes_table.md`` (with ``--family``, only the named
catalogs' envelopes are replaced; the others are kept); without it the
table is printed.  ``--quick`` runs the first few networks of every catalog
(the same generators, so the same networks) with 2x shorter simulations
and no lengthening, in about a minute, and never writes.  ``--out DIR``
writes this run's table (``DIR/envelopes_table.md``, ``DIR/envelopes.json``)
and compares every envelope with the committed one
(``DIR/envelopes_drift.md``): the exit status is 1 when the committed table
(the README's) is no longer what the catalogs measure.  ``--worst N``
prints each method's N worst networks.  ``--workers K``
solves networks in K processes, ``--scheduler tcp://host:8786`` on a dask
cluster's workers (:mod:`validation._spread`); every network's simulation
seed is fixed by its catalog and index, so the numbers do not depend on the
split.

Catalogs (sources of the formulas and cases):

* ``qna-nonexp``, ``mva-residual-nonexp``: the random open and closed
  networks of :mod:`validation.nonexp` (same seeds: the same networks).
* ``qna-bursty``: one class of hyperexponential arrivals (SCV 2..8) into a
  tandem of 1..9 single-server queues (exponential or general service),
  utilisation up to 0.9.  Network 0 is the published case of the
  heavy-traffic bottleneck phenomenon: balanced-means H2 arrivals of rate
  1 and SCV 8 into nine exponential queues in series with mean service
  0.6 at the first eight and 0.9 at the ninth (S. Suresh & W. Whitt, "The
  heavy-traffic bottleneck phenomenon in open queueing networks", Oper.
  Res. Letters 9(6):355-362, 1990; repeated as Table 2 of W. Whitt &
  W. You, "The advantage of indices of dispersion in queueing
  approximations", Oper. Res. Letters 47(2):99-104, 2019).  The simulated
  mean waits (before service) published there, 3.36, 2.32, 1.96, 1.77,
  1.64, 1.56, 1.49, 1.44 and 29.2 (as transcribed in the LINE solver's
  model gallery, ``gallery_literature_wy18orl_tab2.m``), give R = 44.74 +
  5.7 = 50.44, a second reference recorded beside the envelope
  (``published``).  QNA's two-moment flows cannot see the burstiness
  that the light queues pass on to the ninth (Suresh & Whitt's point).
* ``rqna-bursty``, ``rqna-nonexp``: the networks of ``qna-bursty`` and
  ``qna-nonexp`` (same generators and seeds, so the same networks and
  simulations) solved by RQNA (W. Whitt & W. You, "A robust queueing
  network analyzer based on indices of dispersion", Naval Research
  Logistics 69(1), 2022), which refuses what lies outside its scope (several
  classes, delays, multi-server or non-FCFS queues).
* ``qna-ph``: one class of phase-type arrivals (H2 of SCV 2..8 or Erlang
  2-4) into one or two FCFS queues with phase-type service, small enough
  for the exact CTMC, whose open population is cut where less than 1e-6 of
  the probability lies beyond (:func:`_ctmc_open`); solved by ``qna`` and
  ``rqna``: the exact reference the simulated ``qna-bursty`` lacks.
* ``qna-classdep``: open classes of small and big jobs at FCFS queues whose
  mean service differs by class (exponential; network 0: small jobs of 2
  and 4 ms, big ones of 50 and 300 ms at two queues); also solved by
  ``exact`` with ``fcfs_as_ps=True`` (the processor-sharing substitute,
  BCMP type 2 in place of type 1; Baskett, Chandy, Muntz & Palacios, JACM
  22(2), 1975).
* ``mva-residual-fewjobs``: closed networks of 1..4 jobs per class, service
  SCV 0..8, 2..4 stations, think time or not (where the residual
  S (1 + c^2) / 2 of Reiser 1979 is least right: an arriving job meets a
  young service).
* ``marie-nonexp``, ``marie-fewjobs``: the networks of ``mva-residual-nonexp``
  and ``mva-residual-fewjobs`` (same generators and seeds, so the same
  networks and the same simulations), solved by Marie's method.
* ``ctmc-fewjobs``, ``ctmc-nonexp``: the same networks and simulations
  again, solved by the CTMC (``qm.ctmc``): exact where every shape is
  phase-type; where one is fitted (a lognormal by its moments, a
  deterministic time as an Erlang-20 whose answers at 20, 10 and 5 phases
  are extrapolated to scv 0), the error of that form of its answer.  A
  network whose chain passes 200,000 states is refused.
* ``ctmc-open-fitted``: one open class into 1-2 FCFS queues in series
  (:func:`fitted_open`), deterministic, lognormal, exponential or H2
  arrivals and service of SCV 0 to 6, solved by the CTMC with its default
  open-job truncation, against the simulator.
* ``marie-ph``: closed networks of 1..4 jobs per class at FCFS queues
  with phase-type service (exponential, Erlang 2-8, two-branch
  hyperexponential of SCV 1.5..8), against the exact CTMC (phase-type
  service is exact there); solved by ``marie`` and ``mva-residual``.
* ``fcfs-classdep-closed``: closed multi-class networks of exponential FCFS
  queues whose mean service differs by class, small enough for the CTMC;
  solved by ``mva-residual``, ``marie`` and by ``exact``, ``schweitzer`` and
  ``linearizer`` with ``fcfs_as_ps=True``.
* ``marie-classdep-large``, ``marie-classdep-large-pairs``,
  ``marie-classdep-large-alone``: closed networks larger than the CTMC
  holds (:func:`classdep_large`: 2-3 classes, 8-20 jobs, 3-5 FCFS queues
  whose mean service differs by class, a third of the time one of them of
  SCV 0.25-4) against the simulator, solved by ``marie`` as it chooses its
  subsystems, with pairs at most (``group_max=2``) and with every station
  alone (``group_max=1``): the same networks and simulations (same
  generator and seed), each split by the form of Marie's method that
  answered (its ``info["approximation"]``).
* ``amva-*``: Schweitzer and Linearizer against exact MVA on random closed
  product-form networks: ``amva-plain`` (single-server queues and delays,
  1-3 classes, drawn like the others here) and the scenarios of
  :mod:`validation.amva_ld_accuracy` (c-server queues, concave, convex and
  falling load-dependent rates; the falling ones with
  ``falling_rates=True``, the only way they are answered).
* ``priority-closed``, ``priority-open``: the networks of
  :mod:`validation.priority_networks` first, then random ones with a
  non-preemptive (``prio``) or preemptive (``prio-pr``) queue visited by 2-3
  classes of different levels.
* ``priority-closed-ph``: closed priority networks drawn like
  ``priority-closed`` but with 1..4 jobs per class and phase-type shapes,
  against the exact CTMC.  ``priority`` answers all of them by the whole
  network's chain (at most a million states), so ``priority-closed-ph-fes``
  solves the same networks with that chain turned off (``max_states=0``):
  the error of the approximation it takes past its budget, against the
  exact CTMC (its envelope is given to every ``priority`` answer of that
  form in its box, the worst that holds: each envelope is of one form,
  ``info["approximation"]``, measured on the networks answered in it).
  ``priority-closed-starved-fes``: the same for a low level of 1-3 jobs
  starved behind a high one that loads the priority queue past 0.9
  (:func:`priority_starved`), where the approximation is weakest.
  ``priority-closed-starved-det`` and ``-det-fes``: a low level starved at
  a queue of deterministic service (:func:`priority_starved_det`), with
  populations that pass the first chain's budget, against the simulator:
  the whole method (its chain at Erlang-8 or -4, extrapolated) and the
  approximation alone.
* ``cache-che``: a cache station in front of a disk (:func:`cache_network`),
  solved by ``exact`` (MVA) on Che's split of each cache, against the
  simulator, which runs the cache item by item: the error of an answer that
  is approximate by Che's approximation alone.
* ``forkjoin-pools``: a fork-join whose tasks hold token pools
  (:func:`forkjoin_pooled`, SPAX's burst first), solved by
  ``forkjoin-pools`` against the simulator.
* ``forkjoin-closed``: the closed grid of :mod:`validation.forkjoin_accuracy`
  (its full grid of 320 networks); ``forkjoin-open``: its open grid
  (homogeneous branches: Flatto-Hahn exact at k = 2, Nelson-Tantawi beyond;
  unequal ones: the independence upper bound).
* ``forkjoin-closed-exact``: the closed fork-joins of
  :mod:`validation.forkjoin_varki_accuracy` (2-8 branches of one queue or
  two in tandem, balanced or not, stations outside or not, 1-30 jobs) whose
  exact chain of queue lengths (:mod:`validation.forkjoin_exact`, which reads
  ``qm.ctmc``'s fork-join chain) has at most 30,000 states, that chain the
  reference; solved by ``forkjoin`` and by ``forkjoin-varki`` (Varki's mean
  value technique, the mean of the two bounds).
* ``decomposition``: random single-class closed networks with one or two
  token pools (nested or overlapping), against the CTMC.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

import qmodels as qm
from qmodels.analytic.envelopes import FEATURES, features
from qmodels.errors import ConvergenceWarning, LawViolationError, UnsupportedModelError
from qmodels.model.distributions import Deterministic, Erlang, HyperExponential, Lognormal

from . import (
    amva_ld_accuracy,
    forkjoin_accuracy,
    forkjoin_exact,
    forkjoin_varki_accuracy,
    nonexp,
    priority_networks,
)
from ._spread import add_arguments, check, map_in_order

__all__ = ["CATALOGS", "Catalog", "Approx", "networks", "run", "envelopes_of", "table",
           "validate_entry", "APPROXIMATE_METHODS", "main"]

ROOT = Path(__file__).resolve().parent.parent
JSON_PATH = ROOT / "qmodels" / "analytic" / "envelopes.json"
TABLE_PATH = ROOT / "validation" / "envelopes_table.md"
COMMAND = "python -m validation.envelopes"

#: relative 95 % half-width of a simulated class R above which a run is made
#: longer (4x, at most ``extend`` times)
HALF_WIDTH = 0.02

#: the methods whose answers are labelled approximate (each needs an
#: envelope), and the product-form methods that answer the processor-sharing
#: substitute with ``fcfs_as_ps=True`` (envelopes with "substituted": true)
APPROXIMATE_METHODS = ("schweitzer", "linearizer", "mva-residual", "marie", "qna", "rqna",
                       "priority",
                       "forkjoin", "forkjoin-varki", "forkjoin-pools", "decomposition")
SUBSTITUTED_METHODS = ("exact", "schweitzer", "linearizer")


# ---------------------------------------------------------------------------
# what a catalog is
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Approx:
    """One approximate method run on every network of a catalog:
    ``qm.<function>(net, **kwargs)``; its answer is labelled ``method``."""

    method: str
    function: str
    kwargs: tuple = ()
    substituted: bool = False

    def solve(self, net):
        return getattr(qm, self.function)(net, **dict(self.kwargs))


@dataclass(frozen=True)
class SimPlan:
    """Simulation of one network: ``replications`` of ``horizon(net)``
    seconds, made 4x longer at most ``extend`` times while a class R's
    relative half-width exceeds :data:`HALF_WIDTH`."""

    horizon: Callable
    replications: int = 10
    extend: int = 2


@dataclass(frozen=True)
class Catalog:
    name: str
    #: short description of the family (what an answer's note quotes)
    family: str
    #: (rng, index) -> Network, called in index order with one generator
    make: Callable
    networks: int
    quick: int
    #: "ctmc", "ctmc-open" (truncated, :func:`_ctmc_open`), "mva", "sim" or
    #: "fj-ctmc" (:mod:`validation.forkjoin_exact`)
    reference: str
    approx: tuple
    seed: tuple = (1,)
    sim: SimPlan | None = None
    #: method -> a published reference for network 0 (see ``published``)
    published: dict = field(default_factory=dict)


REFERENCE_WORDS = {"ctmc": "exact CTMC", "mva": "exact MVA", "sim": "simulator",
                   "ctmc-open": "exact CTMC (cut where < 1e-6 lies beyond)",
                   "fj-ctmc": "exact CTMC (fork-join)"}


# ---------------------------------------------------------------------------
# generators
# ---------------------------------------------------------------------------

def _shape(rng, lo_scv: float = 0.0, hi_scv: float = 8.0):
    """A service shape with SCV in [lo_scv, hi_scv]: deterministic (0),
    Erlang 2-4, exponential, hyperexponential or lognormal."""
    u = int(rng.integers(0, 5))
    if u == 0 and lo_scv <= 0.0:
        return Deterministic()
    if u == 1 and lo_scv <= 0.25:
        return Erlang(int(rng.integers(2, 5)))
    if u == 2 or hi_scv <= 1.0:
        return None
    if u == 3:
        return HyperExponential(float(np.round(rng.uniform(max(lo_scv, 1.5), hi_scv), 2)))
    return Lognormal(float(np.round(rng.uniform(max(lo_scv, 0.25), hi_scv), 2)))


def _tandem(names, open_class=True):
    rows = {"source": {names[0]: 1.0}} if open_class else {}
    for a, b in zip(names, names[1:]):
        rows[a] = {b: 1.0}
    rows[names[-1]] = {"sink": 1.0} if open_class else {names[0]: 1.0}
    return rows


#: Suresh & Whitt (1990) / Whitt & You (2019, Table 2): mean service times of
#: the nine queues in series (arrival rate 1, H2 arrivals of SCV 8)
SURESH_WHITT_SERVICE = (0.6,) * 8 + (0.9,)
#: the simulated mean waits before service published there
SURESH_WHITT_WAITS = (3.36, 2.32, 1.96, 1.77, 1.64, 1.56, 1.49, 1.44, 29.2)


def suresh_whitt() -> qm.Network:
    """The published nine-queue tandem (module docstring)."""
    names = [f"q{i}" for i in range(1, 10)]
    return qm.Network([qm.Queue(n, s) for n, s in zip(names, SURESH_WHITT_SERVICE)],
                      [qm.Open("o", 1.0, routing=_tandem(names),
                               interarrival=HyperExponential(8.0))])


def bursty_tandem(rng, i: int) -> qm.Network:
    """Network 0: :func:`suresh_whitt`; then one class of H2 arrivals (SCV
    2..8, rate 1) into 1..9 single-server queues in series, exponential
    service (half the networks) or general shapes (SCV 0..8), the
    bottleneck (at a random place) at utilisation 0.5..0.9 and the others
    at 0.3..0.9 of it."""
    if i == 0:
        return suresh_whitt()
    K = int(rng.integers(1, 10))
    ca2 = float(np.round(rng.uniform(2.0, 8.0), 2))
    general = rng.random() < 0.5
    top = float(np.round(rng.uniform(0.5, 0.9), 3))
    rho = np.round(top * rng.uniform(0.3, 0.9, K), 3)
    rho[int(rng.integers(0, K))] = top
    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, float(rho[k]), distribution=_shape(rng) if general else None)
          for k, n in enumerate(names)]
    return qm.Network(st, [qm.Open("o", 1.0, routing=_tandem(names),
                                   interarrival=HyperExponential(ca2))])


def _loguniform(rng, lo, hi):
    return float(np.round(math.exp(rng.uniform(math.log(lo), math.log(hi))), 6))


def classdep_open(rng, i: int) -> qm.Network:
    """Open classes at exponential FCFS queues whose mean service differs by
    class.  Network 0: small jobs (2 ms at ``cpu``, 4 ms at ``disk``, 50 per
    second) and big ones (50 ms, 300 ms, 2 per second).  Then 2-3 classes
    (small: 1-5 ms, big: 20-300 ms, a third 5-50 ms) over 2-3 queues, a
    class given by a tandem routing or by visits, the busiest queue at
    0.3..0.85."""
    if i == 0:
        return qm.Network(
            [qm.Queue("cpu", 0.002), qm.Queue("disk", 0.004)],
            [qm.Open("small", 50.0, visits={"cpu": 1, "disk": 1}),
             qm.Open("big", 2.0, visits={"cpu": 1, "disk": 1},
                     service={"cpu": 0.05, "disk": 0.3})])
    K = int(rng.integers(2, 4))
    names = [f"s{k}" for k in range(K)]
    C = int(rng.integers(2, 4))
    ranges = [(0.001, 0.005), (0.02, 0.3), (0.005, 0.05)]
    classes = []
    for c in range(C):
        svc = {n: _loguniform(rng, *ranges[c]) for n in names}
        if rng.random() < 0.5:
            order = list(rng.permutation(names))
            classes.append(dict(name=f"c{c}", service=svc, routing=_tandem(order)))
        else:
            vis = {n: float(np.round(rng.uniform(0.5, 2.0), 2)) for n in names}
            classes.append(dict(name=f"c{c}", service=svc, visits=vis))
    probe = qm.Network([qm.Queue(n, 1.0) for n in names],
                       [qm.Open(k["name"], 1.0, **{a: b for a, b in k.items() if a != "name"})
                        for k in classes])
    D = np.asarray(probe.demands, dtype=float)
    share = rng.dirichlet(np.ones(C))       # of the busiest queue's load, per class
    target = rng.uniform(0.3, 0.85)
    load = (share[:, None] * D).sum(axis=0)
    lam = share * target / load.max()
    return qm.Network([qm.Queue(n, 1.0) for n in names],
                      [qm.Open(k["name"], float(np.round(lam[c], 6)),
                               **{a: b for a, b in k.items() if a != "name"})
                       for c, k in enumerate(classes)])


def fewjob_closed(rng, i: int) -> qm.Network:
    """1 or 2 closed classes of 1..4 jobs over 2..4 stations (FCFS queues
    with service SCV 0..8, now and then a 2-server one or a PS queue),
    think time 0 or 0.5..5 s; two classes share the service times at a
    station half the time (else each draws its own)."""
    K = int(rng.integers(2, 5))
    st = []
    for k in range(K):
        r = rng.random()
        if r < 0.1:
            st.append(qm.Queue(f"s{k}", 1.0, discipline="ps"))
        elif r < 0.25:
            st.append(qm.Queue(f"s{k}", 1.0, servers=2, distribution=_shape(rng)))
        else:
            st.append(qm.Queue(f"s{k}", 1.0, distribution=_shape(rng)))
    names = [s.name for s in st]
    C = 1 if rng.random() < 0.6 else 2
    return qm.Network(st, _few_closed_classes(rng, names, C, per_class=False))


def _few_closed_classes(rng, names, C, per_class):
    """C closed classes of 1..4 jobs over the stations ``names``: service
    0.2..1 s per station, shared by the classes (drawn once for all, or
    per class with ``per_class``) or each class its own; think time 0 or
    0.5..5 s; a cycle in a random order or random visit ratios."""
    shared = {n: float(np.round(rng.uniform(0.2, 1.0), 3)) for n in names}
    same = None if per_class else rng.random() < 0.5
    classes = []
    for c in range(C):
        if c == 0 or (rng.random() < 0.5 if per_class else same):
            svc = shared
        else:
            svc = {n: float(np.round(rng.uniform(0.2, 1.0), 3)) for n in names}
        z = 0.0 if rng.random() < 0.5 else float(np.round(rng.uniform(0.5, 5.0), 2))
        n = int(rng.integers(1, 5))
        if rng.random() < 0.5:
            classes.append(qm.Closed(f"c{c}", n, think_time=z, service=svc,
                                     routing=_tandem(list(rng.permutation(names)), False)))
        else:
            vis = {nm: float(np.round(rng.uniform(0.3, 1.5), 2)) for nm in names}
            classes.append(qm.Closed(f"c{c}", n, think_time=z, service=svc, visits=vis))
    return classes


def classdep_closed(rng, i: int) -> qm.Network:
    """2-3 closed classes (1..3 jobs each, 2..3 classes of at most 2) over
    2..3 exponential FCFS queues whose mean service differs by class (each
    class draws its own, log-uniform over 0.02..1 s), and a delay half the
    time; think time 0 or 0.2..3 s.  Each class cycles through every
    station in an order of its own, a third of the time with a branch back
    to its first station.  Explicit routing: for a class given by visits
    with a think time the CTMC and the simulator close a cycle differently
    (the CTMC may think twice in a row), which shifts X by a few per cent
    where product form does not hold."""
    K = int(rng.integers(2, 4))
    names = [f"s{k}" for k in range(K)]
    st = [qm.Queue(n, 1.0) for n in names]
    delay = rng.random() < 0.5
    if delay:
        st.append(qm.Delay("d", 1.0))
    C = int(rng.integers(2, 4))
    classes = []
    for c in range(C):
        svc, route = _classdep_route(rng, st, names, delay)
        z = 0.0 if rng.random() < 0.5 else float(np.round(rng.uniform(0.2, 3.0), 2))
        classes.append(qm.Closed(f"c{c}", int(rng.integers(1, 4 if C == 2 else 3)),
                                 think_time=z, routing=route, service=svc))
    return qm.Network(st, classes)


def _classdep_route(rng, st, names, delay: bool):
    """One class of :func:`classdep_closed` / :func:`classdep_large`: its
    mean service per queue (log-uniform 0.02..1 s; 0.1..1 s at the delay
    ``d``) and a cycle through every station in an order of its own, a
    third of the time with a branch back to its first one."""
    svc = {n: _loguniform(rng, 0.02, 1.0) for n in names}
    if delay:
        svc["d"] = float(np.round(rng.uniform(0.1, 1.0), 3))
    order = [str(n) for n in rng.permutation([s.name for s in st])]
    route = {a: {b: 1.0} for a, b in zip(order, order[1:] + order[:1])}
    if rng.random() < 0.33 and len(order) > 2:
        k = int(rng.integers(1, len(order) - 1))
        p = float(np.round(rng.uniform(0.1, 0.5), 2))
        route[order[k]] = {order[0]: p, order[k + 1]: 1.0 - p}
    return svc, route


def classdep_large(rng, i: int) -> qm.Network:
    """2-3 closed classes of 8..20 jobs in all (at least 2 each) over 3..5
    single-server FCFS queues whose mean service differs by class (each
    class draws its own, log-uniform over 0.02..1 s), exponential, but a
    third of the time one queue of a non-exponential shape (Erlang 2-4,
    hyperexponential or lognormal, SCV 0.25..4; the same for every class
    there); a delay half the time; each class cycles through every
    station in an order of its own (a third of the time with a branch back
    to its first one), as in :func:`classdep_closed`.  Each class thinks
    three times in four; its think time is N_c D_c t, one t for all, set
    so that the largest utilisation of the asymptotic bounds
    X_c <= N_c / (Z_c + D_c) is a target of 0.7..1.3 (t at most 4; the
    queues' own utilisations then reach about 0.95, more where a class
    without think time loads its bottleneck as it will).  Larger than the
    CTMC can hold, and where Marie's method forms pairs or leaves stations
    alone (module docstring of :mod:`qmodels.analytic.marie`)."""
    K = int(rng.integers(3, 6))
    names = [f"s{k}" for k in range(K)]
    general = rng.random() < 1.0 / 3.0
    shaped = int(rng.integers(0, K)) if general else -1
    st = []
    for k, n in enumerate(names):
        shape = None
        if k == shaped:
            u = int(rng.integers(0, 3))
            if u == 0:
                shape = Erlang(int(rng.integers(2, 5)))
            elif u == 1:
                shape = HyperExponential(float(np.round(rng.uniform(1.5, 4.0), 2)))
            else:
                shape = Lognormal(float(np.round(rng.uniform(0.25, 4.0), 2)))
        st.append(qm.Queue(n, 1.0, distribution=shape))
    delay = rng.random() < 0.5
    if delay:
        st.append(qm.Delay("d", 1.0))
    C = int(rng.integers(2, 4))
    total = int(rng.integers(8, 21))
    pops = 2 + rng.multinomial(total - 2 * C, np.full(C, 1.0 / C))
    specs = []
    for _c in range(C):
        svc, route = _classdep_route(rng, st, names, delay)
        specs.append((svc, route, rng.random() < 0.75))
    net0 = qm.Network(st, [qm.Closed(f"c{c}", int(pops[c]), routing=r, service=s)
                           for c, (s, r, _t) in enumerate(specs)])
    D = np.asarray(net0.demands, dtype=float)[:, :K]
    Dc = np.asarray(net0.demands, dtype=float).sum(axis=1)
    thinks = np.array([t for _s, _r, t in specs])
    target = rng.uniform(0.7, 1.3)

    def top(t):
        Z = np.where(thinks, pops * Dc * t, 0.0)
        return float(((pops / (Z + Dc))[:, None] * D).sum(axis=0).max())

    lo, hi = 0.0, 4.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if top(mid) > target else (lo, mid)
    Z = np.where(thinks, np.round(pops * Dc * hi, 3), 0.0)
    return qm.Network(st, [qm.Closed(f"c{c}", int(pops[c]), think_time=float(Z[c]),
                                     routing=r, service=s)
                           for c, (s, r, _t) in enumerate(specs)])


def amva_plain(rng, i: int) -> qm.Network:
    """A random closed product-form network drawn like
    :func:`validation.amva_ld_accuracy.random_network` but with single-server
    queues and delays only: 2-5 stations, 1-3 classes of 1-10 jobs (1-40
    for a single class), service 0.02..1 s, visits 0.2..3, think time 0 or
    0.1..5 s."""
    K = int(rng.integers(2, 6))
    stations = []
    for k in range(K):
        S = float(rng.uniform(0.02, 1.0))
        stations.append(qm.Delay(f"s{k}", S) if k > 0 and rng.random() < 0.25
                        else qm.Queue(f"s{k}", S))
    C = int(rng.integers(1, 4))
    classes = []
    for c in range(C):
        vis = {f"s{k}": float(rng.uniform(0.2, 3.0)) for k in range(K)
               if k == 0 or rng.random() < 0.8}
        Z = 0.0 if rng.random() < 0.3 else float(rng.uniform(0.1, 5.0))
        n = int(rng.integers(1, 41 if C == 1 else 11))
        classes.append(qm.Closed(f"c{c}", n, think_time=Z, visits=vis))
    return qm.Network(stations, classes)


def _amva_scenario(scenario):
    def make(rng, i):
        return amva_ld_accuracy.random_network(rng, scenario)
    make.__name__ = f"amva_{scenario.replace('-', '_')}"
    make.__doc__ = f":func:`validation.amva_ld_accuracy.random_network` ({scenario!r})."
    return make


_NAMED_PRIO_CLOSED = list(priority_networks.closed_networks().values())
_NAMED_PRIO_OPEN = list(priority_networks.open_networks().values())


def _levels(rng, C):
    """Priority levels of C classes: all different, or (3 classes, a fifth
    of the time) two sharing one."""
    lv = list(rng.permutation(C))
    if C == 3 and rng.random() < 0.2:
        lv[int(np.argmax(lv))] = 1
    return [int(x) for x in lv]


def priority_closed(rng, i: int) -> qm.Network:
    """The closed networks of :mod:`validation.priority_networks`, then:
    a single-server priority queue (``prio`` or ``prio-pr``; exponential
    service, or a shape of SCV 0..4 a third of the time) with per-class
    service times, 1-3 other stations (an exponential FCFS queue, a PS
    queue, a delay, or a second priority queue), 2-3 classes of different
    levels with 1..6 jobs, think time 0 or 0.2..2 s."""
    if i < len(_NAMED_PRIO_CLOSED):
        return _NAMED_PRIO_CLOSED[i]
    disc = "prio" if rng.random() < 0.5 else "prio-pr"
    shape = _shape(rng, 0.0, 4.0) if rng.random() < 0.33 else None
    st = [qm.Queue("p", 1.0, discipline=disc, distribution=shape)]
    for k in range(int(rng.integers(1, 4))):
        r = rng.random()
        S = float(np.round(rng.uniform(0.1, 1.0), 3))
        if r < 0.4:
            st.append(qm.Queue(f"s{k}", S))
        elif r < 0.65:
            st.append(qm.Queue(f"s{k}", S, discipline="ps"))
        elif r < 0.85:
            st.append(qm.Delay(f"s{k}", S))
        else:
            st.append(qm.Queue(f"s{k}", S, discipline="prio" if disc == "prio-pr"
                               else "prio-pr"))
    return qm.Network(st, _priority_classes(rng, st, lambda C: 7))


def _priority_classes(rng, st, top) -> list:
    """2-3 closed classes of different levels (:func:`_levels`) over the
    stations ``st``: visits 0.5..2 to each, their own service time 0.1..1 s
    at a priority, PS queue or delay (one per station at an FCFS queue),
    think time 0 or 0.2..2 s, 1..top(C) - 1 jobs."""
    C = int(rng.integers(2, 4))
    levels = _levels(rng, C)
    classes = []
    for c in range(C):
        vis = {s.name: float(np.round(rng.uniform(0.5, 2.0), 2)) for s in st}
        svc = {s.name: float(np.round(rng.uniform(0.1, 1.0), 3)) for s in st
               if getattr(s, "discipline", "delay") in ("prio", "prio-pr", "ps", "delay")}
        z = 0.0 if rng.random() < 0.5 else float(np.round(rng.uniform(0.2, 2.0), 2))
        classes.append(qm.Closed(f"c{c}", int(rng.integers(1, top(C))), think_time=z,
                                 visits=vis, service=svc, priority=levels[c]))
    return classes


def priority_open(rng, i: int) -> qm.Network:
    """The open networks of :mod:`validation.priority_networks`, then: a
    priority queue (``prio`` or ``prio-pr``; one server with per-class
    service and an exponential shape or one of SCV 0..4, or for ``prio``
    two exponential servers of one rate) and 0-2 other stations
    (exponential FCFS with one service time, PS, a delay), 2-3 Poisson
    classes of different levels routed in tandem (in a random order) or by
    visits; the busiest queue at 0.3..0.85."""
    if i < len(_NAMED_PRIO_OPEN):
        return _NAMED_PRIO_OPEN[i]
    disc = "prio" if rng.random() < 0.5 else "prio-pr"
    two = disc == "prio" and rng.random() < 0.25
    shape = None if two or rng.random() < 0.6 else _shape(rng, 0.0, 4.0)
    st = [qm.Queue("p", 1.0, servers=2 if two else 1, discipline=disc, distribution=shape)]
    for k in range(int(rng.integers(0, 3))):
        r = rng.random()
        S = float(np.round(rng.uniform(0.2, 1.0), 3))
        st.append(qm.Queue(f"s{k}", S) if r < 0.5 else
                  qm.Queue(f"s{k}", S, discipline="ps") if r < 0.8 else qm.Delay(f"s{k}", S))
    names = [s.name for s in st]
    C = int(rng.integers(2, 4))
    levels = _levels(rng, C)
    specs = []
    for c in range(C):
        svc = {} if two else {"p": float(np.round(rng.uniform(0.2, 1.0), 3))}
        for s in st[1:]:
            if getattr(s, "discipline", "delay") in ("ps", "delay"):
                svc[s.name] = float(np.round(rng.uniform(0.2, 1.0), 3))
        if rng.random() < 0.5:
            spec = dict(routing=_tandem(list(rng.permutation(names))))
        else:
            spec = dict(visits={n: float(np.round(rng.uniform(0.5, 1.5), 2)) for n in names})
        specs.append(dict(service=svc, priority=levels[c], **spec))
    probe = qm.Network(st, [qm.Open(f"c{c}", 1.0, **s) for c, s in enumerate(specs)])
    D = np.asarray(probe.demands, dtype=float)
    m = np.array([s.servers if isinstance(s, qm.Queue) else np.inf for s in st])
    share = rng.dirichlet(np.ones(C))
    target = rng.uniform(0.3, 0.85)
    lam = share * target / ((share[:, None] * D).sum(axis=0) / m).max()
    return qm.Network(st, [qm.Open(f"c{c}", float(np.round(lam[c], 6)), **s)
                           for c, s in enumerate(specs)])


def _ph_shape(rng, hi_scv: float = 8.0, stages: int = 8):
    """A phase-type service shape the CTMC holds exactly: exponential,
    Erlang 2-``stages`` (SCV 1/8..1/2) or a two-branch hyperexponential of SCV
    1.5..``hi_scv`` (balanced means, or three moments of a lognormal-like
    skew through :meth:`HyperExponential.from_moments` a third of the time)."""
    u = int(rng.integers(0, 3))
    if u == 0:
        return None
    if u == 1:
        return Erlang(int(rng.integers(2, stages + 1)))
    scv = float(np.round(rng.uniform(1.5, hi_scv), 2))
    if rng.random() < 0.33:
        # third moment 1.5x the balanced fit's lower bound 1.5 m2^2 / m1
        m2 = 1.0 + scv
        return HyperExponential.from_moments(1.0, m2, float(np.round(2.25 * m2 * m2, 4)))
    return HyperExponential(scv)


def ph_closed(rng, i: int) -> qm.Network:
    """1 or 2 closed classes of 1..4 jobs over 2..4 FCFS queues (now and
    then a 2-server one) with phase-type service (:func:`_ph_shape`: SCV
    1/8..8), service 0.2..1 s per station (shared by the classes or each
    its own), think time 0 or 0.5..5 s, routing in a cycle or by visits;
    drawn so the exact CTMC is small (at most a few thousand states)."""
    K = int(rng.integers(2, 5))
    st = [qm.Queue(f"s{k}", 1.0, servers=2 if rng.random() < 0.15 else 1,
                   distribution=_ph_shape(rng)) for k in range(K)]
    names = [s.name for s in st]
    C = 1 if rng.random() < 0.6 else 2
    return qm.Network(st, _few_closed_classes(rng, names, C, per_class=True))


def ph_open(rng, i: int) -> qm.Network:
    """One class of phase-type arrivals (rate 1: H2 of SCV 2..8 three times
    in four, else Erlang 2-4) into 1 or 2 single-server FCFS queues in
    series with phase-type service (:func:`_ph_shape`, SCV 1/8..4; Erlang
    of at most 4 stages at two queues), the
    bottleneck at utilisation 0.5..0.9 (one queue) or 0.5..0.65 (two) and
    the other at 0.3..1 of it: small enough for a truncated CTMC whose cut
    holds less than 1e-6 of the probability."""
    K = 1 if rng.random() < 0.4 else 2
    if rng.random() < 0.75:
        arr = HyperExponential(float(np.round(rng.uniform(2.0, 8.0), 2)))
    else:
        arr = Erlang(int(rng.integers(2, 5)))
    top = float(np.round(rng.uniform(0.5, 0.9 if K == 1 else 0.65), 3))
    rho = np.round(top * rng.uniform(0.3, 1.0, K), 3)
    rho[int(rng.integers(0, K))] = top
    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, float(rho[k]), distribution=_ph_shape(rng, 4.0, 8 if K == 1 else 4))
          for k, n in enumerate(names)]
    return qm.Network(st, [qm.Open("o", 1.0, routing=_tandem(names), interarrival=arr)])


def fitted_open(rng, i: int) -> qm.Network:
    """One open class (rate 1) into 1 or 2 single-server FCFS queues in
    series, its inter-arrival time deterministic, lognormal (SCV 0.3..6),
    exponential or H2 (SCV 2..6), each queue's service of
    :func:`_shape` (deterministic, Erlang, exponential, H2, lognormal; SCV
    0..6), the bottleneck at utilisation 0.5..0.85 (one queue) or
    0.5..0.65 (two), the other at 0.3..1 of it: the shapes the CTMC fits
    (an Erlang-k extrapolated in k, three moments, the lognormal's H3 or
    mixture of two Erlang-2)
    in open networks, against the simulator."""
    K = 1 if rng.random() < 0.5 else 2
    u = rng.random()
    arr = (Deterministic() if u < 0.3 else
           Lognormal(float(np.round(rng.uniform(0.3, 6.0), 2))) if u < 0.6 else
           None if u < 0.8 else HyperExponential(float(np.round(rng.uniform(2.0, 6.0), 2))))
    top = float(np.round(rng.uniform(0.5, 0.85 if K == 1 else 0.65), 3))
    rho = np.round(top * rng.uniform(0.3, 1.0, K), 3)
    rho[int(rng.integers(0, K))] = top
    names = [f"q{k}" for k in range(K)]
    st = [qm.Queue(n, float(rho[k]), distribution=_shape(rng, 0.0, 6.0))
          for k, n in enumerate(names)]
    return qm.Network(st, [qm.Open("o", 1.0, routing=_tandem(names), interarrival=arr)])


def priority_closed_ph(rng, i: int) -> qm.Network:
    """A single-server priority queue (``prio`` or ``prio-pr``; per-class
    service 0.1..1 s, exponential or a phase-type shape of SCV 1/8..4 a third
    of the time), 1-2 other stations (an exponential FCFS queue, a PS
    queue or a delay), 2-3 classes of different levels with 1..4 jobs,
    think time 0 or 0.2..2 s: :func:`priority_closed` drawn small enough
    for the exact CTMC."""
    disc = "prio" if rng.random() < 0.5 else "prio-pr"
    shape = _ph_shape(rng, 4.0) if rng.random() < 0.33 else None
    st = [qm.Queue("p", 1.0, discipline=disc, distribution=shape)]
    for k in range(int(rng.integers(1, 3))):
        r = rng.random()
        S = float(np.round(rng.uniform(0.1, 1.0), 3))
        st.append(qm.Queue(f"s{k}", S) if r < 0.45 else
                  qm.Queue(f"s{k}", S, discipline="ps") if r < 0.75 else qm.Delay(f"s{k}", S))
    return qm.Network(st, _priority_classes(rng, st, lambda C: 5 if C == 2 else 4))


def priority_starved(rng, i: int) -> qm.Network:
    """A low level starved behind a high one: a single-server priority
    queue (``prio`` or ``prio-pr``, mean 0.3..0.6 s for both classes;
    exponential, or Erlang-2, -4 or -8, exact in the CTMC), one
    exponential FCFS queue (0.1..0.4 s) and, half the time, a third
    station (exponential FCFS or PS, 0.1..0.3 s), a high class of 3..7 jobs (think
    time 0 or 0.05..0.3 s) that loads the priority queue to 0.9 and past,
    and a low class of 1..3 jobs without think time, small enough for the
    exact CTMC (network 0: the two-queue case, deterministic service there
    held as an Erlang-8, where the approximation was 46 % low)."""
    if i == 0:
        k, disc, Sp, Sq, nh, nl, z = 8, "prio", 0.5, 0.3, 6, 3, 0.1
    else:
        k = int(rng.choice([1, 2, 4, 8]))
        disc = "prio" if rng.random() < 0.5 else "prio-pr"
        Sp = float(np.round(rng.uniform(0.3, 0.6), 3))
        Sq = float(np.round(rng.uniform(0.1, 0.4), 3))
        nh, nl = int(rng.integers(3, 8)), int(rng.integers(1, 4))
        z = 0.0 if rng.random() < 0.5 else float(np.round(rng.uniform(0.05, 0.3), 2))
    shape = None if k == 1 else qm.Erlang(k)
    st = [qm.Queue("p", Sp, discipline=disc, distribution=shape), qm.Queue("q", Sq)]
    if i > 0 and rng.random() < 0.5:       # a third station: exponential FCFS or PS
        S3 = float(np.round(rng.uniform(0.1, 0.3), 3))
        st.append(qm.Queue("r", S3, discipline="fcfs" if rng.random() < 0.5 else "ps"))
    both = {s.name: 1 for s in st}
    return qm.Network(st, [qm.Closed("hi", nh, visits=both, priority=0, think_time=z),
                           qm.Closed("lo", nl, visits=both, priority=1)])


def _hi_load(S, n: int, z: float) -> float:
    """The utilisation of the first of the single-server queues of means
    ``S`` by one class of ``n`` jobs thinking ``z`` alone (exact MVA,
    Reiser & Lavenberg 1980, each queue taken as exponential)."""
    Q = np.zeros(len(S))
    X = 0.0
    for m in range(1, n + 1):
        R = np.asarray(S) * (1.0 + Q)
        X = m / (z + R.sum())
        Q = X * R
    return X * S[0]


def priority_starved_det(rng, i: int) -> qm.Network:
    """A low level starved behind a high one at a priority queue of
    *deterministic* service (``prio`` or ``prio-pr``, 0.3..0.6 s): a high
    class of 4..12 jobs (think time 0 or 0.05..0.3 s) that alone would load
    it to 0.85..0.995 (exact MVA with the queue taken as exponential;
    drawn again otherwise), a low class of 2..4 jobs, one exponential FCFS
    queue (0.1..0.45 s) and, half the time, a third station (exponential
    FCFS or PS, 0.1..0.4 s); many are too large for the whole network's
    chain at Erlang-20 within :data:`qmodels.analytic.priority.CTMC_STATES`.
    Against the simulator (a deterministic time is exact nowhere else).
    Network 0: HOL 0.5 s, queues of 0.3 and 0.2 s, 6 high jobs thinking
    0.1 s and 3 low ones, where the flow-equivalent server was 20 % low."""
    if i == 0:
        disc, S, nh, nl, z, third = "prio", [0.5, 0.3, 0.2], 6, 3, 0.1, "fcfs"
    else:
        while True:
            disc = "prio" if rng.random() < 0.5 else "prio-pr"
            S = [float(np.round(rng.uniform(0.3, 0.6), 3)),
                 float(np.round(rng.uniform(0.1, 0.45), 3))]
            nh, nl = int(rng.integers(4, 13)), int(rng.integers(2, 5))
            z = 0.0 if rng.random() < 0.5 else float(np.round(rng.uniform(0.05, 0.3), 2))
            third = None
            if rng.random() < 0.5:
                S.append(float(np.round(rng.uniform(0.1, 0.4), 3)))
                third = "fcfs" if rng.random() < 0.5 else "ps"
            if 0.85 <= _hi_load(S, nh, z) <= 0.995:
                break
    st = [qm.Queue("p", S[0], discipline=disc, distribution=Deterministic()),
          qm.Queue("q", S[1])]
    if third:
        st.append(qm.Queue("r", S[2], discipline=third))
    both = {s.name: 1 for s in st}
    return qm.Network(st, [qm.Closed("hi", nh, visits=both, priority=0, think_time=z),
                           qm.Closed("lo", nl, visits=both, priority=1)])


def cache_network(rng, i: int) -> qm.Network:
    """A cache station (:class:`qmodels.CacheStation`: LRU, FIFO or RANDOM,
    lookup 0.5..5 ms, Zipf(0.6..1.2) popularity over 200..5000 items,
    capacity 1..30 % of them) whose misses go on to an exponential FCFS disk
    (10..50 ms) and whose hits leave, or visit a
    memory queue (0.1..1 ms) first; open requests loading the disk to
    0.3..0.85, or a closed class of 2..20 users thinking 0..1 s.  The
    analytic answer solves Che's split (Che, Tung & Wang 2002; Martina,
    Garetto & Leonardi 2014); the simulator runs the cache item by item."""
    items = int(rng.integers(200, 5001))
    cache = qm.Cache(max(1, int(items * rng.uniform(0.01, 0.3))),
                     qm.Zipf(float(np.round(rng.uniform(0.6, 1.2), 2)), items),
                     policy=str(rng.choice(["lru", "fifo", "random"])),
                     lookup=float(np.round(rng.uniform(0.0005, 0.005), 5)))
    mem = rng.random() < 0.5
    st = cache.station("cache", hit="mem" if mem else "sink", miss="disk")
    S = float(np.round(rng.uniform(0.01, 0.05), 4))
    stations = [st, qm.Queue("disk", S)]
    if mem:
        stations.append(qm.Queue("mem", float(np.round(rng.uniform(1e-4, 1e-3), 6))))
    if rng.random() < 0.5:
        lam = float(np.round(rng.uniform(0.3, 0.85) / (S * (1.0 - st.hit_ratio)), 4))
        rows = {"source": {"cache": 1.0}, "disk": {"sink": 1.0}}
        if mem:
            rows["mem"] = {"sink": 1.0}
        return qm.Network(stations, [qm.Open("r", lam, routing=rows)])
    # closed: a hit goes back to the cache (the reference: the cycle ends)
    # or through the memory queue
    stations[0] = cache.station("cache", hit="mem" if mem else "cache", miss="disk")
    rows = {"disk": {"cache": 1.0}}
    if mem:
        rows["mem"] = {"cache": 1.0}
    z = 0.0 if rng.random() < 0.3 else float(np.round(rng.uniform(0.05, 1.0), 3))
    return qm.Network(stations, [qm.Closed("r", int(rng.integers(2, 21)), think_time=z,
                                           routing=rows, reference="cache")])


def forkjoin_pooled(rng, i: int) -> qm.Network:
    """A closed class (2..10 jobs, think time 0.5..2 s, a CPU of 0.02..0.1
    s) whose every cycle forks k = 2..8 tasks down one branch of 2..3 FCFS
    queues (0.05..0.25 s each) under one pool held over the first two and,
    with three queues, mostly a second held over the last two (1..3 tokens
    each);
    networks 0..3 are SPAX's burst (:func:`qmodels.cases.spax.burst_network`
    at m = 0, unlimited disks, p_io 10, 20, 40, 70 %), the configuration
    it was built for."""
    if i < 4:
        import dataclasses

        from qmodels.cases import spax

        q = dataclasses.replace(spax.Params(), p_io=(0.1, 0.2, 0.4, 0.7)[i], miss_rate=0.0,
                                disks_per_ion=0)
        return spax.burst_network(q)
    k = int(rng.integers(2, 9))
    L = int(rng.integers(2, 4))
    names = ["a", "b", "c"][:L]
    st = [qm.Queue("cpu", float(np.round(rng.uniform(0.02, 0.1), 3))),
          qm.Delay("release", 1e-9)]
    st += [qm.Queue(n, float(np.round(rng.uniform(0.05, 0.25), 3))) for n in names]
    st.append(qm.ForkJoin("fj", [["release", *names]], tasks=k))
    pools = [qm.TokenPool("p1", int(rng.integers(1, 4)), names[0], names[1],
                          path=tuple(names[:2]))]
    if L == 3 and rng.random() < 0.7:
        pools.append(qm.TokenPool("p2", int(rng.integers(1, 4)), names[-2], names[-1],
                                  path=tuple(names[-2:])))
    return qm.Network(st, [qm.Closed("job", int(rng.integers(2, 11)),
                                     visits={"cpu": 1.0, "fj": 1.0},
                                     think_time=float(np.round(rng.uniform(0.5, 2.0), 2)))],
                      pools=pools)


def _fj_closed_grid():
    """The closed grid of ``python -m validation.forkjoin_accuracy`` (k, N,
    Z, spread, tandem, outside; its order)."""
    import itertools
    return list(itertools.product((2, 3, 4, 8), (2, 3, 5, 10, 20), (0.0, 2.0), (False, True),
                                  (False, True), (False, True)))


def _fj_open_grid():
    import itertools
    return list(itertools.product((2, 4, 8), (0.3, 0.6, 0.85), (False, True)))


def forkjoin_closed(rng, i: int) -> qm.Network:
    """Network i of :func:`_fj_closed_grid` by
    :func:`validation.forkjoin_accuracy.closed_net`."""
    return forkjoin_accuracy.closed_net(*_fj_closed_grid()[i])


def forkjoin_small(rng, i: int) -> qm.Network:
    """Network i of :func:`validation.forkjoin_varki_accuracy.exact_catalog`
    (the closed fork-joins whose exact chain has at most 30,000 states)."""
    return forkjoin_accuracy.closed_net(*forkjoin_varki_accuracy.exact_catalog()[i])


def forkjoin_open(rng, i: int) -> qm.Network:
    """Network i of the open grid by
    :func:`validation.forkjoin_accuracy.open_net`."""
    return forkjoin_accuracy.open_net(*_fj_open_grid()[i])


def pooled(rng, i: int) -> qm.Network:
    """One closed class of 2..8 jobs around a cycle of 3..5 exponential
    queues (a 2-server one now and then; a feedback branch a third of the
    time), think time 0 or 0.2..2 s, with a token pool of 1..3 tokens held
    over 1..3 consecutive queues; a quarter of the networks have a second
    pool, nested in the first or overlapping it."""
    K = int(rng.integers(3, 6))
    names = [f"s{k}" for k in range(K)]
    st = [qm.Queue(n, float(np.round(rng.uniform(0.05, 1.0), 3)),
                   servers=2 if rng.random() < 0.15 else 1) for n in names]
    route = {names[k]: {names[(k + 1) % K]: 1.0} for k in range(K)}
    a = int(rng.integers(1, K))
    span = int(rng.integers(1, min(3, K - a) + 1))
    r = a + span - 1            # the release station
    pools = [qm.TokenPool("p", int(rng.integers(1, 4)), names[a], names[r])]
    if rng.random() < 0.25 and span >= 2:
        if rng.random() < 0.5 or r + 1 >= K:    # nested: one slot inside the first
            b = a + int(rng.integers(1, span))
            pools.append(qm.TokenPool("q", 1, names[b], names[b]))
        else:                                   # overlapping: from its release on
            pools.append(qm.TokenPool("q", 1, names[r], names[r + 1]))
    if rng.random() < 0.33:
        # a feedback branch back to the first queue, from a station outside
        # the pool's span or from its release (a job leaves a pool only there)
        k = int(rng.choice([j for j in range(1, K) if not a <= j < r]))
        p = float(np.round(rng.uniform(0.1, 0.5), 2))
        nxt = names[(k + 1) % K]
        if nxt != names[0]:
            route[names[k]] = {names[0]: p, nxt: 1.0 - p}
    z = 0.0 if rng.random() < 0.5 else float(np.round(rng.uniform(0.2, 2.0), 2))
    return qm.Network(st, [qm.Closed("c", int(rng.integers(2, 9)), think_time=z,
                                     routing=route)], pools=pools)


def _nonexp(make):
    def gen(rng, i):
        return make(rng)
    gen.__name__ = make.__name__
    gen.__doc__ = f":func:`validation.nonexp.{make.__name__}`."
    return gen


# ---------------------------------------------------------------------------
# simulation horizons
# ---------------------------------------------------------------------------

def _h_nonexp(net):
    return 4e4


def _h_open_events(events):
    """A horizon of about ``events`` arrivals per replication."""
    def h(net):
        lam = sum(float(c.arrival_rate) for c in net.open_classes)
        return float(events) / lam
    return h


def _h_cache(net):
    """About 2e5 lookups per replication (open: at the arrival rate; closed:
    at the bound N / (Z + D) on the cycle rate)."""
    if net.open_classes:
        return _h_open_events(2e5)(net)
    c = net.classes[0]
    D = float(np.asarray(net.demands, dtype=float)[0].sum())
    return 2e5 * (float(c.think_time) + D) / max(1, int(c.population)) * 2.0


def _h_fj_pooled(net):
    """SPAX's burst: 60 simulated seconds (about 12,000 transactions);
    the small networks: 4000 s (a few thousand cycles)."""
    return 60.0 if net.name.startswith("SPAX") else 4000.0


def _h_fj_closed(net):
    return 2000.0 * (int(net.classes[0].population) + 2)


def _h_closed_cycles(cycles):
    """A horizon of about ``cycles`` cycles of the slowest closed job
    (a cycle lasts at least Z + sum of demands)."""
    def h(net):
        D = np.asarray(net.demands, dtype=float)
        per = [float(c.think_time) + float(D[i].sum()) * max(1, int(c.population))
               for i, c in enumerate(net.classes)]
        return float(cycles) * max(per)
    return h


def _h_starved(net):
    """A horizon of about 400 cycles of the starved low class, its
    throughput guessed as what the high class leaves idle at the priority
    queue: the low class's cycle at least its demands times its jobs, over
    the idle fraction the high class's bound leaves (at least 1 %)."""
    D = np.asarray(net.demands, dtype=float)
    hi, lo = net.classes
    Xhi = min(int(hi.population) / (float(D[0].sum()) + float(hi.think_time)),
              1.0 / float(D[0].max()))
    idle = max(1.0 - Xhi * float(D[0, 0]), 0.01)
    return 400.0 * float(D[1].sum()) * int(lo.population) / idle


# ---------------------------------------------------------------------------
# the catalogs
# ---------------------------------------------------------------------------

_SUB = (("fcfs_as_ps", True),)

CATALOGS: dict[str, Catalog] = {c.name: c for c in (
    Catalog("qna-nonexp", "random open networks, 1-2 classes, general service and arrivals "
            "(validation.nonexp)", _nonexp(nonexp.open_network), 60, 3, "sim",
            (Approx("qna", "qna"),), seed=(1, 0), sim=SimPlan(_h_nonexp)),
    Catalog("qna-bursty", "bursty H2 arrivals (SCV 2-8) into tandems of 1-9 queues, incl. "
            "Suresh & Whitt's nine queues", bursty_tandem, 60, 2, "sim",
            (Approx("qna", "qna"),), seed=(27, 1), sim=SimPlan(_h_open_events(1e5))),
    # the same networks (same generator and seed, so the same simulations)
    # solved by RQNA (Whitt & You 2022)
    Catalog("rqna-bursty", "bursty H2 arrivals (SCV 2-8) into tandems of 1-9 queues, incl. "
            "Suresh & Whitt's nine queues", bursty_tandem, 60, 2, "sim",
            (Approx("rqna", "rqna"),), seed=(27, 1), sim=SimPlan(_h_open_events(1e5))),
    Catalog("rqna-nonexp", "random open networks, 1-2 classes, general service and arrivals "
            "(validation.nonexp; RQNA answers the single-class ones of single-server FCFS "
            "queues)", _nonexp(nonexp.open_network), 60, 3, "sim",
            (Approx("rqna", "rqna"),), seed=(1, 0), sim=SimPlan(_h_nonexp)),
    Catalog("qna-ph", "phase-type arrivals (H2 SCV 2-8, Erlang 2-4) into 1-2 queues with "
            "phase-type service (SCV 1/8-4), small enough for the exact CTMC", ph_open, 30, 2,
            "ctmc-open", (Approx("qna", "qna"), Approx("rqna", "rqna")), seed=(27, 16)),
    Catalog("qna-classdep", "open classes of small and big jobs at FCFS queues whose mean "
            "service differs by class", classdep_open, 50, 2, "sim",
            (Approx("qna", "qna"), Approx("exact", "mva", _SUB, substituted=True)),
            seed=(27, 2), sim=SimPlan(_h_open_events(2e5))),
    Catalog("mva-residual-nonexp", "random closed networks, 1-2 classes of 2-12 jobs, general "
            "service (validation.nonexp)", _nonexp(nonexp.closed_network), 60, 3, "sim",
            (Approx("mva-residual", "mva_residual"),), seed=(1, 1), sim=SimPlan(_h_nonexp)),
    Catalog("mva-residual-fewjobs", "closed networks of 1-4 jobs per class, service SCV 0-8",
            fewjob_closed, 120, 3, "sim", (Approx("mva-residual", "mva_residual"),),
            seed=(27, 3), sim=SimPlan(_h_closed_cycles(5e3))),
    Catalog("marie-nonexp", "random closed networks, 1-2 classes of 2-12 jobs, general "
            "service (validation.nonexp)", _nonexp(nonexp.closed_network), 60, 3, "sim",
            (Approx("marie", "marie"),), seed=(1, 1), sim=SimPlan(_h_nonexp)),
    Catalog("marie-fewjobs", "closed networks of 1-4 jobs per class, service SCV 0-8",
            fewjob_closed, 120, 3, "sim", (Approx("marie", "marie"),),
            seed=(27, 3), sim=SimPlan(_h_closed_cycles(5e3))),
    # the same networks and simulations again, solved by the CTMC: exact
    # where every shape is phase-type, else with its fitted shapes (a
    # deterministic time extrapolated in the phases of its Erlang fits)
    Catalog("ctmc-fewjobs", "closed networks of 1-4 jobs per class, service SCV 0-8",
            fewjob_closed, 120, 3, "sim", (Approx("ctmc", "ctmc"),),
            seed=(27, 3), sim=SimPlan(_h_closed_cycles(5e3))),
    Catalog("ctmc-nonexp", "random closed networks, 1-2 classes of 2-12 jobs, general "
            "service (validation.nonexp; the CTMC answers those of at most 200,000 states)",
            _nonexp(nonexp.closed_network), 60, 3, "sim", (Approx("ctmc", "ctmc"),),
            seed=(1, 1), sim=SimPlan(_h_nonexp)),
    Catalog("ctmc-open-fitted", "one open class of deterministic, lognormal, exponential or "
            "H2 arrivals into 1-2 FCFS queues of service SCV 0-6", fitted_open, 30, 2, "sim",
            (Approx("ctmc", "ctmc"),), seed=(27, 24), sim=SimPlan(_h_open_events(2e5))),
    Catalog("marie-ph", "closed networks of 1-4 jobs per class, phase-type service (SCV "
            "1/8-8), small enough for the exact CTMC", ph_closed, 80, 3, "ctmc",
            (Approx("marie", "marie"), Approx("mva-residual", "mva_residual")), seed=(27, 17)),
    Catalog("fcfs-classdep-closed", "closed multi-class networks, exponential FCFS queues whose "
            "mean service differs by class", classdep_closed, 150, 4, "ctmc",
            (Approx("mva-residual", "mva_residual"), Approx("marie", "marie"),
             Approx("exact", "mva", _SUB, substituted=True),
             Approx("schweitzer", "schweitzer", _SUB, substituted=True),
             Approx("linearizer", "linearizer", _SUB, substituted=True)), seed=(27, 4)),
    # the same networks and simulations (same generator and seed) solved by
    # marie as it chooses, with pairs only, and with every station alone:
    # the envelopes of its three forms on networks past the small catalogs
    *(Catalog(f"marie-classdep-large{tail}", "closed networks of 2-3 classes, 8-20 jobs, "
              "3-5 FCFS queues whose mean service differs by class (one general a third of "
              f"the time){words}", classdep_large, 40, 3, "sim",
              (Approx("marie", "marie", kw),), seed=(27, 23),
              sim=SimPlan(_h_closed_cycles(4e3), extend=1))
      for tail, words, kw in (("", "", ()),
                              ("-pairs", ", solved with subsystems of pairs at most "
                               "(group_max=2)", (("group_max", 2),)),
                              ("-alone", ", solved with every station alone (group_max=1)",
                               (("group_max", 1),)))),
    Catalog("amva-plain", "random closed product-form networks, single-server queues and "
            "delays, 1-3 classes", amva_plain, 300, 10, "mva",
            (Approx("schweitzer", "schweitzer"), Approx("linearizer", "linearizer")),
            seed=(27, 5)),
    *(Catalog(f"amva-{sc}", "random closed product-form networks with "
              + {"multi-server": "c-server queues (c = 2-6)",
                 "ld-concave": "load-dependent stations of concave rates",
                 "ld-convex": "load-dependent stations of convex rates",
                 "ld-falling": "load-dependent stations of rising-then-falling rates"}[sc]
              + " (validation.amva_ld_accuracy)", _amva_scenario(sc), 200, 10, "mva",
              tuple(Approx(m, m, (("falling_rates", True),) if sc == "ld-falling" else ())
                    for m in ("schweitzer", "linearizer")), seed=(27, 6 + j))
      for j, sc in enumerate(amva_ld_accuracy.SCENARIOS)),
    Catalog("priority-closed", "closed networks with a prio or prio-pr queue, 2-3 classes of "
            "different levels", priority_closed, 60, 2, "sim",
            (Approx("priority", "priority"),), seed=(27, 10),
            sim=SimPlan(_h_closed_cycles(5e3))),
    Catalog("priority-closed-ph", "closed networks with a prio or prio-pr queue, 2-3 classes "
            "of 1-4 jobs, small enough for the exact CTMC", priority_closed_ph, 60, 2, "ctmc",
            (Approx("priority", "priority"),), seed=(27, 18)),
    Catalog("priority-closed-ph-fes", "the networks of priority-closed-ph solved with the "
            "whole network's chain turned off (max_states=0): the approximation's own error",
            priority_closed_ph, 60, 2, "ctmc",
            (Approx("priority", "priority", (("max_states", 0),)),), seed=(27, 18)),
    Catalog("priority-closed-starved-fes", "a low level of 1-3 jobs starved behind a high one "
            "at a prio or prio-pr queue (exponential or Erlang), solved with the whole "
            "network's chain turned off (max_states=0): the approximation's own error",
            priority_starved, 30, 3, "ctmc",
            (Approx("priority", "priority", (("max_states", 0),)),), seed=(27, 21)),
    Catalog("priority-closed-starved-det", "a low level of 2-4 jobs starved behind a high "
            "one at a prio or prio-pr queue of deterministic service, past the whole "
            "network's chain at Erlang-20", priority_starved_det, 30, 3, "sim",
            (Approx("priority", "priority"),), seed=(27, 22),
            sim=SimPlan(_h_starved, extend=3)),
    # the same networks and simulations, the whole network's chain turned off
    Catalog("priority-closed-starved-det-fes", "a low level of 2-4 jobs starved behind a high "
            "one at a prio or prio-pr queue of deterministic service, solved with the whole "
            "network's chain turned off (max_states=0): the approximation's own error",
            priority_starved_det, 30, 3, "sim",
            (Approx("priority", "priority", (("max_states", 0),)),), seed=(27, 22),
            sim=SimPlan(_h_starved, extend=3)),
    Catalog("priority-open", "open networks with a prio or prio-pr queue, 2-3 Poisson classes "
            "of different levels", priority_open, 60, 2, "sim",
            (Approx("priority", "priority"),), seed=(27, 11),
            sim=SimPlan(_h_open_events(2e5))),
    Catalog("cache-che", "a cache station (LRU, FIFO, RANDOM; Zipf popularity) in front of "
            "a disk, open or closed, solved with Che's split", cache_network, 40, 2, "sim",
            (Approx("exact", "mva"),), seed=(27, 19), sim=SimPlan(_h_cache)),
    Catalog("forkjoin-closed", "closed fork-joins of 2-8 branches, 2-20 jobs "
            "(validation.forkjoin_accuracy)", forkjoin_closed, len(_fj_closed_grid()), 3,
            "sim", (Approx("forkjoin", "forkjoin"),), seed=(27, 12),
            sim=SimPlan(_h_fj_closed)),
    Catalog("forkjoin-closed-exact", "closed fork-joins of 2-8 branches, 1-30 jobs, small "
            "enough for the exact chain (validation.forkjoin_varki_accuracy)", forkjoin_small,
            len(forkjoin_varki_accuracy.exact_catalog()), 6, "fj-ctmc",
            (Approx("forkjoin", "forkjoin"), Approx("forkjoin-varki", "forkjoin_varki")),
            seed=(27, 15)),
    Catalog("forkjoin-pools", "a closed class forking 2-8 tasks down one branch under one or "
            "two token pools, incl. SPAX's burst", forkjoin_pooled, 30, 5, "sim",
            (Approx("forkjoin-pools", "solve", (("method", "forkjoin-pools"),)),),
            seed=(27, 20), sim=SimPlan(_h_fj_pooled)),
    Catalog("forkjoin-open", "open fork-joins of 2-8 M/M/1 branches, utilisation 0.3-0.85 "
            "(validation.forkjoin_accuracy)", forkjoin_open, len(_fj_open_grid()), 2, "sim",
            (Approx("forkjoin", "forkjoin"),), seed=(27, 13),
            sim=SimPlan(_h_open_events(1e5))),
    Catalog("decomposition", "one closed class with one or two token pools (1-3 tokens)",
            pooled, 150, 4, "ctmc", (Approx("decomposition", "decompose"),), seed=(27, 14)),
)}

#: a published reference for network 0 of a catalog: (class, R, source)
PUBLISHED = {
    name: ("o", float(sum(SURESH_WHITT_WAITS) + sum(SURESH_WHITT_SERVICE)),
           "Suresh & Whitt 1990 (Whitt & You 2019, Table 2): simulated waits "
           "3.36 ... 1.44, 29.2 plus service 5.7")
    for name in ("qna-bursty", "rqna-bursty")
}


def networks(catalog: Catalog, quick: bool = False) -> list:
    """The catalog's networks, in order (the first ``quick`` of them with
    ``quick``): the same draws whatever is run after them."""
    rng = np.random.default_rng(list(catalog.seed))
    n = catalog.quick if quick else catalog.networks
    return [catalog.make(rng, i) for i in range(n)]


# ---------------------------------------------------------------------------
# one network
# ---------------------------------------------------------------------------

def _class_figures(result, net):
    X = {c: float(result.X[c]) for c in net.class_names}
    R = {c: float(result.R[c]) for c in net.class_names}
    return X, R


def _open_rates(net, X):
    """The X of an open class is its arrival rate (module docstring)."""
    for c in net.open_classes:
        X[c.name] = float(c.arrival_rate)
    return X


def _simulate(net, plan: SimPlan, seed: int, quick: bool):
    horizon = plan.horizon(net) / (2.0 if quick else 1.0)
    extend = 0 if quick else plan.extend
    for attempt in range(extend + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = qm.simulate(net, seed=seed, horizon=horizon, replications=plan.replications,
                            progress=False)
        hw = max(s.R[c].half_width / float(s.R[c]) for c in net.class_names
                 if float(s.X[c]) > 0)
        if hw <= HALF_WIDTH or attempt == extend:
            break
        horizon *= 4.0
    X, R = _class_figures(s, net)
    return _open_rates(net, X), R, float(hw), float(horizon)


#: probability the truncated open CTMC may leave beyond its cut, and the
#: largest cut tried (doubling from 80)
OPEN_CUT_MASS = 1e-6
OPEN_CUT_MAX = 1280


def _ctmc_open(net):
    """The exact CTMC of an open network, its open population cut where
    less than :data:`OPEN_CUT_MASS` of the probability lies (the cut
    doubled from 80 up to :data:`OPEN_CUT_MAX`); an error if even that cut
    holds more (the catalog's generator keeps its networks well inside)."""
    cut = 80
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = qm.ctmc(net, open_limit=cut, max_states=400_000)
        mass = float(r.info.get("truncation_mass", 0.0))
        if mass <= OPEN_CUT_MASS:
            return r
        if cut >= OPEN_CUT_MAX:
            raise RuntimeError(f"open CTMC reference: the cut at {cut} jobs holds "
                               f"probability {mass:.3g} > {OPEN_CUT_MASS:g}")
        cut *= 2


def _reference(catalog: Catalog, net, index: int, quick: bool):
    if catalog.reference == "ctmc":
        X, R = _class_figures(qm.ctmc(net), net)
        return X, R, None, None
    if catalog.reference == "ctmc-open":
        X, R = _class_figures(_ctmc_open(net), net)
        return _open_rates(net, X), R, None, None
    if catalog.reference == "mva":
        X, R = _class_figures(qm.mva(net), net)
        return X, R, None, None
    if catalog.reference == "fj-ctmc":
        ref = forkjoin_exact.solve(net)
        c = net.class_names[0]
        return {c: ref["X"]}, {c: ref["R"]}, None, None
    seed = 1_000_000 * catalog.seed[-1] + index
    return _simulate(net, catalog.sim, seed, quick)


def _errors(net, a, X, R):
    eX = eR = 0.0
    for c in net.class_names:
        if X[c] <= 0:
            continue
        eX = max(eX, abs(float(a.X[c]) - X[c]) / X[c])
        eR = max(eR, abs(float(a.R[c]) - R[c]) / R[c])
    return eX, eR


def _over_capacity(net, r) -> str | None:
    """A queue the answer loads past one server's capacity (U > 1 per
    server), which :func:`qmodels.analytic.contract.check_laws` should have
    refused: checked here as well, with a tolerance of its own (the
    contract's absolute tolerance grows with the largest figure of the
    answer, so a starved class's R of 1e12 lets U = 1.03 through)."""
    U = np.asarray(r.station_utilization, dtype=float).sum(axis=0)
    for k, st in enumerate(net.stations):
        if isinstance(st, qm.Queue) and U[k] > 1.0 + 1e-6:
            R = np.asarray(r.class_response_time, dtype=float)
            return (f"utilisation U <= 1 per server at station {st.name!r}: {U[k]:.10g} > 1, "
                    f"returned without LawViolationError (largest class R {R.max():.4g})")
    return None


def _solve(ap: Approx, net):
    """(status, result or message): "ok", "refused", "law", "crash";
    with "unconverged" the result comes with a ConvergenceWarning."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = ap.solve(net)
    except UnsupportedModelError as e:
        return "refused", str(e)
    except LawViolationError as e:
        return "law", f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - every other exception is a defect to report
        return "crash", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    missed = _over_capacity(net, r)
    if missed:
        return "law", f"law violation missed by the contract: {missed}"
    unconv = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    return ("unconverged" if unconv else "ok"), (r, unconv)


def measure(name: str, index: int, net, quick: bool) -> dict:
    """Solve network ``index`` of catalog ``name`` with each approximation
    and, if one of them answers, the reference: {"index", "seconds",
    "hw", "horizon", "approx": [{"method", "substituted", "status",
    "eX", "eR", "features", "form", "message"}]}: ``form`` the answer's
    ``info["approximation"]`` (the form of a method that has several)."""
    catalog = CATALOGS[name]
    t0 = time.perf_counter()
    rows, answered = [], []
    for ap in catalog.approx:
        status, out = _solve(ap, net)
        row = {"method": ap.method, "substituted": ap.substituted, "status": status}
        if status in ("ok", "unconverged"):
            r, unconv = out
            row["features"] = features(net, r)
            row["form"] = (r.info or {}).get("approximation")
            row["message"] = "; ".join(unconv)
            answered.append((row, r))
        else:
            row["message"] = out
        rows.append(row)
    out = {"catalog": name, "index": index, "approx": rows, "hw": None, "horizon": None}
    if answered:
        X, R, hw, horizon = _reference(catalog, net, index, quick)
        out.update(hw=hw, horizon=horizon, ref_R=R)
        for row, r in answered:
            row["eX"], row["eR"] = _errors(net, r, X, R)
            row["R"] = {c: float(r.R[c]) for c in net.class_names}
    out["seconds"] = time.perf_counter() - t0
    return out


def _task(args):
    return measure(*args)


# ---------------------------------------------------------------------------
# a run
# ---------------------------------------------------------------------------

def run(names=None, quick: bool = False, workers: int = 1, progress=None,
        scheduler: str | None = None) -> dict:
    """{catalog name: [measure() of each network, in order]}; the networks
    on ``workers`` processes or a dask ``scheduler``'s workers
    (:mod:`validation._spread`), the same figures whatever the split."""
    names = list(names or CATALOGS)
    tasks = []
    for name in names:
        for i, net in enumerate(networks(CATALOGS[name], quick)):
            tasks.append((name, i, net, quick))
    out = {name: [] for name in names}
    for res in map_in_order(_task, tasks, workers, scheduler):
        out[res["catalog"]].append(res)
        if progress:
            progress(res)
    return out


def _floor(x, d=6):
    return math.floor(x * 10**d) / 10**d


def _ceil(x, d=6):
    return math.ceil(x * 10**d - 1e-9) / 10**d


def _box(feats: list) -> dict:
    where = {}
    for key in FEATURES:
        vals = [f[key] for f in feats]
        if key == "workload":
            where[key] = sorted(set(vals))
        else:
            lo, hi = float(min(vals)), float(max(vals))
            where[key] = [int(lo), int(hi)] if all(float(v).is_integer() for v in vals) \
                else [_floor(lo), _ceil(hi)]
    return where


def _by_form(ok: list) -> list:
    """The answered ``ok`` rows [(network row, approx row)] split by the
    form that answered (``form``, the answer's ``info["approximation"]``),
    in order of the form's name: [(form, rows)].  A method of one form
    (no row names one) gives [(None, ok)]; rows that name none beside rows
    that do are a group of their own (None)."""
    forms = sorted({a.get("form") for _, a in ok} - {None})
    groups = [(f, [(r, a) for r, a in ok if a.get("form") == f]) for f in forms]
    plain = [(r, a) for r, a in ok if a.get("form") is None]
    return ([(None, plain)] if plain else []) + groups


def envelopes_of(name: str, rows: list) -> tuple[list, list]:
    """(the envelopes of catalog ``name`` from its measured ``rows``, the
    defects found: law violations, crashes, unconverged answers).

    A method whose answers came in several forms (``priority``, ``marie``:
    the answer's ``info["approximation"]``) gets one envelope per form, of
    that form's rows alone (its networks, box, errors, simulation
    half-width), carrying the ``form``: an answer is then quoted the worst
    of the networks answered as it was, not a rougher form's worst.  The
    refusals and defects are the method's on the whole catalog (a refused
    network or a crash has no form), repeated on each form's envelope."""
    catalog = CATALOGS[name]
    envs, defects = [], []
    for j, ap in enumerate(catalog.approx):
        ok = [(r, r["approx"][j]) for r in rows if r["approx"][j]["status"] == "ok"]
        refused = sum(r["approx"][j]["status"] == "refused" for r in rows)
        bad = sum(r["approx"][j]["status"] in ("law", "crash", "unconverged") for r in rows)
        for r in rows:
            a = r["approx"][j]
            if a["status"] in ("law", "crash", "unconverged"):
                defects.append({"catalog": name, "index": r["index"], "method": ap.method,
                                "substituted": ap.substituted, "status": a["status"],
                                "message": a["message"]})
        if not ok:
            envs.append({"catalog": name, "method": ap.method, "networks": 0,
                         "refused": refused, "defects": bad, "substituted": ap.substituted,
                         "family": catalog.family})
            continue
        for form, mine in _by_form(ok):
            eX = np.array([a["eX"] for _, a in mine])
            eR = np.array([a["eR"] for _, a in mine])
            env = {
                "method": ap.method,
                "family": catalog.family,
                "reference": REFERENCE_WORDS[catalog.reference],
                "networks": len(mine),
                "command": f"{COMMAND} --family {name}",
                "where": _box([a["features"] for _, a in mine]),
                "error": {"X": {"max": _ceil(float(eX.max())),
                                "mean": round(float(eX.mean()), 6)},
                          "R": {"max": _ceil(float(eR.max())),
                                "mean": round(float(eR.mean()), 6)}},
                "catalog": name,
                "refused": refused,
                "defects": bad,
            }
            if ap.substituted:
                env["substituted"] = True
            if form is not None:
                # the envelope speaks for an answer of this form only
                env["form"] = form
            elif len(_by_form(ok)) > 1:
                # the answers that named no form, beside others that did:
                # it speaks for those alone, not for every form
                env["unnamed_form"] = True
            if catalog.reference == "sim":
                env["sim_halfwidth"] = _ceil(max(r["hw"] for r, _ in mine), 4)
            pub = PUBLISHED.get(name)
            first = mine[0][0]
            if pub and first["index"] == 0:
                cls, Rpub, source = pub
                Ra = mine[0][1]["R"][cls]
                env["published"] = {"network": 0, "source": source, "R": round(Rpub, 6),
                                    "R_approx": round(Ra, 6),
                                    "R_simulator": round(first["ref_R"][cls], 6),
                                    "error": round(abs(Ra - Rpub) / Rpub, 6)}
            envs.append(env)
    return envs, defects


def validate_entry(env: dict) -> list[str]:
    """What is wrong with one envelope entry of ``envelopes.json`` (empty:
    nothing): the schema of :mod:`qmodels.analytic.envelopes`."""
    bad = []
    for key, kind in (("method", str), ("family", str), ("reference", str),
                      ("networks", int), ("command", str), ("where", dict), ("error", dict)):
        if not isinstance(env.get(key), kind) or isinstance(env.get(key), bool):
            bad.append(f"{key}: not a {kind.__name__}")
    if bad:
        return bad
    if env["networks"] < 1:
        bad.append("networks < 1")
    for key, box in env["where"].items():
        if key not in FEATURES:
            bad.append(f"where: unknown feature {key!r}")
        elif key == "workload":
            if not (isinstance(box, list) and box
                    and set(box) <= {"open", "closed", "mixed"}):
                bad.append(f"where.workload: {box!r}")
        elif not (isinstance(box, list) and len(box) == 2
                  and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                          and math.isfinite(v) for v in box) and box[0] <= box[1]):
            bad.append(f"where.{key}: {box!r}")
    for fig in ("X", "R"):
        e = env["error"].get(fig)
        if not (isinstance(e, dict) and all(
                isinstance(e.get(k), (int, float)) and math.isfinite(e[k]) and e[k] >= 0
                for k in ("max", "mean")) and e["mean"] <= e["max"] + 1e-12):
            bad.append(f"error.{fig}: {e!r}")
    if "substituted" in env and not isinstance(env["substituted"], bool):
        bad.append("substituted: not a bool")
    if "form" in env and not (isinstance(env["form"], str) and env["form"]):
        bad.append("form: not a non-empty string")
    if "unnamed_form" in env and not (env["unnamed_form"] is True and "form" not in env):
        bad.append("unnamed_form: not true beside no form")
    # (``forms``: the forms that answered a catalog, one envelope for all,
    # as written before the split by form; still read)
    if "forms" in env and not (isinstance(env["forms"], list) and env["forms"]
                               and all(isinstance(f, str) for f in env["forms"])):
        bad.append("forms: not a non-empty list of strings")
    if "form" in env and "forms" in env:
        bad.append("both form and forms")
    if "sim_halfwidth" in env and not (isinstance(env["sim_halfwidth"], (int, float))
                                       and env["sim_halfwidth"] >= 0):
        bad.append("sim_halfwidth: not a non-negative number")
    return bad


# ---------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------

def _pct(x):
    """A relative error as a percentage (beyond 10,000 % in powers of ten:
    a starved class's response time can be off by many orders)."""
    return f"{100 * x:.2f} %" if 100 * x < 1e4 else f"{100 * x:.2g} %"


def _range(lo, hi, fmt="{:g}"):
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"


def box_words(where: dict) -> str:
    """An envelope's box in words."""
    w = where
    parts = ["/".join(w["workload"])]
    parts.append(f"{_range(*w['classes'])} class{'es' if w['classes'][1] > 1 else ''}")
    if w["population"][1] > 0:
        parts.append(f"{_range(*w['population'])} jobs")
    parts.append(f"{_range(*w['stations'])} stations")
    if w["servers"][1] > 1:
        parts.append(f"<= {w['servers'][1]:g} servers")
    ld = w.get("load_dependent", [0, 0])
    if ld[1] > 0:
        parts.append({2: "load-dependent rates that fall", 1: "load-dependent rates that "
                      "never fall"}[ld[1]] + (" or none" if ld[0] == 0 else ""))
    lo, hi = w["service_scv_min"][0], w["service_scv_max"][1]
    if (lo, hi) != (1, 1):
        parts.append(f"service SCV {_range(lo, hi, '{:.3g}')}")
    if w["arrival_scv"] != [1, 1] and "open" in w["workload"]:
        parts.append(f"arrival SCV {_range(*w['arrival_scv'], '{:.3g}')}")
    parts.append(f"U <= {w['utilization'][1]:.3g}")
    if w["priority_levels"][1] > 1:
        parts.append(f"{_range(*w['priority_levels'])} priority levels")
    if w["branches"][1] > 0:
        parts.append(f"{_range(*w['branches'])} branches")
    if w["pools"][1] > 0:
        parts.append(f"{_range(*w['pools'])} pools")
    if w["class_dependent"][1] > 0:
        parts.append("class-dependent FCFS" if w["class_dependent"][0] else
                     "class-dependent FCFS or not")
    return "; ".join(parts)


#: the short names of the forms (an answer's ``info["approximation"]``) in
#: the tables; a form not named here is shown up to its first "(" or ","
FORM_LABELS = {
    "the network's own Markov chain (qm.ctmc)": "own chain",
    "finite-source priority chain with the flow-equivalent server of the rest": "FES chain",
    "shadow server (Sevcik 1977), Schweitzer AMVA": "shadow server",
    "per-station priority formulas, Poisson flows": "per-station formulas",
    "subsystem of all its FCFS queues": "one subsystem",
    "smaller subsystems": "smaller subsystems",
    "stations alone (Marie's decomposition)": "stations alone",
    "the chain with its low-variance shapes extrapolated in their phases":
        "extrapolated in the phases",
    "the chain of the fitted shapes": "fitted shapes",
}


def form_label(e: dict) -> str:
    """The short name of envelope ``e``'s form (:data:`FORM_LABELS`), or
    of the forms an envelope written before the split by form lists
    ("a / b"); empty without one."""
    if e.get("unnamed_form"):
        return "no form named"
    forms = [e["form"]] if e.get("form") else list(e.get("forms") or ())
    cap = "the chain with its low-variance shapes at the phase cap "
    return " / ".join(FORM_LABELS.get(f) or ("at the phase cap " + f[len(cap):]
                                             if f.startswith(cap) else None)
                      or re.split(r"\s*[(,]", f)[0] for f in forms)


def table(entries: list, header: str = "") -> str:
    """The markdown table of the envelopes (and of catalogs a method refused
    entirely: ``entries`` with 0 networks)."""
    lines = [header] if header else []
    lines += ["| method | form | family (catalog) | reference | networks (refused, defects) "
              "| X max | X mean "
              "| R max | R mean | sim hw | where |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        m = e["method"] + (" (fcfs_as_ps)" if e.get("substituted") else "")
        m += f" | {form_label(e) or '-'}"
        fam = f"{e['family']} (`{e.get('catalog', '?')}`)"
        if not e["networks"]:
            lines.append(f"| {m} | {fam} | - | 0 ({e.get('refused', 0)}, {e.get('defects', 0)}) "
                         "| - | - | - | - | - | no network answered |")
            continue
        err = e["error"]
        hw = _pct(e["sim_halfwidth"]) if "sim_halfwidth" in e else "-"
        lines.append(f"| {m} | {fam} | {e['reference']} | {e['networks']} "
                     f"({e.get('refused', 0)}, {e.get('defects', 0)}) | {_pct(err['X']['max'])} "
                     f"| {_pct(err['X']['mean'])} | {_pct(err['R']['max'])} "
                     f"| {_pct(err['R']['mean'])} | {hw} | {box_words(e['where'])} |")
    pubs = [e for e in entries if e.get("published")]
    for e in pubs:
        p = e["published"]
        lines += ["", f"Published case ({e['method']}, `{e['catalog']}` network "
                  f"{p['network']}): {p['source']}: R = {p['R']:g}; the simulator here "
                  f"{p['R_simulator']:.4g}; {e['method']} {p['R_approx']:.4g} "
                  f"({_pct(p['error'])} off the published value)."]
    return "\n".join(lines) + "\n"


README_PATH = ROOT / "README.md"
README_BEGIN, README_END = "<!-- envelopes:begin -->", "<!-- envelopes:end -->"


def readme_table(entries: list) -> str:
    """The compact table the README shows between its envelope markers:
    method (with the short name of its form, :func:`form_label`), family,
    reference, networks, max and mean X and R errors (the feature boxes
    are in :data:`TABLE_PATH`)."""
    lines = ["| method | family | reference | networks | X max | X mean | R max | R mean |",
             "|---|---|---|---|---|---|---|---|"]
    for e in entries:
        if not e["networks"]:
            continue
        m = f"`{e['method']}`" + (" (`fcfs_as_ps=True`)" if e.get("substituted") else "")
        if form_label(e):
            m += f" ({form_label(e)})"
        err = e["error"]
        lines.append(f"| {m} | {e['family']} | {e['reference']} | {e['networks']} "
                     f"| {_pct(err['X']['max'])} | {_pct(err['X']['mean'])} "
                     f"| {_pct(err['R']['max'])} | {_pct(err['R']['mean'])} |")
    for e in entries:
        p = e.get("published")
        if p:
            lines += ["", f"Published case: {p['source']}: R = {p['R']:g}; the simulator here "
                      f"{p['R_simulator']:.4g}; `{e['method']}` {p['R_approx']:.4g} "
                      f"({_pct(p['error'])} off)."]
    return "\n".join(lines) + "\n"


def update_readme(entries: list) -> None:
    """Put :func:`readme_table` between the README's envelope markers."""
    text = README_PATH.read_text()
    if README_BEGIN not in text or README_END not in text:
        return
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    README_PATH.write_text(f"{head}{README_BEGIN}\n{readme_table(entries)}{README_END}{tail}")


TABLE_HEADER = """\
### Measured error envelopes of the approximate methods

Written by `python -m validation.envelopes --write --workers 2` (the module
docstring says how each catalog is drawn and solved); read by
`qmodels.analytic.envelopes`, which gives an approximate answer the worst
envelope whose box holds its network.  Errors are relative: per network the
largest over its classes of |approx - reference| / reference, for the class
throughput X and the class response time R (per cycle, think time excluded);
then the max and the mean over the networks.  *sim hw*: the largest relative
95 % half-width of a simulated class R.  The X of an open class is its
arrival rate in the reference (flow conservation), so its X error is 0.
*refused*: networks the method refuses by name (`UnsupportedModelError`);
*defects*: answers that broke an operational law (`LawViolationError`),
crashed or stopped unconverged, listed by the run; neither is counted in
the errors.  *form*: a method that answers in several forms (its answer's
`info["approximation"]`: `marie`'s one subsystem, pairs or stations alone;
`priority`'s own chain or the finite-source chain with the flow-equivalent
server, FES) has one row per form, measured on the networks answered in
that form only, and an answer is given the envelope of its own form; its
refused and defects are the method's on the whole catalog, repeated on
each form's row.  (A row listing several forms, "a / b", was measured
before the split by form: one envelope for all of them.)
"""


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def worst(res: dict, n: int) -> str:
    """The ``n`` networks of each (catalog, method) with the largest X
    error (then R error), as text: index, errors, reference R."""
    out = []
    for name, rows in res.items():
        for j, ap in enumerate(CATALOGS[name].approx):
            ok = [r for r in rows if r["approx"][j]["status"] == "ok"]
            ok.sort(key=lambda r: (-r["approx"][j]["eX"], -r["approx"][j]["eR"]))
            for r in ok[:n]:
                a = r["approx"][j]
                out.append(f"{name} #{r['index']} {ap.method}: X {100 * a['eX']:.2f} % "
                           f"R {100 * a['eR']:.2f} % (R {a['R']} vs {r.get('ref_R')})")
    return "\n".join(out)


def _progress(res):
    parts = []
    for a in res["approx"]:
        m = a["method"] + ("*" if a["substituted"] else "")
        if a["status"] in ("ok", "unconverged"):
            parts.append(f"{m} X {100 * a['eX']:.2f} % R {100 * a['eR']:.2f} %"
                         + (" UNCONVERGED" if a["status"] == "unconverged" else ""))
        else:
            parts.append(f"{m} {a['status'].upper()}")
    hw = f" (sim hw {100 * res['hw']:.2f} %)" if res["hw"] is not None else ""
    print(f"{res['catalog']} #{res['index']}: {'; '.join(parts)}{hw} [{res['seconds']:.1f} s]",
          file=sys.stderr, flush=True)


def _load_json() -> dict:
    try:
        return json.loads(JSON_PATH.read_text())
    except (OSError, ValueError):
        return {"envelopes": []}


def _order(e: dict) -> tuple:
    """Catalog order, then the order of its approximations, then the
    form's name."""
    names = list(CATALOGS)
    form = e.get("form") or ""
    if e.get("catalog") not in CATALOGS:
        return (len(names), 0, form)
    approx = CATALOGS[e["catalog"]].approx
    j = next((j for j, ap in enumerate(approx) if ap.method == e["method"]
              and ap.substituted == bool(e.get("substituted", False))), len(approx))
    return (names.index(e["catalog"]), j, form)


def dumps(doc: dict) -> str:
    """``doc`` as JSON, one envelope feature box per line."""
    text = json.dumps(doc, indent=1)
    return re.sub(r"\[[^\[\]{}]*\]", lambda m: re.sub(r"\s+", " ", m.group(0))
                  .replace("[ ", "[").replace(" ]", "]"), text) + "\n"


def write(entries: list, ran: set) -> None:
    """Write :data:`JSON_PATH` and :data:`TABLE_PATH`: the envelopes of
    the catalogs in ``ran`` replaced by ``entries`` (every old entry of
    such a catalog goes, whatever its method or form: a form no longer
    answered leaves no stale envelope; those a method answered on no
    network go to the file's "unanswered" list, which
    :mod:`qmodels.analytic.envelopes` does not read), the others kept."""
    old = _load_json()
    keep = [e for e in old.get("envelopes", []) if e.get("catalog") not in ran]
    keep_none = [e for e in old.get("unanswered", []) if e.get("catalog") not in ran]
    measured = sorted(keep + [e for e in entries if e["networks"]], key=_order)
    none = sorted(keep_none + [e for e in entries if not e["networks"]], key=_order)
    doc = {"generated": datetime.date.today().isoformat(), "command": f"{COMMAND} --write",
           "envelopes": measured, "unanswered": none}
    JSON_PATH.write_text(dumps(doc))
    TABLE_PATH.write_text(table(sorted(measured + none, key=_order), TABLE_HEADER))
    update_readme(measured)
    print(f"wrote {JSON_PATH.relative_to(ROOT)} ({len(measured)} envelopes) and "
          f"{TABLE_PATH.relative_to(ROOT)}", file=sys.stderr)


def drift(entries: list, committed: list | None = None) -> list[str]:
    """What a run's envelopes change against the committed ones (the
    README's table): one line per envelope (per method and form) whose
    networks, refusals, defects or X/R max/mean differ, or that is new or
    no longer answered (a committed form of a catalog of the run that the
    run did not answer in); empty when the committed table is what this
    run measures."""
    if committed is None:
        committed = _load_json().get("envelopes", [])
    key = lambda e: (e.get("catalog"), e["method"], bool(e.get("substituted", False)),  # noqa: E731
                     e.get("form"))
    old = {key(e): e for e in committed}
    lines = []

    def who(k):
        form = f" ({form_label(dict(form=k[3]))})" if k[3] else ""
        return f"{k[1]}{form} on {k[0]}"

    for e in entries:
        k = key(e)
        if not e["networks"]:
            gone = [o for o in old if o[:3] == k[:3]]
            if gone:
                lines.append(f"{who(k)}: answered no network (committed: "
                             f"{sum(old[o]['networks'] for o in gone)})")
            continue
        if k not in old:
            lines.append(f"{who(k)}: new envelope (X max {_pct(e['error']['X']['max'])}, "
                         f"R max {_pct(e['error']['R']['max'])})")
            continue
        o, parts = old[k], []
        for f in ("networks", "refused", "defects"):
            if o.get(f) != e.get(f):
                parts.append(f"{f} {o.get(f)} -> {e.get(f)}")
        for fig in ("X", "R"):
            for s in ("max", "mean"):
                a, b = o["error"][fig][s], e["error"][fig][s]
                if abs(a - b) > 1e-6:
                    parts.append(f"{fig} {s} {_pct(a)} -> {_pct(b)}")
        if parts:
            lines.append(f"{who(k)}: " + ", ".join(parts))
    answered = {key(e) for e in entries if e["networks"]}
    for k, o in old.items():
        if k not in answered and any(a[:3] == k[:3] for a in answered):
            lines.append(f"{who(k)}: no longer measured (committed: {o['networks']} networks)")
    return lines


def write_out(out: str, entries: list, defects: list, quick: bool) -> list[str]:
    """Write ``out/envelopes_table.md`` and ``out/envelopes.json`` (this
    run's envelopes) and ``out/envelopes_drift.md`` (:func:`drift` against
    the committed table; nothing to say after a ``--quick`` run, whose
    shorter runs are not comparable); return the drift lines."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    head = f"{'Quick run' if quick else 'Run'} of {COMMAND}" + (" --quick" if quick else "")
    (d / "envelopes_table.md").write_text(table(sorted(entries, key=_order), head + "\n"))
    (d / "envelopes.json").write_text(dumps({"generated": datetime.date.today().isoformat(),
                                            "envelopes": entries, "defects": defects}))
    lines = [] if quick else drift(entries)
    text = ("# Envelopes against the committed table (README)\n\n"
            + ("quick run: not compared\n" if quick else
               "\n".join(f"- {x}" for x in lines) + "\n" if lines else
               "every envelope measured equals the committed one\n"))
    (d / "envelopes_drift.md").write_text(text)
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="the first few networks of every catalog, short simulations; never "
                         "writes")
    ap.add_argument("--write", action="store_true",
                    help=f"write {JSON_PATH.relative_to(ROOT)} and {TABLE_PATH.relative_to(ROOT)}")
    ap.add_argument("--family", action="append", metavar="NAME", choices=sorted(CATALOGS),
                    help="run only this catalog (repeatable)")
    ap.add_argument("--out", metavar="DIR",
                    help="write this run's table and JSON to DIR and compare it with the "
                         "committed envelopes (DIR/envelopes_drift.md; exit status 1 when "
                         "they differ)")
    ap.add_argument("--worst", type=int, default=0, metavar="N",
                    help="also print the N worst networks of each method (by X, then R)")
    add_arguments(ap)
    ap.add_argument("--tables", action="store_true",
                    help=f"only write {TABLE_PATH.relative_to(ROOT)} and the README's table "
                         "again from the JSON (no run)")
    args = ap.parse_args(argv)
    if args.tables:
        doc = _load_json()
        measured, none = doc.get("envelopes", []), doc.get("unanswered", [])
        TABLE_PATH.write_text(table(sorted(measured + none, key=_order), TABLE_HEADER))
        update_readme(sorted(measured, key=_order))
        return 0
    if args.quick and args.write:
        ap.error("--quick never writes the envelopes (its runs are shorter)")
    check(ap, args)
    t0 = time.time()
    res = run(args.family, quick=args.quick, workers=args.workers, progress=_progress,
              scheduler=args.scheduler)
    entries, defects = [], []
    for name, rows in res.items():
        e, d = envelopes_of(name, rows)
        entries += e
        defects += d
    wall = time.time() - t0
    if args.write:
        write(entries, set(res))
    print(table(entries, f"{'Quick run' if args.quick else 'Run'} of {COMMAND}"
                + (" --quick" if args.quick else "") + "\n"))
    if args.worst:
        print(worst(res, args.worst))
    drifted = []
    if args.out:
        drifted = write_out(args.out, entries, defects, args.quick)
        print(f"{args.out}/envelopes_table.md, {args.out}/envelopes_drift.md: "
              + (f"{len(drifted)} envelope(s) differ from the committed table (refresh it "
                 f"with `make envelopes`)" if drifted else "the committed table holds"),
              file=sys.stderr)
    if defects:
        print(f"DEFECTS ({len(defects)}): law violations, crashes, unconverged answers",
              file=sys.stderr)
        for d in defects:
            print(f"  {d['catalog']} #{d['index']} {d['method']}"
                  f"{' (fcfs_as_ps)' if d['substituted'] else ''}: {d['status'].upper()}: "
                  f"{d['message'].splitlines()[0] if d['message'] else ''}", file=sys.stderr)
    print(f"({wall:.0f} s wall, {args.workers} worker(s))", file=sys.stderr)
    return 1 if defects or drifted else 0


if __name__ == "__main__":
    sys.exit(main())
