"""Transient analysis (qmodels.transient): the CTMC's p(t) against closed
forms and a hand-built generator, its limit against exact MVA, and the
simulator's replicated cell averages against the CTMC's."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.linalg import expm

import qmodels as qm
from qmodels.errors import InvalidValueError, ProblemTooLargeError


def _mminf(lam=1.5, S=2.0):
    return qm.Network([qm.Delay("d", S)], [qm.Open("o", lam, visits={"d": 1})])


def test_infinite_server_from_empty_matches_the_closed_form():
    # M/G/inf from empty: the number present at t is Poisson with mean
    # lam integral_0^t P(S > y) dy (Ross, Stochastic Processes, 2nd ed., 1996,
    # sec. 2.3, the infinite-server Poisson queue), lam S (1 - exp(-t/S)) for
    # exponential S; completions per unit time lam (1 - exp(-t/S)).
    lam, S = 1.5, 2.0
    r = qm.transient(_mminf(lam, S), 6.0, points=6, method="ctmc", open_limit=40)
    t = r.times
    assert r.exactness == "exact" and r.kind == "instant"
    np.testing.assert_allclose(r.series("Q", "d"), lam * S * (1 - np.exp(-t / S)), rtol=1e-9)
    np.testing.assert_allclose(r.series("X", "d"), lam * (1 - np.exp(-t / S)), rtol=1e-9)
    # the cell averages: (1/h) integral of lam S (1 - exp(-s/S)) over the cell
    a = qm.transient(_mminf(lam, S), 6.0, points=6, method="ctmc", open_limit=40,
                     average=True)
    h = 1.0
    want = lam * S * (1 - S * (np.exp(-(t - h) / S) - np.exp(-t / S)) / h)
    assert a.kind == "cell average"
    np.testing.assert_allclose(a.series("Q", "d"), want, rtol=1e-9)


def test_mm1k_against_a_hand_built_generator():
    # M/M/1/3, lam = 1.5, mu = 2: the birth-death generator written out here
    lam, mu, K = 1.5, 2.0, 3
    G = np.zeros((K + 1, K + 1))
    for n in range(K):
        G[n, n + 1] = lam
        G[n + 1, n] = mu
    G -= np.diag(G.sum(axis=1))
    net = qm.Network([qm.Queue("q", 1 / mu, capacity=K)], [qm.Open("o", lam, visits={"q": 1})])
    r = qm.transient(net, 3.0, points=4, method="ctmc")
    for i, t in enumerate(r.times):
        p = np.eye(K + 1)[0] @ expm(G * t)
        assert r.series("Q", "q")[i] == pytest.approx(p @ np.arange(K + 1), rel=1e-9)
        assert r.series("U", "q")[i] == pytest.approx(1 - p[0], rel=1e-9)
        assert r.series("X", "q")[i] == pytest.approx(mu * (1 - p[0]), rel=1e-9)


def _closed():
    return qm.Network([qm.Queue("q", 0.5), qm.Queue("d", 0.3)],
                      [qm.Closed("c", 3, think_time=1.0, visits={"q": 1, "d": 1})])


def test_closed_transient_tends_to_the_exact_mva_steady_state():
    net = _closed()
    r = qm.transient(net, 60.0, points=3, method="ctmc")
    ss = qm.mva(net)
    for k in net.station_names:
        assert r.series("Q", k)[-1] == pytest.approx(float(ss.Q[k]), rel=1e-9)
        assert r.series("U", k)[-1] == pytest.approx(float(ss.U[k]), rel=1e-9)
    # starting with every job thinking: nothing queued at first
    assert "thinking" in r.initial
    early = qm.transient(net, 0.01, points=1, method="ctmc")
    assert early.series("Q", "q")[0] < 0.02
    # the steady state rides along, and the settling times are read off it
    assert r.steady is not None and r.steady.exactness == "exact"
    fine = qm.transient(net, 20.0, points=40, method="ctmc")
    settle = fine.settling_time("Q", tol=0.05)
    y, ssq = fine.series("Q", "q"), float(ss.Q["q"])
    i = int(np.flatnonzero(fine.times == settle["q"])[0])
    assert np.all(np.abs(y[i:] - ssq) <= 0.05 * ssq) and abs(y[i - 1] - ssq) > 0.05 * ssq


def test_simulated_cells_cover_the_ctmc_cell_averages():
    net = _closed()
    exact = qm.transient(net, 8.0, points=8, method="ctmc", average=True)
    sim = qm.transient(net, 8.0, points=8, method="sim", seed=5, replications=100)
    assert sim.exactness == "simulated" and sim.kind == "cell average"
    inside = total = 0
    for fig in ("Q", "U"):
        for k, name in enumerate(net.station_names):
            e = exact.series(fig, name)
            inside += int(np.sum((sim.low[fig][:, k] <= e) & (e <= sim.high[fig][:, k])))
            total += len(e)
    # 32 cells of 95 % intervals: 26 or fewer inside has probability < 1e-3
    assert inside >= 27, (inside, total)
    # the same seed, the same numbers
    again = qm.transient(net, 8.0, points=8, method="sim", seed=5, replications=100)
    np.testing.assert_array_equal(again.figures["Q"], sim.figures["Q"])


def test_auto_simulates_when_the_chain_is_over_budget():
    net = qm.Network([qm.Queue("q", 0.5), qm.Queue("d", 0.3)],
                     [qm.Closed("c", 40, think_time=1.0, visits={"q": 1, "d": 1})])
    with pytest.raises(ProblemTooLargeError):
        qm.transient(net, 5.0, points=5, method="ctmc", max_states=100)
    r = qm.transient(net, 5.0, points=5, max_states=100, replications=4, seed=2)
    assert r.method == "sim" and any("CTMC cannot hold" in n for n in r.notes)


@pytest.mark.parametrize("kw, match", [
    (dict(t_end=0.0), "t_end"), (dict(t_end=math.nan), "t_end"), (dict(t_end="x"), "t_end"),
    (dict(points=0), "points"), (dict(method="exact"), "method"),
])
def test_bad_arguments_are_named(kw, match):
    args = dict(t_end=1.0)
    args.update(kw)
    with pytest.raises(InvalidValueError, match=match):
        qm.transient(_closed(), args.pop("t_end"), **args)


def test_frame_dict_plot_and_cli(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    r = qm.transient(_closed(), 4.0, points=4, method="ctmc")
    df = r.to_frame()
    assert set(df["figure"]) == {"Q", "U", "X", "Q_class"}
    assert df.attrs["method"] == "ctmc" and df.attrs["exactness"] == "exact"
    q = df[(df.figure == "Q") & (df.name == "q")]["value"].to_numpy()
    np.testing.assert_array_equal(q, r.series("Q", "q"))
    d = r.to_dict()
    assert d["exactness"] == "exact" and len(d["figures"]["Q"]["q"]) == 4
    ax = r.plot("U")
    assert len(ax.lines) >= 2
    model = tmp_path / "m.json"
    qm.save(_closed(), model)
    from qmodels.cli import main

    assert main(["solve", str(model), "--transient", "4", "--points", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "ctmc" and out["figures"]["Q"]["q"] == pytest.approx(
        list(r.series("Q", "q")), rel=1e-12)


def test_a_phase_type_fit_makes_the_transient_approximate_and_says_so():
    # a deterministic service time is held by the chain as an Erlang fit:
    # the transient is that of the fitted chain, labelled as such
    net = qm.Network([qm.Queue("q", 0.5, distribution=qm.Deterministic())],
                     [qm.Closed("c", 2, think_time=1.0, visits={"q": 1})])
    r = qm.transient(net, 5.0, points=5, method="ctmc")
    assert r.exactness == "approximate"
    assert any("fit" in a for a in r.assumptions)
    exp = qm.Network([qm.Queue("q", 0.5)], [qm.Closed("c", 2, think_time=1.0, visits={"q": 1})])
    assert qm.transient(exp, 5.0, points=5, method="ctmc").exactness == "exact"


def test_plot_draws_cells_over_their_cells_from_zero_and_instants_from_the_start():
    """A cell average is the mean over (t_{i-1}, t_i]: drawn as a step over
    its whole cell, the first from t = 0 (not from the first cell's end).
    The CTMC's instant curve starts at t = 0 at the initial state: the three
    jobs of a class without think time at its reference station (hand:
    Q_q(0) = 3, Q_d(0) = 0, U_q(0) = 1)."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    net = qm.Network([qm.Queue("q", 0.5), qm.Queue("d", 0.3)],
                     [qm.Closed("c", 3, reference="q", visits={"q": 1, "d": 1})])
    edges = np.linspace(0.0, 4.0, 5)
    sim = qm.transient(net, 4.0, points=4, method="sim", seed=3, replications=4)
    cells = qm.transient(net, 4.0, points=4, method="ctmc", average=True)
    for r in (sim, cells):
        ax = r.plot("Q", names=["q"], steady=False)
        (line,) = ax.lines
        x, y = line.get_xdata(), line.get_ydata()
        assert line.get_drawstyle() == "steps-post"
        np.testing.assert_allclose(x, edges)
        # cell i's value held from its start edge t_{i-1} to its end t_i
        np.testing.assert_allclose(y[:-1], r.series("Q", "q"))
        assert y[-1] == y[-2]
        if r.low:
            (band,) = ax.collections
            xs = band.get_paths()[0].vertices[:, 0]
            assert xs.min() == pytest.approx(0.0) and xs.max() == pytest.approx(4.0)
        plt.close(ax.figure)
    inst = qm.transient(net, 4.0, points=4, method="ctmc")
    for fig, name, want in (("Q", "q", 3.0), ("Q", "d", 0.0), ("U", "q", 1.0)):
        ax = inst.plot(fig, names=[name], steady=False)
        (line,) = ax.lines
        np.testing.assert_allclose(line.get_xdata(), edges)
        assert line.get_ydata()[0] == pytest.approx(want, abs=1e-12)
        np.testing.assert_allclose(line.get_ydata()[1:], inst.series(fig, name))
        plt.close(ax.figure)
    assert inst.to_dict()["start"]["Q"]["q"] == pytest.approx(3.0)


