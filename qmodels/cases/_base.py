"""What every case study shares: provenance-tagged parameters, the
paper-vs-model table, overrides from the command line, and calibration.

A case study turns one published system measurement into a model.  Its
assumptions live in one frozen dataclass whose fields are declared with
:func:`param`, so each value carries where it comes from (the paper, a data
sheet, the TPC-C specification, an assumption, or calibration).  The case's
``report()`` returns a :class:`CaseReport`: one :class:`Row` per number the
paper reports, with the model's value, the relative error and the row's role:

``fitted``
    the number was used to calibrate a free parameter (at most one third of
    a case's rows);
``derived``
    an input or an identity of the model: the paper's number is itself
    computed from stated inputs (Rpeak = cores x FLOPs x clock), or the
    model's value follows from inputs and fitted rows by construction (a
    ratio that is 1 by construction, the same run as a fitted row, the
    smaller of two fitted ceilings).  Its ``note`` says which identity;
``predicted``
    a measured effect the model was not told.

A row the model cannot reproduce keeps its error and carries a ``miss``
sentence saying why (a paper figure no monotone model can produce, say),
instead of being forced.  A fitted row whose value no longer holds because
parameters were overridden without a refit carries ``stale`` (see
:func:`mark_stale`): it is shown as ``fitted (stale)``, not as a match.

With ``sim=True`` a case whose model is a queueing network puts analytic
and simulated figures side by side in ``validation`` (one dict per
configuration and quantity); a case without one says so in ``sim_status``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._format import fmt, format_table, note_lines
from .._progress import bar as progress_bar
from ..errors import InvalidValueError, UnknownNameError

__all__ = [
    "SOURCE_KINDS", "ROLES", "param", "source_of", "Row", "CaseReport", "with_overrides",
    "fit_parameters", "parameter_table", "mark_stale", "validation_entry", "NO_NETWORK",
]

#: where a parameter value may come from
SOURCE_KINDS = ("paper", "datasheet", "spec", "tpcc", "assumption", "calibrated")
#: a row's role in the paper-vs-model table
ROLES = ("fitted", "predicted", "derived")
#: how much worse (in |relative error|) than at the defaults a fitted row may get under
#: overridden parameters before it is marked stale (:func:`mark_stale`)
STALE_SLACK = 0.005
#: the ``sim_status`` status of a case without a queueing network to simulate
NO_NETWORK = "no network model yet: analytic only"


def param(default, source: str, *, kind: str, unit: str = "") -> Any:
    """A parameters-object field that records where its value comes from.

    Parameters
    ----------
    default
        The value the case uses unless overridden.
    source : str
        The place the value is read from ("paper Table 2", "Intel ARK
        data sheet", "fitted to TPS at 1 ION"), in plain words.
    kind : str
        One of :data:`SOURCE_KINDS`.
    unit : str
        Unit of the value ("s", "B", "B/s", "W", "" for a count).
    """
    if kind not in SOURCE_KINDS:
        raise InvalidValueError(f"param source kind {kind!r} is not one of {SOURCE_KINDS}")
    if isinstance(default, (list, dict, set)):
        raise InvalidValueError("param defaults must be immutable (use a tuple)")
    return field(default=default, metadata={"source": source, "kind": kind, "unit": unit})


def source_of(params, name: str) -> dict:
    """``{"source", "kind", "unit"}`` of the field ``name`` of a parameters object."""
    for f in dataclasses.fields(params):
        if f.name == name:
            return dict(f.metadata)
    raise UnknownNameError(f"{type(params).__name__} has no parameter {name!r}")


def parameter_table(params) -> list[dict]:
    """Every field of a parameters object with its value and provenance."""
    return [
        {"name": f.name, "value": getattr(params, f.name), "unit": f.metadata.get("unit", ""),
         "kind": f.metadata.get("kind", ""), "source": f.metadata.get("source", "")}
        for f in dataclasses.fields(params)
    ]


def _coerce(text: str, current, ftype, name: str):
    """Parse the string ``text`` into the type of the field's current value."""
    try:
        if isinstance(current, bool):
            low = text.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if isinstance(current, int):
            value = float(text)
            if not value.is_integer():
                raise ValueError(text)
            return int(value)
        if isinstance(current, float):
            value = float(text)
            if math.isnan(value):
                raise ValueError(text)
            return value
        if isinstance(current, tuple):
            parsed = json.loads(text) if text.strip().startswith("[") else text.split(",")
            kind = type(current[0]) if current else float
            return tuple(kind(x) for x in parsed)
        if isinstance(current, str):
            return text
    except (ValueError, TypeError, json.JSONDecodeError):
        raise InvalidValueError(
            f"--set {name}={text}: expected a {type(current).__name__} "
            f"like {current!r}") from None
    raise InvalidValueError(f"--set {name}: parameters of type {ftype} cannot be set")


def _check_override(name: str, value, current) -> None:
    """The range checks every case parameter shares, before the case's own
    (its ``Params.__post_init__``): a number is finite and not NaN, a list
    that has values by default is not emptied, and a list's values are
    finite numbers where the default's are numbers."""
    def bad(what):
        return InvalidValueError(f"parameter {name}={value!r}: {what} (default {current!r})")

    if isinstance(current, (int, float)) and not isinstance(current, bool):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise bad("expected a number")
        if not math.isfinite(float(value)):
            raise bad("must be a finite number")
    elif isinstance(current, tuple):
        if not isinstance(value, (tuple, list)):
            raise bad("expected a list")
        if current and not value:
            raise bad("must not be empty")
        if any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in current):
            for x in value:
                if isinstance(x, bool) or not isinstance(x, numbers.Real) \
                        or not math.isfinite(float(x)):
                    raise bad(f"holds {x!r}, not a finite number")


