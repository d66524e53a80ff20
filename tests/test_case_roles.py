"""Honest roles in the five case studies' paper-vs-model tables, stale fits
under ``--set``, and ``--sim`` (analytic beside simulated figures).

Reference values: the role of each row is decided by hand in the case
modules (the reason sits next to each row) and pinned here as counts; the
three known leaks are checked by the identity that makes them derived,
written out in the test (Lazowska et al., *Quantitative System
Performance*, 1984, sec. 5.2: X <= min(N_c / D_c, 1 / D_max); the
pipelined bandwidth m / max(t0, m / r) at m below both crossovers is
m / t0; a ratio of two runs of one configuration is that configuration's
ratio).  Analytic-vs-simulated agreement uses the simulator's 95 %
half-width plus the analytic method's error as stated in its own source
(:mod:`qmodels.analytic.decomposition`: throughput within 2.5 % of the
exact CTMC), not a tolerance tuned to pass.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from qmodels.cases import CASES, afa, kosmos, report, spax
from qmodels.cases._base import BLAMES, IDENTITIES, NO_NETWORK, ROLES, CaseReport, Row, mark_stale
from qmodels.cli import main
from qmodels.errors import InvalidValueError

#: role counts per case, as decided row by row in the case modules
COUNTS = {
    "spax": {"fitted": 4, "predicted": 11, "derived": 0, "misses": 0},
    "kosmos": {"fitted": 17, "predicted": 36, "derived": 3, "misses": 6},
    "afa": {"fitted": 4, "predicted": 27, "derived": 2, "misses": 14},
    "nic": {"fitted": 0, "predicted": 17, "derived": 1, "misses": 1},
    "manycore": {"fitted": 0, "predicted": 12, "derived": 8, "misses": 7},
}

#: the decomposition's stated throughput error against the exact CTMC (module
#: docstring of qmodels.analytic.decomposition)
DECOMPOSITION_STATED_ERROR = 0.025


class _Reports(dict):
    """Each case's default report, made when a test first asks for it."""

    def __missing__(self, name):
        self[name] = report(name)
        return self[name]


@pytest.fixture(scope="module")
def reports():
    return _Reports()


@pytest.fixture(scope="module")
def spax_sim():
    return report("spax", sim=True, seed=1)


def _row(rep, start):
    rows = [r for r in rep.rows if r.quantity.startswith(start)]
    assert len(rows) == 1, (start, [r.quantity for r in rows])
    return rows[0]


# ---------------------------------------------------------------------------
# roles
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(COUNTS))
def test_role_counts_and_summary_line(reports, name):
    rep = reports[name]
    c = rep.counts
    assert {k: c[k] for k in COUNTS[name]} == COUNTS[name]
    assert c["stale"] == 0
    assert sum(c[r] for r in ROLES) == len(rep.rows)
    want = COUNTS[name]
    line = (f"{len(rep.rows)} rows: {want['fitted']} fitted, {want['predicted']} predicted, "
            f"{want['derived']} derived; {want['misses']} misses")
    assert sum(c[f"misses_{b}"] for b in BLAMES) == c["misses"]
    assert "summary: " + line in rep.table()
    assert rep.to_dict()["summary"]["derived"] == want["derived"]


@pytest.mark.parametrize("name", list(COUNTS))
def test_fitted_rows_are_at_most_a_third(reports, name):
    # Every case meets the bar as it stands; none needed an exception.
    rep = reports[name]
    assert 3 * rep.counts["fitted"] <= len(rep.rows)


@pytest.mark.parametrize("name", list(COUNTS))
def test_every_derived_row_names_its_identity(reports, name):
    for r in reports[name].derived:
        assert r.note and r.identity in IDENTITIES, r.quantity


@pytest.mark.parametrize("name", list(COUNTS))
def test_every_miss_is_blamed_and_paper_blames_quote_two_places(reports, name):
    rep = reports[name]
    names = {f.name for f in dataclasses.fields(rep.params)}
    for r in rep.rows:
        if r.miss:
            assert r.blame in BLAMES, r.quantity
            if r.blame == "paper":
                assert len(r.quotes) >= 2 and all("sec." in q or "abstract" in q
                                                  or "Table" in q for q in r.quotes)
            if r.blame == "assumption":
                assert r.rests_on and set(r.rests_on) <= names
            line = r.miss_line()
            assert BLAMES[r.blame] in line
        else:
            assert not r.blame and not r.quotes


