"""Energy of all-flash storage: HDD, SATA SSD, NVMe and NVDIMM-N under XFS,
as a closed queueing network of the write (or read) path's elements.

The study (Kim & Han, "A Study on Energy Efficiency in Servers Adopting AFA
(All-Flash Array)", 2019) writes and reads files through the Linux XFS file
system on four devices, one single-threaded benchmark at a time (fwrite /
fprintf into a write buffer, fsync to the device; fread back after dropping
the page cache), reports the times, and computes energies as E = P x T from
the device power of its Table 1 (read / write, W):

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

The network
-----------
One experiment is a closed network (:func:`network`) whose customer is one
write (or read) call of ``b`` bytes, the buffer; the single benchmark
thread is a population of 1 (the paper runs no parallel writers).  Each
call visits three stations in tandem, once each:

``cpu``
    the writing application's core: formatting the buffer (fprintf/fwrite)
    and entering the system call, S = (syscall + b c_cpu) x f_ref / f, a
    :class:`qmodels.CPU` at clock f ([HP] sec. 1.9: CPU time = cycles /
    clock);
``xfs``
    the file-system path shared by all four devices (page-cache copy, XFS
    allocation and journal: the clock-independent share), a
    :class:`qmodels.Link` of bandwidth 1 / c_fs: S = b c_fs;
``<device>``
    the device, a :class:`qmodels.Flash` element (per-call costs plus bytes
    / bandwidth, [Hockney]) with separate costs for its three operations:
    one write request per buffer (``overhead``; the HDD's is fitted, the
    flash devices' are 0), ``k / n`` fsync flushes per call for k fsyncs over
    n = F / b calls (``per_call`` x ``calls``: the HDD waits half a
    revolution, 30 / rpm, a :class:`qmodels.Disk`'s rotational latency; the
    flash devices a data-sheet or assumed flush latency), and ``b / B`` at
    the device's write or read bandwidth (the NVDIMM's is one DDR4-2133
    :class:`qmodels.MemoryChannel`).

With one customer the exact MVA solution is X = 1 / sum_k D_k calls per
second ([QSP] ch. 6, exact MVA at N = 1), the run takes T = n / X and
each station's utilisation is U_k = X D_k: the bottleneck is the station
of largest demand, and changing the device, the buffer or the fsync count moves it
between the ``cpu``, the ``xfs`` path and the device (the switch points,
derived with sympy in :func:`switch_points`).  Why no overlap: if the page
cache's write-back ran beside the writer (a second customer), a 4 GB write
would take max(path, device) and the HDD would be hidden behind the 45 MB/s
XFS path (ratio 1.0); the paper's 1.25x to 1.3x at 4 GB says the device
time adds to the path's, which is the tandem of one customer.

Energy
------
Every station has power states (:class:`qmodels.Power`): the device its
Table-1 write and read power when busy and its data-sheet idle power
otherwise; the core (``cpu`` and ``xfs``, both run on it) an assumed busy
power and no idle power charged to the run.  :func:`qmodels.energy` turns
the solved utilisations into energy per element, per run and per byte:
E_k = [P_busy,k U_k + P_idle,k (1 - U_k)] T ([AFA] E = P x T per state;
[QSP] sec. 3.2, busy time = U T).  The paper's own figures charge the
device its Table-1 power over the whole measured time (its "device usage
time"); in the model that is the same network with the device's idle power
set to its active power (:attr:`Run.paper_energy`), which the table's energy
rows use, stated as the paper's condition.  The physical split (data-sheet
idle) is in ``extra["energy"]``: it shows how much of the paper's flash
energy is a device waiting for the file system.

Calibration and misses
----------------------
c_fs, c_cpu, the read path's per-byte cost and the HDD's cost per write
request are fitted to four named points (:data:`FITTED`, :func:`calibrate`);
everything else is a data sheet, the paper, or a stated assumption.  What
the paper reports that no E = P x T model can reproduce is kept as a
``miss`` with its reason: several energy ratios contradict its own time
ratios and Table 1 (a 4 GB read 6.9x faster on NVDIMM than on HDD with 3.4x
less power is 23.5x less energy, not 7.18x).

References
----------
.. [AFA] Y. M. Kim & J. Han, "A Study on Energy Efficiency in Servers
   Adopting AFA (All-Flash Array)", J. Korea Society of IT Services 18(1),
   2019: Table 1, sec. 3.2 (E = P x T), sec. 4.1 (writes: file size, CPU
   clock, fsync count, write buffer), sec. 4.2 (reads), sec. 5 (conclusion).
.. [HP] J. L. Hennessy & D. A. Patterson, *Computer Architecture: A
   Quantitative Approach*, 5th ed., 2012, sec. 1.9 and appendix D.2.
.. [Hockney] R. W. Hockney, "The communication challenge for MPP", Parallel
   Computing 20(3), 1994 (t = t0 + m / r).
.. [QSP] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   sec. 3.2 (utilisation law), sec. 5.2 (bottleneck: the largest demand),
   ch. 6 (exact mean value analysis).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..errors import InvalidValueError, UnknownNameError
from ._base import CaseReport, Row, fit_parameters, param

__all__ = ["Params", "DEVICES", "STATIONS", "network", "run", "Run", "write_time", "read_time",
           "calibrate", "sweeps", "switch_points", "validation", "report", "FITTED"]

#: the four devices, in the paper's order
DEVICES = ("hdd", "ssd", "nvme", "nvdimm")
_LABEL = {"hdd": "HDD", "ssd": "SSD", "nvme": "NVMe", "nvdimm": "NVDIMM"}
#: the stations every call visits before the device
STATIONS = ("cpu", "xfs")

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
    # --- idle power (Table 1 gives none) ----------------------------------
    hdd_idle_w: float = param(6.1, "WD10EZEX data sheet (2879-771436, the paper's ref. Wdc): "
                              "idle 6.1 W, read/write 6.8 W", kind="datasheet", unit="W")
    ssd_idle_w: float = param(0.05, "assumption: SATA SSD active idle ~50 mW (the 750 EVO's "
                              "class; not in the paper)", kind="assumption", unit="W")
    nvme_idle_w: float = param(4.0, "Intel SSD 750 product specification: active/idle (typ) "
                               "22 W / 4 W", kind="datasheet", unit="W")
    nvdimm_idle_w: float = param(2.0, "assumption: an NVDIMM-N is DRAM, powered and refreshed "
                                 "whether accessed or not: idle = Table 1's 2 W",
                                 kind="assumption", unit="W")
    cpu_core_w: float = param(85.0 / 6, "assumption: a busy core draws its share of the Xeon "
                              "E5-2620 v3's TDP, 85 W / 6 cores (Intel ARK); an idle core is "
                              "not charged to the run", kind="assumption", unit="W")

    # --- devices ---------------------------------------------------------
    hdd_rpm: float = param(7200.0, "WD10EZEX data sheet (7200 rpm class)", kind="datasheet")
    hdd_rate: float = param(150e6, "WD10EZEX data sheet: 150 MB/s sustained host to/from "
                            "drive", kind="datasheet", unit="B/s")
    hdd_seek: float = param(0.0, "assumption: data and XFS log are written sequentially, the "
                            "head stays on track; an fsync waits half a revolution only (the "
                            "other plausible reading: each fsync seeks between data and log, "
                            "~8.5 ms, a typical 7200-rpm desktop average seek; the paper and "
                            "the WD10EZEX data sheet state none)",
                            kind="assumption", unit="s", plausible=(0.0, 8.5e-3))
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
    hdd_call: float = param(8.9117e-5, f"fitted to {FITTED['hdd_call']!r} (the HDD's cost "
                            "per write request: one request per buffer, paper sec. 4.1.4)",
                            kind="calibrated", unit="s")

    # --- software path ---------------------------------------------------
    ref_clock: float = param(2.4e9, "paper sec. 3.1: Xeon E5-2620 v3", kind="paper", unit="Hz")
    low_clock: float = param(1.6e9, "paper sec. 3.1: Xeon E5-2603 v3", kind="paper", unit="Hz")
    syscall: float = param(2e-6, "assumption: one write() system call through stdio, ~2 us "
                           "at 2.4 GHz", kind="assumption", unit="s")
    fs_write_fixed: float = param(2.2061e-8, f"fitted to {FITTED['fs_write_fixed']!r} "
                                  "(the xfs station: clock-independent share of the XFS write "
                                  "path)", kind="calibrated", unit="s/B")
    fs_write_cpu: float = param(4.6548e-9, f"fitted to {FITTED['fs_write_cpu']!r} "
                                "(the cpu station per byte at 2.4 GHz, scales as 1/clock)",
                                kind="calibrated", unit="s/B")
    fs_read: float = param(1.0595e-9, f"fitted to {FITTED['fs_read']!r} (read path per byte, "
                           "split between cpu and xfs as for writes)", kind="calibrated",
                           unit="s/B")

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
                                "write (and read) in 1 MB calls (the paper does not say; with "
                                "1 KB calls the HDD would be 4x slower there, not 1.3x)",
                                kind="assumption", unit="B", plausible=(1 * MiB, 1 * KiB))

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            vals = v if isinstance(v, tuple) else (v,)
            for x in vals:
                if not isinstance(x, (int, float)) or isinstance(x, bool) or not x >= 0:
                    raise InvalidValueError(f"afa.Params.{f.name} must be a non-negative "
                                            f"number, got {v!r}")
        # the xfs station is a Link of bandwidth 1 / (per-byte cost): a zero cost has no
        # finite bandwidth (and left a bare ZeroDivisionError under --set)
        for name in ("fs_write_fixed", "fs_read"):
            if not getattr(self, name) > 0:
                raise InvalidValueError(f"afa.Params.{name} must be > 0 s/B (the xfs station's "
                                        f"bandwidth is its inverse), got {getattr(self, name)!r}")

    def power(self, device: str):
        """The :class:`qmodels.Power` of ``device``: Table 1's write power
        when busy (read power for reads) and the data-sheet idle power.
        The paper's accounting (the device at its Table-1 power over the
        whole run) is :attr:`Run.paper_energy`."""
        import qmodels as qm

        _check_device(device)
        r, w = getattr(self, f"{device}_read_w"), getattr(self, f"{device}_write_w")
        idle = getattr(self, f"{device}_idle_w")
        return qm.Power(busy=w, idle=idle, read=r, write=w)

    def core_power(self):
        """The core's :class:`qmodels.Power` (``cpu`` and ``xfs`` stations)."""
        import qmodels as qm

        return qm.Power(busy=self.cpu_core_w, idle=0.0)


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise UnknownNameError(f"unknown device {device!r}; one of {', '.join(DEVICES)}")


