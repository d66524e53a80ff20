"""One entry point for every solver: ``solve(network, method=...)``.

The method table below is the single place that names the solvers; the
Python API and the ``qmodels`` command share it.  Each entry is
``name -> (module, function, assumptions, requires)``; the module is
imported when the method is first used, so ``import qmodels`` stays light.
A broken import inside a solver surfaces as the ImportError it is, never as
"unknown method".

``requires`` names a check in :mod:`qmodels.analytic.requires` (read on
the network's lowered form): ``None`` when the method can answer, else the
sentence saying which station or class it cannot honour.
``solve(net)`` with no method (``method="auto"``) tries the methods of
:data:`AUTO_ORDER`, most exact first, takes the first whose requirement
holds (and that does not refuse the size of the problem), and says in the
result's notes which method it chose and why the more exact ones were
passed over.
"""

from __future__ import annotations

import functools
import importlib
import math
import warnings
from typing import Callable, NamedTuple

from .errors import InvalidValueError, UnsupportedModelError
from .model import Closed, Network

__all__ = ["solve", "methods", "describe", "solver", "check_options", "METHODS"]


class Method(NamedTuple):
    module: str
    function: str
    assumptions: str
    #: name of the check in qmodels.analytic.requires that qm.solve(net)
    #: runs before choosing this method (None: never chosen automatically)
    requires: str | None = None


