"""qm.size: capacity questions answered by exact search.

Reference values are computed here independently of qmodels: the MVA
recursion written out for load-independent stations (Lazowska et al., QSP
1984, Algorithm 6.1), Erlang's C formula (Kleinrock, Queueing Systems I,
eq. 3.40) and M/M/1 algebra solved by hand in the comments.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.cli import main
from qmodels.whatif.size import mmc_response_quantile, parse_target


def _mva_R(D, Z, N):
    """R(1..N) by the MVA recursion for queueing (single-server) stations."""
    Q = np.zeros(len(D))
    out = []
    for n in range(1, N + 1):
        Rk = np.asarray(D) * (1 + Q)
        R = Rk.sum()
        X = n / (Z + R)
        Q = X * Rk
        out.append(R)
    return np.array(out)


def _two_station(N=1, Z=0.0):
    return qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                      [qm.Closed("tx", N, think_time=Z, visits={"cpu": 1, "disk": 1})])


@pytest.mark.parametrize("r", [0.2, 0.35, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("Z", [0.0, 1.0])
def test_max_population_two_stations_by_hand_recursion(r, Z):
    R = _mva_R([0.05, 0.08], Z, 400)
    expected = int(np.argmax(R > r))          # R[i] is R(i+1): first N breaking, minus 1
    s = qm.size(_two_station(Z=Z), f"R<={r}")
    assert s.answer == expected
    assert s.beyond == expected + 1
    assert s.binding == (f"R[tx]<={r:g}",)
    assert s.at["R[tx]"] == pytest.approx(R[expected - 1], rel=1e-12)
    assert s.at_beyond["R[tx]"] == pytest.approx(R[expected], rel=1e-12)
    assert s.bottleneck == "disk" and s.next_bottleneck == "cpu"
    assert s.network.classes[0].population == expected


def test_by_hand_at_small_N():
    # D = (0.05, 0.08), Z = 0: R(1) = 0.13; Q = (0.3846, 0.6154); R(2) = 0.05*1.3846 +
    # 0.08*1.6154 = 0.198462 (QSP Algorithm 6.1 by hand), so R<=0.15 allows N = 1 only
    s = qm.size(_two_station(), "R<=0.15")
    assert s.answer == 1
    assert s.at_beyond["R[tx]"] == pytest.approx(0.198462, abs=1e-6)


def test_utilisation_ceiling_binds_before_response_time():
    R = _mva_R([0.05, 0.08], 0.0, 50)
    X = np.arange(1, 51) / R
    expected = int(np.argmax(X * 0.05 > 0.55))  # U_cpu = X D_cpu (utilisation law)
    s = qm.size(_two_station(), "R<=10", "U[cpu]<=0.55")
    assert s.answer == expected == 2
    assert s.binding == ("U[cpu]<=0.55",)


def test_multiserver_and_ld_against_separate_mva_solves():
    """The built-in two-tier example (4-server cpu, load-dependent raid):
    the answer meets R<=8 and one more user does not, each checked by its
    own qm.mva solve at that population (not the curve)."""
    net = qm.load(qm.__path__[0] + "/examples/two_tier.yaml")
    s = qm.size(net, "R<=8")
    at = qm.mva(qm.whatif.apply(net, {"tx.population": s.answer}))
    nxt = qm.mva(qm.whatif.apply(net, {"tx.population": s.answer + 1}))
    assert at.R["tx"] <= 8 < nxt.R["tx"]
    assert s.at["R[tx]"] == pytest.approx(at.R["tx"], rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(D=st.lists(st.floats(0.001, 1.0), min_size=2, max_size=3),
       Z=st.floats(0.0, 5.0), factor=st.floats(1.05, 20.0))
def test_property_answer_meets_target_and_next_does_not(D, Z, factor):
    stations = [qm.Queue(f"s{k}", d) for k, d in enumerate(D)]
    net = qm.Network(stations, [qm.Closed("c", 1, think_time=Z,
                                          visits={f"s{k}": 1 for k in range(len(D))})])
    r = factor * sum(D)          # above R(1) = sum D, so N = 1 always meets it
    s = qm.size(net, f"R<={r!r}")
    at = qm.mva(qm.whatif.apply(net, {"c.population": s.answer}))
    nxt = qm.mva(qm.whatif.apply(net, {"c.population": s.answer + 1}))
    assert at.R["c"] <= r
    assert nxt.R["c"] > r


def _erlang_c(c, a):
    """Erlang's C formula (Kleinrock, Queueing Systems I, eq. 3.40)."""
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


@pytest.mark.parametrize("lam,S,r", [(500, 0.01, 0.0105), (500, 0.01, 0.0101),
                                     (40, 0.2, 0.25), (3, 1.0, 1.5)])
