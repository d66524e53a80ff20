"""numba's ``njit`` when numba is installed, else a no-op decorator.

The compiled kernels are plain loops over float arrays, so they also run
(slowly) as Python; numba is a core dependency and the fallback exists only
so that a broken numba install degrades speed, not correctness.
"""

from __future__ import annotations

try:  # pragma: no cover - exercised implicitly
    from numba import njit as _njit

    HAVE_NUMBA = True
except Exception:  # pragma: no cover
    HAVE_NUMBA = False
    _njit = None


def njit(*args, **kwargs):
    """``numba.njit(cache=True, ...)`` or identity."""
    kwargs.setdefault("cache", True)
    if HAVE_NUMBA:
        return _njit(*args, **kwargs)
    if args and callable(args[0]):
        return args[0]
    return lambda f: f
