"""From measurements to a model: :func:`estimate_demands`.

Monitoring tools (``sar``, ``iostat``, an APM's per-minute export) give, for
each measurement interval, how many requests of each class completed and how
busy each device was.  The utilisation law holds per interval,

    U_k(t) c_k = sum_c X_c(t) D_ck + B_k + e_k(t)

(Denning & Buzen, "The operational analysis of queueing network models",
ACM Computing Surveys 10(3), 1978; Lazowska et al., *Quantitative System
Performance*, 1984, §3.2), with X_c(t) class c's throughput in interval t,
D_ck its service demand at station k, c_k the station's servers, B_k the
busy fraction that no class explains (background work, the monitor itself)
and e_k(t) the measurement noise.  Across intervals it is a linear
regression of each station's utilisation on the class throughputs: the
regression approach of Rolia & Vetland ("Parameter estimation for
performance models of distributed application systems", CASCON 1995) and of
Zhang, Cherkasova & Smirni ("A regression-based analytic model for dynamic
resource provisioning of multi-tier applications", ICAC 2007), who solve it
by non-negative least squares (a demand cannot be negative), as here
(:func:`scipy.optimize.nnls`, Lawson & Hanson, *Solving Least Squares
Problems*, 1974, ch. 23).

Input frame convention
----------------------
One row per measurement interval; columns

* ``X[<class>]``: completions of the class per second in the interval;
* ``U[<station>]``: the station's utilisation in the interval, a fraction
  0..1 per server (``percent=True`` for 0..100, as ``sar`` and ``iostat``
  print it); for a c-server station the mean over its servers (pass
  ``servers={"cpu": 4}``), so that c U is the mean number of busy servers;
* anything else (a ``time`` column, ``R[...]``) is ignored.

Confidence intervals
--------------------
By the bootstrap over intervals (Efron & Tibshirani, *An Introduction to
the Bootstrap*, 1993, ch. 9, "bootstrapping pairs"): the intervals are
resampled with replacement, the NNLS fit repeated, and the percentile
interval of each estimate taken.  The textbook covariance
sigma^2 (A'A)^-1 of least squares is not used: it assumes an unconstrained
estimate and normal errors, and an NNLS estimate pinned at zero (a class
that does not use a station) has neither; resampling pairs also keeps
errors whose size grows with the load (heteroscedastic, as utilisation
noise is).  It assumes the intervals are independent; for monitoring data
correlated from one interval to the next, ``block=`` resamples runs of
consecutive intervals (the moving-block bootstrap, Künsch, Annals of
Statistics 17(3), 1989).

Collinearity
------------
When classes' throughputs rise and fall together, the regression cannot
tell their demands apart: the estimates become unstable even though their
sum is not.  The condition number of the design matrix (columns scaled to
unit length; Belsley, Kuh & Welsch, *Regression Diagnostics*, 1980, who
call a condition index above 30 strong dependence) is computed and a
:class:`~qmodels.errors.CollinearityWarning` raised above ``max_condition``.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .._validate import check_count, check_real
from ..errors import CollinearityWarning, InvalidValueError, ProblemTooLargeError, UnknownNameError

__all__ = ["estimate_demands", "DemandEstimate"]

_COL = re.compile(r"^\s*([XU])\[([^\]]+)\]\s*$")

#: Most bootstrap work :func:`estimate_demands` accepts: resamples x
#: stations x intervals x (parameters + 1)^2, the cost of the NNLS fits
#: (Lawson & Hanson, *Solving Least Squares Problems*, 1974, ch. 23:
#: O(T p^2) per fit).  Measured on the 2-core reference machine: 10^3
#: resamples of 10^4 intervals, one class and one station with its
#: background (9 x 10^7 units), 1.8 s; the limit is about a minute.  Beyond
#: it the call refuses before resampling and says what to reduce.
MAX_BOOT_WORK = 3e9
#: Most bootstrap resamples (their demands are kept: resamples x C x K floats).
MAX_RESAMPLES = 1_000_000


def _too_many(message: str) -> InvalidValueError:
    """check_count's error for resamples: past the limit it is a budget refusal."""
    if "too large" in message:
        return ProblemTooLargeError(message + ": use fewer resamples (200 give 95 % intervals)")
    return InvalidValueError(message)


