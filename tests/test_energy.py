"""Tests of qmodels.physical.energy (E = P x T from a queueing solution).

Reference values are hand-computed in the comments from E = P x T and the
utilisation law, or taken from the all-flash energy paper's power table
(seeds/001, Table 1: read/write W, HDD 6.8/6.8, SATA SSD 2.1/3.7, NVMe 9/12,
NVDIMM-N 2/2).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from qmodels.analytic.mva import mva
from qmodels.errors import InvalidValueError, UnknownNameError
from qmodels.model import Closed, Delay, Network, Open, Power, Queue
from qmodels.physical.energy import EnergyReport, busy_power, device_energy, energy, energy_law
from qmodels.results import Result

AFA = {  # seeds/001 Table 1, W
    "hdd": Power(busy=6.8, read=6.8, write=6.8),
    "ssd": Power(busy=3.7, read=2.1, write=3.7),
    "nvme": Power(busy=12, read=9, write=12),
    "nvdimm": Power(busy=2, read=2, write=2),
}


def one_disk(lam=10.0, S=0.02, busy=10.0, idle=4.0):
    return Network([Queue("disk", S, power=Power(busy=busy, idle=idle))],
                   [Open("io", lam, visits={"disk": 1})])


# ---------------------------------------------------------------------------
# E = P x T
# ---------------------------------------------------------------------------

def test_energy_law_is_p_times_t():
    assert energy_law(6.8, 10.0) == pytest.approx(68.0)
    p, t = sp.symbols("P T", positive=True)
    assert energy_law(p, t) == p * t


def test_single_station_by_hand():
    # lambda = 10/s, S = 0.02 s -> U = 0.2 (utilisation law).  Over 100 s:
    # busy 20 s x 10 W = 200 J, idle 80 s x 4 W = 320 J, total 520 J.
    # 1000 transactions: 0.52 J each = P_busy D + P_idle (1-U)/X
    # = 10 x 0.02 + 4 x 0.8 / 10 = 0.2 + 0.32.
    rep = energy(mva(one_disk()), period=100, bytes_per_transaction=4096)
    assert isinstance(rep, EnergyReport)
    assert rep.utilization["disk"] == pytest.approx(0.2)
    assert rep.busy_energy["disk"] == pytest.approx(200.0)
    assert rep.idle_energy["disk"] == pytest.approx(320.0)
    assert rep.total_energy == pytest.approx(520.0)
    assert rep.total_power == pytest.approx(5.2)
    assert rep.transactions == pytest.approx(1000.0)
    assert rep.energy_per_transaction == pytest.approx(0.52)
    assert rep.energy_per_byte == pytest.approx(0.52 / 4096)
    assert rep.transactions_per_joule == pytest.approx(1 / 0.52)
    assert rep.tps_per_watt == pytest.approx(10 / 5.2)
    df = rep.to_frame()
    assert df.loc["disk", "E"] == pytest.approx(520.0)
    assert df.loc["disk", "E_tx"] == pytest.approx(0.52)
    text = repr(rep)
    assert "energy per transaction 0.52 J" in text and "disk" in text


def test_without_period_gives_power_and_per_transaction():
    rep = energy(mva(one_disk()))
    assert rep.total_energy is None and rep.energy is None
    assert rep.energy_per_transaction == pytest.approx(0.52)
    assert "E [J]" not in repr(rep)


def test_multi_server_counts_every_server():
    # closed, one 4-core CPU at S = 0.01 and a delay Z = 0.1 with N = 1:
    # X = 1 / 0.11, U per core = X S / 4 = 0.022727...; 4 cores with
    # P_busy 20 W, P_idle 5 W: P = 4 (20 U + 5 (1 - U)) = 20 + 60 U.
    net = Network([Queue("cpu", 0.01, servers=4, power=Power(busy=20, idle=5))],
                  [Closed("tx", 1, visits={"cpu": 1}, think_time=0.1)])
    rep = energy(mva(net))
    U = (1 / 0.11) * 0.01 / 4
    assert rep.power["cpu"] == pytest.approx(20 + 60 * U)
    assert rep.energy_per_transaction == pytest.approx((20 + 60 * U) * 0.11)


def test_delay_station_draws_busy_power_per_job():
    # open lambda = 2/s through a delay of 0.5 s: on average 1 job in
    # service, 3 W each -> 3 W; 1.5 J per transaction; idle power ignored.
    net = Network([Delay("net", 0.5, power=Power(busy=3, idle=1))],
                  [Open("m", 2.0, visits={"net": 1})])
    rep = energy(mva(net), period=10)
    assert rep.power["net"] == pytest.approx(3.0)
    assert rep.energy["net"] == pytest.approx(30.0)
    assert rep.energy_per_transaction == pytest.approx(1.5)
    assert any("idle power ignored" in n for n in rep.notes)


@settings(deadline=None, max_examples=40)
@given(
    N=st.integers(1, 20),
    Z=st.floats(0.0, 2.0),
    d=st.lists(st.floats(0.001, 0.5), min_size=2, max_size=2),
    pw=st.lists(st.floats(0.1, 50.0), min_size=4, max_size=4),
    T=st.floats(1.0, 1e4),
)
def test_per_transaction_equals_total_over_completed(N, Z, d, pw, T):
    net = Network(
        [Queue("a", d[0], power=Power(busy=pw[0], idle=pw[1])),
         Queue("b", d[1], power=Power(busy=pw[2], idle=pw[3]))],
        [Closed("tx", N, visits={"a": 1, "b": 1}, think_time=Z)],
    )
    r = mva(net)
    rep = energy(r, period=T)
    completed = r.X["tx"] * T
    assert rep.energy_per_transaction == pytest.approx(rep.total_energy / completed, rel=1e-12)
    # and the demand form: sum P_busy D + idle share / X
    X = r.X["tx"]
    form = sum(pw[2 * k] * d[k] + pw[2 * k + 1] * (1 - r.U[s]) / X
               for k, s in enumerate(("a", "b")))
    assert rep.energy_per_transaction == pytest.approx(form, rel=1e-10)
    # given counts are used as given
    rep2 = energy(r, period=T, transactions=completed / 2)
    assert rep2.energy_per_transaction == pytest.approx(2 * rep.energy_per_transaction)


# ---------------------------------------------------------------------------
# the all-flash paper's power table
# ---------------------------------------------------------------------------

def test_afa_energy_ratios_for_equal_times():
    # same busy time T on each device: energies are in the ratio of powers
    T = 7.0
    e = {k: {op: device_energy(p, T, read_fraction=1.0 if op == "read" else 0.0)
             for op in ("read", "write")} for k, p in AFA.items()}
    assert e["hdd"]["write"] / e["nvdimm"]["write"] == pytest.approx(6.8 / 2)    # 3.4
    assert e["hdd"]["read"] / e["nvdimm"]["read"] == pytest.approx(3.4)
    assert e["ssd"]["write"] / e["ssd"]["read"] == pytest.approx(3.7 / 2.1)
    # "NVMe writes need about twice the power of HDD" (seed 001 line 141)
    assert e["nvme"]["write"] / e["hdd"]["write"] == pytest.approx(12 / 6.8)  # 1.76
    assert e["nvme"]["write"] / e["nvdimm"]["write"] == pytest.approx(6.0)
    assert e["hdd"]["write"] == pytest.approx(6.8 * 7.0)


def test_afa_devices_in_a_network_with_read_fraction():
    # four devices at the same utilisation (same demand), no idle power:
    # energy ratios are the busy-power ratios; a 30 % read mix on the SSD
    # gives 0.3 x 2.1 + 0.7 x 3.7 = 3.22 W.
    net = Network([Queue(k, 0.01, power=p) for k, p in AFA.items()],
                  [Open("io", 20.0, visits={k: 1 for k in AFA})])
    rep = energy(mva(net), period=60, read_fraction={"ssd": 0.3, "nvme": 0.0, "hdd": 1.0})
    U = 20 * 0.01
    assert rep.busy_power["ssd"] == pytest.approx(3.22)
    assert rep.energy["ssd"] == pytest.approx(3.22 * U * 60)
    assert rep.energy["hdd"] / rep.energy["nvdimm"] == pytest.approx(3.4)
    assert rep.energy["nvme"] / rep.energy["hdd"] == pytest.approx(12 / 6.8)
    assert busy_power(AFA["ssd"]) == 3.7


# ---------------------------------------------------------------------------
# symbolic and simulated results
# ---------------------------------------------------------------------------

def _symbolic_result(lam, S):
    """Open M/M/1 solved by hand: U = lam S, Q = U / (1 - U), R = S/(1-U)."""
    net = Network([Queue("disk", S, power=Power(busy=sp.Symbol("Pb", positive=True),
                                              idle=sp.Symbol("Pi", positive=True)))],
                  [Open("io", lam, visits={"disk": 1})])
    U = lam * S
    return Result(method="hand", network=net, class_throughput=[lam],
                  class_response_time=[S / (1 - U)], station_throughput=[[lam]],
                  station_queue_length=[[U / (1 - U)]], station_response_time=[[S / (1 - U)]],
                  station_utilization=[[U]])


@settings(deadline=None, max_examples=30)
@given(lam=st.floats(0.1, 40.0), S=st.floats(0.001, 0.02), pb=st.floats(0.5, 20),
       pi_=st.floats(0.0, 10), T=st.floats(1, 1000))
def test_symbolic_energy_equals_numeric_at_sampled_points(lam, S, pb, pi_, T):
    l_, s_, t_ = sp.symbols("lambda S T", positive=True)
    rep = energy(_symbolic_result(l_, s_), period=t_)
    Pb, Pi = sp.symbols("Pb Pi", positive=True)
    # hand form: E = Pb lam S T + Pi (1 - lam S) T; per tx = E / (lam T)
    assert sp.simplify(rep.total_energy - (Pb * l_ * s_ * t_ + Pi * (1 - l_ * s_) * t_)) == 0
    if lam * S >= 1:
        return
    point = {l_: lam, s_: S, t_: T, Pb: pb, Pi: pi_}
    num = energy(mva(one_disk(lam, S, pb, pi_)), period=T)
    assert float(rep.total_energy.subs(point)) == pytest.approx(num.total_energy, rel=1e-9)
    assert float(rep.energy_per_transaction.subs(point)) == pytest.approx(
        num.energy_per_transaction, rel=1e-9)


class _Estimate:
    def __init__(self, mean):
        self.mean = mean
        self.ci = (mean * 0.9, mean * 1.1)


class _SimLike:
    """A simulated result's shape: same names, figures are estimates."""

    def __init__(self, net, X, U):
        self.network = net
        self.throughput = {"io": _Estimate(X)}
        self.utilization = {"disk": _Estimate(U)}


