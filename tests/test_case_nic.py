"""End-system (1 Gbit/s, RTT 228 ms) case: the paper-vs-model table, the
bandwidth-delay product, the slow-start ramp and physical sanity.

Reference values come from the paper (quoted in ``qmodels.cases.nic``) or
from hand derivations written next to each assertion.
"""

import dataclasses
import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.cases import nic, with_overrides
from qmodels.errors import InvalidValueError, UnknownNameError

# The project-wide bar for predicted rows without a ``miss``.  The paper's
# Table 2 gives single iperf runs and the UDP level is a phrase ("about 950
# Mbit/s"), so nothing tighter than the bar is asserted for UDP; Table 2 is
# held to 5 % below (see test_table2_within_five_percent).
BAR = 0.20


@pytest.fixture(scope="module")
def rep():
    return nic.report()


@pytest.fixture(scope="module")
def val():
    entries, next_seed, warned = nic.validation(seed=1)
    return entries


P = nic.Params()
MSS9 = 9000 - 52          # MTU 9000 - IP 20 - TCP 20 - timestamps 12
WIRE9 = 9000 + 38         # preamble 8 + header 14 + FCS 4 + gap 12 around the MTU
LINE_FRAMES = 1e9 / 8 / WIRE9


def _path_service(nic_name="PCI-X", mtu=9000, p=P):
    """Sum of the per-frame service times along the path, by hand from the
    parameters: host 5 us twice, bus (MTU + 14 + 16 B) twice, NIC 0.672 us
    twice, access (MTU + 38) x 8 ns, backbone the same at 10 Gbit/s."""
    bus_bw = float(nic.bus(nic_name, p).bandwidth)
    return (2 * p.host_packet_cost + 2 * (mtu + 14 + 16) / bus_bw + 2 * p.nic_frame_cost
            + (mtu + 38) * 8 / 1e9 + (mtu + 38) * 8 / 10e9)


def test_table_rows_and_roles(rep):
    assert len(rep.rows) == 5 + 8 + 1 + 4
    assert not [r for r in rep.rows if r.role == "fitted"]     # nothing fitted
    # by the rule of qmodels.cases._base only the bandwidth-delay product (rate x RTT, a
    # definition) is derived; UDP at line x framing rests on the access link binding and
    # "TCP rises with the window and the MTU" on the model's monotone network, hypotheses
    # a measurement can refute, so they are predicted
    assert [r.role for r in rep.rows[:13]] == ["predicted"] * 13
    assert rep.rows[13].role == "derived" and rep.rows[13].identity == "definition"
    assert [r.role for r in rep.rows[14:]] == ["predicted"] * 4
    assert {r.paper for r in rep.rows[:5]} == set(nic.TABLE2_TCP_MBPS.values())
    c = rep.counts
    assert {k: c[k] for k in ("fitted", "predicted", "derived", "misses", "stale")} == {
        "fitted": 0, "predicted": 17, "derived": 1, "misses": 1, "stale": 0}
    # the BDP miss is the paper's own (two places quoted); the PCI UDP finding is met by the
    # receive FIFO and rests on how frames arrive
    bdp_row, pci = rep.rows[13], rep.rows[16]
    assert bdp_row.blame == "paper" and any("228 ms" in q for q in bdp_row.quotes)
    assert any("14.3" in q for q in bdp_row.quotes)
    assert not pci.miss and pci.rests_on == ("rx_arrivals",)
    # the TCP rows name what they rest on
    assert all(r.rests_on == ("run_seconds", "ack_ratio") for r in rep.rows[:5])


def test_predicted_rows_meet_the_bar_or_say_why(rep):
    for r in rep.rows:
        if r.miss:
            continue
        assert abs(r.rel_error) <= BAR, (r.quantity, r.paper, r.model)
    assert [r.quantity for r in rep.rows if r.miss] == [
        "bandwidth-delay product, 1 Gbit/s x 228 ms"]


def test_table2_within_five_percent(rep):
    # Tolerance 5 %: slow start through the network has no free parameter, and the paper's
    # Table 2 holds single iperf runs whose own spread over five NICs is 778..800 (2.8 %);
    # the model lands within 4 % of every NIC
    for r in rep.rows[:5]:
        assert abs(r.rel_error) <= 0.05, r.quantity
    # the NIC type barely matters in the network either (no bus binds at MTU 9000): the
    # buses shift the path's service times by microseconds against a 228 ms RTT
    models = [r.model for r in rep.rows[:5]]
    assert (max(models) - min(models)) / max(models) < 1e-3
    assert [r.model for r in rep.rows[14:]] == [1.0, 1.0, 1.0, 1.0]


