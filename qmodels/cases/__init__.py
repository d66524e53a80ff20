"""The five source systems as models: one module per published study.

=============  ===============================================================
``spax``       SPAX parallel transaction system under TPC-C: buffers and
               switch ports held along the packet path, the bottleneck moving
               from the interface buffer to the DMA engine and switch port
``kosmos``     KOSMOS microserver interconnects (Ethernet vs Serial RapidIO):
               bandwidth vs message size from a host -> PCIe DMA -> link cycle
               of deterministic transfers, CloudSuite master/slave runs as a
               fork-join, Graph Analytics' working set
``afa``        energy of all-flash storage (HDD, SATA SSD, NVMe, NVDIMM-N): a
               cpu -> xfs -> device network per experiment, energy per
               element from utilisations and power states
``manycore``   Xeon Phi KNL and Skylake nodes: Rpeak, STREAM with the remote
               fraction from first touch (memory channels, not UPI, bind),
               the IOR cache cliff from an LRU page cache
``nic``        end-system limits of 1 Gbps transfers: the host-bus-NIC-link-
               backbone path with TCP's window as the closed population over
               the RTT delay, UDP as an open class, the switch window
=============  ===============================================================

Each module has a frozen ``Params`` dataclass (every field says where its
value comes from) and ``report(params=None, *, sim=False, seed=1)`` returning
a :class:`CaseReport` with the paper-vs-model table.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ..errors import UnknownNameError
from ._base import (
    CaseReport,
    Row,
    fit_parameters,
    mark_stale,
    param,
    parameter_table,
    with_overrides,
)

__all__ = ["CASES", "case", "report", "CaseReport", "Row", "param", "with_overrides",
           "fit_parameters", "parameter_table"]

#: case name -> module holding ``Params`` and ``report``
CASES = {
    "spax": "qmodels.cases.spax",
    "kosmos": "qmodels.cases.kosmos",
    "afa": "qmodels.cases.afa",
    "manycore": "qmodels.cases.manycore",
    "nic": "qmodels.cases.nic",
}


def case(name: str):
    """The module of case ``name`` (one of :data:`CASES`)."""
    try:
        return importlib.import_module(CASES[name])
    except KeyError:
        raise UnknownNameError(
            f"unknown case {name!r}; available: {', '.join(CASES)}") from None


def report(name: str, overrides=(), *, sim: bool = False, seed: int = 1) -> CaseReport:
    """The paper-vs-model report of case ``name`` with ``overrides`` applied
    (a mapping or ``KEY=VALUE`` strings, see :func:`with_overrides`).

    A fitted row that the overrides push off its paper value (a case that
    does not refit, such as SPAX) is marked stale against the report at the
    default parameters (:func:`~qmodels.cases._base.mark_stale`).
    """
    mod = case(name)
    params = with_overrides(mod.Params(), overrides) if overrides else mod.Params()
    rep = mod.report(params, sim=sim, seed=seed)
    if params != mod.Params():
        said = (", ".join(f"{k}={v}" for k, v in overrides.items())
                if isinstance(overrides, Mapping) else ", ".join(overrides))
        rep = mark_stale(rep, mod.report(mod.Params()), f"--set {said}")
    return rep