#: method name -> where its solver lives and what it assumes
METHODS: dict[str, Method] = {
    "exact": Method(
        "qmodels.analytic.mva", "mva",
        "product form (BCMP): exact MVA for closed classes, Jackson/BCMP for open, "
        "exact mixed solution; class switching by one class per routing chain; refuses "
        "non-Poisson arrivals, non-exponential or "
        "class-dependent FCFS service (fcfs_as_ps=True: the processor-sharing answer, "
        "labelled approximate), binding capacities, pools, mixed priority levels, fork-joins",
        "for_exact"),
    "bounds": Method(
        "qmodels.analytic.bounds", "bounds",
        "asymptotic bounds (any shape), balanced job, geometric and proportional bounds "
        "(product form only), multi-class and token-pool bounds, N*, bottleneck: only bounds "
        "proven for the model"),
    "schweitzer": Method(
        "qmodels.analytic.amva", "schweitzer",
        "Schweitzer-Bard approximate MVA (closed product-form classes, any population; "
        "multi-server and load-dependent stations by marginals estimated around the "
        "approximate mean, Akyildiz & Bolch 1988, or multiserver='seidmann'; a rate that "
        "falls with load only with falling_rates=True)"),
    "linearizer": Method(
        "qmodels.analytic.amva", "linearizer",
        "Linearizer (Chandy-Neuse) approximate MVA (closed, multi-class; stations as "
        "schweitzer, closer to exact)", "for_amva"),
    "qna": Method(
        "qmodels.analytic.qna", "qna",
        "APPROXIMATE: Whitt's Queueing Network Analyzer (1983) for open networks with general "
        "service and arrival shapes (two-moment flows; KLB for one server, Allen-Cunneen for "
        "several; PS and delays as in product form); exact (and labelled so) where every "
        "station is: GI/M/c fed by a renewal stream alone, M/G/1 fed by Poisson alone, "
        "Jackson parts; a correlated (MAP) stream enters as a renewal flow of variability its "
        "asymptotic index of dispersion (Whitt 1982, approximate, noted); no pools, finite "
        "capacities or load-dependent stations", "for_qna"),
    "rqna": Method(
        "qmodels.analytic.rqna", "rqna",
        "APPROXIMATE: Whitt & You's robust queueing network analyzer (2018, 2022) for one open "
        "class at single-server FCFS queues with Markovian routing: each flow described by "
        "its rate and index of dispersion for counts over time (bursty or correlated streams "
        "that QNA's two moments miss), each queue by the robust-queueing workload formula "
        "scaled by the exact PH/PH/1 ratio for a renewal stream of the same variability "
        "(refined=False: the plain analyzer); "
        "exact (and labelled so) where every queue is fed by Poisson flows (M/G/1, Jackson) or "
        "is a GI/M/1 queue fed by the renewal stream alone; a correlated (MAP) stream enters "
        "by its exact IDC function (approximate); "
        "refuses several classes, delays, multi-server, PS/LCFS-PR, priority and "
        "load-dependent stations, pools and finite capacities (method='qna' answers most)",
        "for_rqna"),
    "mva-residual": Method(
        "qmodels.analytic.amva_residual", "mva_residual",
        "APPROXIMATE: Schweitzer MVA with the residual-service correction for FCFS queues with "
        "general service or class-dependent times (Reiser 1979; Bolch et al. 2006, ch. 10), "
        "closed classes; c-server FCFS by Seidmann's split; the fixed point held to U <= 1",
        "for_mva_residual"),
    "marie": Method(
        "qmodels.analytic.marie", "marie",
        "APPROXIMATE: Marie's method (1979/1980; Bolch et al. 2006, sec. 10.1.4) for closed "
        "networks of FCFS queues with general service: each such queue solved as a "
        "lambda(n)/PH/c queue fed by the flow-equivalent of the rest, iterated with a "
        "product-form substitute; c servers, delays, PS/LCFS-PR queues, several classes "
        "(Baynat & Dallery 1996; waiting jobs in random order; classes that share one "
        "cycle of single-server FCFS queues without think time aggregated into one); "
        "single-server FCFS queues, with the exponential FCFS and PS queues and delays "
        "beside them, solved together as one subsystem (their job order and phases in one "
        "chain, Baynat & Dallery 1993) where its chain fits, else in smaller subsystems "
        "merged while they fit; exact for product form, "
        "for one phase-type queue among delays and where one subsystem holds every station "
        "(phase-type shapes as given: the network's own chain); refuses open classes, pools, "
        "binding capacities, priority levels, non-exponential load-dependent stations and "
        "lattices or chains past its size limits", "for_marie"),
    "convolution": Method(
        "qmodels.analytic.convolution", "convolution",
        "normalising constants (Buzen's convolution), single- and multi-class closed; "
        "refuses what exact refuses (fcfs_as_ps=True as there)"),
    "decomposition": Method(
        "qmodels.analytic.decomposition", "decompose",
        "flow-equivalent servers for token pools (held buffers/ports), single closed class",
        "for_decomposition"),
    "ctmc": Method(
        "qmodels.analytic.ctmc", "ctmc",
        "exact CTMC of a small network: finite capacity (blocking, loss), token pools, FCFS "
        "with class-dependent service, priority (prio, prio-pr, several servers) and LCFS-PR "
        "queues, class switching (the job's class in the state), non-exponential service "
        "(a shape per class at a station included) and "
        "non-Poisson (renewal) arrivals as phase-type "
        "distributions whose phase is in the state; exact (and labelled so) for exponential, "
        "Erlang and hyperexponential times (balanced means, given branches or a three-moment "
        "fit) with the open-job truncation "
        "holding at most 1e-9; "
        "APPROXIMATE, the fit and its moments named, for a deterministic time (Erlang-k, k = "
        "20, else 10 or 5 to fit the budget, the answers at k, k/2 and k/4 extrapolated to "
        "scv 0: exact for an M/D/1 mean), lognormal, Pareto, uniform, "
        "empirical (three moments where an acyclic phase-type of at most max_phases phases "
        "has them, else two), each form with its measured envelope; fork-joins (one closed "
        "class or one open class "
        "of Poisson arrivals, exponential, single-server FCFS queues on the branches) exactly "
        "by the chain of queue lengths (open jobs truncated as above); "
        "correlated arrivals given as a Markovian arrival process (qm.MAP: D0, D1; an MMPP) "
        "exactly, its phase in the state carried over each arrival; "
        "refuses a chain over max_states (counted before building; memory estimated before "
        "allocation); the state count in the notes; qm.solve(net) takes it before any "
        "approximation where product form fails and the chain has at most 50,000 states",
        "for_ctmc"),
    "exact-symbolic": Method(
        "qmodels.symbolic.mva", "solve_symbolic",
        "exact single-class MVA in rational expressions of the model's symbols"),
    "priority": Method(
        "qmodels.analytic.priority", "priority",
        "APPROXIMATION for priority queues (prio, prio-pr) with mixed priority levels: "
        "closed networks by the whole network's CTMC where it has at most max_states states "
        "(250,000, a low-variance shape as an Erlang-20, -8 or -4 extrapolated in the "
        "phases; exact for phase-type shapes), else an exact chain "
        "of the priority stations fed by the flow-equivalent server of the rest (small "
        "populations; a deterministic service's Erlang fits extrapolated in the phases), "
        "else Sevcik's shadow server in Schweitzer's approximate MVA; open "
        "networks by exact single-station priority formulas (Cobham; preemptive resume) on "
        "Poisson class flows, a class's immediate returns to a queue merged into one longer "
        "service (Whitt 1983; exact at a preemptive queue)", "for_priority"),
    "forkjoin": Method(
        "qmodels.analytic.forkjoin", "forkjoin",
        "fork-join networks, one class, exponential single-server queues and delays: open "
        "Flatto-Hahn (2 branches, exact) / Nelson-Tantawi (homogeneous M/M/1 branches) or the "
        "independence upper bound; closed an MVA recursion with the fork-join time the mean "
        "maximum of branch times (approximate, exact at N = 1)", "for_forkjoin"),
    "forkjoin-varki": Method(
        "qmodels.analytic.forkjoin_varki", "forkjoin_varki",
        "closed fork-join networks, one class, exponential single-server queues (delays "
        "outside fork-joins): Varki's mean value technique (1999), each fork-join time the "
        "mean of its stage equation and the independence recursion (Varki et al. 2014; "
        "variant='mve': the stage equation alone); approximate, exact at N = 1",
        "for_forkjoin"),
    "forkjoin-pools": Method(
        "qmodels.analytic.forkjoin_pools", "forkjoin_pools",
        "APPROXIMATE: one closed class with one fork-join whose k tasks go down one branch "
        "holding token pools (a burst of packets holding buffer slots): the branch's task rate "
        "by the decomposition, the fork-join as the chain of its tasks (done one at a time in "
        "entry order, the job leaving with its last) fed by the flow-equivalent server of the "
        "product-form rest (Marie's step); refuses several fork-joins, branches or classes and "
        "pools off the branch", "for_forkjoin_pools"),
    "sim": Method(
        "qmodels.sim.api", "simulate",
        "discrete-event simulation with confidence intervals (needs seed=...)"),
}


