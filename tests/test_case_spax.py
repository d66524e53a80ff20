"""The SPAX case study (qmodels.cases.spax) and the toolkit pieces it needs:
pools held along a path by classes given by visits, nested/overlapping pools
in the decomposition, and held resources in the bottleneck.

Reference values come from the paper (Kim, Shin & Lee: the numbers are
quoted in qmodels/cases/spax.py's PAPER), from the exact CTMC
(qmodels.analytic.ctmc) and from the simulator; no expected output is hard-coded.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest

import qmodels as qm
from qmodels.analytic.ctmc import ctmc
from qmodels.cases import spax
from qmodels.errors import InvalidValueError, UnsupportedModelError
from qmodels.model import Closed, Delay, Network, Queue, TokenPool, pool_chains


@pytest.fixture(scope="module")
def rep():
    return spax.report()


# ---------------------------------------------------------------------------
# the paper-vs-model table
# ---------------------------------------------------------------------------

def test_predicted_rows_within_tolerance(rep):
    # Bar: 20 %.  The paper's figures come from one CSIM run per point with
    # 100 transactions per terminal (a few % of sampling noise on TPS), and
    # the model's hardware ratios are assumptions; a row outside 20 % must
    # carry a ``miss`` sentence saying why no such model can reproduce it.
    for r in rep.predicted:
        if r.miss:
            continue
        assert abs(r.rel_error) <= 0.20, (r.quantity, r.paper, r.model)
    # the one absolute TPS prediction is much closer: both 204.1 (30 %) and
    # the fitted 148.6 (40 %) lie near the I/O path's saturation, which the
    # calibration pins down
    (t30,) = [r for r in rep.rows if r.quantity.startswith("TPS at p_io = 30 %")]
    assert abs(t30.rel_error) <= 0.05


def test_fitted_rows_reproduced_and_at_most_a_third(rep):
    fitted = [r for r in rep.rows if r.role == "fitted"]
    assert 3 * len(fitted) <= len(rep.rows)
    # the stored calibrated defaults reproduce their points
    for r in fitted:
        assert abs(r.rel_error) < 1e-4, r.quantity
    assert set(rep.fitted) == {"cpu_seconds", "disk_slowdown", "path_slowdown"}
    assert rep.held == {}


def test_one_disk_for_both_sections_and_the_sec44_load_it_rests_on(rep):
    # The knees 4/8/16 fix the one disk (knee_fit); at the sec. 4.4 load read as sec.
    # 4.5's Normal-bound load with 4 disks per ION that disk gives the 1-ION TPS as a
    # prediction (paper 107.417), the 3-ION one being the CPU-bound fit.  No miss.
    assert not any(r.miss for r in rep.rows)
    (t1,) = [r for r in rep.rows if r.quantity == "TPS, PN = 4, 1 ION (sec. 4.4)"]
    assert t1.role == "predicted" and abs(t1.rel_error) < 0.10
    assert t1.rests_on == ("sec44_load",)
    # read as sec. 4.1's base load (p_io 30 %, m 90 %, 2 disks) the same disk bounds
    # the 1-ION TPS by the disks' asymptote 2 / (0.3 x 0.9 x t_disk) (Lazowska et al.
    # 1984, sec. 5.2), far below 107.417: the miss then names the assumption
    p = spax.Params()
    t_disk = spax.path_elements(p)["disk"].media_time * p.disk_slowdown
    bound = 2 / (0.3 * 0.9 * t_disk)
    assert bound < 0.5 * 107.417
    base = dataclasses.replace(p, sec44_load="base")
    x = spax.tps(spax.sec44_setting(base, ions=1))
    assert x <= bound * (1 + 1e-9)
    r = spax.report(base)
    (m,) = [row for row in r.rows if row.miss]
    assert m.quantity == t1.quantity and m.blame == "assumption"
    assert m.rests_on == ("sec44_load",) and "sec44_load" in m.miss
    with pytest.raises(InvalidValueError, match="sec44_load must be one of"):
        spax.Params(sec44_load="heavy")


def test_report_extra_and_json(rep):
    b = rep.extra["bottleneck"]
    assert b["default"]["analytic"] == "xnif"
    assert b["default"]["sim"] is None and b["buffers_16"]["sim"] is None
    d = rep.to_dict()
    import json

    json.dumps(d)
    assert d["bottleneck"]["buffers_16"]["analytic"] in ("swport", "port", "dma")
    assert "figures" not in d          # defaults: no figures without sim
    for f in ("cpu_seconds", "p_io", "xnif_slots", "mix_new_order"):
        assert d["parameters"][f]["kind"] in ("paper", "tpcc", "calibrated")


def test_figures_when_a_parameter_differs():
    r = spax.report(spax.Params(xnif_slots=8))
    fig = r.extra["figures"]["analytic"]
    assert fig["TPS"] > 0 and fig["U"]["xnif"] <= 1 and "swport" in fig["Q"]
    for s in ("dma", "port", "link", "cpu", "pci1"):
        assert s in fig["U"] and s in fig["Q"]
    assert r.extra["figures"]["sim"] is None


def test_params_validation_and_provenance():
    with pytest.raises(InvalidValueError, match="xnif_slots must be an integer >= 1, got 0"):
        spax.Params(xnif_slots=0)
    with pytest.raises(InvalidValueError, match="p_io must be in"):
        spax.Params(p_io=1.5)
    with pytest.raises(InvalidValueError, match="not a whole number of 64-byte packets"):
        spax.Params(block_bytes=100)
    for f in dataclasses.fields(spax.Params):
        assert f.metadata["source"] and f.metadata["kind"]


def test_remote_messages_from_the_tpcc_mix():
    # 0.45 (1 - 0.99^10) + 0.43 x 0.15, by hand: 0.45 x 0.095618 + 0.0645
    p = spax.Params()
    assert spax.remote_per_transaction(p) == pytest.approx(0.45 * 0.0956179 + 0.0645, rel=1e-6)


# ---------------------------------------------------------------------------
# the buffer finding, analytically and in simulation
# ---------------------------------------------------------------------------

def test_bottleneck_buffer_then_port_analytic():
    p = spax.Params()
    a4 = spax.solve(p)
    a16 = spax.solve(dataclasses.replace(p, xnif_slots=16))
    assert a4.bottleneck == ("xnif",)
    assert a4.pool_utilization["xnif"] > 0.98            # held nearly all the time
    assert a16.bottleneck[0] in ("swport", "port", "dma")
    # TPS almost flat from 2 to 16 slots: stated tolerance 10 % (the paper:
    # "almost unchanged"; a 4-packet buffer already keeps the port busy)
    t = [spax.tps(dataclasses.replace(p, xnif_slots=b)) for b in (2, 4, 8, 16)]
    assert max(t) / min(t) - 1 < 0.10
    # buffer queue shrinks, the switch port's grows
    q2 = spax.solve(dataclasses.replace(p, xnif_slots=2))
    assert a16.info["pools"]["xnif"]["waiting"] < q2.info["pools"]["xnif"]["waiting"]
    assert (a16.Q["port"] + a16.info["pools"]["swport"]["waiting"]
            > q2.Q["port"] + q2.info["pools"]["swport"]["waiting"])


def test_bottleneck_buffer_then_port_simulated():
    p = spax.Params()
    s4 = spax.simulate(p, seed=3, horizon=60, replications=4)
    s16 = spax.simulate(dataclasses.replace(p, xnif_slots=16), seed=4, horizon=60,
                        replications=4)
    assert s4.bottleneck == ("xnif",)
    assert s16.bottleneck[0] in ("swport", "port", "dma")
    assert "pools" in s4.to_dict() and "xnif" in s4.to_frame().index


@pytest.mark.parametrize("kw", [{}, {"p_io": 0.40}, {"xnif_slots": 16}])
def test_analytic_vs_simulated_tps(kw):
    # Stated error: the decomposition (CTMC inside the I/O group, FES
    # outside) within 2 % of the simulator's mean plus its 95 % half-width
    # (measured: |diff| <= 0.6 % at these points).
    q = dataclasses.replace(spax.Params(), **kw)
    a = spax.tps(q)
    s = spax.simulate(q, seed=11, horizon=100, replications=4).X["tx"]
    assert abs(a - s.mean) <= 0.02 * s.mean + s.half_width


def test_switch_point_in_p_io_matches_hand_crossing():
    # Demand level: CPU D/c = D_cpu / 16 with D_cpu = cpu_seconds + r
    # (remote_cpu_seconds + 4 msg_cpu_seconds) (r from the TPC-C mix, by
    # hand as in test_remote_messages_from_the_tpcc_mix); switch-port place
    # holds a packet for port + link, p k (S_port + S_link) per transaction.
    # The crossing p* = (D_cpu / 16) / (k (S_port + S_link)), by hand.
    p = spax.Params()
    e = spax.path_elements(p)
    r = 0.45 * (1 - 0.99 ** 10) + 0.43 * 0.15
    d_cpu = p.cpu_seconds + r * (p.remote_cpu_seconds + 4 * p.msg_cpu_seconds)
    hold = (e["port"].service_time + e["link"].service_time) * p.path_slowdown
    p_star = (d_cpu / 16) / (p.packets_per_io * hold)
    sw = spax.switch_points(p, buffers=(1, 4, 8))
    (pt,) = sw["p_io"]
    assert pt["before"] == ["cpu"] and pt["after"] == ["swport"]
    assert pt["value"] == pytest.approx(p_star, rel=1e-9)
    # and it explains the paper's drop between 30 % and 40 %
    assert 0.25 < pt["value"] < 0.40
    assert sw["buffers"] == 8 or sw["buffers"] is None or sw["buffers"] > 4


def test_demo_report_without_sim(tmp_path, capsys):
    path = spax.demo_report(str(tmp_path), sim=False)
    text = open(path).read()
    assert "| quantity |" in text and "204.1" in text and "## Bottleneck" in text
    for f in ("tps_vs_pio.png", "buffers.png", "disks.png"):
        assert os.path.getsize(tmp_path / f) > 1000
    assert "paper vs model" in capsys.readouterr().out


@pytest.mark.slow
def test_demo_report_with_sim(tmp_path):
    path = spax.demo_report(str(tmp_path), sim=True)
    text = open(path).read()
    assert "## Analytic vs simulated" in text
    assert os.path.getsize(tmp_path / "analytic_vs_sim.png") > 1000


@pytest.mark.slow
def test_calibration_reproduces_the_stored_defaults():
    v = spax.calibrate()
    p = spax.Params()
    for k, x in v.items():
        assert x == pytest.approx(getattr(p, k), rel=2e-3), k


@pytest.mark.slow
def test_report_with_sim_agrees():
    r = spax.report(sim=True, seed=5)
    b = r.extra["bottleneck"]
    assert b["default"]["sim"] == "xnif"
    assert b["buffers_16"]["sim"] in ("swport", "port", "dma")
    t = r.extra["tps"]
    assert abs(t["analytic"] - t["sim"]["mean"]) <= 0.02 * t["sim"]["mean"] + \
        t["sim"]["half_width"]
    assert "half_width" in r.extra["figures"]["sim"]["U"]["xnif"]
    # the proven bounds (pools as stations) hold the analytic TPS and meet
    # the simulator's interval
    lo, hi = r.extra["bounds"]["throughput"]
    assert lo <= t["analytic"] <= hi
    assert t["sim"]["mean"] - t["sim"]["half_width"] <= hi
    assert t["sim"]["mean"] + t["sim"]["half_width"] >= lo
    assert r.extra["bounds"]["bottleneck"] == ["swport"]


# ---------------------------------------------------------------------------
# pools held along a path by a class given by visits
# ---------------------------------------------------------------------------

def _path_net(N, B, *, nested=False, visits=True, Z=0.05):
    st = [Delay("think", Z), Queue("cpu", 0.004), Queue("dma", 0.010), Queue("port", 0.012),
          Queue("link", 0.006), Queue("pci", 0.003)]
    if nested:
        pools = [TokenPool("buf", B, "dma", "link", path=("dma", "port", "link")),
                 TokenPool("sw", 1, "port", "link", path=("port", "link"))]
    else:
        pools = [TokenPool("buf", B, "dma", "port", path=("dma", "port")),
                 TokenPool("sw", 1, "port", "link", path=("port", "link"))]
    if visits:
        cls = Closed("io", N, visits={s.name: 1 for s in st})
    else:
        cls = Closed("io", N, routing={"think": {"cpu": 1}, "cpu": {"dma": 1},
                                       "dma": {"port": 1}, "port": {"link": 1},
                                       "link": {"pci": 1}, "pci": {"think": 1}})
        pools = [dataclasses.replace(p, path=None) for p in pools]
    return Network(st, [cls], pools=pools)


def test_pool_chains_merge_and_validate():
    assert pool_chains(_path_net(3, 2), 0) == (("dma", "port", "link"),)
    assert pool_chains(_path_net(3, 2, nested=True), 0) == (("dma", "port", "link"),)
    assert pool_chains(_path_net(3, 2, visits=False), 0) == ()
    st = [Queue("a", 0.1), Queue("b", 0.1), Queue("c", 0.1)]
    with pytest.raises(InvalidValueError, match="station 'b' lies on the held path"):
        pool_chains(Network(st, [Closed("x", 2, visits={"a": 1, "b": 2, "c": 1})],
                            pools=[TokenPool("p", 1, "a", "b", path=("a", "b"))]), 0)
    with pytest.raises(UnsupportedModelError, match="has no path"):
        pool_chains(Network(st, [Closed("x", 2, visits={"a": 1, "b": 1, "c": 1})],
                            pools=[TokenPool("p", 1, "a", "b")]), 0)
    with pytest.raises(InvalidValueError, match="share stations but not as one contiguous"):
        pool_chains(Network(st, [Closed("x", 2, visits={"a": 1, "b": 1, "c": 1})],
                            pools=[TokenPool("p", 1, "a", "c", path=("a", "b", "c")),
                                   TokenPool("q", 1, "c", "a", path=("c", "a"))]), 0)
    with pytest.raises(InvalidValueError, match="must start at acquire 'a'"):
        TokenPool("p", 1, "a", "b", path=("b", "a"))


def test_visits_with_path_simulates_product_form_when_no_pool_binds():
    # With tokens >= N no pool ever binds, so the network is product form
    # and the simulated throughput must match exact MVA (any routing with
    # the same visit ratios gives the same means: BCMP 1975).
    N = 3
    st = [Delay("think", 0.05), Queue("dma", 0.010), Queue("port", 0.012), Queue("link", 0.006)]
    net = Network(st, [Closed("io", N, visits={"think": 1, "dma": 2, "port": 2, "link": 2})],
                  pools=[TokenPool("buf", N, "dma", "port", path=("dma", "port")),
                         TokenPool("sw", N, "port", "link", path=("port", "link"))])
    exact = qm.mva(dataclasses.replace(net, pools=())).X["io"]
    s = qm.simulate(net, seed=2, horizon=2000, replications=4)
    assert s.X["io"].contains(exact) or abs(s.X["io"].mean / exact - 1) < 0.01
    # visit ratios honoured along the chain
    for k in ("dma", "port", "link"):
        assert s.X[k].mean / s.X["io"].mean == pytest.approx(2, rel=0.02)
    assert qm.decompose(net).X["io"] == pytest.approx(exact, rel=1e-10)


# ---------------------------------------------------------------------------
# nested and overlapping pools: decomposition vs the exact CTMC
# ---------------------------------------------------------------------------

CASES = [(4, 1), (6, 2), (8, 4)]


def _errors():
    rows = []
    for nested in (True, False):
        for N, B in CASES:
            ex = ctmc(_path_net(N, B, nested=nested, visits=False))
            fes = qm.decompose(_path_net(N, B, nested=nested), inner="fes")
            inn = qm.decompose(_path_net(N, B, nested=nested), inner="ctmc")
            # the default picks the CTMC inside small groups of several pools
            auto = qm.decompose(_path_net(N, B, nested=nested))
            assert auto.X["io"] == pytest.approx(inn.X["io"], rel=1e-12)
            rows.append((nested, N, B, ex, fes, inn))
    return rows


def test_nested_and_overlapping_pools_against_ctmc():
    lines = ["decomposition vs exact CTMC, buffer pool B + one-slot port pool",
             "layout       N   B   X ctmc   err fes  err ctmc-inside  waiting ctmc  fes"]
    for nested, N, B, ex, fes, inn in _errors():
        xe = ex.X["io"]
        e1 = fes.X["io"] / xe - 1
        e2 = inn.X["io"] / xe - 1
        lines.append(f"{'nested' if nested else 'overlap':8s} {N:4d} {B:3d} {xe:8.3f} "
                     f"{100 * e1:+8.2f}% {100 * e2:+8.2f}%        "
                     f"{ex.info['pools']['buf']['waiting']:8.3f} "
                     f"{fes.info['pools']['buf']['waiting']:8.3f}")
        # stated error: within 5 % (measured -0.9 % .. -4.7 %); the FES of a
        # binding pool underestimates the throughput
        assert -0.05 <= e1 <= 0.0
        # the CTMC inside the group leaves only the outer FES: never worse
        assert abs(e2) <= abs(e1) + 1e-12 and abs(e2) <= 0.04
        assert fes.bottleneck == ex.bottleneck
        # nested (a port taken while a buffer slot is held) and overlapping
        # pools: no cycle of waits, so the bounds are proven; both for the
        # visits class with paths and the routing class
        for vis in (True, False):
            b = qm.bounds(_path_net(N, B, nested=nested, visits=vis))
            assert b.throughput_lower <= xe <= b.throughput_upper * (1 + 1e-12)
        # the held tokens never exceed the tokens, utilisation = held / tokens
        for d in fes.info["pools"].values():
            assert d["held"] <= d["tokens"] + 1e-9
            assert d["utilization"] == pytest.approx(d["held"] / d["tokens"])
    print("\n".join(lines))


def test_inner_option_checked():
    with pytest.raises(InvalidValueError, match="inner must be 'auto', 'fes' or 'ctmc'"):
        qm.decompose(_path_net(2, 1), inner="exact")


def test_ctmc_follows_pool_paths_of_a_visits_class():
    # The CTMC routes a class given by visits along its pools' chains as the
    # simulator does: the two must agree (the simulator's interval), and the
    # decomposition of the same model stays within 2.5 % of the CTMC
    # (measured -0.5 % .. -1.9 %; the random order of visits mixes more than
    # the fixed cycle, so the FES does better than against the routed CTMC).
    ex = ctmc(_path_net(6, 2))
    s = qm.simulate(_path_net(6, 2), seed=3, horizon=5000, replications=4)
    assert s.X["io"].contains(ex.X["io"]) or abs(s.X["io"].mean / ex.X["io"] - 1) < 0.005
    for nested in (True, False):
        for N, B in CASES:
            ex = ctmc(_path_net(N, B, nested=nested))
            d = qm.decompose(_path_net(N, B, nested=nested))
            assert -0.025 <= d.X["io"] / ex.X["io"] - 1 <= 0.0
            assert d.bottleneck == ex.bottleneck


def test_nested_pools_exact_when_nothing_binds():
    # N = 1: no pool can bind, the decomposition is exact
    for nested in (True, False):
        ex = ctmc(_path_net(1, 1, nested=nested, visits=False))
        assert qm.decompose(_path_net(1, 1, nested=nested)).X["io"] == pytest.approx(
            ex.X["io"], rel=1e-9)


def test_routing_and_visits_decompose_alike():
    for nested in (True, False):
        a = qm.decompose(_path_net(6, 2, nested=nested))
        b = qm.decompose(_path_net(6, 2, nested=nested, visits=False))
        assert a.X["io"] == pytest.approx(b.X["io"], rel=1e-9)


# ---------------------------------------------------------------------------
# a held resource counts in the bottleneck
# ---------------------------------------------------------------------------

def _hold_net():
    # one token held over two stations, each 45 % busy: the token is held
    # about 90 % of the time and is the bottleneck, though no station is
    return Network([Delay("think", 0.02), Queue("a", 0.01), Queue("b", 0.01)],
                   [Closed("x", 6, routing={"think": {"a": 1}, "a": {"b": 1},
                                            "b": {"think": 1}})],
                   pools=[TokenPool("tok", 1, "a", "b")])


def test_pool_in_bottleneck_analytic_ctmc_and_sim():
    net = _hold_net()
    for r in (qm.decompose(net), ctmc(net)):
        u = r.pool_utilization["tok"]
        # Little: held = X H; with a single token H = S_a + S_b (no waiting
        # inside the span): U = X (S_a + S_b)
        assert u == pytest.approx(r.X["x"] * 0.02, rel=1e-6)
        assert u > max(r.U["a"], r.U["b"])
        assert r.bottleneck == ("tok",)
        assert "tok" in r.to_frame().index and r.to_frame().loc["tok", "kind"] == "pool"
        assert r.to_dict()["pools"]["tok"]["U"] == pytest.approx(u)
        assert "pool tok *" in r.table()
    s = qm.simulate(net, seed=5, horizon=2000, replications=4)
    assert s.bottleneck == ("tok",)
    assert s.pool_utilization["tok"] == pytest.approx(s.X["x"].mean * 0.02, rel=0.02)
    assert not math.isnan(s.to_frame().loc["tok", ("U", "mean")])


def test_results_without_pools_unchanged():
    net = Network([Queue("a", 0.01), Queue("b", 0.02)],
                  [Closed("x", 4, visits={"a": 1, "b": 1})])
    r = qm.mva(net)
    assert r.pool_utilization == {} and r.bottleneck == ("b",)
    assert "pools" not in r.to_dict()
    assert list(r.to_frame().index) == ["a", "b"]


# ---------------------------------------------------------------------------
# the notebook
# ---------------------------------------------------------------------------

def test_notebook_runs():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    path = os.path.join(root, "notebooks", "spax.ipynb")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.get("outputs"), "commit the notebook without outputs"
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": root}}).execute()
    assert np.all([c.get("outputs") is not None for c in nb.cells if c.cell_type == "code"])


@pytest.mark.slow
def test_p_io_30_error_table_nested_fes_vs_ctmc_inside():
    # The SPAX cluster at p_io = 30 % with the buffer slot held until the
    # link has carried the packet (nested in it: the port's place), so
    # that nested FES applies.  Measured (seed 31, 6 x 600 s):
    #   nested FES:      X -1.8 %, packets waiting for a slot +6.7 %
    #   CTMC inside:     X +0.2 %, waiting -0.6 %   (the default, "auto")
    # Stated: CTMC inside within 1 % (X) and 5 % (waiting) of the simulator
    # plus its half-width, and closer than nested FES on both.
    p = spax.Params()
    net = spax.network(p)
    xn, sw = net.pools
    nest = dataclasses.replace(net, pools=(
        dataclasses.replace(xn, release="link", path=("dma", "port", "link")), sw))
    s = qm.simulate(nest, seed=31, horizon=600, replications=6)
    xs, ws = s.X["tx"], s.pools["xnif"]["Q"]
    lines = ["p_io = 30 %, nested pools: decomposition vs simulator",
             f"sim: X {xs.mean:.3f} +- {xs.half_width:.3f}, waiting {ws.mean:.3f} +- "
             f"{ws.half_width:.3f}"]
    err = {}
    for inner in ("fes", "ctmc"):
        r = qm.decompose(nest, inner=inner)
        ex = r.X["tx"] / xs.mean - 1
        ew = r.info["pools"]["xnif"]["waiting"] / ws.mean - 1
        err[inner] = (ex, ew)
        lines.append(f"{inner:5s} X {100 * ex:+.2f} %  waiting {100 * ew:+.1f} %")
    print("\n".join(lines))
    ex, ew = err["ctmc"]
    assert abs(ex) <= 0.01 + xs.half_width / xs.mean
    assert abs(ew) <= 0.05 + ws.half_width / ws.mean
    assert abs(err["ctmc"][0]) < abs(err["fes"][0])
    assert abs(err["ctmc"][1]) < abs(err["fes"][1])


# ---------------------------------------------------------------------------
# deeper (issue 20 item 3): remote traffic, bottleneck map, packet size, knees
# ---------------------------------------------------------------------------

def _hand_d_cpu(p, scale=1.0):
    # D_cpu by hand: cpu_seconds + r (remote_cpu + 4 msg_cpu), r from the TPC-C
    # mix 0.45 (1 - (1 - 0.01 s)^10) + 0.43 x 0.15 s at remote scale s
    r = 0.45 * (1 - (1 - 0.01 * scale) ** 10) + 0.43 * min(1.0, 0.15 * scale)
    return p.cpu_seconds + r * (p.remote_cpu_seconds + 4 * p.msg_cpu_seconds), r


def test_remote_traffic_effect():
    # At the CPU-bound point (PN = 4, 3 IONs) the 16 CPUs are saturated, so
    # TPS = 16 / D_cpu (asymptotic bound, Lazowska et al. 1984 sec. 5.2):
    # the TPS ratio without/with remote traffic is the D_cpu ratio, by hand.
    # Tolerance 0.1 %: N = 160 >> 16 servers leaves the CPUs busy > 99.9 %.
    p = spax.Params()
    eff = {(e["configuration"], e["scale"]): e for e in spax.remote_effect(p)}
    d1, r1 = _hand_d_cpu(p)
    d0, _ = _hand_d_cpu(p, 0.0)
    x1, x0 = eff[("PN = 4, 3 IONs", 1.0)]["TPS"], eff[("PN = 4, 3 IONs", 0.0)]["TPS"]
    assert x1 == pytest.approx(16 / d1, rel=1e-3)
    assert x0 / x1 == pytest.approx(d1 / d0, rel=1e-3)
    assert x0 / x1 - 1 > 0.01                  # TPC-C's remote work costs > 1 % TPS
    # more remote traffic, monotonically less TPS where the CPUs bind
    xs = [eff[("PN = 4, 3 IONs", k)]["TPS"] for k in (0.0, 1.0, 2.0, 4.0)]
    assert all(a > b for a, b in zip(xs, xs[1:]))
    # the PN switch port: utilisation law U = X V S, V = 2 r m_pk / PNs (hand)
    e = eff[("sec. 4.3 default (1 ION)", 1.0)]
    s_port = spax.path_elements(p)["port"].service_time * p.path_slowdown
    assert e["U_pnport"] == pytest.approx(e["TPS"] * 2 * r1 * 2 / 4 * s_port, rel=1e-9)
    assert e["U_pnport"] < 0.01                # the messages do not load the ports
    # the owner's work is CPU work: doubling it lowers the CPU-bound TPS as
    # 16 / D_cpu says
    q = dataclasses.replace(spax.sec44_setting(p, ions=3),
                            remote_cpu_seconds=2 * p.remote_cpu_seconds)
    d2 = d1 + r1 * p.remote_cpu_seconds
    assert spax.tps(q) == pytest.approx(16 / d2, rel=1e-3)


def test_pool_breakdown_by_little():
    # Little's law on the tokens, by hand: XNIF in service = X_pkt (S_dma +
    # S_port) / 4; the port's one place is held for exactly S_port + S_link
    # (its holder is alone at port and link), so it is never blocked.
    p = spax.Params()
    r = spax.solve(p)
    e = spax.path_elements(p)
    s_dma, s_port, s_link = (e[k].service_time * p.path_slowdown for k in ("dma", "port", "link"))
    x_pkt = float(r.X["tx"]) * p.p_io * p.packets_per_io
    b = spax.pool_breakdown(r)
    assert b["xnif"]["U_service"] == pytest.approx(x_pkt * (s_dma + s_port) / 4, rel=1e-9)
    assert b["swport"]["U_hold"] == pytest.approx(x_pkt * (s_port + s_link), rel=1e-6)
    assert abs(b["swport"]["blocked"]) < 1e-6
    x = b["xnif"]
    assert x["U_hold"] == pytest.approx(x["U_net"] + x["blocked"])
    assert x["U_service"] <= x["U_net"] < 0.5 < 0.95 < x["U_hold"]   # mostly blocked
    # the simulator's means give the same split (its own Little's law)
    s = spax.simulate(p, seed=7, horizon=30, replications=2)
    bs = spax.pool_breakdown(s)
    assert bs["xnif"]["U_net"] < 0.5 < 0.95 < bs["xnif"]["U_hold"]


def test_bottleneck_map():
    p = spax.Params()
    m = spax.bottleneck_map(p, p_ios=(0.1, 0.3, 0.4), slots=(1, 4, 16))
    c = m["cells"]
    e = spax.path_elements(p)
    hold = (e["port"].service_time + e["link"].service_time) * p.path_slowdown
    for cell in c.values():
        assert 0 <= cell["margin"] <= 1 and cell["bottleneck"] in cell["contenders"]
    # p_io 10 %: below the demand-level switch point (hand: p* = (D_cpu / 16) /
    # (k hold) ~ 0.31), the CPUs bind by a wide margin at every slot count
    d_cpu, _ = _hand_d_cpu(p)
    p_star = d_cpu / 16 / (p.packets_per_io * hold)
    assert 0.1 < p_star < 0.4
    for b in (1, 4, 16):
        assert c[(0.1, b)]["bottleneck"] == "cpu" and c[(0.1, b)]["margin"] > 0.3
        assert c[(0.1, b)]["TPS"] == pytest.approx(16 / d_cpu, rel=1e-3)
    # the default point is a close call: buffer, port place and CPUs within 3 %
    d = c[(0.3, 4)]
    assert d["margin"] < 0.03 and set(d["contenders"]) == {"xnif", "swport", "cpu"}
    # one slot and heavy I/O: the buffer alone, by far
    assert c[(0.4, 1)]["bottleneck"] == "xnif" and c[(0.4, 1)]["margin"] > 0.1
    # net of blocking the buffer drops out at the default point
    n = spax.bottleneck_map(p, p_ios=(0.3,), slots=(4,), net_of_blocking=True)
    assert n["cells"][(0.3, 4)]["bottleneck"] == "swport"
    assert "xnif" not in n["cells"][(0.3, 4)]["contenders"]
    # the plot is one call away
    import matplotlib
    matplotlib.use("Agg")
    ax = spax.plot_bottleneck_map(m)
    assert len(ax.patches) == 9 and ax.get_ylabel().startswith("XNIF buffer slots")


def test_packet_size_sweep():
    p = spax.Params()
    sizes = (16, 64, 256, 2048)
    sw = spax.packet_sweep(p, sizes=sizes, p_ios=(0.1, 0.4))
    d_cpu, _ = _hand_d_cpu(p)
    light = [r for r in sw if r["p_io"] == 0.1]
    heavy = [r for r in sw if r["p_io"] == 0.4]
    # light I/O load: CPU-bound at every size, TPS = 16 / D_cpu (hand bound)
    for r in light:
        assert r["TPS"] == pytest.approx(16 / d_cpu, rel=1e-3)
    # heavy: the per-packet costs by hand (Hockney t0 + m / r; port without
    # overhead), k = 2048 / size packets per I/O, times the calibrated slowdown
    for r in heavy:
        s, k = r["packet_bytes"], 2048 // r["packet_bytes"]
        dma = p.dma_setup + s / p.dma_bandwidth
        port = s / (p.port_clock * p.port_width)
        link = p.link_overhead + s / p.link_bandwidth
        assert r["packets_per_io"] == k and r["buffer_bytes"] == 4 * s
        assert r["path_demand"] == pytest.approx(0.4 * k * max(dma, port, link)
                                                 * p.path_slowdown, rel=1e-9)
        # the port's one place bounds TPS: X <= 1 / (p k (S_port + S_link)) (Little)
        assert r["TPS"] <= 1 / (0.4 * k * (port + link) * p.path_slowdown) * (1 + 1e-9)
    t = [r["TPS"] for r in heavy]
    assert all(a < b for a, b in zip(t, t[1:]))        # bigger packets, more TPS
    assert t[-1] / t[0] > 1.5                         # "strongly": 16 B vs 2 KB
    assert t[1] == pytest.approx(spax.PAPER["tps_pio40"], rel=1e-4)   # 64 B: the fit point
    (row,) = [r for r in spax.report().rows if r.quantity.startswith("packet size")]
    assert row.role == "predicted" and row.model == 1.0
    with pytest.raises(InvalidValueError, match="not a whole number of 48-byte packets"):
        spax.Params(packet_bytes=48)


def test_knees_reproduced_by_one_fitted_disk(rep):
    # The paper's knees (4, 8, 16: sec. 4.2) are the references.  One
    # unknown (the sec. 4.2 disk) against three readings: each holds on an
    # interval of disk slowdowns and the three must intersect.
    p = spax.Params()
    f = spax.knee_fit(p)
    lo, hi = f["interval"]
    assert lo < p.disk_slowdown <= hi
    assert p.disk_slowdown == pytest.approx(f["value"], rel=2e-3)   # stored = fitted
    assert f["binding"] == ["cpu", "normal"]
    # the I/O-bound interval contains the intersection: its row is predicted
    io_lo, io_hi = f["intervals"]["io"]
    assert io_lo < lo and hi < io_hi
    knees = {k: v["knee"] for k, v in rep.extra["details"]["knees"].items()}
    assert knees == {"cpu": spax.PAPER["knee_cpu"], "normal": spax.PAPER["knee_normal"],
                     "io": spax.PAPER["knee_io"]}
    # just outside the interval a fitted knee moves: the fit is not vacuous
    assert spax.knee(dataclasses.replace(p, disk_slowdown=0.97 * lo), "cpu")[0] == 2
    assert spax.knee(dataclasses.replace(p, disk_slowdown=1.03 * hi), "normal")[0] == 16
    # the predicted I/O-bound knee moves on its own when the disk leaves its
    # interval (a row of its own equation, not the fitted rows')
    assert spax.knee(dataclasses.replace(p, disk_slowdown=1.05 * io_hi), "io")[0] == 32
    # the crossings' order by hand: the disk load per transaction p_io m is
    # 0.05 < 0.15 < 0.27, so at the same disk count the lighter profile
    # tolerates the slower disk: c_cpu(4) > c_normal(4), c_normal(8) > c_io(8)
    # (the intervals are (c(prev n), c(n)]: cpu (c(2), c(4)], normal (c(4),
    # c(8)], io (c(8), c(16)])
    assert f["intervals"]["cpu"][1] > f["intervals"]["normal"][0]
    assert f["intervals"]["normal"][1] > f["intervals"]["io"][0]


def test_validation_list_agrees_within_its_budget():
    # Short runs (4 x 60 s, fixed seeds); every entry must agree within its
    # stated error (decomposition 2.5 %; a queue: kappa x 1 % rate error, with
    # kappa its analytic sensitivity to a 1 % change of the competing rates).
    # The 16-slot XNIF queue is the known ill-conditioned one (CPUs 0.98 and
    # the port place 0.999 share ~150 waiting jobs): its budget must say so.
    v = spax.validation(seed=21, horizon=60, replications=4)
    entries = [e for c in v for e in c["entries"]]
    assert len(v) >= 3 and all(e["agree"] for e in entries), \
        [(e["configuration"], e["quantity"], e["analytic"], e["sim"]) for e in entries
         if not e["agree"]]
    (x16,) = [e for e in entries if e["configuration"] == "16 XNIF slots"
              and e["quantity"] == "waiting for xnif"]
    assert x16["tolerance"] > 0.08 and "kappa" in x16["method"]
    # kappa, by its definition, from two solves 2 % apart in cpu_seconds
    p16 = dataclasses.replace(spax.Params(), xnif_slots=16)
    w = [spax.solve(dataclasses.replace(p16, cpu_seconds=p16.cpu_seconds * f))
         .info["pools"]["xnif"]["waiting"] for f in (0.99, 1.01)]
    assert spax.queue_condition(p16, lambda r: r.info["pools"]["xnif"]["waiting"]) >= \
        abs(math.log(w[1] / w[0])) / 0.02 - 1e-9
    # the disks' queue is compared per disk, averaged over the ION's identical disks
    assert any(e["quantity"] == "Q per disk (mean of 2)" for e in entries)


# ---------------------------------------------------------------------------
# an I/O's packets as a burst: a fork-join whose tasks hold the pools
# ---------------------------------------------------------------------------

def _burst_toy(tokens):
    # one job, think 1 s, forks 2 tasks down rel -> a -> b (a, b exponential, 1 s; rel
    # a 1 us delay, 1e-6 of a cycle: below the tolerances used);
    # a pool of ``tokens`` held from a to b by each task
    st = [Delay("rel", 1e-6), Queue("a", 1.0), Queue("b", 1.0),
          qm.ForkJoin("fj", [["rel", "a", "b"]], tasks=2)]
    pools = [] if tokens is None else [TokenPool("slot", tokens, "a", "b", path=("a", "b"))]
    return Network(st, [Closed("c", 1, visits={"fj": 1}, think_time=1.0)], pools=pools)


def test_burst_tasks_hold_a_pool_hand_derivation():
    # Hand derivation: with ONE token the two tasks cross a -> b one after the
    # other, so a cycle is Z + 2 (S_a + S_b) = 1 + 4 = 5 s in mean and X = 0.2.
    # Without the pool they pipeline: S_a + max(S_b, S_a') + S_b', mean
    # 1 + 1.5 + 1 (E max of two Exp(1) = 1.5), a cycle of 4.5 s, X = 2/9: the
    # pool must be seen to act (the two values are 10 % apart, the intervals ~1 %).
    s1 = qm.simulate(_burst_toy(1), seed=3, horizon=20000.0, replications=4)
    x = s1.X["c"]
    assert abs(x.mean - 0.2) <= x.half_width + 0.002
    s0 = qm.simulate(_burst_toy(None), seed=3, horizon=20000.0, replications=4)
    y = s0.X["c"]
    assert abs(y.mean - 2.0 / 9.0) <= y.half_width + 0.002
    # the slot is held by at most one task, for S_a + S_b per task: Little, U = X 2 (2 s)
    u = s1.pools["slot"]["U"]
    assert abs(u.mean - 0.2 * 2 * 2.0) <= u.half_width + 0.01


def test_pool_from_a_branch_first_station_still_refused():
    # a task enters its branch's first station straight from the fork, where the
    # simulator takes no token: such a pool stays refused by name
    st = [Queue("a", 1.0), Queue("b", 1.0), qm.ForkJoin("fj", [["a", "b"]], tasks=2)]
    with pytest.raises(UnsupportedModelError, match=r"token pool 'slot' holds station 'a'"):
        Network(st, [Closed("c", 1, visits={"fj": 1}, think_time=1.0)],
                pools=[TokenPool("slot", 1, "a", "b", path=("a", "b"))])


def test_burst_network_solved_by_forkjoin_pools():
    # the fork-join with pools has its analytic method (tests/test_forkjoin_pools.py)
    net = spax.burst_network()
    r = qm.solve(net)
    assert r.method == "forkjoin-pools" and r.exactness == "approximate"
    with pytest.raises(InvalidValueError, match="one ION"):
        spax.burst_network(spax.Params(ions=3))


@pytest.fixture(scope="module")
def burst():
    return spax.burst_sweep(p_ios=(0.10, 0.20, 0.40, 0.70), horizon=30.0, replications=4)


def test_burst_queue_grows_below_saturation(burst):
    # sec. 4.3: the XNIF queue grows with p_io.  With the burst it does below
    # saturation: the 95 % intervals at 10 % and 20 % are disjoint and ordered
    # (measured: 7.1 +- 0.8 and 37 +- 8 packets at seed 1, so the margin is wide),
    # and both lie far above the packet-by-packet model's queue (decomposition,
    # within 2.5 % + its queue budget; a factor 5 is far outside either)
    (q1, h1), (q2, h2) = burst[0]["xnif_waiting"], burst[1]["xnif_waiting"]
    assert q2 - h2 > q1 + h1
    for r in burst[:2]:
        assert r["xnif_waiting"][0] - r["xnif_waiting"][1] > 5 * r["xnif_waiting_packet"]


def test_burst_saturates_at_the_same_point_so_not_linear(burst):
    # The miss: "linearly up to 70 %" would put Q(40 %) halfway (0.5) between
    # Q(10 %) and Q(70 %).  Take the least saturated reading the intervals allow
    # (Q40 low, Q10 and Q70 high): it must still be far above 0.5 (> 0.8).
    q = [r["xnif_waiting"] for r in burst]
    lo = (q[2][0] - q[2][1] - q[0][0] - q[0][1]) / (q[3][0] + q[3][1] - q[0][0] + q[0][1])
    assert lo > 0.8
    assert spax.burst_linearity(burst) >= lo
    # The burst changes how packets queue, not the work per transaction: at 40 %
    # and 70 % both models are bound by the switch port's place (port + link per
    # packet), so the simulated burst TPS meets the decomposition's (stated error
    # 2.5 %) within its half-width
    for r in burst[2:]:
        m, h = r["TPS"]
        assert abs(m - r["TPS_packet"]) <= h + 0.025 * r["TPS_packet"]
    # the analytic burst (forkjoin-pools) within 5 % of the simulated TPS
    for r in burst:
        m, h = r["TPS"]
        assert abs(r["TPS_model"] - m) <= h + 0.05 * m


def test_burst_rows_in_the_sim_report(burst):
    rows = spax._burst_rows(burst)
    assert [r.role for r in rows] == ["predicted", "predicted"]
    assert rows[0].model == 1.0 and not rows[0].miss
    assert rows[1].paper == 0.5 and rows[1].miss
