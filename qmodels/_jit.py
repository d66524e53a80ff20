"""Compilation helpers.

``njit`` is ``numba.njit(cache=True)`` (a no-op when numba is missing, so a
broken numba install degrades speed, not correctness).

``lazyjit`` is for the analytic kernels: small problems run the plain Python
function (no numba import, no compile or cache load: the ``qmodels solve``
of a small model stays well under a second), large ones the compiled
version, compiled on first use and cached on disk.  A lazily compiled kernel
must not call other jitted functions: it calls ``jitable`` helpers instead.

``jitable`` marks a plain Python function that compiled kernels call: from
Python it is itself; when a kernel is compiled, numba compiles the helper
into it (``numba.extending.register_jitable``).  Registration waits until
something is compiled, so a module of helpers does not import numba.
numba stamps a kernel's on-disk cache with the kernel's own source file
only, so an edited helper in another file would leave the kernel stale;
``stamp_helpers`` adds the helpers' files to the stamp.
"""

from __future__ import annotations

import importlib.util
import inspect
import os

HAVE_NUMBA = importlib.util.find_spec("numba") is not None

_PENDING: list = []  # jitable helpers not yet registered with numba
_HELPERS: set = set()  # every jitable helper


def jitable(func):
    """Mark ``func`` (plain Python, numba-compatible) as callable from
    compiled kernels; returns ``func`` itself."""
    _PENDING.append(func)
    _HELPERS.add(func)
    return func


def _helpers_of(func, found: set) -> set:
    """The jitable helpers ``func`` calls, directly or through helpers."""
    g = func.__globals__
    for name in func.__code__.co_names:
        h = g.get(name)
        if callable(h) and h in _HELPERS and h not in found:
            found.add(h)
            _helpers_of(h, found)
    return found


def stamp_helpers(dispatcher):
    """Make the on-disk cache of a numba ``dispatcher`` depend on the source
    files of the jitable helpers it calls, as it does on its own file:
    numba compares the stored (mtime, size) stamp of the kernel's file
    only, and would load a kernel built with an older helper.  Returns the
    dispatcher (unchanged if it has no helpers or no cache)."""
    helpers = _helpers_of(dispatcher.py_func, set())
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if not helpers or not hasattr(cache_file, "_source_stamp"):
        return dispatcher
    files = sorted({inspect.getsourcefile(h) or "" for h in helpers} - {""})
    extra = []
    for f in files:
        st = os.stat(f)
        extra.append((os.path.basename(f), st.st_mtime, st.st_size))
    cache_file._source_stamp = (cache_file._source_stamp, tuple(extra))
    return dispatcher


def register_jitables() -> None:
    """Register the pending ``jitable`` helpers with numba (before any
    kernel that may call them is compiled)."""
    if not HAVE_NUMBA:
        return
    from numba.extending import register_jitable

    while _PENDING:
        register_jitable(_PENDING.pop())


def njit(*args, **kwargs):
    """``numba.njit(cache=True, ...)`` or identity."""
    kwargs.setdefault("cache", True)
    if HAVE_NUMBA:
        from numba import njit as _njit

        register_jitables()
        if args and callable(args[0]):
            return stamp_helpers(_njit(args[0], **kwargs))
        deco = _njit(*args, **kwargs)
        return lambda f: stamp_helpers(deco(f))
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

                register_jitables()
                self._compiled = stamp_helpers(_njit(cache=True)(self.py_func))
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