#: the methods ``solve(net)`` tries, most exact first (an approximation only
#: where the exact method cannot answer: not product form, or too large)
AUTO_ORDER = ("exact", "ctmc", "forkjoin", "priority", "decomposition", "forkjoin-pools",
              "marie", "mva-residual", "rqna", "qna", "linearizer")

#: the methods that solve class switching (the exact one by the chain
#: reduction, :mod:`qmodels.analytic.switching`; the CTMC with each job's
#: class in its state); the others refuse it
CLASS_SWITCHING = ("exact", "ctmc", "sim")

#: options ``qm.solve(net)`` gives a method it chooses (the CTMC within the
#: automatic choice's state budget)
AUTO_OPTIONS = {"ctmc": {"max_states": 50_000}}


#: names other tools and textbooks use for a method here: suggested, never
#: taken silently (``method="mva"`` is exact MVA: ``"exact"``)
SYNONYMS = {
    "mva": "exact", "exact-mva": "exact", "exact_mva": "exact", "product-form": "exact",
    "jackson": "exact", "bcmp": "exact", "aba": "bounds", "bjb": "bounds",
    "amva": "schweitzer", "bard": "schweitzer", "schweitzer-bard": "schweitzer",
    "chandy-neuse": "linearizer", "buzen": "convolution", "fes": "decomposition",
    "markov": "ctmc", "symbolic": "exact-symbolic", "simulation": "sim", "simulate": "sim",
    "des": "sim",
}


def _suggest(method) -> str | None:
    """The method most likely meant by an unknown name: a known synonym,
    else the closest name by :func:`difflib.get_close_matches`."""
    import difflib

    key = str(method).strip().lower()
    if key in METHODS:
        return key
    if key in SYNONYMS:
        return SYNONYMS[key]
    close = difflib.get_close_matches(key, list(METHODS) + list(SYNONYMS), n=1, cutoff=0.6)
    return SYNONYMS.get(close[0], close[0]) if close else None


def methods() -> dict[str, str]:
    """Method names and the assumptions each one makes."""
    return {"auto": "the most exact method that can answer: "
                    + ", then ".join(AUTO_ORDER) + " (qm.solve's default)",
            **{name: m.assumptions for name, m in METHODS.items()}}


