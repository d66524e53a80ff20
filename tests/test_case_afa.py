"""The all-flash energy case as a network: paper-vs-model table,
calibration, the network against hand derivations, energy per element,
the symbolic switch points and the simulator.

Reference values come from the paper (Kim & Han 2019, Table 1 and sec. 4)
or from hand derivations written out below: with one customer a closed
tandem network's cycle time is the sum of its demands and U_k = D_k / sum D
(Lazowska et al., QSP 1984, ch. 6, exact MVA at N = 1), and energy is
E = P x T per power state (the paper's E = P x T; QSP sec. 3.2: busy time
= U T).
"""

import dataclasses
import json
import math

import pytest

import qmodels as qm
from qmodels.cases import afa
from qmodels.cases._base import source_of
from qmodels.errors import InvalidValueError, UnknownNameError

KiB, MiB, GiB = 2 ** 10, 2 ** 20, 2 ** 30

#: Tolerance for predicted rows without a miss.  The paper's ratios are read
#: off bar charts and rounded in its text ("about 1.3x", "about 1/7", "about
#: 4x"), and several are ratios of two such readings, so a 20 % band is the
#: precision the paper itself offers; the table's worst kept row is 18 %
#: (HDD/NVDIMM at 1 KB: 4.26 for the paper's 5.2).
TOL = 0.20


@pytest.fixture(scope="module")
def rep():
    return afa.report()


@pytest.fixture(scope="module")
def rep_sim():
    return afa.report(sim=True, seed=1)


def _row(rep, start):
    return next(r for r in rep.rows if r.quantity.startswith(start))


def test_table_is_computed(rep):
    assert rep.case == "afa"
    assert len(rep.rows) >= 25
    text = rep.table()
    assert "HDD/NVDIMM write time, 4 GB file, 2.4 GHz" in text
    d = rep.to_dict()
    assert d["fitted"].keys() == set(afa.FITTED)
    assert all(math.isfinite(r.model) for r in rep.rows)
    c = rep.counts
    assert rep.summary().startswith(f"{len(rep.rows)} rows: {c['fitted']} fitted, "
                                    f"{c['predicted']} predicted, {c['derived']} derived")


def test_predicted_rows_within_tolerance_or_explained(rep):
    for r in rep.predicted:
        if r.miss:
            # a kept miss is a real miss and says why
            assert abs(r.rel_error) > TOL or r.boolean, r.quantity
            assert len(r.miss) > 40
        elif r.boolean:
            assert r.model == r.paper, r.quantity
        else:
            assert abs(r.rel_error) <= TOL, (r.quantity, r.paper, r.model)
    assert rep.worst_predicted <= TOL


def test_at_most_a_third_fitted_and_fits_hit_their_points(rep):
    fitted = [r for r in rep.rows if r.role == "fitted"]
    assert 3 * len(fitted) <= len(rep.rows)
    assert len(fitted) == len(afa.FITTED)
    for r in fitted:
        assert abs(r.rel_error) < 1e-3, r.quantity
    assert {r.quantity for r in fitted} == set(afa.FITTED.values())


def test_calibrated_defaults_are_the_fit(rep):
    for name, value in rep.fitted.items():
        assert getattr(afa.Params(), name) == pytest.approx(value, rel=1e-3)
        assert source_of(afa.Params(), name)["kind"] == "calibrated"


# ---------------------------------------------------------------------------
# the network against hand derivations
# ---------------------------------------------------------------------------

def test_network_is_built_from_elements_and_visited_once_per_call():
    p = afa.Params()
    net = afa.network(p, "hdd", size=GiB, buffer=MiB, fsyncs=1000)
    assert net.station_names == ("cpu", "xfs", "hdd")
    assert isinstance(net.station("cpu").element, qm.CPU)
    assert isinstance(net.station("xfs").element, qm.Link)
    assert isinstance(net.station("hdd").element, qm.Flash)
    # 1,000 fsyncs over 1,024 calls: 1000/1024 flushes per call
    assert net.station("hdd").element.calls == pytest.approx(1000 / 1024, rel=1e-12)
    assert net.classes[0].population == 1


