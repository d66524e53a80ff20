"""Bit-for-bit pins of the simulator on the newer station kinds.

Priority stations (``prio``, ``prio-pr``, ``lcfs-pr``) and fork-join, which
``tests/test_sim_pins.py`` does not cover.  The numbers in ``PINNED`` were
computed by the event loop BEFORE its priority stations stopped scanning the
job table for the next job to serve and before ``fj_short`` stopped walking
the free list (commit 354d2e6), with this module's ``_figures``.  Those changes
must not change a single bit: same service order, same ties broken the same
way, same stream of uniforms.  They are not reference values for the models
(those are in test_priority.py / test_forkjoin.py); they pin the code.

The cases are chosen to exercise the ties: closed jobs with no think time all
arrive at time 0; several tasks of one fork enter one station at once;
deterministic service times make arrivals coincide; a full station blocks a
job that holds a priority server.
"""
import pytest

import qmodels as qm
from tests.test_sim_pins import _figures as _pinned_figures


def cases():
    """(name, network, options) of the pinned runs."""
    # three levels on a single-server non-preemptive priority queue, open + closed
    yield "prio3_mixed", qm.Network(
        [qm.Queue("cpu", 0.1, discipline="prio"), qm.Queue("disk", 0.15)],
        [qm.Open("hi", 2.0, visits={"cpu": 1.0, "disk": 1.0}, priority=0),
         qm.Open("mid", 1.5, visits={"cpu": 2.0}, priority=1),
         qm.Closed("lo", 5, visits={"cpu": 3.0, "disk": 1.0}, priority=2)]), \
        dict(horizon=300.0, replications=2, warmup=10.0)
    # preemptive-resume with two servers, closed with Z = 0 (ties at t = 0),
    # deterministic and Erlang service, a class with the same level as another
    yield "prio_pr_2srv", qm.Network(
        [qm.Queue("pr", 0.2, servers=2, discipline="prio-pr", distribution=qm.Erlang(2)),
         qm.Queue("d", 0.1, distribution=qm.Deterministic())],
        [qm.Closed("a", 3, visits={"pr": 1.0, "d": 1.0}, priority=0),
         qm.Closed("b", 4, visits={"pr": 2.0, "d": 1.0}, priority=1),
         qm.Closed("c", 2, visits={"pr": 1.0, "d": 0.5}, priority=1)]), \
        dict(horizon=300.0, replications=2, warmup=10.0)
    # LCFS preemptive resume and blocking: a full station downstream holds the
    # job that was served at the priority station
    yield "lcfs_pr_block", qm.Network(
        [qm.Queue("l", 0.3, discipline="lcfs-pr", distribution=qm.HyperExponential(2.0)),
         qm.Queue("s", 0.25, capacity=2, distribution=qm.Deterministic()),
         qm.Queue("np", 0.2, discipline="prio")],
        [qm.Closed("x", 6, routing={"l": {"s": 1.0}, "s": {"np": 1.0}, "np": {"l": 1.0}},
                   priority=1),
         qm.Open("y", 0.8, routing={"source": {"l": 1.0}, "l": {"np": 1.0},
                                    "np": {"sink": 1.0}}, priority=0)]), \
        dict(horizon=300.0, replications=2, warmup=10.0)
    # fork-join of four branches, several tasks per branch (ties at one station),
    # priority stations inside the branches (not first: flatten refuses that),
    # closed, no think time
    yield "fj4_prio", qm.Network(
        [qm.ForkJoin("fj", [["b", "a"], ["e"], ["z", "c"], ["e2", "d"]], tasks=[2, 1, 1, 3]),
         qm.Queue("a", 0.1, discipline="prio-pr"), qm.Queue("b", 0.05), qm.Queue("e", 0.2),
         qm.Queue("c", 0.1, discipline="lcfs-pr"), qm.Delay("z", 0.05),
         qm.Queue("e2", 0.02, distribution=qm.Deterministic()),
         qm.Queue("d", 0.05, discipline="prio"), qm.Queue("cpu", 0.3)],
        [qm.Closed("u", 4, visits={"fj": 1.0, "cpu": 1.0}, priority=0),
         qm.Closed("v", 3, visits={"fj": 1.0, "cpu": 0.5}, priority=1)]), \
        dict(horizon=200.0, replications=2, warmup=10.0)
    # open fork-join: the job table grows while tasks are in flight
    yield "fj_open", qm.Network(
        [qm.ForkJoin("fj", [["a"], ["b", "c"]], tasks=[3, 1]), qm.Queue("a", 0.1),
         qm.Queue("b", 0.2), qm.Delay("c", 0.3)],
        [qm.Open("o", 1.5, visits={"fj": 1.0})]), \
        dict(horizon=400.0, replications=2, warmup=10.0)


