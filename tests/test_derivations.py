"""Run every derivation script in derivations/ (each derives with sympy,
prints LaTeX and checks itself against the numeric solvers; main() returns
the exit status)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DERIV = ROOT / "derivations"
SCRIPTS = sorted(p for p in DERIV.glob("*.py") if not p.name.startswith("_"))

REQUIRED = {
    "mm1_birth_death", "pollaczek_khinchine", "erlang_c", "mva_two_queues_delay", "aba_knee",
    "io_path_switch", "energy_per_transaction", "bdp_tcp_window", "rpeak",
}


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"derivation_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_required_derivation_exists():
    assert REQUIRED <= {p.stem for p in SCRIPTS}


def test_readme_lists_every_script():
    text = (DERIV / "README.md").read_text()
    for p in SCRIPTS:
        assert p.name in text, p.name


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_derivation_passes_its_checks(path, capsys):
    status = load(path).main()
    out = capsys.readouterr().out
    assert status == 0, out
    assert "$ " in out                      # it printed LaTeX
    assert "MISMATCH" not in out
    assert "0 failed: OK" in out


def test_script_exit_status_from_the_command_line():
    ok = subprocess.run([sys.executable, str(DERIV / "rpeak.py")], capture_output=True,
                        text=True, cwd=ROOT, timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_a_mismatch_gives_a_non_zero_exit(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(DERIV)!r})\n"
        "from _check import Checker\n"
        "ck = Checker('bad')\n"
        "ck.close('one is two', 1.0, 2.0)\n"
        "sys.exit(ck.done())\n"
    )
    res = subprocess.run([sys.executable, str(bad)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 1
    assert "MISMATCH one is two: got 1.0, want 2.0" in res.stdout


def test_checker_kinds(capsys):
    sys.path.insert(0, str(DERIV))
    try:
        from _check import Checker
    finally:
        sys.path.remove(str(DERIV))
    import sympy as sp

    x = sp.Symbol("x")
    ck = Checker("t")
    assert ck.same("identity", (x + 1) ** 2, x**2 + 2 * x + 1)
    assert not ck.same("not an identity", x, x + 1)
    assert ck.close("close", 1.0, 1.0 + 1e-12)
    assert not ck.true("false", False, "because")
    assert ck.done() == 1
    out = capsys.readouterr().out
    assert "2 failed: FAILED" in out and "MISMATCH false: because" in out
