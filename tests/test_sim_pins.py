"""Bit-for-bit pins of the simulator across the refactor of its event loop.

The numbers in ``PINNED`` were computed by the event loop BEFORE the refactor
into grouped arrays and per-event handlers (commit fc90320, the 331-line
``engine.run``), with the script that is this module's ``_figures``.  The
refactor must not change a single bit: same seed, same stream of uniforms, same
order of floating-point operations.  They are not reference values for the
model (those come from MVA / CTMC in test_sim.py); they pin the code.
"""
import pytest

import qmodels as qm
from qmodels.sim import simulate


def cases():
    """(name, network, options) of the pinned runs: every station kind, several
    distributions, blocking, a token pool, open, closed, mixed, batch means."""
    # a: closed cycle with think time, FCFS 2 servers
    yield "closed_cycle", qm.Network(
        [qm.Queue("a", 0.3, servers=2), qm.Queue("b", 0.2), qm.Delay("d", 0.5)],
        [qm.Closed("c", 6, routing={"a": {"b": 0.6, "d": 0.4}, "b": {"a": 1.0}, "d": {"a": 1.0}},
                   think_time=1.0)]), dict(horizon=400.0, replications=3, warmup=20.0)
    # b: open tandem with blocking, hyperexponential, lost arrivals
    yield "tandem_block", qm.Network(
        [qm.Queue("s1", 0.5, distribution=qm.HyperExponential(3.0)),
         qm.Queue("s2", 0.7, capacity=3), qm.Queue("s3", 0.6, capacity=2,
                                                   distribution=qm.Erlang(3))],
        [qm.Open("o", arrival_rate=1.0, routing={"source": {"s1": 1.0}, "s1": {"s2": 1.0},
                                                 "s2": {"s3": 1.0}, "s3": {"sink": 1.0}})]), \
        dict(horizon=600.0, replications=3, warmup=30.0)
    # c: mixed, PS with 2 servers, load-dependent, delay; several distributions; visits routing
    yield "mixed_ps_ld", qm.Network(
        [qm.Queue("ps", 0.4, servers=2, discipline="ps", distribution=qm.Lognormal(0.5)),
         qm.LoadDependent("ld", 0.5, rate_multipliers=(1.0, 1.6, 2.0)),
         qm.Delay("z", 1.0, distribution=qm.Uniform(0.5)),
         qm.Queue("f", 0.2, distribution=qm.Deterministic())],
        [qm.Open("o", arrival_rate=0.8, visits={"ps": 1.0, "ld": 0.5, "f": 2.0}),
         qm.Closed("c", 4, visits={"ps": 1.0, "ld": 1.0, "z": 1.0, "f": 0.5}, think_time=0.5)]), \
        dict(horizon=300.0, replications=3, warmup=15.0)
    # d: token pool, closed, explicit routing, empirical service
    yield "pool", qm.Network(
        [qm.Queue("cpu", 0.2, distribution=qm.Empirical((0.5, 1.0, 2.0, 0.1))),
         qm.Queue("disk", 0.3), qm.Delay("net", 0.4)],
        [qm.Closed("tx", 8, routing={"cpu": {"disk": 0.5, "net": 0.5}, "disk": {"cpu": 1.0},
                                     "net": {"cpu": 1.0}}, think_time=0.3)],
        pools=[qm.TokenPool("mem", 3, acquire="cpu", release="disk")]), \
        dict(horizon=300.0, replications=3, warmup=10.0)
    # e: batch means with mser5 on an open M/M/1 (mser5 choice included)
    yield "mm1_batch", qm.Network([qm.Queue("q", 0.8)], [qm.Open("j", arrival_rate=1.0, routing={
        "source": {"q": 1.0}, "q": {"sink": 1.0}})]), \
        dict(horizon=3000.0, method="batch_means", warmup=50.0)


def _figures(net, kw, seed=7):
    r = simulate(net, seed=seed, progress=False, **kw)
    d = {"events": r.events}
    for m in ("X", "R", "Q", "U"):
        fig = getattr(r, m)
        for key in list(net.station_names) + (list(net.class_names) if m != "U" else []):
            d[f"{m}[{key}]"] = fig[key].mean
            # the Student-t half-width: a heavy tail drawn too rarely widens
            # the interval shown (qmodels.sim.tails), which the loop's
            # bits do not decide
            e = fig[key]
            d[f"{m}[{key}].hw"] = (e.half_width if e.t_interval is None
                                   else 0.5 * (e.t_interval[1] - e.t_interval[0]))
    for c in net.class_names:
        d[f"p95[{c}]"] = r.percentiles[c][95].mean
    return d


