"""KOSMOS case: the paper-vs-model table, its networks, calibration and physics.

Reference values come from the paper (quoted in ``qmodels.cases.kosmos``),
from hand derivations written next to each assertion, or from an independent
method (the simulator; ``qm.bounds``' operational bounds).
"""

import dataclasses
import json
import math

import numpy as np
import pytest
import sympy as sp

import qmodels as qm
from qmodels.cases import kosmos as k
from qmodels.cases import with_overrides
from qmodels.errors import InvalidValueError, UnknownNameError, UnsupportedModelError

# The bar every predicted row without a ``miss`` must meet.  The paper's
# CloudSuite tables are single runs without error bars (Data Analytics'
# KOSMOS times wander by 2 % between 4 and 6 slaves where nothing should
# change) and Fig. 5's ratios are read off a bar chart; 20 % is the
# project-wide bar for such figures.
BAR = 0.20
# Bandwidth ratios are quoted to 0.1 % and, in the model, are ratios of link
# rates once the host stops binding: they must come much closer than the bar.
BW_TOL = 0.05


@pytest.fixture(scope="module")
def rep():
    return k.report()


@pytest.fixture(scope="module")
def rep_sim():
    return k.report(sim=True, seed=3)


def _row(rep, name):
    return next(r for r in rep.rows if r.quantity == name)


# --------------------------------------------------------------------- the table

def test_table_has_every_reported_number(rep):
    # 7 stated bandwidth ratios + 4 "flat above 4 KB" rows + 3 benchmarks x 3 systems x
    # 4 slave counts + 4 Fig. 5 ratios + 5 headline claims (the conclusion's three
    # MicroBlade excesses, the abstract's 60 %, Moonshot Data Analytics falling)
    assert len(rep.rows) == 7 + 4 + 36 + 4 + 5
    cloud = [r for r in rep.rows if "1-to-" in r.quantity and "one board" not in r.quantity
             and "(sec." not in r.quantity]
    assert sorted(r.paper for r in cloud) == sorted(
        v for b in k.COMPLETION.values() for s in b.values() for v in s)


def test_role_counts_and_at_most_one_third_fitted(rep):
    c = rep.counts
    # 3 bandwidth ratios; Data and In-Memory 4 points each; Graph KOSMOS 4 + Fig. 5 +
    # Moonshot 1-to-1
    assert c["fitted"] == 3 + 4 + 4 + 6
    assert 3 * c["fitted"] <= len(rep.rows)
    assert (c["predicted"], c["derived"], c["misses"]) == (36, 3, 6)
    assert rep.summary() == ("56 rows: 17 fitted, 36 predicted, 3 derived; 6 misses (1 "
                             "paper-inconsistent, 1 rests on an assumption, 4 model gap)")


def test_predicted_rows_meet_the_bar_or_say_why(rep):
    for r in rep.predicted:
        if r.miss:
            assert len(r.miss) > 40, r.quantity     # a reason, not a flag
            continue
        tol = BW_TOL if r.quantity.startswith("bandwidth") else BAR
        assert abs(r.rel_error) <= tol, (r.quantity, r.paper, r.model)
    assert rep.worst_predicted <= BAR


