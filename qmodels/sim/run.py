"""One run of the compiled event loop, with all its state.

:class:`_Run` holds the arrays of one replication (or of the single
batch-means run) and drives :func:`qmodels.sim.engine.run` over them:
growing the job tables, refilling the uniforms, extending the cell grid,
all without changing a number (the loop is resumable).  The chunk sizes
and the engine live here; :func:`_raise_status` turns a deadlock or an
unbounded open population reported by the loop into a typed error.
"""

from __future__ import annotations

import numpy as np

from .._jit import Resumable, python_twin
from ..errors import QModelsError, UnstableError, UnsupportedModelError
from ..model.network import Closed, Network, Queue
from . import engine as E
from .flatten import HIST_BINS, Flat, acc_layout, flatten

#: events per call of the compiled loop: Ctrl-C is seen between calls
CHUNK_EVENTS = 2_000_000
#: events per call while the loop runs as Python (its machine code is being
#: compiled in the background): about a quarter of a second, so the switch to
#: the machine code, Ctrl-C and the progress bar stay prompt
TWIN_CHUNK_EVENTS = 20_000
#: the event loop: its machine code when at hand, else its Python twin while a
#: child process compiles it (:class:`qmodels._jit.Resumable`)
ENGINE = Resumable(E.run)
#: more open jobs present than this: the run is declared unstable
OPEN_LIMIT = 2_000_000
#: requests that warm a cache before a run, per slot, at least and at most
#: (its contents then follow the popularity, not an empty start)
CACHE_WARM_PER_SLOT = 20
CACHE_WARM_MIN = 1_000
CACHE_WARM_MAX = 2_000_000
#: up to this many warming requests the cache is warmed by Python code
CACHE_FILL_PYTHON = 2_000
#: uniforms drawn ahead by the first refill of a run, doubled at each later
#: refill up to UNIFORM_BLOCK: a short run (a small model, a horizon of a
#: few hundred events) does not pay for 2 MB of uniforms it never reads,
#: a long one reaches the full block after a handful of refills.  The
#: stream is the Generator's, read in order, so the block size changes no
#: number (``random(n)`` then ``random(m)`` is ``random(n + m)``)
UNIFORM_BLOCK_FIRST = 1 << 12
UNIFORM_BLOCK = 1 << 18