def test_write_time_by_hand_nvme_and_hdd():
    """One writer, so T = n x sum of per-call demands (QSP ch. 6, MVA at N = 1).
    NVMe writes 1 GiB in 1 MiB calls with 1,000 fsyncs at 2.4 GHz:"""
    p = afa.Params()
    F, k, n = GiB, 1000, GiB / MiB
    t = (F * (p.fs_write_fixed + p.fs_write_cpu)      # xfs path + cpu per byte (ref clock)
         + n * p.syscall                              # 1,024 write() calls
         + k * p.nvme_flush                           # 1,000 flushes of 20 us
         + F / p.nvme_write_bw)                       # 1 GiB at 900 MB/s
    assert afa.write_time(p, "nvme", F, fsyncs=k) == pytest.approx(t, rel=1e-12)
    # HDD: one request of hdd_call per call, half a revolution per fsync, 150 MB/s
    t_h = (F * (p.fs_write_fixed + p.fs_write_cpu) + n * (p.syscall + p.hdd_call)
           + k * 30 / p.hdd_rpm + F / p.hdd_rate)
    r = afa.run(p, "hdd", size=F, fsyncs=k)
    assert r.time == pytest.approx(t_h, rel=1e-12)
    # utilisations are the demand shares; the xfs path is the largest at 1,000 fsyncs
    d_xfs = F * p.fs_write_fixed / t_h
    assert r.utilization["xfs"] == pytest.approx(d_xfs, rel=1e-9)
    assert r.bottleneck == "xfs"


def test_energy_per_element_by_hand():
    """E = P x T per state: the device busy n D_dev at Table-1 write power and
    idle T - n D_dev at data-sheet idle power; the core busy n (D_cpu + D_xfs)
    at its assumed power; the paper's accounting charges Table-1 power x T."""
    p = afa.Params()
    r = afa.run(p, "nvme", size=GiB, fsyncs=1000)
    n, T = r.calls, r.time
    busy = n * r.demands["nvme"]
    e_dev = 12.0 * busy + 4.0 * (T - busy)            # Table 1 12 W, data sheet idle 4 W
    assert r.device_energy == pytest.approx(e_dev, rel=1e-9)
    assert r.paper_energy == pytest.approx(12.0 * T, rel=1e-9)
    e_core = p.cpu_core_w * n * (r.demands["cpu"] + r.demands["xfs"])
    assert r.total_energy == pytest.approx(e_dev + e_core, rel=1e-9)
    assert r.energy_per_byte == pytest.approx((e_dev + e_core) / GiB, rel=1e-9)
    # reads are charged the read power: NVMe 9 W
    rr = afa.run(p, "nvme", "read", size=GiB)
    assert rr.paper_energy == pytest.approx(9.0 * rr.time, rel=1e-9)


def test_hdd_fsync_is_a_half_revolution():
    """Each fsync on the HDD costs 30/rpm = 4.1667 ms (no seek): the time
    for 100,000 fsyncs minus that for 1,000 is 99,000 x 4.1667 ms."""
    p = afa.Params()
    d = afa.write_time(p, "hdd", GiB, fsyncs=100_000) - afa.write_time(p, "hdd", GiB, fsyncs=1000)
    assert d == pytest.approx(99_000 * 30 / 7200, rel=1e-9)


def test_clock_scales_only_the_cpu_station():
    p = afa.Params()
    F = 4 * GiB
    lo, hi = afa.run(p, "nvdimm", size=F, clock=1.6e9), afa.run(p, "nvdimm", size=F)
    assert lo.demands["cpu"] == pytest.approx(hi.demands["cpu"] * 2.4 / 1.6, rel=1e-12)
    assert lo.demands["xfs"] == hi.demands["xfs"]
    assert lo.demands["nvdimm"] == hi.demands["nvdimm"]


