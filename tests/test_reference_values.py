"""Reference values: exact single-class MVA, the open (Jackson) solver and the
bounds against worked examples published in the textbooks.

Every number below was taken from a published text or derived by hand in
this file; none was produced by running qmodels.  Each row says where it
comes from and how it was obtained:

``[text]``
    read in the book's own text (a stored copy of the page).
``[quoted]``
    the book's figure as transcribed, with example number and page, in the
    test suite of the GNU Octave ``queueing`` package (M. Marzolla); the
    book's page itself was not available to us.
``[hand]``
    derived in this file with exact rational arithmetic
    (:class:`fractions.Fraction`) from the published model and the published
    formula, independently of qmodels.

Tolerance.  A published figure printed with d decimals is the exact value
rounded to d decimals, so it is tested at +-0.5 x 10**-d (plus 1e-12 for
binary floating point): exactly its rounding, no more.  Published figures are
kept as strings ("0.373") so the tolerance follows from how they were
printed.  Hand-derived values are exact and are tested at rel=1e-12.

Sources
-------
[Jain]  R. Jain, *The Art of Computer Systems Performance Analysis*, Wiley,
        1991: sec. 33.6 (Examples 33.7, 33.8), sec. 34.1 (Example 34.1),
        sec. 34.2 (Example 34.2, Table 34.1), sec. 34.4 (eqs. 34.8, 34.9).
[Bolch] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks
        and Markov Chains*, 2nd ed., Wiley, 2006: Examples 8.3 (p. 331),
        8.4 (p. 333), 8.7 (p. 349).
[QSP]   E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik,
        *Quantitative System Performance*, Prentice-Hall, 1984: ch. 6
        (open model, p. 113; the closed CPU/two-disk example, sec. 6.3-6.4).
[MAD]   D. A. Menasce, V. A. F. Almeida, L. W. Dowdy, *Performance by
        Design*, Prentice Hall, 2004: sec. 3.3 (Example 3.9), sec. 12.2-12.3
        (the database server example).
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

import qmodels as qm
from qmodels.analytic.bounds import bounds
from qmodels.analytic.mva import mva


def published(text: str):
    """``pytest.approx`` for a figure printed as ``text``: +-half a unit in
    its last printed decimal (its rounding), plus 1e-12 for floating point."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return pytest.approx(float(text), abs=0.5 * 10.0 ** -decimals + 1e-12)


def exact(value):
    """``pytest.approx`` for a hand-derived exact (Fraction) value."""
    return pytest.approx(float(value), rel=1e-12, abs=1e-15)


def check_all(rows):
    """Assert every (label, got, expected-approx) row; report all misses at
    once so a discrepancy shows its full extent."""
    bad = [f"{label}: got {got!r}, expected {want}" for label, got, want in rows
           if got != want]
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------------
# [Jain] Example 34.2, Table 34.1: exact MVA of a timesharing system   [text]
# ---------------------------------------------------------------------------
# Model (Example 34.2): CPU, disk A, disk B, single servers; service times per
# visit 0.125, 0.3, 0.2 s; visits per interaction 16, 10, 5; think time
# Z = 4 s; N = 1..20 users.  Table 34.1 prints, per N, the response time per
# visit at each device, the system response time, the system throughput and
# the queue length at each device, to 3 decimals.  (The Octave package quotes
# the N = 20 row as "Example 3.42 p. 577 Jain"; the example is 34.2.)

JAIN_TABLE_34_1 = {
    # N: (R_cpu, R_A, R_B, R_system, X, Q_cpu, Q_A, Q_B)
    1: ("0.125", "0.300", "0.200", "6.000", "0.100", "0.200", "0.300", "0.100"),
    2: ("0.150", "0.390", "0.220", "7.400", "0.175", "0.421", "0.684", "0.193"),
    3: ("0.178", "0.505", "0.239", "9.088", "0.229", "0.651", "1.158", "0.273"),
    4: ("0.206", "0.647", "0.255", "11.051", "0.266", "0.878", "1.721", "0.338"),
    5: ("0.235", "0.816", "0.268", "13.256", "0.290", "1.088", "2.365", "0.388"),
    17: ("0.370", "3.962", "0.300", "47.045", "0.333", "1.974", "13.195", "0.499"),
    18: ("0.372", "4.259", "0.300", "50.032", "0.333", "1.981", "14.187", "0.499"),
    19: ("0.373", "4.556", "0.300", "53.022", "0.333", "1.987", "15.181", "0.500"),
    20: ("0.373", "4.854", "0.300", "56.016", "0.333", "1.991", "16.177", "0.500"),
}


