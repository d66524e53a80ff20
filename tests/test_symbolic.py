"""Symbolic solvers: exact MVA and bounds as formulas.

Reference values:
- hand-derived MVA expressions for two queues and a delay, N = 1..3
  (written out below, from the recursion and from the product-form
  normalising constant, Buzen 1973);
- the numeric solver :func:`qmodels.analytic.mva.mva` at sampled points (an
  independent implementation: numba kernel / log-space convolution);
- the ABA formulas of Lazowska et al. 1984, Table 5.3, written out.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic.mva import mva
from qmodels.errors import InvalidValueError, UnknownNameError, UnsupportedModelError
from qmodels.results import Result
from qmodels.symbolic import (
    SymbolicBounds,
    SymbolicResult,
    exact,
    free_symbols,
    mva_symbolic,
    substitute,
    symbolic_bounds,
    symbols,
)

D1, D2, Z = symbols("D1 D2 Z")


def two_queues_delay(N):
    return qm.Network(
        [qm.Queue("a", D1), qm.Queue("b", D2), qm.Delay("think", Z)],
        [qm.Closed("tx", N, visits={"a": 1, "b": 1, "think": 1})],
    )


def mathtext_ok(tex: str) -> bool:
    from matplotlib.mathtext import MathTextParser

    MathTextParser("agg").parse("$" + tex + "$")
    return True


# ---------------------------------------------------------------------------
# hand-derived expressions, N = 1..3
# ---------------------------------------------------------------------------

def hand_X():
    """X(N) for queues D1, D2 and a delay Z.

    By the MVA recursion: X(1) = 1/T with T = D1 + D2 + Z;
    R_k(2) = D_k (1 + D_k/T), so X(2) = 2/(Z + D1 + D2 + (D1^2 + D2^2)/T)
    = 2T/(T^2 + D1^2 + D2^2).
    By the product form (Buzen 1973): G(n) = sum over n1 + n2 + n0 = n of
    D1^n1 D2^n2 Z^n0 / n0!, and X(N) = G(N-1)/G(N).
    """
    T = D1 + D2 + Z
    G0 = 1
    G1 = D1 + D2 + Z
    G2 = D1**2 + D1 * D2 + D2**2 + Z * (D1 + D2) + Z**2 / 2
    G3 = (D1**3 + D1**2 * D2 + D1 * D2**2 + D2**3 + Z * (D1**2 + D1 * D2 + D2**2)
          + Z**2 / 2 * (D1 + D2) + Z**3 / 6)
    X = {1: 1 / T, 2: 2 * T / (T**2 + D1**2 + D2**2), 3: G2 / G3}
    G = [G0, G1, G2, G3]
    # Q_k(N) = sum_{n=1..N} D_k^n G(N-n) / G(N)  (Buzen 1973)
    Qa = {n: sum(D1**i * G[n - i] for i in range(1, n + 1)) / G[n] for n in (1, 2, 3)}
    return X, Qa, G


@pytest.mark.parametrize("N", [1, 2, 3])
def test_mva_matches_hand_derivation(N):
    r = mva_symbolic(two_queues_delay(N))
    X, Qa, G = hand_X()
    assert sp.cancel(r.X["tx"] - X[N]) == 0
    # X(2) also equals G(1)/G(2): the recursion and the product form agree
    assert sp.cancel(X[2] - G[1] / G[2]) == 0
    assert sp.cancel(r.Q["a"] - Qa[N]) == 0
    assert sp.cancel(r.U["a"] - D1 * X[N]) == 0  # utilisation law
    # R = N/X - Z with Z = think_time = 0: the delay station counts in R
    assert sp.cancel(r.R["tx"] - N / X[N]) == 0
    # the delay station holds X Z jobs on average (Little)
    assert sp.cancel(r.Q["think"] - Z * X[N]) == 0
    # sum of queue lengths is N (everything is a station here)
    assert sp.cancel(sum(r.Q[s] for s in ("a", "b", "think")) - N) == 0


def test_population_zero_and_curve():
    r = mva_symbolic(two_queues_delay(0))
    assert r.X["tx"] == 0
    c = mva_symbolic(two_queues_delay(3), curve=True).curve
    X, _, _ = hand_X()
    assert c.population.tolist() == [0, 1, 2, 3]
    for n in (1, 2, 3):
        assert sp.cancel(c.X[n] - X[n]) == 0
    assert c.X[0] == 0 and c.R[0] == D1 + D2 + Z


def test_exact_rationals_for_numeric_network():
    # D = 1/20 and 2/25, N = 3, by hand (Algorithm 6.1, QSP sec. 6.3.2):
    # n=1: R = .05 + .08 = .13, X = 1/.13, Q = (5/13, 8/13)
    # n=2: R_a = .05 (18/13), R_b = .08 (21/13); sum = (0.9 + 1.68)/13 = 2.58/13
    # X(2) = 26/2.58
    net = qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08)],
                     [qm.Closed("tx", 2, visits={"cpu": 1, "disk": 1})])
    r = mva_symbolic(net)
    assert r.X["tx"] == sp.Rational(2600, 258)
    assert isinstance(r.X["tx"], sp.Rational)


def test_multiserver_and_load_dependent_by_hand():
    # One 2-server queue with demand D and a delay Z, N = 2: birth-death
    # chain of jobs at the queue; p(n) ~ (D^n / a(1)..a(n)) Z^(N-n)/(N-n)!
    # X = (sum_n p(n) a(n)/D) = rate out of the queue.
    D = symbols("D")
    net = qm.Network([qm.Queue("q", D, servers=2), qm.Delay("t", Z)],
                     [qm.Closed("tx", 2, visits={"q": 1, "t": 1})])
    r = mva_symbolic(net)
    w = [Z**2 / 2, D * Z, D**2 / 2]  # n = 0, 1, 2 at the queue; a(1)=1, a(2)=2
    X_hand = (w[1] * 1 / D + w[2] * 2 / D) / sum(w)
    assert sp.cancel(r.X["tx"] - X_hand) == 0
    assert sp.cancel(r.U["q"] - X_hand * D / 2) == 0
    # load-dependent a = (1, 3/2): U = 1 - P(empty)
    net = qm.Network([qm.LoadDependent("q", D, rate_multipliers=(1, 1.5)), qm.Delay("t", Z)],
                     [qm.Closed("tx", 2, visits={"q": 1, "t": 1})])
    r = mva_symbolic(net)
    w = [Z**2 / 2, D * Z, D**2 / sp.Rational(3, 2)]
    assert sp.cancel(r.X["tx"] - (w[1] / D + w[2] * sp.Rational(3, 2) / D) / sum(w)) == 0
    assert sp.cancel(r.U["q"] - (1 - w[0] / sum(w))) == 0


def test_factor_option_gives_equal_expressions():
    a = mva_symbolic(two_queues_delay(2), simplify="factor")
    b = mva_symbolic(two_queues_delay(2), simplify=None)
    assert sp.cancel(a.X["tx"] - b.X["tx"]) == 0


# ---------------------------------------------------------------------------
# symbolic = numeric at sampled points
# ---------------------------------------------------------------------------

S_a, S_b, S_c, Zs = symbols("S_a S_b S_c Z_s")


@lru_cache(maxsize=None)
def symbolic_case(kind: str, N: int):
    """A few network shapes, solved once symbolically."""
    if kind == "fixed":
        st_ = [qm.Queue("a", S_a), qm.Queue("b", S_b), qm.Delay("c", S_c)]
    elif kind == "multi":
        st_ = [qm.Queue("a", S_a, servers=2), qm.Queue("b", S_b), qm.Delay("c", S_c)]
    else:
        st_ = [qm.LoadDependent("a", S_a, rate_multipliers=(1, 1.8, 2.4)), qm.Queue("b", S_b),
               qm.Queue("c", S_c, servers=3)]
    net = qm.Network(st_, [qm.Closed("tx", N, think_time=Zs,
                                     visits={"a": 1, "b": 2, "c": 0.5})])
    return net, mva_symbolic(net)


pos = st.floats(min_value=1e-3, max_value=10.0, allow_nan=False)


@settings(deadline=None, max_examples=40)
@given(kind=st.sampled_from(["fixed", "multi", "ld"]), N=st.integers(1, 3),
       sa=pos, sb=pos, sc=pos, z=st.floats(min_value=0.0, max_value=10.0))
def test_symbolic_equals_numeric(kind, N, sa, sb, sc, z):
    net, r = symbolic_case(kind, N)
    vals = {S_a: sa, S_b: sb, S_c: sc, Zs: z}
    num = mva(substitute(net, vals))
    assert r.parameters == (S_a, S_b, S_c, Zs)
    fx = r.lambdify("X", "tx")
    assert math.isclose(fx(sa, sb, sc, z), num.X["tx"], rel_tol=1e-9)
    for s in ("a", "b", "c"):
        for m in ("Q", "U", "R"):
            f = r.lambdify(m, s)
            assert math.isclose(f(sa, sb, sc, z), getattr(num, m)[s], rel_tol=1e-8,
                                abs_tol=1e-12)
    ev = r.evaluate(vals)
    assert isinstance(ev, Result) and not isinstance(ev, SymbolicResult)
    assert math.isclose(ev.R["tx"], num.R["tx"], rel_tol=1e-9, abs_tol=1e-12)


def test_lambdify_vectorises():
    net, r = symbolic_case("fixed", 2)
    f = r.lambdify("X", "tx")
    x = np.linspace(0.1, 1.0, 5)
    out = f(x, 0.2, 0.3, 1.0)
    assert out.shape == (5,)
    for xi, oi in zip(x, out, strict=True):
        assert math.isclose(oi, mva(substitute(net, {S_a: xi, S_b: .2, S_c: .3, Zs: 1.})).X["tx"],
                            rel_tol=1e-9)
    g = r.lambdify("X", "tx", args=["Z_s", "S_c", "S_b", "S_a"])
    assert math.isclose(g(1.0, .3, .2, .5), f(.5, .2, .3, 1.0), rel_tol=1e-12)
    # a constant broadcasts
    c = mva_symbolic(qm.Network([qm.Queue("a", 0.5)], [qm.Closed("t", 1, visits={"a": 1})]))
    assert c.lambdify("X", "t", args=[])() == 2.0


def test_subs_partial_stays_symbolic():
    r = mva_symbolic(two_queues_delay(2))
    p = r.subs({"Z": 0})
    assert isinstance(p, SymbolicResult)
    # Z = 0: X(2) = 2(D1 + D2)/((D1+D2)^2 + D1^2 + D2^2)
    T = D1 + D2
    assert sp.cancel(p.X["tx"] - 2 * T / (T**2 + D1**2 + D2**2)) == 0
    assert p.parameters == (D1, D2)


# ---------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------

def test_symbolic_bounds_aba_by_hand():
    N = sp.Symbol("N", positive=True, integer=True)
    net = qm.Network([qm.Queue("a", D1), qm.Queue("b", D2)],
                     [qm.Closed("tx", N, think_time=Z, visits={"a": 1, "b": 2})])
    b = symbolic_bounds(net)
    assert isinstance(b, SymbolicBounds)
    # QSP eq. 5.3: N* = (D + Z)/Dmax, D = D1 + 2 D2
    assert sp.simplify(b.n_star - (D1 + 2 * D2 + Z) / sp.Max(D1, 2 * D2)) == 0
    assert sp.simplify(b.max_throughput - 1 / sp.Max(D1, 2 * D2)) == 0
    # ABA R lower = max(D, N Dmax - Z)
    assert sp.simplify(b.aba[2] - sp.Max(D1 + 2 * D2, N * sp.Max(D1, 2 * D2) - Z)) == 0


@settings(deadline=None, max_examples=30)
@given(d1=pos, d2=pos, z=st.floats(0.0, 10.0), n=st.integers(1, 30))
def test_symbolic_bounds_equal_numeric_and_bracket_exact(d1, d2, z, n):
    b = _bounds_case()
    N = b.population
    vals = {D1: d1, D2: d2, Z: z, N: n}
    num = b.evaluate(vals)
    # symbolic bounds are ABA and BJB (the numeric ones add GB and PB)
    want = {"throughput_lower": max(num.aba[0], num.bjb[0]),
            "throughput_upper": min(num.aba[1], num.bjb[1]),
            "response_time_lower": max(num.aba[2], num.bjb[2]),
            "response_time_upper": min(num.aba[3], num.bjb[3]),
            "max_throughput": num.max_throughput,
            "saturation_population": num.saturation_population}
    for name, value in want.items():
        f = b.lambdify(name, args=[D1, D2, Z, N])
        assert math.isclose(f(d1, d2, z, n), value, rel_tol=1e-9)
    x = mva(substitute(b.network, vals)).X["tx"]
    assert num.throughput_lower * (1 - 1e-9) <= x <= num.throughput_upper * (1 + 1e-9)


@lru_cache(maxsize=None)
def _bounds_case():
    N = sp.Symbol("N", positive=True, integer=True)
    net = qm.Network([qm.Queue("a", D1), qm.Queue("b", D2)],
                     [qm.Closed("tx", N, think_time=Z, visits={"a": 1, "b": 2})])
    return symbolic_bounds(net)


# ---------------------------------------------------------------------------
# LaTeX
# ---------------------------------------------------------------------------

def test_latex_renders_result():
    r = mva_symbolic(two_queues_delay(2))
    lines = r.latex_lines()
    assert len(lines) == 2 + 2 * 3
    for line in lines:
        assert mathtext_ok(line)
    assert r.latex("X", "tx").startswith(r"X_{\mathrm{tx}}(2) = \frac")
    full = r._repr_latex_()
    assert full.startswith("$$\\begin{aligned}") and full.endswith("\\end{aligned}$$")
    # the equation's right-hand side is sympy's LaTeX of the same expression
    assert r.latex("X").endswith(sp.latex(r.X["tx"]))


def test_latex_renders_bounds():
    b = _bounds_case()
    for line in b.latex_lines():
        assert mathtext_ok(line)
    assert b.latex("N*").startswith("N^{*} = ")
    assert b._repr_latex_().startswith("$$")
    assert "saturation_population" in repr(b)


def test_station_names_with_underscores_render():
    net = qm.Network([qm.Queue("switch_port", D1)], [qm.Closed("tx", 1, visits={"switch_port": 1})])
    r = mva_symbolic(net)
    assert r"\mathrm{switch\_port}" in r.latex("U", "switch_port")
    assert mathtext_ok(r.latex("U", "switch_port"))


# ---------------------------------------------------------------------------
# helpers and errors
# ---------------------------------------------------------------------------

def test_helpers():
    assert exact(0.27) == sp.Rational(27, 100)
    assert exact(float("inf")) == sp.oo
    net = two_queues_delay(2)
    assert free_symbols(net) == (D1, D2, Z)
    n2 = substitute(net, {"D1": 0.5, D2: 1})
    assert free_symbols(n2) == (Z,)
    assert n2.station("a").service == 0.5


def test_errors_in_helpers():
    with pytest.raises(InvalidValueError, match="not a number: None"):
        exact(None)
    with pytest.raises(InvalidValueError, match="expected a qmodels Network, got int"):
        free_symbols(3)
    net = two_queues_delay(2)
    with pytest.raises(UnknownNameError, match="unknown symbol 'Q'; parameters are D1, D2, Z"):
        substitute(net, {"Q": 1})
    with pytest.raises(InvalidValueError, match="values must be a mapping"):
        substitute(net, [1, 2])
    with pytest.raises(InvalidValueError, match="keys must be sympy symbols or names, got 3"):
        substitute(net, {3: 1})
    with pytest.raises(InvalidValueError, match="value of D1 must be a number"):
        substitute(net, {"D1": "x"})
    with pytest.raises(InvalidValueError, match=r"station 'a': service time must be a finite"):
        substitute(net, {"D1": -1.0})
    with pytest.raises(InvalidValueError, match="which is not a real number"):
        substitute(net, {"D1": sp.I})


def test_errors_in_mva_symbolic():
    with pytest.raises(InvalidValueError, match="expected a qmodels Network, got str"):
        mva_symbolic("net")
    op = qm.Network([qm.Queue("a", D1)], [qm.Open("o", 1.0, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="exactly one closed class .*o:open"):
        mva_symbolic(op)
    N = sp.Symbol("N", positive=True, integer=True)
    sym_n = qm.Network([qm.Queue("a", D1)], [qm.Closed("tx", N, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="population N is a symbol"):
        mva_symbolic(sym_n)
    with pytest.raises(UnsupportedModelError, match="population 9 > max_population = 8"):
        mva_symbolic(two_queues_delay(9))
    with pytest.raises(InvalidValueError, match="max_population must be an integer, got 2.5"):
        mva_symbolic(two_queues_delay(1), max_population=2.5)
    c = sp.Symbol("c", positive=True, integer=True)
    symc = qm.Network([qm.Queue("a", D1, servers=c)], [qm.Closed("tx", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="station 'a': servers = c is a symbol"):
        mva_symbolic(symc)
    cap = qm.Network([qm.Queue("a", D1, capacity=1)], [qm.Closed("tx", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="station 'a': finite capacity 1 can bind"):
        mva_symbolic(cap)
    pool = qm.Network([qm.Queue("a", D1), qm.Queue("b", D2)],
                      [qm.Closed("tx", 2, visits={"a": 1, "b": 1})],
                      pools=[qm.TokenPool("buf", 1, "a", "b")])
    with pytest.raises(UnsupportedModelError, match="token pool 'buf' breaks product form"):
        mva_symbolic(pool)
    zero = qm.Network([qm.Queue("a", 0.0)], [qm.Closed("tx", 2, visits={"a": 1})])
    with pytest.raises(InvalidValueError, match="all demands and the think time are zero"):
        mva_symbolic(zero)
    with pytest.raises(InvalidValueError, match="simplify must be None, 'cancel'"):
        mva_symbolic(two_queues_delay(1), simplify="expand")


def test_errors_in_result_methods():
    r = mva_symbolic(two_queues_delay(1))
    with pytest.raises(InvalidValueError, match="metric must be one of .*got 'W'"):
        r.expr("W", "a")
    with pytest.raises(InvalidValueError, match="utilization is per station: name the station"):
        r.expr("U")
    with pytest.raises(UnknownNameError, match="unknown station or class 'zz'"):
        r.expr("X", "zz")
    with pytest.raises(InvalidValueError, match="depends on D2, Z, which are not among args"):
        r.lambdify("X", "tx", args=["D1"])
    with pytest.raises(InvalidValueError, match=r"expected 3 argument\(s\) \(D1, D2, Z\), got 1"):
        r.lambdify("X", "tx")(1.0)
    with pytest.raises(InvalidValueError, match="evaluate: no value for Z"):
        r.evaluate({"D1": 1, "D2": 1})
    b = _bounds_case()
    with pytest.raises(InvalidValueError, match="bound must be one of .*got 'foo'"):
        b.lambdify("foo")
    with pytest.raises(InvalidValueError, match="evaluate: no value for N"):
        b.evaluate({D1: 1, D2: 1, Z: 1})


def test_errors_in_symbolic_bounds():
    with pytest.raises(InvalidValueError, match="expected a qmodels Network, got NoneType"):
        symbolic_bounds(None)
    num = qm.Network([qm.Queue("a", 1.0)], [qm.Closed("tx", 2, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="needs a network with sympy symbols"):
        symbolic_bounds(num)
    op = qm.Network([qm.Queue("a", D1)], [qm.Open("o", 1.0, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="class 'o' is open"):
        symbolic_bounds(op)


def test_symbolic_bounds_of_a_deterministic_fcfs_cycle_are_aba_only():
    """symbolic_bounds used to die with a bare TypeError once the numeric
    bounds (rightly) gave no BJB for a deterministic FCFS queue.  It gives
    ABA with the note saying why; at S = 1 the true X = 1 (two jobs
    alternate without waiting in a cycle of two unit deterministic
    services, by hand) lies within them."""
    S = sp.Symbol("S", positive=True)
    net = qm.Network([qm.Queue("cpu", S, distribution=qm.Deterministic()), qm.Queue("disk", 1)],
                     [qm.Closed("tx", 2, routing={"cpu": {"disk": 1}, "disk": {"cpu": 1}})])
    b = qm.symbolic_bounds(net)
    assert b.bjb is None and any("BJB" in n for n in b.notes)
    at1 = b.evaluate({"S": 1})
    assert at1.throughput_lower <= 1.0 <= at1.throughput_upper
