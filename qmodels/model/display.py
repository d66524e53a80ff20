"""The notebook display of a :class:`~qmodels.model.network.Network`
(``Network._repr_html_``): its stations, classes, demands D = V S per class
and station, and token pools, as HTML tables.  Times in seconds, rates per
second, as everywhere in the package."""

from __future__ import annotations

from .. import _format as h
from .._format import fmt

__all__ = ["network_html"]


def _servers(st) -> str:
    if st.kind == "delay":
        return "inf"
    if st.kind == "ld":
        return "rates " + ", ".join(fmt(a) for a in st.rate_multipliers)
    return str(st.servers)


def _workload(c) -> str:
    if c.kind == "closed":
        z = getattr(c, "think_time", 0)
        return f"N = {c.population}" + (f", Z = {fmt(z)} s" if z != 0 else "")
    return f"lambda = {fmt(c.arrival_rate)} 1/s"


def network_html(net) -> str:
    """The stations (kind, servers, service time, capacity), the classes
    (workload), the demands table D [s] (class x station) and the token
    pools (tokens, acquire, release, held path, classes) of ``net``."""
    out = [h.title("Network", net.name)]
    out.append(h.html_table(
        ["station", "kind", "servers", "S [s]", "capacity"],
        [[s.name, s.kind, _servers(s), s.service,
          "-" if s.capacity is None else str(s.capacity)] for s in net.stations],
        caption="stations"))
    out.append(h.html_table(
        ["class", "type", "workload"],
        [[c.name, c.kind, _workload(c)] for c in net.classes],
        caption="classes"))
    out.append(h.html_table(
        ["D [s]"] + list(net.station_names),
        [[c.name] + [net.demands[i, k] for k in range(len(net.stations))]
         for i, c in enumerate(net.classes)],
        caption="demands D = V S (visits x service time), class x station"))
    if net.pools:
        out.append(h.html_table(
            ["pool", "tokens", "acquire", "release", "held path", "classes"],
            [[p.name, str(p.tokens), p.acquire, p.release,
              " -> ".join(p.path) if p.path else "(from the routing)",
              ", ".join(p.classes) if p.classes is not None else "all"]
             for p in net.pools],
            caption="token pools (tokens: a count)"))
    return "\n".join(out)