def jain_timesharing(n: int) -> qm.Network:
    return qm.Network(
        [qm.Queue("cpu", 0.125), qm.Queue("diskA", 0.3), qm.Queue("diskB", 0.2)],
        [qm.Closed("users", n, think_time=4.0,
                   visits={"cpu": 16, "diskA": 10, "diskB": 5})],
    )


@pytest.mark.parametrize("n", sorted(JAIN_TABLE_34_1))
def test_jain_example_34_2_table_34_1(n):
    r_cpu, r_a, r_b, r_sys, x, q_cpu, q_a, q_b = JAIN_TABLE_34_1[n]
    res = mva(jain_timesharing(n))
    check_all([
        ("R per visit cpu", res.R["cpu"], published(r_cpu)),
        ("R per visit diskA", res.R["diskA"], published(r_a)),
        ("R per visit diskB", res.R["diskB"], published(r_b)),
        ("R system", res.R["users"], published(r_sys)),
        ("X system", res.X["users"], published(x)),
        ("Q cpu", res.Q["cpu"], published(q_cpu)),
        ("Q diskA", res.Q["diskA"], published(q_a)),
        ("Q diskB", res.Q["diskB"], published(q_b)),
    ])


def test_jain_table_34_1_from_one_curve():
    """The same table read from one ``curve=True`` solve at N = 20: the
    population sweep must agree with the published rows too."""
    res = mva(jain_timesharing(20), curve=True)
    cur = res.curve
    rows = []
    for n, (_, _, _, r_sys, x, q_cpu, q_a, q_b) in JAIN_TABLE_34_1.items():
        rows += [
            (f"N={n} R system", cur.R[n], published(r_sys)),
            (f"N={n} X", cur.X[n], published(x)),
            (f"N={n} Q cpu", cur.Q[n, 0], published(q_cpu)),
            (f"N={n} Q diskA", cur.Q[n, 1], published(q_a)),
            (f"N={n} Q diskB", cur.Q[n, 2], published(q_b)),
        ]
    check_all(rows)


# ---------------------------------------------------------------------------
# [Jain] Example 34.1 (p. 572): an open network                      [quoted]
# ---------------------------------------------------------------------------
# Model: three single-server devices (labelled cpu, diskA, diskB here), jobs
# arriving at 3 per second; visits 16, 7, 8; service times 0.01, 0.02, 0.03 s.
# Published: utilisations 0.48, 0.42, 0.72; response time per visit 0.0192,
# 0.0345, 0.107 s.  (The Octave test labels this "Example 34.1 p. 572 Bolch
# et al."; Bolch's book has no chapter 34 -- the example number and page are
# Jain's chapter 34.)


def test_jain_example_34_1_open_network():
    net = qm.Network(
        [qm.Queue("cpu", 0.01), qm.Queue("diskA", 0.02), qm.Queue("diskB", 0.03)],
        [qm.Open("jobs", 3.0, visits={"cpu": 16, "diskA": 7, "diskB": 8})],
    )
    res = mva(net)
    check_all([
        ("U cpu", res.U["cpu"], published("0.48")),
        ("U diskA", res.U["diskA"], published("0.42")),
        ("U diskB", res.U["diskB"], published("0.72")),
        ("R per visit cpu", res.R["cpu"], published("0.0192")),
        ("R per visit diskA", res.R["diskA"], published("0.0345")),
        ("R per visit diskB", res.R["diskB"], published("0.107")),
    ])


# ---------------------------------------------------------------------------
# [QSP] ch. 6, p. 113: an open model                                 [quoted]
# ---------------------------------------------------------------------------
# Model: three single servers (a CPU and two disks: the demands 0.605, 2.1,
# 1.35 s are those of QSP's closed CPU/two-disk example below),
# lambda = 0.3 jobs/s; visits 121, 70, 50; service times 0.005, 0.03,
# 0.027 s.  Published for the CPU: U = 0.182, X = 36.3 visits/s, Q = 0.222.
# (U = 0.3 x 121 x 0.005 = 0.1815 exactly, printed 0.182: half a unit of the
# last decimal, which the rounding tolerance admits.)  The disks are checked by hand below.


