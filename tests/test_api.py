"""The public API is exactly what qmodels exports, and every name resolves."""

import subprocess
import sys

import qmodels as qm


def test_every_exported_name_resolves():
    missing = [n for n in qm.__all__ if not hasattr(qm, n)]
    assert not missing


def test_unknown_attribute_is_an_attribute_error():
    try:
        qm.no_such_thing
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_import_stays_light():
    code = ("import sys, qmodels; heavy = [m for m in ('numba', 'sympy', 'pandas', 'matplotlib')"
            " if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""
