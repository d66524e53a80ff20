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

``Resumable`` is for the simulator's event loop, whose state lives in the
caller's arrays so that a run may be split into calls.  A wheel built with
``make wheel`` ships its machine code (:mod:`qmodels._shipped`), loaded in
a fraction of a second.  Without it, on a first call with numba's cache
empty (a fresh clone) it runs the loop's Python twin while a child process
compiles the machine code (about 8 s), and switches to it when it is
ready, so a short first ``qm.simulate`` does not wait for numba;
after :data:`TWIN_BUDGET` seconds of twin a longer run waits for the
compile instead (the twin would only slow it down).  ``qm.warm_up()``
starts the compile ahead (``import qmodels`` does in Jupyter).  The switch
changes no number.  ``QMODELS_JIT`` (``background``, ``sync``,
``python``) chooses the policy.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import time
import types

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


#: every lazily compiled kernel (``qmodels warm-up`` compiles them, a wheel
#: ships their machine code: :mod:`qmodels._shipped`)
LAZY_KERNELS: list = []


class _Lazy:
    __slots__ = ("py_func", "_compiled", "threshold", "lists", "__name__", "__doc__")

    def __init__(self, func, threshold, lists=False):
        self.py_func = func
        self._compiled = None
        self.threshold = threshold
        self.lists = lists
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        LAZY_KERNELS.append(self)

    def compiled(self):
        if self._compiled is None:
            if not HAVE_NUMBA:
                self._compiled = self.py_func
            else:
                from numba import njit as _njit

                register_jitables()
                self._compiled = with_shipped(stamp_helpers(_njit(cache=True)(self.py_func)))
        return self._compiled

    def run(self, work, *args):
        """Call with an estimate of the loop trip count ``work``."""
        if work < self.threshold:
            if self.lists:
                # (1-D arrays read as lists: indexing a list and computing
                # with Python floats is several times faster than with numpy
                # scalars, and the IEEE operations, hence the bits, are the
                # same)
                args = tuple(a.tolist() if getattr(a, "ndim", 0) == 1 else a for a in args)
            return self.py_func(*args)
        return self.compiled()(*args)

    def __call__(self, *args):
        return self.compiled()(*args)


def lazyjit(threshold: int = 20_000, lists: bool = False):
    """Decorator: Python below ``threshold`` loop trips, numba above.  With
    ``lists`` the Python function is given its 1-D array arguments as
    lists (a kernel that only reads them, by index and ``len``)."""

    def deco(func):
        return _Lazy(func, threshold, lists)

    return deco


# ---------------------------------------------------------------------------
# the first call: a Python twin while a child process compiles
# ---------------------------------------------------------------------------

#: ``QMODELS_JIT`` chooses how a resumable kernel (the simulator's event loop)
#: gets its machine code when numba's on-disk cache does not have it:
#: ``background`` (default) runs the kernel's Python twin while a child
#: process compiles it, ``sync`` compiles in this process on the first call,
#: ``python`` never compiles.
JIT_MODES = ("background", "sync", "python")


def jit_mode() -> str:
    """The ``QMODELS_JIT`` setting (``background`` when unset or unknown)."""
    mode = os.environ.get("QMODELS_JIT", "background").strip().lower()
    return mode if mode in JIT_MODES else "background"


def warm_up_wanted() -> bool:
    """Whether to start compiling ahead of a first call that may come
    (``import qmodels`` in a notebook, ``qmodels demo``): with
    ``QMODELS_JIT`` at ``background`` and ``QMODELS_WARM_UP`` not ``0``."""
    return jit_mode() == "background" and os.environ.get("QMODELS_WARM_UP", "1").strip() != "0"


def warm_up_at_import() -> bool:
    """Whether ``import qmodels`` should start compiling the simulator now:
    in a Jupyter or IPython session (an interactive shell is running), when
    :func:`warm_up_wanted`."""
    import sys

    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    return get_ipython is not None and get_ipython() is not None and warm_up_wanted()


def python_twin(dispatcher):
    """The plain-Python twin of a compiled kernel: ``dispatcher.py_func``
    with every compiled function of the same module that it reaches through
    the module's globals replaced by its own Python original, so that
    calling it runs no machine code and compiles nothing.

    The twin does what the kernel does, operation by operation, in the same
    IEEE-754 double arithmetic (numba compiles without fast-math, and both
    call the C library's ``log``/``exp``/``cos``), so the numbers agree bit
    for bit; ``tests/test_jit_twin.py`` pins this on the simulator."""
    func = getattr(dispatcher, "py_func", dispatcher)
    module = inspect.getmodule(func)
    glob = dict(vars(module))
    for name, value in list(glob.items()):
        pf = getattr(value, "py_func", None)
        if pf is not None and getattr(pf, "__module__", None) == module.__name__:
            glob[name] = types.FunctionType(pf.__code__, glob, pf.__name__, pf.__defaults__,
                                            pf.__closure__)
    return glob[func.__name__]