@pytest.mark.parametrize("name", list(COUNTS))
def test_no_predicted_row_repeats_a_fitted_value(reports, name):
    # A predicted row with a fitted row's very value is almost surely the same run
    # (the AFA 'large files' leak): such a row must be derived, unless its note says
    # which model argument makes the two equal (KOSMOS_ETH at 128 B: both host-bound,
    # a hypothesis, so predicted by the rule)
    rep = reports[name]
    fitted = [r.model for r in rep.rows if r.role == "fitted"]
    for r in rep.predicted:
        if "in the model" in r.note:
            continue
        assert all(abs(r.model - f) > 1e-12 * abs(f) for f in fitted), r.quantity


# ---------------------------------------------------------------------------
# the rule, checked on a sample of derived rows by recomputing their identity
# ---------------------------------------------------------------------------

def test_derived_rows_recomputed_from_their_identity(reports):
    # manycore: Rpeak = cores x FLOPs/cycle x clock (paper eq. 1-2); IOR's FileSize =
    # BlockSize x NumTasks x SegmentCount; a peak = channels x rate x width
    mc = reports["manycore"]
    p = mc.params
    assert _row(mc, "KNL Rpeak").model == pytest.approx(68 * 32 * 1.4, rel=1e-12)
    assert _row(mc, "SKL Rpeak").model == pytest.approx(40 * 32 * 2.4, rel=1e-12)
    assert _row(mc, "KNL IOR largest file").model == pytest.approx(
        max(p.block_sizes) * p.knl_tasks * p.segments / 2 ** 30, rel=1e-12)
    assert _row(mc, "KNL DDR4 peak bandwidth").model == pytest.approx(6 * 2.4 * 8, rel=1e-12)
    # nic: BDP = rate x RTT
    nic = reports["nic"]
    assert _row(nic, "bandwidth-delay product").model == pytest.approx(
        1e9 / 8 * 0.228 / 1e6, rel=1e-12)
    # afa: E = P x T of the fitted read row's run: Table 1's 6.8 W / 2 W x the fitted 6.9
    a = reports["afa"]
    assert _row(a, "HDD/NVDIMM read energy").model == pytest.approx(
        6.8 / 2 * _row(a, afa.FITTED["fs_read"]).model, rel=1e-9)
    # kosmos: the conclusion's excess is the ratio of the two fitted 1-to-6 rows
    k = reports["kosmos"]
    row = _row(k, "MicroBlade longer than KOSMOS at 1-to-6, In-Memory")
    assert row.role == "derived"
    assert row.model == pytest.approx(100 * (_row(k, "In-Memory Analytics MicroBlade 1-to-6").model
                                             / _row(k, "In-Memory Analytics KOSMOS 1-to-6").model
                                             - 1), rel=1e-12)
    # the rule's hypotheses are predicted, however simple: a bottleneck, a saturation,
    # a capacity
    for case_name, start in (("manycore", "KNL HPL Rmax"), ("manycore", "KNL MCDRAM STREAM"),
                             ("manycore", "SKL cache cliff"), ("nic", "UDP PCI-X MTU 1500"),
                             ("spax", "TPS at p_io = 30 %"),
                             ("kosmos", "bandwidth KOSMOS_SRIO/Moonshot at 4096 B")):
        assert _row(reports[case_name], start).role == "predicted", (case_name, start)


def test_a_derived_row_without_a_note_is_refused():
    with pytest.raises(InvalidValueError, match="derived"):
        Row("x", 1.0, 1.0, "derived")
    with pytest.raises(InvalidValueError, match="stale"):
        Row("x", 1.0, 1.0, "predicted", stale="no")


# ---------------------------------------------------------------------------
# the three known leaks: derived, and shown to follow the fitted rows
# ---------------------------------------------------------------------------