def with_overrides(params, overrides: Mapping[str, Any] | Sequence[str]):
    """A copy of ``params`` with fields replaced.

    ``overrides`` is a mapping of field name to value (strings are parsed into
    the field's type) or a sequence of ``"KEY=VALUE"`` strings, as given to
    ``qmodels case NAME --set KEY=VALUE``.  Unknown names raise
    :class:`~qmodels.errors.UnknownNameError` listing the valid ones.
    """
    if not isinstance(overrides, Mapping):
        pairs = {}
        for item in overrides:
            if "=" not in item:
                raise InvalidValueError(f"--set {item!r}: expected KEY=VALUE")
            key, value = item.split("=", 1)
            pairs[key.strip()] = value
        overrides = pairs
    names = {f.name: f for f in dataclasses.fields(params)}
    hints = typing.get_type_hints(type(params))
    changes = {}
    for key, value in overrides.items():
        if key not in names:
            raise UnknownNameError(
                f"{type(params).__name__} has no parameter {key!r}; "
                f"valid: {', '.join(sorted(names))}")
        current = getattr(params, key)
        if isinstance(value, str) and not isinstance(current, str):
            value = _coerce(value, current, hints.get(key), key)
        _check_override(key, value, current)
        changes[key] = value
    return dataclasses.replace(params, **changes)


