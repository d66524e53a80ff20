"""The cell grid of a run and the figures of its observation windows.

A run's simulated time is cut into cells (:func:`_edges`), grouped into
histogram segments of CELLS_PER_SEG cells; the loop snapshots its
cumulative statistics at each cell edge.  Here: the figures over a window
of cells (:func:`_window`), the response-time percentiles over segments,
the per-cell series MSER-5 chooses the warm-up on, the observations of a
replication or the batches of a batch-means run, the quarters the drift
check compares, and the relative-precision test.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidValueError
from .run import _Run
from .stats import estimates, mser5_columns

#: a histogram segment spans CELLS_PER_SEG cells
CELLS_PER_SEG = 10
#: batches of a batch-means run
BATCHES = 20
PERCENTILES = (50, 95, 99)


# ---------------------------------------------------------------------------
# the cell grid
# ---------------------------------------------------------------------------

def _edges(horizon: float, warm: float | None, ncell: int):
    """Cell edges and the segment of each cell (+1 for after the end).

    With a fixed warm-up time the first cell is [0, warm] and the others
    split the rest; otherwise the cells are equal."""
    if warm:
        rest = np.linspace(warm, horizon, ncell + 1)
        edges = rest  # cell 0 = [0, warm], cells 1.. = equal pieces
        seg = np.concatenate([[0], 1 + np.arange(ncell) // CELLS_PER_SEG])
        nseg = 1 + (ncell + CELLS_PER_SEG - 1) // CELLS_PER_SEG
    else:
        edges = horizon * np.arange(1, ncell + 1) / ncell
        seg = np.arange(ncell) // CELLS_PER_SEG
        nseg = (ncell + CELLS_PER_SEG - 1) // CELLS_PER_SEG
    seg = np.concatenate([seg, [nseg]])
    return edges, seg, nseg


def _seg_first_cell(seg: np.ndarray) -> dict[int, int]:
    """The first cell of every histogram segment, by segment (in the order
    the segments first appear, as the cells run)."""
    s = np.asarray(seg[:-1])
    if s.size and np.all(s[1:] >= s[:-1]):
        # the grid's segments never go back (:func:`_edges`): the first
        # cell of each is where the value changes
        first = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
        return dict(zip(s[first].tolist(), first.tolist()))
    segs, first = np.unique(s, return_index=True)
    order = np.argsort(first, kind="stable")
    return dict(zip(segs[order].tolist(), first[order].tolist()))



# ---------------------------------------------------------------------------
# summaries of one observation window
# ---------------------------------------------------------------------------

def _window(run: _Run, a: int, b: int):
    """Figures over cells a..b-1 (cell i ends at EDGES[i]): a dict of arrays."""
    return {key: v[0] for key, v in _windows(run, [a], [b]).items()}


def _windows(run: _Run, a, b):
    """:func:`_window` of several windows at once, cells a[i]..b[i]-1 for
    each i: a dict of arrays with the window first.  Every figure is the
    same elementwise arithmetic as for one window (the sums over classes or
    stations run along the same axis, in the same order), so each row is,
    bit for bit, the figures of its window alone."""
    f, lay = run.f, run.lay
    C, K, P = f.C, f.K, f.P
    CK = C * K
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    B = a.size
    top = run.SNAP[b - 1]
    bot = np.where((a > 0)[:, None], run.SNAP[a - 1], 0.0)
    t0 = np.where(a > 0, run.EDGES[a - 1], 0.0)
    T = run.EDGES[b - 1] - t0
    T2 = T[:, None]
    T3 = T[:, None, None]
    d = top - bot
    with np.errstate(invalid="ignore", divide="ignore"):
        area_n = d[:, lay["area_n"]: lay["area_n"] + CK].reshape(B, C, K)
        area_u = d[:, lay["area_u"]: lay["area_u"] + CK].reshape(B, C, K)
        comp = d[:, lay["comp"]: lay["comp"] + CK].reshape(B, C, K)
        soj = d[:, lay["soj"]: lay["soj"] + CK].reshape(B, C, K)
        cyc = d[:, lay["cyc"]: lay["cyc"] + C]
        cyct = d[:, lay["cyct"]: lay["cyct"] + C]
        comp_st = comp.sum(1)
        out = {
            "X_pair": comp / T3,
            "Q_pair": area_n / T3,
            "U_pair": area_u / (T3 * f.ucap[None, None, :]),
            "R_pair": np.where(comp > 0, soj / np.where(comp > 0, comp, 1), np.nan),
            "X_st": comp_st / T2,
            "Q_st": area_n.sum(1) / T2,
            "U_st": area_u.sum(1) / (T2 * f.ucap),
            "R_st": np.where(comp_st > 0, soj.sum(1) / np.where(comp_st > 0, comp_st, 1),
                             np.nan),
            "X_cl": cyc / T2,
            "R_cl": np.where(cyc > 0, cyct / np.where(cyc > 0, cyc, 1), np.nan),
            # jobs, not the tasks of their forks (at fork-join branch stations)
            "Q_cl": (area_n.sum(2) if f.branch is None
                     else area_n[:, :, ~f.branch].sum(2)) / T2,
            "lost": d[:, lay["lost"]: lay["lost"] + C] / T2,
            "pool_U": d[:, lay["pool_busy"]: lay["pool_busy"] + P]
            / (T2 * np.maximum(f.PLI[:, 0], 1)) if P else np.zeros((B, 0)),
            "pool_Q": d[:, lay["pool_q"]: lay["pool_q"] + P] / T2 if P else np.zeros((B, 0)),
        }
        # each cache's hits / lookups in the window (NaN without a lookup)
        qc = d[:, lay["cache"]: lay["size"]].reshape(B, -1, 2)
        out["hit"] = np.where(qc[..., 0] > 0,
                              qc[..., 1] / np.where(qc[..., 0] > 0, qc[..., 0], 1), np.nan)
    for ch in f.switch_chains:
        # class switching: a class's figures are per cycle of its chain
        # (cycles end in whichever class a job has then): X_c = X_chain and
        # R_c = Q_c / X_chain, the time a chain job spends as class c
        idx = list(ch)
        for i in range(B):
            xh = float(cyc[i, idx].sum()) / T[i]
            out["X_cl"][i, idx] = xh
            out["R_cl"][i, idx] = out["Q_cl"][i, idx] / xh if xh > 0 else np.nan
    # R of a class at a station it never visits: 0 here, a placeholder that no
    # self-check or precision test reads; the result reports NaN there, with a
    # note (:func:`qmodels.sim.api._assemble`: the simulator cannot observe it)
    out["R_pair"] = np.where(f.visits > 0, out["R_pair"], 0.0)
    return out


def _percentiles_of(run: _Run, h: np.ndarray) -> np.ndarray:
    """(B, C, 3) response-time percentiles of the (B, C, bins) histogram
    counts ``h``: :func:`qmodels.sim.stats.histogram_percentiles` of every
    (B, C) row at once, bit for bit (the counts are integers, so their float
    sums are exact in any order; the exponential is ``math.exp``, as there)."""
    f = run.f
    B, C, nbins = h.shape
    out = np.full((B * C, len(PERCENTILES)), np.nan)
    # only the bins from the first to the last one used by any row: before
    # them a row's cumulative count is 0 and after them its total, so the
    # bin a quantile falls in is the same, offset by lo
    used = np.flatnonzero(h.reshape(-1, nbins).any(axis=0))
    if used.size == 0:
        return out.reshape(B, C, -1)
    lo = int(used[0])
    ci = h.reshape(-1, nbins)[:, lo: int(used[-1]) + 1]
    # the cumulative counts, summed in floats: integers below 2^53, so every
    # partial sum is exact (the integer cumsum converted, without the
    # integer copy and its conversion)
    cum = np.cumsum(ci, axis=1, dtype=float)
    rows = np.flatnonzero(cum[:, -1] > 0)
    if rows.size < cum.shape[0]:
        ci, cum = ci[rows], cum[rows]
    tot = cum[:, -1]
    lo_log = np.tile(f.hist_lo, B)[rows, None]
    nb = cum.shape[1]
    r = np.arange(rows.size)[:, None]
    target = tot[:, None] * (np.array(PERCENTILES) / 100.0)
    # searchsorted(cum, target, side="left") of every row and quantile: the
    # counts are integers, so cum < target is cum < ceil(target); each row
    # shifted by its index times (largest total + 1) makes one sorted array
    # of integers (held exactly in floats), searched once for all rows
    big = float(tot.max()) + 1.0
    shift = np.arange(rows.size, dtype=float)[:, None] * big
    k = np.searchsorted((cum + shift).ravel(), (np.ceil(target) + shift).ravel(), side="left")
    k = np.minimum(k.reshape(target.shape) - r * nb, nb - 1)
    prev = np.where(k > 0, cum[r, k - 1], 0.0)
    ck = ci[r, k].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(ck > 0, (target - prev) / np.where(ck > 0, ck, 1.0), 0.0)
    frac = np.minimum(np.maximum(frac, 0.0), 1.0)
    x = lo_log + ((k + lo) + frac) * f.hist_step
    out[rows] = np.reshape([math.exp(v) for v in x.ravel().tolist()], x.shape)
    return out.reshape(B, C, -1)


def _cell_series(run: _Run, n: int) -> np.ndarray:
    """(n, stations + 2 classes) averages per cell: the queue length of
    every station, the throughput of every class and its mean cycle time
    (NaN in a cell without a cycle; the first
    cycles of a closed network are biased short or long, so the transient
    of R counts in the choice of the warm-up)."""
    f, lay = run.f, run.lay
    C, K = f.C, f.K
    snap = run.SNAP[:n]
    prev = np.vstack([np.zeros((1, snap.shape[1])), snap[:-1]])
    width = np.diff(np.concatenate([[0.0], run.EDGES[:n]]))
    cells = (snap - prev) / width[:, None]
    q = cells[:, lay["area_n"]: lay["area_n"] + C * K].reshape(n, C, K).sum(1)
    x = cells[:, lay["cyc"]: lay["cyc"] + C]
    ncyc = (snap - prev)[:, lay["cyc"]: lay["cyc"] + C]
    tcyc = (snap - prev)[:, lay["cyct"]: lay["cyct"] + C]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(ncyc > 0, tcyc / np.where(ncyc > 0, ncyc, 1.0), np.nan)
    return np.hstack([q, x, r])


def _truncation(series: np.ndarray) -> int:
    """MSER-5 truncation (in cells): the largest over the columns (a
    column with a NaN, a cell without a cycle, is skipped)."""
    ok = np.all(np.isfinite(series), axis=0)
    ok[ok] = np.ptp(series[:, ok], axis=0) > 0
    if not ok.any():
        return 0
    return int(mser5_columns(series[:, ok]).max())



# ---------------------------------------------------------------------------
# observations: one per replication, or one per batch
# ---------------------------------------------------------------------------

def need_two_cells(n: int) -> None:
    """Refuse a replication that max_events stopped before two cells of
    its horizon (nothing to estimate from)."""
    if n < 2:
        raise InvalidValueError(
            "max_events stopped a replication before two cells of its horizon: raise "
            "max_events or shorten the horizon"
        )


def _replication_figures(run, seg, a):
    """What one replication whose first ``a`` cells are its warm-up
    yields: (window figures, percentiles, truncation time) and the quarters
    the drift check compares (the last and the first quarter of the
    observation window, each as :func:`_trend_series`; None when a quarter
    is shorter than a cell), the three windows summarised in one
    :func:`_windows` and the percentiles by :func:`_percentiles_of`."""
    n = run.cells_done
    need_two_cells(n)
    a_obs = min(a, n - 1)
    a_q = min(a or 0, n - 1)
    L = (n - a_q) // 4
    if L >= 1:
        w3 = _windows(run, [a_obs, n - L, a_q], [n, n, a_q + L])
        w = {key: v[0] for key, v in w3.items()}
        quarters = (_trend_series({key: v[1] for key, v in w3.items()}),
                    _trend_series({key: v[2] for key, v in w3.items()}))
    else:
        w = _window(run, a_obs, n)
        quarters = None
    first = _seg_first_cell(seg)
    last_seg = int(seg[n - 1])
    segs = [s for s, c0 in first.items() if c0 >= a_obs and s <= last_seg]
    if not segs:
        segs = [last_seg]
    # consecutive segments: a view, not a copy (integer counts: the same sum)
    hs = (run.HIST[segs[0]: segs[-1] + 1] if segs[-1] - segs[0] == len(segs) - 1
          else run.HIST[segs])
    p = _percentiles_of(run, hs.sum(axis=0)[None])[0]
    t_trunc = run.EDGES[a_obs - 1] if a_obs > 0 else 0.0
    return w, p, t_trunc, quarters


def _batches(run, seg, warm, use_mser):
    """Cut the run after its warm-up into BATCHES batches of whole segments."""
    n = run.cells_done
    if warm:
        a = 1
    elif use_mser:
        a = min(_truncation(_cell_series(run, n)), n - 1)
    else:
        a = 0
    first = _seg_first_cell(seg)
    last_seg = int(seg[n - 1])
    # segments complete within the n cells and starting at or after cell a
    segs = sorted(s for s, c0 in first.items() if c0 >= a and s <= last_seg
                  and (s + 1 not in first or first[s + 1] <= n))
    if len(segs) < 2:
        raise InvalidValueError(
            "the batch-means run is too short after its warm-up to form batches: "
            "raise the horizon (or max_events)"
        )
    B = min(BATCHES, len(segs))
    per = len(segs) // B
    segs = segs[len(segs) - B * per:]
    groups = [segs[b * per:(b + 1) * per] for b in range(B)]
    c0 = [first[g[0]] for g in groups]
    c1 = [first.get(g[-1] + 1, n) for g in groups]
    w = _windows(run, c0, c1)
    obs = [dict(zip(w, row)) for row in zip(*w.values())]
    # the segments run consecutively: a view of them, not a copy (integer
    # counts, so the sum is the same in any order)
    hs = (run.HIST[segs[0]: segs[-1] + 1] if segs[-1] - segs[0] == len(segs) - 1
          else run.HIST[segs])
    h = hs.reshape((B, per) + run.HIST.shape[1:]).sum(axis=1)
    pct = list(_percentiles_of(run, h))
    c_start = first[segs[0]]
    t_trunc = run.EDGES[c_start - 1] if c_start > 0 else 0.0
    return obs, pct, float(t_trunc)


def _relative_ok(obs, level, precision):
    """True if every reported mean has half-width / |mean| <= precision."""
    # every figure's observations as a row, all intervals in one pass
    # (:func:`qmodels.sim.stats.estimates`, bit for bit ``estimate``)
    rows = np.hstack([np.array([o[key] for o in obs], dtype=float)
                      for key in ("X_cl", "R_cl", "X_st", "U_st", "Q_st", "R_st")]).T
    for e in estimates(rows, level):
        if e.n == 0 or e.mean == 0 or math.isnan(e.mean):
            continue
        if not e.relative_half_width <= precision:
            return False
    return True



# ---------------------------------------------------------------------------
# what the drift check compares
# ---------------------------------------------------------------------------

def _trend_series(w) -> np.ndarray:
    """The figures whose drift betrays a transient: the number present
    (all stations), then X and R of every class."""
    return np.concatenate([[w["Q_st"].sum()], w["X_cl"], w["R_cl"]])

