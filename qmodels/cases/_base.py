"""What every case study shares: provenance-tagged parameters, the
paper-vs-model table, overrides from the command line, calibration, and the
one rule that gives every row its role.

A case study turns one published system measurement into a model.  Its
assumptions live in one frozen dataclass whose fields are declared with
:func:`param`, so each value carries where it comes from (the paper, a data
sheet, the TPC-C specification, an assumption, or calibration); an
assumption the paper leaves open also carries its ``plausible`` values, and
:func:`assumption_reach` shows which rows move between them.  The case's
``report()`` returns a :class:`CaseReport`: one :class:`Row` per number the
paper reports, with the model's value, the relative error and the row's role.

The rule for roles (every case applies it; :data:`ROLE_RULE`)
----------------------------------------------------------------
``fitted``
    a free parameter was chosen to reproduce this number (at most one third
    of a case's rows);
``derived``
    the number follows from inputs and fitted rows by an identity that no
    measurement could refute: a definition the paper itself uses (Rpeak =
    cores x FLOPs x clock, E = P x T, FileSize = BlockSize x NumTasks x
    SegmentCount, BDP = rate x RTT), a unit conversion, a ratio of two fitted
    rows, or the very run of a fitted row read a second time.  The row names
    which (``identity``, one of :data:`IDENTITIES`) and how (``note``);
``predicted``
    everything else the model computes, however simple.  A bottleneck
    argument ("the link binds, so the ratio is the line-rate ratio"), a
    saturation ("the channels saturate, so STREAM is 3/4 of their peak") or a
    capacity ("the cliff is the cache size") is a hypothesis a measurement
    can refute, so its row is predicted, with the argument in its note.

Misses
------
A row the model does not reproduce keeps its error and carries a ``miss``
sentence and a ``blame`` (:data:`BLAMES`), instead of being forced:

``paper``
    the paper contradicts itself; ``quotes`` holds the two places (section
    and words) that cannot both hold;
``assumption``
    the miss rests on an assumption the paper leaves open; ``rests_on`` names
    the parameters (kind ``assumption``), and ``qmodels case NAME
    --assumptions`` shows how far their plausible values move the row;
``model``
    a mechanism the model does not have (a model gap), named in the miss.

A fitted row whose value no longer holds under overridden parameters carries
``stale`` (:func:`mark_stale`): "held at the default fit" when the fits were
held (``--hold-fit``, or a case that never refits), "refitted, still misses"
when the case refitted and the fit could not meet it.  A refit that ends at a
parameter's bound says so by name (:attr:`CaseReport.at_bound`).

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
    "SOURCE_KINDS", "ROLES", "ROLE_RULE", "IDENTITIES", "BLAMES", "param", "source_of", "Row",
    "CaseReport", "with_overrides", "fit_parameters", "FitResult", "parameter_table",
    "assumptions", "mark_stale", "validation_entry", "NO_NETWORK",
]

#: where a parameter value may come from
SOURCE_KINDS = ("paper", "datasheet", "spec", "tpcc", "assumption", "calibrated")
#: a row's role in the paper-vs-model table
ROLES = ("fitted", "predicted", "derived")
#: the one rule every case applies to give a row its role (see the module docstring)
ROLE_RULE = (
    "fitted: a parameter was chosen to reproduce this number; derived: the number follows "
    "from inputs and fitted rows by an identity no measurement could refute (a definition, "
    "a unit conversion, a ratio of fitted rows, a fitted row's own run read again); "
    "predicted: everything else the model computes, however simple")
#: the identities a ``derived`` row may rest on, and what each means
IDENTITIES = {
    "definition": "the paper's own defining formula applied to stated inputs",
    "unit conversion": "a stated number in other units",
    "fitted rows": "a ratio or product of fitted rows and inputs, by a definition",
    "same run": "the very run of a fitted row, which the paper reads a second time",
}
#: what a miss is blamed on
BLAMES = {
    "paper": "paper-inconsistent",
    "assumption": "rests on an assumption",
    "model": "model gap",
}
#: how much worse (in |relative error|) than at the defaults a fitted row may get under
#: overridden parameters before it is marked stale (:func:`mark_stale`)
STALE_SLACK = 0.005
#: the ``sim_status`` status of a case without a queueing network to simulate
NO_NETWORK = "no network model yet: analytic only"


def param(default, source: str, *, kind: str, unit: str = "", plausible: tuple = ()) -> Any:
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
    plausible : tuple
        For an ``assumption`` the paper leaves open: the values it could
        plausibly take (the default among them), which
        :func:`qmodels.cases.assumption_reach` tries in turn.
    """
    if kind not in SOURCE_KINDS:
        raise InvalidValueError(f"param source kind {kind!r} is not one of {SOURCE_KINDS}")
    if isinstance(default, (list, dict, set)):
        raise InvalidValueError("param defaults must be immutable (use a tuple)")
    plausible = tuple(plausible)
    if plausible and kind != "assumption":
        raise InvalidValueError(f"param: only an assumption has plausible values, not a "
                                f"{kind!r} value ({source!r})")
    if plausible and default not in plausible:
        raise InvalidValueError(f"param: the default {default!r} is not among its plausible "
                                f"values {plausible!r}")
    return field(default=default, metadata={"source": source, "kind": kind, "unit": unit,
                                            "plausible": plausible})


