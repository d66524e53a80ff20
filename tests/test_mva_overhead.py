"""The lean path of a repeated exact-MVA solve (issue 22, item 4).

``mva_single`` keeps its checks and per-network tables in the lowered
form's memo and, for a single-server/delay network without a curve, hands
the kernel's fresh arrays to :meth:`Result._owned` instead of copying them.
These tests hold that path to the general one: the general route (taken
with ``curve=True``, or ``algorithm="convolution"``) computes the same
figures with the same floating-point operations, so they must agree to the
bit; and the results must stay as immutable and independent as before.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import qmodels as qm
from qmodels import testing as qt
from qmodels._validate import FrozenMap
from qmodels.analytic.mva import mva_single
from qmodels.errors import InvalidValueError, UnsupportedModelError
from qmodels.results import Result

FIELDS = ("class_throughput", "class_response_time", "station_throughput",
          "station_queue_length", "station_response_time", "station_utilization")


def _same_bits(a: Result, b: Result) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape and x.dtype == y.dtype, f
        assert x.tobytes() == y.tobytes(), (f, x, y)
    assert a.notes == b.notes and a.method == b.method
    assert dict(a.info) == dict(b.info)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(qt.networks(kind="closed", max_classes=1, max_stations=5, max_population=12,
                   multi_server=False, load_dependent=False))
def test_lean_path_equals_the_general_route_to_the_bit(net):
    # the general route (curve=True) is the code path that existed before the
    # lean one; its last row is the same recursion step, so the figures must
    # be identical, not merely close
    lean = qm.mva(net)
    general = qm.mva(net, curve=True)
    _same_bits(lean, general)
    # and a second, memoised call gives the same figures again
    _same_bits(qm.mva(net), lean)


def _net(visits=None, N=7):
    stations = [qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08), qm.Delay("think", 0.5)]
    return qm.Network(stations, [qm.Closed(
        "tx", N, think_time=1.0,
        visits=visits or {"cpu": 1, "disk": 2, "think": 1})])


def test_unvisited_station_and_empty_population_take_the_general_formula():
    # a station no job visits: its R is what a lone job would see there
    # (S / a(1)), as the general route says; N = 0: X = 0, R = sum V S
    for net in (_net({"cpu": 1, "disk": 0, "think": 1}), _net(N=0)):
        _same_bits(qm.mva(net), qm.mva(net, curve=True))
    r = qm.mva(_net({"cpu": 1, "disk": 0, "think": 1}))
    assert r.station_response_time[0, 1] == 0.08
    r0 = qm.mva(_net(N=0))
    assert r0.class_throughput[0] == 0.0
    # by hand: R(0) = 1 * 0.05 + 2 * 0.08 + 1 * 0.5 = 0.71
    assert r0.class_response_time[0] == pytest.approx(0.71, rel=1e-15)


def test_lean_results_are_read_only_and_independent():
    net = _net()
    a, b = qm.mva(net), qm.mva(net)
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert not x.flags.writeable
        with pytest.raises(ValueError):
            x[...] = 0.0
        assert not np.shares_memory(x, y), f
    # no result array is a table the network keeps for the next solve
    plan = [v for k, v in net.lowered._memo.items()
            if isinstance(k, tuple) and k and k[0] == "mva_single_plan"]
    assert plan
    kept = [t for t in plan[0] if isinstance(t, np.ndarray)]
    for f in FIELDS:
        assert not any(np.shares_memory(getattr(a, f), t) for t in kept), f
    assert isinstance(a.info, FrozenMap) and a.info["algorithm"] == "MVA recursion"


def test_a_refusal_is_not_memoised():
    net = _net()
    for _ in range(2):
        with pytest.raises(InvalidValueError, match="algorithm must be"):
            mva_single(net, algorithm="bogus")
    bounded = qm.Network([qm.Queue("cpu", 0.05, capacity=2), qm.Queue("disk", 0.08)],
                         [qm.Closed("tx", 5, visits={"cpu": 1, "disk": 1})])
    for _ in range(2):
        with pytest.raises(UnsupportedModelError, match="finite capacity"):
            qm.mva(bounded)
    # a valid call after a refused one is unaffected
    assert mva_single(net).X["tx"] == qm.mva(net, curve=True).X["tx"]


def test_multiserver_and_load_dependent_keep_the_convolution_route():
    net = qm.Network([qm.Queue("cpu", 0.05, servers=3),
                      qm.LoadDependent("raid", 0.08, rate_multipliers=(1, 1.8, 2.4))],
                     [qm.Closed("tx", 9, visits={"cpu": 1, "raid": 1}, think_time=0.3)])
    r = qm.mva(net)
    assert r.info["algorithm"].startswith("log-space convolution")
    _same_bits(r, qm.mva(net))
    # independent check: the 3-server queue and the RAID from the curve
    c = qm.mva(net, curve=True)
    assert c.class_throughput.tobytes() == r.class_throughput.tobytes()


def test_owned_falls_back_to_copies_for_what_it_cannot_take_over():
    net = _net()
    ref = qm.mva(net)
    args = [getattr(ref, f).copy() for f in FIELDS]
    # a list and an int array: the ordinary constructor converts and copies
    args[0] = [float(ref.class_throughput[0])]
    args[3] = np.ones_like(ref.station_queue_length, dtype=np.int64)
    r = Result._owned("exact", net, *args, info=None)
    assert r.class_throughput.dtype == np.float64
    assert r.station_queue_length.dtype == np.float64
    assert not r.class_throughput.flags.writeable
    assert r.info == FrozenMap()
    # taken over: the very arrays, now read-only; also with a float64 dtype
    # that equals numpy's but is another object (what numba's compiled
    # kernels return: an identity test sent them all to the copying route)
    other = pickle.loads(pickle.dumps(np.dtype(np.float64)))
    assert other is not np.dtype(np.float64)
    own = [getattr(ref, f).astype(other) for f in FIELDS]
    r2 = Result._owned("exact", net, *own, info=FrozenMap({"a": 1}))
    assert r2.station_queue_length is own[3] and not own[3].flags.writeable
    _same_bits(r2, Result("exact", net, *own, info={"a": 1}))


def test_a_misspelt_option_is_refused_every_time():
    net = _net()
    for _ in range(2):
        with pytest.raises(UnsupportedModelError, match="no option 'tolerance'"):
            qm.solve(net, method="schweitzer", tolerance=1e-6)
    assert qm.solve(net, method="schweitzer", tol=1e-8).method == "schweitzer"


def test_station_totals_are_computed_once_and_read_only():
    r = qm.mva(_net())
    X, Q, U, R = r._station_totals()
    assert r._station_totals()[0] is X
    for a in (X, Q, U, R):
        assert not a.flags.writeable
    # they are the sums over classes (one class here: the class's own row)
    assert X.tobytes() == r.station_throughput.sum(axis=0).tobytes()
    assert r.U["disk"] == float(r.station_utilization[0, 1])


def test_sweep_rows_equal_each_points_own_solve():
    # the rows read each metric's mapping once per point now: they must
    # still be the figures of a solve of that point's network
    from qmodels.whatif.paths import apply

    net = _net()
    values = [0.04, 0.06]
    df = qm.sweep(net, {"cpu.service": values}, method="schweitzer", progress=False)
    for i, v in enumerate(values):
        res = qm.solve(apply(net, {"cpu.service": v}), method="schweitzer")
        rows = df[df["point"] == i]
        for _, row in rows.iterrows():
            name = row["name"]
            for m in ("X", "R", "Q"):
                assert row[m] == getattr(res, m)[name], (i, name, m)
            if row["scope"] == "station":
                assert row["U"] == res.U[name]
