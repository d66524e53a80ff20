"""qm.sweep: grid, parameter paths, the batched route against one-by-one
solves, seeds, dask (1 vs 2 workers), a resumable store killed by SIGKILL,
progress, and the ``qmodels sweep`` command."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

import qmodels as qm

# ``qm.sweep`` is the function; its module is qmodels.whatif
import qmodels.whatif as sweep_mod  # noqa: E402

pytest.importorskip("pyarrow")


def two_tier(s_disk=0.025, n=10, c_cpu=2, z=0.5, v_disk=0.8, s_cpu=0.010):
    """The network built by hand (the reference for the path machinery)."""
    return qm.Network(
        [qm.Delay("users", 1.0), qm.Queue("cpu", s_cpu, servers=c_cpu),
         qm.Queue("disk", s_disk)],
        [qm.Closed("tx", n, think_time=z, visits={"users": 1, "cpu": 1, "disk": v_disk})])


BASE = two_tier()


def _check_point(df, point, res):
    """Every figure of the sweep's rows of ``point`` equals the one-by-one
    result ``res`` exactly (==, not approximately)."""
    rows = df[df["point"] == point].set_index("name")
    net = res.network
    for c in net.class_names:
        assert rows.loc[c, "scope"] == "class"
        for m in ("X", "R", "Q"):
            assert rows.loc[c, m] == getattr(res, m)[c], (point, c, m)
    for s in net.station_names:
        for m in ("X", "R", "Q", "U"):
            assert rows.loc[s, m] == getattr(res, m)[s], (point, s, m)
        assert rows.loc[s, "bottleneck"] == (s in res.bottleneck)


def test_grid_order_and_rows():
    g = sweep_mod.grid({"a": [1, 2], "b": [0.1, 0.2, 0.3]})
    assert len(g) == 6 and g[0] == {"a": 1, "b": 0.1} and g[3] == {"a": 2, "b": 0.1}
    assert sweep_mod.grid(rows=[{"a": 1}, {"a": 5}]) == [{"a": 1}, {"a": 5}]
    with pytest.raises(qm.InvalidValueError, match="every row must name the same"):
        sweep_mod.grid(rows=[{"a": 1}, {"b": 5}])
    with pytest.raises(qm.InvalidValueError, match="give the grid"):
        sweep_mod.grid()
    with pytest.raises(qm.InvalidValueError, match=r"vary\['a'\] has no values"):
        sweep_mod.grid({"a": []})


def test_apply_paths_equal_hand_built():
    net = sweep_mod.apply(BASE, {"disk.service": 0.04, "tx.population": 7,
                                 "cpu.servers": 3, "tx.visits.disk": 0.5,
                                 "tx.think_time": 2.0})
    ref = two_tier(s_disk=0.04, n=7, c_cpu=3, v_disk=0.5, z=2.0)
    assert net.stations == ref.stations and net.classes == ref.classes
    pool = qm.Network([qm.Queue("dma", 0.001), qm.Queue("port", 0.002)],
                      [qm.Closed("p", 4, visits={"dma": 1, "port": 1})],
                      pools=[qm.TokenPool("buf", 2, "dma", "port")])
    assert sweep_mod.apply(pool, {"buf.tokens": 5}).pools[0].tokens == 5
    pw = qm.Network([qm.Queue("disk", 0.02, power=qm.Power(busy=6.8, idle=4.0))],
                    [qm.Closed("tx", 2, visits={"disk": 1})])
    assert sweep_mod.apply(pw, {"disk.power.busy": 9.0}).stations[0].power.busy == 9.0
    # an unset nested object or mapping starts empty and is validated as usual
    assert sweep_mod.apply(BASE, {"disk.power.busy": 5.0}).station("disk").power.busy == 5.0
    assert sweep_mod.apply(BASE, {"tx.service.disk": 0.5}).service_times[0, 2] == 0.5


def test_path_errors_name_the_path():
    with pytest.raises(qm.UnknownNameError, match="'disk.servce'.*no parameter 'servce'"):
        qm.sweep(BASE, {"disk.servce": [0.1]}, progress=False)
    with pytest.raises(qm.UnknownNameError, match="no station, class or pool 'dsk'"):
        qm.sweep(BASE, {"dsk.service": [0.1]}, progress=False)
    with pytest.raises(qm.PopulationError, match="class 'tx': population .* got 1.5"):
        qm.sweep(BASE, {"tx.population": [2, 1.5]}, progress=False)
    with pytest.raises(qm.InvalidValueError, match="path must look like"):
        qm.sweep(BASE, {"service": [0.1]}, progress=False)
    with pytest.raises(qm.InvalidValueError, match="needs seed"):
        qm.sweep(BASE, {"disk.service": [0.1]}, method="sim", progress=False)
    with pytest.raises(qm.InvalidValueError, match="deterministic"):
        qm.sweep(BASE, {"disk.service": [0.1]}, seed=1, progress=False)


def test_batched_exact_equals_one_by_one_bit_for_bit():
    # delay, single- and multi-server stations (c < N, c >= N), N = 0, and
    # a station with no visits
    vary = {"disk.service": [0.004, 0.025, 0.07], "tx.population": [0, 1, 3, 25],
            "cpu.servers": [1, 2, 30], "tx.visits.disk": [0.0, 0.8]}
    df = qm.sweep(BASE, vary, progress=False)
    assert df.attrs["route"] == "batch" and df.attrs["points"] == 72
    assert len(df) == 72 * 4
    for i, p in enumerate(sweep_mod.grid(vary)):
        ref = qm.mva(two_tier(s_disk=p["disk.service"], n=p["tx.population"],
                              c_cpu=p["cpu.servers"], v_disk=p["tx.visits.disk"]))
        _check_point(df, i, ref)


def test_batched_route_k20_equals_one_by_one():
    # K = 20 stations: the class Q and D sums over 20 terms agree too
    sts = [qm.Queue(f"s{k}", 0.001 * (k + 1)) for k in range(20)]
    net = qm.Network(sts, [qm.Closed("tx", 30, think_time=0.1,
                                     visits={f"s{k}": 1 for k in range(20)})])
    vary = {"s3.service": [0.001, 0.05], "s7.service": [0.002, 0.03], "tx.population": [5, 30]}
    df = qm.sweep(net, vary, progress=False)
    assert df.attrs["route"] == "batch"
    for i, p in enumerate(sweep_mod.grid(vary)):
        s = list(sts)
        s[3] = qm.Queue("s3", p["s3.service"])
        s[7] = qm.Queue("s7", p["s7.service"])
        ref = qm.mva(qm.Network(s, [qm.Closed("tx", p["tx.population"], think_time=0.1,
                                              visits={f"s{k}": 1 for k in range(20)})]))
        _check_point(df, i, ref)
        assert df[(df.point == i) & (df.scope == "class")]["D"].item() == ref.network.demands[0].sum()


def test_two_axes_on_one_entry_fall_back_and_agree():
    # service and visits of one station combine into its demand D = V S on
    # the batched route; two axes that set the same entry (the station's
    # service time and the class's own service time there, which overrides
    # it) make the sweep decline the batched route; both agree with
    # hand-built networks
    vary = {"disk.service": [0.01, 0.05], "tx.visits.disk": [0.5, 2.0]}
    df = qm.sweep(BASE, vary, progress=False)
    assert df.attrs["route"] == "batch"
    for i, p in enumerate(sweep_mod.grid(vary)):
        _check_point(df, i, qm.mva(two_tier(s_disk=p["disk.service"],
                                            v_disk=p["tx.visits.disk"])))
    vary = {"disk.service": [0.01, 0.05], "tx.service.disk": [0.02, 0.03]}
    df = qm.sweep(BASE, vary, progress=False)
    assert df.attrs["route"] == "one-by-one"
    for i, p in enumerate(sweep_mod.grid(vary)):
        ref = qm.Network(two_tier(s_disk=p["disk.service"]).stations, [qm.Closed(
            "tx", 10, think_time=0.5, visits={"users": 1, "cpu": 1, "disk": 0.8},
            service={"disk": p["tx.service.disk"]})])
        _check_point(df, i, qm.mva(ref))


def test_methods_one_by_one_and_function_model():
    vary = {"disk.service": [0.01, 0.05], "tx.population": [2, 12]}
    for method in ("schweitzer", "decomposition"):
        df = qm.sweep(BASE, vary, method=method, progress=False)
        assert df.attrs["route"] == "one-by-one"
        for i, p in enumerate(sweep_mod.grid(vary)):
            ref = qm.solve(two_tier(s_disk=p["disk.service"], n=p["tx.population"]),
                           method=method)
            _check_point(df, i, ref)

    def build(p_io, n=5):
        # the I/O probability of a central-server model: routing rows sum to 1
        return qm.Network([qm.Queue("cpu", 0.01), qm.Queue("disk", 0.02)],
                          [qm.Closed("tx", n, routing={"cpu": {"cpu": 1 - p_io, "disk": p_io},
                                                       "disk": {"cpu": 1.0}})])

    df = qm.sweep(build, {"p_io": [0.1, 0.4, 0.7], "tx.population": [2, 8]}, progress=False)
    assert list(df.columns[:3]) == ["point", "p_io", "tx.population"]
    for i, p in enumerate(sweep_mod.grid({"p_io": [0.1, 0.4, 0.7], "tx.population": [2, 8]})):
        _check_point(df, i, qm.mva(build(p["p_io"], p["tx.population"])))
    # visits per cycle: cpu 1/(1-p), disk p/(1-p); more I/O, more demand, lower X
    x = df[(df.scope == "class") & (df["tx.population"] == 8)]["X"].to_numpy()
    assert x[0] > x[1] > x[2]


def test_open_sweep_past_saturation_raises_or_records():
    net = qm.Network([qm.Queue("cpu", 0.02), qm.Queue("disk", 0.04)],
                     [qm.Open("web", arrival_rate=1.0, visits={"cpu": 1, "disk": 1})])
    rates = [5.0, 20.0, 30.0]     # the disk saturates at 1/0.04 = 25 per second
    with pytest.raises(qm.UnstableError, match=r"sweep point 2 \{'web.arrival_rate': 30.0\}"):
        qm.sweep(net, {"web.arrival_rate": rates}, progress=False)
    df = qm.sweep(net, {"web.arrival_rate": rates}, on_error="record", progress=False)
    assert df.attrs["failed"] == 1
    err = df[df.scope == "error"]
    assert err["point"].tolist() == [2] and err["name"].tolist() == ["UnstableError"]
    assert "disk" in err["error"].iloc[0]
    # the stable points: M/M/1 by hand, R_disk = S/(1 - lambda S)
    disk = df[(df.name == "disk") & (df.point == 1)].iloc[0]
    assert disk["R"] == pytest.approx(0.04 / (1 - 20.0 * 0.04), rel=1e-12)
    # the batched route records a refused row too
    zero = qm.Network([qm.Queue("d", 0.0)], [qm.Closed("t", 1, visits={"d": 1})])
    with pytest.raises(qm.InvalidValueError, match="sweep point 0"):
        qm.sweep(zero, {"t.population": [1, 2]}, progress=False)
    df = qm.sweep(zero, {"t.population": [0, 1]}, on_error="record", progress=False)
    assert df["scope"].tolist() == ["class", "station", "error"]


def test_bounds_sweep_columns():
    df = qm.sweep(BASE, {"disk.service": [0.01, 0.05]}, method="bounds", progress=False)
    cls = df[df.scope == "class"].reset_index()
    for i, s in enumerate([0.01, 0.05]):
        b = qm.bounds(two_tier(s_disk=s))
        assert cls.loc[i, "X_lower"] == b.throughput_lower
        assert cls.loc[i, "X_upper"] == b.throughput_upper
        assert cls.loc[i, "N_star"] == b.saturation_population


def test_sim_points_use_spawned_seeds_and_half_widths():
    vary = {"tx.population": [2, 6]}
    opts = {"horizon": 200.0, "replications": 3}
    df = qm.sweep(BASE, vary, method="sim", seed=11, options=opts, progress=False)
    kids = np.random.SeedSequence(11).spawn(2)
    for i, n in enumerate([2, 6]):
        ref = qm.simulate(two_tier(n=n), seed=kids[i], **opts)
        row = df[(df.point == i) & (df.name == "tx")].iloc[0]
        assert row["X"] == ref.X["tx"].mean and row["X_hw"] == ref.X["tx"].half_width
        row = df[(df.point == i) & (df.name == "disk")].iloc[0]
        assert row["U"] == ref.U["disk"].mean and row["U_hw"] == ref.U["disk"].half_width
    # chunking does not change a bit
    df1 = qm.sweep(BASE, vary, method="sim", seed=11, options=opts, chunksize=1,
                   progress=False)
    pd.testing.assert_frame_equal(df, df1, check_exact=True)


def test_distributed_equals_local_bit_for_bit():
    distributed = pytest.importorskip("distributed")
    vary = {"disk.service": [0.01, 0.03, 0.05], "tx.population": [3, 10]}
    opts = {"horizon": 100.0, "replications": 2}
    local_sim = qm.sweep(BASE, vary, method="sim", seed=5, options=opts, progress=False)
    local_ex = qm.sweep(BASE, vary, progress=False)
    local_sch = qm.sweep(BASE, vary, method="schweitzer", progress=False)
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                      processes=False, dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            sim = qm.sweep(BASE, vary, method="sim", seed=5, options=opts, client=client,
                           chunksize=1, progress=False)
            ex = qm.sweep(BASE, vary, client=client, chunksize=2, progress=False)
            sch = qm.sweep(BASE, vary, method="schweitzer", client=client, progress=False)
        pd.testing.assert_frame_equal(local_sim, sim, check_exact=True)
        pd.testing.assert_frame_equal(local_ex, ex, check_exact=True)
        pd.testing.assert_frame_equal(local_sch, sch, check_exact=True)


def test_parallel_local_cluster_and_store(tmp_path):
    pytest.importorskip("distributed")
    vary = {"disk.service": [0.01, 0.03, 0.05], "tx.population": [3, 10]}
    local = qm.sweep(BASE, vary, method="schweitzer", progress=False)
    par = qm.sweep(BASE, vary, method="schweitzer", parallel=True, chunksize=1,
                   store=tmp_path / "st", progress=False)
    pd.testing.assert_frame_equal(local, par, check_exact=True)
    assert len(list((tmp_path / "st").glob("part-*.parquet"))) == 6
    again = qm.sweep(BASE, vary, method="schweitzer", store=tmp_path / "st", progress=False)
    assert again.attrs["computed"] == 0
    pd.testing.assert_frame_equal(local, again, check_exact=True)


SLOW_MODEL = '''
import time
import qmodels as qm

CALLS = []


def build(s):
    CALLS.append(s)
    time.sleep(0.1)
    return qm.Network([qm.Queue("cpu", 0.01), qm.Queue("disk", s)],
                      [qm.Closed("tx", 8, visits={"cpu": 1, "disk": 1})])
'''


def test_store_survives_sigkill_and_resumes(tmp_path):
    (tmp_path / "slowmodel.py").write_text(SLOW_MODEL)
    store = tmp_path / "sweep.parquet"
    values = [0.001 * (i + 1) for i in range(40)]
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import qmodels as qm
        from slowmodel import build
        qm.sweep(build, {{"s": {values!r}}}, store={str(store)!r}, chunksize=1,
                 progress=False)
        print("finished")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), *sys.path]))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if len(list(store.glob("part-*.parquet"))) >= 3:
                break
            if proc.poll() is not None:
                pytest.fail(f"sweep subprocess ended early: {proc.stderr.read().decode()}")
            time.sleep(0.02)
        else:
            pytest.fail("no parts written in 120 s")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    parts = sorted(store.glob("part-*.parquet"))
    assert 3 <= len(parts) < len(values)
    # every part on disk is complete and readable after the kill
    stored = pd.concat([pd.read_parquet(p) for p in parts])
    assert stored["point"].nunique() == len(parts)

    sys.path.insert(0, str(tmp_path))
    try:
        import slowmodel
        slowmodel.CALLS.clear()
        df = qm.sweep(slowmodel.build, {"s": values}, store=store, chunksize=4, progress=False)
        # only the missing points were computed: the model function ran once each
        assert df.attrs["stored"] == len(parts)
        assert df.attrs["computed"] == len(values) - len(parts)
        assert sorted(slowmodel.CALLS) == sorted(
            values[i] for i in set(range(len(values))) - set(stored["point"]))
        # a second run computes nothing
        slowmodel.CALLS.clear()
        again = qm.sweep(slowmodel.build, {"s": values}, store=store, progress=False)
        assert again.attrs["computed"] == 0 and slowmodel.CALLS == []
        # and the table equals an uninterrupted in-memory sweep
        slowmodel.CALLS.clear()
        fresh = qm.sweep(slowmodel.build, {"s": values}, progress=False)
        pd.testing.assert_frame_equal(df, fresh, check_exact=True)
        pd.testing.assert_frame_equal(again, fresh, check_exact=True)
        assert pd.read_parquet(store)["point"].nunique() == len(values)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("slowmodel", None)


def test_store_refuses_another_sweep(tmp_path):
    store = tmp_path / "s"
    qm.sweep(BASE, {"tx.population": [1, 2]}, store=store, progress=False)
    with pytest.raises(qm.InvalidValueError, match="holds a different sweep"):
        qm.sweep(BASE, {"tx.population": [1, 3]}, store=store, progress=False)
    # leftovers of a killed writer are removed, never read
    (store / ".tmp-part-x.parquet").write_bytes(b"half a file")
    df = qm.sweep(BASE, {"tx.population": [1, 2]}, store=store, progress=False)
    assert df.attrs["computed"] == 0
    pd.testing.assert_frame_equal(df, qm.sweep(BASE, {"tx.population": [1, 2]},
                                               progress=False), check_exact=True)
    # half stored (batched route), half computed: the same table as in memory
    vary = {"tx.population": [1, 2, 3, 4], "disk.service": [0.01, 0.02]}
    half = tmp_path / "half"
    qm.sweep(BASE, vary, store=half, chunksize=2, progress=False)
    for part in sorted(half.glob("part-*.parquet"))[2:]:
        part.unlink()
    df = qm.sweep(BASE, vary, store=half, progress=False)
    assert df.attrs["stored"] == 4 and df.attrs["computed"] == 4
    pd.testing.assert_frame_equal(df, qm.sweep(BASE, vary, progress=False), check_exact=True)
    # class rows only
    small = qm.sweep(BASE, vary, stations=False, progress=False)
    assert (small["scope"] == "class").all() and len(small) == 8
    two = qm.sweep(BASE, vary, stations=["disk"], method="schweitzer", progress=False)
    assert two["name"].tolist()[:2] == ["tx", "disk"]
    with pytest.raises(qm.UnknownNameError, match="no station 'dsk'"):
        qm.sweep(BASE, vary, stations=["dsk"], progress=False)
    assert not list(store.glob(".tmp-*"))


def test_progress_silent_in_ci_and_when_off(monkeypatch, capfd):
    pytest.importorskip("tqdm")
    vary = {"tx.population": [1, 2, 3]}
    from qmodels._progress import bar as _progress  # qm.simulate's bar too

    monkeypatch.setenv("CI", "true")
    qm.sweep(BASE, vary, progress=True)
    assert capfd.readouterr().err == ""
    assert _progress(True, 10, "simulating") is None  # qm.simulate's bar
    monkeypatch.delenv("CI")
    bar = _progress(True, 10, "simulating")
    assert bar is not None
    bar.close()
    assert "simulating" in capfd.readouterr().err  # shown at once when asked for
    qm.sweep(BASE, vary, progress=False)
    assert capfd.readouterr().err == ""
    qm.sweep(BASE, vary, progress=True)
    assert "sweep (exact)" in capfd.readouterr().err


# -- command line -----------------------------------------------------------

MODEL_YAML = """
name: two-tier
stations:
  - {name: users, kind: delay, service: 1.0}
  - {name: cpu, kind: queue, service: 0.010, servers: 2}
  - {name: disk, kind: queue, service: 0.025}
