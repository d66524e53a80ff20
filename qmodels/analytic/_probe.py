"""A workload that reaches every lazily compiled analytic kernel.

Small problems run the analytic kernels as plain Python; larger ones
compile them on first use (``qmodels._jit.lazyjit``).  ``qmodels warm-up``
runs :func:`compile_kernels` to compile them ahead (into numba's cache, or,
with ``--ship``, as the machine code a wheel carries), so that the first
large solve does not wait for numba either.  The probe solves small
networks of every kind the kernels serve (single class with fixed-rate,
multi-server and load-dependent stations; several classes; convolution;
Schweitzer and Linearizer, with and without load-dependent stations; the
parallel kernels of the batched solvers behind ``qm.sweep``; the resumable
spans of a long exact recursion; the compiled
build of the exact CTMC and of its fork-join chain, the lattice multigrid
of its large closed chains; the enumeration of a Marie subsystem's chain)
with every
kernel's size threshold set to 0, then puts the thresholds back.
"""

from __future__ import annotations

import numpy as np

from .._jit import HAVE_NUMBA, LAZY_KERNELS
from ..model.network import Closed, Delay, LoadDependent, Network, Queue

# every module that defines a lazily compiled kernel, imported here so that
# its kernels are in LAZY_KERNELS before the thresholds are set
from . import (  # noqa: F401
    _ctmc_fast,
    _ilu0,
    _lattice,
    _lattice_mg,
    _laws_fast,
    _logconv,
    _subsystem_bfs,
    amva,
    amva_ld,
    batch,
    convolution,
    mva,
)
from ._ctmc_forkjoin import _fj_bfs  # noqa: F401


def _networks():
    single = Network([Delay("z", 1.0), Queue("a", 0.05), Queue("b", 0.03)],
                     [Closed("t", 6, visits={"z": 1, "a": 1, "b": 2})])
    multi_server = Network([Delay("z", 1.0), Queue("cpu", 0.05, servers=3),
                            LoadDependent("net", 0.04, rate_multipliers=(1.0, 1.6, 2.0)),
                            Queue("disk", 0.02)],
                           [Closed("t", 8, visits={"z": 1, "cpu": 1, "net": 1, "disk": 1})])
    classes = Network([Queue("cpu", 0.02, servers=2), Queue("disk", 0.03),
                       LoadDependent("net", 0.05, rate_multipliers=(1.0, 1.5, 1.8))],
                      [Closed("a", 4, think_time=1.0, visits={"cpu": 1, "disk": 1, "net": 1}),
                       Closed("b", 3, think_time=0.5, visits={"cpu": 2, "disk": 0.5,
                                                             "net": 0.3})])
    fixed_classes = Network([Delay("z", 0.5), Queue("cpu", 0.02), Queue("disk", 0.03)],
                            [Closed("a", 4, visits={"z": 1, "cpu": 1, "disk": 1}),
                             Closed("b", 3, visits={"z": 1, "cpu": 2, "disk": 0.5})])
    # several many-server stations: the complements come from prefix and
    # suffix products (mva._LDConvolution._split)
    many_servers = Network([Queue(f"s{i}", 0.1 * (i + 1), servers=10) for i in range(4)],
                           [Closed("t", 40, visits={f"s{i}": 1 for i in range(4)})])
    return single, multi_server, classes, fixed_classes, many_servers