def _signature(dispatcher, args):
    return tuple(dispatcher.typeof_pyval(a) for a in args)


def with_shipped(dispatcher):
    """``dispatcher`` with the machine code a wheel ships for its kernel
    loaded into it, every argument types built for this process
    (:func:`qmodels._shipped.load_all`); calls with other types compile as
    numba would.  Returns the dispatcher."""
    from . import _shipped

    try:
        _shipped.load_all(dispatcher)
    except Exception:  # numba internals differ: compile as usual
        pass
    return dispatcher


def machine_code_at_hand(dispatcher, args) -> bool | None:
    """Whether calling ``dispatcher(*args)`` would run without compiling:
    compiled in this process already, or in numba's on-disk cache (valid for
    this source and machine).  None when it cannot tell (another numba
    version, no cache)."""
    try:
        sig = _signature(dispatcher, args)
        if sig in dispatcher.overloads:
            return True
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # numba internals differ: cannot tell
        return None


#: seconds the Python twin runs while the kernel compiles; past them a call
#: waits for the machine code instead (a run that long gains more from it, and
#: the twin only slows the compile down by sharing the processor)
TWIN_BUDGET = 5.0

#: seconds after which a compile lock left by a process that died is ignored
LOCK_STALE = 600.0


def _lock_path(dispatcher) -> str | None:
    """The file that says "a process is compiling this kernel into this
    cache" (beside numba's cache files), or None if the cache has no
    directory this numba version tells."""
    try:
        return os.path.join(dispatcher._cache._cache_path,
                            f"qmodels-{dispatcher.py_func.__name__}.compiling")
    except Exception:
        return None


def _take_lock(path: str | None) -> bool | None:
    """Try to become the one process that compiles: True (the lock is
    ours), False (another process holds a fresh one), None (no lock can be
    had here: compile anyway).  A lock older than :data:`LOCK_STALE`, or
    whose compiling process has died, is taken over."""
    if path is None:
        return None
    for _ in range(2):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                if time.time() - os.stat(path).st_mtime < LOCK_STALE and _holder_alive(path):
                    return False
                os.remove(path)  # stale: its compiler died
            except OSError:
                pass  # vanished meanwhile: try again
            continue
        except OSError:
            return None
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return True
    return False


def _holder_alive(path: str) -> bool:
    """Whether the process whose pid the lock holds still runs (POSIX; taken
    as alive where that cannot be asked, or the file says nothing)."""
    if os.name != "posix":
        return True
    try:
        with open(path) as f:
            pid = int(f.read().strip() or 0)
    except (OSError, ValueError):
        return True
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # not ours to signal: it exists
        return True
    return True


def _mark_lock(path: str | None, pid: int) -> None:
    """Write the compiling process's pid into the lock."""
    if path is not None:
        try:
            with open(path, "w") as f:
                f.write(str(pid))
        except OSError:
            pass


def _drop_lock(path: str | None) -> None:
    if path is not None:
        try:
            os.remove(path)
        except OSError:
            pass