def test_no_fitted_row_so_no_leak(rep):
    # Nothing is fitted, so no predicted row can be a fitted row's own equation.  The TCP
    # rows do move with the assumptions they rest on (run length, ACK ratio) and with
    # the network's elements, not with any paper figure
    longer = nic.report(dataclasses.replace(P, run_seconds=100.0))
    assert longer.rows[0].model > rep.rows[0].model
    b2 = nic.tcp_throughput("PCI-X", 9000, 256 * 2 ** 20, dataclasses.replace(P, ack_ratio=2.0))
    assert b2 * 8e-6 < rep.rows[0].model - 100


# --------------------------------------------------------------------- the network

def test_network_is_built_from_elements():
    net = nic.network("PCI", 1500, segments=10)
    assert net.station_names == (*nic.PATH, nic.DELAY)
    s = {st.name: st for st in net.stations}
    # the access link is the Ethernet element: (1500 + 38) B x 8 ns, deterministic
    assert float(s["access"].service) == pytest.approx(1538 * 8 / 1e9)
    assert s["access"].distribution.scv == 0 and s["backbone"].distribution.scv == 0
    assert isinstance(s["bus_tx"].element, qm.PCIBus)
    # 32-bit PCI at 33.33 MHz carries frame + header + descriptor: 1530 B / 133.32 MB/s
    assert float(s["bus_tx"].service) == pytest.approx(1530 / (33.33e6 * 4))
    assert float(s["path"].service) == pytest.approx(0.114)
    assert net.classes[0].service["path"] == pytest.approx(0.228)   # TCP: out and back


def test_tcp_window_limited_regime_is_window_over_rtt():
    # 7 segments in flight: no segment ever queues behind another at 228 ms / 7 spacing,
    # so X = N / (RTT + D) (QSP sec. 5.2 lower asymptote is attained with no queueing)
    n = nic.window_segments(65536, 9000)
    assert n == 65536 // MSS9 == 7
    x = nic.tcp_rate("PCI-X", 9000, n) / MSS9
    assert x == pytest.approx(n / (0.228 + _path_service()), rel=1e-6)


def test_tcp_line_limited_regime_is_the_line():
    # far beyond the pipe the access link is saturated: X = line frames/s (residual MVA
    # holds its fixed point to U <= 1: test_residual_mva_utilisation_at_most_one)
    for n in (6308, 29999):
        assert nic.tcp_rate("PCI-X", 9000, n) / MSS9 == pytest.approx(LINE_FRAMES, rel=2e-5)


def test_knee_gap_stated_and_near_the_erlang_asymptote():
    # At N = N*, MVA's smooth curve lies below min(line, N / (RTT + D)): by hand, the
    # machine-repairman throughput is line x (1 - B(N, a)) with Erlang's loss B, and
    # B(N, N) ~ sqrt(2 / (pi N)) (Jagerman 1974) = 1.42 % at N = 3154
    kg = nic.knee_gap()
    n = kg["segments"]
    assert n == 3154
    assert kg["expected"] == pytest.approx(-math.sqrt(2 / (math.pi * 3154)))
    # residual MVA (deterministic transfers) 1.2 % below the corner
    assert -0.016 < kg["gap"] < -0.008
    # exact MVA of the same path with exponential shapes: within 5 % of the asymptote
    net = nic.network("PCI-X", 9000, segments=n)
    expo = dataclasses.replace(net, stations=tuple(
        dataclasses.replace(s, distribution=None) for s in net.stations))
    ex = qm.solve(expo, method="exact")
    gap = float(ex.X["tcp"]) * MSS9 / kg["sharp"] - 1
    assert gap == pytest.approx(kg["expected"], rel=0.05)


def test_switch_window_symbolic_and_in_the_sweep():
    sw = nic.switch_window()
    # by hand: N* = r (RTT + D) / (8 (m + 38)), W* = N* x MSS
    d = _path_service()
    assert sw["D"] == pytest.approx(d)
    assert sw["N_star_value"] == pytest.approx(1e9 * (0.228 + d) / (8 * WIRE9))
    assert sw["W_star_value"] == pytest.approx(sw["N_star_value"] * MSS9)
    # with D = 0 it is the BDP times the framing efficiency: r tau / 8 x MSS / (m + 38)
    import sympy as sp
    r, tau, m, D = sp.symbols("r tau m D", positive=True)
    assert sp.simplify(sw["W_star"].subs(D, 0) - sw["bdp"] * (m - 52) / (m + 38)) == 0
    # the network's own sweep: beyond the knee the excess window queues at the line, and
    # the segments not waiting there (N - Q_access + U_access, the one on the wire
    # included) are the pipe, N*
    for n in (6308, 12616):
        res = qm.solve(nic.network("PCI-X", 9000, segments=n))
        pipe = n - float(res.Q["access"]) + float(res.U["access"])
        assert pipe == pytest.approx(sw["N_star_value"], abs=0.5)
    # and the binding asymptote switches there: below N*/2 the window binds, above 2 N*
    # the line (both within 0.1 % of their closed forms)
    lo = nic.tcp_rate("PCI-X", 9000, 1577) / MSS9
    assert lo == pytest.approx(1577 / (0.228 + d), rel=1e-3)
    assert nic.tcp_rate("PCI-X", 9000, 6310) / MSS9 == pytest.approx(LINE_FRAMES, rel=1e-3)


