"""Compilation helpers.

``njit`` is ``numba.njit(cache=True)`` (a no-op when numba is missing, so a
broken numba install degrades speed, not correctness).

``lazyjit`` is for the analytic kernels: small problems run the plain Python
function (no numba import, no compile or cache load: the ``qmodels solve``
of a small model stays well under a second), large ones the compiled
version, compiled on first use and cached on disk.  A lazily compiled kernel
must not call other jitted functions (inline helpers instead).
"""

from __future__ import annotations

import importlib.util

HAVE_NUMBA = importlib.util.find_spec("numba") is not None


def njit(*args, **kwargs):
    """``numba.njit(cache=True, ...)`` or identity."""
    kwargs.setdefault("cache", True)
    if HAVE_NUMBA:
        from numba import njit as _njit

        return _njit(*args, **kwargs)
    if args and callable(args[0]):
        return args[0]
    return lambda f: f


class _Lazy:
    __slots__ = ("py_func", "_compiled", "threshold", "__name__", "__doc__")

    def __init__(self, func, threshold):
        self.py_func = func
        self._compiled = None
        self.threshold = threshold
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__

    def compiled(self):
        if self._compiled is None:
            if not HAVE_NUMBA:
                self._compiled = self.py_func
            else:
                from numba import njit as _njit

                self._compiled = _njit(cache=True)(self.py_func)
        return self._compiled

    def run(self, work, *args):
        """Call with an estimate of the loop trip count ``work``."""
        if work < self.threshold:
            return self.py_func(*args)
        return self.compiled()(*args)

    def __call__(self, *args):
        return self.compiled()(*args)


def lazyjit(threshold: int = 20_000):
    """Decorator: Python below ``threshold`` loop trips, numba above."""

    def deco(func):
        return _Lazy(func, threshold)

    return deco
