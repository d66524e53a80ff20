"""Service shapes the model can say: a hyperexponential from its branch
probabilities and rates or from three moments, and a service shape per
class at a station (``Closed/Open(distribution={station: shape})``).

References are hand formulas written here: the hyperexponential's moments
E[X^k] = k! sum_i p_i / mu_i^k (Kleinrock, *Queueing Systems* vol. 1,
1975, sec. 4.5), and the Pollaczek-Khinchine mean wait of an M/G/1 queue,
W = lambda E[S^2] / (2 (1 - rho)) (Kleinrock 1975, eq. 5.105), which holds
for several Poisson classes at one FCFS server with E[S^2] the moment of
the mixture of their service times, lambda E[S^2] = sum_c lambda_c
E[S_c^2] (the merged stream is Poisson and each arrival's service is
drawn from its class's shape independently of the past).
"""

from __future__ import annotations

import math

import pytest

import qmodels as qm
from qmodels.errors import InvalidValueError, UnknownNameError, UnsupportedModelError
from qmodels.io.modelfile import dumps, loads


def h2_moment(probs, rates, k):
    """E[X^k] of a hyperexponential (hand formula of the module docstring)."""
    return math.factorial(k) * sum(p / r**k for p, r in zip(probs, rates))


def pk_wait(flows):
    """Pollaczek-Khinchine mean wait of one FCFS server fed by Poisson
    classes ``flows`` = [(lambda_c, E[S_c], E[S_c^2]), ...]."""
    rho = sum(lam * m1 for lam, m1, _ in flows)
    return sum(lam * m2 for lam, _, m2 in flows) / (2.0 * (1.0 - rho))


# -- the hyperexponential from probabilities and rates --------------------------

PROBS, RATES = (0.3, 0.7), (1.0, 10.0)


def test_h2_from_branches_reads_its_own_moments():
    h = qm.HyperExponential(probs=PROBS, rates=RATES)
    m1 = h2_moment(PROBS, RATES, 1)
    assert h.mean == pytest.approx(m1, rel=1e-15)
    assert h.scv == pytest.approx(h2_moment(PROBS, RATES, 2) / m1**2 - 1.0, rel=1e-13)
    rel = qm.distributions.unit_moments(h, (2, 3, 4))
    for k, got in zip((2, 3, 4), rel, strict=True):
        assert got == pytest.approx(h2_moment(PROBS, RATES, k) / m1**k, rel=1e-12)
    # the balanced form is unchanged: branch means 1 / (2 p_i) at mean 1
    b = qm.HyperExponential(4.0)
    p1 = 0.5 * (1 + math.sqrt(3 / 5))
    assert qm.distributions.unit_moments(b, (2,))[0] == pytest.approx(
        h2_moment((p1, 1 - p1), (2 * p1, 2 * (1 - p1)), 2), rel=1e-12)


def mh21(lam, service):
    h = qm.HyperExponential(probs=PROBS, rates=RATES)
    net = qm.Network([qm.Queue("q", service, distribution=h)],
                     [qm.Open("a", lam, route=["q"])])
    # the rates are scaled by mean / service: the branch rates mu_i h.mean / service
    scale = h.mean / service
    rates = [r * scale for r in RATES]
    m1, m2 = h2_moment(PROBS, rates, 1), h2_moment(PROBS, rates, 2)
    assert m1 == pytest.approx(service, rel=1e-13)
    return net, m1 + pk_wait([(lam, m1, m2)])


@pytest.mark.parametrize("lam,service", [(1.5, 0.37), (0.5, 1.0)])
def test_mh21_ctmc_is_pollaczek_khinchine(lam, service):
    net, R = mh21(lam, service)
    r = qm.ctmc(net, open_limit=300)
    assert float(r.R["a"]) == pytest.approx(R, rel=1e-8)
    # the chain has the given H2 itself, not a fit: no fit is named
    assert not any("fit" in a or "as the" in a for a in r.assumptions)


def test_mh21_qna_is_pollaczek_khinchine():
    net, R = mh21(1.5, 0.37)
    assert float(qm.qna(net).R["a"]) == pytest.approx(R, rel=1e-12)