def qsp_open_model() -> qm.Network:
    return qm.Network(
        [qm.Queue("cpu", 0.005), qm.Queue("disk1", 0.03), qm.Queue("disk2", 0.027)],
        [qm.Open("jobs", 0.3, visits={"cpu": 121, "disk1": 70, "disk2": 50})],
    )


def test_qsp_p113_open_model_cpu():
    res = mva(qsp_open_model())
    check_all([
        ("U cpu", res.U["cpu"], published("0.182")),
        ("X cpu", res.X["cpu"], published("36.3")),
        ("Q cpu", res.Q["cpu"], published("0.222")),
    ])


def test_qsp_p113_open_model_hand_derivation():
    """[hand] Jackson: U_k = lambda D_k, residence time D_k / (1 - U_k),
    Q_k = U_k / (1 - U_k), R = sum of residence times (QSP sec. 6.2)."""
    lam = F(3, 10)
    demands = {"cpu": 121 * F(5, 1000), "disk1": 70 * F(3, 100), "disk2": 50 * F(27, 1000)}
    # D = 0.605, 2.1, 1.35; U = 0.1815, 0.63, 0.405
    U = {k: lam * d for k, d in demands.items()}
    Q = {k: u / (1 - u) for k, u in U.items()}
    R = sum(d / (1 - U[k]) for k, d in demands.items())
    res = mva(qsp_open_model())
    rows = [(f"U {k}", res.U[k], exact(U[k])) for k in demands]
    rows += [(f"Q {k}", res.Q[k], exact(Q[k])) for k in demands]
    rows.append(("R system", res.R["jobs"], exact(R)))
    check_all(rows)


# ---------------------------------------------------------------------------
# [Bolch] Example 8.3 (p. 331): exact MVA, central-server model      [quoted]
# ---------------------------------------------------------------------------
# Model: four single-server stations, service times 0.02, 0.2, 0.4, 0.6 s,
# visit ratios 1, 0.4, 0.2, 0.1, K = 6 jobs, no think time.  Published
# (3 decimals): U, response time per visit, mean number of jobs, throughput.


def test_bolch_example_8_3():
    names = ("n1", "n2", "n3", "n4")
    net = qm.Network(
        [qm.Queue(k, s) for k, s in zip(names, (0.02, 0.2, 0.4, 0.6), strict=True)],
        [qm.Closed("jobs", 6, visits=dict(zip(names, (1, 0.4, 0.2, 0.1), strict=True)))],
    )
    res = mva(net)
    pub = {
        "U": ("0.198", "0.794", "0.794", "0.595"),
        "R": ("0.025", "0.570", "1.140", "1.244"),
        "Q": ("0.244", "2.261", "2.261", "1.234"),
        "X": ("9.920", "3.968", "1.984", "0.992"),
    }
    check_all([
        (f"{m} {k}", getattr(res, m)[k], published(v))
        for m, vals in pub.items() for k, v in zip(names, vals, strict=True)
    ])


# ---------------------------------------------------------------------------
# [Bolch] Example 8.4 (p. 333): MVA with a multi-server station      [quoted]
# and Example 8.7 (p. 349): the same network as load-dependent MVA   [quoted]
# ---------------------------------------------------------------------------
# Model: station 1 has 2 servers (service time 0.5 s), stations 2 and 3 are
# single servers (0.6 s and 0.8 s), station 4 is an infinite server (1 s);
# visit ratios 1, 0.5, 0.5, 1; K = 3 jobs.  Published (Ex. 8.4): mean number
# of jobs 0.624, 0.473, 0.686, 1.217; throughput 1.218, 0.609, 0.609, 1.218;
# utilisation per server of stations 1-3: 0.304, 0.365, 0.487.  Example 8.7
# solves the same network with station 1 as rates mu(j) = 2, 4, 4 and station
# 4 as mu(j) = 1, 2, 3 and prints response times per visit 0.512, 0.776,
# 1.127, 1 (and the same mean numbers of jobs).  Example 8.7 prints the rate
# of station 2 as 1.667 (= 1/0.6 rounded); we use 0.6 s, the model of 8.4.