class _Run:
    """State arrays of one replication (or of the single long run)."""

    def __init__(self, flat: Flat, rng, edges: np.ndarray, seg: np.ndarray, nseg: int):
        self.f = flat
        self.rng = rng
        C, K, P = flat.C, flat.K, flat.P
        has_open = bool(np.any(flat.CLI[:, 0] == 1))
        # a closed job and the tasks of its fork (fork-joins do not nest)
        J = flat.n_closed * (1 + flat.max_tasks) + (256 if has_open else 0)
        self.JI = np.full((max(J, 1), E.NJI), -1, dtype=np.int64)
        self.JI[:, E.J_HELD] = 0
        self.JI[:, E.J_CYEND] = 0
        self.JI[:, E.J_STATE] = E.S_FREE
        self.JI[: flat.n_closed, E.J_CLS] = flat.closed_class_of_job
        self.JF = np.zeros((max(J, 1), E.NJF))
        # (then one column per class: the phase of its MAP stream, E.D_MAP)
        self.SI = np.zeros(E.NSI + C, dtype=np.int64)
        self.SI[E.I_NCLOSED] = flat.n_closed
        self.SI[E.I_FTASKS] = flat.max_tasks
        self.SI[E.I_FREE] = -1
        self._link_free(flat.n_closed, J)
        E_ = C + K + max(J, 1)
        self.HE = np.zeros(E_, dtype=np.int64)
        self.HT = np.zeros(E_)
        self.POS = np.full(E_, -1, dtype=np.int64)
        self.SS = np.zeros((K, E.NSS + 2 * C), dtype=np.int64)  # + class lists (E.K_PQ)
        self.SS[:, E.K_WQH:] = -1
        self.SS[:, E.K_NACT] = 0
        self.NC = np.zeros((C, K), dtype=np.int64)
        self.BS = np.zeros((C, K), dtype=np.int64)
        self.SFL = np.zeros((K, 3))
        self.PS = np.zeros((max(P, 0), 4), dtype=np.int64)
        if P:
            self.PS[:, E.P_FREE] = flat.PLI[:, 0]
            self.PS[:, E.P_QH] = -1
            self.PS[:, E.P_QT] = -1
        self.PFL = np.zeros(P)
        self.SX = np.zeros(1)
        lay = acc_layout(C, K, P, flat.QI.shape[0])
        self.lay = lay
        self.ACC = np.zeros(lay["size"])
        self.EDGES = np.ascontiguousarray(edges, dtype=float)
        self.SNAP = np.zeros((len(edges), lay["size"]))
        self.SEG = np.ascontiguousarray(seg, dtype=np.int64)
        self.HIST = np.zeros((nseg + 1, C, HIST_BINS), dtype=np.int64)
        self.UB = np.zeros(self.JI.shape[0] + K + 1, dtype=np.int64)
        erl = [int(a) for a, kind in zip(flat.STF[:, 0], flat.STI[:, 4])
               if kind in (E.D_ERLANG, E.D_CLASS)]     # D_CLASS: its largest Erlang k
        erl += [int(a) for a, kind in zip(flat.CLF[:, 2], flat.CLI[:, 2]) if kind == E.D_ERLANG]
        self.kmax = max([2] + erl)
        self.U = np.zeros(0)
        self._ubuf = self.U  # the buffer U is a view of (see _refill)
        self._block = UNIFORM_BLOCK_FIRST
        self._init_caches()

    def _init_caches(self):
        """Each cache's state (:mod:`qmodels.sim.engine`, ``Q``): empty,
        then warmed by requests outside the network (drawn from this run's
        generator before its first block of uniforms, so a seed still gives
        one run): :data:`CACHE_WARM_PER_SLOT` per slot, at least
        :data:`CACHE_WARM_MIN`, at most :data:`CACHE_WARM_MAX`.  The warm-up
        deletion of the run (MSER-5 or fixed) comes on top."""
        f = self.f
        self.QS = np.zeros((f.QI.shape[0], E.NQS), dtype=np.int64)
        self.QS[:, E.QS_HEAD] = -1
        self.QS[:, E.QS_TAIL] = -1
        self.QW = np.full(f.QW_size, -1, dtype=np.int64)
        self.QH = np.zeros((f.QI.shape[0], 2), dtype=np.int64)
        for q in range(f.QI.shape[0]):
            cap = int(f.QI[q, E.QI_CAP])
            count = min(max(CACHE_WARM_PER_SLOT * cap, CACHE_WARM_MIN), CACHE_WARM_MAX)
            if cap == 0:
                continue
            # a miss of a full RANDOM cache takes a second uniform
            U = self.rng.random(2 * count)
            SI = np.zeros(E.NSI, dtype=np.int64)
            # a few thousand lookups: Python (about 20 us each) beats loading
            # or compiling the machine code (0.1 to 1 s once per process)
            fill = E.cache_fill if count > CACHE_FILL_PYTHON else python_twin(E.cache_fill)
            fill(q, count, f.QI, self.QS, self.QW, f.QF, self.QH, U, SI)

    def _link_free(self, a, b):
        """Put job slots a..b-1 at the head of the free list."""
        if b <= a:
            return
        self.JI[a:b - 1, E.J_NXT] = np.arange(a + 1, b)
        self.JI[b - 1, E.J_NXT] = self.SI[E.I_FREE]
        self.SI[E.I_FREE] = a

    def _grow(self):
        f = self.f
        J = self.JI.shape[0]
        J2 = 2 * J
        JI = np.full((J2, E.NJI), -1, dtype=np.int64)
        JI[:, E.J_HELD] = 0
        JI[:, E.J_CYEND] = 0
        JI[:, E.J_STATE] = E.S_FREE
        JI[:J] = self.JI
        JF = np.zeros((J2, E.NJF))
        JF[:J] = self.JF
        self.JI, self.JF = JI, JF
        self._link_free(J, J2)
        n0 = f.C + f.K + J
        n1 = f.C + f.K + J2
        HE = np.zeros(n1, dtype=np.int64)
        HT = np.zeros(n1)
        POS = np.full(n1, -1, dtype=np.int64)
        HE[:n0], HT[:n0], POS[:n0] = self.HE, self.HT, self.POS
        self.HE, self.HT, self.POS = HE, HT, POS
        self.UB = np.zeros(J2 + f.K + 1, dtype=np.int64)

    def extend(self, edges, seg, nseg):
        """Longer run: more cells (same width) and histogram segments."""
        n0 = self.SNAP.shape[0]
        old_nseg = self.HIST.shape[0] - 1
        SNAP = np.zeros((len(edges), self.SNAP.shape[1]))
        SNAP[:n0] = self.SNAP
        HIST = np.zeros((nseg + 1,) + self.HIST.shape[1:], dtype=np.int64)
        HIST[:old_nseg] = self.HIST[:old_nseg]
        # cycles that ended exactly at the old horizon belong to the next cell
        HIST[seg[n0]] += self.HIST[old_nseg]
        self.SNAP, self.HIST = SNAP, HIST
        self.EDGES = np.ascontiguousarray(edges, dtype=float)
        self.SEG = np.ascontiguousarray(seg, dtype=np.int64)

    def _umin(self) -> int:
        # uniforms one event may need at most: every job may move once in an
        # unblocking cascade, each move drawing a route, two service times
        # (Erlang: k uniforms each) and a think or inter-arrival time
        return (self.JI.shape[0] + self.f.C + 8) * (2 * self.kmax + 6)

    def _refill(self):
        """Move the unread uniforms to the front of the block and fill the
        rest with the Generator's next ones, in place (``random(out=)``:
        the same stream as ``random(n)``, without a new 2 MB block and its
        page faults at every refill).  The block starts small and doubles
        (:data:`UNIFORM_BLOCK_FIRST`, :data:`UNIFORM_BLOCK`)."""
        umin = self._umin()
        pos = int(self.SI[E.I_UPOS])
        r = self.U.shape[0] - pos
        need = r + max(self._block, 2 * umin)
        self._block = min(2 * self._block, UNIFORM_BLOCK)
        buf = self._ubuf
        if buf.shape[0] < need:
            # one buffer for the whole run, as large as the largest block
            # with room for the unread rest: the loop reads a view of its
            # first ``need`` uniforms.  np.empty maps its pages lazily, so
            # a short run touches only the pages its blocks fill, and a
            # long one does not map (and fault in) a fresh 2 MB at every
            # refill whose unread rest is longer than the last one's
            buf = np.empty(max(need, UNIFORM_BLOCK + 4 * umin))
            buf[:r] = self.U[pos:]
            self._ubuf = buf
        else:
            buf[:r] = self.U[pos:].copy()
        self.U = buf[:need]
        self.rng.random(out=self.U[r:])
        self.SI[E.I_UPOS] = 0

    def advance(self, t_stop: float, max_events: float) -> int:
        """Run to ``t_stop`` (or ``max_events``) in calls of at most
        CHUNK_EVENTS events, so that a KeyboardInterrupt (raised by Python
        between calls) stops a long run within a fraction of a second; the
        loop is resumable, so the chunking changes no number."""
        while True:
            args = self._args(t_stop)
            loop, machine = ENGINE.pick(args)
            chunk = CHUNK_EVENTS if machine else TWIN_CHUNK_EVENTS
            chunk_end = min(float(max_events), self.ACC[self.lay["events"]] + chunk)
            st = loop(*args[:6], chunk_end, OPEN_LIMIT, args[8])
            if st == E.MAX_EVENTS and chunk_end < max_events:
                continue
            if st == E.NEED_ROOM:
                self._grow()
                continue
            if st == E.NEED_RANDOM:
                self._refill()
                continue
            return st

    def _args(self, t_stop: float) -> tuple:
        """The event loop's arguments (model, job and tally arrays, ...)."""
        f = self.f
        M = (f.STI, f.STF, f.RM, f.EMP, f.S, f.CLI, f.CLF, f.RN, f.RD, f.RC, f.PLI,
             f.ACQ, f.REL)
        J = (self.JI, self.JF, self.HE, self.HT, self.POS, self.SS, self.NC, self.BS,
             self.SFL, self.PS, self.PFL, self.SI, self.SX, self.UB)
        T = (self.ACC, self.SNAP, self.EDGES, self.HIST, self.SEG)
        Q = (f.QI, self.QS, self.QW, f.QF, f.QK, f.QD, self.QH)
        return (M, J, T, self.U, self._umin(), float(t_stop), 0.0, OPEN_LIMIT, Q)

    @property
    def events(self) -> int:
        return int(self.ACC[self.lay["events"]])

    @property
    def cells_done(self) -> int:
        return int(self.SI[E.I_CELL])



