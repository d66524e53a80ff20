"""``estimates`` (every figure's interval in one pass) is, bit for bit,
``estimate`` of each row: the result assembly relies on it, and the
simulator's numbers are pinned to the bit for a seed."""
import math

import numpy as np
import pytest

from qmodels.sim.stats import estimate, estimates


def _same(a, b):
    def eq(x, y):
        return (math.isnan(x) and math.isnan(y)) or x == y
    return (eq(a.mean, b.mean) and eq(a.low, b.low) and eq(a.high, b.high)
            and a.n == b.n and a.level == b.level)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 10, 16, 20, 33, 200])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_rows_match_the_single_figure_estimate(n, level):
    rng = np.random.default_rng(n)
    F = 37
    v = rng.standard_exponential((F, n)) * rng.choice([1e-4, 1.0, 3e5], size=(F, 1))
    # rows with some NaNs (a ratio with no denominator in some observations),
    # a row of NaNs only, a constant row (zero width)
    for i in range(0, F, 5):
        v[i, rng.random(n) < 0.3] = np.nan
    v[3] = np.nan
    v[4] = 2.5
    got = estimates(v, level)
    for i in range(F):
        assert _same(got[i], estimate(v[i], level)), (i, got[i], estimate(v[i], level))


def test_a_transposed_table_is_read_by_rows():
    v = np.arange(24, dtype=float).reshape(8, 3) ** 1.5
    got = estimates(v.T, 0.95)
    assert all(_same(g, estimate(v[:, j], 0.95)) for j, g in enumerate(got))


@pytest.mark.parametrize("n", [4, 10, 11, 57, 200, 1000])
def test_mser5_of_every_column_matches_one_column_at_a_time(n):
    from qmodels.sim.stats import mser5, mser5_columns

    rng = np.random.default_rng(n)
    t = np.arange(n)[:, None]
    # a decaying transient of varied size on noise, and a flat column
    y = rng.standard_exponential((n, 6)) + rng.random(6) * 5 * np.exp(-t / (n / 8 + 1))
    y[:, 5] = 1.0
    got = mser5_columns(y)
    assert [int(d) for d in got] == [mser5(y[:, j]) for j in range(6)]


def test_batched_percentiles_match_one_histogram_at_a_time():
    # sparse and dense rows, empty rows, totals whose quantile targets are
    # whole numbers (tot = 100: 50, 95, 99 land exactly on a cumulative count)
    from types import SimpleNamespace

    from qmodels.sim.stats import histogram_percentiles
    from qmodels.sim.windows import PERCENTILES, _percentiles_of

    rng = np.random.default_rng(5)
    B, C, nb = 7, 3, 300
    h = np.zeros((B, C, nb), dtype=np.int64)
    for b in range(B):
        for c in range(C):
            kind = (b + c) % 4
            if kind == 1:
                h[b, c, rng.integers(40, 200, size=100)] += 1      # total 100
            elif kind == 2:
                h[b, c, 120:180] = rng.integers(0, 1000, size=60)
            elif kind == 3:
                h[b, c, 150] = 7                                     # one bin
    run = SimpleNamespace(f=SimpleNamespace(hist_lo=np.array([-3.0, -1.0, 0.5]),
                                            hist_step=0.01))
    got = _percentiles_of(run, h)
    qs = [q / 100.0 for q in PERCENTILES]
    for b in range(B):
        for c in range(C):
            ref = histogram_percentiles(h[b, c], run.f.hist_lo[c], run.f.hist_step, qs)
            assert np.array_equal(got[b, c], ref, equal_nan=True), (b, c, got[b, c], ref)


def test_a_network_simulated_again_gives_the_same_numbers_from_its_kept_arrays():
    # the second call on the same object reuses its flattened arrays (kept by
    # identity); a fresh, equal network flattens anew: all three agree to the bit
    import gc

    import qmodels as qm
    from qmodels.sim import api

    def net():
        return qm.Network(
            [qm.Queue("a", 0.3, servers=2), qm.Queue("b", 0.2, capacity=3)],
            [qm.Closed("c", 4, routing={"a": {"b": 1.0}, "b": {"a": 1.0}}),
             qm.Open("o", 0.5, routing={"source": {"a": 1.0}, "a": {"sink": 1.0}})])

    def numbers(r):
        return [(e.mean, e.low, e.high) for f in (r.X, r.R, r.Q, r.U)
                for e in f._station.values()] + [
            (e.mean, e.low, e.high) for p in r.percentiles.values() for e in p.values()]

    n1 = net()
    kw = dict(seed=3, horizon=60.0, replications=3, progress=False)
    first = numbers(qm.simulate(n1, **kw))
    assert api._FLAT_CACHE[id(n1)][0]() is n1
    again = numbers(qm.simulate(n1, **kw))
    fresh = numbers(qm.simulate(net(), **kw))
    same = lambda a, b: all(x == y or (x != x and y != y) for p, q in zip(a, b)  # noqa: E731
                            for x, y in zip(p, q))
    assert same(first, again) and same(first, fresh)
    key = id(n1)
    del n1
    gc.collect()
    assert key not in api._FLAT_CACHE      # the entry went with its network
