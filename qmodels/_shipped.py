"""Machine code built ahead of time and shipped in the wheel.

numba compiles a kernel the first time it is called and keeps the machine
code in an on-disk cache; a fresh environment has an empty cache, so the
simulator's first run, or the first large analytic solve, would wait for
the compile (see :class:`qmodels._jit.Resumable` and ``lazyjit``).  A wheel
built with ``make wheel`` carries the machine code of the simulator's event
loop and of the analytic kernels, lazily compiled and batched (for the
argument types the probe solves of :mod:`qmodels.analytic._probe` give
them) instead,
compiled when the wheel is built for the *generic* CPU of its architecture
(``NUMBA_CPU_NAME=generic``: no instruction-set extension is assumed, so it
runs on any processor of that architecture), in ``qmodels/_kernels/``:

``<module>.<kernel>.<hash of the argument types>.nbk``
    numba's own serialised compile result (the form its cache stores).
``<module>.<kernel>.<hash>.json``
    what the code was built from: numba and llvmlite versions, the
    interpreter's cache tag, the target triple, the argument types and a
    SHA-256 of the kernel's source files.

:func:`load_all` puts the shipped code into a dispatcher only when every one
of these matches the running process, so a shipped kernel is never stale: an
edited engine, another numba or another platform simply compiles as
before.  The code is the same operations in the same IEEE-754 arithmetic as
a host compile (numba compiles without fast-math), so the numbers do not
change (``tests/test_shipped.py`` checks them against the Python twin).

A kernel's dispatcher takes the shipped code of all its argument types when
it is made (:func:`load_all`, called by :func:`qmodels._jit.with_shipped`),
so calls pay nothing for it.  ``QMODELS_KERNELS`` names another folder to
look in (an empty value turns shipped code off).  This reads numba's
internal compile-result format (``CompileResult._reduce`` / ``_rebuild``,
as numba's cache does); any failure to read it means "not shipped", never
an error.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys

#: the folder the wheel ships machine code in
KERNELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernels")

#: the CPU shipped code is compiled for: any processor of the architecture
SHIPPED_CPU = "generic"


def kernels_dir() -> str | None:
    """The folder to look in: ``QMODELS_KERNELS`` if set (None if empty),
    else :data:`KERNELS_DIR`."""
    d = os.environ.get("QMODELS_KERNELS")
    if d is None:
        return KERNELS_DIR
    return d or None


def _base(dispatcher, sig) -> str:
    """File name (without extension) of ``dispatcher``'s code for the
    argument types ``sig``: module, function and a hash of the types."""
    h = hashlib.sha256(str(tuple(sig)).encode()).hexdigest()[:12]
    return f"{_kernel_name(dispatcher)}.{h}"


def _package_root(func) -> str:
    """The folder of the top-level package ``func`` belongs to."""
    package = sys.modules[func.__module__.split(".")[0]]
    return os.path.dirname(os.path.abspath(package.__file__))


def source_files(dispatcher) -> list[str]:
    """The source files ``dispatcher``'s machine code is built from: the
    kernel's module (every compiled function it calls lives there) and the
    file of every function of the same package that module names (its
    helpers and decorators), so that an edit to any of them makes shipped
    code stale.  (A plain Python kernel function will do as well.)

    Only the package's own files count: a decorated function is unwrapped
    to the function written in the package (``functools.wraps`` gives a
    ``contextlib.contextmanager`` wrapper the package's module name, but
    its code is contextlib's), and a file outside the package's folder is
    left out.  The files are in the order of their paths inside the
    package, so the list (and :func:`source_digest`) does not depend on
    where the tree sits.  (Sorted by absolute path with ``contextlib.py``
    in it, a tree in a folder named before the standard library's and its
    copy in one named after it gave one kernel two digests, and a wheel
    built from the copy refused the tree's shipped code.)"""
    func = getattr(dispatcher, "py_func", dispatcher)
    module = sys.modules[func.__module__]
    package = func.__module__.split(".")[0]
    root = _package_root(func)
    files = {inspect.getsourcefile(module)}
    for value in vars(module).values():
        f = getattr(value, "py_func", value)
        if inspect.isfunction(f) and f.__module__.split(".")[0] == package:
            files.add(inspect.getsourcefile(inspect.unwrap(f)))
        elif inspect.ismodule(f) and f.__name__.split(".")[0] == package:
            files.add(getattr(f, "__file__", None))  # helpers called as module.func
    inside = [os.path.abspath(f) for f in files if f]
    inside = [f for f in inside if os.path.commonpath([root, f]) == root]
    return sorted(inside, key=lambda f: os.path.relpath(f, root).split(os.sep))


def source_digest(dispatcher) -> str:
    """SHA-256 over :func:`source_files`: each file's path inside the
    package (``analytic/ctmc.py``, with ``/`` whatever the platform) and
    contents, in that order."""
    root = _package_root(getattr(dispatcher, "py_func", dispatcher))
    h = hashlib.sha256()
    for path in source_files(dispatcher):
        h.update("/".join(os.path.relpath(path, root).split(os.sep)).encode())
        with open(path, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def _kernel_name(kernel) -> str:
    f = getattr(kernel, "py_func", kernel)
    return f"{f.__module__}.{f.__name__}"


def _process_facts(kernel) -> dict:
    """What shipped code of ``kernel`` (a dispatcher or its Python function)
    must match in the running process, its argument types apart."""
    import llvmlite
    import numba
    from numba.core.registry import cpu_target

    return {
        "kernel": _kernel_name(kernel),
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "python": sys.implementation.cache_tag,
        "triple": cpu_target.target_context.codegen().magic_tuple()[0],
        "source": source_digest(kernel),
    }


def _mismatch(built: dict, here: dict) -> str | None:
    """The first fact of ``here`` that the recorded ``built`` differs in, as
    a sentence, or None."""
    for key, value in here.items():
        if built.get(key) != value:
            return f"built for {key} {built.get(key)!r}, this process has {value!r}"
    return None


def _read_facts(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def survey(folder: str | None = None) -> list[tuple[str, str, str | None]]:
    """Every shipped kernel in ``folder`` (default :func:`kernels_dir`), as
    (kernel, its argument types, why this process cannot use it or None),
    compiling nothing: ``qmodels warm-up --check`` prints it."""
    import importlib

    folder = kernels_dir() if folder is None else folder
    if folder is None or not os.path.isdir(folder):
        return []
    rows = []
    here: dict = {}  # per kernel: its facts in this process
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        try:
            built = _read_facts(os.path.join(folder, name))
            kernel = built["kernel"]
            if kernel not in here:
                module, _, func = kernel.rpartition(".")
                here[kernel] = _process_facts(getattr(importlib.import_module(module), func))
        except Exception as e:  # unreadable facts, a kernel this version lacks
            rows.append((name[:-5], "?", f"unusable facts: {type(e).__name__}: {e}"))
            continue
        why = _mismatch(built, here[kernel])
        if why is None and not os.path.exists(os.path.join(folder, name[:-5] + ".nbk")):
            why = "its code file is missing"
        rows.append((kernel, built.get("signature", "?"), why))
    return rows


def save(dispatcher, sig, dest: str) -> str:
    """Compile ``dispatcher`` for the argument types ``sig`` and write its
    machine code and facts into ``dest``; the path of the code file.

    The process must run with ``NUMBA_CPU_NAME=generic`` (set before numba
    is imported), so that the code runs on any processor of the
    architecture; otherwise :class:`RuntimeError`."""
    from numba.core import config
    from numba.core.serialize import dumps

    if str(config.CPU_NAME).lower() != SHIPPED_CPU:
        raise RuntimeError(f"shipped machine code must be compiled with NUMBA_CPU_NAME="
                           f"{SHIPPED_CPU} (this process: {config.CPU_NAME!r})")
    sig = tuple(sig)
    dispatcher.compile(sig)
    cres = dispatcher.overloads[sig]
    os.makedirs(dest, exist_ok=True)
    base = os.path.join(dest, _base(dispatcher, sig))
    facts = dict(_process_facts(dispatcher), signature=str(sig), cpu=SHIPPED_CPU)
    _write(base + ".nbk", dumps(cres._reduce()))
    _write(base + ".json", json.dumps(facts, indent=1, sort_keys=True).encode())
    return base + ".nbk"


def _write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def check(dispatcher, sig, folder: str | None = None) -> str | None:
    """Why shipped code for ``dispatcher`` at the argument types ``sig``
    cannot be used here (a sentence), or None if it can."""
    folder = kernels_dir() if folder is None else folder
    if folder is None:
        return "shipped machine code is turned off (QMODELS_KERNELS is empty)"
    base = os.path.join(folder, _base(dispatcher, sig))
    try:
        built = _read_facts(base + ".json")
    except FileNotFoundError:
        return f"no shipped machine code in {folder}"
    except (OSError, ValueError) as e:
        return f"unreadable facts {base}.json: {e}"
    why = _mismatch(built, dict(_process_facts(dispatcher), signature=str(tuple(sig))))
    if why is None and not os.path.exists(base + ".nbk"):
        why = f"missing {base}.nbk"
    return why


def load_all(dispatcher, folder: str | None = None) -> int:
    """Put into ``dispatcher`` the shipped machine code of every argument
    types of its kernel that was built for this process (facts as
    :func:`check`); how many it holds now.  Nothing is compiled: a kernel
    loads its code once, when its dispatcher is made, and calls with other
    types compile as numba would."""
    folder = kernels_dir() if folder is None else folder
    if folder is None or not os.path.isdir(folder):
        return 0
    prefix = _kernel_name(dispatcher) + "."
    here = None
    loaded = 0
    for name in sorted(os.listdir(folder)):
        if not (name.startswith(prefix) and name.endswith(".json")):
            continue
        try:
            built = _read_facts(os.path.join(folder, name))
        except (OSError, ValueError):
            continue
        here = _process_facts(dispatcher) if here is None else here
        if _mismatch(built, here) is None:
            loaded += _register(dispatcher, os.path.join(folder, name[:-5] + ".nbk"),
                                built.get("signature"))
    return loaded


def _register(dispatcher, path: str, signature: str | None) -> bool:
    """Rebuild the compile result in ``path`` and register it with
    ``dispatcher``, if it is for the argument types its facts name."""
    try:
        import pickle

        from numba.core.compiler import CompileResult

        with open(path, "rb") as f:
            payload = pickle.loads(f.read())
        ctx = dispatcher.targetctx
        ctx.refresh()
        cres = CompileResult._rebuild(ctx, *payload)
    except Exception:  # another numba's format, a truncated file: not shipped
        return False
    sig = tuple(cres.signature.args)
    if str(sig) != signature:  # a file that is not what its facts say
        return False
    if sig in dispatcher.overloads:
        return True
    # numba's own cache-hit path (Dispatcher.compile) registers the loaded
    # result; hand it the rebuilt result as a one-entry cache, under numba's
    # compiler lock (reentrant) so that no other thread compiles meanwhile
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        saved = dispatcher._cache
        dispatcher._cache = _OneResult(cres, sig)
        try:
            dispatcher.compile(sig)
        finally:
            dispatcher._cache = saved
    return sig in dispatcher.overloads


class _OneResult:
    """A stand-in for a dispatcher's cache that holds one compile result,
    for one signature."""

    def __init__(self, cres, sig):
        self.cres = cres
        self.sig = sig

    def load_overload(self, sig, target_context):
        return self.cres if tuple(sig) == self.sig else None

    def save_overload(self, sig, data):
        pass
