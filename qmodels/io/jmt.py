"""Interchange with JMT (Java Modelling Tools): JMVA and JSIMg files.

JMT (Bertoli, Casale & Serazzi, "JMT: performance engineering tools for
system modeling", ACM SIGMETRICS Performance Evaluation Review 36(4), 2009)
reads two XML formats that this module writes:

* **JMVA** (``.jmva``), its exact/approximate MVA solver: classes, stations
  and a service time and visit ratio per (station, class), as defined by
  JMT's published schema ``JMTmodel.xsd``.  :func:`to_jmva` writes one,
  :func:`from_jmva` reads one back into a :class:`~qmodels.model.Network`
  (it solves to the same numbers: the tests check it).
* **JSIMg** (``.jsimg``), its discrete-event simulator: an ``archive`` with a
  ``sim`` model of nodes made of sections (queue, server, router), user
  classes, connections, measures and finite capacity regions, as defined
  by ``Archive.xsd`` and ``SIMmodeldefinition.xsd``.  :func:`to_jsimg`
  writes one.

Those schemas are part of JMT's source (``jmt/common/xml``).  They are not
shipped here: :func:`validate_jmva` and :func:`validate_jsimg` check a
document against a structural description of the elements, attributes,
attribute types and content models written here from the published
definitions, for every element this module emits or reads (elements JMT
writes that are only results -- ``solutions``, ``results``, ``whatIf``,
``jmodel`` -- are accepted without inspection).

What maps, and what is refused
------------------------------
Everything that cannot be expressed raises
:class:`~qmodels.errors.UnsupportedModelError` naming the station, class or
pool and the feature.  Nothing that changes a solution is dropped silently:
JMVA, like every product-form solver, uses only mean service times, and the
exported file's ``description`` lists the shapes (and never-binding
capacities) it leaves out.  Power, which JMT has no place for, is refused
by name unless the caller lets the export drop it (``to_jmva(net,
drop=("power",))``, ``qm.save(net, path, drop=("power",))``, ``qmodels
convert --drop power``); the file then says so (JMVA: its description;
JSIMg: an XML comment at the top).

==============================  =================  =========================
qmodels                         JMVA               JSIMg
==============================  =================  =========================
Closed / Open class             closedclass /      userClass closed (preload
                                openclass          at the reference) / open
think time Z                    delaystation       Delay node before the
                                ``Z.<class>``      reference station
                                (visit 1, that
                                class only; read
                                back as think
                                time)
visits / demands                visit, servicetime random routing with the
                                                   same visit ratios (as the
                                                   qmodels simulator)
routing                         visits (traffic    Router, empirical
                                equations)         probabilities
per-class service               servicetime        per-class ServiceStrategy
Delay                           delaystation       Delay section
Queue, 1 server, FCFS or PS     listation          Server (FCFS), PSServer
                                                   (egalitarian PS)
Queue, c servers                ldstation, single  Server maxJobs = c
                                closed class only
Queue, prio / prio-pr           refused            TailStrategyPriority on a
                                                   Server / FCFSPRStrategy-
                                                   Priority on a
                                                   PreemptiveServer
Queue, lcfs-pr                  refused            LCFSPRStrategy on a
                                                   PreemptiveServer
class priority                  ignored            userClass priority
                                                   (JMT: larger is served
                                                   first; written max - p)
LoadDependent                   ldstation, single  refused
                                closed class only
capacity                        refused if it can  Queue size; BAS blocking
                                bind               (closed), drop (open
                                                   arrivals from the source)
distribution                    dropped (noted)    Exponential, Deterministic,
                                                   Erlang, HyperExp (balanced
                                                   means or two given
                                                   branches), Uniform,
                                                   Lognormal; Empirical and
                                                   3+ branches refused
class distribution (per         dropped (noted;    each class's own service
station)                        refused at FCFS)   strategy at the station
interarrival                    dropped (noted)    Source service strategy
ForkJoin                        refused            Fork node (jobsPerLink =
                                                   tasks, equal on every
                                                   branch) and Join node
                                                   ``<name>.join`` (standard
                                                   join); no station
                                                   measures on either
TokenPool                       refused            finite capacity region
                                                   (blockingRegion) over the
                                                   pool's span, every class;
                                                   refused otherwise
power                           refused; dropped   refused; dropped
                                (noted) with       (noted) with
                                ``drop``           ``drop``
class switching (routing       refused            a ClassSwitch node on
entry to (station, class))                         each edge where a class
                                                   changes, its matrix the
                                                   shares by class; not with
                                                   pools or fork-joins
symbolic values                 refused            refused
==============================  =================  =========================

The load-dependent service times of an ``ldstation`` are written, as LINE's
JMT writer does (Casale et al., LINE solver, ``writeJMVA``), as the service
time with n = 1, 2, ..., N jobs present, ``S / a(n)``, separated by ``;``.

The code lives in :mod:`qmodels.io.jmva` (JMVA both ways),
:mod:`qmodels.io.jsimg` (JSIMg) and :mod:`qmodels.io._xml` (the structural
validators and XML helpers); this module re-exports their public names.
"""

from __future__ import annotations

from ._xml import validate_jmva, validate_jsimg
from .jmva import from_jmva, load_jmva, save_jmva, to_jmva
from .jsimg import save_jsimg, to_jsimg

__all__ = [
    "to_jmva",
    "from_jmva",
    "save_jmva",
    "load_jmva",
    "to_jsimg",
    "save_jsimg",
    "validate_jmva",
    "validate_jsimg",
]
