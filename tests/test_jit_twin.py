"""The first call without numba's compile wait (qmodels._jit.Resumable).

On a fresh install the simulator's event loop runs as its Python twin while a
child process compiles its machine code, then switches.  These tests pin that
the twin is the loop bit for bit (the pinned simulator runs of
test_sim_pins, computed by the compiled loop), that switching between twin and
machine code in the middle of a run changes no number, and, end to end in
fresh processes with an empty numba cache, that the child really fills the
cache the next process loads.  The multi-class lattice kernel runs as Python
below its size threshold; its Python and compiled forms must agree.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import qmodels as qm
from qmodels._jit import Resumable, jit_mode, python_twin
from qmodels.analytic import _lattice
from qmodels.sim import engine as E
from qmodels.sim import run as sim_run
from tests.test_sim_pins import PINNED, _figures, cases

ROOT = pathlib.Path(qm.__file__).parent.parent


class _Alternate:
    """Twin and machine code on alternate calls (with tiny chunks: many
    switches per run)."""

    def __init__(self):
        self.calls = 0
        self.twin = python_twin(E.run)

    def pick(self, args):
        self.calls += 1
        return (self.twin, False) if self.calls % 2 else (E.run, True)


@pytest.mark.parametrize("name", list(PINNED))
def test_the_python_twin_reproduces_the_compiled_loop_bit_for_bit(name, monkeypatch):
    monkeypatch.setenv("QMODELS_JIT", "python")
    monkeypatch.setattr(sim_run, "ENGINE", Resumable(E.run))
    net, kw = {n: (net, kw) for n, net, kw in cases()}[name]
    assert _figures(net, kw) == PINNED[name]
    assert sim_run.ENGINE._state == "python"


def test_switching_between_twin_and_machine_code_mid_run_changes_no_number(monkeypatch):
    alt = _Alternate()
    monkeypatch.setattr(sim_run, "ENGINE", alt)
    monkeypatch.setattr(sim_run, "CHUNK_EVENTS", 1499)
    monkeypatch.setattr(sim_run, "TWIN_CHUNK_EVENTS", 1013)
    for name, net, kw in cases():
        if name in ("tandem_block", "pool", "mixed_ps_ld"):
            assert _figures(net, kw) == PINNED[name], name
    assert alt.calls > 20


def test_the_twin_runs_no_machine_code():
    twin = python_twin(E.run)
    assert twin.__code__ is E.run.py_func.__code__
    g = twin.__globals__
    compiled = [n for n, v in g.items() if hasattr(v, "py_func") and hasattr(v, "overloads")]
    assert compiled == []
    assert g is not vars(E)  # the module itself keeps its compiled kernels


def test_jit_mode_reads_the_environment(monkeypatch):
    monkeypatch.setenv("QMODELS_JIT", "SYNC")
    assert jit_mode() == "sync"
    monkeypatch.setenv("QMODELS_JIT", "nonsense")
    assert jit_mode() == "background"
    monkeypatch.delenv("QMODELS_JIT")
    assert jit_mode() == "background"


_FIRST = textwrap.dedent("""
    import json, sys, time
    import qmodels as qm
    import qmodels._jit as J
    from qmodels.sim import run
    seen = []
    look = J.machine_code_at_hand
    J.machine_code_at_hand = lambda d, a: seen.append(look(d, a)) or seen[-1]
    net = qm.Network([qm.Delay("users", 0.5), qm.Queue("cpu", 0.01, servers=2),
                      qm.Queue("disk", 0.02)],
                     [qm.Closed("tx", 8, visits={"users": 1, "cpu": 1, "disk": 0.7})])
    t = time.perf_counter()
    r = qm.simulate(net, seed=3, horizon=100.0, replications=2, progress=False)
    out = {"state": run.ENGINE._state, "seconds": time.perf_counter() - t,
           "X": r.X["tx"].mean, "R": r.R["tx"].mean, "events": r.events, "at_hand": seen,
           "own_child": run.ENGINE._child is not None}
    lock = J._lock_path(run.ENGINE.dispatcher)
    out["lock_seen"] = bool(lock and os.path.exists(lock))
    if sys.argv[1] == "wait":  # until the cache is filled (by whichever process)
        end = time.time() + 900
        while lock and os.path.exists(lock) and time.time() < end:
            time.sleep(0.2)
        if run.ENGINE._child is not None:
            out["child_rc"] = run.ENGINE._child.wait(timeout=900)
    print(json.dumps(out))