def _compile_in_child(dispatcher, args, lock: str | None = None):
    """Start a Python process compiling ``dispatcher`` for the
    types of ``args`` into numba's on-disk cache (and then removing the
    file ``lock``); the child process (or None if it could not be
    started)."""
    import pickle
    import subprocess
    import sys

    func = dispatcher.py_func
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    payload = pickle.dumps((func.__module__, func.__name__, _signature(dispatcher, args), lock))
    env = dict(os.environ, QMODELS_JIT="sync")
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    try:
        proc = subprocess.Popen([sys.executable, "-c", "from qmodels._jit import _child_main; "
                                 "_child_main()"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        proc.stdin.write(payload)
        proc.stdin.close()
    except Exception:  # no interpreter to start (embedded Python), no fork, ...
        return None
    return proc


class Resumable:
    """How a *resumable* compiled kernel gets called: a kernel whose state
    lives in arrays owned by the caller, so that a run may be split into
    calls and each call may run either the machine code or the Python twin
    (:func:`python_twin`) without changing a number.

    The first time, :meth:`pick` looks for the machine code (this process,
    numba's on-disk cache, then the machine code a wheel ships:
    :mod:`qmodels._shipped`).  If it is missing and ``QMODELS_JIT`` is
    ``background``, a child process compiles the kernel into the cache
    while the caller runs the twin; once the child is done, the next call
    loads the machine code (a fraction of a second).  One process at a
    time compiles into a cache (a lock file beside it): the others (dask
    workers, parallel notebooks) run the twin and look for the machine code
    once a second.  After :data:`TWIN_BUDGET` seconds of twin, a call waits
    for the compile to end instead.  If the child fails, the kernel is compiled here, as numba
    would anyway.  ``sync`` compiles here on the first call; ``python``
    always runs the twin.  Without numba the kernel is plain Python
    already."""

    def __init__(self, dispatcher):
        import threading

        self.dispatcher = dispatcher
        self._twin = None
        self._child = None
        self._state = "new" if HAVE_NUMBA else "compiled"
        self._lock = threading.Lock()  # one child, whatever the threads
        self._next_look = 0.0  # when "waiting": the next look at the cache
        self._twin_since = None  # when the twin first ran during a compile

    @property
    def twin(self):
        if self._twin is None:
            self._twin = python_twin(self.dispatcher)
        return self._twin

    def pick(self, args, run: bool = True):
        """(function to call with ``args``, whether it is the machine code).
        ``run=False`` (a warm-up: nothing will be called) leaves the twin's
        budget untouched."""
        if self._state != "compiled":
            with self._lock:
                if self._state == "new":
                    self._state = self._first(args)
                while self._state in ("child", "waiting"):
                    state = self._progress(args, run)
                    if state == self._state:
                        return self.twin, False
                    self._state = state
        if self._state == "python":
            return self.twin, False
        return self.dispatcher, True

    def _progress(self, args, run: bool = True) -> str:
        """Where a compile under way (our child's or another process's)
        stands: the same state while it runs on, the next one when it is
        done.  Once the twin has run :data:`TWIN_BUDGET` seconds, wait for
        the compile here instead of sharing the processor with it."""
        now = time.monotonic()
        if self._twin_since is None and run:
            self._twin_since = now  # the twin's budget starts at its first run
        block = self._twin_since is not None and now - self._twin_since > TWIN_BUDGET
        if self._state == "child":
            if block:
                self._child.wait()
            elif self._child.poll() is None:
                return "child"
            self._child = None
            return "compiled"  # loads the child's cache, or compiles here if it failed
        while True:  # "waiting": another process compiles
            if not block and now < self._next_look:
                return "waiting"
            self._next_look = now + 1.0  # look at the cache once a second
            state = self._wait(args)
            if state != "waiting" or not block:
                return state
            time.sleep(0.5)
            now = time.monotonic()

    def warm(self, args, wait: bool = False, poll: float = 0.2) -> str:
        """Have the machine code ready ahead of the first call with ``args``:
        as :meth:`pick` does on a first call (a child compiles into the
        cache unless the cache has it or another process compiles), without
        running anything.  With ``wait``, return once the machine code is
        loaded in this process.  Under ``QMODELS_JIT=sync`` (or where no
        child can be started) it compiles here, wait or not.

        Returns ``"ready"`` (the machine code is at hand), ``"compiling"``
        (a process is compiling it: this one's child or another's) or
        ``"python"`` (``QMODELS_JIT=python``: the twin only)."""
        if not HAVE_NUMBA:
            return "ready"  # the kernel is plain Python: nothing to compile
        while True:
            fn, machine = self.pick(args, run=False)
            if self._state == "python":
                return "python"
            if machine:
                break
            if not wait:
                return "compiling"
            time.sleep(poll)
        if wait or machine_code_at_hand(self.dispatcher, args) is False:
            # loads the cache (QMODELS_JIT=sync, or no child could start: compiles here)
            self.dispatcher.compile(_signature(self.dispatcher, args))
        return "ready"

    def _first(self, args) -> str:
        mode = jit_mode()
        if mode == "python":
            return "python"
        at_hand = machine_code_at_hand(self.dispatcher, args)
        if at_hand is False and \
                _signature(self.dispatcher, args) in with_shipped(self.dispatcher).overloads:
            return "compiled"  # machine code the wheel ships (qmodels._shipped)
        if mode == "sync" or at_hand is not False:
            return "compiled"
        return self._start(args)

    def _start(self, args) -> str:
        """Compile in a child, unless another process is compiling."""
        path = _lock_path(self.dispatcher)
        got = _take_lock(path)
        if got is False:
            return "waiting"
        self._child = _compile_in_child(self.dispatcher, args, path if got else None)
        if self._child is None:
            if got:
                _drop_lock(path)
            return "compiled"
        if got:
            _mark_lock(path, self._child.pid)  # a killed child leaves a lock seen as stale
        return "child"

    def _wait(self, args) -> str:
        """Another process compiles: its machine code once in the cache;
        our own child if its lock has gone without it (it died)."""
        if machine_code_at_hand(self.dispatcher, args):
            return "compiled"
        path = _lock_path(self.dispatcher)
        if path is not None and os.path.exists(path):
            return "waiting"
        return self._start(args)


def _child_main() -> None:  # pragma: no cover - runs in the child process
    """The child of :func:`_compile_in_child`: compile the kernel named on
    stdin (module, function, argument types) into numba's on-disk cache,
    then remove the compile lock."""
    import importlib
    import pickle
    import sys

    module, name, sig, lock = pickle.loads(sys.stdin.buffer.read())
    try:
        dispatcher = getattr(importlib.import_module(module), name)
        dispatcher.compile(sig)
    finally:
        _drop_lock(lock)