def test_changing_an_element_moves_the_bottleneck():
    """The network, not a formula: raising the HDD's flushes per call through
    its element (path 'hdd.calls', qm.apply) and re-solving moves the
    bottleneck from the xfs path to the device."""
    p = afa.Params()
    net = afa.network(p, "hdd", size=GiB, fsyncs=1000)
    assert max(qm.solve(net).U.items(), key=lambda kv: kv[1])[0] == "xfs"
    moved = qm.apply(net, {"hdd.calls": 100_000 / 1024})
    u = qm.solve(moved).U
    assert max(u.items(), key=lambda kv: kv[1])[0] == "hdd"
    # and a device swap: the same path on NVDIMM stays xfs-bound at 100,000 fsyncs
    assert afa.run(p, "nvdimm", fsyncs=100_000).bottleneck == "xfs"


def test_read_energy_ratio_is_forced_by_table1(rep):
    """Whatever the times, E_HDD / E_NVDIMM = (6.8 / 2) x T_HDD / T_NVDIMM:
    with the paper's 6.9x time ratio that is 23.46x, not 7.18x."""
    row = _row(rep, "HDD/NVDIMM read energy, 4 GB file")
    assert row.model == pytest.approx(6.8 / 2.0 * 6.9, rel=1e-3)
    assert row.miss and row.role == "derived"


def test_max_fsync_gap_bound_from_paper_numbers(rep):
    # with 13x HDD growth, flat NVDIMM and 26x at 1,000 fsyncs the paper's
    # own figures cap the gap at 13 x 26 = 338 < 800: the model stays below
    row = _row(rep, "max HDD/NVDIMM energy")
    assert row.model < 13 * 26
    assert row.miss


def test_sweeps_shapes_and_bottleneck_map(rep):
    sw = rep.extra["sweeps"]
    hdd, nvd = sw["fsync"]["hdd"]["time"], sw["fsync"]["nvdimm"]["time"]
    assert all(b > a for a, b in zip(hdd, hdd[1:]))           # HDD grows with fsyncs
    assert max(nvd) / min(nvd) < 1.01                          # NVDIMM flat
    for d in afa.DEVICES:                                      # smaller buffers cost more
        t = sw["buffer"][d]["time"]
        assert all(b <= a for a, b in zip(t, t[1:]))
    # the bottleneck moves: HDD xfs-bound at 1,000 and 3,000 fsyncs, device-bound from
    # 10,000 (k* = 3,945 lies between); NVDIMM xfs-bound everywhere
    assert sw["fsync"]["hdd"]["bottleneck"] == ["xfs", "xfs", "hdd", "hdd", "hdd"]
    assert set(sw["fsync"]["nvdimm"]["bottleneck"]) == {"xfs"}
    # buffer: HDD device-bound at 1 KB (b* = 5.6 KiB), xfs-bound from 10 KB
    assert sw["buffer"]["hdd"]["bottleneck"] == ["hdd", "xfs", "xfs", "xfs"]
    # energy order of the buffer sweep, NVDIMM < SSD < NVMe < HDD (paper sec. 4.1.4),
    # holds at 1 KB; at 1 MB the model's HDD is only 1.2x slower than NVMe (the
    # missed rows), so NVMe's 12 W puts it above the HDD there (a report note)
    e = {d: sw["buffer"][d]["energy"][0] for d in afa.DEVICES}
    assert e["nvdimm"] < e["ssd"] < e["nvme"] < e["hdd"]
    e1 = {d: sw["buffer"][d]["energy"][-1] for d in afa.DEVICES}
    assert e1["nvme"] > e1["hdd"]
    assert any("1 MB" in n and "NVMe" in n for n in rep.notes)