def test_misses_are_named_and_argued_on_the_paper_numbers(rep):
    misses = {r.quantity for r in rep.rows if r.miss}
    assert misses == {
        "Graph Analytics Moonshot 1-to-4",
        "In-Memory Analytics Moonshot 1-to-6",
        "1-to-1 one board MicroBlade/KOSMOS In-Memory Analytics",
        "MicroBlade longer than KOSMOS at 1-to-6, Graph Analytics (sec. 5)",
        "abstract: up to 60 % less execution time than the similar-CPU microserver",
        "Data Analytics on Moonshot falls with more slaves, 1-to-6 below 1-to-1 (sec. 4; 1 = yes)",
    }
    # the abstract's 60 % is the paper's own inconsistency: its Tables give at most
    # 1 - 113 / 180 = 37.2 % (In-Memory 1-to-6), and 59.5 % longer is that 37 %
    sixty = _row(rep, "abstract: up to 60 % less execution time than the similar-CPU "
                      "microserver")
    assert sixty.blame == "paper" and len(sixty.quotes) == 2
    t = k.COMPLETION
    best = max(1 - t[b]["KOSMOS"][i] / t[b]["MicroBlade"][i] for b in t for i in range(4))
    assert best == pytest.approx(1 - 113 / 180)
    assert sixty.model == pytest.approx(100 * best, rel=0.05)      # the fitted rows give it
    # the conclusion's 43.6 %: the model's Graph ratio is one factor at every n
    g = _row(rep, "MicroBlade longer than KOSMOS at 1-to-6, Graph Analytics (sec. 5)")
    assert g.model == pytest.approx(100 * (_row(rep, "Graph Analytics MicroBlade 1-to-6").model
                                           / _row(rep, "Graph Analytics KOSMOS 1-to-6").model
                                           - 1), rel=1e-12)
    assert g.blame == "model"
    # In-Memory on Moonshot: per added slave it grows 1.6 times as fast as MicroBlade,
    # while its CPU (cores x clock: 8 x 2.4 / (4 x 2.0) = 2.4) and 1G link (2.5G / 1G =
    # 2.5) are both at least 2.4 times slower: a per-slave cost on those two resources,
    # summed or overlapped (max), scales by at least 2.4
    t = k.COMPLETION["memory"]
    slope = {s: (t[s][3] - t[s][0]) / 5 for s in ("Moonshot", "MicroBlade")}
    assert slope["Moonshot"] / slope["MicroBlade"] == pytest.approx(1.60, abs=0.01)
    # the model's own factors, not restated constants: CPU 2.4 (Table 1) and link
    # g_Moonshot / g_MicroBlade = B_MicroBlade / B_Moonshot at the bulk size = 2.5G / 1G
    # (both link-bound, same framing); with T(n) = s (a + c n + w / n) + g v n, the slope
    # (T(6) - T(1)) / 5 of Moonshot is then >= 2.4 times MicroBlade's whenever the latter
    # is positive, against the paper's 1.60
    link = k.comm_factor("Moonshot") / k.comm_factor("MicroBlade")
    assert link == pytest.approx(2.5, rel=1e-9)
    assert min(k.cpu_factor("Moonshot", benchmark="memory"), link) >= 2.4
    for name in ("Moonshot", "MicroBlade"):
        t = [k.completion_time("memory", name, n) for n in (1, 6)]
        slope[name + "_model"] = (t[1] - t[0]) / 5
    assert slope["MicroBlade_model"] > 0
    assert slope["Moonshot_model"] >= 2.4 * slope["MicroBlade_model"]
    # Graph on Moonshot at 4 slaves: the paper's system ratio dips (2.75) between 3.6 and 3.4
    g = k.COMPLETION["graph"]
    ratios = [a / b for a, b in zip(g["Moonshot"], g["KOSMOS"])]
    assert ratios[2] < 0.85 * min(ratios[0], ratios[1], ratios[3])


def test_fitted_rows_are_reproduced_where_the_family_allows(rep):
    for r in rep.rows:
        if r.role != "fitted":
            continue
        # exact where constants = points (bandwidth, Data, In-Memory, Graph's Fig. 5 and
        # Moonshot rows); Graph's working set has 3 constants for KOSMOS's 4 points and the
        # paper's 1-to-2 is below the random-access spill curve through the other three
        tol = 0.09 if r.quantity.startswith("Graph Analytics KOSMOS") else 1e-5
        assert abs(r.rel_error) <= tol, (r.quantity, r.rel_error)


def test_default_params_are_the_calibration():
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


# ------------------------------------------------- predicted rows are not identities