@pytest.mark.slow
def test_mh21_simulator_draws_the_given_h2():
    net, R = mh21(1.5, 0.37)
    s = qm.simulate(net, seed=11, horizon=60000, replications=8, progress=False)
    est, half = s.R["a"].mean, s.R["a"].half_width
    # a balanced-means H2 of the same SCV would give the same mean: the
    # sampler is checked by the third moment below, the queue by P-K here
    assert abs(est - R) <= 2.0 * half + 0.01 * R


def test_simulator_sampler_draws_the_given_branches():
    """The simulator's encoding (flatten) and its variate (engine.draw_at)
    draw the given H2 itself: its survival function P(X > t) = sum_i p_i
    exp(-mu_i t) at several t, which the balanced-means H2 of the same mean
    and SCV misses by far more than the sampling error."""
    import numpy as np

    from qmodels.sim import engine as E
    from qmodels.sim.flatten import flatten

    h = qm.HyperExponential(probs=PROBS, rates=RATES)
    net = qm.Network([qm.Queue("q", 2.0)],
                     [qm.Open("a", 0.1, route=["q"]),
                      qm.Open("b", 0.1, route=["q"], distribution={"q": h})])
    f = flatten(net)
    rng = np.random.default_rng(5).random(1_000_000)
    SI = np.zeros(64, dtype=np.int64)
    x = np.array([E.draw_at(1, 0, f.STI, f.STF, f.EMP, f.S, rng, SI) for _ in range(200_000)])
    rates = [r * h.mean / 2.0 for r in RATES]         # scaled to the station's mean 2
    p1 = 0.5 * (1 + math.sqrt((h.scv - 1) / (h.scv + 1)))
    bal = ((p1, 1 - p1), (2 * p1 / 2.0, 2 * (1 - p1) / 2.0))
    for t in (0.5, 2.0, 4.0, 8.0):
        want = sum(p * math.exp(-r * t) for p, r in zip(PROBS, rates))
        assert float((x > t).mean()) == pytest.approx(want, abs=0.005)
    t = 4.0
    assert abs(sum(p * math.exp(-r * t) for p, r in zip(*bal))
               - sum(p * math.exp(-r * t) for p, r in zip(PROBS, rates))) > 0.03
    assert x.mean() == pytest.approx(2.0, rel=0.02)
    y = np.array([E.draw_at(0, 0, f.STI, f.STF, f.EMP, f.S, rng, SI) for _ in range(100_000)])
    assert y.var() / y.mean() ** 2 == pytest.approx(1.0, rel=0.05)   # class a: exponential


# -- the three-moment fit -------------------------------------------------------

@pytest.mark.parametrize("probs,rates", [((0.3, 0.7), (1.0, 10.0)), ((0.05, 0.95), (0.1, 3.0)),
                                         ((0.5, 0.5), (2.0, 2.5))])
def test_three_moment_fit_reproduces_the_moments(probs, rates):
    m = [h2_moment(probs, rates, k) for k in (1, 2, 3)]
    h = qm.HyperExponential.from_moments(*m)
    for k in (1, 2, 3):
        assert h2_moment(h.probs, h.rates, k) == pytest.approx(m[k - 1], rel=1e-9)
    assert h.mean == pytest.approx(m[0], rel=1e-12)


def test_three_moment_fit_of_a_lognormal():
    # a lognormal of SCV 3 (mean 1): E[X^k] = (1 + c2)^(k(k-1)/2)
    m = [1.0, 4.0, 4.0**3]
    h = qm.HyperExponential.from_moments(*m)
    for k in (1, 2, 3):
        assert h2_moment(h.probs, h.rates, k) == pytest.approx(m[k - 1], rel=1e-9)


@pytest.mark.parametrize("m,why", [
    ((1.0, 3.0, 8.0), "m1 m3 > 1.5 m2^2"),       # SCV 2, third moment too small
    ((1.0, 2.0, 6.0), "SCV"),                    # the exponential's: SCV 1
    ((1.0, 1.5, 2.0), "SCV"),                    # SCV 0.5
    ((1.0, -1.0, 6.0), "positive"),
])
def test_three_moment_fit_refuses_moments_no_h2_has(m, why):
    with pytest.raises(InvalidValueError, match="from_moments") as e:
        qm.HyperExponential.from_moments(*m)
    assert why in str(e.value)


