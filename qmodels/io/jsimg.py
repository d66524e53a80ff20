"""JSIMg files (JMT's discrete-event simulator): Network -> XML.

:func:`to_jsimg` writes a :class:`~qmodels.model.Network` as an ``archive``
with a ``sim`` model of nodes made of sections (queue, server, router), user
classes, connections, measures and finite capacity regions, as defined by
JMT's ``Archive.xsd`` and ``SIMmodeldefinition.xsd``.  What maps and what is
refused is tabled in :mod:`qmodels.io.jmt`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

from ..errors import UnsupportedModelError
from ..model import distributions as dist
from ..model.network import SINK, SOURCE, Closed, Delay, LoadDependent, Network, Open, Queue
from ..model.pools import held_reach
from . import _jsimg_forkjoin as fj
from ._xml import _XSI, _dropped, _num, _numeric, _unique

__all__ = ["to_jsimg", "save_jsimg"]

_D = "java.lang.Double"
_NS = "jmt.engine.NetStrategies"


def _sub(parent, name, class_path, value=None, array=False):
    attrs = {"classPath": class_path, "name": name}
    if array:
        attrs["array"] = "true"
    el = ET.SubElement(parent, "subParameter", attrs)
    if value is not None:
        ET.SubElement(el, "value").text = value
    return el


def _param(parent, name, class_path, value=None, array=False):
    attrs = {"classPath": class_path, "name": name}
    if array:
        attrs["array"] = "true"
    el = ET.SubElement(parent, "parameter", attrs)
    if value is not None:
        ET.SubElement(el, "value").text = value
    return el


def _distribution_el(parent, shape, mean: float, who: str):
    """A ServiceTimeStrategy with a JMT distribution of the given mean and
    the shape of a qmodels distribution (JMT's ``jmt.engine.random``)."""
    strat = _sub(parent, "ServiceTimeStrategy", f"{_NS}.ServiceStrategies.ServiceTimeStrategy")
    shape = shape if shape is not None else dist.Exponential()
    m = float(mean)
    if m <= 0 or isinstance(shape, dist.Deterministic):
        _sub(strat, "Deterministic", "jmt.engine.random.DeterministicDistr")
        par = _sub(strat, "distrPar", "jmt.engine.random.DeterministicDistrPar")
        _sub(par, "t", _D, _num(max(m, 0.0)))
        return
    if isinstance(shape, dist.Exponential):
        _sub(strat, "Exponential", "jmt.engine.random.Exponential")
        par = _sub(strat, "distrPar", "jmt.engine.random.ExponentialPar")
        _sub(par, "lambda", _D, _num(1.0 / m))
    elif isinstance(shape, dist.Erlang):
        _sub(strat, "Erlang", "jmt.engine.random.Erlang")
        par = _sub(strat, "distrPar", "jmt.engine.random.ErlangPar")
        _sub(par, "alpha", _D, _num(shape.k / m))
        _sub(par, "r", "java.lang.Long", str(int(shape.k)))
    elif isinstance(shape, dist.HyperExponential) and len(shape.branches()[0]) <= 2:
        # the branches at mean 1 (balanced means, Whitt 1982, or the given
        # ones), scaled to the mean m: JMT's HyperExp has two
        ps, rs = shape.branches()
        if len(ps) == 1:
            ps, rs = (1.0, 0.0), (rs[0], rs[0])
        _sub(strat, "Hyperexponential", "jmt.engine.random.HyperExp")
        par = _sub(strat, "distrPar", "jmt.engine.random.HyperExpPar")
        _sub(par, "p", _D, _num(ps[0]))
        _sub(par, "lambda1", _D, _num(rs[0] / m))
        _sub(par, "lambda2", _D, _num(rs[1] / m))
    elif isinstance(shape, dist.Uniform) and shape.spread == 0:
        _sub(strat, "Deterministic", "jmt.engine.random.DeterministicDistr")
        par = _sub(strat, "distrPar", "jmt.engine.random.DeterministicDistrPar")
        _sub(par, "t", _D, _num(m))
    elif isinstance(shape, dist.Uniform):
        _sub(strat, "Uniform", "jmt.engine.random.Uniform")
        par = _sub(strat, "distrPar", "jmt.engine.random.UniformPar")
        _sub(par, "min", _D, _num(m * (1.0 - shape.spread)))
        _sub(par, "max", _D, _num(m * (1.0 + shape.spread)))
    elif isinstance(shape, dist.Lognormal):
        s2 = math.log1p(shape.scv)
        _sub(strat, "Lognormal", "jmt.engine.random.Lognormal")
        par = _sub(strat, "distrPar", "jmt.engine.random.LognormalPar")
        _sub(par, "mu", _D, _num(math.log(m) - s2 / 2.0))
        _sub(par, "sigma", _D, _num(math.sqrt(s2)))
    else:
        raise UnsupportedModelError(
            f"{who}: the {shape.name} distribution has no JSIMg equivalent here (JMT replays "
            "empirical data from trace files); use a parametric shape")


def _routing_rows(net: Network, i: int, c, think: str | None, ref: str | None):
    """{node: {node: p}} of class i, with "source"/"sink" and the think
    node; classes given by visits or demands are routed at random with
    their visit ratios (as qmodels.sim: see qmodels/sim/flatten.py)."""
    rows: dict[str, dict[str, float]] = {}
    if c.routing is not None:
        for src, row in c.routing.items():
            out = {}
            for dst, p in row.items():
                p = float(p)
                if p <= 0:
                    continue
                # (a (station, class) key, a class switch, stays a pair here:
                # _class_switch_nodes routes it through a ClassSwitch node)
                tgt = think if (think is not None and dst == ref) else dst
                out[tgt] = out.get(tgt, 0.0) + p
            rows[src] = out
        if think is not None:
            rows[think] = {ref: 1.0}
        return rows
    V = np.asarray(net.visits[i], dtype=float)
    branch = fj.branch_mask(net)  # tasks, not jobs, visit fork-join branches
    visited = [(net.station_names[k], float(V[k])) for k in range(len(V))
               if V[k] > 0 and not branch[k]]
    if not visited:
        raise UnsupportedModelError(f"class {c.name!r} visits no station")
    T = sum(v for _, v in visited)
    if isinstance(c, Closed):
        w = list(visited) + ([(think, 1.0)] if think is not None else [])
        tw = sum(v for _, v in w)
        row = {n: v / tw for n, v in w}
        for n, _ in w:
            rows[n] = dict(row)
        return rows
    if T >= 1:
        rows[SOURCE] = {n: v / T for n, v in visited}
        for n, _ in visited:
            rows[n] = {**{m: (1 - 1 / T) * v / T for m, v in visited}, SINK: 1 / T}
    else:
        rows[SOURCE] = {**{n: v for n, v in visited}, SINK: 1 - T}
        for n, _ in visited:
            rows[n] = {SINK: 1.0}
    return {src: {dst: p for dst, p in row.items() if p > 0} for src, row in rows.items()}


def _class_switch_nodes(rows: dict, taken: set) -> dict:
    """Route every class switch through a JMT ClassSwitch node: one per
    edge (station i, station j) on which some class changes class, its
    matrix row for class r the shares p(i, r -> j, s) / sum_s p(i, r -> j, s)
    (identity for a class that does not pass), and every class leaving it
    for j.  Rewrites ``rows`` in place; returns {node: {class: {class: p}}}."""
    edges = []
    for crow in rows.values():
        for src, row in crow.items():
            for dst in row:
                if isinstance(dst, tuple) and (src, dst[0]) not in edges:
                    edges.append((src, dst[0]))
    nodes = {}
    for src, j in edges:
        name = _unique(f"cs.{src}.{j}", taken)
        matrix = {}
        for cname, crow in rows.items():
            row = crow.get(src)
            if not row:
                continue
            into = {(k[1] if isinstance(k, tuple) else cname): p for k, p in row.items()
                    if (k[0] if isinstance(k, tuple) else k) == j}
            if not into:
                continue
            tot = sum(into.values())
            matrix[cname] = {s: p / tot for s, p in into.items()}
            crow[src] = {k: p for k, p in row.items()
                         if (k[0] if isinstance(k, tuple) else k) != j}
            crow[src][name] = tot
        for crow in rows.values():
            crow[name] = {j: 1.0}
        nodes[name] = matrix
    return nodes


def _pool_span(rows_by_class: dict, pool) -> list:
    """The stations any class can reach while holding a token of ``pool``."""
    span = held_reach(lambda s: [d for rows in rows_by_class.values()
                                 for d in rows.get(s, {}) if d != SINK],
                      pool.acquire, pool.release)
    seen = set(span)
    if pool.release not in seen:
        raise UnsupportedModelError(
            f"token pool {pool.name!r}: station {pool.release!r} (release) cannot be reached "
            f"from {pool.acquire!r} (acquire)")
    for cname, rows in rows_by_class.items():
        for src, row in rows.items():
            for d in row:
                inside_src = src in seen and src != pool.release
                if d in seen and not inside_src and not (d == pool.acquire and src not in seen):
                    raise UnsupportedModelError(
                        f"token pool {pool.name!r}: class {cname!r} routes {src!r} -> {d!r} into "
                        "the pool's stations other than through its acquire station, or from "
                        "its release station back in; a JMT finite capacity region would hold "
                        "the token differently")
    return span


def _refuse_load_dependent(net: Network) -> None:
    for s in net.stations:
        if isinstance(s, LoadDependent):
            raise UnsupportedModelError(
                f"station {s.name!r}: load-dependent service is not exported to JSIMg (a "
                "c-server queue is Queue(servers=c))")


def _references(net: Network, classes, taken):
    """Think-time node names and reference stations of the closed classes
    ({class: node}, {class: station}); a class's reference is its own if it
    visits it, else the first station it visits."""
    think = {}
    refs = {}
    for i, c in enumerate(classes):
        if isinstance(c, Closed):
            ref = c.reference
            V = np.asarray(net.visits[i], dtype=float)
            branch = fj.branch_mask(net)
            if ref is None or V[net.station_names.index(ref)] <= 0:
                ref = next((net.station_names[k] for k in range(len(V))
                            if V[k] > 0 and not branch[k]), None)
            refs[c.name] = ref
            if float(c.think_time) > 0:
                think[c.name] = _unique(f"think.{c.name}", taken)
    return think, refs


def _check_capacities(net: Network, rows) -> None:
    """Refuse a finite capacity that an open class reaches from another
    station (qmodels blocks such a job, JMT would drop it)."""
    for s in net.stations:
        if s.capacity is None:
            continue
        for c in net.open_classes:
            feeders = [src for src, row in rows[c.name].items() if s.name in row and src != SOURCE]
            if feeders:
                raise UnsupportedModelError(
                    f"station {s.name!r}: open class {c.name!r} reaches its finite capacity from "
                    f"station {feeders[0]!r}; qmodels blocks such a job, JMT would drop it")


def _pool_spans(net: Network, classes, cnames, rows) -> dict:
    """{pool: stations of its finite capacity region}, refusing pools that
    a JMT region cannot express and regions that overlap."""
    spans = {}
    for p in net.pools:
        if p.classes is not None and set(p.classes) != set(cnames):
            raise UnsupportedModelError(
                f"token pool {p.name!r}: used by classes {list(p.classes)} only, but a JMT finite "
                "capacity region counts every class")
        if any(c.routing is None for c in classes):
            raise UnsupportedModelError(
                f"token pool {p.name!r}: every class needs routing for the stations the pool "
                "spans to be known")
        spans[p.name] = _pool_span(rows, p)
    owner = {}
    for pname, span in spans.items():
        for s in span:
            if s in owner:
                raise UnsupportedModelError(
                    f"token pools {owner[s]!r} and {pname!r} overlap at station {s!r}: JMT "
                    "regions cannot overlap")
            owner[s] = pname
    return spans


#: discipline -> (JMT queue put strategy, server section class)
_PUT_AND_SERVER = {
    "prio": ("TailStrategyPriority", "Server"),
    "prio-pr": ("FCFSPRStrategyPriority", "PreemptiveServer"),
    "lcfs-pr": ("LCFSPRStrategy", "PreemptiveServer"),
}


class _SimWriter:
    """Writes the parts of a JSIMg ``sim`` element for the given classes
    and routing rows ({class: {node: {node: p}}})."""

    def __init__(self, sim, classes, rows):
        self.sim = sim
        self.classes = classes
        self.rows = rows

    def user_classes(self, net: Network, refs) -> None:
        # JMT serves the class with the larger ``priority`` first
        # (QueuePutStrategies.TailStrategyPriority inserts a job ahead of
        # every job of a smaller number); qmodels' 0 is the highest, so a
        # class is written as max - priority
        top = max((int(c.priority) for c in self.classes), default=0)
        for c in self.classes:
            attrs = {"name": c.name, "priority": str(top - int(c.priority))}
            if isinstance(c, Closed):
                attrs.update(type="closed", customers=str(int(c.population)),
                             referenceSource=refs[c.name] or net.station_names[0])
            else:
                attrs.update(type="open", referenceSource=SOURCE)
            ET.SubElement(self.sim, "userClass", attrs)

    def router(self, node_el, node_name) -> None:
        sec = ET.SubElement(node_el, "section", className="Router")
        par = _param(sec, "RoutingStrategy", f"{_NS}.RoutingStrategy", array=True)
        for c in self.classes:
            ET.SubElement(par, "refClass").text = c.name
            row = self.rows[c.name].get(node_name)
            if not row:
                _sub(par, "Random", f"{_NS}.RoutingStrategies.RandomStrategy")
                continue
            emp = _sub(par, "Probabilities", f"{_NS}.RoutingStrategies.EmpiricalStrategy")
            arr = _sub(emp, "EmpiricalEntryArray", "jmt.engine.random.EmpiricalEntry", array=True)
            for dst, p in row.items():
                entry = _sub(arr, "EmpiricalEntry", "jmt.engine.random.EmpiricalEntry")
                _sub(entry, "stationName", "java.lang.String", dst)
                _sub(entry, "probability", _D, _num(p))

    def queue_section(self, node_el, capacity, put_strategy="TailStrategy") -> None:
        sec = ET.SubElement(node_el, "section", className="Queue")
        _param(sec, "size", "java.lang.Integer", str(int(capacity)) if capacity else "-1")
        drops = _param(sec, "dropStrategies", "java.lang.String", array=True)
        for c in self.classes:
            ET.SubElement(drops, "refClass").text = c.name
            _sub(drops, "dropStrategy", "java.lang.String",
                 "BAS blocking" if isinstance(c, Closed) else "drop")
        _param(sec, "FCFSstrategy", f"{_NS}.QueueGetStrategies.FCFSstrategy")
        put = _param(sec, "QueuePutStrategy", f"{_NS}.QueuePutStrategy", array=True)
        for c in self.classes:
            ET.SubElement(put, "refClass").text = c.name
            _sub(put, put_strategy, f"{_NS}.QueuePutStrategies.{put_strategy}")

    def service(self, par, means, shape, who) -> None:
        """Each class's service strategy; ``shape`` one shape for every
        class, or a list of one per class (a class's own shape there)."""
        for i, (c, m) in enumerate(zip(self.classes, means, strict=False)):
            ET.SubElement(par, "refClass").text = c.name
            d = shape[i] if isinstance(shape, list) else shape
            _distribution_el(par, d, m, f"{who}, class {c.name!r}")

    def source_node(self) -> None:
        src = ET.SubElement(self.sim, "node", name=SOURCE)
        sec = ET.SubElement(src, "section", className="RandomSource")
        par = _param(sec, "ServiceStrategy", f"{_NS}.ServiceStrategy", array=True)
        for c in self.classes:
            ET.SubElement(par, "refClass").text = c.name
            if isinstance(c, Open) and float(c.arrival_rate) > 0:
                _distribution_el(par, c.interarrival, 1.0 / float(c.arrival_rate),
                                 f"class {c.name!r}: interarrival")
            else:
                _sub(par, "ServiceStrategy", f"{_NS}.ServiceStrategy", "null")
        ET.SubElement(src, "section", className="ServiceTunnel")
        self.router(src, SOURCE)

    def station_node(self, s, means, shapes=None) -> None:
        node = ET.SubElement(self.sim, "node", name=s.name)
        disc = s.discipline if isinstance(s, Queue) else None
        # priority and preemptive disciplines as JMT writes them: the put
        # strategy orders the queue, a PreemptiveServer lets an arrival take
        # the server (and the preempted job resumes where it stopped)
        put, server = _PUT_AND_SERVER.get(disc, ("TailStrategy", "Server"))
        self.queue_section(node, s.capacity, put)
        who = f"station {s.name!r}"
        ps = disc == "ps"
        if isinstance(s, Delay):
            sec = ET.SubElement(node, "section", className="Delay")
        else:
            sec = ET.SubElement(node, "section", className="PSServer" if ps else server)
            _param(sec, "maxJobs", "java.lang.Integer", str(int(s.servers)))
            nv = _param(sec, "numberOfVisits", "java.lang.Integer", array=True)
            for c in self.classes:
                ET.SubElement(nv, "refClass").text = c.name
                _sub(nv, "numberOfVisits", "java.lang.Integer", "1")
        par = _param(sec, "ServiceStrategy", f"{_NS}.ServiceStrategy", array=True)
        self.service(par, means, s.distribution if shapes is None else shapes, who)
        if ps:
            # egalitarian processor sharing, equal weights (as JMT writes PS)
            strat = _param(sec, "PSStrategy", f"{_NS}.PSStrategy", array=True)
            weights = _param(sec, "serviceWeights", _D, array=True)
            for c in self.classes:
                ET.SubElement(strat, "refClass").text = c.name
                _sub(strat, "EPSStrategy", f"{_NS}.PSStrategies.EPSStrategy")
                ET.SubElement(weights, "refClass").text = c.name
                _sub(weights, "serviceWeight", _D, "1.0")
        self.router(node, s.name)

    def class_switch_node(self, name, matrix) -> None:
        """A JMT ClassSwitch node (input buffer, the switching matrix, a
        router), as JMT writes one: ``matrix`` has per class r a row of
        cells, the probability that r leaves as s."""
        node = ET.SubElement(self.sim, "node", name=name)
        self.queue_section(node, None)
        sec = ET.SubElement(node, "section", className="ClassSwitch")
        par = _param(sec, "matrix", "java.lang.Object", array=True)
        for r in self.classes:
            ET.SubElement(par, "refClass").text = r.name
            row = _sub(par, "row", "java.lang.Float", array=True)
            cells = matrix.get(r.name, {r.name: 1.0})
            for s in self.classes:
                ET.SubElement(row, "refClass").text = s.name
                _sub(row, "cell", "java.lang.Float", _num(cells.get(s.name, 0.0)))
        self.router(node, name)

    def think_node(self, cname, tnode) -> None:
        node = ET.SubElement(self.sim, "node", name=tnode)
        self.queue_section(node, None)
        sec = ET.SubElement(node, "section", className="Delay")
        par = _param(sec, "ServiceStrategy", f"{_NS}.ServiceStrategy", array=True)
        self.service(par, [float(c.think_time) if c.name == cname else 0.0
                           for c in self.classes], None, f"think time of class {cname!r}")
        self.router(node, tnode)

    def measures(self, net: Network, confidence, precision) -> None:
        alpha = _num(1.0 - confidence)
        prec = _num(precision)

        def measure(mtype, node, cname, node_type):
            ET.SubElement(self.sim, "measure", {
                "alpha": alpha, "name": f"{node}_{cname}_{mtype}" if node else f"{cname}_{mtype}",
                "nodeType": node_type, "precision": prec, "referenceNode": node,
                "referenceUserClass": cname, "type": mtype, "verbose": "false"})

        for c in self.classes:
            measure("System Throughput", "", c.name, "")
            measure("System Response Time", "", c.name, "")
        V = np.asarray(net.visits, dtype=float)
        for k, s in enumerate(net.stations):
            for i, c in enumerate(self.classes):
                if V[i, k] > 0 and s.kind != "forkjoin":
                    for mtype in ("Throughput", "Number of Customers", "Response Time",
                                  "Utilization"):
                        measure(mtype, s.name, c.name, "station")

    def connections(self) -> None:
        edges = []
        for crow in self.rows.values():
            for src, row in crow.items():
                for dst in row:
                    if (src, dst) not in edges:
                        edges.append((src, dst))
        for src, dst in edges:
            ET.SubElement(self.sim, "connection", source=src, target=dst)

    def regions(self, net: Network, spans) -> None:
        for p in net.pools:
            reg = ET.SubElement(self.sim, "blockingRegion", name=p.name, type="default")
            for s in spans[p.name]:
                ET.SubElement(reg, "regionNode", nodeName=s)
            ET.SubElement(reg, "globalConstraint", maxJobs=_num(p.tokens))
            for c in self.classes:
                ET.SubElement(reg, "dropRules", jobClass=c.name, dropThisClass="false")

    def preload(self, refs) -> None:
        closed = [c for c in self.classes if isinstance(c, Closed) and int(c.population) > 0]
        if not closed:
            return
        pre = ET.SubElement(self.sim, "preload")
        at: dict[str, list] = {}
        for c in closed:
            at.setdefault(refs[c.name], []).append(c)
        for st_name, cs in at.items():
            sp_el = ET.SubElement(pre, "stationPopulations", stationName=st_name)
            for c in cs:
                ET.SubElement(sp_el, "classPopulation", refClass=c.name,
                              population=str(int(c.population)))


def to_jsimg(net: Network, *, seed: int | None = None, max_samples: int = 1_000_000,
             confidence: float = 0.99, precision: float = 0.03, timestamp: str = "",
             drop=()) -> str:
    """The JSIMg (JMT simulator) XML of ``net`` (see :mod:`qmodels.io.jmt`
    for what maps and what is refused).

    Parameters
    ----------
    seed : int, optional
        JMT's random seed (``sim seed``); omitted, JMT draws one.
    max_samples : int
        JMT's ``maxSamples``.
    confidence, precision : float
        Of every measure: confidence level (``alpha = 1 - confidence``) and
        relative half-width JMT stops at.
    timestamp : str
        The archive's ``timestamp`` attribute (default empty: the output is
        a function of the model only).
    drop : str or tuple of str
        Features the export may leave out, which it otherwise refuses:
        ``"power"`` (JMT has no power).  What is dropped is said in an XML
        comment at the top of the file (JSIMg has no description).

    Raises
    ------
    UnsupportedModelError
        Symbolic values, power (unless ``drop`` has ``"power"``),
        load-dependent stations, empirical distributions,
        a finite capacity fed by an open class from another station, token
        pools JMT regions cannot express.
    """
    _numeric(net, "JSIMg")
    if net.has_class_switching and (net.pools or any(s.kind == "forkjoin" for s in net.stations)):
        raise UnsupportedModelError(
            "JSIMg export of class switching (chains "
            + "; ".join("+".join(ch) for ch in net.chains if len(ch) > 1)
            + ") together with token pools or fork-joins is not written: simulate it with "
            "qm.simulate")
    dropped = _dropped(net, drop, "JSIMg")
    _refuse_load_dependent(net)
    classes = list(net.classes)
    cnames = [c.name for c in classes]
    taken = set(net.station_names) | set(cnames) | {SOURCE, SINK}
    think, refs = _references(net, classes, taken)
    rows = {c.name: _routing_rows(net, i, c, think.get(c.name), refs.get(c.name))
            for i, c in enumerate(classes)}
    joins = fj.join_names(net, taken)
    rows = fj.rewrite_rows(net, rows, joins)
    switches = _class_switch_nodes(rows, taken)
    _check_capacities(net, rows)
    spans = _pool_spans(net, classes, cnames, rows)

    archive = ET.Element("archive", {
        "name": (net.name or "qmodels") + ".jsimg", "timestamp": timestamp,
        f"{{{_XSI}}}noNamespaceSchemaLocation": "Archive.xsd"})
    sim_attrs = {"name": net.name or "qmodels", "disableStatisticStop": "false",
                 "maxSamples": str(int(max_samples)),
                 f"{{{_XSI}}}noNamespaceSchemaLocation": "SIMmodeldefinition.xsd"}
    if seed is not None:
        sim_attrs["seed"] = str(int(seed))
    sim = ET.SubElement(archive, "sim", sim_attrs)
    w = _SimWriter(sim, classes, rows)
    w.user_classes(net, refs)
    S = np.asarray(net.service_times, dtype=float)
    if net.open_classes:
        w.source_node()
    for k, s in enumerate(net.stations):
        if s.name in joins:
            fj.write_nodes(w, s, joins[s.name])
        else:
            # each class's own shape there (JSIMg gives one per class)
            w.station_node(s, S[:, k], [row[k] for row in net.lowered.shapes])
    for cname, tnode in think.items():
        w.think_node(cname, tnode)
    for name, matrix in switches.items():
        w.class_switch_node(name, matrix)
    if net.open_classes:
        sink = ET.SubElement(sim, "node", name=SINK)
        ET.SubElement(sink, "section", className="JobSink")
    w.measures(net, confidence, precision)
    w.connections()
    w.regions(net, spans)
    w.preload(refs)
    ET.indent(archive)
    note = "".join(f"<!-- qmodels export: {d.replace('--', '- -')} -->\n" for d in dropped)
    return ("<?xml version='1.0' encoding='UTF-8' standalone='no'?>\n" + note
            + ET.tostring(archive, encoding="unicode") + "\n")


def save_jsimg(net: Network, path, **options) -> None:
    """Write :func:`to_jsimg` of ``net`` to ``path`` (``.jsimg``)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_jsimg(net, **options))
