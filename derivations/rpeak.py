"""Rpeak, the theoretical peak floating-point rate of a node.

Derivation
----------
Each of c cores retires at most F floating-point operations per cycle at a
clock of f cycles per second, so (Dongarra, Luszczek & Petitet, "The
LINPACK Benchmark: past, present and future", 2003; the HPL definition of
Rpeak):

    Rpeak = c x F x f

As a queueing model: the cores are a c-server station, and a job of w
FLOPs takes S = w / (F f) seconds on one core.  With N >= c threads every
core is busy, X = c / S jobs per second (a c-server station saturates at
c / S, Lazowska et al., *QSP*, 1984, sec. 5.2) and the FLOP rate is
w X = c F f = Rpeak: the peak is the asymptotic throughput bound 1/D_max
of the compute station, times the work per job.

Numbers (CASES.md case 4): KNL (Xeon Phi 7250) 68 x 32 x 1.4 GHz =
3046.4 GFLOPS; SKL (2 x Xeon Gold 6148) 40 x 32 x 2.4 GHz = 3072 GFLOPS.

Checks: :attr:`qmodels.elements.CPU.rpeak`, exact MVA
(:func:`qmodels.mva.mva`) of the c-server station with N = c and N = 3c
threads, and the symbolic bound 1/D_max from
:func:`qmodels.symbolic.symbolic_bounds`.
"""

from __future__ import annotations

import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show  # noqa: E402

NODES = {"KNL 7250": (68, 32, 1.4e9, 3046.4e9), "SKL 2x6148": (40, 32, 2.4e9, 3072e9)}


def main() -> int:
    from qmodels.analytic.mva import mva
    from qmodels.model import Closed, Network, Queue
    from qmodels.physical.elements import CPU
    from qmodels.symbolic import symbolic_bounds

    print("Rpeak = cores x FLOPs/cycle x clock")
    c, F, f, w = sp.symbols("c F f w", positive=True)
    rpeak = c * F * f
    show("Rpeak", sp.Eq(sp.Symbol("R_{peak}"), rpeak))
    ck = Checker("rpeak")
    S = w / (F * f)
    N = sp.Symbol("N", positive=True, integer=True)
    cc = 4  # a concrete core count for the symbolic bound (servers must be an integer)
    net = Network([Queue("cores", S, servers=cc)], [Closed("threads", N, visits={"cores": 1})])
    b = symbolic_bounds(net)
    show("max job rate 1/D_max (c = 4)", b.max_throughput)
    ck.same("w / D_max = Rpeak", w * b.max_throughput, rpeak.subs(c, cc))
    for name, (cores, fpc, clock, paper) in NODES.items():
        value = float(rpeak.subs({c: cores, F: fpc, f: clock}))
        ck.close(f"{name}: formula = paper", value, paper, rel=1e-12)
        ck.close(f"{name}: elements.CPU.rpeak", CPU(cores=cores, clock=clock,
                                                   flops_per_cycle=fpc).rpeak, paper, rel=1e-12)
        work = 1e6  # FLOPs per job
        for threads in (cores, 3 * cores):
            res = mva(Network([Queue("cores", work / (fpc * clock), servers=cores)],
                              [Closed("threads", threads, visits={"cores": 1})]))
            ck.close(f"{name}: MVA FLOP rate with {threads} threads", res.X["threads"] * work,
                     paper, rel=1e-9)
        print(f"  {name}: {cores} x {fpc} x {clock / 1e9:g} GHz = {value / 1e9:.6g} GFLOPS")
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
