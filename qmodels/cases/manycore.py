"""Multi-core and many-core nodes: Xeon Phi 7250 (KNL) and 2 x Xeon Gold 6148 (SKL).

The study (Yoon & Song, "System Characteristics and Performance Analysis in
Multi and Many-core Architectures", J. Digital Contents Society 20(3),
2019) benchmarks one KNL node (68 cores at 1.4 GHz, 16 GB MCDRAM + 96 GB
DDR4) and one SKL node (2 sockets x 20 cores at 2.4 GHz, 192 GB DDR4, two
UPI links) with HPL, STREAM and IOR on a 100 Gbit/s cluster.

The model
---------
Compute
    Rpeak = cores x FLOPs/cycle x clock (:class:`qmodels.CPU`, [HPL]).
    HPL's efficiency on one node is bounded by the clock the cores hold
    under 512-bit vector load (Intel publishes an AVX-512 base clock below
    the nominal one); across nodes, HPL's own scalability model adds the
    panel broadcasts and row swaps over the network ([HPLmodel]).
Memory (STREAM)
    A closed network per node.  Customers are the cache-line requests in
    flight: ``threads x lines_in_flight`` (each core keeps a fixed number
    of misses outstanding, Little's law: bandwidth = lines x 64 B /
    latency).  A request thinks for the unloaded latency at a delay
    station ("core"), is served by one DRAM channel (a ``servers=channels``
    :class:`qmodels.MemoryChannel` station, 64 B per line) and, with
    probability ``remote`` (SKL only), crosses a UPI link-direction (a
    ``servers=4`` :class:`qmodels.UPI` station).  Exact MVA gives the line
    throughput X; STREAM reports 3/4 of the bus traffic, 64 X x 3/4,
    because a store first reads its line (write-allocate: Triad moves 32 B
    per 24 B it counts, [STREAM]).  With few threads the cores limit
    (X grows linearly, N < N*); then the memory channels saturate; when
    ``remote`` exceeds UPI / memory bandwidth = 41.6 / 256 = 0.1625 the UPI
    link does.  The remote fraction is fitted to the 177.2 GB/s SKL peak.
Cache (IOR)
    FileSize = BlockSize x NumTasks x SegmentCount.  IOR writes the file
    and reads it back; the reread hits the client page cache if the file
    fits, and under LRU a sequential reread of a file larger than the cache
    evicts every page before its reuse (hit ratio 0, [LIRS]).  The cache
    is capped by the memory the job is bound to and by the Lustre client's
    limit, half of the node's RAM ([Lustre]).

References
----------
.. [MC] J. Yoon & U.-S. Song, "System Characteristics and Performance
   Analysis in Multi and Many-core Architectures", J. Digital Contents
   Society 20(3), 2019: eq. (1)-(3), sec. 3 (nodes), sec. 4-1 (HPL), 4-2
   (STREAM), 4-3 (IOR), Table 2.
.. [HPL] J. J. Dongarra, P. Luszczek & A. Petitet, "The LINPACK Benchmark:
   past, present and future", Concurrency Computat. 15(9), 2003.
.. [HPLmodel] A. Petitet et al., HPL 2.x documentation, "HPL scalability
   analysis": T = 2 N^3 / (3 P Q) gamma + beta N^2 (3P + Q) / (2 P Q) +
   alpha N ((NB + 1) log2 P + P) / NB.
.. [STREAM] J. D. McCalpin, "Memory bandwidth and machine balance in
   current high performance computers", IEEE TCCA Newsletter, 1995, and
   the STREAM FAQ (counted vs actual bytes with write-allocate).
.. [Little] J. D. C. Little, "A proof for the queuing formula L = lambda
   W", Operations Research 9(3), 1961.
.. [QSP] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   ch. 5 (asymptotic bounds, N*, bottleneck) and ch. 6 (exact MVA).
.. [LIRS] S. Jiang & X. Zhang, "LIRS: an efficient low inter-reference
   recency set replacement policy", SIGMETRICS 2002, sec. 1 (LRU on a loop
   larger than the cache misses every reference).
.. [Lustre] Lustre client, llite ``ll_init_sbi``: ``max_cached_mb``
   defaults to half of the node's RAM (older clients: 3/4 above 512 MB).
.. [ARK] Intel ARK and the Xeon Scalable specification update: Xeon Phi
   7250 (6 x DDR4-2400, 115.2 GB/s; AVX frequency 1.2 GHz), Xeon Gold 6148
   (6 x DDR4-2666 per socket; AVX-512 all-core base 1.6 GHz).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..errors import InvalidValueError, UnknownNameError
from ._base import CaseReport, Row, fit_parameters, param

__all__ = ["Params", "rpeak", "memory", "stream_network", "stream", "stream_curve", "regime",
           "upi_switch", "hpl_efficiency", "ior_file_size", "cache_capacity", "ior_bandwidth",
           "report", "MEMORIES"]

GB = 1e9
MiB, GiB = 2 ** 20, 2 ** 30
LINE = 64  # bytes per cache line

#: the three memories STREAM and IOR bind to
MEMORIES = ("knl_mcdram", "knl_ddr4", "skl")


@dataclass(frozen=True)
class Params:
    """Every assumption of the many-core case, with its source.

    Clocks in Hz, bandwidths in B/s, times in s, memory sizes in B.
    ``remote`` is calibrated (the default is the value :func:`report`
    refits unless ``fit=False``).
    """

    # --- processors ----------------------------------------------------------
    knl_cores: int = param(68, "paper eq. (1): Xeon Phi 7250", kind="paper")
    knl_clock: float = param(1.4e9, "paper eq. (1)", kind="paper", unit="Hz")
    knl_avx_clock: float = param(1.2e9, "Intel ARK, Xeon Phi 7250: AVX frequency 1.2 GHz",
                                 kind="datasheet", unit="Hz")
    skl_cores: int = param(40, "paper eq. (2): 2 x Xeon Gold 6148", kind="paper")
    skl_clock: float = param(2.4e9, "paper eq. (2)", kind="paper", unit="Hz")
    skl_avx_clock: float = param(1.6e9, "Intel Xeon Scalable spec. update: Gold 6148 AVX-512 "
                                 "all-core base 1.6 GHz", kind="datasheet", unit="Hz")
    flops_per_cycle: int = param(32, "paper eq. (1)-(2): 2 AVX-512 FMA units x 8 doubles x 2",
                                 kind="paper")
    # --- memory --------------------------------------------------------------
    mcdram_peak: float = param(490e9, "paper sec. 3-1: MCDRAM 490 GB/s", kind="paper",
                               unit="B/s")
    mcdram_channels: int = param(8, "paper sec. 3-1: 8 MCDRAM controllers", kind="paper")
    knl_ddr_rate: float = param(2400e6, "Intel ARK, Xeon Phi 7250: DDR4-2400", kind="datasheet",
                                unit="T/s")
    knl_ddr_channels: int = param(6, "paper sec. 3-1: 6 DDR channels", kind="paper")
    skl_ddr_rate: float = param(2666e6, "Intel ARK, Gold 6148: DDR4-2666", kind="datasheet",
                                unit="T/s")
    skl_channels_per_socket: int = param(6, "paper sec. 4-3: 6 channels of 16 GB per socket",
                                         kind="paper")
    sockets: int = param(2, "paper sec. 3-2", kind="paper")
    upi_rate: float = param(10.4e9, "paper sec. 3-2: UPI at 10.4 GT/s", kind="paper",
                            unit="T/s")
    upi_links: int = param(2, "paper sec. 3-2: two UPI links", kind="paper")
    upi_bytes_per_transfer: float = param(1.0, "the paper's reading: 10.4 x 2 links x 2 "
                                          "directions = 41.6 GB/s (see qmodels.UPI; 2 B per "
                                          "transfer would give 83.2)", kind="paper", unit="B")
    stream_counted: float = param(0.75, "STREAM Triad counts 24 B per 32 B moved when stores "
                                  "write-allocate (McCalpin, STREAM FAQ)", kind="spec")
    skl_latency: float = param(90e-9, "assumption: idle local DRAM latency of Skylake-SP, "
                               "~90 ns", kind="assumption", unit="s")
    knl_mcdram_latency: float = param(155e-9, "assumption: idle MCDRAM latency of KNL (flat "
                                      "mode), ~155 ns", kind="assumption", unit="s")
    knl_ddr_latency: float = param(130e-9, "assumption: idle DDR4 latency of KNL, ~130 ns",
                                   kind="assumption", unit="s")
    skl_lines_in_flight: int = param(12, "assumption: outstanding L1 misses per Skylake core "
                                     "(line fill buffers, with L2 prefetch)", kind="assumption")
    knl_lines_in_flight: int = param(24, "assumption: outstanding lines per KNL core with the "
                                     "L2 hardware prefetcher (a tile's two cores share its "
                                     "L2 miss queue)", kind="assumption")
    remote: float = param(0.17607, "fitted to 'SKL STREAM peak, 40 threads' (177.2 GB/s)",
                          kind="calibrated")
    # --- HPL -------------------------------------------------------------------
    network_bw: float = param(12.5e9, "paper sec. 3: 100 Gbit/s interconnect", kind="paper",
                              unit="B/s")
    network_latency: float = param(1e-6, "assumption: ~1 us MPI latency on a 100 Gbit/s "
                                   "fabric", kind="assumption", unit="s")
    hpl_memory_fill: float = param(0.8, "assumption: HPL's N fills ~80 % of memory (HPL "
                                   "tuning guidance)", kind="assumption")
    hpl_nb: int = param(256, "assumption: HPL block size NB", kind="assumption")
    skl_memory: float = param(192 * GiB, "paper sec. 3-2: 192 GB DDR4", kind="paper", unit="B")
    hpl_nodes: tuple = param((1, 2, 4, 8, 16), "paper sec. 4-1: 1 to 16 nodes", kind="paper")
    # --- IOR ---------------------------------------------------------------------
    knl_ddr_size: float = param(98207 * MiB, "paper sec. 4-2: numactl node 0, 98207 MB",
                                kind="paper", unit="B")
    knl_mcdram_size: float = param(16384 * MiB, "paper sec. 4-2: node 1, 16384 MB",
                                   kind="paper", unit="B")
    knl_tasks: int = param(16, "paper Table 2: 16 processes on KNL", kind="paper")
    skl_tasks: int = param(10, "paper Table 2: 10 processes on SKL", kind="paper")
    block_sizes: tuple = param(tuple(2 ** k * MiB for k in range(1, 16)),
                               "paper Table 2: BlockSize 2 MB .. 32768 MB", kind="paper",
                               unit="B")
    segments: int = param(1, "paper Table 2 (no -s option: IOR's default 1)", kind="paper")
    lustre_cache_fraction: float = param(0.5, "Lustre client max_cached_mb default: half of "
                                         "RAM (assumption: /PFS is Lustre)", kind="assumption")
    pfs_bw: float = param(12.5e9, "paper sec. 3: a node's 100 Gbit/s link caps reads from "
                          "the parallel file system", kind="paper", unit="B/s")

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            for x in (v if isinstance(v, tuple) else (v,)):
                if not isinstance(x, (int, float)) or isinstance(x, bool) or not x > 0:
                    raise InvalidValueError(f"manycore.Params.{f.name} must be a positive "
                                            f"number, got {v!r}")
        if self.remote > 1 or self.lustre_cache_fraction > 1 or self.stream_counted > 1:
            raise InvalidValueError("manycore.Params: remote, lustre_cache_fraction and "
                                    "stream_counted must be fractions in (0, 1]")


# ---------------------------------------------------------------------------
# compute
# ---------------------------------------------------------------------------

def _cpu(p: Params, node: str, clock: float | None = None):
    import qmodels as qm

    if node == "knl":
        return qm.CPU(cores=p.knl_cores, clock=clock or p.knl_clock,
                      flops_per_cycle=p.flops_per_cycle)
    if node == "skl":
        return qm.CPU(cores=p.skl_cores, clock=clock or p.skl_clock,
                      flops_per_cycle=p.flops_per_cycle)
    raise UnknownNameError(f"unknown node {node!r}; 'knl' or 'skl'")


def rpeak(p: Params, node: str) -> float:
    """Rpeak = cores x FLOPs/cycle x clock, FLOP/s ([HPL]; paper eq. 1-2)."""
    return _cpu(p, node).rpeak


def hpl_efficiency(p: Params, node: str, nodes: int = 1, *, n: float | None = None) -> float:
    """Rmax / Rpeak of HPL on ``nodes`` nodes.

    One node: the AVX clock over the nominal clock (the cores cannot hold
    the nominal clock under 512-bit FMA load).  Several nodes: the
    [HPLmodel] time with gamma = 1 / (Rpeak x clock bound) per node, a
    near-square P x Q grid, beta = 8 B / network bandwidth, alpha = the
    network latency and N filling ``hpl_memory_fill`` of the memory (or
    ``n`` if given).  Intra-node communication is ignored.
    """
    if nodes < 1 or int(nodes) != nodes:
        raise InvalidValueError(f"hpl_efficiency: nodes must be a positive integer, got {nodes!r}")
    if node not in ("knl", "skl"):
        raise UnknownNameError(f"unknown node {node!r}; 'knl' or 'skl'")
    avx = p.knl_avx_clock / p.knl_clock if node == "knl" else p.skl_avx_clock / p.skl_clock
    if nodes == 1:
        return avx
    mem = p.skl_memory if node == "skl" else p.knl_ddr_size + p.knl_mcdram_size
    N = math.sqrt(p.hpl_memory_fill * nodes * mem / 8) if n is None else float(n)
    P = max(d for d in range(1, int(math.isqrt(nodes)) + 1) if nodes % d == 0)
    Q = nodes // P
    gamma = 1.0 / (rpeak(p, node) * avx)
    beta = 8.0 / p.network_bw
    alpha = p.network_latency
    nb = p.hpl_nb
    t_comp = 2 * N ** 3 / (3 * P * Q) * gamma
    t_comm = beta * N ** 2 * (3 * P + Q) / (2 * P * Q) + \
        alpha * N * ((nb + 1) * math.log2(P) + P) / nb
    return (2 * N ** 3 / 3) / ((t_comp + t_comm) * nodes * rpeak(p, node))


# ---------------------------------------------------------------------------
# memory: STREAM as a closed network
# ---------------------------------------------------------------------------

def memory(p: Params, which: str):
    """The :class:`qmodels.MemoryChannel` of one memory (all its channels):
    ``knl_mcdram``, ``knl_ddr4`` or ``skl`` (both sockets)."""
    import qmodels as qm

    if which == "knl_mcdram":
        # the paper's 490 GB/s spread over its 8 controllers (8-byte channels)
        return qm.MemoryChannel(rate=p.mcdram_peak / (8 * p.mcdram_channels), width=8,
                                channels=p.mcdram_channels, size=LINE)
    if which == "knl_ddr4":
        return qm.MemoryChannel(rate=p.knl_ddr_rate, width=8, channels=p.knl_ddr_channels,
                                size=LINE)
    if which == "skl":
        return qm.MemoryChannel(rate=p.skl_ddr_rate, width=8,
                                channels=p.skl_channels_per_socket * p.sockets, size=LINE)
    raise UnknownNameError(f"unknown memory {which!r}; one of {', '.join(MEMORIES)}")


def upi(p: Params):
    """The UPI element of the SKL node: rate x bytes/transfer x links x 2
    directions (41.6 GB/s with the paper's 1 B per transfer)."""
    import qmodels as qm

    return qm.UPI(rate=p.upi_rate, links=p.upi_links, directions=2,
                  bytes_per_transfer=p.upi_bytes_per_transfer, size=LINE)


def _setup(p: Params, which: str):
    if which == "skl":
        return p.skl_latency, p.skl_lines_in_flight, p.skl_cores
    if which == "knl_mcdram":
        return p.knl_mcdram_latency, p.knl_lines_in_flight, p.knl_cores
    if which == "knl_ddr4":
        return p.knl_ddr_latency, p.knl_lines_in_flight, p.knl_cores
    raise UnknownNameError(f"unknown memory {which!r}; one of {', '.join(MEMORIES)}")


def stream_network(p: Params, which: str, threads: int, remote: float | None = None):
    """The closed network of STREAM with ``threads`` threads on memory ``which``.

    Stations: ``core`` (delay: the unloaded latency less the channel's
    service), ``mem`` (one server per channel, 64 B / channel bandwidth)
    and, on SKL with ``remote > 0``, ``upi`` (one server per link and
    direction, 64 B / link-direction bandwidth, visited with probability
    ``remote``).  Population: threads x lines in flight per core.
    """
    import qmodels as qm

    lat, lines, cores = _setup(p, which)
    if not (isinstance(threads, int) and 1 <= threads <= cores):
        raise InvalidValueError(f"stream: threads must be an integer in 1..{cores} on {which}, "
                                f"got {threads!r}")
    mem = memory(p, which)
    per_channel = mem.replace(channels=1)
    s_mem = per_channel.service_time
    stations = [qm.Delay("core", max(lat - s_mem, 0.0)),
                per_channel.station("mem", servers=mem.channels)]
    visits = {"core": 1, "mem": 1}
    r = p.remote if (remote is None and which == "skl") else (remote or 0.0)
    if which == "skl" and r > 0:
        link = upi(p)
        lane = link.replace(links=1, directions=1)
        stations.append(lane.station("upi", servers=link.links * link.directions))
        visits["upi"] = r
    return qm.Network(stations, [qm.Closed("line", threads * lines, visits=visits)])


def stream(p: Params, which: str, threads: int, remote: float | None = None):
    """STREAM bandwidth (B/s, as STREAM reports it) and the solved MVA result."""
    import qmodels as qm

    res = qm.mva(stream_network(p, which, threads, remote))
    return p.stream_counted * LINE * res.X["line"], res


def regime(net) -> str:
    """What limits a STREAM network: ``"cores"`` below the saturation
    population N* = (D + Z) / D_max (the threads cannot issue enough
    requests, [QSP] ch. 5), else the bottleneck station (largest D / c)."""
    import qmodels as qm

    b = qm.bounds(net)
    if net.classes[0].population < b.saturation_population:
        return "cores"
    return b.bottleneck[0]


def stream_curve(p: Params, which: str, threads=None, remote=None) -> dict:
    """Bandwidth (B/s, as STREAM reports it), regime and utilisations over
    ``threads`` (default every count 1..cores).

    ``remote`` is a number (one MVA recursion gives every thread count:
    the curve of X(n) at n = threads x lines in flight) or a function of
    the thread count (one solve per point).
    """
    import qmodels as qm

    _, lines, cores = _setup(p, which)
    threads = list(range(1, cores + 1)) if threads is None else list(threads)
    out = {"threads": threads, "bandwidth": [], "regime": [], "U_mem": [], "U_upi": [],
           "remote": []}
    if not callable(remote):
        net = stream_network(p, which, max(threads), remote)
        curve = qm.mva(net, curve=True).curve
        names = list(curve.station_names)
        r = remote if remote is not None else (p.remote if which == "skl" else 0.0)
        for t in threads:
            sub = stream_network(p, which, t, remote)
            n = t * lines
            out["bandwidth"].append(p.stream_counted * LINE * float(curve.X[n]))
            out["regime"].append(regime(sub))
            out["U_mem"].append(float(curve.U[n, names.index("mem")]))
            out["U_upi"].append(float(curve.U[n, names.index("upi")]) if "upi" in names
                                else 0.0)
            out["remote"].append(r)
        return out
    for t in threads:
        r = remote(t)
        bw, res = stream(p, which, t, r)
        out["bandwidth"].append(bw)
        out["regime"].append(regime(res.network))
        out["U_mem"].append(res.U["mem"])
        names = res.network.station_names
        out["U_upi"].append(res.U["upi"] if "upi" in names else 0.0)
        out["remote"].append(r)
    return out


def upi_switch(p: Params):
    """The remote fraction at which the UPI link overtakes the memory
    channels as the SKL bottleneck, exactly (sympy), from
    :func:`qmodels.bottleneck_regions`: UPI bandwidth / memory bandwidth."""
    import sympy as sp

    import qmodels as qm

    r = sp.Symbol("remote", positive=True)
    mem = memory(p, "skl")
    link = upi(p)
    net = qm.Network(
        [qm.Delay("core", sp.nsimplify(p.skl_latency)),
         qm.Queue("mem", sp.Integer(LINE) / sp.nsimplify(mem.bandwidth / mem.channels),
                  servers=mem.channels),
         qm.Queue("upi", sp.Integer(LINE) / sp.nsimplify(link.bandwidth / 4), servers=4)],
        [qm.Closed("line", 1, visits={"core": 1, "mem": 1, "upi": r})])
    return qm.bottleneck_regions(net, r, domain=(0, 1))


def fit_remote(p: Params, target: float = 177.2e9, threads: int | None = None) -> float:
    """The remote fraction at which the SKL model reports ``target`` B/s
    with all ``threads`` (default: every core) running."""
    threads = p.skl_cores if threads is None else threads

    def residuals(v):
        bw, _ = stream(p, "skl", threads, v["remote"])
        return [bw / target - 1]

    return fit_parameters(residuals, {"remote": p.remote}, {"remote": (1e-4, 1.0)})["remote"]


# ---------------------------------------------------------------------------
# IOR and the page cache
# ---------------------------------------------------------------------------

def ior_file_size(block_size: float, tasks: int, segments: int = 1) -> float:
    """FileSize = BlockSize x NumTasks x SegmentCount (paper eq. 3), bytes."""
    for what, v in (("block_size", block_size), ("tasks", tasks), ("segments", segments)):
        if not v > 0:
            raise InvalidValueError(f"ior_file_size: {what} must be positive, got {v!r}")
    return block_size * tasks * segments


def cache_capacity(p: Params, which: str) -> float:
    """Bytes of file data the client can cache: min(memory bound to,
    Lustre limit = fraction x the node's RAM)."""
    if which == "knl_ddr4":
        bound, ram = p.knl_ddr_size, p.knl_ddr_size + p.knl_mcdram_size
    elif which == "knl_mcdram":
        bound, ram = p.knl_mcdram_size, p.knl_ddr_size + p.knl_mcdram_size
    elif which == "skl":
        bound, ram = p.skl_memory, p.skl_memory
    else:
        raise UnknownNameError(f"unknown memory {which!r}; one of {', '.join(MEMORIES)}")
    return min(bound, p.lustre_cache_fraction * ram)


def hit_ratio(file_size: float, capacity: float, policy: str = "lru") -> float:
    """Page-cache hit ratio of a sequential reread of ``file_size`` bytes.

    ``"lru"``: 1 if the file fits, else 0 (every page is evicted before its
    reuse, [LIRS]); ``"random"``: min(1, capacity / file_size) (random
    replacement keeps a random capacity-sized subset).
    """
    if policy == "lru":
        return 1.0 if file_size <= capacity else 0.0
    if policy == "random":
        return min(1.0, capacity / file_size)
    raise InvalidValueError(f"hit_ratio: policy must be 'lru' or 'random', got {policy!r}")


def ior_bandwidth(p: Params, which: str, file_size: float, policy: str = "lru") -> float:
    """Read bandwidth (B/s) of IOR's reread: hits at the node's STREAM
    bandwidth with all cores, misses at the PFS link rate; the harmonic mix
    1 / (h / B_cache + (1 - h) / B_pfs)."""
    _, _, cores = _setup(p, which)
    b_cache, _ = stream(p, which, cores)
    h = hit_ratio(file_size, cache_capacity(p, which), policy)
    return 1.0 / (h / b_cache + (1 - h) / p.pfs_bw)


# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------

def report(params: Params | None = None, *, sim: bool = False, seed: int = 1,
           fit: bool = True) -> CaseReport:
    """The paper-vs-model table of the many-core study.

    ``fit=True`` refits ``remote`` on the SKL STREAM peak first.
    ``sim=True`` also simulates the SKL STREAM network at 10 threads and
    puts the simulated bandwidth next to MVA's in ``extra["simulation"]``.
    """
    p = Params() if params is None else params
    fitted = {}
    if fit:
        fitted = {"remote": fit_remote(p)}
        p = dataclasses.replace(p, **fitted)
    rows = []
    R = rows.append
    # Each row's role and why.  derived: the paper's number is itself an identity of stated
    # inputs (a peak from a data sheet, a file size from the IOR command line); predicted:
    # a measured effect (HPL, STREAM, the cache cliff) the model was not told; fitted: the
    # SKL STREAM peak (the remote fraction).
    # derived: Rpeak = cores x FLOPs per cycle x clock, the paper's own eq. (1) and (2)
    R(Row("KNL Rpeak", 3046.4, rpeak(p, "knl") / GB, "derived", unit="GFLOP/s",
          note="eq. (1): cores x FLOPs per cycle x clock, inputs from the data sheet"))
    R(Row("SKL Rpeak", 3072.0, rpeak(p, "skl") / GB, "derived", unit="GFLOP/s",
          note="eq. (2): cores x FLOPs per cycle x clock, inputs from the data sheet"))
    # predicted: a measured HPL efficiency; the model's is the AVX clock / base clock
    R(Row("KNL HPL Rmax/Rpeak (All2All)", 0.60, hpl_efficiency(p, "knl"),
          note="sec. 4-1; model: AVX clock 1.2 / 1.4 GHz",
          miss="the AVX clock is only an upper bound for KNL; the rest of the loss (cache "
               "coherence across 34 tiles, which the paper names) has no term in the model"))
    R(Row("SKL HPL Rmax/Rpeak, 1 node", 0.66, hpl_efficiency(p, "skl"),
          note="sec. 4-1; model: AVX-512 clock 1.6 / 2.4 GHz"))
    e16 = hpl_efficiency(p, "skl", 16)
    # predicted: HPL's scalability model over the 100 Gbit/s fabric, not told any Rmax
    R(Row("SKL HPL Rmax/Rpeak, 16 nodes", 0.51, e16, note="sec. 4-1",
          miss="HPL's scalability model with a memory-filling N charges only "
               f"{100 * (1 - e16 / hpl_efficiency(p, 'skl')):.1f} % for broadcasts and swaps "
               "over 100 Gbit/s at 16 nodes; 51 % needs a much smaller N (the paper gives "
               "none) or losses the model omits (imbalance, noise)"))
    ddr = memory(p, "knl_ddr4").bandwidth
    mcd = memory(p, "knl_mcdram").bandwidth
    # derived: a peak is channels x transfer rate x width, all inputs
    R(Row("KNL DDR4 peak bandwidth", 90.0, ddr / GB, "derived", unit="GB/s",
          note="sec. 3-1; channels x rate x width: 6 x DDR4-2400 x 8 B (data sheet)",
          miss="with write-allocate (the accounting that also gives MCDRAM's 360 of 490) "
               "STREAM's measured 89 GB/s moves 89 / 0.75 = 119 GB/s, more than 90 can carry; "
               "Intel's 6 x DDR4-2400 peak is 115.2"))
    # derived: the ratio of two data-sheet peaks
    R(Row("KNL MCDRAM / DDR4 peak bandwidth", 5.0, mcd / ddr, "derived",
          note="sec. 3-1: 'about 5x'; the ratio of the two data-sheet peaks (490 / 115.2)"))
    bw_mcd, _ = stream(p, "knl_mcdram", p.knl_cores)
    bw_ddr, _ = stream(p, "knl_ddr4", p.knl_cores)
    # predicted: measured STREAM rates; the model's write-allocate 3/4 of the saturated peak
    R(Row("KNL MCDRAM STREAM, 68 threads", 360.0, bw_mcd / GB, unit="GB/s", note="sec. 4-2"))
    R(Row("KNL DDR4 STREAM, 68 threads", 89.0, bw_ddr / GB, unit="GB/s", note="sec. 4-2"))
    # derived: 2 x 128 GB/s, a peak of inputs
    R(Row("SKL memory peak, 2 sockets", 256.0, memory(p, "skl").bandwidth / GB, "derived",
          unit="GB/s", note="sec. 4-2: 2 x 128; channels x rate x width: 2 x 6 x DDR4-2666 x "
                            "8 B (data sheet)"))
    # derived: links x directions x per-direction rate, inputs
    R(Row("SKL UPI bandwidth, 2 links x 2 directions", 41.6, upi(p).bandwidth / GB, "derived",
          unit="GB/s", note="sec. 3-2; links x directions x rate x bytes per transfer: 2 x 2 x "
                            "10.4 GT/s x 1 B (inputs)"))
    bw_skl, res_skl = stream(p, "skl", p.skl_cores)
    # fitted: the remote fraction is solved for it
    R(Row("SKL STREAM peak, 40 threads", 177.2, bw_skl / GB, "fitted" if fit else "predicted",
          unit="GB/s", note="sec. 4-2; fits the remote fraction; assumption: the paper calls "
                            "177.2 GB/s the 'peak' without a thread count; taken at all 40 "
                            "cores"))
    knl_sizes = [ior_file_size(b, p.knl_tasks, p.segments) for b in p.block_sizes]
    skl_sizes = [ior_file_size(b, p.skl_tasks, p.segments) for b in p.block_sizes]
    # derived: the IOR command line's tasks x block size x segments, inputs
    R(Row("KNL IOR largest file", 512.0, knl_sizes[-1] / GiB, "derived", unit="GB",
          note="sec. 4-3: 16 tasks x 32 GB, the IOR settings (inputs)"))
    R(Row("SKL IOR largest file", 320.0, skl_sizes[-1] / GiB, "derived", unit="GB",
          note="sec. 4-3: 10 tasks x 32 GB, the IOR settings (inputs)"))
    # predicted: the measured cliffs; the model places them at min(bound memory, RAM / 2)
    R(Row("KNL cache cliff, DDR4", 64.0, cache_capacity(p, "knl_ddr4") / GiB, unit="GB",
          note="sec. 4-3; model: Lustre's half of 112 GB RAM"))
    R(Row("KNL cache cliff, MCDRAM", 16.0, cache_capacity(p, "knl_mcdram") / GiB, unit="GB",
          note="sec. 4-3; model: the 16 GB bound to"))
    R(Row("SKL cache cliff", 100.0, cache_capacity(p, "skl") / GiB, unit="GB",
          note="sec. 4-3 ('about 100 GB'; the paper's reason: one socket's 96 GB); model: "
               "Lustre's half of 192 GB"))

    # the bottleneck shift, for the record
    sw = upi_switch(p)
    switch = float(sw.switch_points[0].value)
    skl_threads = sorted({1, *range(2, p.skl_cores + 1, 2)})
    knl_threads = sorted({1, *range(4, p.knl_cores + 1, 4), p.knl_cores})
    path = stream_curve(p, "skl", skl_threads, remote=lambda t: p.remote * t / p.skl_cores)
    fixed = stream_curve(p, "skl", skl_threads)
    extra = {
        "upi_switch_remote": switch,
        "skl_regime_at_fitted_remote": res_skl.bottleneck,
        "skl_path": path,
        "skl_fixed_remote": fixed,
        "knl_mcdram": stream_curve(p, "knl_mcdram", knl_threads),
        "knl_ddr4": stream_curve(p, "knl_ddr4", knl_threads),
        "ior": {"knl_ddr4": knl_sizes, "skl": skl_sizes},
    }
    validation, status = (), ""
    if sim:
        import qmodels as qm

        from ._base import validation_entry

        net = stream_network(p, "skl", 10)
        s = qm.simulate(net, seed=seed, replications=5)
        extra["simulation"] = {
            "point": "SKL STREAM, 10 threads",
            "mva_bandwidth": p.stream_counted * LINE * qm.mva(net).X["line"],
            "simulated_bandwidth": p.stream_counted * LINE * s.X["line"].mean,
        }
        scale = p.stream_counted * LINE / GB
        validation = (validation_entry(
            "SKL STREAM, 10 threads", "STREAM bandwidth [GB/s]",
            float(extra["simulation"]["mva_bandwidth"]) / GB,
            (float(s.X["line"].mean) * scale, float(s.X["line"].half_width) * scale),
            tolerance=0.0, method="MVA (exact, product form) vs simulation"),)
        status = ("the SKL STREAM network (cores, memory channels, UPI) at 10 threads; the "
                  "other rows are peaks, HPL's scalability formula and the cache model, "
                  "no network")
    notes = (
        f"SKL bottleneck: memory channels while remote < {switch:.4f} (= 41.6 / 255.9), the "
        f"UPI link above; the fitted remote fraction {p.remote:.4f} puts UPI just past the "
        "switch, as the paper says",
        "STREAM reports 3/4 of the bus traffic (write-allocate), so its ceilings are 0.75 x "
        "the peaks: 367.5 (MCDRAM), 86.4 (KNL DDR4), 192 (SKL memory)",
        "cache cliff: the client caches min(bound memory, 1/2 RAM); an LRU reread of a larger "
        "file hits nothing, hence a cliff rather than a slope",
    )
    return CaseReport("manycore", "Multi-/many-core nodes: paper (Yoon & Song 2019) vs model",
                      rows, p, fitted=fitted, extra=extra, notes=notes, validation=validation,
                      sim_status=status)
