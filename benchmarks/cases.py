"""The benchmark cases of issue 3: models (fixed seeds), our solvers, the peers.

Every model is generated from ``numpy.random.default_rng(SEED + i)``, so every
run, every machine and every peer sees the same numbers.  All stations are
single-server fixed-rate queues with visit ratio 1 (service time = demand);
each class has a think time.  Peers get exactly ``net.demands``, the
populations and the think times of the qmodels ``Network`` that our solver
gets.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import peers as P
from ._util import HERE, fmt_time, max_rel_diff, row, skipped, timeit

SEED = 20240611
TOL = 1e-6            # Schweitzer stopping tolerance given to every implementation
# the interpreted peers loop over this many configurations of the batch; their
# time is multiplied up to the whole batch
BATCH_PEER_CONFIGS = {"line": 200, "octave": 100}

TITLES = {
    "mva1-K50-N1000": "exact single-class MVA, K=50 stations, N=1000",
    "mva1-K100-N10000": "exact single-class MVA, K=100 stations, N=10000",
    "mvaC-K10-N30x3": "exact multi-class MVA, K=10, 3 classes, N=(30,30,30)",
    "schweitzer-K100-N200x5": f"Bard-Schweitzer, K=100, 5 classes of 200, tol={TOL:g}",
    "batch-B10000-K20-N200": "batched exact single-class MVA, 10,000 configurations, K=20, N=200",
    "multiserver-c8-N90": "one 8-server station (S=4) with think time Z=10, N=90: "
                          "Octave's multi-server recursion vs ours",
    "convolution-N1000": "normalising constant at N=1000, 5 queues S=(1..5) s: "
                         "Octave's qncsconv vs ours (overflow check)",
    "bounds-K50-N1000": "single-class bounds, K=50, N=1000, Z=1: qm bounds (ABA, BJB, GB, PB, "
                        "N*, bottleneck) vs Octave qncsaba+qncsbsb+qncsgb+qncspb and "
                        "line-solver ABA + geometric (pfqn_xzaba*, pfqn_xzgsb*)",
    "sim-parallel-scaling": "qm.simulate(..., workers=k): replications on 1, 2 and every "
                            "core, speed-up and efficiency (benchmarks/bench_sim_parallel.py)",
}
CASE_IDS = list(TITLES)
# issue 22: issue 19's methods against line-solver's model API, the decomposition
# against the CTMC, `qmodels solve` end to end (benchmarks/cases_more.py)
from . import cases_more as _more  # noqa: E402

TITLES.update(_more.TITLES)
CASE_IDS += list(_more.TITLES)

TARGET_PEER = 10.0          # ours >= 10x the fastest peer (issue 3)
TARGET_C = 1.0 / 3.0        # ours within 3x of the C loop
TARGET_BATCH_S = 1.0        # 10,000 configurations under one second


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------

def _rng(cid):
    return np.random.default_rng(SEED + CASE_IDS.index(cid))


def network(D, N, Z):
    """A qmodels Network: K single-server queues, one closed class per row of D.

    Processor-sharing queues: the peers' MVA solves the product-form network,
    whose class-dependent demands hold at PS (or at FCFS with one rate for
    every class, which random rows do not give); qmodels refuses FCFS with
    class-dependent service as product form (it is not)."""
    import qmodels as qm

    D = np.atleast_2d(np.asarray(D, dtype=float))
    C, K = D.shape
    names = [f"q{k}" for k in range(K)]
    stations = [qm.Queue(n, 1.0, discipline="ps") for n in names]
    classes = [
        qm.Closed(f"c{c}", int(N[c]), demands=dict(zip(names, map(float, D[c]))),
                  think_time=float(Z[c]))
        for c in range(C)
    ]
    return qm.Network(stations, classes)


def model(cid):
    """(D (C, K), N (C,), Z (C,)) of a case, or for the batch (D (B, K), Z (B,), N)."""
    rng = _rng(cid)
    if cid == "mva1-K50-N1000":
        return rng.uniform(0.005, 0.05, (1, 50)), np.array([1000]), np.array([1.0])
    if cid == "mva1-K100-N10000":
        return rng.uniform(0.005, 0.05, (1, 100)), np.array([10000]), np.array([1.0])
    if cid == "mvaC-K10-N30x3":
        return rng.uniform(0.005, 0.05, (3, 10)), np.array([30, 30, 30]), np.array([1.0, 2.0, 0.5])
    if cid == "schweitzer-K100-N200x5":
        return rng.uniform(0.005, 0.05, (5, 100)), np.full(5, 200), rng.uniform(0.5, 2.0, 5)
    if cid == "batch-B10000-K20-N200":
        return rng.uniform(0.005, 0.05, (10000, 20)), rng.uniform(0.0, 2.0, 10000), 200
    if cid == "bounds-K50-N1000":
        return rng.uniform(0.005, 0.05, (1, 50)), np.array([1000]), np.array([1.0])
    raise KeyError(cid)


# ---------------------------------------------------------------------------
# our solvers: one that cannot be imported or called is an error of the run
# (a moved module once made these cases skip our solvers silently)
# ---------------------------------------------------------------------------

def _attr(module, name):
    """``module.name``; an ImportError or AttributeError propagates (the
    run reports it as an ERROR row and exits non-zero)."""
    return getattr(importlib.import_module(module), name)


def _kw(fn, candidates, value):
    """{name: value} for the first of ``candidates`` that ``fn`` accepts."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    for c in candidates:
        if c in params:
            return {c: value}
    return {}


