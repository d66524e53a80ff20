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
