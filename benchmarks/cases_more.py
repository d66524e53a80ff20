"""Benchmark cases of issue 22 beyond issue 3's: the methods of issue 19
(fork-join, priority, non-exponential service) against line-solver where
line-solver has them, the token-pool decomposition against the exact CTMC,
and ``qmodels solve`` end to end as a fresh process.

Each case has a small, fixed model (no random draws): ours is a
``qmodels.Network``, line-solver's the same network built with its model
API (``Network``, ``Source``/``Sink``, ``Queue``, ``Delay``, ``Fork``/``Join``,
``OpenClass``/``ClosedClass``, the distributions' ``fit_mean_and_scv``) and
solved by its native ``SolverMVA``/``SolverMAM`` routes
(:class:`benchmarks.peers.LineModels`).  A peer that is not installed is
UNAVAILABLE with its reason; an error of ours propagates, and the runner
turns it into an ERROR row that fails the run.

``cases.py`` merges :data:`TITLES` into its case list and hands these ids
to :func:`run_case` and :func:`ours`.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from . import peers as P
from ._util import HERE, max_rel_diff, row, skipped, timeit

TITLES = {
    "forkjoin-open-K4": "open fork-join, 4 identical exponential branches (rho = 0.6 each): "
                        "qm forkjoin (Nelson-Tantawi) vs line-solver SolverMAM 'fj' (FJ_codes) "
                        "and SolverMVA (Heidelberger-Trivedi)",
    "priority-closed-2c": "closed, 2 classes on a head-of-line priority CPU + disk + terminals: "
                          "qm priority's approximation (max_states=0: the priority station's "
                          "finite-source chain fed by the flow-equivalent server of the rest) "
                          "vs line-solver SolverMVA 'amva' (HOL); qm priority's default, the "
                          "network's own chain (exact), beside them",
    "qna-open-tandem3": "open tandem of 3 FCFS queues, arrivals SCV 2, services SCV 0.5/1/4: "
                        "qm qna vs line-solver SolverMVA 'qna' and SolverMAM 'dec.source'",
    "residual-closed-3": "closed, 3 FCFS queues with service SCV 0.5/1/4 + terminals, N = 12: "
                         "qm mva-residual vs line-solver SolverMVA 'amva'",
    "decomp-vs-ctmc-mem": "memory pool of 2 tokens over a CPU/disk subsystem, 8 terminals: "
                          "qm decomposition vs the exact CTMC (answers and time)",
    "cli-solve-two-tier": "`python -m qmodels solve qmodels/examples/two_tier.yaml`: a fresh "
                          "process, start to exit",
}

#: the goal of the planner issue for ``qmodels solve`` of a small model
CLI_GOAL_S = 0.3
CLI_MODEL = "qmodels/examples/two_tier.yaml"


# ---------------------------------------------------------------------------
# our models
# ---------------------------------------------------------------------------

FJ = {"K": 4, "lam": 1.0, "S": 0.6}
PRIO = {"Z": 1.0, "cpu": 0.02, "disk": 0.03, "N": (6, 4)}
QNA = {"lam": 1.0, "ca2": 2.0, "S": (0.5, 0.7, 0.9), "scv": (0.5, 1.0, 4.0)}
RESID = {"Z": 2.0, "N": 12, "S": (0.05, 0.08, 0.10), "scv": (0.5, 1.0, 4.0)}


def _shape(scv: float):
    """Our service/inter-arrival shape of a given SCV: Erlang-k for 1/k,
    exponential for 1, the balanced-means hyperexponential above 1."""
    import qmodels as qm

    if scv == 1.0:
        return None
    if scv < 1.0:
        k = round(1.0 / scv)
        if abs(1.0 / k - scv) > 1e-12:
            raise ValueError(f"no Erlang of SCV {scv}")
        return qm.Erlang(k)
    return qm.HyperExponential(float(scv))


def network(cid):
    """The qmodels Network of a case (for the CLI case: the model file's path)."""
    import qmodels as qm

    if cid == "forkjoin-open-K4":
        names = [f"b{i}" for i in range(FJ["K"])]
        return qm.Network([qm.ForkJoin("fj", [[n] for n in names])]
                          + [qm.Queue(n, FJ["S"]) for n in names],
                          [qm.Open("jobs", FJ["lam"], visits={"fj": 1})])
    if cid == "priority-closed-2c":
        visits = {"term": 1, "cpu": 1, "disk": 1}
        return qm.Network(
            [qm.Delay("term", PRIO["Z"]), qm.Queue("cpu", PRIO["cpu"], discipline="prio"),
             qm.Queue("disk", PRIO["disk"])],
            [qm.Closed("inter", PRIO["N"][0], visits=visits, priority=0),
             qm.Closed("batch", PRIO["N"][1], visits=visits, priority=1)])
    if cid == "qna-open-tandem3":
        names = ["q1", "q2", "q3"]
        route = {"source": {"q1": 1.0}, "q1": {"q2": 1.0}, "q2": {"q3": 1.0},
                 "q3": {"sink": 1.0}}
        return qm.Network(
            [qm.Queue(n, s, distribution=_shape(c)) for n, s, c in zip(names, QNA["S"],
                                                                       QNA["scv"])],
            [qm.Open("jobs", QNA["lam"], routing=route, interarrival=_shape(QNA["ca2"]))])
    if cid == "residual-closed-3":
        names = ["q1", "q2", "q3"]
        return qm.Network(
            [qm.Delay("term", RESID["Z"])]
            + [qm.Queue(n, s, distribution=_shape(c)) for n, s, c in zip(names, RESID["S"],
                                                                         RESID["scv"])],
            [qm.Closed("tx", RESID["N"], visits={"term": 1, "q1": 1, "q2": 1, "q3": 1})])
    if cid == "decomp-vs-ctmc-mem":
        # validation/catalog.py's memory case: terminals, and a CPU/disk
        # subsystem entered only with one of 2 memory partitions
        st = [qm.Delay("term", 1.0), qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08),
              qm.Delay("out", 0.01)]
        route = {"term": {"cpu": 1.0}, "cpu": {"disk": 1.0},
                 "disk": {"cpu": 0.6, "out": 0.4}, "out": {"term": 1.0}}
        return qm.Network(st, [qm.Closed("tx", 8, routing=route)],
                          pools=[qm.TokenPool("mem", 2, "cpu", "out")])
    if cid == "cli-solve-two-tier":
        return str(HERE.parent / CLI_MODEL)
    raise KeyError(cid)


