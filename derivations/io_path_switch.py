"""A bottleneck switch point on an I/O path: buffer -> DMA -> switch port.

The SPAX finding (CASES.md case 1): with one XNIF buffer of 4 packets the
buffer is the bottleneck; adding buffers moves the bottleneck to the I/O
node's DMA engine and the switch input port, so throughput hardly rises.

Model (demand level)
--------------------
Per 64-byte packet (the paper's packet size):

- DMA engine (:class:`qmodels.elements.DMAEngine`): S_dma = t_s + P / r_dma
  (set-up plus bytes at its bandwidth; Hockney's linear cost model);
- switch input port (:class:`qmodels.elements.SwitchPort`, one packet at a
  time): S_port = P / (f w), clock f, width w bytes per clock;
- interface buffer: B packet slots, each held for h seconds per packet
  (fill, wait for the port, forward).  For the bottleneck it acts as a
  B-server station with demand h: capacity B / h packets per second.

The paper does not give the hardware timings; the values below are
ASSUMPTIONS chosen to be plausible for the 1990s hardware (100 MB/s DMA
with 1 us set-up, a 25 MHz x 2 B switch port, 8 us slot holding time).

The bottleneck is argmax_k D_k / c_k (Lazowska et al., *QSP*, 1984, sec.
5.2).  Switch points (solved with sympy by :mod:`qmodels.symbolic.shifts`):

    buffer -> DMA   at  B* = h / (t_s + P / r_dma)
    DMA -> port     at  P* = t_s r_dma f w / (r_dma - f w)   (packet size)

A token pool held across several stations is not product form; the
held-resource analysis is :mod:`qmodels.analytic.decomposition`.  Here the buffer's
capacity B / h is the ceiling it imposes, which is what moves.

Checks: the regions found symbolically against :func:`bottleneck_sweep`
(numeric grid + Brent) and against exact MVA utilisations
(:func:`qmodels.mva.mva`) at B = 4 and B = 8.
"""

from __future__ import annotations

import math
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show  # noqa: E402

# ASSUMED hardware timings (see the module docstring)
PACKET = 64            # bytes (SPAX packet size, from the paper)
DMA_SETUP = 1e-6       # s
DMA_RATE = 100e6       # B/s
PORT_CLOCK = 25e6      # Hz
PORT_WIDTH = 2         # bytes per clock
HOLD = 8e-6            # s a buffer slot is held per packet
THINK = 2e-5           # s the node spends between its packets (a delay)


def io_network(slots, packet=PACKET, *, t_s=DMA_SETUP, r_dma=DMA_RATE, f=PORT_CLOCK,
               w=PORT_WIDTH, hold=HOLD, n=16):
    from qmodels.model import Closed, Delay, Network, Queue
    from qmodels.physical.elements import DMAEngine, SwitchPort

    dma = DMAEngine(setup=t_s, bandwidth=r_dma, size=packet).station("dma")
    port = SwitchPort(clock=f, width=w, size=packet).station("port")
    buf = Queue("buffer", hold, servers=slots)
    return Network([buf, dma, port, Delay("node", THINK)],
                   [Closed("pkt", n, visits={"buffer": 1, "dma": 1, "port": 1, "node": 1})])


def main() -> int:
    from qmodels.analytic.mva import mva
    from qmodels.symbolic.shifts import bottleneck_regions, bottleneck_sweep, demand_crossings

    print("Bottleneck switch on the I/O path buffer -> DMA -> switch port")
    ck = Checker("io_path_switch")
    # 1. fully symbolic crossings
    B, P, h, ts, rd, f, w = sp.symbols("B P h t_s r_dma f w", positive=True)
    net = io_network(B, P, t_s=ts, r_dma=rd, f=f, w=w, hold=h)
    (b_star,) = demand_crossings(net, B, "buffer", "dma")
    show("B* (buffer -> DMA)", sp.Eq(sp.Symbol("B^*"), b_star))
    ck.same("B* = h / (t_s + P/r_dma)", b_star, h / (ts + P / rd))
    (p_star,) = demand_crossings(net, P, "dma", "port")
    show("P* (DMA -> port)", sp.Eq(sp.Symbol("P^*"), p_star))
    ck.same("P* = t_s r f w / (r - f w)", p_star, ts * rd * f * w / (rd - f * w))

    # 2. regions in B at the assumed timings
    Bs = sp.Symbol("B", positive=True, integer=True)
    reg = bottleneck_regions(io_network(Bs), Bs, domain=(1, math.inf))
    print(reg.table())
    for line in reg.latex_lines():
        show("region", line)
    want_b = HOLD / (DMA_SETUP + PACKET / DMA_RATE)
    ck.true("one switch in B", len(reg.switch_points) == 1, repr(reg.switch_points))
    ck.close("B* numeric", reg.switch_points[0].value, want_b, rel=1e-12)
    ck.true("buffer -> dma", reg.switch_points[0].before == ("buffer",)
            and reg.switch_points[0].after == ("dma",))
    sw = bottleneck_sweep(lambda x: io_network(1, hold=HOLD / x), [1 + 0.25 * i for i in range(40)],
                          by="utilization")
    ck.close("B* from an MVA utilisation sweep", sw.switch_points[0].value, want_b, rel=1e-9)
    for slots, top in ((4, "buffer"), (8, "dma"), (16, "dma")):
        r = mva(io_network(slots))
        ck.true(f"MVA bottleneck at B = {slots} is {top}", r.bottleneck == (top,),
                f"got {r.bottleneck}")
        print(f"  B = {slots:2d}: X = {r.X['pkt']:.6g} packets/s, U = "
              + ", ".join(f"{k} {r.U[k]:.3f}" for k in ("buffer", "dma", "port")))
    # 3. regions in the packet size with many buffers
    Ps = sp.Symbol("P", positive=True)
    reg2 = bottleneck_regions(io_network(64, Ps), Ps)
    print(reg2.table())
    want_p = DMA_SETUP * DMA_RATE * PORT_CLOCK * PORT_WIDTH / (DMA_RATE - PORT_CLOCK * PORT_WIDTH)
    ck.close("P* numeric", reg2.switch_points[0].value, want_p, rel=1e-12)
    sw2 = bottleneck_sweep(lambda x: io_network(64, x), [8.0 * i for i in range(1, 60)])
    ck.close("P* from a demand sweep", sw2.switch_points[0].value, want_p, rel=1e-9)
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
