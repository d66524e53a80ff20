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


def test_submodule_imports_do_not_clobber_functions():
    # a submodule named like an exported function would rebind the package
    # attribute on import; importing everything must leave the API intact
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(qm.__path__):
        if not info.name.startswith("_") and info.name not in ("cli",):
            importlib.import_module(f"qmodels.{info.name}")
    assert callable(qm.bottleneck) and qm.bottleneck.__module__ == "qmodels.analytic.laws"
    assert callable(qm.energy) and callable(qm.mva) and callable(qm.solve)


def test_function_named_submodules_in_a_fresh_process():
    code = ("import qmodels as qm, qmodels.physical.energy, qmodels.analytic.convolution, qmodels.analytic.ctmc, "
            "qmodels.dispatch; qm.methods(); "
            "print(all(callable(f) and not isinstance(f, type(qm)) for f in "
            "(qm.energy, qm.convolution, qm.ctmc)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "True"


def test_namespace_has_no_leaked_helpers():
    # only the API: no modules or __future__ features pulled in by __init__
    leaked = {"sys", "importlib", "annotations", "types", "import_module"} & set(dir(qm))
    assert not leaked


def test_solve_names_an_option_the_method_does_not_take():
    """``qm.solve(net, method="exact", tol=1e-9)`` (an option of another
    method) ended in a bare TypeError from deep inside; it is a typed
    error naming the option and the method's own options.  A sweep checks
    the same before any point: its batched exact route takes no options and
    used to drop a misspelt one silently."""
    import pytest

    net = qm.Network([qm.Queue("cpu", 0.01), qm.Queue("disk", 0.025)],
                     [qm.Closed("tx", 10, visits={"cpu": 1, "disk": 1})])
    with pytest.raises(qm.UnsupportedModelError, match="'exact' has no option 'tol'.*curve"):
        qm.solve(net, method="exact", tol=1e-9)
    with pytest.raises(qm.UnsupportedModelError, match="'schweitzer' has no option 'tl'"):
        qm.solve(net, method="schweitzer", tl=1e-9)
    with pytest.raises(qm.UnsupportedModelError, match="'exact' has no option 'tol'"):
        qm.sweep(net, {"tx.population": [1, 2]}, options={"tol": 1e-9}, progress=False)
    # the options a method does take still reach it
    r = qm.solve(net, method="schweitzer", tol=1e-12)
    assert abs(r.X["tx"] - qm.mva(net).X["tx"]) / qm.mva(net).X["tx"] < 0.05
