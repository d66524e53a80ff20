"""Tests of the compilation helpers (qmodels._jit): jitable helpers shared
by compiled kernels, and numba's on-disk cache following their source."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import qmodels
from qmodels._jit import jitable

ROOT = pathlib.Path(qmodels.__file__).parent.parent


def test_jitable_is_the_plain_function_from_python():
    def f(x):
        return x + 1

    assert jitable(f) is f and f(1) == 2


def _run(tmp_path, call):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    out = subprocess.run([sys.executable, "-c", f"from kern import k, lz; print({call})"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return float(out.stdout.strip())


@pytest.mark.parametrize("call", ["k(1.0)", "lz.compiled()(1.0)"])
def test_cached_kernel_follows_an_edited_helper_in_another_file(tmp_path, call):
    # numba stamps a kernel's cache with the kernel's own file only; without
    # stamp_helpers the second run would load the kernel built with the old
    # helper and print 2.0 again (checked by hand with plain register_jitable).
    pytest.importorskip("numba")
    helper = tmp_path / "helper.py"
    helper.write_text(textwrap.dedent("""
        from qmodels._jit import jitable

        @jitable
        def inner(x):
            return x + 1.0

        @jitable
        def h(x):
            return inner(x)
    """))
    (tmp_path / "kern.py").write_text(textwrap.dedent("""
        from qmodels._jit import lazyjit, njit
        from helper import h

        @njit
        def k(x):
            return h(x)

        @lazyjit()
        def lz(x):
            return h(x)
    """))
    assert _run(tmp_path, call) == 2.0
    assert list((tmp_path / "__pycache__").glob("kern.*.nbi"))  # cached on disk
    assert _run(tmp_path, call) == 2.0  # loaded from the cache
    # the helper's helper changes (and its file's size, whatever the clock)
    helper.write_text(helper.read_text().replace("x + 1.0", "x + 10.0"))
    assert _run(tmp_path, call) == 11.0


def test_kernels_given_lists_give_the_bits_they_give_with_arrays():
    """A ``lazyjit(lists=True)`` kernel's Python path reads its 1-D arrays
    as lists (faster): the same IEEE operations, so the same bits."""
    from qmodels.analytic import _logconv, mva

    rng = np.random.default_rng(7)
    for _ in range(40):
        N, L = int(rng.integers(1, 300)), int(rng.integers(1, 8))
        lg, lh = np.cumsum(rng.normal(size=N + 1)), np.cumsum(rng.normal(size=N + 1))
        lf = np.concatenate(([0.0], np.cumsum(rng.normal(size=L))))
        r = float(rng.uniform(0.0, 2.0))
        k = _logconv.log_g_add_ld
        assert k.lists and k.run(0, lg, lf, r).tobytes() == k.py_func(lg, lf, r).tobytes()
        k = mva._log_convolve
        assert k.lists and k.run(0, lg, lh).tobytes() == k.py_func(lg, lh).tobytes()
        mult = np.sort(rng.uniform(0.5, 4.0, L))
        lX = -np.abs(rng.normal(size=N + 1))
        k = mva._ld_queue_kernel
        got = k.run(0, lX, lf, lh, lg, mult, 0.3)
        want = k.py_func(lX, lf, lh, lg, mult, 0.3)
        assert k.lists and all(g.tobytes() == w.tobytes() for g, w in zip(got, want))
