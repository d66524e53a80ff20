"""Typed errors and warnings of qmodels.

Every error names what it is about (station, class, parameter) and the
offending value, so that a message read in a notebook or on the command line
says what to fix.  All errors derive from :class:`QModelsError`; the input
errors also derive from :class:`ValueError` so that generic handlers work.
"""

from __future__ import annotations

__all__ = [
    "QModelsError",
    "ModelError",
    "InvalidValueError",
    "PopulationError",
    "RoutingError",
    "UnreachableStationError",
    "UnknownNameError",
    "DuplicateNameError",
    "ModelFileError",
    "UnstableError",
    "UnsupportedModelError",
    "ProblemTooLargeError",
    "InfeasibleTargetError",
    "LawViolationError",
    "MissingDependencyError",
    "MainGuardError",
    "QModelsWarning",
    "ConvergenceWarning",
    "NumericalWarning",
    "CollinearityWarning",
    "SimulationWarning",
]


class QModelsError(Exception):
    """Base class of every error raised by qmodels."""


class ModelError(QModelsError, ValueError):
    """A model (station, class or network) is not valid input."""


class InvalidValueError(ModelError):
    """A number is out of its domain: negative, NaN or infinite time, a
    non-positive rate, a server count that is not a positive integer, ..."""


class PopulationError(ModelError):
    """A closed class population that is not a non-negative integer."""


class RoutingError(ModelError):
    """A routing matrix that is not stochastic, or traffic equations that
    have no unique solution."""


class UnreachableStationError(RoutingError):
    """A station named in a class's routing that the class can never reach."""


class UnknownNameError(ModelError):
    """A station or class name that the network does not define."""


class DuplicateNameError(ModelError):
    """Two stations, two classes, or a station and a class share a name."""


class ModelFileError(ModelError):
    """A model file with one or more errors, each with its path in the file.

    Attributes
    ----------
    errors : list of (path, message)
        ``path`` is a JSON-pointer-like location such as
        ``classes[0].population``.
    """

    def __init__(self, errors, source: str = "model"):
        self.errors = list(errors)
        self.source = source
        lines = [f"{source}: {len(self.errors)} error(s)"]
        lines += [f"  {path}: {msg}" for path, msg in self.errors]
        super().__init__("\n".join(lines))


class UnstableError(QModelsError, ValueError):
    """An open station (or network) with utilisation rho >= 1 and no finite
    room: it has no steady state.

    Attributes
    ----------
    station : str or None
    rho : float
    """

    def __init__(self, message: str, station: str | None = None, rho: float | None = None):
        self.station = station
        self.rho = rho
        super().__init__(message)


class UnsupportedModelError(QModelsError, TypeError):
    """A valid model that the chosen solver cannot honour (e.g. a finite
    capacity in a product-form solver); the message names the feature and a
    solver that can."""


class ProblemTooLargeError(UnsupportedModelError):
    """A valid model whose exact solution would need more time or memory
    than the solver allows.  Raised before any work starts (or, for a
    Markov chain whose size only its construction tells, as soon as the
    construction passes the limit); the message
    states the estimated cost, the limit, and the methods that can answer
    (bounds, approximate MVA, simulation)."""


class LawViolationError(QModelsError, ArithmeticError):
    """An analytic answer that breaks an operational law (a utilisation
    above 1, a throughput above 1/D_max, Little's law, job conservation, a
    response time below the sum of the demands, a value that is not
    finite).  Raised instead of returning the answer: no result leaves a
    solver that a law refutes.  ``qm.solve(net)`` passes such a method over
    and tries the next one.

    Attributes
    ----------
    method : str
        The solver whose answer broke the law.
    violations : list of str
        Each law broken, where (station, class) and by how much.
    """

    def __init__(self, message: str, method: str = "", violations=()):
        self.method = method
        self.violations = list(violations)
        super().__init__(message)


class InfeasibleTargetError(QModelsError, ValueError):
    """A capacity question (:func:`qmodels.size`) with no answer: no value
    of the varied parameter meets the targets, or a ceiling never binds so
    no largest value exists.  The message names the target and the figure
    that stops it."""


class MissingDependencyError(QModelsError, ImportError):
    """An optional package that a requested feature needs is not installed;
    raised before any work starts, the message names the package and the
    ``pip install 'qmodels-toolkit[extra]'`` that brings it (the
    distribution's name on the package index; ``qmodels`` there is another
    project)."""


class MainGuardError(QModelsError, RuntimeError):
    """Worker processes cannot start because the script that asks for them
    (``parallel=True``) does so outside ``if __name__ == "__main__":``: the
    spawn start method re-imports the script in every worker, which would
    start workers again.  Raised before any process starts; the message
    names the script and line."""


#: The name qmodels is installed by (setup.cfg ``name``): the one pip knows.
DISTRIBUTION = "qmodels-toolkit"


def require(module: str, extra: str, feature: str):
    """Import and return ``module``, or raise :class:`MissingDependencyError`
    saying that ``feature`` needs it and which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"{feature} needs the optional package {module!r}, which is not installed: "
            f"pip install '{DISTRIBUTION}[{extra}]' (or pip install {module})") from None


class QModelsWarning(UserWarning):
    """Base class of qmodels warnings."""


class ConvergenceWarning(QModelsWarning):
    """An iterative method stopped at its iteration limit before reaching its
    tolerance; its answer is returned but flagged."""


class NumericalWarning(QModelsWarning):
    """A numerical difficulty that may reduce accuracy."""


class CollinearityWarning(NumericalWarning):
    """A regression whose regressors are nearly linearly dependent (a large
    condition number): its individual coefficients, e.g. per-class demands
    estimated from throughputs that move together, are poorly determined."""


class SimulationWarning(ConvergenceWarning):
    """A simulation whose figures may not describe the steady state: a run
    too short to leave its initial transient, to see enough completions or
    cycles per job, a number present that keeps growing, or an estimate that
    breaks a law (a throughput above its asymptotic bound).  The figures
    are returned but should not be trusted; the message says what to change
    (usually a longer ``horizon``)."""