def describe() -> dict[str, dict]:
    """Per method, as data: ``exactness`` (what its answers are:
    :data:`qmodels.results.METHOD_LABELS`), ``summary`` (what it solves and
    assumes) and ``envelopes`` (the error measured for it by the validation
    catalogs, :mod:`qmodels.analytic.envelopes`: family (and the form that
    answered, for a method of several), networks, reference, max and mean
    relative X and R errors, the command).  What ``qmodels
    methods`` prints."""
    from .analytic.envelopes import envelopes
    from .results import METHOD_LABELS

    out = {"auto": {"exactness": "the chosen method's", "summary": methods()["auto"],
                    "envelopes": []}}
    measured = envelopes()
    for name, m in METHODS.items():
        out[name] = {
            "exactness": METHOD_LABELS.get(name, ("approximate", ()))[0],
            "summary": m.assumptions,
            "envelopes": [
                {"family": e["family"] + (" (fcfs_as_ps=True)" if e.get("substituted") else "")
                 + (f"; answered by {e['form']}" if e.get("form") else ""),
                 "networks": e["networks"], "reference": e["reference"],
                 "X": dict(e["error"]["X"]), "R": dict(e["error"]["R"]),
                 "command": e["command"]}
                for e in measured if e["method"] == name],
        }
    return out


def solver(method: str) -> Callable:
    """The function behind ``method`` (imports its module on first use)."""
    if not isinstance(method, str):
        raise InvalidValueError(
            f"method must be a method name (a string), got {method!r}; available: "
            f"{', '.join(sorted(METHODS))}")
    try:
        m = METHODS[method]
    except (KeyError, TypeError):
        hint = _suggest(method)
        raise UnsupportedModelError(
            f"unknown method {method!r}{f' (did you mean {hint!r}?)' if hint else ''}; "
            f"available: auto, {', '.join(sorted(METHODS))}"
        ) from None
    return getattr(importlib.import_module(m.module), m.function)


def requirement(method: str) -> Callable | None:
    """The check ``(net) -> str | None`` that ``method`` requires (see
    :mod:`qmodels.analytic.requires`), or None."""
    name = METHODS[method].requires
    if name is None:
        return None
    req = importlib.import_module("qmodels.analytic.requires")
    check = getattr(req, name)
    if method in CLASS_SWITCHING:
        return check
    return lambda net: req.class_switching(net) or check(net)


def choose(network: Network) -> tuple[str, list[tuple[str, str]]]:
    """The first method of :data:`AUTO_ORDER` whose requirement holds, and
    the (method, reason) pairs of those passed over before it; raises
    :class:`~qmodels.errors.UnsupportedModelError` listing every reason
    when none holds."""
    passed: list[tuple[str, str]] = []
    for name in AUTO_ORDER:
        check = requirement(name)
        why = check(network) if check is not None else None
        if why is None:
            return name, passed
        passed.append((name, why))
    raise _none_applies(passed)


def _none_applies(passed) -> UnsupportedModelError:
    return UnsupportedModelError(
        "no analytic method can answer this network: "
        + "; ".join(f"{name}: {why}" for name, why in passed)
        + ". Simulate it: qm.solve(net, method='sim', seed=1)")


def _auto(network: Network, options: dict):
    """``solve(net)`` with no method: :func:`choose`, then solve; a method
    that refuses the problem (its size, or a finer condition than its
    requirement checks), does not take the options given, or answers
    against an operational law (:class:`~qmodels.errors.LawViolationError`)
    passes it on to the next one."""
    from .errors import LawViolationError

    passed: list[tuple[str, str]] = []
    held = None           # a truncated chain's answer, kept if nothing after it answers
    for name in AUTO_ORDER:
        check = requirement(name)
        why = check(network) if check is not None else None
        if why is not None:
            passed.append((name, why))
            continue
        try:
            check_options(name, options)
        except UnsupportedModelError as e:
            passed.append((name, str(e)))
            continue
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                result = solver(name)(network, **{**AUTO_OPTIONS.get(name, {}), **options})
        except (UnsupportedModelError, LawViolationError) as e:
            # the method's own finer refusal (or ProblemTooLargeError), or an
            # answer a law refutes: the next method may answer, and the note
            # says why this one did not
            passed.append((name, str(e)))
            continue
        if result.exactness != "exact" and name in ELSEWHERE:
            with warnings.catch_warnings(record=True) as other_said:
                warnings.simplefilter("always")
                other = _better_elsewhere(network, options, ELSEWHERE[name],
                                          result if _fitted(result) else None)
            if other is not None:
                how = ("answers this network exactly" if other.exactness == "exact" else
                       f"solves the same chain with more phases (Erlang-{_finest_phases(other)} "
                       f"where it had Erlang-{_finest_phases(result)}), extrapolated to the "
                       "shape's scv")
                passed.append((name, f"its answer is approximate ({_why_approximate(result)}) "
                                     f"and {other.method!r} {how}"))
                name, result, said = other.method, other, other_said
        short = _truncation_shortfall(result) if held is None else None
        if short is not None:
            held = (name, result, list(passed), said)
            passed.append((name, short))
            continue
        return _chosen(result, name, passed, said)
    if held is not None:
        name, result, before, said = held
        return _chosen(result, name, before + [(n, w) for n, w in passed[len(before) + 1:]],
                       said, " (its chain is cut at an open-job bound: no later method answers "
                             "this network)")
    raise _none_applies(passed)