def ours(cid):
    """(label, fn(net or arrays) -> answer, extractor) for a case."""
    if cid in _more.TITLES:
        return _more.ours(cid)
    if cid.startswith("mva1"):
        return "qmodels.analytic.mva.mva_single", _attr("qmodels.analytic.mva", "mva_single"), {}
    if cid.startswith("mvaC"):
        return ("qmodels.analytic.multiclass.solve_exact",
                _attr("qmodels.analytic.multiclass", "solve_exact"), {})
    if cid.startswith("schweitzer"):
        fn = _attr("qmodels.analytic.amva", "schweitzer")
        kw = _kw(fn, ("tol", "tolerance", "rtol"), TOL)
        kw.update(_kw(fn, ("max_iter", "maxiter", "iter_max", "max_iterations"), 100000))
        return "qmodels.analytic.amva.schweitzer", fn, kw
    if cid.startswith("batch"):
        return "qmodels.analytic.batch.mva_batch", _attr("qmodels.analytic.batch", "mva_batch"), {}
    if cid.startswith("bounds"):
        return "qmodels.analytic.bounds.bounds", _attr("qmodels.analytic.bounds", "bounds"), {}
    raise KeyError(cid)


def _answer(res):
    """(X (classes,), Q (classes, stations)) from a Result."""
    return np.asarray(res.class_throughput, dtype=float), np.asarray(res.station_queue_length,
                                                                     dtype=float)


