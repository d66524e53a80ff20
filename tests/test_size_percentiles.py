"""qm.size on response-time percentile targets: exact along overtake-free
./M/1 paths (method "passage"), by the simulator's percentile with its
interval as the margin (method="sim"), refused by name elsewhere.

References are derived here by hand, not read from the solvers:

* An M/M/1 FCFS tandem fed by a Poisson stream: the sojourn times at the
  stations are independent exponentials with rates mu_k - lambda (Reich
  1957; Kleinrock, *Queueing Systems* I, 1975, eq. 3.27), and a last
  exponential delay adds its service time, so the end-to-end response time
  is a sum of independent exponentials with distinct rates r_i, whose tail
  is P(T > t) = sum_i prod_{j != i} r_j / (r_j - r_i) e^{-r_i t} (the
  hypoexponential distribution: Ross, *Introduction to Probability Models*,
  10th ed., sec. 5.2.4).
* One M/M/c FCFS queue: T = S + W, S ~ Exp(mu), W = 0 with probability
  1 - C and Exp(c mu - lambda) with probability C, C Erlang's C formula
  (Kleinrock 1975, eqs. 3.39-3.40).

The smallest speed-up, the largest arrival rate and the fewest servers are
then found by a brute-force scan over a grid, and size() must agree to the
grid's step.
"""

from __future__ import annotations

import math

import pytest

import qmodels as qm


def hypo_tail(rates, t):
    """P(sum of independent Exp(r_i) > t), distinct rates (Ross sec. 5.2.4)."""
    out = 0.0
    for i, ri in enumerate(rates):
        w = 1.0
        for j, rj in enumerate(rates):
            if j != i:
                w *= rj / (rj - ri)
        out += w * math.exp(-ri * t)
    return out


def mmc_tail(lam, s, c, t):
    """P(T > t) at an M/M/c FCFS queue (Kleinrock 1975, eqs. 3.39-3.40)."""
    mu, a = 1.0 / s, lam * s
    top = a ** c / math.factorial(c) * c / (c - a)
    C = top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)
    g = c * mu - lam
    two = (g * math.exp(-mu * t) - mu * math.exp(-g * t)) / (g - mu)
    return (1 - C) * math.exp(-mu * t) + C * two


def quantile(tail, p):
    """The t with tail(t) = 1 - p, by bisection (tail strictly decreasing)."""
    lo, hi = 0.0, 1.0
    while tail(hi) > 1 - p:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tail(mid) > 1 - p else (lo, mid)
    return (lo + hi) / 2


def tandem(lam=20.0, s_web=0.02, s_db=0.03, think=None):
    stations = [qm.Queue("web", s_web), qm.Queue("db", s_db)]
    route = ["web", "db"]
    if think is not None:
        stations.append(qm.Delay("net", think))
        route.append("net")
    return qm.Network(stations, [qm.Open("tx", lam, route=route)])


def test_smallest_speedup_for_a_p95_matches_a_brute_force_scan():
    lam, target = 20.0, 0.2
    s = qm.size(tandem(lam), f"R_p95<={target}", vary="speed", station="db", tol=1e-7)

    def p95(f):
        return quantile(lambda t: hypo_tail([1 / 0.02 - lam, f / 0.03 - lam], t), 0.95)

    step = 1e-3
    grid = [1.0 + step * i for i in range(3000)]
    first = next(f for f in grid if p95(f) <= target)
    assert first - step < s.answer <= first
    assert s.at["R_p95[tx]"] == pytest.approx(p95(s.answer), rel=1e-9)
    assert s.at["R_p95[tx]"] <= target
    assert p95(s.beyond) > target
    assert s.exactness == "exact" and s.margin == {}
    assert any("'passage', exact" in n and "web -> db" in n for n in s.notes)


def test_largest_arrival_rate_for_a_p99_with_a_last_delay_matches_a_scan():
    # web, db (./M/1) then an exponential delay: three exponentials in a row
    # (the delay's rate, 100, stays apart from 50 - lam and 33.3 - lam)
    target = 0.5
    s = qm.size(tandem(think=0.01), f"R_p99<={target}", vary="arrival_rate", tol=1e-7)

    def p99(lam):
        return quantile(lambda t: hypo_tail([1 / 0.02 - lam, 1 / 0.03 - lam, 1 / 0.01], t),
                        0.99)

    step = 1e-2
    grid = [step * i for i in range(1, 3333)]      # saturation at 1/0.03 = 33.3
    last = max(lam for lam in grid if p99(lam) <= target)
    assert last <= s.answer < last + step
    assert s.at["R_p99[tx]"] == pytest.approx(p99(s.answer), rel=1e-9)
    assert "R_p99[tx]<=0.5" in s.binding


def test_fewest_servers_for_a_p99_at_one_mmc_queue_matches_a_scan():
    lam, S, target = 370.0, 0.01, 0.06   # c mu - lam never equals mu
    net = qm.Network([qm.Queue("disk", S)], [qm.Open("io", lam, visits={"disk": 1})])
    s = qm.size(net, f"R_p99<={target}", vary="servers", station="disk")
    c_min = int(lam * S) + 1
    fewest = next(c for c in range(c_min, 100)
                  if quantile(lambda t, c=c: mmc_tail(lam, S, c, t), 0.99) <= target)
    assert s.answer == fewest
    assert s.at["R_p99[io]"] == pytest.approx(
        quantile(lambda t: mmc_tail(lam, S, fewest, t), 0.99), rel=1e-9)


