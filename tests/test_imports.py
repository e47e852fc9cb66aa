"""Import rules and public names (docs/semantics.md §4), checked in fresh interpreters."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

import onnx_upsample

HEAVY = ("numba", "llvmlite", "onnx", "onnxruntime", "dask", "distributed", "zarr", "PIL",
         "xarray", "ml_dtypes", "threadpoolctl")

# What a fresh interpreter holds after `import onnx_upsample` and after its first calls: the
# heavy packages, and the package's compiled modules (any module of it loaded from a file with
# an extension-module suffix), so that what the import costs is tested by what it loads; its
# time is measured by benchmarks/bench.py's cold start.
PROBE = """
import importlib.machinery, json, sys
heavy = {heavy!r}

def loaded():
    found = [m for m in sys.modules if m.split('.')[0] in heavy]
    found += [m for m, module in sys.modules.items() if m.startswith('onnx_upsample')
              and str(getattr(module, '__file__', None)).endswith(
                  tuple(importlib.machinery.EXTENSION_SUFFIXES))]
    return sorted(found)

import onnx_upsample
after_import = loaded()
import numpy as np
onnx_upsample.upsample(np.arange(4.0).reshape(2, 2), [2, 1.5])
onnx_upsample.upsample(np.arange(4, dtype=np.uint8).reshape(2, 2), [2, 3], "linear")
onnx_upsample.output_shape((5,), [1.4])
after_call = loaded()
print(json.dumps({{"import": after_import, "call": after_call}}))
"""


@pytest.fixture(scope="module")
def loaded() -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_loads_the_kernels_and_no_heavy_dependency(
        loaded: dict[str, list[str]]) -> None:
    """`import onnx_upsample` stays light: onnx, dask and the others never load with it.
    The C extension does (a few milliseconds), so that no call imports anything: an import
    inside a call can be interrupted half done by a signal handler that calls again."""
    assert loaded["import"] == ["onnx_upsample._kernels._native"]


def test_calls_load_the_kernels_and_neither_onnx_nor_dask_nor_ml_dtypes(
        loaded: dict[str, list[str]]) -> None:
    """The kernels are compiled at install (the extension loads, no JIT with it); onnx only
    in onnx_upsample.onnx, dask only in .dask, and bfloat16 is recognised without importing
    ml_dtypes."""
    assert loaded["call"] == ["onnx_upsample._kernels._native"]


def test_all_is_exactly_the_contract_names() -> None:
    assert sorted(onnx_upsample.__all__) == sorted(
        ["upsample", "output_shape", "UpsampleError", "UpsampleWarning", "set_num_threads",
         "get_num_threads", "reference"]
    )
    for name in onnx_upsample.__all__:
        assert hasattr(onnx_upsample, name), name


def test_star_import_gives_the_contract_names() -> None:
    namespace: dict[str, object] = {}
    exec("from onnx_upsample import *", namespace)
    public = {name for name in namespace if not name.startswith("__")}
    assert public == set(onnx_upsample.__all__)


def _parameters(function: object) -> list[tuple[str, object, object]]:
    return [
        (p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()
    ]


P = inspect.Parameter


def test_signatures() -> None:
    assert _parameters(onnx_upsample.upsample) == [
        ("x", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("scales", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("mode", P.POSITIONAL_OR_KEYWORD, "nearest"),
        ("out", P.KEYWORD_ONLY, None),
    ]
    assert _parameters(onnx_upsample.reference.upsample) == [
        ("x", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("scales", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("mode", P.POSITIONAL_OR_KEYWORD, "nearest"),
    ]
    assert _parameters(onnx_upsample.output_shape) == [
        ("shape", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("scales", P.POSITIONAL_OR_KEYWORD, P.empty),
    ]
    assert [name for name, _, _ in _parameters(onnx_upsample.set_num_threads)] == ["n"]


def test_exception_hierarchy() -> None:
    assert issubclass(onnx_upsample.UpsampleError, ValueError)
    assert issubclass(onnx_upsample.UpsampleWarning, UserWarning)
    assert onnx_upsample.reference is sys.modules["onnx_upsample.reference"]