def _columns(frame):
    classes, stations = [], []
    for col in frame.columns:
        m = _COL.match(str(col))
        if m:
            names = classes if m[1] == "X" else stations
            if m[2] in names:
                raise InvalidValueError(
                    f"column {m[1]}[{m[2]}] appears twice in the frame: keep one (or "
                    "rename the other)")
            names.append(m[2])
    return classes, stations


def _fit(A, u, background):
    from scipy.optimize import nnls

    M = np.column_stack([A, np.ones(len(A))]) if background else A
    coef, _ = nnls(M, u)
    return coef


@dataclass(frozen=True, repr=False)
class DemandEstimate:
    """Estimated service demands (seconds per request) with confidence
    intervals, from :func:`estimate_demands`.

    Attributes
    ----------
    classes, stations : tuple of str
    demands, lower, upper : ndarray (classes, stations)
        NNLS estimates and the bootstrap percentile interval at ``level``.
    background, background_lower, background_upper : ndarray (stations,)
        Busy fraction (times servers) no class explains (0 when fitted
        without it).
    servers : dict station -> servers
    condition_number : float
        Of the scaled design matrix (see the module docstring).
    residual : ndarray (stations,)
        Root-mean-square residual of each station's fit (utilisation x
        servers).
    throughput : dict class -> mean measured throughput
    intervals, level, resamples : int, float, int
    """

    classes: tuple
    stations: tuple
    demands: Any
    lower: Any
    upper: Any
    background: Any
    background_lower: Any
    background_upper: Any
    servers: Mapping
    condition_number: float
    residual: Any
    throughput: Mapping
    intervals: int
    level: float
    resamples: int
    notes: tuple = field(default=())

    def demand(self, cls: str, station: str) -> float:
        return float(self.demands[self.classes.index(cls), self.stations.index(station)])

    def to_frame(self):
        """A tidy DataFrame: one row per class x station (and a
        ``background`` row per station), columns ``demand``, ``lower``,
        ``upper``."""
        import pandas as pd

        rows = []
        for i, c in enumerate(self.classes):
            for k, s in enumerate(self.stations):
                rows.append({"class": c, "station": s, "demand": float(self.demands[i, k]),
                             "lower": float(self.lower[i, k]),
                             "upper": float(self.upper[i, k])})
        for k, s in enumerate(self.stations):
            rows.append({"class": "(background)", "station": s,
                         "demand": float(self.background[k]),
                         "lower": float(self.background_lower[k]),
                         "upper": float(self.background_upper[k])})
        return pd.DataFrame(rows).set_index(["class", "station"])

    def __repr__(self):
        from .._format import fmt, note_lines

        lines = [f"DemandEstimate: {len(self.classes)} classes x {len(self.stations)} stations "
                 f"from {self.intervals} intervals (NNLS on the utilisation law; "
                 f"{self.level:.0%} bootstrap intervals, {self.resamples} resamples)",
                 f"  condition number {self.condition_number:.3g}"]
        w = max(len(c) for c in (*self.classes, "(background)"))
        for k, s in enumerate(self.stations):
            lines.append(f"  {s}:")
            for i, c in enumerate(self.classes):
                lines.append(f"    {c:{w}s}  D = {fmt(self.demands[i, k]):>10s}  "
                             f"[{fmt(self.lower[i, k])}, {fmt(self.upper[i, k])}]")
            lines.append(f"    {'(background)':{w}s}  B = {fmt(self.background[k]):>10s}  "
                         f"[{fmt(self.background_lower[k])}, {fmt(self.background_upper[k])}]")
        lines += note_lines(self.notes, "  note: ")
        return "\n".join(lines)

    def network(self, *, populations: Mapping | None = None,
                think_times: Mapping | None = None,
                arrival_rates: Mapping | None = None, background: bool = True,
                name: str = "estimated", discipline: str = "ps"):
        """A Network with the estimated demands, ready to solve.

        Parameters
        ----------
        populations : mapping class -> N, optional
            Classes given here are closed (with ``think_times``, default 0).
        arrival_rates : mapping class -> rate, optional
            Open classes' rates; an open class not named gets its mean
            measured throughput (the model at the measured load).
        background : bool
            Model the unexplained busy time B_k (busy servers) as an open
            class ``background`` with rate 1/s and demand B_k seconds at
            station k, so that it keeps B_k / c_k of each server busy, as
            measured (utilisation law).  Stations whose B_k is 0 are not
            visited by it.

        discipline : {"ps", "fcfs"}
            How each station serves (with its ``servers=`` of the
            estimate).  ``"ps"`` (default), processor sharing: a demand
            estimate measures how much work each class brings to a station
            per visit of the system, not the length of each service nor the
            order of serving; under processor sharing the answer depends on
            the demands alone, whatever the service distribution (BCMP type
            2, insensitive), so the model is exactly product form and exact
            MVA solves it.  ``"fcfs"``: first-come-first-served queues with
            one service per visit of length the demand; where the demands
            differ by class that is not product form, and ``qm.solve`` takes
            the CTMC (small models) or an approximation, which says so.
        """
        from ..model import Closed, Network, Open, Queue

        populations = dict(populations or {})
        think_times = dict(think_times or {})
        arrival_rates = dict(arrival_rates or {})
        for m in (populations, think_times, arrival_rates):
            for c in m:
                if c not in self.classes:
                    raise UnknownNameError(
                        f"class {c!r} was not estimated (classes: {', '.join(self.classes)})")
        if discipline not in ("ps", "fcfs"):
            raise InvalidValueError(f"discipline must be 'ps' or 'fcfs', got {discipline!r}")
        stations = [Queue(s, 0.0, servers=int(self.servers.get(s, 1)), discipline=discipline)
                    for s in self.stations]
        classes = []
        for i, c in enumerate(self.classes):
            d = {s: float(self.demands[i, k]) for k, s in enumerate(self.stations)}
            if c in populations:
                classes.append(Closed(c, int(populations[c]),
                                      think_time=float(think_times.get(c, 0.0)), demands=d))
            else:
                classes.append(Open(c, float(arrival_rates.get(c, self.throughput[c])),
                                    demands=d))
        if background and np.any(self.background > 0):
            if "background" in self.classes:
                raise InvalidValueError(
                    "a class is named 'background'; pass background=False")
            classes.append(Open("background", 1.0, demands={
                s: float(self.background[k]) for k, s in enumerate(self.stations)}))
        return Network(stations, classes, name=name)


