"""qm.plot, headless: the artists drawn (lines, patches, labels), not pixels."""

from __future__ import annotations

import sys

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import qmodels as qm  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def central(n=20, z=2.0):
    return qm.Network(
        [qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08), qm.Queue("disk2", 0.02)],
        [qm.Closed("tx", n, think_time=z, visits={"cpu": 1, "disk": 1, "disk2": 1})])


def _labels(ax):
    return [ln.get_label() for ln in ax.get_lines()]


def test_plot_is_lazily_the_module_and_matplotlib_lazy():
    import importlib

    mod = importlib.import_module("qmodels.plot")
    assert qm.plot is mod
    src = open(mod.__file__).read()
    top = src[: src.index("def _axes")]
    assert "import matplotlib" not in top  # imported inside the functions only


def test_throughput_curve_exact_bounds_and_n_star():
    net = central()
    ax = qm.plot.throughput_curve(net)
    labels = _labels(ax)
    for want in ("exact MVA", "ABA upper", "ABA lower", "BJB upper", "BJB lower"):
        assert want in labels
    b = qm.bounds(net)
    nstar = [ln for ln in ax.get_lines() if ln.get_label().startswith("N* = ")]
    assert len(nstar) == 1
    assert nstar[0].get_xdata()[0] == pytest.approx(float(b.saturation_population))
    # N* = (D + Z)/Dmax = (0.15 + 2)/0.08 by hand
    assert float(b.saturation_population) == pytest.approx(2.15 / 0.08)
    exact = next(ln for ln in ax.get_lines() if ln.get_label() == "exact MVA")
    r = qm.mva(net, curve=True).curve
    assert np.array_equal(exact.get_ydata(), r.throughput)
    # the exact curve lies inside the ABA band at every n >= 1
    up = next(ln for ln in ax.get_lines() if ln.get_label() == "ABA upper").get_ydata()
    lo = next(ln for ln in ax.get_lines() if ln.get_label() == "ABA lower").get_ydata()
    assert np.all(r.throughput[1:] <= up + 1e-12) and np.all(r.throughput[1:] >= lo - 1e-12)
    assert ax.get_xlabel() == "population N"


def test_curve_plot_result_plot_response_time():
    net = central()
    # Curve.plot: the solver records the network, so the bounds and N* are drawn
    # (as the README promises); bounds=False, or a curve without a network, draws none
    ax = qm.mva(net, curve=True).curve.plot()
    assert "ABA upper" in _labels(ax) and any(x.startswith("N* = ") for x in _labels(ax))
    ax = qm.mva(net, curve=True).curve.plot(bounds=False, n_star=False)
    assert _labels(ax) == ["exact MVA"]
    import dataclasses

    bare = dataclasses.replace(qm.mva(net, curve=True).curve, network=None)
    assert _labels(bare.plot()) == ["exact MVA"]
    ax = qm.mva(net, curve=True).curve.plot(bounds=qm.bounds(net))
    assert "ABA upper" in _labels(ax)
    ax = qm.mva(net).plot(metric="response_time")
    assert ax.get_ylabel().startswith("response time")
    assert "BJB lower" in _labels(ax)
    # multi-class result: one bar per station
    mc = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                    [qm.Closed("a", 2, visits={"cpu": 1, "disk": 1}),
                     qm.Closed("b", 3, visits={"cpu": 1, "disk": 2})])
    ax = qm.mva(mc).plot()
    assert len(ax.patches) == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cpu", "disk"]


