"""KOSMOS case: the paper-vs-model table, its calibration and physical sanity.

Reference values come from the paper (quoted in ``qmodels.cases.kosmos``) or
from hand derivations written next to each assertion.
"""

import dataclasses
import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.cases import kosmos as k
from qmodels.cases import with_overrides
from qmodels.errors import InvalidValueError, UnknownNameError

# The bar every predicted row without a ``miss`` must meet.  The paper's
# CloudSuite tables are single runs without error bars and its bandwidth
# figures are ratios read off one plot; 20 % is the project-wide bar.
BAR = 0.20
# Bandwidth ratios are quoted to 0.1 % and, in the model, are ratios of line
# rates once the host stops binding; they must come much closer than the bar.
BW_TOL = 0.05


@pytest.fixture(scope="module")
def rep():
    return k.report()


def test_table_has_every_reported_number(rep):
    # 7 stated bandwidth ratios + 4 "flat above 4 KB" rows + 3 benchmarks x 3 systems x
    # 4 slave counts + 4 Fig. 5 ratios
    assert len(rep.rows) == 7 + 4 + 36 + 4
    cloud = [r for r in rep.rows if "1-to-" in r.quantity and "one board" not in r.quantity]
    assert sorted(r.paper for r in cloud) == sorted(
        v for b in k.COMPLETION.values() for s in b.values() for v in s)


def test_at_most_one_third_fitted(rep):
    n_fit = sum(r.role == "fitted" for r in rep.rows)
    assert n_fit == 3 + 12
    assert 3 * n_fit <= len(rep.rows)


def test_predicted_rows_meet_the_bar_or_say_why(rep):
    for r in rep.predicted:
        if r.miss:
            assert len(r.miss) > 40, r.quantity     # a reason, not a flag
            continue
        tol = BW_TOL if r.quantity.startswith("bandwidth") else BAR
        assert abs(r.rel_error) <= tol, (r.quantity, r.paper, r.model)
    assert rep.worst_predicted <= BAR


def test_misses_are_the_ones_the_model_cannot_produce(rep):
    misses = {r.quantity for r in rep.rows if r.miss}
    graph_far = {f"Graph Analytics {s} 1-to-{n}" for s in k.SYSTEMS for n in (4, 6)}
    assert graph_far <= misses
    # the argument behind those misses, checked on the paper's own numbers: with a
    # fixed amount of work T(n) >= T(1) / n, and Graph Analytics breaks it at 4 slaves
    for s in k.SYSTEMS:
        t = dict(zip(k.SLAVES, k.COMPLETION["graph"][s]))
        assert t[4] < t[1] / 4
    # every other row keeps within the bar: the list of misses is short and named
    assert misses - graph_far == {
        "Graph Analytics Moonshot 1-to-1",
        "In-Memory Analytics Moonshot 1-to-6",
        "1-to-1 one board MicroBlade/KOSMOS In-Memory Analytics",
    }


def test_fitted_rows_are_reproduced_where_the_family_allows(rep):
    for r in rep.rows:
        if r.role != "fitted":
            continue
        # four constants on four points: exact for data and memory and the bandwidth
        # ratios; graph's 1-2 slave points are super-linear too (T(2) < T(1)/2 on
        # KOSMOS: 581 < 655.5), so even they cannot be met exactly
        tol = 0.16 if r.quantity.startswith("Graph") else 1e-6
        assert abs(r.rel_error) <= tol, (r.quantity, r.rel_error)


def test_default_params_are_the_calibration():
    # the values written into Params are what calibrate() finds (so Params() is usable
    # without a refit and its 'fitted' sources are true)
    p0 = k.Params()
    p1 = k.calibrate(p0)
    for f in dataclasses.fields(p0):
        if f.metadata["kind"] != "calibrated":
            continue
        a, b = getattr(p0, f.name), getattr(p1, f.name)
        assert a == pytest.approx(b, rel=1e-3, abs=1e-6), f.name
    for a, b in zip(k.report(refit=False).rows, k.report().rows):
        assert a.model == pytest.approx(b.model, rel=1e-3), a.quantity


