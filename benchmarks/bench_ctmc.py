"""The exact CTMC: the compiled build and the iterative solve against the
Python build and the LU they replace.

Run from the repository root (not part of the test suite)::

    python -m benchmarks.bench_ctmc                 # 91,125 states, new path, vs MVA
    python -m benchmarks.bench_ctmc --old           # + the Python build at 91,125 and
                                                    #   the old build + LU at 9,261 states
    python -m benchmarks.bench_ctmc --big           # + 1,157,625 states (N = 13)
    python -m benchmarks.bench_ctmc -N 3            # another population (smoke run)
    python -m benchmarks.bench_ctmc --decomposition 16   # + decomposition vs ctmc, pools
    python -m benchmarks.bench_ctmc --ph            # phase-type and priority models: states/s,
                                                    #   the largest solved within 10 s
    python -m benchmarks.bench_ctmc --ph --wide     # the same, FCFS stations as ordered rows

The model: three closed classes of N jobs over three single-server PS
queues, class-dependent service times (S[a] = (0.01, 0.02, 0.03),
S[b] = (0.03, 0.01, 0.02), S[c] = (0.02, 0.03, 0.01) s), visit ratio 1,
no think time: C(N + 2, 2)^3 states, 91,125 at N = 8, 1,157,625 at N = 13.
It is product form (BCMP), so exact MVA checks every answer (``maxrel``).
Times are wall and CPU seconds of one run each (the kernels compiled or
loaded from numba's cache first, untimed); ``peak RSS`` is the process's.

``--ph`` times four models that are not product form (phase-type service
and arrivals, a priority queue; see :func:`ph_web`, :func:`ph_prio`,
:func:`ph_two`, :func:`ph_open`) at growing sizes and reports the states
per CPU second and the largest solved within 10 CPU seconds on one core.
Measured 2026-11-29 on the shared 2-core machine (benchmarks/README.md),
with the lattice multigrid as the first solver of the closed chains of
100,000 states and more (:mod:`qmodels.analytic._lattice_mg`), the D-ILU
solve by Eisenstat's trick elsewhere from 20,000 states (ILU(0) where it
fails; the solver is still named ``ilu0-bicgstab``), the largest within
10 CPU s: 1,005,937 states (three-tier, N = 72, 9.2-9.3 s), 231,361
(priority, N = 15, 8.6-9.0 s: an order-keeping station, no multigrid,
and two more chains solved for the classes' response times at the disks
they never visit), 1,441,201 (two queues, N = 600, 8.6-8.7 s; 1,691,301
in 9.7-10.3 s), 1,883,842 (open tandem, L = 560, 8.6-10.0 s); 25,000 to
210,000 states per CPU second (a
one-class FCFS station with phases is counted by phase, and ranked: the
three-tier build alone makes 500,000 to 570,000 states per CPU second;
``--wide`` times the ordered-row form it replaced).
``qm.ctmc`` refuses, before it allocates anything, a chain whose
counted lower bound passes ``max_states`` or whose estimated memory
(states, nonzero rates, bytes) passes half the memory available.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

S = {"a": (0.01, 0.02, 0.03), "b": (0.03, 0.01, 0.02), "c": (0.02, 0.03, 0.01)}


def network(N: int):
    """The benchmark model (see the module docstring)."""
    import qmodels as qm

    names = ("q1", "q2", "q3")
    return qm.Network([qm.Queue(k, 0.01, discipline="ps") for k in names],
                      [qm.Closed(c, N, visits=dict.fromkeys(names, 1),
                                 service=dict(zip(names, S[c], strict=True))) for c in S])


class _Clock:
    def __init__(self):
        self.w, self.c = time.perf_counter(), time.process_time()

    def lap(self):
        w, c = time.perf_counter(), time.process_time()
        out = (w - self.w, c - self.c)
        self.w, self.c = w, c
        return out


def _fmt(t):
    return f"{t[0]:8.2f} s wall {t[1]:8.2f} s CPU"


def _maxrel(res, net):
    import qmodels as qm

    m = qm.mva(net)
    x, y = np.asarray(res.class_throughput), np.asarray(m.class_throughput)
    q, r = np.asarray(res.station_queue_length), np.asarray(m.station_queue_length)
    return max(float(np.max(np.abs(x - y) / y)),
               float(np.max(np.abs(q - r) / np.maximum(r, 1e-300))))


def _steps(net):
    """The compiled build, the stationary solve and the expectations of the
    chain of ``net``, each timed (the kernels compiled or loaded first,
    untimed): a dict of the layout, states, nonzeros, residual, solver and
    the three (wall, CPU) laps."""
    from qmodels.analytic import _ctmc_fast as F
    from qmodels.analytic import ctmc as C
    from qmodels.analytic._ctmc_chain import _Chain
    from qmodels.analytic._ctmc_spec import _Spec

    spec = _Spec(net, None)
    lay = F.layout(spec, _Chain(spec))
    F.build(lay, 10, compiled=True)  # compile or load the cache, untimed
    clock = _Clock()
    states, n, rows, cols, vals, nnz, _ = F.build(lay, 10**8, compiled=True)
    t_build = clock.lap()
    used: list[str] = []
    # the lattice multigrid's maps as qm.ctmc makes them (where no product
    # form starts the solve: these chains are not product form)
    lattice = C._lattice(spec, lay, states[:n], None)
    pi, resid = C._stationary(n, rows[:nnz], cols[:nnz], vals[:nnz], str, used, None, lattice)
    t_solve = clock.lap()
    C._compiled_sums(spec, lay, states[:n], n, pi, True)
    t_exp = clock.lap()
    return {"spec": spec, "lay": lay, "n": n, "nnz": nnz, "resid": resid, "solver": used[0],
            "build": t_build, "solve": t_solve, "exp": t_exp}


def new_path(N: int, out):
    """Compiled build, solve, expectations, then the whole ``qm.ctmc``."""
    import qmodels as qm

    net = network(N)
    st = _steps(net)
    n, nnz, resid = st["n"], st["nnz"], st["resid"]
    t_build, t_solve, t_exp = st["build"], st["solve"], st["exp"]
    clock = _Clock()
    res = qm.ctmc(net, max_states=10**8)
    t_all = clock.lap()
    out(f"  states {n:,}, nonzero rates {nnz:,}, solver {st['solver']}, max|pi Q| {resid:.2g}")
    out(f"  compiled build          {_fmt(t_build)}")
    out(f"  stationary solve        {_fmt(t_solve)}")
    out(f"  expectations            {_fmt(t_exp)}")
    out(f"  qm.ctmc end to end      {_fmt(t_all)}   maxrel vs exact MVA {_maxrel(res, net):.1e}")
    return t_build, t_solve, t_all


def old_build(N: int, out):
    """The Python builder (still used for pools and blocking) on the same model."""
    from qmodels.analytic._ctmc_chain import _Chain
    from qmodels.analytic._ctmc_spec import _Spec

    clock = _Clock()
    spec = _Spec(network(N), None)
    chain = _Chain(spec)
    states, rows, *_ = chain.build(10**8)
    t = clock.lap()
    out(f"  Python build            {_fmt(t)}   ({len(states):,} states, {len(rows):,} rates)")
    return t


def old_whole(N: int, out):
    """The old path entire: Python build, LU of the pinned system, Python
    expectations."""
    from qmodels.analytic import ctmc as C
    from qmodels.analytic._ctmc_chain import _Chain
    from qmodels.analytic._ctmc_spec import _Spec

    net = network(N)
    clock = _Clock()
    spec = _Spec(net, None)
    chain = _Chain(spec)
    states, rows, cols, vals = chain.build(10**8)
    t_build = clock.lap()
    saved = C.ITERATIVE_FROM
    C.ITERATIVE_FROM = 10**12  # the LU, as before
    try:
        pi, resid = C._stationary(len(states), rows, cols, vals, str)
    finally:
        C.ITERATIVE_FROM = saved
    t_solve = clock.lap()
    res = C._figures(net, spec, chain, states, pi, resid)
    t_exp = clock.lap()
    out(f"  old: Python build       {_fmt(t_build)}   ({len(states):,} states)")
    out(f"  old: LU solve           {_fmt(t_solve)}")
    out(f"  old: Python expectations{_fmt(t_exp)}   maxrel vs exact MVA {_maxrel(res, net):.1e}")


def pooled(N: int, B: int):
    """A SPAX-like I/O path (CASES.md case 1, the model of
    ``tests/test_decomposition.py``): terminals (Z = 0.05 s), processor,
    then a buffer pool of B tokens held over DMA and the switch input port,
    then PCI; one closed class of N jobs."""
    import qmodels as qm

    return qm.Network(
        [qm.Delay("think", 0.05), qm.Queue("cpu", 0.004), qm.Queue("dma", 0.010),
         qm.Queue("port", 0.012), qm.Queue("pci", 0.003)],
        [qm.Closed("io", N, routing={"think": {"cpu": 1}, "cpu": {"dma": 1},
                                     "dma": {"port": 1}, "port": {"pci": 1},
                                     "pci": {"think": 1}})],
        pools=[qm.TokenPool("buf", B, "dma", "port")])


def decomposition_vs_ctmc(N: int, out):
    """The flow-equivalent decomposition against the exact CTMC (Python
    build: a token pool) on the pooled I/O path, B = 1, 4, 16 tokens."""
    import qmodels as qm
    from qmodels.analytic.decomposition import decompose

    for B in (1, 4, 16):
        net = pooled(N, B)
        clock = _Clock()
        exact = qm.ctmc(net)
        t_c = clock.lap()
        dec = decompose(net)
        t_d = clock.lap()
        err = (dec.X["io"] - exact.X["io"]) / exact.X["io"]
        out(f"  B={B:2d}: ctmc {exact.info['states']:,} states {_fmt(t_c)}; "
            f"decomposition {_fmt(t_d)}; X error {err:+.1e}")


def ph_web(N: int):
    """A closed three-tier model that is not product form (the family where
    ``mva-residual`` errs by up to 47 %): N users thinking 1 s, an FCFS
    front end with Erlang-2 service (0.02 s), an FCFS application server
    with Erlang-4 service (0.03 s), an FCFS disk with H2 service of SCV 4
    (0.025 s).  Every shape phase-type: the chain is exact."""
    import qmodels as qm

    return qm.Network(
        [qm.Queue("web", 0.02, distribution=qm.Erlang(2)),
         qm.Queue("app", 0.03, distribution=qm.Erlang(4)),
         qm.Queue("disk", 0.025, distribution=qm.HyperExponential(4.0))],
        [qm.Closed("users", N, think_time=1.0, visits={"web": 1, "app": 1, "disk": 1})])


def ph_prio(N: int):
    """Two closed classes of N jobs at one non-preemptive priority CPU
    (Erlang-2 service, 0.01 s foreground, 0.02 s background), each with its
    own FCFS H2 disk (SCV 4, 0.03 s) and think time (0.2 s, 0.1 s)."""
    import qmodels as qm

    return qm.Network(
        [qm.Queue("cpu", 0.01, discipline="prio", distribution=qm.Erlang(2)),
         qm.Queue("d1", 0.03, distribution=qm.HyperExponential(4.0)),
         qm.Queue("d2", 0.03, distribution=qm.HyperExponential(4.0))],
        [qm.Closed("fg", N, think_time=0.2, visits={"cpu": 1, "d1": 1}, priority=0),
         qm.Closed("bg", N, think_time=0.1, visits={"cpu": 1, "d2": 1}, priority=1,
                   service={"cpu": 0.02, "d2": 0.03})])


def ph_two(N: int):
    """A closed two-queue model that is not product form: N users thinking
    0.2 s, an FCFS CPU with Erlang-4 service (0.01 s), an FCFS disk with H2
    service of SCV 6 (0.012 s)."""
    import qmodels as qm

    return qm.Network(
        [qm.Queue("cpu", 0.01, distribution=qm.Erlang(4)),
         qm.Queue("disk", 0.012, distribution=qm.HyperExponential(6.0))],
        [qm.Closed("users", N, think_time=0.2, visits={"cpu": 1, "disk": 1})])


def ph_open(L: int):
    """An open tandem fed by a bursty stream (H2 inter-arrival times of SCV
    8, 1 job/s) through two FCFS queues, Erlang-3 (0.5 s) then H2 of SCV 2
    (0.4 s), truncated at L open jobs."""
    import qmodels as qm

    return qm.Network(
        [qm.Queue("a", 0.5, distribution=qm.Erlang(3)),
         qm.Queue("b", 0.4, distribution=qm.HyperExponential(2.0))],
        [qm.Open("j", 1.0, interarrival=qm.HyperExponential(8.0),
                 routing={"source": {"a": 1}, "a": {"b": 1}, "b": {"sink": 1}})])


def _time_ph(net, out, label, **kw):
    """One ``qm.ctmc`` of a phase-type model, timed end to end (numba
    kernels compiled or loaded before): states, rates, wall and CPU
    seconds, states per CPU second."""
    import warnings

    import qmodels as qm

    clock = _Clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = qm.ctmc(net, max_states=10**8, **kw)
    t = clock.lap()
    n = res.info["states"]
    out(f"  {label:24s} {n:>10,} states {_fmt(t)}  {n / max(t[1], 1e-9):>10,.0f} states/CPU s  "
        f"({res.exactness}, {res.info['linear_solver']})")
    return n, t


def ph_breakdown(N: int, out):
    """Where the time of the three-tier model goes at N users: the state
    row's width, the compiled build, the stationary solve (and its
    solver), the expectations."""
    from qmodels.analytic import _ctmc_fast as F

    st = _steps(ph_web(N))
    spec, lay, n, nnz, used = st["spec"], st["lay"], st["n"], st["nnz"], [st["solver"]]
    t_build, t_solve, t_exp = st["build"], st["solve"], st["exp"]
    out(f"  three-tier N = {N}: {n:,} states, a row of {lay.D} integers, "
        f"{nnz:,} nonzero rates; estimated before building: "
        f"{F.estimate(spec, lay, 10**8)[0]:,} states")
    rate = n / max(t_build[1], 1e-9)
    out(f"    compiled build        {_fmt(t_build)}  {rate:>10,.0f} states/CPU s")
    out(f"    stationary solve      {_fmt(t_solve)}  ({used[0]})")
    out(f"    expectations          {_fmt(t_exp)}")


def preconditioners(out, sizes=(30, 40)):
    """The first solver's preconditioner on the pinned systems of the
    three-tier model (the system ``qm.ctmc`` solves first, pinned at
    :func:`qmodels.analytic._ctmc_solve.pin_first`): the same compiled
    BiCGSTAB (:func:`qmodels.analytic._ilu0.bicgstab`) with ILU(0) and with
    the diagonal alone (Jacobi: the factors' off-diagonal values zero),
    from 0; iterations and CPU seconds, the factorisation included."""
    import warnings

    import numpy as np

    import qmodels as qm
    from qmodels.analytic import _ctmc_solve as S
    from qmodels.analytic import _ilu0

    captured = {}
    original = S.stationary_pinned

    def grab(Q, budget, guess=None, lattice=None):
        captured["Q"] = Q
        return original(Q, budget, guess, lattice)

    S.stationary_pinned = grab
    try:
        for n in sizes:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                qm.ctmc(ph_web(n), max_states=10**7)
            Q = captured["Q"]
            A, b, _ = S.pinned_system(Q, S.pin_first(Q))
            A.sort_indices()
            for name in ("Jacobi", "ILU(0)"):
                t = time.process_time()
                lu, diag, ok = _ilu0.ilu0(A.indptr, A.indices, A.data)
                if name == "Jacobi":
                    lu = np.where(A.indices == np.repeat(np.arange(A.shape[0]),
                                                         np.diff(A.indptr)), A.data, 0.0)
                x, info, its = _ilu0.bicgstab(A.indptr, A.indices, A.data, lu, diag, b,
                                              np.zeros(len(b)), S.RTOL, 5000)
                cpu = time.process_time() - t
                out(f"  three-tier N = {n} ({A.shape[0]:,} unknowns): {name:7s} {its:5d} "
                    f"iterations {cpu:6.2f} s CPU  (converged: {info == 0})")
    finally:
        S.stationary_pinned = original


def ph_models(out, budget: float = 10.0):
    """Each phase-type model at growing sizes, until one takes more than
    ``budget`` CPU seconds end to end: the largest within it, and the
    states per second."""
    import qmodels as qm

    qm.ctmc(ph_web(2))  # compile or load the kernels, untimed
    for name, make, sizes, kw in (
            ("web, N users", ph_web, (10, 20, 30, 40, 48, 56, 60, 64, 68, 72), {}),
            ("priority, N per class", ph_prio, (4, 8, 10, 12, 13, 14, 15, 16), {}),
            ("two queues, N users", ph_two, (100, 200, 300, 400, 500, 550, 600, 650, 700), {}),
            ("open tandem, bound L", ph_open,
             (40, 80, 160, 240, 320, 400, 480, 560, 640), {})):
        out(f"ctmc, phase-type model: {name} ({make.__doc__.split(chr(10))[0]})")
        best = None
        for x in sizes:
            opt = dict(kw, open_limit=x) if make is ph_open else kw
            n, t = _time_ph(make(x), out, f"{name.split(',')[1].strip()} = {x}", **opt)
            if t[1] > budget:
                break
            best = (x, n, t)
        if best:
            out(f"  largest within {budget:g} CPU s: {best[0]} ({best[1]:,} states, "
                f"{best[2][1]:.2f} s CPU)")
        if make is ph_web:
            out("where the time goes (three-tier):")
            for x in (40, 56):
                ph_breakdown(x, out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-N", type=int, default=8, help="jobs per class (default 8: 91,125 states)")
    ap.add_argument("--old", action="store_true",
                    help="also time the Python build at N, and the old build + LU at N = 5")
    ap.add_argument("--big", action="store_true", help="also N = 13: 1,157,625 states")
    ap.add_argument("--ph", action="store_true",
                    help="phase-type and priority models at growing sizes (states/s, the "
                         "largest within 10 CPU seconds)")
    ap.add_argument("--precond", action="store_true",
                    help="the first solver's preconditioners compared (three-tier N = 30, 40)")
    ap.add_argument("--wide", action="store_true",
                    help="with --ph: keep a one-class FCFS station with service phases as an "
                         "ordered row of its jobs (the form before 2026-11-28), to compare")
    ap.add_argument("--decomposition", type=int, default=0, metavar="N",
                    help="also the decomposition against the CTMC on a pooled path, N jobs")
    args = ap.parse_args(argv)

    def out(s):
        print(s, flush=True)

    out(f"ctmc, 3 classes x N = {args.N} over 3 PS queues")
    new_path(args.N, out)
    if args.old:
        old_build(args.N, out)
        out("ctmc, 3 classes x N = 5 over 3 PS queues (9,261 states): old path, then new")
        old_whole(5, out)
        new_path(5, out)
    if args.big:
        out("ctmc, 3 classes x N = 13 over 3 PS queues")
        new_path(13, out)
    if args.ph:
        from qmodels.analytic import _ctmc_chain

        _ctmc_chain.COMPACT_FCFS = not args.wide
        if args.wide:
            out("(--wide: one-class FCFS stations with phases kept as ordered rows)")
        ph_models(out)
    if args.precond:
        out("BiCGSTAB, Jacobi against ILU(0), on the three-tier model's pinned systems")
        preconditioners(out)
    if args.decomposition:
        out(f"decomposition against ctmc, pooled I/O path, N = {args.decomposition}")
        decomposition_vs_ctmc(args.decomposition, out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    out(f"peak RSS of this process: {peak:.2f} GiB")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