def test_spax_tps_at_30_percent_is_the_smaller_of_two_fitted_ceilings(reports):
    # a bottleneck argument, which a measurement could refute: predicted, not derived
    rep = reports["spax"]
    row = _row(rep, "TPS at p_io = 30 %")
    assert row.role == "predicted"
    p = rep.params
    # the two ceilings at m = 0, unlimited disks: the 16 PN CPUs' N_c / D_c and the
    # packet path's 1 / D_max, which scales as 1 / p_io from the fitted 148.6 at 40 %
    cpu = p.pns * p.cpus_per_pn / p.cpu_seconds
    path = spax.PAPER["tps_pio40"] * 0.40 / 0.30
    assert row.model == pytest.approx(min(cpu, path), rel=5e-3)
    # move the fitted path (a 10 % slower packet path): the row follows the fitted
    # 40 % row's own value, scaled by 0.4 / 0.3, not a separate mechanism
    q = dataclasses.replace(p, path_slowdown=1.1 * p.path_slowdown)
    t40 = spax.tps(dataclasses.replace(q, p_io=0.40, miss_rate=0.0, disks_per_ion=0))
    t30 = spax.tps(dataclasses.replace(q, p_io=0.30, miss_rate=0.0, disks_per_ion=0))
    assert t30 == pytest.approx(min(cpu, t40 * 0.40 / 0.30), rel=5e-3)


def test_kosmos_eth_at_128_bytes_is_the_fitted_srio_row():
    # both host-bound at 128 B: the model gives the fitted SRIO row's value, but that the
    # hosts bind is a hypothesis, so the row is predicted (the rule), its note says why
    p = kosmos.Params()
    rep = kosmos.report(p, refit=False)
    eth = _row(rep, "bandwidth KOSMOS_ETH/MicroBlade at 128 B")
    srio = _row(rep, "bandwidth KOSMOS_SRIO/MicroBlade at 128 B")
    assert (eth.role, srio.role) == ("predicted", "fitted")
    assert "host-bound" in eth.note
    # both KOSMOS paths are host-bound at 128 B: B = m / t0, the ratio t0_MB / t0_KOSMOS
    assert eth.model == pytest.approx(p.microblade_host_overhead / p.kosmos_host_overhead,
                                      rel=1e-12)
    # a different fitted host cost moves both rows together
    q = dataclasses.replace(p, kosmos_host_overhead=1.3 * p.kosmos_host_overhead)
    r2 = kosmos.report(q, refit=False)
    assert _row(r2, "bandwidth KOSMOS_ETH/MicroBlade at 128 B").model == pytest.approx(
        _row(r2, "bandwidth KOSMOS_SRIO/MicroBlade at 128 B").model, rel=1e-12)
    assert _row(r2, "bandwidth KOSMOS_ETH/MicroBlade at 128 B").model != pytest.approx(
        eth.model, rel=1e-3)


def test_afa_large_files_is_the_fitted_rows_run():
    p = afa.Params()
    rep = afa.report(p, fit=False)
    large = _row(rep, "HDD/NVDIMM write time, large files")
    fitted = _row(rep, afa.FITTED["fs_write_fixed"])
    assert (large.role, fitted.role) == ("derived", "fitted")
    assert large.model == pytest.approx(fitted.model, rel=1e-12)
    assert large.identity == "same run"
    q = dataclasses.replace(p, fs_write_fixed=2 * p.fs_write_fixed)
    r2 = afa.report(q, fit=False)
    assert _row(r2, "HDD/NVDIMM write time, large files").model == pytest.approx(
        _row(r2, afa.FITTED["fs_write_fixed"]).model, rel=1e-12)
    # and the HDD clock row is the two fitted rows' ratio times the NVDIMM clock row:
    # HDD(1.6)/HDD(2.4) = [r(1.6) NV(1.6)] / [r(2.4) NV(2.4)] with r = HDD/NVDIMM
    hdd = _row(rep, "HDD write time 1.6 GHz")
    nv = _row(rep, "NVDIMM write time 1.6 GHz")
    r16 = _row(rep, afa.FITTED["fs_write_cpu"]).model
    # the model's shared clock-scaled path makes them follow the fitted rows, but that path
    # is a hypothesis a measurement can refute: predicted (the rule)
    assert hdd.role == "predicted" and nv.role == "predicted"
    assert hdd.model == pytest.approx(r16 / fitted.model * nv.model, rel=1e-12)
    # and the NVDIMM clock row is itself the two fitted rows' (R(2.4) - 1) / (R(1.6) - 1)
    # (T = n (P(f) + D_device), the path shared: tests/test_case_afa.py derives it)
    assert nv.model == pytest.approx((fitted.model - 1) / (r16 - 1), rel=1e-9)
    assert hdd.model == pytest.approx(r16 / fitted.model * (fitted.model - 1) / (r16 - 1),
                                      rel=1e-9)


