"""Shared parts of the path elements: the base class and the helpers.

:class:`Element` (a ``service_time`` and a ``station``), the ``_Transfer``
mixin (service time = overhead + size / bandwidth, the linear cost model of
[Hockney]), :func:`effective_bandwidth`, and the checks and min/max/ceil
helpers that work on numbers and sympy expressions alike.  The elements
themselves live in :mod:`.storage`, :mod:`.links`, :mod:`.compute` and
:mod:`.held`; :mod:`.elements` gathers them.

References
----------
.. [Hockney] R. W. Hockney, "The communication challenge for MPP: Intel
   Paragon and Meiko CS-2", Parallel Computing 20(3), 1994, pp. 389-398
   (t(m) = t0 + m / r_inf, half-performance length n_1/2 = t0 r_inf).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from .._validate import check_real, is_symbolic
from ..errors import InvalidValueError
from ..model.network import Queue

__all__ = ["Element", "effective_bandwidth"]


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
        own (CPU cores; 1 otherwise).  The station keeps this element
        (``station.element``), so a sweep can vary its parameters by path:
        ``"disk.rpm"`` rebuilds the station from the changed element
        (:func:`qmodels.whatif.paths.apply`).
        """
        kw.setdefault("servers", self.servers)
        return Queue(name or self.default_name, self.service_time, element=self, **kw)

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