BOLCH_8_4_Q = ("0.624", "0.473", "0.686", "1.217")
BOLCH_8_4_X = ("1.218", "0.609", "0.609", "1.218")
BOLCH_8_7_R = ("0.512", "0.776", "1.127", "1")
BOLCH_NAMES = ("n1", "n2", "n3", "n4")
BOLCH_VISITS = dict(zip(BOLCH_NAMES, (1, 0.5, 0.5, 1), strict=True))

# Two printed figures miss the exact solution by more than their rounding.
# The exact value is fixed independently below (normalising constant by
# enumeration of all 20 states, in rationals), and agrees with qmodels to
# 1e-15, so these look like rounding carried through the book's hand
# iteration rather than a solver fault; they stay as published, xfail(strict).
BOLCH_8_4_X_REASON = (
    "Bolch Ex. 8.4 prints X_1 = X_4 = 1.218; the exact product-form value is "
    "1.2174606 (qmodels and the rational enumeration below agree to 1e-15), "
    "0.00054 away, beyond the +-0.0005 of 3-decimal rounding.  The book's own "
    "Q_4 = 1.217 (= X_4 x 1 s at the infinite server) agrees with 1.2175, not "
    "1.218.  With the rounded rate mu_2 = 1.667 (used in Ex. 8.7) instead of "
    "1/0.6 the exact X is 1.2175040, which does print as 1.218: the book may "
    "have used that rate here too."
)
BOLCH_8_7_R_REASON = (
    "Bolch Ex. 8.7 prints R_2 = 0.776 s per visit; the exact value is 0.7768173 "
    "(qmodels and the rational enumeration agree to 1e-15), 0.00082 away, beyond "
    "the +-0.0005 of 3-decimal rounding.  The book's own Q_2 = 0.473 and "
    "X_2 = 0.609 give 0.7767; with its rounded rate mu_2 = 1.667 the exact value "
    "is 0.7766285, which still prints as 0.777."
)


def bolch_8_4() -> qm.Network:
    return qm.Network(
        [qm.Queue("n1", 0.5, servers=2), qm.Queue("n2", 0.6), qm.Queue("n3", 0.8),
         qm.Delay("n4", 1.0)],
        [qm.Closed("jobs", 3, visits=BOLCH_VISITS)],
    )


def bolch_8_7() -> qm.Network:
    return qm.Network(
        [qm.LoadDependent("n1", 0.5, rate_multipliers=(1, 2, 2)),
         qm.Queue("n2", 0.6), qm.Queue("n3", 0.8),
         qm.LoadDependent("n4", 1.0, rate_multipliers=(1, 2, 3))],
        [qm.Closed("jobs", 3, visits=BOLCH_VISITS)],
    )


def test_bolch_example_8_4_multiserver():
    res = mva(bolch_8_4())
    rows = [(f"Q {k}", res.Q[k], published(v))
            for k, v in zip(BOLCH_NAMES, BOLCH_8_4_Q, strict=True)]
    rows += [(f"X {k}", res.X[k], published(v))
             for k, v in zip(BOLCH_NAMES[1:3], BOLCH_8_4_X[1:3], strict=True)]
    rows += [(f"U {k}", res.U[k], published(v))
             for k, v in zip(BOLCH_NAMES[:3], ("0.304", "0.365", "0.487"), strict=True)]
    check_all(rows)


@pytest.mark.xfail(strict=True, reason=BOLCH_8_4_X_REASON)
def test_bolch_example_8_4_throughput_as_printed():
    res = mva(bolch_8_4())
    check_all([("X n1", res.X["n1"], published(BOLCH_8_4_X[0])),
               ("X n4", res.X["n4"], published(BOLCH_8_4_X[3]))])


def test_bolch_example_8_7_load_dependent():
    res = mva(bolch_8_7())
    rows = [(f"Q {k}", res.Q[k], published(v))
            for k, v in zip(BOLCH_NAMES, BOLCH_8_4_Q, strict=True)]
    rows += [(f"R per visit {k}", res.R[k], published(v))
             for k, v in zip(BOLCH_NAMES, BOLCH_8_7_R, strict=True) if k != "n2"]
    check_all(rows)


@pytest.mark.xfail(strict=True, reason=BOLCH_8_7_R_REASON)
def test_bolch_example_8_7_response_time_n2_as_printed():
    res = mva(bolch_8_7())
    check_all([("R per visit n2", res.R["n2"], published(BOLCH_8_7_R[1]))])