def _chosen(result, name: str, passed, said=(), kept: str = "") -> object:
    """The chosen answer with the note that says why, its own method's
    warnings given again (those of the methods passed over are not: their
    answers are not the one returned)."""
    from dataclasses import replace
    for w in said:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    note = f"method chosen by qm.solve: {name!r}{kept}"
    if passed:
        note += " (passed over " + "; ".join(f"{n}: {w}" for n, w in passed) + ")"
    return replace(result, notes=tuple(result.notes) + (note,))


#: the estimated relative shortfall of a truncated chain's mean queue above
#: which qm.solve prefers the next method that answers (see
#: :func:`_truncation_shortfall`)
AUTO_TRUNCATION_SHORTFALL = 0.01


def _truncation_shortfall(result) -> str | None:
    """Why a CTMC answer cut at an open-job bound is passed over, or None:
    when its mean queues may fall short by more than
    :data:`AUTO_TRUNCATION_SHORTFALL` (:func:`qmodels.analytic.ctmc.shortfall`,
    (K + 1) p, exact for one M/M/1/K queue, an estimate for a network), the
    next method that answers is preferred (an M/E2 -> H2 tandem at r = 0.98
    cut at 80 jobs answered R 34.1 against the simulator's 52.0 and QNA's
    52.7), and the chain's answer is kept only if none does."""
    err = getattr(result, "error", None)
    if result.method != "ctmc" or not isinstance(err, dict) or err.get("source") != "truncation":
        return None
    # imported only for a cut chain's answer (it is already loaded then):
    # importing the CTMC's modules for every answer cost `qmodels solve` of
    # a product-form model 60-75 ms
    from .analytic.ctmc import shortfall

    mass, limit = float(err.get("truncation_mass") or 0.0), err.get("open_limit")
    if limit is None or not math.isfinite(float(limit)) or mass <= 0:
        return None       # nothing was cut (capacities bound the open jobs)
    short = shortfall(limit, mass)
    if short <= AUTO_TRUNCATION_SHORTFALL:
        return None
    return (f"its open jobs are cut at {int(limit)}, turning away {mass:.3g} of arrivals, so its "
            f"mean queues may fall short by about {100 * short:.2g} % ((K + 1) p, exact for one "
            "M/M/1/K queue); the chain's answer is kept only if no later method answers")


#: methods after ``key`` in :data:`AUTO_ORDER` whose answer is better than
#: ``key``'s approximate one, each with the form (``info["approximation"]``)
#: in which an approximate answer of theirs is taken where ``key`` fitted a
#: shape (None: only an exact answer).  Exact: the CTMC fits a
#: deterministic, lognormal or Pareto time with phases, while QNA solves an
#: M/G/1 queue fed by Poisson arrivals and a GI/M/c queue fed by a renewal
#: stream exactly (Pollaczek-Khinchine; the GI/M/c transform), and the
#: priority method an M/G/1 priority queue that each of its classes visits
#: alone, once, on a Poisson stream (Cobham 1954; Kleinrock 1976).
#: Refined (taken only where its chains give the capped shape more phases
#: than the CTMC's did, :func:`_finest_phases`): the priority method's
#: whole-chain form solves the network's own
#: chain (as the CTMC does) with a low-variance shape at 20, 8 or 4 phases
#: and extrapolates the answers at k, k/2 and k/4 to the shape's scv
#: (:mod:`qmodels.analytic.priority`), as the CTMC does, but within a
#: budget of a million states where qm.solve gives the CTMC 50,000 (so with
#: more phases): on a low class starved behind a high one at a
#: deterministic priority queue (network 25 of
#: ``priority-closed-starved-det``) the CTMC at k = 5 alone had the low
#: class's X 53 % above the priority method's, which is 0.2 % off the
#: simulator; extrapolated from k = 5, 2 and 1 it is 1.6 % below it
ELSEWHERE = {"ctmc": (("qna", None),
                      ("priority", "the network's own Markov chain (qm.ctmc)"))}


