"""Defects a user reported, each pinned by a test that failed before its fix."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import qmodels as qm
from qmodels.errors import InvalidValueError, UnsupportedModelError
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


# ---------------------------------------------------------------------------
# 2. JMT exports refuse power by name unless the caller lets them drop it
# ---------------------------------------------------------------------------

def _powered():
    return qm.Network([qm.Queue("cpu", 0.01),
                       qm.Queue("disk", 0.025, power=qm.Power(busy=6.8, idle=4.0))],
                      [qm.Closed("tx", 3, visits={"cpu": 1, "disk": 1})], name="p")


@pytest.mark.parametrize("suffix", [".jmva", ".jsimg"])
def test_jmt_export_refuses_power_by_name(tmp_path, suffix):
    with pytest.raises(UnsupportedModelError, match=r"station 'disk': power .*\.yaml or \.json"):
        qm.save(_powered(), tmp_path / f"x{suffix}")
    assert not (tmp_path / f"x{suffix}").exists()


def test_jmt_export_drops_power_when_asked_and_says_so(tmp_path):
    net = _powered()
    qm.save(net, tmp_path / "x.jmva", drop=("power",))
    desc = ET.parse(tmp_path / "x.jmva").getroot().find("description").text
    assert "power of 'disk' dropped" in desc
    back = qm.load(tmp_path / "x.jmva")
    assert back.station("disk").power is None
    assert qm.mva(back).X["tx"] == pytest.approx(qm.mva(net).X["tx"], rel=1e-12)
    xml = jmt.to_jsimg(net, drop="power")
    assert "<!-- qmodels export: power of 'disk' dropped" in xml
    assert jmt.validate_jsimg(xml) == []
    with pytest.raises(InvalidValueError, match="drop: 'colour'"):
        jmt.to_jmva(net, drop=("colour",))
    # model files keep power whatever drop says
    qm.save(net, tmp_path / "x.yaml", drop=("power",))
    assert qm.load(tmp_path / "x.yaml") == net


def test_convert_cli_refuses_power_or_drops_it(tmp_path, capsys):
    from qmodels.cli import main

    qm.save(_powered(), tmp_path / "p.yaml")
    assert main(["convert", str(tmp_path / "p.yaml"), str(tmp_path / "p.jmva")]) == 2
    assert "station 'disk': power" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / "p.yaml"), str(tmp_path / "p.jsimg"),
                 "--drop", "power"]) == 0
    assert "power of 'disk' dropped" in (tmp_path / "p.jsimg").read_text()


# ---------------------------------------------------------------------------
# 3. sweep(parallel=True) from a script without the __main__ guard
# ---------------------------------------------------------------------------

_SCRIPT = """\
import qmodels as qm
net = qm.Network([qm.Queue("cpu", 0.2)], [qm.Closed("tx", 2, visits={"cpu": 1})])
def run():
    df = qm.sweep(net, {"tx.population": [1, 2, 3]}, parallel=True, progress=False)
    print("rows", len(df))
