"""The package's shape: layers without circles, no hidden sibling imports, helpers that name their notebook."""

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tokgen"
MODULES = {p.stem: ast.parse(p.read_text()) for p in SRC.glob("*.py") if p.stem != "__init__"}


def sibling_imports(tree) -> dict[str, int]:
    """tokgen modules imported by `tree`, with the indentation (0: at the top) of each import."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found[node.module.split(".")[0]] = node.col_offset
    return found


def test_no_import_circles_and_no_sibling_imports_inside_functions():
    deps = {name: sibling_imports(tree) for name, tree in MODULES.items()}
    hidden = [(name, dep) for name, ds in deps.items() for dep, col in ds.items() if col > 0]
    assert not hidden, f"imports between sibling modules inside functions: {hidden}"

    def visit(name, path):
        for dep in deps[name]:
            assert dep not in path, f"import circle: {' -> '.join([*path, dep])}"
            visit(dep, [*path, dep])

    for name in deps:
        visit(name, [name])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_helper_names_the_notebook_that_introduces_it(name):
    for node in MODULES[name].body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            doc = ast.get_docstring(node) or ""
            assert re.search(r"notebooks? \d\d", doc, re.I), f"{name}.{node.name}: which notebook introduces it?"


LAYERS = {  # README "Architecture": a module imports only from its own layer or the ones above
    "model": 0,
    "gpu_slice": 0,
    "sizes": 0,
    "generators": 1,
    "kernels": 1,
    "handwritten": 1,
    "graphs": 1,
    "registry": 1,
    "agreement": 2,
    "bench": 2,
    "memory": 2,
    "stats": 2,
    "profiling": 2,
    "gaps": 2,
    "bandwidth": 2,
    "waterfall": 2,
    "persistent": 2,
    "results": 2,
    "voice": 2,
    "params": 3,
    "claims": 3,
    "regimes": 3,
    "display": 3,
}


def test_modules_import_only_from_their_layer_or_above():
    assert set(LAYERS) == set(MODULES), "every module of src/tokgen has a layer in the README's drawing"
    for name, tree in MODULES.items():
        for dep in sibling_imports(tree):
            assert LAYERS[dep] <= LAYERS[name], f"{name} (layer {LAYERS[name]}) imports {dep} (layer {LAYERS[dep]})"
