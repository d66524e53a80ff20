"""Output analysis: point estimates with confidence intervals, MSER-5
warm-up truncation, percentiles from a histogram.

References
----------
Law, *Simulation Modeling and Analysis*, 5th ed. (2015), ch. 9: independent
replications with Student-t intervals (sec. 9.4.1, eq. 9.1), batch means
(sec. 9.5.3), sequential procedures on the relative half-width (sec. 9.4.1,
"relative precision").
White, "An effective truncation heuristic for bias reduction in simulation
output", *Simulation* 69(6):323-334 (1997); White, Cobb & Spratt, "A
comparison of five steady-state truncation heuristics for simulation",
Proc. Winter Simulation Conference (2000): MSER-5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidValueError

__all__ = ["Estimate", "estimate", "estimates", "mser5", "mser5_columns", "histogram_percentile",
           "histogram_percentiles"]


@dataclass(frozen=True)
class Estimate:
    """A simulated mean with its confidence interval.

    Attributes
    ----------
    mean : float
        Point estimate (the average of ``n`` independent observations:
        replication or batch means).
    low, high : float
        Confidence interval; ``-inf``/``inf`` when ``n < 2``.
    level : float
        Confidence level, e.g. 0.95.
    n : int
        Number of observations behind the interval.
    t_interval : tuple or None
        ``(low, high)`` of the Student-t interval when the interval shown
        was widened for a heavy tail the run drew too rarely
        (:func:`qmodels.sim.tails.widen_figures`); None when it was not.

    ``float(e)`` is the mean, so an Estimate can be used where a number is
    expected.
    """

    mean: float
    low: float
    high: float
    level: float
    n: int
    t_interval: tuple | None = None

    @property
    def half_width(self) -> float:
        """Half the width of the interval."""
        return 0.5 * (self.high - self.low)

    @property
    def ci(self) -> tuple:
        """``(low, high)``."""
        return (self.low, self.high)

    @property
    def relative_half_width(self) -> float:
        """half_width / |mean| (``inf`` for a zero mean)."""
        if self.mean == 0:
            return 0.0 if self.half_width == 0 else math.inf
        return self.half_width / abs(self.mean)

    def contains(self, x) -> bool:
        """True if ``low <= x <= high``."""
        return bool(self.low <= float(x) <= self.high)

    def __float__(self) -> float:
        return float(self.mean)

    @property
    def degenerate(self) -> bool:
        """True when ``n >= 2`` observations were all equal, so that the
        interval has zero width: the observations did not vary, which
        does not make the mean exact (a station busy through every
        replication shows U = 1 ± 0 when the true value is just below 1)."""
        return self.n >= 2 and self.half_width == 0 and math.isfinite(self.mean)

    @property
    def asymmetric(self) -> bool:
        """True when the interval is not centred on the mean (the
        simulator widens one end for a heavy tail it drew too rarely:
        :func:`qmodels.sim.tails.widen_figures`); it then shows as
        ``mean [low, high]``."""
        up, down = self.high - self.mean, self.mean - self.low
        if not (math.isfinite(up) and math.isfinite(down)):
            return math.isfinite(up) != math.isfinite(down)
        return abs(up - down) > 1e-9 * max(abs(up), abs(down), abs(self.mean))

    def __repr__(self) -> str:
        why = (f"; all {self.n} observations equal: zero width means no variation was "
               "seen, not an exact value") if self.degenerate else ""
        spread = (f"[{_g(self.low)}, {_g(self.high)}]" if self.asymmetric
                  else f"± {_g(self.half_width)}")
        return (f"{_g(self.mean)} {spread} "
                f"({100 * self.level:g}%, n={self.n}{why})")

    __str__ = __repr__


def _g(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if math.isinf(x):
        return "inf"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.4f}" if abs(x) < 10 else f"{x:.6g}"
    return f"{x:.4e}"


def estimate(values, level: float) -> Estimate:
    """Student-t interval of the mean of independent observations.

    Notes
    -----
    ``mean +- t_{n-1, (1+level)/2} s / sqrt(n)`` (Law 2015, sec. 9.4.1,
    eq. 9.1), with s the sample standard deviation.  NaN observations (a
    ratio with no denominator in that replication, e.g. no visit to a
    station) are dropped and ``n`` counts the rest; with no observation
    left the mean is NaN and so are the bounds.
    """
    from scipy.special import stdtrit

    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    n = int(v.size)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, level, 0)
    m = float(v.mean())
    if n < 2:
        return Estimate(m, -math.inf, math.inf, level, n)
    s = float(v.std(ddof=1))
    h = float(stdtrit(n - 1, 0.5 * (1.0 + level))) * s / math.sqrt(n)
    return Estimate(m, m - h, m + h, level, n)


def estimates(rows, level: float) -> list:
    """:func:`estimate` of every row of ``rows`` (F, n): F figures, each
    over the same n observations, in one pass.

    Notes
    -----
    The same interval as :func:`estimate` (Law 2015, sec. 9.4.1, eq.
    9.1), bit for bit: numpy reduces each row of a C-contiguous array
    along its last axis as it reduces the row alone (the same pairwise
    sum), the Student-t quantile is the same for every row, and the rest
    is elementwise arithmetic in the same order.  A row with NaNs drops
    them (``n`` counts the rest), as :func:`estimate` does.
    """
    from scipy.special import stdtrit

    v = np.ascontiguousarray(rows, dtype=float)
    if v.ndim != 2:
        raise InvalidValueError(f"estimates: rows must be 2-D (figures, observations), "
                                f"got shape {v.shape}")
    F, n = v.shape
    out: list = [None] * F
    keep = ~np.isnan(v)
    count = keep.sum(axis=1)
    # rows with the same number of observations left (all of them, or
    # fewer after their NaNs are dropped) go together: each row packed to
    # a contiguous row of that length, its values in order
    for c in np.unique(count).tolist():
        rows = np.flatnonzero(count == c)
        if c == 0:
            for i in rows.tolist():
                out[i] = Estimate(math.nan, math.nan, math.nan, level, 0)
            continue
        g = v[rows] if c == n else v[rows][keep[rows]].reshape(rows.size, c)
        m = g.mean(axis=1)
        if c < 2:
            for i, mi in zip(rows.tolist(), m.tolist()):
                out[i] = Estimate(mi, -math.inf, math.inf, level, c)
            continue
        s = g.std(axis=1, ddof=1)
        h = float(stdtrit(c - 1, 0.5 * (1.0 + level))) * s / math.sqrt(c)
        for i, mi, lo, hi in zip(rows.tolist(), m.tolist(), (m - h).tolist(),
                                 (m + h).tolist()):
            out[i] = Estimate(mi, lo, hi, level, c)
    return out


def mser5(series) -> int:
    """MSER-5 truncation point of an output series, in observations.

    Parameters
    ----------
    series : array_like (n,)
        Equally spaced observations (here: time averages over equal cells
        of simulated time).

    Returns
    -------
    int
        Number of leading observations to delete (a multiple of 5).

    Notes
    -----
    The observations are averaged in non-overlapping batches of 5,
    Z_1..Z_m; for each d = 0..floor(m/2) the marginal standard error
    statistic ``MSER(d) = sum_{j>d} (Z_j - Zbar(d))^2 / (m - d)^2`` is
    computed and the d that minimises it is taken; ``5 d`` observations are
    deleted (White 1997; White, Cobb & Spratt 2000).  The search stops at
    half the series, as those authors advise, so at least half the run is
    kept.
    """
    y = np.asarray(series, dtype=float)
    m = y.size // 5
    if m < 2:
        return 0
    z = y[: 5 * m].reshape(m, 5).mean(axis=1)
    # suffix sums give every MSER(d) in O(m)
    rev = z[::-1]
    cnt = np.arange(1, m + 1, dtype=float)
    s1 = np.cumsum(rev)
    s2 = np.cumsum(rev * rev)
    ss = s2 - s1 * s1 / cnt  # sum of squared deviations of the last cnt values
    ss = np.maximum(ss, 0.0)[::-1]  # index d: values d..m-1 (m - d of them)
    ks = np.arange(m, 0, -1, dtype=float)
    stat = ss / (ks * ks)
    dmax = m // 2
    d = int(np.argmin(stat[: dmax + 1]))
    return 5 * d


def mser5_columns(series) -> np.ndarray:
    """:func:`mser5` of every column of ``series`` (n, k) at once, bit for
    bit: the batch averages, suffix sums and minimum are the same
    operations column by column (averages of 5 values in order, running
    sums in order, the first minimum)."""
    y = np.asarray(series, dtype=float)
    n, k = y.shape
    m = n // 5
    if m < 2 or k == 0:
        return np.zeros(k, dtype=int)
    # (k, m, 5): each column's batches of 5, each batch contiguous
    z = np.ascontiguousarray(y[: 5 * m].T).reshape(k, m, 5).mean(axis=2)
    rev = z[:, ::-1]
    cnt = np.arange(1, m + 1, dtype=float)
    s1 = np.cumsum(rev, axis=1)
    s2 = np.cumsum(rev * rev, axis=1)
    ss = s2 - s1 * s1 / cnt
    ss = np.maximum(ss, 0.0)[:, ::-1]
    ks = np.arange(m, 0, -1, dtype=float)
    stat = ss / (ks * ks)
    dmax = m // 2
    return 5 * np.argmin(stat[:, : dmax + 1], axis=1)


def histogram_percentile(counts, lo_log: float, step: float, q: float) -> float:
    """The q-quantile (0 < q < 1) of values binned on a log scale.

    Bin b holds ``[exp(lo_log + b step), exp(lo_log + (b+1) step))``; bin 0
    also holds everything smaller (zero included), the last bin everything
    larger.  Within a bin the quantile is interpolated
    geometrically, so its relative error is below ``exp(step) - 1``.
    """
    return histogram_percentiles(counts, lo_log, step, (q,))[0]


def histogram_percentiles(counts, lo_log: float, step: float, qs) -> list:
    """:func:`histogram_percentile` for several quantiles ``qs`` of one
    histogram, its cumulative counts summed once."""
    c = np.asarray(counts, dtype=float)
    tot = c.sum()
    if tot <= 0:
        return [math.nan] * len(qs)
    cum = np.cumsum(c)
    out = []
    for q in qs:
        target = q * tot
        b = int(np.searchsorted(cum, target, side="left"))
        b = min(b, c.size - 1)
        prev = cum[b - 1] if b > 0 else 0.0
        frac = (target - prev) / c[b] if c[b] > 0 else 0.0
        frac = min(max(frac, 0.0), 1.0)
        out.append(float(math.exp(lo_log + (b + frac) * step)))
    return out


def check_level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not (0 < level < 1):
        raise InvalidValueError(f"level must be a number in (0, 1), got {level!r}")
    return float(level)
