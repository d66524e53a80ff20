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


def test_table_rows_and_roles(rep):
    assert len(rep.rows) == 5 + 8 + 1
    assert not [r for r in rep.rows if r.role == "fitted"]     # nothing fitted
    # the measured TCP rates are predicted; UDP at line x framing and rate x RTT are derived
    assert [r.role for r in rep.rows[:5]] == ["predicted"] * 5
    assert all(r.role == "derived" for r in rep.rows[5:])
    assert {r.paper for r in rep.rows[:5]} == set(nic.TABLE2_TCP_MBPS.values())


def test_predicted_rows_meet_the_bar_or_say_why(rep):
    for r in rep.rows:
        if r.miss:
            continue
        assert abs(r.rel_error) <= BAR, (r.quantity, r.paper, r.model)
    assert [r.quantity for r in rep.rows if r.miss] == [
        "bandwidth-delay product, 1 Gbit/s x 228 ms"]


def test_table2_within_five_percent(rep):
    # the slow-start ramp has no free parameter; it lands within 4 % of every NIC
    for r in rep.rows[:5]:
        assert abs(r.rel_error) <= 0.05, r.quantity
    # and the NIC type does not matter in the model (no bus binds at MTU 9000),
    # as the paper concludes: its own spread is 778..800, 2.8 %
    assert len({round(r.model, 9) for r in rep.rows[:5]}) == 1


def test_bdp_by_hand(rep):
    # rate x RTT: 1e9 bit/s x 0.228 s / 8 = 28.5e6 B
    assert nic.bdp() == pytest.approx(1e9 * 0.228 / 8) == pytest.approx(28.5e6)
    # the paper's 14.3 MB is the one-way figure: 1e9 x 0.114 / 8 = 14.25e6 B
    assert nic.PAPER_BDP == pytest.approx(1e9 * 0.114 / 8, rel=0.004)
    row = rep.rows[-1]
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
    for mtu in nic.MTUS:
        x = np.array([nic.tcp_throughput(name, mtu, w, p) for w in nic.WINDOWS])
        assert np.all(np.diff(x) >= -1e-9 * x[1:])
        line = float(nic.link(mtu, "tcp", p).bandwidth)
        assert np.all(x <= line * (1 + 1e-12))
        assert np.all(x <= np.array(nic.WINDOWS) / p.rtt * (1 + 1e-12))
        assert np.all(x <= p.line_bps / 8)


@pytest.mark.parametrize("name", list(nic.NICS))
def test_tcp_and_udp_monotone_in_mtu(name):
    tcp = [nic.tcp_throughput(name, m, 256 * 2 ** 20) for m in nic.MTUS]
    udp = [nic.udp_throughput(name, m) for m in nic.MTUS]
    assert tcp == sorted(tcp) and udp == sorted(udp)
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


def test_overrides_through_the_registry():
    from qmodels.cases import report

    r = report("nic", ["run_seconds=100"])
    base = nic.report()
    assert r.rows[0].model > base.rows[0].model      # a longer run hides the ramp
    p = with_overrides(nic.Params(), {"rtt": "0.114"})
    assert nic.bdp(p) == pytest.approx(14.25e6)
    assert r.to_dict()["case"] == "nic"

