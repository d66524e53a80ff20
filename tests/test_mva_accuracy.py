"""The stated accuracy of exact MVA with a multi-server station at large N
(mva_single's docstring, README): the bottleneck's Q off by about N 2^-53
relative, everything else within 1e-12.

Reference (independent of MVA): as N grows with one saturated single server
(D = 1 ms), the throughput tends to 1/D = 1000/s and every other station
behaves as an open queue fed at that rate (Lazowska et al., QSP 1984, sec.
5.2 asymptotics; the error is exponentially small in N here): the 4-server
station is an M/M/4 with offered load a = lambda S = 2 (Erlang C, Kleinrock,
Queueing Systems I, 1975, eq. 3.40), the other single server an M/M/1 of
rho = 0.5 (Q = 1).
"""

from __future__ import annotations

import math

import pytest

import qmodels as qm


def _erlang_c_queue(lam, S, c):
    a = lam * S
    rho = a / c
    head = sum(a ** k / math.factorial(k) for k in range(c))
    last = a ** c / math.factorial(c) / (1 - rho)
    return last / (head + last) * rho / (1 - rho) + a


@pytest.mark.parametrize("N", [10_000, 100_000])
def test_large_n_multiserver_accuracy_is_as_stated(N):
    net = qm.Network([qm.Queue("cpu", 0.002, servers=4), qm.Queue("disk", 0.001),
                      qm.Queue("net", 0.0005)],
                     [qm.Closed("c", N, visits={"cpu": 1, "disk": 1, "net": 1})])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(1000.0, rel=1e-12)
    assert r.Q["cpu"] == pytest.approx(_erlang_c_queue(1000.0, 0.002, 4), rel=1e-12)
    assert r.Q["net"] == pytest.approx(1.0, rel=1e-12)
    total = sum(r.Q[s] for s in net.station_names)
    # the stated bound: N x 2^-53 relative, with a factor 4 of room
    assert abs(total - N) / N <= 4 * N * 2.0 ** -53