def test_changing_an_element_moves_the_numbers_and_the_bottleneck():
    # a PCI bus at half efficiency: 66.66 MB/s < the line's 123.6 MB/s of frames, so the
    # bus binds UDP at 66.66e6 x 1472 / 1530 B/s
    slow = dataclasses.replace(P, pci_efficiency=0.5)
    f = nic.udp_flow("PCI", 1500, slow)
    assert f.bottleneck in ("bus_tx", "bus_rx")
    assert f.ceiling == pytest.approx(33.33e6 * 4 * 0.5 / 1530)
    # the receiver's bus then runs at rho = 1 and its 32-frame FIFO drops what Poisson
    # arrivals pile up: M/D/1/32 at rho = 1 (paced frames would lose nothing)
    loss = nic.mg1k_loss(f.ceiling, 1530 / (33.33e6 * 4 * 0.5), 32)
    assert f.fifo_frames == 32 and f.fifo_loss == pytest.approx(loss)
    assert f.delivered == pytest.approx(33.33e6 * 4 * 0.5 * 1472 / 1530 * (1 - loss))
    paced = nic.udp_flow("PCI", 1500, dataclasses.replace(slow, rx_arrivals="paced"))
    assert paced.delivered == pytest.approx(33.33e6 * 4 * 0.5 * 1472 / 1530)
    # and TCP far beyond the pipe runs at the bus's frame rate
    assert nic.tcp_rate("PCI", 1500, 20000, slow) / 1448 == pytest.approx(
        33.33e6 * 2 / 1530, rel=1e-4)
    # a 0.5 Gbit/s backbone takes over from the 1 Gbit/s access link
    thin = dataclasses.replace(P, backbone_bps=0.5e9)
    assert nic.udp_flow("PCI-X", 9000, thin).bottleneck == "backbone"
    assert nic.udp_flow("PCI-X", 9000, thin).delivered == pytest.approx(0.5e9 / 8 * 8972 / 9038)
    # a slower host: 20 us per packet binds UDP at MTU 1500 (50,000 packets/s)
    busy = dataclasses.replace(P, host_packet_cost=20e-6)
    g = nic.udp_flow("PCI-X", 1500, busy)
    assert g.bottleneck in ("host_tx", "host_rx") and g.delivered == pytest.approx(50000 * 1472)


def test_udp_ceiling_by_hand():
    # UDP payload per frame MTU - 28; wire MTU + 38; the access link binds
    assert nic.udp_throughput("PCI-X", 1500) == pytest.approx(1e9 / 8 * 1472 / 1538)
    assert nic.udp_throughput("On-board", 9000) == pytest.approx(1e9 / 8 * 8972 / 9038)
    # dual test: the PCI bus carries both directions, 1530 B per frame each way:
    # 133.32e6 / 2 / 1530 frames/s per direction
    d = nic.udp_flow("PCI", 1500, dual=True)
    assert d.bottleneck == "bus_tx"
    assert d.ceiling == pytest.approx(33.33e6 * 4 / 2 / 1530)
    # PCI-X (1067 MB/s shared) and PCIe (full duplex) do not bind: the line does
    assert nic.udp_flow("PCI-X", 1500, dual=True).bottleneck.startswith("access")
    assert nic.udp_flow("PCI-E Intel", 1500, dual=True).bottleneck.startswith("access")
    # an offered load below the ceiling is carried in full (open network: X = lambda)
    f = nic.udp_flow("PCI-X", 1500, offered_bps=500e6)
    assert f.delivered == pytest.approx(500e6 / 8) and f.result is not None


@pytest.mark.parametrize("name", list(nic.NICS))
def test_network_reproduces_the_closed_form_ceilings(name):
    # Where the closed form is exact (an open network's ceiling is 1 / D_max; a closed one
    # far beyond its knee runs at 1 / D_max) the network must give the same number as
    # min(line x framing, bus) of qmodels.elements.transport_limits, computed independently
    # from the elements' bandwidths
    for mtu in nic.MTUS:
        closed_form = float(nic.steady_limits(name, mtu, None, "udp").throughput)
        f = nic.udp_flow(name, mtu)
        assert f.ceiling * f.payload == pytest.approx(closed_form, rel=1e-12)
        # what reaches the receiver is carried less what its FIFO drops (PCI, PCI-X)
        assert f.delivered == pytest.approx(closed_form * (1 - f.fifo_loss), rel=1e-12)
        tcp = float(nic.steady_limits(name, mtu, 2 ** 30, "tcp").throughput)
        assert nic.tcp_rate(name, mtu, 4 * 10 ** 5) == pytest.approx(tcp, rel=2e-5)
    # both directions through a parallel bus: its capacity halves (bus_limit, directions=2)
    dual = nic.udp_flow(name, 1500, dual=True).delivered
    assert dual == pytest.approx(min(nic.bus_limit(name, 1500, "udp", directions=2),
                                     float(nic.link(1500, "udp").bandwidth)), rel=1e-12)


