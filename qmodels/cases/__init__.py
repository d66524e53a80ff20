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

import dataclasses
import importlib
from collections.abc import Mapping

from ..errors import UnknownNameError
from ._base import (
    CaseReport,
    Row,
    assumptions,
    fit_parameters,
    mark_stale,
    param,
    parameter_table,
    with_overrides,
)

__all__ = ["CASES", "case", "report", "CaseReport", "Row", "param", "with_overrides",
           "fit_parameters", "parameter_table", "assumptions", "assumption_reach",
           "format_reach", "REACH_THRESHOLD"]

#: case name -> module holding ``Params`` and ``report``
CASES = {
    "spax": "qmodels.cases.spax",
    "kosmos": "qmodels.cases.kosmos",
    "afa": "qmodels.cases.afa",
    "manycore": "qmodels.cases.manycore",
    "nic": "qmodels.cases.nic",
}

#: a row "moves" with an assumption when its model value spans more than this fraction
#: (relative to its value at the assumption's current setting) over the plausible values
REACH_THRESHOLD = 0.05

_DEFAULT_REPORTS: dict = {}


def case(name: str):
    """The module of case ``name`` (one of :data:`CASES`)."""
    try:
        return importlib.import_module(CASES[name])
    except KeyError:
        raise UnknownNameError(
            f"unknown case {name!r}; available: {', '.join(CASES)}") from None


def _default_report(name: str) -> CaseReport:
    """The report at the default parameters (where the fits were made), once per
    process."""
    if name not in _DEFAULT_REPORTS:
        mod = case(name)
        _DEFAULT_REPORTS[name] = mod.report(mod.Params())
    return _DEFAULT_REPORTS[name]


def _said(overrides) -> str:
    if isinstance(overrides, Mapping):
        return ", ".join(f"{k}={v}" for k, v in overrides.items())
    return ", ".join(overrides)


def report(name: str, overrides=(), *, sim: bool = False, seed: int = 1,
           hold_fit: bool = False) -> CaseReport:
    """The paper-vs-model report of case ``name`` with ``overrides`` applied
    (a mapping or ``KEY=VALUE`` strings, see :func:`with_overrides`).

    ``hold_fit=True`` keeps every fitted parameter at its value fitted at
    the defaults and changes only what ``overrides`` sets, so a hardware
    what-if moves every row it reaches (``qmodels case NAME --set K=V
    --hold-fit``); the report's ``held`` lists the fits held.  Without it a
    case that refits refits on its named points (a set calibrated value is
    held as given).  A fitted row that the overrides push off its paper
    value is marked stale against the report at the default parameters
    (:func:`~qmodels.cases._base.mark_stale`): "held at the default fit" or
    "refitted, still misses".
    """
    mod = case(name)
    params = with_overrides(mod.Params(), overrides) if overrides else mod.Params()
    rep = mod.report(params, sim=sim, seed=seed, hold_fit=hold_fit)
    if params != mod.Params():
        rep = mark_stale(rep, _default_report(name), f"--set {_said(overrides)}")
    return rep


def _moved(values: list, at: float, boolean: bool) -> bool:
    if boolean:
        return len(set(values)) > 1
    spread = max(values) - min(values)
    ref = abs(at) if at else max(abs(v) for v in values)
    return ref > 0 and spread > REACH_THRESHOLD * ref


def assumption_reach(name: str, overrides=(), *, hold_fit: bool = False,
                     only: tuple = ()) -> list[dict]:
    """For each assumption of case ``name`` with plausible values (those
    named in ``only``, default all), the rows whose model value moves by
    more than :data:`REACH_THRESHOLD` between those values.

    Each plausible value is tried in turn on top of ``overrides``, the case
    refitting as under ``--set`` (or holding its fits with ``hold_fit``).
    One dict per assumption: ``name``, ``value`` (the current one),
    ``plausible``, ``source``, ``rows`` (quantity -> {value: model value},
    only the rows that move, with the paper's value under ``"paper"``) and
    ``misses`` (quantity -> {value: bool}, for the moved rows).
    """
    mod = case(name)
    base = with_overrides(mod.Params(), overrides) if overrides else mod.Params()
    table = assumptions(base)
    if only:
        unknown = set(only) - {a["name"] for a in table}
        if unknown:
            raise UnknownNameError(
                f"case {name!r} has no assumption with plausible values named "
                f"{', '.join(sorted(unknown))}; valid: {', '.join(a['name'] for a in table)}")
        table = [a for a in table if a["name"] in only]
    out = []
    for a in table:
        reps = {}
        for v in a["plausible"]:
            q = dataclasses.replace(base, **{a["name"]: v})
            reps[v] = mod.report(q, hold_fit=hold_fit)
        at = reps.get(a["value"]) or next(iter(reps.values()))
        rows, misses = {}, {}
        for r in at.rows:
            vals = {}
            for v, rep in reps.items():
                match = [x for x in rep.rows if x.quantity == r.quantity]
                if match:
                    vals[v] = match[0].model
            if len(vals) == len(reps) and _moved(list(vals.values()), r.model, r.boolean):
                rows[r.quantity] = {"paper": r.paper, **vals}
                misses[r.quantity] = {v: bool(next(x for x in reps[v].rows
                                                   if x.quantity == r.quantity).miss)
                                      for v in vals}
        out.append({"name": a["name"], "value": a["value"], "plausible": a["plausible"],
                    "source": a["source"], "unit": a["unit"], "rows": rows,
                    "misses": misses})
    return out


def format_reach(name: str, reach: list[dict]) -> str:
    """The text ``qmodels case NAME --assumptions`` prints for
    :func:`assumption_reach`."""
    from .._format import fmt, format_table, note_lines

    if not reach:
        return f"{name}: no assumption with plausible values"
    lines = [f"{name}: rows that move by more than {REACH_THRESHOLD:.0%} between an "
             "assumption's plausible values", ""]
    for a in reach:
        vals = a["plausible"]
        src = a["source"].removeprefix("assumption:").strip()
        lines += note_lines([f"{a['name']} = {a['value']!r} (plausible: "
                             f"{', '.join(repr(v) for v in vals)}): {src}"],
                            prefix="assumption: ")
        if not a["rows"]:
            lines += ["  no row moves by more than "
                      f"{REACH_THRESHOLD:.0%}", ""]
            continue
        head = ["  row", "paper"] + [f"{a['name']}={v!r}" for v in vals]
        body = [["  " + q, fmt(d["paper"])]
                + [fmt(d[v]) + (" (miss)" if a["misses"][q][v] else "") for v in vals]
                for q, d in a["rows"].items()]
        lines += [format_table(head, body), ""]
    return "\n".join(lines).rstrip()