def test_switch_points_by_hand_and_on_the_network():
    """D_dev = D_xfs per call: o + (k b / F) t_f + b / B = b c_fs gives
    k* = F (c_fs - 1/B - o/b) / t_f; with k = 1, b* = o / (c_fs - 1/B - t_f/F)
    (derived by hand here; the module derives it with sympy)."""
    p = afa.Params()
    sw = afa.switch_points(p)
    F, b, o, tf = p.sync_file, p.default_buffer, p.hdd_call, 30 / p.hdd_rpm
    k_star = F * (p.fs_write_fixed - 1 / p.hdd_rate - o / b) / tf
    e = sw["fsync"]["hdd"]
    assert e["value"] == pytest.approx(k_star, rel=1e-9)
    assert e["check"] == ("xfs", "hdd")
    # at k* the two demands are equal on the numeric network
    r = afa.run(p, "hdd", fsyncs=e["value"])
    assert r.demands["hdd"] == pytest.approx(r.demands["xfs"], rel=1e-9)
    b_star = o / (p.fs_write_fixed - 1 / p.hdd_rate - tf / F)
    eb = sw["buffer"]["hdd"]
    assert eb["value"] == pytest.approx(b_star, rel=1e-9)
    assert eb["check"] == ("hdd", "xfs")
    # flash devices switch far beyond the paper's 100,000 fsyncs (SSD: 0.1 ms flushes)
    assert sw["fsync"]["ssd"]["value"] > 100_000
    ks = F * (p.fs_write_fixed - 1 / p.ssd_write_bw) / p.ssd_flush
    assert sw["fsync"]["ssd"]["value"] == pytest.approx(ks, rel=1e-9)
    # the general formula, in symbols
    import sympy as sp
    F_, o_, t_, B_, c_, b_ = sp.symbols("F o t_f B c_fs b", positive=True)
    assert sp.simplify(sw["fsync_formula"]["expr"]
                       - F_ * (c_ - 1 / B_ - o_ / b_) / t_) == 0


# ---------------------------------------------------------------------------
# roles: predicted rows are not a fitted row's equation
# ---------------------------------------------------------------------------

def test_predicted_rows_move_independently_of_the_fitted_request_cost():
    """Doubling the HDD's fitted per-request cost (no refit) moves its fitted
    1 KB row; predicted rows that do not run the HDD at small buffers do not
    move at all, and the fsync row (1 MB calls) moves by a different factor.
    The HDD/NVMe and HDD/NVDIMM 1 KB rows share the fitted row's numerator by
    design: what they test is SSD/NVMe and SSD/NVDIMM at 1 KB (data-sheet
    flash costs), which this change leaves alone:"""
    p = afa.Params()
    a = afa.report(p, fit=False)
    b = afa.report(dataclasses.replace(p, hdd_call=2 * p.hdd_call), fit=False)
    fit_a, fit_b = (_row(x, afa.FITTED["hdd_call"]).model for x in (a, b))
    assert fit_b / fit_a > 1.5
    for q in ("HDD read time 1.6 GHz", "NVDIMM write time, 100,000",
              "SSD write time, 10 KB"):
        assert _row(b, q).model == pytest.approx(_row(a, q).model, rel=1e-12), q
    f_a, f_b = (_row(x, "HDD write time, 100,000 / 1,000").model for x in (a, b))
    assert abs(f_b / f_a - fit_b / fit_a) > 0.3
    for q in ("HDD/NVMe write time, 1 KB", "HDD/NVDIMM write time, 1 KB"):
        ratio_a = _row(a, q).model / fit_a
        assert _row(b, q).model / fit_b == pytest.approx(ratio_a, rel=1e-9)


def test_fit_false_uses_the_given_parameters():
    p = dataclasses.replace(afa.Params(), hdd_call=1e-4)
    r = afa.report(p, fit=False)
    assert r.fitted == {}
    assert r.params.hdd_call == 1e-4


def test_overrides_through_the_case_registry(rep):
    from qmodels import cases

    r = cases.report("afa", ["hdd_rpm=5400"])
    assert r.params.hdd_rpm == 5400.0
    # a slower spindle makes every fsync cost more
    assert (_row(r, "HDD write time, 100,000").model
            > _row(rep, "HDD write time, 100,000").model)


