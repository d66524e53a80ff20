"""Run the catalog and write the report (markdown tables and PNG plots).

Verdict
-------
Each figure with an exact reference (exact MVA for product-form cases, the
CTMC or an exact closed form otherwise) is a check: is the reference inside
the simulator's confidence interval?  At level 1 - alpha each check misses
with probability alpha even when the simulator is right, so with n checks
about alpha n misses are expected.  The run fails when

* the number of misses m exceeds the allowance a, the smallest number with
  P(Binomial(n, alpha) > a) <= 0.01 (a one-sided binomial test at 1 %;
  figures of one case are correlated, which widens the true spread, so the
  test is if anything lenient on clusters and strict on nothing); or
* any single reference lies more than 3 half-widths from the simulated mean
  (with 10 replications that is about 6.8 standard errors: probability
  below 1e-4 for a correct simulator), which no allowance excuses.

* one case clusters more misses than its own allowance at 1 % / (number
  of cases) (Bonferroni), the signature of one wrong feature.

A figure that is the very same estimate as another of its case (same
reference, same simulated mean and half-width: at a single-server station
that never queues, Q and U are one time average) is one check, not two:
counting it twice would let a single unlucky estimate look like a cluster.

Product-form checks decide the exit status of ``python -m validation``
(status 1 on failure); the CTMC and closed-form checks of the
non-product-form cases get the same tally, shown separately, and join the
exit status with ``--strict``.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

from ._spread import map_in_order
from .catalog import CATALOG, Case

__all__ = ["Row", "CaseReport", "run_case", "run", "allowance", "write_report"]

GROSS = 3.0  # half-widths beyond which a miss is never excused


@dataclass
class Row:
    figure: str
    exact: float | None
    exact_source: str | None
    ctmc: float | None
    sim_mean: float | None
    sim_half: float | None
    approx: dict = field(default_factory=dict)  # name -> value

    @property
    def reference(self):
        """What the approximations are judged against: exact, else CTMC,
        else the simulated mean."""
        if self.exact is not None:
            return self.exact
        if self.ctmc is not None:
            return self.ctmc
        return self.sim_mean

    @property
    def checked(self) -> bool:
        return self.exact is not None and self.sim_mean is not None

    @property
    def inside(self) -> bool | None:
        if not self.checked:
            return None
        return abs(self.exact - self.sim_mean) <= self.sim_half + 1e-12 * max(
            1.0, abs(self.exact))

    @property
    def gross(self) -> bool:
        if not self.checked:
            return False
        return abs(self.exact - self.sim_mean) > GROSS * self.sim_half + 1e-12 * max(
            1.0, abs(self.exact))

    @property
    def sim_error(self):
        if not self.checked or self.exact == 0:
            return None
        return (self.sim_mean - self.exact) / abs(self.exact)


@dataclass
class CaseReport:
    case: Case
    rows: list
    notes: list
    seconds: float
    sim_available: bool


def _rel(a, ref):
    if a is None or ref is None or ref == 0 or not math.isfinite(ref):
        return None
    return (a - ref) / abs(ref)


def run_case(case: Case, *, seed: int, fast: bool, simulate=None) -> CaseReport:
    """Solve one case every way it lists; ``simulate`` is a callable
    ``(net, seed, horizon, replications) -> result with X/R/Q/U figures of
    estimates`` (``None``: no simulation)."""
    t0 = time.perf_counter()
    net = case.build()
    notes: list[str] = []
    approx: dict[str, dict] = {}
    for name, route in case.analytic.items():
        try:
            approx[name] = route(net, case.figures)
        except Exception as exc:  # reported, never hidden
            notes.append(f"{name}: not applicable ({type(exc).__name__}: {exc})")
    exact: dict = {}
    source = None
    if case.exact == "mva":
        try:
            exact = __import__("validation.catalog", fromlist=["mva_route"]).mva_route(
                net, case.figures)
            source = "MVA"
        except Exception as exc:
            notes.append(f"exact MVA: not available ({type(exc).__name__}: {exc})")
    elif case.exact == "closed-form" and case.analytic:
        first = next(iter(case.analytic))
        exact = approx.get(first, {})
        source = first
    ctmc_vals: dict = {}
    if case.ctmc:
        from qmodels.analytic.ctmc import ctmc

        try:
            r = ctmc(net)
            for m, key in case.figures:
                try:
                    ctmc_vals[(m, key)] = float(getattr(r, m)[key])
                except KeyError:
                    pass
            notes.append(f"CTMC: {r.info['states']} states, residual {r.info['residual']:.1e}")
        except Exception as exc:
            notes.append(f"CTMC: not available ({type(exc).__name__}: {exc})")
    if case.exact == "ctmc":
        exact = ctmc_vals
        source = "CTMC"
    sim = None
    if simulate is not None:
        horizon = case.horizon / 5 if fast else case.horizon
        try:
            sim = simulate(net, seed, horizon, case.replications)
        except Exception as exc:
            notes.append(f"simulation failed ({type(exc).__name__}: {exc})")
    else:
        notes.append("simulator not available: no simulated column")
    rows = []
    for m, key in case.figures:
        est = None
        if sim is not None:
            try:
                est = getattr(sim, m)[key]
            except KeyError:
                pass
        rows.append(Row(
            figure=f"{m}[{key}]",
            exact=exact.get((m, key)),
            exact_source=source if (m, key) in exact else None,
            ctmc=ctmc_vals.get((m, key)),
            sim_mean=None if est is None else float(est.mean),
            sim_half=None if est is None else float(est.high - est.mean),
            approx={name: vals.get((m, key)) for name, vals in approx.items()},
        ))
    return CaseReport(case, rows, notes, time.perf_counter() - t0, sim is not None)


def default_simulator():
    """``qmodels.sim.simulate`` wrapped to the harness's call shape, or
    ``None`` when the simulator is not installed."""
    try:
        from qmodels.sim import simulate
    except ImportError:
        return None

    def run_sim(net, seed, horizon, replications):
        return simulate(net, seed=seed, horizon=horizon, replications=replications)

    return run_sim


def allowance(n: int, alpha: float = 0.05, p: float = 0.01) -> int:
    """Smallest a with P(Binomial(n, alpha) > a) <= p."""
    from scipy.stats import binom

    if n <= 0:
        return 0
    return int(binom.ppf(1.0 - p, n, alpha))


def run(names=None, *, seed: int = 1, fast: bool = False, simulate="default", progress=None,
        workers: int = 1, scheduler: str | None = None):
    """Run the named cases (default: all, or the fast subset) and return
    their reports; on ``workers`` processes or a dask ``scheduler``'s
    workers (:mod:`validation._spread`), each case from its own seed, so
    the reports do not depend on the split (but for their wall times)."""
    from .catalog import FAST, by_name

    if names is None:
        cases = [by_name(n) for n in FAST] if fast else list(CATALOG)
    else:
        cases = [by_name(n) for n in names]
    order = [c.name for c in CATALOG]
    tasks = [(case.name, seed * 1000 + order.index(case.name), fast, simulate)
             for case in cases]
    if simulate not in ("default", None) and (workers > 1 or scheduler):
        raise ValueError("a custom simulate callable runs in this process only")
    out = []
    for i, parts in enumerate(map_in_order(_case_task, tasks, workers, scheduler)):
        if progress:
            progress(f"[{i + 1}/{len(cases)}] {cases[i].name}")
        out.append(CaseReport(cases[i], *parts))
    return out


def _case_task(task):
    """One case by name (a case holds functions, so a worker looks it up,
    and sends back its report without it)."""
    from .catalog import by_name

    name, case_seed, fast, simulate = task
    if simulate == "default":
        simulate = default_simulator()
    rep = run_case(by_name(name), seed=case_seed, fast=fast, simulate=simulate)
    return rep.rows, rep.notes, rep.seconds, rep.sim_available


def _distinct_checks(rows):
    """Checked rows, one per distinct estimate (see the module docstring)."""
    seen, out = set(), []
    for r in rows:
        if not r.checked:
            continue
        key = (round(r.exact, 12), round(r.sim_mean, 12), round(r.sim_half or 0.0, 12))
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
    return out


def _tally(reports, kinds):
    reps = [rep for rep in reports if rep.case.kind in kinds]
    rows = [r for rep in reps for r in _distinct_checks(rep.rows)]
    n = len(rows)
    misses = [r for r in rows if not r.inside]
    gross = [r for r in rows if r.gross]
    a = allowance(n)
    # per case, Bonferroni over the cases: a cluster of misses in one case
    # is what a wrong feature (e.g. blocking) produces
    p_case = 0.01 / max(1, len(reps))
    bad_cases = []
    for rep in reps:
        ck = _distinct_checks(rep.rows)
        m = sum(not r.inside for r in ck)
        if ck and m > allowance(len(ck), p=p_case):
            bad_cases.append(rep.case.name)
    return {"checks": n, "misses": len(misses), "expected": 0.05 * n, "allowance": a,
            "gross": len(gross), "bad_cases": bad_cases,
            "passed": len(misses) <= a and not gross and not bad_cases}


def verdict(reports, strict: bool = False) -> dict:
    """Tallies of the product-form checks (``"product-form"``), of the
    CTMC / closed-form checks of non-product-form cases
    (``"non-product-form"``) and of both (``"all"``); ``passed`` is the
    product-form verdict, or both with ``strict``."""
    pf = _tally(reports, {"product-form"})
    npf = _tally(reports, {"non-product-form"})
    both = _tally(reports, {"product-form", "non-product-form"})
    passed = pf["passed"] and (npf["passed"] or not strict)
    return {**both, "product-form": pf, "non-product-form": npf, "passed": passed,
            "strict": strict}


def _f(x, digits=5):
    if x is None:
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.3e}"
    return f"{x:.{digits}g}"


def _pct(x):
    return "—" if x is None else f"{100 * x:+.2f} %"


def write_report(reports, out_dir: str, *, seed: int, fast: bool, strict: bool = False) -> dict:
    """Write ``out_dir/report.md`` and the plots; return the verdict."""
    os.makedirs(out_dir, exist_ok=True)
    v = verdict(reports, strict)
    lines = ["# qmodels validation report", ""]
    lines.append(f"Seed {seed}; {'fast subset' if fast else 'full catalog'}; "
                 f"{len(reports)} cases.")
    if not any(rep.sim_available for rep in reports):
        lines.append("")
        lines.append("**Simulator not available**: only analytic and CTMC columns; "
                     "nothing is checked.")
    lines += ["", "## Verdict", ""]
    for label, t in (("Product-form cases (exact MVA)", v["product-form"]),
                     ("Non-product-form cases (CTMC or exact closed form)",
                      v["non-product-form"])):
        lines.append(
            f"**{label}**: {t['checks']} figures with an exact reference and a simulated "
            f"95 % interval. A correct simulator misses about {t['expected']:.1f} by "
            f"chance; allowance {t['allowance']} (P(Binomial(n, 0.05) > allowance) <= 1 %); "
            f"no reference may lie more than {GROSS:g} half-widths from the simulated mean; "
            "no case may cluster more misses than its own Bonferroni allowance (1 % over "
            "the cases). Figures of one case are correlated (X and U move together), so "
            "clusters are more likely than the binomial says: a failing case is a reason "
            "to look, and a second seed tells chance from a bug.")
        lines.append("")
        bad = ", ".join(t["bad_cases"]) or "none"
        lines.append(f"Misses: **{t['misses']}** (allowance {t['allowance']}); gross: "
                     f"**{t['gross']}**; cases with clustered misses: {bad}. "
                     f"**{'PASS' if t['passed'] else 'FAIL'}**.")
        lines.append("")
    scope = "both" if v["strict"] else "the product-form cases only (--strict: both)"
    lines.append(f"Exit status decided by {scope}: "
                 f"Verdict: **{'PASS' if v['passed'] else 'FAIL'}**.")
    lines += ["", "![simulated vs exact](exact_errors.png)", "",
              "![approximation errors](approx_errors.png)", ""]
    for rep in reports:
        c = rep.case
        lines += [f"## {c.name} ({c.kind})", "", c.description + ".", ""]
        names = list(c.analytic)
        head = ["figure", "exact", "CTMC", "simulated (mean ± half-width)", "sim error",
                "inside"] + [f"{n} (error)" for n in names] + ["verdict"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for r in rep.rows:
            sim = "—" if r.sim_mean is None else f"{_f(r.sim_mean)} ± {_f(r.sim_half, 2)}"
            ex = "—" if r.exact is None else f"{_f(r.exact)} ({r.exact_source})"
            inside = {None: "—", True: "yes", False: "no"}[r.inside]
            cells = [r.figure, ex, _f(r.ctmc), sim, _pct(r.sim_error), inside]
            for n in names:
                a = r.approx.get(n)
                cells.append("—" if a is None else f"{_f(a)} ({_pct(_rel(a, r.reference))})")
            if r.checked:
                verdict_ = "GROSS MISS" if r.gross else ("ok" if r.inside else "miss")
            else:
                verdict_ = "reported"
            cells.append(verdict_)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        for note in rep.notes:
            lines.append(f"- {note}")
        lines.append(f"- wall time {rep.seconds:.1f} s")
        lines.append("")
    lines += ["## How to read this", "",
              "*exact* is the value the simulation must contain (source in brackets); "
              "*sim error* is (simulated - exact)/exact; approximation errors are "
              "relative to the exact value, else the CTMC, else the simulated mean. "
              "See validation/README.md.", ""]
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write("\n".join(lines))
    _plots(reports, out_dir)
    return v


def _plots(reports, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(rep.case.name, r) for rep in reports for r in rep.rows if r.checked and r.exact]
    fig, ax = plt.subplots(figsize=(8, max(3, 0.18 * len(rows) + 1)))
    for i, (_, r) in enumerate(rows):
        err = (r.sim_mean - r.exact) / abs(r.exact)
        hw = r.sim_half / abs(r.exact)
        ax.errorbar(100 * err, i, xerr=100 * hw, fmt="o",
                    color="tab:blue" if r.inside else "tab:red", ms=3, capsize=2)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{n}: {r.figure}" for n, r in rows], fontsize=6)
    ax.set_xlabel("simulated - exact, % of exact (bar: 95 % half-width; red: miss)")
    ax.set_title("Simulation against exact references")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "exact_errors.png"), dpi=110)
    plt.close(fig)

    pts = []
    for rep in reports:
        for name in rep.case.analytic:
            errs = [abs(_rel(r.approx.get(name), r.reference))
                    for r in rep.rows if _rel(r.approx.get(name), r.reference) is not None]
            if errs and not (rep.case.exact == "closed-form"
                             and name == next(iter(rep.case.analytic))):
                pts.append((f"{rep.case.name}: {name}", 100 * max(errs)))
    fig, ax = plt.subplots(figsize=(8, max(3, 0.25 * len(pts) + 1)))
    if pts:
        ax.barh(range(len(pts)), [p for _, p in pts], color="tab:orange")
        ax.set_yticks(range(len(pts)))
        ax.set_yticklabels([n for n, _ in pts], fontsize=7)
    ax.set_xlabel("largest |relative error| over the case's figures, %")
    ax.set_title("Analytic approximations against the reference")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "approx_errors.png"), dpi=110)
    plt.close(fig)
