"""The import rules of ARCHITECTURE.md, read from the source with ``ast``.

Every module of the package belongs to a layer; a module imports only from its own layer and
the layers below (function-level imports included: they are lazy, not exempt). The slow
reference and the kernels never import each other, the spec imports nothing of the package
but the exception family, and the heavy optional dependencies are imported only where
ARCHITECTURE.md says. Module-level imports form no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "onnx_upsample"

# (module prefix, layer): the longest matching prefix wins. Keep in step with ARCHITECTURE.md.
LAYERS = {
    "_errors": 0,
    "_spec": 1,
    "_resources": 2, "_threads": 2, "_buffers": 2, "_first_use": 2,
    "_kernels": 3, "reference": 3,
    "_api": 4, "_interop": 4, "": 4,  # "" is the package's __init__: the public names
    "dask": 5, "_chunking": 5, "xarray": 5,
    "io": 6, "onnx": 6, "compare": 6,
    "conformance": 7,
    "cli": 8, "__main__": 8,
}
# The lazy imports that point up, each named with its reason: upsample(a dask array) hands
# it to the chunked entry, whose lazy result it returns (no other import may point up).
UPWARD = {("_interop", "dask"): "upsample(dask array) returns onnx_upsample.dask's result"}
# Where each heavy third-party package may be imported (module prefixes).
HEAVY_HOMES = {
    "onnx": ("onnx", "conformance"),
    "onnxruntime": ("onnx.verify", "conformance"),
    "dask": ("dask", "io"),
    "zarr": ("io",),
    "xarray": ("xarray",),
    "threadpoolctl": (),  # never imported: _threads registers with it once it is
    "PIL": ("io", "cli", "compare"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    best = None
    for prefix in LAYERS:
        if module == prefix or (prefix and module.startswith(prefix + ".")) or prefix == "":
            if best is None or len(prefix) > len(best):
                best = prefix
    assert best is not None
    if best == "" and module != "":
        raise AssertionError(f"module {module!r} has no layer: add it to LAYERS and "
                             "ARCHITECTURE.md")
    return LAYERS[best]


def _imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported name, line, at module level) for every import of ``module``; package-
    internal names are given relative to the package ("" for the package itself),
    third-party ones with a leading "!"."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    top_level = {id(node) for node in tree.body}
    for node in tree.body:  # imports under `if TYPE_CHECKING:` count as module level
        if isinstance(node, ast.If):
            top_level.update(id(child) for child in node.body)
    base = module.split(".") if module else []
    if not _is_package(path):
        base = base[:-1]
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                target = ".".join([*anchor, *(node.module.split(".") if node.module else [])])
                names = [target] if node.module else []
                for alias in node.names if node.module is None else ():
                    # `from . import x`: x is a submodule (Python or compiled) or a name
                    submodule = f"{target}.{alias.name}".lstrip(".")
                    folder = PACKAGE.joinpath(*target.split(".")) if target else PACKAGE
                    if submodule in MODULES:
                        names.append(submodule)
                    elif not any(folder.glob(alias.name + "*")):
                        names.append(target)
            else:
                names = [node.module or ""]
        for name in names:
            if name == "onnx_upsample" or name.startswith("onnx_upsample."):
                name = name[len("onnx_upsample"):].lstrip(".")
            elif not (name in MODULES and isinstance(node, ast.ImportFrom) and node.level):
                name = "!" + name
            found.append((name, node.lineno, id(node) in top_level))
    return found


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    own = _layer(module)
    for name, line, top_level in _imports(module):
        if name.startswith("!") or ((module, name) in UPWARD and not top_level):
            continue
        assert _layer(name) <= own, (
            f"{module or 'onnx_upsample'} (layer {own}) imports {name or 'onnx_upsample'} "
            f"(layer {_layer(name)}) at line {line}: imports point down (ARCHITECTURE.md)")


def test_reference_and_kernels_never_import_each_other() -> None:
    for module in MODULES:
        for name, line, _ in _imports(module):
            if module == "reference":
                assert not name.startswith("_kernels"), f"reference imports {name} ({line})"
            if module.startswith("_kernels"):
                assert name != "reference", f"{module} imports the reference ({line})"


def test_the_reference_takes_only_the_argument_checks_from_the_spec() -> None:
    """The oracle re-derives the operator's rules and its arithmetic per type (its own
    accumulator table): of the spec it uses the checked call only, so that a wrong rule or
    a wrong row of the element table cannot pass for right on both sides."""
    for name, line, _ in _imports("reference"):
        if name.startswith("_spec"):
            assert name == "_spec.call", f"reference imports {name} ({line})"


def test_the_spec_imports_only_numpy_and_the_exceptions() -> None:
    for module in (m for m in MODULES if m.startswith("_spec")):
        for name, line, _ in _imports(module):
            if name.startswith("!"):
                top = name[1:].split(".")[0]
                assert top in ("numpy", "__future__", "dataclasses", "typing", "functools",
                               "math", "numbers", "sys", "collections"), (module, name, line)
            else:
                assert name == "_errors" or name.startswith("_spec"), (module, name, line)


def test_heavy_dependencies_only_at_home() -> None:
    for module in MODULES:
        for name, line, _top_level in _imports(module):
            if not name.startswith("!"):
                continue
            top = name[1:].split(".")[0]
            if top not in HEAVY_HOMES:
                continue
            homes = HEAVY_HOMES[top]
            assert any(module == h or module.startswith(h + ".") for h in homes), (
                f"{module} imports {top} (line {line}); only {homes} may")


@pytest.mark.parametrize("lazy", [False, True], ids=["module-level", "lazy-too"])
def test_no_import_cycles(lazy: bool) -> None:
    """Module-level imports form no cycle; nor do they with the lazy ones, within one
    package: a lazy import that closes a cycle only hides that two modules depend on each
    other (their shared part belongs below both). The package's ``__init__`` modules are
    left out of the lazy graph: importing a submodule runs its package's ``__init__``."""
    graph = {m: {n for n, _, top in _imports(m) if (top or (lazy and m.rpartition(".")[0]
                                                          == n.rpartition(".")[0]))
                 and not n.startswith("!") and n != m and n in MODULES
                 and not (lazy and _is_package(MODULES[n]))}
             for m in MODULES}
    state: dict[str, int] = {}

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        for target in graph[module]:
            if state.get(target) == 1:
                cycle = [*stack[stack.index(target):], target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*stack, target])
        state[module] = 2

    for module in graph:
        if module not in state:
            visit(module, [module])


def test_no_source_file_over_500_lines() -> None:
    """The package's Python, and the tests, scripts and benchmarks beside it (the C layer
    is held to its units and their functions' length instead: tests/test_c_units.py)."""
    root = PACKAGE.parent.parent
    sources = [*PACKAGE.rglob("*.py"),
               *(root / "tests").glob("*.py"), *(root / "scripts").glob("*.py"),
               *(root / "benchmarks").glob("*.py")]
    long = {str(p.relative_to(root)): n for p in sources
            if (n := len(p.read_text().splitlines())) > 500}
    assert not long, f"split these: {long}"


def test_test_files_import_no_other_test_file() -> None:
    """What tests share lives in helper modules (runners, differential, onnx_models...):
    a test file imported by another runs its module-level set-up twice and hides a helper
    behind a test's name."""
    tests = PACKAGE.parent.parent / "tests"
    names = {p.stem for p in tests.glob("test_*.py")}
    found = []
    for path in sorted(tests.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in names:
                found.append(f"{path.name}: from {node.module}")
            elif isinstance(node, ast.Import):
                found += [f"{path.name}: import {a.name}" for a in node.names if a.name in names]
    assert not found, found
