"""Energy of all-flash storage: HDD, SATA SSD, NVMe and NVDIMM-N under XFS.

The study (Kim & Han, "A Study on Energy Efficiency in Servers Adopting AFA
(All-Flash Array)", 2019) writes and reads files through the Linux XFS file
system on four devices and reports times, and energies computed as
E = P x T from the device power of its Table 1 (read / write, W):

=========  ======  ======
device     read    write
=========  ======  ======
HDD        6.8     6.8
SATA SSD   2.1     3.7
NVMe       9       12
NVDIMM-N   2       2
=========  ======  ======

Devices: WD10EZEX (1 TB, 7200 rpm), Samsung SSD 750 EVO 120 GB, Intel SSD
750 400 GB (NVMe), Netlist NVvault DDR4 NVDIMM-N 8 GB; Xeon E5-2620 v3
(2.4 GHz) or E5-2603 v3 (1.6 GHz); CentOS 7, kernel 4.4.

The model
---------
One benchmark run is one job of a closed network with a single customer
and one station, the device, whose service time is the run's measured time
(the paper charges the device's Table-1 power over that whole time):

    T = F c_fs(f)                      file-system path, per byte
      + (F / b) (s(f) + o_dev)         one write call per buffer of b bytes
      + k t_flush                      k fsync calls (HDD: a rotation each)
      + F / B_dev                      bytes at the device's bandwidth

with F the file size, b the write-buffer size, k the number of fsync calls,
f the CPU clock.  The clock-bound parts (the CPU share of c_fs and the
system-call cost s) scale as ref_clock / f through :class:`qmodels.CPU`
(Hennessy & Patterson, sec. 1.9: CPU time = cycles / clock).  The flash
devices are :class:`qmodels.Flash` (per-call cost x calls + bytes /
bandwidth), the HDD a :class:`qmodels.Disk` visited once per fsync
(S = seek + 30 / rpm + size / rate, H&P appendix D.2) and the NVDIMM's
bandwidth is one DDR4-2133 :class:`qmodels.MemoryChannel`.  Energy per
job and per byte come from :func:`qmodels.energy` (E = P x T per state).
A read of F bytes costs F c_read(f) + F / B_read.

The common per-byte cost c_fs is what makes the four devices write at
nearly the same speed (the paper's own explanation: XFS is tuned for slow
devices); it is calibrated, as are the read path cost and the HDD's extra
cost per write call, on four named points (see :func:`calibrate`).

What the paper reports that no E = P x T model can reproduce is kept, with
the reason, as a ``miss`` in the table: several of its energy ratios
contradict its own time ratios and Table 1 (a 4 GB read 6.9x faster on
NVDIMM than on HDD with 3.4x less power is 23.5x less energy, not 7.18x).

References
----------
.. [AFA] Y. M. Kim & J. Han, "A Study on Energy Efficiency in Servers
   Adopting AFA (All-Flash Array)", J. Korea Society of IT Services 18(1),
   2019: Table 1, sec. 4.1 (writes: file size, CPU clock, fsync count,
   write buffer), sec. 4.2 (reads), sec. 5 (conclusion).
.. [HP] J. L. Hennessy & D. A. Patterson, *Computer Architecture: A
   Quantitative Approach*, 5th ed., 2012, sec. 1.9 and appendix D.2.
.. [QSP] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   sec. 3.2 (utilisation law; a single customer keeps its station busy).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import InvalidValueError, UnknownNameError
from ._base import CaseReport, Row, fit_parameters, param

__all__ = ["Params", "DEVICES", "write_time", "read_time", "job", "Job", "calibrate",
           "report", "FITTED"]

#: the four devices, in the paper's order
DEVICES = ("hdd", "ssd", "nvme", "nvdimm")
_LABEL = {"hdd": "HDD", "ssd": "SSD", "nvme": "NVMe", "nvdimm": "NVDIMM"}

KiB, MiB, GiB = 2 ** 10, 2 ** 20, 2 ** 30

#: the parameters :func:`calibrate` fits, and the rows they are fitted on
FITTED = {
    "fs_write_fixed": "HDD/NVDIMM write time, 4 GB file, 2.4 GHz",
    "fs_write_cpu": "HDD/NVDIMM write time, 4 GB file, 1.6 GHz",
    "hdd_call": "HDD/SSD write time, 1 GB file, 1 KB buffer",
    "fs_read": "NVDIMM read speed-up over HDD, 4 GB file",
}


@dataclass(frozen=True)
class Params:
    """Every assumption of the all-flash energy case, with its source.

    Times in s, sizes in B, bandwidths in B/s, clocks in Hz, power in W.
    The four ``calibrated`` defaults are the values :func:`calibrate`
    returns (rounded); :func:`report` refits them unless ``fit=False``.
    """

    # --- Table 1: average power, W -------------------------------------
    hdd_read_w: float = param(6.8, "paper Table 1", kind="paper", unit="W")
    hdd_write_w: float = param(6.8, "paper Table 1", kind="paper", unit="W")
    ssd_read_w: float = param(2.1, "paper Table 1", kind="paper", unit="W")
    ssd_write_w: float = param(3.7, "paper Table 1", kind="paper", unit="W")
    nvme_read_w: float = param(9.0, "paper Table 1", kind="paper", unit="W")
    nvme_write_w: float = param(12.0, "paper Table 1", kind="paper", unit="W")
    nvdimm_read_w: float = param(2.0, "paper Table 1", kind="paper", unit="W")
    nvdimm_write_w: float = param(2.0, "paper Table 1", kind="paper", unit="W")

    # --- devices ---------------------------------------------------------
    hdd_rpm: float = param(7200.0, "WD10EZEX data sheet (7200 rpm class)", kind="datasheet")
    hdd_rate: float = param(150e6, "WD10EZEX data sheet: 150 MB/s sustained host to/from "
                            "drive", kind="datasheet", unit="B/s")
    hdd_seek: float = param(0.0, "assumption: data and XFS log are written sequentially, the "
                            "head stays on track; an fsync waits half a revolution only",
                            kind="assumption", unit="s")
    ssd_write_bw: float = param(520e6, "Samsung 750 EVO 120 GB data sheet, sequential write",
                                kind="datasheet", unit="B/s")
    ssd_read_bw: float = param(540e6, "Samsung 750 EVO data sheet, sequential read",
                               kind="datasheet", unit="B/s")
    nvme_write_bw: float = param(900e6, "Intel SSD 750 400 GB data sheet, sequential write",
                                 kind="datasheet", unit="B/s")
    nvme_read_bw: float = param(2200e6, "Intel SSD 750 400 GB data sheet, sequential read",
                                kind="datasheet", unit="B/s")
    nvdimm_rate: float = param(2133e6, "NVvault DDR4 on DDR4-2133 (paper sec. 3.1): 64-bit "
                               "channel, JEDEC JESD79-4", kind="spec", unit="T/s")
    ssd_flush: float = param(100e-6, "assumption: SATA cache-flush command, order of 0.1 ms",
                             kind="assumption", unit="s")
    nvme_flush: float = param(20e-6, "Intel SSD 750 data sheet: 20 us write latency",
                              kind="datasheet", unit="s")
    nvdimm_flush: float = param(1e-6, "assumption: pmem flush of dirty cache lines, ~1 us",
                                kind="assumption", unit="s")

    # --- software path ---------------------------------------------------
    ref_clock: float = param(2.4e9, "paper sec. 3.1: Xeon E5-2620 v3", kind="paper", unit="Hz")
    low_clock: float = param(1.6e9, "paper sec. 3.1: Xeon E5-2603 v3", kind="paper", unit="Hz")
    syscall: float = param(2e-6, "assumption: one write() system call through stdio, ~2 us "
                           "at 2.4 GHz", kind="assumption", unit="s")
    fs_write_fixed: float = param(2.2061e-8, f"fitted to {FITTED['fs_write_fixed']!r} "
                                  "(clock-independent share of the XFS write path)",
                                  kind="calibrated", unit="s/B")
    fs_write_cpu: float = param(4.6548e-9, f"fitted to {FITTED['fs_write_cpu']!r} "
                                "(CPU share at 2.4 GHz, scales as 1/clock)",
                                kind="calibrated", unit="s/B")
    fs_read: float = param(1.0616e-9, f"fitted to {FITTED['fs_read']!r} (read path per byte; "
                           "same CPU share as writes)", kind="calibrated", unit="s/B")
    hdd_call: float = param(8.9117e-5, f"fitted to {FITTED['hdd_call']!r} (HDD's extra cost "
                            "per write call)", kind="calibrated", unit="s")

    # --- experiments (paper sec. 4) ------------------------------------------
    large_file: int = param(4 * GiB, "paper sec. 4.1.1: files of 4 MB .. 4 GB", kind="paper",
                            unit="B")
    file_sizes: tuple = param((4 * MiB, 40 * MiB, 400 * MiB, 4 * GiB),
                              "paper sec. 4.1.1 / 4.2.1", kind="paper", unit="B")
    sync_file: int = param(1 * GiB, "paper sec. 4.1.3 / 4.1.4: 1 GB file", kind="paper",
                           unit="B")
    fsync_counts: tuple = param((1000, 3000, 10000, 30000, 100000),
                                "paper sec. 4.1.3 names 1,000 and 100,000 fsyncs; the points "
                                "between are for the curve", kind="paper")
    buffer_sizes: tuple = param((1 * KiB, 10 * KiB, 100 * KiB, 1 * MiB),
                                "paper sec. 4.1.4 names 1 KB, 10 KB and 1 MB", kind="paper",
                                unit="B")
    default_buffer: int = param(1 * MiB, "assumption: the file-size, clock and fsync runs "
                                "write in large chunks (the paper does not say; with 1 KB "
                                "calls the HDD would be 4x slower there, not 1.3x)",
                                kind="assumption", unit="B")

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            vals = v if isinstance(v, tuple) else (v,)
            for x in vals:
                if not isinstance(x, (int, float)) or isinstance(x, bool) or not x >= 0:
                    raise InvalidValueError(f"afa.Params.{f.name} must be a non-negative "
                                            f"number, got {v!r}")

    def power(self, device: str):
        """The :class:`qmodels.Power` of ``device`` (busy = write power)."""
        import qmodels as qm

        _check_device(device)
        r, w = getattr(self, f"{device}_read_w"), getattr(self, f"{device}_write_w")
        return qm.Power(busy=w, idle=0.0, read=r, write=w)


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise UnknownNameError(f"unknown device {device!r}; one of {', '.join(DEVICES)}")


def _clock_scaled(p: Params, seconds_at_ref: float, clock: float) -> float:
    """CPU seconds at ``clock`` for work measured at ``p.ref_clock`` ([HP] 1.9)."""
    import qmodels as qm

    if seconds_at_ref == 0:
        return 0.0
    return qm.CPU(cores=1, clock=clock, seconds=seconds_at_ref, ref_clock=p.ref_clock)\
        .service_time


def device_element(p: Params, device: str, *, size: float, fsyncs: int, op: str = "write"):
    """The element that moves ``size`` bytes with ``fsyncs`` flushes on ``device``.

    HDD: a :class:`qmodels.Disk` with ``size / fsyncs`` bytes per visit (it
    is visited ``fsyncs`` times); flash: a :class:`qmodels.Flash` with one
    per-call flush cost per fsync.  Reads use the read bandwidth and no
    flush.
    """
    import qmodels as qm

    _check_device(device)
    if device == "hdd":
        visits = max(int(fsyncs), 1)
        return qm.Disk(seek=p.hdd_seek, rpm=p.hdd_rpm, transfer_rate=p.hdd_rate,
                       size=size / visits), visits
    if device == "nvdimm":
        bw = qm.MemoryChannel(rate=p.nvdimm_rate, width=8).bandwidth
    else:
        bw = getattr(p, f"{device}_{op}_bw")
    flush = getattr(p, f"{device}_flush") if op == "write" else 0.0
    return qm.Flash(bandwidth=bw, size=size, per_call=flush, calls=fsyncs), 1


def write_time(p: Params, device: str, size: float, *, buffer: float | None = None,
               fsyncs: int = 1, clock: float | None = None) -> float:
    """Seconds to write ``size`` bytes in calls of ``buffer`` bytes with
    ``fsyncs`` fsync calls at CPU ``clock`` (see the module docstring)."""
    buffer = p.default_buffer if buffer is None else buffer
    clock = p.ref_clock if clock is None else clock
    if size <= 0 or buffer <= 0 or fsyncs < 0:
        raise InvalidValueError(f"write_time: size {size!r} and buffer {buffer!r} must be "
                                f"positive and fsyncs {fsyncs!r} non-negative")
    calls = size / buffer
    cpu = _clock_scaled(p, size * p.fs_write_cpu + calls * p.syscall, clock)
    fixed = size * p.fs_write_fixed + (calls * p.hdd_call if device == "hdd" else 0.0)
    el, visits = device_element(p, device, size=size, fsyncs=fsyncs)
    if device == "hdd" and fsyncs == 0:
        dev = size / p.hdd_rate
    else:
        dev = visits * el.service_time
    return cpu + fixed + dev


def _cpu_share(p: Params) -> float:
    tot = p.fs_write_fixed + p.fs_write_cpu
    return p.fs_write_cpu / tot if tot > 0 else 0.0


def read_time(p: Params, device: str, size: float, *, clock: float | None = None) -> float:
    """Seconds to read ``size`` bytes: F c_read (CPU share as for writes,
    scaled by the clock) + F / B_read."""
    clock = p.ref_clock if clock is None else clock
    share = _cpu_share(p)
    path = size * p.fs_read
    cpu = _clock_scaled(p, share * path, clock)
    el, _ = device_element(p, device, size=size, fsyncs=0, op="read")
    return cpu + (1 - share) * path + el.service_time


@dataclass(frozen=True)
class Job:
    """One benchmark run on one device solved as a queueing network.

    ``time`` (s) is the run's time = the device station's service time;
    ``energy`` (J) and ``energy_per_byte`` (J/B) come from
    :func:`qmodels.energy` on the one-customer network (E = P x T).
    """

    device: str
    op: str
    size: float
    time: float
    power: float
    energy: float
    energy_per_byte: float
    network: object = dataclasses.field(repr=False, default=None)


def job(p: Params, device: str, op: str, size: float, **kw) -> Job:
    """Build and solve the one-station network of a write (``op="write"``,
    keywords of :func:`write_time`) or read (``op="read"``) run."""
    import qmodels as qm

    _check_device(device)
    if op == "write":
        t = write_time(p, device, size, **kw)
    elif op == "read":
        t = read_time(p, device, size, **kw)
    else:
        raise InvalidValueError(f"job: op must be 'read' or 'write', got {op!r}")
    net = qm.Network([qm.Queue(device, t, power=p.power(device))],
                     [qm.Closed("run", 1, visits={device: 1})])
    res = qm.mva(net)
    e = qm.energy(res, bytes_per_transaction=size,
                  read_fraction={device: 1.0 if op == "read" else 0.0})
    return Job(device, op, float(size), t, float(e.busy_power[device]),
               float(e.energy_per_transaction), float(e.energy_per_byte), net)


def _energy(p: Params, device: str, op: str, t: float) -> float:
    """E = P x T with the read or write power of Table 1 (fast path of
    :func:`job`, used inside the calibration and the sweeps)."""
    return getattr(p, f"{device}_{'read' if op == 'read' else 'write'}_w") * t


# ---------------------------------------------------------------------------
# the paper's figures as model quantities
# ---------------------------------------------------------------------------

def _fitted_quantities(p: Params) -> dict:
    F, Fs = p.large_file, p.sync_file
    return {
        "fs_write_fixed": write_time(p, "hdd", F) / write_time(p, "nvdimm", F),
        "fs_write_cpu": (write_time(p, "hdd", F, clock=p.low_clock)
                         / write_time(p, "nvdimm", F, clock=p.low_clock)),
        "hdd_call": write_time(p, "hdd", Fs, buffer=KiB) / write_time(p, "ssd", Fs, buffer=KiB),
        "fs_read": read_time(p, "hdd", F) / read_time(p, "nvdimm", F),
    }


#: the paper's values of the fitted rows
_FIT_TARGETS = {"fs_write_fixed": 1.25, "fs_write_cpu": 1.23, "hdd_call": 4.0, "fs_read": 6.9}


def calibrate(p: Params | None = None) -> dict[str, float]:
    """Least-squares fit of the four free parameters to the four named
    points of :data:`FITTED` (relative errors, :func:`fit_parameters`)."""
    p = Params() if p is None else p
    start = {k: getattr(p, k) for k in FITTED}

    def residuals(vals):
        q = dataclasses.replace(p, **vals)
        got = _fitted_quantities(q)
        return [got[k] / _FIT_TARGETS[k] - 1 for k in FITTED]

    bounds = {"fs_write_fixed": (1e-12, 1e-6), "fs_write_cpu": (1e-13, 1e-6),
              "hdd_call": (1e-8, 1e-1), "fs_read": (1e-13, 1e-6)}
    return fit_parameters(residuals, start, bounds)


def sweeps(p: Params) -> dict:
    """Time (s) and energy (J) per device over the paper's four sweeps:
    ``file_size`` (write), ``fsync`` (1 GB), ``buffer`` (1 GB write),
    ``read`` (file size); each ``{device: {"x": [...], "time": [...],
    "energy": [...]}}``."""
    out = {}
    specs = {
        "file_size": (p.file_sizes, lambda d, x: write_time(p, d, x), "write"),
        "fsync": (p.fsync_counts, lambda d, x: write_time(p, d, p.sync_file, fsyncs=x), "write"),
        "buffer": (p.buffer_sizes, lambda d, x: write_time(p, d, p.sync_file, buffer=x),
                   "write"),
        "read": (p.file_sizes, lambda d, x: read_time(p, d, x), "read"),
    }
    for name, (xs, f, op) in specs.items():
        out[name] = {}
        for d in DEVICES:
            ts = [f(d, x) for x in xs]
            out[name][d] = {"x": list(xs), "time": ts,
                            "energy": [_energy(p, d, op, t) for t in ts]}
    return out


def report(params: Params | None = None, *, sim: bool = False, seed: int = 1,
           fit: bool = True) -> CaseReport:
    """The paper-vs-model table of the all-flash energy study.

    ``fit=True`` (default) recalibrates the four :data:`FITTED` parameters
    on their named points first; ``sim=True`` also simulates the 1 GB,
    1,000-fsync HDD run (a one-customer network: the simulated cycle time
    must equal the service time) and puts it in ``extra["simulation"]``.
    """
    p = Params() if params is None else params
    fitted = {}
    if fit:
        fitted = calibrate(p)
        p = dataclasses.replace(p, **fitted)
    F, Fs = p.large_file, p.sync_file
    lo, hi = p.fsync_counts[0], p.fsync_counts[-1]
    got = _fitted_quantities(p)

    def W(d, **kw):
        return write_time(p, d, kw.pop("size", Fs), **kw)

    def EW(d, **kw):
        return _energy(p, d, "write", W(d, **kw))

    rows = []
    R = rows.append
    # Each row's role and why.  fitted: the four FITTED points; derived: an identity of
    # inputs and fitted rows; predicted: a measured effect the model was not told.
    # --- sec. 4.1.1 / 4.1.2: file size and clock ---------------------------
    R(Row(FITTED["fs_write_fixed"], 1.25, got["fs_write_fixed"], "fitted",
          note="sec. 4.1.2"))
    R(Row(FITTED["fs_write_cpu"], 1.23, got["fs_write_cpu"], "fitted",
          note="sec. 4.1.2"))
    # derived: the 4 GB write at 2.4 GHz, the fitted 1.25 row's own run
    R(Row("HDD/NVDIMM write time, large files (Fig. 3)", 1.3,
          W("hdd", size=F) / W("nvdimm", size=F), "derived",
          note="the same run as the fitted 2.4 GHz row (HDD and NVDIMM, 4 GB, 2.4 GHz), which "
               "sec. 4.1.2 reads as 1.25x and sec. 4.1.1 as 'about 1.3x'; not a check"))
    # predicted: Table 1's power ratio 12 W / 2 W (an input) times the NVMe/NVDIMM time
    # ratio of a 4 GB write, which no fitted row contains
    R(Row("NVMe/NVDIMM write energy, 4 GB file", 7.0, EW("nvme", size=F) / EW("nvdimm", size=F),
          note="sec. 4.1.1: NVDIMM uses 'about 1/7' of NVMe's energy; model: Table 1's 6x "
               "power ratio times the predicted time ratio"))
    # derived: the two fitted rows are HDD/NVDIMM at each clock, so HDD(1.6)/HDD(2.4) is
    # 1.23 / 1.25 times the NVDIMM row below, not a second check of the clock
    R(Row("HDD write time 1.6 GHz / 2.4 GHz, 4 GB", 1.0,
          W("hdd", size=F, clock=p.low_clock) / W("hdd", size=F), "derived",
          note="sec. 4.1.2: the clock 'barely matters', read as 1.0; the two fitted rows' "
               "ratio (1.23 / 1.25) times the NVDIMM clock ratio of the next row"))
    # predicted: the clock's effect on one device alone; the two fitted ratios fix the
    # clock-bound share of the XFS path, which this row is the first to expose
    R(Row("NVDIMM write time 1.6 GHz / 2.4 GHz, 4 GB", 1.0,
          W("nvdimm", size=F, clock=p.low_clock) / W("nvdimm", size=F),
          note="sec. 4.1.2, read as 1.0"))
    # --- sec. 4.1.3: fsync count -------------------------------------------
    # predicted (all of sec. 4.1.3): no fsync figure is fitted; the HDD's flush is half a
    # revolution from its data sheet and the energies are Table 1 x predicted times
    t_h_lo, t_h_hi = W("hdd", fsyncs=lo), W("hdd", fsyncs=hi)
    R(Row("HDD write time, 100,000 / 1,000 fsyncs", 13.0, t_h_hi / t_h_lo,
          note="sec. 4.1.3; HDD fsync = half a revolution (30/rpm), not fitted"))
    R(Row("NVDIMM write time, 100,000 / 1,000 fsyncs", 1.0,
          W("nvdimm", fsyncs=hi) / W("nvdimm", fsyncs=lo), note="sec. 4.1.3: 'almost flat'"))
    e_ratio = {d: EW("hdd", fsyncs=lo) / EW(d, fsyncs=lo) for d in DEVICES}
    max_gap = max(EW("hdd", fsyncs=k) / EW("nvdimm", fsyncs=k) for k in p.fsync_counts)
    R(Row("max HDD/NVDIMM energy over the fsync sweep", 800.0, max_gap,
          note="sec. 4.1.3, 'up to 800x'",
          miss="with the paper's own 13x HDD growth, a flat NVDIMM and 26x at 1,000 fsyncs, "
               "E = P x T allows at most 13 x 26 = 338x at 100,000 fsyncs; 800x needs a sweep "
               "beyond the counts the paper names or a falling NVDIMM time"))
    why_fsync = ("E = P x T with Table 1 turns this into a time ratio of {t:.3g}x at 1,000 "
                 "fsyncs, but sec. 4.1.1 has all devices within 1.3x on large writes (the "
                 "shared XFS path); {extra}")
    R(Row("HDD/SSD write energy, 1,000 fsyncs", 8.9, e_ratio["ssd"],
          miss=why_fsync.format(t=8.9 * 3.7 / 6.8, extra="the model keeps the shared path")))
    R(Row("HDD/NVMe write energy, 1,000 fsyncs", 25.0, e_ratio["nvme"],
          miss=why_fsync.format(t=25 * 12 / 6.8,
                                extra="and 25x for NVMe next to 26x for NVDIMM would make NVMe "
                                      "5.8x faster than NVDIMM, against the text")))
    R(Row("HDD/NVDIMM write energy, 1,000 fsyncs", 26.0, e_ratio["nvdimm"],
          miss=why_fsync.format(t=26 * 2 / 6.8, extra="the model keeps the shared path")))
    # --- sec. 4.1.4: write buffer ------------------------------------------
    R(Row(FITTED["hdd_call"], 4.0, got["hdd_call"], "fitted", note="sec. 4.1.4"))
    # predicted: these share the fitted HDD/SSD row's numerator (the HDD at 1 KB), so what
    # they test is the SSD/NVMe and SSD/NVDIMM time ratios at 1 KB (data-sheet per-call
    # costs), not the HDD's fitted per-call cost
    R(Row("HDD/NVMe write time, 1 KB buffer", 4.0, W("hdd", buffer=KiB) / W("nvme", buffer=KiB),
          note="sec. 4.1.4"))
    R(Row("HDD/NVDIMM write time, 1 KB buffer", 5.2,
          W("hdd", buffer=KiB) / W("nvdimm", buffer=KiB), note="sec. 4.1.4"))
    why_mb = ("per-call costs make the HDD/flash ratio a monotone function of the call count, "
              "from 1.25 (few calls: sec. 4.1.1) to its 10^6-call value (fitted 4x); at 1 MB "
              "(1,024 calls) it is still ~1.2, and 2.4-2.6x at 1 MB next to 1.3x for the "
              "large-chunk writes of sec. 4.1.1 cannot both hold")
    for d, v in (("ssd", 2.5), ("nvme", 2.6), ("nvdimm", 2.4)):
        R(Row(f"HDD/{_LABEL[d]} write time, 1 MB buffer", v,
              W("hdd", buffer=MiB) / W(d, buffer=MiB), note="sec. 4.1.4", miss=why_mb))
    # predicted: the flash per-call costs (data sheets) were not told this ratio
    R(Row("SSD write time, 10 KB / 1 MB buffer", 1.0,
          W("ssd", buffer=10 * KiB) / W("ssd", buffer=MiB),
          note="sec. 4.1.4: flash 'almost no difference' above 10 KB, read as 1.0"))
    # --- sec. 4.2: reads -----------------------------------------------------
    t_rh, t_rd = read_time(p, "hdd", F), read_time(p, "nvdimm", F)
    R(Row(FITTED["fs_read"], 6.9, got["fs_read"], "fitted",
          note="sec. 4.2.1"))
    # derived: E = P x T of the fitted 6.9 row's own run, Table 1's 6.8 W / 2 W = 3.4 times
    # the fitted time ratio
    R(Row("HDD/NVDIMM read energy, 4 GB file", 7.18,
          _energy(p, "hdd", "read", t_rh) / _energy(p, "nvdimm", "read", t_rd), "derived",
          note="sec. 4.2.1; E = P x T of the fitted read row's run: Table 1's 6.8 W / 2 W = "
               "3.4 times the fitted time ratio 6.9",
          miss="Table 1 read power 6.8 W vs 2 W makes any 6.9x time ratio a 3.4 x 6.9 = 23.5x "
               "energy ratio under E = P x T; 7.18x is not consistent with Table 1"))
    # predicted: the read path's clock share is the write path's (an assumption), not fitted
    R(Row("HDD read time 1.6 GHz / 2.4 GHz, 4 GB", 1.0,
          read_time(p, "hdd", F, clock=p.low_clock) / t_rh, note="sec. 4.2.2, read as 1.0"))
    # --- sec. 5: conclusion ------------------------------------------------------
    # predicted: the largest gaps over the sweeps, most of whose points are not fitted
    sw = sweeps(p)
    best_e, best_t = 0.0, 0.0
    for data in sw.values():
        for old in ("hdd", "ssd"):
            for new in ("nvme", "nvdimm"):
                for i in range(len(data[old]["x"])):
                    best_e = max(best_e, data[old]["energy"][i] / data[new]["energy"][i])
                    best_t = max(best_t, data[old]["time"][i] / data[new]["time"][i])
    R(Row("conclusion: up to 7x less energy (AFA vs HDD/SSD)", 7.0, best_e,
          note="sec. 5; model: largest ratio over the four sweeps",
          miss="the paper's own sec. 4.1.3 reports 26x and 800x energy gaps; 'up to 7x' matches "
               "its 4 GB read (7.18x), not the maximum over its experiments"))
    R(Row("conclusion: up to 8-9x faster (AFA vs HDD/SSD)", 8.5, best_t,
          note="sec. 5, '8-9x' taken as 8.5; model: largest ratio over the sweeps",
          miss="by the paper's own numbers (1.3x at large files, HDD 13x slower at 100,000 "
               "fsyncs, NVDIMM flat) the HDD is ~17x slower at 100,000 fsyncs"))

    extra = {"sweeps": sw,
             "bandwidth_note": "NVMe reads faster than SATA SSD here (data sheet 2.2 vs 0.54 "
                               "GB/s); the paper measured NVMe reads slower (sec. 4.2.1)"}
    validation, status = (), ""
    if sim:
        import qmodels as qm

        from ._base import validation_entry

        j = job(p, "hdd", "write", Fs, fsyncs=lo)
        s = qm.simulate(j.network, seed=seed, replications=5)
        cyc = 1.0 / s.X["run"].mean
        extra["simulation"] = {"run": "HDD, 1 GB, 1,000 fsyncs", "analytic_time": j.time,
                               "simulated_cycle_time": cyc}
        validation = (validation_entry(
            "HDD write, 1 GB, 1,000 fsyncs (one job, one station)", "runs per second",
            1.0 / j.time, s.X["run"], tolerance=0.0, method="MVA (exact) vs simulation"),)
        status = ("the one-job, one-station network of the HDD 1 GB, 1,000-fsync run; every "
                  "other row is the same one-station network, exact by MVA (X = 1 / T)")
    notes = (
        "E = P x T: the device's Table-1 power over the run's measured time (one customer, "
        "one station, U = 1 during the run); idle power 0 (Table 1 gives none)",
        "the shared XFS path (fs_write_fixed + fs_write_cpu per byte) is why four devices "
        "spanning 150 MB/s to 17 GB/s write within 1.3x of each other (paper sec. 4.1.1)",
        "NVMe reads faster than SSD in the model (data sheets); the paper measured NVMe reads "
        "slower than SSD (sec. 4.2.1), which the model does not reproduce",
        "buffer sweep energy order NVDIMM < SSD < NVMe < HDD (sec. 4.1.4) holds at 1 KB; at "
        "1 MB the model's HDD is only ~1.2x slower than NVMe (the missed 1 MB rows), so NVMe's "
        "12 W puts it above the HDD there",
    )
    return CaseReport("afa", "All-flash storage energy: paper (Kim & Han 2019) vs model", rows,
                      p, fitted=fitted, extra=extra, notes=notes, validation=validation,
                      sim_status=status)