def _cpu_share(p: Params) -> float:
    """The clock-bound share of the write path per byte, c_cpu / (c_cpu + c_fs)."""
    tot = p.fs_write_fixed + p.fs_write_cpu
    return p.fs_write_cpu / tot if tot > 0 else 0.0


def flush_time(p: Params, device: str):
    """Seconds per fsync flush: the HDD's half revolution (a
    :class:`qmodels.Disk` with no seek and nothing to transfer: 30 / rpm,
    [HP] D.2), the flash devices' flush parameter."""
    import qmodels as qm

    _check_device(device)
    if device == "hdd":
        return qm.Disk(seek=p.hdd_seek, rpm=p.hdd_rpm, transfer_rate=p.hdd_rate,
                       size=0).media_time
    return getattr(p, f"{device}_flush")


def device_bandwidth(p: Params, device: str, op: str = "write"):
    """Bytes/s of ``device`` for ``op``: data sheets; the NVDIMM's is one
    DDR4-2133 :class:`qmodels.MemoryChannel` (8 B x 2133 MT/s)."""
    import qmodels as qm

    _check_device(device)
    if device == "nvdimm":
        return qm.MemoryChannel(rate=p.nvdimm_rate, width=8).bandwidth
    if device == "hdd":
        return p.hdd_rate
    return getattr(p, f"{device}_{op}_bw")


def device_element(p: Params, device: str, *, buffer, fsyncs_per_call=0, op: str = "write"):
    """The :class:`qmodels.Flash` element of ``device`` for one call of
    ``buffer`` bytes: S = request + (fsyncs per call) x flush + buffer / B.

    Writes: one write request per buffer (``overhead``: the HDD's fitted
    ``hdd_call``, 0 for flash), ``fsyncs_per_call`` flushes of
    :func:`flush_time`.  Reads: bytes at the read bandwidth only.
    """
    import qmodels as qm

    _check_device(device)
    bw = device_bandwidth(p, device, op)
    if op == "read":
        return qm.Flash(bandwidth=bw, size=buffer, per_call=0.0, calls=0, overhead=0.0)
    request = p.hdd_call if device == "hdd" else 0.0
    return qm.Flash(bandwidth=bw, size=buffer, per_call=flush_time(p, device),
                    calls=fsyncs_per_call, overhead=request)


def network(p: Params, device: str, op: str = "write", *, size=None, buffer=None,
            fsyncs=1, clock=None, writers: int = 1):
    """The closed network of one experiment: a write (or read) call of
    ``buffer`` bytes visits ``cpu``, ``xfs`` and the device once each.

    Parameters
    ----------
    p : Params
    device : one of :data:`DEVICES`.
    op : "write" or "read".
    size : bytes of the file (default ``p.sync_file``); with ``buffer`` it
        gives the calls per run n = size / buffer and the fsyncs per call.
    buffer : bytes per call (default ``p.default_buffer``).
    fsyncs : fsync calls per run (writes; k / n per call).
    clock : the CPU clock, Hz (default ``p.ref_clock``).
    writers : the closed population (1: the paper's single-threaded
        benchmark; more is a what-if, each writer with its own file).

    Any of ``size``, ``buffer``, ``fsyncs`` may be a sympy symbol (for
    :func:`switch_points`).  Stations carry their power states
    (:meth:`Params.power`, :meth:`Params.core_power`).
    """
    import qmodels as qm

    _check_device(device)
    if op not in ("write", "read"):
        raise InvalidValueError(f"afa.network: op must be 'read' or 'write', got {op!r}")
    size = p.sync_file if size is None else size
    buffer = p.default_buffer if buffer is None else buffer
    clock = p.ref_clock if clock is None else clock
    for what, v in (("size", size), ("buffer", buffer), ("clock", clock)):
        if isinstance(v, (int, float)) and not v > 0:
            raise InvalidValueError(f"afa.network: {what} must be positive, got {v!r}")
    if isinstance(fsyncs, (int, float)) and not fsyncs >= 0:
        raise InvalidValueError(f"afa.network: fsyncs must be non-negative, got {fsyncs!r}")
    if op == "write":
        cpu_s = p.syscall + buffer * p.fs_write_cpu
        fs_c = p.fs_write_fixed
    else:
        share = _cpu_share(p)
        cpu_s = p.syscall + buffer * share * p.fs_read
        fs_c = (1 - share) * p.fs_read
    cpu = qm.CPU(cores=1, clock=clock, seconds=cpu_s, ref_clock=p.ref_clock)
    xfs = qm.Link(bandwidth=1 / fs_c, size=buffer)
    dev = device_element(p, device, buffer=buffer, op=op,
                         fsyncs_per_call=fsyncs * buffer / size if op == "write" else 0)
    core = p.core_power()
    stations = [cpu.station("cpu", power=core), xfs.station("xfs", power=core),
                dev.station(device, power=p.power(device))]
    return qm.Network(stations, [qm.Closed("call", writers,
                                           visits={"cpu": 1, "xfs": 1, device: 1})])