def test_fewest_servers_erlang_c(lam, S, r):
    a = lam * S
    c = int(math.floor(a)) + 1
    while S + _erlang_c(c, a) * S / (c - a) > r:   # M/M/c: R = S + C S / (c - a)
        c += 1
    net = qm.Network([qm.Queue("disk", S)], [qm.Open("io", lam, visits={"disk": 1})])
    s = qm.size(net, f"R<={r}", vary="servers", station="disk")
    assert s.answer == c
    assert s.beyond == c - 1
    assert s.network.stations[0].servers == c


@settings(max_examples=30, deadline=None)
@given(lam=st.floats(1.0, 500.0), S=st.floats(0.001, 0.1), slack=st.floats(1.001, 3.0))
def test_property_fewest_servers_meet_target_and_one_fewer_does_not(lam, S, slack):
    r = slack * S                                   # above S: enough servers always meet it
    a = lam * S

    def R(c):                                       # M/M/c by Erlang C; inf when unstable
        return S + _erlang_c(c, a) * S / (c - a) if c > a else math.inf

    net = qm.Network([qm.Queue("q", S)], [qm.Open("o", lam, visits={"q": 1})])
    c = qm.size(net, f"R<={r!r}", vary="servers", station="q").answer
    assert R(c) <= r * (1 + 1e-9)
    assert c == 1 or R(c - 1) > r * (1 - 1e-9)


def test_servers_percentile_mm1_closed_form():
    # M/M/1: T ~ Exp(mu - lam), p-quantile -ln(1-p)/(mu - lam)
    assert mmc_response_quantile(50, 0.01, 1, 0.95) == pytest.approx(-math.log(0.05) / 50)


@pytest.mark.parametrize("c,lam,S", [(3, 200, 0.01), (6, 500, 0.01), (2, 10, 0.15)])
def test_mmc_quantile_against_numerical_convolution(c, lam, S):
    """P(T > t) = P(S > t) + int_0^t mu e^{-mu s} P(W > t - s) ds with the
    textbook wait tail P(W > w) = C e^{-(c mu - lam) w}: integrated numerically."""
    from scipy.integrate import quad

    mu = 1 / S
    C = _erlang_c(c, lam * S)

    def tail(t):
        inner, _ = quad(lambda s: mu * math.exp(-mu * s) * C * math.exp(-(c * mu - lam) * (t - s)),
                        0, t)
        return math.exp(-mu * t) + inner

    for p in (0.5, 0.9, 0.99):
        q = mmc_response_quantile(lam, S, c, p)
        assert tail(q) == pytest.approx(1 - p, rel=1e-7)


def test_fewest_servers_for_a_percentile():
    net = qm.Network([qm.Queue("disk", 0.01)], [qm.Open("io", 500, visits={"disk": 1})])
    s = qm.size(net, "R_p99<=0.06", vary="servers", station="disk")
    c = s.answer
    assert mmc_response_quantile(500, 0.01, c, 0.99) <= 0.06
    assert c == 6 or mmc_response_quantile(500, 0.01, c - 1, 0.99) > 0.06
    assert s.at["R_p99[io]"] <= 0.06
    # the service time alone has p99 = -ln(0.01) * 0.01 = 0.046: no server count meets 0.04
    with pytest.raises(qm.InfeasibleTargetError, match="own service time"):
        qm.size(net, "R_p99<=0.04", vary="servers", station="disk")


def test_speedup_open_by_hand():
    # M/M/1, lam = 500, S = 0.01/s: R = (0.01/s) / (1 - 5/s) = 0.01 / (s - 5) <= 0.005 -> s = 7
    net = qm.Network([qm.Queue("disk", 0.01)], [qm.Open("io", 500, visits={"disk": 1})])
    s = qm.size(net, "R<=0.005", vary="speed", station="disk")
    assert s.answer == pytest.approx(7.0, rel=2e-6)
    assert s.beyond < s.answer
    assert s.at["R[io]"] <= 0.005 < s.at_beyond["R[io]"]


def test_speedup_closed_moves_the_bottleneck():
    # disk is the bottleneck (0.08 > 0.05); speeding it up past 1.6x makes cpu the bottleneck
    net = _two_station(N=10)
    s = qm.size(net, "R<=0.52", vary="speed", station="disk")
    R = _mva_R([0.05, 0.08 / s.answer], 0.0, 10)[-1]
    assert R == pytest.approx(0.52, rel=1e-5)
    assert s.answer > 1.6          # R(10) >= 10 D_max: D_disk must drop below 0.052
    assert s.bottleneck == "cpu" and s.next_bottleneck == "disk"
    assert qm.size(net, "R<=0.6", vary="speed", station="disk").bottleneck == "disk"


def test_max_arrival_rate_mm1_by_hand():
    # M/M/1: R = S / (1 - lam S) <= r  ->  lam* = (1 - S/r) / S = (1 - 0.01/0.05)/0.01 = 80
    net = qm.Network([qm.Queue("disk", 0.01)], [qm.Open("io", 1, visits={"disk": 1})])
    s = qm.size(net, "R<=0.05", vary="arrival_rate")
    assert s.answer == pytest.approx(80.0, rel=2e-6)
    assert s.answer <= 80.0 * (1 + 1e-12) and s.beyond >= 80.0 * (1 - 1e-12)
    assert s.binding == ("R[io]<=0.05",)


