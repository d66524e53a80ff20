"""One entry point for every solver: ``solve(network, method=...)``.

The method table below is the single place that names the solvers; the
Python API and the ``qmodels`` command share it.  Each entry is
``name -> (module, function, assumptions)``; the module is imported when
the method is first used, so ``import qmodels`` stays light.  A broken
import inside a solver surfaces as the ImportError it is, never as
"unknown method".
"""

from __future__ import annotations

import importlib
from typing import Callable, NamedTuple

from .errors import InvalidValueError, UnsupportedModelError
from .model import Network

__all__ = ["solve", "methods", "solver", "check_options", "METHODS"]


class Method(NamedTuple):
    module: str
    function: str
    assumptions: str


#: method name -> where its solver lives and what it assumes
METHODS: dict[str, Method] = {
    "exact": Method(
        "qmodels.analytic.mva", "mva",
        "product form (BCMP): exact MVA for closed classes, Jackson/BCMP for open, "
        "exact mixed solution"),
    "bounds": Method(
        "qmodels.analytic.bounds", "bounds",
        "asymptotic and balanced job bounds, N*, bottleneck (single closed or open class)"),
    "schweitzer": Method(
        "qmodels.analytic.amva", "schweitzer",
        "Schweitzer-Bard approximate MVA (closed product-form classes, any population; "
        "multi-server and load-dependent stations by marginals estimated around the "
        "approximate mean, Akyildiz & Bolch 1988, or multiserver='seidmann'; a rate that "
        "falls with load only with falling_rates=True)"),
    "linearizer": Method(
        "qmodels.analytic.amva", "linearizer",
        "Linearizer (Chandy-Neuse) approximate MVA (closed, multi-class; stations as "
        "schweitzer, closer to exact)"),
    "convolution": Method(
        "qmodels.analytic.convolution", "convolution",
        "normalising constants (Buzen's convolution), single- and multi-class closed"),
    "decomposition": Method(
        "qmodels.analytic.decomposition", "decompose",
        "flow-equivalent servers for token pools (held buffers/ports), single closed class"),
    "ctmc": Method(
        "qmodels.analytic.ctmc", "ctmc",
        "exact CTMC of a small network (blocking, pools, any FCFS; exponential times)"),
    "exact-symbolic": Method(
        "qmodels.symbolic.mva", "solve_symbolic",
        "exact single-class MVA in rational expressions of the model's symbols"),
    "sim": Method(
        "qmodels.sim.api", "simulate",
        "discrete-event simulation with confidence intervals (needs seed=...)"),
}


def methods() -> dict[str, str]:
    """Method names and the assumptions each one makes."""
    return {name: m.assumptions for name, m in METHODS.items()}


def solver(method: str) -> Callable:
    """The function behind ``method`` (imports its module on first use)."""
    if not isinstance(method, str):
        raise InvalidValueError(
            f"method must be a method name (a string), got {method!r}; available: "
            f"{', '.join(sorted(METHODS))}")
    try:
        m = METHODS[method]
    except KeyError:
        raise UnsupportedModelError(
            f"unknown method {method!r}; available: {', '.join(sorted(METHODS))}"
        ) from None
    return getattr(importlib.import_module(m.module), m.function)


def check_options(method: str, options) -> None:
    """Refuse an option the solver of ``method`` does not take, naming it
    and the options it does take (a misspelt ``tol`` must not be dropped
    silently, nor end in a bare TypeError)."""
    import inspect

    fn = solver(method)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    names = [p.name for p in params[1:]
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = [k for k in options if k not in names]
    if unknown:
        raise UnsupportedModelError(
            f"method {method!r} has no option {unknown[0]!r}; its options: "
            f"{', '.join(names) or 'none'}")


def solve(network: Network, method: str = "exact", **options):
    """Solve ``network`` with ``method`` (see :func:`methods`).

    ``options`` go to the solver unchanged; ``method="sim"`` needs
    ``seed=...`` exactly as :func:`qmodels.simulate` does.  An option the
    solver does not take is an :class:`~qmodels.errors.UnsupportedModelError`
    naming it.
    """
    if not isinstance(network, Network):
        from .errors import InvalidValueError

        raise InvalidValueError(
            f"solve needs a qmodels Network, got {type(network).__name__}")
    check_options(method, options)
    return solver(method)(network, **options)
