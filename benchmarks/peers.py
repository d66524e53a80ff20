"""The peers: line-solver (PyPI), GNU Octave's queueing package, a plain C
loop, and a plain numpy loop.

Every peer takes plain arrays — demands ``D`` shaped (classes, stations) or
(stations,), populations ``N``, think times ``Z`` — and returns its time and
its answer in our layout: class throughputs ``X`` (classes,) and queue
lengths ``Q`` (classes, stations).  All stations are fixed-rate queueing
stations with visit ratio 1 and service time = demand (the benchmark models
are built that way), so the same numbers mean the same network everywhere.

A peer that is not installed raises :class:`Unavailable` with the reason; the
runner prints it and goes on.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np

from ._util import build_dir, have_exe, timeit

SLOW_WARMUP = 1.0   # a peer warm-up call slower than this counts as a timed repetition


class Unavailable(Exception):
    """The peer cannot run here (not installed, failed to build)."""


def _timeit_peer(fn, repeat, budget):
    """timeit for interpreted peers: one warm-up call; if it took longer than
    SLOW_WARMUP seconds it is kept as the first timed repetition (no JIT to
    warm; a second untimed call of a 10-second solver would only waste time)."""
    t0 = time.perf_counter()
    value = fn()
    first = time.perf_counter() - t0
    if first > SLOW_WARMUP:
        if budget is not None and first > budget:
            return first, first, [first], value
        med, mn, times, value = timeit(fn, max(0, repeat - 1) or 1, warmup=0,
                                       budget=None if budget is None else budget - first)
        times = [first] + times
        import statistics

        return statistics.median(times), min(times), times, value
    return timeit(fn, repeat, warmup=0, budget=budget)


# ---------------------------------------------------------------------------
# line-solver (Imperial College's LINE, native Python port on PyPI)
# ---------------------------------------------------------------------------

class Line:
    name = "line-solver"

    def __init__(self):
        try:
            t0 = time.perf_counter()
            from line_solver.api.pfqn.mva import pfqn_bs, pfqn_mva
            from line_solver.api.pfqn.mvald import pfqn_mvams
            self.import_s = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"line-solver not importable ({type(e).__name__}: {e}); "
                              "run benchmarks/setup_peers.sh") from None
        self._mva, self._bs, self._mvams = pfqn_mva, pfqn_bs, pfqn_mvams
        try:
            from importlib.metadata import version

            self.version = version("line-solver")
        except Exception:  # noqa: BLE001
            self.version = "?"

    def exact(self, D, N, Z, repeat, budget):
        """pfqn_mva(L (stations x classes), N, Z): exact MVA (single or multi-class)."""
        D = np.atleast_2d(D)
        L = np.ascontiguousarray(D.T)
        N = np.asarray(N, dtype=float)
        Z = np.asarray(Z, dtype=float)
        med, mn, times, out = _timeit_peer(lambda: self._mva(L, N, Z), repeat, budget)
        XN, _CN, QN = out[0], out[1], out[2]
        return med, mn, len(times), np.asarray(XN).ravel(), np.asarray(QN).T, ""

    def schweitzer(self, D, N, Z, tol, repeat, budget):
        """pfqn_bs(L, N, Z, tol, maxiter): Bard-Schweitzer (stop: max |1 - Q/Q_old| < tol)."""
        L = np.ascontiguousarray(np.atleast_2d(D).T)
        N = np.asarray(N, dtype=float)
        Z = np.asarray(Z, dtype=float)
        med, mn, times, out = _timeit_peer(
            lambda: self._bs(L, N, Z, tol=tol, maxiter=100000), repeat, budget)
        XN, QN, _UN, _RN, it = out
        return med, mn, len(times), np.asarray(XN).ravel(), np.asarray(QN).T, f"{it} iterations"

    def bounds_single(self, D, N, Z, repeat, budget):
        """pfqn_xzabalow/up (asymptotic) and pfqn_xzgsblow/up (geometric
        square-root, Casale, Muntz & Serazzi 2008) on the throughput:
        [ABA X lower, upper], [GB X lower, upper]."""
        from line_solver.api.pfqn.bounds import (
            pfqn_xzabalow,
            pfqn_xzabaup,
            pfqn_xzgsblow,
            pfqn_xzgsbup,
        )

        L = np.ascontiguousarray(np.atleast_2d(D).T)
        n, z = float(N), float(Z)

        def call():
            return ([pfqn_xzabalow(L, n, z), pfqn_xzabaup(L, n, z)],
                    [pfqn_xzgsblow(L, n, z), pfqn_xzgsbup(L, n, z)])

        med, mn, times, out = _timeit_peer(call, repeat, budget)
        return med, mn, len(times), [np.array(x, dtype=float) for x in out]

    def multiserver(self, S, servers, N, Z):
        """pfqn_mvams: exact MVA with multi-server stations (load-dependent recursion)."""
        XN, QN, *_ = self._mvams(np.zeros(1), np.atleast_2d(S).T, np.array([float(N)]),
                                 np.array([float(Z)]), None, np.asarray(servers))
        return float(np.asarray(XN).ravel()[0]), np.asarray(QN).T[0]


# ---------------------------------------------------------------------------
# GNU Octave + queueing package, through octave-cli; timed inside Octave
# ---------------------------------------------------------------------------

def _fmt_vec(a):
    return "[" + " ".join(f"{float(x):.17g}" for x in np.ravel(a)) + "]"


def _mat(a):
    a = np.atleast_2d(a)
    return "[" + ";".join(" ".join(f"{float(x):.17g}" for x in r) for r in a) + "]"


class Octave:
    name = "Octave queueing"

    def __init__(self):
        exe = have_exe("octave-cli") or have_exe("octave")
        if not exe:
            raise Unavailable("octave-cli not found; run benchmarks/setup_peers.sh "
                              "(Debian packages octave, octave-queueing)")
        self.exe = exe
        self.dir = build_dir() / "octave"
        self.dir.mkdir(exist_ok=True)
        # start-up + pkg load, measured once (median of 3), excluded from the times
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            p = self._run("pkg load queueing; disp(1);", check=False)
            ts.append(time.perf_counter() - t0)
            if p.returncode != 0 or "1" not in p.stdout:
                raise Unavailable("octave runs but `pkg load queueing` fails (install the "
                                  f"Debian package octave-queueing): {p.stderr.strip()[:200]}")
        self.startup_s = sorted(ts)[1]
        v = self._run("disp(OCTAVE_VERSION); p = pkg('list', 'queueing'); disp(p{1}.version);",
                      check=False).stdout.split()
        self.version = "/".join(v[:2]) if len(v) >= 2 else "?"

    def _run(self, code, check=True, timeout=3600):
        path = self.dir / "bench_script.m"
        path.write_text(code)
        p = subprocess.run([self.exe, "-q", "--no-gui", "--no-window-system", str(path)],
                           capture_output=True, text=True, timeout=timeout,
                           cwd=self.dir, env={**os.environ, "OMP_NUM_THREADS": "1"})
        if check and ("time" not in p.stdout):
            raise RuntimeError(f"octave failed: {p.stderr.strip()[-400:]}")
        return p

    def _timed(self, setup, call, outputs, repeat, budget, warmup=True):
        """Run `call` in Octave (after `setup`), warm-up then timed with tic/toc;
        `outputs` prints the answer.  Returns (median, min, reps, stdout)."""
        code = f"""