@pytest.mark.parametrize("kw", [dict(probs=[0.5, 0.6], rates=[1, 2]),
                                dict(probs=[1.0], rates=[1.0]),
                                dict(probs=[0.5, 0.5], rates=[1.0, 0.0]),
                                dict(probs=[0.5, 0.5]),
                                dict(probs=[0.5, 0.5], rates=[1.0, 2.0, 3.0]),
                                dict(scv_value=2.0, probs=[0.5, 0.5], rates=[1.0, 2.0])])
def test_h2_branches_refused_by_name(kw):
    with pytest.raises(InvalidValueError, match="HyperExponential"):
        qm.HyperExponential(**kw)


# -- a service shape per class --------------------------------------------------

def two_class(la=0.6, lb=0.12, Sa=0.1, Sb=0.5, sa=None, sb=None):
    sa = qm.Erlang(3) if sa is None else sa
    sb = qm.HyperExponential(probs=[0.4, 0.6], rates=[1.0, 4.0]) if sb is None else sb
    net = qm.Network([qm.Queue("q", Sa)],
                     [qm.Open("a", la, route=["q"], distribution={"q": sa}),
                      qm.Open("b", lb, route=["q"], service={"q": Sb}, distribution={"q": sb})])
    m2a = Sa**2 * (1.0 + float(sa.scv))
    m2b = Sb**2 * (1.0 + float(sb.scv))
    W = pk_wait([(la, Sa, m2a), (lb, Sb, m2b)])
    return net, Sa + W, Sb + W


def test_per_class_shapes_in_the_lowered_form():
    net, _, _ = two_class()
    low = net.lowered
    assert bool(low.class_shaped[0])
    assert isinstance(low.shapes[0][0], qm.Erlang)
    assert isinstance(low.shapes[1][0], qm.HyperExponential)
    assert math.isnan(low.scv[0]) and not low.exponential[0]
    # one shape given to every class is not class-dependent
    one = qm.Network([qm.Queue("q", 0.1)],
                     [qm.Open("a", 1.0, route=["q"], distribution={"q": qm.Erlang(2)}),
                      qm.Open("b", 1.0, route=["q"], distribution={"q": qm.Erlang(2)})])
    assert not one.lowered.class_shaped[0] and one.lowered.scv[0] == 0.5


def test_per_class_shapes_ctmc_is_pollaczek_khinchine():
    from qmodels.errors import NumericalWarning

    net, Ra, Rb = two_class()
    with pytest.warns(NumericalWarning, match="truncated"):
        r = qm.ctmc(net, open_limit=10)
    mass = r.info["truncation_mass"]
    assert mass < 1e-4
    # the truncation (arrivals beyond 10 jobs turned away) leaves the wait
    # a little short: within 1e-3 here; the wait is one for both classes
    assert float(r.R["a"]) == pytest.approx(Ra, rel=1e-3)
    assert float(r.R["b"]) == pytest.approx(Rb, rel=1e-3)
    assert float(r.R["b"]) - float(r.R["a"]) == pytest.approx(0.4, abs=1e-9)


def test_per_class_shapes_qna_is_pollaczek_khinchine():
    net, Ra, Rb = two_class(la=1.0, lb=0.6, Sa=0.2, sa=qm.Deterministic())
    r = qm.qna(net)
    assert float(r.R["a"]) == pytest.approx(Ra, rel=1e-12)
    assert float(r.R["b"]) == pytest.approx(Rb, rel=1e-12)


@pytest.mark.slow
def test_per_class_shapes_simulator_is_pollaczek_khinchine():
    net, Ra, Rb = two_class(la=1.0, lb=0.6, Sa=0.2, sa=qm.Deterministic())
    s = qm.simulate(net, seed=3, horizon=100000, replications=8, progress=False)
    for c, R in (("a", Ra), ("b", Rb)):
        assert abs(s.R[c].mean - R) <= 2.0 * s.R[c].half_width + 0.01 * R


def test_per_class_shapes_break_product_form_at_fcfs_only():
    from qmodels.analytic import requires

    net, _, _ = two_class()
    why = requires.product_form(net, None)
    assert why is not None and "'q'" in why and "'a'" in why and "'b'" in why
    with pytest.raises(UnsupportedModelError, match="'q'"):
        qm.solve(net, method="exact")
    # at a PS station the shapes do not matter (BCMP type 2): product form,
    # and the answer is the exponential one
    ps = qm.Network([qm.Queue("q", 0.1, discipline="ps")],
                    [qm.Closed("a", 2, route=["q"], distribution={"q": qm.Deterministic()}),
                     qm.Closed("b", 1, route=["q"], service={"q": 0.3})])
    assert requires.product_form(ps, 3) is None
    expo = qm.Network([qm.Queue("q", 0.1, discipline="ps")],
                      [qm.Closed("a", 2, route=["q"]),
                       qm.Closed("b", 1, route=["q"], service={"q": 0.3})])
    assert float(qm.solve(ps).X["a"]) == pytest.approx(float(qm.solve(expo).X["a"]), rel=1e-12)