@dataclass(frozen=True)
class Row:
    """One reported number held against the model.

    ``rel_error`` is (model - paper) / |paper|.  ``miss`` explains a row
    the model knowingly does not reproduce; a ``derived`` row's ``note``
    names the identity it follows from (required).  ``boolean`` rows hold a
    yes/no finding as 1/0 and are shown as yes/no.  ``stale`` (fitted rows
    only) says why a fitted value no longer holds (:func:`mark_stale`).
    ``sim`` is ``(mean, half_width)`` of the same figure simulated (a case
    run with ``sim=True`` fills it where the row is a network's output).
    """

    quantity: str
    paper: float
    model: float
    role: str = "predicted"
    unit: str = ""
    note: str = ""
    miss: str = ""
    boolean: bool = False
    stale: str = ""
    sim: tuple = ()

    def __post_init__(self):
        if self.role not in ROLES:
            raise InvalidValueError(f"row {self.quantity!r}: role {self.role!r} not in {ROLES}")
        if self.role == "derived" and not self.note:
            raise InvalidValueError(f"row {self.quantity!r}: a derived row needs a note naming "
                                    "the identity it follows from")
        if self.stale and self.role != "fitted":
            raise InvalidValueError(f"row {self.quantity!r}: only a fitted row can be stale")
        if self.sim and (len(self.sim) != 2 or not all(
                isinstance(v, (int, float)) and math.isfinite(v) for v in self.sim)):
            raise InvalidValueError(f"row {self.quantity!r}: sim must be (mean, half_width), "
                                    f"got {self.sim!r}")
        for what in ("paper", "model"):
            v = getattr(self, what)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise InvalidValueError(f"row {self.quantity!r}: {what} value {v!r} is not a "
                                        "finite number")
            object.__setattr__(self, what, float(v))

    @property
    def rel_error(self) -> float:
        if self.paper == 0:
            return 0.0 if self.model == 0 else math.inf
        return (self.model - self.paper) / abs(self.paper)

    def to_dict(self) -> dict:
        d = {"quantity": self.quantity, "paper": self.paper, "model": self.model,
             "rel_error": self.rel_error, "role": self.role}
        if self.unit:
            d["unit"] = self.unit
        if self.note:
            d["note"] = self.note
        if self.miss:
            d["miss"] = self.miss
        if self.boolean:
            d["boolean"] = True
        if self.stale:
            d["stale"] = self.stale
        if self.sim:
            d["sim"] = {"mean": float(self.sim[0]), "half_width": float(self.sim[1])}
        return d

    def shown_role(self) -> str:
        return (self.role + (" (stale)" if self.stale else "")
                + (" (miss)" if self.miss else ""))

    def shown_values(self) -> tuple:
        """(paper, model, rel.err) as the table prints them."""
        if self.boolean:
            yn = {1.0: "yes", 0.0: "no"}
            return (yn.get(self.paper, fmt(self.paper)), yn.get(self.model, fmt(self.model)),
                    "agrees" if self.model == self.paper else "differs")
        return fmt(self.paper), fmt(self.model), f"{100 * self.rel_error:+.1f}%"