def source_of(params, name: str) -> dict:
    """``{"source", "kind", "unit", "plausible"}`` of the field ``name`` of a
    parameters object."""
    for f in dataclasses.fields(params):
        if f.name == name:
            return dict(f.metadata)
    raise UnknownNameError(f"{type(params).__name__} has no parameter {name!r}")


def parameter_table(params) -> list[dict]:
    """Every field of a parameters object with its value and provenance."""
    return [
        {"name": f.name, "value": getattr(params, f.name), "unit": f.metadata.get("unit", ""),
         "kind": f.metadata.get("kind", ""), "source": f.metadata.get("source", ""),
         **({"plausible": f.metadata["plausible"]} if f.metadata.get("plausible") else {})}
        for f in dataclasses.fields(params)
    ]


def assumptions(params) -> list[dict]:
    """The assumptions of a parameters object that carry plausible values
    (:func:`param`): name, value, plausible values, unit and provenance."""
    return [{"name": f.name, "value": getattr(params, f.name),
             "plausible": f.metadata["plausible"], "unit": f.metadata.get("unit", ""),
             "source": f.metadata.get("source", "")}
            for f in dataclasses.fields(params) if f.metadata.get("plausible")]


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

    ``rel_error`` is (model - paper) / |paper|.  ``role`` follows
    :data:`ROLE_RULE`; a ``derived`` row names its ``identity`` (one of
    :data:`IDENTITIES`) and says how in ``note``.  ``miss`` explains a row
    the model knowingly does not reproduce and ``blame`` (one of
    :data:`BLAMES`) says why: ``"paper"`` with the two contradicting places
    in ``quotes``, ``"assumption"`` with the assumptions in ``rests_on``,
    ``"model"`` for a mechanism the model lacks.  ``rests_on`` may also name
    the assumptions a row that does not miss depends on.  ``boolean`` rows
    hold a yes/no finding as 1/0 and are shown as yes/no.  ``stale`` (fitted
    rows only) says why a fitted value no longer holds (:func:`mark_stale`).
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
    identity: str = ""
    blame: str = ""
    quotes: tuple = ()
    rests_on: tuple = ()

    def __post_init__(self):
        q = self.quantity
        if self.role not in ROLES:
            raise InvalidValueError(f"row {q!r}: role {self.role!r} not in {ROLES}")
        if self.role == "derived":
            if not self.note:
                raise InvalidValueError(f"row {q!r}: a derived row needs a note naming "
                                        "the identity it follows from")
            if self.identity not in IDENTITIES:
                raise InvalidValueError(
                    f"row {q!r}: a derived row names its identity, one of "
                    f"{', '.join(IDENTITIES)} (got {self.identity!r}); anything else the "
                    "model computes is predicted")
        elif self.identity:
            raise InvalidValueError(f"row {q!r}: only a derived row has an identity")
        object.__setattr__(self, "quotes", tuple(self.quotes))
        object.__setattr__(self, "rests_on", tuple(self.rests_on))
        if self.miss:
            if self.blame not in BLAMES:
                raise InvalidValueError(
                    f"row {q!r}: a miss says what it is blamed on, one of "
                    f"{', '.join(BLAMES)} (got {self.blame!r})")
            if self.blame == "paper" and (len(self.quotes) < 2 or not all(
                    isinstance(x, str) and x.strip() for x in self.quotes)):
                raise InvalidValueError(f"row {q!r}: a miss blamed on the paper quotes the "
                                        "two places that contradict each other")
            if self.blame == "assumption" and not self.rests_on:
                raise InvalidValueError(f"row {q!r}: a miss blamed on an assumption names it "
                                        "(rests_on)")
        elif self.blame or self.quotes:
            raise InvalidValueError(f"row {q!r}: blame and quotes belong to a miss")
        if self.stale and self.role != "fitted":
            raise InvalidValueError(f"row {q!r}: only a fitted row can be stale")
        if self.sim and (len(self.sim) != 2 or not all(
                isinstance(v, (int, float)) and math.isfinite(v) for v in self.sim)):
            raise InvalidValueError(f"row {q!r}: sim must be (mean, half_width), "
                                    f"got {self.sim!r}")
        for what in ("paper", "model"):
            v = getattr(self, what)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise InvalidValueError(f"row {q!r}: {what} value {v!r} is not a "
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
        for k in ("unit", "identity", "note", "miss", "blame", "stale"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        if self.quotes:
            d["quotes"] = list(self.quotes)
        if self.rests_on:
            d["rests_on"] = list(self.rests_on)
        if self.boolean:
            d["boolean"] = True
        if self.sim:
            d["sim"] = {"mean": float(self.sim[0]), "half_width": float(self.sim[1])}
        return d

    def shown_role(self) -> str:
        return (self.role + (" (stale)" if self.stale else "")
                + (" (miss)" if self.miss else ""))

    def miss_line(self) -> str:
        """The miss as the table prints it: what it is blamed on, then why."""
        head = f"not reproduced [{BLAMES[self.blame]}"
        if self.blame == "assumption":
            head += ": " + ", ".join(self.rests_on)
        text = f"{head}]: {self.quantity}: {self.miss}"
        if self.blame == "paper":
            text += " The paper: " + "; against ".join(self.quotes)
        return text

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
    ``fitted`` maps each parameter calibrated for this report to its fitted
    value, ``held`` each calibrated parameter kept at its default fit
    (``--hold-fit``, a what-if that sets it, or a case that never refits),
    ``at_bound`` each fitted parameter whose fit ended at a bound (name ->
    "lower bound 1e-12", say).  ``validation`` (with ``sim=True``): analytic
    against simulated figures, dicts made by :func:`validation_entry`;
    ``sim_status``: what was simulated, or :data:`NO_NETWORK`, or "" when
    nothing was asked.
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
    held: Mapping[str, float] = field(default_factory=dict)
    at_bound: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "validation", tuple(self.validation))
        n_fit = sum(r.role == "fitted" for r in self.rows)
        if 3 * n_fit > len(self.rows):
            raise InvalidValueError(
                f"case {self.case!r}: {n_fit} of {len(self.rows)} rows are fitted; "
                "at most one third may be")
        if dataclasses.is_dataclass(self.params):
            kinds = {f.name: f.metadata.get("kind") for f in dataclasses.fields(self.params)}
            for r in self.rows:
                for name in r.rests_on:
                    if kinds.get(name) != "assumption":
                        raise InvalidValueError(
                            f"case {self.case!r}, row {r.quantity!r}: rests on {name!r}, "
                            f"which is not an assumption of {type(self.params).__name__}")

    @property
    def predicted(self) -> tuple:
        return tuple(r for r in self.rows if r.role == "predicted")

    @property
    def derived(self) -> tuple:
        return tuple(r for r in self.rows if r.role == "derived")

    @property
    def counts(self) -> dict:
        """Rows per role, misses (rows of any role with a ``miss``), misses per
        blame (``misses_paper``, ``misses_assumption``, ``misses_model``) and
        stale fits."""
        c = {role: sum(r.role == role for r in self.rows) for role in ROLES}
        c["misses"] = sum(bool(r.miss) for r in self.rows)
        for b in BLAMES:
            c[f"misses_{b}"] = sum(r.blame == b for r in self.rows if r.miss)
        c["stale"] = sum(bool(r.stale) for r in self.rows)
        return c

    def summary(self) -> str:
        """One line: how many rows of each role, and the misses by blame."""
        c = self.counts
        line = (f"{len(self.rows)} rows: {c['fitted']} fitted, {c['predicted']} predicted, "
                f"{c['derived']} derived; {c['misses']} misses")
        if c["misses"]:
            line += " (" + ", ".join(f"{c[f'misses_{b}']} {w}" for b, w in BLAMES.items()
                                     if c[f"misses_{b}"]) + ")"
        if c["stale"]:
            line += f"; {c['stale']} fitted row(s) stale"
        return line

    @property
    def worst_predicted(self) -> float:
        """The largest |relative error| among predicted rows without a ``miss``."""
        errs = [abs(r.rel_error) for r in self.predicted if not r.miss]
        return max(errs) if errs else 0.0

    def _assumption_lines(self) -> list:
        """One line per assumption some row rests on: its value, plausible values
        and the rows on it."""
        if not dataclasses.is_dataclass(self.params):
            return []
        meta = {f.name: f.metadata for f in dataclasses.fields(self.params)}
        on: dict = {}
        for r in self.rows:
            for name in r.rests_on:
                on.setdefault(name, []).append(r.quantity)
        out = []
        for name, qs in on.items():
            pl = meta[name].get("plausible", ())
            out.append(f"assumption {name} = {getattr(self.params, name)!r}"
                       + (f" (plausible: {', '.join(repr(v) for v in pl)})" if pl else "")
                       + f": {len(qs)} row(s) rest on it"
                       + (" (qmodels case NAME --assumptions shows what moves)" if pl else ""))
        return out

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
        if self.fitted or self.held:
            lines.append("")
        if self.fitted:
            lines.append("fitted: " + ", ".join(
                f"{k} = {fmt(v)}" + (f" (AT ITS {self.at_bound[k].upper()})"
                                     if k in self.at_bound else "")
                for k, v in self.fitted.items()))
        if self.held:
            lines.append("held at the default fit: " + ", ".join(
                f"{k} = {fmt(v)}" for k, v in self.held.items()))
        for k, where in self.at_bound.items():
            lines.append(f"refit at a bound: {k} ended at its {where}: the fitted rows "
                         "cannot be met inside the parameter's range")
        for r in self.rows:
            if r.miss:
                lines.append(r.miss_line())
        for r in self.rows:
            if r.stale:
                lines.append(f"stale fit: {r.quantity}: {r.stale}")
        for r in self.derived:
            lines.append(f"derived ({r.identity}): {r.quantity}: {r.note}")
        for r in self.rows:
            if r.role != "derived" and "assumption:" in r.note:
                lines.append(f"condition assumed: {r.quantity}: "
                             f"{r.note[r.note.index('assumption:') + 11:].strip()}")
        lines += self._assumption_lines()
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
        if self.held:
            d["held"] = dict(self.held)
        if self.at_bound:
            d["at_bound"] = dict(self.at_bound)
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

    Where ``rep`` refitted (it has ``fitted`` values, not only ``held``
    ones) the row says "refitted, still misses"; where the fits were held
    at their default values (``--hold-fit``, or a case that never refits)
    it says "held at the default fit".
    """
    before = {r.quantity: abs(r.rel_error) for r in base.rows if r.role == "fitted"}
    refitted = bool(rep.fitted)
    rows = []
    for r in rep.rows:
        if r.role == "fitted" and r.quantity in before and not r.stale:
            was = before[r.quantity]
            if abs(r.rel_error) > was + STALE_SLACK:
                said = overrides or "the overrides"
                if refitted:
                    text = (f"refitted, still misses: with {said} the refit leaves it off by "
                            f"{100 * r.rel_error:+.1f}% ({100 * was:.1f}% at the defaults)")
                    bound = [f"{k} at its {v}" for k, v in rep.at_bound.items()]
                    if bound:
                        text += "; the refit ended at a bound: " + ", ".join(bound)
                else:
                    text = (f"held at the default fit ({100 * was:.1f}% off at the defaults); "
                            f"with {said} it is off by {100 * r.rel_error:+.1f}%")
                r = dataclasses.replace(r, stale=text)
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


class FitResult(dict):
    """The fitted values (name -> value), and in ``at_bound`` the names whose
    fit ended at a bound of their range (name -> "lower bound 1e-12")."""

    def __init__(self, values, at_bound=None):
        super().__init__(values)
        self.at_bound = dict(at_bound or {})


def fit_parameters(residuals: Callable[[Mapping[str, float]], Sequence[float]],
                   start: Mapping[str, float], bounds: Mapping[str, tuple] | None = None,
                   *, log: bool = True, progress: bool | None = None) -> FitResult:
    """Least-squares calibration of named positive parameters.

    ``residuals(values)`` returns the relative errors of the fitted rows for
    the parameter values ``values``; :func:`scipy.optimize.least_squares`
    (trust-region reflective) minimises their sum of squares.  With
    ``log=True`` it searches over log-parameters, which keeps them positive
    and copes with values spanning decades.  ``progress`` (None: in a
    terminal or Jupyter, not in CI) counts the model evaluations on a bar.
    Returns a :class:`FitResult`: a value that ends within 1e-4 (relative,
    or of the log range) of a finite bound is named in ``at_bound``, since
    the fit there did not find an interior optimum.
    """
    import numpy as np
    from scipy.optimize import least_squares

    names = list(start)
    x0 = np.array([float(start[n]) for n in names])
    lo = np.array([(bounds or {}).get(n, (0 if log else -np.inf, np.inf))[0] for n in names],
                  dtype=float)
    hi = np.array([(bounds or {}).get(n, (0, np.inf))[1] for n in names], dtype=float)
    lo_raw, hi_raw = lo.copy(), hi.copy()
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
    at = {}
    for i, n in enumerate(names):
        for side, b_raw, b in (("lower", lo_raw[i], lo[i]), ("upper", hi_raw[i], hi[i])):
            if not np.isfinite(b) or (log and b_raw <= 0):
                continue
            width = (hi[i] - lo[i]) if np.isfinite(hi[i] - lo[i]) else 1.0
            if abs(sol.x[i] - b) <= 1e-4 * max(abs(b), width, 1e-12):
                at[n] = f"{side} bound {b_raw:.4g}"
    return FitResult(zip(names, (float(v) for v in vals)), at)