pkg load queueing; warning('off', 'all');
{setup}
budget = {float(budget) if budget else 1e9!r};
spent = 0; times = [];
if {1 if warmup else 0}
  t = tic; {call}; w = toc(t);
  if w > {SLOW_WARMUP}
    times(end+1) = w; spent = w;
  end
end
while numel(times) < {int(repeat)} && spent <= budget
  t = tic; {call}; dt = toc(t);
  times(end+1) = dt; spent = spent + dt;
end
printf("time %.9g\\n", times);
{outputs}
"""
        p = self._run(code)
        times = [float(x) for x in re.findall(r"^time (\S+)$", p.stdout, re.M)]
        return float(np.median(times)), float(min(times)), len(times), p.stdout

    @staticmethod
    def _values(stdout, tag):
        return np.array([float(x) for x in re.findall(rf"^{tag} (\S+)$", stdout, re.M)])

    def exact_single(self, D, N, Z, repeat, budget):
        """qncsmva(N, S, V, m, Z): exact single-class MVA."""
        D = np.ravel(D)
        setup = (f"S = {_fmt_vec(D)}; V = ones(size(S)); m = ones(size(S)); "
                 f"N = {int(N)}; Z = {float(Z)!r};")
        call = "[U, R, Q, X] = qncsmva(N, S, V, m, Z)"
        out = 'printf("X %.17g\\n", X(1)); printf("Q %.17g\\n", Q);'
        med, mn, reps, so = self._timed(setup, call, out, repeat, budget)
        return med, mn, reps, self._values(so, "X"), self._values(so, "Q")[None, :], ""

    def exact_multi(self, D, N, Z, repeat, budget):
        """qncmmva(N, S, V, m, Z): exact multi-class MVA."""
        setup = (f"S = {_mat(D)}; V = ones(size(S)); m = ones(1, columns(S)); "
                 f"N = {_fmt_vec(N)}; Z = {_fmt_vec(Z)};")
        call = "[U, R, Q, X] = qncmmva(N, S, V, m, Z)"
        out = 'printf("X %.17g\\n", X(:, 1)); printf("Q %.17g\\n", Q\');'
        med, mn, reps, so = self._timed(setup, call, out, repeat, budget)
        C, K = np.shape(D)
        return med, mn, reps, self._values(so, "X"), self._values(so, "Q").reshape(C, K), ""

    def schweitzer(self, D, N, Z, tol, repeat, budget):
        """qncmmvabs(N, S, V, m, Z, tol, iter_max): Bard-Schweitzer (qncmmvaap is its
        deprecated alias).  Stop: norm((Q - Q_old) ./ Q_old, inf) < tol (a max row sum)."""
        setup = (f"S = {_mat(D)}; V = ones(size(S)); m = ones(1, columns(S)); "
                 f"N = {_fmt_vec(N)}; Z = {_fmt_vec(Z)};")
        call = f"[U, R, Q, X] = qncmmvabs(N, S, V, m, Z, {tol!r}, 100000)"
        out = 'printf("X %.17g\\n", X(:, 1)); printf("Q %.17g\\n", Q\');'
        med, mn, reps, so = self._timed(setup, call, out, repeat, budget)
        C, K = np.shape(D)
        return med, mn, reps, self._values(so, "X"), self._values(so, "Q").reshape(C, K), ""

    def bounds_single(self, D, N, Z, repeat, budget):
        """qncsaba, qncsbsb, qncsgb, qncspb (asymptotic, balanced system,
        geometric, proportional bounds) in turn: [X lower, upper] of each."""
        D = np.ravel(D)
        setup = (f"S = {_fmt_vec(D)}; V = ones(size(S)); m = ones(size(S)); "
                 f"N = {int(N)}; Z = {float(Z)!r};")
        call = ("[a1, a2] = qncsaba(N, S, V, m, Z); [b1, b2] = qncsbsb(N, S, V, m, Z); "
                "[g1, g2] = qncsgb(N, S, V, m, Z); [p1, p2] = qncspb(N, S, V, m, Z)")
        out = 'printf("X %.17g\\n", [a1 a2 b1 b2 g1 g2 p1 p2]);'
        med, mn, reps, so = self._timed(setup, call, out, repeat, budget)
        X = self._values(so, "X")
        return med, mn, reps, [X[0:2], X[2:4], X[4:6], X[6:8]]

    def batch_single(self, D, Z, N, repeat, budget, max_configs):
        """A loop of qncsmva over the first configurations of a batch (inside Octave)."""
        B = min(len(D), max_configs)
        path = self.dir / "batch.txt"
        np.savetxt(path, np.column_stack([D[:B], Z[:B]]), fmt="%.17g")
        setup = (f"A = load('{path.name}'); Ds = A(:, 1:end-1); Zs = A(:, end); "
                 f"B = rows(Ds); N = {int(N)}; V = ones(1, columns(Ds)); m = V; Xb = zeros(B, 1);")
        call = ("for b = 1:B, [U, R, Q, X] = qncsmva(N, Ds(b, :), V, m, Zs(b)); "
                "Xb(b) = X(1); end")
        out = 'printf("X %.17g\\n", Xb);'
        med, mn, reps, so = self._timed(setup, call, out, repeat, budget, warmup=False)
        return med, mn, reps, self._values(so, "X"), B

    def multiserver(self, S, servers, N, Z):
        """qncsmva with m(k) > 1 servers (the recursion for the marginal
        probabilities that cancels catastrophically near saturation)."""
        code = (f"pkg load queueing; warning('off', 'all'); "
                f"[U, R, Q, X] = qncsmva({int(N)}, {_fmt_vec(S)}, ones(1, {len(S)}), "
                f"{_fmt_vec(servers)}, {float(Z)!r}); "
                'printf("X %.17g\\n", X(1)); printf("Q %.17g\\n", Q); printf("time 0\\n");')
        so = self._run(code).stdout
        return float(self._values(so, "X")[0]), self._values(so, "Q")


    def convolution(self, S, N):
        """qncsconv(N, S, V): Buzen's convolution (single class, fixed-rate)."""
        code = (f"pkg load queueing; warning('off', 'all'); "
                f"[U, R, Q, X] = qncsconv({int(N)}, {_fmt_vec(S)}, ones(1, {len(S)})); "
                'printf("X %.17g\\n", X(1)); printf("Q %.17g\\n", Q); printf("time 0\\n");')
        so = self._run(code).stdout
        return float(self._values(so, "X")[0]), self._values(so, "Q")