# computed by the OLD event loop (commit fc90320), before the refactor
PINNED = {
    'closed_cycle': {
        'events': 16620,
        'X[a]': 3.464035087719298,
        'X[a].hw': 0.060740914460178264,
        'X[b]': 2.1184210526315788,
        'X[b].hw': 0.07925939239012125,
        'X[d]': 1.3464912280701753,
        'X[d].hw': 0.10648488784344634,
        'X[c]': 3.4649122807017547,
        'X[c].hw': 0.05324244392172295,
        'R[a]': 0.36143945683907835,
        'R[a].hw': 0.02101915062465093,
        'R[b]': 0.29438047596492956,
        'R[b].hw': 0.02110525233642402,
        'R[d]': 0.5112112516501698,
        'R[d].hw': 0.024616298405316317,
        'R[c]': 0.7398614020480235,
        'R[c].hw': 0.012397668729512312,
        'Q[a]': 1.2524419121613086,
        'Q[a].hw': 0.05442103253163233,
        'Q[b]': 0.6236019640545637,
        'Q[b].hw': 0.052047455694228306,
        'Q[d]': 0.686670077403032,
        'Q[d].hw': 0.02636365009975883,
        'Q[c]': 2.5627139536189047,
        'Q[c].hw': 0.008010085513594944,
        'U[a]': 0.5340418485068321,
        'U[a].hw': 0.015844029812022264,
        'U[b]': 0.42068411187647703,
        'U[b].hw': 0.01104847550419108,
        'U[d]': 0.686670077403032,
        'U[d].hw': 0.02636365009975883,
        'p95[c]': 1.7631203169245142,
    },
    'tandem_block': {
        'events': 10798,
        'X[s1]': 1.0052631578947369,
        'X[s1].hw': 0.07134576668276632,
        'X[s2]': 1.0052631578947369,
        'X[s2].hw': 0.07988595860203684,
        'X[s3]': 1.0035087719298246,
        'X[s3].hw': 0.08416959319049672,
        'X[o]': 1.0035087719298246,
        'X[o].hw': 0.08416959319049672,
        'R[s1]': 5.251741642656828,
        'R[s1].hw': 3.7938247876232474,
        'R[s2]': 1.9040971833272617,
        'R[s2].hw': 0.3113410584514268,
        'R[s3]': 0.8642350735085081,
        'R[s3].hw': 0.015916634026147847,
        'R[o]': 7.959927955524534,
        'R[o].hw': 3.452128708158836,
        'Q[s1]': 5.437591965769911,
        'Q[s1].hw': 4.5507079018828165,
        'Q[s2]': 1.9103745707410333,
        'Q[s2].hw': 0.4420860553572098,
        'Q[s3]': 0.8677341930732515,
        'Q[s3].hw': 0.07322996774446544,
        'Q[o]': 8.215700729584198,
        'Q[o].hw': 4.324171442881212,
        'U[s1]': 0.7916511309739706,
        'U[s1].hw': 0.10536197543835402,
        'U[s2]': 0.7826163225253406,
        'U[s2].hw': 0.10392767342112186,
        'U[s3]': 0.593216764375555,
        'U[s3].hw': 0.048186654634618686,
        'p95[o]': 19.431632356850233,
    },
    'mixed_ps_ld': {
        'events': 14593,
        'X[ps]': 2.3497076023391816,
        'X[ps].hw': 0.11508561026097963,
        'X[ld]': 1.87953216374269,
        'X[ld].hw': 0.15155624065146622,
        'X[z]': 1.461988304093567,
        'X[z].hw': 0.24034374454704088,
        'X[f]': 2.463157894736842,
        'X[f].hw': 0.3397110665505938,
        'X[o]': 0.8035087719298245,
        'X[o].hw': 0.08846050620810664,
        'X[c]': 1.4818713450292398,
        'X[c].hw': 0.1894327681858432,
        'R[ps]': 0.47070509226922846,
        'R[ps].hw': 0.02340262108432256,
        'R[ld]': 0.6195040958370144,
        'R[ld].hw': 0.027623956016564533,
        'R[z]': 0.998659406617393,
        'R[z].hw': 0.03108147776321052,
        'R[f]': 0.34804844309127986,
        'R[f].hw': 0.10255756628164875,
        'R[o]': 1.6487276696738622,
        'R[o].hw': 0.3970890668999707,
        'R[c]': 2.2142523442243887,
        'R[c].hw': 0.4101276899096332,
        'Q[ps]': 1.1037897795332368,
        'Q[ps].hw': 0.09863019056939182,
        'Q[ld]': 1.1622351830122635,
        'Q[ld].hw': 0.10417093282044876,
        'Q[z]': 1.460143129229964,
        'Q[z].hw': 0.1931338858894025,
        'Q[f]': 0.8599186734610696,
        'Q[f].hw': 0.3430207310882184,
        'Q[o]': 1.3211149380767255,
        'Q[o].hw': 0.1878277349752311,
        'Q[c]': 3.2649718271598083,
        'Q[c].hw': 0.1975367796754819,
        'U[ps]': 0.46923637606732127,
        'U[ps].hw': 0.02681378017891073,
        'U[ld]': 0.6796881163734767,
        'U[ld].hw': 0.07714708939033821,
        'U[z]': 1.460143129229964,
        'U[z].hw': 0.1931338858894025,
        'U[f]': 0.49240717878897916,
        'U[f].hw': 0.06868086936581944,
        'p95[o]': 4.796339678427924,
        'p95[c]': 6.488416380872203,
    },
    'pool': {
        'events': 13759,
        'X[cpu]': 3.8172413793103446,
        'X[cpu].hw': 0.2638826132164327,
        'X[disk]': 1.9160919540229884,
        'X[disk].hw': 0.021557274066813292,
        'X[net]': 1.8965517241379313,
        'X[net].hw': 0.2692502667963461,
        'X[tx]': 3.8126436781609194,
        'X[tx].hw': 0.27522485103319694,
        'R[cpu]': 0.34810432520356066,
        'R[cpu].hw': 0.02722802963319554,
        'R[disk]': 0.46148971800620747,
        'R[disk].hw': 0.03720121678455457,
        'R[net]': 0.41498581774123244,
        'R[net].hw': 0.05942941456747841,
        'R[tx]': 1.7932435562476543,
        'R[tx].hw': 0.13008617914880483,
        'Q[cpu]': 1.328078041584819,
        'Q[cpu].hw': 0.10726203929887657,
        'Q[disk]': 0.885241242247616,
        'Q[disk].hw': 0.08708794530305097,
        'Q[net]': 0.7866076585133768,
        'Q[net].hw': 0.07907517831867084,
        'Q[tx]': 2.999926942345812,
        'Q[tx].hw': 0.00031434171522315424,
        'U[cpu]': 0.7556017052084294,
        'U[cpu].hw': 0.04154650990835573,
        'U[disk]': 0.5667008519040379,
        'U[disk].hw': 0.06561732749007598,
        'U[net]': 0.7866076585133768,
        'U[net].hw': 0.07907517831867084,
        'p95[tx]': 2.9090651161343586,
    },
    'mm1_batch': {
        'events': 6039,
        'X[q]': 1.0074576271186442,
        'X[q].hw': 0.03596304846297893,
        'X[j]': 1.0074576271186442,
        'X[j].hw': 0.03596304846297893,
        'R[q]': 4.220033431008696,
        'R[q].hw': 1.2231772486496952,
        'R[j]': 4.220033431008696,
        'R[j].hw': 1.2231772486496952,
        'Q[q]': 4.3915921709182495,
        'Q[q].hw': 1.4820591854651175,
        'Q[j]': 4.3915921709182495,
        'Q[j].hw': 1.4820591854651175,
        'U[q]': 0.8224846017498548,
        'U[q].hw': 0.04199407591667259,
        'p95[j]': 9.924114433873905,
    },
}


@pytest.mark.parametrize("name", list(PINNED))
def test_refactor_keeps_every_bit(name):
    net, kw = {n: (net, kw) for n, net, kw in cases()}[name]
    got = _figures(net, kw)
    assert got == PINNED[name]


def test_running_in_small_chunks_changes_no_number(monkeypatch):
    # the compiled loop returns every CHUNK_EVENTS events (so that Ctrl-C is
    # seen) and resumes: the figures must not depend on the chunk size
    from qmodels.sim import run as sim_run

    monkeypatch.setattr(sim_run, "CHUNK_EVENTS", 997)
    for name, net, kw in cases():
        if name in ("tandem_block", "pool"):
            assert _figures(net, kw) == PINNED[name]