def _probe_args() -> tuple:
    """The event loop's arguments for a one-station network: their types
    (the loop's signature) are the same for every model, so compiling for
    these compiles for all (``tests/test_jit_twin.py`` checks this)."""
    flat = flatten(Network([Queue("q", 1.0)], [Closed("c", 1, visits={"q": 1})]))
    run = _Run(flat, np.random.Generator(np.random.PCG64(0)), np.array([1.0]),
               np.zeros(1, dtype=np.int64), 1)
    return run._args(1.0)


def warm_up(wait: bool = False) -> str:
    """Have the simulator's event loop compiled before the first
    :func:`~qmodels.simulate`.

    An installation from a wheel built by ``make wheel`` ships the event
    loop's machine code, and ``make`` compiles it when it installs
    (``qmodels warm-up``); nothing is left to do then.  Otherwise the first
    run starts a child process compiling it into numba's on-disk cache
    (about 8-12 s, once per environment) and runs the loop's Python twin
    meanwhile (bit for bit the same numbers, about 100,000 events/s), so a
    long first run waits for the compile.  ``warm_up()`` starts that compile
    now, in the background, and returns at once; ``import qmodels`` calls it
    in a Jupyter or IPython session, so the machine code is usually there by
    the time a notebook simulates.

    Parameters
    ----------
    wait : bool
        Return only once the machine code is loaded in this process.

    Returns
    -------
    str
        ``"ready"``, ``"compiling"`` (this process's child or another
        process is compiling it) or ``"python"`` (``QMODELS_JIT=python``).
    """
    return ENGINE.warm(_probe_args(), wait=wait)