def test_utilization_regions_and_switch_point():
    # disk2's service time grows past disk's (0.08): the bottleneck moves
    # from disk to disk2 between 0.07 and 0.09, where the utilisations cross
    net = central(n=30)
    frame = qm.sweep(net, {"disk2.service": [0.02, 0.05, 0.07, 0.09, 0.12]}, progress=False)
    ax = qm.plot.utilization(frame, x="disk2.service")
    assert _labels(ax)[:3] == ["cpu", "disk", "disk2"]
    assert len(ax.switch_points) == 1
    v, before, after = ax.switch_points[0]
    assert (before, after) == ("disk", "disk2")
    assert 0.07 < v < 0.09
    # two shaded regions (patches), one dashed switch line, one annotation
    assert len(ax.patches) == 2
    assert any(t.get_text() == "disk \u2192 disk2" for t in ax.texts)
    # with exact regions from the symbolic solver, the switch is at D = 0.08
    import sympy as sp

    s = sp.Symbol("s", positive=True)
    sym = qm.Network([qm.Queue("cpu", sp.Rational(5, 100)), qm.Queue("disk", sp.Rational(8, 100)),
                      qm.Queue("disk2", s)],
                     [qm.Closed("tx", 30, think_time=2, visits={"cpu": 1, "disk": 1,
                                                                "disk2": 1})])
    regions = qm.bottleneck_regions(sym, s, domain=(0, 1))
    ax = qm.plot.utilization(frame, x="disk2.service", regions=regions)
    assert ax.switch_points[0][0] == pytest.approx(0.08)


def test_utilization_refuses_ambiguous_table():
    frame = qm.sweep(central(), {"disk2.service": [0.02, 0.1], "tx.population": [2, 5]},
                     progress=False)
    with pytest.raises(qm.InvalidValueError, match="tx.population also vary"):
        qm.plot.utilization(frame, x="disk2.service")


def test_sweep_plot_hue_and_pipe():
    frame = qm.sweep(central(), {"disk2.service": [0.02, 0.1],
                                 "tx.population": [1, 5, 10, 20]}, progress=False)
    ax = frame.pipe(qm.plot.sweep, x="tx.population", y="X", hue="disk2.service")
    assert len(ax.get_lines()) == 2
    assert ax.get_legend().get_title().get_text() == "disk2.service"
    line = ax.get_lines()[0]
    ref = frame[(frame.scope == "class") & (frame["disk2.service"] == 0.02)]
    assert np.array_equal(line.get_xdata(), ref["tx.population"].to_numpy())
    assert np.array_equal(line.get_ydata(), ref["X"].to_numpy())
    # U: station rows, one line per station
    ax = qm.plot.sweep(frame[frame["disk2.service"] == 0.1], x="tx.population", y="U")
    assert sorted(_labels(ax)) == ["cpu", "disk", "disk2"]


def test_sweep_plot_sim_has_error_bars_and_compare():
    net = central(n=5)
    vary = {"tx.population": [2, 5]}
    sim = qm.sweep(net, vary, method="sim", seed=3,
                   options={"horizon": 300.0, "replications": 3}, progress=False)
    ax = qm.plot.sweep(sim, x="tx.population", y="X")
    assert len(ax.containers) == 1  # one ErrorbarContainer
    ana = qm.sweep(net, vary, progress=False)
    ax = qm.plot.compare(ana, sim, x="tx.population", metric="X")
    assert "tx analytic" in _labels(ax)
    assert len(ax.containers) == 1
    # Result vs SimResult of one network: classes and stations, with intervals
    r = qm.mva(net)
    s = qm.simulate(net, seed=1, horizon=300.0, replications=3)
    ax = s.plot(analytic=r, metric="X")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["tx", "cpu", "disk", "disk2"]
    eb = ax.containers[0]
    assert len(eb.lines[0].get_ydata()) == 4
    ax = s.plot()
    assert len(ax.patches) == 3   # one bar per station, with error bars
    assert len(ax.containers) >= 1


def test_response_time_breakdown_adds_up():
    net = central()
    r = qm.mva(net)
    ax = qm.plot.response_time_breakdown(r)
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 3
    assert sum(heights) == pytest.approx(r.R["tx"], rel=1e-12)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["cpu", "disk", "disk2"]
    ax = qm.plot.response_time_breakdown(qm.mva(net, curve=True).curve)
    assert len(ax.collections) == 3
    frame = qm.sweep(net, {"disk2.service": [0.02, 0.05, 0.1]}, progress=False)
    ax = qm.plot.response_time_breakdown(frame, x="disk2.service")
    assert len(ax.collections) == 3


