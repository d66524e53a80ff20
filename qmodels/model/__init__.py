"""The model layer: stations, classes of work, held resources (token pools),
service-time distributions and the :class:`Network` that holds them.

A model is plain immutable data, validated once on construction; solvers
and the simulator read it and never change it.

=====================  =====================================================
:mod:`.stations`       ``Power``, ``Station``, ``Delay``, ``Queue``,
                       ``LoadDependent``
:mod:`.network`        ``Closed``, ``Open``, ``TokenPool``, the traffic
                       equations and ``Network``
:mod:`.caching`        ``CacheStation`` (a cache routing by its hit or miss)
                       and Che's approximation
:mod:`.distributions`  service and inter-arrival distributions
=====================  =====================================================
"""

from .network import (
    ROUTING_TOLERANCE,
    SINK,
    SOURCE,
    CacheStation,
    Closed,
    Delay,
    ForkJoin,
    FrozenMap,
    LoadDependent,
    Network,
    Open,
    Power,
    Queue,
    Station,
    TokenPool,
    pool_chains,
)

__all__ = ["Power", "Station", "Delay", "Queue", "LoadDependent", "CacheStation", "Closed",
           "Open", "Network", "ForkJoin", "TokenPool", "pool_chains", "FrozenMap",
           "ROUTING_TOLERANCE", "SOURCE", "SINK"]
