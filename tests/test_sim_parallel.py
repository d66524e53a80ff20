"""Replications on several processes or a dask cluster give the same
numbers to the bit as one process (qmodels.sim.parallel): replication i
draws only from the i-th child of the seed, whatever runs it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pytest

import qmodels as qm
from qmodels.errors import InvalidValueError


def _net():
    # non-product-form on purpose: a deterministic queue, an FCFS queue, a delay
    return qm.Network(
        [qm.Queue("a", 0.5), qm.Queue("b", 0.3, distribution=qm.Deterministic()),
         qm.Delay("z", 1.0)],
        [qm.Closed("c", 4, visits={"a": 1, "b": 1, "z": 1}),
         qm.Open("o", 0.3, visits={"a": 1})])


def _same(r1, r2):
    a, b = r1.to_frame(), r2.to_frame()
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    # the notes too, but for the one on wall time (a first call in a process)
    def told(r):
        return [n for n in r.notes if not n.startswith("wall time")]
    assert told(r1) == told(r2)


def _sim(**kw):
    return qm.simulate(_net(), seed=11, horizon=3000.0, replications=4, progress=False, **kw)


def test_two_processes_give_the_one_process_numbers_to_the_bit():
    one = _sim()
    two = _sim(workers=2)
    _same(one, two)
    # and the numbers are a simulation's, not a copy: another seed moves them
    other = qm.simulate(_net(), seed=12, horizon=3000.0, replications=4, progress=False,
                        workers=2)
    assert float(other.X["c"].mean) != float(one.X["c"].mean)


def test_precision_rounds_and_fixed_warmup_in_parallel_match_serial():
    # a precision target adds replications in rounds; a fixed warm-up skips MSER-5
    kw = dict(precision=0.02)
    _same(_sim(**kw), _sim(workers=2, **kw))
    kw = dict(warmup=100.0)
    _same(_sim(**kw), _sim(workers=2, **kw))


def test_dask_client_gives_the_same_numbers():
    distributed = pytest.importorskip("distributed")
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1,
                            dashboard_address=None) as client:
        _same(_sim(), _sim(client=client))


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4", True])
def test_workers_must_be_a_positive_integer(bad):
    with pytest.raises(InvalidValueError, match="workers"):
        _sim(workers=bad)


def test_workers_and_client_together_are_refused():
    with pytest.raises(InvalidValueError, match="not both"):
        _sim(workers=2, client=object())
    with pytest.raises(InvalidValueError, match="not a dask"):
        _sim(client=object())


def test_batch_means_says_it_ran_in_one_process():
    r = qm.simulate(_net(), seed=3, horizon=3000.0, replications=5, method="batch_means",
                    progress=False, workers=2)
    assert any("batch means is one long run" in n for n in r.notes)


def test_unguarded_script_is_refused_before_any_process_starts(tmp_path):
    script = tmp_path / "study.py"
    script.write_text(textwrap.dedent("""
        import qmodels as qm
        net = qm.Network([qm.Queue("a", 0.5)], [qm.Open("o", 1.0, visits={"a": 1})])
        try:
            qm.simulate(net, seed=1, horizon=100.0, replications=2, progress=False, workers=2)
        except qm.errors.MainGuardError as e:
            print("REFUSED", "__main__" in str(e))
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert "REFUSED True" in out.stdout, out.stderr[-2000:]