@dataclass(frozen=True)
class Run:
    """One experiment's network solved: a run of ``calls`` calls.

    ``time`` (s) = calls / X for the single writer; ``demands`` (s per
    call) and ``utilization`` per station; ``bottleneck`` the station of
    largest demand ([QSP] sec. 5.2); ``energy`` the
    :class:`qmodels.EnergyReport` over the run (per element ``energy[k]``
    in J per run, ``energy_per_byte``); ``device_energy`` (J, data-sheet
    idle) and ``paper_energy`` (J, the device at its Table-1 power for the
    whole run, the paper's accounting).
    """

    device: str
    op: str
    size: float
    buffer: float
    fsyncs: float
    clock: float
    calls: float
    time: float
    demands: dict
    utilization: dict
    bottleneck: str
    energy: object = dataclasses.field(repr=False)
    device_energy: float = 0.0
    paper_energy: float = 0.0
    network: object = dataclasses.field(repr=False, default=None)
    result: object = dataclasses.field(repr=False, default=None)

    @property
    def total_energy(self) -> float:
        """J per run, every element (core and device) by its power states."""
        return float(self.energy.total_energy)

    @property
    def energy_per_byte(self) -> float:
        """J per byte written or read, every element."""
        return float(self.energy.energy_per_byte)


def run(p: Params, device: str, op: str = "write", *, size=None, buffer=None, fsyncs=1,
        clock=None, result=None) -> Run:
    """Build :func:`network`, solve it (exact MVA, ``qm.solve``) and read
    the run's time, utilisations, bottleneck and energy.  ``result`` may be
    a simulated result of the same network (:func:`validation` uses it):
    the time is then calls / simulated X."""
    import qmodels as qm

    size = p.sync_file if size is None else size
    buffer = p.default_buffer if buffer is None else buffer
    clock = p.ref_clock if clock is None else clock
    net = network(p, device, op, size=size, buffer=buffer, fsyncs=fsyncs, clock=clock)
    res = qm.solve(net) if result is None else result
    calls = size / buffer

    def mean(v):
        m = getattr(v, "mean", None)      # a simulated estimate's mean (not numpy's method)
        return float(v if m is None or callable(m) else m)

    X = mean(res.X["call"])
    T = calls / X
    names = net.station_names
    D = {s: float(st.service) for s, st in zip(names, net.stations)}
    U = {s: mean(res.U[s]) for s in names}
    bn = max(names, key=lambda s: D[s])
    rf = {device: 1.0 if op == "read" else 0.0}
    e = qm.energy(res, period=T, bytes_per_transaction=buffer, read_fraction=rf)
    pw = p.power(device)
    busy = pw.read if op == "read" else pw.write
    e_paper = qm.energy(res, period=T, read_fraction=rf,
                        power={device: qm.Power(busy=busy, idle=busy, read=busy, write=busy)})
    return Run(device, op, float(size), float(buffer), float(fsyncs), float(clock), calls, T,
               D, U, bn, e, float(e.energy[device]), float(e_paper.energy[device]), net, res)


def write_time(p: Params, device: str, size: float, *, buffer: float | None = None,
               fsyncs: int = 1, clock: float | None = None) -> float:
    """Seconds to write ``size`` bytes in calls of ``buffer`` bytes with
    ``fsyncs`` fsync calls at CPU ``clock``: the network's n / X."""
    return run(p, device, "write", size=size, buffer=buffer, fsyncs=fsyncs, clock=clock).time


def read_time(p: Params, device: str, size: float, *, clock: float | None = None) -> float:
    """Seconds to read ``size`` bytes (after the page cache is dropped): the
    read network's n / X."""
    return run(p, device, "read", size=size, clock=clock).time


# ---------------------------------------------------------------------------
# calibration
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


def calibrate(p: Params | None = None, hold=()) -> dict[str, float]:
    """Least-squares fit of the four free parameters to the four named
    points of :data:`FITTED` (relative errors, :func:`fit_parameters`),
    each point a ratio of two solved networks.  Parameters named in
    ``hold`` keep their value in ``p`` and are not returned; the others are
    fitted to all four points (the held ones' rows then show how far the
    held value leaves them)."""
    p = Params() if p is None else p
    hold = set(hold)
    unknown = hold - set(FITTED)
    if unknown:
        raise UnknownNameError(f"afa.calibrate: {sorted(unknown)} are not fitted parameters; "
                               f"valid: {', '.join(FITTED)}")
    start = {k: getattr(p, k) for k in FITTED if k not in hold}
    if not start:
        return {}

    def residuals(vals):
        q = dataclasses.replace(p, **vals)
        got = _fitted_quantities(q)
        return [got[k] / _FIT_TARGETS[k] - 1 for k in FITTED]

    bounds = {"fs_write_fixed": (1e-12, 1e-6), "fs_write_cpu": (1e-13, 1e-6),
              "hdd_call": (1e-8, 1e-1), "fs_read": (1e-13, 1e-6)}
    return fit_parameters(residuals, start, {k: bounds[k] for k in start})


# ---------------------------------------------------------------------------
# sweeps of the network
# ---------------------------------------------------------------------------

def _sweep_runs(p: Params) -> dict:
    """Every sweep point's :class:`Run`, ``{sweep: {device: [Run, ...]}}``."""
    specs = {
        "file_size": (p.file_sizes, lambda d, x: run(p, d, size=x)),
        "fsync": (p.fsync_counts, lambda d, x: run(p, d, size=p.sync_file, fsyncs=x)),
        "buffer": (p.buffer_sizes, lambda d, x: run(p, d, size=p.sync_file, buffer=x)),
        "read": (p.file_sizes, lambda d, x: run(p, d, "read", size=x)),
    }
    return {name: {d: [f(d, x) for x in xs] for d in DEVICES}
            for name, (xs, f) in specs.items()}


def sweeps(p: Params, runs: dict | None = None) -> dict:
    """The paper's four sweeps as sweeps of the network, rebuilt per point:
    ``file_size`` (write), ``fsync`` (1 GB), ``buffer`` (1 GB write),
    ``read`` (file size); each ``{device: {"x", "time" (s), "energy" (J,
    the paper's accounting), "device_energy" (J, data-sheet idle),
    "total_energy" (J, core and device), "energy_per_byte" (J/B),
    "bottleneck"}}``."""
    runs = _sweep_runs(p) if runs is None else runs
    xs = {"file_size": p.file_sizes, "fsync": p.fsync_counts, "buffer": p.buffer_sizes,
          "read": p.file_sizes}
    return {name: {d: {"x": list(xs[name]), "time": [r.time for r in rs],
                       "energy": [r.paper_energy for r in rs],
                       "device_energy": [r.device_energy for r in rs],
                       "total_energy": [r.total_energy for r in rs],
                       "energy_per_byte": [r.energy_per_byte for r in rs],
                       "bottleneck": [r.bottleneck for r in rs]}
                   for d, rs in per.items()}
            for name, per in runs.items()}


# ---------------------------------------------------------------------------
# symbolic switch points
# ---------------------------------------------------------------------------