def test_slow_start_through_the_network_by_hand():
    ramp = nic.slow_start_network("PCI-X", 9000, 256 * 2 ** 20)
    # RFC 3390: 2 segments at MSS 8948; doubling per round (b = 1) up to the 256 MB window
    wins = [r[0] for r in ramp.rounds]
    assert wins[:12] == [2 * 2 ** i for i in range(12)]
    assert ramp.max_segments == 256 * 2 ** 20 // MSS9 == wins[-1]
    # below the pipe a round lasts one cycle, RTT + D (no queueing)
    assert ramp.rounds[0][2] == pytest.approx(0.228 + _path_service(), rel=1e-6)
    # the average is what the rounds delivered over the run
    sent = sum(w * MSS9 for w, _, _ in ramp.rounds[:-1]) + ramp.rounds[-1][1] * ramp.rounds[-1][2]
    assert ramp.average == pytest.approx(sent / 10)
    assert sum(r[2] for r in ramp.rounds) == pytest.approx(10)
    # and it agrees with the closed-form ramp of window/RTT rounds within 0.1 % (the
    # network adds D = 0.1 ms per round and MVA's rounded knee)
    cf = nic.slow_start(1e9 / 8 * MSS9 / WIRE9, MSS9, 0.228, 10.0)
    assert ramp.average == pytest.approx(cf.average, rel=1e-3)


def test_energy_by_hand():
    n = 29999
    e = nic.transfer_energy("PCI-X", 9000, n)
    res = qm.solve(nic.network("PCI-X", 9000, segments=n))
    u = {k: float(res.U[k]) for k in ("host_tx", "host_rx", "nic_tx", "nic_rx")}
    # E = P x T per state: host 30 W busy / 15 W idle, NIC 1.2 / 0.8 W, backbone port 10 W
    watts = (sum(30 * u[h] + 15 * (1 - u[h]) for h in ("host_tx", "host_rx"))
             + sum(1.2 * u[k] + 0.8 * (1 - u[k]) for k in ("nic_tx", "nic_rx")) + 10)
    assert e["total_watts"] == pytest.approx(watts)
    x_bytes = float(res.X["tcp"]) * MSS9
    assert e["joules_per_GB"] == pytest.approx(watts / x_bytes * 1e9)
    # a 64 KB window moves 450x fewer bytes for nearly the same power
    small = nic.transfer_energy("PCI-X", 9000, 7)
    assert small["joules_per_GB"] > 300 * e["joules_per_GB"]


def test_residual_mva_utilisation_at_most_one():
    # Residual MVA (qm.solve's pick for deterministic transfers) at a saturated
    # deterministic queue: by hand with Schweitzer's estimate Q(N-1) = Q (N-1)/N and the
    # residual S/2 at a busy server, the unconstrained fixed point gives
    # X S = q / (q + 1/2 - q/N) with q the line's queue, > 1 whenever q > N/2 (1 + 1.5e-5
    # here).  The solver holds its fixed point to U <= 1 (amva_residual.saturate): the
    # access link is full, not more, and the answer obeys the laws
    res = qm.solve(nic.network("PCI-X", 9000, segments=29999), method="mva-residual")
    assert res.method == "mva-residual"
    assert float(res.U["access"]) <= 1.0
    assert float(res.U["access"]) == pytest.approx(1.0, abs=1e-9)
    qm.testing.assert_operational_laws(res)


# --------------------------------------------------------------------- validation

def test_validation_agrees_within_stated_error(val):
    configs = {v["configuration"] for v in val}
    assert len(configs) >= 4
    assert any("window-limited" in c for c in configs)
    assert any("line-limited" in c for c in configs)
    assert any("UDP" in c and "PCI" in c for c in configs)
    for v in val:
        assert v["agree"], v
        assert abs(v["analytic"] - v["sim"]["mean"]) <= (
            v["sim"]["half_width"] + v["tolerance"] * abs(v["analytic"])) + 1e-12, v
    # the knee's tolerance is the stated sqrt(2 / (pi N*)), and the simulated deterministic
    # corner is sharp: within 0.1 % of min(line, N / (RTT + D))
    knee = [v for v in val if "knee" in v["configuration"] and "goodput" in v["quantity"]][0]
    assert knee["tolerance"] == pytest.approx(math.sqrt(2 / (math.pi * 3154)))
    sharp = min(LINE_FRAMES, 3154 / (0.228 + _path_service())) * MSS9 * 8e-6
    assert knee["sim"]["mean"] == pytest.approx(sharp, rel=1e-3)
    # the bus the UDP configuration loads is the binding element (U = 0.9 by design)
    u_bus = [v for v in val if v["quantity"].startswith("U bus")][0]
    assert u_bus["analytic"] == pytest.approx(0.9)


