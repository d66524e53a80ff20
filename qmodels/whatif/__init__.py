"""What-if sweeps: one model, a grid of parameter values, a tidy table out.

:func:`sweep` varies any parameter of a model over a grid (the product of
axes, or explicit rows), solves every point with any method of
:func:`qmodels.solve` and returns a tidy :class:`pandas.DataFrame`: one row
per point x class and per point x station, the figures as columns, ready for
seaborn or matplotlib (``frame.pipe(qm.plot.sweep, x=..., y=...)``).

>>> import qmodels as qm
>>> net = qm.Network([qm.Queue("cpu", 0.010), qm.Queue("disk", 0.025)],
...                  [qm.Closed("tx", 10, visits={"cpu": 1, "disk": 1})])
>>> df = qm.sweep(net, {"disk.service": [0.01, 0.02], "tx.population": [1, 5]},
...               progress=False)
>>> df.query("scope == 'class'")[["disk.service", "tx.population", "X"]].round(3)
   disk.service  tx.population       X
0          0.01              1  50.000
3          0.01              5  83.333
6          0.02              1  33.333
9          0.02              5  49.206

(By hand: one job sees no queue, X = 1/(D_cpu + D_disk); two balanced
stations of demand D give X(N) = N / (D (N + 1)) = 5/0.06.)

Parameter paths
---------------
A path names a model object, then an attribute, then (for mappings) a key:

================================  ==========================================
``"disk.service"``                station ``disk``: mean service time
``"disk.servers"``                servers (also ``capacity``, ``discipline``)
``"disk.power.busy"``             a field of a nested object
``"tx.population"``               class ``tx``: population (``think_time``,
                                  ``arrival_rate``)
``"tx.visits.disk"``              class ``tx``: visit ratio at ``disk``
                                  (``tx.demands.disk``, ``tx.service.disk``,
                                  ``tx.routing.cpu.disk``)
``"buf.tokens"``                  token pool ``buf``: tokens
``"B"``                           a sympy symbol ``B`` of the model (put in
                                  with :func:`qmodels.substitute`)
``"disk.rpm"``                    a parameter of the physical element the
                                  station was built from
                                  (``qm.Disk(...).station()``): the station
                                  is rebuilt from the changed element
================================  ==========================================

Every change goes through :func:`dataclasses.replace` on the frozen model
objects, so it is validated exactly as the model itself (a population of
10.3 is a :class:`~qmodels.errors.PopulationError` naming the class).  The
model may instead be a function that builds a :class:`~qmodels.model.Network`
from keyword arguments; axes that name its arguments are passed to it and
dotted paths are applied to the network it returns.  This is how a routing
probability is swept (the function keeps each routing row summing to 1).

The table
---------
Columns: ``point`` (0..P-1, grid order), one column per parameter, ``method``
(the method that answered the point: with ``method="auto"``, the one
:func:`qmodels.solve` chose there), ``exactness`` (``"exact"``,
``"approximate"``, ``"bound"`` or ``"simulated"``: what that point's answer
is; the method's notes and warnings are in its result, ``qm.solve``),
``scope`` (``"class"``, ``"station"`` or, for a model with token pools,
``"pool"``), ``name`` (class, station or pool name) and the figures, in the
vocabulary of :mod:`qmodels.results`:

* analytic methods: ``X``, ``R``, ``Q``, ``U`` (``U`` per station only),
  ``D`` (total demand) and ``bottleneck`` (station rows);
* ``sim``: the same means plus their confidence half-widths ``X_hw``,
  ``R_hw``, ``Q_hw``, ``U_hw`` (level in ``frame.attrs["level"]``);
* ``bounds``: ``X_lower``, ``X_upper``, ``R_lower``, ``R_upper``, ``N_star``,
  ``X_max`` per class; ``D`` and ``bottleneck`` per station;
* a token pool's row (as in the result's ``to_frame()``): ``U`` tokens
  held / tokens, ``Q`` jobs waiting for a token, ``bottleneck`` (a pool
  competes for it like a station), X, R and D NaN; with ``bounds`` only
  ``bottleneck``;
* with ``on_error="record"``, a point that failed has one row, ``scope ==
  "error"``, with the error's class in ``name`` and its message in ``error``.

``stations=False`` keeps the class rows only (the compact table of a very
large sweep); ``stations=["disk"]`` keeps the stations (and pools) named.

Single-class product-form sweeps with ``method="exact"`` are solved all at
once by :func:`qmodels.batch.mva_batch` (compiled, parallel over points);
its rows equal the one-by-one :func:`qmodels.mva` bit for bit, so the table
is the same whichever route was taken (``frame.attrs["route"]`` says which).

Simulation
----------
``method="sim"`` needs ``seed`` (an int or a :class:`numpy.random.SeedSequence`
``root``).  Point ``i`` is simulated with
``SeedSequence(root.entropy, spawn_key=root.spawn_key + (i,))``, the same
sequence as ``root.spawn(P)[i]``: every point's numbers depend only on the
seed and its index, never on chunking, the number of workers or a resume.

Scaling out with dask.distributed
---------------------------------
``parallel=True`` starts a local cluster (one single-threaded worker process
per core) for the call; ``client=`` uses an existing
:class:`distributed.Client`.  To run on a real cluster, start a scheduler
and workers there (``dask scheduler`` on one host, ``dask worker
tcp://HOST:8786`` on each node, each with qmodels installed) and pass
``client=Client("tcp://HOST:8786")``; the model and the grid are shipped to
the workers, the figures come back.  Points travel in chunks (``chunksize``;
by default a few chunks per worker, at most 64 points per chunk for
one-by-one solves and 20,000 for the batched route) so the scheduler's
overhead per task (about a millisecond) stays small.  The numbers are the same bit for
bit whatever the number of workers: each point is solved on its own.
A script that starts worker processes (``parallel=True``) must do so under
``if __name__ == "__main__":``, as any program using multiprocessing (the
workers are spawned and import the script again): called from a script's top
level outside that block, :func:`sweep` raises
:class:`~qmodels.errors.MainGuardError` saying so before any process starts.

Resumable sweeps
----------------
``store="sweep.parquet"`` keeps completed points on disk as they finish: a
directory of Parquet parts (``pandas.read_parquet("sweep.parquet")`` reads
it whole) plus ``_sweep.json`` naming the sweep.  Each part is written to a
temporary file and moved into place with :func:`os.replace`, so a sweep
killed at any moment (even by SIGKILL) leaves only complete parts.  Running
the same sweep again loads what is stored, solves only the missing points
and returns the whole table; ``frame.attrs["computed"]`` and
``frame.attrs["stored"]`` count the points of each kind.  A store that
holds a different sweep (another model, grid, method, options or seed) is
refused with an error rather than mixed in.  One sweep writes to a store
at a time (the process that runs :func:`sweep`; workers never touch it).

Progress
--------
A :mod:`tqdm.auto` bar (a widget in Jupyter, text in a terminal) counts the
points; ``progress=False`` or the environment variable ``CI`` silences it.

Modules
-------
:mod:`.paths` (parameter paths, :func:`apply`), :mod:`.points` (the grid,
:func:`grid`), :mod:`.spec` (the specification shipped to workers and one
point's rows), :mod:`.batched` (the batched exact route), :mod:`.store` (the
resumable Parquet store), :mod:`.core` (:func:`sweep`) and :mod:`.cli`
(``qmodels sweep``, :func:`register_cli`).
"""

from .cli import parse_values as parse_values  # the --vary value parser, re-exported
from .cli import register_cli
from .core import sweep
from .paths import apply
from .points import grid

__all__ = ["sweep", "grid", "apply", "register_cli"]
