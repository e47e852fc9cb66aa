"""Every code example of the README and of the documentation pages runs, as written, and
every example in a public docstring (what the API reference shows) passes as a doctest
(the rules: tests/doc_examples.py). A block that cannot run says why, in an HTML comment
``<!-- not run: REASON -->`` right before it; only those are left out."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest
from doc_examples import ROOT, RUN, blocks, lay_out, pages, run_page
from runners import run_main

PAGES = pages()


def _cluster_input(folder: Path) -> None:
    """docs/dask.md's cluster recipe reads a zarr store of the reader's (128, 512, 512); the
    same recipe, small (its crop and chunks still fit), runs here."""
    import dask.array as da

    da.random.random((40, 160, 160), chunks=(16, 64, 64)).astype("float32").to_zarr(
        str(folder / "in.zarr"))


# what a page reads that is the reader's own, made small
INPUTS = {"docs/dask.md": _cluster_input}
# the extras a page's examples use (make test installs them all; an environment with fewer
# skips the page, naming what is missing)
NEEDS = {
    "README.md": ("onnx", "onnxruntime", "dask", "zarr", "PIL"),
    "docs/dask.md": ("dask", "zarr", "distributed"),
    "docs/apply.md": ("dask", "zarr", "PIL"),
    "docs/compare.md": ("PIL",),
    "docs/ecosystem.md": ("xarray", "threadpoolctl", "dask"),
    "docs/onnx.md": ("onnx", "onnxruntime"),
    "docs/suite.md": ("onnx", "onnxruntime"),
}


def _page_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES, ids=_page_id)
def test_every_example_of_the_page_runs(path: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    page = _page_id(path)
    for module in NEEDS.get(page, ()):
        pytest.importorskip(module)
    lay_out(tmp_path)
    if page in INPUTS:
        INPUTS[page](tmp_path)
    ran = run_page(path, tmp_path, capsys, run_main)
    assert ran == sum(block.runs for block in blocks(path))


def test_a_block_left_out_says_why() -> None:
    """Every block in a language the runner runs either runs or carries its reason; the
    pages hold examples at all (a parser that found none would pass everything)."""
    found = [block for path in PAGES for block in blocks(path)]
    left_out = [block for block in found if block.language in RUN and not block.runs]
    assert all(block.not_run for block in left_out)
    assert sum(block.runs for block in found) >= 20
    # a marker stands only before a block that would otherwise run
    assert all(block.not_run is None for block in found if block.language not in RUN)


def _public_modules() -> list[str]:
    return ["onnx_upsample", "onnx_upsample.reference", "onnx_upsample.dask",
            "onnx_upsample.xarray", "onnx_upsample.onnx", "onnx_upsample.onnx.verify",
            "onnx_upsample.conformance", "onnx_upsample.compare"]


@pytest.mark.parametrize("module_name", _public_modules())
def test_every_docstring_example_of_the_public_names_passes(
        module_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The API reference shows the docstrings: each example in them (module, functions,
    classes and their methods, as ``__all__`` lists them) runs as a doctest."""
    extras = {"onnx_upsample.dask": "dask", "onnx_upsample.xarray": "xarray",
              "onnx_upsample.onnx": "onnx", "onnx_upsample.onnx.verify": "onnxruntime",
              "onnx_upsample.conformance": "onnx", "onnx_upsample.compare": "numpy"}
    if module_name in extras:
        pytest.importorskip(extras[module_name])
    module = importlib.import_module(module_name)
    monkeypatch.chdir(tmp_path)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    names = getattr(module, "__all__", [])
    tests = list(finder.find(module, module_name))
    for name in names:
        value = getattr(module, name)
        if getattr(value, "__module__", "").startswith("onnx_upsample"):
            tests += finder.find(value, f"{module_name}.{name}",
                                 globs=vars(importlib.import_module(value.__module__)))
    # a name defined in the module is found twice: in the module and by its name
    unique = {(test.filename, test.lineno): test for test in tests}
    report: list[str] = []
    for test in unique.values():
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    if module_name == "onnx_upsample":
        assert runner.tries >= 2