def test_bdp_by_hand(rep):
    # rate x RTT: 1e9 bit/s x 0.228 s / 8 = 28.5e6 B
    assert nic.bdp() == pytest.approx(1e9 * 0.228 / 8) == pytest.approx(28.5e6)
    # the paper's 14.3 MB is the one-way figure: 1e9 x 0.114 / 8 = 14.25e6 B
    assert nic.PAPER_BDP == pytest.approx(1e9 * 0.114 / 8, rel=0.004)
    row = rep.rows[13]
    assert row.paper == 14.3 and row.model == pytest.approx(28.5)
    assert "one-way" in row.miss
    # a window of the paper's 14.3 MB caps TCP at 14.3e6 / 0.228 B/s = 501.75 Mbit/s
    assert float(qm.elements.window_limited_throughput(14.3e6, 0.228)) * 8e-6 == \
        pytest.approx(14.3e6 * 8 / 0.228 / 1e6)


def test_slow_start_by_hand():
    # MTU 9000, TCP + timestamps: MSS = 9000 - 20 - 20 - 12 = 8948 B
    # line goodput R = 1e9/8 x 8948 / 9038 B/s; pipe = R x 0.228 / 8948 = 3153.35 segments
    # RFC 3390: w1 = min(4 x 8948, max(2 x 8948, 4380)) // 8948 = 2
    # gamma = 2: windows 2, 4, ..., 2048 (11 rounds) < 3153 <= 4096
    R = 1e9 / 8 * 8948 / 9038
    ss = nic.slow_start(R, 8948, 0.228, 10.0)
    assert ss.initial_segments == 2 and ss.rounds == 11
    assert ss.pipe_segments == pytest.approx(R * 0.228 / 8948)
    assert ss.bytes == 8948 * (2 + 4 + 8 + 16 + 32 + 64 + 128 + 256 + 512 + 1024 + 2048)
    hand = (ss.bytes + R * (10 - 11 * 0.228)) / 10
    assert ss.average == pytest.approx(hand)
    assert ss.average * 8e-6 == pytest.approx(771.05, abs=0.01)


def test_slow_start_edges():
    # window already covers the pipe: no ramp
    ss = nic.slow_start(1000.0, 1000, 0.1, 10.0, initial_segments=4)
    assert ss.rounds == 0 and ss.average == pytest.approx(1000.0)
    # run ends during slow start: only whole rounds count, 1+2+4 segments in 3 RTTs
    ss = nic.slow_start(1e9, 1000, 1.0, 3.5, initial_segments=1)
    assert ss.rounds == 3 and ss.average == pytest.approx(7000 / 3.5)
    # b = 2: gamma = 1.5 per round trip, more rounds to the same pipe
    assert nic.slow_start(1e8, 8948, 0.228, 10, ack_ratio=2).rounds > \
        nic.slow_start(1e8, 8948, 0.228, 10, ack_ratio=1).rounds


def test_initial_window_rfc3390():
    # RFC 3390 sec. 1 examples: 4 segments up to 1095 B, 3 up to 2190 B, 2 above
    assert nic.initial_window(536) == 4
    assert nic.initial_window(1460) == 3
    assert nic.initial_window(1448) == 3
    assert nic.initial_window(8948) == 2


def test_mathis_by_hand():
    # p = 1.5 (MSS / (RTT X))^2
    x = 778e6 / 8
    assert nic.mathis_loss_rate(x, 8948, 0.228) == pytest.approx(1.5 * (8948 / (0.228 * x)) ** 2)
    # inverting gives back the throughput: X = MSS/RTT sqrt(1.5/p)
    p = nic.mathis_loss_rate(x, 8948, 0.228)
    assert 8948 / 0.228 * math.sqrt(1.5 / p) == pytest.approx(x)


def test_udp_line_rate_by_hand():
    # UDP payload per frame MTU - 28; wire MTU + 38
    assert nic.udp_throughput("PCI-X", 1500) == pytest.approx(1e9 / 8 * 1472 / 1538)
    assert nic.udp_throughput("On-board", 9000) == pytest.approx(1e9 / 8 * 8972 / 9038)


