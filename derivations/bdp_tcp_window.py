"""The bandwidth-delay product and the window-limited TCP rate.

Derivation
----------
A TCP sender keeps at most one window W of unacknowledged bytes in flight
and gets the acknowledgements one round trip later, so

    X_window = W / RTT                       ([RFC 7323] sec. 1.1;
                                              Stevens, TCP/IP Illustrated
                                              vol. 1, 1994, sec. 20.7)
    BDP = rate x RTT                         (bytes needed to fill the path)
    X   <= min(line rate x framing efficiency, W / RTT, bus)

The same result as a closed queueing network: the window is a population
of N = W / MSS segments that cycle through the bottleneck link (a queue,
t = frame bits / line rate per segment) and the round-trip propagation (a
delay, RTT).  Asymptotic bounds (Lazowska et al., *QSP*, 1984, sec. 5.2):

    X(N) <= min(1/t, N / (t + RTT)),   N* = (t + RTT) / t = 1 + RTT / t

so the knee N* is the bandwidth-delay product counted in segments (plus
the one in transmission): a window below it is window-limited.

Numbers (CASES.md case 5): 1 Gbit/s NICs, RTT 228 ms.  BDP = 1e9 x 0.228
/ 8 = 28.5 MB.  The paper states 14.3 MB, which is 1 Gbit/s times 114 ms,
the one-way delay: the paper's figure is half the round-trip BDP.  A 64 KiB
window gives 65536 / 0.228 B/s = 2.30 Mbit/s: "tens of Mbps" needs a
window of several MB.

Checks: :func:`qmodels.elements.bandwidth_delay_product` and
:func:`~qmodels.elements.window_limited_throughput` give the same numbers;
N* from :func:`qmodels.symbolic.symbolic_bounds` equals 1 + RTT/t; exact
MVA (:func:`qmodels.mva.mva`) of the window network is below N/(t + RTT)
and close to it for a small window, and reaches the link rate for a
window well above the BDP.
"""

from __future__ import annotations

import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _check import Checker, show  # noqa: E402

RATE = 1e9        # bit/s
RTT = 0.228       # s
MTU = 9000


def main() -> int:
    from qmodels.analytic.mva import mva
    from qmodels.model import Closed, Delay, Network, Queue
    from qmodels.physical.elements import (
        Ethernet,
        bandwidth_delay_product,
        window_limited_throughput,
    )
    from qmodels.symbolic import symbolic_bounds

    print("Bandwidth-delay product and window-limited TCP")
    r, rtt, W, t, N = sp.symbols("r RTT W t N", positive=True)
    bdp = r * rtt / 8
    xw = W / rtt
    show("BDP [bytes], r in bit/s", sp.Eq(sp.Symbol("BDP"), bdp))
    show("window-limited rate [B/s]", sp.Eq(sp.Symbol("X_W"), xw))
    ck = Checker("bdp_tcp_window")
    ck.close("BDP for 1 Gbit/s x 228 ms = 28.5 MB", bdp.subs({r: RATE, rtt: RTT}), 28.5e6,
             rel=1e-12)
    ck.close("elements.bandwidth_delay_product", bandwidth_delay_product(RATE, RTT), 28.5e6,
             rel=1e-12)
    half = float(bdp.subs({r: RATE, rtt: RTT / 2})) / 1e6
    ck.close("the paper's 14.3 MB is rate x RTT/2 = 14.25 MB, to 0.05 MB",
             half, 14.3, rel=0, abs_=0.05 + 1e-9)
    print(f"  BDP = {float(bdp.subs({r: RATE, rtt: RTT})) / 1e6:.4g} MB; the paper's 14.3 MB "
          f"matches rate x RTT/2 = {half:.4g} MB (the one-way delay)")
    x64 = float(xw.subs({W: 65536, rtt: RTT}))
    ck.close("64 KiB / 228 ms in Mbit/s", x64 * 8 / 1e6, 65536 * 8 / 0.228 / 1e6, rel=1e-12)
    ck.close("elements.window_limited_throughput", window_limited_throughput(65536, RTT), x64,
             rel=1e-12)
    print(f"  64 KiB window at 228 ms: {x64 * 8 / 1e6:.4g} Mbit/s")
    # closed-network view
    net = Network([Queue("link", t), Delay("path", rtt)],
                  [Closed("win", N, visits={"link": 1, "path": 1})])
    b = symbolic_bounds(net)
    show("N* of the window network", b.n_star)
    ck.same("N* = 1 + RTT/t", b.n_star, 1 + rtt / t)
    eth = Ethernet(rate=RATE, mtu=MTU, transport="tcp")
    mss = eth.payload                          # bytes of data per segment
    t_seg = (MTU + eth.framing) * 8 / RATE     # s on the wire per full frame
    n_star = 1 + RTT / t_seg
    print(f"  MTU {MTU}: MSS {mss} B, {t_seg * 1e6:.4g} us per frame, "
          f"N* = {n_star:.6g} segments = {n_star * mss / 1e6:.4g} MB of window")
    ck.close("N* x MSS ~ BDP x efficiency", (n_star - 1) * mss, bdp.subs({r: RATE, rtt: RTT})
             * eth.efficiency, rel=1e-9)
    for window in (65536, 4 * 2**20, 256 * 2**20):
        n = max(1, int(window // mss))
        numnet = Network([Queue("link", t_seg), Delay("path", RTT)],
                         [Closed("win", n, visits={"link": 1, "path": 1})])
        X = mva(numnet).X["win"]
        bound = min(1 / t_seg, n / (t_seg + RTT))
        ck.true(f"X <= ABA for a {window} B window", X <= bound * (1 + 1e-12))
        if n < n_star / 10:
            ck.close(f"{window} B window is window-limited", X, n / (t_seg + RTT), rel=1e-6)
        if n > 3 * n_star:
            ck.close(f"{window} B window fills the link", X, 1 / t_seg, rel=1e-6)
        print(f"  window {window / 2**20:8.4g} MiB: {n:6d} segments, "
              f"{X * mss * 8 / 1e6:8.4g} Mbit/s of data")
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
