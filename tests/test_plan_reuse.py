"""What a solve keeps per network (``net.lowered.memo``) and what the points
of a sweep share with the base network (``Lowered.family``) must never
leak into an answer for other numbers: a network changed after a solve
(``whatif.apply``, a sweep's point, ``dataclasses.replace``) answers
exactly as the same network built afresh, whatever was solved before.

The reference of every test is a fresh network (``_fresh``: the changed
model's stations and classes rebuilt from scratch, so nothing of the
solved network's caches can reach it), solved by the same method; the
figures must agree to the bit (the same operations on the same numbers).
"""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import qmodels as qm
from qmodels.model.lowered import same_family
from qmodels.whatif.paths import apply


def _fresh(net: qm.Network) -> qm.Network:
    """The same model rebuilt from its pickled parts: a new network with
    no lowered form, memo or family of its own history."""
    return pickle.loads(pickle.dumps(qm.Network(list(net.stations), list(net.classes),
                                                name=net.name, pools=list(net.pools))))


def _closed2() -> qm.Network:
    return qm.Network(
        [qm.Delay("term", 1.0), qm.Queue("cpu", 0.02), qm.Queue("disk", 0.03),
         qm.Queue("io", 0.05, servers=2)],
        [qm.Closed("a", 6, visits={"term": 1, "cpu": 2, "disk": 1, "io": 1}),
         qm.Closed("b", 4, visits={"term": 1, "cpu": 1, "disk": 2, "io": 0.5})])


def _same(r1, r2) -> None:
    for name in ("class_throughput", "class_response_time", "station_queue_length",
                 "station_utilization", "station_response_time"):
        a, b = getattr(r1, name), getattr(r2, name)
        assert np.array_equal(a, b), (name, a, b)
    assert r1.exactness == r2.exactness and r1.notes == r2.notes
    assert r1.warnings == r2.warnings and r1.error == r2.error


@pytest.mark.parametrize("method", ["exact", "schweitzer", "linearizer", "mva-residual"])
@pytest.mark.parametrize("change", [
    {"cpu.service": 0.04},            # a number of the family
    {"a.population": 9},              # another number of the family
    {"b.think_time": 2.5},
    {"io.servers": 1},                # structure: a new family
    {"a.visits.disk": 3},             # visit ratios: structure as well
    {"cpu.service": 0.2, "b.population": 1},   # the disk becomes the bottleneck
])
def test_a_changed_network_answers_as_a_fresh_one(method, change):
    base = _closed2()
    qm.solve(base, method=method)        # fill the base's memo and family tables
    changed = apply(base, change)
    _same(qm.solve(changed, method=method), qm.solve(_fresh(changed), method=method))
    # and the base still answers for its own numbers
    _same(qm.solve(base, method=method), qm.solve(_fresh(base), method=method))


def test_only_numbers_of_the_family_share_its_tables():
    base = _closed2()
    assert same_family(base, {"cpu.service": 0.04, "a.population": 3, "b.think_time": 0.5})
    for change in ({"io.servers": 3}, {"a.visits.disk": 2}, {"cpu.discipline": "ps"},
                   {"cpu.service": True}, {"nowhere.service": 1.0}):
        assert not same_family(base, change), change
    low = base.lowered
    assert apply(base, {"cpu.service": 0.04}).lowered._family is low._family
    assert apply(base, {"io.servers": 3}).lowered._family is not low._family
    assert dataclasses.replace(base).lowered._family is not low._family


def test_a_sweep_equals_fresh_networks_point_by_point():
    base = _closed2()
    values = [0.01, 0.05, 0.4]          # the last saturates the cpu
    for method in ("schweitzer", "mva-residual", "bounds"):
        opts = {"cls": "a"} if method == "bounds" else {}
        df = qm.sweep(base, {"cpu.service": values, "a.population": [1, 8]},
                      method=method, options=opts, progress=False)
        for (svc, pop), rows in df.groupby(["cpu.service", "a.population"], sort=False):
            ref = qm.solve(_fresh(apply(base, {"cpu.service": svc, "a.population": pop})),
                           method=method, **opts)
            got = rows[rows["scope"] == "class"].set_index("name")
            for c, cls in enumerate(base.classes):
                if method == "bounds":
                    if cls.name == ref.class_name:
                        assert got.loc[cls.name, "X_upper"] == ref.throughput_upper
                    continue
                assert got.loc[cls.name, "X"] == float(ref.class_throughput[c])
                assert got.loc[cls.name, "R"] == float(ref.class_response_time[c])


def test_the_priority_chain_and_the_bounds_follow_a_change():
    prio = qm.Network(
        [qm.Delay("term", 1.0), qm.Queue("cpu", 0.02, discipline="prio"),
         qm.Queue("disk", 0.03)],
        [qm.Closed("hi", 3, visits={"term": 1, "cpu": 1, "disk": 1}, priority=0),
         qm.Closed("lo", 2, visits={"term": 1, "cpu": 1, "disk": 1}, priority=1)])
    qm.solve(prio, method="priority")
    for change in ({"cpu.service": 0.05}, {"hi.population": 4}, {"disk.service": 0.001}):
        p = apply(prio, change)
        _same(qm.solve(p, method="priority"), qm.solve(_fresh(p), method="priority"))
    one = qm.Network([qm.Delay("t", 1.0), qm.Queue("a", 0.1), qm.Queue("b", 0.08)],
                     [qm.Closed("c", 20, visits={"t": 1, "a": 1, "b": 1})])
    b0 = qm.bounds(one)
    p = apply(one, {"b.service": 0.3})   # the bottleneck moves from a to b
    b1, ref = qm.bounds(p), qm.bounds(_fresh(p))
    assert b1.bottleneck == ref.bottleneck == ("b",) and b0.bottleneck == ("a",)
    for k in ("aba", "bjb", "gb", "pb"):
        assert getattr(b1, k) == getattr(ref, k)
    assert b1.saturation_population == ref.saturation_population


def test_the_law_check_reads_the_changed_numbers():
    """A law plan kept from the base must not check a point's answer
    against the base's service times: an answer of the base passed off as
    the point's breaks the utilisation law there."""
    from qmodels.analytic.contract import law_violations

    base = _closed2()
    r = qm.solve(base, method="exact")
    assert law_violations(r) == []
    point = apply(base, {"cpu.service": 0.04})
    qm.solve(point, method="exact")
    forged = dataclasses.replace(r, network=point)
    assert any("utilisation law" in v for v in law_violations(forged))