def test_max_arrival_rate_with_another_class_by_hand():
    # one queue, a: D = 0.01, b: D = 0.02 at 10/s (U_b = 0.2); processor sharing,
    # R_a = D_a / (1 - U) (BCMP, QSP eq. 6.x) <= 0.05  ->  U <= 0.8  ->  lam_a <= 60
    net = qm.Network([qm.Queue("cpu", 0.01, discipline="ps")],
                     [qm.Open("a", 1, demands={"cpu": 0.01}),
                      qm.Open("b", 10, demands={"cpu": 0.02})])
    s = qm.size(net, "R[a]<=0.05", vary="arrival_rate", cls="a")
    assert s.answer == pytest.approx(60.0, rel=2e-6)
    with pytest.raises(qm.InvalidValueError, match="name the class"):
        qm.size(net, "R[a]<=0.05", vary="arrival_rate")


def test_refusals():
    lcfs = qm.Network([qm.Queue("cpu", 0.05, discipline="lcfs-pr"), qm.Queue("disk", 0.08)],
                      [qm.Closed("tx", 5, visits={"cpu": 1, "disk": 1})])
    with pytest.raises(qm.UnsupportedModelError, match="R_p95.*'cpu'.*lcfs-pr"):
        qm.size(lcfs, "R_p95<=1")
    net = _two_station(N=5)
    with pytest.raises(qm.InfeasibleTargetError, match="even one job"):
        qm.size(net, "R<=0.1")
    with pytest.raises(qm.InfeasibleTargetError, match="every population"):
        qm.size(net, "U[cpu]<=0.9")          # U_cpu tends to 0.05/0.08 = 0.625
    with pytest.raises(qm.UnsupportedModelError, match="U\\[cpu\\]"):
        qm.size(net, "U[cpu]<=0.5", vary="speed", station="disk")
    with pytest.raises(qm.InvalidValueError, match="did you mean 'servers'"):
        qm.size(net, "R<=1", vary="server", station="disk")
    with pytest.raises(qm.InvalidValueError, match="METRIC"):
        parse_target("response<=2")
    falling = qm.Network([qm.LoadDependent("d", 0.1, rate_multipliers=(2, 1))],
                         [qm.Closed("c", 3, visits={"d": 1})])
    with pytest.raises(qm.UnsupportedModelError, match="fall"):
        qm.size(falling, "R<=1")
    with pytest.raises(qm.InfeasibleTargetError, match="more servers than jobs"):
        qm.size(net, "R<=0.2", vary="servers", station="disk")   # R(5) >= 5 * 0.05


def test_repr_and_frame():
    s = qm.size(_two_station(), "R<=0.5")
    text = repr(s)
    assert "tx.population = 6" in text and "binding    R[tx]<=0.5" in text
    df = s.to_frame()
    assert list(df.index) == ["answer", "beyond"]
    assert list(df["tx.population"]) == [6, 7]


def test_cli_size(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    qm.save(_two_station(), path)
    assert main(["size", str(path), "--max-population", "--target", "R<=0.5"]) == 0
    out = capsys.readouterr().out
    assert "tx.population = 6" in out
    assert main(["size", str(path), "--max-population", "--target", "R<=0.5", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["answer"] == 6 and d["binding"] == ["R[tx]<=0.5"]
    # one job: R = 0.05 + 0.08/s <= 0.1 gives s = 1.6; R <= 0.04 is below cpu alone
    assert main(["size", str(path), "--min-speedup", "disk", "--target", "R<=0.1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == pytest.approx(1.6, rel=2e-6)
    assert main(["size", str(path), "--min-speedup", "disk", "--target", "R<=0.04"]) == 2
    assert "InfeasibleTargetError" in capsys.readouterr().err
    assert main(["size", str(path), "--max-population", "--target", "R<=0.01"]) == 2
    assert "InfeasibleTargetError" in capsys.readouterr().err
    assert main(["size", str(path), "--max-population", "--target", "R=>1"]) == 2
    assert "METRIC" in capsys.readouterr().err


def test_cli_size_servers(tmp_path, capsys):
    path = tmp_path / "o.yaml"
    qm.save(qm.Network([qm.Queue("disk", 0.01)], [qm.Open("io", 500, visits={"disk": 1})]),
            path)
    assert main(["size", str(path), "--min-servers", "disk", "--target", "R<=0.0105"]) == 0
    c = 6
    while 0.01 + _erlang_c(c, 5.0) * 0.01 / (c - 5.0) > 0.0105:
        c += 1
    assert f"disk.servers = {c}" in capsys.readouterr().out
