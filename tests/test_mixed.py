"""Open multi-class and mixed networks in qmodels.analytic.multiclass.solve_exact.

Independent references: the single-class Jackson solver
(qmodels.analytic.open.open_single), the M/M/c closed forms (qmodels.analytic.queues), and a
truncated brute-force sum of the mixed product form written below.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic.multiclass import solve_exact
from qmodels.analytic.open import open_single
from qmodels.analytic.queues import mmc
from qmodels.errors import UnstableError, UnsupportedModelError

# ---------------------------------------------------------------------------
# open networks
# ---------------------------------------------------------------------------


def _station(name, kind):
    if kind == "delay":
        return qm.Delay(name, 1.0)
    if kind == "ld":
        return qm.LoadDependent(name, 1.0, rate_multipliers=(1.0, 1.5, 1.8))
    return qm.Queue(name, 1.0, servers=int(kind[1]), discipline="ps")


@st.composite
def open_networks(draw, max_classes=1):
    K = draw(st.integers(1, 3))
    stations = [_station(f"s{k}", draw(st.sampled_from(["delay", "q1", "q2", "ld"])))
                for k in range(K)]
    C = draw(st.integers(1, max_classes))
    classes = [
        qm.Open(f"o{c}", draw(st.sampled_from([0.0, 0.1, 0.3, 0.5])),
                demands={f"s{k}": draw(st.sampled_from([0.0, 0.2, 0.7, 1.0]))
                         for k in range(K)})
        for c in range(C)
    ]
    return qm.Network(stations, classes)


@settings(deadline=None, max_examples=40)
@given(open_networks())
def test_open_one_class_equals_open_single(net):
    try:
        ref = open_single(net)
    except UnstableError as e:
        with pytest.raises(UnstableError, match=f"station '{e.station}'"):
            solve_exact(net)
        return
    r = solve_exact(net)
    np.testing.assert_allclose(r.station_queue_length, ref.station_queue_length,
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(r.station_utilization, ref.station_utilization,
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(r.class_throughput, ref.class_throughput)
    if net.classes[0].arrival_rate > 0:
        np.testing.assert_allclose(r.class_response_time, ref.class_response_time, rtol=1e-10)


def test_open_multiclass_single_server_hand_formula():
    """Open BCMP PS queue, two classes: Q_c = rho_c / (1 - rho),
    R_c = D_c / (1 - rho) (Lazowska et al. 1984, sec. 7.3; Bolch et al.
    2006, sec. 7.3.5).  rho = 2*0.1 + 1*0.3 = 0.5."""
    net = qm.Network(
        [qm.Queue("cpu", discipline="ps"), qm.Delay("net", 0.05)],
        [qm.Open("a", 2.0, demands={"cpu": 0.1, "net": 0.05}),
         qm.Open("b", 1.0, demands={"cpu": 0.3})],
    )
    r = solve_exact(net)
    assert r.Q["cpu", "a"] == pytest.approx(0.2 / 0.5)
    assert r.Q["cpu", "b"] == pytest.approx(0.3 / 0.5)
    assert r.R["cpu", "a"] == pytest.approx(0.2)
    assert r.R["a"] == pytest.approx(0.2 + 0.05)
    assert r.U["cpu"] == pytest.approx(0.5)
    assert r.Q["net", "a"] == pytest.approx(0.1)
    assert r.exactness == "exact"


def test_open_multiclass_multiserver_equals_mmc():
    """A 3-server station fed by two classes with the same service time is
    an M/M/3 with the summed arrival rate (qmodels.queues.mmc, Erlang C);
    classes split the number present in proportion to their rates."""
    net = qm.Network([qm.Queue("m", 0.5, servers=3)],
                     [qm.Open("a", 2.0, visits={"m": 1}), qm.Open("b", 2.5, visits={"m": 1})])
    r = solve_exact(net)
    ref = mmc(4.5, 0.5, 3)
    assert r.Q["m"] == pytest.approx(ref.L, rel=1e-10)
    assert r.Q["m", "a"] == pytest.approx(ref.L * 2.0 / 4.5, rel=1e-10)
    assert r.R["m", "b"] == pytest.approx(ref.R, rel=1e-10)
    assert r.U["m"] == pytest.approx(4.5 * 0.5 / 3)
    assert not r.notes  # same service time: FCFS is product form as it stands


@pytest.mark.parametrize("station, msg", [
    (qm.Queue("cpu", 0.5), r"station 'cpu' is unstable: open load rho = .* = 1.25 >= 1"),
    (qm.Queue("cpu", 1.0, servers=2), r"station 'cpu' is unstable: rho = .* = 1.25 >= 1"),
    (qm.LoadDependent("cpu", 1.0, rate_multipliers=(2.0,)),
     r"station 'cpu' is unstable: open load rho = .* / a = 1.25 >= 1"),
])
def test_open_unstable(station, msg):
    net = qm.Network([station], [qm.Open("a", 1.5, visits={"cpu": 1}),
                                 qm.Open("b", 1.0, visits={"cpu": 1})])
    with pytest.raises(UnstableError, match=msg) as info:
        solve_exact(net)
    assert info.value.station == "cpu"
    assert info.value.rho == pytest.approx(1.25)


def test_open_finite_capacity_rejected():
    net = qm.Network([qm.Queue("cpu", 0.1, capacity=10)],
                     [qm.Open("a", 1.0, visits={"cpu": 1}), qm.Open("b", 1.0, visits={"cpu": 1})])
    with pytest.raises(UnsupportedModelError,
                       match=r"station 'cpu': finite capacity 10 can bind \(population open\)"):
        solve_exact(net)


# ---------------------------------------------------------------------------
# mixed networks
# ---------------------------------------------------------------------------


def mixed_brute_force(net, terms=600):
    """Closed-class X and Q and open-class Q of a mixed network whose
    queueing stations are single-server PS/FCFS, by the BCMP product form
    (Baskett et al. 1975) summed over every closed state and, at each
    queueing station, over 0..terms open jobs (rho <= 0.7 here, so the
    truncation error is below 1e-90).  Open jobs at a delay are independent
    of everything and are left out of the sum."""
    D = np.asarray(net.demands, dtype=float)
    closed = [i for i, c in enumerate(net.classes) if c.kind == "closed"]
    opened = [i for i, c in enumerate(net.classes) if c.kind == "open"]
    lam = np.array([net.classes[i].arrival_rate for i in opened])
    K = len(net.stations)
    rho = lam @ D[opened] if opened else np.zeros(K)
    j = np.arange(terms + 1)

    def open_sum(m, k):
        """sum_j (m+j)!/(m! j!) rho^j and sum_j j (...) at queue k."""
        if rho[k] == 0:
            return 1.0, 0.0
        lw = (np.array([math.lgamma(m + x + 1) for x in j]) - math.lgamma(m + 1)
              - np.array([math.lgamma(x + 1) for x in j]) + j * math.log(rho[k]))
        w = np.exp(lw)
        return w.sum(), (j * w).sum()

    def solve(pops):
        G = 0.0
        Qc = np.zeros((len(closed), K))
        Qo = np.zeros(K)
        comps = []
        for n in pops:
            comps.append([c for c in itertools.product(range(n + 1), repeat=K + 1)
                          if sum(c) == n])
        for combo in itertools.product(*comps):
            w = 1.0
            mo = np.zeros(K)
            for k, s in enumerate(net.stations):
                counts = [combo[i][k] for i in range(len(closed))]
                for n, ci in zip(counts, closed, strict=True):
                    if n:
                        w *= D[ci, k] ** n / math.factorial(n)
                if s.kind == "delay":
                    continue
                m = sum(counts)
                w *= math.factorial(m)
                a, b = open_sum(m, k)
                w *= a
                mo[k] = b / a
            for i, ci in enumerate(closed):
                z = net.classes[ci].think_time
                w *= z ** combo[i][K] / math.factorial(combo[i][K])
            if w == 0:
                continue
            G += w
            Qo += w * mo
            for i in range(len(closed)):
                Qc[i] += w * np.array(combo[i][:K])
        return G, Qc / G, Qo / G

    N = [net.classes[i].population for i in closed]
    G, Qc, Qo = solve(N)
    X = []
    for i in range(len(closed)):
        m = list(N)
        m[i] -= 1
        X.append(solve(m)[0] / G if N[i] else 0.0)
    return np.array(X), Qc, Qo


def test_mixed_against_brute_force():
    net = qm.Network(
        [qm.Queue("cpu", 0.1), qm.Queue("disk", 0.2), qm.Delay("lan", 0.05)],
        [qm.Closed("batch", 3, think_time=0.5, visits={"cpu": 2, "disk": 1, "lan": 1}),
         qm.Closed("inter", 2, think_time=2.0, visits={"cpu": 1, "disk": 2}),
         qm.Open("web", 2.0, visits={"cpu": 1.5, "disk": 1.0, "lan": 2})],
    )
    r = solve_exact(net)
    X, Qc, Qo = mixed_brute_force(net)
    np.testing.assert_allclose(r.class_throughput[:2], X, rtol=1e-10)
    np.testing.assert_allclose(r.station_queue_length[:2], Qc, rtol=1e-10)
    np.testing.assert_allclose(r.station_queue_length[2, :2], Qo[:2], rtol=1e-10)
    # open class at the delay: lambda D
    assert r.Q["lan", "web"] == pytest.approx(2.0 * 2 * 0.05)
    assert r.X["web"] == 2.0
    assert r.U["cpu", "web"] == pytest.approx(2.0 * 1.5 * 0.1)
    # Little per station and class, open classes included
    np.testing.assert_allclose(r.station_queue_length,
                               r.station_throughput * r.station_response_time, rtol=1e-12)
    assert r.R["web"] == pytest.approx(r.station_queue_length[2].sum() / 2.0)
    assert r.info["algorithm"].startswith("mixed MVA")


def test_mixed_hand_derivation_one_closed_job():
    """One closed job (think time Z) and an open class at a single PS queue:
    the open load leaves 1 - rho of the server, so the closed job's demand
    is D/(1 - rho) and X = 1/(Z + D/(1 - rho)); the open jobs see
    R = D_o (1 + Q_closed)/(1 - rho) (QSP sec. 7.4)."""
    net = qm.Network([qm.Queue("cpu", discipline="ps")],
                     [qm.Closed("j", 1, think_time=1.0, demands={"cpu": 0.4}),
                      qm.Open("o", 1.5, demands={"cpu": 0.2})])
    rho = 0.3
    r = solve_exact(net)
    x = 1 / (1.0 + 0.4 / (1 - rho))
    assert r.X["j"] == pytest.approx(x)
    qc = x * 0.4 / (1 - rho)
    assert r.Q["cpu", "j"] == pytest.approx(qc)
    assert r.R["cpu", "o"] == pytest.approx(0.2 * (1 + qc) / (1 - rho))


@st.composite
def mixed_networks(draw):
    K = draw(st.integers(1, 3))
    stations = [_station(f"s{k}", draw(st.sampled_from(["delay", "q1", "q2", "ld"])))
                for k in range(K)]
    classes = []
    for c in range(draw(st.integers(1, 2))):
        dem = {f"s{k}": draw(st.sampled_from([0.0, 0.2, 1.0])) for k in range(K)}
        dem["s0"] = max(dem["s0"], 0.1)
        classes.append(qm.Closed(f"c{c}", draw(st.integers(0, 4)),
                                 think_time=draw(st.sampled_from([0.0, 1.0])), demands=dem))
    for o in range(draw(st.integers(1, 2))):
        classes.append(qm.Open(f"o{o}", 0.0,
                               demands={f"s{k}": draw(st.sampled_from([0.0, 0.5]))
                                        for k in range(K)}))
    return qm.Network(stations, classes)


@settings(deadline=None, max_examples=40)
@given(mixed_networks())
def test_mixed_with_zero_arrival_rate_equals_closed(net):
    closed = qm.Network(net.stations, net.closed_classes)
    a = solve_exact(closed)
    b = solve_exact(net)
    C = len(closed.classes)
    np.testing.assert_allclose(b.class_throughput[:C], a.class_throughput, rtol=1e-12)
    np.testing.assert_allclose(b.station_queue_length[:C], a.station_queue_length,
                               rtol=1e-12, atol=1e-15)
    assert np.all(b.station_queue_length[C:] == 0)
    assert np.all(b.class_throughput[C:] == 0)


def _shared_station_network(station):
    return qm.Network(
        [station, qm.Queue("disk", 0.1, discipline="ps"), qm.Delay("z", 1.0)],
        [qm.Closed("c", 3, visits={"cpu": 1, "disk": 1, "z": 1}),
         qm.Closed("b", 1, visits={"cpu": 1, "disk": 2, "z": 0.5}),
         qm.Open("o", 2.0, visits={"cpu": 1, "disk": 0.5})])


@pytest.mark.parametrize("station", [
    qm.Queue("cpu", 0.2, servers=2, discipline="ps"),
    qm.Queue("cpu", 0.3, servers=3, discipline="ps"),
    qm.LoadDependent("cpu", 0.2, rate_multipliers=(1, 1.8, 2.4)),
], ids=["2 servers", "3 servers", "load-dependent"])
def test_mixed_multiserver_station_shared_by_open_and_closed_classes_is_exact(station):
    # open jobs summed out of the station's product-form factor (Bolch et al.
    # 2006, sec. 8.2.3): every figure against the exact Markov chain
    net = _shared_station_network(station)
    r = solve_exact(net)
    ref = qm.ctmc(net, open_limit=25)
    for name in ("c", "b", "o"):
        assert r.X[name] == pytest.approx(ref.X[name], rel=1e-9)
        assert r.R[name] == pytest.approx(ref.R[name], rel=1e-9)
    for where in ("cpu", "disk"):
        assert r.Q[where] == pytest.approx(ref.Q[where], rel=1e-9)
        assert r.U[where] == pytest.approx(ref.U[where], rel=1e-9)
        for name in ("c", "b", "o"):
            assert r.Q[where, name] == pytest.approx(ref.Q[where, name], rel=1e-9, abs=1e-12)
    assert any("summed out exactly" in n for n in r.notes)


def test_mixed_shared_station_unstable_open_load_is_refused():
    # open load 2 x 1.0 s = 2 = the limiting rate of two servers
    net = _shared_station_network(qm.Queue("cpu", 1.0, servers=2))
    with pytest.raises(UnstableError, match=r"station 'cpu' is unstable"):
        solve_exact(net)


def test_mixed_multiserver_rules():
    # the multi-server station carries only open load: an M/M/2 on its own
    apart = qm.Network([qm.Queue("m", 0.5, servers=2), qm.Queue("d", 0.1)],
                       [qm.Closed("c", 2, visits={"d": 1}), qm.Open("o", 3.0, visits={"m": 1})])
    r = solve_exact(apart)
    assert r.Q["m", "o"] == pytest.approx(mmc(3.0, 0.5, 2).L, rel=1e-10)
    assert r.Q["d", "c"] == pytest.approx(2.0)
    # and only closed load: the open class adds nothing there
    closed_only = qm.Network([qm.Queue("m", 0.1, servers=2), qm.Queue("d", 0.1)],
                             [qm.Closed("c", 3, visits={"m": 1, "d": 1}),
                              qm.Open("o", 2.0, visits={"d": 1})])
    r = solve_exact(closed_only)
    assert r.Q["m", "o"] == 0
    ref = solve_exact(qm.Network(
        [qm.Queue("m", 0.1, servers=2), qm.Queue("d", 0.1 / (1 - 0.2))],
        [qm.Closed("c", 3, visits={"m": 1, "d": 1})]))
    assert r.X["c"] == pytest.approx(ref.X["c"], rel=1e-12)


def test_mixed_unstable_open_load():
    net = qm.Network([qm.Queue("cpu", 0.5)],
                     [qm.Closed("c", 2, visits={"cpu": 1}), qm.Open("o", 2.0, visits={"cpu": 1})])
    with pytest.raises(UnstableError,
                       match=r"station 'cpu' is unstable: open load rho .* = 1 >= 1"):
        solve_exact(net)
