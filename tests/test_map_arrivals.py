"""Markovian arrival processes (MAP) as open classes' streams: the model
object and its descriptors against closed forms, the exact CTMC against an
independent matrix-geometric solution written out here, and what the other
methods do with a correlated stream."""

import math

import numpy as np
import pytest

import qmodels as qm
from qmodels.errors import InvalidValueError, ModelFileError
from qmodels.io import modelfile

# ---------------------------------------------------------------------------
# the model object
# ---------------------------------------------------------------------------


def mmpp2_idc(r1, r2, l1, l2):
    """The MMPP2's asymptotic index of dispersion for counts (Fischer &
    Meier-Hellstern, "The MMPP cookbook", Perf. Eval. 18, 1993)."""
    return 1.0 + 2.0 * (l1 - l2) ** 2 * r1 * r2 / ((r1 + r2) ** 2 * (l1 * r2 + l2 * r1))


def test_mmpp2_descriptors_match_closed_forms():
    r1, r2, l1, l2 = 0.1, 0.3, 5.0, 0.5
    m = qm.MAP.mmpp2(r1, r2, l1, l2)
    assert m.phases == 2 and m.is_mmpp
    assert m.rate == pytest.approx((l1 * r2 + l2 * r1) / (r1 + r2), rel=1e-12)
    assert m.mean == pytest.approx(1.0 / m.rate, rel=1e-12)
    assert m.idc == pytest.approx(mmpp2_idc(r1, r2, l1, l2), rel=1e-10)
    # the limit of the index of dispersion for intervals: scv (1 + 2 sum rho_k)
    s = m.scv * (1.0 + 2.0 * sum(m.lag_correlation(k) for k in range(1, 4000)))
    assert s == pytest.approx(m.idc, rel=1e-8)
    assert m.lag_correlation(1) > 0 and m.scv > 1


def test_general_map_idc_equals_interval_limit():
    m = qm.MAP([[-3, 1, 0], [0, -2, 1], [1, 0, -4]], [[1, 0, 1], [0.5, 0, 0.5], [0, 2, 1]])
    s = m.scv * (1.0 + 2.0 * sum(m.lag_correlation(k) for k in range(1, 400)))
    assert s == pytest.approx(m.idc, rel=1e-9)


def test_interval_moments_by_hand():
    # an MMPP2 whose second state never arrives: from state 1 (the only
    # phase after an arrival) the interval is Exp(a + r1) with probability
    # a / (a + r1), else the detour r1 -> 2 -> 1 first; by hand with
    # E[X] from first-step analysis: E1 = 1/(a+r1) + r1/(a+r1) (1/r2 + E1)
    a, r1, r2 = 2.0, 0.5, 1.5
    m = qm.MAP.mmpp2(r1, r2, a, 0.0)
    e1 = (1.0 / (a + r1) + r1 / ((a + r1) * r2)) / (1.0 - r1 / (a + r1))
    assert m.mean == pytest.approx(e1, rel=1e-12)
    # renewal (every interval starts in state 1): no correlation
    assert abs(m.lag_correlation(1)) < 1e-12
    assert m.idc == pytest.approx(m.scv, rel=1e-9)


@pytest.mark.parametrize("dist, scv", [(None, 1.0), (qm.Exponential(), 1.0),
                                       (qm.Erlang(3), 1 / 3), (qm.HyperExponential(5.0), 5.0),
                                       (qm.HyperExponential(probs=[0.2, 0.3, 0.5],
                                                            rates=[1.0, 4.0, 9.0]), None)])