def test_errors_name_the_bad_value():
    p = afa.Params()
    with pytest.raises(UnknownNameError, match="unknown device 'tape'"):
        afa.write_time(p, "tape", GiB)
    with pytest.raises(InvalidValueError, match="buffer must be positive, got 0"):
        afa.write_time(p, "ssd", GiB, buffer=0)
    with pytest.raises(InvalidValueError, match="op must be 'read' or 'write'"):
        afa.run(p, "ssd", "erase")
    with pytest.raises(InvalidValueError, match="fsyncs must be non-negative"):
        afa.network(p, "ssd", fsyncs=-1)
    with pytest.raises(InvalidValueError, match="hdd_rpm must be a non-negative number"):
        afa.Params(hdd_rpm=-1.0)


# ---------------------------------------------------------------------------
# simulation
# ---------------------------------------------------------------------------

def test_simulation_agrees_and_loads_different_elements(rep_sim):
    """--sim: at least three configurations, each within the simulator's
    95 % interval (MVA is exact for one customer: tolerance 0), loading
    different elements (device-bound writes, an xfs-bound write, a read)."""
    val = rep_sim.validation
    configs = {v["configuration"] for v in val}
    assert len(configs) >= 3
    assert all(v["agree"] for v in val), [v for v in val if not v["agree"]]
    assert all(v["tolerance"] == 0.0 for v in val)
    # every configuration reports run time, each element's U and energy, and J/B
    for c in configs:
        qs = {v["quantity"] for v in val if v["configuration"] == c}
        assert {"run time [s]", "U cpu", "U xfs", "energy per byte [J/B]"} <= qs
    bottlenecks = set()
    for c in configs:
        us = {v["quantity"][2:]: v["analytic"] for v in val
              if v["configuration"] == c and v["quantity"].startswith("U ")}
        bottlenecks.add(max(us, key=us.get))
    assert {"xfs", "hdd"} <= bottlenecks
    assert any("read" in c for c in configs)
    d = json.loads(json.dumps(rep_sim.to_dict()))
    assert d["validation"] and d["sim_status"]
    assert "analytic vs simulated" in rep_sim.table()


def test_simulation_is_reproducible():
    p = afa.Params()
    cfg = afa.VALIDATION_CONFIGS[:1]
    a, _ = afa.validation(p, cfg, seed=7)
    b, _ = afa.validation(p, cfg, seed=7)
    assert [v["sim"] for v in a] == [v["sim"] for v in b]


def test_energy_split_in_extra(rep):
    e = rep.extra["energy"]["write 1 GB, 100,000 fsyncs"]
    # the HDD's flushes make it the bottleneck and most of the energy
    assert e["hdd"]["bottleneck"] == "hdd"
    assert e["hdd"]["energy"]["hdd"] > e["hdd"]["energy"]["xfs"] + e["hdd"]["energy"]["cpu"]
    # with data-sheet idle power an xfs-bound NVMe write charges its device less than
    # the paper's accounting (12 W over the whole run)
    w = rep.extra["energy"]["write 4 GB"]["nvme"]
    assert w["energy"]["nvme"] < w["paper_energy"]


def test_cpu_switch_point_by_hand():
    """The core's demand (s + b c_cpu) r, r = f_ref / f, equals the xfs path's
    b c_fs at b* = s r / (c_fs - c_cpu r): at 1.6 GHz (r = 1.5) ~200 B,
    below the paper's smallest buffer (1 KB), so its runs never make the
    CPU the bottleneck."""
    p = afa.Params()
    r = p.ref_clock / p.low_clock
    b_star = p.syscall * r / (p.fs_write_fixed - p.fs_write_cpu * r)
    e = afa.switch_points(p)["buffer"]["cpu"]
    assert e["value"] == pytest.approx(b_star, rel=1e-9)
    assert e["check"] == ("cpu", "xfs")
    assert e["value"] < min(p.buffer_sizes)


def test_physical_energy_note(rep):
    # the note's ratio is the networks' device energies with data-sheet idle power
    p = rep.params
    a, b = afa.run(p, "nvme", size=4 * GiB), afa.run(p, "nvdimm", size=4 * GiB)
    ratio = a.device_energy / b.device_energy
    assert any(f"{ratio:.2f}x instead of" in n for n in rep.notes)
    # NVDIMM idles at its active power (assumed), so its two accountings agree
    assert b.device_energy == pytest.approx(b.paper_energy, rel=1e-9)


