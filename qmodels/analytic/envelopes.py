"""Measured error envelopes of the approximate methods.

An approximation is only as good as the networks it was measured on.  The
validation catalogs (``python -m validation.envelopes``) solve families of
networks with each approximate method and with a reference (the exact
CTMC, exact MVA, or the simulator with tight intervals) and record, per
family, the *box* of model features the catalog spanned (number of
classes and jobs, service and arrival SCVs, utilisation, ...) and the
largest and mean relative error of each class's throughput X and response
time R over the networks in it.  They are kept in ``envelopes.json``
beside this module, written by that command and read here.

An approximate result is matched against the envelopes of its method: a
network *like* a catalog's is one whose features all lie in the catalog's
box and, for a method with several forms (``priority``: the network's own
chain, the finite-source chain with the flow-equivalent server of the
rest, the shadow server; ``marie``: one subsystem, smaller subsystems, stations alone;
the result's ``info["approximation"]``), that was measured on the answers
of the result's form alone: a catalog answered in several forms has one
envelope per form (its ``form``), each the worst of its own networks, so a
nearly exact form never quotes the error of a rougher one measured beside
it.  An envelope written before that lists the forms that answered its
catalog (``forms``) and holds an answer of any of them; one with neither
key holds every form (:func:`holds_form`).  The result's ``error`` then
holds the worst matching envelope
(family, reference, number of networks, max and mean errors of X and R,
the command that measured it, its form) and a note says it in words; a network
outside every box gets a warning that its error is unmeasured, naming the
nearest family and the features that fall outside.

The features (:func:`features`) are read from the model and, for the
utilisation, from the approximate answer itself (the approximation's own
estimate, as the catalogs recorded it).
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np

from ..model.distributions import is_exponential
from ..model.map import MAP
from ..model.network import Network
from ..model.stations import PRIORITY_DISCIPLINES

__all__ = ["features", "envelopes", "match", "attach", "holds_form", "FEATURES", "ANY_FORM"]

#: the features an envelope's box spans; "workload" is a category, the rest
#: numbers
FEATURES = ("workload", "classes", "population", "stations", "servers", "load_dependent",
            "service_scv_min", "service_scv_max", "arrival_scv", "utilization",
            "priority_levels", "branches", "pools", "class_dependent")


def features(net: Network, result=None) -> dict:
    """The features of ``net`` (and of ``result``'s utilisations) that the
    envelopes are boxes over:

    ``workload`` "open", "closed" or "mixed"; ``classes``; ``population``
    the total closed population (0 for open classes); ``stations`` the
    visited queueing stations (not delays); ``servers`` the most servers at
    one; ``load_dependent`` 0 without a visited load-dependent station, 1
    with rates that never fall as jobs arrive, 2 with a rate that falls
    (thrashing); ``service_scv_min`` / ``service_scv_max`` over the visited
    FCFS and priority queues (1 when there are none or service is
    exponential);
    ``arrival_scv`` the largest inter-arrival SCV of an open class (1:
    Poisson); ``utilization`` the largest per-server utilisation of a queue
    in ``result`` (0 without one); ``priority_levels`` the most priority
    levels meeting at one queue; ``branches`` the most branches of a
    fork-join (0: none); ``pools`` token pools; ``class_dependent`` 1 when
    an FCFS queue serves several classes with different mean service
    times."""
    model, qs = net.lowered.memo("envelopes.features", lambda: _model_features(net))
    f = dict(model)
    f["utilization"] = _utilization(qs, result)
    out = {key: f[key] for key in FEATURES}
    if f["correlated_arrivals"]:
        # (no catalog has a MAP stream: a network with one lies outside
        # every box, :func:`_outside`)
        out["correlated_arrivals"] = f["correlated_arrivals"]
    return out


def _utilization(qs, result) -> float:
    """The largest per-server utilisation of the queues ``qs`` in ``result``
    (0 without a result or a queue)."""
    if result is None or not qs:
        return 0.0
    U = np.asarray(result.station_utilization, float)
    return float(np.max(U[:, qs].sum(axis=0)))


def _model_features(net: Network) -> tuple[dict, list]:
    """The features of the model alone (all but the utilisation), and the
    queues whose utilisation counts: read once per network, those of its
    structure once per family (:meth:`~qmodels.model.lowered.Lowered.family`:
    the points of a sweep that change only numbers)."""
    from ._common import fcfs_as_ps_stations

    f, qs = net.lowered.family("envelopes.structure", lambda: _structure_features(net))
    f = dict(f)
    f["population"] = int(sum(int(c.population) for c in net.closed_classes))
    f["class_dependent"] = int(bool(fcfs_as_ps_stations(net)))
    return f, qs


def _structure_features(net: Network) -> tuple[dict, list]:
    """The features that read only the structure (not the service times,
    populations, think times or arrival rates) and the queues ``qs``."""
    low = net.lowered
    visited = np.asarray(low.visited, bool)
    kinds = low.kind
    queues = [k for k in range(len(kinds)) if visited[k] and kinds[k] != "delay"]
    fcfs = [k for k in queues if low.acts_fcfs[k] or low.discipline[k] in PRIORITY_DISCIPLINES]
    ld = [net.stations[k] for k in queues if kinds[k] == "ld"]
    falls = any(any(float(b) < float(a) for a, b in zip(s.rate_multipliers,
                                                         s.rate_multipliers[1:])) for s in ld)
    scv = [1.0 if is_exponential(low.shapes[i][k]) else float(low.shapes[i][k].scv)
           for k in fcfs for i in range(len(low.class_names))
           if low.visits[i][k] != 0] or [1.0]       # each class's own shape
    arr = [1.0 if is_exponential(getattr(c, "interarrival", None))
           else float(c.interarrival.scv) for c in net.open_classes] or [1.0]
    servers = [int(low.servers[k]) for k in queues if kinds[k] == "queue"] or [1]
    levels = [len(low.levels(k)) for k in queues
              if low.discipline[k] in PRIORITY_DISCIPLINES] or [1]
    branches = [len(s.branches) for s in net.stations if s.kind == "forkjoin"] or [0]
    qs = [k for k in queues if kinds[k] in ("queue", "ld")]
    workload = ("open" if net.is_open else "closed" if net.is_closed else "mixed")
    return {
        "workload": workload,
        "classes": len(net.classes),
        "stations": len(queues),
        "servers": max(servers),
        "load_dependent": 2 if falls else 1 if ld else 0,
        "service_scv_min": min(scv),
        "service_scv_max": max(scv),
        "arrival_scv": max(arr),
        "priority_levels": max(levels),
        "branches": max(branches),
        "pools": len(net.pools),
        "correlated_arrivals": sum(isinstance(getattr(c, "interarrival", None), MAP)
                                   for c in net.open_classes),
    }, qs


@functools.lru_cache(maxsize=1)
def envelopes() -> tuple:
    """The measured envelopes (``envelopes.json``), each a dict with
    ``method``, ``family``, ``reference``, ``networks``, ``command``,
    ``where`` (feature -> [low, high], or a list of categories),
    ``error`` ({"X": {"max", "mean"}, "R": {"max", "mean"}}, relative) and,
    for a method of several forms, ``form`` (or, written before the split
    by form, ``forms``: :func:`holds_form`)."""
    text = resources.files("qmodels.analytic").joinpath("envelopes.json").read_text()
    return tuple(json.loads(text).get("envelopes", ()))


def _outside(env: dict, f: dict, keys=FEATURES) -> list[str]:
    """The features of ``f`` (among ``keys``) that fall outside ``env``'s
    box, as words.  Open classes arriving as a MAP (``correlated_arrivals``
    in ``f``) fall outside every box that does not say it holds them (none
    does: every catalog's streams are renewal)."""
    out = []
    for key in keys:
        if (key == "arrival_scv" and f.get("correlated_arrivals")
                and "correlated_arrivals" not in env["where"]):
            out.append("correlated (MAP) arrivals, which no measured network had")
        box = env["where"].get(key)
        if box is None:
            continue
        v = f[key]
        if key == "workload":
            if v not in box:
                out.append(f"{key} {v} (catalog: {', '.join(box)})")
            continue
        lo, hi = box
        if not (lo - 1e-9 * max(1.0, abs(lo)) <= v <= hi + 1e-9 * max(1.0, abs(hi))):
            out.append(f"{key} {v:.3g} outside {lo:.3g}..{hi:.3g}")
    return out


@functools.lru_cache(maxsize=None)
def _of_method(method: str, substituted: bool) -> tuple:
    """The envelopes of ``method`` (those recorded for the substitute when
    ``substituted``), in file order."""
    return tuple(env for env in envelopes() if env["method"] == method
                 and bool(env.get("substituted", False)) == substituted)


_BEFORE_U = FEATURES[:FEATURES.index("utilization")]
_AFTER_U = FEATURES[FEATURES.index("utilization") + 1:]


#: ``match``'s default form: every envelope of the method, whatever its form
ANY_FORM = object()


def match(method: str, f: dict, substituted: bool = False,
          form=ANY_FORM) -> tuple[list, list]:
    """(envelopes of ``method`` whose box holds ``f``, the others of the
    method each with the features that fall outside); with ``form`` (an
    answer's ``info["approximation"]``, None for a method of one form)
    only those that hold that form (:func:`holds_form`) are inside, the
    others outside with the reason."""
    inside, outside = [], []
    for env in _of_method(method, bool(substituted)):
        why = ([] if form is ANY_FORM else _other_form(env, form)) + _outside(env, f)
        (outside if why else inside).append(env if not why else (env, why))
    return inside, outside


def _env_forms(env: dict) -> list | None:
    """The forms whose answers ``env`` was measured on: its ``form``, or
    the ``forms`` an envelope written before the split by form lists, or
    [None] for the answers that named no form beside others that did
    (``unnamed_form``: a CTMC's exact answers beside its fitted ones);
    None when it names none (a method of one form: it holds every
    answer)."""
    if env.get("form") is not None:
        return [env["form"]]
    if env.get("unnamed_form"):
        return [None]
    return env.get("forms") or None


def holds_form(env: dict, form) -> bool:
    """Whether ``env`` speaks for an answer of ``form`` (the result's
    ``info["approximation"]``; None for a method of one form): its
    ``form`` is that one, or its legacy ``forms`` list it, or it names no
    form."""
    forms = _env_forms(env)
    return forms is None or form in forms


def _other_form(env: dict, form) -> list[str]:
    """Why ``env`` does not speak for an answer of ``form`` (the result's
    ``info["approximation"]``, for a method with several forms): empty when
    it does (:func:`holds_form`)."""
    if holds_form(env, form):
        return []
    return [f"answered by {form or 'another form'}, not by the form measured there "
            f"({'; '.join(f or 'answers naming no form' for f in _env_forms(env))})"]


def _match_network(net: Network, method: str, f: dict, substituted: bool,
                   form=None) -> tuple[list, list]:
    """:func:`match` for a network's features ``f``: the model's features
    are compared with each box once per network family and values of
    those features (a sweep's points share them), the utilisation on every
    call.  An envelope of one form (``form``, or the legacy ``forms``)
    holds an answer of that form only (:func:`_other_form`)."""
    def build():
        return [(env, _other_form(env, form) + _outside(env, f, _BEFORE_U),
                 _outside(env, f, _AFTER_U))
                for env in _of_method(method, bool(substituted))]

    key = ("envelopes.match", method, bool(substituted), form,
           tuple(f[k] for k in _BEFORE_U + _AFTER_U), f.get("correlated_arrivals", 0))
    inside, outside = [], []
    for env, before, after in net.lowered.family(key, build):
        why = before + _outside(env, f, ("utilization",)) + after
        (outside if why else inside).append(env if not why else (env, why))
    return inside, outside


def _worst(envs: list) -> dict:
    return max(envs, key=lambda e: max(e["error"]["X"]["max"], e["error"]["R"]["max"]))


def _pct(x: float) -> str:
    return f"{100 * x:.3g} %"


def attach(result, *, substituted: bool = False) -> None:
    """Set ``result.error`` to the worst measured envelope its network
    falls in, with a note saying it; or a warning that it falls outside
    every measured one (module docstring).  ``substituted``: the answer is
    a product-form method's for the processor-sharing substitute
    (``fcfs_as_ps=True``), whose envelopes are recorded apart."""
    f = features(result.network, result)
    method = result.method
    form = (getattr(result, "info", None) or {}).get("approximation")
    inside, outside = _match_network(result.network, method, f, substituted, form)
    what = f"{method!r}" + (" with fcfs_as_ps=True" if substituted else "")
    if inside:
        env = _worst(inside)
        err = env["error"]
        error = {"validated": True, "family": env["family"], "reference": env["reference"],
                 "networks": env["networks"], "command": env["command"],
                 "X": dict(err["X"]), "R": dict(err["R"]), "where": dict(env["where"])}
        if env.get("form") is not None:
            error["form"] = env["form"]
        # an open class's X is its arrival rate in every answer: only R says anything
        xs = "" if env["where"].get("workload") == ["open"] else (
            f"{_pct(err['X']['max'])} in X (mean {_pct(err['X']['mean'])}) and ")
        answered = f" answered by {env['form']}" if env.get("form") is not None else ""
        note = (f"approximate: on {env['networks']} networks like this ({env['family']}), "
                f"{what}{answered} was off the {env['reference']} by at most {xs}"
                f"{_pct(err['R']['max'])} in R (mean {_pct(err['R']['mean'])}); measured by "
                f"{env['command']}")
        object.__setattr__(result, "error", error)
        object.__setattr__(result, "notes", tuple(result.notes) + (note,))
        return
    if outside:
        env, why = min(outside, key=lambda p: len(p[1]))
        near = f"; nearest measured family: {env['family']} ({'; '.join(why)})"
    else:
        near = "; no envelope of it has been measured"
    warning = (f"approximate, error unmeasured: this network lies outside every validated "
               f"envelope of {what}{near}. Check it with method='sim'")
    object.__setattr__(result, "error", {"validated": False, "features": f})
    object.__setattr__(result, "warnings", tuple(result.warnings) + (warning,))
