"""qmodels: analytic queueing-network models of computer systems.

The public API is what this module exports; submodules are implementation.
See the README for a tour and the notation table.
"""

from __future__ import annotations

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
from .model import Closed, Delay, LoadDependent, Network, Open, Power, Queue, Station, TokenPool
from .mva import mva
from .results import Curve, Figures, Result
from .solvers import methods, solve

__version__ = "0.1.0"

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
]