def _solve(method):
    import qmodels as qm

    def fn(net, **kw):
        return qm.solve(net, method=method, **kw)

    fn.__name__ = f"solve_{method.replace('-', '_')}"
    return fn


def _cli(path):
    """Run ``python -m qmodels solve PATH`` to its end; its stdout (a
    non-zero exit is an error of ours)."""
    from .bench_cli import _env

    # bytecode written and read as in a user's install (bench_cli's
    # docstring): a shell with PYTHONDONTWRITEBYTECODE set compiled
    # qmodels' sources in every run, 0.22 s of the 0.47-0.54 s measured
    p = subprocess.run([sys.executable, "-m", "qmodels", "solve", str(path)],
                       capture_output=True, text=True, cwd=HERE.parent, timeout=600,
                       env=_env())
    if p.returncode != 0:
        raise RuntimeError(f"qmodels solve exited {p.returncode}: {p.stderr.strip()[-400:]}")
    return p.stdout


def ours(cid):
    """(label, fn(network(cid), **kw) -> answer, kw): our implementation of a case."""
    method = {"forkjoin-open-K4": "forkjoin", "priority-closed-2c": "priority",
              "qna-open-tandem3": "qna", "residual-closed-3": "mva-residual",
              "decomp-vs-ctmc-mem": "decomposition"}.get(cid)
    if method is not None:
        from qmodels.dispatch import METHODS, solver

        solver(method)          # its module imports (else: an ERROR of the run)
        m = METHODS[method]
        # priority: its approximation, as line-solver's is one (by default
        # a network this small is answered by its own chain, exact: timed
        # beside it in run_case)
        kw = {"max_states": 0} if method == "priority" else {}
        return (f"qm.solve(method={method!r}{', max_states=0' if kw else ''}) -> "
                f"{m.module}.{m.function}", _solve(method), kw)
    if cid == "cli-solve-two-tier":
        from qmodels.cli import main  # noqa: F401 - the entry point must import

        return "python -m qmodels solve", _cli, {}
    raise KeyError(cid)


def answer(cid, res):
    """The figures a case compares, as a list of arrays: class throughputs
    and per-class queue lengths; the fork-join: the class response time."""
    if cid == "forkjoin-open-K4":
        return [np.asarray(res.class_response_time, dtype=float)]
    if cid == "qna-open-tandem3":
        return [np.asarray(res.class_response_time, dtype=float),
                np.asarray(res.station_queue_length, dtype=float)]
    return [np.asarray(res.class_throughput, dtype=float),
            np.asarray(res.station_queue_length, dtype=float)]


# ---------------------------------------------------------------------------
# running a case
# ---------------------------------------------------------------------------

_LINE: dict = {}


def _line(args):
    """line-solver's model API (one instance per run), or the reason it is not here."""
    if args.peers is not None and "line" not in args.peers:
        return None, None
    if "peer" not in _LINE:
        try:
            _LINE["peer"] = P.LineModels()
        except P.Unavailable as e:
            _LINE["peer"] = e
    peer = _LINE["peer"]
    return (None, str(peer)) if isinstance(peer, Exception) else (peer, None)


#: ours >= 10x the fastest peer (issue 32: every method, these included)
TARGET_PEER = 10.0