def test_every_parameter_has_a_source():
    for f in dataclasses.fields(k.Params):
        assert f.metadata["kind"] in ("paper", "datasheet", "spec", "assumption", "calibrated")
        assert len(f.metadata["source"]) > 10, f.name


# --------------------------------------------------------------------- hand derivations

def test_srio_over_moonshot_at_4k_by_hand(rep):
    # at 4 KB every platform is link-bound, so SRIO/Moonshot = (SRIO/MicroBlade) x
    # (MicroBlade/Moonshot) = 3.146 x (2.5 Gbit/s / 1 Gbit/s), same TCP framing
    got = next(r for r in rep.rows if r.quantity == "bandwidth KOSMOS_SRIO/Moonshot at 4096 B")
    assert got.model == pytest.approx(3.146 * 2.5, rel=1e-6)


def test_ethernet_payload_rate_by_hand():
    # MTU 1500, TCP with timestamps: 1448 B of data per 1538 B on the wire
    assert k.bandwidth("MicroBlade", 65536) == pytest.approx(2.5e9 / 8 * 1448 / 1538)
    assert k.bandwidth("Moonshot", 65536) == pytest.approx(1e9 / 8 * 1448 / 1538)


def test_host_bound_below_crossover_by_hand():
    p = k.Params()
    # 128 B on KOSMOS: host-bound, one message per t0
    assert k.bandwidth("KOSMOS_SRIO", 128, p) == pytest.approx(128 / p.kosmos_host_overhead)
    assert k.bandwidth("KOSMOS_ETH", 128, p) == pytest.approx(128 / p.kosmos_host_overhead)
    assert k.crossover_size("MicroBlade", p) == pytest.approx(
        p.microblade_host_overhead * 2.5e9 / 8 * 1448 / 1538)


def test_cpu_factor_from_table1():
    # (8 cores x 2.4 GHz) / (4 cores x 2.0 GHz) = 2.4
    assert k.cpu_factor("Moonshot") == pytest.approx(2.4)
    assert k.cpu_factor("MicroBlade") == 1.0
    p = with_overrides(k.Params(), ["moonshot_clock=2.4e9"])
    assert k.cpu_factor("Moonshot", p) == pytest.approx(2.0)


def test_completion_time_is_the_sum_of_demands_by_hand():
    p = k.Params()
    s, g, n = 2.4, k.comm_factor("Moonshot", p), 4
    hand = (s * (p.memory_serial + p.memory_per_slave * n) + s * p.memory_parallel / n
            + g * p.memory_comm * n)
    assert k.completion_time("memory", "Moonshot", 4, p) == pytest.approx(hand, rel=1e-12)
    assert g == pytest.approx(k.bandwidth("KOSMOS_SRIO", 65536) / k.bandwidth("Moonshot", 65536))


# --------------------------------------------------------------------- physical sanity

SIZES = np.unique(np.geomspace(1, 2 ** 20, 200).round())


@pytest.mark.parametrize("pipelined", [True, False])
@pytest.mark.parametrize("platform", k.PLATFORMS)
def test_bandwidth_monotone_and_bounded(platform, pipelined):
    p = dataclasses.replace(k.Params(), pipelined=pipelined)
    bw = np.array([k.bandwidth(platform, m, p) for m in SIZES])
    assert np.all(np.diff(bw) >= -1e-9 * bw[1:])
    link = k.link(platform, p)
    assert np.all(bw <= float(link.bandwidth) * (1 + 1e-12))
    if platform != "KOSMOS_SRIO":
        assert np.all(bw <= link.rate / 8)          # never above the line rate


@pytest.mark.parametrize("platform", k.PLATFORMS)
@pytest.mark.parametrize("size", [64, 512, 4096])
def test_pipelined_bandwidth_is_the_network_bound(platform, size):
    net = k.bandwidth_network(platform, size)
    b = qm.bounds(net)
    assert k.bandwidth(platform, size) == pytest.approx(size * float(b.max_throughput))
    # exact MVA with more and more messages in flight approaches the bound from below
    x = [float(qm.mva(k.bandwidth_network(platform, size, in_flight=n)).X["msg"]) * size
         for n in (1, 8, 64)]
    assert x[0] < x[1] < x[2] <= k.bandwidth(platform, size) * (1 + 1e-9)
    assert x[2] >= 0.95 * k.bandwidth(platform, size)