def ship(dest: str) -> str:
    """Compile the event loop for any processor of this architecture and
    write its machine code into ``dest`` (:func:`qmodels._shipped.save`;
    the process must run with ``NUMBA_CPU_NAME=generic``).  ``make wheel``
    does this through ``qmodels warm-up --ship``; returns the code's path."""
    from .._jit import _signature
    from .._shipped import save

    return save(E.run, _signature(E.run, _probe_args()), dest)


def _raise_status(status, run: _Run, net: Network, where: str):
    if status == E.BAD_LAYOUT:
        # a defect of qmodels, not of the model: not UnsupportedModelError
        raise QModelsError(
            f"internal error ({where}): the event loop was given an array of the wrong "
            "width (qmodels.sim.engine._layout_ok); please report it"
        )
    if status == E.DEADLOCK:
        full = [net.stations[k].name for k in range(run.f.K)
                if run.SS[k, E.K_N] >= run.f.STI[k, 3]]
        raise UnsupportedModelError(
            f"deadlock at t = {run.SX[0]:.6g} ({where}): every job is blocked or waiting for a "
            f"token; full stations: {', '.join(map(repr, full)) or 'none'}"
        )
    if status == E.TOO_MANY:
        k = int(np.argmax(run.SS[:, E.K_N]))
        raise UnstableError(
            f"station {net.stations[k].name!r}: more than {OPEN_LIMIT} open jobs present at "
            f"t = {run.SX[0]:.6g} ({where}); the open load has no steady state",
            station=net.stations[k].name,
        )