def _peer(cid, name, fn, ref, note):
    """A peer row from ``fn() -> (median, min, reps, figures, extra)``,
    with the target of ten times its time."""
    try:
        med, mn, reps, figs, extra = fn()
    except P.Unavailable as e:
        return skipped(cid, name, "peer", f"UNAVAILABLE - {e}")
    except Exception as e:  # noqa: BLE001 - a peer's failure is shown, not ours
        return skipped(cid, name, "peer", f"failed: {type(e).__name__}: {str(e)[:200]}")
    return row(cid, name, "peer", time_s=med, min_s=mn, reps=reps,
               maxrel=max_rel_diff(ref, figs), target_ratio=TARGET_PEER,
               note=", ".join(x for x in (note, extra) if x))


def run_case(cid, args, env):
    if cid == "cli-solve-two-tier":
        return _run_cli(cid, args)
    label, fn, kw = ours(cid)
    net = network(cid)
    med, mn, times, res = timeit(lambda: fn(net, **kw), args.repeat, min_time=args.min_time)
    ref = answer(cid, res)
    rows = [row(cid, "qmodels", "ours", time_s=med, min_s=mn, reps=len(times), note=label)]
    if cid == "decomp-vs-ctmc-mem":
        import qmodels as qm

        cmed, cmn, ctimes, cres = timeit(lambda: qm.solve(net, method="ctmc"),
                                         max(1, min(args.repeat, 5)), budget=args.peer_budget)
        rows.append(row(cid, "qmodels ctmc (exact)", "reference", time_s=cmed, min_s=cmn,
                        reps=len(ctimes), maxrel=max_rel_diff(answer(cid, cres), ref),
                        note=f"{cres.info.get('states', '?')} states; max rel diff = the "
                             "decomposition's error"))
        return rows
    if cid == "priority-closed-2c":
        import qmodels as qm

        cmed, cmn, ctimes, cres = timeit(lambda: qm.solve(net, method="priority"),
                                         max(1, min(args.repeat, 25)), budget=args.peer_budget)
        rows.append(row(cid, "qmodels priority, default (exact chain)", "reference",
                        time_s=cmed, min_s=cmn, reps=len(ctimes),
                        maxrel=max_rel_diff(answer(cid, cres), ref),
                        note=f"the network's own chain, {cres.info.get('states', '?')} states; "
                             "max rel diff = the approximation's error"))
    line, why = _line(args)
    if line is None:
        if why is not None:
            rows.append(skipped(cid, P.LineModels.name, "peer", f"UNAVAILABLE - {why}"))
        return rows
    budget, rep = args.peer_budget, args.repeat
    if cid == "forkjoin-open-K4":
        for solver, note in (("mam", "SolverMAM method 'fj' (FJ_codes; Qiu, Perez & "
                                     "Harrison 2015)"),
                             ("mva", "SolverMVA, fork_join 'default' (Heidelberger & Trivedi "
                                     "1983)")):
            rows.append(_peer(cid, f"{P.LineModels.name} {solver.upper()}",
                              lambda s=solver: line.forkjoin_open(FJ["K"], FJ["lam"], FJ["S"], s,
                                                                  rep, budget),
                              ref, note))
    elif cid == "priority-closed-2c":
        rows.append(_peer(cid, P.LineModels.name,
                          lambda: line.priority_closed(PRIO, rep, budget),
                          ref, "SolverMVA method 'amva' (HOL queue)"))
    elif cid == "qna-open-tandem3":
        for method, solver, note in (("qna", "mva", "SolverMVA method 'qna'"),
                                     ("dec.source", "mam", "SolverMAM method 'dec.source' "
                                      "(full shapes: its hyperexponential's third moment "
                                      "differs from ours)")):
            rows.append(_peer(cid, f"{P.LineModels.name} {method}",
                              lambda s=solver, m=method: line.tandem_open(QNA, s, m, rep, budget),
                              ref, note))
    elif cid == "residual-closed-3":
        rows.append(_peer(cid, P.LineModels.name,
                          lambda: line.closed_nonexp(RESID, rep, budget),
                          ref, "SolverMVA method 'amva'"))
    return rows


def _run_cli(cid, args):
    """``qmodels solve`` as a user runs it: a fresh process each time, wall
    clock start to exit; the interpreter's bare start, ``import numpy`` and
    ``import qmodels`` beside it for scale (references, not peers)."""
    from .bench_cli import _env

    label, fn, _ = ours(cid)
    path = network(cid)
    reps = max(3, min(args.repeat, 11))
    fn(path)                                   # warm the file cache; fails loudly
    med, mn, times, _ = timeit(lambda: fn(path), reps, warmup=0)
    rows = [row(cid, "qmodels", "ours", time_s=med, min_s=mn, reps=len(times),
                target_time=CLI_GOAL_S, note=f"{label} {CLI_MODEL}")]
    for name, code in (("python -c pass", "pass"), ("python -c 'import numpy'", "import numpy"),
                       ("python -c 'import qmodels'", "import qmodels")):
        def run(code=code):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=HERE.parent, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
            return time.perf_counter() - t0
        t = [run() for _ in range(reps)]
        rows.append(row(cid, name, "reference", time_s=float(np.median(t)), min_s=min(t),
                        reps=reps, note="for scale"))
    return rows