@dataclass(frozen=True)
class CaseReport:
    """A case study's paper-vs-model table and whatever else it computed.

    ``extra`` holds case-specific figures that go into :meth:`to_dict` next
    to the rows (SPAX puts its ``bottleneck`` and ``figures`` there);
    ``fitted`` maps each calibrated parameter to its fitted value.
    ``validation`` (with ``sim=True``): analytic against simulated figures,
    dicts made by :func:`validation_entry`; ``sim_status``: what was
    simulated, or :data:`NO_NETWORK`, or "" when nothing was asked.
    """

    case: str
    title: str
    rows: tuple
    params: Any
    fitted: Mapping[str, float] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple = ()
    validation: tuple = ()
    sim_status: str = ""

    def __post_init__(self):
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "validation", tuple(self.validation))
        n_fit = sum(r.role == "fitted" for r in self.rows)
        if 3 * n_fit > len(self.rows):
            raise InvalidValueError(
                f"case {self.case!r}: {n_fit} of {len(self.rows)} rows are fitted; "
                "at most one third may be")

    @property
    def predicted(self) -> tuple:
        return tuple(r for r in self.rows if r.role == "predicted")

    @property
    def derived(self) -> tuple:
        return tuple(r for r in self.rows if r.role == "derived")

    @property
    def counts(self) -> dict:
        """Rows per role, misses (rows of any role with a ``miss``) and stale fits."""
        c = {role: sum(r.role == role for r in self.rows) for role in ROLES}
        c["misses"] = sum(bool(r.miss) for r in self.rows)
        c["stale"] = sum(bool(r.stale) for r in self.rows)
        return c

    def summary(self) -> str:
        """One line: how many rows of each role and how many misses."""
        c = self.counts
        line = (f"{len(self.rows)} rows: {c['fitted']} fitted, {c['predicted']} predicted, "
                f"{c['derived']} derived; {c['misses']} misses")
        if c["stale"]:
            line += (f"; {c['stale']} fitted row(s) stale (parameters overridden, "
                     "not refitted)")
        return line

    @property
    def worst_predicted(self) -> float:
        """The largest |relative error| among predicted rows without a ``miss``."""
        errs = [abs(r.rel_error) for r in self.predicted if not r.miss]
        return max(errs) if errs else 0.0

    def table(self) -> str:
        head = ["quantity", "paper", "model", "rel.err", "role"]
        body = [[r.quantity + (f" [{r.unit}]" if r.unit else ""), *r.shown_values(),
                 r.shown_role()] for r in self.rows]
        if any(r.sim for r in self.rows):
            head.insert(3, "simulated (95 %)")
            for r, b in zip(self.rows, body):
                b.insert(3, f"{fmt(r.sim[0])} ± {fmt(r.sim[1])}" if r.sim else "")
        lines = [f"{self.title}", "", format_table(head, body), "", "summary: " + self.summary()]
        if self.validation:
            lines += ["", "analytic vs simulated (95 % half-widths):", "",
                      format_table(["configuration", "quantity", "analytic", "simulated",
                                    "diff", "agree"],
                                   [[v["configuration"], v["quantity"], fmt(v["analytic"]),
                                     f"{fmt(v['sim']['mean'])} ± {fmt(v['sim']['half_width'])}",
                                     f"{100 * (v['analytic'] / v['sim']['mean'] - 1):+.2f}%"
                                     if v["sim"]["mean"] else "-",
                                     "yes" if v["agree"] else "NO"]
                                    for v in self.validation])]
        if self.sim_status:
            lines += ["", f"simulation: {self.sim_status}"]
        if self.fitted:
            lines.append("")
            lines.append("fitted: " + ", ".join(f"{k} = {fmt(v)}" for k, v in self.fitted.items()))
        misses = [r for r in self.rows if r.miss]
        for r in misses:
            lines.append(f"not reproduced: {r.quantity}: {r.miss}")
        for r in self.rows:
            if r.stale:
                lines.append(f"stale fit: {r.quantity}: {r.stale}")
        for r in self.derived:
            lines.append(f"derived: {r.quantity}: {r.note}")
        for r in self.rows:
            if r.role != "derived" and "assumption:" in r.note:
                lines.append(f"condition assumed: {r.quantity}: "
                             f"{r.note[r.note.index('assumption:') + 11:].strip()}")
        lines += note_lines(self.notes)
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def __repr__(self):
        return self.table()

    def _repr_html_(self):
        import html

        rows = "".join(
            f"<tr><td>{html.escape(r.quantity)}</td>"
            + "".join(f"<td>{v}</td>" for v in r.shown_values())
            + f"<td>{r.shown_role()}</td><td>{html.escape(r.miss or r.stale or r.note)}</td></tr>"
            for r in self.rows)
        return (f"<b>{html.escape(self.title)}</b><table><tr><th>quantity</th><th>paper</th>"
                f"<th>model</th><th>rel. error</th><th>role</th><th>note</th></tr>{rows}"
                f"</table><p>{html.escape(self.summary())}</p>")

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows]).set_index("quantity")

    def to_dict(self) -> dict:
        d = {"case": self.case, "title": self.title,
             "rows": [r.to_dict() for r in self.rows],
             "fitted": dict(self.fitted),
             "parameters": {p["name"]: p for p in parameter_table(self.params)},
             "notes": list(self.notes),
             "summary": self.counts}
        if self.validation or self.sim_status:
            d["validation"] = [dict(v) for v in self.validation]
        if self.sim_status:
            d["sim_status"] = self.sim_status
        d.update(self.extra)
        return _jsonable(d)


