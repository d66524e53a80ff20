"""Bottleneck regions and switch points: exact (sympy) against a numeric
sweep (grid + Brent), and against hand-solved crossings written here."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic.laws import saturation_population
from qmodels.analytic.mva import mva
from qmodels.errors import InvalidValueError, UnknownNameError, UnsupportedModelError
from qmodels.symbolic.shifts import (
    BottleneckRegions,
    ResponseTimeAsymptote,
    bottleneck_regions,
    bottleneck_sweep,
    capacity_demands,
    demand_crossings,
    response_time_asymptote,
)

matplotlib.use("Agg")

b = sp.Symbol("b", positive=True)  # bytes per request
B = sp.Symbol("B", positive=True, integer=True)  # buffer slots


def io_path(size, slots=4, n=8):
    """buffer (slots servers) -> DMA -> switch port, per request of `size`
    bytes: DMA 2 us set-up + size / 400 MB/s; port size / 100 MB/s;
    buffer holds a packet for 10 us + size / 50 MB/s, over `slots` slots."""
    return qm.Network(
        [qm.Queue("buffer", sp.Rational(1, 10**5) + size / (50 * 10**6), servers=slots),
         qm.Queue("dma", sp.Rational(2, 10**6) + size / (400 * 10**6)),
         qm.Queue("port", size / (100 * 10**6)),
         qm.Delay("cpu", sp.Rational(1, 1000))],
        [qm.Closed("io", n, visits={"buffer": 1, "dma": 1, "port": 1, "cpu": 1})],
    )


def mathtext_ok(tex):
    from matplotlib.mathtext import MathTextParser

    MathTextParser("agg").parse("$" + tex + "$")
    return True


# ---------------------------------------------------------------------------
# hand-solved crossings
# ---------------------------------------------------------------------------

def test_io_path_regions_by_hand():
    # buffer/4 = (1e-5 + b/5e7)/4 ; dma = 2e-6 + b/4e8 ; port = b/1e8
    # buffer = dma:   2.5e-6 + b/2e8 = 2e-6 + b/4e8  -> b < 0: no crossing
    # buffer = port:  2.5e-6 + b/2e8 = b/1e8          -> b = 500
    # dma = port:     2e-6 + b/4e8 = b/1e8            -> b = 800/3 (buffer wins there)
    r = bottleneck_regions(io_path(b), b)
    assert isinstance(r, BottleneckRegions)
    assert [s.value for s in r.switch_points] == [500]
    assert r.switch_points[0].before == ("buffer",)
    assert r.switch_points[0].after == ("port",)
    assert [x.labels for x in r.regions] == [("buffer",), ("port",)]
    assert r.regions[0].lower == 0 and r.regions[-1].upper == sp.oo
    assert r.at(100) == ("buffer",) and r.at(1000) == ("port",)
    assert set(r.at(500)) == {"buffer", "port"}
    # X_max = 1/Dmax piecewise: at b = 1000, port D = 1e-5 -> 1e5 per second
    assert r.max_throughput.subs(b, 1000) == 100000
    assert demand_crossings(io_path(b), b, "dma", "port") == (sp.Rational(800, 3),)


def test_more_slots_move_the_bottleneck_to_dma():
    # SPAX (CASES.md 1): more buffers move the bottleneck to the DMA.
    # size 64 B: buffer D = 1e-5 + 64/5e7 = 1.128e-5 per slot-set; dma
    # 2e-6 + 64/4e8 = 2.16e-6; port 6.4e-7.  buffer/B = dma at
    # B = 1.128e-5/2.16e-6 = 1128/216 = 47/9.
    r = bottleneck_regions(io_path(64, slots=B), B, domain=(1, math.inf))
    assert [s.value for s in r.switch_points] == [sp.Rational(47, 9)]
    assert r.switch_points[0].before == ("buffer",) and r.switch_points[0].after == ("dma",)
    # numeric: exact MVA utilisations at integer B show the same order
    for slots, top in ((4, "buffer"), (5, "buffer"), (6, "dma"), (16, "dma")):
        res = mva(qm.Network(
            [qm.Queue("buffer", 1.128e-5, servers=slots), qm.Queue("dma", 2.16e-6),
             qm.Queue("port", 6.4e-7), qm.Delay("cpu", 1e-3)],
            [qm.Closed("io", 8, visits={"buffer": 1, "dma": 1, "port": 1, "cpu": 1})]))
        assert res.bottleneck == (top,)


def test_symbolic_equals_sweep_on_io_path():
    r = bottleneck_regions(io_path(b), b)
    grid = np.linspace(1, 2000, 200)
    s1 = bottleneck_sweep(lambda x: io_path(x), grid)
    s2 = bottleneck_sweep(lambda x: io_path(x), grid, by="utilization")
    for s in (s1, s2):
        assert len(s.switch_points) == len(r.switch_points) == 1
        assert math.isclose(s.switch_points[0].value, float(r.switch_points[0].value),
                            rel_tol=1e-9)
        assert s.switch_points[0].before == r.switch_points[0].before
        assert s.switch_points[0].after == r.switch_points[0].after
    unrefined = bottleneck_sweep(lambda x: io_path(x), grid, refine=False)
    assert abs(unrefined.switch_points[0].value - 500) < grid[1] - grid[0]


def test_crossing_with_symbolic_rates():
    r1, r2, t0 = sp.symbols("r1 r2 t0", positive=True)
    net = qm.Network([qm.Queue("x", t0 + b / r1), qm.Queue("y", b / r2)],
                     [qm.Closed("io", 2, visits={"x": 1, "y": 1})])
    # t0 + b/r1 = b/r2  ->  b = t0 r1 r2 / (r1 - r2)
    (c,) = demand_crossings(net, b, "x", "y")
    assert sp.simplify(c - t0 * r1 * r2 / (r1 - r2)) == 0
    # with values the regions follow
    reg = bottleneck_regions(net, b, values={"r1": 4, "r2": 1, "t0": 3})
    assert [s.value for s in reg.switch_points] == [4]


def test_quadratic_crossing_is_exact_irrational():
    # D_x = b^2, D_y = 2: crossing at sqrt(2)
    net = qm.Network([qm.Queue("x", b**2), qm.Queue("y", 2)],
                     [qm.Closed("j", 1, visits={"x": 1, "y": 1})])
    r = bottleneck_regions(net, b)
    assert r.switch_points[0].value == sp.sqrt(2)
    assert [x.labels for x in r.regions] == [("y",), ("x",)]
    s = bottleneck_sweep(lambda v: qm.Network([qm.Queue("x", v**2), qm.Queue("y", 2)],
                                              [qm.Closed("j", 1, visits={"x": 1, "y": 1})]),
                         np.linspace(0.1, 3, 30))
    assert math.isclose(s.switch_points[0].value, math.sqrt(2), rel_tol=1e-10)


def test_sweep_ignores_touching_ties():
    # x = |b - 1| + 1 touches y = 1 at b = 1 only: no switch; and x = y at
    # the first grid point only: no switch either.
    def touch(v):
        return qm.Network([qm.Queue("x", abs(v - 1) + 1), qm.Queue("y", 1.0)],
                          [qm.Closed("j", 1, visits={"x": 1, "y": 1})])

    s = bottleneck_sweep(touch, [0.0, 0.5, 1.0, 1.5, 2.0])
    assert s.bottlenecks[2] == ("x", "y")
    assert s.switch_points == ()
    s = bottleneck_sweep(touch, [1.0, 1.5, 2.0])
    assert s.switch_points == ()


def test_tie_interval_and_no_switch():
    net = qm.Network([qm.Queue("x", b), qm.Queue("y", b), qm.Queue("z", 1)],
                     [qm.Closed("j", 1, visits={"x": 1, "y": 1, "z": 1})])
    r = bottleneck_regions(net, b, domain=(2, 5))
    assert [x.labels for x in r.regions] == [("x", "y")]
    assert r.switch_points == ()


def test_multi_switch_matches_sweep_with_tie_point_on_grid():
    # z = 1, x = b/2, y = 3 - b ... on [0, 4]: y wins until y = 1 at b = 2
    # (z ties y there; z wins [2, 2]?), x = z at b = 2 too: a three-way tie
    # at b = 2 that lies on the grid.
    def net_of(v):
        return qm.Network([qm.Queue("x", v / 2), qm.Queue("y", 3 - v), qm.Queue("z", 1)],
                          [qm.Closed("j", 1, visits={"x": 1, "y": 1, "z": 1})])

    r = bottleneck_regions(net_of(b), b, domain=(0, 3))
    assert [s.value for s in r.switch_points] == [2]
    assert r.switch_points[0].before == ("y",) and r.switch_points[0].after == ("x",)
    s = bottleneck_sweep(net_of, np.linspace(0.5, 2.5, 9))  # 2.0 is a grid point
    assert [p.value for p in s.switch_points] == [2.0]
    assert s.switch_points[0].before == ("y",) and s.switch_points[0].after == ("x",)


# ---------------------------------------------------------------------------
# property: symbolic switch points = numeric sweep
# ---------------------------------------------------------------------------

coef = st.integers(min_value=0, max_value=50)


@settings(deadline=None, max_examples=20)
@given(a=st.lists(coef, min_size=3, max_size=3), c=st.lists(coef, min_size=3, max_size=3),
       servers=st.lists(st.integers(1, 3), min_size=3, max_size=3))
def test_symbolic_switch_points_equal_sweep(a, c, servers):
    """Demands a_k + c_k theta (per visit) on c-server queues, theta in
    [0, 10]: the switch points of the sympy envelope equal those found by
    sweeping a 201-point grid and refining with Brent's method."""
    assume(all(x + y > 0 for x, y in zip(a, c, strict=True)))

    def net_of(t):
        return qm.Network(
            [qm.Queue(f"s{k}", (a[k] + c[k] * t) / 10, servers=servers[k]) for k in range(3)],
            [qm.Closed("j", 2, visits={f"s{k}": 1 for k in range(3)})])

    theta = sp.Symbol("theta", nonnegative=True)
    r = bottleneck_regions(net_of(theta), theta, domain=(0, 10))
    widths = [float(x.upper - x.lower) for x in r.regions]
    assume(min(widths) > 0.2)  # every region spans several grid steps
    s = bottleneck_sweep(net_of, np.linspace(0, 10, 201))
    assert len(s.switch_points) == len(r.switch_points)
    for p, q in zip(s.switch_points, r.switch_points, strict=True):
        assert math.isclose(p.value, float(q.value), rel_tol=1e-9, abs_tol=1e-9)
        assert p.before == q.before and p.after == q.after