"""


def _run_script(path, text):
    path.write_text(text)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(qm.__file__).parent.parent)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)),
        CI="1")
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=240, env=env, cwd=path.parent)


def test_parallel_sweep_without_main_guard_says_so(tmp_path):
    pytest.importorskip("distributed")
    p = _run_script(tmp_path / "noguard.py", _SCRIPT + "run()\n")
    assert p.returncode != 0
    assert "MainGuardError" in p.stderr and "noguard.py" in p.stderr
    assert "line 6" in p.stderr and 'if __name__ == "__main__":' in p.stderr
    assert "Nanny failed to start" not in p.stderr.replace("'Nanny failed to start'", "")
    # under the guard the same sweep runs: 3 points x (1 class + 1 station)
    p = _run_script(tmp_path / "guard.py", _SCRIPT + 'if __name__ == "__main__":\n    run()\n')
    assert p.returncode == 0, p.stderr[-2000:]
    assert "rows 6" in p.stdout


# ---------------------------------------------------------------------------
# 4. a physical element's parameters are sweepable by path
# ---------------------------------------------------------------------------

def _disk_net(**disk):
    d = qm.Disk(seek=0.008, rpm=7200, transfer_rate=100e6, size=8192, **disk)
    return qm.Network([d.station("disk"), qm.Queue("cpu", 0.01)],
                      [qm.Closed("tx", 1, visits={"disk": 1, "cpu": 1})])


def test_sweep_varies_a_disk_elements_rpm():
    """One job alone: X = 1 / (D_disk + D_cpu) with, by Hennessy & Patterson
    (5th ed., appendix D.2), D_disk = seek + (60 / rpm) / 2 + size / rate."""
    rpms = [5400, 7200, 15000]
    df = qm.sweep(_disk_net(), {"disk.rpm": rpms}, stations=False, progress=False)
    for rpm, x in zip(rpms, df.sort_values("point")["X"], strict=True):
        d_disk = 0.008 + 60 / rpm / 2 + 8192 / 100e6
        assert x == pytest.approx(1 / (d_disk + 0.01), rel=1e-12)
    # the station rebuilt from the changed element keeps it, so paths compose
    from qmodels.whatif.paths import apply

    net = apply(_disk_net(), {"disk.rpm": 15000, "disk.miss_rate": 0.5})
    assert net.station("disk").element.rpm == 15000
    assert net.station("disk").service == pytest.approx(
        0.5 * (0.008 + 2e-3 + 8192 / 100e6), rel=1e-12)


def test_element_path_keeps_the_station_options_and_servers():
    from qmodels.whatif.paths import apply

    cpu = qm.CPU(cores=4, clock=2e9, seconds=0.02)
    pw = qm.Power(busy=95, idle=40)
    net = qm.Network([cpu.station("cpu", power=pw, discipline="ps")],
                     [qm.Closed("tx", 3, visits={"cpu": 1})])
    s = apply(net, {"cpu.cores": 8}).station("cpu")
    assert (s.servers, s.power, s.discipline) == (8, pw, "ps")
    # servers set apart from the element stay as set
    net2 = qm.Network([cpu.station("cpu", servers=2)], [qm.Closed("tx", 3, visits={"cpu": 1})])
    assert apply(net2, {"cpu.clock": 4e9}).station("cpu").servers == 2
    # the element is provenance only: not compared, not saved
    assert qm.Network.from_dict(net.to_dict()) == net


def test_element_path_refuses_a_station_changed_since():
    import dataclasses

    from qmodels.whatif.paths import apply

    net = _disk_net()
    changed = qm.Network([dataclasses.replace(net.station("disk"), service=0.5),
                          net.station("cpu")], net.classes)
    with pytest.raises(InvalidValueError, match=r"'disk.rpm': station 'disk' was built from a "
                                                r"Disk but changed since"):
        apply(changed, {"disk.rpm": 15000})
    with pytest.raises(qm.errors.UnknownNameError, match="Queue has no parameter 'rpmm'"):
        apply(net, {"disk.rpmm": 1})


# ---------------------------------------------------------------------------
# 5. table() wraps long notes to a readable width, losing no word
# ---------------------------------------------------------------------------

def test_table_wraps_long_notes_keeping_every_word():
    net = qm.Network([qm.Queue("cpu", 0.2, distribution=qm.Erlang(2)),
                      qm.Queue("disk", 0.1, servers=2)],
                     [qm.Closed("a", 3, visits={"cpu": 1, "disk": 1}),
                      qm.Closed("b", 2, visits={"cpu": 1, "disk": 2})])
    r = qm.solve(net)
    # the case reported was a long method note; with every method's note
    # shorter now, one long note is added to the answer to wrap
    import dataclasses

    r = dataclasses.replace(r, notes=tuple(r.notes) + (
        "the answer's note runs on " + " ".join(f"word{i}" for i in range(40)),))
    assert max(len(n) for n in r.notes) > 200
    lines = r.table().splitlines()
    assert max(len(x) for x in lines) <= 100
    start = next(i for i, x in enumerate(lines) if x.startswith("note: "))
    assert " ".join(x.removeprefix("note: ").strip() for x in lines[start:]).split() == \
        " ".join(r.notes).split()
    # continuation lines sit under the note's text
    assert all(x.startswith(("note: ", " " * 6)) for x in lines[start:])


def test_note_lines_keeps_a_long_word_whole():
    from qmodels._format import note_lines

    word = "x" * 150
    assert note_lines([f"see {word} here"]) == ["note: see", f"      {word}", "      here"]
    assert note_lines(["short"], "  note: ") == ["  note: short"]
