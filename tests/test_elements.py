"""Tests of qmodels.physical.elements (physical path elements).

Reference values are the source papers' own arithmetic (CASES.md, seeds/) or
derived by hand in the comment next to each assertion from the standard the
element cites; none is pasted from running qmodels.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from qmodels.errors import InvalidValueError
from qmodels.model import Queue, TokenPool
from qmodels.physical.elements import (
    CPU,
    SRIO,
    UPI,
    BufferPool,
    Disk,
    DMAEngine,
    Ethernet,
    Flash,
    Link,
    MemoryChannel,
    PCIBus,
    PCIe,
    SwitchPort,
    bandwidth_delay_product,
    effective_bandwidth,
    encoding_efficiency,
    transport_limits,
    window_limited_throughput,
)

# ---------------------------------------------------------------------------
# the papers' own arithmetic
# ---------------------------------------------------------------------------

def test_rpeak_knl_and_skylake_seed_002():
    # seed 002 (CASES.md case 4): KNL 7250 68 x 32 x 1.4 GHz = 3046.4 GFLOPS,
    # 2 x Xeon Gold 6148: 40 x 32 x 2.4 GHz = 3072 GFLOPS.
    assert CPU(68, 1.4e9, flops_per_cycle=32).rpeak == pytest.approx(3046.4e9, rel=1e-12)
    assert CPU(40, 2.4e9, flops_per_cycle=32).rpeak == pytest.approx(3072e9, rel=1e-12)


def test_upi_two_links_as_the_paper_states_it():
    # seed 002 line 136: "10.4 GT/s ... 2 links x 2 directions = 41.6 GB/s":
    # 10.4e9 x 2 x 2 = 41.6e9 only with 1 byte per transfer per direction.
    assert UPI(10.4e9, links=2, directions=2).bandwidth == pytest.approx(41.6e9, rel=1e-12)
    # The two-byte reading (20.8 GB/s per link per direction): 83.2 GB/s,
    # and one direction of two links is the paper's 41.6 again.
    assert UPI(10.4e9, links=2, bytes_per_transfer=2).bandwidth == pytest.approx(83.2e9)
    assert UPI(10.4e9, links=2, directions=1, bytes_per_transfer=2).bandwidth == \
        pytest.approx(41.6e9)


@pytest.mark.parametrize(
    "mtu, transport, payload",
    [
        # payload = MTU - IPv4 20 - (TCP 20 | UDP 8)  (RFC 791, 793, 768)
        (1500, "tcp", 1460),
        (1500, "udp", 1472),
        (9000, "tcp", 8960),
        (9000, "udp", 8972),
    ],
)
def test_ethernet_framing_efficiency(mtu, transport, payload):
    # on the wire per frame: preamble+SFD 8 + header 14 + MTU + FCS 4 +
    # IFG 12 = MTU + 38 (IEEE 802.3 clauses 3.1.1, 4.4.2).
    wire = mtu + 8 + 14 + 4 + 12
    link = Ethernet(1e9, mtu=mtu, transport=transport)
    assert link.efficiency == pytest.approx(payload / wire, rel=1e-15)
    assert link.bandwidth == pytest.approx(1e9 / 8 * payload / wire, rel=1e-15)


def test_ethernet_efficiency_hand_values():
    # 1460/1538 = 0.949284..., 1472/1538 = 0.957087..., 8960/9038 = 0.991370...,
    # 8972/9038 = 0.992697...
    assert Ethernet(1e9, 1500, "tcp").efficiency == pytest.approx(0.94928, abs=1e-5)
    assert Ethernet(1e9, 1500, "udp").efficiency == pytest.approx(0.95709, abs=1e-5)
    assert Ethernet(1e9, 9000, "tcp").efficiency == pytest.approx(0.99137, abs=1e-5)
    assert Ethernet(1e9, 9000, "udp").efficiency == pytest.approx(0.99270, abs=1e-5)
    # TCP timestamps (RFC 7323): 12 B more header, 1448 B per 1500-B packet
    assert Ethernet(1e9, 1500, "tcp", tcp_options=12).payload == 1448


def test_window_limited_tcp_rate_64k_228ms():
    # 64 KiB = 65536 B per 228 ms round trip: 65536 / 0.228 = 287,438.6 B/s
    # = 2.2995 Mbit/s -- the "tens of Mbps" users saw were window-bound.
    rate = window_limited_throughput(65536, 0.228)
    assert rate == pytest.approx(287438.596, rel=1e-6)
    assert rate * 8 / 1e6 == pytest.approx(2.29951, rel=1e-5)


def test_bandwidth_delay_product_vs_paper():
    # seed 003 line 120-122: RTT 228 ms, "BDP 14.3 Mbytes" on 1 Gbps NICs.
    # RTT x rate = 0.228 x 1e9 / 8 = 28.5e6 B: twice the paper's figure.
    bdp = bandwidth_delay_product(1e9, 0.228)
    assert bdp == pytest.approx(28.5e6, rel=1e-12)
    assert bdp != pytest.approx(14.3e6, rel=0.05)
    # The paper's 14.3 MB is 1 Gbit/s x the ONE-WAY delay 114 ms (14.25e6 B).
    assert bandwidth_delay_product(1e9, 0.228 / 2) == pytest.approx(14.3e6, rel=0.01)


def test_transport_limits_takes_the_least():
    # MTU 9000 TCP line: 1e9/8 x 8960/9038 = 123,921,221 B/s; window 256 MiB
    # over 228 ms: 1.18e9 B/s; 32-bit 33.33 MHz PCI: 133.3e6 B/s.
    link = Ethernet(1e9, 9000, "tcp")
    lim = transport_limits(link, window=256 * 2**20, rtt=0.228, bus=PCIBus(33.33e6, 4).bandwidth)
    assert lim.binding == "line"
    assert lim.throughput == pytest.approx(1e9 / 8 * 8960 / 9038)
    lim = transport_limits(link, window=65536, rtt=0.228)
    assert lim.binding == "window"
    assert lim.throughput == pytest.approx(65536 / 0.228)
    lim = transport_limits(link, bus=100e6)
    assert lim.binding == "bus" and lim.throughput == 100e6
    assert "binding='bus'" in repr(lim)
    with pytest.raises(InvalidValueError, match="give both window and rtt"):
        transport_limits(link, window=65536)


# ---------------------------------------------------------------------------
# storage, engines, buses
# ---------------------------------------------------------------------------

def test_disk_service_time_by_hand():
    # 8 ms seek, 7200 rpm -> 30/7200 = 4.1667 ms, 4096 B at 50 MB/s =
    # 81.92 us; miss rate 0.75, hit 0.1 ms:
    # 0.75 x 0.01224859 + 0.25 x 0.0001 = 0.00918644 + 0.000025 = 0.00921144 s
    d = Disk(seek=0.008, rpm=7200, transfer_rate=50e6, size=4096, miss_rate=0.75,
             hit_time=1e-4)
    assert d.rotational_latency == pytest.approx(30 / 7200)
    expected = 0.75 * (0.008 + 30 / 7200 + 4096 / 50e6) + 0.25 * 1e-4
    assert d.service_time == pytest.approx(expected, rel=1e-12)
    assert d.service_time == pytest.approx(0.00921144, rel=1e-6)
    st_ = d.station("d1")
    assert isinstance(st_, Queue) and st_.name == "d1" and st_.service == d.service_time
    assert d.station().name == "disk"


def test_flash_fsync_cost():
    # 1 GB written with 1000 fsyncs of 2 ms at 500 MB/s: 2 s + 2 s = 4 s
    f = Flash(bandwidth=500e6, size=1e9, per_call=2e-3, calls=1000)
    assert f.service_time == pytest.approx(4.0)
    # half-performance size: fixed part 2 s x 500 MB/s = 1e9 B
    assert f.half_performance_size == pytest.approx(1e9)
    assert f.effective_bandwidth() == pytest.approx(250e6)


def test_dma_and_switch_port():
    # DMA: 1 us set-up + 64 B at 100 MB/s (0.64 us) = 1.64 us
    assert DMAEngine(1e-6, 100e6, 64).service_time == pytest.approx(1.64e-6)
    # port: 64 B at 50 MHz x 4 B/clock = 200 MB/s -> 0.32 us
    port = SwitchPort(clock=50e6, width=4, size=64)
    assert port.bandwidth == pytest.approx(200e6)
    assert port.service_time == pytest.approx(0.32e-6)
    pool = port.pool("port", "link")
    assert isinstance(pool, TokenPool) and pool.tokens == 1
    assert (pool.acquire, pool.release) == ("port", "link")


def test_buffer_pool_is_a_token_pool():
    b = BufferPool("xnif", slots=4, packet_size=64)  # SPAX default (seed 004 line 119)
    assert b.capacity_bytes == 256
    p = b.pool("dma", "port")
    assert (p.name, p.tokens, p.acquire, p.release) == ("xnif", 4, "dma", "port")
    assert b.replace(slots=16).pool("dma", "port").tokens == 16


def test_buses_and_memory():
    # PCI 32 bit at 33.33 MHz: 133.32 MB/s (PCI Local Bus Spec 3.0)
    assert PCIBus(33.33e6, 4).bandwidth == pytest.approx(133.32e6)
    # PCIe 3.0 x8: 8e9 x 8 x 128/130 / 8 = 7.8769e9 B/s; PCIe 1.0 x1: 2.5e9 x 0.8/8
    assert PCIe(8e9, 8).bandwidth == pytest.approx(8e9 * 8 * 128 / 130 / 8)
    assert PCIe(2.5e9, 1).bandwidth == pytest.approx(250e6)
    # with 256 B max payload and 24 B TLP overhead: x 256/280
    assert PCIe(8e9, 8, tlp_overhead=24, max_payload=256).bandwidth == \
        pytest.approx(8e9 * 8 * 128 / 130 / 8 * 256 / 280)
    # DDR4-2666, 6 channels x 8 B: 127.968e9 B/s (the seed's 128 GB/s per socket)
    assert MemoryChannel(2666e6, channels=6).bandwidth == pytest.approx(127.968e9)
    # SRIO x4 at 5 Gbaud, 8b/10b: 2e9 B/s
    assert SRIO(5e9, lanes=4).bandwidth == pytest.approx(2e9)
    assert encoding_efficiency("8b/10b") == sp.Rational(4, 5)
    assert encoding_efficiency("128b/130b") == sp.Rational(64, 65)


def test_cpu_time_scales_with_clock():
    # 10 ms measured at 1.6 GHz takes 10 x 1.6/2.4 = 6.667 ms at 2.4 GHz
    c = CPU(4, 2.4e9, seconds=0.010, ref_clock=1.6e9)
    assert c.service_time == pytest.approx(0.010 * 1.6 / 2.4)
    assert c.station().servers == 4
    # 1e6 instructions at CPI 1.5 and 3 GHz: 0.5 ms
    assert CPU(1, 3e9, instructions=1e6, cpi=1.5).service_time == pytest.approx(5e-4)


def test_ethernet_wire_bytes_counts_frames_and_padding():
    e = Ethernet(1e9, 1500, "tcp")
    # 100 B: 14 + 40 + 100 + 4 = 158 B MAC frame + 8 + 12 = 178 B
    assert e.wire_bytes(100) == 178
    # 1 B: padded to the 64-B minimum frame: 64 + 20 = 84 B
    assert e.wire_bytes(1) == 84
    # 1461 B: one full frame (1538) + a frame with 1 B (84) = 1622
    assert e.wire_bytes(1461) == 1622
    assert e.transfer_time(1461) == pytest.approx(1622 * 8 / 1e9)


def test_effective_bandwidth_hockney():
    # t0 = 10 us, r = 1 GB/s: n_1/2 = 10,000 B delivers half the rate
    link = Link(1e9, overhead=10e-6)
    assert link.half_performance_size == pytest.approx(1e4)
    assert link.effective_bandwidth(1e4) == pytest.approx(0.5e9)
    assert effective_bandwidth(128, 1e9, 10e-6) == pytest.approx(128 / (10e-6 + 128e-9))


@settings(deadline=None)
@given(st.floats(1.0, 1e7), st.floats(1e6, 1e10), st.floats(0.0, 1e-3))
def test_effective_bandwidth_below_peak_and_increasing(m, r, t0):
    b = effective_bandwidth(m, r, t0)
    assert b <= r * (1 + 1e-12)
    assert effective_bandwidth(2 * m, r, t0) >= b * (1 - 1e-12)


# ---------------------------------------------------------------------------
# symbols
# ---------------------------------------------------------------------------

def test_elements_take_sympy_symbols():
    s, b, m = sp.symbols("s b m", positive=True)
    dma = DMAEngine(s, b, 64)
    assert sp.simplify(dma.service_time - (s + 64 / b)) == 0
    q = dma.station()
    assert q.service == dma.service_time
    d = Disk(s, 7200, b, 4096, miss_rate=m)
    assert sp.simplify(d.service_time - m * (s + sp.Rational(30, 7200) + 4096 / b)) == 0
    c, f = sp.symbols("c f", positive=True)
    assert CPU(68, c, flops_per_cycle=f).rpeak == 68 * f * c
    # symbolic = numeric at a point
    e = Ethernet(b, 1500, "tcp", size=m)
    assert float(e.service_time.subs({b: 1e9, m: 3000})) == pytest.approx(
        Ethernet(1e9, 1500, "tcp", size=3000).service_time)


# ---------------------------------------------------------------------------
# units: typed errors naming the parameter
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Disk(0.008, 7200, -1, 4096), "Disk: transfer_rate"),
        (lambda: Disk(0.008, 0, 50e6, 4096), "Disk: rpm"),
        (lambda: Disk(0.008, 7200, 50e6, 4096, miss_rate=1.5),
         r"Disk: miss_rate must be in \[0, 1\]"),
        (lambda: Disk(-0.008, 7200, 50e6, 4096), "Disk: seek"),
        (lambda: Flash(0), "Flash: bandwidth"),
        (lambda: DMAEngine(1e-6, -5), "DMAEngine: bandwidth"),
        (lambda: PCIBus(0, 4), "PCIBus: clock"),
        (lambda: PCIe(-8e9, 8), "PCIe: rate"),
        (lambda: PCIe(8e9, 0), "PCIe: lanes"),
        (lambda: MemoryChannel(0), "MemoryChannel: rate"),
        (lambda: Link(0), "Link: bandwidth"),
        (lambda: Ethernet(0), "Ethernet: rate"),
        (lambda: Ethernet(-1e9), "Ethernet: rate must be a finite positive number, got -1"),
        (lambda: SRIO(0), "SRIO: baud"),
        (lambda: UPI(0), "UPI: rate"),
        (lambda: UPI(10.4e9, directions=3), "UPI: directions must be 1 or 2"),
        (lambda: CPU(4, 0), "CPU: clock"),
        (lambda: CPU(0, 2e9), "CPU: cores"),
        (lambda: SwitchPort(50e6, 0), "SwitchPort: width"),
        (lambda: BufferPool("b", slots=0), "BufferPool: slots"),
        (lambda: BufferPool("b", 4, packet_size=0), "BufferPool: packet_size"),
        (lambda: window_limited_throughput(65536, 0), "rtt"),
        (lambda: bandwidth_delay_product(-1e9, 0.2), "rate_bps"),
        (lambda: encoding_efficiency("9b/11b"), "encoding must be one of"),
        (lambda: encoding_efficiency(1.5), r"encoding efficiency must be in \(0, 1\]"),
        (lambda: Ethernet(1e9, mtu=40, transport="tcp"), "mtu 40 leaves no room"),
        (lambda: Ethernet(1e9, transport="sctp"), "transport must be 'tcp', 'udp' or 'raw'"),
        (lambda: DMAEngine(1e-6, 1e8).service_time, "DMAEngine: size .* is not set"),
        (lambda: CPU(4, 2e9).service_time, "CPU: no work per job"),
        (lambda: CPU(4, 2e9).rpeak, "CPU: rpeak needs flops_per_cycle"),
        (lambda: CPU(4, 2e9, seconds=1, cpi=1, instructions=1), "not both"),
        (lambda: CPU(4, 2e9, instructions=1), "instructions and cpi go together"),
        (lambda: PCIe(sp.Symbol("g", positive=True), 8), "give encoding explicitly"),
    ],
)
def test_invalid_parameters_raise_typed_errors(make, match):
    with pytest.raises(InvalidValueError, match=match):
        make()


def test_symbolic_negative_rate_is_rejected():
    neg = sp.Symbol("r", negative=True)
    with pytest.raises(InvalidValueError, match="Link: bandwidth must be positive"):
        Link(neg)
    # an unknown-sign symbol is not provably wrong: accepted
    Link(sp.Symbol("r"))


def test_replace_revalidates():
    d = DMAEngine(1e-6, 1e8, 64)
    assert d.replace(size=128).service_time == pytest.approx(1e-6 + 128 / 1e8)
    with pytest.raises(InvalidValueError, match="DMAEngine: bandwidth"):
        d.replace(bandwidth=0)
    assert math.isclose(d.effective_bandwidth(), 64 / (1e-6 + 64 / 1e8))
