"""The cache inside the simulator's event loop (issue 28 item 3).

A :class:`qmodels.CacheStation` is run item by item by the simulator: each
job leaving it requests an item drawn from the popularity, the cache (LRU,
FIFO or RANDOM) looks it up and updates its contents, and the job goes to
the hit or the miss station by the outcome.  The references here are
independent of that code:

* the exact stationary hit ratios of tiny catalogs, derived by hand below
  from the laws of King (LRU) and Gelenbe (FIFO and RANDOM) under the
  independent reference model (IRM);
* Che's approximation on a larger Zipf catalog, within its known error;
* a cache in front of a disk: the standalone item-level simulation
  (:meth:`qmodels.Cache.simulate`, its own code) gives the hit ratio, and
  the network with that split solved analytically (open product form:
  M/M/1 stations, Jackson) gives R, R_miss and U_disk, which the simulated
  network must reproduce within its intervals.

The simulated hit ratio is read from the network: with an open class of
rate lambda whose hits go to ``mem`` and misses to ``disk``, the
throughput of ``mem`` is lambda x h.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import qmodels as qm
from qmodels.errors import ProblemTooLargeError, RoutingError, UnsupportedModelError

P3 = (0.7, 0.2, 0.1)  # a tiny catalog, skewed enough for Che's error to show

# --- hand derivations for P3 = (p1, p2, p3) = (0.7, 0.2, 0.1) -------------------
#
# C = 1, every policy: the cache holds the last requested item (LRU) or the
# last missed one (FIFO, RANDOM: a miss replaces the only slot), which is the
# last requested item in both cases (a hit leaves it in place).  So
# P(item i cached) = p_i and P(hit) = sum_i p_i^2 = 0.49 + 0.04 + 0.01 = 0.54.
HIT_C1 = 0.54
#
# LRU, C = 2 (King 1971): the contents in recency order (i, j) have
# probability p_i p_j / (1 - p_i); a request misses iff it is for the third
# item k, so P(miss) = sum over ordered (i, j) of p_i p_j / (1 - p_i) p_k:
#   (1,2): .7 .2/.3 x .1 = .046667   (1,3): .7 .1/.3 x .2 = .046667
#   (2,1): .2 .7/.8 x .1 = .0175     (2,3): .2 .1/.8 x .7 = .0175
#   (3,1): .1 .7/.9 x .2 = .015556   (3,2): .1 .2/.9 x .7 = .015556
# P(miss) = 0.159444..., P(hit) = 0.840556 (exactly 1 - 287/1800).
HIT_LRU_C2 = 1.0 - (2 * 0.7 * 0.2 * 0.1 / 0.3 + 2 * 0.2 * 0.7 * 0.1 / 0.8
                    + 2 * 0.1 * 0.7 * 0.2 / 0.9)
#
# FIFO and RANDOM, C = 2 (Gelenbe 1973): the content set S has probability
# proportional to prod_{i in S} p_i: {1,2} .14, {1,3} .07, {2,3} .02 (sum
# .23), so P(hit) = (.14 x .9 + .07 x .8 + .02 x .3) / .23 = .188 / .23.
# For RANDOM with C = n - 1 this follows from the balance equations too:
# the state is the missing item k; a request for k (probability p_k) evicts
# each cached item j with probability 1/C, so pi_k p_k = sum_{j != k} pi_j
# p_j / C, whose solution has pi_k p_k the same for every k: pi_k
# proportional to 1 / p_k, i.e. to prod_{i != k} p_i, Gelenbe's law.
HIT_FIFO_C2 = 0.188 / 0.23


def _open_cache_net(cache: qm.Cache, rate: float = 1000.0, lookup=None):
    """source -> cache -> hit: mem (a delay) / miss: disk (a delay) -> sink."""
    if lookup is not None:
        cache = dataclasses.replace(cache, lookup=lookup)
    st = cache.station("cache", hit="mem", miss="disk")
    return qm.Network(
        [st, qm.Delay("mem", 1e-4), qm.Delay("disk", 1e-3)],
        [qm.Open("req", rate, routing={"source": {"cache": 1.0}, "cache": st.split(),
                                       "mem": {"sink": 1.0}, "disk": {"sink": 1.0}})])


#: confidence level of the checks against a reference: a test fails by chance
#: about once in a thousand seeds, not once in twenty
LEVEL = 0.999


def _sim_hit(net, rate=1000.0, horizon=150.0, replications=8, seed=1):
    """(mean, low, high) of the simulated hit ratio: X(mem) / lambda, with
    its interval at LEVEL."""
    r = qm.simulate(net, seed=seed, horizon=horizon, replications=replications,
                    level=LEVEL, progress=False)
    x = r.X["mem"]
    lo, hi = x.ci
    return x.mean / rate, lo / rate, hi / rate


@pytest.mark.parametrize("policy,capacity,exact", [
    ("lru", 1, HIT_C1), ("fifo", 1, HIT_C1), ("random", 1, HIT_C1),
    ("lru", 2, HIT_LRU_C2), ("fifo", 2, HIT_FIFO_C2), ("random", 2, HIT_FIFO_C2),
])
def test_tiny_catalog_hit_ratio_is_the_exact_law(policy, capacity, exact):
    net = _open_cache_net(qm.Cache(capacity, list(P3), policy=policy))
    mean, lo, hi = _sim_hit(net)
    assert lo <= exact <= hi, (policy, capacity, mean, (lo, hi), exact)
    # the hand derivation agrees with the enumeration of the same laws
    assert exact == pytest.approx(qm.physical.cache.exact_hit_ratio(P3, capacity, policy),
                                  abs=1e-12)
    che = qm.Cache(capacity, list(P3), policy=policy).hit_ratio
    if abs(che - exact) > 0.02:
        # Che's split is far enough from the exact law here for the run to
        # tell them apart: the event loop routes by the cache, not by Che
        assert not lo <= che <= hi, (policy, capacity, mean, che)


@pytest.mark.parametrize("policy,tol", [("lru", 0.002), ("fifo", 0.007), ("random", 0.007)])
def test_zipf_catalog_within_che_known_error(policy, tol):
    # Che's error on a Zipf catalog of 1000 items, C = 50 (measured against
    # the item simulator, qmodels.physical.cache.Cache's notes and
    # validation/cache_che_accuracy.py): at most 0.001 (LRU), 0.006
    # (FIFO/RANDOM, whose version is coarser for small caches); tol adds
    # 0.001 for rounding of those figures
    cache = qm.Cache(50, qm.Zipf(0.8, 1000), policy=policy)
    mean, lo, hi = _sim_hit(_open_cache_net(cache))
    che = cache.hit_ratio
    assert lo - tol <= che <= hi + tol, (policy, mean, (lo, hi), che)
    # and the standalone item-level simulation (its own loop) agrees
    item = cache.simulate(1_000_000, seed=9, level=LEVEL)
    assert item.ci[0] <= hi and lo <= item.ci[1], (policy, (lo, hi), item.ci)


def test_cache_in_front_of_a_disk_reproduces_the_item_level_model():
    lam, s_l, s_d = 40.0, 0.002, 0.02
    cache = qm.Cache(50, qm.Zipf(0.8, 1000), lookup=s_l)
    st = cache.station("cache", hit="sink", miss="disk")
    net = qm.Network(
        [st, qm.Queue("disk", s_d)],
        [qm.Open("req", lam, routing={"source": {"cache": 1.0}, "cache": st.split(),
                                      "disk": {"sink": 1.0}})])
    sim = qm.simulate(net, seed=3, horizon=5000.0, replications=8, level=LEVEL,
                      progress=False)

    # the item-level model: the standalone simulation's hit ratio, put in
    # the same network as a plain split and solved in closed form (Jackson:
    # M/M/1 stations, R_k = S_k / (1 - U_k))
    item = cache.simulate(2_000_000, seed=5, level=LEVEL)
    ref = {}
    for h in (item.ci[0], item.hit_ratio, item.ci[1]):
        plain = qm.Network(
            [qm.Queue("cache", s_l), qm.Queue("disk", s_d)],
            [qm.Open("req", lam, routing={"source": {"cache": 1.0},
                                          "cache": {"sink": h, "disk": 1.0 - h},
                                          "disk": {"sink": 1.0}})])
        a = qm.solve(plain, method="exact")
        ref[h] = (a.R["req"], a.R["cache"] + a.R["disk"], a.U["disk"])
        # the closed form itself
        assert a.R["disk"] == pytest.approx(s_d / (1 - lam * (1 - h) * s_d), rel=1e-9)
    lows = [min(v[i] for v in ref.values()) for i in range(3)]
    highs = [max(v[i] for v in ref.values()) for i in range(3)]

    r_miss_mean = sim.R["cache"].mean + sim.R["disk"].mean
    r_miss_hw = sim.R["cache"].half_width + sim.R["disk"].half_width
    got = [(sim.R["req"].mean, sim.R["req"].half_width), (r_miss_mean, r_miss_hw),
           (sim.U["disk"].mean, sim.U["disk"].half_width)]
    for name, (m, hw), lo, hi in zip(("R", "R_miss", "U_disk"), got, lows, highs):
        # the interval of the run and the band of the item-level hit ratio's
        # interval overlap
        assert m - hw <= hi and lo <= m + hw, (name, m, hw, lo, hi)
    # Che's split, which the analytic methods solve, is an approximation:
    # its answer is labelled so
    che = qm.solve(net, method="exact")
    assert che.exactness == "approximate"
    assert any("Che" in a for a in che.assumptions)


def test_closed_cache_in_front_of_a_disk_matches_mva_with_the_item_level_split():
    # N terminals, think time Z, a lookup queue and a disk behind the
    # misses; exact MVA of the network whose split is the standalone
    # item-level hit ratio (Reiser & Lavenberg 1980) is the reference (the
    # misses of a 1000-item catalog are all but independent of each other,
    # as the product form assumes)
    N, Z, s_l, s_d = 10, 0.1, 0.002, 0.02
    cache = qm.Cache(50, qm.Zipf(0.8, 1000), lookup=s_l)
    st = cache.station("cache", hit="cache", miss="disk")
    net = qm.Network([st, qm.Queue("disk", s_d)],
                     [qm.Closed("c", N, think_time=Z, reference="cache",
                                routing={"cache": st.split(), "disk": {"cache": 1.0}})])
    sim = qm.simulate(net, seed=11, horizon=2000.0, replications=6, level=LEVEL,
                      progress=False)
    item = cache.simulate(1_000_000, seed=12, level=LEVEL)
    refs = []
    for h in item.ci:
        # a cycle ends on every return to the reference, the cache: one
        # lookup per cycle, and a disk visit with probability 1 - h
        plain = qm.Network([qm.Queue("cache", s_l), qm.Queue("disk", s_d)],
                           [qm.Closed("c", N, think_time=Z,
                                      visits={"cache": 1.0, "disk": 1.0 - h})])
        a = qm.solve(plain, method="exact")
        refs.append((a.X["c"], a.R["c"], a.U["disk"]))
    for i, est in enumerate((sim.X["c"], sim.R["c"], sim.U["disk"])):
        lo, hi = min(r[i] for r in refs), max(r[i] for r in refs)
        assert est.low <= hi and lo <= est.high, (i, est, lo, hi)


def test_closed_class_whose_hit_path_is_its_reference():
    # a closed class whose hit path is its reference station (a hit ends the
    # cycle there, a miss visits the disk first): visits to the disk per
    # lookup are the miss ratio, here the exact LRU law of C = 1
    # (1 - sum p_i^2)
    cache = qm.Cache(1, list(P3), lookup=0.001)
    st = cache.station("cache", hit="cache", miss="disk")
    net = qm.Network([st, qm.Delay("disk", 0.002)],
                     [qm.Closed("c", 4, think_time=0.0, reference="cache",
                                routing={"cache": st.split(), "disk": {"cache": 1.0}})])
    r = qm.simulate(net, seed=2, horizon=300.0, replications=5, level=LEVEL, progress=False)
    # visits to the disk per visit to the cache: X(disk) / X(cache)
    ratio = r.X["disk"].mean / r.X["cache"].mean
    rel = r.X["disk"].relative_half_width + r.X["cache"].relative_half_width
    assert abs(ratio - (1 - HIT_C1)) <= ratio * rel + 1e-3, (ratio, 1 - HIT_C1)


def test_same_seed_same_numbers_and_other_seed_differs():
    net = _open_cache_net(qm.Cache(2, list(P3), policy="random"))
    a = qm.simulate(net, seed=7, horizon=20.0, replications=2, progress=False)
    b = qm.simulate(net, seed=7, horizon=20.0, replications=2, progress=False)
    c = qm.simulate(net, seed=8, horizon=20.0, replications=2, progress=False)
    assert a.X["mem"].mean == b.X["mem"].mean and a.X["disk"].mean == b.X["disk"].mean
    assert a.X["mem"].mean != c.X["mem"].mean
    # the simulated answer says the cache was run item by item
    assert any("item by item" in x for x in a.assumptions)


def test_routing_row_must_be_the_cache_split():
    cache = qm.Cache(2, list(P3))
    st = cache.station("cache", hit="mem", miss="disk")
    stations = [st, qm.Delay("mem", 1e-4), qm.Delay("disk", 1e-3)]
    with pytest.raises(RoutingError, match="Che"):
        qm.Network(stations, [qm.Open("req", 1.0, routing={
            "source": {"cache": 1.0}, "cache": {"mem": 0.5, "disk": 0.5},
            "mem": {"sink": 1.0}, "disk": {"sink": 1.0}})])
    with pytest.raises(RoutingError, match="hit station"):
        qm.Network(stations + [qm.Delay("x", 1.0)], [qm.Open("req", 1.0, routing={
            "source": {"cache": 1.0}, "cache": {"x": 1.0},
            "mem": {"sink": 1.0}, "disk": {"sink": 1.0}, "x": {"sink": 1.0}})])


def test_a_class_given_by_visits_is_refused_by_the_simulator():
    cache = qm.Cache(2, list(P3))
    st = cache.station("cache", hit="mem", miss="disk")
    net = qm.Network([st, qm.Delay("mem", 1e-4), qm.Delay("disk", 1e-3)],
                     [qm.Open("req", 1.0, visits={"cache": 1.0, **st.split()})])
    with pytest.raises(UnsupportedModelError, match="explicit routing"):
        qm.simulate(net, seed=1, horizon=10.0, progress=False)


def test_catalog_memory_guard(monkeypatch):
    from qmodels.sim import guards

    cache = qm.Cache(10, qm.Zipf(0.8, 100_000))
    net = _open_cache_net(cache)
    assert guards.cache_bytes(net) == pytest.approx(8.0 * (4 * 100_000 + 10))
    monkeypatch.setattr(guards, "MAX_RUN_BYTES", 1_000_000)
    with pytest.raises(ProblemTooLargeError, match="catalog"):
        guards.check_sim_size(net, 1)


@pytest.mark.slow
@pytest.mark.parametrize("policy,exact", [("lru", HIT_LRU_C2), ("fifo", HIT_FIFO_C2),
                                          ("random", HIT_FIFO_C2)])
def test_tiny_catalog_long_run_tells_the_exact_law_from_che(policy, exact):
    # 2 x 10^7 requests: the interval is narrow enough (about 1e-3 at
    # LEVEL) to exclude Che's value for LRU too (0.8457 against 0.8406)
    net = _open_cache_net(qm.Cache(2, list(P3), policy=policy))
    mean, lo, hi = _sim_hit(net, horizon=2000.0, replications=10)
    che = qm.Cache(2, list(P3), policy=policy).hit_ratio
    assert lo <= exact <= hi, (policy, mean, (lo, hi), exact)
    assert not lo <= che <= hi
    assert np.isfinite(mean)


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_model_files_hold_a_cache_station(tmp_path, suffix):
    # a Zipf catalog (irrational probabilities: the floats must come back
    # bit for bit) and the tiny one, a queue's options set too
    for net in (_disk_net(20, policy="random", closed=True),
                _open_cache_net(qm.Cache(2, list(P3), policy="fifo"), lookup=1e-4)):
        qm.save(net, tmp_path / f"m.{suffix}")
        again = qm.load(tmp_path / f"m.{suffix}")
        assert again == net
        a, b = again.stations[0], net.stations[0]
        assert isinstance(a, qm.CacheStation)
        assert np.array_equal(a.popularity, b.popularity)
        assert (a.cache_capacity, a.policy, a.hit, a.miss) == (b.cache_capacity, b.policy,
                                                               b.hit, b.miss)
        assert a.hit_ratio == b.hit_ratio
        assert qm.Network.from_dict(net.to_dict()) == net
    # the schema knows the cache's keys
    from qmodels.io import schema

    data = _disk_net(20).to_dict()
    assert data["stations"][0]["kind"] == "cache"
    assert schema.validate(data) == [] and schema.conforms(data)
    data["stations"][0]["policy"] = "lfu"
    assert not schema.conforms(data)
    assert schema.validate(data)


def test_model_file_cache_errors_name_the_key():
    from qmodels.errors import ModelFileError

    data = _disk_net(20).to_dict()
    data["stations"][0]["popularity"] = [0.5, 0.4]  # does not sum to 1
    with pytest.raises(ModelFileError, match="sum to 1"):
        qm.Network.from_dict(data)
    data = _disk_net(20).to_dict()
    del data["stations"][0]["miss"]
    with pytest.raises(ModelFileError, match="miss"):
        qm.Network.from_dict(data)
    data = _disk_net(20).to_dict()
    data["stations"][1]["cache_capacity"] = 3   # on mem, a delay
    with pytest.raises(ModelFileError, match="only a cache station"):
        qm.Network.from_dict(data)


def test_a_cache_network_has_the_loop_signature_of_every_model():
    # the machine code compiled (or shipped) for the probe model runs caches
    from qmodels._jit import _signature
    from qmodels.sim import engine as E
    from qmodels.sim import run as sim_run
    from tests.test_jit_twin import _loop_args

    for policy in ("lru", "fifo", "random"):
        net = _open_cache_net(qm.Cache(2, qm.Zipf(0.8, 50), policy=policy))
        assert _signature(E.run, _loop_args(net)) == _signature(E.run, sim_run._probe_args())


@pytest.mark.parametrize("policy", ["lru", "fifo", "random"])
def test_the_python_twin_runs_the_caches_bit_for_bit(policy, monkeypatch):
    from qmodels._jit import Resumable
    from qmodels.sim import engine as E
    from qmodels.sim import run as sim_run

    cache = qm.Cache(5, qm.Zipf(0.9, 40), policy=policy, lookup=1e-4)
    st = cache.station("cache", hit="cpu", miss="disk")
    net = qm.Network([st, qm.Queue("cpu", 1e-3), qm.Queue("disk", 2e-3)],
                     [qm.Closed("c", 3, think_time=0.01, routing={
                         "cpu": {"cache": 1.0}, "cache": st.split(), "disk": {"cpu": 1.0}})])

    def figures():
        r = qm.simulate(net, seed=4, horizon=20.0, replications=2, progress=False)
        return [r.X[k].mean for k in ("cache", "cpu", "disk", "c")] + [r.R["c"].mean]

    compiled = figures()
    monkeypatch.setenv("QMODELS_JIT", "python")
    monkeypatch.setattr(sim_run, "ENGINE", Resumable(E.run))
    assert figures() == compiled
    assert sim_run.ENGINE._state == "python"


def test_disk_load_follows_the_cache_not_che_on_a_tiny_catalog():
    # U_disk = lambda (1 - h) S_disk (the utilisation law) holds whatever the
    # miss stream's shape; on a tiny FIFO catalog the exact h = 0.54 (derived
    # above) and Che's 0.468 give disk loads 8 % apart, which the run tells
    # apart
    lam, s_d = 20.0, 0.02
    cache = qm.Cache(1, list(P3), policy="fifo", lookup=0.001)
    st = cache.station("cache", hit="sink", miss="disk")
    net = qm.Network([st, qm.Queue("disk", s_d)],
                     [qm.Open("req", lam, routing={"source": {"cache": 1.0},
                                                   "cache": st.split(),
                                                   "disk": {"sink": 1.0}})])
    r = qm.simulate(net, seed=6, horizon=2000.0, replications=6, level=LEVEL, progress=False)
    exact, che = lam * (1 - HIT_C1) * s_d, lam * (1 - cache.hit_ratio) * s_d
    assert r.U["disk"].contains(exact), (r.U["disk"], exact)
    assert not r.U["disk"].contains(che), (r.U["disk"], che)


def _disk_net(capacity, policy="lru", lookup=0.001, closed=False):
    """cache -> hit: mem (a delay) / miss: disk (a queue), built afresh."""
    cache = qm.Cache(capacity, qm.Zipf(0.8, 200), policy=policy, lookup=lookup)
    st = cache.station("cache", hit="mem", miss="disk")
    stations = [st, qm.Delay("mem", 1e-4), qm.Queue("disk", 0.004)]
    if closed:
        cls = qm.Closed("c", 6, think_time=0.05, reference="cache", routing={
            "cache": st.split(), "mem": {"cache": 1.0}, "disk": {"cache": 1.0}})
    else:
        cls = qm.Open("c", 150.0, routing={"source": {"cache": 1.0}, "cache": st.split(),
                                            "mem": {"sink": 1.0}, "disk": {"sink": 1.0}})
    return qm.Network(stations, [cls])


@pytest.mark.parametrize("closed", [False, True])
def test_sweep_over_the_cache_capacity_matches_fresh_networks(closed):
    # the reference at each capacity is the network built afresh there (its
    # row the new station's split), solved by the same exact method
    caps = [1, 5, 20, 80, 199]  # 0 or all 200 items would leave mem or disk unvisited
    df = qm.sweep(_disk_net(10, closed=closed), {"cache.cache_capacity": caps},
                  method="exact", progress=False)
    rows = df[(df["scope"] == "class") & (df["name"] == "c")].sort_values("point")
    assert len(rows) == len(caps)
    disk = df[(df["scope"] == "station") & (df["name"] == "disk")].sort_values("point")
    for cap, r, u in zip(caps, rows["R"], disk["U"]):
        fresh = qm.solve(_disk_net(cap, closed=closed), method="exact")
        assert r == pytest.approx(fresh.R["c"], rel=1e-12), cap
        assert u == pytest.approx(fresh.U["disk"], rel=1e-12), cap
    # the disk's load falls as the cache grows
    assert list(disk["U"]) == sorted(disk["U"], reverse=True)
    assert disk["U"].iloc[0] > 2 * disk["U"].iloc[-1]


def test_apply_to_a_cache_station_rederives_the_split_and_keeps_its_element():
    net = _disk_net(10)
    new = qm.apply(net, {"cache.cache_capacity": 40, "cache.policy": "fifo"})
    st = new.stations[0]
    assert (st.cache_capacity, st.policy) == (40, "fifo")
    assert (st.element.capacity, st.element.policy) == (40, "fifo")
    assert new.classes[0].routing["cache"] == st.split() == _disk_net(40, "fifo").stations[0].split()
    # a parameter of the element alone still rebuilds (the station is its element's)
    again = qm.apply(new, {"cache.lookup": 0.002})
    assert again.stations[0] == _disk_net(40, "fifo", lookup=0.002).stations[0]
    # a station built without the element: the popularity is the station's own
    bare = qm.CacheStation("cache", 0.001, cache_capacity=2, popularity=list(P3),
                           hit="mem", miss="disk")
    net = qm.Network([bare, qm.Delay("mem", 1e-4), qm.Delay("disk", 1e-3)],
                     [qm.Open("c", 1.0, routing={"source": {"cache": 1.0}, "cache": bare.split(),
                                                 "mem": {"sink": 1.0}, "disk": {"sink": 1.0}})])
    new = qm.apply(net, {"cache.cache_capacity": 1})
    assert new.classes[0].routing["cache"] == new.stations[0].split()
    assert new.classes[0].routing["cache"] == qm.Cache(1, list(P3)).split("mem", "disk")
    assert new.stations[0].element is None


@pytest.mark.parametrize("policy,capacity,exact", [
    ("lru", 1, HIT_C1), ("lru", 2, HIT_LRU_C2), ("fifo", 2, HIT_FIFO_C2),
])
def test_simulated_hit_ratio_figure_is_the_exact_law(policy, capacity, exact):
    # the figure the run reports, hits / lookups counted in the event loop,
    # against the hand derivations at the top of this file
    net = _open_cache_net(qm.Cache(capacity, list(P3), policy=policy))
    r = qm.simulate(net, seed=21, horizon=100.0, replications=6, level=LEVEL, progress=False)
    h = r.hit_ratio["cache"]
    assert h.n == 6 and h.level == LEVEL
    assert h.contains(exact), (policy, capacity, h, exact)
    # every lookup ends at mem or disk: the hits are mem's share of the two
    share = r.X["mem"].mean / (r.X["mem"].mean + r.X["disk"].mean)
    assert h.mean == pytest.approx(share, abs=2 * h.half_width)


@pytest.mark.parametrize("policy,tol", [("lru", 0.002), ("fifo", 0.007)])
def test_simulated_hit_ratio_figure_within_che_known_error(policy, tol):
    # Che's error on this catalog (see test_zipf_catalog_within_che_known_error)
    cache = qm.Cache(50, qm.Zipf(0.8, 1000), policy=policy)
    r = qm.simulate(_open_cache_net(cache), seed=22, horizon=100.0, replications=6,
                    level=LEVEL, progress=False)
    h = r.hit_ratio["cache"]
    assert h.low - tol <= cache.hit_ratio <= h.high + tol, (policy, h, cache.hit_ratio)
    assert "hit ratio" in str(r) and "hit ratio" in r._repr_html_()


def test_batch_means_hit_ratio_and_none_without_a_cache():
    net = _open_cache_net(qm.Cache(1, list(P3)))
    r = qm.simulate(net, seed=23, horizon=400.0, method="batch_means", level=LEVEL,
                    progress=False)
    assert r.output_analysis == "batch_means"
    assert r.hit_ratio["cache"].n > 1 and r.hit_ratio["cache"].contains(HIT_C1)
    plain = qm.Network([qm.Queue("q", 0.001)], [qm.Open("a", 100.0, visits={"q": 1.0})])
    assert dict(qm.simulate(plain, seed=1, horizon=50.0, replications=2,
                            progress=False).hit_ratio) == {}


def _visits_net(capacity, extra_mem=0.0):
    cache = qm.Cache(capacity, qm.Zipf(0.8, 200), lookup=0.001)
    st = cache.station("cache", hit="mem", miss="disk")
    split = cache.split("mem", "disk", 2.0)
    return qm.Network([st, qm.Delay("mem", 1e-4), qm.Queue("disk", 0.004)],
                      [qm.Closed("c", 5, think_time=0.05,
                                 visits={"cache": 2.0, **split,
                                         "mem": split["mem"] + extra_mem})])


def test_sweep_moves_the_split_in_a_class_given_by_visits():
    caps = [1, 10, 60]
    df = qm.sweep(_visits_net(10), {"cache.cache_capacity": caps}, method="exact",
                  progress=False)
    rows = df[(df["scope"] == "class") & (df["name"] == "c")].sort_values("point")
    for cap, x in zip(caps, rows["X"]):
        assert x == pytest.approx(qm.solve(_visits_net(cap), method="exact").X["c"], rel=1e-12)
    # visits to the hit station that are not the split alone: refused by name, not left stale
    with pytest.raises(qm.errors.InvalidValueError, match="class 'c' at cache station 'cache'"):
        qm.apply(_visits_net(10, extra_mem=0.5), {"cache.cache_capacity": 20})
    # a change that leaves the split alone (the lookup time) is no trouble
    assert qm.apply(_visits_net(10, extra_mem=0.5), {"cache.service": 0.002})


def test_an_omitted_cache_row_is_the_station_split():
    # a class routed into a cache station with no row there leaves it by the
    # station's split (Che's hit ratio): the same network, the same answers,
    # as the one that writes st.split() out; a class switching into the cache
    # gets the row in the class it switches to
    cache = qm.Cache(2, list(P3))
    st = cache.station("cache", hit="mem", miss="disk")
    stations = [st, qm.Queue("mem", 0.01), qm.Queue("disk", 0.05)]
    rows = {"source": {"cache": 1.0}, "mem": {"sink": 1.0}, "disk": {"sink": 1.0}}
    given = qm.Network(stations, [qm.Open("req", 5.0, routing={**rows, "cache": st.split()})])
    omitted = qm.Network(stations, [qm.Open("req", 5.0, routing=rows)])
    assert omitted.classes[0].routing["cache"] == st.split()
    assert omitted.visits.tolist() == given.visits.tolist()
    a, b = qm.solve(given), qm.solve(omitted)
    assert float(a.R["req"]) == float(b.R["req"])
    s1 = qm.simulate(given, seed=3, horizon=50.0, replications=2, progress=False)
    s2 = qm.simulate(omitted, seed=3, horizon=50.0, replications=2, progress=False)
    assert s1.R["req"].mean == s2.R["req"].mean
    # switching into the cache: class b enters it from class a's row at mem
    sw = qm.Network(stations, [
        qm.Open("a", 5.0, routing={"source": {"mem": 1.0}, "mem": {"cache": {"b": 1.0}}}),
        qm.Open("b", 0.0, routing={"mem": {"sink": 1.0}, "disk": {"sink": 1.0}})])
    assert "cache" not in sw.classes[0].routing
    assert sw.classes[1].routing["cache"] == st.split()
    # a row given but not the split is still refused by name
    with pytest.raises(RoutingError, match="Che"):
        qm.Network(stations, [qm.Open("req", 1.0, routing={
            **rows, "cache": {"mem": 0.5, "disk": 0.5}})])


def test_fork_join_before_a_cache_counts_its_events_apart_from_the_hits():
    # A fork-join and a cache in one network: the fork's events go to the
    # event count, not to the cache's cells at the end of the statistics
    # (they did: a hit ratio above 1).  The hit ratio is the exact law of
    # the hand derivation above, whatever precedes the cache.
    cache = qm.Cache(2, list(P3))
    st = cache.station("cache", hit="mem", miss="disk")
    net = qm.Network(
        [qm.ForkJoin("fj", [["a"], ["b"]]), qm.Queue("a", 1e-4), qm.Queue("b", 1e-4),
         st, qm.Delay("mem", 1e-4), qm.Delay("disk", 1e-3)],
        [qm.Open("req", 1000.0, routing={"source": {"fj": 1.0}, "fj": {"cache": 1.0},
                                         "cache": st.split(), "mem": {"sink": 1.0},
                                         "disk": {"sink": 1.0}})])
    r = qm.simulate(net, seed=21, horizon=100.0, replications=6, level=LEVEL, progress=False)
    h = r.hit_ratio["cache"]
    assert h.contains(HIT_LRU_C2), (h, HIT_LRU_C2)
    # every customer: fork, two task arrivals and departures, join, then an
    # arrival and a departure at the cache and at mem or disk: 10 events; the
    # count runs over the warm-up too, the throughput over the windows only
    per = r.events / (r.X["fj"].mean * r.horizon * 6)
    assert per == pytest.approx(10.0, rel=0.05)