def test_no_predicted_row_moves_in_lockstep_with_a_fitted_row(rep):
    # Perturb each fitted constant by 10 % (no refit) and record how every row's model
    # value moves.  A row computed from a fitted row's own equation (a fitted row times a
    # constant, or a ratio of fitted rows) moves exactly as that row does under every
    # perturbation.  By the rule of qmodels.cases._base such a row is still predicted when
    # the equation is a hypothesis of the model (which station binds, one factor per
    # system): then its note must say so ("in the model: ..."); a prediction with no such
    # argument must not move in lockstep.  The boolean headline rows are skipped.
    base = {r.quantity: r.model for r in rep.rows}
    moves = {q: [] for q in base}
    for name in rep.fitted:
        v = getattr(rep.params, name)
        q = dataclasses.replace(rep.params, **{name: v * 1.1 if v > 1e-6 else 0.1})
        for r in k.report(q, refit=False).rows:
            if base[r.quantity]:
                moves[r.quantity].append(r.model / base[r.quantity] - 1)
    fitted = [r.quantity for r in rep.rows if r.role == "fitted"]
    lockstep = set()
    for r in rep.predicted:
        if r.boolean:
            continue
        mine = np.array(moves[r.quantity])
        assert np.any(np.abs(mine) > 1e-6), r.quantity          # the model reaches it
        for f in fitted:
            if np.allclose(mine, moves[f], atol=1e-9):
                lockstep.add(r.quantity)
                assert "in the model" in r.note, (r.quantity, f)
    # one that does: KOSMOS_ETH at 128 B (both host-bound, the fitted SRIO row's ratio)
    assert "bandwidth KOSMOS_ETH/MicroBlade at 128 B" in lockstep


def test_graph_rows_of_other_systems_are_identities_hence_derived(rep):
    # in the model each is the fitted KOSMOS curve times a fitted 1-to-1 ratio (every slave
    # station scales by one factor per system), whatever the parameters; that one factor
    # carries over is a hypothesis (the Moonshot 1-to-4 row refutes it), so predicted
    for s, ratio in (("MicroBlade", 1.2),
                     ("Moonshot", _row(rep, "Graph Analytics Moonshot 1-to-1").model
                      / _row(rep, "Graph Analytics KOSMOS 1-to-1").model)):
        for n in k.SLAVES:
            r = _row(rep, f"Graph Analytics {s} 1-to-{n}")
            kos = _row(rep, f"Graph Analytics KOSMOS 1-to-{n}").model
            assert r.model == pytest.approx(ratio * kos, rel=1e-4), r.quantity
            if (s, n) != ("Moonshot", 1):
                assert r.role == "predicted" and "knee" in r.note and "in the model" in r.note


# --------------------------------------------------------------------- bandwidth network

def test_bandwidth_network_is_host_dma_link_deterministic():
    net = k.bandwidth_network("KOSMOS_SRIO", 4096)
    assert net.station_names == ("host", "dma", "link")
    assert all(s.distribution == qm.Deterministic() for s in net.stations)
    assert net.classes[0].population == k.Params().window
    assert isinstance(net.stations[1].element, qm.PCIe)


def test_srio_payload_rate_by_hand():
    # 2 lanes x 5 Gbaud x 8/10 / 8 = 1e9 B/s, times 256 / (256 + overhead) per packet
    p = k.Params()
    r = 2 * 5e9 * 0.8 / 8 * 256 / (256 + p.srio_packet_overhead)
    assert float(k.link("KOSMOS_SRIO").bandwidth) == pytest.approx(r)
    assert r == pytest.approx(925.6e6, rel=1e-3)       # 7.40 Gbit/s of payload


def test_ethernet_and_pcie_rates_by_hand():
    # MTU 1500, TCP with timestamps: 1448 B of data per 1538 B on the wire
    assert k.bandwidth("MicroBlade", 65536) == pytest.approx(2.5e9 / 8 * 1448 / 1538)
    assert k.bandwidth("Moonshot", 65536) == pytest.approx(1e9 / 8 * 1448 / 1538)
    # PCIe 2.0 x4: 4 x 5e9 x 0.8 / 8 = 2 GB/s x 256 / (256 + 24)
    assert float(k.dma().bandwidth) == pytest.approx(2e9 * 256 / 280)


def test_srio_over_moonshot_at_4k_by_hand(rep):
    # at 4 KB both are link-bound: SRIO/Moonshot = (SRIO/MicroBlade) x 2.5G / 1G
    got = _row(rep, "bandwidth KOSMOS_SRIO/Moonshot at 4096 B")
    assert got.model == pytest.approx(3.146 * 2.5, rel=1e-6)