# ---------------------------------------------------------------------------
# response-time asymptote
# ---------------------------------------------------------------------------

def test_response_time_asymptote_switch_is_n_star():
    N = sp.Symbol("N", positive=True)
    net = qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.3), qm.Delay("lan", 0.5)],
                     [qm.Closed("tx", N, think_time=1, visits={"cpu": 1, "disk": 1, "lan": 1})])
    a = response_time_asymptote(net, N)
    assert isinstance(a, ResponseTimeAsymptote)
    # R >= max(D, N Dmax - Z): D = 1.0, Dmax = 0.3, Z = 1 -> N = 2/0.3 = 20/3
    (sw,) = a.switch_points
    assert sw.value == sp.Rational(20, 3)
    assert sw.before == ("no contention",) and sw.after == ("disk",)
    num = qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.3), qm.Delay("lan", 0.5)],
                     [qm.Closed("tx", 7, think_time=1, visits={"cpu": 1, "disk": 1, "lan": 1})])
    assert math.isclose(float(sw.value), saturation_population(num), rel_tol=1e-12)
    # the exact response time respects the asymptote on both sides
    for n in (3, 7, 12):
        r = mva(num.with_population(n))
        assert r.R["tx"] >= float(a.lambdify()(n)) - 1e-12


def test_response_time_asymptote_in_service_time():
    # D_cpu = s, D_disk = 0.3, N = 10, Z = 2: terms D = s + 0.3,
    # 10 s - 2 (cpu), 1 (disk).  disk vs D: 1 = s + .3 at s = .7;
    # cpu vs disk: 10 s - 2 = 1 at s = .3; cpu vs D: 10 s - 2 = s + .3 at
    # s = 23/90.  Envelope: s < .7 -> disk (1 >= s+.3 and 1 >= 10s-2 for s <= .3)...
    # for s in (.3, .7): cpu 10s-2 > 1: cpu; so disk on [0, .3], cpu after.
    s = sp.Symbol("s", positive=True)
    net = qm.Network([qm.Queue("cpu", s), qm.Queue("disk", 0.3)],
                     [qm.Closed("tx", 10, think_time=2, visits={"cpu": 1, "disk": 1})])
    a = response_time_asymptote(net, s, domain=(0, 2))
    assert [p.value for p in a.switch_points] == [sp.Rational(3, 10)]
    assert [r.labels for r in a.regions] == [("disk",), ("cpu",)]