# ---------------------------------------------------------------------------
# plain C loop, compiled here with the system compiler
# ---------------------------------------------------------------------------

class CLoop:
    name = "C loop (cc -O2)"

    def __init__(self):
        cc = os.environ.get("CC") or have_exe("cc") or have_exe("gcc") or have_exe("clang")
        if not cc:
            raise Unavailable("no C compiler (cc) found; apt-get install gcc")
        src = Path(__file__).resolve().parent / "c" / "mva.c"
        exe = build_dir() / "mva_c"
        cmd = [cc, "-O2", "-std=c99", "-o", str(exe), str(src)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise Unavailable(f"{' '.join(cmd)} failed: {p.stderr.strip()[:300]}")
        self.exe = exe
        self.cmd = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd[:3]))
        v = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()
        self.version = v[0] if v else "?"

    def _run(self, text):
        p = subprocess.run([str(self.exe)], input=text, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"C loop failed: {p.stderr.strip()}")
        times = [float(x) for x in re.findall(r"^time (\S+)$", p.stdout, re.M)]
        X = np.array([float(x) for x in re.findall(r"^X (\S+)$", p.stdout, re.M)])
        Q = np.array([float(x) for x in re.findall(r"^Q (\S+)$", p.stdout, re.M)])
        return times, X, Q

    def exact_single(self, D, N, Z, repeat, min_time=0.0):
        """``repeat`` timed solves at least, more until ``min_time`` seconds
        are spent (calibrated on a first short run), at most 5000."""
        D = np.ravel(D)

        def go(reps):
            text = f"single {len(D)} {int(N)} {float(Z)!r} {int(reps)}\n" + " ".join(
                f"{x:.17g}" for x in D) + "\n"
            return self._run(text)

        times, X, Q = go(3)
        reps = max(int(repeat), min(5000, int(min_time / max(min(times), 1e-9)) + 1))
        times, X, Q = go(reps)
        return float(np.median(times)), min(times), len(times), X, Q[None, :], ""

    def batch_single(self, D, Z, N, repeat):
        B, K = D.shape
        text = (f"batch {B} {K} {int(N)} {int(repeat)}\n"
                + "\n".join(" ".join(f"{x:.17g}" for x in r) for r in D) + "\n"
                + " ".join(f"{z:.17g}" for z in Z) + "\n")
        times, X, _ = self._run(text)
        return float(np.median(times)), min(times), len(times), X