def test_from_renewal_is_the_renewal_stream(dist, scv):
    m = qm.MAP.from_renewal(dist, rate=2.5)
    assert m.rate == pytest.approx(2.5, rel=1e-12)
    want = dist.scv if scv is None else scv
    assert m.scv == pytest.approx(want, rel=1e-10)
    assert abs(m.lag_correlation(1)) < 1e-12 and abs(m.lag_correlation(3)) < 1e-12
    assert m.idc == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("D0, D1, words", [
    ([[-1.0, 0.5], [0.5, -1.0]], [[0.5, -0.1], [0.5, 0.1]], "D1[0][1]"),
    ([[-1.0, -0.5], [0.5, -1.0]], [[1.5, 0.0], [0.5, 0.0]], "D0[0][1]"),
    ([[0.0, 0.0], [0.5, -1.0]], [[0.0, 0.0], [0.5, 0.0]], "D0[0][0]"),
    ([[-1.0, 0.5], [0.5, -1.0]], [[0.4, 0.0], [0.5, 0.0]], "row 0"),
    ([[-1.0]], [[1.0, 0.0], [0.0, 1.0]], "D0 is 1x1 but D1 is 2x2"),
    ([[-1.0, 0.0], [0.0, -1.0]], [[1.0, 0.0], [0.0, 1.0]], "not irreducible"),
    ([[-1.0, 1.0], [1.0, -1.0]], [[0.0, 0.0], [0.0, 0.0]], "no positive rate"),
    ([[-1.0, 1.0]], [[0.0, 0.0]], "square"),
    ("abc", [[1.0]], "D0 must be"),
    ([[float("nan")]], [[1.0]], "D0 must be"),
])
def test_invalid_maps_are_refused_by_name(D0, D1, words):
    with pytest.raises(InvalidValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        qm.MAP(D0, D1)


def test_mmpp2_and_from_renewal_refuse_bad_input():
    with pytest.raises(InvalidValueError, match="r1"):
        qm.MAP.mmpp2(0.0, 1.0, 1.0, 1.0)
    with pytest.raises(InvalidValueError, match="lam2"):
        qm.MAP.mmpp2(1.0, 1.0, 1.0, -1.0)
    with pytest.raises(InvalidValueError, match="Lognormal"):
        qm.MAP.from_renewal(qm.Lognormal(2.0))
    with pytest.raises(InvalidValueError, match="rate"):
        qm.MAP.from_renewal(qm.Erlang(2), rate=0)


def one_queue(m, service=0.5, rate=None, **kw):
    cls = (qm.Open("a", interarrival=m, route=["q"], service={"q": service}) if rate is None
           else qm.Open("a", rate, interarrival=m, route=["q"], service={"q": service}))
    return qm.Network([qm.Queue("q", service, **kw)], [cls])


def test_open_takes_the_map_rate_and_refuses_another():
    m = qm.MAP.mmpp2(0.1, 0.3, 1.0, 0.2)
    assert one_queue(m).classes[0].arrival_rate == pytest.approx(0.8, rel=1e-12)
    assert one_queue(m, rate=m.rate).classes[0].arrival_rate == m.rate
    with pytest.raises(InvalidValueError, match="class 'a'.*disagrees.*MAP"):
        one_queue(m, rate=0.7)


def test_map_is_no_service_shape():
    m = qm.MAP.mmpp2(0.1, 0.3, 1.0, 0.2)
    with pytest.raises(InvalidValueError, match="station 'q'"):
        qm.Queue("q", 1.0, distribution=m)


def test_model_file_round_trip():
    m = qm.MAP([[-3, 1, 0], [0, -2, 1], [1, 0, -4]], [[1, 0, 1], [0.5, 0, 0.5], [0, 2, 1]])
    net = one_queue(m, service=0.3)
    assert modelfile.from_dict(modelfile.to_dict(net)) == net
    for fmt in ("yaml", "json"):
        text = modelfile.dumps(net, format=fmt)
        assert modelfile.loads(text) == net


def test_model_file_refuses_a_bad_map_by_path():
    d = modelfile.to_dict(one_queue(qm.MAP.mmpp2(0.1, 0.3, 1.0, 0.2)))
    d["classes"][0]["interarrival"]["D1"][0][0] = -1.0
    with pytest.raises(ModelFileError, match=r"interarrival.*D1\[0\]\[0\]"):
        modelfile.from_dict(d)
    d = modelfile.to_dict(one_queue(qm.MAP.mmpp2(0.1, 0.3, 1.0, 0.2)))
    d["classes"][0]["arrival_rate"] = 0.5
    with pytest.raises(ModelFileError, match="disagrees"):
        modelfile.from_dict(d)


def test_math_helpers_are_finite():
    m = qm.MAP.mmpp2(0.1, 0.3, 1.0, 0.2)
    assert all(math.isfinite(x) for x in (m.rate, m.scv, m.idc, m.lag_correlation(2)))
    assert np.allclose(m.stationary @ (m.d0 + m.d1), 0.0, atol=1e-14)
    assert "index of dispersion" in m.describe()


# ---------------------------------------------------------------------------
# the exact CTMC
# ---------------------------------------------------------------------------


def qbd_map_m1(m, mu):
    """Mean number in a MAP/M/1 queue by the matrix-geometric method
    (Neuts, *Matrix-Geometric Solutions in Stochastic Models*, 1981, ch. 3;
    Latouche & Ramaswami 1999, ch. 6), written out independently of the
    library: level n the queue length, phase the MAP's; up A0 = D1, local
    A1 = D0 - mu I, down A2 = mu I; R the minimal solution of A0 + R A1 +
    R^2 A2 = 0 by the fixed-point iteration R <- -(A0 + R^2 A2) A1^-1;
    pi_n = pi_1 R^(n-1) (n >= 1), the boundary pi_0 D0 + pi_1 A2 = 0,
    pi_0 D1 + pi_1 (A1 + R A2) = 0 and sum pi = 1; L = pi_1 (I - R)^-2 1."""
    D0, D1 = m.d0, m.d1
    n = D0.shape[0]
    eye = np.eye(n)
    A0, A1, A2 = D1, D0 - mu * eye, mu * eye
    R = np.zeros((n, n))
    inv = np.linalg.inv(A1)
    for _ in range(200000):
        R2 = -(A0 + R @ R @ A2) @ inv
        if np.max(np.abs(R2 - R)) < 1e-16:
            R = R2
            break
        R = R2
    one = np.ones(n)
    N = np.linalg.inv(eye - R)
    # unknowns [pi_0, pi_1]: balance at levels 0 and 1, and normalisation
    top = np.hstack([D0, D1])
    bot = np.hstack([A2, A1 + R @ A2])
    M = np.vstack([top, bot])                  # [pi_0 pi_1] M = 0
    A = np.vstack([M.T, np.concatenate([one, N @ one])])
    b = np.zeros(2 * n + 1)
    b[-1] = 1.0
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    pi1 = x[n:]
    return float(pi1 @ N @ N @ one)


def map_m1k(m, mu, K):
    """Mean number and loss rate of a MAP/M/1/K queue from its generator
    built here (levels 0..K x the MAP's phases; an arrival at level K is
    lost but moves the phase), solved by a dense linear solve."""
    D0, D1 = m.d0, m.d1
    n = D0.shape[0]
    S = (K + 1) * n
    Q = np.zeros((S, S))
    for lev in range(K + 1):
        b = lev * n
        Q[b:b + n, b:b + n] += D0
        if lev < K:
            Q[b:b + n, b + n:b + 2 * n] += D1
        else:
            Q[b:b + n, b:b + n] += D1
        if lev > 0:
            Q[b:b + n, b - n:b] += mu * np.eye(n)
    Q -= np.diag(Q.sum(axis=1))
    A = np.vstack([Q.T, np.ones(S)])
    rhs = np.zeros(S + 1)
    rhs[-1] = 1.0
    p = np.linalg.lstsq(A, rhs, rcond=None)[0]
    L = sum(lev * p[lev * n:(lev + 1) * n].sum() for lev in range(K + 1))
    lost = float(p[K * n:] @ D1.sum(axis=1))
    return L, lost


BURSTY = qm.MAP.mmpp2(0.05, 0.15, 1.6, 0.2)        # rate 1.25, IDC about 4.6
SVC = 0.66 / BURSTY.rate                           # rho = 0.66


def test_map_m1_matches_the_matrix_geometric_solution():
    mu = 1.0 / SVC
    net = one_queue(BURSTY, service=SVC)
    ref = qbd_map_m1(BURSTY, mu)
    r = qm.solve(net, method="ctmc", open_limit=600)
    assert r.exactness == "exact"
    assert float(r.queue_length["q"]) == pytest.approx(ref, rel=1e-8)
    assert float(r.throughput["q"]) == pytest.approx(BURSTY.rate, rel=1e-10)
    # a Poisson stream of the same rate waits far less: the correlation counts
    assert ref > 1.5 * (0.66 / (1 - 0.66))


def test_map_m1_matrix_geometric_general_map():
    m = qm.MAP([[-3, 1, 0], [0, -2, 1], [1, 0, -4]], [[1, 0, 1], [0.5, 0, 0.5], [0, 2, 1]])
    mu = m.rate / 0.5
    net = one_queue(m, service=1.0 / mu)
    r = qm.solve(net, method="ctmc", open_limit=150)
    assert float(r.queue_length["q"]) == pytest.approx(qbd_map_m1(m, mu), rel=1e-8)


def test_solve_picks_the_exact_chain_and_grows_its_cut():
    net = one_queue(BURSTY, service=SVC)
    r = qm.solve(net)
    assert r.method == "ctmc" and r.exactness == "exact"
    assert float(r.queue_length["q"]) == pytest.approx(qbd_map_m1(BURSTY, 1 / SVC), rel=1e-6)


def test_a_short_cut_says_so():
    net = one_queue(BURSTY, service=SVC)
    with pytest.warns(qm.NumericalWarning, match="truncated"):
        r = qm.solve(net, method="ctmc", open_limit=10)
    assert float(r.queue_length["q"]) < qbd_map_m1(BURSTY, 1 / SVC)


def test_finite_room_python_builder_against_hand_generator():
    K = 5
    net = one_queue(BURSTY, service=SVC, capacity=K)
    r = qm.solve(net, method="ctmc")
    L, lost = map_m1k(BURSTY, 1 / SVC, K)
    assert float(r.queue_length["q"]) == pytest.approx(L, rel=1e-10)
    assert float(r.throughput["q"]) == pytest.approx(BURSTY.rate - lost, rel=1e-10)


@pytest.mark.parametrize("shape", [qm.Erlang(3), qm.HyperExponential(4.0),
                                   qm.HyperExponential(probs=[0.3, 0.7], rates=[0.5, 3.0])])
@pytest.mark.parametrize("capacity", [None, 4])
def test_renewal_map_equals_the_phase_type_path(shape, capacity, monkeypatch):
    # both stationary vectors by the sparse LU (above 2,000 states the
    # solve may be BiCGSTAB to a relative residual of 1e-14 for one and not
    # the other, which moves the figures by 1e-10 or so)
    import qmodels.analytic.ctmc as ctmc_mod

    monkeypatch.setattr(ctmc_mod, "ITERATIVE_FROM", 10**6)
    rate = 0.7
    # (with finite room, a tandem whose first station alone loses arrivals:
    # the Python builder's loss path)
    routes = ({"source": {"q": 0.6, "p": 0.4}, "q": {"p": 0.5, "sink": 0.5}, "p": {"sink": 1.0}}
              if capacity is None else {"source": {"q": 1.0}, "q": {"p": 1.0}, "p": {"sink": 1.0}})
    kw = {} if capacity is None else {"capacity": capacity}

    def net(arr, lam):
        return qm.Network([qm.Queue("q", 0.5, **kw),
                           qm.Queue("p", 0.4, distribution=qm.Erlang(2))],
                          [qm.Open("a", lam, interarrival=arr, routing=routes)])

    a = qm.solve(net(shape, rate), method="ctmc", open_limit=30)
    m = qm.MAP.from_renewal(shape, rate)
    b = qm.solve(net(m, m.rate), method="ctmc", open_limit=30)
    for k in ("q", "p"):
        assert float(b.queue_length[k]) == pytest.approx(float(a.queue_length[k]), rel=1e-10)
        assert float(b.throughput[k]) == pytest.approx(float(a.throughput[k]), rel=1e-10)


def test_map_in_a_mixed_network_conserves_flow():
    net = qm.Network([qm.Queue("q", 0.2, discipline="ps"), qm.Queue("p", 0.15, discipline="ps")],
                     [qm.Open("a", interarrival=BURSTY, route=["q", "p"]),
                      qm.Closed("c", 2, route=["p", "q"])])
    r = qm.solve(net, method="ctmc", open_limit=40)
    assert r.exactness == "exact"
    assert float(r.throughput["a"]) == pytest.approx(BURSTY.rate, rel=1e-8)


# ---------------------------------------------------------------------------
# the approximations: never a MAP taken for a renewal stream
# ---------------------------------------------------------------------------


def test_qna_uses_the_index_of_dispersion_and_says_so():
    net = one_queue(BURSTY, service=SVC)
    r = qm.solve(net, method="qna")
    assert r.exactness == "approximate"
    assert r.info["arrival_scv"][0] == pytest.approx(BURSTY.idc, rel=1e-12)
    assert not any("GI/M" in how and "exact" in how for how in r.info["solved_as"])
    assert any("asymptotic index of dispersion" in n for n in r.notes)
    assert any("correlated (MAP) arrivals" in w for w in r.warnings)


def test_qna_renewal_map_is_not_solved_as_gi_m_1():
    # even a renewal stream given as a MAP is not taken for GI/M/1 (the
    # MAP is not read as renewal); its variability is its SCV there
    m = qm.MAP.from_renewal(qm.HyperExponential(4.0), 0.5)
    r = qm.solve(one_queue(m, service=1.0), method="qna")
    assert r.exactness == "approximate"
    assert r.info["arrival_scv"][0] == pytest.approx(4.0, rel=1e-9)


def test_map_idc_function_equals_the_renewal_one():
    from qmodels.analytic.rqna import MapIDC, RenewalIDC

    for shape in (qm.HyperExponential(4.0), qm.Erlang(3)):
        a = MapIDC(qm.MAP.from_renewal(shape, 2.0))
        b = RenewalIDC(shape)
        t = np.array([0.01, 0.5, 3.0, 30.0, 1e5])
        assert np.allclose(a(t), b(t), rtol=1e-9, atol=0)
        assert a.idc_inf == pytest.approx(shape.scv, rel=1e-9)
    m = MapIDC(BURSTY)
    assert m.idc_inf == pytest.approx(BURSTY.idc, rel=1e-10)
    # I(t) rises from 1 towards the asymptotic index
    t = np.geomspace(1e-3, 1e6, 40)
    v = m(t)
    assert v[0] == pytest.approx(1.0, abs=1e-2) and v[-1] == pytest.approx(BURSTY.idc, rel=1e-4)


def test_rqna_takes_the_map_idc_function():
    m = qm.MAP.from_renewal(qm.HyperExponential(4.0), 0.5)
    routes = {"source": {"q": 1.0}, "q": {"p": 1.0}, "p": {"sink": 1.0}}

    def net(arr, lam):
        return qm.Network([qm.Queue("q", 1.2), qm.Queue("p", 1.0, distribution=qm.Erlang(2))],
                          [qm.Open("a", lam, interarrival=arr, routing=routes)])

    a = qm.rqna(net(qm.HyperExponential(4.0), 0.5), exact_gim1=False)
    b = qm.rqna(net(m, m.rate))
    assert b.exactness == "approximate"
    for k in ("q", "p"):
        assert float(b.response_time[k]) == pytest.approx(float(a.response_time[k]), rel=1e-7)
    r = qm.rqna(one_queue(BURSTY, service=SVC))
    assert r.exactness == "approximate"
    assert r.info["arrival_idc_inf"][0] == pytest.approx(BURSTY.idc, rel=1e-9)
    assert any("Markovian arrival process" in n for n in r.notes)


def test_product_form_methods_refuse_a_map_by_name():
    net = one_queue(BURSTY, service=SVC)
    with pytest.raises(qm.UnsupportedModelError, match="class 'a': a MAP stream"):
        qm.solve(net, method="exact")


def test_a_one_phase_map_is_poisson():
    m = qm.MAP([[-0.5]], [[0.5]])
    a = qm.solve(one_queue(m, service=1.0))
    assert a.method == "exact"
    assert float(a.queue_length["q"]) == pytest.approx(1.0, rel=1e-12)   # M/M/1, rho 0.5


def test_solve_falls_back_to_a_labelled_approximation_past_the_chain_budget():
    names = [f"q{i}" for i in range(6)]
    net = qm.Network([qm.Queue(n, 0.5 / BURSTY.rate) for n in names],
                     [qm.Open("a", interarrival=BURSTY, route=names)])
    r = qm.solve(net)
    assert r.method != "ctmc" and r.exactness == "approximate"


# ---------------------------------------------------------------------------
# the simulator
# ---------------------------------------------------------------------------


def _engine_stream(m, n, seed):
    """n consecutive inter-arrival times drawn by the event loop's own MAP
    functions from the arrays flatten encodes (stationary start)."""
    from qmodels.sim import engine as E
    from qmodels.sim import flatten as F

    emp = []
    kind, _, _, off, ph = F._encode_map(m, m.rate, "class 'a'", emp)
    EMP = np.array(emp)
    CLI = np.zeros((1, 8), np.int64)
    CLI[0, 2], CLI[0, 3], CLI[0, 4] = kind, off, ph
    CLF = np.zeros((1, 8))
    CLF[0, 1] = 1.0 / m.rate
    U = np.random.default_rng(seed).random(60 * n)
    SI = np.zeros(E.NSI + 1, np.int64)
    t = E.map_start(0, CLI, CLF, EMP, U, SI)
    last, out = None, []
    while len(out) < n and SI[E.I_UPOS] < U.shape[0] - 4:
        if E.map_step(0, CLI, EMP, U, SI):
            if last is not None:
                out.append(t - last)
            last = t
        t += E.map_next(0, CLI, CLF, EMP, U, SI)
    assert len(out) == n
    return np.array(out)


@pytest.mark.parametrize("m", [BURSTY, qm.MAP([[-3, 1, 0], [0, -2, 1], [1, 0, -4]],
                                              [[1, 0, 1], [0.5, 0, 0.5], [0, 2, 1]])])
def test_simulated_stream_has_the_map_statistics(m):
    # 200,000 intervals in 20 batches; each statistic within 5 standard
    # errors of the batch means (the batches are long against the
    # correlation, lag-1 of 0.16 here) of the MAP's formula
    x = _engine_stream(m, 200_000, seed=5).reshape(20, -1)

    def stats(b):
        return (1.0 / b.mean(), b.var() / b.mean() ** 2, np.corrcoef(b[:-1], b[1:])[0, 1])

    per = np.array([stats(b) for b in x])
    whole = stats(x.ravel())
    se = per.std(axis=0, ddof=1) / math.sqrt(len(per))
    for got, want, s in zip(whole, (m.rate, m.scv, m.lag_correlation(1)), se, strict=True):
        assert abs(got - want) <= 5 * s, (got, want, s)


def test_simulation_is_reproducible_by_seed():
    net = one_queue(BURSTY, service=SVC)
    a = qm.simulate(net, seed=3, horizon=400, replications=2, progress=False)
    b = qm.simulate(net, seed=3, horizon=400, replications=2, progress=False)
    assert float(a.queue_length["q"]) == float(b.queue_length["q"])
    c = qm.simulate(net, seed=4, horizon=400, replications=2, progress=False)
    assert float(c.queue_length["q"]) != float(a.queue_length["q"])


def test_encode_map_refuses_a_rate_not_the_maps():
    # the simulator draws a MAP at its own rate only (a class whose rate
    # the routing chain makes another is refused by name, not mis-drawn)
    m = qm.MAP.mmpp2(0.1, 0.3, 1.0, 0.2)
    net = one_queue(m, service=0.5)
    from qmodels.sim import flatten as F

    with pytest.raises(qm.UnsupportedModelError, match="class 'a'.*MAP's rate"):
        F._encode_map(m, 0.5, "class 'a'", [])
    assert net.classes[0].arrival_rate == pytest.approx(m.rate)


@pytest.mark.slow
def test_simulated_map_m1_against_matrix_geometric():
    net = one_queue(BURSTY, service=SVC)
    ref = qbd_map_m1(BURSTY, 1 / SVC)
    r = qm.simulate(net, seed=7, horizon=20000, replications=5, progress=False)
    q = r.queue_length["q"]
    assert abs(float(q) - ref) <= q.half_width
    assert r.exactness == "simulated"


@pytest.mark.slow
def test_transient_from_phase_0_agrees_between_chain_and_simulator():
    # a burst: phase 0 arrives at 4 / s into a queue of rate 2, phase 1 at
    # 0.1 / s; both methods start the stream in phase 0 with no job present
    m = qm.MAP.mmpp2(0.2, 0.1, 4.0, 0.1)
    net = qm.Network([qm.Queue("q", 0.5)], [qm.Open("a", interarrival=m, route=["q"])])
    a = qm.transient(net, 10.0, points=5, method="ctmc", average=True)
    b = qm.transient(net, 10.0, points=5, method="sim", seed=2, replications=400)
    assert "phase 0" in a.initial and "phase 0" in b.initial
    q, lo, hi = a.figures["Q"][:, 0], b.low["Q"][:, 0], b.high["Q"][:, 0]
    assert np.all((lo <= q) & (q <= hi)), (q, lo, hi)
