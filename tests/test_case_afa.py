"""The all-flash energy case: paper-vs-model table, calibration, E = P x T.

Reference values come from the paper (Kim & Han 2019, Table 1 and sec. 4)
or from hand derivations written out below.
"""

import dataclasses
import math

import pytest

import qmodels as qm
from qmodels.cases import afa
from qmodels.cases._base import source_of
from qmodels.errors import InvalidValueError, UnknownNameError

GiB = 2 ** 30

#: Tolerance for predicted rows without a miss.  The paper's ratios are read
#: off bar charts and rounded in its text ("about 1.3x", "about 1/7", "about
#: 4x"), and several are ratios of two such readings, so a 20 % band is the
#: precision the paper itself offers; the table's worst kept row is 18 %.
TOL = 0.20


@pytest.fixture(scope="module")
def rep():
    return afa.report()


def test_table_is_computed(rep):
    assert rep.case == "afa"
    assert len(rep.rows) >= 20
    text = rep.table()
    assert "HDD/NVDIMM write time, 4 GB file, 2.4 GHz" in text
    d = rep.to_dict()
    assert d["fitted"].keys() == set(afa.FITTED)
    assert all(math.isfinite(r.model) for r in rep.rows)


def test_predicted_rows_within_tolerance_or_explained(rep):
    for r in rep.predicted:
        if r.miss:
            # a kept miss is a real miss and says why
            assert abs(r.rel_error) > TOL, r.quantity
            assert len(r.miss) > 40
        else:
            assert abs(r.rel_error) <= TOL, (r.quantity, r.paper, r.model)
    assert rep.worst_predicted <= TOL


def test_at_most_a_third_fitted_and_fits_hit_their_points(rep):
    fitted = [r for r in rep.rows if r.role == "fitted"]
    assert 3 * len(fitted) <= len(rep.rows)
    assert len(fitted) == len(afa.FITTED)
    for r in fitted:
        assert abs(r.rel_error) < 1e-3, r.quantity
    # the named points of FITTED are exactly the fitted rows
    assert {r.quantity for r in fitted} == set(afa.FITTED.values())


def test_calibrated_defaults_are_the_fit(rep):
    # Params() carries the fitted values (rounded to 5 digits)
    for name, value in rep.fitted.items():
        assert getattr(afa.Params(), name) == pytest.approx(value, rel=1e-3)
        assert source_of(afa.Params(), name)["kind"] == "calibrated"


def test_energy_equals_power_times_time_by_hand():
    """E = P x T for one device, by hand: NVMe writes 1 GiB with 1,000
    fsyncs at 2.4 GHz and 1 MiB write calls."""
    p = afa.Params()
    F, k, calls = GiB, 1000, GiB / 2 ** 20
    t = (F * (p.fs_write_fixed + p.fs_write_cpu)      # XFS path per byte (CPU at ref clock)
         + calls * p.syscall                          # 1,024 write() calls
         + k * p.nvme_flush                           # 1,000 flushes of 20 us
         + F / p.nvme_write_bw)                       # 1 GiB at 900 MB/s
    assert afa.write_time(p, "nvme", F, fsyncs=k) == pytest.approx(t, rel=1e-12)
    j = afa.job(p, "nvme", "write", F, fsyncs=k)
    # the network's station is busy the whole run; energy per run = 12 W x t
    assert j.time == pytest.approx(t, rel=1e-12)
    assert j.energy == pytest.approx(12.0 * t, rel=1e-9)
    assert j.energy_per_byte == pytest.approx(12.0 * t / F, rel=1e-9)
    # reads use the read power: 9 W
    jr = afa.job(p, "nvme", "read", F)
    assert jr.energy == pytest.approx(9.0 * jr.time, rel=1e-9)


def test_hdd_fsync_is_a_half_revolution():
    """Each fsync on the HDD costs 30/rpm = 4.1667 ms (no seek): the time
    for 100,000 fsyncs minus that for 1,000 is 99,000 x 4.1667 ms."""
    p = afa.Params()
    d = afa.write_time(p, "hdd", GiB, fsyncs=100_000) - afa.write_time(p, "hdd", GiB, fsyncs=1000)
    assert d == pytest.approx(99_000 * 30 / 7200, rel=1e-9)


def test_clock_scales_only_the_cpu_share():
    p = afa.Params()
    F = 4 * GiB
    d = afa.write_time(p, "nvdimm", F, clock=1.6e9) - afa.write_time(p, "nvdimm", F)
    calls = F / p.default_buffer
    cpu_at_ref = F * p.fs_write_cpu + calls * p.syscall
    assert d == pytest.approx(cpu_at_ref * (2.4 / 1.6 - 1), rel=1e-9)


