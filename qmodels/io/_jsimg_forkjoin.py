"""Fork-joins in JSIMg files (:func:`qmodels.io.jsimg.to_jsimg`).

A :class:`~qmodels.model.ForkJoin` ``f`` becomes two JMT nodes: a fork
node named ``f`` (sections Queue, ServiceTunnel and Fork: JMT's Fork
section sends ``jobsPerLink`` tasks down every outgoing connection), whose
connections go to the first station of each branch, and a join node
``f.join`` (sections Join with the standard join of every class, which
waits for all the tasks of a job, ServiceTunnel and Router), where the
last station of each branch sends its tasks and from where the job goes
on by its class's routing from ``f``.  Branch stations route to the next
station of their branch.  The section and parameter names are JMT's
(``jmt.engine.NodeSections.Fork`` and ``Join``, ``jmt.engine.NetStrategies.
JoinStrategies.NormalJoin`` with ``numRequired`` -1: all tasks).

Refused by name: a fork-join whose branches take different numbers of
tasks (JMT's simplified fork sends the same number down every link).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..errors import UnsupportedModelError
from ..model.forkjoin import ForkJoin, branch_mask, forkjoins
from ._xml import _unique

_NS = "jmt.engine.NetStrategies"
__all__ = ["join_names", "rewrite_rows", "write_nodes", "branch_mask"]


def join_names(net, taken: set) -> dict:
    """{fork-join: the name of its JMT join node}."""
    return {f.name: _unique(f"{f.name}.join", taken) for f in forkjoins(net.stations)}


def rewrite_rows(net, rows: dict, joins: dict) -> dict:
    """The routing rows ({class: {node: {node: p}}}) with fork-joins: the
    row of ``f`` becomes the join node's, ``f``'s row lists its branches'
    first stations (for the connections: the fork sends to all), branch
    stations route along their branch and into the join node."""
    if not joins:
        return rows
    for f in forkjoins(net.stations):
        if len(set(f.tasks)) != 1:
            raise UnsupportedModelError(
                f"fork-join {f.name!r}: tasks {list(f.tasks)} differ by branch; a JMT fork "
                "sends the same number of tasks down every branch")
        for crow in rows.values():
            if f.name in crow:
                crow[joins[f.name]] = crow.pop(f.name)
                crow[f.name] = {br[0]: 1.0 / len(f.branches) for br in f.branches}
                for br in f.branches:
                    path = list(br) + [joins[f.name]]
                    for a, b in zip(path[:-1], path[1:]):
                        crow[a] = {b: 1.0}
    return rows


def write_nodes(w, f: ForkJoin, join: str) -> None:
    """The fork and join nodes of ``f`` (``w`` a jsimg ``_SimWriter``)."""
    node = ET.SubElement(w.sim, "node", name=f.name)
    w.queue_section(node, None)
    ET.SubElement(node, "section", className="ServiceTunnel")
    sec = ET.SubElement(node, "section", className="Fork")

    from .jsimg import _param as param  # jsimg imports this module at its top

    param(sec, "jobsPerLink", "java.lang.Integer", str(int(f.tasks[0])))
    param(sec, "block", "java.lang.Integer", "-1")
    param(sec, "isSimplifiedFork", "java.lang.Boolean", "true")
    param(sec, "ForkStrategy", f"{_NS}.ForkStrategy", array=True)
    jn = ET.SubElement(w.sim, "node", name=join)
    sec = ET.SubElement(jn, "section", className="Join")
    strat = param(sec, "JoinStrategy", f"{_NS}.JoinStrategy", array=True)
    for c in w.classes:
        ET.SubElement(strat, "refClass").text = c.name
        sp = ET.SubElement(strat, "subParameter", {
            "classPath": f"{_NS}.JoinStrategies.NormalJoin", "name": "Standard Join"})
        req = ET.SubElement(sp, "subParameter", {"classPath": "java.lang.Integer",
                                                 "name": "numRequired"})
        ET.SubElement(req, "value").text = "-1"
    ET.SubElement(jn, "section", className="ServiceTunnel")
    w.router(jn, join)
