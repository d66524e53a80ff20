"""Refuse to start local worker processes from a script's unguarded top level.

``sweep(parallel=True)`` starts a local dask cluster whose worker processes
are started with the *spawn* method (dask's default,
``distributed.worker.multiprocessing-method``), and ``simulate(workers=k)``
a pool of spawned processes for its replications.  A spawned process imports
the parent's main script again (as ``__mp_main__``) before it runs anything;
a script that calls ``sweep(parallel=True)`` at its top level, outside
``if __name__ == "__main__":``, would start a cluster again in every worker.
Python's multiprocessing stops that child ("An attempt has been made to start
a new process before the current process has finished its bootstrapping
phase"), and dask reports only "Nanny failed to start" with a long traceback
(Python documentation, multiprocessing, "Programming guidelines: Safe
importing of main module").

:func:`check_main_guard` finds this before any process starts: which module
the spawn method re-runs (mirroring ``multiprocessing.spawn``: a script run
by path or a module run with ``-m``, but not a package's ``__main__`` nor an
interactive session or notebook), the line of that module's top-level code
the call comes from, and whether that line lies inside a top-level
``if __name__ == "__main__":`` block of its source.
"""

from __future__ import annotations

import ast
import multiprocessing
import sys

from .errors import MainGuardError

__all__ = ["check_main_guard"]

_HOW = ("put the code that starts them under `if __name__ == \"__main__\":` (as any "
        "program using multiprocessing must), or connect client= to a dask scheduler "
        "running elsewhere, or run it in this process (no parallel=True / workers=)")


def _is_main_test(test) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


def _rerun_by_spawn(main) -> str | None:
    """The file of ``main`` if a spawned process re-runs its top-level
    code, else None (as ``multiprocessing.spawn.get_preparation_data``
    and ``_fixup_main_from_name`` decide)."""
    spec = getattr(main, "__spec__", None)
    if spec is not None and getattr(spec, "name", None):
        if spec.name == "__main__" or spec.name.endswith(".__main__"):
            return None
    return getattr(main, "__file__", None)


def _calling_line(main) -> int | None:
    """The line of ``main``'s top-level code on the current call stack."""
    f = sys._getframe(1)
    line = None
    while f is not None:
        if f.f_globals is vars(main) and f.f_code.co_name == "<module>":
            line = f.f_lineno
        f = f.f_back
    return line


def check_main_guard(what: str, start_method: str = "spawn") -> None:
    """Raise :class:`~qmodels.errors.MainGuardError` if starting worker
    processes now (with ``start_method``) would re-run the caller's script
    into starting them again; ``what`` names the feature in the message.

    Quiet whenever it cannot tell (no source, an interactive session, a
    notebook, the ``fork`` start method)."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # a spawned process importing the main script: the parent missed it
        raise MainGuardError(f"{what} was called while a worker process was importing the "
                             f"main script: {_HOW}")
    if start_method == "fork":
        return
    main = sys.modules.get("__main__")
    path = _rerun_by_spawn(main) if main is not None else None
    line = _calling_line(main) if path else None
    if line is None:
        return
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return
    for node in tree.body:
        if (isinstance(node, ast.If) and _is_main_test(node.test)
                and node.lineno <= line <= (node.end_lineno or node.lineno)):
            return
    raise MainGuardError(
        f"{what} starts worker processes with the {start_method!r} method, which re-imports "
        f"the main script {path!r} in each of them; line {line} of it runs outside "
        f"`if __name__ == \"__main__\":`, so every worker would start workers again (dask "
        f"would fail with 'Nanny failed to start'): {_HOW}")