def closed_two_class():
    return qm.Network(
        [qm.Delay("z", 1.0), qm.Queue("disk", 0.05)],
        [qm.Closed("read", 2, route=["z", "disk"], distribution={"disk": qm.Erlang(2)}),
         qm.Closed("write", 1, route=["z", "disk"], service={"disk": 0.1},
                   distribution={"disk": qm.HyperExponential(3.0)})])


@pytest.mark.parametrize("method", ["mva-residual", "priority", "marie"])
def test_one_shape_methods_refuse_a_shape_per_class_by_name(method):
    net = closed_two_class()
    with pytest.raises(UnsupportedModelError) as e:
        qm.solve(net, method=method)
    msg = str(e.value)
    assert "'disk'" in msg and "'read'" in msg and "'write'" in msg


def test_closed_per_class_shapes_reach_the_ctmc():
    """The chain reads each class's own shape: swapping the two classes'
    shapes changes the answer, and one shape given to both classes is the
    same model as that shape given to the station."""
    net = closed_two_class()
    r = qm.ctmc(net)
    swapped = qm.Network(
        net.stations,
        [qm.Closed("read", 2, route=["z", "disk"], distribution={"disk": qm.HyperExponential(3.0)}),
         qm.Closed("write", 1, route=["z", "disk"], service={"disk": 0.1},
                   distribution={"disk": qm.Erlang(2)})])
    assert abs(float(qm.ctmc(swapped).X["read"]) / float(r.X["read"]) - 1.0) > 1e-3
    same_c = qm.Network(
        net.stations,
        [qm.Closed("read", 2, route=["z", "disk"], distribution={"disk": qm.Erlang(2)}),
         qm.Closed("write", 1, route=["z", "disk"], service={"disk": 0.1},
                   distribution={"disk": qm.Erlang(2)})])
    same_s = qm.Network(
        [qm.Delay("z", 1.0), qm.Queue("disk", 0.05, distribution=qm.Erlang(2))],
        [qm.Closed("read", 2, route=["z", "disk"]),
         qm.Closed("write", 1, route=["z", "disk"], service={"disk": 0.1})])
    for method in ("ctmc", "mva-residual", "marie"):
        a, b = qm.solve(same_c, method=method), qm.solve(same_s, method=method)
        for c in ("read", "write"):
            assert float(a.X[c]) == pytest.approx(float(b.X[c]), rel=1e-12), method


def test_class_distribution_refusals_name_class_and_station():
    with pytest.raises(InvalidValueError, match="class 'a'.*station 'q'"):
        qm.Open("a", 1.0, route=["q"], distribution={"q": 0.5})
    with pytest.raises(UnknownNameError, match="class 'a'.*'nope'"):
        qm.Network([qm.Queue("q", 0.1)],
                   [qm.Open("a", 1.0, route=["q"], distribution={"nope": qm.Erlang(2)})])


# -- files ----------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_file_round_trip(fmt):
    h = qm.HyperExponential(probs=PROBS, rates=RATES)
    net = qm.Network(
        [qm.Queue("q", h.mean, distribution=h), qm.Queue("d", 0.1)],
        [qm.Open("a", 0.5, route=["q", "d"], distribution={"d": qm.Deterministic()}),
         qm.Closed("b", 2, route=["d", "q"],
                   distribution={"q": qm.HyperExponential.from_moments(1.0, 4.0, 40.0),
                                 "d": qm.Erlang(3)})])
    back = loads(dumps(net, format=fmt), format=fmt)
    assert back == net
    assert back.lowered.shapes == net.lowered.shapes