def test_assumed_conditions_are_stated(reports):
    assert _row(reports["spax"], "TPS, PN = 4, 3 IONs").rests_on == ("sec44_load",)
    assert "does not state its load" in _row(reports["spax"], "TPS, PN = 4, 3 IONs").note
    assert "sec. 4.5" in _row(reports["spax"],
                              "disks per ION where TPS reaches 95% of unlimited, p_io 20%").note
    assert "thread count" in _row(reports["manycore"], "SKL STREAM peak").note
    assert "condition assumed:" in reports["spax"].table()


# ---------------------------------------------------------------------------
# --set: stale fits and the bottleneck row
# ---------------------------------------------------------------------------

def test_set_xnif_slots_16_marks_the_moved_fit_stale_and_keeps_the_bottleneck_row():
    rep = report("spax", ["xnif_slots=16"])
    stale = [r.quantity for r in rep.rows if r.stale]
    # only the path-bound fit moves: 16 slots lift the path ceiling at p_io 40 %; the
    # CPU-bound (3 IONs) and disk-bound (1 ION, 2 disks, m 90 %) fits do not depend on it
    assert stale == ["TPS at p_io = 40 %, m = 0, unlimited disks (sec. 4.3)"]
    assert "fitted (stale)" in rep.table()
    assert "1 fitted row(s) stale" in rep.summary()
    # the row compares the paper's 4 slots with 16, whatever the override
    row = _row(rep, "bottleneck moves from the XNIF buffer")
    assert (row.paper, row.model) == (1.0, 1.0)
    assert "4 buffers: xnif" in row.note
    line = [x for x in rep.table().splitlines() if x.startswith("bottleneck moves")][0]
    assert "-100" not in line and "agrees" in line


def test_a_refitting_case_keeps_its_fits_under_set():
    rep = report("afa", ["hdd_rpm=5400"])
    assert rep.counts["stale"] == 0
    assert rep.counts["fitted"] == COUNTS["afa"]["fitted"]


def test_mark_stale_uses_the_defaults_error_as_the_baseline():
    # a least-squares fit 14 % off at the defaults (as KOSMOS's Graph rows) is not
    # stale at 14.2 %, but is at 20 %: the bar is the defaults' error + 0.5 %
    rest = (Row("p", 1.0, 1.0), Row("q", 1.0, 2.0), Row("r", 1.0, 3.0))
    base = CaseReport("t", "t", (Row("f", 10.0, 8.6, "fitted"), *rest), None)
    near = dataclasses.replace(base, rows=(Row("f", 10.0, 8.58, "fitted"), *rest))
    assert not mark_stale(near, base).rows[0].stale
    worse = dataclasses.replace(base, rows=(Row("f", 10.0, 8.0, "fitted"), *rest))
    got = mark_stale(worse, base, "--set x=1")
    assert "--set x=1" in got.rows[0].stale and got.counts["stale"] == 1


# ---------------------------------------------------------------------------
# --sim
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["kosmos", "afa", "manycore", "nic"])
def test_sim_output_differs_and_shows_simulated_figures(reports, name):
    plain = reports[name].table()
    sim = report(name, sim=True, seed=1)
    text = sim.table()
    assert text != plain
    assert "analytic vs simulated" in text
    head = [x for x in text.splitlines() if x.startswith("configuration")][0]
    assert "analytic" in head and "simulated" in head
    assert sim.validation
    for v in sim.validation:
        tol = v["tolerance"]
        assert abs(v["analytic"] - v["sim"]["mean"]) <= (
            v["sim"]["half_width"] + tol * abs(v["analytic"])) + 1e-12, v


def test_spax_sim_table_has_the_simulated_column(reports, spax_sim):
    text = spax_sim.table()
    assert text != reports["spax"].table()
    head = [x for x in text.splitlines() if x.startswith("configuration")][0]
    assert "analytic" in head and "simulated" in head
    # and in the paper-vs-model table itself, beside every TPS row's analytic figure
    assert "simulated (95 %)" in text.splitlines()[2]
    tps_rows = [r for r in spax_sim.rows if r.unit == "1/s"]
    assert len(tps_rows) == 4 and all(r.sim for r in tps_rows)
    for r in tps_rows:
        mean, hw = r.sim
        assert abs(r.model - mean) <= hw + DECOMPOSITION_STATED_ERROR * r.model, r.quantity