def _figures(net, kw):
    return _pinned_figures(net, kw, seed=11)


# computed by the event loop of commit 354d2e6 (job-table scans), see above
PINNED = {'prio3_mixed': {'events': 16553,
                 'X[cpu]': 10.179310344827586,
                 'X[cpu].hw': 0.17525799636102413,
                 'X[disk]': 3.5844827586206898,
                 'X[disk].hw': 0.4162377413574456,
                 'X[hi]': 1.9724137931034482,
                 'X[hi].hw': 0.08762899818051528,
                 'X[mid]': 1.4724137931034482,
                 'X[mid].hw': 0.8762899818051517,
                 'X[lo]': 1.736206896551724,
                 'X[lo].hw': 0.10953624772564341,
                 'R[cpu]': 0.5609658664449184,
                 'R[cpu].hw': 0.06310557168470157,
                 'R[disk]': 0.3457421804666093,
                 'R[disk].hw': 0.42508450865689973,
                 'R[hi]': 0.5145545769711515,
                 'R[hi].hw': 0.378826306817053,
                 'R[mid]': 0.6321292185772622,
                 'R[mid].hw': 0.5158569884192297,
                 'R[lo]': 2.8979358593740905,
                 'R[lo].hw': 0.07706654239074107,
                 'Q[cpu]': 5.699930553455198,
                 'Q[cpu].hw': 0.6216516034770914,
                 'Q[disk]': 1.2413598240488375,
                 'Q[disk].hw': 1.6566254092172548,
                 'Q[hi]': 1.015275338604123,
                 'Q[hi].hw': 0.7855421462232788,
                 'Q[mid]': 0.9260150388999198,
                 'Q[mid].hw': 0.24943165951692792,
                 'Q[lo]': 4.999999999999993,
                 'Q[lo].hw': 4.529709940470639e-14,
                 'U[cpu]': 0.9917250296023219,
                 'U[cpu].hw': 0.03256832539726906,
                 'U[disk]': 0.5478286136920187,
                 'U[disk].hw': 0.255121055947625,
                 'p95[hi]': 1.5137862554881045,
                 'p95[mid]': 1.7994858391004191,
                 'p95[lo]': 9.48215407582434},
 'prio_pr_2srv': {'events': 22188,
                  'X[pr]': 9.960344827586207,
                  'X[pr].hw': 0.8981972313502808,
                  'X[d]': 8.48448275862069,
                  'X[d].hw': 1.423971220433378,
                  'X[a]': 6.644827586206897,
                  'X[a].hw': 0.7886609836246352,
                  'X[b]': 1.2051724137931035,
                  'X[b].hw': 0.41623774135744696,
                  'X[c]': 1.1913793103448276,
                  'X[c].hw': 0.24097974499641772,
                  'R[pr]': 0.6694110834988367,
                  'R[pr].hw': 0.019831877030170975,
                  'R[d]': 0.271369985188018,
                  'R[d].hw': 0.011866822095393637,
                  'R[a]': 0.4514992220187707,
                  'R[a].hw': 0.05117268619519713,
                  'R[b]': 3.314147207982509,
                  'R[b].hw': 1.2122943949095428,
                  'R[c]': 1.6732850260342842,
                  'R[c].hw': 0.3953652951012069,
                  'Q[pr]': 6.699368562950896,
                  'Q[pr].hw': 0.48484439190375284,
                  'Q[d]': 2.3006314370491108,
                  'Q[d].hw': 0.4848443919036819,
                  'Q[a]': 3.0000000000000067,
                  'Q[a].hw': 5.639932965095795e-14,
                  'Q[b]': 3.9999999999999982,
                  'Q[b].hw': 1.9761969838327786e-14,
                  'Q[c]': 2.0000000000000013,
                  'Q[c].hw': 0.0,
                  'U[pr]': 0.9952020421866058,
                  'U[pr].hw': 0.00047808791970804787,
                  'U[d]': 0.8482759070090158,
                  'U[d].hw': 0.1420320329809056,
                  'p95[a]': 1.2219105735833113,
                  'p95[b]': 10.050460975150262,
                  'p95[c]': 5.299331844026581},
 'lcfs_pr_block': {'events': 10387,
                   'X[l]': 3.117241379310345,
                   'X[l].hw': 0.7010319854441223,
                   'X[s]': 2.362068965517241,
                   'X[s].hw': 1.0077334790759247,
                   'X[np]': 3.1189655172413793,
                   'X[np].hw': 0.7667537340795065,
                   'X[x]': 2.362068965517241,
                   'X[x].hw': 1.0515479781661807,
                   'X[y]': 0.756896551724138,
                   'X[y].hw': 0.284794244086674,
                   'R[l]': 1.7526102829886065,
                   'R[l].hw': 2.2311831405856126,
                   'R[s]': 0.35855614344657505,
                   'R[s].hw': 0.02482198059713875,
                   'R[np]': 0.4460404755648021,
                   'R[np].hw': 0.061356685394282656,
                   'R[x]': 2.501136880384695,
                   'R[x].hw': 1.6877024280293553,
                   'R[y]': 2.358740270259447,
                   'R[y].hw': 3.59813538346633,
                   'Q[l]': 5.652727022712126,
                   'Q[l].hw': 3.196453035665847,
                   'Q[s]': 0.8465425198842478,
                   'Q[s].hw': 0.4223901393848484,
                   'Q[np]': 1.3916101742094553,
                   'Q[np].hw': 0.5310781750110545,
                   'Q[x]': 6.000000000000003,
                   'Q[x].hw': 6.750155989720952e-14,
                   'Q[y]': 1.890879716805826,
                   'Q[y].hw': 2.2429847212700045,
                   'U[l]': 0.98275508787892,
                   'U[l].hw': 0.00576700354775872,
                   'U[s]': 0.5904248516642219,
                   'U[s].hw': 0.26013649820140106,
                   'U[np]': 0.634330670122678,
                   'U[np].hw': 0.2365588042494783,
                   'p95[x]': 9.315647383381613,
                   'p95[y]': 8.915210002367242},
 'fj4_prio': {'events': 45636,
              'X[fj]': 3.8499999999999996,
              'X[fj].hw': 1.9728054721955433,
              'X[a]': 7.705263157894738,
              'X[a].hw': 4.079360467929774,
              'X[b]': 7.707894736842105,
              'X[b].hw': 4.112797848814443,
              'X[e]': 3.855263157894737,
              'X[e].hw': 2.106554995734225,
              'X[c]': 3.8499999999999996,
              'X[c].hw': 2.039680233964882,
              'X[z]': 3.85,
              'X[z].hw': 2.1065549957342276,
              'X[e2]': 11.555263157894736,
              'X[e2].hw': 6.2527902254333405,
              'X[d]': 11.563157894736843,
              'X[d].hw': 5.951853797471308,
              'X[cpu]': 3.0605263157894735,
              'X[cpu].hw': 1.1703083309634583,
              'X[u]': 2.1315789473684212,
              'X[u].hw': 0.06687476176934082,
              'X[v]': 1.7263157894736842,
              'X[v].hw': 0.0668747617693406,
              'R[fj]': 0.8944997100185117,
              'R[fj].hw': 0.5992529943199785,
              'R[a]': 0.40777227306485186,
              'R[a].hw': 0.47055557705966433,
              'R[b]': 0.10909320542597536,
              'R[b].hw': 0.0007394649650743074,
              'R[e]': 0.624623931875776,
              'R[e].hw': 0.32951152156933916,
              'R[c]': 0.15242997038722733,
              'R[c].hw': 0.13279382137644696,
              'R[z]': 0.04820932421560811,
              'R[z].hw': 0.008808753900811019,
              'R[e2]': 0.047244834705176555,
              'R[e2].hw': 0.009762441427067059,
              'R[d]': 0.17036643298098134,
              'R[d].hw': 0.012660662566606612,
              'R[cpu]': 1.1562799949545672,
              'R[cpu].hw': 0.8969250180620238,
              'R[u]': 1.8711551840447191,
              'R[u].hw': 0.13210940529237958,
              'R[v]': 1.72587029489807,
              'R[v].hw': 0.11666576353414038,
              'Q[fj]': 3.456563847187908,
              'Q[fj].hw': 4.172128432245939,
              'Q[a]': 3.1576535290032055,
              'Q[a].hw': 5.370765579993325,
              'Q[b]': 0.8407577959639074,
              'Q[b].hw': 0.45916764322616493,
              'Q[e]': 2.4125800500203978,
              'Q[e].hw': 2.574771106508723,
              'Q[c]': 0.589001923331365,
              'Q[c].hw': 0.8310719641501343,
              'Q[z]': 0.18551655535512682,
              'Q[z].hw': 0.06700562251940692,
              'Q[e2]': 0.5460589699623617,
              'Q[e2].hw': 0.410407317921057,
              'Q[d]': 1.9761523059861261,
              'Q[d].hw': 1.081849967383263,
              'Q[cpu]': 3.5434361528120917,
              'Q[cpu].hw': 4.1721284322459,
              'Q[u]': 4.0,
              'Q[u].hw': 3.774758283725532e-15,
              'Q[v]': 2.999999999999999,
              'Q[v].hw': 3.108624468950438e-14,
              'U[fj]': 0.0,
              'U[fj].hw': 0.0,
              'U[a]': 0.7598323542481883,
              'U[a].hw': 0.5753600339912167,
              'U[b]': 0.37908634779383416,
              'U[b].hw': 0.04293681256644216,
              'U[e]': 0.7777310236227859,
              'U[e].hw': 0.4365870660680462,
              'U[c]': 0.3853124402050677,
              'U[c].hw': 0.3472923659840844,
              'U[z]': 0.18551655535512682,
              'U[z].hw': 0.06700562251940692,
              'U[e2]': 0.2311253922487924,
              'U[e2].hw': 0.12448896224121217,
              'U[d]': 0.5771702699843565,
              'U[d].hw': 0.17050951715931817,
              'U[cpu]': 0.9171951279532071,
              'U[cpu].hw': 0.2159045561954806,
              'p95[u]': 5.027982371057313,
              'p95[v]': 4.385551868738163},
 'fj_open': {'events': 13709,
             'X[fj]': 1.428205128205128,
             'X[fj].hw': 0.4561201700165273,
             'X[a]': 4.288461538461538,
             'X[a].hw': 1.2869104796894897,
             'X[b]': 1.428205128205128,
             'X[b].hw': 0.4235401578724898,
             'X[c]': 1.4256410256410255,
             'X[c].hw': 0.4561201700165273,
             'X[o]': 1.428205128205128,
             'X[o].hw': 0.4561201700165273,
             'R[fj]': 0.690669079159387,
             'R[fj].hw': 0.027936088624787803,
             'R[a]': 0.3435509792542188,
             'R[a].hw': 0.0814727792165078,
             'R[b]': 0.27642780007437295,
             'R[b].hw': 0.04703315412262128,
             'R[c]': 0.2979506014460168,
             'R[c].hw': 0.1542330496442199,
             'R[o]': 0.690669079159387,
             'R[o].hw': 0.027936088624787803,
             'Q[fj]': 0.9866634189603328,
             'Q[fj].hw': 0.32980235760265264,
             'Q[a]': 1.4690940844148943,
             'Q[a].hw': 0.11217433379729869,
             'Q[b]': 0.3942424732283266,
             'Q[b].hw': 0.055365673269767546,
             'Q[c]': 0.4269340810113292,
             'Q[c].hw': 0.33145861015823747,
             'Q[o]': 0.9866634189603328,
             'Q[o].hw': 0.32980235760265264,
             'U[fj]': 0.0,
             'U[fj].hw': 0.0,
             'U[a]': 0.4254072016774355,
             'U[a].hw': 0.1661346426490269,
             'U[b]': 0.28074155294598,
             'U[b].hw': 0.06532999439851682,
             'U[c]': 0.4269340810113292,
             'U[c].hw': 0.33145861015823747,
             'p95[o]': 1.460076987575908}}


@pytest.mark.filterwarnings("ignore:the intervals may be too narrow")
@pytest.mark.parametrize("name,net,kw", list(cases()), ids=[c[0] for c in cases()])
def test_pinned(name, net, kw):
    got = _figures(net, kw)
    want = PINNED[name]
    assert set(got) == set(want)
    for key, v in want.items():
        g = got[key]
        assert g == v or (g != g and v != v), f"{name} {key}: {g!r} != {v!r}"


if __name__ == "__main__":  # print the pins (run on the old event loop)
    import pprint

    pprint.pprint({name: _figures(net, kw) for name, net, kw in cases()}, sort_dicts=False)
