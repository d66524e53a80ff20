"""The processor path element: a multi-core CPU, its Rpeak and its service
time from CPU seconds at a reference clock or instructions x CPI / clock.

References
----------
.. [HP] J. L. Hennessy & D. A. Patterson, *Computer Architecture: A
   Quantitative Approach*, 5th ed., Morgan Kaufmann 2012: sec. 1.9 (CPU
   time = instruction count x CPI x clock cycle time), appendix D.2 (disk
   access time = seek + rotational latency + transfer + controller).
.. [HPL] J. J. Dongarra, P. Luszczek & A. Petitet, "The LINPACK Benchmark:
   past, present and future", Concurrency and Computation 15(9), 2003
   (Rpeak, the theoretical peak: cores x clock x floating-point operations
   per cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .._validate import Number, check_count
from ..errors import InvalidValueError
from ._common import Element, _nonneg, _pos

__all__ = ["CPU"]


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
