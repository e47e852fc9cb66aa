"""Runtimes the conformance suite can grade, each behind one small adapter.

Loaded only inside a worker process (``_worker``): a runtime that crashes or hangs takes
only its worker down. Built-in names: ``onnxruntime``, ``onnx-reference`` (onnx's
ReferenceEvaluator), ``onnx-reference+onnx-upsample`` (the same with onnx-upsample's
``Upsample``), ``openvino``, ``tract``, ``tinygrad``, ``tvm`` (Relax, LLVM on the CPU).
Any other name is ``package.module:callable`` (called as
``callable(model_bytes, inputs) -> outputs``, inputs a dict of name -> array) or a module
or class implementing ``onnx.backend.base.Backend`` (``prepare(model, device).run(inputs)``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

BUILTIN = ("onnxruntime", "onnx-reference", "onnx-reference+onnx-upsample", "openvino",
           "tract", "tinygrad", "tvm")

# name -> the pip line that installs it
INSTALL = {
    "onnxruntime": "pip install 'onnxruntime==1.32.*'",
    "onnx-reference": "pip install 'onnx-upsample[onnx]'",
    "onnx-reference+onnx-upsample": "pip install 'onnx-upsample[onnx]'",
    "openvino": "pip install openvino (or 'onnx-upsample[conformance]')",
    "tract": "pip install tract (or 'onnx-upsample[conformance]')",
    "tinygrad": "pip install tinygrad (or 'onnx-upsample[conformance]'); its CPU device "
                "needs clang",
    "tvm": "pip install apache-tvm (about 300 MB; not in the conformance extra)",
}

Run = Callable[[Path, dict[str, np.ndarray]], list[np.ndarray]]


class BackendUnavailableError(Exception):
    """The backend cannot be loaded here (not installed, or not a valid name)."""


@dataclass(frozen=True)
class Backend:
    """A loaded runtime: its name, version and how to run one case."""

    name: str
    version: str
    run: Run


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def _import(module: str, name: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        hint = INSTALL.get(name, f"pip install {module.split('.')[0]}")
        raise BackendUnavailableError(f"backend {name!r} is not installed here ({error}): "
                                 f"{hint}") from None


def _onnxruntime() -> Backend:
    ort = _import("onnxruntime", "onnxruntime")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        options = ort.SessionOptions()
        options.log_severity_level = 4
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return list(session.run(None, inputs))

    return Backend("onnxruntime", ort.__version__, run)


def _onnx_reference(with_ours: bool) -> Backend:
    name = "onnx-reference+onnx-upsample" if with_ours else "onnx-reference"
    reference = _import("onnx.reference", name)
    new_ops = []
    if with_ours:
        from ..onnx import Upsample

        new_ops = [Upsample]

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        evaluator = reference.ReferenceEvaluator(str(path), new_ops=new_ops)
        return list(evaluator.run(None, inputs))

    version = _version("onnx") + (f" + onnx-upsample {_version('onnx-upsample')}"
                                  if with_ours else "")
    return Backend(name, version, run)


def _openvino() -> Backend:
    ov = _import("openvino", "openvino")
    core = ov.Core()

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        # the model's own precision: on CPUs with bfloat16 support OpenVINO computes in
        # bfloat16 by default, which would grade its precision setting, not its Upsample
        compiled = core.compile_model(core.read_model(str(path)), "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32"})
        results = compiled(list(inputs.values()))
        return [np.asarray(results[output]) for output in compiled.outputs]

    return Backend("openvino", _version("openvino"), run)


_TRACT_TYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}


def _tract() -> Backend:
    tract = _import("tract", "tract")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        model = tract.onnx().load(str(path))
        for index, array in enumerate(inputs.values()):
            kind = _TRACT_TYPES.get(array.dtype.name)
            if kind is None:
                raise NotImplementedError(f"no tract element type for {array.dtype}")
            model.set_input_fact(index, ",".join([*map(str, array.shape), kind]))
        runnable = model.into_model().into_optimized().into_runnable()
        return [t.to_numpy() for t in runnable.run(list(inputs.values()))]

    return Backend("tract", _version("tract"), run)


def _tinygrad() -> Backend:
    # tinygrad picks the first device that works; name the CPU so results do not depend on
    # which accelerators a machine has
    os.environ.setdefault("DEV", "CPU")
    onnx_frontend = _import("tinygrad.nn.onnx", "tinygrad")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        runner = onnx_frontend.OnnxRunner(str(path))
        outputs = runner(dict(inputs))
        return [np.asarray(value.numpy()) for value in outputs.values()]

    return Backend("tinygrad", _version("tinygrad"), run)


def _tvm() -> Backend:
    tvm = _import("tvm", "tvm")
    relax = _import("tvm.relax", "tvm")
    frontend = _import("tvm.relax.frontend.onnx", "tvm")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        import onnx

        module = frontend.from_onnx(onnx.load(str(path)), keep_params_in_input=False)
        module = relax.transform.DecomposeOpsForInference()(module)
        module = relax.transform.LegalizeOps()(module)
        machine = relax.VirtualMachine(relax.build(module, target="llvm"), tvm.cpu())
        result = machine["main"](*(tvm.runtime.tensor(v) for v in inputs.values()))
        values = result if isinstance(result, (list, tuple)) else [result]
        return [np.asarray(v.numpy()) for v in values]

    return Backend("tvm", _version("apache-tvm"), run)


def _custom(spec: str) -> Backend:
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise BackendUnavailableError(
            f"backend {spec!r}: cannot import {module_name!r} ({error}); built-in backends "
            f"are {', '.join(BUILTIN)}, others are 'package.module:callable' or a module "
            "implementing onnx.backend.base.Backend") from None
    target = getattr(module, attribute, None) if attribute else module
    if target is None:
        raise BackendUnavailableError(f"backend {spec!r}: module {module_name!r} has no "
                                 f"{attribute!r}")
    version = _version(module_name.split(".")[0])
    if hasattr(target, "prepare") and hasattr(target, "run_model"):
        return Backend(spec, version, _backend_api(target))
    if not callable(target):
        raise BackendUnavailableError(
            f"backend {spec!r} is neither callable (model_bytes, inputs) -> outputs nor an "
            "onnx.backend.base.Backend")
    function = target

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        return _as_list(function(path.read_bytes(), dict(inputs)))

    return Backend(spec, version, run)


def _backend_api(backend: Any) -> Run:
    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        import onnx

        prepared = backend.prepare(onnx.load(str(path)), "CPU")
        return _as_list(prepared.run(list(inputs.values())))

    return run


def _as_list(outputs: Any) -> list[np.ndarray]:
    if isinstance(outputs, dict):
        return [np.asarray(v) for v in outputs.values()]
    if isinstance(outputs, (list, tuple)):
        return [np.asarray(v) for v in outputs]
    return [np.asarray(outputs)]


def load(spec: str) -> Backend:
    """The backend called ``spec``; raises :class:`BackendUnavailableError` with the fix."""
    makers: dict[str, Callable[[], Backend]] = {
        "onnxruntime": _onnxruntime,
        "onnx-reference": lambda: _onnx_reference(False),
        "onnx-reference+onnx-upsample": lambda: _onnx_reference(True),
        "openvino": _openvino,
        "tract": _tract,
        "tinygrad": _tinygrad,
        "tvm": _tvm,
    }
    if spec in makers:
        return makers[spec]()
    if not spec or spec.startswith("-") or " " in spec:
        raise BackendUnavailableError(f"backend {spec!r} is not a backend name; use one of "
                                 f"{', '.join(BUILTIN)} or 'package.module:callable'")
    return _custom(spec)