def test_energy_bars_sum_to_energy_per_transaction():
    net = qm.Network([qm.Queue("disk", 0.025, power=qm.Power(busy=6.8, idle=4.0)),
                      qm.Queue("cpu", 0.010, power=qm.Power(busy=95, idle=40))],
                     [qm.Closed("tx", 10, visits={"disk": 1, "cpu": 1})])
    rep = qm.energy(qm.mva(net))
    ax = qm.plot.energy(rep)
    widths = [p.get_width() for p in ax.patches]
    assert len(widths) == 4   # busy and idle share per device
    assert sum(widths) == pytest.approx(float(rep.energy_per_transaction), rel=1e-12)
    # busy part of the disk = P_busy D = 6.8 x 0.025 (E = P x T per transaction)
    assert widths[0] == pytest.approx(6.8 * 0.025, rel=1e-9)
    reps = {n: qm.energy(qm.mva(net.with_population(n))) for n in (1, 2, 5, 10)}
    ax = qm.plot.energy(reps, xlabel="N")
    y = ax.get_lines()[0].get_ydata()
    assert list(y) == [float(v.energy_per_transaction) for v in reps.values()]
    assert y[0] > y[-1]   # idle power is shared by more transactions


def test_plots_draw_on_given_axes():
    fig, ax = plt.subplots()
    assert qm.plot.throughput_curve(central(), ax=ax) is ax
    assert "matplotlib" in sys.modules


def test_utilization_of_a_bounds_sweep_is_a_typed_refusal():
    """A bounds sweep has no U column: qm.plot.utilization used to raise
    pandas' bare KeyError; it is an InvalidValueError saying why."""
    frame = qm.sweep(central(), {"disk.service": [0.05, 0.1]}, method="bounds",
                     progress=False)
    with pytest.raises(qm.InvalidValueError, match="no utilisation column 'U'"):
        qm.plot.utilization(frame, x="disk.service")


def test_result_plot_of_a_pool_model_draws_the_stations():
    """``r.plot()`` on a CTMC result of a model with a token pool used to
    raise "exact MVA cannot honour it" (the user asked for no MVA); it
    draws the per-station utilisation bars of that result instead (the
    bars are the result's own U, checked against the one token over two
    1-second stations: X = 1/2, so U = 1/2 at each, by hand)."""
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                     [qm.Closed("t", 4, routing={"a": {"b": 1}, "b": {"a": 1}})],
                     pools=[qm.TokenPool("tok", 1, "a", "b")])
    ax = qm.solve(net, method="ctmc").plot()
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([0.5, 0.5], abs=1e-12)
    # an exact single-class result still draws its throughput curve
    assert "exact MVA" in _labels(qm.mva(central(), curve=True).plot())


def test_utilization_marks_a_pool_handing_the_bottleneck_to_a_station():
    """A pool can be the bottleneck (README: the SPAX buffer hands it to the
    switch port as slots are added), but the utilisation plot drew station
    rows only, so nothing was shaded while the pool held it and no switch
    was marked.  The pool is a line now, and the switch point sits between
    the grid points where the solver's own bottleneck flags change."""
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 0.5), qm.Delay("z", 2.0)],
                     [qm.Closed("t", 5, routing={"a": {"b": 1}, "b": {"z": 1}, "z": {"a": 1}})],
                     pools=[qm.TokenPool("tok", 1, "a", "b")])
    frame = qm.sweep(net, {"tok.tokens": [1, 2, 3, 4]}, method="ctmc", progress=False)
    flags = frame[frame.bottleneck]
    before = flags[flags["tok.tokens"] == 2]["name"].tolist()
    after = flags[flags["tok.tokens"] == 3]["name"].tolist()
    assert before != after                         # the solver says it moves
    ax = qm.plot.utilization(frame, x="tok.tokens")
    assert "tok" in _labels(ax)
    [(v, a, b)] = ax.switch_points
    assert 2 <= v <= 3 and [a] == before and [b] == after


def _pool_cycle():
    return qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 0.5), qm.Delay("z", 2.0)],
                      [qm.Closed("t", 5, routing={"a": {"b": 1}, "b": {"z": 1}, "z": {"a": 1}})],
                      pools=[qm.TokenPool("tok", 1, "a", "b")])


