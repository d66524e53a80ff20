"""README_planner.md (the capacity-planning section written for the README)
runs as written and prints what it shows, as tests/test_readme.py checks the
README itself.  Skipped once the section has moved into README.md."""

import contextlib
import io
import re
from pathlib import Path

import pytest

SECTION = Path(__file__).resolve().parents[1] / "README_planner.md"


@pytest.mark.skipif(not SECTION.exists(), reason="the section has moved into README.md")
def test_planner_section_prints_what_it_shows():
    bl = re.findall(r"```(python|text|sh)\n(.*?)```", SECTION.read_text(), re.S)
    ns: dict = {}
    checked = 0
    for i, (kind, code) in enumerate(bl):
        if kind != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README_planner.md", "exec"), ns)
        assert i + 1 < len(bl) and bl[i + 1][0] == "text"
        assert out.getvalue().strip() == bl[i + 1][1].strip()
        checked += 1
    assert checked == 5
