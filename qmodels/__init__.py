"""qmodels: analytic queueing-network models of computer systems.

The public API is what this module exports; submodules are implementation.
See the README for a tour and the notation table.

Heavier parts (closed forms, path elements, energy, the simulator, the CTMC,
symbolic solvers, ...) are imported on first use, so ``import qmodels`` and
the ``qmodels`` command start quickly.
"""

from __future__ import annotations

import importlib
import sys
import types

from . import distributions
from .distributions import (
    Deterministic,
    Distribution,
    Empirical,
    Erlang,
    Exponential,
    HyperExponential,
    Lognormal,
    Uniform,
)
from .errors import (
    ConvergenceWarning,
    DuplicateNameError,
    InvalidValueError,
    ModelError,
    ModelFileError,
    NumericalWarning,
    PopulationError,
    QModelsError,
    RoutingError,
    UnknownNameError,
    UnreachableStationError,
    UnstableError,
    UnsupportedModelError,
)
from .laws import (
    Bounds,
    bottleneck,
    bounds,
    forced_flow_law,
    interactive_response_time_law,
    littles_law,
    response_time_law,
    saturation_population,
    service_demand_law,
    utilization_law,
)
from .model import Closed, Delay, LoadDependent, Network, Open, Power, Queue, Station, TokenPool
from .mva import mva
from .results import Curve, Figures, Result
from .solvers import methods, solve

__version__ = "0.1.0"

# name -> (module, attribute or None for the module itself)
_LAZY = {
    # single-station closed forms
    "queues": ("qmodels.queues", None),
    **{n: ("qmodels.queues", n) for n in (
        "QueueMetrics", "erlang_b", "erlang_c", "mm1", "mmc", "mm1k", "mmck", "mminf",
        "mg1", "md1", "gg1", "ggc")},
    # model files
    "modelfile": ("qmodels.modelfile", None),
    "load": ("qmodels.modelfile", "load"),
    # path elements, energy, held resources
    "elements": ("qmodels.elements", None),
    **{n: ("qmodels.elements", n) for n in (
        "Disk", "Flash", "DMAEngine", "PCIBus", "PCIe", "MemoryChannel", "Link", "Ethernet",
        "SRIO", "UPI", "CPU", "BufferPool", "SwitchPort")},
    "energy": ("qmodels.energy", "energy"),
    "EnergyReport": ("qmodels.energy", "EnergyReport"),
    "decompose": ("qmodels.decomposition", "decompose"),
    # the embedded discrete-event simulator
    "sim": ("qmodels.sim", None),
    "simulate": ("qmodels.sim", "simulate"),
    "SimResult": ("qmodels.sim", "SimResult"),
    "Estimate": ("qmodels.sim", "Estimate"),
    # exact Markov chain of small networks (blocking, loss, token pools)
    "ctmc": ("qmodels.ctmc", "ctmc"),
    "marginal": ("qmodels.ctmc", "marginal"),
    # symbolic solvers and bottleneck shifts
    "symbolic": ("qmodels.symbolic", None),
    **{n: ("qmodels.symbolic", n) for n in (
        "mva_symbolic", "symbolic_bounds", "SymbolicResult", "SymbolicBounds", "substitute",
        "free_symbols")},
    "shifts": ("qmodels.shifts", None),
    **{n: ("qmodels.shifts", n) for n in (
        "bottleneck_regions", "bottleneck_sweep", "response_time_asymptote", "demand_crossings",
        "capacity_demands", "BottleneckRegions", "ResponseTimeAsymptote", "BottleneckSweep",
        "SwitchPoint", "Region")},
    # normalising constants and batched solves
    "convolution": ("qmodels.convolution", "convolution"),
    "log_normalizing_constant": ("qmodels.convolution", "log_normalizing_constant"),
    "mva_batch": ("qmodels.batch", "mva_batch"),
    "schweitzer_batch": ("qmodels.batch", "schweitzer_batch"),
    "BatchResult": ("qmodels.batch", "BatchResult"),
    # multi-class, approximate and open/mixed MVA
    "schweitzer": ("qmodels.multiclass", "schweitzer"),
    "linearizer": ("qmodels.multiclass", "linearizer"),
    "Lattice": ("qmodels.multiclass", "Lattice"),
    "throughput_vs_tokens": ("qmodels.decomposition", "throughput_vs_tokens"),
    # what-if sweeps and plots
    "sweep": ("qmodels.sweep", "sweep"),
    "plot": ("qmodels.plot", None),
}

__all__ = [
    "__version__",
    # model
    "Network", "Station", "Delay", "Queue", "LoadDependent", "Closed", "Open", "Power",
    "TokenPool", "distributions", "Distribution", "Exponential", "Deterministic", "Erlang",
    "HyperExponential", "Lognormal", "Uniform", "Empirical",
    # solvers
    "solve", "methods", "mva", "bounds", "Bounds", "bottleneck", "saturation_population",
    # laws
    "utilization_law", "littles_law", "forced_flow_law", "service_demand_law",
    "response_time_law", "interactive_response_time_law",
    # results
    "Result", "Curve", "Figures",
    # errors
    "QModelsError", "ModelError", "InvalidValueError", "PopulationError", "RoutingError",
    "UnreachableStationError", "UnknownNameError", "DuplicateNameError", "ModelFileError",
    "UnstableError", "UnsupportedModelError", "ConvergenceWarning", "NumericalWarning",
    *_LAZY,
]


# Submodules that share their name with their main function: the package
# attribute is the function (``qm.energy(result)``), never the submodule,
# whatever the import order (importing ``qmodels.energy`` would otherwise
# rebind ``qmodels.energy`` to the module).  ``from qmodels.energy import
# EnergyReport`` reaches the module's other names.
_FUNCTION_NAMED_MODULES = {"energy", "convolution", "ctmc"}


class _Package(types.ModuleType):
    def __setattr__(self, name, value):
        if name in _FUNCTION_NAMED_MODULES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'qmodels' has no attribute {name!r}") from None
    mod = importlib.import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