def test_no_overlap_is_what_the_paper_demands():
    """The module's argument for a tandem of one customer: were the page
    cache's write-back fully overlapped with the writer, a run would take
    n x max(D_cpu + D_xfs, D_device) (the slower of two pipelined stages);
    at 4 GB in 1 MB calls the path exceeds the HDD's demand, so HDD/NVDIMM
    would be 1.00, not the paper's 1.25 (sec. 4.1.2), which the tandem
    (sum of demands) reproduces."""
    p = afa.Params()

    def overlapped(d):
        r = afa.run(p, d, size=4 * GiB)
        return r.calls * max(r.demands["cpu"] + r.demands["xfs"], r.demands[d])

    assert overlapped("hdd") / overlapped("nvdimm") == pytest.approx(1.0, abs=1e-12)
    tandem = afa.write_time(p, "hdd", 4 * GiB) / afa.write_time(p, "nvdimm", 4 * GiB)
    assert tandem == pytest.approx(1.25, rel=1e-3)


# ---------------------------------------------------------------------------
# review: rows that were 'predicted' but follow from fitted rows or inputs
# ---------------------------------------------------------------------------

def test_nvdimm_clock_row_is_an_identity_of_the_two_fitted_clock_rows():
    """T_d(f) = n (P(f) + D_d): the path P(f) is shared, the device time D_d is
    clock-free (hand derivation, QSP ch. 6 at N = 1).  So R(f) - 1 =
    (D_HDD - D_NVDIMM) / (P(f) + D_NVDIMM) for the HDD/NVDIMM ratio R(f), and
    T_NVDIMM(1.6) / T_NVDIMM(2.4) = (R(2.4) - 1) / (R(1.6) - 1) at any
    parameters: the row carries nothing the two fitted rows did not."""
    p0 = afa.Params()
    for q in (p0, dataclasses.replace(p0, fs_write_fixed=3 * p0.fs_write_fixed,
                                      fs_write_cpu=0.4 * p0.fs_write_cpu,
                                      nvdimm_rate=0.3 * p0.nvdimm_rate, hdd_rate=90e6)):
        r = afa.report(q, fit=False)
        r24 = _row(r, afa.FITTED["fs_write_fixed"]).model
        r16 = _row(r, afa.FITTED["fs_write_cpu"]).model
        nv = _row(r, "NVDIMM write time 1.6 GHz")
        assert nv.model == pytest.approx((r24 - 1) / (r16 - 1), rel=1e-9)
        # the model's shared clock-scaled path is a hypothesis: predicted by the rule
        assert nv.role == "predicted" and "hypothesis" in nv.note


def test_nvme_nvdimm_energy_is_bracketed_by_table1_and_the_fitted_ratio():
    """12 W / 2 W = 6 times a time ratio the shared path holds in [1, R] with R
    the fitted HDD/NVDIMM 1.25: whatever the NVMe's bandwidth between the HDD's
    and the NVDIMM's, the row stays in [6, 7.5], inside 7 +- 20 %: it cannot
    fail within the model; the Fig. 4 order follows from the same bracket.  Both
    rest on the shared path, a hypothesis, so both are predicted (the rule of
    qmodels.cases._base)."""
    p0 = afa.Params()
    for bw in (0.16e9, 0.5e9, 0.9e9, 5e9, 17e9):
        r = afa.report(dataclasses.replace(p0, nvme_write_bw=bw), fit=False)
        big = _row(r, afa.FITTED["fs_write_fixed"]).model
        row = _row(r, "NVMe/NVDIMM write energy, 4 GB")
        assert 6.0 <= row.model <= 6.0 * big + 1e-12, bw
        assert abs(row.model / 7.0 - 1) <= TOL
        assert _row(r, "4 GB write energy: NVDIMM lowest").model == 1.0, bw
    rep = afa.report(p0, fit=False)
    assert _row(rep, "NVMe/NVDIMM write energy, 4 GB").role == "predicted"
    assert _row(rep, "4 GB write energy: NVDIMM lowest").role == "predicted"
    assert "bound to [6, 7.5]" in _row(rep, "NVMe/NVDIMM write energy, 4 GB").note
    # a what-if NVMe slower than the HDD (10 MB/s) breaks the bracket's premise: the two
    # rows are then predictions, and the note claims no bound
    slow = afa.report(dataclasses.replace(p0, nvme_write_bw=1e7), fit=False)
    for q in ("NVMe/NVDIMM write energy, 4 GB", "4 GB write energy: NVDIMM lowest"):
        assert _row(slow, q).role == "predicted" and "bound" not in _row(slow, q).note, q
    assert _row(slow, "NVMe/NVDIMM write energy, 4 GB").model > 6 * 1.25


