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

The elements live in modules by kind, and this module gathers every public
name (``qm.elements`` is this module):

- :mod:`._common`: the base class :class:`Element`, the transfer cost model
  and :func:`effective_bandwidth`;
- :mod:`.storage`: :class:`Disk`, :class:`Flash`, :class:`DMAEngine`;
- :mod:`.links`: :class:`PCIBus`, :class:`PCIe`, :class:`MemoryChannel`,
  :class:`Link`, :class:`Ethernet`, :class:`SRIO`, :class:`UPI`, the
  Ethernet/IP framing constants and the transport ceilings
  (:func:`encoding_efficiency`, :func:`bandwidth_delay_product`,
  :func:`window_limited_throughput`, :func:`transport_limits`);
- :mod:`.compute`: :class:`CPU`;
- :mod:`.held`: :class:`BufferPool`, :class:`SwitchPort`.

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

from ._common import Element, effective_bandwidth
from .compute import CPU
from .held import BufferPool, SwitchPort
from .links import (
    ETHERNET_FCS,
    ETHERNET_HEADER,
    ETHERNET_IFG,
    ETHERNET_MIN_FRAME,
    ETHERNET_PREAMBLE_SFD,
    IPV4_HEADER,
    SRIO,
    TCP_HEADER,
    UDP_HEADER,
    UPI,
    Ethernet,
    Link,
    MemoryChannel,
    PCIBus,
    PCIe,
    TransportLimits,
    bandwidth_delay_product,
    encoding_efficiency,
    transport_limits,
    window_limited_throughput,
)
from .storage import Disk, DMAEngine, Flash

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