def test_bus_limit_by_hand():
    # 32-bit PCI at 33.33 MHz: 133.32 MB/s; a UDP frame at MTU 1500 takes 1500 + 14 + 16 B
    got = nic.bus_limit("PCI", 1500, "udp")
    assert got == pytest.approx(33.33e6 * 4 * 1472 / 1530)
    # shared by both directions in a dual test
    assert nic.bus_limit("PCI", 1500, "udp", directions=2) == pytest.approx(got / 2)
    # PCIe is full duplex: no halving
    assert nic.bus_limit("On-board", 1500, "udp", directions=2) == \
        pytest.approx(nic.bus_limit("On-board", 1500, "udp"))
    # PCIe 1.x x1: 2.5e9 x 0.8 / 8 = 250 MB/s, x 128 / (128 + 24) for TLP overhead
    assert float(nic.bus("PCI-E Intel").bandwidth) == pytest.approx(250e6 * 128 / 152)


# --------------------------------------------------------------------- physical sanity

@pytest.mark.parametrize("name", list(nic.NICS))
def test_tcp_monotone_in_window_and_bounded(name):
    p = nic.Params()
    for mtu in (1500, 9000):
        x = np.array([nic.tcp_throughput(name, mtu, w, p) for w in nic.WINDOWS])
        # rises with the window; flat within 1e-4 once the window covers the pipe (residual
        # MVA's line-limited figure wanders by ~1e-5 of the line with the window)
        assert np.all(np.diff(x) >= -1e-4 * x[1:])
        line = float(nic.link(mtu, "tcp", p).bandwidth)
        assert np.all(x <= line * (1 + 2e-5))
        assert np.all(x <= np.array(nic.WINDOWS) / p.rtt * (1 + 1e-12))


@pytest.mark.parametrize("name", list(nic.NICS))
def test_tcp_and_udp_monotone_in_mtu(name):
    tcp = [nic.tcp_throughput(name, m, 256 * 2 ** 20) for m in nic.MTUS]
    udp = [nic.udp_throughput(name, m) for m in nic.MTUS]
    # UDP rises with the MTU except where the PCI NIC's receive FIFO loses frames (the
    # paper's finding, test_pci_udp_falls_above_3000_with_the_fifo_not_below)
    assert tcp == sorted(tcp) and (name == "PCI" or udp == sorted(udp))
    assert all(t < u for t, u in zip(tcp, udp))     # UDP has no ramp and 24 B less header


def test_small_window_is_window_bound():
    # 64 KiB at 228 ms: 65536 / 0.228 B/s = 2.30 Mbit/s ceiling ("users saw tens of Mbps
    # at best"); the 10 s average is just below it
    lim = nic.steady_limits("PCI", 1500, 65536)
    assert lim.binding == "window"
    assert float(lim.throughput) * 8e-6 == pytest.approx(65536 / 0.228 * 8e-6)
    assert nic.tcp_throughput("PCI", 1500, 65536) <= float(lim.throughput)


def test_longer_run_approaches_the_ceiling():
    p = nic.Params()
    long = dataclasses.replace(p, run_seconds=1000.0)
    x = nic.tcp_throughput("PCI-X", 9000, 256 * 2 ** 20, long)
    ceiling = float(nic.steady_limits("PCI-X", 9000, 256 * 2 ** 20, "tcp", p).throughput)
    assert 0.99 * ceiling < x < ceiling


# --------------------------------------------------------------------- validation

def test_errors_name_the_bad_value():
    with pytest.raises(UnknownNameError, match="unknown NIC 'ISA'"):
        nic.bus("ISA")
    with pytest.raises(InvalidValueError, match="rtt must be > 0, got 0"):
        nic.slow_start(1e6, 1448, 0.0, 10)
    with pytest.raises(InvalidValueError, match="MSS must be > 0 bytes"):
        nic.initial_window(0)
    with pytest.raises(InvalidValueError, match="rtt must be a finite number > 0"):
        nic.Params(rtt=-0.1)
    with pytest.raises(InvalidValueError, match="pci_efficiency must be in"):
        nic.Params(pci_efficiency=1.5)


def test_udp_row_roles_follow_the_bottleneck():
    # a half-efficient PCI bus binds UDP through the PCI NIC: the notes name the bus (no
    # longer line x framing); an offered load below every ceiling is carried in full.
    # Every UDP row is predicted either way (which station binds is a hypothesis)
    slow = nic.report(dataclasses.replace(P, pci_efficiency=0.5))
    pci = [r for r in slow.rows if r.quantity.startswith("UDP PCI MTU")]
    assert all(r.role == "predicted" and "bus" in r.note for r in pci)
    # the bus's ceiling, less what the receiver's 32-frame FIFO drops at rho = 1 (M/D/1/32)
    loss = nic.mg1k_loss(33.33e6 * 4 * 0.5 / 1530, 1530 / (33.33e6 * 4 * 0.5), 32)
    assert pci[0].model == pytest.approx(33.33e6 * 4 * 0.5 * 1472 / 1530 * 8e-6 * (1 - loss))
    assert "receive FIFO (32 frames)" in pci[0].note
    low = nic.report(dataclasses.replace(P, udp_offered_bps=500e6))
    udp = [r for r in low.rows if r.quantity.startswith("UDP ") and r.unit == "Mbit/s"]
    assert all(r.role == "predicted" and "offered load" in r.note for r in udp)
    assert all(r.model == pytest.approx(500) for r in udp)