def test_completion_time_grows_with_slower_hardware():
    for b in k.BENCHMARKS:
        for n in k.SLAVES:
            tk = k.completion_time(b, "KOSMOS", n)
            assert k.completion_time(b, "MicroBlade", n) >= tk
            assert k.completion_time(b, "Moonshot", n) >= k.completion_time(b, "MicroBlade", n)


def test_cloud_network_single_job_response_is_sum_of_demands():
    net = k.cloud_network("data", "MicroBlade", 2)
    r = qm.mva(net)
    assert float(r.R["run"]) == pytest.approx(float(np.sum(net.demands)))


# --------------------------------------------------------------------- validation

def test_errors_name_the_bad_value():
    with pytest.raises(UnknownNameError, match="unknown platform 'Infiniband'"):
        k.bandwidth("Infiniband", 128)
    with pytest.raises(InvalidValueError, match="message size must be > 0 bytes, got 0"):
        k.bandwidth("Moonshot", 0)
    with pytest.raises(UnknownNameError, match="unknown benchmark 'web'"):
        k.completion_time("web", "KOSMOS", 1)
    with pytest.raises(UnknownNameError, match="unknown system 'Xeon'"):
        k.cpu_factor("Xeon")
    with pytest.raises(InvalidValueError, match="slaves must be an integer >= 1, got 0"):
        k.cloud_network("data", "KOSMOS", 0)
    with pytest.raises(InvalidValueError, match="srio_bandwidth must be > 0"):
        k.Params(srio_bandwidth=0.0)
    with pytest.raises(InvalidValueError, match="moonshot_clock must be a finite number"):
        k.Params(moonshot_clock=-1.0)


def test_case_registry_and_overrides():
    from qmodels.cases import report

    r = report("kosmos", ["moonshot_cores=8"])
    # with 8 Moonshot cores the CPU factor is 1.2: Data Analytics 1-to-1 drops
    base = next(x for x in k.report().rows if x.quantity == "Data Analytics Moonshot 1-to-1")
    new = next(x for x in r.rows if x.quantity == "Data Analytics Moonshot 1-to-1")
    assert new.model < base.model
    d = r.to_dict()
    assert d["case"] == "kosmos" and math.isfinite(d["rows"][0]["rel_error"])


@pytest.mark.slow
def test_simulated_tandem_matches_the_bound():
    # deterministic host and link times with 8 messages in flight: the tandem runs at
    # exactly 1 / max(t0, m/r) after the first message, so the simulator must agree
    r = k.report(sim=True, seed=3)
    for m, v in r.extra["sim"].items():
        assert v["simulated"] == pytest.approx(v["bound"], rel=0.02), m



def test_a_changed_calibrated_value_is_held_as_a_what_if():
    # SRIO twice as fast: held, the host costs refitted around it; the SRIO/MicroBlade
    # 4 KB ratio (link-bound) then doubles and is no longer met
    p = dataclasses.replace(k.Params(), srio_bandwidth=2 * k.Params().srio_bandwidth)
    r = k.report(p)
    assert r.params.srio_bandwidth == p.srio_bandwidth
    assert "srio_bandwidth" not in r.fitted and "kosmos_host_overhead" in r.fitted
    row = next(x for x in r.rows if x.quantity == "bandwidth KOSMOS_SRIO/MicroBlade at 4096 B")
    # link-bound at 4 KB: ratio = 2 x SRIO rate / MicroBlade payload rate, about 2 x 3.146
    assert row.model == pytest.approx(2 * k.Params().srio_bandwidth / (2.5e9 / 8 * 1448 / 1538))
    assert row.model == pytest.approx(2 * 3.146, rel=1e-3)
    # holding a whole group turns its rows into predictions
    q = dataclasses.replace(k.Params(), memory_serial=50.0, memory_parallel=5.0,
                            memory_per_slave=5.0, memory_comm=5.0)
    roles = {x.role for x in k.report(q).rows if x.quantity.startswith("In-Memory")}
    assert roles == {"predicted"}
    with pytest.raises(UnknownNameError, match="not calibrated parameters"):
        k.calibrate(hold=["mtu"])
