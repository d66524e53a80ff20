"""The README's examples run as written and print what the README shows."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def blocks():
    text = README.read_text()
    return re.findall(r"```(python|text)\n(.*?)```", text, re.S)


def test_readme_tour_runs():
    code = next(body for kind, body in blocks() if kind == "python")
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    r, b = ns["r"], ns["b"]
    assert r.bottleneck == ("disk",)
    assert b.saturation_population > 0
    assert len(ns["curve"].population) == 41
    assert ns["s"].X["tx"].contains(r.X["tx"])
    # the think time is the class's Z, outside R: R = N/X - Z (the tour once
    # put it in a delay station it called think time, so R read 5.017 s)
    N, Z = 40, 5.0
    assert r.R["tx"] == pytest.approx(N / r.X["tx"] - Z, rel=1e-12)
    assert r.R["tx"] < 1.0


def test_readme_examples_print_what_readme_shows():
    bl = blocks()
    checked = 0
    ns: dict = {}  # the blocks run in order, as in one notebook
    for i, (kind, code) in enumerate(bl):
        if kind != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), ns)
        if i + 1 < len(bl) and bl[i + 1][0] == "text":
            assert out.getvalue().strip() == bl[i + 1][1].strip()
            checked += 1
    assert checked >= 2


def test_readme_names_the_two_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text


def test_readme_spax_table_is_what_the_case_prints():
    # the table in the README is the live output of `qmodels case spax`
    from qmodels.cases import report

    text = README.read_text()
    shown = re.search(r"```console\n(.*?)```", text, re.S).group(1).strip()
    live = report("spax").table()
    assert live.startswith(shown)
