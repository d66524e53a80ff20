"""Energy from performance: E = P x T per device, per transaction, per byte.

A device draws ``Power.busy`` watts while it serves and ``Power.idle``
otherwise (``Power.read`` / ``Power.write`` refine ``busy`` where the two
operations differ).  Over a period T a station with c servers at
utilisation U (per server) is busy for c U T server-seconds and idle for
c (1 - U) T, so

    E_k = c_k [P_busy,k U_k + P_idle,k (1 - U_k)] T                [J]

and with throughput X (transactions per second) and demands D_k = V_k S_k,
U_k = X D_k / c_k (utilisation law), the energy per transaction is

    E_tx = sum_k P_busy,k D_k + sum_k c_k P_idle,k (1 - U_k) / X     [J]

the busy energy the transaction itself causes plus its share of the idle
energy.  Efficiency is its inverse, transactions per joule, which is the
same number as TPS per watt, X / sum_k P_k.

The law
-------
Electric energy is the time integral of power, E = int P(t) dt; with power
constant in each state it is E = P x T per state (the all-flash energy
study, :mod:`qmodels.cases.afa`, eq. "E = P x T", computes every device's energy
this way from its measured busy time and the data-sheet power of its
Table 1).  Everything here is that law applied per state, with the state
times taken from a queueing solution: busy time = U x T per server
(Denning & Buzen 1978, the utilisation law U = X S / c; Lazowska et al.,
QSP 1984, sec. 3.2.1).

Any result works: an analytic :class:`~qmodels.results.Result`, a symbolic
one (sympy expressions in, expressions out), or a simulated one whose
figures carry ``.mean`` (their means are used).

References
----------
.. [AFA] The all-flash energy paper, modelled in :mod:`qmodels.cases.afa`: E = P x T
   and Table 1, device power read/write: HDD 6.8/6.8 W, SATA SSD 2.1/3.7 W,
   NVMe 9/12 W, NVDIMM-N 2/2 W.
.. [QSP] E. D. Lazowska, J. Zahorjan, G. S. Graham & K. C. Sevcik,
   *Quantitative System Performance*, Prentice-Hall 1984, sec. 3.2
   (utilisation law, service demand law D = U / X).
.. [BH] L. A. Barroso & U. Hoelzle, "The case for energy-proportional
   computing", IEEE Computer 40(12), 2007 (idle power and efficiency at
   low utilisation: why the idle share matters).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._format import fmt, format_table, note_lines
from .._validate import check_fraction, check_real, is_symbolic
from ..errors import InvalidValueError, UnknownNameError
from ..model.network import Delay, Power
from ..results import FrameReport

__all__ = ["energy", "EnergyReport", "energy_law", "device_energy", "busy_power"]


def _mean(v):
    """The mean of a simulated estimate (an object with a ``.mean``
    attribute that is not a method), else the value itself."""
    m = getattr(v, "mean", None)
    if m is not None and not callable(m):
        return m
    return v




def energy_law(power, time):
    """E = P x T: joules from watts held for seconds.

    ``power`` in W, ``time`` in s (numbers or sympy expressions).  The
    definition of electric energy for constant power, E = int P dt
    ([AFA] eq. E = P x T).
    """
    p = check_real(power, "power")
    t = check_real(time, "time")
    return p * t


def busy_power(power: Power, read_fraction=None):
    """Busy power in W, mixing read and write power by ``read_fraction``.

    P_busy = f P_read + (1 - f) P_write, where an unset read or write power
    falls back to ``power.busy``; with ``read_fraction=None`` it is
    ``power.busy``.
    """
    if not isinstance(power, Power):
        raise InvalidValueError(f"power must be a qmodels.model.Power, got {power!r}")
    if read_fraction is None:
        return power.busy
    f = check_fraction(read_fraction, "read_fraction")
    pr = power.busy if power.read is None else power.read
    pw = power.busy if power.write is None else power.write
    return f * pr + (1 - f) * pw


def device_energy(power: Power, busy_time, idle_time=0.0, *, read_fraction=None):
    """Energy of one device, J: P_busy x busy_time + P_idle x idle_time.

    E = P x T applied per state ([AFA]); times in s, power in W.
    ``read_fraction`` splits the busy time between read and write power
    (see :func:`busy_power`).
    """
    tb = check_real(busy_time, "busy_time")
    ti = check_real(idle_time, "idle_time")
    return energy_law(busy_power(power, read_fraction), tb) + energy_law(power.idle, ti)


@dataclass(frozen=True)
class EnergyReport(FrameReport):
    """Energy figures of one solved network.

    Per device (dicts keyed by station name): ``servers``, ``utilization``
    U (per server), ``busy_power`` and ``idle_power`` (W per server),
    ``power`` the mean power drawn c [P_b U + P_i (1 - U)] (W), and, when a
    period was given, ``busy_energy``, ``idle_energy``, ``energy`` (J).

    Totals: ``total_power`` (W); ``throughput`` X (transactions/s);
    ``period`` T (s) and ``total_energy`` (J) when a period was given;
    ``transactions`` (completed in the period: given, or X T);
    ``energy_per_transaction`` (J); ``energy_per_byte`` (J/B) when bytes
    per transaction were given; ``transactions_per_joule`` and
    ``tps_per_watt`` (the same number in different units).
    """

    stations: tuple
    servers: Mapping
    utilization: Mapping
    busy_power: Mapping
    idle_power: Mapping
    power: Mapping
    busy_energy: Mapping | None
    idle_energy: Mapping | None
    energy: Mapping | None
    total_power: Any
    throughput: Any
    period: Any
    total_energy: Any
    transactions: Any
    energy_per_transaction: Any
    energy_per_byte: Any
    transactions_per_joule: Any
    tps_per_watt: Any
    notes: tuple = field(default=())
    #: the label of the result the energy was computed from (E = P x T is
    #: exact given U and X; the figures are as exact as that result)
    method: str = ""
    exactness: str = ""
    assumptions: tuple = ()
    warnings: tuple = ()
    error: Any = None

    def to_frame(self):
        """A pandas DataFrame, one row per device: c, U, P_busy, P_idle,
        P [W], share of power, E_tx [J per transaction], and E_busy,
        E_idle, E [J] when a period was given."""
        import pandas as pd

        rows = []
        for s in self.stations:
            row = {
                "station": s,
                "c": self.servers[s],
                "U": self.utilization[s],
                "P_busy": self.busy_power[s],
                "P_idle": self.idle_power[s],
                "P": self.power[s],
                "share": _div(self.power[s], self.total_power),
                "E_tx": _div(self.power[s], self.throughput),
            }
            if self.energy is not None:
                row.update(E_busy=self.busy_energy[s], E_idle=self.idle_energy[s],
                           E=self.energy[s])
            rows.append(row)
        return pd.DataFrame(rows).set_index("station")

    def __repr__(self):
        head = ["device", "c", "U", "P_busy [W]", "P_idle [W]", "P [W]"]
        if self.energy is not None:
            head.append("E [J]")
        rows = []
        for s in self.stations:
            c = self.servers[s]
            row = [s, "inf" if c == math.inf else str(c), self.utilization[s],
                   self.busy_power[s], self.idle_power[s], self.power[s]]
            if self.energy is not None:
                row.append(self.energy[s])
            rows.append(row)
        lines = ["EnergyReport", format_table(head, rows), ""]
        lines.append(f"total power {fmt(self.total_power)} W at X = "
                     f"{fmt(self.throughput)} transactions/s")
        if self.period is not None:
            lines.append(f"over T = {fmt(self.period)} s: {fmt(self.total_energy)} J for "
                         f"{fmt(self.transactions)} transactions")
        lines.append(f"energy per transaction {fmt(self.energy_per_transaction)} J; "
                     f"{fmt(self.transactions_per_joule)} transactions/J "
                     f"(= TPS per watt)")
        if self.energy_per_byte is not None:
            lines.append(f"energy per byte {fmt(self.energy_per_byte)} J/B")
        lines += note_lines(self.notes)
        return "\n".join(lines)


def _div(a, b):
    if is_symbolic(a) or is_symbolic(b):
        return a / b
    if b == 0:
        return math.inf if a > 0 else 0.0
    return a / b


def _energy_options(names, power, read_fraction, period, transactions, bytes_per_transaction):
    """Checked options of :func:`energy`: (power, read_fraction, T, tx, bytes)."""
    power = dict(power or {})
    read_fraction = dict(read_fraction or {})
    for label, mapping in (("power", power), ("read_fraction", read_fraction)):
        for s in mapping:
            if s not in names:
                raise UnknownNameError(f"energy: {label} names unknown station {s!r}")
    for s, p in power.items():
        if not isinstance(p, Power):
            raise InvalidValueError(f"energy: power for station {s!r} must be a Power, got {p!r}")
    T = None if period is None else check_real(period, "period", allow_zero=False)
    if transactions is not None and T is None:
        raise InvalidValueError(
            f"energy: transactions={transactions!r} needs the period they were completed in"
        )
    tx = None if transactions is None else check_real(transactions, "transactions",
                                                        allow_zero=False)
    nbytes = None if bytes_per_transaction is None else check_real(
        bytes_per_transaction, "bytes_per_transaction", allow_zero=False)
    return power, read_fraction, T, tx, nbytes


def _transaction_rate(result, cnames, cls, notes):
    """X in transactions per second: the named class, the only class, or
    the sum over all classes (with a note)."""
    if cls is not None:
        if cls not in cnames:
            raise UnknownNameError(f"energy: unknown class {cls!r}")
        return _mean(result.throughput[cls])
    if len(cnames) == 1:
        return _mean(result.throughput[cnames[0]])
    X = 0
    for c in cnames:
        X = X + _mean(result.throughput[c])
    notes.append("transactions are the completions of all classes together "
                 f"({', '.join(cnames)}); name cls= to count one class")
    return X


def _station_power(net, result, power, read_fraction, notes):
    """Per station with a power: (names, servers, U, P_busy, P_idle, P) with
    P_k = c_k [P_busy U + P_idle (1 - U)], or P_busy U at a delay."""
    stations, servers, U, Pb, Pi, P = [], {}, {}, {}, {}, {}
    for st in net.stations:
        pw = power.get(st.name, st.power)
        if pw is None:
            if st.name in read_fraction:
                raise InvalidValueError(
                    f"energy: station {st.name!r} has a read_fraction but no power"
                )
            continue
        f = read_fraction.get(st.name)
        if f is not None and pw.read is None and pw.write is None:
            raise InvalidValueError(
                f"energy: station {st.name!r} has read_fraction {f!r} but its power gives "
                "no read or write value"
            )
        u = _mean(result.utilization[st.name])
        pb = busy_power(pw, f)
        stations.append(st.name)
        U[st.name] = u
        Pb[st.name] = pb
        if isinstance(st, Delay):
            servers[st.name] = math.inf
            Pi[st.name] = 0
            P[st.name] = pb * u
            if not (pw.idle == 0):
                notes.append(f"delay station {st.name!r}: idle power ignored (infinite servers)")
        else:
            c = st.servers
            servers[st.name] = c
            Pi[st.name] = pw.idle
            P[st.name] = c * (pb * u + pw.idle * (1 - u))
    if not stations:
        raise InvalidValueError(
            "energy: no station has a power; give Power(...) on the stations or power={...}"
        )
    return stations, servers, U, Pb, Pi, P


def _station_energy(stations, servers, U, Pb, Pi, T):
    """Busy, idle and total energy per station over T: E = P x T per state."""
    Eb, Ei, E = {}, {}, {}
    for s in stations:
        c = servers[s]
        if c == math.inf:
            Eb[s] = Pb[s] * U[s] * T
            Ei[s] = 0
        else:
            Eb[s] = c * Pb[s] * U[s] * T
            Ei[s] = c * Pi[s] * (1 - U[s]) * T
        E[s] = Eb[s] + Ei[s]
    return Eb, Ei, E


def energy(result, *, period=None, transactions=None, bytes_per_transaction=None,
           read_fraction: Mapping | None = None, power: Mapping | None = None,
           cls: str | None = None) -> EnergyReport:
    """Energy per device, in total, per transaction and per byte.

    Parameters
    ----------
    result : Result or simulated result
        Any object with ``network``, ``utilization`` and ``throughput``
        figures (the shared result vocabulary); figures with a ``.mean``
        (simulation estimates) are read through their mean.
    period : s, optional
        T, the length of the observation; gives energies in J.
    transactions : optional
        Transactions completed in ``period`` (default X T); the energy per
        transaction is then E_total / transactions.
    bytes_per_transaction : B, optional
        Gives the energy per byte, E_tx / bytes.
    read_fraction : mapping station -> fraction of busy time spent reading,
        for stations whose ``Power`` has ``read`` / ``write`` values.
    power : mapping station -> Power, optional
        Overrides or supplies the stations' own ``power``.
    cls : str, optional
        The class whose throughput counts as transactions (default: the
        only class; with several classes, the sum of their throughputs).

    Returns
    -------
    EnergyReport

    Notes
    -----
    Per device, c servers at utilisation U per server:
    P_k = c_k [P_busy,k U_k + P_idle,k (1 - U_k)]  [W],  E_k = P_k T  [J]
    (E = P x T per state, [AFA]; busy time U T per server, utilisation law
    [QSP] sec. 3.2.1).  Per transaction E_tx = sum_k P_k / X, which equals
    sum_k P_busy,k D_k + sum_k c_k P_idle,k (1 - U_k) / X.  A delay
    (infinite-server) station draws busy power for each job in service
    (U = X S jobs on average) and no idle power: it has no finite set of
    idle servers.  A load-dependent station is one device busy with
    probability U = 1 - P(empty).

    Assumes power is constant within each state and that the result is a
    steady state (utilisations are long-run fractions of time).

    Examples
    --------
    >>> from qmodels.model import Network, Queue, Open, Power
    >>> from qmodels.analytic.mva import mva
    >>> net = Network([Queue("disk", 0.02, power=Power(busy=10, idle=4))],
    ...               [Open("io", 10, visits={"disk": 1})])
    >>> rep = energy(mva(net), period=100)
    >>> round(rep.total_energy, 6), round(rep.energy_per_transaction, 6)
    (520.0, 0.52)
    """
    net = getattr(result, "network", None)
    if net is None or not hasattr(net, "stations"):
        raise InvalidValueError(
            f"energy needs a result with a .network (a solved model), got {type(result).__name__}"
        )
    power, read_fraction, T, tx, nbytes = _energy_options(
        net.station_names, power, read_fraction, period, transactions, bytes_per_transaction)
    notes: list[str] = []
    X = _transaction_rate(result, net.class_names, cls, notes)
    stations, servers, U, Pb, Pi, P = _station_power(net, result, power, read_fraction, notes)
    total_P = 0
    for s in stations:
        total_P = total_P + P[s]

    Eb = Ei = E = None
    total_E = None
    n_tx = None
    if T is not None:
        Eb, Ei, E = _station_energy(stations, servers, U, Pb, Pi, T)
        total_E = total_P * T
        n_tx = tx if tx is not None else X * T
        per_tx = _div(total_E, n_tx)
        if tx is not None:
            notes.append("energy per transaction = total energy / the transactions given")
    else:
        per_tx = _div(total_P, X)
    if not is_symbolic(X) and X == 0:
        notes.append("no transactions complete (X = 0): energy per transaction is infinite")
    per_byte = None if nbytes is None else _div(per_tx, nbytes)
    tpj = _div(1, per_tx) if not (not is_symbolic(per_tx) and per_tx == math.inf) else 0.0
    tpw = _div(X if tx is None else tx / T, total_P)
    return EnergyReport(
        stations=tuple(stations), servers=servers, utilization=U, busy_power=Pb,
        idle_power=Pi, power=P, busy_energy=Eb, idle_energy=Ei, energy=E,
        total_power=total_P, throughput=X, period=T, total_energy=total_E,
        transactions=n_tx, energy_per_transaction=per_tx, energy_per_byte=per_byte,
        transactions_per_joule=tpj, tps_per_watt=tpw, notes=tuple(notes),
        method=str(getattr(result, "method", "")),
        exactness=str(getattr(result, "exactness", "") or ""),
        assumptions=tuple(getattr(result, "assumptions", ()) or ())
        + ("E = P x T with P = c [P_busy U + P_idle (1 - U)] per device",),
        warnings=tuple(getattr(result, "warnings", ()) or ()),
        error=getattr(result, "error", None),
    )
