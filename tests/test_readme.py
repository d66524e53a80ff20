"""The README's Python tour runs as written, and says what it shows."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_tour_runs():
    text = README.read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    ns: dict = {}
    exec(compile(block, "README.md", "exec"), ns)
    r, b = ns["r"], ns["b"]
    assert r.bottleneck == ("disk",)
    assert b.saturation_population > 0
    assert len(ns["curve"].population) == 41


def test_readme_names_the_two_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text
