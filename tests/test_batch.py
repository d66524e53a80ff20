"""Tests of qmodels.analytic.batch (batched single-class MVA and Schweitzer).

References: each batch row against the one-by-one solver of ours that is
tested elsewhere against textbooks (qmodels.analytic.mva.mva_single), against a small
scalar Schweitzer-Bard loop written here from Lazowska et al. 1984,
sec. 7.4.2.2, and against hand derivations (single station, N = 1).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qmodels as qm
import qmodels.analytic.batch as batch
from qmodels.analytic.batch import BatchResult, mva_batch, schweitzer_batch
from qmodels.analytic.mva import mva_single
from qmodels.errors import ConvergenceWarning, InvalidValueError, PopulationError

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _net(D, Z, N, servers, delay):
    st_ = []
    for k, d in enumerate(D):
        if delay[k]:
            st_.append(qm.Delay(f"s{k}", float(d)))
        else:
            st_.append(qm.Queue(f"s{k}", float(d), servers=int(servers[k])))
    return qm.Network(st_, [qm.Closed("c", int(N), think_time=float(Z),
                                      visits={s.name: 1 for s in st_})])


def _row(res, K):
    return (res.X["c"], res.R["c"], np.array([res.Q[f"s{k}"] for k in range(K)]),
            np.array([res.U[f"s{k}"] for k in range(K)]))


def scalar_schweitzer(D, Z, N, servers, delay, tol=1e-13, max_iter=100_000):
    """Schweitzer-Bard for one class, written from Lazowska et al. 1984,
    sec. 7.4.2.2 (Algorithm 7.2): Q_k(N-1) ~ (N-1)/N Q_k(N).  A c-server
    queue (1 < c < N) is one server D/c plus a delay D (c-1)/c (Seidmann
    et al. 1987); c >= N is a delay."""
    if N == 0:
        return 0.0, np.zeros(len(D))
    parts = []  # (station, demand, is_delay)
    for k, d in enumerate(D):
        c = servers[k]
        if delay[k] or d == 0 or c >= N:
            parts.append((k, d, True))
        elif c == 1:
            parts.append((k, d, False))
        else:
            parts.append((k, d / c, False))
            parts.append((k, d * (c - 1) / c, True))
    used = [p for p in parts if p[1] > 0]
    q = {i: N / len(used) for i, p in enumerate(parts) if p[1] > 0} if used else {}
    X = 0.0
    for _ in range(max_iter):
        r = {}
        for i, (_k, d, dl) in enumerate(parts):
            r[i] = d if dl else d * (1 + (N - 1) / N * q.get(i, 0.0))
        X = N / (Z + sum(r.values()))
        new = {i: X * r[i] for i in r}
        change = max(abs(new[i] - q.get(i, 0.0)) for i in r)
        q = new
        if change <= tol * max(N, 1):
            break
    Q = np.zeros(len(D))
    for i, (k, _, _) in enumerate(parts):
        Q[k] += q[i]
    return X, Q


batch_strategy = st.integers(1, 5).flatmap(lambda K: st.tuples(
    st.lists(st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 2.0)), min_size=K, max_size=K),
             min_size=1, max_size=6),
    st.integers(0, 30),
    st.lists(st.integers(1, 4), min_size=K, max_size=K),
    st.lists(st.booleans(), min_size=K, max_size=K),
    st.one_of(st.just(0.0), st.floats(1e-3, 3.0)),
))


# ---------------------------------------------------------------------------
# exact MVA: batch equals one by one
# ---------------------------------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(spec=batch_strategy, data=st.data())
def test_mva_batch_equals_one_by_one(spec, data):
    D, Nmax, servers, delay, Zmax = spec
    D = np.array(D)
    B, K = D.shape
    pops = np.array([data.draw(st.integers(0, Nmax)) for _ in range(B)])
    Z = np.array([data.draw(st.one_of(st.just(0.0), st.floats(1e-3, 3.0))) for _ in range(B)])
    for b in range(B):
        if D[b].sum() + Z[b] == 0:
            Z[b] = 1.0
    res = mva_batch(D, Z, pops, servers=servers, delay=np.array(delay))
    for b in range(B):
        X, R, Q, U = _row(mva_single(_net(D[b], Z[b], pops[b], servers, delay)), K)
        ld = any(1 < servers[k] < pops[b] and not delay[k] for k in range(K))
        if not ld:
            # same operations in the same order: bit for bit
            assert res.X[b] == X and res.R[b] == R
            assert np.array_equal(res.Q[b], Q) and np.array_equal(res.U[b], U)
        else:
            assert res.X[b] == pytest.approx(X, rel=1e-12)
            assert res.Q[b] == pytest.approx(Q, rel=1e-12, abs=1e-14)
            assert res.U[b] == pytest.approx(U, rel=1e-12, abs=1e-14)


def test_mva_batch_compiled_path_equals_one_by_one(monkeypatch):
    # force the numba kernels (parallel over rows) even for a small batch
    monkeypatch.setattr(batch, "LAZY_THRESHOLD", 0)
    rng = np.random.default_rng(7)
    B, K = 64, 6
    D = rng.uniform(0.0, 0.1, (B, K))
    D[3, 2] = 0.0
    Z = rng.uniform(0.0, 2.0, B)
    N = rng.integers(0, 60, B)
    res = mva_batch(D, Z, N)
    sch = schweitzer_batch(D, Z, N, tol=1e-12)
    for b in range(B):
        X, R, Q, U = _row(mva_single(_net(D[b], Z[b], N[b], [1] * K, [False] * K)), K)
        assert res.X[b] == X and np.array_equal(res.Q[b], Q) and res.R[b] == R
        Xs, Qs = scalar_schweitzer(D[b], Z[b], int(N[b]), [1] * K, [False] * K)
        assert sch.X[b] == pytest.approx(Xs, rel=1e-9)
        assert sch.Q[b] == pytest.approx(Qs, rel=1e-9, abs=1e-12)


def test_mva_batch_curve_equals_mva_curve():
    D = np.array([[0.05, 0.08, 0.3], [0.02, 0.01, 0.0], [0.1, 0.1, 0.1]])
    servers = [1, 2, 1]
    delay = [False, False, True]
    N = np.array([3, 25, 10])
    res = mva_batch(D, 1.0, N, servers=servers, delay=delay, curve=True)
    cur = res.curve
    assert cur["X"].shape == (3, 26) and cur["Q"].shape == (3, 26, 3)
    assert cur["population"].tolist() == list(range(26))
    for b in range(3):
        ref = mva_single(_net(D[b], 1.0, 25, servers, delay), curve=True).curve
        assert cur["X"][b] == pytest.approx(ref.X, rel=1e-12)
        assert cur["Q"][b] == pytest.approx(ref.Q, rel=1e-12, abs=1e-14)
        assert cur["U"][b] == pytest.approx(ref.U, rel=1e-12, abs=1e-14)
        assert cur["R"][b, 1:] == pytest.approx(ref.R[1:], rel=1e-12)
        # the row's own population is read off the curve
        assert res.X[b] == pytest.approx(cur["X"][b, N[b]], rel=1e-12)


def test_hand_values_single_station_and_n_one():
    # one single-server station, no think time: X = 1/D for any N >= 1,
    # Q = N (everything queues there); N = 1 with think time: X = 1/(D+Z).
    r = mva_batch([[0.25]], 0.0, 7)
    assert r.X[0] == pytest.approx(4.0) and r.Q[0, 0] == pytest.approx(7.0)
    assert r.R[0] == pytest.approx(7 * 0.25)
    r = mva_batch([[0.2, 0.3]], 0.5, 1)
    assert r.X[0] == pytest.approx(1 / 1.0)
    assert r.Q[0] == pytest.approx([0.2, 0.3])
    assert r.U[0] == pytest.approx([0.2, 0.3])
    # two servers, N = 2: never queues, X = 2 / (D + Z)
    r = mva_batch([[0.4]], 0.6, 2, servers=[2])
    assert r.X[0] == pytest.approx(2.0) and r.U[0, 0] == pytest.approx(0.4)


def test_degenerate_rows():
    D = np.array([[0.1, 0.0], [0.0, 0.0], [0.2, 0.3]])
    Z = np.array([0.0, 1.0, 0.5])
    N = np.array([5, 3, 0])
    r = mva_batch(D, Z, N)
    # zero-demand station: nothing there
    assert r.Q[0, 1] == 0.0 and r.U[0, 1] == 0.0
    assert r.X[0] == pytest.approx(10.0)
    # only think time: X = N / Z
    assert r.X[1] == pytest.approx(3.0) and r.R[1] == 0.0
    # N = 0: nothing moves; R is the no-contention sum of demands
    assert r.X[2] == 0.0 and np.all(r.Q[2] == 0) and r.R[2] == pytest.approx(0.5)
    s = schweitzer_batch(D, Z, N)
    assert s.X[2] == 0.0 and s.X[1] == pytest.approx(3.0) and s.X[0] == pytest.approx(10.0)
    # an empty batch
    e = mva_batch(np.zeros((0, 3)), np.zeros(0), 4)
    assert e.X.shape == (0,) and e.Q.shape == (0, 3)


# ---------------------------------------------------------------------------
# Schweitzer
# ---------------------------------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(spec=batch_strategy)
def test_schweitzer_batch_equals_scalar_schweitzer(spec):
    D, N, servers, delay, Z = spec
    D = np.array(D)
    B, K = D.shape
    Zs = np.where(D.sum(axis=1) + Z == 0, 1.0, Z)
    # scalar_schweitzer splits c-server queues after Seidmann: ask for that
    res = schweitzer_batch(D, Zs, N, servers=servers, delay=np.array(delay), tol=1e-13,
                           multiserver="seidmann")
    assert res.converged.all()
    for b in range(B):
        X, Q = scalar_schweitzer(D[b], Zs[b], N, servers, delay)
        assert res.X[b] == pytest.approx(X, rel=1e-9, abs=1e-12)
        assert res.Q[b] == pytest.approx(Q, rel=1e-9, abs=1e-11)
        # never outside the asymptotic bounds (Lazowska et al. sec. 5.2),
        # here for single-server, non-delay stations
        if N > 0 and all(s == 1 for s in servers) and not any(delay):
            dmax = D[b].max()
            bound = min(N / (D[b].sum() + Zs[b]) * (1 + 1e-12),
                        1 / dmax if dmax > 0 else math.inf)
            assert res.X[b] <= bound * (1 + 1e-12)


def test_schweitzer_batch_equals_multiclass_schweitzer():
    import qmodels.analytic.amva as mc
    rng = np.random.default_rng(3)
    B, K = 20, 5
    D = rng.uniform(0.0, 0.2, (B, K))
    N = rng.integers(0, 40, B)
    Z = rng.uniform(0.0, 1.0, B)
    delay = np.zeros(K, dtype=bool)
    delay[4] = True
    res = schweitzer_batch(D, Z, N, delay=delay)
    for b in range(B):
        one = mc.schweitzer(_net(D[b], Z[b], N[b], [1] * K, delay))
        X, R, Q, U = _row(one, K)
        assert res.X[b] == pytest.approx(X, rel=1e-12)
        assert res.Q[b] == pytest.approx(Q, rel=1e-12, abs=1e-14)
        assert res.iterations[b] == one.info["iterations"]


def test_schweitzer_close_to_exact_on_balanced_networks():
    # balanced: equal demands; Schweitzer is within a few percent of exact
    # (Lazowska et al. 1984, sec. 7.4.2.2 quote errors of a few percent)
    D = np.full((4, 5), 0.05)
    N = np.array([2, 10, 50, 200])
    a = mva_batch(D, 1.0, N)
    s = schweitzer_batch(D, 1.0, N)
    assert s.X == pytest.approx(a.X, rel=0.05)


def test_schweitzer_convergence_warning():
    D = np.array([[0.1, 0.2, 0.3], [0.2, 0.2, 0.2]])
    servers = np.array([[2, 1, 1], [1, 1, 1]])
    # row 1 is balanced and of single servers: it starts at its fixed point
    # (R_k = D (1 + (N-1)/N Q_k) equal for all k, so Q_k = N/K) and
    # converges in one iteration; row 0, with a 2-server station (a
    # load-dependent column, no such start), does not.
    with pytest.warns(ConvergenceWarning, match=r"1 of 2 rows stopped at max_iter=1 .*row 0"):
        r = schweitzer_batch(D, 0.0, 10, servers=servers, max_iter=1)
    assert r.converged.tolist() == [False, True] and r.iterations.tolist() == [1, 1]
    assert r.Q[1] == pytest.approx([10 / 3] * 3, rel=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert schweitzer_batch(D, 0.0, 10, servers=servers).converged.all()


@pytest.mark.parametrize("compiled", [False, True])
def test_schweitzer_at_nearly_tied_queues_converges_in_the_batch_as_in_schweitzer(
        compiled, monkeypatch):
    """Two queues 1e-4 apart near saturation (8,192 jobs): from N spread
    evenly the iteration's slow mode took more than 10,000 sweeps; from
    the single-class fixed point (amva.single_class_start) a few, in the
    batch (compiled or not) as in ``qm.schweitzer``, bit for bit."""
    import qmodels.analytic.amva as mc
    from qmodels.analytic import batch

    if compiled:
        if not batch.HAVE_NUMBA:
            pytest.skip("numba not installed")
        monkeypatch.setattr(batch, "LAZY_THRESHOLD", 0)

    D = np.array([[5e-5, 5e-5 * (1 + 1e-4)], [5e-5, 5e-5 * (1 + 1e-9)]])
    for multiserver in ("marginal", "seidmann"):
        res = schweitzer_batch(D, 0.0, 8192, multiserver=multiserver)
        assert res.converged.all() and (res.iterations < 10).all()
        for b in range(2):
            one = mc.schweitzer(_net(D[b], 0.0, 8192, [1, 1], np.zeros(2, bool)),
                                multiserver=multiserver)
            assert one.info["converged"] and one.info["iterations"] == res.iterations[b]
            X, R, Q, U = _row(one, 2)
            assert res.X[b] == X and (res.Q[b] == Q).all()
            # Schweitzer's own equations at the answer: Q_k = X D_k (1 + (N-1)/N Q_k)
            a = 8191 / 8192
            assert Q == pytest.approx(X * D[b] * (1 + a * Q), rel=1e-7)


# ---------------------------------------------------------------------------
# result object
# ---------------------------------------------------------------------------


def test_result_is_frozen_with_frame():
    r = mva_batch([[0.1, 0.2], [0.3, 0.1]], [0.0, 1.0], [2, 3], station_names=["cpu", "disk"])
    assert isinstance(r, BatchResult) and len(r) == 2
    with pytest.raises(ValueError):
        r.X[0] = 1.0
    with pytest.raises(AttributeError):
        r.method = "x"
    f = r.to_frame()
    assert list(f.columns) == ["N", "Z", "X", "R", "D[cpu]", "D[disk]", "Q[cpu]", "Q[disk]",
                               "U[cpu]", "U[disk]"]
    assert f["X"].tolist() == r.X.tolist()
    assert r.throughput is r.X and r.utilization is r.U
    assert "BatchResult(exact, 2 rows x 2 stations" in repr(r)
    # Little's law per row: sum Q + X Z = N
    assert (r.Q.sum(axis=1) + r.X * np.array([0.0, 1.0])) == pytest.approx([2, 3])
    s = schweitzer_batch([[0.1, 0.2]], 0.0, 2)
    assert "iterations" in s.to_frame().columns


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("solver", [mva_batch, schweitzer_batch])
def test_validation_messages(solver):
    with pytest.raises(InvalidValueError, match=r"demands\[1, 0\] \(row 1, station 0\) must be "
                                                r"a finite non-negative number, got -0.5"):
        solver([[0.1, 0.2], [-0.5, 0.1]], 0.0, 3)
    with pytest.raises(InvalidValueError, match=r"demands\[0, 1\] \(row 0, station 1\).*nan"):
        solver([[0.1, float("nan")]], 0.0, 3)
    with pytest.raises(InvalidValueError, match=r"demands must be shaped \(B, K\)"):
        solver([0.1, 0.2], 0.0, 3)
    with pytest.raises(InvalidValueError, match=r"think_times\[1\] \(row 1\) must be a finite "
                                                r"non-negative number, got -1.0"):
        solver([[0.1], [0.2]], [0.0, -1.0], 3)
    with pytest.raises(InvalidValueError, match=r"think_times must be a number or shaped \(2,\)"):
        solver([[0.1], [0.2]], [0.0, 1.0, 2.0], 3)
    with pytest.raises(PopulationError, match=r"population must be an integer >= 0, got -1"):
        solver([[0.1]], 0.0, -1)
    with pytest.raises(PopulationError, match=r"population\[1\] must be an integer >= 0, got 2.5"):
        solver([[0.1], [0.2]], 0.0, [3, 2.5])
    with pytest.raises(PopulationError, match=r"population\[0\] must be an integer >= 0, got True"):
        solver([[0.1]], 0.0, [True])
    with pytest.raises(PopulationError, match=r"population must be an integer or shaped \(1,\)"):
        solver([[0.1]], 0.0, [1, 2])
    with pytest.raises(InvalidValueError, match=r"servers\[0, 1\] \(row 0, station 1\) must be "
                                                r"an integer >= 1, got 1.5"):
        solver([[0.1, 0.2]], 0.0, 3, servers=[1, 1.5])
    with pytest.raises(InvalidValueError, match=r"servers must be shaped \(2,\) or \(1, 2\)"):
        solver([[0.1, 0.2]], 0.0, 3, servers=[1, 1, 1])
    with pytest.raises(InvalidValueError, match=r"delay must be booleans, got dtype int64"):
        solver([[0.1, 0.2]], 0.0, 3, delay=np.array([1, 0]))
    with pytest.raises(InvalidValueError, match=r"delay must be shaped \(2,\) or \(1, 2\)"):
        solver([[0.1, 0.2]], 0.0, 3, delay=[True, False, True])
    with pytest.raises(InvalidValueError, match=r"row 1: all demands and the think time are zero"):
        solver([[0.1], [0.0]], 0.0, 3)
    with pytest.raises(InvalidValueError, match=r"station_names has 1 names for 2 stations"):
        solver([[0.1, 0.2]], 0.0, 3, station_names=["a"])
    with pytest.raises(InvalidValueError, match=r"row 0: throughput overflows"):
        solver([[0.0]], 5e-324, 3)
    # integral floats are integers; population 0 with no work is fine
    assert solver([[0.1]], 0.0, [3.0]).population.tolist() == [3]
    assert solver([[0.0]], 0.0, 0).X.tolist() == [0.0]


def test_schweitzer_option_messages():
    with pytest.raises(InvalidValueError, match="tol must be a finite positive number, got 0"):
        schweitzer_batch([[0.1]], 0.0, 2, tol=0)
    with pytest.raises(InvalidValueError, match="max_iter must be an integer >= 1, got 0"):
        schweitzer_batch([[0.1]], 0.0, 2, max_iter=0)


@pytest.mark.slow
def test_target_size_batch_matches_one_by_one():
    # the size of the target (10,000 rows, K = 20, N = 200), checked
    # on a sample of rows; no timing assertion (the machine is shared)
    rng = np.random.default_rng(11)
    B, K, N = 10_000, 20, 200
    D = rng.uniform(0.001, 0.05, (B, K))
    Z = rng.uniform(0.0, 5.0, B)
    r = mva_batch(D, Z, N)
    s = schweitzer_batch(D, Z, N)
    assert s.converged.all()
    for b in rng.choice(B, 20, replace=False):
        X, R, Q, U = _row(mva_single(_net(D[b], Z[b], N, [1] * K, [False] * K)), K)
        assert r.X[b] == X and np.array_equal(r.Q[b], Q)
        Xs, Qs = scalar_schweitzer(D[b], Z[b], N, [1] * K, [False] * K, tol=1e-8)
        assert s.X[b] == pytest.approx(Xs, rel=1e-6)