def mark_stale(rep: CaseReport, base: CaseReport, overrides: str = "") -> CaseReport:
    """``rep`` with every fitted row marked stale whose |relative error| is
    more than :data:`STALE_SLACK` above the same row's in ``base`` (the
    report at the default parameters, where the fit was made).

    A case that does not refit under overridden parameters (SPAX) keeps the
    defaults' calibrated values; a fitted row whose configuration the
    override changes is then no longer a match and must not be shown as
    one.  Cases that refit keep their fitted rows matched and are unchanged.
    """
    before = {r.quantity: abs(r.rel_error) for r in base.rows if r.role == "fitted"}
    rows = []
    for r in rep.rows:
        if r.role == "fitted" and r.quantity in before and not r.stale:
            was = before[r.quantity]
            if abs(r.rel_error) > was + STALE_SLACK:
                r = dataclasses.replace(r, stale=(
                    f"fitted at the default parameters ({100 * was:.1f}% off there); with "
                    f"{overrides or 'the overrides'} and no refit it is off by "
                    f"{100 * r.rel_error:+.1f}%"))
        rows.append(r)
    return dataclasses.replace(rep, rows=tuple(rows))


def validation_entry(configuration: str, quantity: str, analytic: float, estimate, *,
                     tolerance: float, method: str) -> dict:
    """One analytic-vs-simulated figure for :attr:`CaseReport.validation`.

    ``estimate`` is a simulator estimate (``.mean``, ``.half_width``) or a
    ``(mean, half_width)`` pair; ``tolerance`` is the analytic method's
    stated relative error (0 for an exact method), so the two agree when
    |analytic - mean| <= half_width + tolerance x |analytic|.
    """
    if isinstance(estimate, tuple):
        mean, hw = estimate
    else:
        mean, hw = estimate.mean, estimate.half_width
    mean, hw, analytic = float(mean), float(hw), float(analytic)
    return {"configuration": configuration, "quantity": quantity, "analytic": analytic,
            "sim": {"mean": mean, "half_width": hw}, "method": method,
            "tolerance": float(tolerance),
            "agree": bool(abs(analytic - mean) <= hw + tolerance * abs(analytic))}


def _jsonable(x):
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return x
    try:
        return float(x)
    except (TypeError, ValueError):
        return str(x)


def fit_parameters(residuals: Callable[[Mapping[str, float]], Sequence[float]],
                   start: Mapping[str, float], bounds: Mapping[str, tuple] | None = None,
                   *, log: bool = True, progress: bool | None = None) -> dict[str, float]:
    """Least-squares calibration of named positive parameters.

    ``residuals(values)`` returns the relative errors of the fitted rows for
    the parameter values ``values``; :func:`scipy.optimize.least_squares`
    (trust-region reflective) minimises their sum of squares.  With
    ``log=True`` it searches over log-parameters, which keeps them positive
    and copes with values spanning decades.  ``progress`` (None: in a
    terminal or Jupyter, not in CI) counts the model evaluations on a bar.
    """
    import numpy as np
    from scipy.optimize import least_squares

    names = list(start)
    x0 = np.array([float(start[n]) for n in names])
    lo = np.array([(bounds or {}).get(n, (0 if log else -np.inf, np.inf))[0] for n in names],
                  dtype=float)
    hi = np.array([(bounds or {}).get(n, (0, np.inf))[1] for n in names], dtype=float)
    if log:
        if np.any(x0 <= 0):
            raise InvalidValueError("fit_parameters(log=True) needs positive start values")
        x0, lo, hi = np.log(x0), np.log(np.maximum(lo, 1e-300)), np.log(hi)

    bar = progress_bar(progress, None, "calibrating", unit="eval")

    def f(x):
        vals = np.exp(x) if log else x
        out = np.asarray(residuals(dict(zip(names, vals.tolist()))), dtype=float)
        if bar is not None:
            bar.update(1)
        return out

    try:
        sol = least_squares(f, x0, bounds=(lo, hi), x_scale="jac")
    finally:
        if bar is not None:
            bar.close()
    vals = np.exp(sol.x) if log else sol.x
    return dict(zip(names, (float(v) for v in vals)))