# ---------------------------------------------------------------------------
# plain numpy: the recursion with numpy operations over stations
# ---------------------------------------------------------------------------

def numpy_mva(D, N, Z):
    """Exact single-class MVA, numpy over stations, a Python loop over n."""
    D = np.asarray(D, dtype=float)
    Q = np.zeros_like(D)
    X = 0.0
    for n in range(1, int(N) + 1):
        R = D * (1.0 + Q)
        X = n / (Z + R.sum())
        Q = X * R
    return X, Q


def numpy_mva_batch(D, Z, N):
    """Exact single-class MVA for a batch (B, K): numpy over the batch and the
    stations, a Python loop over n."""
    D = np.asarray(D, dtype=float)
    Z = np.asarray(Z, dtype=float)
    Q = np.zeros_like(D)
    X = np.zeros(len(D))
    for n in range(1, int(N) + 1):
        R = D * (1.0 + Q)
        X = n / (Z + R.sum(axis=1))
        Q = X[:, None] * R
    return X, Q


# ---------------------------------------------------------------------------
# line-solver's model API: fork-join, priority and non-exponential networks,
# which its pfqn_* functions cannot express (issue 22; benchmarks/cases_more.py)
# ---------------------------------------------------------------------------

def _line_table(solver):
    """line-solver's average table as a pandas DataFrame (``avg_table()``
    returns an IndexedTable wrapping one in ``.data``): columns Station,
    JobClass, QLen, Util, RespT, ResidT, Tput."""
    t = solver.avg_table()
    return getattr(t, "data", t)