def _bolch_exact():
    """[hand] The Bolch 8.4 network solved exactly, without MVA: the product
    form (Baskett, Chandy, Muntz & Palacios 1975) by enumerating every
    state (n1..n4) with n1 + ... + n4 = K, in rationals.  Station factors with demand
    D = V S: 2-server station D^n / prod_{i<=n} min(i, 2); single server
    D^n; infinite server D^n / n!.  X_1 = G(2) / G(3); Q_k = E[n_k]."""
    from itertools import product
    from math import factorial

    demand = (F(1, 2), F(1, 2) * F(3, 5), F(1, 2) * F(4, 5), F(1))

    def factor(k, n):
        if k == 0:
            beta = 1
            for i in range(1, n + 1):
                beta *= min(i, 2)
            return demand[0] ** n / beta
        if k == 3:
            return demand[3] ** n / factorial(n)
        return demand[k] ** n

    def g(pop):
        total, mean = F(0), [F(0)] * 4
        for state in product(range(pop + 1), repeat=4):
            if sum(state) != pop:
                continue
            w = F(1)
            for k, n in enumerate(state):
                w *= factor(k, n)
            total += w
            mean = [m + n * w for m, n in zip(mean, state, strict=True)]
        return total, [m / total for m in mean]

    g3, q = g(3)
    g2, _ = g(2)
    x = g2 / g3                                   # = 1.21746063...
    visits = (F(1), F(1, 2), F(1, 2), F(1))
    return x, q, [qk / (x * v) for qk, v in zip(q, visits, strict=True)]


@pytest.mark.parametrize("build", [bolch_8_4, bolch_8_7], ids=["servers=2", "load-dependent"])
def test_bolch_8_4_network_hand_derivation(build):
    x, q, r = _bolch_exact()
    res = mva(build())
    rows = [("X n1", res.X["n1"], exact(x)), ("X jobs", res.X["jobs"], exact(x))]
    rows += [(f"Q {k}", res.Q[k], exact(v)) for k, v in zip(BOLCH_NAMES, q, strict=True)]
    rows += [(f"R per visit {k}", res.R[k], exact(v)) for k, v in zip(BOLCH_NAMES, r, strict=True)]
    check_all(rows)


# ---------------------------------------------------------------------------
# [MAD] sec. 12.2-12.3: the database server example                  [text]
# ---------------------------------------------------------------------------
# Model: CPU, fast disk, slow disk (single servers); service times 10, 15,
# 30 s; visits 1, 0.5, 0.5; N = 2 customers, no think time.  Published
# (sec. 12.2, from the six-state Markov chain of ch. 11, state probabilities
# in 115ths): mean customers 0.5913, 0.4174, 0.9913, summing to 2.0000.


def test_menasce_database_server_two_customers():
    net = qm.Network(
        [qm.Queue("cpu", 10.0), qm.Queue("fast_disk", 15.0), qm.Queue("slow_disk", 30.0)],
        [qm.Closed("tx", 2, visits={"cpu": 1, "fast_disk": 0.5, "slow_disk": 0.5})],
    )
    res = mva(net)
    check_all([
        ("Q cpu", res.Q["cpu"], published("0.5913")),
        ("Q fast_disk", res.Q["fast_disk"], published("0.4174")),
        ("Q slow_disk", res.Q["slow_disk"], published("0.9913")),
        ("Q total", res.Q["tx"], published("2.0000")),
    ])


# ---------------------------------------------------------------------------
# [QSP] ch. 6: the CPU / two-disk terminal example, N = 1..3         [hand]
# ---------------------------------------------------------------------------
# Model: demands CPU 0.605 s, disk1 2.1 s, disk2 1.35 s, think time 15 s.
# We could not read QSP's exact-MVA table for this example.  The figures that
# circulate for it (X = 0.1510, Q = 0.0973, 0.4021, 0.2359 at N = 3, "p. 117"
# / "p. 119") are QSP's *approximate* (Schweitzer) MVA results -- the Octave
# package uses them to test its approximate solver -- so they are not a
# reference for exact MVA.  Instead the exact recursion (QSP Algorithm 6.1)
# is written out here in rationals:
#     R_k(n) = D_k (1 + Q_k(n-1)),  X(n) = n / (Z + sum_k R_k(n)),
#     Q_k(n) = X(n) R_k(n),  Q_k(0) = 0.
# Rounded results: X = 0.05248, 0.10309, 0.15152; R = 4.0550, 4.4013,
# 4.7998; Q(3) = 0.09757, 0.39466, 0.23503.


