"""One entry point for every solver: ``solve(network, method=...)``.

Method names are shared by the Python API and the ``qmodels`` command:

=============  ==============================================================
``exact``      product-form exact solution (MVA; Jackson for open networks)
``bounds``     asymptotic and balanced job bounds (single class)
=============  ==============================================================

Other modules register further methods (``schweitzer``, ``linearizer``,
``convolution``, ``sim``) with :func:`register`.
"""

from __future__ import annotations

from typing import Callable

from .errors import UnsupportedModelError
from .model import Network

__all__ = ["solve", "register", "methods"]

_METHODS: dict[str, tuple[Callable, str]] = {}


def register(name: str, func: Callable, summary: str) -> None:
    """Make ``func(network, **options)`` available as ``solve(net, method=name)``."""
    _METHODS[name] = (func, summary)


def methods() -> dict[str, str]:
    """Registered method names and their one-line summaries."""
    _load_optional()
    return {k: v[1] for k, v in _METHODS.items()}


def _load_optional():
    # modules that register methods when they are present
    import importlib

    for mod in ("qmodels.multiclass", "qmodels.convolution", "qmodels.sim", "qmodels.ctmc",
                "qmodels.decomposition", "qmodels.symbolic"):
        try:
            importlib.import_module(mod)
        except ImportError:
            pass


def solve(network: Network, method: str = "exact", **options):
    """Solve ``network`` with ``method`` (see :func:`methods`)."""
    if method not in _METHODS:
        _load_optional()
    if method not in _METHODS:
        raise UnsupportedModelError(
            f"unknown method {method!r}; available: {', '.join(sorted(_METHODS))}"
        )
    return _METHODS[method][0](network, **options)


def _exact(net, **opts):
    from .mva import mva

    return mva(net, **opts)


def _bounds(net, **opts):
    from .laws import bounds

    return bounds(net, **opts)


register("exact", _exact, "product-form exact solution (MVA; Jackson for open networks)")
register("bounds", _bounds, "asymptotic and balanced job bounds, N*, bottleneck")