def test_file_refuses_a_bad_h2_by_path():
    from qmodels.errors import ModelFileError

    text = """
stations:
- {name: q, service: 0.1, distribution: {type: hyperexponential, probs: [0.5, 0.6], rates: [1, 2]}}
classes:
- {name: a, type: open, arrival_rate: 1, route: [q]}
"""
    with pytest.raises(ModelFileError, match=r"stations\[0\]\.distribution"):
        loads(text)


def test_jsimg_writes_each_class_its_shape():
    from qmodels.io.jsimg import to_jsimg

    net, _, _ = two_class()
    xml = to_jsimg(net) if isinstance(to_jsimg(net), str) else to_jsimg(net).decode()
    assert "jmt.engine.random.Erlang" in xml and "jmt.engine.random.HyperExp" in xml
    # the given branches, scaled to class b's mean 0.5 (rates x h.mean / 0.5)
    h = qm.HyperExponential(probs=[0.4, 0.6], rates=[1.0, 4.0])
    assert repr(1.0 * h.mean / 0.5)[:10] in xml


@pytest.mark.parametrize("probs,rates", [(PROBS, RATES), ((0.2, 0.5, 0.3), (0.5, 3.0, 20.0))])
def test_every_reader_has_the_given_branches(probs, rates):
    """The CTMC's Coxian, Marie's station phase-type, RQNA's renewal
    phase-type and the transform of the exact GI/M/c solutions all hold the
    given hyperexponential (scaled to the mean): the same moments, the same
    Laplace transform sum_i p_i mu_i / (mu_i + t)."""
    import numpy as np

    from qmodels.analytic import _marie_station, rqna
    from qmodels.analytic.phase_type import coxian_of
    from qmodels.analytic.queues.transforms import unit_transform

    h = qm.HyperExponential(probs=probs, rates=rates)
    mean = 3.0
    scaled = [r * h.mean / mean for r in rates]
    unit = [r * h.mean for r in rates]
    cox = coxian_of(h, mean)
    assert cox.exact
    for k in (1, 2, 3):
        assert cox.moment(k) == pytest.approx(h2_moment(probs, scaled, k), rel=1e-10)

    def ph_moment(alpha, T, k):
        inv = np.linalg.inv(-np.asarray(T))
        v = np.ones(len(alpha))
        for _ in range(k):
            v = inv @ v
        return math.factorial(k) * float(np.asarray(alpha) @ v)

    ph = _marie_station.phase_type(h, 20)
    a, T, exact = rqna._phase_type(h)
    assert ph.exact and exact
    for k in (1, 2, 3):
        want = h2_moment(probs, unit, k)
        assert ph_moment(ph.alpha, ph.T, k) == pytest.approx(want, rel=1e-10)
        assert ph_moment(a, T, k) == pytest.approx(want, rel=1e-10)
    tr = unit_transform(h, "test")
    for t in (0.1, 1.0, 7.0):
        assert tr.lst(t) == pytest.approx(sum(p * r / (r + t) for p, r in zip(probs, unit)),
                                          rel=1e-12)


def test_h2_arrivals_gi_m_1():
    """H2/M/1 with given branches as the inter-arrival time: the mean
    response time 1 / (mu (1 - sigma)), sigma in (0, 1) the root of sigma =
    A*(mu (1 - sigma)), A*(s) = sum_i p_i l_i / (l_i + s) the transform of
    the inter-arrival time (Kleinrock 1975, sec. 6.4), found here by
    bisection; the CTMC (the arrival phase in the state) and QNA (the exact
    GI/M/1 from the transform) both give it."""
    from qmodels.errors import NumericalWarning

    h = qm.HyperExponential(probs=PROBS, rates=RATES)
    rate = 1.5                                  # arrivals per second: mean 1 / rate
    lams = [r * h.mean * rate for r in RATES]   # branch rates at that mean
    S = 0.4
    mu = 1.0 / S

    def f(s):
        return sum(p * lam / (lam + mu * (1.0 - s)) for p, lam in zip(PROBS, lams)) - s

    lo, hi = 1e-12, 1.0 - 1e-12
    assert f(lo) > 0 > f(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    R = 1.0 / (mu * (1.0 - lo))
    net = qm.Network([qm.Queue("q", S)], [qm.Open("a", rate, route=["q"], interarrival=h)])
    assert float(qm.qna(net).R["a"]) == pytest.approx(R, rel=1e-9)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        r = qm.ctmc(net, open_limit=400)
    assert float(r.R["a"]) == pytest.approx(R, rel=1e-6)