def _hand_mva(demands, think, population):
    q = [F(0)] * len(demands)
    out = []
    for n in range(1, population + 1):
        r = [d * (1 + qk) for d, qk in zip(demands, q, strict=True)]
        x = n / (think + sum(r))
        q = [x * rk for rk in r]
        out.append((x, sum(r), list(q)))
    return out


QSP_DEMANDS = (F("0.605"), F("2.1"), F("1.35"))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_qsp_chapter_6_terminal_example_hand_derivation(n):
    x, r, q = _hand_mva(QSP_DEMANDS, F(15), n)[-1]
    net = qm.Network(
        [qm.Queue("cpu", 0.0), qm.Queue("disk1", 0.0), qm.Queue("disk2", 0.0)],
        [qm.Closed("users", n, think_time=15.0,
                   demands={"cpu": 0.605, "disk1": 2.1, "disk2": 1.35})],
    )
    res = mva(net)
    rows = [("X", res.X["users"], exact(x)), ("R", res.R["users"], exact(r))]
    rows += [(f"Q {k}", res.Q[k], exact(v))
             for k, v in zip(("cpu", "disk1", "disk2"), q, strict=True)]
    rows += [(f"U {k}", res.U[k], exact(x * d))
             for k, d in zip(("cpu", "disk1", "disk2"), QSP_DEMANDS, strict=True)]
    check_all(rows)


def test_hand_mva_reproduces_jain_table_34_1():
    """The hand recursion itself checked against a published table (Jain
    Table 34.1, N = 20), so the [hand] rows rest on a verified recursion."""
    x, r, q = _hand_mva((F(2), F(3), F(1)), F(4), 20)[-1]
    assert float(r) == published("56.016")
    assert float(x) == published("0.333")
    assert [float(v) for v in q] == [published("1.991"), published("16.177"),
                                     published("0.500")]


# ---------------------------------------------------------------------------
# [Jain] Examples 33.7 and 33.8: asymptotic bounds                   [text]
# ---------------------------------------------------------------------------
# Model (Example 33.2's timesharing system): D_CPU = 5, D_A = 4, D_B = 3 s,
# Z = 18 s.  Published: D = 12, D_max = 5 (CPU the bottleneck),
# X(N) <= min(1/5, N/30), R(N) >= max(12, 5N - 18), the knee at N* = 6
# ("more than six users ... there will certainly be queueing"); and
# (Ex. 33.8) R > 100 s is certain once N >= 23.6, so at most 23 users can be
# promised R < 100 s.


def jain_33_2(n: int) -> qm.Network:
    return qm.Network(
        [qm.Queue("cpu", 0.0), qm.Queue("diskA", 0.0), qm.Queue("diskB", 0.0)],
        [qm.Closed("users", n, think_time=18.0,
                   demands={"cpu": 5.0, "diskA": 4.0, "diskB": 3.0})],
    )


def test_jain_example_33_7_knee_and_bottleneck():
    b = bounds(jain_33_2(10))
    assert b.saturation_population == pytest.approx(6.0, rel=1e-12)
    assert qm.saturation_population(jain_33_2(10)) == pytest.approx(6.0, rel=1e-12)
    assert b.bottleneck == ("cpu",)
    assert b.max_throughput == pytest.approx(1 / 5, rel=1e-12)


@pytest.mark.parametrize("n", [1, 3, 6, 10, 23, 24, 40])
def test_jain_example_33_7_asymptotic_bounds(n):
    x_lo, x_hi, r_lo, r_hi = bounds(jain_33_2(n)).aba
    assert x_hi == pytest.approx(min(1 / 5, n / 30), rel=1e-12)
    assert r_lo == pytest.approx(max(12, 5 * n - 18), rel=1e-12)


def test_jain_example_33_8_users_for_100s():
    # R >= 5N - 18 > 100  <=>  N > 23.6: 23 users may still meet 100 s, 24 cannot.
    assert bounds(jain_33_2(23)).response_time_lower < 100
    assert bounds(jain_33_2(24)).response_time_lower > 100


