"""Bounds are guarantees: each one is checked against an independently
computed exact answer (exact MVA, the exact CTMC, published tables or a
derivation written here), and refused where no bound is proven.

References
----------
[QSP]  Lazowska, Zahorjan, Graham & Sevcik, *Quantitative System
       Performance*, Prentice-Hall 1984, ch. 5, Table 5.3.
[GB]   G. Casale, R. R. Muntz & G. Serazzi, "Geometric bounds: a
       non-iterative analysis technique for closed queueing networks",
       IEEE Trans. Computers 57(6), 2008, pp. 780-794, Tables IV and V.
[PB]   C.-T. Hsieh & S. S. Lam, "Two classes of performance bounds for closed
       queueing networks", Performance Evaluation 7(1), 1987; the Table IV
       values reproduced by M. Marzolla's Octave queueing ``qncspb`` tests.
"""

import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import qmodels as qm
from qmodels.analytic import queues
from qmodels.analytic.bounds import geometric_bounds, proportional_bounds
from qmodels.analytic.laws import job_speed
from qmodels.cli import main
from qmodels.errors import UnsupportedModelError
from qmodels.model.distributions import Deterministic

TOL = 1e-9


def inside(b, x, r=None, tol=TOL):
    """x (and r) inside every bound set b carries, and inside the tightest."""
    sets = [v for v in (b.aba, b.bjb, b.gb, b.pb) if v is not None]
    sets.append((b.throughput_lower, b.throughput_upper,
                 b.response_time_lower, b.response_time_upper))
    for lo, hi, rlo, rhi in sets:
        assert lo * (1 - tol) - tol <= x <= hi * (1 + tol) + tol, (lo, x, hi)
        if r is not None:
            assert rlo * (1 - tol) - tol <= r <= rhi * (1 + tol) + tol, (rlo, r, rhi)


# ---------------------------------------------------------------------------
# 1. token pools
# ---------------------------------------------------------------------------