# ---------------------------------------------------------------------------
# output: text, LaTeX, plots
# ---------------------------------------------------------------------------

def test_latex_and_text_render():
    r = bottleneck_regions(io_path(b), b)
    a = response_time_asymptote(io_path(b), b)
    for obj in (r, a):
        lines = obj.latex_lines()
        assert lines
        for line in lines:
            assert mathtext_ok(line)
        full = obj._repr_latex_()
        assert full.startswith("$$") and r"\begin{cases}" in full
        assert "switch" in repr(obj) or not obj.switch_points
    assert r.latex_lines()[-1] == r"b^{*}_{\mathrm{buffer} \to \mathrm{port}} = 500"
    assert "buffer -> port" in repr(r)
    assert list(r.to_frame()["winner"]) == ["buffer", "port"]
    sweep = bottleneck_sweep(lambda x: io_path(x), np.linspace(1, 1000, 11))
    assert "switch at 500: buffer -> port" in repr(sweep)
    assert list(sweep.to_frame().columns) == ["buffer", "dma", "port", "bottleneck"]


def test_piecewise_and_lambdify_agree_with_functions():
    r = bottleneck_regions(io_path(b), b)
    f = r.lambdify()
    x = np.array([10.0, 499.0, 501.0, 5000.0])
    expect = [max(float(v.subs(b, xi)) for v in r.functions.values()) for xi in x]
    assert np.allclose(f(x), expect, rtol=1e-12)
    assert math.isclose(r.lambdify("dma")(100.0), 2e-6 + 100 / 4e8, rel_tol=1e-12)