""").replace("import json, sys, time", "import json, os, sys, time")


def _fresh(tmp_path, mode, then="wait"):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), QMODELS_JIT=mode,
               PYTHONPATH=str(ROOT), QMODELS_KERNELS="")  # no shipped machine code
    out = subprocess.run([sys.executable, "-c", _FIRST, then], env=env, capture_output=True,
                         text=True, timeout=1200, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_fresh_process_runs_the_twin_while_a_child_fills_the_cache(tmp_path):
    pytest.importorskip("numba")
    # the cache is empty: the run goes on as Python, a child compiles (and
    # outlives this short process)
    first = _fresh(tmp_path, "background", then="exit")
    assert first["at_hand"] == [False]
    assert first["state"] == "child" and first["own_child"] and first["lock_seen"]
    # a second process while that child compiles: it runs the twin too, but
    # starts no compile of its own (the lock), and waits for the cache
    second = _fresh(tmp_path, "background")
    assert second["at_hand"] and second["at_hand"][0] is False
    assert second["state"] == "waiting" and not second["own_child"]
    assert second["lock_seen"]
    assert list((tmp_path / "cache").rglob("engine.run-*.nbi"))
    assert not list((tmp_path / "cache").rglob("*.compiling"))  # the child removed it
    third = _fresh(tmp_path, "background")  # the cache is full now
    assert third["at_hand"] == [True]
    assert third["state"] == "compiled" and not third["own_child"]
    for key in ("X", "R", "events"):
        assert first[key] == second[key] == third[key]


def test_the_compile_lock(tmp_path, monkeypatch):
    import qmodels._jit as J

    path = str(tmp_path / "c" / "k.compiling")
    assert J._take_lock(None) is None
    assert J._take_lock(path) is True        # ours
    assert J._take_lock(path) is False       # held (by "another process")
    old = os.stat(path).st_mtime - J.LOCK_STALE - 1
    os.utime(path, (old, old))
    assert J._take_lock(path) is True        # a stale lock is taken over
    import subprocess as sp

    dead = sp.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    J._mark_lock(path, dead.pid)             # its compiler died (killed, crashed)
    if os.name == "posix":
        assert J._take_lock(path) is True
    J._mark_lock(path, os.getpid())          # alive
    assert J._take_lock(path) is False
    J._drop_lock(path)
    assert J._take_lock(path) is True
    # a process that finds the lock held waits (the twin) and starts nothing;
    # once the machine code is in the cache it uses it
    monkeypatch.setenv("QMODELS_JIT", "background")
    monkeypatch.setattr(J, "_lock_path", lambda d: path)
    at_hand = [False]
    monkeypatch.setattr(J, "machine_code_at_hand", lambda d, a: at_hand[0])
    started = []
    monkeypatch.setattr(J, "_compile_in_child", lambda *a: started.append(a) or None)
    r = Resumable(E.run)
    assert r.pick(()) == (r.twin, False) and r._state == "waiting" and not started
    assert r.pick(()) == (r.twin, False)
    at_hand[0] = True
    assert r.pick(()) == (r.twin, False)     # it looks at the cache once a second
    r._next_look = 0.0
    assert r.pick(()) == (E.run, True) and not started
    # the lock gone without machine code (its compiler died): compile ourselves
    J._drop_lock(path)
    at_hand[0] = False
    J._take_lock(path)
    r = Resumable(E.run)
    assert r.pick(())[1] is False and r._state == "waiting"
    J._drop_lock(path)
    r._next_look = 0.0
    r.pick(())
    assert len(started) == 1 and not os.path.exists(path)  # no child: lock dropped


def test_the_multiclass_lattice_kernel_agrees_in_python_and_compiled():
    pytest.importorskip("numba")
    net = qm.Network(
        [qm.Queue("cpu", 0.02, servers=2), qm.Queue("disk", 0.03),
         qm.LoadDependent("net", 0.05, rate_multipliers=(1.0, 1.5, 1.8))],
        [qm.Closed("a", 6, think_time=1.0, visits={"cpu": 1, "disk": 1, "net": 1}),
         qm.Closed("b", 4, think_time=0.5, visits={"cpu": 2, "disk": 0.5, "net": 0.3})])
    kernel = _lattice._lattice_run
    saved = kernel.threshold
    try:
        kernel.threshold = 10**12
        py = qm.mva(net)
        kernel.threshold = 0
        nb = qm.mva(net)
    finally:
        kernel.threshold = saved
    for name in net.class_names:
        assert py.X[name] == pytest.approx(nb.X[name], rel=1e-13)
    for k in net.station_names:
        assert py.Q[k] == pytest.approx(nb.Q[k], rel=1e-13)


def test_without_a_child_the_kernel_compiles_here(monkeypatch):
    # no child could be started (embedded Python, no fork): compile in this
    # process, as numba would; a child that fails: the same at its end
    import qmodels._jit as J

    monkeypatch.setenv("QMODELS_JIT", "background")
    monkeypatch.setattr(J, "machine_code_at_hand", lambda d, a: False)
    monkeypatch.setattr(J, "_lock_path", lambda d: None)  # no lock file in the real cache
    monkeypatch.setattr(J, "_compile_in_child", lambda *a: None)
    r = Resumable(E.run)
    fn, machine = r.pick(())
    assert fn is E.run and machine and r._state == "compiled"

    class Failed:
        def __init__(self):
            self.polls = 0

        def poll(self):
            self.polls += 1
            return None if self.polls == 1 else 1

    child = Failed()
    monkeypatch.setattr(J, "_compile_in_child", lambda *a: child)
    r = Resumable(E.run)
    fn, machine = r.pick(())
    assert not machine and r._state == "child"   # the twin while it runs
    fn, machine = r.pick(())
    assert fn is E.run and machine and r._state == "compiled"   # it failed: compile here


# -- warming up ahead of the first simulate ------------------------------------------------

def _loop_args(net):
    """The event loop's arguments for ``net``, built as a replication builds them."""
    import numpy as np

    from qmodels.sim.api import _edges
    from qmodels.sim.flatten import flatten

    edges, seg, nseg = _edges(100.0, 10.0, 8)
    run = sim_run._Run(flatten(net), np.random.Generator(np.random.PCG64(1)), edges, seg, nseg)
    return run._args(100.0)