def test_spax_json_validation_list(spax_sim):
    d = json.loads(json.dumps(spax_sim.to_dict()))
    val = d["validation"]
    configs = {v["configuration"] for v in val}
    assert len(configs) >= 3
    for v in val:
        assert set(v) >= {"configuration", "quantity", "analytic", "sim"}
        assert set(v["sim"]) >= {"mean", "half_width"}
        err = abs(v["analytic"] - v["sim"]["mean"])
        assert err <= v["sim"]["half_width"] + DECOMPOSITION_STATED_ERROR * abs(v["analytic"]), v
    # the configurations load the elements the paper discusses, each near saturation
    loads = {v["quantity"].split()[1].rstrip("0123456789_"): v["sim"]["mean"]
             for v in val if v["quantity"].startswith("U ")}
    assert {"cpu", "xnif", "swport", "disk"} <= set(loads)
    assert all(u > 0.9 for u in loads.values())


def test_cli_sim_json_carries_the_validation_list(capsys):
    # nic, the last case without a network, now has one: --sim --json carries its list
    assert main(["case", "nic", "--sim", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["sim_status"] != NO_NETWORK
    assert len({v["configuration"] for v in d["validation"]}) >= 3
    assert all(set(v["sim"]) >= {"mean", "half_width"} for v in d["validation"])


def test_case_modules_are_the_ones_counted():
    assert set(COUNTS) == set(CASES)


# ---------------------------------------------------------------------------
# --hold-fit, refits at a bound, --assumptions (issue 29 items 2-3)
# ---------------------------------------------------------------------------

def test_hold_fit_lets_a_hardware_what_if_reach_the_cloudsuite_rows(reports):
    # twice the SRIO lanes: refitted, the CloudSuite constants absorb the faster link and
    # the fitted KOSMOS rows stay on the paper; held, KOSMOS's communication halves
    # (g_KOSMOS = B_default / B_new = 1/2) and every KOSMOS run gets shorter
    base = reports["kosmos"]
    held = report("kosmos", ["srio_lanes=4"], hold_fit=True)
    assert held.fitted == {} and set(held.held) >= {"memory_comm", "data_comm"}
    assert kosmos.comm_factor("KOSMOS", held.params) == pytest.approx(0.5, rel=0.02)
    for n in kosmos.SLAVES:
        q = f"In-Memory Analytics KOSMOS 1-to-{n}"
        assert _row(held, q).model < _row(base, q).model, q
    assert "held at the default fit" in held.table()
    # the MicroBlade and Moonshot rows do not move: their hardware was not set (up to the
    # default report's own refit, which lands within 1e-5 of the stored fit)
    q = "In-Memory Analytics MicroBlade 1-to-6"
    assert _row(held, q).model == pytest.approx(_row(base, q).model, rel=1e-4)


def test_a_refit_that_ends_at_a_bound_says_so():
    # AFA with 4 KiB calls: the fit of the shared path's fixed cost runs into its bound
    rep = report("afa", ["default_buffer=4096"])
    assert rep.at_bound
    text = rep.table()
    assert "refit at a bound" in text and "refitted, still misses" in text
    for name in rep.at_bound:
        assert name in afa.FITTED


def test_assumptions_show_the_rows_they_move(capsys):
    from qmodels.cases import assumption_reach

    (a,) = assumption_reach("nic", only=("ack_ratio",))
    assert a["plausible"] == (1.0, 2.0)
    tcp = [q for q in a["rows"] if q.startswith("best TCP")]
    assert len(tcp) == 5                      # every best-TCP row rests on the ACK ratio
    for q in tcp:
        assert a["rows"][q][2.0] < 0.95 * a["rows"][q][1.0]
    assert main(["case", "nic", "--assumptions", "run_seconds"]) == 0
    out = capsys.readouterr().out
    assert "run_seconds = 10.0" in out and "best TCP" in out
    with pytest.raises(Exception, match="no assumption with plausible values named"):
        assumption_reach("nic", only=("line_bps",))