def test_overrides_through_the_registry():
    from qmodels.cases import report

    r = report("nic", ["run_seconds=100"])
    base = nic.report()
    assert r.rows[0].model > base.rows[0].model      # a longer run hides the ramp
    p = with_overrides(nic.Params(), {"rtt": "0.114"})
    assert nic.bdp(p) == pytest.approx(14.25e6)
    assert r.to_dict()["case"] == "nic"



def test_parameter_sources_quote_the_figures_the_model_gives():
    # review: the ack_ratio source quoted 625 Mbit/s for b = 2 while the report's note (the
    # network) gives 612; a number in a provenance text must be the model's own (within 1 %)
    import re

    src = dataclasses.fields(nic.Params)[[f.name for f in dataclasses.fields(nic.Params)]
                                         .index("ack_ratio")].metadata["source"]
    quoted = float(re.search(r"gives (?:about )?(\d+) Mbit/s", src).group(1))
    b2 = nic.tcp_throughput("On-board", 9000, 256 * 2 ** 20,
                            dataclasses.replace(P, ack_ratio=2.0)) * 8e-6
    assert quoted == pytest.approx(b2, rel=0.01)


def test_window_monotonicity_cannot_fail_for_a_closed_network():
    # why the "TCP rises with the window" row is derived, not predicted: the network's
    # throughput is nondecreasing in the window (the closed population) whatever its
    # elements.  A slow PCI bus (5 % efficiency, binding below the line) does not break it
    slow = dataclasses.replace(P, pci_efficiency=0.05, host_packet_cost=50e-6)
    xs = [nic.tcp_rate("PCI", 1500, n, slow) for n in (1, 4, 16, 64, 256, 1024)]
    assert all(b >= a * (1 - 1e-4) for a, b in zip(xs, xs[1:]))
    assert nic.report(slow).rows[15].model == 1.0


def test_tcp_rate_never_exceeds_the_bottleneck_bound():
    # Review: at a 1 ms RTT residual MVA put X 0.57 % above the access link's capacity
    # with 58 segments (U access = 1.0057) and let it fall as the window grew, so the
    # "TCP rises with the window" row read "no".  The exact asymptote X <= 1 / D_max
    # (QSP sec. 5.2) bounds the case's rate; by hand D_max = (9000 + 38) x 8 ns
    fast = dataclasses.replace(P, rtt=0.001)
    for n in (29, 58, 117, 468):
        assert nic.tcp_rate("PCI-X", 9000, n, fast) / MSS9 <= LINE_FRAMES * (1 + 1e-12)
    rep_fast = nic.report(fast)
    assert rep_fast.rows[15].model == 1.0


def test_bdp_miss_follows_the_rtt_and_the_users_row():
    # the miss's cap is window / RTT at the set RTT (14.3 MB x 8 / 0.456 s = 251 Mbit/s),
    # not a fixed number; at RTT 114 ms the paper's 14.3 MB is rate x RTT and no miss remains
    r = nic.report(dataclasses.replace(P, rtt=0.456))
    (b,) = [x for x in r.rows if x.quantity.startswith("bandwidth-delay")]
    assert f"about {14.3e6 * 8 / 0.456 / 1e6:.0f} Mbit/s" in b.miss
    r = nic.report(dataclasses.replace(P, rtt=0.114))
    (b,) = [x for x in r.rows if x.quantity.startswith("bandwidth-delay")]
    assert not b.miss and not b.blame
    # the abstract's 'less than tens of Mbit/s': a 64 KB window over 228 ms is bound by
    # window / RTT = 65536 x 8 / 0.228 = 2.30 Mbit/s (Lazowska et al. 1984, sec. 5.2)
    (u,) = [x for x in nic.report().rows if x.quantity.startswith("an untuned host")]
    t = nic.tcp_throughput("On-board", 1500, 65536, P) * 8e-6
    assert t <= 65536 * 8 / 0.228 / 1e6 * (1 + 1e-9) and u.model == 1.0


# ------------------------------------------------------------ the PCI NIC's receive FIFO

