"""Storage path elements: a disk behind a cache, flash or persistent
memory, and a DMA engine (set-up cost plus bytes at its bandwidth).

Parameters are in the units each docstring states; every one may be a sympy
expression (see :mod:`.elements`).

References
----------
.. [Hockney] R. W. Hockney, "The communication challenge for MPP: Intel
   Paragon and Meiko CS-2", Parallel Computing 20(3), 1994, pp. 389-398
   (t(m) = t0 + m / r_inf, half-performance length n_1/2 = t0 r_inf).
.. [HP] J. L. Hennessy & D. A. Patterson, *Computer Architecture: A
   Quantitative Approach*, 5th ed., Morgan Kaufmann 2012: sec. 1.9 (CPU
   time = instruction count x CPI x clock cycle time), appendix D.2 (disk
   access time = seek + rotational latency + transfer + controller).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .._validate import Number, check_fraction
from ._common import Element, _nonneg, _pos, _Transfer, effective_bandwidth

__all__ = ["Disk", "Flash", "DMAEngine"]


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
        object.__setattr__(self, "miss_rate", check_fraction(self.miss_rate, "Disk: miss_rate"))
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
# engines
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