@pytest.mark.parametrize("platform", k.PLATFORMS)
@pytest.mark.parametrize("size", [64, 128, 512, 4096, 65536])
def test_network_equals_the_pipelined_bound_where_it_is_exact(platform, size):
    # window >= 3 stations: the deterministic cycle meets 1 / D_max exactly
    assert k.bandwidth(platform, size) == pytest.approx(k.pipelined_bound(platform, size),
                                                        rel=1e-12)
    net = k.bandwidth_network(platform, size)
    b = qm.bounds(net)
    assert k.path_throughput(net) == pytest.approx(float(b.max_throughput), rel=1e-12)


def test_window_one_gives_hockney_by_hand():
    # one message in flight: no overlap, B = m / (t0 + m / r_dma + m / r_link)
    p = dataclasses.replace(k.Params(), window=1)
    m = 1024
    t = (k.host_overhead("KOSMOS_SRIO", p) + m / float(k.dma(p).bandwidth)
         + m / float(k.link("KOSMOS_SRIO", p).bandwidth))
    assert k.bandwidth("KOSMOS_SRIO", m, p) == pytest.approx(m / t, rel=1e-12)
    # and the flat rows turn into predictions (the curve still climbs at 4 KB)
    roles = {r.role for r in k.report(p, refit=False).rows if "/ 4 KB" in r.quantity}
    assert roles == {"predicted"}


def test_host_bound_below_and_link_bound_above_the_switch_point():
    p = k.Params()
    assert k.bandwidth("KOSMOS_SRIO", 128, p) == pytest.approx(128 / p.kosmos_host_overhead)
    assert k.bottleneck("KOSMOS_SRIO", 128) == "host"
    assert k.bottleneck("KOSMOS_SRIO", 4096) == "link"


def test_symbolic_switch_point_checked_against_the_network():
    expr, (m, t0, r) = k.switch_point()
    assert sp.simplify(expr - t0 * r) == 0
    p = k.Params()
    for plat in k.PLATFORMS:
        rate = float(k.link(plat, p).bandwidth)
        ms = float(expr.subs({t0: k.host_overhead(plat, p), r: rate}))
        assert ms == pytest.approx(k.crossover_size(plat, p))
        assert k.bottleneck(plat, ms * (1 - 1e-6), p) == "host"
        assert k.bottleneck(plat, ms * (1 + 1e-6), p) == "link"
        # at m* the network's bandwidth is the link's full rate: t0 = m*/r
        assert k.bandwidth(plat, ms, p) == pytest.approx(rate, rel=1e-9)


def test_changing_an_element_moves_the_bottleneck():
    # a x1 PCIe port (457 MB/s after 8b/10b and TLP overhead) under the 925.6 MB/s SRIO
    # path: the DMA binds at 4 KB and the bandwidth is its rate
    p = dataclasses.replace(k.Params(), pcie_lanes=1)
    assert k.bottleneck("KOSMOS_SRIO", 4096, p) == "dma"
    assert k.bandwidth("KOSMOS_SRIO", 4096, p) == pytest.approx(5e9 * 0.8 / 8 * 256 / 280)
    # the Ethernets (<= 294 MB/s) keep their link as the bottleneck
    assert k.bottleneck("MicroBlade", 4096, p) == "link"


def test_bandwidth_monotone_and_bounded():
    sizes = np.unique(np.geomspace(1, 2 ** 20, 120).round())
    for plat in k.PLATFORMS:
        bw = np.array([k.bandwidth(plat, m) for m in sizes])
        assert np.all(np.diff(bw) >= -1e-9 * bw[1:])
        assert np.all(bw <= float(k.link(plat).bandwidth) * (1 + 1e-12))


# --------------------------------------------------------------------- CloudSuite network

def test_run_time_is_the_critical_path_by_hand():
    p = k.Params()
    s, g, n = 2.4, k.comm_factor("Moonshot", p), 4
    hand = (s * (p.memory_serial + p.memory_per_slave * n) + g * p.memory_comm * n
            + s * p.memory_parallel / n)
    net = k.cloud_network("memory", "Moonshot", n, p)
    assert k.run_time(net) == pytest.approx(hand, rel=1e-12)
    # an independent method: qm.bounds' lower response time (a fork-join is no faster than
    # its slowest branch) is met with equality by one deterministic job
    assert float(qm.bounds(net).response_time_lower) == pytest.approx(hand, rel=1e-9)
    assert g == pytest.approx(k.bandwidth("KOSMOS_SRIO", 65536) / k.bandwidth("Moonshot", 65536))