classes:
  - {name: tx, type: closed, population: 10, think_time: 0.5,
     visits: {users: 1, cpu: 1, disk: 0.8}}
"""


def _cli(argv):
    p = argparse.ArgumentParser(prog="qmodels")
    sweep_mod.register_cli(p.add_subparsers(dest="command"))
    args = p.parse_args(argv)
    return args.func(args)


def test_parse_values():
    assert sweep_mod.parse_values("disk.service", "0.005:0.05:10")[-1] == 0.05
    assert len(sweep_mod.parse_values("disk.service", "0.005:0.05:10")) == 10
    pop = sweep_mod.parse_values("tx.population", "1:200:50")
    assert pop[0] == 1 and pop[-1] == 200 and all(isinstance(v, int) for v in pop)
    assert sweep_mod.parse_values("tx.population", "1,2,5") == [1, 2, 5]
    with pytest.raises(qm.InvalidValueError, match="takes integers"):
        sweep_mod.parse_values("tx.population", "1,2.5")
    with pytest.raises(qm.InvalidValueError, match="START:STOP:NUM"):
        sweep_mod.parse_values("disk.service", "1:2")


def test_cli_sweep_parquet_and_csv(tmp_path, capsys):
    model = tmp_path / "m.yaml"
    model.write_text(MODEL_YAML)
    out = tmp_path / "r.parquet"
    rc = _cli(["sweep", str(model), "--vary", "disk.service=0.005:0.05:4",
               "--vary", "tx.population=1:20:3", "--method", "exact", "--out", str(out)])
    assert rc == 0
    df = pd.read_parquet(out)
    ref = qm.sweep(BASE, {"disk.service": [0.005, 0.02, 0.035, 0.05],
                          "tx.population": [1, 10, 20]}, progress=False)
    assert df["X"].tolist() == ref["X"].tolist()
    rc = _cli(["sweep", str(model), "--vary", "tx.population=1,2", "--csv",
               "--out", str(tmp_path / "r.csv")])
    assert rc == 0
    assert pd.read_csv(tmp_path / "r.csv")["tx.population"].tolist() == [1] * 4 + [2] * 4
    capsys.readouterr()
    assert _cli(["sweep", str(model), "--vary", "tx.populaton=1,2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "populaton" in err and err.count("\n") == 1
    assert _cli(["sweep", str(tmp_path / "missing.yaml"), "--vary", "tx.population=1"]) == 2


def test_qm_sweep_callable_whatever_the_import_order():
    code = ("import qmodels.whatif\nimport qmodels as qm\n"
            "net = qm.Network([qm.Queue('d', 0.1)], [qm.Closed('t', 2, visits={'d': 1})])\n"
            "print(len(qm.sweep(net, {'t.population': [1, 2]}, progress=False)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.getcwd()), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4"


# -- user audit: open classes under bounds, token pools in the table ---------

def test_bounds_sweep_of_an_open_class():
    """An open class has no N* (Bounds.saturation_population is None): the
    sweep used to die with a bare TypeError; now N_star is NaN and the
    throughput bounds are the arrival rate itself (X = lambda, by hand), X_max
    = 1/Dmax."""
    net = qm.Network([qm.Queue("cpu", 0.010), qm.Queue("disk", 0.025)],
                     [qm.Open("web", 10.0, visits={"cpu": 1, "disk": 1})])
    df = qm.sweep(net, {"web.arrival_rate": [1.0, 20.0]}, method="bounds", progress=False)
    cls = df[df.scope == "class"].reset_index(drop=True)
    assert cls["X_lower"].tolist() == [1.0, 20.0] and cls["X_upper"].tolist() == [1.0, 20.0]
    assert cls["N_star"].isna().all()
    assert cls["X_max"].tolist() == pytest.approx([1 / 0.025] * 2, rel=1e-12)


def _one_token_pair(n=20, tokens=1):
    """One token held over two 1-second stations: with n >= 2 jobs the token
    is never idle, so (by hand) X = tokens / 2 s for tokens = 1, the pool's
    utilisation is 1 and n - 1 jobs wait for the token."""
    return qm.Network([qm.Queue("a", 1.0), qm.Queue("b", 1.0)],
                      [qm.Closed("t", n, routing={"a": {"b": 1}, "b": {"a": 1}})],
                      pools=[qm.TokenPool("tok", tokens, "a", "b")])


def test_pool_rows_carry_the_bottleneck():
    """A pool that is the bottleneck used to vanish from the table: every
    station row said bottleneck False.  Now each pool has a row (scope
    "pool") with its utilisation, the jobs waiting for a token and the
    bottleneck flag, for solved, simulated and bounded points."""
    net = _one_token_pair(n=4)
    df = qm.sweep(net, {"tok.tokens": [1]}, method="ctmc", progress=False)
    pool = df[df.scope == "pool"].set_index("name")
    assert pool.loc["tok", "bottleneck"]
    assert not df[df.scope == "station"]["bottleneck"].any()
    assert pool.loc["tok", "U"] == pytest.approx(1.0, abs=1e-12)     # by hand
    assert pool.loc["tok", "Q"] == pytest.approx(3.0, abs=1e-12)     # n - 1 wait
    # the same rows as the result's own table
    res = qm.solve(net, method="ctmc")
    frame = res.to_frame().loc["tok"]
    assert pool.loc["tok", "U"] == frame["U"] and pool.loc["tok", "Q"] == frame["Q"]
    # bounds: the pool alone limits X to 1/2 (stations allow 1): flagged
    b = qm.sweep(net, {"tok.tokens": [1]}, method="bounds", progress=False)
    assert b[b.scope == "pool"]["bottleneck"].tolist() == [True]
    assert not b[b.scope == "station"]["bottleneck"].any()
    # sim: the pool's U with its half-width
    s = qm.sweep(net, {"tok.tokens": [1]}, method="sim", seed=1,
                 options={"horizon": 200.0, "replications": 3}, progress=False)
    sp_ = s[s.scope == "pool"].iloc[0]
    assert sp_["bottleneck"] and abs(sp_["U"] - 1.0) <= sp_["U_hw"] + 1e-9
    # stations=False keeps the class rows only; a pool can be named
    assert set(qm.sweep(net, {"tok.tokens": [1]}, method="ctmc", stations=False,
                        progress=False)["scope"]) == {"class"}
    kept = qm.sweep(net, {"tok.tokens": [1]}, method="ctmc", stations=["tok"], progress=False)
    assert kept["name"].tolist() == ["t", "tok"]


def test_store_refusals_are_typed_and_early(tmp_path):
    """A store path that is a file, and a parameter whose values Parquet
    cannot hold (a Power object), used to end in a bare FileExistsError and
    pyarrow's ArrowInvalid (the latter after solving the points); both are
    InvalidValueError naming the store or the parameter now, before any
    work.  Without a store the object axis still sweeps."""
    f = tmp_path / "model.yaml"
    f.write_text("not a directory")
    with pytest.raises(qm.InvalidValueError, match="model.yaml"):
        qm.sweep(BASE, {"disk.service": [0.01]}, store=f, progress=False)
    vary = {"disk.power": [qm.Power(busy=6.8, idle=4.0), None]}
    with pytest.raises(qm.InvalidValueError, match="'disk.power'.*Power"):
        qm.sweep(BASE, vary, store=tmp_path / "st", progress=False)
    assert not (tmp_path / "st").exists()       # refused before the store was made
    assert qm.sweep(BASE, vary, progress=False)["point"].nunique() == 2


def test_record_a_value_the_model_rejects_on_the_exact_route():
    """on_error="record" with method "exact" used to raise a population of
    -1 (found while choosing the batched route, without its point); now the
    point is recorded and the valid point keeps its exact figures (one job,
    no queue: X = 1 / (D + Z), by hand)."""
    df = qm.sweep(BASE, {"tx.population": [1, -1]}, on_error="record", progress=False)
    err = df[df.scope == "error"]
    assert err["point"].tolist() == [1] and err["name"].tolist() == ["PopulationError"]
    x1 = df[(df.scope == "class") & (df.point == 0)]["X"].iloc[0]
    assert x1 == pytest.approx(1 / (1.0 + 0.010 + 0.8 * 0.025 + 0.5), rel=1e-12)
    with pytest.raises(qm.PopulationError, match="sweep point 1"):
        qm.sweep(BASE, {"tx.population": [1, -1]}, progress=False)


def test_cli_sweep_out_into_a_missing_directory(tmp_path, capsys):
    """``--out`` into a directory that does not exist used to solve the
    whole sweep and then die with a bare OSError traceback; it is one
    ``error:`` line and exit status 2 now, and nothing is solved."""
    model = tmp_path / "m.yaml"
    model.write_text(MODEL_YAML)
    capsys.readouterr()
    for out in (tmp_path / "no" / "such" / "r.parquet", tmp_path):
        rc = _cli(["sweep", str(model), "--vary", "tx.population=1,2", "--out", str(out)])
        err = capsys.readouterr().err
        assert rc == 2 and err.startswith("error: --out") and err.count("\n") == 1, err


def test_store_keeps_tuple_parameters_as_given(tmp_path):
    """Rate multipliers (tuples) are stored; a resumed sweep used to hand
    them back as numpy arrays, so a resumed table differed from a fresh
    one.  Both are the same table now, and the store check of the previous
    test does not refuse them."""
    net = qm.Network([qm.LoadDependent("raid", 0.02, rate_multipliers=(1, 1.8)),
                      qm.Queue("cpu", 0.01)], [qm.Closed("t", 5, visits={"raid": 1, "cpu": 1})])
    vary = {"raid.rate_multipliers": [(1, 2), (1, 2, 3)]}
    fresh = qm.sweep(net, vary, progress=False)
    first = qm.sweep(net, vary, store=tmp_path / "st", progress=False)
    again = qm.sweep(net, vary, store=tmp_path / "st", progress=False)
    assert again.attrs["stored"] == 2
    pd.testing.assert_frame_equal(fresh, first, check_exact=True)
    pd.testing.assert_frame_equal(fresh, again, check_exact=True)
    assert again["raid.rate_multipliers"].iloc[0] == (1, 2)


def test_sweep_a_symbol_of_the_model_by_its_name():
    """A symbolic model (README: buffer slots B) could not be swept: "B"
    was refused as a malformed path, and the bounds of the symbolic network
    died in a bare TypeError (float of an expression).  A symbol is swept
    by its name now (each point equals exact MVA of qm.substitute at that
    value), and a symbol left in is a typed refusal that names it."""
    import sympy as sp

    B = sp.Symbol("B", positive=True)
    net = qm.Network([qm.Queue("buffer", sp.Rational(8, 10**6), servers=B),
                      qm.Queue("dma", sp.Rational(1, 10**6)),
                      qm.Delay("node", sp.Rational(2, 10**5))],
                     [qm.Closed("pkt", 4, visits={"buffer": 1, "dma": 1, "node": 1})])
    df = qm.sweep(net, {"B": [1, 2]}, progress=False)
    for i, b in enumerate([1, 2]):
        _check_point(df, i, qm.mva(qm.substitute(net, {"B": b})))
    bdf = qm.sweep(net, {"B": [1, 2], "pkt.population": [3]}, method="bounds", progress=False)
    ref = qm.bounds(qm.substitute(net, {"B": 2}).with_population(3, "pkt"))
    assert bdf[bdf.scope == "class"]["X_upper"].iloc[1] == pytest.approx(
        ref.throughput_upper, rel=1e-12)
    with pytest.raises(qm.UnsupportedModelError, match="symbol.*B"):
        qm.sweep(net, {"pkt.population": [1, 2]}, method="bounds", progress=False)