def switch_points(p: Params) -> dict:
    """Where the device overtakes the file-system path as the bottleneck,
    derived with sympy from the network (:func:`qmodels.demand_crossings`:
    D_device = D_xfs per call) and checked on the numeric network.

    ``"fsync"``: per device, the fsync count k* on the 1 GB file with 1 MB
    calls; D_dev = o + (k b / F) t_flush + b / B against D_xfs = b c_fs
    gives k* = F (c_fs - 1 / B - o / b) / t_flush (none below 0).
    ``"buffer"``: ``"hdd"``, the HDD's buffer size b* below which its
    per-request cost makes it the bottleneck (1 GB, 1 fsync): b* = o /
    (c_fs - 1 / B - t_flush / F); ``"cpu"``, the buffer below which the
    application's core (the system call per write) overtakes the xfs path
    at the low clock, b* = s r / (c_fs - c_cpu r) with r = f_ref / f (a few
    hundred bytes: below the paper's smallest buffer, 1 KB, so its
    experiments never make the CPU the bottleneck).  Each entry: ``expr``
    (sympy, in the named symbol), ``latex``, ``value`` and ``check`` (the
    numeric network's bottleneck 1 % below and above: ``(before, after)``).
    """
    import sympy as sp

    import qmodels as qm

    k, b = sp.Symbol("k", positive=True), sp.Symbol("b", positive=True)
    out = {"fsync": {}, "buffer": {}}
    for d in DEVICES:
        net = network(p, d, size=p.sync_file, fsyncs=k)
        sols = [s for s in qm.demand_crossings(net, k, d, "xfs") if s.is_positive]
        entry = {"symbol": "k", "expr": None, "latex": "", "value": math.inf, "check": None}
        if sols:
            v = float(sols[0])
            lo = run(p, d, fsyncs=0.99 * v).bottleneck
            hi = run(p, d, fsyncs=1.01 * v).bottleneck
            entry.update(expr=sols[0], latex=sp.latex(sp.Float(v, 6)), value=v, check=(lo, hi))
        out["fsync"][d] = entry
    # the general formula, in symbols, for the notebook and the docs
    F, o, t, B, c = sp.symbols("F o t_f B c_fs", positive=True)
    kf = sp.solve(sp.Eq(o + k * b / F * t + b / B, b * c), k)[0]
    bf = sp.solve(sp.Eq(o + b / F * t + b / B, b * c), b)[0]
    out["fsync_formula"] = {"expr": kf, "latex": sp.latex(kf)}
    net = network(p, "hdd", size=p.sync_file, buffer=b, fsyncs=1)
    sols = [s for s in qm.demand_crossings(net, b, "hdd", "xfs") if s.is_positive]
    v = float(sols[0]) if sols else math.inf
    check = None
    if sols:
        check = (run(p, "hdd", buffer=0.99 * v).bottleneck,
                 run(p, "hdd", buffer=1.01 * v).bottleneck)
    out["buffer"]["hdd"] = {"symbol": "b", "expr": sols[0] if sols else None, "value": v,
                            "check": check, "latex": sp.latex(bf)}
    # the application's core against the xfs path, any device (NVDIMM's own demand is
    # negligible): (s + b c_cpu) f_ref / f = b c_fs, at the low clock (the larger b*)
    net = network(p, "nvdimm", size=p.sync_file, buffer=b, fsyncs=0, clock=p.low_clock)
    sols = [s for s in qm.demand_crossings(net, b, "cpu", "xfs") if s.is_positive]
    v = float(sols[0]) if sols else math.inf
    check = None
    if sols:
        check = tuple(run(p, "nvdimm", buffer=f * v, fsyncs=0, clock=p.low_clock).bottleneck
                      for f in (0.99, 1.01))
    out["buffer"]["cpu"] = {"symbol": "b", "expr": sols[0] if sols else None, "value": v,
                            "check": check, "latex": sp.latex(sols[0]) if sols else ""}
    out["buffer_formula"] = {"expr": bf, "latex": sp.latex(bf)}
    return out


# ---------------------------------------------------------------------------
# simulation
# ---------------------------------------------------------------------------

#: configurations simulated by ``report(sim=True)``: (label, run keywords), each loading a
#: different element: the HDD's flushes, the xfs path (NVDIMM, large buffer), the HDD's reads
VALIDATION_CONFIGS = (
    ("HDD write 1 GB, 100,000 fsyncs (fsync-heavy: device-bound)",
     {"device": "hdd", "op": "write", "fsyncs": 100_000}),
    ("NVDIMM write 1 GB, 1 MB buffer (large buffer: xfs-bound)",
     {"device": "nvdimm", "op": "write", "buffer": MiB}),
    ("HDD read 4 GB (read path: device-bound)",
     {"device": "hdd", "op": "read", "size": 4 * GiB}),
    ("HDD write 1 GB, 1 KB buffer (per-request cost: device-bound)",
     {"device": "hdd", "op": "write", "buffer": KiB}),
)
#: calls simulated per replication (a run's time is calls / X, so the horizon is in calls)
SIM_CALLS = 4000
#: replications per configuration
SIM_REPLICATIONS = 5


def _rel_hw(est) -> float:
    m = float(est.mean)
    return float(est.half_width) / abs(m) if m else 0.0


def validation(p: Params, configs=VALIDATION_CONFIGS, *, seed: int = 1) -> tuple:
    """Analytic (exact MVA, one writer) against simulated figures of each
    configuration: run time, the utilisation of every element, the energy
    of every element per run and the energy per byte.

    The simulated energies are :func:`qmodels.energy` of the simulated
    utilisations over the simulated run time; their half-width adds the
    relative half-widths of U and X (first-order propagation, an upper
    bound for a product or ratio of two estimates).  MVA is exact here
    (product form, N = 1), so the tolerance is 0: agreement is within the
    simulator's 95 % interval.  Service is exponential (product form): a
    single writer's mean time is the sum of its mean demands whatever
    their shape.  Returns ``(entries, runs)``.
    """
    import qmodels as qm

    from ._base import validation_entry

    entries, out = [], []
    for i, (label, kw) in enumerate(configs):
        kw = dict(kw)
        d, op = kw.pop("device"), kw.pop("op")
        a = run(p, d, op, **kw)
        horizon = SIM_CALLS * a.time / a.calls
        s = qm.simulate(a.network, seed=seed + i, horizon=horizon,
                        replications=SIM_REPLICATIONS)
        sr = run(p, d, op, result=s, **kw)
        m = "exact MVA (N = 1) vs simulation"
        rx = _rel_hw(s.X["call"])
        entries.append(validation_entry(label, "run time [s]", a.time,
                                        (sr.time, sr.time * rx), tolerance=0.0, method=m))
        for st in a.network.station_names:
            entries.append(validation_entry(label, f"U {st}", a.utilization[st], s.U[st],
                                            tolerance=0.0, method=m))
        pw = {st.name: st.power for st in a.network.stations}
        for st in a.network.station_names:
            # E = T [P_b U + P_i (1 - U)]: dE = T |P_b - P_i| dU + E dT / T
            e = float(sr.energy.energy[st])
            dp = abs(float(sr.energy.busy_power[st]) - float(sr.energy.idle_power[st]))
            hw = sr.time * dp * float(s.U[st].half_width) + e * rx
            entries.append(validation_entry(label, f"energy {st} [J/run]",
                                            float(a.energy.energy[st]), (e, hw), tolerance=0.0,
                                            method=m))
        # per byte: sum_k [P_b U + P_i (1 - U)] / (X b), the same propagation
        e = sr.energy_per_byte
        hw = sum(abs(float(sr.energy.busy_power[st]) - float(sr.energy.idle_power[st]))
                 * float(s.U[st].half_width) for st in pw) / (float(s.X["call"].mean)
                                                               * sr.buffer) + e * rx
        entries.append(validation_entry(label, "energy per byte [J/B]", a.energy_per_byte,
                                        (e, hw), tolerance=0.0, method=m))
        out.append((label, a, sr))
    return tuple(entries), out


# ---------------------------------------------------------------------------
# the paper's figures against the network
# ---------------------------------------------------------------------------

#: a numeric row farther than this from the paper (relative) is a miss
MISS_BAR = 0.20


