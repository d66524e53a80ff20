"""Simulated monitoring data with known service demands, for
:func:`qmodels.estimate_demands`.

``python -m validation.monitoring`` rewrites ``qmodels/examples/monitoring.csv``
(seed 1, 60 intervals of 120 s); ``--seed S --intervals T --out FILE`` for
others.  The same seed gives the same file bit for bit (the simulator is
reproducible and the load draws come from the seed).

The system: three stations (``cpu`` with 2 servers, ``disk``, ``net``) and
two monitored open classes, ``web`` and ``batch``, whose arrival rates vary
from one interval to the next (as a day's load does), plus an unmonitored
``cron`` class at a constant 0.5 requests/s: the busy time no monitored
class explains, which the regression's background term should find
(B_k = 0.5 x D_cron,k busy servers).  Each interval is one simulation
(:func:`qmodels.simulate`, two replications of 120 s after a 10 s warm-up),
and its row records the measured class throughputs ``X[web]``, ``X[batch]``
(completions per second) and station utilisations ``U[cpu]`` (per server),
``U[disk]``, ``U[net]``, as a monitoring tool would.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

#: the truth the estimate is judged against: seconds per request
DEMANDS = {
    "web": {"cpu": 0.020, "disk": 0.010, "net": 0.004},
    "batch": {"cpu": 0.010, "disk": 0.050, "net": 0.0},
}
CRON_RATE = 0.5
CRON = {"cpu": 0.040, "disk": 0.020, "net": 0.0}
SERVERS = {"cpu": 2, "disk": 1, "net": 1}
#: busy servers no monitored class explains, per station
BACKGROUND = {s: CRON_RATE * d for s, d in CRON.items()}
RATES = {"web": (5.0, 30.0), "batch": (1.0, 8.0)}
STATIONS = ("cpu", "disk", "net")
OUT = Path(__file__).resolve().parents[1] / "qmodels" / "examples" / "monitoring.csv"


def network(rates: dict):
    import qmodels as qm

    stations = [qm.Queue(s, 0.01, servers=SERVERS[s]) for s in STATIONS]
    classes = [qm.Open(c, rates[c], demands={s: d for s, d in DEMANDS[c].items() if d > 0})
               for c in DEMANDS]
    classes.append(qm.Open("cron", CRON_RATE,
                           demands={s: d for s, d in CRON.items() if d > 0}))
    return qm.Network(stations, classes, name="monitored system")


def monitoring(seed: int = 1, intervals: int = 60, horizon: float = 120.0):
    """The monitoring frame (pandas) of ``intervals`` simulated intervals."""
    import pandas as pd

    import qmodels as qm

    root = np.random.SeedSequence(seed)
    load_seq, *sim_seqs = root.spawn(intervals + 1)
    rng = np.random.default_rng(load_seq)
    rows = []
    for t in range(intervals):
        rates = {c: float(rng.uniform(*RATES[c])) for c in DEMANDS}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", qm.SimulationWarning)
            r = qm.simulate(network(rates), seed=sim_seqs[t], horizon=horizon + 10.0,
                            warmup=10.0, replications=2, progress=False)
        row = {"interval": t}
        for c in DEMANDS:
            row[f"X[{c}]"] = round(float(r.X[c].mean), 6)
        for s in STATIONS:
            row[f"U[{s}]"] = round(float(r.U[s].mean), 6)
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--intervals", type=int, default=60)
    p.add_argument("--horizon", type=float, default=120.0)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    df = monitoring(args.seed, args.intervals, args.horizon)
    header = (f"# simulated monitoring data: python -m validation.monitoring --seed {args.seed} "
              f"--intervals {args.intervals} --horizon {args.horizon:g}\n"
              f"# true demands (s): {DEMANDS}; background busy servers: {BACKGROUND}; "
              f"servers: {SERVERS}\n")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(header)
        df.to_csv(f, index=False)
    print(f"wrote {args.out} ({len(df)} intervals)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
