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
Each module lists the sources of its formulas (data sheets, standards and
books, down to the section).
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
