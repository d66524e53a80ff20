"""Physical path elements: devices, buses and links turned into stations.

Each element is a frozen dataclass holding its physical parameters, in the
units its docstring states (seconds, bytes, bytes per second, hertz, watts;
network line rates in bits per second because that is how they are quoted).
From them it derives a ``service_time`` (seconds per request, message or
packet) and builds a :class:`~qmodels.model.Queue` with :meth:`station`.
Held resources (an interface buffer pool, a switch input port) also build the
:class:`~qmodels.model.TokenPool` that spans the stations a packet visits
while it holds a slot.

Every parameter may be a sympy expression: the formulas are plain
arithmetic, and validation raises only when a condition is provably false
(``sympy.Symbol("rate", positive=True)`` passes a positivity check), so the
symbolic solvers can find, for example, the packet size at which a DMA
engine stops being the bottleneck.

Conventions
-----------
``bandwidth`` is always bytes per second of payload; ``service_time`` is
always seconds per job.  A per-message ``overhead`` (seconds) plus
``size / bandwidth`` is the linear (Hockney) cost model used by every
transfer element.

References
----------
.. [Hockney] R. W. Hockney, "The communication challenge for MPP: Intel
   Paragon and Meiko CS-2", Parallel Computing 20(3), 1994, pp. 389-398
   (t(m) = t0 + m / r_inf, half-performance length n_1/2 = t0 r_inf).
.. [HP] J. L. Hennessy & D. A. Patterson, *Computer Architecture: A
   Quantitative Approach*, 5th ed., Morgan Kaufmann 2012: sec. 1.9 (CPU
   time = instruction count x CPI x clock cycle time), appendix D.2 (disk
   access time = seek + rotational latency + transfer + controller).
.. [802.3] IEEE Std 802.3-2018, clause 3.1.1 (MAC frame: preamble 7 B, SFD
   1 B, destination and source address 6 B each, length/type 2 B, client
   data 46..1500 B, FCS 4 B) and clause 4.4.2 (interFrameGap 96 bit times =
   12 B; minFrameSize 512 bits = 64 B).
.. [RFC791] IPv4 header, 20 B without options.  [RFC793] TCP header, 20 B
   without options (the timestamps option of RFC 7323 adds 12 B with
   padding).  [RFC768] UDP header, 8 B.
.. [RFC7323] D. Borman et al., "TCP Extensions for High Performance", 2014,
   sec. 1.1: a window smaller than the bandwidth-delay product limits the
   throughput to window / RTT.
.. [PCIe] PCI-SIG, *PCI Express Base Specification* rev. 3.0, 2010, sec.
   4.2 (8b/10b at 2.5 and 5.0 GT/s; 128b/130b at 8.0 GT/s).
.. [PCI] PCI-SIG, *PCI Local Bus Specification* rev. 3.0, 2004 (32 or 64
   bit data path at 33 or 66 MHz: 133 MB/s for 32 bit at 33.33 MHz).
.. [SRIO] RapidIO Trade Association, *RapidIO Interconnect Specification*
   rev. 2.2, Part 6 (LP-Serial physical layer: 1.25 to 6.25 Gbaud lanes,
   8b/10b).
.. [UPI] D. Mulnix, "Intel Xeon Processor Scalable Family Technical
   Overview", Intel, 2017 (UPI at 9.6 or 10.4 GT/s, 2 or 3 links per
   socket).
.. [DDR4] JEDEC JESD79-4, *DDR4 SDRAM*, 2012 (64-bit data bus per channel,
   data rate in MT/s).
.. [HPL] J. J. Dongarra, P. Luszczek & A. Petitet, "The LINPACK Benchmark:
   past, present and future", Concurrency and Computation 15(9), 2003
   (Rpeak, the theoretical peak: cores x clock x floating-point operations
   per cycle).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, cast

from .._validate import Number, check_count, check_real, is_symbolic
from ..errors import InvalidValueError
from ..model.network import Queue, TokenPool

__all__ = [
    "Element",
    "Disk",
    "Flash",
    "DMAEngine",
    "PCIBus",
    "PCIe",
    "MemoryChannel",
    "Link",
    "Ethernet",
    "SRIO",
    "UPI",
    "CPU",
    "BufferPool",
    "SwitchPort",
    "TransportLimits",
    "encoding_efficiency",
    "effective_bandwidth",
    "bandwidth_delay_product",
    "window_limited_throughput",
    "transport_limits",
    "ETHERNET_PREAMBLE_SFD",
    "ETHERNET_HEADER",
    "ETHERNET_FCS",
    "ETHERNET_IFG",
    "ETHERNET_MIN_FRAME",
    "IPV4_HEADER",
    "TCP_HEADER",
    "UDP_HEADER",
]

# Ethernet and IP framing, bytes ([802.3], [RFC791], [RFC793], [RFC768]).
ETHERNET_PREAMBLE_SFD = 8   # 7 B preamble + 1 B start frame delimiter
ETHERNET_HEADER = 14        # destination 6 + source 6 + length/type 2
ETHERNET_FCS = 4            # frame check sequence (CRC-32)
ETHERNET_IFG = 12           # inter-frame gap: 96 bit times
ETHERNET_MIN_FRAME = 64     # header + client data + FCS, at least
IPV4_HEADER = 20
TCP_HEADER = 20
UDP_HEADER = 8

_ENCODINGS = {
    "8b/10b": Fraction(8, 10),
    "64b/66b": Fraction(64, 66),
    "64b/67b": Fraction(64, 67),
    "128b/130b": Fraction(128, 130),
    "128b/132b": Fraction(128, 132),
    "none": Fraction(1),
}


# ---------------------------------------------------------------------------
# helpers (numbers or sympy expressions)
# ---------------------------------------------------------------------------

def _keep_exact(value, checked):
    """Integers and fractions stay exact (so symbolic results keep rational
    coefficients); other numbers come back as floats from ``check_real``."""
    if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
        return value
    return checked


def _pos(value, what):
    """A positive finite number or expression (raises naming ``what``)."""
    return _keep_exact(value, check_real(value, what, allow_zero=False))


def _nonneg(value, what):
    return _keep_exact(value, check_real(value, what))


def _fraction(value, what):
    """A number in [0, 1] (symbolic: unless provably outside)."""
    v = _nonneg(value, what)
    if is_symbolic(v):
        if (v - 1).is_positive is True:
            raise InvalidValueError(f"{what} must be in [0, 1], got {v}")
    elif v > 1:
        raise InvalidValueError(f"{what} must be in [0, 1], got {value!r}")
    return v


def _any_sym(*xs) -> bool:
    return any(is_symbolic(x) for x in xs)


def _min(*xs):
    if _any_sym(*xs):
        import sympy as sp

        return sp.Min(*xs)
    return min(xs)


def _max(*xs):
    if _any_sym(*xs):
        import sympy as sp

        return sp.Max(*xs)
    return max(xs)


def _ceil(x):
    if is_symbolic(x):
        import sympy as sp

        return sp.ceiling(x)
    return math.ceil(x)


def encoding_efficiency(encoding) -> Any:
    """Payload bits per line bit of a line code.

    ``"8b/10b"`` -> 4/5, ``"128b/130b"`` -> 64/65, ``"64b/66b"``,
    ``"64b/67b"``, ``"128b/132b"``, ``"none"`` -> 1; a number in (0, 1] is
    taken as the efficiency itself.  Returned as an exact fraction (or the
    expression given).

    References: [PCIe] sec. 4.2 (8b/10b, 128b/130b); [SRIO] Part 6 (8b/10b);
    IEEE 802.3 clause 49 (64b/66b).
    """
    if isinstance(encoding, str):
        key = encoding.strip().lower()
        if key not in _ENCODINGS:
            raise InvalidValueError(
                f"encoding must be one of {', '.join(_ENCODINGS)} or a number in (0, 1], "
                f"got {encoding!r}"
            )
        return _ENCODINGS[key]
    v = _pos(encoding, "encoding")
    if not is_symbolic(v) and v > 1:
        raise InvalidValueError(f"encoding efficiency must be in (0, 1], got {encoding!r}")
    return v


def effective_bandwidth(size, bandwidth, overhead=0.0):
    """Delivered bandwidth for messages of ``size`` bytes, in bytes/s.

    B_eff(m) = m / (t0 + m / r), with ``overhead`` t0 in seconds per message
    and ``bandwidth`` r in bytes/s ([Hockney]).  B_eff reaches r/2 at the
    half-performance length n_1/2 = t0 r and tends to r for m >> n_1/2:
    why measured bandwidth flattens above a few KB (:mod:`qmodels.cases.kosmos`).
    """
    m = _pos(size, "size")
    r = _pos(bandwidth, "bandwidth")
    t0 = _nonneg(overhead, "overhead")
    return m / (t0 + m / r)


def bandwidth_delay_product(rate_bps, rtt):
    """Bytes in flight needed to fill a path: BDP = rate x RTT / 8.

    Parameters
    ----------
    rate_bps : bottleneck rate, bits/s.
    rtt : round-trip time, seconds.

    Returns bytes.  A TCP window smaller than this limits the throughput to
    window / RTT ([RFC7323] sec. 1.1).  For 1 Gbit/s and 228 ms this is
    28.5 MB (10^6 B); the end-system paper (:mod:`qmodels.cases.nic`) states
    14.3 MB, which is 1 Gbit/s times the one-way delay 114 ms.
    """
    r = _pos(rate_bps, "rate_bps")
    t = _pos(rtt, "rtt")
    return r * t / 8


def window_limited_throughput(window, rtt):
    """TCP throughput bound by its window: window / RTT, bytes/s.

    ``window`` in bytes, ``rtt`` in seconds.  A sender may have at most one
    window of unacknowledged data per round trip ([RFC7323] sec. 1.1;
    W. R. Stevens, *TCP/IP Illustrated* vol. 1, 1994, sec. 20.7).
    64 KiB at 228 ms: 65536 / 0.228 = 287,439 B/s = 2.30 Mbit/s.
    """
    w = _pos(window, "window")
    t = _pos(rtt, "rtt")
    return w / t


@dataclass(frozen=True)
class TransportLimits:
    """The three ceilings of an end-system transfer, bytes/s, and the least.

    ``line`` = line rate x framing efficiency, ``window`` = window / RTT,
    ``bus`` = host bus capacity (``None`` when not given); ``throughput``
    is their minimum and ``binding`` names which one binds (numeric case).
    """

    line: Any
    window: Any
    bus: Any
    throughput: Any
    binding: str

    def __repr__(self):
        def mbps(v):
            if v is None:
                return "-"
            return f"{float(v) * 8 / 1e6:.6g} Mbit/s" if not is_symbolic(v) else str(v)

        return (f"TransportLimits(line={mbps(self.line)}, window={mbps(self.window)}, "
                f"bus={mbps(self.bus)} -> {mbps(self.throughput)}, binding={self.binding!r})")


def transport_limits(link: "Ethernet", *, window=None, rtt=None, bus=None) -> TransportLimits:
    """Throughput <= min(line rate x framing efficiency, window/RTT, bus).

    Parameters
    ----------
    link : Ethernet
        Line rate, MTU and transport (TCP or UDP) give the payload rate
        ``link.bandwidth``.
    window : bytes, optional (TCP window; with ``rtt``).
    rtt : seconds, optional.
    bus : bytes/s, optional (e.g. ``PCIBus(...).bandwidth``).

    A flow can go no faster than its slowest stage (each ceiling is an
    asymptotic bound, Lazowska et al., QSP 1984, sec. 5.2); UDP has no
    window, so pass ``window=None``.
    """
    line = link.bandwidth
    win = None
    if window is not None or rtt is not None:
        if window is None or rtt is None:
            raise InvalidValueError(
                f"transport_limits: give both window and rtt, got window={window!r}, rtt={rtt!r}"
            )
        win = window_limited_throughput(window, rtt)
    b = _pos(bus, "bus") if bus is not None else None
    named = [("line", line)] + ([("window", win)] if win is not None else []) + (
        [("bus", b)] if b is not None else [])
    vals = [v for _, v in named]
    thr = _min(*vals)
    if _any_sym(*vals):
        binding = "symbolic"
    else:
        binding = min(named, key=lambda kv: kv[1])[0]
    return TransportLimits(line=line, window=win, bus=b, throughput=thr, binding=binding)


# ---------------------------------------------------------------------------
# base class
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Element:
    """Base of the path elements: a ``service_time`` and a ``station``."""

    default_name: ClassVar[str] = "element"

    @property
    def service_time(self):
        raise NotImplementedError

    @property
    def servers(self):
        return 1

    def station(self, name: str | None = None, **kw) -> Queue:
        """A :class:`~qmodels.model.Queue` with this element's service time.

        ``kw`` goes to ``Queue`` (``power``, ``capacity``, ``distribution``,
        ``discipline``, ``servers``); ``servers`` defaults to the element's
        own (CPU cores; 1 otherwise).
        """
        kw.setdefault("servers", self.servers)
        return Queue(name or self.default_name, self.service_time, **kw)

    def stations(self, name: str | None = None, **kw) -> tuple:
        """The stations of this element (one for most elements)."""
        return (self.station(name, **kw),)

    def replace(self, **changes):
        """A copy with some parameters changed (validated again)."""
        return dataclasses.replace(self, **changes)


class _Transfer:
    """Mixin: service time = overhead + size / bandwidth ([Hockney])."""

    def _need_size(self):
        if self.size is None:
            raise InvalidValueError(
                f"{type(self).__name__}: size (bytes per job) is not set; "
                f"give size=... to get a service time"
            )
        return self.size

    def transfer_time(self, size):
        """Seconds to move ``size`` bytes: overhead + size / bandwidth."""
        m = _nonneg(size, f"{type(self).__name__}: size")
        return self.overhead + m / self.bandwidth

    @property
    def service_time(self):
        return self.transfer_time(self._need_size())

    def effective_bandwidth(self, size=None):
        """Delivered bytes/s for jobs of ``size`` bytes (default: ``self.size``)."""
        m = self._need_size() if size is None else size
        return effective_bandwidth(m, self.bandwidth, self.overhead)

    @property
    def half_performance_size(self):
        """n_1/2 = overhead x bandwidth, bytes: the size at which half the
        peak bandwidth is delivered ([Hockney])."""
        return self.overhead * self.bandwidth


# ---------------------------------------------------------------------------
# storage
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Disk(Element):
    """A magnetic disk behind a cache.

    Parameters
    ----------
    seek : s, mean seek time.
    rpm : revolutions per minute.
    transfer_rate : bytes/s, media transfer rate.
    size : bytes per request.
    miss_rate : fraction of requests that miss the disk cache and go to the
        media (default 1: no cache).
    hit_time : s, service time of a cache hit (default 0).
    controller : s, controller overhead per media access (default 0).

    Notes
    -----
    S = m (seek + 30 / rpm + size / transfer_rate + controller)
        + (1 - m) hit_time                                          [s]

    The mean rotational latency is half a revolution, (60 / rpm) / 2 =
    30 / rpm seconds ([HP] appendix D.2: access time = seek + rotational
    latency + transfer + controller).  The miss mix is the expectation over
    hits and misses (SPAX's "miss rate" m, :mod:`qmodels.cases.spax`).
    """

    seek: Number
    rpm: Number
    transfer_rate: Number
    size: Number
    miss_rate: Number = 1.0
    hit_time: Number = 0.0
    controller: Number = 0.0

    default_name: ClassVar[str] = "disk"

    def __post_init__(self):
        object.__setattr__(self, "seek", _nonneg(self.seek, "Disk: seek"))
        object.__setattr__(self, "rpm", _pos(self.rpm, "Disk: rpm"))
        object.__setattr__(self, "transfer_rate", _pos(self.transfer_rate, "Disk: transfer_rate"))
        object.__setattr__(self, "size", _nonneg(self.size, "Disk: size"))
        object.__setattr__(self, "miss_rate", _fraction(self.miss_rate, "Disk: miss_rate"))
        object.__setattr__(self, "hit_time", _nonneg(self.hit_time, "Disk: hit_time"))
        object.__setattr__(self, "controller", _nonneg(self.controller, "Disk: controller"))

    @property
    def rotational_latency(self):
        """30 / rpm seconds: half a revolution on average."""
        return 30 / self.rpm

    @property
    def media_time(self):
        """Seconds per media access: seek + 30/rpm + size/rate + controller."""
        return self.seek + self.rotational_latency + self.size / self.transfer_rate + \
            self.controller

    @property
    def service_time(self):
        m = self.miss_rate
        return m * self.media_time + (1 - m) * self.hit_time


@dataclass(frozen=True)
class Flash(_Transfer, Element):
    """A flash or persistent-memory device (SATA SSD, NVMe, NVDIMM) or any
    device whose cost is per-call overheads plus bytes / bandwidth.

    Parameters
    ----------
    bandwidth : bytes/s.
    size : bytes per job (optional until a service time is asked for).
    per_call : s, cost of one call (an fsync, a system call).
    calls : calls per job (default 1).
    overhead : s, any further fixed cost per job.

    Notes
    -----
    S = calls x per_call + overhead + size / bandwidth          [s]

    The linear cost model of [Hockney] with the fixed part split into
    per-call costs, as the all-flash energy study varies the number of
    fsync calls on a 1 GB file (:mod:`qmodels.cases.afa`).
    """

    bandwidth: Number
    size: Number | None = None
    per_call: Number = 0.0
    calls: Number = 1
    overhead: Number = 0.0

    default_name: ClassVar[str] = "flash"

    def __post_init__(self):
        object.__setattr__(self, "bandwidth", _pos(self.bandwidth, "Flash: bandwidth"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "Flash: size"))
        object.__setattr__(self, "per_call", _nonneg(self.per_call, "Flash: per_call"))
        object.__setattr__(self, "calls", _nonneg(self.calls, "Flash: calls"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "Flash: overhead"))

    def transfer_time(self, size):
        m = _nonneg(size, "Flash: size")
        return self.calls * self.per_call + self.overhead + m / self.bandwidth

    @property
    def half_performance_size(self):
        return (self.calls * self.per_call + self.overhead) * self.bandwidth

    def effective_bandwidth(self, size=None):
        m = self._need_size() if size is None else size
        return effective_bandwidth(m, self.bandwidth, self.calls * self.per_call + self.overhead)


# ---------------------------------------------------------------------------
# engines and buses
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DMAEngine(_Transfer, Element):
    """A DMA engine: a set-up cost, then bytes at its bandwidth.

    Parameters
    ----------
    setup : s per transfer (descriptor fetch, programming).
    bandwidth : bytes/s.
    size : bytes per transfer (a packet of 64 B in SPAX).

    Notes
    -----
    S = setup + size / bandwidth                                 [s]
    ([Hockney] linear cost model with t0 = setup.)
    """

    setup: Number
    bandwidth: Number
    size: Number | None = None

    default_name: ClassVar[str] = "dma"

    def __post_init__(self):
        object.__setattr__(self, "setup", _nonneg(self.setup, "DMAEngine: setup"))
        object.__setattr__(self, "bandwidth", _pos(self.bandwidth, "DMAEngine: bandwidth"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "DMAEngine: size"))

    @property
    def overhead(self):
        return self.setup


@dataclass(frozen=True)
class PCIBus(_Transfer, Element):
    """A parallel bus (PCI, PCI-X): ``width`` bytes per clock.

    Parameters
    ----------
    clock : Hz (33.33e6 for PCI, 133.33e6 for PCI-X 133).
    width : bytes per transfer (4 for 32-bit, 8 for 64-bit).
    size : bytes per job (optional).
    transfers_per_clock : 1 (2 for double data rate, 4 for PCI-X 533).
    efficiency : fraction of cycles that carry data (arbitration, address
        phases, wait states); 1 is the peak.
    overhead : s per job (arbitration and address phase), default 0.

    Notes
    -----
    bandwidth = clock x width x transfers_per_clock x efficiency   [B/s]
    S = overhead + size / bandwidth                                 [s]
    Peak 32-bit PCI at 33.33 MHz: 133.3 MB/s ([PCI]).
    """

    clock: Number
    width: Number
    size: Number | None = None
    transfers_per_clock: Number = 1
    efficiency: Number = 1.0
    overhead: Number = 0.0

    default_name: ClassVar[str] = "pci"

    def __post_init__(self):
        object.__setattr__(self, "clock", _pos(self.clock, "PCIBus: clock"))
        object.__setattr__(self, "width", _pos(self.width, "PCIBus: width"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "PCIBus: size"))
        object.__setattr__(self, "transfers_per_clock",
                           _pos(self.transfers_per_clock, "PCIBus: transfers_per_clock"))
        eff = _fraction(self.efficiency, "PCIBus: efficiency")
        object.__setattr__(self, "efficiency", _pos(eff, "PCIBus: efficiency"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "PCIBus: overhead"))

    @property
    def bandwidth(self):
        return self.clock * self.width * self.transfers_per_clock * self.efficiency


@dataclass(frozen=True)
class PCIe(_Transfer, Element):
    """A PCI Express link, one direction.

    Parameters
    ----------
    rate : transfers per second per lane (2.5e9, 5e9, 8e9, 16e9 ...).
    lanes : 1, 2, 4, 8, 16.
    encoding : ``"8b/10b"`` or ``"128b/130b"`` or an efficiency; by default
        8b/10b up to 5 GT/s and 128b/130b above ([PCIe] sec. 4.2; a symbolic
        rate needs an explicit encoding).
    size : bytes per job (optional).
    overhead : s per job (e.g. TLP processing), default 0.
    tlp_overhead, max_payload : bytes of header/sequence/LCRC/framing per
        TLP and the maximum payload per TLP; when ``max_payload`` is given
        the bandwidth is scaled by max_payload / (max_payload +
        tlp_overhead) (about 20-24 B per TLP: 12 or 16 B header, 2 B
        sequence number, 4 B LCRC, framing; [PCIe] sec. 2.2, 3.5, 4.2).

    Notes
    -----
    bandwidth = rate x lanes x encoding / 8 [x packet efficiency]  [B/s]
    PCIe 3.0 x8: 8e9 x 8 x 128/130 / 8 = 7.877 GB/s per direction.
    """

    rate: Number
    lanes: Number = 1
    encoding: Any = None
    size: Number | None = None
    overhead: Number = 0.0
    tlp_overhead: Number = 0
    max_payload: Number | None = None

    default_name: ClassVar[str] = "pcie"

    def __post_init__(self):
        object.__setattr__(self, "rate", _pos(self.rate, "PCIe: rate"))
        object.__setattr__(self, "lanes", check_count(self.lanes, "PCIe: lanes", minimum=1))
        enc = self.encoding
        if enc is None:
            if is_symbolic(self.rate):
                raise InvalidValueError(
                    f"PCIe: with a symbolic rate {self.rate} give encoding explicitly"
                )
            enc = "8b/10b" if self.rate <= 5e9 else "128b/130b"
        object.__setattr__(self, "encoding", enc)
        encoding_efficiency(enc)
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "PCIe: size"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "PCIe: overhead"))
        object.__setattr__(self, "tlp_overhead", _nonneg(self.tlp_overhead, "PCIe: tlp_overhead"))
        if self.max_payload is not None:
            object.__setattr__(self, "max_payload", _pos(self.max_payload, "PCIe: max_payload"))

    @property
    def line_bandwidth(self):
        """rate x lanes x encoding / 8, bytes/s (after line coding)."""
        return self.rate * self.lanes * encoding_efficiency(self.encoding) / 8

    @property
    def bandwidth(self):
        bw = self.line_bandwidth
        if self.max_payload is not None:
            bw = bw * self.max_payload / (self.max_payload + self.tlp_overhead)
        return bw


@dataclass(frozen=True)
class MemoryChannel(_Transfer, Element):
    """DRAM channels: data rate x bus width x channels.

    Parameters
    ----------
    rate : transfers per second (2666e6 for DDR4-2666).
    width : bytes per transfer (8: the 64-bit DDR4 data bus, [DDR4]).
    channels : number of channels (default 1).
    size : bytes per job (optional; a 64 B cache line, say).
    overhead : s per job (access latency seen as service), default 0.

    Notes
    -----
    bandwidth = rate x width x channels                            [B/s]
    One Xeon Gold 6148 socket, 6 channels of DDR4-2666:
    2666e6 x 8 x 6 = 127.97 GB/s, the "128 GB/s" per socket of the
    many-core study (:mod:`qmodels.cases.manycore`).
    """

    rate: Number
    width: Number = 8
    channels: Number = 1
    size: Number | None = None
    overhead: Number = 0.0

    default_name: ClassVar[str] = "memory"

    def __post_init__(self):
        object.__setattr__(self, "rate", _pos(self.rate, "MemoryChannel: rate"))
        object.__setattr__(self, "width", _pos(self.width, "MemoryChannel: width"))
        object.__setattr__(self, "channels",
                           check_count(self.channels, "MemoryChannel: channels", minimum=1))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "MemoryChannel: size"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "MemoryChannel: overhead"))

    @property
    def bandwidth(self):
        return self.rate * self.width * self.channels


# ---------------------------------------------------------------------------
# links
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Link(_Transfer, Element):
    """A generic link: per-message overhead plus size / bandwidth.

    Parameters
    ----------
    bandwidth : bytes/s of payload.
    overhead : s per message (software and adapter latency, t0).
    size : bytes per message (optional).

    Notes
    -----
    S(m) = overhead + m / bandwidth; effective bandwidth m / S(m)
    ([Hockney]).  Use it for a measured interconnect whose framing is not
    modelled (the CPU-to-CPU bandwidth curves of :mod:`qmodels.cases.kosmos`).
    """

    bandwidth: Number
    overhead: Number = 0.0
    size: Number | None = None

    default_name: ClassVar[str] = "link"

    def __post_init__(self):
        object.__setattr__(self, "bandwidth", _pos(self.bandwidth, "Link: bandwidth"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "Link: overhead"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "Link: size"))


@dataclass(frozen=True)
class Ethernet(_Transfer, Element):
    """An Ethernet link carrying TCP/IPv4, UDP/IPv4 or raw frames.

    Parameters
    ----------
    rate : line rate, **bits/s** (1e9, 2.5e9, 10e9).
    mtu : bytes, the largest IP packet (MAC client data) per frame.
    transport : ``"tcp"``, ``"udp"`` or ``"raw"`` (no IP/transport header).
    tcp_options : bytes of TCP options per segment (12 with timestamps).
    size : bytes of application data per message (optional).
    overhead : s per message (host software), default 0.

    Notes
    -----
    Per full frame on the wire ([802.3] clause 3.1.1, 4.4.2):
    preamble+SFD 8 + header 14 + MTU + FCS 4 + inter-frame gap 12 =
    MTU + 38 bytes, of which the payload is
    MTU - IP 20 - (TCP 20 + options | UDP 8) ([RFC791], [RFC793], [RFC768]).

        efficiency = payload / (MTU + 38)
        bandwidth  = rate / 8 x efficiency                        [B/s]

    MTU 1500: TCP 1460/1538 = 94.93 %, UDP 1472/1538 = 95.71 %;
    MTU 9000: TCP 8960/9038 = 99.14 %, UDP 8972/9038 = 99.27 %.

    :meth:`wire_bytes` counts a message exactly (whole frames, the last one
    padded to the 64 B minimum frame); ``service_time`` uses it, so short
    messages pay their full framing.
    """

    rate: Number
    mtu: Number = 1500
    transport: str = "tcp"
    tcp_options: Number = 0
    size: Number | None = None
    overhead: Number = 0.0

    default_name: ClassVar[str] = "ethernet"

    def __post_init__(self):
        object.__setattr__(self, "rate", _pos(self.rate, "Ethernet: rate"))
        object.__setattr__(self, "mtu", _pos(self.mtu, "Ethernet: mtu"))
        if self.transport not in ("tcp", "udp", "raw"):
            raise InvalidValueError(
                f"Ethernet: transport must be 'tcp', 'udp' or 'raw', got {self.transport!r}"
            )
        object.__setattr__(self, "tcp_options", _nonneg(self.tcp_options, "Ethernet: tcp_options"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "Ethernet: size"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "Ethernet: overhead"))
        p = self.payload
        if not is_symbolic(p) and p <= 0:
            raise InvalidValueError(
                f"Ethernet: mtu {self.mtu!r} leaves no room for data after the "
                f"{self.headers} B of IP/{self.transport.upper()} headers"
            )

    @property
    def headers(self):
        """IP + transport header bytes per packet."""
        if self.transport == "tcp":
            return IPV4_HEADER + TCP_HEADER + self.tcp_options
        if self.transport == "udp":
            return IPV4_HEADER + UDP_HEADER
        return 0

    @property
    def framing(self):
        """Bytes per frame outside the MAC client data: 8 + 14 + 4 + 12 = 38."""
        return ETHERNET_PREAMBLE_SFD + ETHERNET_HEADER + ETHERNET_FCS + ETHERNET_IFG

    @property
    def payload(self):
        """Application bytes per full frame: MTU - headers."""
        return self.mtu - self.headers

    @property
    def efficiency(self):
        """payload / (MTU + 38): the fraction of the line rate that is data."""
        return self.payload / (self.mtu + self.framing)

    @property
    def bandwidth(self):
        """rate / 8 x efficiency, bytes/s of application data."""
        return self.rate / 8 * self.efficiency

    def wire_bytes(self, size):
        """Bytes on the wire (framing and gap included) for one message.

        frames = ceil(size / payload); all but the last are full; the last
        carries the rest, padded so header + data + FCS >= 64 B.  A message
        of size 0 still sends one minimum frame.
        """
        m = _nonneg(size, "Ethernet: size")
        frames = _max(_ceil(m / self.payload), 1)
        rest = m - (frames - 1) * self.payload
        last_mac = _max(ETHERNET_HEADER + self.headers + rest + ETHERNET_FCS, ETHERNET_MIN_FRAME)
        return (frames - 1) * (self.mtu + self.framing) + last_mac + ETHERNET_PREAMBLE_SFD + \
            ETHERNET_IFG

    def transfer_time(self, size):
        return self.overhead + self.wire_bytes(size) * 8 / self.rate


@dataclass(frozen=True)
class SRIO(_Transfer, Element):
    """A Serial RapidIO port, one direction.

    Parameters
    ----------
    baud : line rate per lane, baud (1.25e9, 2.5e9, 3.125e9, 5e9, 6.25e9).
    lanes : 1, 2, 4 (x1, x2, x4 ports).
    encoding : line code (default 8b/10b, [SRIO] Part 6).
    packet_overhead : bytes of header and CRC per packet (set it from the
        logical/transport format in use; default 0).
    max_payload : bytes of data per packet (256 in RapidIO).
    size : bytes per message (optional).
    overhead : s per message, default 0.

    Notes
    -----
    bandwidth = baud x lanes x encoding / 8
                x max_payload / (max_payload + packet_overhead)    [B/s]
    A 5 Gbaud x4 port: 5e9 x 4 x 0.8 / 8 = 2 GB/s before packet overhead.
    """

    baud: Number
    lanes: Number = 1
    encoding: Any = "8b/10b"
    packet_overhead: Number = 0
    max_payload: Number = 256
    size: Number | None = None
    overhead: Number = 0.0

    default_name: ClassVar[str] = "srio"

    def __post_init__(self):
        object.__setattr__(self, "baud", _pos(self.baud, "SRIO: baud"))
        object.__setattr__(self, "lanes", check_count(self.lanes, "SRIO: lanes", minimum=1))
        encoding_efficiency(self.encoding)
        object.__setattr__(self, "packet_overhead",
                           _nonneg(self.packet_overhead, "SRIO: packet_overhead"))
        object.__setattr__(self, "max_payload", _pos(self.max_payload, "SRIO: max_payload"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "SRIO: size"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "SRIO: overhead"))

    @property
    def bandwidth(self):
        line = self.baud * self.lanes * encoding_efficiency(self.encoding) / 8
        return line * self.max_payload / (self.max_payload + self.packet_overhead)


@dataclass(frozen=True)
class UPI(_Transfer, Element):
    """Intel Ultra Path Interconnect between sockets.

    Parameters
    ----------
    rate : transfers per second per link (10.4e9 on Skylake-SP, [UPI]).
    links : links between the two sockets (2 on a Xeon Gold 6148 pair).
    directions : 2 to count both directions of each link, 1 for one.
    bytes_per_transfer : payload bytes per transfer per direction.
    size : bytes per job (optional).
    overhead : s per job, default 0.

    Notes
    -----
    bandwidth = rate x bytes_per_transfer x links x directions    [B/s]

    Which ``bytes_per_transfer`` to use is the question.  A UPI link has 20
    lanes per direction, commonly quoted as 2 bytes of data per transfer:
    10.4 GT/s x 2 B = 20.8 GB/s per link per direction, so 2 links x 2
    directions = 83.2 GB/s.  The many-core paper
    (:mod:`qmodels.cases.manycore`) states "2 links x 2 directions =
    41.6 GB/s", which is
    10.4 x 2 x 2 with **one byte per transfer per direction**
    (``bytes_per_transfer=1``) -- equivalently 2 B per transfer over 2
    links in one direction.  The default here is 1 so that the paper's
    figure is reproduced; say ``bytes_per_transfer=2`` for the
    two-byte reading.
    """

    rate: Number
    links: Number = 1
    directions: Number = 2
    bytes_per_transfer: Number = 1
    size: Number | None = None
    overhead: Number = 0.0

    default_name: ClassVar[str] = "upi"

    def __post_init__(self):
        object.__setattr__(self, "rate", _pos(self.rate, "UPI: rate"))
        object.__setattr__(self, "links", check_count(self.links, "UPI: links", minimum=1))
        d = check_count(self.directions, "UPI: directions", minimum=1)
        if not is_symbolic(d) and d > 2:
            raise InvalidValueError(f"UPI: directions must be 1 or 2, got {self.directions!r}")
        object.__setattr__(self, "directions", d)
        object.__setattr__(self, "bytes_per_transfer",
                           _pos(self.bytes_per_transfer, "UPI: bytes_per_transfer"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "UPI: size"))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "UPI: overhead"))

    @property
    def bandwidth(self):
        return self.rate * self.bytes_per_transfer * self.links * self.directions


# ---------------------------------------------------------------------------
# processors
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CPU(Element):
    """A multi-core processor (or a node's processors).

    Parameters
    ----------
    cores : number of cores (the station's servers).
    clock : Hz.
    flops_per_cycle : floating-point operations per cycle per core (32 for
        AVX-512 with two FMA units in double precision), for ``rpeak``.
    seconds : s of CPU time per job measured at ``ref_clock``, or
    instructions, cpi : instructions per job and cycles per instruction.
    ref_clock : Hz at which ``seconds`` was measured (default: ``clock``).

    Notes
    -----
    Rpeak = cores x flops_per_cycle x clock                   [FLOP/s]
    ([HPL]); KNL 7250: 68 x 32 x 1.4e9 = 3046.4 GFLOP/s, 2 x Gold 6148:
    40 x 32 x 2.4e9 = 3072 GFLOP/s (:mod:`qmodels.cases.manycore`).

    S = instructions x cpi / clock                                 [s]
    S = seconds x ref_clock / clock                                [s]
    ([HP] sec. 1.9, CPU time = instruction count x CPI / clock rate): a job
    is a fixed number of cycles, so its time scales inversely with the
    clock.  Assumes the job is core-bound (memory stalls do not shrink with
    the clock; model memory as its own station).
    """

    cores: Number
    clock: Number
    flops_per_cycle: Number | None = None
    seconds: Number | None = None
    instructions: Number | None = None
    cpi: Number | None = None
    ref_clock: Number | None = None

    default_name: ClassVar[str] = "cpu"

    def __post_init__(self):
        object.__setattr__(self, "cores", check_count(self.cores, "CPU: cores", minimum=1))
        object.__setattr__(self, "clock", _pos(self.clock, "CPU: clock"))
        for attr in ("flops_per_cycle", "instructions", "cpi", "ref_clock"):
            v = getattr(self, attr)
            if v is not None:
                object.__setattr__(self, attr, _pos(v, f"CPU: {attr}"))
        if self.seconds is not None:
            object.__setattr__(self, "seconds", _nonneg(self.seconds, "CPU: seconds"))
        if self.seconds is not None and (self.instructions is not None or self.cpi is not None):
            raise InvalidValueError(
                "CPU: give either seconds (at ref_clock) or instructions and cpi, not both"
            )
        if (self.instructions is None) != (self.cpi is None):
            raise InvalidValueError(
                f"CPU: instructions and cpi go together, got instructions={self.instructions!r}, "
                f"cpi={self.cpi!r}"
            )

    @property
    def servers(self):
        return self.cores

    @property
    def rpeak(self):
        """cores x flops_per_cycle x clock, FLOP/s."""
        if self.flops_per_cycle is None:
            raise InvalidValueError("CPU: rpeak needs flops_per_cycle, got None")
        return self.cores * self.flops_per_cycle * self.clock

    @property
    def service_time(self):
        if self.instructions is not None:
            return self.instructions * self.cpi / self.clock
        if self.seconds is not None:
            ref = self.clock if self.ref_clock is None else self.ref_clock
            return self.seconds * ref / self.clock
        raise InvalidValueError(
            "CPU: no work per job: give seconds (and ref_clock) or instructions and cpi"
        )


# ---------------------------------------------------------------------------
# held resources
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class BufferPool:
    """An interface buffer pool: ``slots`` packet buffers held across a path.

    A packet takes a slot before the first station of its path (``acquire``)
    and frees it when the last (``release``) completes: simultaneous
    resource possession, modelled as a :class:`~qmodels.model.TokenPool`
    (solved by :mod:`qmodels.analytic.decomposition`, the simulator or the CTMC).
    SPAX's XNIF data buffer: 1 buffer of 4 packets of 64 B
    (:mod:`qmodels.cases.spax`), ``BufferPool("xnif", slots=4, packet_size=64)``.

    Parameters
    ----------
    name : str
    slots : packets the pool holds (tokens), integer >= 1.
    packet_size : bytes per slot.
    """

    name: str
    slots: Number
    packet_size: Number = 64

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidValueError(
                f"BufferPool: name must be a non-empty string, got {self.name!r}"
            )
        object.__setattr__(self, "slots", check_count(self.slots, "BufferPool: slots", minimum=1))
        object.__setattr__(self, "packet_size", _pos(self.packet_size, "BufferPool: packet_size"))

    @property
    def capacity_bytes(self):
        """slots x packet_size, bytes."""
        return self.slots * self.packet_size

    def pool(self, acquire: str, release: str, classes=None) -> TokenPool:
        """The TokenPool held from station ``acquire`` through ``release``."""
        # slots passed check_count in __post_init__: an integer (or an integer
        # sympy symbol, which TokenPool's own check_count also admits)
        return TokenPool(self.name, cast(int, self.slots), acquire, release, classes)

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class SwitchPort(_Transfer, Element):
    """A switch input port: forwards ``width`` bytes per clock and holds at
    most ``slots`` packets (1 in SPAX's Xcent crossbar, :mod:`qmodels.cases.spax`).

    Parameters
    ----------
    clock : Hz.
    width : bytes per clock.
    size : bytes per packet (optional until a service time is asked for).
    slots : packets the port holds (default 1).
    overhead : s per packet (routing/arbitration), default 0.

    Notes
    -----
    bandwidth = clock x width                                     [B/s]
    S = overhead + size / (clock x width)                          [s]
    (one packet takes size / width clock cycles; a fluid count, not rounded
    up to whole cycles).  The port is a station (its transfer time) and a
    held resource: a packet keeps its slot from the port until the next
    stage accepts it; :meth:`pool` builds that TokenPool.
    """

    clock: Number
    width: Number
    size: Number | None = None
    slots: Number = 1
    overhead: Number = 0.0

    default_name: ClassVar[str] = "port"

    def __post_init__(self):
        object.__setattr__(self, "clock", _pos(self.clock, "SwitchPort: clock"))
        object.__setattr__(self, "width", _pos(self.width, "SwitchPort: width"))
        if self.size is not None:
            object.__setattr__(self, "size", _nonneg(self.size, "SwitchPort: size"))
        object.__setattr__(self, "slots", check_count(self.slots, "SwitchPort: slots", minimum=1))
        object.__setattr__(self, "overhead", _nonneg(self.overhead, "SwitchPort: overhead"))

    @property
    def bandwidth(self):
        return self.clock * self.width

    def pool(self, acquire: str, release: str, name: str | None = None, classes=None) -> TokenPool:
        """The TokenPool of the port's slots held from ``acquire`` to ``release``."""
        # slots passed check_count in __post_init__ (see BufferPool.pool)
        return TokenPool(name or f"{acquire}_slots", cast(int, self.slots), acquire, release,
                         classes)
