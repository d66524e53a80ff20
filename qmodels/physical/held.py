"""Held resources: an interface buffer pool and a switch input port.

Each builds the :class:`~qmodels.model.TokenPool` that spans the stations a
packet visits while it holds a slot (simultaneous resource possession); the
switch port is also a transfer station (overhead + size / (clock x width),
[Hockney]).

References
----------
.. [Hockney] R. W. Hockney, "The communication challenge for MPP: Intel
   Paragon and Meiko CS-2", Parallel Computing 20(3), 1994, pp. 389-398
   (t(m) = t0 + m / r_inf, half-performance length n_1/2 = t0 r_inf).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, cast

from .._validate import Number, check_count
from ..errors import InvalidValueError
from ..model.network import TokenPool
from ._common import Element, _nonneg, _pos, _Transfer

__all__ = ["BufferPool", "SwitchPort"]


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