def test_simulated_result_uses_means():
    rep = energy(_SimLike(one_disk(), 10.0, 0.2), period=100)
    assert rep.total_energy == pytest.approx(520.0)
    # a numpy float has a .mean method, not an attribute: used as is
    rep = energy(_SimLike(one_disk(), np.float64(10.0), np.float64(0.2)))
    assert rep.energy_per_transaction == pytest.approx(0.52)


def test_zero_throughput_is_infinite_per_transaction():
    net = Network([Queue("disk", 0.02, power=Power(busy=10, idle=4))],
                  [Closed("io", 0, visits={"disk": 1})])
    rep = energy(mva(net))
    assert rep.energy_per_transaction == math.inf
    assert rep.transactions_per_joule == 0.0
    assert any("X = 0" in n for n in rep.notes)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def test_errors():
    r = mva(one_disk())
    with pytest.raises(InvalidValueError, match="period must be a finite positive number"):
        energy(r, period=-1)
    with pytest.raises(InvalidValueError, match="needs the period"):
        energy(r, transactions=100)
    with pytest.raises(InvalidValueError, match="transactions must be a finite positive"):
        energy(r, period=1, transactions=0)
    with pytest.raises(InvalidValueError, match="bytes_per_transaction must be"):
        energy(r, bytes_per_transaction=-4)
    with pytest.raises(UnknownNameError, match="read_fraction names unknown station 'ssd'"):
        energy(r, read_fraction={"ssd": 0.5})
    with pytest.raises(UnknownNameError, match="power names unknown station 'x'"):
        energy(r, power={"x": Power(1)})
    with pytest.raises(InvalidValueError, match="power for station 'disk' must be a Power"):
        energy(r, power={"disk": 3.0})
    with pytest.raises(InvalidValueError, match="gives no read or write value"):
        energy(r, read_fraction={"disk": 0.5})
    with pytest.raises(UnknownNameError, match="unknown class 'nope'"):
        energy(r, cls="nope")
    with pytest.raises(InvalidValueError, match=r"read_fraction must be in \[0, 1\], got 1.5"):
        busy_power(AFA["ssd"], 1.5)
    with pytest.raises(InvalidValueError, match="power must be a qmodels.model.Power"):
        busy_power(6.8)
    bare = Network([Queue("disk", 0.02)], [Open("io", 1.0, visits={"disk": 1})])
    with pytest.raises(InvalidValueError, match="no station has a power"):
        energy(mva(bare))
    with pytest.raises(InvalidValueError, match="read_fraction but no power"):
        energy(mva(bare), read_fraction={"disk": 0.5}, power=None)
    with pytest.raises(InvalidValueError, match="needs a result with a .network"):
        energy(object())
    with pytest.raises(InvalidValueError, match="time must be a finite non-negative"):
        energy_law(5, -1)
    # power given by mapping for a station without its own
    assert energy(mva(bare), power={"disk": Power(busy=10)}).total_power == pytest.approx(0.2)