def test_the_loop_signature_is_the_same_for_every_model():
    # warm_up compiles for the arguments of a one-station model: that is the
    # machine code every model needs only if the types never depend on it
    from qmodels._jit import _signature

    probe = _signature(E.run, sim_run._probe_args())
    Erl = qm.Erlang
    nets = [
        qm.Network([qm.Delay("z", 1.0), qm.Queue("a", 0.1, servers=3), qm.Queue("b", 0.2)],
                   [qm.Closed("c", 5, visits={"z": 1, "a": 1, "b": 2}),
                    qm.Open("o", 0.5, visits={"a": 1})]),
        qm.Network([qm.Queue("a", 0.1, discipline="ps", distribution=Erl(3)),
                    qm.Queue("b", 0.2, capacity=2)],
                   [qm.Closed("c", 4, routing={"a": {"b": 1}, "b": {"a": 1}})]),
        qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0), qm.Queue("d", 0.5)],
                   [qm.Closed("t", 6, routing={"a": {"b": 1}, "b": {"d": 1}, "d": {"a": 1}})],
                   pools=[qm.TokenPool("tok", 2, "a", "b")]),
    ]
    for net in nets:
        assert _signature(E.run, _loop_args(net)) == probe


_WARM = textwrap.dedent("""
    import json, sys
    import qmodels as qm
    from qmodels._jit import machine_code_at_hand
    from qmodels.sim import run
    at_hand = machine_code_at_hand(run.ENGINE.dispatcher, run._probe_args())
    state = qm.warm_up(wait=sys.argv[1] == "wait")
    print(json.dumps({"at_hand": at_hand, "state": state,
                      "own_child": run.ENGINE._child is not None}))
""")


