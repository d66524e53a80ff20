"""Defects a user reported, each pinned by a test that failed before its fix."""

import xml.etree.ElementTree as ET

import pytest

import qmodels as qm
from qmodels.io import jmt

# ---------------------------------------------------------------------------
# 1. JMVA round trip keeps a closed class's think time
# ---------------------------------------------------------------------------

def _with_think():
    return qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.1), qm.Delay("lan", 0.05)],
                      [qm.Closed("users", 1, think_time=4.0,
                                 visits={"cpu": 1, "disk": 2, "lan": 1}),
                       qm.Closed("batch", 2, visits={"cpu": 3, "disk": 1})],
                      name="jain")


def test_jmva_round_trip_keeps_think_time(tmp_path):
    net = _with_think()
    path = tmp_path / "jain.jmva"
    qm.save(net, path)
    # the file carries the think time as JMVA's delay station Z.<class> ...
    names = [e.get("name") for e in ET.parse(path).getroot().find("parameters/stations")]
    assert "Z.users" in names
    # ... and reading it back gives the class its think time, not a station
    back = qm.load(path)
    assert back == net
    assert "Z.users" not in back.station_names
    assert back.klass("users").think_time == 4.0


def test_jmva_think_station_read_back_keeps_r_without_z():
    """One user alone (the batch class emptied out): by hand R = sum of
    demands = 0.2 + 2 * 0.1 + 0.05 = 0.45, X = 1 / (Z + R)."""
    net = qm.Network([qm.Queue("cpu", 0.2), qm.Queue("disk", 0.1), qm.Delay("lan", 0.05)],
                     [qm.Closed("users", 1, think_time=4.0,
                                visits={"cpu": 1, "disk": 2, "lan": 1})])
    back = jmt.from_jmva(jmt.to_jmva(net))
    r = qm.mva(back)
    assert r.R["users"] == pytest.approx(0.45, rel=1e-12)
    assert r.X["users"] == pytest.approx(1 / 4.45, rel=1e-12)


def test_jmva_delay_named_like_think_but_shared_stays_a_station():
    """A Z.<class> delay that another class visits too is a real station."""
    net = qm.Network([qm.Queue("cpu", 0.2), qm.Delay("Z.a", 1.0)],
                     [qm.Closed("a", 2, visits={"cpu": 1, "Z.a": 1}),
                      qm.Closed("b", 1, visits={"cpu": 1, "Z.a": 1})])
    back = jmt.from_jmva(jmt.to_jmva(net))
    assert "Z.a" in back.station_names
    assert back.klass("a").think_time == 0
