"""The package's import rules, checked on the source.

Every ``import`` in ``qmodels/`` (module level or inside a function, where
lazy imports live) is an edge from the importing module's layer to the
imported module's layer.  A layer may import its own modules and layers
below it, never above; ``analytic`` and ``sim`` never import each other
(the validation harness, outside the package, holds them together).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import qmodels

ROOT = pathlib.Path(qmodels.__file__).parent

#: layer of each top-level part of the package, lowest first
LAYER = {
    "errors": 0, "_shipped": 0,
    "_jit": 1, "_mainguard": 1, "_validate": 1, "_format": 1, "_version": 1, "_progress": 1, "examples": 1,
    "model": 2,
    "results": 3, "io": 3,
    "analytic": 4, "sim": 4, "physical": 4,
    "symbolic": 5,
    "dispatch": 6,
    "plot": 7, "whatif": 7, "testing": 7, "transients": 7,
    "cases": 8,
    "cli": 9, "__init__": 10, "__main__": 10,
}
#: pairs of layers that may not import each other even though one is lower
FORBIDDEN = {("analytic", "sim"), ("sim", "analytic")}
#: upward edges allowed outright: the case studies are written against the
#: public API (``import qmodels as qm``), as a user's own models would be;
#: the package root imports the cases only when one is asked for
ALLOWED = {("cases", "__init__")}
#: upward edges allowed only as imports inside a function: the one-call
#: ``.plot()`` conveniences of result objects reach the plotting layer when
#: called, so the results layer never loads it (or matplotlib) on import
LAZY_ALLOWED = {("results", "plot"), ("sim", "plot"), ("analytic", "plot"),
                ("symbolic", "plot"), ("physical", "plot"),
                # Network.to_dict / from_dict: the model-file form, one call away
                ("model", "io"),
                # plot.explore sets the sliders' parameter paths as qm.sweep does
                ("plot", "whatif"),
                # Transient.plot(), one call away like the results' .plot()
                ("transients", "plot")}


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        yield path, list(rel.parts)


def _part(parts: list[str]) -> str:
    return parts[0] if parts else "__init__"


def _lazy_lines(tree) -> set[int]:
    """Line numbers of imports that sit inside a function body."""
    lines = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    lines.add(node.lineno)
    return lines


def _imports(path: pathlib.Path, parts: list[str]):
    """(line, absolute target parts inside qmodels) for every import."""
    tree = ast.parse(path.read_text(), str(path))
    package = parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                if not node.module:  # from . import x, y: each name is a module or attr
                    for alias in node.names:
                        yield node.lineno, target + [alias.name]
                    continue
                yield node.lineno, target
            elif node.module and node.module.split(".")[0] == "qmodels":
                yield node.lineno, node.module.split(".")[1:]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "qmodels":
                    yield node.lineno, alias.name.split(".")[1:]


def _edges():
    for path, parts in _modules():
        src = _part(parts)
        lazy = _lazy_lines(ast.parse(path.read_text()))
        for line, target in _imports(path, parts):
            dst = _part(target)
            if line in lazy and (src, dst) in LAZY_ALLOWED:
                continue
            yield f"{path.relative_to(ROOT.parent)}:{line}", src, dst


def test_every_part_has_a_layer():
    unknown = {_part(parts) for _, parts in _modules()} - set(LAYER)
    assert not unknown, f"give these a layer in tests/test_layers.py: {sorted(unknown)}"


def test_no_import_from_a_layer_above_or_across_analytic_and_sim():
    bad = []
    for where, src, dst in _edges():
        if src == dst or (src, dst) in ALLOWED:
            continue
        if dst not in LAYER:
            bad.append(f"{where}: {src} imports unknown part {dst!r}")
        elif (src, dst) in FORBIDDEN:
            bad.append(f"{where}: {src} may not import {dst}")
        elif LAYER[dst] >= LAYER[src]:
            bad.append(f"{where}: {src} (layer {LAYER[src]}) imports {dst} "
                       f"(layer {LAYER[dst]})")
    assert not bad, "forbidden imports:\n" + "\n".join(bad)


@pytest.mark.parametrize("src,dst", sorted(FORBIDDEN))
def test_the_rule_itself_catches_a_forbidden_edge(tmp_path, src, dst):
    # the checker must fail on a planted edge, or the test above could never fail
    mod = tmp_path / "m.py"
    mod.write_text(f"from ..{dst} import x\n")
    edges = [(_part([src, "m"]), _part(t)) for _, t in _imports(mod, [src, "m"])]
    assert edges == [(src, dst)]
    assert (src, dst) in FORBIDDEN
