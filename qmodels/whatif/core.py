"""The :func:`sweep` function: a model, a grid of parameter values, a tidy
table out; the points solved one by one or batched, locally or on dask
workers, in chunks, with a progress bar and an optional resumable store.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .._progress import bar as progress_bar
from ..errors import InvalidValueError, QModelsError, UnknownNameError, require
from ..model import Network
from .batched import _batch_ok, _batch_task
from .points import _Grid
from .spec import _at_point, _make_spec, _solve_chunk, _Spec
from .store import _fingerprint, _Store

__all__ = ["sweep"]

#: default points per chunk for the batched exact route
BATCH_CHUNK = 20_000


# ---------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------

def _chunks(todo: np.ndarray, size: int):
    for a in range(0, len(todo), size):
        yield todo[a:a + size]


def _runs(idx: np.ndarray):
    """Split sorted indices into contiguous runs (the batched route slices)."""
    if len(idx) == 0:
        return []
    cut = np.flatnonzero(np.diff(idx) != 1) + 1
    return np.split(idx, cut)


def _workers(client) -> int:
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # pragma: no cover - scheduler without the call
        return 1


def sweep(model: Network | Callable[..., Network], vary: Mapping[str, Iterable] | None = None,
          *, rows=None, method: str = "exact", options: Mapping | None = None, seed=None,
          stations: bool | Sequence[str] = True, client=None, parallel: bool = False,
          chunksize: int | None = None, store=None, progress: bool | None = None,
          on_error: str = "raise"):
    """Solve ``model`` at every point of a parameter grid; a tidy DataFrame.

    Parameters
    ----------
    model : Network or callable
        The base network, or a function ``f(**kwargs) -> Network``.
    vary : mapping parameter -> values
        The grid is the product of the axes (first axis slowest).  A
        parameter is a path (``"disk.service"``, ``"tx.population"``,
        ``"buf.tokens"``, ``"tx.visits.disk"``; ``"disk.rpm"``, a parameter
        of the physical element a station was built from) or, for a
        function model, one of its argument names.
    rows : sequence of mappings or DataFrame
        Explicit points instead of ``vary``.
    method : str
        Any :func:`qmodels.methods` name: ``exact``, ``schweitzer``,
        ``linearizer``, ``bounds``, ``decomposition``, ``ctmc``, ``sim``, ...
    options : mapping
        Keyword options of the method (``{"replications": 5}`` for sim).
    seed : int or numpy.random.SeedSequence
        Required for ``sim``: point i uses ``SeedSequence(seed).spawn(P)[i]``.
    stations : bool or sequence of str
        Station rows to include: all (default), none (``False``: class rows
        only, the smallest table for a large sweep) or the ones named.
    client : distributed.Client, optional
        Run the chunks on this dask cluster.
    parallel : bool
        Start a local dask cluster for this call (one process per core).
        Its workers are spawned processes, which import the main script
        again: a script must call ``sweep(parallel=True)`` under
        ``if __name__ == "__main__":`` (else :class:`MainGuardError`,
        before any process starts).
    chunksize : int, optional
        Points per task (and per stored part).
    store : path, optional
        Directory of Parquet parts that makes the sweep resumable.
    progress : bool, optional
        tqdm.auto bar; default on in a terminal or Jupyter; off with
        ``False`` or when the environment variable ``CI`` is set.
    on_error : "raise" or "record"
        A point the method cannot solve (an open station pushed past
        saturation, a value the model rejects): ``"raise"`` its error, the
        message prefixed with the point; ``"record"`` one row for it with
        ``scope == "error"``, the error's class in ``name`` and its message
        in an ``error`` column, and go on (``attrs["failed"]`` counts them).

    Returns
    -------
    pandas.DataFrame
        One row per point x class and point x station (see the module
        docstring for the columns), sorted by ``point``.  ``attrs`` holds
        ``method``, ``points``, ``computed``, ``stored``, ``failed``,
        ``route`` (``"batch"``, ``"one-by-one"``, or ``"stored"`` when
        nothing was left to compute), ``delays`` (the delay stations of a
        Network model) and for sim ``level``.

    Raises
    ------
    InvalidValueError, UnknownNameError
        A bad grid, path, seed or store; a value the model rejects names
        the station/class (the point is named too).
    UnsupportedModelError
        The method cannot solve the model at some point (the error names
        the point and its parameters).
    MainGuardError
        ``parallel=True`` from a script's top level outside
        ``if __name__ == "__main__":`` (each spawned worker would re-run the
        script and start workers again; dask would say only "Nanny failed
        to start").

    Notes
    -----
    Each point is an independent solve, so the table does not depend on
    how the points were chunked or where they ran.  The batched exact
    route is :func:`qmodels.batch.mva_batch` (Reiser & Lavenberg 1980;
    Lazowska et al., QSP 1984, Algorithm 6.1), equal to :func:`qmodels.mva`
    row for row.
    """

    if store is not None:
        require("pyarrow", "dist", "sweep(store=...) (Parquet parts)")
    if parallel and client is None:
        require("distributed", "dist", "sweep(parallel=True) (a local dask cluster)")
    points = _Grid(vary, rows)
    spec = _options(_make_spec(model, points.names, method, options, seed), stations,
                    on_error, chunksize)
    P = len(points)
    st = None
    done: Any = None
    if store is not None:
        _storable(points)
        st = _Store(store, _fingerprint(spec, points), P)
        done = _as_given(st.load(), points)
    have = np.zeros(P, dtype=bool)
    if done is not None:
        have[np.unique(done["point"].to_numpy())] = True
    todo = np.flatnonzero(~have)

    route = ("stored" if not len(todo) else
             "batch" if _batch_ok(spec, points) else "one-by-one")
    if len(todo) and (route != "batch" or spec.report) and (
            isinstance(spec.model, Network) or spec.report):
        _check_first(spec, points, int(todo[0]))

    own_cluster = None
    if parallel and client is None and len(todo):
        import dask
        from distributed import Client, LocalCluster

        from .._mainguard import check_main_guard

        check_main_guard("sweep(parallel=True)",
                         dask.config.get("distributed.worker.multiprocessing-method", "spawn"))
        own_cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1,
                                   processes=True, dashboard_address=None)
        client = Client(own_cluster)
    try:
        parts = _execute(spec, points, route, todo, client, chunksize, st,
                         progress_bar(progress, len(todo), f"sweep ({method})", unit="pt"))
    finally:
        if own_cluster is not None:
            client.close()
            own_cluster.close()
    out = _assemble(([done] if done is not None else []) + parts)
    out.attrs.update({"method": method, "points": P, "computed": int(len(todo)),
                      "stored": int(P - len(todo)), "route": route,
                      "parameters": points.names,
                      "failed": int((out["scope"] == "error").sum())})
    if method == "sim":
        out.attrs["level"] = float(dict(spec.options).get("level", 0.95))
    if isinstance(spec.model, Network):
        # (a model function is not called again for this: it may be slow)
        out.attrs["delays"] = [s.name for s in spec.model.stations if s.kind == "delay"]
    return out


def _options(spec: _Spec, stations, on_error, chunksize) -> _Spec:
    """The spec with the station rows to keep and the error policy, checked."""
    if stations is not True:
        if stations is False:
            report: tuple = ()
        elif isinstance(stations, str) or not isinstance(stations, Iterable):
            raise InvalidValueError(
                f"stations must be True, False or a list of station names, got {stations!r}")
        else:
            report = tuple(stations)
        spec = dataclasses.replace(spec, report=report)
    if on_error not in ("raise", "record"):
        raise InvalidValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    if chunksize is not None and (isinstance(chunksize, bool)
                                  or not isinstance(chunksize, numbers.Integral)
                                  or chunksize < 1):
        raise InvalidValueError(f"chunksize must be an integer >= 1, got {chunksize!r}")
    return dataclasses.replace(spec, on_error=on_error)


def _storable(points: _Grid) -> None:
    """Refuse, before any work, a parameter whose values a Parquet part
    cannot hold (a Power or a distribution object): the sweep would run and
    then fail writing its first part."""
    import pyarrow as pa

    for name in points.names:
        col = points.cols[name]
        if col.dtype != object:
            continue
        for v in _distinct(col):
            try:
                pa.array([v])     # what the Parquet writer does with the column
            except (pa.ArrowException, TypeError, ValueError):
                raise InvalidValueError(
                    f"store: parameter {name!r} takes {type(v).__name__} values ({v!r}), "
                    "which a Parquet part cannot hold; sweep its numeric fields instead "
                    f"(e.g. '{name}.<field>') or drop store=") from None


def _as_given(done, points: _Grid):
    """Stored rows with each parameter value as the grid gives it: Parquet
    hands a tuple (rate multipliers) back as a numpy array, which would make
    a resumed table differ from a fresh one."""
    if done is None:
        return None
    for name in points.names:
        if points.cols[name].dtype == object and done[name].dtype == object:
            done[name] = [tuple(v.tolist()) if isinstance(v, np.ndarray) else v
                          for v in done[name]]
    return done


def _distinct(col) -> list:
    """The distinct values of an object column (by repr: they may not hash)."""
    seen: dict = {}
    for v in col:
        seen.setdefault(repr(v), v)
    return list(seen.values())


def _check_first(spec: _Spec, points: _Grid, i0: int) -> None:
    """Build the first point's network once, so that a bad path or a bad
    station name fails before any work is sent anywhere."""
    try:
        first = spec.network(points[i0])
    except UnknownNameError:
        raise
    except QModelsError as e:
        if spec.on_error == "raise":
            raise _at_point(e, i0, points[i0]) from e
        return   # recorded with its point later
    have = list(first.station_names) + [p.name for p in first.pools]
    unknown = [s for s in spec.report or () if s not in have]
    if unknown:
        raise UnknownNameError(
            f"stations: no station {unknown[0]!r} (the network has "
            f"{', '.join(have)})")


def _execute(spec, points, route, todo, client, chunksize, st, bar) -> list:
    """Solve the points ``todo`` in chunks, here or on the dask cluster;
    each chunk's table is stored (if a store is given) as it arrives."""
    workers = _workers(client) if client is not None else 1
    if chunksize is None:
        if route == "batch":
            chunksize = min(BATCH_CHUNK, max(1, math.ceil(len(todo) / (4 * workers))))
        else:
            chunksize = max(1, min(64, math.ceil(len(todo) / (8 * workers))))
    if route == "batch":
        # contiguous runs: each task builds the plan of its own points
        tasks = [c for run in _runs(todo) for c in _chunks(run, chunksize)]
    else:
        tasks = list(_chunks(todo, chunksize))
    parts: list = []

    def finish(chunk, frame):
        if st is not None:
            st.write(frame)
        parts.append(frame)
        if bar is not None:
            bar.update(len(chunk))

    try:
        if client is None:
            for chunk in tasks:
                finish(chunk, _run_task(spec, route, chunk, points))
            return parts
        from distributed import as_completed

        [spec_f] = client.scatter([spec], broadcast=True)
        futs = {}
        for chunk in tasks:
            if route == "batch":
                lo, hi = int(chunk[0]), int(chunk[-1]) + 1
                f = client.submit(_batch_task, spec_f, points.columns(lo, hi), lo, pure=False)
            else:
                f = client.submit(_solve_chunk, spec_f, chunk.tolist(),
                                  [points[i] for i in chunk], pure=False)
            futs[f] = chunk
        for f in as_completed(futs):
            finish(futs[f], f.result())
        return parts
    finally:
        if bar is not None:
            bar.close()


def _assemble(frames: list):
    """One table from the stored and the new parts, sorted by point, with
    the same categories whichever route or store the rows came from."""
    import pandas as pd

    if not frames:
        raise InvalidValueError("nothing to sweep")
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if not out["point"].is_monotonic_increasing:
        out = out.sort_values("point", kind="stable", ignore_index=True)
    if "exactness" not in out.columns:   # parts a store kept from before the column
        out.insert(list(out.columns).index("method") + 1, "exactness", None)
    for col in ("method", "exactness", "scope", "name"):
        first = [str(v) for v in pd.unique(out[col]) if v is not None and v == v]
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].cat.set_categories(first)
        else:
            out[col] = pd.Categorical(out[col], categories=first)
    return out


def _run_task(spec, route, chunk, points):
    if route == "batch":
        lo, hi = int(chunk[0]), int(chunk[-1]) + 1
        return _batch_task(spec, points.columns(lo, hi), lo)
    return _solve_chunk(spec, chunk.tolist(), [points[i] for i in chunk])