def test_overlap_puts_extraction_and_link_in_a_scatter_fork_join():
    p = dataclasses.replace(k.Params(), overlap=True)
    s, g, n = 1.0, k.comm_factor("MicroBlade", p), 6
    net = k.cloud_network("memory", "MicroBlade", n, p)
    assert "scatter" in net.station_names
    hand = (s * p.memory_serial + max(s * p.memory_per_slave * n, g * p.memory_comm * n)
            + s * p.memory_parallel / n)
    assert k.run_time(net) == pytest.approx(hand, rel=1e-12)
    assert k.run_time(net) < k.completion_time("memory", "MicroBlade", n)


def test_overlap_does_not_rescue_in_memory_on_moonshot():
    # the scatter fork-join (extraction overlapped with the transfers), refitted: the
    # fitted points are met again, and the Moonshot 1-to-6 row stays a miss above the bar,
    # as the argument in test_misses_are_named_and_argued_on_the_paper_numbers says it must
    r = k.report(dataclasses.replace(k.Params(), overlap=True))
    for x in r.rows:
        if x.role == "fitted" and x.quantity.startswith("In-Memory"):
            assert abs(x.rel_error) < 1e-6, x.quantity
    row = _row(r, "In-Memory Analytics Moonshot 1-to-6")
    assert row.miss and row.rel_error > BAR


def test_graph_slaves_are_working_set_demands_and_speed_up_super_linearly():
    p = k.Params()
    # WorkingSet, random access: D(n) = (w/D) d + (spill/D) max(d - M, 0), d = D/n
    for n in (1, 4, 6):
        d = p.graph_data / n
        hand = p.graph_parallel / p.graph_data * d + p.graph_spill / p.graph_data * max(
            d - p.node_memory_gb, 0)
        net = k.cloud_network("graph", "KOSMOS", n, p)
        slave = dict(zip(net.station_names, np.asarray(net.service_times)[0]))["slave1"]
        assert slave == pytest.approx(hand, rel=1e-12)
    t = {n: k.completion_time("graph", "KOSMOS", n) for n in k.SLAVES}
    assert t[1] / t[4] > 4 * 1.5                 # super-linear, as the paper's 12.6x
    assert t[1] / t[6] > 6
    # the knee: the share fits from n* = D / M slaves on (paper's 8 GB per node)
    rep = k.report(refit=False)
    assert rep.extra["graph_switch_slaves"] == pytest.approx(p.graph_data / 8.0)
    assert 4 < rep.extra["graph_switch_slaves"] < 6


def test_cpu_factor_from_table1_and_the_fitted_efficiency():
    # (8 cores x 2.4 GHz) / (4 cores x 2.0 GHz) = 2.4, times e per workload
    assert k.cpu_factor("Moonshot") == pytest.approx(2.4)
    assert k.cpu_factor("Moonshot", benchmark="data") == pytest.approx(2.4)
    assert k.cpu_factor("Moonshot", benchmark="graph") == pytest.approx(
        2.4 * k.Params().graph_moonshot_efficiency)
    assert k.cpu_factor("MicroBlade") == 1.0
    p = with_overrides(k.Params(), ["moonshot_clock=2.4e9"])
    assert k.cpu_factor("Moonshot", p) == pytest.approx(2.0)


def test_completion_time_grows_with_slower_hardware():
    for b in k.BENCHMARKS:
        for n in k.SLAVES:
            tk = k.completion_time(b, "KOSMOS", n)
            assert k.completion_time(b, "MicroBlade", n) >= tk
            assert k.completion_time(b, "Moonshot", n) >= k.completion_time(b, "MicroBlade", n)


# --------------------------------------------------------------------- energy