def test_read_energy_ratio_is_forced_by_table1():
    """Whatever the times, E_HDD / E_NVDIMM = (6.8 / 2) x T_HDD / T_NVDIMM:
    with the paper's 6.9x time ratio that is 23.46x, not 7.18x."""
    rep = afa.report()
    row = next(r for r in rep.rows if r.quantity == "HDD/NVDIMM read energy, 4 GB file")
    assert row.model == pytest.approx(6.8 / 2.0 * 6.9, rel=1e-3)
    assert row.miss


def test_max_fsync_gap_bound_from_paper_numbers(rep):
    # with 13x HDD growth, flat NVDIMM and 26x at 1,000 fsyncs the paper's
    # own figures cap the gap at 13 x 26 = 338 < 800: the model stays below
    row = next(r for r in rep.rows if r.quantity.startswith("max HDD/NVDIMM energy"))
    assert row.model < 13 * 26
    assert row.miss


def test_sweeps_shapes(rep):
    sw = rep.extra["sweeps"]
    hdd, nvd = sw["fsync"]["hdd"]["time"], sw["fsync"]["nvdimm"]["time"]
    assert all(b > a for a, b in zip(hdd, hdd[1:]))           # HDD grows with fsyncs
    assert max(nvd) / min(nvd) < 1.01                          # NVDIMM flat
    for d in afa.DEVICES:                                      # smaller buffers cost more
        t = sw["buffer"][d]["time"]
        assert all(b <= a for a, b in zip(t, t[1:]))
    # energy order of the buffer sweep, NVDIMM < SSD < NVMe < HDD (paper sec. 4.1.4),
    # holds at 1 KB; at 1 MB the model's HDD is only 1.2x slower than NVMe (the
    # missed rows), so NVMe's 12 W puts it above the HDD there (a report note)
    e = {d: sw["buffer"][d]["energy"][0] for d in afa.DEVICES}
    assert e["nvdimm"] < e["ssd"] < e["nvme"] < e["hdd"]
    e1 = {d: sw["buffer"][d]["energy"][-1] for d in afa.DEVICES}
    assert e1["nvme"] > e1["hdd"]
    assert any("1 MB" in n and "NVMe" in n for n in rep.notes)


def test_fit_false_uses_the_given_parameters():
    p = dataclasses.replace(afa.Params(), hdd_call=1e-4)
    r = afa.report(p, fit=False)
    assert r.fitted == {}
    assert r.params.hdd_call == 1e-4


def test_overrides_through_the_case_registry():
    from qmodels import cases

    r = cases.report("afa", ["hdd_rpm=5400"])
    assert r.params.hdd_rpm == 5400.0
    # a slower spindle makes every fsync cost more
    row = next(x for x in r.rows if x.quantity.startswith("HDD write time, 100,000"))
    base = next(x for x in afa.report().rows if x.quantity.startswith("HDD write time, 100,000"))
    assert row.model > base.model


def test_errors_name_the_bad_value():
    p = afa.Params()
    with pytest.raises(UnknownNameError, match="unknown device 'tape'"):
        afa.write_time(p, "tape", GiB)
    with pytest.raises(InvalidValueError, match="buffer 0"):
        afa.write_time(p, "ssd", GiB, buffer=0)
    with pytest.raises(InvalidValueError, match="op must be 'read' or 'write'"):
        afa.job(p, "ssd", "erase", GiB)
    with pytest.raises(InvalidValueError, match="hdd_rpm must be a non-negative number"):
        afa.Params(hdd_rpm=-1.0)


def test_simulation_confirms_the_run_time():
    """sim=True: the one-customer network simulated; its cycle time is the
    service time (exponential, 5 replications: within 10 %)."""
    r = afa.report(sim=True, seed=3)
    s = r.extra["simulation"]
    assert s["simulated_cycle_time"] == pytest.approx(s["analytic_time"], rel=0.10)


def test_energy_uses_qmodels_energy():
    p = afa.Params()
    j = afa.job(p, "ssd", "write", GiB)
    e = qm.energy(qm.mva(j.network), period=j.time, bytes_per_transaction=GiB,
                  read_fraction={"ssd": 0.0})
    assert e.total_energy == pytest.approx(3.7 * j.time, rel=1e-9)


def test_report_energy_rows_match_the_network_solution(rep):
    """The table's energy ratios (fast path P x T) equal those of the solved
    one-station networks through qm.energy."""
    p = rep.params
    F = 4 * GiB
    e_nvme = afa.job(p, "nvme", "write", F).energy
    e_nvd = afa.job(p, "nvdimm", "write", F).energy
    row = next(r for r in rep.rows if r.quantity == "NVMe/NVDIMM write energy, 4 GB file")
    assert row.model == pytest.approx(e_nvme / e_nvd, rel=1e-9)
    e_h = afa.job(p, "hdd", "write", GiB, fsyncs=1000).energy
    e_s = afa.job(p, "ssd", "write", GiB, fsyncs=1000).energy
    row = next(r for r in rep.rows if r.quantity == "HDD/SSD write energy, 1,000 fsyncs")
    assert row.model == pytest.approx(e_h / e_s, rel=1e-9)