def test_read_order_of_nvme_and_ssd_is_the_data_sheets():
    """Both reads visit the same cpu and xfs stations, so which is slower is
    which data-sheet read bandwidth is lower: swap them and the row flips."""
    p0 = afa.Params()
    row = _row(afa.report(p0, fit=False), "NVMe reads slower than SSD")
    assert row.role == "predicted" and row.miss and row.model == 0.0 and row.blame == "model"
    swapped = dataclasses.replace(p0, nvme_read_bw=p0.ssd_read_bw, ssd_read_bw=p0.nvme_read_bw)
    assert _row(afa.report(swapped, fit=False), "NVMe reads slower than SSD").model == 1.0


def test_buffer_bottleneck_row_follows_from_the_fitted_rows(rep):
    """At 1 KB the fitted T_HDD = 4 T_SSD gives D_HDD = 4 (P + D_SSD) - P >= 3 P
    with P = D_cpu + D_xfs (N = 1: T / n = sum of demands); at 1 MB the fitted
    clock rows put D_xfs at ~3.3 (D_HDD - D_NVDIMM), above D_HDD."""
    p = rep.params
    h, s = afa.run(p, "hdd", buffer=KiB), afa.run(p, "ssd", buffer=KiB)
    P = s.demands["cpu"] + s.demands["xfs"]
    assert h.time / s.time == pytest.approx(4.0, rel=1e-4)                # the fitted row
    assert h.demands["hdd"] == pytest.approx(4 * (P + s.demands["ssd"]) - P, rel=1e-3)
    assert h.demands["hdd"] >= 3 * P > h.demands["xfs"]
    hm, nm = afa.run(p, "hdd", buffer=MiB), afa.run(p, "nvdimm", buffer=MiB)
    delta = hm.demands["hdd"] - nm.demands["nvdimm"]
    # R(2.4) = 1.25 -> P24 + D_nv = 4 delta; R(1.6) = 1.23 -> P16 + D_nv = delta / 0.23;
    # the cpu station scales by 2.4 / 1.6 = 1.5, so 0.5 D_cpu = (1 / 0.23 - 4) delta
    cpu = 2 * (1 / 0.23 - 4) * delta
    assert hm.demands["cpu"] == pytest.approx(cpu, rel=1e-3)
    assert hm.demands["xfs"] == pytest.approx(4 * delta - nm.demands["nvdimm"] - cpu, rel=1e-3)
    assert hm.demands["xfs"] > hm.demands["hdd"]
    row = _row(rep, "HDD is the bottleneck at 1 KB buffers")
    assert row.role == "predicted" and row.model == 1.0


def test_set_of_a_fitted_parameter_is_held_not_silently_refitted(rep):
    """``qmodels case afa --set hdd_call=...`` used to be refitted back to the
    calibration, so the override changed nothing; it is now held as given,
    the other three are refitted, and the fitted rows it moves are marked
    stale (an HDD request cost of 1 ms makes a 1 KB HDD write ~11 s per
    1 GB / 1 KB = 2^20 calls more, far from the fitted 4x's 89 us)."""
    from qmodels import cases

    r = cases.report("afa", ["hdd_call=1e-3"])
    assert r.params.hdd_call == 1e-3
    assert "hdd_call" not in r.fitted and set(r.fitted) == set(afa.FITTED) - {"hdd_call"}
    assert r.counts["stale"] >= 1 and "fitted (stale)" in r.table()
    h = afa.run(r.params, "hdd", buffer=KiB)
    assert h.demands["hdd"] >= 1e-3
    with pytest.raises(UnknownNameError, match="not fitted parameters"):
        afa.calibrate(afa.Params(), hold=("hdd_rpm",))
    assert afa.calibrate(afa.Params(), hold=tuple(afa.FITTED)) == {}