def test_message_energy_by_hand():
    p = k.Params()
    m = 4096
    e = k.message_energy("KOSMOS_SRIO", m, p)
    # E = P x T per element: a C2758 core (20 W / 8) for t0, the PCIe port for m / r_dma,
    # the SRIO port for m / r_srio
    assert e["host"] == pytest.approx(20 / 8 * p.kosmos_host_overhead)
    assert e["dma"] == pytest.approx(p.pcie_power * m / float(k.dma(p).bandwidth))
    assert e["link"] == pytest.approx(p.srio_power * m / float(k.link("KOSMOS_SRIO").bandwidth))
    assert e["per_byte"] == pytest.approx((e["host"] + e["dma"] + e["link"]) / m)


def test_job_energy_by_hand():
    p = k.Params()
    e = k.job_energy("memory", "KOSMOS", 2, p)
    T = k.completion_time("memory", "KOSMOS", 2, p) * 1e3
    link_busy = (p.memory_comm * 2) * 1e3               # g = 1 on KOSMOS
    assert e["nodes_kJ"] == pytest.approx(3 * 20.0 * T / 1e3)
    assert e["links_kJ"] == pytest.approx(p.srio_power * link_busy / 1e3)


# --------------------------------------------------------------------- validation (--sim)

def test_validation_list_agrees_within_its_stated_error(rep_sim):
    v = rep_sim.validation
    assert len(v) >= 3
    kinds = {x["configuration"] for x in v}
    assert any("128 B" in c for c in kinds) and any("fork-join" in c for c in kinds)
    for x in v:
        assert x["agree"], x
        # both analytic methods are exact for deterministic networks; the 5e-3 budget is the
        # estimator's edge effect (a message or run cut by the horizon)
        assert abs(x["analytic"] / x["sim"]["mean"] - 1) <= 5e-3 + 1e-12, x
    # the simulated run times also stand beside their rows in the table
    row = _row(rep_sim, "In-Memory Analytics KOSMOS 1-to-4")
    assert row.sim and row.sim[0] == pytest.approx(row.model, rel=5e-3)
    assert "simulated (95 %)" in rep_sim.table().splitlines()[2]
    d = json.loads(json.dumps(rep_sim.to_dict()))
    assert d["validation"][0]["sim"]["mean"] > 0
    assert "analytic vs simulated" in rep_sim.table()


def test_simulation_is_reproducible():
    a = k._simulate(k.Params(), 5)
    b = k._simulate(k.Params(), 5)
    assert [x["sim"]["mean"] for x in a] == [x["sim"]["mean"] for x in b]


