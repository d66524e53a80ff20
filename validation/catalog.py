"""The catalog: named networks, what to compare on each, and how.

Each :class:`Case` builds its network, names the figures to compare
(``("X", "tx")`` is the throughput of class ``tx``, ``("Q", "disk")`` the
mean number at station ``disk``), the exact reference where one exists
(``"mva"`` for product-form cases, ``"ctmc"`` for small non-product-form
ones, or a closed form) and the analytic approximations whose error the
report measures.

Product-form cases (``kind="product-form"``) must agree with exact MVA
inside the simulator's interval; non-product-form cases report the error
of the approximations against the CTMC where it is small enough and
against the simulation otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import qmodels as qm
from qmodels import queues
from qmodels.model.distributions import Deterministic, Erlang, HyperExponential

__all__ = ["Case", "CATALOG", "FAST", "by_name"]


@dataclass(frozen=True)
class Case:
    """One validation case.

    Attributes
    ----------
    name, description : str
    kind : ``"product-form"`` or ``"non-product-form"``
    build : callable () -> Network
    figures : tuple of (metric, key)
        metric in X, R, Q, U; key a station or class name.
    exact : str or None
        ``"mva"`` (exact product form), ``"ctmc"`` or ``"closed-form"``
        (the first analytic entry is exact); the value the simulator's
        interval must contain.
    analytic : mapping name -> callable (Network) -> dict {(metric, key): value}
        Approximations (and closed forms) to report.
    ctmc : bool
        Also solve the CTMC (small enough).
    horizon : float
        Simulated time per replication.
    """

    name: str
    description: str
    kind: str
    build: Callable
    figures: tuple
    exact: str | None = None
    analytic: dict = field(default_factory=dict)
    ctmc: bool = False
    horizon: float = 2e4
    replications: int = 10


# ---------------------------------------------------------------------------
# analytic routes, each returning {(metric, key): value}
# ---------------------------------------------------------------------------

def _pick(result, figures):
    out = {}
    for m, key in figures:
        try:
            out[(m, key)] = float(getattr(result, m)[key])
        except KeyError:
            pass
    return out


def mva_route(net, figures):
    """Exact product-form solution (qmodels.analytic.mva; multi-class via qmodels.multiclass)."""
    return _pick(qm.mva(net), figures)


def mva_ignoring(net, figures):
    """Product-form MVA of the same network with capacities, pools and
    service shapes dropped (what a product-form model would predict)."""
    import dataclasses

    stations = [dataclasses.replace(s, capacity=None, distribution=None) for s in net.stations]
    plain = qm.Network(stations, net.classes, name=net.name)
    return _pick(qm.mva(plain), figures)


def decomposition_route(net, figures):
    """Flow-equivalent-server decomposition (qmodels.analytic.decomposition)."""
    from qmodels.analytic.decomposition import decompose

    return _pick(decompose(net), figures)


def single_station(formula):
    """A single-station closed form from qmodels.analytic.queues, on station ``q``
    of an open one-class network: returns X, R, Q, U of the station and
    X, R of the class."""

    def route(net, figures):
        s = net.stations[0]
        c = net.classes[0]
        m = formula(float(c.arrival_rate), float(s.service), s)
        vals = {"X": m.X, "R": m.R, "Q": m.Q, "U": m.U}
        out = {}
        for metric, key in figures:
            if metric in vals:
                out[(metric, key)] = float(vals[metric])
        return out

    return route


_MM1K = single_station(lambda lam, S, s: queues.mmck(lam, S, s.servers, s.capacity))
_MD1 = single_station(lambda lam, S, s: queues.md1(lam, S))
_MG1 = single_station(lambda lam, S, s: queues.mg1(lam, S, s.distribution.scv))
_MM1 = single_station(lambda lam, S, s: queues.mm1(lam, S))
_MMC = single_station(lambda lam, S, s: queues.mmc(lam, S, s.servers))
_GGC = single_station(
    lambda lam, S, s: queues.ggc(lam, S, s.servers, 1.0, s.distribution.scv))


def _station_figs(stations, metrics=("U", "Q", "R")):
    return tuple((m, s) for s in stations for m in metrics)


# ---------------------------------------------------------------------------
# networks
# ---------------------------------------------------------------------------

def _open1(S, lam, servers=1, capacity=None, distribution=None):
    return qm.Network(
        [qm.Queue("q", S, servers=servers, capacity=capacity, distribution=distribution)],
        [qm.Open("o", lam, routing={"source": {"q": 1.0}, "q": {"sink": 1.0}})],
    )


def _cyclic(n_st, N, S, cap=None):
    names = [f"s{i}" for i in range(n_st)]
    st = [qm.Queue(n, S[i], capacity=(cap or {}).get(n)) for i, n in enumerate(names)]
    route = {names[i]: {names[(i + 1) % n_st]: 1.0} for i in range(n_st)}
    return qm.Network(st, [qm.Closed("c", N, routing=route)])


def _central(N=10, Z=2.0):
    return qm.Network(
        [qm.Queue("cpu", 0.02), qm.Queue("d1", 0.03), qm.Queue("d2", 0.045)],
        [qm.Closed("tx", N, think_time=Z,
                   routing={"cpu": {"d1": 0.45, "d2": 0.35, "cpu": 0.2},
                            "d1": {"cpu": 1.0}, "d2": {"cpu": 1.0}})],
    )


def _spax(N=6, buffers=4):
    """A SPAX-like read path (CASES.md case 1): a transaction uses the CPU,
    reads the disk, the ION's DMA copies the block into the XNIF data
    buffer (``buffers`` packet slots, held from the DMA until the switch
    port has sent the packet) and the switch input port (one packet at a
    time, held until the network link has carried it)."""
    st = [qm.Queue("cpu", 0.010, servers=2), qm.Queue("disk", 0.012),
          qm.Queue("dma", 0.004), qm.Queue("port", 0.006), qm.Queue("link", 0.008)]
    route = {"cpu": {"disk": 1.0}, "disk": {"dma": 1.0}, "dma": {"port": 1.0},
             "port": {"link": 1.0}, "link": {"cpu": 1.0}}
    return qm.Network(
        st, [qm.Closed("tx", N, think_time=0.02, routing=route)],
        pools=[qm.TokenPool("xnif", buffers, "dma", "port"),
               qm.TokenPool("swport", 1, "port", "link")],
        name="spax-path",
    )


def _memory(N=8, M=2):
    """Terminals, and a CPU/disk subsystem entered only with one of M memory
    partitions, held from the first CPU visit until the job leaves through
    ``out`` (a short delay where it gives memory back)."""
    st = [qm.Delay("term", 1.0), qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08),
          qm.Delay("out", 0.01)]
    route = {"term": {"cpu": 1.0}, "cpu": {"disk": 1.0},
             "disk": {"cpu": 0.6, "out": 0.4}, "out": {"term": 1.0}}
    return qm.Network(st, [qm.Closed("tx", N, routing=route)],
                      pools=[qm.TokenPool("mem", M, "cpu", "out")])


def _critical(N=5):
    st = [qm.Queue("work", 0.2, servers=3), qm.Queue("lock", 0.05), qm.Queue("log", 0.04)]
    route = {"work": {"lock": 1.0}, "lock": {"log": 1.0}, "log": {"work": 1.0}}
    return qm.Network(st, [qm.Closed("c", N, routing=route)],
                      pools=[qm.TokenPool("mutex", 1, "lock", "log")])


CATALOG: tuple[Case, ...] = (
    # ----------------------------------------------------------- product form
    Case("mm1", "open M/M/1 at rho = 0.8", "product-form",
         lambda: _open1(1.0, 0.8), _station_figs(["q"]) + (("X", "o"), ("R", "o")),
         exact="mva", analytic={"M/M/1": _MM1}, horizon=2e4),
    Case("mm3", "open M/M/3 at rho = 0.7", "product-form",
         lambda: _open1(0.3, 7.0, servers=3), _station_figs(["q"]), exact="mva",
         analytic={"M/M/c": _MMC}, horizon=5e3),
    Case("jackson-feedback", "open Jackson network: 3 stations with feedback",
         "product-form",
         lambda: qm.Network(
             [qm.Queue("a", 0.2), qm.Queue("b", 0.3, servers=2), qm.Queue("c", 0.25)],
             [qm.Open("o", 2.0, routing={"source": {"a": 1.0},
                                         "a": {"b": 0.7, "c": 0.3},
                                         "b": {"c": 0.5, "a": 0.2, "sink": 0.3},
                                         "c": {"sink": 0.8, "a": 0.2}})]),
         _station_figs(["a", "b", "c"]) + (("R", "o"),), exact="mva", horizon=5e3),
    Case("open-delay", "open class through a delay and a queue (visits)", "product-form",
         lambda: qm.Network([qm.Delay("net", 0.5), qm.Queue("srv", 0.1)],
                            [qm.Open("o", 6.0, visits={"net": 1.0, "srv": 1.5})]),
         _station_figs(["net", "srv"], ("Q", "R")) + (("U", "srv"),), exact="mva",
         horizon=5e3),
    Case("cyclic-4", "closed cyclic network of 4 FCFS stations, N = 20", "product-form",
         lambda: _cyclic(4, 20, [1.0, 0.8, 0.6, 0.9]),
         (("X", "c"),) + _station_figs(["s0", "s1"], ("U", "Q")), exact="mva", ctmc=True,
         horizon=1e4),
    Case("central-server", "central-server model with terminals (Z = 2 s), N = 10",
         "product-form", _central, (("X", "tx"), ("R", "tx")) + _station_figs(
             ["cpu", "d1", "d2"], ("U", "Q")), exact="mva", ctmc=True, horizon=2e3),
    Case("multiserver", "4-server CPU and a disk, terminals, N = 15", "product-form",
         lambda: qm.Network([qm.Queue("cpu", 0.2, servers=4), qm.Queue("disk", 0.04)],
                            [qm.Closed("tx", 15, think_time=1.0,
                                       visits={"cpu": 1.0, "disk": 2.0})]),
         (("X", "tx"), ("R", "tx")) + _station_figs(["cpu", "disk"], ("U", "Q")),
         exact="mva", ctmc=True, horizon=2e3),
    Case("load-dependent", "RAID group with rate multipliers 1, 1.8, 2.4, 2.8 and a CPU, N = 8",
         "product-form",
         lambda: qm.Network([qm.Queue("cpu", 0.01),
                             qm.LoadDependent("raid", 0.03, rate_multipliers=(1, 1.8, 2.4, 2.8))],
                            [qm.Closed("tx", 8, think_time=0.1,
                                       visits={"cpu": 1.0, "raid": 1.0})]),
         (("X", "tx"),) + _station_figs(["cpu", "raid"], ("U", "Q")), exact="mva", ctmc=True,
         horizon=500),
    Case("ps-mixed-shapes", "single class, PS station with hyperexponential service "
         "(PS is insensitive: product form holds)", "product-form",
         lambda: qm.Network([qm.Queue("web", 0.05, discipline="ps",
                                      distribution=HyperExponential(4.0)),
                             qm.Queue("db", 0.03)],
                            [qm.Closed("tx", 6, think_time=0.2,
                                       visits={"web": 1.0, "db": 1.0})]),
         (("X", "tx"),) + _station_figs(["web", "db"], ("U", "Q")), exact="mva", horizon=2e3),
    Case("multiclass-closed", "two closed classes, PS stations with class-dependent service",
         "product-form",
         lambda: qm.Network([qm.Queue("cpu", 0.1, discipline="ps"),
                             qm.Queue("disk", 0.1, discipline="ps")],
                            [qm.Closed("a", 3, think_time=0.5, visits={"cpu": 1, "disk": 2},
                                       service={"cpu": 0.05, "disk": 0.04}),
                             qm.Closed("b", 2, think_time=1.0, visits={"cpu": 2, "disk": 1},
                                       service={"cpu": 0.08, "disk": 0.06})]),
         (("X", "a"), ("X", "b"), ("R", "a"), ("R", "b"), ("U", "cpu"), ("U", "disk")),
         exact="mva", ctmc=True, horizon=2e3),
    Case("multiclass-open", "two open classes sharing a CPU and a disk", "product-form",
         lambda: qm.Network([qm.Queue("cpu", 0.1, discipline="ps"), qm.Queue("disk", 0.05)],
                            [qm.Open("a", 3.0, visits={"cpu": 1, "disk": 2},
                                     service={"cpu": 0.05}),
                             qm.Open("b", 2.0, visits={"cpu": 2, "disk": 1},
                                     service={"cpu": 0.08})]),
         (("R", "a"), ("R", "b"), ("U", "cpu"), ("U", "disk"), ("Q", "cpu")),
         exact="mva", horizon=3e3),
    Case("mixed", "one open and one closed class", "product-form",
         lambda: qm.Network([qm.Queue("cpu", 0.04, discipline="ps"), qm.Queue("disk", 0.05)],
                            [qm.Open("batch", 4.0, visits={"cpu": 1, "disk": 1}),
                             qm.Closed("tx", 4, think_time=1.0,
                                       visits={"cpu": 2, "disk": 1})]),
         (("X", "tx"), ("R", "tx"), ("R", "batch"), ("U", "cpu"), ("U", "disk")),
         exact="mva", horizon=3e3),
    # ------------------------------------------------------- non-product form
    Case("mm1k-loss", "open M/M/1/5 at offered load 0.9: arrivals to a full room are lost",
         "non-product-form", lambda: _open1(1.0, 0.9, capacity=5),
         (("X", "o"), ("Q", "q"), ("R", "q"), ("U", "q")), exact="ctmc",
         analytic={"M/M/1/K": _MM1K, "MVA (no capacity)": mva_ignoring}, ctmc=True,
         horizon=2e4),
    Case("mmck-loss", "open M/M/2/4, offered load 1.6 Erlang", "non-product-form",
         lambda: _open1(0.8, 2.0, servers=2, capacity=4),
         (("X", "o"), ("Q", "q"), ("U", "q")), exact="ctmc",
         analytic={"M/M/c/K": _MM1K}, ctmc=True, horizon=1e4),
    Case("closed-tandem-blocking", "closed cyclic 3 stations, room for 2 at s1 and s2, "
         "N = 6: blocking after service", "non-product-form",
         lambda: _cyclic(3, 6, [1.0, 0.8, 0.9], cap={"s1": 2, "s2": 2}),
         (("X", "c"),) + _station_figs(["s0", "s1", "s2"], ("U", "Q")), exact="ctmc",
         analytic={"MVA (no capacity)": mva_ignoring}, ctmc=True, horizon=1e4),
    Case("open-tandem-blocking", "open tandem of 3 stations, room for 4 at each "
         "(blocking between them, loss at the first), offered load 0.9", "non-product-form",
         lambda: qm.Network(
             [qm.Queue("t1", 1.0, capacity=4), qm.Queue("t2", 1.0, capacity=4),
              qm.Queue("t3", 1.0, capacity=4)],
             [qm.Open("o", 0.9, routing={"source": {"t1": 1}, "t1": {"t2": 1},
                                         "t2": {"t3": 1}, "t3": {"sink": 1}})]),
         (("X", "o"), ("R", "o")) + _station_figs(["t1", "t2", "t3"], ("U", "Q")),
         exact="ctmc", analytic={"MVA (no capacity)": mva_ignoring}, ctmc=True,
         horizon=2e4),
    Case("spax-buffer-path", "SPAX-like path: CPU -> disk -> DMA -> XNIF buffer (4 slots, "
         "held DMA..port) -> switch port (1 slot, held port..link), N = 6",
         "non-product-form", _spax,
         (("X", "tx"), ("R", "tx")) + _station_figs(["dma", "port", "link"], ("U", "Q")),
         exact="ctmc", analytic={"MVA (no pools)": lambda n, f: mva_ignoring(
             qm.Network(n.stations, n.classes), f),
             "decomposition": decomposition_route}, ctmc=True, horizon=200),
    Case("memory-pool", "terminals and a CPU/disk subsystem under a memory pool of 2 "
         "partitions, N = 8", "non-product-form", _memory,
         (("X", "tx"), ("R", "tx"), ("U", "cpu"), ("U", "disk"), ("Q", "cpu")), exact="ctmc",
         analytic={"MVA (no pool)": lambda n, f: mva_ignoring(
             qm.Network(n.stations, n.classes), f),
             "decomposition": decomposition_route}, ctmc=True, horizon=2e3),
    Case("critical-section", "a lock held across two stations (1 token), N = 5",
         "non-product-form", _critical,
         (("X", "c"),) + _station_figs(["work", "lock", "log"], ("U", "Q")), exact="ctmc",
         analytic={"MVA (no pool)": lambda n, f: mva_ignoring(
             qm.Network(n.stations, n.classes), f),
             "decomposition": decomposition_route}, ctmc=True, horizon=2e3),
    Case("fcfs-class-dependent", "two classes at one FCFS server with different service "
         "times (not product form; MVA solves it as PS)", "non-product-form",
         lambda: qm.Network([qm.Queue("q", 0.1), qm.Delay("term", 1.0)],
                            [qm.Closed("short", 3, routing={"term": {"q": 1}, "q": {"term": 1}},
                                       service={"q": 0.05, "term": 1.0}),
                             qm.Closed("long", 2, routing={"term": {"q": 1}, "q": {"term": 1}},
                                       service={"q": 0.4, "term": 1.5})]),
         (("X", "short"), ("X", "long"), ("R", "short"), ("R", "long"), ("U", "q")),
         exact="ctmc", analytic={"MVA (as PS)": mva_route}, ctmc=True, horizon=3e3),
    Case("md1", "open M/D/1 at rho = 0.8 (deterministic service)", "non-product-form",
         lambda: _open1(1.0, 0.8, distribution=Deterministic()),
         (("Q", "q"), ("R", "q"), ("U", "q")), exact="closed-form",
         analytic={"M/D/1": _MD1, "MVA (exponential)": mva_ignoring}, horizon=2e4),
    Case("mh1-scv4", "open M/H2/1 at rho = 0.7, service SCV 4 (high variance)",
         "non-product-form",
         lambda: _open1(1.0, 0.7, distribution=HyperExponential(4.0)),
         (("Q", "q"), ("R", "q"), ("U", "q")), exact="closed-form",
         analytic={"M/G/1": _MG1, "MVA (exponential)": mva_ignoring}, horizon=5e4),
    Case("me2c", "open M/E2/3 at rho = 0.8 (Erlang-2 service, 3 servers)",
         "non-product-form", lambda: _open1(0.3, 8.0, servers=3, distribution=Erlang(2)),
         (("Q", "q"), ("R", "q"), ("U", "q")), exact=None,
         analytic={"G/G/c (Allen-Cunneen)": _GGC, "MVA (exponential)": mva_ignoring},
         horizon=5e3),
    Case("closed-deterministic", "closed: terminals and a disk with deterministic service, "
         "N = 10", "non-product-form",
         lambda: qm.Network([qm.Queue("cpu", 0.02), qm.Queue("disk", 0.05,
                                                             distribution=Deterministic())],
                            [qm.Closed("tx", 10, think_time=0.5,
                                       visits={"cpu": 1.0, "disk": 1.0})]),
         (("X", "tx"), ("R", "tx"), ("Q", "disk")), exact=None,
         analytic={"MVA (exponential)": mva_ignoring}, horizon=2e3),
)

#: the subset run by ``--fast`` and by the unit tests (a few seconds)
FAST = ("mm1", "cyclic-4", "mm1k-loss", "closed-tandem-blocking", "critical-section")


def by_name(name: str) -> Case:
    for c in CATALOG:
        if c.name == name:
            return c
    raise KeyError(f"no validation case {name!r}")