def _fitted(result) -> bool:
    """Whether an answer is approximate because a shape was fitted with
    phases (an assumption that says "(a fit)")."""
    return any("(a fit)" in a for a in result.assumptions)


def _better_elsewhere(network: Network, options: dict, names, fitted) -> object | None:
    """The answer of the first (method, form) of ``names`` whose requirement
    holds, that takes the options and answers exactly, or (where
    ``fitted``, the answer it would replace, fitted a shape) in that form
    from chains with more phases for the shapes held at a cap
    (:func:`_finest_phases`); None if none.  Each method is called once."""
    for name, form in names:
        check = requirement(name)
        if check is not None and check(network) is not None:
            continue
        if fitted is not None and _no_finer(name, network, fitted):
            continue
        try:
            check_options(name, options)
            result = solver(name)(network, **{**AUTO_OPTIONS.get(name, {}), **options})
        except UnsupportedModelError:
            continue
        if result.exactness == "exact" or (
                fitted is not None and form is not None
                and result.info.get("approximation") == form
                and _finest_phases(result) > _finest_phases(fitted)):
            return result
    return None


def _no_finer(name: str, network: Network, fitted) -> bool:
    """Whether ``name`` cannot better a CTMC answer that fitted a shape, so
    that calling it would only solve the same chains again: the priority
    method on a closed network (where its answer is exact only when its
    chain is, the very chain the CTMC fitted) whose fitted shape the CTMC
    already held at as many phases as the priority method's chain ever
    gives it (:data:`qmodels.analytic.priority.CTMC_PHASES`)."""
    if name != "priority" or any(not isinstance(c, Closed) for c in network.classes):
        return False
    from .analytic.priority import CTMC_PHASES

    return _finest_phases(fitted) >= CTMC_PHASES


def _finest_phases(result) -> int:
    """The most phases a fitted low-variance shape had in the chains behind
    an answer (the finest of those extrapolated, else the phase cap; 0 when
    no shape was held at a cap)."""
    ex = result.info.get("extrapolation")
    if ex:
        return int(ex["phases"][0])
    return int(result.info.get("max_phases") or 0) if result.info.get("phase_capped") else 0


def _why_approximate(result) -> str:
    """What made an answer approximate, from its assumptions and warnings
    (a fit, a truncation), in a few words."""
    fits = [a.split(" as ")[0] + " fitted" for a in result.assumptions if "(a fit)" in a]
    return "; ".join(fits + list(result.warnings)) or "labelled approximate"


@functools.lru_cache(maxsize=None)
def _option_names(fn):
    """The keyword options ``fn`` takes, or None when it takes any
    (``**kwargs``) or has no signature; read once per solver."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params[1:]
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def check_options(method: str, options) -> None:
    """Refuse an option the solver of ``method`` does not take, naming it
    and the options it does take (a misspelt ``tol`` must not be dropped
    silently, nor end in a bare TypeError)."""
    if not options:
        return
    names = _option_names(solver(method))
    if names is None:
        return
    unknown = [k for k in options if k not in names]
    if unknown:
        raise UnsupportedModelError(
            f"method {method!r} has no option {unknown[0]!r}; its options: "
            f"{', '.join(names) or 'none'}")


def solve(network: Network, method: str = "auto", **options):
    """Solve ``network`` with ``method`` (see :func:`methods`).

    ``method="auto"`` (the default) picks the most exact method that can
    answer (:data:`AUTO_ORDER`: exact product form, else the decomposition
    for token pools, else approximate MVA where the exact lattice is too
    large) and says which in the result's notes; a network no analytic
    method can honour is an :class:`~qmodels.errors.UnsupportedModelError`
    listing each method's reason.

    ``options`` go to the solver unchanged; ``method="sim"`` needs
    ``seed=...`` exactly as :func:`qmodels.simulate` does.  An option the
    solver does not take is an :class:`~qmodels.errors.UnsupportedModelError`
    naming it.
    """
    if not isinstance(network, Network):
        from .errors import InvalidValueError

        raise InvalidValueError(
            f"solve needs a qmodels Network, got {type(network).__name__}")
    if method == "auto":
        return _auto(network, options)
    check_options(method, options)
    return solver(method)(network, **options)
