"""Run the validation harness's independent tasks on several processes or a
dask cluster, the results back in task order.

Each task of a catalog (one network, or one validation case) is solved and
simulated on its own, from its own seed; gathering the results in task
order makes the report the same whatever the split: the figures to the
bit, only the wall times differ.

``workers=k``
    ``k`` spawned processes of this machine (the pool
    :func:`qmodels.sim.parallel.run_in_order` keeps).
``scheduler="tcp://host:8786"``
    a dask distributed scheduler: the tasks run on its workers.  The
    ``validation`` folder is uploaded to them first
    (:class:`distributed.diagnostics.plugin.UploadDirectory`), so workers
    need qmodels installed but not a copy of this repository.
"""

from __future__ import annotations

import pathlib

__all__ = ["map_in_order", "add_arguments"]

HERE = pathlib.Path(__file__).resolve().parent


def add_arguments(ap) -> None:
    """``--workers K`` and ``--scheduler ADDRESS`` on an argparse parser."""
    ap.add_argument("--workers", type=int, default=1,
                    help="processes of this machine (default 1)")
    ap.add_argument("--scheduler", metavar="ADDRESS", default=None,
                    help="a dask scheduler, e.g. tcp://host:8786: run the tasks on its workers")


def check(ap, args) -> None:
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    if args.scheduler and args.workers > 1:
        ap.error("give --workers or --scheduler, not both")


def map_in_order(fn, tasks, workers: int = 1, scheduler: str | None = None):
    """Yield ``fn(task)`` for every task, in task order (the simulator's own
    spreading, :func:`qmodels.sim.parallel.run_in_order`, on this machine's
    processes or on the scheduler's workers)."""
    from qmodels.sim.parallel import run_in_order

    args = [(t,) for t in tasks]
    if not scheduler:
        yield from run_in_order(fn, args, workers)
        return
    from distributed import Client
    from distributed.diagnostics.plugin import UploadDirectory

    with Client(scheduler) as client:
        client.register_plugin(UploadDirectory(str(HERE), update_path=True),
                               name="qmodels-validation")
        yield from run_in_order(fn, args, client=client)
