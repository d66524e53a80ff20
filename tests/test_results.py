"""Result objects: one vocabulary, readable, exportable, immutable."""

import numpy as np
import pytest

import qmodels as qm


@pytest.fixture
def result():
    net = qm.Network([qm.Delay("users", 1.0), qm.Queue("cpu", 0.02, servers=2),
                      qm.Queue("disk", 0.05)],
                     [qm.Closed("tx", 8, visits={"users": 1, "cpu": 3, "disk": 2},
                                think_time=0.5)], name="demo")
    return qm.mva(net, curve=True)


def test_figures_index_by_station_class_and_pair(result):
    r = result
    assert r.X["tx"] == r.throughput["tx"]
    assert r.X["cpu"] == pytest.approx(3 * r.X["tx"])
    assert r.X["cpu", "tx"] == r.X["tx", "cpu"] == r.X["cpu"]
    assert r.Q["tx"] == pytest.approx(sum(r.Q.stations.values()))
    with pytest.raises(KeyError, match="utilization is per station"):
        r.U["tx"]
    with pytest.raises(KeyError, match="unknown station or class 'nope'"):
        r.R["nope"]
    assert list(r.U) == ["users", "cpu", "disk"]
    assert "cpu" in repr(r.U)


def test_frames(result):
    st = result.to_frame()
    assert list(st.index) == ["users", "cpu", "disk"]
    assert {"D", "X", "U", "Q", "R", "bottleneck"} <= set(st.columns)
    assert st.loc["disk", "bottleneck"] == (result.bottleneck == ("disk",))
    cl = result.to_frame("classes")
    assert cl.loc["tx", "N"] == 8 and cl.loc["tx", "X"] == pytest.approx(result.X["tx"])
    pc = result.to_frame("per_class")
    assert pc.loc[("cpu", "tx"), "U"] == pytest.approx(result.U["cpu"])
    cf = result.curve.to_frame()
    assert len(cf) == 9 and "Q[disk]" in cf.columns
    with pytest.raises(ValueError, match="kind must be"):
        result.to_frame("bogus")


def test_repr_html_and_immutability(result):
    text = repr(result)
    assert "exact solution [exact] of 'demo'" in text and "bottleneck" in text
    html = result._repr_html_()
    assert "<table" in html and "bottleneck" in html
    with pytest.raises(AttributeError):
        result.method = "x"
    with pytest.raises(ValueError):
        result.station_queue_length[0, 0] = 1.0
    assert "Curve(class 'tx'" in repr(result.curve)


def test_same_names_across_solvers(result):
    b = qm.bounds(result.network)
    assert b.throughput_lower <= result.X["tx"] <= b.throughput_upper
    net = qm.Network([qm.Queue("cpu", 0.1)], [qm.Open("o", 2.0, visits={"cpu": 1})])
    o = qm.mva(net)
    assert set(o.to_dict()) == set(result.to_dict())
    assert np.isfinite(o.R["o"])


def test_solve_dispatch(result):
    r2 = qm.solve(result.network, method="exact")
    assert r2.X["tx"] == result.X["tx"]
    assert "exact" in qm.methods() and "bounds" in qm.methods()


def test_table_with_many_tied_bottlenecks_names_twenty_and_counts_the_rest():
    # 2,000 identical stations all tie as the bottleneck: the line stays short
    # (the audit's 20k-station table took 24 s when every tie was looked up by name)
    K = 2000
    net = qm.Network([qm.Queue(f"s{i}", 0.01) for i in range(K)],
                     [qm.Closed("c", 3, visits={f"s{i}": 1 for i in range(K)})])
    r = qm.mva(net)
    assert len(r.bottleneck) == K
    last = next(x for x in r.table().splitlines() if x.startswith("bottleneck"))
    assert last.startswith("bottleneck (tie): s0 (U = ")
    assert last.endswith(f", ... ({K} tied)") and last.count("(U = ") == 20


def test_pool_tokens_and_holding_time_in_every_display_of_a_ctmc_result():
    """The CTMC does not repeat a pool's tokens in its info: ``table()``
    printed "tokens None", ``to_dict()`` gave ``"tokens": None`` and
    ``to_frame()`` a NaN holding time, while the notebook display showed
    both.  Every display reads the model's tokens and, where the solver
    gives none, the holding time by Little's law H = held / X_acquire.
    By hand: one token over two 1-second stations with 4 jobs is never
    idle, so X = 1/2, held = 1 and H = 2 s."""
    net = qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                     [qm.Closed("t", 4, routing={"a": {"b": 1}, "b": {"a": 1}})],
                     pools=[qm.TokenPool("tok", 1, "a", "b")])
    r = qm.solve(net, method="ctmc")
    assert r.X["t"] == pytest.approx(0.5, abs=1e-12)
    assert "tokens 1," in r.table() and "None" not in r.table()
    assert r.to_dict()["pools"]["tok"]["tokens"] == 1
    row = r.to_frame().loc["tok"]
    assert row["servers"] == 1 and row["R"] == pytest.approx(2.0, abs=1e-12)
    assert "None" not in r._repr_html_()
    # the decomposition reports both itself: the same figures
    d = qm.solve(net, method="decomposition").to_frame().loc["tok"]
    assert d["servers"] == 1 and d["R"] == pytest.approx(2.0, abs=1e-9)


def test_to_frame_of_an_unknown_kind_is_a_qmodels_error(result):
    """``to_frame("station")`` (singular) was a bare ValueError; it is an
    InvalidValueError (still a ValueError) for analytic and simulated
    results alike."""
    with pytest.raises(qm.InvalidValueError, match="kind must be 'stations'"):
        result.to_frame("station")
    s = qm.simulate(result.network, seed=1, horizon=50.0, replications=2, progress=False)
    with pytest.raises(qm.InvalidValueError, match="kind must be 'stations'"):
        s.to_frame("station")