def _solve_all() -> None:
    single, multi_server, classes, fixed_classes, many_servers = _networks()
    mva.mva(many_servers)
    for net in (single, multi_server, classes, fixed_classes):
        mva.mva(net)
        amva.schweitzer(net)
        amva.linearizer(net)
        convolution.convolution(net)
    mva.mva(single, curve=True)
    mva.mva(multi_server, curve=True)
    # the parallel kernels of the batched solvers (qm.sweep's fast route)
    D = np.array([[0.05, 0.03, 0.02], [0.04, 0.03, 0.01]])
    for curve in (False, True):
        batch.mva_batch(D, 1.0, 5, curve=curve)
    servers = np.array([1, 2, 1])
    for multiserver in ("marginal", "seidmann"):
        batch.schweitzer_batch(D, 1.0, 5, servers=servers, multiserver=multiserver)
    batch.schweitzer_batch(D, 1.0, 5)
    # the resumable spans a long exact recursion runs in (so that Ctrl-C is
    # seen between them), reached here by a span limit of 0
    saved = mva.INTERRUPT_WORK, batch.INTERRUPT_WORK
    try:
        mva.INTERRUPT_WORK = batch.INTERRUPT_WORK = 0
        for curve in (False, True):
            mva.mva(single, curve=curve)
            batch.mva_batch(D, 1.0, 5, curve=curve)
    finally:
        mva.INTERRUPT_WORK, batch.INTERRUPT_WORK = saved
    # the compiled CTMC build and its expectations (one signature serves every chain)
    from .ctmc import ctmc

    ctmc(Network([Queue("cpu", 0.02), Queue("disk", 0.03, discipline="ps")],
                 [Closed("a", 2, think_time=1.0, visits={"cpu": 1, "disk": 1}),
                  Closed("b", 2, visits={"cpu": 2, "disk": 1})]))
    # the ILU(0)-preconditioned BiCGSTAB of a large chain's pinned system
    # (a small one here: the kernels are the same for every size)
    import scipy.sparse as sp

    from . import _ctmc_solve

    ring = sp.diags([np.ones(9), np.full(10, -2.0), np.ones(9)], [-1, 0, 1], format="csr")
    _ctmc_solve.ilu0_bicgstab(ring, np.ones(10))
    # (and the ILU(0) kernels themselves, which that solve reaches only
    # where the D-ILU one it tries first fails)
    lu, diag, _ = _ilu0.ilu0(ring.indptr, ring.indices, ring.data)
    _ilu0.bicgstab(ring.indptr, ring.indices, ring.data, lu, diag, np.ones(10), np.zeros(10),
                   1e-10, 50)
    # the lattice multigrid of a large closed phase-type chain (here one of
    # 3,321 states, its threshold and coarsest level lowered: the kernels
    # and their argument types are those of every size)
    from ..model.distributions import Erlang, HyperExponential

    saved_mg = _lattice_mg.MG_STATES, _lattice_mg.COARSEST
    try:
        _lattice_mg.MG_STATES, _lattice_mg.COARSEST = 0, 50
        ctmc(Network([Queue("a", 0.02, distribution=Erlang(2)),
                      Queue("b", 0.03, distribution=HyperExponential(4.0))],
                     [Closed("t", 40, think_time=0.5, visits={"a": 1, "b": 1})]))
    finally:
        _lattice_mg.MG_STATES, _lattice_mg.COARSEST = saved_mg
    # the compiled enumeration of a Marie subsystem's joint chain (two
    # FCFS queues whose mean service differs by class)
    from .marie import marie

    marie(Network([Queue("a", 1.0), Queue("b", 1.0)],
                  [Closed("s", 2, think_time=0.5, routing={"a": {"b": 1.0}, "b": {"a": 1.0}},
                          service={"a": 0.1, "b": 0.3}),
                   Closed("l", 1, routing={"a": {"b": 1.0}, "b": {"a": 1.0}},
                          service={"a": 0.9, "b": 0.4})]))
    # the compiled build of the fork-join chain
    from ..model.forkjoin import ForkJoin

    ctmc(Network([Queue("cpu", 0.02), ForkJoin("fj", [["a1", "a2"], ["b"]]), Queue("a1", 0.03),
                  Queue("a2", 0.01), Queue("b", 0.04)],
                 [Closed("t", 2, think_time=1.0, route=["cpu", "fj"])]))


def compile_kernels() -> dict[str, int]:
    """Compile every lazily compiled analytic kernel for the argument types
    the probe solves give it; ``{kernel: number of compiled signatures}``
    (0 for a kernel the probe did not reach)."""
    if not HAVE_NUMBA:
        return {}
    saved = [(k, k.threshold) for k in LAZY_KERNELS]
    saved_batch = batch.LAZY_THRESHOLD
    try:
        for k, _ in saved:
            k.threshold = 0
        batch.LAZY_THRESHOLD = 0
        _solve_all()
    finally:
        for k, t in saved:
            k.threshold = t
        batch.LAZY_THRESHOLD = saved_batch
    return {f"{d.py_func.__module__}.{d.py_func.__name__}": len(d.overloads)
            for d in _dispatchers()}


def _dispatchers() -> list:
    """The numba dispatchers of every lazily compiled kernel and of the
    batched solvers' parallel kernels compiled so far."""
    return [k.compiled() for k in LAZY_KERNELS] + batch.compiled_kernels()


def ship(dest: str) -> list[str]:
    """Compile every lazily compiled kernel as :func:`compile_kernels` does
    and write the machine code of each signature into ``dest``
    (:func:`qmodels._shipped.save`; the process must run with
    ``NUMBA_CPU_NAME=generic``); the paths written."""
    from .._shipped import save

    compile_kernels()
    paths = []
    for d in _dispatchers():
        for sig in list(d.overloads):
            paths.append(save(d, sig, dest))
    return paths