def _e2_inf(lam=1.5, S=2.0):
    return qm.Network([qm.Delay("d", S)],
                      [qm.Open("o", lam, interarrival=qm.Erlang(2), visits={"d": 1})])


def test_phase_type_arrivals_from_empty_match_the_renewal_closed_form():
    """Erlang-2 arrivals (phase rate b = 2 lam) to an infinite server from
    empty, the stream at the start of an inter-arrival time at t = 0.

    Hand derivation: the renewal density h has Laplace transform
    f*/(1 - f*) with f*(s) = (b/(b+s))^2 (Cox, *Renewal Theory*, 1962,
    ch. 4), i.e. b^2/(s (s + 2b)), so h(t) = (b/2)(1 - exp(-2bt)).  A job
    that arrived at s is still present at t with probability
    exp(-(t-s)/S), so (M/G/inf argument of Ross 1996, sec. 2.3, with the
    arrival intensity h in place of lam)

        E N(t) = int_0^t h(s) exp(-mu (t-s)) ds
               = (b/2) [(1 - e^{-mu t})/mu - (e^{-2bt} - e^{-mu t})/(mu - 2b)],

    mu = 1/S, tending to lam S; completions per unit time mu E N(t)."""
    lam, S = 1.5, 2.0
    b, mu = 2 * lam, 1 / S
    r = qm.transient(_e2_inf(lam, S), 6.0, points=6, method="ctmc", open_limit=40)
    t = r.times
    want = b / 2 * ((1 - np.exp(-mu * t)) / mu - (np.exp(-2 * b * t) - np.exp(-mu * t))
                    / (mu - 2 * b))
    assert r.exactness == "exact"
    assert any("inter-arrival" in a for a in r.assumptions)
    np.testing.assert_allclose(r.series("Q", "d"), want, rtol=1e-9)
    np.testing.assert_allclose(r.series("X", "d"), mu * want, rtol=1e-9)
    # Poisson arrivals at the same rate give more early on: lam S (1 - e^{-t/S})
    # exceeds the Erlang stream's count, which has to wait out a first phase
    assert np.all(lam * S * (1 - np.exp(-t / S)) > want)
    assert "start of an inter-arrival time" in r.initial


def test_phase_type_arrivals_simulated_from_the_same_start():
    """The simulator also starts the stream at a fresh inter-arrival time
    (its first arrival a full draw after 0): its cells cover the CTMC's."""
    net = qm.Network([qm.Queue("q", 0.5)],
                     [qm.Open("o", 1.2, interarrival=qm.Erlang(2), visits={"q": 1})])
    exact = qm.transient(net, 3.0, points=6, method="ctmc", average=True, open_limit=40)
    sim = qm.transient(net, 3.0, points=6, method="sim", seed=7, replications=300)
    inside = total = 0
    for fig in ("Q", "U"):
        e, m = exact.series(fig, "q"), sim.series(fig, "q")
        lo, hi = sim.low[fig][:, 0], sim.high[fig][:, 0]
        assert np.all(np.abs(m - e) <= 4 * (hi - lo) / 2), (fig, m, e)
        inside += int(np.sum((lo <= e) & (e <= hi)))
        total += len(e)
    assert inside >= 0.75 * total, (inside, total)