def report(params: Params | None = None, *, sim: bool = False, seed: int = 1,
           fit: bool = True, hold_fit: bool = False) -> CaseReport:
    """The paper-vs-model table of the all-flash energy study.

    ``fit=True`` (default) recalibrates the four :data:`FITTED` parameters
    on their named points first, except any whose value in ``params``
    differs from its calibrated default: that is a what-if (``--set
    hdd_call=...``), held as given, and its fitted row shows the
    consequence (``qmodels case`` marks it stale); ``hold_fit=True`` refits
    nothing and keeps all four at their values in ``params`` (the default
    fit unless set), so a what-if moves every row it reaches (listed under
    ``held``); a refit that ends at a bound says so (``at_bound``).
    ``sim=True`` also simulates the
    :data:`VALIDATION_CONFIGS` networks (``validation``).  ``extra`` holds
    the ``sweeps`` (with the bottleneck of every point), the
    ``switch_points`` and the per-element ``energy`` of a few runs.
    """
    p = Params() if params is None else params
    fitted, held_values, at_bound = {}, {}, {}
    defaults = Params()
    held = {k for k in FITTED if getattr(p, k) != getattr(defaults, k)}
    if fit and not hold_fit:
        fitted = calibrate(p, hold=held)
        at_bound = dict(getattr(fitted, "at_bound", {}))
        p = dataclasses.replace(p, **fitted)
        held_values = {k: getattr(p, k) for k in held}
    elif hold_fit:
        held_values = {k: getattr(p, k) for k in FITTED}
    F, Fs = p.large_file, p.sync_file
    lo, hi = p.fsync_counts[0], p.fsync_counts[-1]
    got = _fitted_quantities(p)

    def W(d, **kw):
        return run(p, d, size=kw.pop("size", Fs), **kw)

    rows = []
    R = rows.append
    # Each row's role and why (the rule of qmodels.cases._base).  fitted: the four FITTED
    # points; derived: an identity no measurement could refute (the same run, E = P x T of a
    # fitted run); predicted: everything else the model computes, however simple.
    # --- sec. 4.1.1 / 4.1.2: file size and clock ---------------------------
    R(Row(FITTED["fs_write_fixed"], 1.25, got["fs_write_fixed"], "fitted",
          note="sec. 4.1.2"))
    R(Row(FITTED["fs_write_cpu"], 1.23, got["fs_write_cpu"], "fitted",
          note="sec. 4.1.2"))
    # derived: the 4 GB write at 2.4 GHz, the fitted 1.25 row's own run
    R(Row("HDD/NVDIMM write time, large files (Fig. 3)", 1.3,
          W("hdd", size=F).time / W("nvdimm", size=F).time, "derived", identity="same run",
          note="the same run as the fitted 2.4 GHz row (HDD and NVDIMM, 4 GB, 2.4 GHz), which "
               "sec. 4.1.2 reads as 1.25x and sec. 4.1.1 as 'about 1.3x'; not a check"))
    # predicted (the rule of qmodels.cases._base: a bottleneck argument is a hypothesis):
    # the fit of 1.25 makes the shared path 4x the HDD's device time, so in the model every
    # faster device is path-bound at 4 GB
    nv4 = W("nvme", size=F)
    R(Row("XFS path, not the device, limits the 4 GB NVMe write (sec. 4.1.1)", 1.0,
          float(nv4.bottleneck == "xfs"), "predicted", boolean=True,
          note="sec. 4.1.1 blames the file system tuned for slow devices; in the model the "
               "fitted 1.25x at 4 GB puts the shared path at ~4x the HDD's device time, so a "
               f"faster device is path-bound (NVMe 4 GB: U xfs = "
               f"{nv4.utilization['xfs']:.2f}, U nvme = {nv4.utilization['nvme']:.3f})"))
    # predicted: Table 1's power ratio 12 W / 2 W (an input) times the NVMe/NVDIMM time ratio
    # of a 4 GB write.  On the shared path every device's time lies between the fastest
    # device's (NVDIMM) and the slowest's (HDD), whose ratio is the fitted 1.25, so the
    # model is in [6, 6 x 1.25] = [6, 7.5] whatever the NVMe data sheet says: it cannot miss
    # the paper's 7 by more than 20 %, hence no test
    nd4 = W("nvdimm", size=F)
    t4 = {d: W(d, size=F).time for d in DEVICES}
    # the bracket's premise: every device's 4 GB time between the NVDIMM's and the HDD's
    # (data-sheet devices; a what-if such as --set nvme_write_bw=1e7 can break it, and the
    # rows are then predictions)
    bracket = all(t4["nvdimm"] <= t4[d] <= t4["hdd"] for d in DEVICES)
    pw = {d: getattr(p, f"{d}_write_w") for d in DEVICES}
    R(Row("NVMe/NVDIMM write energy, 4 GB file", 7.0,
          nv4.paper_energy / nd4.paper_energy, "predicted",
          note="sec. 4.1.1: NVDIMM uses 'about 1/7' of NVMe's energy; Table 1's "
               f"{pw['nvme']:g} W / {pw['nvdimm']:g} W times the NVMe/NVDIMM time ratio"
               + (", which the shared path holds between 1 and the fitted HDD/NVDIMM "
                  f"{got['fs_write_fixed']:.3g}: the model is bound to "
                  f"[{pw['nvme'] / pw['nvdimm']:.3g}, "
                  f"{pw['nvme'] / pw['nvdimm'] * got['fs_write_fixed']:.3g}]" if bracket else "")
               + "; assumption: the paper's accounting (device at its Table-1 power for the "
               "whole run)"))
    e4 = {d: W(d, size=F).paper_energy for d in DEVICES}
    # NVDIMM lowest: the least power and the least time; NVMe highest: its power beats
    # R = T_HDD / T_NVDIMM times any other device's power, since its time is >= NVDIMM's
    ratio4 = t4["hdd"] / t4["nvdimm"]
    order_fixed = (bracket and pw["nvdimm"] <= min(pw.values())
                   and pw["nvme"] > ratio4 * max(pw["hdd"], pw["ssd"]))
    # predicted: with every 4 GB time within [1, 1.25] x NVDIMM's (as above), E / E_NVDIMM is
    # >= 6 for NVMe, 3.4 x 1.25 = 4.25 for the HDD, <= 1.85 x 1.25 = 2.3 for the SSD, all
    # > 1: the order is Table 1's powers and the fitted 1.25 (where that premise holds)
    R(Row("4 GB write energy: NVDIMM lowest, NVMe highest (Fig. 4)", 1.0,
          float(min(e4, key=e4.get) == "nvdimm" and max(e4, key=e4.get) == "nvme"),
          "predicted", boolean=True,
          note="sec. 4.1.1" + (
              "; Table 1's powers alone order it: every 4 GB time lies between NVDIMM's and "
              f"the fitted {ratio4:.3g}x of it (the HDD's), NVDIMM draws the least power "
              f"({pw['nvdimm']:g} W) and NVMe's {pw['nvme']:g} W exceeds {ratio4:.3g} x "
              f"{max(pw['hdd'], pw['ssd']):g} W, whatever the data sheets"
              if order_fixed else "")))
    # predicted: the two fitted rows are HDD/NVDIMM at each clock, so HDD(1.6)/HDD(2.4) is
    # R(1.6) / R(2.4) times the NVDIMM row below, itself (R(2.4) - 1) / (R(1.6) - 1): the
    # two fitted rows alone, not a second check of the clock
    r24, r16 = got["fs_write_fixed"], got["fs_write_cpu"]
    R(Row("HDD write time 1.6 GHz / 2.4 GHz, 4 GB", 1.0,
          W("hdd", size=F, clock=p.low_clock).time / W("hdd", size=F).time, "predicted",
          note="sec. 4.1.2: the clock 'barely matters', read as 1.0; in the model the two "
               f"fitted rows' ratio ({r16:.3g} / {r24:.3g}) times the NVDIMM clock ratio of the "
               f"next row, ({r24:.3g} - 1) / ({r16:.3g} - 1), which rests on the model's "
               "shared, clock-scaled path"))
    # predicted: T_d(f) = n (P(f) + D_d) with the path P(f) shared and the device's D_d
    # clock-free, so R(f) - 1 = (D_HDD - D_NVDIMM) / (P(f) + D_NVDIMM) for the fitted
    # HDD/NVDIMM ratio R(f) at each clock, and T_NVDIMM(1.6) / T_NVDIMM(2.4) =
    # (R(2.4) - 1) / (R(1.6) - 1) = 0.25 / 0.23: the two fitted rows alone
    R(Row("NVDIMM write time 1.6 GHz / 2.4 GHz, 4 GB", 1.0,
          W("nvdimm", size=F, clock=p.low_clock).time / W("nvdimm", size=F).time, "predicted",
          note="sec. 4.1.2, read as 1.0; with the model's path shared and the device's time "
               "clock-free (a hypothesis, not an identity), it is (R(2.4 GHz) - 1) / "
               f"(R(1.6 GHz) - 1) = {got['fs_write_fixed'] - 1:.3g} / "
               f"{got['fs_write_cpu'] - 1:.3g} for the fitted HDD/NVDIMM ratios R"))
    # --- sec. 4.1.3: fsync count -------------------------------------------
    # predicted (all of sec. 4.1.3): no fsync figure is fitted; the HDD's flush is half a
    # revolution from its data sheet and the energies are Table 1 x predicted times
    h_lo, h_hi = W("hdd", fsyncs=lo), W("hdd", fsyncs=hi)
    R(Row("HDD write time, 100,000 / 1,000 fsyncs", 13.0, h_hi.time / h_lo.time,
          note="sec. 4.1.3; HDD fsync = half a revolution (30/rpm), not fitted"))
    R(Row("HDD is the bottleneck at 100,000 fsyncs (sec. 4.1.3)", 1.0,
          float(h_hi.bottleneck == "hdd"), boolean=True,
          note=f"sec. 4.1.3: 'a bottleneck occurs at the HDD'; model: U hdd = "
               f"{h_hi.utilization['hdd']:.2f} at 100,000, {h_lo.utilization['hdd']:.2f} at "
               "1,000 fsyncs (xfs-bound there)"))
    R(Row("NVDIMM write time, 100,000 / 1,000 fsyncs", 1.0,
          W("nvdimm", fsyncs=hi).time / W("nvdimm", fsyncs=lo).time,
          note="sec. 4.1.3: 'almost flat'"))
    e_lo = {d: W(d, fsyncs=lo).paper_energy for d in DEVICES}
    max_gap = max(W("hdd", fsyncs=k).paper_energy / W("nvdimm", fsyncs=k).paper_energy
                  for k in p.fsync_counts)
    R(Row("max HDD/NVDIMM energy over the fsync sweep", 800.0, max_gap,
          note="sec. 4.1.3, 'up to 800x'",
          miss="with the paper's own 13x HDD growth, a flat NVDIMM and 26x at 1,000 fsyncs, "
               "E = P x T allows at most 13 x 26 = 338x at 100,000 fsyncs; 800x needs a sweep "
               "beyond the counts the paper names or a falling NVDIMM time", blame="paper",
          quotes=("sec. 4.1.3: HDD time 'about 13x' from 1,000 to 100,000 fsyncs, NVDIMM "
                  "'almost no difference', and HDD 26x NVDIMM's energy at 1,000 fsyncs",
                  "sec. 4.1.3: HDD and NVDIMM energies differ by 'up to about 800x'")))
    why_fsync = ("E = P x T with Table 1 turns this into a time ratio of {t:.3g}x at 1,000 "
                 "fsyncs, but sec. 4.1.1 has all devices within 1.3x on large writes (the "
                 "shared XFS path, which the network keeps: 1,000 fsyncs leave every device "
                 "xfs-bound); {extra}")
    on_fsync = ("default_buffer", "hdd_seek")
    # the reach of the call size, the other calibrated values held: the same rows with the
    # other plausible default_buffer (1 KB calls: HDD/SSD 7.6x, HDD/NVDIMM 14.9x)
    alt_buf = KiB if p.default_buffer != KiB else MiB
    pa = dataclasses.replace(p, default_buffer=alt_buf)
    e_alt = {d: run(pa, d, size=Fs, fsyncs=lo).paper_energy for d in DEVICES}
    fs_note = (f"sec. 4.1.3; rests on the unstated call size (default_buffer "
               f"{p.default_buffer / KiB:g} KiB) and HDD seek (hdd_seek {p.hdd_seek * 1e3:g} ms); "
               f"with {alt_buf / KiB:g} KiB calls and the fits held the model gives HDD/SSD "
               f"{e_alt['hdd'] / e_alt['ssd']:.2g}x, HDD/NVMe {e_alt['hdd'] / e_alt['nvme']:.2g}x, "
               f"HDD/NVDIMM {e_alt['hdd'] / e_alt['nvdimm']:.3g}x")
    R(Row("HDD/SSD write energy, 1,000 fsyncs", 8.9, e_lo["hdd"] / e_lo["ssd"], note=fs_note,
          miss=why_fsync.format(t=8.9 * 3.7 / 6.8, extra="a 1.6x time ratio is all the "
                                "HDD's half-revolution flushes add at these assumptions"),
          blame="assumption", rests_on=on_fsync))
    R(Row("HDD/NVMe write energy, 1,000 fsyncs", 25.0, e_lo["hdd"] / e_lo["nvme"], note=fs_note,
          miss=why_fsync.format(t=25 * 12 / 6.8,
                                extra="and 25x for NVMe next to 26x for NVDIMM would make NVMe "
                                      "5.8x faster than NVDIMM, against the text"),
          blame="paper", rests_on=on_fsync,
          quotes=("sec. 4.1.3: at 1,000 fsyncs the HDD uses '25x' NVMe's energy and '26x' "
                  "NVDIMM's, with Table 1's NVMe at 12 W and NVDIMM at 2 W (NVMe 5.8x faster)",
                  "sec. 4.1.3: 'NVDIMM always performs better than the other devices, "
                  "whatever the number of fsync calls'")))
    R(Row("HDD/NVDIMM write energy, 1,000 fsyncs", 26.0, e_lo["hdd"] / e_lo["nvdimm"],
          note=fs_note,
          miss=why_fsync.format(t=26 * 2 / 6.8, extra="the model keeps the shared path"),
          blame="assumption", rests_on=on_fsync))
    R(Row("SSD/NVMe write energy over the fsync sweep (1,000 fsyncs)", 1.0,
          e_lo["ssd"] / e_lo["nvme"],
          note="sec. 4.1.3: SSD and NVMe energies 'almost no difference', read as 1.0",
          miss="equal energies at 3.7 W and 12 W need the NVMe 3.2x faster than the SSD, but "
               "the paper's own 8.9x and 25x put NVMe's energy 2.8x below SSD's, and its "
               "large-write times are within 1.3x; the network (both xfs-bound) gives Table "
               "1's power ratio", blame="paper",
          quotes=("sec. 4.1.3: 'SSD and NVMe differ in energy hardly at all'",
                  "sec. 4.1.3: at 1,000 fsyncs the HDD uses '8.9x' SSD's energy and '25x' "
                  "NVMe's (NVMe's energy 2.8x below SSD's)")))
    # --- sec. 4.1.4: write buffer ------------------------------------------
    R(Row(FITTED["hdd_call"], 4.0, got["hdd_call"], "fitted", note="sec. 4.1.4"))
    # predicted: these share the fitted HDD/SSD row's numerator (the HDD at 1 KB), so what
    # they test is the SSD/NVMe and SSD/NVDIMM time ratios at 1 KB (data-sheet per-call
    # costs), not the HDD's fitted per-request cost
    h1k = W("hdd", buffer=KiB)
    s1k = W("ssd", buffer=KiB).time
    for d, v in (("nvme", 4.0), ("nvdimm", 5.2)):
        t1k = W(d, buffer=KiB).time
        R(Row(f"HDD/{_LABEL[d]} write time, 1 KB buffer", v, h1k.time / t1k,
              note=f"sec. 4.1.4; the fitted HDD/SSD {got['hdd_call']:.3g}x times the network's "
                   f"SSD/{_LABEL[d]} time ratio at 1 KB, {s1k / t1k:.3f} (data-sheet flash "
                   f"costs, not fitted): that ratio is what this row tests, against the "
                   f"paper's {v:g} / 4 = {v / 4:.2f}"))
    why_mb = ("per-request costs make the HDD/flash ratio a monotone function of the call "
              "count, from 1.25 (few calls: sec. 4.1.1) to its 10^6-call value (fitted 4x); "
              "at 1 MB (1,024 calls) it is still ~1.2: 2.4-2.6x at 1 MB next to 1.3x for the "
              "sec. 4.1.1 writes cannot both hold if those were written in 1 MB calls "
              "(default_buffer, which the paper does not state), and a per-request cost that "
              "does not depend on the request size cannot give both 4x at 1 KB and 2.5x at "
              "1 MB")
    # A per-request cost that depends on the request size (the candidate: a 4 KB
    # physical-sector drive's read-modify-write below 4 KB, a command cost per request)
    # could bend the 1 KB..1 MB curve, but the 1 MB rows need it large at 1 MB itself: the
    # extra HDD time per 1 MB request that would meet each row, against the disk's own
    # revolution (60 / rpm) and its 1 MB transfer at the data-sheet rate
    h1m = W("hdd", buffer=MiB)
    calls_1m = Fs / MiB
    rev = 60.0 / p.hdd_rpm
    big_h, big_n = W("hdd", size=F).time, W("nvdimm", size=F).time
    for d, v in (("ssd", 2.5), ("nvme", 2.6), ("nvdimm", 2.4)):
        t_d = W(d, buffer=MiB).time
        need = (v * t_d - h1m.time) / calls_1m
        size_note = (f"; a request-size-dependent per-request cost would have to add "
                     f"{need * 1e3:.1f} ms to every 1 MB request ({need / rev:.1f} revolutions "
                     f"of the {p.hdd_rpm:g} rpm disk, {need * p.hdd_rate / MiB:.1f}x its 1 MB "
                     "transfer at the data-sheet rate), which no documented behaviour of the "
                     "disk gives, and the same requests would make the sec. 4.1.1 4 GB "
                     f"HDD/NVDIMM write {(big_h + need * F / MiB) / big_n:.1f}x instead of "
                     "1.25x (its 1 MB calls, default_buffer)"
                     if need > 0 and p.default_buffer == MiB else "")
        R(Row(f"HDD/{_LABEL[d]} write time, 1 MB buffer", v, h1m.time / t_d, note="sec. 4.1.4",
              miss=why_mb + size_note, blame="assumption", rests_on=("default_buffer",)))
    # predicted: the flash per-call costs (data sheets, assumed syscall) were not told this
    R(Row("SSD write time, 10 KB / 1 MB buffer", 1.0,
          W("ssd", buffer=10 * KiB).time / W("ssd", buffer=MiB).time,
          note="sec. 4.1.4: flash 'almost no difference' above 10 KB, read as 1.0"))
    # predicted (a bottleneck argument): at 1 KB the fitted HDD/SSD = 4 gives
    # D_HDD = 4 (P + D_SSD) - P >= 3 P, above
    # the xfs station (a part of the path P); at 1 MB the two fitted clock rows put the xfs
    # station at ~3.3 (D_HDD - D_NVDIMM) - D_NVDIMM (see the NVDIMM clock row), above D_HDD
    # since the NVDIMM's device time is small: both halves are the fitted rows
    R(Row("HDD is the bottleneck at 1 KB buffers, the xfs path at 1 MB (sec. 4.1.4)", 1.0,
          float(h1k.bottleneck == "hdd" and W("hdd", buffer=MiB).bottleneck == "xfs"),
          "predicted", boolean=True,
          note="sec. 4.1.4: fewer device writes as the buffer grows; the switch lies at the "
               "symbolic b* (extra['switch_points']); both halves follow from fitted rows: at 1 "
               "KB the fitted HDD/SSD 4x leaves the HDD >= 3x the whole cpu + xfs path, at 1 MB "
               "the fitted 1.25x / 1.23x put the xfs station at ~3.3x the HDD's extra time "
               "over the NVDIMM"))
    # --- sec. 4.2: reads -----------------------------------------------------
    rh, rd = run(p, "hdd", "read", size=F), run(p, "nvdimm", "read", size=F)
    R(Row(FITTED["fs_read"], 6.9, got["fs_read"], "fitted", note="sec. 4.2.1"))
    # derived: E = P x T of the fitted 6.9 row's own run, Table 1's 6.8 W / 2 W = 3.4 times
    # the fitted time ratio
    R(Row("HDD/NVDIMM read energy, 4 GB file", 7.18, rh.paper_energy / rd.paper_energy,
          "derived", identity="fitted rows", blame="paper",
          quotes=("sec. 3 and Table 1: a device's energy is its time multiplied by its power, "
                  "HDD 6.8 W and NVDIMM 2 W reading",
                  "sec. 4.2.1: NVDIMM reads a 4 GB file 'about 6.9x faster' than the HDD and "
                  "uses 'about 7.18x less' energy (E = P x T gives 3.4 x 6.9 = 23.5x)"),
          note="sec. 4.2.1; E = P x T of the fitted read row's run: Table 1's 6.8 W / 2 W = "
               "3.4 times the fitted time ratio 6.9",
          miss="Table 1 read power 6.8 W vs 2 W makes any 6.9x time ratio a 3.4 x 6.9 = 23.5x "
               "energy ratio under E = P x T; 7.18x is not consistent with Table 1"))
    # predicted: both reads visit the same cpu and xfs stations, so in the model the order
    # of their times is the order of the device demands, b / B at the data sheets' read
    # bandwidths
    R(Row("NVMe reads slower than SSD, 4 GB (sec. 4.2.1)", 1.0,
          float(run(p, "nvme", "read", size=F).time > run(p, "ssd", "read", size=F).time),
          "predicted", boolean=True, blame="model",
          note="in the model on the shared path the order of the read times is the order of "
               "the data-sheet read bandwidths (NVMe 2.2 GB/s, SSD 0.54 GB/s)",
          miss="the data sheets read NVMe at 2.2 GB/s and the SSD at 0.54 GB/s; the paper "
               "blames the file system, which in the network is one path shared by all "
               "devices and cannot slow one device down"))
    # predicted: the read path's clock share is the write path's (an assumption), not fitted
    R(Row("HDD read time 1.6 GHz / 2.4 GHz, 4 GB", 1.0,
          run(p, "hdd", "read", size=F, clock=p.low_clock).time / rh.time,
          note="sec. 4.2.2, read as 1.0"))
    # --- sec. 4.2.3 / 4.2.4: read buffer and data type ------------------------
    # predicted: the read calls through the same network at each read-buffer size of the
    # write sweep (1 GB file); the paper: 'no big difference with the read buffer size'
    spread, worst = 0.0, ""
    for d in DEVICES:
        ts = [run(p, d, "read", size=Fs, buffer=b).time for b in p.buffer_sizes]
        if max(ts) / min(ts) > spread:
            spread, worst = max(ts) / min(ts), _LABEL[d]
    rb_miss = "" if abs(spread - 1) <= MISS_BAR else (
        "the model charges every read call the per-call cost of the write path (syscall and "
        "file-system work per call), so 1 KB calls cost more than 1 MB ones; the paper's reads "
        "barely change, as the C library's buffer and the kernel's read-ahead batch small "
        "calls into large device reads, a mechanism the model lacks")
    R(Row(f"read time over the read-buffer sweep ({p.buffer_sizes[0] // KiB} KB.."
          f"{p.buffer_sizes[-1] // MiB} MB), largest slowest/fastest over devices", 1.0, spread,
          note=f"sec. 4.2.3: read time 'does not differ much' with the read buffer, read as 1; "
               f"model: {worst} spreads most", miss=rb_miss, blame="model" if rb_miss else ""))
    # predicted: the data-type runs read the 1 GB file as 1-, 2-, 4- and 8-byte elements; in
    # the model a read call moves the same bytes whatever the element size (the library
    # buffer turns element reads into the same calls), so every ratio is 1
    dt = {d: run(p, d, "read", size=Fs).time / run(p, d, "read", size=Fs).time
          for d in ("hdd", "ssd")}
    for d, paper, what in (("hdd", 1.13, "1-byte / 4-byte"), ("ssd", 1.67, "8-byte / 4-byte")):
        m_ = "" if abs(dt[d] / paper - 1) <= MISS_BAR else (
            "the model has no term for the element size: the same bytes in the same calls "
            "whatever the data type; the paper's non-monotone order (4-byte fastest, 8-byte "
            "slowest on the SSD) points at the C library's per-element conversion, which the "
            "model does not have")
        R(Row(f"{_LABEL[d]} read time, {what} elements, 1 GB (sec. 4.2.4)", paper, dt[d],
              note="sec. 4.2.4: NVMe and NVDIMM 'almost the same whatever the data type'; the "
                   "model reads every element size in the same calls",
              miss=m_, blame="model" if m_ else ""))
    # --- sec. 5: conclusion ------------------------------------------------------
    # predicted: the largest gaps over the sweeps, most of whose points are not fitted
    runs = _sweep_runs(p)
    sw = sweeps(p, runs)
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
               "its 4 GB read (7.18x), not the maximum over its experiments", blame="paper",
          quotes=("sec. 5: AFA devices 'save energy by up to 7x' over HDD and SSD",
                  "sec. 4.1.3: HDD 26x NVDIMM's energy at 1,000 fsyncs and 'up to about "
                  "800x'")))
    R(Row("conclusion: up to 8-9x faster (AFA vs HDD/SSD)", 8.5, best_t,
          note="sec. 5, '8-9x' taken as 8.5; model: largest ratio over the sweeps",
          miss="by the paper's own numbers (1.3x at large files, HDD 13x slower at 100,000 "
               "fsyncs, NVDIMM flat) the HDD is ~17x slower at 100,000 fsyncs", blame="paper",
          quotes=("sec. 5: AFA devices are 'up to 8-9x faster'",
                  "sec. 4.1.3: the HDD's time grows 'about 13x' from 1,000 to 100,000 fsyncs "
                  "while NVDIMM's shows 'almost no difference' and NVDIMM 'always performs "
                  "better': at least 13x")))

    # a miss only where the row misses: a what-if (--set) can bring a row inside the bar
    # (or a yes/no row to agree), and then its miss text no longer applies
    rows = [r if not r.miss or (r.model != r.paper if r.boolean
                                else abs(r.rel_error) > MISS_BAR)
            else dataclasses.replace(r, miss="", blame="", quotes=()) for r in rows]
    sp_ = switch_points(p)
    extra = {"sweeps": sw,
             "switch_points": _switch_json(sp_),
             "energy": _energy_split(p),
             "bandwidth_note": "NVMe reads faster than SATA SSD here (data sheet 2.2 vs 0.54 "
                               "GB/s); the paper measured NVMe reads slower (sec. 4.2.1)"}
    validation_, status = (), ""
    if sim:
        validation_, _ = validation(p, seed=seed)
        status = (f"{len(VALIDATION_CONFIGS)} networks (cpu -> xfs -> device, one writer) "
                  f"simulated, {SIM_REPLICATIONS} replications of {SIM_CALLS} calls each, "
                  "seeds from " + str(seed) + "; every other row is one of these networks "
                  "at other parameters, exact by MVA")
    k_h = sp_["fsync"]["hdd"]["value"]
    phys = nv4.device_energy / W("nvdimm", size=F).device_energy
    notes = (
        "the network: one write (read) call of b bytes visits cpu (clock-scaled), xfs (the "
        "shared file-system path) and the device once; one writer (the paper's benchmark "
        "is single-threaded); T = n / X, U_k = X D_k",
        f"switch points (sympy, checked on the network): the HDD overtakes the xfs path at "
        f"k* = {k_h:,.0f} fsyncs on 1 GB with 1 MB calls, and below b* = "
        f"{sp_['buffer']['hdd']['value'] / KiB:.2f} KiB buffers; SSD at k* = "
        f"{sp_['fsync']['ssd']['value']:,.0f}, NVMe at {sp_['fsync']['nvme']['value']:,.0f}; "
        f"the core overtakes the xfs path only below {sp_['buffer']['cpu']['value']:.0f} B "
        "calls at 1.6 GHz (the paper's smallest buffer is 1 KB)",
        "energy rows use the paper's accounting (the device at its Table-1 power over the "
        "whole run); with data-sheet idle power (HDD 6.1 W, NVMe 4 W, SSD 0.05 W, NVDIMM "
        f"2 W assumed) the NVMe/NVDIMM device energy of a 4 GB write is {phys:.2f}x instead "
        f"of {nv4.paper_energy / W('nvdimm', size=F).paper_energy:.2f}x, the NVMe being busy "
        f"{100 * nv4.utilization['nvme']:.1f} % of the run; per-element split in "
        "extra['energy']",
        "the shared XFS path (fs_write_fixed + fs_write_cpu per byte) is why four devices "
        "spanning 150 MB/s to 17 GB/s write within 1.3x of each other (paper sec. 4.1.1)",
        "buffer sweep energy order NVDIMM < SSD < NVMe < HDD (sec. 4.1.4) holds at 1 KB; at "
        "1 MB the model's HDD is only ~1.2x slower than NVMe (the missed 1 MB rows), so NVMe's "
        "12 W puts it above the HDD there",
    )
    return CaseReport("afa", "All-flash storage energy: paper (Kim & Han 2019) vs network model",
                      rows, p, fitted=dict(fitted), extra=extra, notes=notes,
                      validation=validation_, sim_status=status, held=held_values,
                      at_bound=at_bound)


def _switch_json(sp_: dict) -> dict:
    out = {}
    for what in ("fsync", "buffer"):
        out[what] = {d: {"value": e["value"], "check": list(e["check"] or ()),
                         "expr": str(e["expr"])} for d, e in sp_[what].items()}
    out["fsync_formula"] = str(sp_["fsync_formula"]["expr"])
    out["buffer_formula"] = str(sp_["buffer_formula"]["expr"])
    return out


def _energy_split(p: Params) -> dict:
    """Per element energy (J per run, data-sheet idle) and per byte of the
    4 GB write, the 1 GB 100,000-fsync write and the 4 GB read, per device."""
    out = {}
    for label, kw in (("write 4 GB", {"size": p.large_file}),
                      ("write 1 GB, 100,000 fsyncs", {"fsyncs": 100_000}),
                      ("read 4 GB", {"op": "read", "size": p.large_file})):
        out[label] = {}
        for d in DEVICES:
            r = run(p, d, **kw)
            out[label][d] = {"time": r.time, "bottleneck": r.bottleneck,
                             "energy": {k: float(v) for k, v in r.energy.energy.items()},
                             "energy_per_byte": r.energy_per_byte,
                             "paper_energy": r.paper_energy}
    return out
