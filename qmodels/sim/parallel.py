"""Replications on several processes, or on a dask cluster.

Independent replications are independent by construction: replication i
draws only from the i-th child of the run's ``SeedSequence``
(``SeedSequence(seed).spawn(n)[i]``, NumPy's recommended way to give
parallel streams that do not overlap; NumPy documentation, "Parallel random
number generation").  So where a replication runs changes no number: the
runs are gathered back in the order of their seeds and everything after
them (the MSER-5 warm-up chosen on the pilot runs, the intervals, the
self-checks) sees exactly what a one-process run sees.  ``workers=1`` and
``workers=8`` give the same result to the bit (``tests/test_sim_parallel.py``).

Two ways out of the process:

``workers=k``
    a pool of ``k`` processes of this machine
    (:class:`concurrent.futures.ProcessPoolExecutor`, started with the
    *spawn* method, which is safe with the threads numba and progress bars
    start; fork is not).  The pool is kept for the next call with the same
    ``k`` (a spawned process pays the interpreter's start and the import of
    qmodels once, about a second), and closed at exit.  A script that
    starts it from its top level must do so under
    ``if __name__ == "__main__":`` (:func:`qmodels._mainguard.check_main_guard`
    says so before any process starts).
``client=``
    a :class:`distributed.Client`: the replications become dask tasks on
    whatever cluster the client is connected to, as ``qm.sweep(client=)``'s
    points do.

Ctrl-C cancels the replications not yet started and stops the pool's
processes (a local pool is started afresh on the next call).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..errors import InvalidValueError

__all__ = ["check_workers", "run_in_order"]

#: pools kept between calls, by their number of processes
_POOLS: dict[int, ProcessPoolExecutor] = {}


def check_workers(workers, client) -> int:
    """The number of processes asked for (1: this process), or a clear
    error: ``workers`` is a positive integer (``os.cpu_count()`` for all
    cores), and ``workers`` and ``client`` are not both given."""
    if workers is None:
        workers = 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidValueError(
            f"workers={workers!r} must be a positive integer (the number of processes; "
            f"os.cpu_count() = {os.cpu_count()} for every core)")
    if client is not None and workers > 1:
        raise InvalidValueError(
            "give either workers= (processes of this machine) or client= (a dask cluster), "
            "not both")
    if client is not None and not callable(getattr(client, "submit", None)):
        raise InvalidValueError(
            f"client={client!r} is not a dask distributed.Client (it has no submit method)")
    return workers


def _pool(workers: int) -> ProcessPoolExecutor:
    pool = _POOLS.get(workers)
    if pool is None:
        from .._mainguard import check_main_guard
        check_main_guard(f"simulate(workers={workers})")
        pool = ProcessPoolExecutor(max_workers=workers,
                                   mp_context=multiprocessing.get_context("spawn"))
        _POOLS[workers] = pool
    return pool


def _drop(workers: int) -> None:
    """Stop a pool now: its waiting tasks are cancelled and its processes
    terminated (a replication in progress is abandoned)."""
    pool = _POOLS.pop(workers, None)
    if pool is None:
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()


@atexit.register
def _close_all() -> None:  # pragma: no cover - runs at interpreter exit
    for k in list(_POOLS):
        pool = _POOLS.pop(k)
        pool.shutdown(wait=True, cancel_futures=True)


def run_in_order(fn, args_list, workers: int = 1, client=None):
    """Yield ``fn(*args)`` for each tuple of ``args_list``, in that order:
    here one after another (``workers == 1`` and no client), else all
    submitted at once to the pool or the dask client and yielded as they
    are ready in order.  An error raised by a task is raised here."""
    if client is None and workers <= 1:
        for args in args_list:
            yield fn(*args)
        return
    if client is not None:
        futures = [client.submit(fn, *args, pure=False) for args in args_list]
        try:
            for fut in futures:
                yield fut.result()
        except BaseException:
            client.cancel(futures)
            raise
        return
    pool = _pool(workers)
    futures = [pool.submit(fn, *args) for args in args_list]
    try:
        for fut in futures:
            yield fut.result()
    except (KeyboardInterrupt, BrokenProcessPool):
        _drop(workers)
        raise
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
