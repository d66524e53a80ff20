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
from .stats import estimate, histogram_percentiles, mser5

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
    """The first cell of every histogram segment, by segment."""
    first: dict[int, int] = {}
    for i, s in enumerate(seg[:-1]):
        first.setdefault(int(s), i)
    return first



# ---------------------------------------------------------------------------
# summaries of one observation window
# ---------------------------------------------------------------------------

def _window(run: _Run, a: int, b: int):
    """Figures over cells a..b-1 (cell i ends at EDGES[i]): a dict of arrays."""
    f, lay = run.f, run.lay
    C, K, P = f.C, f.K, f.P
    CK = C * K
    top = run.SNAP[b - 1]
    bot = run.SNAP[a - 1] if a > 0 else np.zeros_like(top)
    t0 = run.EDGES[a - 1] if a > 0 else 0.0
    T = run.EDGES[b - 1] - t0
    d = top - bot
    with np.errstate(invalid="ignore", divide="ignore"):
        area_n = d[lay["area_n"]: lay["area_n"] + CK].reshape(C, K)
        area_u = d[lay["area_u"]: lay["area_u"] + CK].reshape(C, K)
        comp = d[lay["comp"]: lay["comp"] + CK].reshape(C, K)
        soj = d[lay["soj"]: lay["soj"] + CK].reshape(C, K)
        cyc = d[lay["cyc"]: lay["cyc"] + C]
        cyct = d[lay["cyct"]: lay["cyct"] + C]
        out = {
            "X_pair": comp / T,
            "Q_pair": area_n / T,
            "U_pair": area_u / (T * f.ucap[None, :]),
            "R_pair": np.where(comp > 0, soj / np.where(comp > 0, comp, 1), np.nan),
            "X_st": comp.sum(0) / T,
            "Q_st": area_n.sum(0) / T,
            "U_st": area_u.sum(0) / (T * f.ucap),
            "R_st": np.where(comp.sum(0) > 0, soj.sum(0) / np.where(comp.sum(0) > 0,
                                                                   comp.sum(0), 1), np.nan),
            "X_cl": cyc / T,
            "R_cl": np.where(cyc > 0, cyct / np.where(cyc > 0, cyc, 1), np.nan),
            # jobs, not the tasks of their forks (at fork-join branch stations)
            "Q_cl": (area_n.sum(1) if f.branch is None else area_n[:, ~f.branch].sum(1)) / T,
            "lost": d[lay["lost"]: lay["lost"] + C] / T,
            "pool_U": d[lay["pool_busy"]: lay["pool_busy"] + P] / (T * np.maximum(f.PLI[:, 0], 1))
            if P else np.zeros(0),
            "pool_Q": d[lay["pool_q"]: lay["pool_q"] + P] / T if P else np.zeros(0),
        }
        # each cache's hits / lookups in the window (NaN without a lookup)
        qc = d[lay["cache"]: lay["size"]].reshape(-1, 2)
        out["hit"] = np.where(qc[:, 0] > 0, qc[:, 1] / np.where(qc[:, 0] > 0, qc[:, 0], 1),
                              np.nan)
    for ch in f.switch_chains:
        # class switching: a class's figures are per cycle of its chain
        # (cycles end in whichever class a job has then): X_c = X_chain and
        # R_c = Q_c / X_chain, the time a chain job spends as class c
        idx = list(ch)
        xh = float(cyc[idx].sum()) / T
        out["X_cl"][idx] = xh
        out["R_cl"][idx] = out["Q_cl"][idx] / xh if xh > 0 else np.nan
    # R of a class at a station it never visits: 0 here, a placeholder that no
    # self-check or precision test reads; the result reports NaN there, with a
    # note (:func:`qmodels.sim.api._assemble`: the simulator cannot observe it)
    out["R_pair"] = np.where(f.visits > 0, out["R_pair"], 0.0)
    return out


def _percentiles(run: _Run, segs) -> np.ndarray:
    """(C, 3) response-time percentiles from the histogram segments ``segs``."""
    f = run.f
    h = run.HIST[list(segs)].sum(axis=0)
    out = np.full((f.C, len(PERCENTILES)), np.nan)
    for c in range(f.C):
        out[c] = histogram_percentiles(h[c], f.hist_lo[c], f.hist_step,
                                       [q / 100.0 for q in PERCENTILES])
    return out


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
    d = 0
    for col in series.T:
        if np.all(np.isfinite(col)) and np.ptp(col) > 0:
            d = max(d, mser5(col))
    return d



# ---------------------------------------------------------------------------
# observations: one per replication, or one per batch
# ---------------------------------------------------------------------------

def _observations_of(run, seg, a):
    """(window figures, percentiles, truncation time) of one replication
    whose first ``a`` cells are its warm-up."""
    n = run.cells_done
    if n < 2:
        raise InvalidValueError(
            "max_events stopped a replication before two cells of its horizon: raise "
            "max_events or shorten the horizon"
        )
    a = min(a, n - 1)
    w = _window(run, a, n)
    first = _seg_first_cell(seg)
    last_seg = int(seg[n - 1])
    segs = [s for s, c0 in first.items() if c0 >= a and s <= last_seg]
    if not segs:
        segs = [last_seg]
    p = _percentiles(run, segs)
    t_trunc = run.EDGES[a - 1] if a > 0 else 0.0
    return w, p, t_trunc


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
    obs, pct = [], []
    for b in range(B):
        group = segs[b * per:(b + 1) * per]
        c0 = first[group[0]]
        c1 = first[group[-1] + 1] if group[-1] + 1 in first else n
        obs.append(_window(run, c0, c1))
        pct.append(_percentiles(run, group))
    c_start = first[segs[0]]
    t_trunc = run.EDGES[c_start - 1] if c_start > 0 else 0.0
    return obs, pct, float(t_trunc)


def _relative_ok(obs, level, precision):
    """True if every reported mean has half-width / |mean| <= precision."""
    for key in ("X_cl", "R_cl", "X_st", "U_st", "Q_st", "R_st"):
        arr = np.array([o[key] for o in obs])
        for col in arr.T:
            e = estimate(col, level)
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


def _quarters(run: _Run, a: int | None):
    """(last, first) quarter of the observation window of one replication,
    each as :func:`_trend_series`."""
    n = run.cells_done
    a = min(a or 0, n - 1)
    L = (n - a) // 4
    if L < 1:
        return None
    return (_trend_series(_window(run, n - L, n)), _trend_series(_window(run, a, a + L)))