def test_percentile_with_a_mean_target_both_bind_correctly():
    # the mean and the percentile of the same tandem: the stricter one binds
    lam = 20.0
    s = qm.size(tandem(lam), "R<=0.1", "R_p95<=0.3", vary="speed", station="db", tol=1e-7)
    # the mean 1/(50 - lam) + 1/(f/0.03 - lam) <= 0.1 needs f >= 0.03 * (lam + 1/(0.1 - 1/30))
    f_mean = 0.03 * (lam + 1 / (0.1 - 1 / 30))
    f_p95 = next(1 + 1e-4 * i for i in range(30000) if quantile(
        lambda t, i=i: hypo_tail([30.0, (1 + 1e-4 * i) / 0.03 - lam], t), 0.95) <= 0.3)
    assert s.answer == pytest.approx(max(f_mean, f_p95), abs=2e-4)


# --- refusals, by name --------------------------------------------------------

def closed_net(discipline="fcfs"):
    return qm.Network([qm.Queue("cpu", 0.05, discipline=discipline), qm.Queue("disk", 0.08)],
                      [qm.Closed("tx", 1, think_time=1.0, route=["cpu", "disk"])])


@pytest.mark.parametrize("net, kw, words", [
    (closed_net("lcfs-pr"), {}, ["'cpu'", "lcfs-pr", "method='sim'"]),
    (closed_net("lcfs-pr"), {"vary": "speed", "station": "disk"},
     ["'cpu'", "lcfs-pr", "method='sim'"]),
    (qm.Network([qm.Queue("web", 0.02), qm.Queue("db", 0.03)],
                [qm.Open("tx", 20.0, visits={"web": 1, "db": 1})]),
     {"vary": "speed", "station": "db"}, ["random", "route=", "method='sim'"]),
    (qm.Network([qm.Queue("web", 0.02, discipline="ps"), qm.Queue("db", 0.03)],
                [qm.Open("tx", 20.0, route=["web", "db"])]),
     {"vary": "speed", "station": "db"}, ["'web'", "ps", "method='sim'"]),
    (qm.Network([qm.Queue("web", 0.02), qm.Queue("db", 0.03)],
                [qm.Open("tx", 20.0, interarrival=qm.HyperExponential(4.0),
                         route=["web", "db"])]),
     {"vary": "speed", "station": "db"}, ["HyperExponential", "method='sim'"]),
    (qm.Network([qm.Queue("web", 0.02, servers=2), qm.Queue("db", 0.03)],
                [qm.Open("tx", 20.0, route=["web", "db"])]),
     {"vary": "speed", "station": "db"}, ["'web'", "2 servers", "method='sim'"]),
])
def test_a_percentile_without_an_exact_distribution_is_refused_by_name(net, kw, words):
    with pytest.raises(qm.UnsupportedModelError) as e:
        qm.size(net, "R_p95<=0.2", **kw)
    for w in words:
        assert w in str(e.value)


def test_an_analytic_method_is_refused_too_and_names_the_feature():
    net = qm.Network([qm.Queue("web", 0.02), qm.Queue("db", 0.03)],
                     [qm.Open("tx", 20.0, interarrival=qm.HyperExponential(4.0),
                              route=["web", "db"])])
    with pytest.raises(qm.UnsupportedModelError, match="HyperExponential"):
        qm.size(net, "R_p95<=0.2", vary="arrival_rate", method="qna")


def test_the_simulator_estimates_p50_p95_p99_only():
    with pytest.raises(qm.UnsupportedModelError, match="p90"):
        qm.size(tandem(), "R_p90<=0.2", vary="speed", station="db", method="sim")


# --- by the simulator ---------------------------------------------------------

def test_sized_by_the_simulator_keeps_its_interval_and_lands_near_the_exact_answer():
    exact = qm.size(tandem(), "R_p95<=0.2", vary="speed", station="db", tol=1e-6)
    sim = qm.size(tandem(), "R_p95<=0.2", vary="speed", station="db", method="sim", seed=2)
    assert sim.exactness == "simulated" and sim.method == "sim"
    key = "R_p95[tx]+margin"
    assert sim.at[key] <= 0.2 < sim.at_beyond[key]
    assert sim.at[key] > sim.at["R_p95[tx]"]
    # the margin: the interval's high end and the histogram's resolution
    assert sim.margin["R_p95[tx]"] == pytest.approx(sim.at[key] / sim.at["R_p95[tx]"] - 1)
    assert any("simulator's p95" in n for n in sim.notes)
    # with the margin kept, the simulated answer asks for at least about the
    # exact speed-up (a few % either way: a 10-replication estimate)
    assert sim.answer == pytest.approx(exact.answer, rel=0.05)


def test_cli_sizes_a_percentile_on_a_path_from_a_model_file(tmp_path, capsys):
    import json

    from qmodels.cli import main

    path = tmp_path / "shop.yaml"
    qm.save(tandem(), path)
    assert main(["size", str(path), "--max-arrival-rate", "--target", "R_p95<=0.2",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # Exp(50 - lam) + Exp(33.3 - lam): the largest lam with p95 <= 0.2
    p95 = quantile(lambda t: hypo_tail([50 - d["answer"], 1 / 0.03 - d["answer"]], t), 0.95)
    assert p95 == pytest.approx(0.2, rel=1e-5)
    assert d["exactness"] == "exact" and any("'passage'" in n for n in d["notes"])
    # a closed model: by the tagged job's chain (ctmc-passage)
    qm.save(closed_net(), tmp_path / "c.yaml")
    assert main(["size", str(tmp_path / "c.yaml"), "--max-population",
                 "--target", "R_p95<=1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert any("'ctmc-passage'" in n for n in d["notes"])
    # one it cannot model: refused by name, exit status 2
    qm.save(closed_net("lcfs-pr"), tmp_path / "l.yaml")
    assert main(["size", str(tmp_path / "l.yaml"), "--max-population",
                 "--target", "R_p95<=1"]) == 2
    assert "method='sim'" in capsys.readouterr().err