# ---------------------------------------------------------------------------
# [Jain] sec. 34.4, eqs. 34.8-34.9: balanced job bounds              [hand]
# ---------------------------------------------------------------------------
# For the Example 34.2 system (D = 2, 3, 1 s; Z = 4 s; D = 6, D_max = 3,
# D_avg = 2) the balanced job bounds of Zahorjan et al. 1982 (Jain eqs.
# 34.8-34.9; QSP Table 5.3) are worked out here in rationals, e.g. at N = 5:
#   X >= 5 / (6 + 4 + 4*3/(1 + 4/30))      = 17/70   = 0.24286
#   X <= min(1/3, 5 / (6 + 4 + 4*2/(1 + 4/6))) = 1/3  (5/14.8 = 0.3378 > 1/3)
#   R >= max(5*3 - 4, 6 + 4*2/(1 + 4/6))   = 11
#   R <= 6 + 4*3/(1 + 4/30)                = 282/17  = 16.588
# and the published exact values of Table 34.1 must lie inside the bounds.


def _hand_bjb(demands, think, n):
    d, dmax = sum(demands), max(demands)
    davg = d / len(demands)
    x_lo = n / (d + think + (n - 1) * dmax / (1 + think / (n * d)))
    x_hi = min(1 / dmax, n / (d + think + (n - 1) * davg / (1 + think / d)))
    r_lo = max(n * dmax - think, d + (n - 1) * davg / (1 + think / d))
    r_hi = d + (n - 1) * dmax / (1 + think / (n * d))
    return x_lo, x_hi, r_lo, r_hi


def jain_34_2_demands(n: int) -> qm.Network:
    return qm.Network(
        [qm.Queue("cpu", 0.0), qm.Queue("diskA", 0.0), qm.Queue("diskB", 0.0)],
        [qm.Closed("users", n, think_time=4.0,
                   demands={"cpu": 2.0, "diskA": 3.0, "diskB": 1.0})],
    )


def test_hand_bjb_worked_values_at_n5():
    """The hand formula reproduces the fractions written out above."""
    assert _hand_bjb((F(2), F(3), F(1)), F(4), 5) == (F(17, 70), F(1, 3), F(11), F(282, 17))


@pytest.mark.parametrize("n", [1, 2, 5, 10, 20])
def test_jain_balanced_job_bounds_hand_derivation(n):
    want = _hand_bjb((F(2), F(3), F(1)), F(4), n)
    got = bounds(jain_34_2_demands(n)).bjb
    names = ("X lower", "X upper", "R lower", "R upper")
    check_all([(name, g, exact(w)) for name, g, w in zip(names, got, want, strict=True)])


@pytest.mark.parametrize("n", sorted(JAIN_TABLE_34_1))
def test_bounds_enclose_jain_table_34_1(n):
    """Published exact values (Table 34.1) inside our ABA/BJB bounds, allowing
    each printed value its rounding."""
    _, _, _, r_sys, x, _, _, _ = JAIN_TABLE_34_1[n]
    b = bounds(jain_34_2_demands(n))
    half = 0.5e-3 + 1e-12
    assert b.throughput_lower - half <= float(x) <= b.throughput_upper + half
    assert b.response_time_lower - half <= float(r_sys) <= b.response_time_upper + half


# ---------------------------------------------------------------------------
# [MAD] sec. 3.3, Example 3.9: the bottleneck                        [text]
# ---------------------------------------------------------------------------
# Model: the database server of Example 3.2 with demands CPU 0.092 s, disk1
# 0.079 s, disk2 0.108 s, disk3 0.142 s.  Published: disk 3 reaches 100 %
# utilisation before any other device -- it is the bottleneck.  The maximum
# throughput 1/0.142 = 7.042 tx/s follows by hand from the published demand.


def test_menasce_example_3_9_bottleneck():
    demands = {"cpu": 0.092, "disk1": 0.079, "disk2": 0.108, "disk3": 0.142}
    net = qm.Network([qm.Queue(k, 0.0) for k in demands],
                     [qm.Closed("tx", 50, demands=demands)])
    b = bounds(net)
    assert b.bottleneck == ("disk3",)
    assert qm.bottleneck(net) == ("disk3",)
    assert b.max_throughput == exact(1 / F("0.142"))
    assert b.aba[1] == exact(1 / F("0.142"))  # N = 50 is far past N*
    # the geometric and proportional bounds are tighter than 1/Dmax
    assert b.throughput_upper <= b.aba[1]
