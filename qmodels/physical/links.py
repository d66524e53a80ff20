"""Buses, memory channels and links, and the transport ceilings of a flow.

The transfer elements (a parallel PCI bus, a PCI Express link, DRAM
channels, a generic link, Ethernet with its framing, Serial RapidIO, Intel
UPI) cost overhead + size / bandwidth per job, each deriving ``bandwidth``
from line rate, width, line code and packet overhead.  The transport
helpers give the line-code efficiency, the bandwidth-delay product, the
window-limited throughput window / RTT and the least of an end-system
transfer's ceilings (:func:`transport_limits`).

References
----------
.. [Hockney] R. W. Hockney, "The communication challenge for MPP: Intel
   Paragon and Meiko CS-2", Parallel Computing 20(3), 1994, pp. 389-398
   (t(m) = t0 + m / r_inf, half-performance length n_1/2 = t0 r_inf).
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
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from .._validate import Number, check_count, check_fraction, is_symbolic
from ..errors import InvalidValueError
from ._common import Element, _any_sym, _ceil, _max, _min, _nonneg, _pos, _Transfer

__all__ = [
    "PCIBus",
    "PCIe",
    "MemoryChannel",
    "Link",
    "Ethernet",
    "SRIO",
    "UPI",
    "TransportLimits",
    "encoding_efficiency",
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
# line codes and transport ceilings
# ---------------------------------------------------------------------------

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
# buses and memory
# ---------------------------------------------------------------------------

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
        eff = check_fraction(self.efficiency, "PCIBus: efficiency")
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