def test_response_time_breakdown_of_a_pool_model_adds_up_to_r():
    """Jobs waiting for a token are in no station, so the breakdown of a
    model with a pool stacked to 3.5 s where R = 7.5 s (the CTMC).  A
    ``waiting for tok`` segment (jobs waiting / X, Little's law) completes
    it, for a solved and a simulated result and for a sweep table."""
    net = _pool_cycle()
    r = qm.solve(net, method="ctmc")
    ax = qm.plot.response_time_breakdown(r)
    assert sum(p.get_height() for p in ax.patches) == pytest.approx(r.R["t"], rel=1e-9)
    assert "waiting for tok" in ax.get_legend_handles_labels()[1]
    plt.close("all")
    s = qm.simulate(net, seed=1, horizon=500.0, replications=4, progress=False)
    ax = qm.plot.response_time_breakdown(s)
    assert sum(p.get_height() for p in ax.patches) == pytest.approx(s.R["t"].mean, rel=0.02)
    plt.close("all")
    df = qm.sweep(net, {"tok.tokens": [1, 2]}, method="ctmc", progress=False)
    ax = qm.plot.response_time_breakdown(df, x="tok.tokens")
    assert "waiting for tok" in ax.get_legend_handles_labels()[1]
    top = ax.collections[-1].get_paths()[0].vertices[:, 1].max()   # the stack's upper edge
    assert top == pytest.approx(df[df.scope == "class"]["R"].max(), rel=1e-9)


def test_plot_of_a_symbolic_result_is_a_typed_refusal():
    """``qm.mva_symbolic(net).plot()`` died in a bare "Cannot convert
    expression to float"; it is an UnsupportedModelError pointing to
    ``evaluate``, and the evaluated result plots its numbers (U of the
    single station at S = 1, N = 1: one job always there, U = 1)."""
    import sympy as sp

    S = sp.Symbol("S", positive=True)
    net = qm.Network([qm.Queue("cpu", S)], [qm.Closed("t", 1, visits={"cpu": 1})])
    r = qm.mva_symbolic(net)
    with pytest.raises(qm.UnsupportedModelError, match="evaluate"):
        r.plot()
    with pytest.raises(qm.UnsupportedModelError, match="evaluate"):
        qm.plot.stations(r)
    ax = qm.plot.stations(r.evaluate({"S": 1}))
    assert [p.get_height() for p in ax.patches] == pytest.approx([1.0])


def test_plot_misuse_is_typed_and_says_what_to_do():
    """Four slips that ended in bare pandas/attribute errors: a hue column
    the table lacks (KeyError), compare() given two analytic results
    (AttributeError 'mean'), stations() given bounds (no 'U'), and the
    breakdown of a table where two parameters vary told the user to pass a
    hue= it does not take."""
    net = central()
    frame = qm.sweep(net, {"disk2.service": [0.02, 0.1], "tx.population": [2, 5]},
                     progress=False)
    with pytest.raises(qm.InvalidValueError, match="no column 'nope'"):
        qm.plot.sweep(frame, x="tx.population", hue="nope")
    r = qm.mva(net)
    with pytest.raises(qm.InvalidValueError, match="no confidence intervals"):
        qm.plot.compare(r, r)
    with pytest.raises(qm.InvalidValueError, match="bounds have no per-station"):
        qm.plot.stations(qm.bounds(net))
    with pytest.raises(qm.InvalidValueError, match=r"frame\.query") as e:
        qm.plot.response_time_breakdown(frame, x="tx.population")
    assert "hue=" not in str(e.value)


def test_utilization_leaves_out_delay_stations_by_default():
    """The README's two-tier model has a 'users' delay whose U is the mean
    number of users thinking (about 40): drawn among the queues' fractions
    it flattened every other line.  The sweep names its delay stations
    (attrs["delays"]) and the plot leaves them out unless asked for."""
    net = qm.Network([qm.Delay("users", 5.0), qm.Queue("cpu", 0.010, servers=4),
                      qm.Queue("disk", 0.025)],
                     [qm.Closed("tx", 40, visits={"users": 1, "cpu": 1, "disk": 0.27})])
    frame = qm.sweep(net, {"disk.service": [0.025, 0.5]}, progress=False)
    assert frame.attrs["delays"] == ["users"]
    users_u = frame[(frame.name == "users")]["U"].max()
    assert users_u > 1          # the mean number busy at the delay (why it is left out)
    ax = qm.plot.utilization(frame, x="disk.service")
    assert _labels(ax) == ["cpu", "disk"]
    assert ax.get_ylim()[1] <= 1.2
    ax = qm.plot.utilization(frame, x="disk.service", stations=["users", "disk"])
    assert _labels(ax) == ["users", "disk"]