def _read(frame, classes, stations, servers, percent):
    """The frame's throughputs (intervals x classes) and busy servers
    (intervals x stations), checked; see :func:`estimate_demands`."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise InvalidValueError(f"estimate_demands needs a pandas DataFrame, got "
                                f"{type(frame).__name__}")
    all_c, all_s = _columns(frame)
    classes = list(classes) if classes is not None else all_c
    stations = list(stations) if stations is not None else all_s
    for names, have, what in ((classes, all_c, "X"), (stations, all_s, "U")):
        if not names:
            raise InvalidValueError(
                f"no {what}[...] columns: the frame needs X[<class>] throughput and "
                "U[<station>] utilisation columns (got "
                f"{', '.join(map(str, frame.columns)) or 'none'})")
        for n in names:
            if n not in have:
                raise UnknownNameError(f"no column {what}[{n}] in the frame")
    servers = dict(servers or {})
    for s, c in servers.items():
        if s not in stations:
            raise UnknownNameError(f"servers: no station {s!r} (stations: {', '.join(stations)})")
        check_count(c, f"servers[{s!r}]", minimum=1, maximum=2**31)

    for what, names in (("X", classes), ("U", stations)):
        seen = set()
        for n in names:
            if n in seen:
                raise InvalidValueError(f"{what}[{n}] is listed twice in "
                                        f"{'classes' if what == 'X' else 'stations'}=")
            seen.add(n)
    cols = {}
    for col in frame.columns:
        m = _COL.match(str(col))
        if m:
            cols[f"{m[1]}[{m[2]}]"] = col

    def column(name):
        v = pd.to_numeric(frame[cols[name]], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(v) | (v < 0))
        if bad.size:
            raise InvalidValueError(
                f"column {name!r}, row {frame.index[bad[0]]!r}: "
                f"{frame[cols[name]].iloc[bad[0]]!r} "
                "is not a finite non-negative number")
        return v

    A = np.column_stack([column(f"X[{c}]") for c in classes])
    Uraw = np.column_stack([column(f"U[{s}]") for s in stations])
    if percent:
        Uraw = Uraw / 100.0
    over = np.argwhere(Uraw > 1.0 + 1e-9)
    if over.size:
        t, k = over[0]
        raise InvalidValueError(
            f"column 'U[{stations[k]}]', row {frame.index[t]!r}: utilisation {Uraw[t, k]:g} > 1 "
            "per server" + ("" if percent else " (in percent? pass percent=True)"))
    c_k = np.array([float(servers.get(s, 1)) for s in stations])
    Ubusy = Uraw * c_k
    return classes, stations, A, Ubusy, c_k


def estimate_demands(frame, *, classes=None, stations=None, servers: Mapping | None = None,
                     background: bool = True, percent: bool = False, level: float = 0.95,
                     resamples: int = 1000, block: int = 1, seed=0,
                     max_condition: float = 30.0) -> DemandEstimate:
    """Per-class service demands from per-interval throughputs and
    utilisations (the utilisation law solved by NNLS regression).

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per interval, columns ``X[<class>]`` (per second) and
        ``U[<station>]`` (see the module docstring).
    classes, stations : list of str, optional
        Which to use (default: every ``X[...]`` and ``U[...]`` column).
    servers : mapping station -> servers, optional
        For multi-server stations (``U`` is then per server).
    background : bool
        Fit a non-negative constant B_k per station (busy time no class
        explains); without it the regression goes through the origin.
    percent : bool
        ``U`` columns in percent (0..100).
    level : float
        Confidence level of the bootstrap intervals.
    resamples : int
        Bootstrap resamples (>= 100).
    block : int
        Length of the blocks of consecutive intervals resampled together
        (1: intervals independent).
    seed : int
        Seed of the resampling (the same seed gives the same intervals).
    max_condition : float
        Warn (:class:`~qmodels.errors.CollinearityWarning`) when the scaled
        design matrix's condition number exceeds this.

    Returns
    -------
    DemandEstimate

    Raises
    ------
    InvalidValueError
        No ``X[...]`` or ``U[...]`` columns, a missing, negative or
        non-finite value (named by column and row), fewer intervals than
        parameters, a utilisation above 1 per server.

    Examples
    --------
    >>> import pandas as pd, qmodels as qm
    >>> df = pd.DataFrame({"X[a]": [1.0, 2.0, 3.0, 4.0], "X[b]": [2.0, 1.0, 3.0, 1.0],
    ...                    "U[cpu]": [0.04, 0.035, 0.075, 0.055]})
    >>> est = qm.estimate_demands(df, background=False, resamples=200)
    >>> [round(est.demand(c, "cpu"), 6) for c in ("a", "b")]   # 0.01 a + 0.015 b
    [0.01, 0.015]
    """
    level = check_real(level, "estimate_demands: level")
    if not 0 < level < 1:
        raise InvalidValueError(f"estimate_demands: level must be in (0, 1), got {level!r}")
    resamples = check_count(resamples, "estimate_demands: resamples", minimum=100,
                            maximum=MAX_RESAMPLES, error=_too_many)
    block = check_count(block, "estimate_demands: block", minimum=1)
    if seed is not None:
        seed = check_count(seed, "estimate_demands: seed", minimum=0)
    classes, stations, A, Ubusy, c_k = _read(frame, classes, stations, servers, percent)
    T, C = A.shape
    p = C + (1 if background else 0)
    if T < p + 2:
        raise InvalidValueError(
            f"{T} intervals for {p} parameters per station: at least {p + 2} are needed")
    if block > T:
        raise InvalidValueError(
            f"estimate_demands: block = {block} is longer than the {T} intervals: a block "
            "must fit in the data (block=1 for independent intervals)")
    work = float(resamples) * len(stations) * T * (p + 1) ** 2
    if work > MAX_BOOT_WORK:
        raise ProblemTooLargeError(
            f"estimate_demands: {resamples} resamples of {T} intervals x {len(stations)} "
            f"station(s) x {p} parameter(s) need about {work:.3g} work units (limit "
            f"{MAX_BOOT_WORK:.0e}, about a minute): use fewer resamples (200 give 95 % "
            "intervals), or aggregate consecutive intervals (their means obey the same "
            "utilisation law)")

    # collinearity of the design (columns scaled to unit length)
    M = np.column_stack([A, np.ones(T)]) if background else A
    norms = np.linalg.norm(M, axis=0)
    if np.any(norms == 0):
        dead = [classes[i] for i in np.flatnonzero(norms[:C] == 0)]
        raise InvalidValueError(
            f"class {dead[0]!r} has zero throughput in every interval: its demands are "
            "not identifiable")
    cond = float(np.linalg.cond(M / norms))
    notes = []
    if not cond <= max_condition:
        warnings.warn(CollinearityWarning(
            f"the class throughputs are nearly collinear (condition number {cond:.3g} > "
            f"{max_condition:g}, Belsley-Kuh-Welsch): the per-class demands are poorly "
            "determined (wide intervals) though their weighted sum is not; measure intervals "
            "where the classes' mix varies"), stacklevel=2)
        notes.append(f"collinear classes: condition number {cond:.3g}")

    D = np.zeros((C, len(stations)))
    B = np.zeros(len(stations))
    res = np.zeros(len(stations))
    for k in range(len(stations)):
        coef = _fit(A, Ubusy[:, k], background)
        D[:, k] = coef[:C]
        B[k] = coef[C] if background else 0.0
        pred = A @ D[:, k] + B[k]
        res[k] = float(np.sqrt(np.mean((Ubusy[:, k] - pred) ** 2)))

    # bootstrap over intervals (moving blocks of length `block`)
    rng = np.random.default_rng(seed)
    nblocks = int(np.ceil(T / block))
    boot_D = np.empty((resamples, C, len(stations)))
    boot_B = np.zeros((resamples, len(stations)))
    for b in range(resamples):
        starts = rng.integers(0, T - block + 1, size=nblocks)
        idx = (starts[:, None] + np.arange(block)[None, :]).ravel()[:T]
        Ab, Ub = A[idx], Ubusy[idx]
        for k in range(len(stations)):
            coef = _fit(Ab, Ub[:, k], background)
            boot_D[b, :, k] = coef[:C]
            if background:
                boot_B[b, k] = coef[C]
    a = (1 - level) / 2
    lo, hi = np.quantile(boot_D, [a, 1 - a], axis=0)
    blo, bhi = np.quantile(boot_B, [a, 1 - a], axis=0)
    return DemandEstimate(
        classes=tuple(classes), stations=tuple(stations), demands=D, lower=lo, upper=hi,
        background=B, background_lower=blo, background_upper=bhi,
        servers={s: int(c) for s, c in zip(stations, c_k)}, condition_number=cond,
        residual=res, throughput={c: float(A[:, i].mean()) for i, c in enumerate(classes)},
        intervals=T, level=level, resamples=int(resamples), notes=tuple(notes))