def test_mg1k_loss_exponential_is_mm1k():
    # independent reference: M/M/1/K's closed form p_K = (1 - rho) rho^K / (1 - rho^(K+1))
    # (qm.mm1k), against the embedded chain with geometric arrivals per service
    for lam, k in ((0.5, 1), (0.9, 4), (0.93, 16), (1.3, 5)):
        assert nic.mg1k_loss(lam, 1.0, k, deterministic=False) == pytest.approx(
            qm.mm1k(lam, 1.0, k).blocking_probability, rel=1e-9)
    # M/D/1/1 is the Erlang loss of one server whatever the service shape: a / (1 + a)
    assert nic.mg1k_loss(0.7, 1.0, 1) == pytest.approx(0.7 / 1.7)


def test_mg1k_loss_refuses_bad_input():
    with pytest.raises(InvalidValueError, match="capacity"):
        nic.mg1k_loss(1.0, 1.0, 0)
    with pytest.raises(InvalidValueError, match="service_time"):
        nic.mg1k_loss(1.0, -1.0, 3)


@pytest.mark.slow
def test_md1k_loss_against_the_simulator():
    # one deterministic station with room for 4 frames at rho = 0.93, Poisson arrivals:
    # the simulator drops arrivals that find it full
    s = 1.0
    net = qm.Network([qm.Queue("fifo", s, capacity=4, distribution=qm.Deterministic())],
                     [qm.Open("f", 0.93, routing={"source": {"fifo": 1.0},
                                                  "fifo": {"sink": 1.0}})])
    sim = qm.simulate(net, seed=5, horizon=2e5, replications=8, progress=False)
    carried = sim.X["f"]
    expect = 0.93 * (1 - nic.mg1k_loss(0.93, s, 4))
    assert abs(carried.mean - expect) <= carried.half_width + 1e-3 * expect


def test_fifo_frames_from_the_driver_split():
    # 48 KB / (MTU + 18 B) frames; the 82541 gives 8 KB to transmit above 8192 B frames
    assert [nic.rx_fifo_frames("PCI", m) for m in nic.MTUS] == [
        49152 // 1518, 49152 // 3018, 49152 // 4518, 40960 // 9018]
    assert nic.rx_fifo_frames("PCI-X", 9000) == 49152 // 9018     # no jumbo cut (82545)
    assert nic.rx_fifo_frames("On-board", 9000) is None
    with pytest.raises(InvalidValueError, match="bus_rx"):
        nic.rx_fifo_frames("PCI", 9000, dataclasses.replace(P, rx_fifo_bytes=12000,
                                                            rx_fifo_jumbo_cut=4000))
    with pytest.raises(InvalidValueError, match="rx_arrivals"):
        dataclasses.replace(P, rx_arrivals="bursty")


def test_pci_udp_falls_above_3000_with_the_fifo_not_below():
    pci = [nic.udp_flow("PCI", m) for m in nic.MTUS]
    mbps = [f.delivered * 8e-6 for f in pci]
    # up to MTU 3000 near the paper's ~950 and rising with the framing share
    assert mbps[1] > mbps[0] and all(abs(x / 950 - 1) < 0.05 for x in mbps[:2])
    # beyond 3000 it falls, MTU by MTU
    assert mbps[3] < mbps[2] < mbps[1]
    # the bus is equally busy at every MTU (within 1 %): the FIFO in frames makes the shape
    rho = [f.delivered / (1 - f.fifo_loss) / f.payload * (m + 30) / (33.33e6 * 4)
           for f, m in zip(pci, nic.MTUS)]
    assert max(rho) / min(rho) < 1.01
    # without the FIFO's loss (paced arrivals) the PCI NIC rises with the MTU like the others
    paced = dataclasses.replace(P, rx_arrivals="paced")
    flat = [nic.udp_flow("PCI", m, paced).delivered for m in nic.MTUS]
    assert flat == sorted(flat)
    # PCI-X's bus is busy 12 %: its FIFO loses under 1e-5 at any MTU
    assert all(nic.udp_flow("PCI-X", m).fifo_loss < 1e-5 for m in nic.MTUS)
    rep = nic.report(paced)
    row = next(r for r in rep.rows if r.quantity.startswith("UDP of the PCI NIC"))
    assert row.model == 0.0 and row.blame == "assumption" and row.rests_on == ("rx_arrivals",)


def test_validation_holds_the_fifo_against_the_simulator(val):
    # the M/D/1/K goodput of the PCI NIC's receive FIFO at MTU 9000 against the simulator
    # dropping frames that find the FIFO full (exact method: tolerance 0)
    (v,) = [v for v in val if "receive FIFO" in v["configuration"]]
    assert v["tolerance"] == 0.0 and v["agree"], v
    f = nic.udp_flow("PCI", 9000)
    assert v["analytic"] == pytest.approx(f.delivered * 8e-6)
    assert f.fifo_loss > 0.05        # a loss the simulator must see too
