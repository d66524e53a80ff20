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
- :mod:`.held`: :class:`BufferPool`, :class:`SwitchPort`;
- :mod:`.cache`: :class:`Cache` (hit ratios by Che's approximation, the
  hit/miss split of a route, an item-by-item simulator), the popularity
  models :class:`Zipf` and :class:`Popularity`, and :class:`WorkingSet`
  (a node's demand when its share of the data spills out of memory).

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

from . import _common, cache, compute, held, links, storage
from ._common import *  # noqa: F403
from .cache import *  # noqa: F403
from .compute import *  # noqa: F403
from .held import *  # noqa: F403
from .links import *  # noqa: F403
from .storage import *  # noqa: F403

#: every public name of the element modules, in one list
__all__ = [*_common.__all__, *storage.__all__, *links.__all__, *compute.__all__,
           *held.__all__, *cache.__all__]