def _line_get(df, station, jobclass, column):
    sel = df[(df["Station"].astype(str) == station) & (df["JobClass"].astype(str) == jobclass)]
    if len(sel) != 1:
        raise RuntimeError(f"line-solver table has {len(sel)} rows for ({station}, {jobclass})")
    return float(sel[column].iloc[0])


class LineModels:
    """line-solver's native Python model API (``line_solver.Network`` and
    its nodes, classes and distributions) and solvers ``SolverMVA`` and
    ``SolverMAM``.  Each method builds the network of one case, solves it
    ``repeat`` times (model construction excluded: it is built once) and
    returns ``(median, min, reps, figures, extra)`` with the figures in the
    layout of ``benchmarks.cases_more.answer``."""

    name = "line-solver"

    def __init__(self):
        try:
            import line_solver as L

            for attr in ("Network", "Source", "Sink", "Queue", "Delay", "Fork", "Join",
                         "OpenClass", "ClosedClass", "SchedStrategy", "Exp", "Erlang",
                         "HyperExp", "SolverMVA", "SolverMAM"):
                getattr(L, attr)
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"line-solver's model API not importable ({type(e).__name__}: "
                              f"{e}); run benchmarks/setup_peers.sh") from None
        self.L = L

    def _dist(self, mean, scv):
        """A line-solver distribution of the given mean and SCV (Erlang below
        1, exponential at 1, two-phase hyperexponential above 1)."""
        L = self.L
        if scv == 1.0:
            return L.Exp.fit_mean(mean)
        if scv < 1.0:
            return L.Erlang.fit_mean_and_scv(mean, scv)
        return L.HyperExp.fit_mean_and_scv(mean, scv)

    def _time(self, solve, repeat, budget):
        """Solve afresh each time (a new solver object: no cached result)."""
        return _timeit_peer(solve, repeat, budget)

    def forkjoin_open(self, K, lam, S, solver, repeat, budget):
        """Source -> Fork -> K FCFS exponential queues -> Join -> Sink;
        ``solver="mam"``: ``SolverMAM(model, method='fj')``, FJ_codes' mean
        response time of the fork-join (Qiu, Perez & Harrison 2015);
        ``solver="mva"``: ``SolverMVA(model)`` with its default fork-join
        option (``fork_join='default'``, Heidelberger & Trivedi's
        decomposition), the system response time ``getAvgSysRespT()``."""
        L = self.L
        model = L.Network("fj")
        source, sink = L.Source(model, "Source"), L.Sink(model, "Sink")
        fork = L.Fork(model, "Fork")
        join = L.Join(model, "Join", fork)
        qs = [L.Queue(model, f"b{i}", L.SchedStrategy.FCFS) for i in range(K)]
        jobs = L.OpenClass(model, "jobs")
        source.set_arrival(jobs, L.Exp(lam))
        for q in qs:
            q.set_service(jobs, L.Exp.fit_mean(S))
        P = model.init_routing_matrix()
        P.set(jobs, jobs, source, fork, 1.0)
        for q in qs:
            P.set(jobs, jobs, fork, q, 1.0)
            P.set(jobs, jobs, q, join, 1.0)
        P.set(jobs, jobs, join, sink, 1.0)
        model.link(P)

        def solve():
            if solver == "mva":
                return float(np.ravel(L.SolverMVA(model, verbose=False).getAvgSysRespT())[0])
            s = L.SolverMAM(model, method="fj", verbose=False)
            s.runAnalyzer()
            return float(s.result.percentile_results["mean_response_time"])

        med, mn, times, R = self._time(solve, repeat, budget)
        note = ""
        if not np.isfinite(R) or R > 1e300:
            note = f"returned {R:.3g}: no answer (its FJ_codes path failed on this model)"
        return med, mn, len(times), [np.array([R])], note

    def priority_closed(self, p, repeat, budget):
        """Terminals (a delay) -> HOL CPU -> FCFS disk, two closed classes,
        class ``inter`` of priority 0 (line-solver: a lower value is a higher
        priority), ``SolverMVA(model, method='amva')`` (its AMVA with the HOL
        correction; its exact method refuses a HOL queue)."""
        L = self.L
        model = L.Network("prio")
        term = L.Delay(model, "term")
        cpu = L.Queue(model, "cpu", L.SchedStrategy.HOL)
        disk = L.Queue(model, "disk", L.SchedStrategy.FCFS)
        classes = [L.ClosedClass(model, "inter", p["N"][0], term, 0),
                   L.ClosedClass(model, "batch", p["N"][1], term, 1)]
        for c in classes:
            term.set_service(c, L.Exp.fit_mean(p["Z"]))
            cpu.set_service(c, L.Exp.fit_mean(p["cpu"]))
            disk.set_service(c, L.Exp.fit_mean(p["disk"]))
        P = model.init_routing_matrix()
        for c in classes:
            P.set(c, c, term, cpu, 1.0)
            P.set(c, c, cpu, disk, 1.0)
            P.set(c, c, disk, term, 1.0)
        model.link(P)
        med, mn, times, df = self._time(
            lambda: _line_table(L.SolverMVA(model, method="amva", verbose=False)), repeat, budget)
        names = ("inter", "batch")
        X = np.array([_line_get(df, "term", c, "Tput") for c in names])
        Q = np.array([[_line_get(df, s, c, "QLen") for s in ("term", "cpu", "disk")]
                      for c in names])
        return med, mn, len(times), [X, Q], ""

    def tandem_open(self, p, solver, method, repeat, budget):
        """Source (inter-arrival SCV ``ca2``) -> q1 -> q2 -> q3 -> Sink with
        service SCVs ``scv``; ``SolverMVA(model, method='qna')`` or
        ``SolverMAM(model, method='dec.source')``.  Figures: the class
        response time (sum over the queues, one visit each) and the queue
        lengths."""
        L = self.L
        model = L.Network("tandem")
        source, sink = L.Source(model, "Source"), L.Sink(model, "Sink")
        names = ("q1", "q2", "q3")
        qs = [L.Queue(model, n, L.SchedStrategy.FCFS) for n in names]
        jobs = L.OpenClass(model, "jobs")
        source.set_arrival(jobs, self._dist(1.0 / p["lam"], p["ca2"]))
        for q, S, c2 in zip(qs, p["S"], p["scv"]):
            q.set_service(jobs, self._dist(S, c2))
        model.link(L.Network.serial_routing([source, *qs, sink]))
        cls = L.SolverMVA if solver == "mva" else L.SolverMAM
        med, mn, times, df = self._time(
            lambda: _line_table(cls(model, method=method, verbose=False)), repeat, budget)
        Q = np.array([[_line_get(df, n, "jobs", "QLen") for n in names]])
        R = np.array([sum(_line_get(df, n, "jobs", "RespT") for n in names)])
        return med, mn, len(times), [R, Q], ""

    def closed_nonexp(self, p, repeat, budget):
        """Terminals -> q1 -> q2 -> q3 (FCFS, service SCVs ``scv``), one
        closed class, ``SolverMVA(model, method='amva')``: its AMVA
        (non-exponential FCFS service enters through the SCV)."""
        L = self.L
        model = L.Network("closed")
        term = L.Delay(model, "term")
        names = ("q1", "q2", "q3")
        qs = [L.Queue(model, n, L.SchedStrategy.FCFS) for n in names]
        tx = L.ClosedClass(model, "tx", p["N"], term, 0)
        term.set_service(tx, L.Exp.fit_mean(p["Z"]))
        for q, S, c2 in zip(qs, p["S"], p["scv"]):
            q.set_service(tx, self._dist(S, c2))
        model.link(L.Network.serial_routing([term, *qs]))
        med, mn, times, df = self._time(
            lambda: _line_table(L.SolverMVA(model, method="amva", verbose=False)), repeat, budget)
        X = np.array([_line_get(df, "term", "tx", "Tput")])
        Q = np.array([[_line_get(df, s, "tx", "QLen") for s in ("term", *names)]])
        return med, mn, len(times), [X, Q], ""