def _batch_call(fn, D, Z, N):
    """Call mva_batch whatever its argument names (demands, think times, population)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    kw = {}
    for names, value in ((("demands", "demand", "D"), D),
                         (("think_times", "think_time", "Z", "think"), Z),
                         (("population", "populations", "N", "n"), N)):
        for nm in names:
            if nm in params:
                kw[nm] = value
                break
    if len(kw) == 3:
        return lambda: fn(**kw)
    return lambda: fn(D, Z, N)


def _batch_X(res, B, N):
    """Class throughput at population N for each configuration, from whatever
    mva_batch returns (an object with throughput/X/class_throughput, a dict or a tuple)."""
    cand = None
    for name in ("class_throughput", "throughput", "X"):
        if hasattr(res, name):
            cand = getattr(res, name)
            break
        if isinstance(res, dict) and name in res:
            cand = res[name]
            break
    if cand is None and isinstance(res, tuple):
        cand = res[0]
    if cand is None:
        cand = res
    a = np.asarray(cand, dtype=float)
    a = np.squeeze(a)
    if a.ndim == 2:
        if a.shape[0] == B and a.shape[1] == N + 1:
            a = a[:, -1]
        elif a.shape == (N + 1, B):
            a = a[-1]
        elif a.shape[0] == B:
            a = a[:, -1]
    if a.shape != (B,):
        raise ValueError(f"cannot read per-configuration throughput from {type(res).__name__} "
                         f"(array shape {np.shape(a)})")
    return a


def _first_call_main(cid):
    """Child process: time the first and second call of our solver on ``cid``."""
    label, fn, kw = ours(cid)
    if cid.startswith("batch"):
        D, Z, N = model(cid)
        call = _batch_call(fn, D, Z, N)
    else:
        D, N, Z = model(cid)
        net = network(D, N, Z)
        call = lambda: fn(net, **kw)  # noqa: E731
    t0 = time.perf_counter()
    call()
    t1 = time.perf_counter()
    call()
    t2 = time.perf_counter()
    print(json.dumps({"first": t1 - t0, "second": t2 - t1}))


def first_call_times(cid):
    """First-call time of our solver in a fresh process: with an empty numba
    cache (compile) and again with the cache just written (load).  Returns a
    note string."""
    with tempfile.TemporaryDirectory(prefix="qm-numba-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        code = f"from benchmarks.cases import _first_call_main; _first_call_main({cid!r})"
        out = []
        for _ in range(2):
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               cwd=HERE.parent, env=env, timeout=900)
            if p.returncode != 0:
                return f"first-call timing failed: {p.stderr.strip().splitlines()[-1:]}"
            out.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return (f"first call {fmt_time(out[0]['first'])} with an empty numba cache, "
            f"{fmt_time(out[1]['first'])} from cache")


# ---------------------------------------------------------------------------
# environment: which peers are here
# ---------------------------------------------------------------------------

def environment(args, peers_needed=True):
    """Versions, and the peers that can run here (none when ``peers_needed``
    is false, e.g. only simulator cases were selected)."""
    want = args.peers if peers_needed else set()
    env = {"lines": [], "_peers": {}, "unavailable": {}, "versions": {}}
    import numba

    import qmodels

    env["versions"]["qmodels"] = getattr(qmodels, "__version__", "?")
    env["versions"]["numpy"] = np.__version__
    env["versions"]["numba"] = numba.__version__
    for key, cls in (("line", P.Line), ("octave", P.Octave), ("c", P.CLoop)):
        if want is not None and key not in want:
            env["unavailable"][key] = "not selected" if peers_needed else "not needed"
            continue
        try:
            peer = cls()
        except P.Unavailable as e:
            env["unavailable"][key] = str(e)
            env["lines"].append(f"peer {cls.name}: UNAVAILABLE - {e}")
            continue
        env["_peers"][key] = peer
        env["versions"][cls.name] = peer.version
    env["numpy_ref"] = want is None or "numpy" in want
    v = env["versions"]
    env["lines"].append("versions: " + ", ".join(f"{k} {val}" for k, val in v.items()))
    if "octave" in env["_peers"]:
        o = env["_peers"]["octave"]
        env["octave_startup_s"] = o.startup_s
        env["lines"].append(f"Octave start-up + `pkg load queueing`: {fmt_time(o.startup_s)} "
                            "per call (excluded: Octave times are tic/toc inside Octave)")
    if "line" in env["_peers"]:
        env["line_import_s"] = env["_peers"]["line"].import_s
        env["lines"].append(f"line-solver import: {fmt_time(env['line_import_s'])} (excluded)")
    if "c" in env["_peers"]:
        env["lines"].append(f"C loop: {env['_peers']['c'].cmd} benchmarks/c/mva.c "
                            f"({env['_peers']['c'].version}); timed inside C, "
                            "process start excluded")
    return env


# ---------------------------------------------------------------------------
# running a case
# ---------------------------------------------------------------------------

def _missing_rows(cid, env, keys):
    """A skipped row, with the reason, for each peer in ``keys`` that is not here."""
    names = {"line": (P.Line.name, "peer"), "octave": (P.Octave.name, "peer"),
             "c": (P.CLoop.name, "reference")}
    out = []
    for k in keys:
        why = env["unavailable"].get(k)
        if why and not why.startswith("not "):
            name, role = names[k]
            out.append(skipped(cid, name, role, f"unavailable: {why}"))
    return out


def _peer_row(cid, name, role, fn, ours_answer, target=None, note=""):
    try:
        med, mn, reps, X, Q, extra = fn()
    except P.Unavailable as e:
        return skipped(cid, name, role, str(e))
    except Exception as e:  # noqa: BLE001
        return skipped(cid, name, role, f"failed: {type(e).__name__}: {str(e)[:200]}")
    rel = None
    if ours_answer is not None:
        rel = max_rel_diff(ours_answer, [X, Q])
    return row(cid, name, role, time_s=med, min_s=mn, reps=reps, maxrel=rel,
               target_ratio=target, note=", ".join(x for x in (extra, note) if x))


def run_case(cid, args, env):
    if cid in _more.TITLES:
        return _more.run_case(cid, args, env)
    if cid.startswith(("multiserver", "convolution", "sim-parallel")):
        return []           # answers or a table of its own: printed by extras()
    if cid.startswith("batch"):
        return _run_batch(cid, args, env)
    if cid.startswith("bounds"):
        return _run_bounds(cid, args, env)
    D, N, Z = model(cid)
    net = network(D, N, Z)
    peers = env["_peers"]
    rows = []

    # ours
    answer = None
    label, fn, kw = ours(cid)
    if fn is not None:
        med, mn, times, res = timeit(lambda: fn(net, **kw), args.repeat, min_time=args.min_time)
        answer = list(_answer(res))
        notes = [label]
        if cid.startswith("mva1"):
            notes.append(_kernel_note(D[0], N[0], Z[0], args.repeat, args.min_time))
        info = getattr(res, "info", None) or {}
        for key in ("iterations", "algorithm"):
            if key in info and key != "algorithm":
                notes.append(f"{info[key]} {key}")
        if not args.no_compile_time:
            notes.append(first_call_times(cid))
        rows.append(row(cid, "qmodels", "ours", time_s=med, min_s=mn, reps=len(times),
                        note="; ".join(n for n in notes if n)))

    budget = args.peer_budget
    single = cid.startswith("mva1")
    if "line" in peers:
        ln = peers["line"]
        if cid.startswith("schweitzer"):
            f = lambda: ln.schweitzer(D, N, Z, TOL, args.repeat, budget)  # noqa: E731
            note = "pfqn_bs"
        else:
            f = lambda: ln.exact(D, N, Z, args.repeat, budget)  # noqa: E731
            note = "pfqn_mva"
        rows.append(_peer_row(cid, P.Line.name, "peer", f, answer, TARGET_PEER, note))
    if "octave" in peers:
        oc = peers["octave"]
        if single:
            f = lambda: oc.exact_single(D[0], N[0], Z[0], args.repeat, budget)  # noqa: E731
            note = "qncsmva"
        elif cid.startswith("schweitzer"):
            f = lambda: oc.schweitzer(D, N, Z, TOL, args.repeat, budget)  # noqa: E731
            note = "qncmmvabs (= qncmmvaap)"
        else:
            f = lambda: oc.exact_multi(D, N, Z, args.repeat, budget)  # noqa: E731
            note = "qncmmva"
        rows.append(_peer_row(cid, P.Octave.name, "peer", f, answer, TARGET_PEER, note))
    if single and "c" in peers:
        c = peers["c"]
        rows.append(_peer_row(cid, P.CLoop.name, "reference",
                              lambda: c.exact_single(D[0], N[0], Z[0], args.repeat, args.min_time),
                              answer, TARGET_C))
    rows += _missing_rows(cid, env, ("line", "octave", "c") if single else ("line", "octave"))
    if single and env.get("numpy_ref"):
        def npl():
            med, mn, times, (X, Q) = timeit(lambda: P.numpy_mva(D[0], N[0], Z[0]), args.repeat,
                                            min_time=args.min_time)
            return med, mn, len(times), np.array([X]), Q[None, :], ""
        rows.append(_peer_row(cid, "numpy loop", "reference", npl, answer))
    return rows


def _kernel_note(D, N, Z, repeat, min_time):
    """Time of the compiled recursion alone (no model checks, no Result)."""
    try:
        from qmodels.analytic.mva import _mva_fixed_kernel
    except ImportError:
        return ""
    D = np.ascontiguousarray(D, dtype=float)
    isd = np.zeros(len(D), dtype=bool)
    try:
        med, _, _, _ = timeit(lambda: _mva_fixed_kernel(D, isd, float(Z), int(N), False),
                              repeat, min_time=min_time)
    except Exception:  # noqa: BLE001 - a private kernel may change shape: the note is optional
        return ""
    return f"kernel alone {fmt_time(med)}"


def _bounds_figures(b, keys):
    """[X lower, X upper] of each bound set ``keys`` of a qmodels Bounds."""
    return [np.array(getattr(b, k)[:2], dtype=float) for k in keys]


def _run_bounds(cid, args, env):
    """Single-class bounds: ours (every bound it proves, with N* and the
    bottleneck, as a Bounds result) against Octave's four bound functions
    called in turn and line-solver's asymptotic and geometric bounds (it
    has no balanced-job or proportional bounds: its row does less work)."""
    D, N, Z = model(cid)
    net = network(D, N, Z)
    peers = env["_peers"]
    label, fn, _ = ours(cid)
    med, mn, times, res = timeit(lambda: fn(net), args.repeat, min_time=args.min_time)
    rows = [row(cid, "qmodels", "ours", time_s=med, min_s=mn, reps=len(times),
                note=f"{label}: ABA, BJB, GB, PB, N*, 1/Dmax, bottleneck")]
    budget = args.peer_budget
    if "octave" in peers:
        def oc():
            med, mn, reps, X = peers["octave"].bounds_single(D[0], N[0], Z[0], args.repeat,
                                                             budget)
            bad = [f"{name} X {side}" for name, x in zip(("ABA", "BSB", "GB", "PB"), X)
                   for side, v in zip(("lower", "upper"), x) if not np.isfinite(v)]
            return med, mn, reps, X, None, (f"returned NaN for {', '.join(bad)} (a power D_k^N "
                                            "that underflows)" if bad else "")
        rows.append(_bounds_peer_row(cid, P.Octave.name, oc, _bounds_figures(
            res, ("aba", "bjb", "gb", "pb")), "qncsaba, qncsbsb, qncsgb, qncspb"))
    if "line" in peers:
        def ln():
            med, mn, reps, X = peers["line"].bounds_single(D[0], N[0], Z[0], args.repeat,
                                                           budget)
            return med, mn, reps, X, None, ""
        rows.append(_bounds_peer_row(cid, P.Line.name, ln, _bounds_figures(res, ("aba", "gb")),
                                     "pfqn_xzabalow/up, pfqn_xzgsblow/up (ABA and geometric "
                                     "only)"))
    rows += _missing_rows(cid, env, ("octave", "line"))
    return rows


def _bounds_peer_row(cid, name, fn, ref, note):
    try:
        med, mn, reps, X, _, extra = fn()
    except P.Unavailable as e:
        return skipped(cid, name, "peer", str(e))
    except Exception as e:  # noqa: BLE001
        return skipped(cid, name, "peer", f"failed: {type(e).__name__}: {str(e)[:200]}")
    return row(cid, name, "peer", time_s=med, min_s=mn, reps=reps,
               maxrel=max_rel_diff(ref, X), target_ratio=TARGET_PEER,
               note=", ".join(x for x in (note, extra) if x))


def _run_batch(cid, args, env):
    D, Z, N = model(cid)
    B = len(D)
    peers = env["_peers"]
    rows = []
    Xours = None
    label, fn, _ = ours(cid)
    if fn is not None:
        call = _batch_call(fn, D, Z, N)
        med, mn, times, res = timeit(call, args.repeat, min_time=args.min_time)
        notes = [label]
        try:
            Xours = _batch_X(res, B, N)
        except Exception as e:  # noqa: BLE001
            notes.append(f"answer not compared: {e}")
        if not args.no_compile_time:
            notes.append(first_call_times(cid))
        rows.append(row(cid, "qmodels", "ours", time_s=med, min_s=mn, reps=len(times),
                        target_time=TARGET_BATCH_S, note="; ".join(notes)))

    def rel(Xp, n):
        return None if Xours is None else max_rel_diff([Xours[:n]], [Xp])

    if "c" in peers:
        try:
            med, mn, reps, Xc = peers["c"].batch_single(D, Z, N, max(3, min(args.repeat, 7)))
            rows.append(row(cid, P.CLoop.name, "reference", time_s=med, min_s=mn, reps=reps,
                            maxrel=rel(Xc, B), note="loop over all configurations"))
        except Exception as e:  # noqa: BLE001
            rows.append(skipped(cid, P.CLoop.name, "reference", f"failed: {e}"))
    def ext(nsub):
        return f"loop over {nsub} configurations, time x{B / nsub:g} (extrapolated to {B})"

    if "line" in peers:
        ln = peers["line"]
        nsub = min(B, BATCH_PEER_CONFIGS["line"])
        scale = B / nsub
        L = np.ascontiguousarray(D[:nsub, :, None])
        Nv = np.array([float(N)])

        def loop():
            return np.array([ln._mva(L[b], Nv, np.array([Z[b]]))[0][0, 0] for b in range(nsub)])
        med, mn, times, Xl = timeit(loop, max(1, min(args.repeat, 3)), warmup=0,
                                    budget=args.peer_budget)
        rows.append(row(cid, P.Line.name, "peer", time_s=med * scale, min_s=mn * scale,
                        reps=len(times), maxrel=rel(Xl, nsub), target_ratio=TARGET_PEER,
                        note="pfqn_mva " + ext(nsub)))
    if "octave" in peers:
        nsub = min(B, BATCH_PEER_CONFIGS["octave"])
        scale = B / nsub
        try:
            med, mn, reps, Xo, n = peers["octave"].batch_single(
                D, Z, N, max(1, min(args.repeat, 3)), args.peer_budget, nsub)
            rows.append(row(cid, P.Octave.name, "peer", time_s=med * scale, min_s=mn * scale,
                            reps=reps, maxrel=rel(Xo, n), target_ratio=TARGET_PEER,
                            note="qncsmva " + ext(nsub)))
        except Exception as e:  # noqa: BLE001
            rows.append(skipped(cid, P.Octave.name, "peer", f"failed: {e}"))
    rows += _missing_rows(cid, env, ("c", "line", "octave"))
    if env.get("numpy_ref"):
        med, mn, times, (Xn, _) = timeit(lambda: P.numpy_mva_batch(D, Z, N), args.repeat)
        rows.append(row(cid, "numpy, vectorised over the batch", "reference", time_s=med,
                        min_s=mn, reps=len(times), maxrel=rel(Xn, B),
                        note="Python loop over n only"))
    return rows


# ---------------------------------------------------------------------------
# the multi-server pathology (issue 3): answers side by side, not timings
# ---------------------------------------------------------------------------

PATHOLOGY = {"S": [4.0], "servers": [8], "N": 90, "Z": 10.0}


def extras(args, env, selected):
    blocks = []
    if "multiserver-c8-N90" in selected:
        blocks.append(_pathology(env))
    if "convolution-N1000" in selected:
        blocks.append(_convolution_overflow(env))
    if "sim-parallel-scaling" in selected:
        blocks.append(_scaling(args))
    return blocks


def _scaling(args):
    """The simulator's replications across processes (issue 32): the table
    of :mod:`benchmarks.bench_sim_parallel`, or the error that stopped it."""
    head = f"== sim-parallel-scaling: {TITLES['sim-parallel-scaling']}"
    try:
        from . import bench_sim_parallel

        lines = bench_sim_parallel.report(quick=bool(getattr(args, "quick", False)))
    except Exception as e:  # noqa: BLE001 - reported as an error of the run
        return f"{head}\n  ERROR: {type(e).__name__}: {e}"
    return "\n".join([head] + ["  " + x for x in lines])


def _convolution_overflow(env):
    """G(N) ~ 5^N overflows a double at N = 1000 unless it is scaled or kept in logs."""
    import qmodels as qm

    S = [1.0, 2.0, 3.0, 4.0, 5.0]
    N = 1000
    names = [f"q{k}" for k in range(len(S))]
    net = qm.Network([qm.Queue(n, s) for n, s in zip(names, S)],
                     [qm.Closed("c", N, visits={n: 1 for n in names})])
    lines = [f"== convolution-N1000: {TITLES['convolution-N1000']}",
             "  G(1000) is about 5^1000 = 1e699, beyond the largest double (1.8e308)"]
    lines.append(f"  {'implementation':34s} {'X':>12s} {'Q slowest':>12s}  verdict")
    ref = None
    try:
        r = qm.mva(net)
        ref = (float(r.X["c"]), float(r.Q["q4"]))
        lines.append(f"  {'qmodels mva (exact MVA, reference)':34s} {ref[0]:12.6g} {ref[1]:12.6g}")
    except Exception as e:  # noqa: BLE001
        lines.append(f"  {'qmodels mva':34s} ERROR: {type(e).__name__}: {e}")

    def verdict(X, Q):
        if not (np.isfinite(X) and np.isfinite(Q)):
            return "WRONG (not finite)"
        if ref is None:
            return ""
        rel = max_rel_diff([ref], [(X, Q)])
        return f"max rel diff from MVA {rel:.2g}"

    try:
        conv = _attr("qmodels.analytic.convolution", "convolution")
        r = conv(net)
        X, Q = float(r.X["c"]), float(r.Q["q4"])
        lines.append(f"  {'qmodels convolution':34s} {X:12.6g} {Q:12.6g}  {verdict(X, Q)}")
    except Exception as e:  # noqa: BLE001 - shown, and counted as an error of the run
        lines.append(f"  {'qmodels convolution':34s} ERROR: {type(e).__name__}: {e}")
    if "octave" in env["_peers"]:
        try:
            X, Q = env["_peers"]["octave"].convolution(S, N)
            lines.append(f"  {'Octave qncsconv':34s} {X:12.6g} {Q[-1]:12.6g}  {verdict(X, Q[-1])}")
        except Exception as e:  # noqa: BLE001
            lines.append(f"  {'Octave qncsconv':34s} failed: {e}")
    else:
        lines.append(f"  {'Octave qncsconv':34s} unavailable")
    return "\n".join(lines)


def _pathology(env):
    import qmodels as qm

    p = PATHOLOGY
    net = qm.Network([qm.Queue("m8", p["S"][0], servers=p["servers"][0])],
                     [qm.Closed("c", p["N"], visits={"m8": 1}, think_time=p["Z"])])
    lines = [f"== multiserver-c8-N90: {TITLES['multiserver-c8-N90']}",
             "  bounds: X <= c/S = 2 (the 8 servers saturate); Q at the station <= N = 90"]
    hdr = f"  {'implementation':34s} {'X':>12s} {'Q station':>12s}  verdict"
    lines.append(hdr)

    def verdict(X, Q):
        ok = 0 < X <= 2 + 1e-9 and 0 <= Q <= p["N"] + 1e-9
        return "plausible" if ok else "WRONG (outside the bounds)"

    try:
        r = qm.mva(net)
        X, Q = float(r.X["c"]), float(r.Q["m8"])
        lines.append(f"  {'qmodels mva':34s} {X:12.6g} {Q:12.6g}  {verdict(X, Q)}")
    except Exception as e:  # noqa: BLE001
        lines.append(f"  {'qmodels mva':34s} ERROR: {type(e).__name__}: {e}")
    peers = env["_peers"]
    if "octave" in peers:
        try:
            X, Q = peers["octave"].multiserver(p["S"], p["servers"], p["N"], p["Z"])
            lines.append(f"  {'Octave qncsmva (m = 8)':34s} {X:12.6g} {Q[0]:12.6g}  "
                         f"{verdict(X, Q[0])}")
        except Exception as e:  # noqa: BLE001
            lines.append(f"  {'Octave qncsmva':34s} failed: {e}")
    else:
        lines.append(f"  {'Octave qncsmva':34s} unavailable")
    if "line" in peers:
        try:
            X, Q = peers["line"].multiserver(p["S"], p["servers"], p["N"], p["Z"])
            lines.append(f"  {'line-solver pfqn_mvams (S = 8)':34s} {X:12.6g} {Q[0]:12.6g}  "
                         f"{verdict(X, Q[0])}")
        except Exception as e:  # noqa: BLE001
            lines.append(f"  {'line-solver pfqn_mvams':34s} failed: {e}")
    return "\n".join(lines)