def test_one_kb_rows_say_what_they_test(rep):
    """HDD/NVMe and HDD/NVDIMM at 1 KB share the fitted HDD/SSD row's numerator:
    the row is the fitted 4x times the SSD/device time ratio, and its note must
    say so (it read 'sec. 4.1.4' only, which looks like a fitted value shown
    as a prediction)."""
    p = rep.params
    ssd = afa.run(p, "ssd", buffer=KiB).time
    fit = _row(rep, afa.FITTED["hdd_call"]).model
    for d, label in (("nvme", "NVMe"), ("nvdimm", "NVDIMM")):
        ratio = ssd / afa.run(p, d, buffer=KiB).time
        row = _row(rep, f"HDD/{label} write time, 1 KB")
        assert row.model == pytest.approx(fit * ratio, rel=1e-9)
        assert f"{ratio:.3f}" in row.note and "what this row tests" in row.note


@pytest.mark.parametrize("name", ["fs_write_fixed", "fs_read"])
def test_zero_file_system_cost_is_refused_by_name(name):
    # --set fs_write_fixed=0 ended in a bare ZeroDivisionError (xfs bandwidth 1 / 0)
    from qmodels import cases

    with pytest.raises(InvalidValueError, match=name):
        cases.report("afa", [f"{name}=0"])


def test_fsync_energy_rows_name_the_reach_of_the_call_size():
    # issue 29: the 1,000-fsync energies rest on the unstated call size; their note states
    # what 1 KB calls give with the fits held, which must be what that what-if prints
    rep = afa.report(afa.Params(), fit=False)
    held = afa.report(dataclasses.replace(afa.Params(), default_buffer=KiB), hold_fit=True)
    for q in ("HDD/SSD write energy, 1,000 fsyncs", "HDD/NVDIMM write energy, 1,000 fsyncs"):
        r = _row(rep, q)
        assert r.rests_on == ("default_buffer", "hdd_seek") and r.blame == "assumption"
        other = _row(held, q).model
        assert f"{other:.2g}x" in r.note or f"{other:.3g}x" in r.note, (q, other, r.note)


def test_one_mb_rows_say_what_a_size_dependent_request_cost_would_need(rep):
    """The 1 MB buffer rows (HDD 2.5x the SSD on 1 GB) against a per-request cost that
    depends on the request size.  Hand derivation: with T_h and T_s the model's 1 GB
    times in 1 MB calls, meeting 2.5x needs (2.5 T_s - T_h) / 1024 more per HDD request;
    the disk's revolution is 60 / 7200 s = 8.33 ms and its 1 MB transfer 1 MiB / 150 MB/s
    = 7.0 ms, so the extra is several of each.  The same extra on the 4096 1 MB calls of
    the 4 GB write takes HDD/NVDIMM far above the fitted 1.25x."""
    p = rep.params
    mib = 2 ** 20
    t_h = afa.run(p, "hdd", size=p.sync_file, buffer=mib).time
    t_s = afa.run(p, "ssd", size=p.sync_file, buffer=mib).time
    need = (2.5 * t_s - t_h) / (p.sync_file / mib)
    assert need > 3 * 60 / 7200 and need > 3 * mib / 150e6
    row = next(r for r in rep.rows if r.quantity == "HDD/SSD write time, 1 MB buffer")
    assert f"{need * 1e3:.1f} ms to every 1 MB request" in row.miss
    big = (afa.run(p, "hdd", size=p.large_file).time + need * p.large_file / mib) \
        / afa.run(p, "nvdimm", size=p.large_file).time
    assert big > 2 and f"write {big:.1f}x instead of 1.25x" in row.miss