def test_warm_up_compiles_ahead_of_the_first_simulate(tmp_path):
    pytest.importorskip("numba")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), QMODELS_JIT="background",
               PYTHONPATH=str(ROOT), QMODELS_KERNELS="")

    def fresh(then):
        out = subprocess.run([sys.executable, "-c", _WARM, then], env=env, capture_output=True,
                             text=True, timeout=1200, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    # an empty cache: warm_up returns at once, its child compiling
    first = fresh("exit")
    assert first == {"at_hand": False, "state": "compiling", "own_child": True}
    # another process waits for that compile (no second child), then has it
    second = fresh("wait")
    assert second["state"] == "ready" and not second["own_child"]
    # and the next one finds the machine code in the cache
    assert fresh("exit") == {"at_hand": True, "state": "ready", "own_child": False}
    assert not list((tmp_path / "cache").rglob("*.compiling"))


def test_import_starts_the_warm_up_in_a_notebook_only(tmp_path):
    # a stand-in IPython module whose shell is running, as in Jupyter
    code = textwrap.dedent("""
        import sys, types
        if sys.argv[1] == "ipython":
            fake = types.ModuleType("IPython")
            fake.get_ipython = lambda: object()
            sys.modules["IPython"] = fake
        import qmodels
        print(sys.modules.get("qmodels.sim.run") and sys.modules["qmodels.sim.run"].ENGINE._state)
    """)

    def state(kind, **env):
        out = subprocess.run([sys.executable, "-c", code, kind], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(ROOT), **env), timeout=300,
                             cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip().splitlines()[-1]

    # a script: the simulator is not even imported
    assert state("script") == "None"
    # a notebook: the engine has looked for its machine code (found in this
    # checkout's cache, or a child compiles it)
    assert state("ipython", QMODELS_JIT="background") in ("compiled", "child", "waiting")
    # and not when turned off
    assert state("ipython", QMODELS_JIT="background", QMODELS_WARM_UP="0") == "None"
    assert state("ipython", QMODELS_JIT="sync") == "None"


class _FakeChild:
    """A compiling child that ends when waited for."""

    def __init__(self):
        self.waited = False

    def poll(self):
        return 0 if self.waited else None

    def wait(self):
        self.waited = True
        return 0


def _compiling(monkeypatch, budget):
    """An engine whose (fake) child compiles, the twin budget set; the
    engine, its child, the loop's arguments and the _jit module."""
    import qmodels._jit as J

    eng = Resumable(E.run)
    child = _FakeChild()
    eng._state, eng._child = "child", child
    monkeypatch.setattr(J, "TWIN_BUDGET", budget)
    return eng, child, sim_run._probe_args(), J


def test_past_the_twin_budget_a_call_waits_for_the_compile(monkeypatch):
    eng, child, args, J = _compiling(monkeypatch, 3600.0)
    assert eng.pick(args)[1] is False and not child.waited  # within the budget: the twin
    monkeypatch.setattr(J, "TWIN_BUDGET", -1.0)
    fn, machine = eng.pick(args)  # past it: waits for the child, then the machine code
    assert child.waited and machine and fn is E.run

    # another process compiles: past the budget, look at the cache until it is there
    eng = Resumable(E.run)
    eng._state = "waiting"
    looks = iter(["waiting", "waiting", "compiled"])
    monkeypatch.setattr(eng, "_wait", lambda a: next(looks))
    slept = []
    monkeypatch.setattr(J.time, "sleep", slept.append)
    fn, machine = eng.pick(args)
    assert machine and len(slept) == 2


def test_a_warm_up_does_not_spend_the_twin_budget(monkeypatch):
    eng, child, args, _ = _compiling(monkeypatch, 3600.0)
    assert eng.warm(args) == "compiling" and eng._twin_since is None
    # so a short first run after the warm-up still gets its twin
    assert eng.pick(args)[1] is False and not child.waited