def test_utilization_of_a_model_function_sweep_leaves_out_busy_delays():
    """A sweep of a model function carries no list of delays (the function
    is not called again for it); a station whose U exceeds 1 (a delay's
    mean number busy: no server or pool fraction can) is left out too."""
    def build(s):
        return qm.Network([qm.Delay("users", 5.0), qm.Queue("disk", s)],
                          [qm.Closed("tx", 40, visits={"users": 1, "disk": 1})])

    frame = qm.sweep(build, {"s": [0.025, 0.05]}, progress=False)
    assert "delays" not in frame.attrs
    assert _labels(qm.plot.utilization(frame, x="s")) == ["disk"]


def test_axes_name_their_units():
    # a sweep's x axis is the parameter path with its unit, and the bottleneck
    # regions' y axis names the per-server demands it draws (it said D_max,
    # the envelope, for every station's line)
    import sympy as sp

    frame = qm.sweep(central(), {"disk2.service": [0.02, 0.1]}, progress=False)
    assert qm.plot.sweep(frame, x="disk2.service", y="X").get_xlabel() == "disk2.service [s]"
    assert qm.plot.utilization(frame, x="disk2.service").get_xlabel() == "disk2.service [s]"
    B = sp.Symbol("B", positive=True)
    pkt = qm.Network([qm.Queue("buffer", sp.Rational(8, 10**6), servers=B),
                      qm.Queue("dma", sp.Rational(2, 10**6))],
                     [qm.Closed("pkt", 4, visits={"buffer": 1, "dma": 1})])
    ax = qm.bottleneck_regions(pkt, B, domain=(1, sp.oo)).plot(span=(1, 8))
    assert ax.get_ylabel() == "per-server demand $D_k / c_k$ [s]"
    assert any(t.get_text() == "max: $D_{\\max}$" for t in ax.get_legend().get_texts())
    plt.close("all")


def test_throughput_curve_of_a_large_population_samples_its_bounds():
    # A curve of 3,000 populations: the bounds are drawn through at most 256
    # evenly spread populations plus the two integers around N*, where ABA's
    # min(N / (D + Z), 1 / D_max) has its corner (Lazowska et al. 1984,
    # sec. 5.2); every drawn value is the bound solved at that population.
    net = qm.Network([qm.Queue("a", 0.001), qm.Queue("b", 0.0005), qm.Delay("rtt", 0.2)],
                     [qm.Closed("c", 3000, visits={"a": 1, "b": 1, "rtt": 1})])
    ax = qm.plot.throughput_curve(qm.mva(net, curve=True))
    line = {ln.get_label(): ln for ln in ax.get_lines()}["ABA upper"]
    x, y = line.get_xdata(), line.get_ydata()
    assert 200 <= len(x) <= 258
    n_star = 0.2015 / 0.001          # (D + Z) / D_max
    assert {int(np.floor(n_star)), int(np.ceil(n_star))} <= set(int(v) for v in x)
    for n in (x[0], x[len(x) // 2], x[-1], np.floor(n_star)):
        want = min(n / 0.2015, 1 / 0.001)
        assert y[list(x).index(n)] == pytest.approx(want, rel=1e-12)
    plt.close("all")


def test_stations_utilisation_leaves_delays_out():
    # N = 300 jobs, Z = 5 s at the delay, D = 0.01 s at the queue: the queue
    # saturates (X = 100/s) and the delay holds X Z = 500 / (1 + ...) jobs,
    # a number of jobs, not a busy fraction: the U plot must not draw it.
    net = qm.Network([qm.Queue("cpu", 0.01), qm.Delay("think", 5.0)],
                     [qm.Closed("c", 300, visits={"cpu": 1, "think": 1})])
    r = qm.mva(net)
    assert r.U["think"] > 1
    ax = qm.plot.stations(r)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["cpu"]
    assert max(p.get_height() for p in ax.patches) <= 1
    assert "think" in ax.get_xlabel()
    ax = qm.plot.stations(r, metric="Q")        # jobs: the delay stays
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cpu", "think"]
    plt.close("all")
