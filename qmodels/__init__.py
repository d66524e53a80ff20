"""qmodels: analytic queueing-network models of computer systems.

The public API is what this module exports; submodules are implementation.
See the README for a tour and the notation table.

Heavier parts (closed forms, path elements, energy, the simulator, the CTMC,
symbolic solvers, ...) are imported on first use, so ``import qmodels`` and
the ``qmodels`` command start quickly.
"""

from ._version import __version__
from .errors import (
    ConvergenceWarning,
    DuplicateNameError,
    InvalidValueError,
    ModelError,
    ModelFileError,
    NumericalWarning,
    PopulationError,
    ProblemTooLargeError,
    QModelsError,
    RoutingError,
    UnknownNameError,
    UnreachableStationError,
    UnstableError,
    UnsupportedModelError,
)
from .model import distributions
from .model.distributions import (
    Deterministic,
    Distribution,
    Empirical,
    Erlang,
    Exponential,
    HyperExponential,
    Lognormal,
    Pareto,
    Uniform,
)
from .model.map import MAP
from .model.network import (
    Closed,
    Delay,
    LoadDependent,
    Network,
    Open,
    Power,
    Queue,
    Station,
    TokenPool,
)

# name -> (module, attribute or None for the module itself): imported on
# first use, so that ``import qmodels`` (and every ``qmodels`` command) pays
# only for the model and what it uses
_LAZY = {
    # the solvers everyone uses, the laws and the result types
    "mva": ("qmodels.analytic.mva", "mva"),
    "bounds": ("qmodels.analytic.bounds", "bounds"),
    "Bounds": ("qmodels.analytic.bounds", "Bounds"),
    "solve": ("qmodels.dispatch", "solve"),
    "methods": ("qmodels.dispatch", "methods"),
    **{n: ("qmodels.analytic.laws", n) for n in (
        "bottleneck", "forced_flow_law", "interactive_response_time_law", "littles_law",
        "response_time_law", "saturation_population", "service_demand_law",
        "utilization_law")},
    **{n: ("qmodels.results", n) for n in ("Curve", "Figures", "Result")},
    # single-station closed forms
    "queues": ("qmodels.analytic.queues", None),
    **{n: ("qmodels.analytic.queues", n) for n in (
        "QueueMetrics", "erlang_b", "erlang_c", "mm1", "mmc", "mm1k", "mmck", "mminf",
        "mg1", "md1", "gg1", "ggc", "mg1_prio", "mg1_prio_pr", "mmc_prio")},
    # model files
    "modelfile": ("qmodels.io.modelfile", None),
    "load": ("qmodels.io.modelfile", "load"),
    "save": ("qmodels.io.modelfile", "save"),
    # hypothesis strategies and law assertions for property-based tests
    "testing": ("qmodels.testing", None),
    # path elements, energy, held resources
    "elements": ("qmodels.physical.elements", None),
    **{n: ("qmodels.physical.elements", n) for n in (
        "Disk", "Flash", "DMAEngine", "PCIBus", "PCIe", "MemoryChannel", "Link", "Ethernet",
        "SRIO", "UPI", "CPU", "BufferPool", "SwitchPort")},
    # caches (Che's approximation) and working sets
    **{n: ("qmodels.physical.cache", n) for n in (
        "Cache", "Zipf", "Popularity", "WorkingSet")},
    "energy": ("qmodels.physical.energy", "energy"),
    "EnergyReport": ("qmodels.physical.energy", "EnergyReport"),
    "decompose": ("qmodels.analytic.decomposition", "decompose"),
    # the embedded discrete-event simulator
    "sim": ("qmodels.sim", None),
    "simulate": ("qmodels.sim", "simulate"),
    "transient": ("qmodels.transients", "transient"),
    "response_time_distribution": ("qmodels.analytic.passage", "response_time_distribution"),
    "Transient": ("qmodels.transients", "Transient"),
    "SimResult": ("qmodels.sim", "SimResult"),
    "Estimate": ("qmodels.sim", "Estimate"),
    "warm_up": ("qmodels.sim", "warm_up"),
    "SimulationWarning": ("qmodels.errors", "SimulationWarning"),
    "RoutingWarning": ("qmodels.errors", "RoutingWarning"),
    # exact Markov chain of small networks (blocking, loss, token pools)
    "ctmc": ("qmodels.analytic.ctmc", "ctmc"),
    "marginal": ("qmodels.analytic.ctmc", "marginal"),
    # symbolic solvers and bottleneck shifts
    "symbolic": ("qmodels.symbolic", None),
    **{n: ("qmodels.symbolic", n) for n in (
        "mva_symbolic", "symbolic_bounds", "SymbolicResult", "SymbolicBounds", "substitute",
        "free_symbols")},
    "shifts": ("qmodels.symbolic.shifts", None),
    **{n: ("qmodels.symbolic.shifts", n) for n in (
        "bottleneck_regions", "bottleneck_sweep", "response_time_asymptote", "demand_crossings",
        "capacity_demands", "BottleneckRegions", "ResponseTimeAsymptote", "BottleneckSweep",
        "SwitchPoint", "Region")},
    # normalising constants and batched solves
    "convolution": ("qmodels.analytic.convolution", "convolution"),
    "log_normalizing_constant": ("qmodels.analytic.convolution", "log_normalizing_constant"),
    "mva_batch": ("qmodels.analytic.batch", "mva_batch"),
    "schweitzer_batch": ("qmodels.analytic.batch", "schweitzer_batch"),
    "BatchResult": ("qmodels.analytic.batch", "BatchResult"),
    # multi-class, approximate and open/mixed MVA
    "schweitzer": ("qmodels.analytic.amva", "schweitzer"),
    "linearizer": ("qmodels.analytic.amva", "linearizer"),
    "Lattice": ("qmodels.analytic.multiclass", "Lattice"),
    # approximations for non-exponential service (open: QNA; closed: residual MVA)
    "qna": ("qmodels.analytic.qna", "qna"),
    "rqna": ("qmodels.analytic.rqna", "rqna"),
    "mva_residual": ("qmodels.analytic.amva_residual", "mva_residual"),
    "marie": ("qmodels.analytic.marie", "marie"),
    "throughput_vs_tokens": ("qmodels.analytic.decomposition", "throughput_vs_tokens"),
    # bounds beyond ABA/BJB
    **{n: ("qmodels.analytic.bounds", n) for n in ("geometric_bounds", "proportional_bounds")},
    **{n: ("qmodels.analytic.bounds_multiclass", n) for n in ("multiclass_bounds", "pool_bounds")},
    "job_speed": ("qmodels.analytic.laws", "job_speed"),
    # networks with priority queues (an approximation; method='priority')
    "priority": ("qmodels.analytic.priority", "priority"),
    "exact_network": ("qmodels.symbolic.exact", "exact_network"),
    "pool_chains": ("qmodels.model", "pool_chains"),
    # fork-join (parallel tasks joined): the element and its solver
    "ForkJoin": ("qmodels.model.forkjoin", "ForkJoin"),
    # a cache as a station: hit or miss by its state in the simulator
    "CacheStation": ("qmodels.model.caching", "CacheStation"),
    "forkjoin": ("qmodels.analytic.forkjoin", "forkjoin"),
    "forkjoin_varki": ("qmodels.analytic.forkjoin_varki", "forkjoin_varki"),
    # the five source systems as models
    "cases": ("qmodels.cases", None),
    # what-if sweeps and plots
    "sweep": ("qmodels.whatif", "sweep"),
    "apply": ("qmodels.whatif", "apply"),
    # capacity questions answered directly
    "size": ("qmodels.whatif.size", "size"),
    "Sizing": ("qmodels.whatif.size", "Sizing"),
    "InfeasibleTargetError": ("qmodels.errors", "InfeasibleTargetError"),
    "MissingDependencyError": ("qmodels.errors", "MissingDependencyError"),
    # service demands from monitoring data
    "estimate_demands": ("qmodels.whatif.estimate", "estimate_demands"),
    "DemandEstimate": ("qmodels.whatif.estimate", "DemandEstimate"),
    "CollinearityWarning": ("qmodels.errors", "CollinearityWarning"),
    "plot": ("qmodels.plot", None),
}

