"""Energy per transaction: E = sum_k P_busy,k D_k + idle share.

Derivation
----------
E = P x T per power state (electric energy is the time integral of power;
the all-flash energy study, CASES.md case 3, computes every device's
energy this way).  Over a period T a station with c_k servers at
utilisation U_k (per server) is busy c_k U_k T server-seconds and idle
c_k (1 - U_k) T, and X T transactions complete, so

    E_tx = sum_k c_k [P_b,k U_k + P_i,k (1 - U_k)] T / (X T).

With the utilisation law U_k = X D_k / c_k (Denning & Buzen 1978; Lazowska
et al., *QSP*, 1984, sec. 3.2.1) this is

    E_tx = sum_k P_b,k D_k  +  sum_k P_i,k (c_k / X - D_k)

the busy energy the transaction causes, which does not depend on the load,
plus its share of the idle energy, which shrinks as X grows.

Power values: HDD 6.8 W and NVDIMM-N 2 W busy (the AFA paper's device
table, read = write); idle powers and the CPU's are ASSUMPTIONS, stated
below.

Checks: the formula against :func:`qmodels.energy.energy` applied to the
exact symbolic MVA result (:func:`qmodels.symbolic.mva_symbolic`) and to
the numeric one (:func:`qmodels.mva.mva`); and, for equal busy times, the
energy ratio of HDD to NVDIMM equals their power ratio 6.8 / 2 = 3.4.
"""

from __future__ import annotations

import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show  # noqa: E402

CPU_BUSY, CPU_IDLE = 30.0, 10.0   # W per core, ASSUMED
HDD_BUSY, HDD_IDLE = 6.8, 4.0     # W: busy from the AFA paper, idle ASSUMED
NVDIMM_BUSY = 2.0                 # W, the AFA paper


def derive():
    X, T = sp.symbols("X T", positive=True)
    K = 2
    Pb = sp.symbols(f"P_b1:{K + 1}", positive=True)
    Pi = sp.symbols(f"P_i1:{K + 1}", positive=True)
    D = sp.symbols(f"D_1:{K + 1}", positive=True)
    c = sp.symbols(f"c_1:{K + 1}", positive=True)
    U = [X * D[k] / c[k] for k in range(K)]  # utilisation law, per server
    E_total = sum(c[k] * (Pb[k] * U[k] + Pi[k] * (1 - U[k])) * T for k in range(K))
    E_tx = sp.simplify(E_total / (X * T))
    closed = sum(Pb[k] * D[k] + Pi[k] * (c[k] / X - D[k]) for k in range(K))
    return dict(X=X, Pb=Pb, Pi=Pi, D=D, c=c, E_tx=E_tx, closed=closed)


def network(D_cpu, D_disk, N, disk_power, disk_idle):
    from qmodels.model import Closed, Network, Power, Queue

    return Network(
        [Queue("cpu", D_cpu, servers=2, power=Power(busy=CPU_BUSY, idle=CPU_IDLE)),
         Queue("disk", D_disk, power=Power(busy=disk_power, idle=disk_idle))],
        [Closed("tx", N, think_time=0.05, visits={"cpu": 1, "disk": 1})])


def main() -> int:
    from qmodels.analytic.mva import mva
    from qmodels.physical.energy import energy
    from qmodels.symbolic import mva_symbolic

    d = derive()
    print("Energy per transaction")
    show("E_tx from E = P T per state", d["E_tx"])
    show("as busy energy + idle share", d["closed"])
    ck = Checker("energy_per_transaction")
    ck.same("the two forms agree", d["E_tx"], d["closed"])
    Pb, Pi, D, c, X = d["Pb"], d["Pi"], d["D"], d["c"], d["X"]
    Dc, Dd = sp.symbols("D_cpu D_disk", positive=True)
    r = mva_symbolic(network(Dc, Dd, 3, HDD_BUSY, HDD_IDLE))
    e_sym = energy(r).energy_per_transaction
    want = d["closed"].subs({Pb[0]: CPU_BUSY, Pi[0]: CPU_IDLE, D[0]: Dc, c[0]: 2,
                             Pb[1]: HDD_BUSY, Pi[1]: HDD_IDLE, D[1]: Dd, c[1]: 1,
                             X: r.X["tx"]})
    show("E_tx(N = 3) with exact MVA throughput", sp.factor(sp.nsimplify(e_sym, rational=True)))
    ck.same("energy() on the symbolic MVA result", sp.nsimplify(e_sym, rational=True),
            sp.nsimplify(want, rational=True))
    f = sp.lambdify((Pb, Pi, D, c, X), d["closed"])
    for dc, dd, n in ((0.01, 0.02, 1), (0.004, 0.012, 10), (0.02, 0.005, 40)):
        res = mva(network(dc, dd, n, HDD_BUSY, HDD_IDLE))
        rep = energy(res, period=3600)
        ck.close(f"E_tx vs energy(mva) at {dc, dd, n}", rep.energy_per_transaction,
                 f((CPU_BUSY, HDD_BUSY), (CPU_IDLE, HDD_IDLE), (dc, dd), (2, 1), res.X["tx"]),
                 rel=1e-12)
    # equal times: same demands, so the same X and busy time; the disks'
    # busy energies are then in the ratio of their powers (AFA paper)
    hdd = energy(mva(network(0.01, 0.02, 4, HDD_BUSY, 0.0)), period=60)
    nvd = energy(mva(network(0.01, 0.02, 4, NVDIMM_BUSY, 0.0)), period=60)
    ratio = hdd.busy_energy["disk"] / nvd.busy_energy["disk"]
    ck.close("HDD / NVDIMM disk energy at equal times = 6.8 / 2", ratio, 3.4, rel=1e-12)
    print(f"  HDD vs NVDIMM disk energy at equal busy times: {ratio:.4g} x")
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
