"""Plots of results and sweeps (matplotlib, imported only when a plot is drawn).

Every function takes ``ax=None`` (a new figure when None) and returns the
:class:`matplotlib.axes.Axes` it drew on, so plots compose::

    import qmodels as qm
    ax = qm.plot.throughput_curve(net)                 # X(N), ABA/BJB bounds, N*
    qm.sweep(net, {"disk.service": s}).pipe(qm.plot.utilization, x="disk.service")
    frame.pipe(qm.plot.sweep, x="tx.population", y="X", hue="disk.service")

=============================  ==============================================
:func:`throughput_curve`       X(N) or R(N) of a single-class closed model
                               with the asymptotic (ABA) and balanced job
                               (BJB) bounds and N*
:func:`utilization`            U per station against a swept parameter, the
                               bottleneck's regions shaded, switch points
                               marked
:func:`response_time_breakdown` stacked residence time per station
:func:`energy`                 energy per transaction, busy and idle share
                               per device (an :class:`~qmodels.energy.
                               EnergyReport`), or against a parameter
:func:`compare`                analytic against simulated, with the
                               simulator's confidence intervals
:func:`stations`               one figure per station (bars; intervals for
                               a simulated result)
:func:`sweep`                  any figure of a :func:`qmodels.sweep` table
                               against a parameter, one line per ``hue``
:func:`explore`                X(N) with its bounds and the utilisations,
                               redrawn as ipywidgets sliders move model
                               parameters (a static figure without widgets)
=============================  ==============================================

The bounds are those of :func:`qmodels.bounds` (Lazowska et al., *Quantitative
System Performance*, 1984, ch. 5, Table 5.3): X(N) <= min(N/(D + Z), 1/Dmax),
R(N) >= max(D, N Dmax - Z), with N* = (D + Z)/Dmax where the two asymptotes
meet; balanced job bounds tighten both (Zahorjan et al. 1982).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .errors import InvalidValueError, UnsupportedModelError

__all__ = ["throughput_curve", "utilization", "response_time_breakdown", "energy", "compare",
           "stations", "sweep", "explore"]

_METRIC = {"throughput": "X", "response_time": "R", "queue_length": "Q", "utilization": "U",
           "X": "X", "R": "R", "Q": "Q", "U": "U"}
_LABEL = {"X": "throughput X [1/s]", "R": "response time R [s]", "Q": "queue length Q",
          "U": "utilization U"}


#: the unit of a swept parameter, by the last part of its path
_PATH_UNITS = {"service": "[s]", "think_time": "[s]", "arrival_rate": "[1/s]",
               "population": "[jobs]", "servers": "[servers]", "tokens": "[tokens]",
               "capacity": "[jobs]"}


def _path_label(x: str) -> str:
    """An axis label for a sweep's parameter path: the path and its unit
    (``disk.service [s]``); a path without a known unit as it is."""
    unit = _PATH_UNITS.get(str(x).rsplit(".", 1)[-1])
    return f"{x} {unit}" if unit else str(x)


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def _metric(metric) -> str:
    try:
        return _METRIC[metric]
    except (KeyError, TypeError):
        raise InvalidValueError(
            f"metric must be one of throughput/X, response_time/R, queue_length/Q, "
            f"utilization/U, got {metric!r}") from None


# ---------------------------------------------------------------------------
# throughput / response-time curve with bounds
# ---------------------------------------------------------------------------

def throughput_curve(model, ax=None, *, metric: str = "throughput", bounds=True,
                     n_star: bool = True, label: str = "exact MVA"):
    """X(n) (or R(n)) for n = 0..N with the ABA and BJB bounds and N*.

    Parameters
    ----------
    model : Network, Result or Curve
        A single-class closed model (solved by exact MVA with
        ``curve=True`` when needed), a result (its ``curve`` if present),
        or a :class:`~qmodels.results.Curve`.
    ax : matplotlib Axes, optional
    metric : "throughput"/"X" or "response_time"/"R"
    bounds : bool or Bounds
        Draw the bounds of :func:`qmodels.bounds` (of the curve's own
        network, which the solvers record in ``Curve.network``; a Curve
        built without one draws no bounds unless its ``Bounds`` are passed
        here).
    n_star : bool
        Mark N* = (D + Z)/Dmax, where the light-load and heavy-load
        asymptotes meet (QSP sec. 5.3).

    Returns
    -------
    matplotlib.axes.Axes
        Lines labelled ``exact MVA``, ``ABA upper``/``ABA lower``,
        ``BJB upper``/``BJB lower`` and ``N* = ...``.
    """
    from .analytic.bounds import Bounds
    from .analytic.bounds import bounds as solve_bounds
    from .model import Network
    from .results import Curve, Result

    m = _metric(metric)
    if m not in ("X", "R"):
        raise InvalidValueError(f"metric must be throughput or response_time, got {metric!r}")
    net = None
    if isinstance(model, Curve):
        curve = model
        net = getattr(model, "network", None)   # set by the solvers: draw its bounds
    elif isinstance(model, (Network, Result)):
        net = model if isinstance(model, Network) else model.network
        curve = getattr(model, "curve", None)
        if not isinstance(curve, Curve):
            from .analytic.mva import mva

            if len(net.classes) != 1 or net.classes[0].kind != "closed":
                raise UnsupportedModelError(
                    "a throughput curve needs one closed class; this network has "
                    f"{', '.join(f'{c.name} ({c.kind})' for c in net.classes)}")
            curve = mva(net, curve=True).curve
    else:
        raise InvalidValueError(
            f"throughput_curve takes a Network, a Result or a Curve, got {type(model).__name__}")
    b = bounds if isinstance(bounds, Bounds) else (
        solve_bounds(net) if bounds is True and net is not None else None)
    ax = _axes(ax)
    n = np.asarray(curve.population)
    y = np.asarray(curve.throughput if m == "X" else curve.response_time)
    ax.plot(n, y, color="C0", lw=2, label=label)
    if b is not None:
        pops = _bound_populations(n[n >= 1], b)
        if len(pops):
            bs = b.sweep(pops)
            for key, style, name in (("aba", "--", "ABA"), ("bjb", ":", "BJB")):
                if f"{m}_{key}_hi" not in bs:
                    continue   # not proven for this model (bounds.notes says why)
                ax.plot(pops, bs[f"{m}_{key}_hi"].to_numpy(dtype=float), style, color="C3",
                        label=f"{name} upper")
                ax.plot(pops, bs[f"{m}_{key}_lo"].to_numpy(dtype=float), style, color="C2",
                        label=f"{name} lower")
        if n_star:
            ns = float(b.saturation_population)
            if math.isfinite(ns):
                ax.axvline(ns, color="grey", ls="-.", lw=1, label=f"N* = {ns:.3g}")
    ax.set_xlabel("population N")
    ax.set_ylabel(_LABEL[m])
    if curve.class_name:
        ax.set_title(f"class {curve.class_name}")
    ax.legend()
    return ax


#: the most populations at which throughput_curve evaluates the bounds (each
#: is a bounds solve of its own): enough for a smooth line on any screen
_BOUND_POINTS = 256


def _bound_populations(pops, b):
    """The populations at which to draw the bounds: all of ``pops`` when
    there are few, else ``_BOUND_POINTS`` of them spread evenly plus the
    two integers around N* (where ABA's min() has its corner), so a curve of
    10^4 populations does not cost 10^4 bounds solves."""
    pops = np.asarray(pops)
    if len(pops) <= _BOUND_POINTS:
        return pops
    pick = np.linspace(0, len(pops) - 1, _BOUND_POINTS).round().astype(int)
    keep = set(pops[pick].tolist())
    ns = float(getattr(b, "saturation_population", math.nan))
    if math.isfinite(ns):
        keep.update(p for p in (math.floor(ns), math.ceil(ns)) if pops[0] <= p <= pops[-1])
    return np.array(sorted(keep), dtype=pops.dtype)


# ---------------------------------------------------------------------------
# sweep tables
# ---------------------------------------------------------------------------

def _scoped(frame, scope):
    if "scope" in getattr(frame, "columns", ()):
        frame = frame[frame["scope"] == scope]
    if len(frame) == 0:
        raise InvalidValueError(f"the table has no {scope} rows")
    return frame


def _check_x(frame, x, by, hue: bool = True):
    for col in (x, *by):
        if col not in frame.columns:
            raise InvalidValueError(
                f"no column {col!r} in the table (columns: {list(frame.columns)})")
    dup = frame.duplicated(subset=[x, *by])
    if dup.any():
        params = frame.attrs.get("parameters") or []
        other = [p for p in params if p != x and p not in by and frame[p].nunique() > 1]
        raise InvalidValueError(
            f"several rows per {x!r}" + (f" and {', '.join(by)}" if by else "") +
            (f": {', '.join(other)} also vary" if other else "") +
            ("; filter the table or pass hue=" if hue else
             "; filter the table to one value of each (frame.query(...))"))


def utilization(frame, x: str, ax=None, *, stations: Sequence[str] | None = None,
                shade: bool = True, switch_points: bool = True, regions=None):
    """Utilisation of each station (and token pool) against a swept parameter.

    Parameters
    ----------
    frame : DataFrame
        A :func:`qmodels.sweep` table (its station and pool rows are used)
        in which only ``x`` varies.
    x : str
        The swept parameter (a column).
    stations : sequence of str, optional
        Stations to draw (default all but the delay stations, whose U is a
        mean number busy rather than a fraction; name them to draw them).
    shade : bool
        Shade each interval of ``x`` by its bottleneck (the station with the
        largest U, delay stations excluded: the table's ``bottleneck``
        column).
    switch_points : bool
        Mark where the bottleneck moves: between two grid points the two
        utilisations are taken as linear and the crossing is marked.
    regions : BottleneckRegions, optional
        Exact switch points from :func:`qmodels.bottleneck_regions` to mark
        instead of the interpolated ones.

    Returns
    -------
    matplotlib.axes.Axes
        One line per station, one shaded span per bottleneck region, a
        dashed vertical line and a text ``a -> b`` per switch point; the
        switch points are also in ``ax.switch_points`` as ``(x, before,
        after)``.
    """
    if "scope" in getattr(frame, "columns", ()) and (frame["scope"] == "pool").any():
        # token pools compete for the bottleneck like stations (SPAX: the
        # buffer pool hands it to the switch port as slots are added)
        st = frame[frame["scope"].isin(("station", "pool"))]
    else:
        st = _scoped(frame, "station")
    if "U" not in st.columns:
        raise InvalidValueError(
            "the table has no utilisation column 'U' (a bounds sweep gives bounds, not "
            "utilisations): sweep with an analytic method or 'sim', or plot the demands "
            "with qm.plot.sweep(frame, x=..., y='D', scope='station')")
    _check_x(st, x, ["name"], hue=False)
    names = list(dict.fromkeys(st["name"].astype(str)))
    if stations is not None:
        unknown = [s for s in stations if s not in names]
        if unknown:
            raise InvalidValueError(f"no station {unknown[0]!r} in the table (it has {names})")
        shown = list(stations)
    else:
        # a delay's U is its mean number busy (tens for a user population),
        # not a fraction: drawn, it would flatten every queue's line.  The
        # sweep of a Network names them; else a U above 1 (a fraction of one
        # server or of a pool's tokens never is) gives them away
        if "delays" in frame.attrs:
            delays = set(frame.attrs["delays"] or ())
        else:
            top = st.groupby(st["name"].astype(str), observed=True)["U"].max()
            delays = set(top.index[top.to_numpy(dtype=float) > 1 + 1e-9])
        shown = [s for s in names if s not in delays]
    xs = np.sort(st[x].unique())
    piv = st.pivot(index=x, columns="name", values="U").reindex(xs)
    piv.columns = piv.columns.astype(str)
    ax = _axes(ax)
    colors = {}
    for s in shown:
        (line,) = ax.plot(xs, piv[s].to_numpy(dtype=float), marker=".", label=s)
        colors[s] = line.get_color()
    # bottleneck at each grid point
    if "bottleneck" in st.columns:
        bpiv = st.pivot(index=x, columns="name", values="bottleneck").reindex(xs)
        bpiv.columns = bpiv.columns.astype(str)
        winner = [next((s for s in names if bool(bpiv.loc[v, s])), None) for v in xs]
    else:
        winner = [piv.loc[v].astype(float).idxmax() for v in xs]
    found = []
    for i in range(len(xs) - 1):
        a, b = winner[i], winner[i + 1]
        if a is None or b is None or a == b:
            continue
        d0 = float(piv.loc[xs[i], a]) - float(piv.loc[xs[i], b])
        d1 = float(piv.loc[xs[i + 1], a]) - float(piv.loc[xs[i + 1], b])
        t = d0 / (d0 - d1) if d0 != d1 else 0.5
        found.append((float(xs[i] + (xs[i + 1] - xs[i]) * min(max(t, 0.0), 1.0)), a, b))
    if regions is not None:
        found = [(float(sp.value), ", ".join(sp.before), ", ".join(sp.after))
                 for sp in regions.switch_points]
    if shade and len(xs):
        edges = [float(xs[0])] + [f[0] for f in found] + [float(xs[-1])]
        if regions is None:
            who = [winner[0]] + [f[2] for f in found]
        else:
            who = [winner[0]] + [f[2].split(", ")[0] for f in found]
        for (lo, hi), s in zip(zip(edges[:-1], edges[1:]), who):
            if s is not None and hi > lo:
                ax.axvspan(lo, hi, color=colors.get(s, "grey"), alpha=0.12, lw=0)
    if switch_points:
        for v, a, b in found:
            ax.axvline(v, color="grey", ls="--", lw=1)
            ax.annotate(f"{a} \u2192 {b}", (v, 1.0), xycoords=("data", "axes fraction"),
                        rotation=90, va="top", ha="right", fontsize="small")
    ax.switch_points = found
    ax.set_xlabel(_path_label(x))
    ax.set_ylabel(_LABEL["U"])
    ax.legend()
    return ax


def sweep(frame, x: str, y: str = "X", hue: str | None = None, *, scope: str | None = None,
          ax=None, errors: bool = True, **kwargs):
    """Any figure of a :func:`qmodels.sweep` table against a parameter.

    ``frame.pipe(qm.plot.sweep, x="tx.population", y="R", hue="disk.service")``.

    Parameters
    ----------
    frame : DataFrame
    x, y : str
        Columns for the axes.  When ``y_hw`` exists (a simulated sweep) the
        points carry error bars of that half-width (``errors=False``: not).
    hue : str, optional
        One line per value of this column.  Default: one line per ``name``
        when the scope holds several.
    scope : "class" or "station", optional
        Which rows of the table; default ``station`` for ``U``, else
        ``class``.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.plot` / ``errorbar``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if scope is None:
        scope = "station" if y == "U" else "class"
    rows = _scoped(frame, scope)
    if y not in rows.columns:
        raise InvalidValueError(f"no column {y!r} in the table (columns: {list(rows.columns)})")
    if hue is None and "name" in rows.columns and rows["name"].nunique() > 1:
        hue = "name"
    by = [hue] if hue is not None else []
    _check_x(rows, x, by)
    ax = _axes(ax)
    groups = rows.groupby(hue, sort=False, observed=True) if hue is not None else [(None, rows)]
    hw = f"{y}_hw"
    for key, g in groups:
        g = g.sort_values(x)
        label = None if key is None else str(key)
        xv = g[x].to_numpy()
        yv = g[y].to_numpy(dtype=float)
        if errors and hw in g.columns:
            ax.errorbar(xv, yv, yerr=g[hw].to_numpy(dtype=float), marker=".", capsize=2,
                        label=label, **kwargs)
        else:
            ax.plot(xv, yv, marker=".", label=label, **kwargs)
    ax.set_xlabel(_path_label(x))
    ax.set_ylabel(_LABEL.get(y, y))
    if hue is not None:
        ax.legend(title=None if hue == "name" else hue)
    return ax


# ---------------------------------------------------------------------------
# breakdowns
# ---------------------------------------------------------------------------

def response_time_breakdown(obj, ax=None, *, x: str | None = None):
    """Residence time per station, stacked: where the response time goes.

    The residence time of station k per cycle is Q_k / X = V_k R_k (Little's
    law; QSP sec. 3.2.2); the stack adds up to the class response time R.
    With token pools, jobs waiting for a token are at no station: a
    segment ``waiting for <pool>`` (jobs waiting / X, Little again)
    completes the stack (single-class results and sweep tables).

    Parameters
    ----------
    obj : Result, Curve or DataFrame
        A result: one stacked bar per class.  A curve: a stacked area over
        the population n.  A single-class :func:`qmodels.sweep` table with
        ``x``: a stacked area over the swept parameter.
    x : str
        The parameter column (tables only).

    Returns
    -------
    matplotlib.axes.Axes
        Bars (``ax.patches``) or areas (``ax.collections``) labelled by
        station.
    """
    from .results import Curve

    ax = _axes(ax)
    if isinstance(obj, Curve):
        n = np.asarray(obj.population)
        X = np.asarray(obj.throughput, dtype=float)
        keep = X > 0
        res = np.asarray(obj.queue_length, dtype=float)[keep] / X[keep][:, None]
        ax.stackplot(n[keep], res.T, labels=list(obj.station_names))
        ax.set_xlabel("population N")
    elif hasattr(obj, "columns"):
        if x is None:
            raise InvalidValueError("give x= (the swept parameter) to break a table down")
        cls = _scoped(obj, "class")
        if cls["name"].nunique() != 1:
            raise InvalidValueError("the breakdown of a table needs a single-class sweep")
        st = _scoped(obj, "station")
        _check_x(cls, x, [], hue=False)
        xs = np.sort(cls[x].unique())
        Xc = cls.set_index(x)["X"].reindex(xs).to_numpy(dtype=float)
        piv = st.pivot(index=x, columns="name", values="Q").reindex(xs)
        names = [str(s) for s in dict.fromkeys(st["name"].astype(str))]
        piv.columns = piv.columns.astype(str)
        with np.errstate(divide="ignore", invalid="ignore"):
            res = piv[names].to_numpy(dtype=float) / Xc[:, None]
        labels = list(names)
        pools = obj[obj["scope"] == "pool"] if "scope" in obj.columns else obj.iloc[:0]
        if len(pools):
            # jobs waiting for a token are in no station: their time per
            # cycle (Little: waiting / X) completes the stack to R
            wp = pools.pivot(index=x, columns="name", values="Q").reindex(xs)
            wp.columns = wp.columns.astype(str)
            with np.errstate(divide="ignore", invalid="ignore"):
                res = np.hstack([res, wp.to_numpy(dtype=float) / Xc[:, None]])
            labels += [f"waiting for {p}" for p in wp.columns]
        ax.stackplot(xs, np.nan_to_num(res).T, labels=labels)
        ax.set_xlabel(_path_label(x))
    elif hasattr(obj, "network") and hasattr(obj, "queue_length"):
        net = obj.network
        bottom = np.zeros(len(net.classes))
        pos = np.arange(len(net.classes))
        for s in net.station_names:
            h = np.array([float(getattr(obj.Q[s, c], "mean", obj.Q[s, c])) /
                          float(getattr(obj.X[c], "mean", obj.X[c]))
                          if float(getattr(obj.X[c], "mean", obj.X[c])) > 0 else 0.0
                          for c in net.class_names])
            ax.bar(pos, h, bottom=bottom, label=s)
            bottom += h
        for p, waiting in _pool_waiting(obj).items():
            # jobs waiting for a token are in no station (Little: waiting /
            # X per cycle); the solvers report the total, so one class only
            x1 = float(getattr(obj.X[net.class_names[0]], "mean", obj.X[net.class_names[0]]))
            h = np.array([waiting / x1 if x1 > 0 else 0.0])
            ax.bar(pos, h, bottom=bottom, label=f"waiting for {p}")
            bottom += h
        ax.set_xticks(pos, list(net.class_names))
        ax.set_xlabel("class")
    else:
        raise InvalidValueError(
            f"response_time_breakdown takes a Result, a Curve or a sweep table, got "
            f"{type(obj).__name__}")
    ax.set_ylabel("residence time per cycle [s]")
    ax.legend(title="station")
    return ax


def _pool_waiting(res) -> dict:
    """Pool -> mean jobs waiting for a token, for a single-class result
    that reports it (analytic ``info["pools"]``, simulated ``pools``)."""
    if len(res.network.classes) != 1 or not res.network.pools:
        return {}
    sim = getattr(res, "pools", None)
    if isinstance(sim, Mapping) and sim:
        return {p: float(d["Q"].mean) for p, d in sim.items() if "Q" in d}
    info = getattr(res, "info", None)
    pools = info.get("pools") if isinstance(info, Mapping) else None
    if not isinstance(pools, Mapping):
        return {}
    return {p: float(d["waiting"]) for p, d in pools.items()
            if isinstance(d, Mapping) and "waiting" in d}


def energy(obj, ax=None, *, x: Sequence | None = None, xlabel: str | None = None):
    """Energy per transaction.

    An :class:`~qmodels.energy.EnergyReport`: one horizontal bar per device,
    split into the busy part c P_busy U / X = P_busy D and the device's
    share of idle power c P_idle (1 - U) / X (J per transaction, summing to
    ``energy_per_transaction``; E = P x T per state).  A sequence of
    reports with ``x`` (or a mapping x -> report): the energy per
    transaction against x.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    if isinstance(obj, Mapping):
        x, obj = list(obj.keys()), list(obj.values())
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        if x is None or len(x) != len(obj):
            raise InvalidValueError("give x=, one value per report")
        y = [float(r.energy_per_transaction) for r in obj]
        ax.plot(list(x), y, marker="o", label="energy per transaction")
        ax.set_xlabel(xlabel or "parameter")
        ax.set_ylabel("energy per transaction [J]")
        return ax
    if not hasattr(obj, "energy_per_transaction"):
        raise InvalidValueError(
            f"energy takes an EnergyReport (qm.energy), got {type(obj).__name__}")
    per_tx = float(obj.energy_per_transaction)
    total = float(obj.total_power)
    if not (math.isfinite(per_tx) and total > 0):
        raise InvalidValueError(
            f"energy per transaction is {per_tx}: nothing to break down (X = {obj.throughput})")
    devs = list(obj.stations)
    # busy power c P_busy U (a delay: P_busy times the mean number busy)
    busy_w = np.array([(1.0 if math.isinf(float(obj.servers[d])) else float(obj.servers[d]))
                       * float(obj.busy_power[d]) * float(obj.utilization[d]) for d in devs])
    power_w = np.array([float(obj.power[d]) for d in devs])
    busy = per_tx * busy_w / total
    idle = per_tx * (power_w - busy_w) / total
    pos = np.arange(len(devs))
    ax.barh(pos, busy, label="busy")
    ax.barh(pos, idle, left=busy, label="idle share")
    ax.set_yticks(pos, devs)
    ax.set_xlabel("energy per transaction [J]")
    ax.set_title(f"{float(obj.energy_per_transaction):.4g} J per transaction")
    ax.legend()
    return ax


# ---------------------------------------------------------------------------
# analytic against simulated
# ---------------------------------------------------------------------------

def _val(v):
    m = getattr(v, "mean", v)
    return float(m)


def stations(result, ax=None, *, metric: str = "U"):
    """One bar per station of ``metric`` (``U``, ``Q``, ``R`` or ``X``);
    a simulated result's bars carry its confidence intervals.

    A delay station (infinite servers) has no utilisation in [0, 1]: its
    ``U`` is the mean number of jobs it holds, so the ``U`` plot leaves
    delays out and says so in its x label instead of drawing, say, 273
    jobs in service on the scale of a busy fraction."""
    m = _metric(metric)
    if not hasattr(result, m) or not hasattr(result, "network"):
        raise InvalidValueError(
            f"stations takes a solved or simulated result (qm.solve, qm.simulate), got "
            f"{type(result).__name__}" + (" (bounds have no per-station figures)"
                                          if hasattr(result, "throughput_lower") else ""))
    if result.network.is_symbolic:
        raise UnsupportedModelError(
            "a result of a network with sympy symbols holds expressions, not numbers: "
            "plot r.evaluate({symbol: value, ...}) (or solve qm.substitute(net, ...))")
    ax = _axes(ax)
    names = list(result.network.station_names)
    delays = []
    if m == "U":
        from .model import Delay

        delays = [s.name for s in result.network.stations if isinstance(s, Delay)]
        names = [s for s in names if s not in delays]
    vals = [getattr(result, m)[s] for s in names]
    y = np.array([_val(v) for v in vals])
    err = None
    if all(hasattr(v, "half_width") for v in vals):
        err = np.array([v.half_width for v in vals])
    ax.bar(np.arange(len(names)), y, yerr=err, capsize=3, label=getattr(result, "method", ""))
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_ylabel(_LABEL[m])
    if delays:
        ax.set_xlabel(f"station (delays not shown: {', '.join(delays)})")
    return ax


def compare(analytic, simulated, ax=None, *, metric: str = "X", x: str | None = None,
            scope: str | None = None):
    """Analytic figures against simulated ones with the simulator's intervals.

    Parameters
    ----------
    analytic, simulated : Result and SimResult, or two sweep tables
        Results of the same network: one point per station (and class for
        X and R), the analytic value as a marker, the simulated mean with
        its confidence interval as an error bar.  Tables from
        :func:`qmodels.sweep` with ``x``: analytic lines and simulated
        error bars against ``x``, one colour per name.
    metric : "X", "R", "Q" or "U"

    Returns
    -------
    matplotlib.axes.Axes
    """
    m = _metric(metric)
    ax = _axes(ax)
    if hasattr(analytic, "columns"):
        if x is None:
            raise InvalidValueError("give x= to compare two sweep tables")
        scope = scope or ("station" if m == "U" else "class")
        a = _scoped(analytic, scope)
        s = _scoped(simulated, scope)
        for i, (name, g) in enumerate(a.groupby("name", sort=False, observed=True)):
            g = g.sort_values(x)
            ax.plot(g[x], g[m].to_numpy(dtype=float), color=f"C{i}", label=f"{name} analytic")
            h = s[s["name"] == name].sort_values(x)
            if len(h):
                ax.errorbar(h[x], h[m].to_numpy(dtype=float),
                            yerr=h[f"{m}_hw"].to_numpy(dtype=float), fmt="o", color=f"C{i}",
                            capsize=3, label=f"{name} simulated")
        ax.set_xlabel(_path_label(x))
    else:
        net = analytic.network
        names = list(net.station_names)
        if m in ("X", "R"):
            names = list(net.class_names) + names
        pos = np.arange(len(names))
        ya = [_val(getattr(analytic, m)[n]) for n in names]
        est = [getattr(simulated, m)[n] for n in names]
        if not all(hasattr(e, "half_width") for e in est):
            raise InvalidValueError(
                "compare(analytic, simulated): the second result has no confidence "
                f"intervals (method {getattr(simulated, 'method', '?')!r}); pass "
                "qm.simulate(...)'s result")
        ax.plot(pos - 0.1, ya, "s", label=f"analytic ({analytic.method})")
        ax.errorbar(pos + 0.1, [e.mean for e in est], yerr=[e.half_width for e in est],
                    fmt="o", capsize=3, label=f"simulated ({100 * est[0].level:g}% CI)")
        ax.set_xticks(pos, names)
    ax.set_ylabel(_LABEL[m])
    ax.legend()
    return ax


# ---------------------------------------------------------------------------
# sliders: the TPS curve and the utilisations redrawn as parameters move
# ---------------------------------------------------------------------------

def _slider_spec(path, spec):
    """(low, high, step, start) of one slider; a bare (low, high) steps in
    hundredths, and an integer range (servers, population) by 1."""
    if not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3, 4) or not all(
            isinstance(v, (int, float)) and math.isfinite(v) for v in spec):
        raise InvalidValueError(
            f"slider {path!r}: give (low, high), (low, high, step) or (low, high, step, "
            f"start) as finite numbers, got {spec!r}")
    low, high = spec[0], spec[1]
    if not low < high:
        raise InvalidValueError(f"slider {path!r}: low {low!r} must be below high {high!r}")
    integer = all(isinstance(v, int) for v in spec)
    step = spec[2] if len(spec) > 2 else (1 if integer else (high - low) / 100)
    start = spec[3] if len(spec) > 3 else low
    return low, high, step, start, integer


def _widgets():
    """ipywidgets, where it is installed and someone at a Jupyter front end
    can move a slider; else None (a script, a test or a headless notebook
    run gets the static figure).

    A headless run (``jupyter nbconvert --execute``, nbclient, papermill)
    has a kernel but nobody to move a slider, and widget comm traffic can
    stall the executing client until its cell timeout (jupyter/nbclient
    issue #312): such a run is told apart by its cells, sent without
    ``allow_stdin`` (:func:`qmodels._progress.interactive_front_end`).
    ``QMODELS_NO_WIDGETS=1`` in the environment also gives the static
    figure, ``QMODELS_WIDGETS=1`` the sliders in any kernel.
    """
    from ._progress import interactive_front_end

    if not interactive_front_end():
        return None
    try:
        import ipywidgets
    except ImportError:
        return None
    return ipywidgets


def explore(net, sliders: Mapping[str, Sequence], *, figsize=(11, 4)):
    """The throughput curve X(N) with its bounds and N*, and each station's
    utilisation at the class's population, redrawn as sliders move the
    model's parameters.

    Parameters
    ----------
    net : Network
        A single-class closed network (the curve is exact MVA over
        n = 1..N, :func:`throughput_curve`).
    sliders : mapping path -> (low, high[, step[, start]])
        Model parameters by path, as :func:`qmodels.sweep` names them
        (``"tx.population"``, ``"disk.service"``, ``"cpu.servers"``,
        ``"tx.think_time"``); integers give an integer slider.

    Returns
    -------
    An ``ipywidgets.interactive`` (displayed by Jupyter) in a Jupyter
    kernel where ipywidgets is installed; elsewhere (a script, a terminal
    IPython, a kernel without ipywidgets) the same figure drawn once at
    each slider's start value, as a matplotlib Figure.  The figure is the
    same in both cases: the model solved by :func:`qmodels.mva` after
    :func:`qmodels.whatif.apply`.
    """
    from .whatif.paths import apply

    if not isinstance(sliders, Mapping) or not sliders:
        raise InvalidValueError(
            "sliders must map parameter paths to ranges, e.g. {'tx.population': (1, 100)}")
    specs = {p: _slider_spec(p, s) for p, s in sliders.items()}
    apply(net, {p: s[3] for p, s in specs.items()})     # every path is valid, checked now

    def draw(**values):
        import matplotlib.pyplot as plt

        from .analytic.mva import mva

        model = apply(net, {p: values[_key(p)] for p in specs})
        fig, (left, right) = plt.subplots(1, 2, figsize=figsize)
        solved = mva(model, curve=True)    # one solve draws both panels
        throughput_curve(solved, ax=left)
        stations(solved, ax=right)
        right.set_title("utilisation at the population N")
        fig.tight_layout()
        return fig

    def _key(p):
        return p.replace(".", "__")

    widgets = _widgets()
    if widgets is None:
        return draw(**{_key(p): s[3] for p, s in specs.items()})
    controls = {}
    for p, (low, high, step, start, integer) in specs.items():
        cls = widgets.IntSlider if integer else widgets.FloatSlider
        controls[_key(p)] = cls(value=start, min=low, max=high, step=step, description=p,
                                continuous_update=False,
                                style={"description_width": "initial"})
    return widgets.interactive(draw, **controls)