__all__ = [
    "__version__",
    # model
    "Network", "Station", "Delay", "Queue", "LoadDependent", "Closed", "Open", "Power",
    "TokenPool", "distributions", "Distribution", "Exponential", "Deterministic", "Erlang",
    "HyperExponential", "Lognormal", "Uniform", "Empirical", "Pareto", "MAP",
    # the solvers, laws and result types are lazy: in *_LAZY below
    # errors
    "QModelsError", "ModelError", "InvalidValueError", "PopulationError", "RoutingError",
    "UnreachableStationError", "UnknownNameError", "DuplicateNameError", "ModelFileError",
    "UnstableError", "UnsupportedModelError", "ProblemTooLargeError", "ConvergenceWarning",
    "NumericalWarning",
    *_LAZY,
]


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'qmodels' has no attribute {name!r}") from None
    from importlib import import_module

    mod = import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def _warm_up_in_a_notebook() -> None:
    """In a Jupyter or IPython session, start compiling the simulator's
    event loop in the background now (:func:`qmodels.sim.warm_up`), so that
    the notebook's first ``simulate`` finds the machine code in the cache.
    Scripts are left alone: their first ``simulate`` starts the same
    compile (see :func:`qmodels._jit.warm_up_at_import`)."""
    from ._jit import warm_up_at_import

    if warm_up_at_import():
        try:
            from .sim.run import warm_up

            warm_up()
        except Exception:  # noqa: BLE001 - a head start only: the first simulate compiles anyway
            pass


_warm_up_in_a_notebook()
del _warm_up_in_a_notebook