def test_plots_draw():
    import matplotlib.pyplot as plt

    r = bottleneck_regions(io_path(64, slots=B), B, domain=(1, math.inf))
    ax = r.plot()
    assert len(ax.lines) == 3 + 1 + 1  # 3 stations, the envelope, 1 switch line
    ax = r.plot(kind="utilization", at=[1, 2, 4, 8])
    assert len(ax.lines[0].get_xdata()) == 4
    ax = bottleneck_sweep(lambda x: io_path(x), np.linspace(1, 1000, 11)).plot()
    assert ax.get_ylabel() == "D/c"
    a = response_time_asymptote(io_path(b), b)
    a.plot(span=(0, 1000))
    plt.close("all")


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def test_errors():
    net = io_path(b)
    with pytest.raises(InvalidValueError, match="expected a qmodels Network, got int"):
        bottleneck_regions(1, b)
    with pytest.raises(InvalidValueError, match="theta must be a sympy Symbol, got 'b'"):
        bottleneck_regions(net, "b")
    with pytest.raises(InvalidValueError, match="theta = q does not occur in the network"):
        bottleneck_regions(net, sp.Symbol("q"))
    with pytest.raises(InvalidValueError, match="domain must be a pair"):
        bottleneck_regions(net, b, domain=(1,))
    with pytest.raises(InvalidValueError, match="lower < upper, got \\(5, 1\\)"):
        bottleneck_regions(net, b, domain=(5, 1))
    with pytest.raises(InvalidValueError, match="values must not fix theta = b"):
        bottleneck_regions(net, b, values={"b": 1})
    r1 = sp.Symbol("r1", positive=True)
    two = qm.Network([qm.Queue("x", b / r1), qm.Queue("y", 1)],
                     [qm.Closed("j", 1, visits={"x": 1, "y": 1})])
    with pytest.raises(UnsupportedModelError, match="give values for r1"):
        bottleneck_regions(two, b)
    only_delay = qm.Network([qm.Delay("d", b)], [qm.Closed("j", 1, visits={"d": 1})])
    with pytest.raises(UnsupportedModelError, match="no queueing station with a demand"):
        bottleneck_regions(only_delay, b)
    trans = qm.Network([qm.Queue("x", sp.exp(b)), qm.Queue("y", b + 2)],
                       [qm.Closed("j", 1, visits={"x": 1, "y": 1})])
    with pytest.raises(UnsupportedModelError, match="cannot find the crossings"):
        bottleneck_regions(trans, b)
    with pytest.raises(UnknownNameError, match="unknown station 'nope'"):
        demand_crossings(net, b, "nope", "dma")
    with pytest.raises(InvalidValueError, match="station 'cpu' is a delay or has no demand"):
        demand_crossings(net, b, "cpu", "dma")
    with pytest.raises(InvalidValueError, match="theta must be a sympy Symbol, got 3"):
        demand_crossings(net, 3, "port", "dma")
    op = qm.Network([qm.Queue("x", b)], [qm.Open("o", 1.0, visits={"x": 1})])
    with pytest.raises(UnsupportedModelError, match="class 'o' is open"):
        response_time_asymptote(op, b)
    two_cls = qm.Network([qm.Queue("x", b)], [qm.Closed("a", 1, visits={"x": 1}),
                                              qm.Closed("c", 1, visits={"x": 1})])
    with pytest.raises(UnsupportedModelError, match="single-class: name the class"):
        capacity_demands(two_cls)
    r = bottleneck_regions(net, b, domain=(1, 10**4))
    with pytest.raises(InvalidValueError, match="b = 0 is outside the domain"):
        r.at(0)
    with pytest.raises(UnknownNameError, match="unknown label 'zz'"):
        r.lambdify("zz")
    with pytest.raises(InvalidValueError, match="kind must be 'demand' or 'utilization'"):
        r.plot(kind="pie")


def test_sweep_errors():
    good = lambda x: io_path(x)  # noqa: E731
    with pytest.raises(InvalidValueError, match="by must be 'demand' or 'utilization', got 'u'"):
        bottleneck_sweep(good, [1, 2], by="u")
    with pytest.raises(InvalidValueError, match="net_factory must be callable"):
        bottleneck_sweep(3, [1, 2])
    with pytest.raises(InvalidValueError, match="at least 2 numbers"):
        bottleneck_sweep(good, [1])
    with pytest.raises(InvalidValueError, match="finite and strictly increasing"):
        bottleneck_sweep(good, [2, 1])
    with pytest.raises(InvalidValueError, match="must return a qmodels Network, got str"):
        bottleneck_sweep(lambda x: "net", [1, 2])
    with pytest.raises(InvalidValueError, match=r"returned a network with symbols \(b\)"):
        bottleneck_sweep(lambda x: io_path(b), [1, 2])
    alt = [io_path(1), qm.Network([qm.Queue("q", 1.0)], [qm.Closed("io", 1, visits={"q": 1})])]
    with pytest.raises(InvalidValueError, match="must return networks with the same stations"):
        bottleneck_sweep(lambda x: alt[int(x) - 1], [1, 2])