# --------------------------------------------------------------------- errors, overrides

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
    with pytest.raises(InvalidValueError, match="srio_baud must be > 0"):
        k.Params(srio_baud=0.0)
    with pytest.raises(InvalidValueError, match="moonshot_clock must be a finite number"):
        k.Params(moonshot_clock=-1.0)
    with pytest.raises(InvalidValueError, match="window must be an integer"):
        k.Params(window=2.5)
    exp = qm.Network([qm.Queue("a", 1.0)], [qm.Closed("c", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="station 'a' is not a deterministic"):
        k.path_throughput(exp)
    with pytest.raises(UnsupportedModelError, match="one job only"):
        k.run_time(exp)


def test_case_registry_and_overrides():
    from qmodels.cases import report

    r = report("kosmos", ["moonshot_cores=8"])
    base = _row(k.report(), "Data Analytics Moonshot 1-to-1")
    new = _row(r, "Data Analytics Moonshot 1-to-1")
    assert new.model < base.model
    d = r.to_dict()
    assert d["case"] == "kosmos" and math.isfinite(d["rows"][0]["rel_error"])


def test_a_changed_calibrated_value_is_held_as_a_what_if():
    # twice the SRIO packet overhead: held, the host costs refitted around it; the
    # link-bound 4 KB ratio then follows the slower SRIO rate and is not met
    po = 2 * k.Params().srio_packet_overhead
    p = dataclasses.replace(k.Params(), srio_packet_overhead=po)
    r = k.report(p)
    assert r.params.srio_packet_overhead == po
    assert "srio_packet_overhead" not in r.fitted and "kosmos_host_overhead" in r.fitted
    row = _row(r, "bandwidth KOSMOS_SRIO/MicroBlade at 4096 B")
    assert row.model == pytest.approx(1e9 * 256 / (256 + po) / (2.5e9 / 8 * 1448 / 1538))
    # holding a whole group turns its rows into predictions
    q = dataclasses.replace(k.Params(), memory_serial=50.0, memory_parallel=5.0,
                            memory_per_slave=5.0, memory_comm=5.0)
    roles = {x.role for x in k.report(q).rows if x.quantity.startswith("In-Memory")}
    assert roles == {"predicted"}
    with pytest.raises(UnknownNameError, match="not calibrated parameters"):
        k.calibrate(hold=["mtu"])


# ------------------------------------------------- review: derived notes under --set

def test_derived_bandwidth_notes_state_the_identity_at_the_given_parameters():
    # With KOSMOS_ETH on a 1G Ethernet (a what-if), the ETH/MicroBlade rows are still
    # an identity of inputs (both link-bound: X m = the payload rate, the same framing,
    # so the ratio is 1G / 2.5G = 0.4), but no longer "1 by construction: the same 2.5G
    # Ethernet", which the note used to say whatever the parameters.
    p = dataclasses.replace(k.Params(), kosmos_eth_line_bps=1e9)
    rep = k.report(p, refit=False)
    for m in (512, 4096):
        r = _row(rep, f"bandwidth KOSMOS_ETH/MicroBlade at {m} B")
        assert r.model == pytest.approx(0.4, rel=1e-12)
        assert r.role == "predicted" and "1G / 2.5G" in r.note and "same 2.5G" not in r.note
    # the SRIO/Moonshot identity names the fitted SRIO/MicroBlade value it multiplies,
    # at the parameters used: a 40 B packet overhead leaves it at 2.94, not 3.146
    q = dataclasses.replace(k.Params(), srio_packet_overhead=40.0)
    rep = k.report(q, refit=False)
    r = _row(rep, "bandwidth KOSMOS_SRIO/Moonshot at 4096 B")
    srio_mb = _row(rep, "bandwidth KOSMOS_SRIO/MicroBlade at 4096 B").model
    assert r.model == pytest.approx(srio_mb * 2.5, rel=1e-12)        # 2.5G / 1G, same framing
    assert f"{srio_mb:.4g}" in r.note and "3.146" not in r.note


@pytest.mark.parametrize("held", ["graph_moonshot_efficiency", "graph_exchange"])
def test_graph_rows_stay_identities_when_one_ratio_is_held(held):
    # Holding e (or kappa) by --set used to turn every non-KOSMOS Graph row 'predicted',
    # yet each is still the fitted KOSMOS row at the same n times one system ratio (the
    # slave branch scales by one factor per system): lockstep with a fitted row.
    p = with_overrides(k.Params(), [f"{held}={1.5 if 'efficiency' in held else 0.2}"])
    rep = k.report(p)
    for s in ("MicroBlade", "Moonshot"):
        ratio = (_row(rep, f"Graph Analytics {s} 1-to-1").model
                 / _row(rep, "Graph Analytics KOSMOS 1-to-1").model)
        for n in k.SLAVES:
            r = _row(rep, f"Graph Analytics {s} 1-to-{n}")
            kos = _row(rep, f"Graph Analytics KOSMOS 1-to-{n}")
            assert kos.role == "fitted"
            assert r.model == pytest.approx(ratio * kos.model, rel=1e-9)
            if r.role != "fitted":             # Moonshot 1-to-1 while e is fitted
                assert r.role == "predicted", (held, r.quantity)
                fixer = "graph_exchange" if s == "MicroBlade" else "graph_moonshot_efficiency"
                assert (f"held {fixer}" in r.note) == (fixer == held), r.note



# ------------------------------------------------- the per-slave mechanisms (issue 29 item 4)

def test_data_split_per_run_lets_moonshot_alone_fall():
    """Data Analytics with the input split among the slaves (one data set per run over
    the master's link, data_transfer='per-run'): refitted on the same four points, the
    per-slave cost is the master's small per-slave work, so Moonshot (CPU factor 2.4 on
    the shrinking parallel share) falls from 1-to-1 to 1-to-6 while KOSMOS stays flat.

    Hand derivation on the fitted points (KOSMOS 306, 287, 282 at 1, 2, 6 slaves;
    MicroBlade 311 at 6): T = s (a + w / n + c n) + g v.  KOSMOS (s = g = 1):
    (a + v) + w + c = 306, (a + v) + w / 2 + 2 c = 287, (a + v) + w / 6 + 6 c = 282 give
    c = 2.3, w = 42.6, a + v = 261.1; MicroBlade (s = 1, g = g_MB) at 6: (g_MB - 1) v =
    311 - 282, so v = 29 / (g_MB - 1)."""
    p = k.Params(data_transfer="per-run")
    rep = k.report(p)
    g_mb = k.comm_factor("MicroBlade", rep.params)
    assert rep.fitted["data_per_slave"] == pytest.approx(2.3, rel=1e-3)
    assert rep.fitted["data_parallel"] == pytest.approx(42.6, rel=1e-3)
    assert rep.fitted["data_comm"] == pytest.approx(29 / (g_mb - 1), rel=1e-3)
    assert rep.fitted["data_serial"] + rep.fitted["data_comm"] == pytest.approx(261.1,
                                                                                 rel=1e-3)
    falls = ("Data Analytics on Moonshot falls with more slaves, 1-to-6 below 1-to-1 (sec. 4; "
             "1 = yes)")
    row = _row(rep, falls)
    assert row.model == 1.0 and not row.miss and row.rests_on == ("data_transfer",)
    # MicroBlade's constant excess over KOSMOS (the paper: 32, 23, 22, 29) is the one
    # per-run transfer: its predicted rows come within 2.5 %
    for n in (1, 2, 4):
        assert abs(_row(rep, f"Data Analytics MicroBlade 1-to-{n}").rel_error) < 0.025
    # the master link carries v once whatever n
    net = k.cloud_network("data", "KOSMOS", 6, rep.params)
    assert next(s for s in net.stations if s.name == "master_link").service == \
        pytest.approx(rep.fitted["data_comm"])
    # at the default (a transfer to each slave) the row misses and says what it rests on
    d = _row(k.report(), falls)
    assert d.model == 0.0 and d.blame == "assumption" and d.rests_on == ("data_transfer",)
    with pytest.raises(k.InvalidValueError, match="data_transfer"):
        k.Params(data_transfer="per-byte")


def test_no_per_slave_cost_places_in_memory_moonshot(rep):
    """The issue's candidate mechanism, a per-slave cost f the same on every platform
    beside CPU-scaled and link-scaled ones, checked by hand against Table 4: per added
    slave MicroBlade grows 12.6 more than KOSMOS, all of it from the link factor g_MB,
    so v = 12.6 / (g_MB - 1); Moonshot's link then adds (g_Moon - 1) v over KOSMOS,
    more than the paper's 26 even after the parallel share's (s - 1) w / 6 comes off."""
    t = k.COMPLETION["memory"]
    slope = {s: (t[s][3] - t[s][0]) / 5 for s in t}
    g_mb, g_moon = (k.comm_factor(s, rep.params) for s in ("MicroBlade", "Moonshot"))
    v = (slope["MicroBlade"] - slope["KOSMOS"]) / (g_mb - 1)
    least = (g_moon - 1) * v - (2.4 - 1) * rep.params.memory_parallel / 6
    assert least > slope["Moonshot"] - slope["KOSMOS"] + 10
    miss = _row(rep, "In-Memory Analytics Moonshot 1-to-6").miss
    assert f"{least:.1f}" in miss and "the same on every platform" in miss
    # Graph: the paper's Moonshot/KOSMOS ratio falls and rises again, which a branch
    # (k W(n) + f) / (W(n) + f) with W(n) shrinking cannot do
    g = k.COMPLETION["graph"]
    r = [a / b for a, b in zip(g["Moonshot"], g["KOSMOS"])]
    assert r[2] < r[1] and r[3] > r[2]
    assert "cannot fall and rise again" in _row(rep, "Graph Analytics Moonshot 1-to-4").miss