def one_token_two_stations(N=20):
    return qm.Network(
        [qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
        [qm.Closed("t", N, routing={"a": {"b": 1}, "b": {"a": 1}})],
        pools=[qm.TokenPool("tok", 1, "a", "b")])


def test_pool_is_a_station_for_the_bounds():
    # One token held from a through b: the pair is served one job at a
    # time, a cycle takes 1 + 1 s of the token, so X = 1/2 exactly (the CTMC
    # agrees).  The old bounds ignored the pool and said X = 0.952.
    net = one_token_two_stations()
    x = qm.ctmc(net).X["t"]
    assert x == pytest.approx(0.5, rel=1e-9)
    for b in (qm.bounds(net), qm.solve(net, method="bounds")):
        inside(b, x)
        # X <= tokens / (least holding time per cycle) = 1 / 2 (Little's law)
        assert b.throughput_upper == pytest.approx(0.5)
        # pessimistic: R <= N D = 40, X >= 20 / 40
        assert b.throughput_lower == pytest.approx(0.5)
        assert b.bjb is None and b.gb is None and b.pb is None
        assert any("tok" in n for n in b.notes)
        assert b.bottleneck == ("tok",)  # 1 token / 2 s beats 1 / 1 s at a or b


def test_pool_bounds_through_the_command_line(tmp_path, capsys):
    # the same model from a file, through `qmodels solve --method bounds`
    path = tmp_path / "pool.yaml"
    qm.save(one_token_two_stations(), path)
    assert main(["solve", str(path), "--method", "bounds", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    x = d["classes"]["t"]["X"]
    assert x["lower"] == pytest.approx(0.5) and x["upper"] == pytest.approx(0.5)


def spax_like(N, B, span_delay=False, S=(0.002, 0.010, 0.004, 0.006)):
    """think -> cpu -> [pool: dma -> (wire) -> port] -> pci -> think."""
    st_ = [qm.Delay("think", 0.05), qm.Queue("cpu", S[0]), qm.Queue("dma", S[1]),
           qm.Queue("port", S[2]), qm.Queue("pci", S[3])]
    route = {"think": {"cpu": 1}, "cpu": {"dma": 1}, "port": {"pci": 1}, "pci": {"think": 1}}
    if span_delay:
        st_.append(qm.Delay("wire", 0.02))
        route["dma"] = {"wire": 1}
        route["wire"] = {"port": 1}
    else:
        route["dma"] = {"port": 1}
    return qm.Network(st_, [qm.Closed("pkt", N, routing=route)],
                      pools=[qm.TokenPool("buf", B, "dma", "port")])


@pytest.mark.parametrize("N,B", [(3, 1), (5, 2), (6, 1), (4, 4)])
@pytest.mark.parametrize("span_delay", [False, True])
def test_pool_bounds_bracket_the_ctmc(N, B, span_delay):
    net = spax_like(N, B, span_delay)
    r = qm.ctmc(net)
    b = qm.bounds(net)
    inside(b, r.X["pkt"], r.R["pkt"])


def test_pool_bound_waiting_for_a_token_behind_a_delay():
    # The span holds a long delay (a token held while "on the wire"): jobs
    # wait for a token while no queue works.  The pessimistic bound counts
    # the span delay as a station; without it the bound would fail here.
    net = spax_like(6, 1, span_delay=True, S=(0.001, 0.001, 0.001, 0.001))
    x = qm.ctmc(net).X["pkt"]
    b = qm.bounds(net)
    inside(b, x)
    D_q = 4 * 0.001
    wrong = 6 / (6 * D_q + 0.05 + 0.02)   # span delay treated as outside
    assert wrong > x                       # ... would not be a bound
    assert b.throughput_upper == pytest.approx(1 / (0.001 + 0.02 + 0.001))  # B / H


def test_pool_bounds_refuse_what_they_cannot_bound():
    visits = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                        [qm.Closed("t", 2, visits={"a": 1, "b": 1})],
                        pools=[qm.TokenPool("tok", 1, "a", "b")])
    with pytest.raises(UnsupportedModelError, match="token pool 'tok'.*routing"):
        qm.bounds(visits)
    with pytest.raises(UnsupportedModelError, match="token pool 'tok'"):
        qm.solve(visits, method="bounds")
    # class x holds p (a..b) while it waits for q at b; class y holds q
    # (b..a) while it waits for p at a: the pools can deadlock
    cyc = qm.Network(
        [qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
        [qm.Closed("x", 2, routing={"a": {"b": 1}, "b": {"a": 1}}),
         qm.Closed("y", 2, routing={"b": {"a": 1}, "a": {"b": 1}})],
        pools=[qm.TokenPool("p", 1, "a", "b", classes=("x",)),
               qm.TokenPool("q", 1, "b", "a", classes=("y",)),
               qm.TokenPool("p2", 1, "a", "b", classes=("y",)),
               qm.TokenPool("q2", 1, "b", "a", classes=("x",))])
    with pytest.raises(UnsupportedModelError, match="cycle.*deadlock"):
        qm.bounds(cyc, "x")
    opened = qm.Network(
        [qm.Queue("a", 0.1), qm.Queue("b", 0.1)],
        [qm.Closed("x", 2, routing={"a": {"b": 1}, "b": {"a": 1}}),
         qm.Open("o", 1.0, routing={"source": {"a": 1}, "a": {"sink": 1}})],
        pools=[qm.TokenPool("tok", 1, "a", "b", classes=("x",))])
    with pytest.raises(UnsupportedModelError, match="token pool 'tok'.*closed classes"):
        qm.bounds(opened, "x")


def test_two_classes_sharing_a_one_token_pool():
    # Both classes hold the one token over a and b (1 s each): together
    # they complete one cycle per 2 s of token time, X_x + X_y <= 1/2; the
    # old bounds refused several classes.  Against the CTMC:
    two = qm.Network(
        [qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
        [qm.Closed("x", 2, routing={"a": {"b": 1}, "b": {"a": 1}}),
         qm.Closed("y", 2, routing={"a": {"b": 1}, "b": {"a": 1}})],
        pools=[qm.TokenPool("tok", 1, "a", "b")])
    r = qm.ctmc(two)
    assert r.X["x"] + r.X["y"] == pytest.approx(0.5, rel=1e-9)
    for cls in ("x", "y"):
        b = qm.bounds(two, cls)
        inside(b, r.X[cls], r.R[cls])
        assert b.throughput_upper <= 0.5 + 1e-12


def test_nested_pools_as_in_the_spax_io_path():
    # a buffer slot held over dma and port, the switch port over port and
    # link (taken at port while the slot is held, hand over hand): no cycle,
    # so the bounds are proven; both token laws bound X
    sts = [qm.Delay("think", 0.05), qm.Queue("dma", 0.010), qm.Queue("port", 0.004),
           qm.Queue("link", 0.008)]
    route = {"think": {"dma": 1}, "dma": {"port": 1}, "port": {"link": 1},
             "link": {"think": 1}}
    net = qm.Network(sts, [qm.Closed("pkt", 12, routing=route)],
                     pools=[qm.TokenPool("buf", 2, "dma", "port"),
                            qm.TokenPool("sw", 1, "port", "link")])
    r = qm.ctmc(net)
    b = qm.bounds(net)
    inside(b, r.X["pkt"], r.R["pkt"])
    # own service 12 / 0.072 = 167, dma 1 / 0.010 = 100, buf 2 / 0.014 = 143,
    # sw 1 / (0.004 + 0.008) = 83.3: the switch port's token binds
    assert b.throughput_upper == pytest.approx(1 / 0.012)
    assert r.X["pkt"] < 1 / 0.012
    assert b.bottleneck == ("sw",)  # a pool competes for the bottleneck


def test_binding_capacity_is_refused():
    net = qm.Network([qm.Queue("a", 1.0, capacity=2), qm.Queue("b", 0.5)],
                     [qm.Closed("t", 5, routing={"a": {"b": 1}, "b": {"a": 1}})])
    with pytest.raises(UnsupportedModelError, match="station 'a': finite capacity 2"):
        qm.bounds(net)
    ok = qm.Network([qm.Queue("a", 1.0, capacity=5), qm.Queue("b", 0.5)],
                    [qm.Closed("t", 5, routing={"a": {"b": 1}, "b": {"a": 1}})])
    inside(qm.bounds(ok), qm.ctmc(ok).X["t"])


# ---------------------------------------------------------------------------
# 2. several classes
# ---------------------------------------------------------------------------

def three_stations_two_classes():
    return qm.Network(
        [qm.Queue("cpu", 1.0, discipline="ps"), qm.Queue("d1", 1.0, discipline="ps"),
         qm.Queue("d2", 1.0, discipline="ps")],
        [qm.Closed("c0", 4, demands={"cpu": 2.0, "d1": 3.0, "d2": 1.0}, think_time=10.0),
         qm.Closed("c1", 6, demands={"cpu": 1.5, "d1": 2.5, "d2": 4.0}, think_time=5.0)])


def test_multiclass_bounds_use_every_class():
    net = three_stations_two_classes()
    r = qm.mva(net)
    for c in ("c0", "c1"):
        inside(qm.bounds(net, c), r.X[c], r.R[c])
    # class c0 alone (the old per-class ABA) claims X >= 4/(4*6 + 10) = 0.1176,
    # more than the exact 0.0917: the other class's jobs are ignored
    alone = qm.bounds(qm.Network(net.stations, [net.classes[0]]))
    assert alone.throughput_lower > r.X["c0"]
    assert qm.bounds(net, "c0").bjb is None


def test_multiclass_lower_bound_at_least_the_published_valid_ones():
    # Kerola (1984) balanced-system lower bound N_c/(D_c + (|N|-1) D_max,c + Z_c)
    # and the all-queues-full N_c/(Z_c + |N| D_c): ours is at least both
    net = three_stations_two_classes()
    D = net.demands
    N = np.array([4, 6])
    Z = np.array([10.0, 5.0])
    for c in range(2):
        kerola = N[c] / (D[c].sum() + (N.sum() - 1) * D[c].max() + Z[c])
        full = N[c] / (Z[c] + N.sum() * D[c].sum())
        lo = qm.bounds(net, f"c{c}").throughput_lower
        assert lo >= max(kerola, full) * (1 - 1e-12)
        assert lo <= qm.mva(net).X[f"c{c}"]


def test_multiclass_refusals():
    c2 = qm.Network([qm.Queue("a", 0.1, servers=2)],
                    [qm.Closed("x", 2, visits={"a": 1}), qm.Open("o", 1.0, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="station 'a': open and closed classes"):
        qm.bounds(c2, "x")
    S = sp.Symbol("S", positive=True)
    sym = qm.Network([qm.Queue("a", S)],
                     [qm.Closed("x", 2, visits={"a": 1}), qm.Closed("y", 1, visits={"a": 1})])
    with pytest.raises(UnsupportedModelError, match="multi-class bounds are numeric"):
        qm.bounds(sym, "x")


def test_multiclass_lower_bound_counts_jobs_not_their_demand():
    # Processor sharing: a class-c job at 'a' shares the server with every
    # class-y job there, whatever y's demand.  c: N=1, D=1 at a; y: N=8,
    # D=0.01 at a only, Z=0 (always at a).  Exact R_c = 1 (1 + 8) = 9 (the
    # arrival theorem with Q_y = 8).  Octave's qncmaba lower bound
    # N_c / (sum_j N_j D_j) = 1/(1 + 0.08) = 0.926 is above the exact 1/9.
    net = qm.Network([qm.Queue("a", 1.0, discipline="ps")],
                     [qm.Closed("c", 1, demands={"a": 1.0}),
                      qm.Closed("y", 8, demands={"a": 0.01})])
    r = qm.mva(net)
    assert r.X["c"] == pytest.approx(1 / 9)
    assert 1 / (1 + 8 * 0.01) > r.X["c"]
    b = qm.bounds(net, "c")
    inside(b, r.X["c"], r.R["c"])
    assert b.throughput_lower == pytest.approx(1 / 9)


def test_mixed_network_bounds():
    net = qm.Network(
        [qm.Queue("cpu", 0.02), qm.Queue("disk", 0.05), qm.Delay("lan", 0.1)],
        [qm.Closed("tx", 6, visits={"cpu": 3, "disk": 2, "lan": 1}, think_time=2.0),
         qm.Open("batch", 3.0, visits={"cpu": 2, "disk": 1})])
    r = qm.mva(net)
    for c in ("tx", "batch"):
        inside(qm.bounds(net, c), r.X[c], r.R[c])


# ---------------------------------------------------------------------------
# 3. symbolic bounds are exact
# ---------------------------------------------------------------------------

def test_symbolic_bounds_are_exact_rationals():
    N = sp.Symbol("N", positive=True, integer=True)
    net = qm.Network([qm.Queue("a", 0.05), qm.Queue("b", 0.045)],
                     [qm.Closed("t", N, visits={"a": 1, "b": 1}, think_time=5)])
    b = qm.symbolic_bounds(net)
    # D = 0.05 + 0.045 = 19/200, Z = 5: N/(D + Z) = 200 N / 1019, 1/Dmax = 20
    assert b.aba[1] == sp.Min(20, 200 * N / 1019)
    assert b.aba[0] == sp.cancel(N / (19 * N / 200 + 5))
    assert b.saturation_population == sp.Rational(1019, 10)
    # BJB (QSP Table 5.3) with Z/D = 1000/19 exactly:
    #   X >= N / (D + Z + (N-1) Dmax / (1 + (Z/D)/N))
    D, Dmax, Z_over_D = sp.Rational(19, 200), sp.Rational(1, 20), sp.Rational(1000, 19)
    hand = N / (D + 5 + (N - 1) * Dmax / (1 + Z_over_D / N))
    assert sp.cancel(b.bjb[0] - hand) == 0
    for v in (*b.aba, *b.bjb, b.throughput_upper, b.throughput_lower):
        assert not sp.sympify(v).has(sp.Float)
    # every bound equals the numeric one at a point
    num = qm.bounds(qm.Network([qm.Queue("a", 0.05), qm.Queue("b", 0.045)],
                               [qm.Closed("t", 7, visits={"a": 1, "b": 1}, think_time=5)]))
    for s_, n_ in zip((*b.aba, *b.bjb), (*num.aba, *num.bjb)):
        assert float(sp.sympify(s_).subs(N, 7)) == pytest.approx(n_, rel=1e-12)


def test_long_rationals_show_a_decimal():
    N = sp.Symbol("N", positive=True, integer=True)
    net = qm.Network([qm.Queue("a", 0.012), qm.Queue("b", 0.007)],
                     [qm.Closed("t", N, visits={"a": 1, "b": 1}, think_time=1)])
    b = qm.symbolic_bounds(net)
    assert r"\approx" in b.latex("throughput_upper")
    assert "(~ " in repr(b)
    assert r"\approx" not in b.latex("N*")      # 1019/12 is short


# ---------------------------------------------------------------------------
# 4. only delay stations
# ---------------------------------------------------------------------------

def test_all_delay_network_is_answered_exactly():
    net = qm.Network([qm.Delay("d", 1.0), qm.Delay("e", 2.0)],
                     [qm.Closed("t", 5, visits={"d": 1, "e": 1}, think_time=1.0)])
    b = qm.bounds(net)
    # infinite servers never queue: X = N / (Z + D) = 5 / 4
    assert b.throughput_lower == b.throughput_upper == pytest.approx(5 / 4)
    assert b.response_time_lower == b.response_time_upper == pytest.approx(3.0)
    assert qm.mva(net).X["t"] == pytest.approx(5 / 4)
    assert qm.solve(net, method="bounds").X == b.X
    none = qm.Network([qm.Delay("d", 1.0)], [qm.Closed("t", 5, visits={"d": 0})])
    with pytest.raises(UnsupportedModelError, match="class 't'.*unbounded"):
        qm.bounds(none)


# ---------------------------------------------------------------------------
# 5. load-dependent stations faster than one server at light load
# ---------------------------------------------------------------------------

def raid(mult, N):
    return qm.Network(
        [qm.LoadDependent("raid", 0.01, rate_multipliers=mult), qm.Queue("cpu", 0.002)],
        [qm.Closed("t", N, visits={"raid": 1, "cpu": 1}, think_time=0.5)])


@pytest.mark.parametrize("mult,N", [((2, 2), 20), ((2,), 1), ((2,), 7), ((0.5, 3.0), 4),
                                    ((1, 1.8, 2.4, 2.8), 30)])
def test_load_dependent_bounds_bracket_exact(mult, N):
    net = raid(mult, N)
    r = qm.mva(net)
    b = qm.bounds(net)
    assert b.throughput_lower <= b.throughput_upper
    inside(b, r.X["t"], r.R["t"])


def test_job_speed():
    assert job_speed(qm.Queue("q", 1.0, servers=4)) == 1
    assert job_speed(qm.LoadDependent("l", 1.0, rate_multipliers=(2, 2))) == 2
    assert job_speed(qm.LoadDependent("l", 1.0, rate_multipliers=(1, 1.8, 2.4))) == 1
    # exact 39.347 at N = 20 was above the old upper bound 20/(0.012 + 0.5)
    assert qm.mva(raid((2, 2), 20)).X["t"] > 20 / 0.512


# ---------------------------------------------------------------------------
# 6. geometric and proportional bounds against the published tables
# ---------------------------------------------------------------------------

GB_D = [0.1, 0.1, 0.09, 0.08]
# [GB] Table IV (Z = 0) and Table V (Z = 1): N, X lower, X upper (4 decimals)
GB_TABLE_IV = [(2, 4.3040, 4.3174), (5, 6.6859, 6.7524), (10, 8.1521, 8.2690),
               (20, 9.0947, 9.2431), (80, 9.8233, 9.8765)]
GB_TABLE_V = [(2, 1.4319, 1.5195), (5, 3.3432, 3.5582), (10, 5.7569, 6.1410),
              (20, 8.0856, 8.6467), (80, 9.7147, 9.8594)]
# [PB] on the same network, Z = 0 (Octave queueing qncspb test, "table IV")
PB_TABLE = [(2, 4.3174, 4.3174), (5, 6.6600, 6.7297), (10, 8.0219, 8.2700),
            (20, 8.8672, 9.3387), (80, 9.6736, 10.000)]


@pytest.mark.parametrize("Z,table", [(0.0, GB_TABLE_IV), (1.0, GB_TABLE_V)])
def test_geometric_bounds_reproduce_casale_tables(Z, table):
    for N, lo, hi in table:
        x_lo, x_hi = geometric_bounds(GB_D, N, Z)
        assert x_lo == pytest.approx(lo, abs=6e-5)
        assert x_hi == pytest.approx(hi, abs=6e-5)


def test_proportional_bounds_reproduce_table():
    for N, lo, hi in PB_TABLE:
        x_lo, x_hi = proportional_bounds(GB_D, N)
        assert x_lo == pytest.approx(lo, abs=6e-5)
        assert x_hi == pytest.approx(hi, abs=6e-5)


@pytest.mark.parametrize("Z", [0.0, 1.0])
def test_gb_pb_in_bounds_and_around_exact(Z):
    for N in (1, 2, 5, 10, 20, 80):
        net = qm.Network([qm.Queue(f"s{k}", d) for k, d in enumerate(GB_D)],
                         [qm.Closed("t", N, demands={f"s{k}": d for k, d in enumerate(GB_D)},
                                    think_time=Z)])
        b = qm.bounds(net)
        assert b.gb[0] == pytest.approx(geometric_bounds(GB_D, N, Z)[0])
        assert b.pb[1] == pytest.approx(proportional_bounds(GB_D, N, Z)[1])
        r = qm.mva(net)
        inside(b, r.X["t"], r.R["t"])


# ---------------------------------------------------------------------------
# 7. P0 of the closed-form queues
# ---------------------------------------------------------------------------

def birth_death_p0(lam, mu_of_n, limit):
    """P0 of a birth-death chain truncated at ``limit`` (mpmath, 50 digits)."""
    mpmath.mp.dps = 50
    w, tot = mpmath.mpf(1), mpmath.mpf(1)
    for n in range(1, limit + 1):
        w *= mpmath.mpf(lam) / mu_of_n(n)
        tot += w
    return float(1 / tot)


@pytest.mark.parametrize("lam,S,c", [(3.0, 1.0, 4), (0.5, 1.0, 1), (45.0, 0.2, 10),
                                     (0.1, 2.0, 3), (900.0, 0.1, 100)])
def test_mmc_p0_against_truncated_chain(lam, S, c):
    ref = birth_death_p0(lam, lambda n: mpmath.mpf(min(n, c)) / mpmath.mpf(S), 4000)
    assert queues.mmc(lam, S, c).P0 == pytest.approx(ref, rel=1e-9)


def test_p0_textbook_values():
    # M/M/1 (Kleinrock 1975 eq. 3.7): p0 = 1 - rho
    assert queues.mm1(0.5, 1.0).P0 == pytest.approx(0.5)
    # M/M/4, a = 3 (hand): 1/(1 + 3 + 9/2 + 27/6 + (81/24)/(1 - 3/4)) = 2/53
    assert queues.mmc(3.0, 1.0, 4).P0 == pytest.approx(2 / 53)
    # M/M/1/K (Kleinrock eq. 3.44): (1 - rho)/(1 - rho^(K+1)); rho = 2, K = 5
    assert queues.mm1k(2.0, 1.0, 5).P0 == pytest.approx((1 - 2) / (1 - 2 ** 6))
    # M/M/inf: Poisson, e^{-a}
    assert queues.mminf(2.0, 1.0).P0 == pytest.approx(math.exp(-2))
    # M/G/1, M/D/1, G/G/1: 1 - rho
    assert queues.mg1(0.5, 1.0, 3.0).P0 == pytest.approx(0.5)
    assert queues.md1(0.25, 2.0).P0 == pytest.approx(0.5)
    assert queues.gg1(0.5, 1.0, 2.0, 0.5).P0 == pytest.approx(0.5)
    assert queues.ggc(0.5, 1.0, 2, 2.0, 0.5).P0 is None
    S_ = sp.Symbol("S", positive=True)
    assert queues.mminf(2, S_).P0 == sp.exp(-2 * S_)
    assert "empty probability (P0)" in repr(queues.mm1(0.5, 1.0))


@pytest.mark.parametrize("lam,S,c,K", [(3.0, 1.0, 2, 6), (0.4, 1.0, 1, 3), (50.0, 1.0, 40, 60)])
def test_mmck_p0_against_chain(lam, S, c, K):
    ref = birth_death_p0(lam, lambda n: mpmath.mpf(min(n, c)) / mpmath.mpf(S), K)
    assert queues.mmck(lam, S, c, K).P0 == pytest.approx(ref, rel=1e-9)


# ---------------------------------------------------------------------------
# 8. every bound brackets the exact answer on random small networks
# ---------------------------------------------------------------------------

def _station(name, kind, S, shared=False):
    """``shared``: several classes with their own demands meet there, so a
    queue is processor sharing (the product-form model: FCFS with
    class-dependent service is not product form, and exact MVA refuses it)."""
    disc = "ps" if shared else "fcfs"
    if kind == "delay":
        return qm.Delay(name, S)
    if kind == "q1":
        return qm.Queue(name, S, discipline=disc)
    if kind == "q2":
        return qm.Queue(name, S, servers=2, discipline=disc)
    if kind == "ps":
        return qm.Queue(name, S, discipline="ps")
    return qm.LoadDependent(name, S, rate_multipliers={"ld_fast": (2.0, 2.5),
                                                        "ld_slow": (0.5, 1.0, 1.5),
                                                        "ld": (1.0, 1.8, 2.4)}[kind])


KINDS = st.sampled_from(["delay", "q1", "q2", "ps", "ld", "ld_fast", "ld_slow"])


@st.composite
def closed_networks(draw, max_classes=3, max_pop=8):
    K = draw(st.integers(1, 4))
    C = draw(st.integers(1, max_classes))
    stations = [_station(f"s{k}", draw(KINDS), 1.0, shared=C > 1) for k in range(K)]
    classes = []
    for c in range(C):
        dem = {f"s{k}": draw(st.sampled_from([0.0, 0.01, 0.1, 0.5, 1.0, 2.3]))
               for k in range(K)}
        Z = draw(st.sampled_from([0.0, 0.0, 1.0, 4.0]))
        if sum(dem.values()) + Z == 0:
            dem["s0"] = 1.0
        classes.append(qm.Closed(f"c{c}", draw(st.integers(0, max_pop)), think_time=Z,
                                 demands=dem))
    return qm.Network(stations, classes)


@settings(deadline=None, max_examples=60, derandomize=True)
@given(closed_networks())
def test_every_bound_brackets_exact_mva(net):
    r = qm.mva(net)
    for c in net.classes:
        b = qm.bounds(net, c.name)
        x = r.X[c.name]
        R = r.R[c.name] if c.population > 0 else None
        inside(b, x, R, tol=1e-7)


@settings(deadline=None, max_examples=40, derandomize=True)
@given(closed_networks(max_classes=1, max_pop=25))
def test_every_single_class_bound_brackets_the_curve(net):
    assume(net.classes[0].population >= 1)
    assume(any(s.kind != "delay" and net.demands[0, k] > 0 for k, s in enumerate(net.stations)))
    cur = qm.mva(net, curve=True).curve
    ns = list(range(1, len(cur.population)))
    df = qm.bounds(net).sweep(ns)
    for key in ("aba", "bjb", "gb", "pb"):
        lo, hi = df[f"X_{key}_lo"].to_numpy(), df[f"X_{key}_hi"].to_numpy()
        X = cur.throughput[1:]
        assert np.all(lo <= X * (1 + 1e-7)), key
        assert np.all(X <= hi * (1 + 1e-7)), key


@st.composite
def pool_networks(draw):
    S = [draw(st.sampled_from([0.1, 0.5, 1.0, 2.0])) for _ in range(3)]
    span_delay = draw(st.booleans())
    N = draw(st.integers(1, 4))
    B = draw(st.integers(1, 3))
    sts = [qm.Delay("think", draw(st.sampled_from([0.1, 1.0, 3.0]))),
           qm.Queue("a", S[0]), qm.Queue("b", S[1], servers=draw(st.integers(1, 2))),
           qm.Queue("c", S[2])]
    route = {"think": {"a": 1}, "a": {"b": 1}, "c": {"think": 1}}
    if span_delay:
        sts.append(qm.Delay("w", draw(st.sampled_from([0.2, 2.0]))))
        route["b"] = {"w": 1}
        route["w"] = {"c": 1}
    else:
        route["b"] = {"c": 1}
    acquire, release = draw(st.sampled_from([("a", "b"), ("b", "c"), ("a", "c"), ("b", "b")]))
    if span_delay and (acquire, release) == ("b", "b"):
        release = "c"
    return qm.Network(sts, [qm.Closed("t", N, routing=route)],
                      pools=[qm.TokenPool("p", B, acquire, release)])


@settings(deadline=None, max_examples=25, derandomize=True)
@given(pool_networks())
def test_pool_bounds_bracket_ctmc(net):
    r = qm.ctmc(net)
    inside(qm.bounds(net), r.X["t"], r.R["t"], tol=1e-7)


@st.composite
def multiclass_pool_networks(draw):
    """One or two closed classes round think -> a -> b -> c (-> w) -> think
    (the second may skip a), one or two pools over stretches of that cycle,
    each used by every class or by one; nested, overlapping or disjoint."""
    S = [draw(st.sampled_from([0.1, 0.5, 1.0])) for _ in range(3)]
    sts = [qm.Delay("think", draw(st.sampled_from([0.1, 1.0]))),
           qm.Queue("a", S[0]), qm.Queue("b", S[1], servers=draw(st.integers(1, 2))),
           qm.Queue("c", S[2])]
    order = ["a", "b", "c"]
    if draw(st.booleans()):
        sts.append(qm.Delay("w", draw(st.sampled_from([0.2, 1.0]))))
        order.append("w")
    full = ["think"] + order
    classes = [qm.Closed("x", draw(st.integers(1, 3)),
                         routing={u: {v: 1} for u, v in zip(full, full[1:] + ["think"])})]
    if draw(st.booleans()):
        path = ["think"] + (order[1:] if draw(st.booleans()) else order)
        classes.append(qm.Closed("y", draw(st.integers(1, 2)),
                                 routing={u: {v: 1} for u, v in zip(path, path[1:] + ["think"])}))
    pools = []
    for i in range(draw(st.integers(1, 2))):
        lo = draw(st.integers(0, len(order) - 1))
        hi = draw(st.integers(lo, len(order) - 1))
        if order[lo] == "w":
            lo = hi = len(order) - 2
        users = draw(st.sampled_from([None] + [(c.name,) for c in classes]))
        pools.append(qm.TokenPool(f"p{i}", draw(st.integers(1, 2)), order[lo], order[hi],
                                  classes=users))
    return qm.Network(sts, classes, pools=pools)


@settings(deadline=None, max_examples=40, derandomize=True)
@given(multiclass_pool_networks())
def test_multiclass_pool_bounds_bracket_ctmc(net):
    # the CTMC takes one pool per acquire station (the bounds take more)
    assume(len({p.acquire for p in net.pools}) == len(net.pools))
    r = qm.ctmc(net)
    for c in net.classes:
        try:
            b = qm.bounds(net, c.name)
        except UnsupportedModelError as e:
            # a pool entered other than through acquire, or pools that wait
            # on each other in a cycle: refused, naming the pool(s)
            assert "token pool" in str(e)
            continue
        inside(b, r.X[c.name], r.R[c.name], tol=1e-7)


@st.composite
def mixed_networks(draw):
    K = draw(st.integers(1, 3))
    kinds = [draw(st.sampled_from(["delay", "q1", "ps", "q2", "ld_fast"])) for _ in range(K)]
    stations = [_station(f"s{k}", kinds[k], 1.0, shared=True) for k in range(K)]
    classes = []
    for c in range(draw(st.integers(1, 2))):
        dem = {f"s{k}": draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])) for k in range(K)}
        if sum(dem.values()) == 0:
            dem["s0"] = 1.0
        classes.append(qm.Closed(f"c{c}", draw(st.integers(0, 6)),
                                 think_time=draw(st.sampled_from([0.0, 2.0])), demands=dem))
    dem = {f"s{k}": draw(st.sampled_from([0.0, 0.1, 0.5])) for k in range(K)}
    if sum(dem.values()) == 0:
        dem["s0"] = 0.1
    lam = draw(st.sampled_from([0.1, 0.5, 1.0]))
    assume(all(lam * d < 0.95 for d in dem.values()))
    classes.append(qm.Open("o", lam, demands=dem))
    return qm.Network(stations, classes)


@settings(deadline=None, max_examples=40, derandomize=True)
@given(mixed_networks())
def test_mixed_bounds_bracket_exact(net):
    r = qm.mva(net)
    for c in net.classes:
        pop = getattr(c, "population", 1)
        try:
            b = qm.bounds(net, c.name)
        except UnsupportedModelError as e:
            # the exact solution exists, but no multi-class bound is proven
            # with open and closed load on one multi-server station: refused
            assert "share a multi-server or load-dependent station" in str(e)
            continue
        inside(b, r.X[c.name], r.R[c.name] if pop else None, tol=1e-7)


def test_pool_bounds_hold_for_the_simulator_with_deterministic_service():
    # The pool bounds are operational (Little's law on the tokens, the
    # utilisation law): they hold for any service distribution.  Here the
    # one-token pool over dma (deterministic 10 ms) and port (exponential
    # 4 ms) saturates: X <= 1 / 0.014 = 71.43/s, and the simulator's
    # interval must meet [lower, upper].
    sts = [qm.Delay("think", 0.05),
           qm.Queue("cpu", 0.002, distribution=Deterministic()),
           qm.Queue("dma", 0.010, distribution=Deterministic()),
           qm.Queue("port", 0.004),
           qm.Queue("pci", 0.006, distribution=Deterministic())]
    route = {"think": {"cpu": 1}, "cpu": {"dma": 1}, "dma": {"port": 1}, "port": {"pci": 1},
             "pci": {"think": 1}}
    net = qm.Network(sts, [qm.Closed("pkt", 12, routing=route)],
                     pools=[qm.TokenPool("buf", 1, "dma", "port")])
    b = qm.bounds(net)
    assert b.throughput_upper == pytest.approx(1 / 0.014)
    x = qm.simulate(net, seed=3, horizon=200.0, replications=4).X["pkt"]
    assert x.low <= b.throughput_upper and x.high >= b.throughput_lower


def test_bounds_of_a_deterministic_fcfs_network_are_aba_only():
    """Two deterministic FCFS stations of 0.05 s in a cycle, N = 2, no think time:
    the jobs alternate without waiting, X = 20 exactly (by hand).  The
    balanced job bounds of the exponential model cap X at 2 / 0.15 = 13.3,
    which the bounds used to print as proven; BJB, GB and PB need product
    form, so only ABA is given now (and it holds: 20 <= 1/Dmax = 20)."""
    net = qm.Network([qm.Queue("cpu", 0.05, distribution=Deterministic()),
                      qm.Queue("disk", 0.05, distribution=Deterministic())],
                     [qm.Closed("tx", 2, routing={"cpu": {"disk": 1}, "disk": {"cpu": 1}})])
    b = qm.bounds(net)
    assert b.bjb is None and b.gb is None and b.pb is None
    assert b.throughput_lower <= 20.0 <= b.throughput_upper
    assert any("station 'cpu'" in n and "BJB" in n for n in b.notes)
    # the open class: ABA only (R >= D, no finite upper bound proven)
    opened = qm.Network([qm.Queue("q", 0.05, distribution=qm.HyperExponential(4.0))],
                        [qm.Open("o", 10.0, visits={"q": 1})])
    bo = qm.bounds(opened)
    assert bo.bjb is None and bo.response_time_upper == math.inf
    # several classes: the multi-class bounds rest on product form: refused
    two = qm.Network(net.stations, [qm.Closed("a", 1, visits={"cpu": 1, "disk": 1}),
                                    qm.Closed("b", 1, visits={"cpu": 1, "disk": 1})])
    with pytest.raises(UnsupportedModelError, match="station 'cpu'"):
        qm.bounds(two, "a")


def test_symbolic_bounds_from_a_model_file_keep_its_decimals_exact(tmp_path):
    # `service: 2.0` in a file with symbols: the formulas read Max(2, 10*SA)
    # (the decimal the file wrote), not Max(2.0, 10*SA); 0.1 is 1/10
    import sympy as sp

    path = tmp_path / "m.yaml"
    path.write_text(
        "symbols: {SA: {positive: true}}\n"
        "stations:\n  - {name: a, service: SA}\n  - {name: b, service: 2.0}\n"
        "  - {name: c, service: 0.1}\n"
        "classes:\n  - {name: tx, type: closed, population: 10, visits: {a: 10, b: 1, c: 1}}\n")
    b = qm.bounds(qm.load(path))
    SA = sp.Symbol("SA", positive=True)
    assert not b.throughput_upper.atoms(sp.Float)
    assert b.max_throughput == 1 / sp.Max(2, 10 * SA)
    assert sp.simplify(b.saturation_population - (10 * SA + sp.Rational(21, 10))
                       / sp.Max(2, 10 * SA)) == 0
