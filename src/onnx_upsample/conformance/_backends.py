"""Runtimes the conformance suite can grade, each behind one small adapter.

Loaded only inside a worker process (``_worker``): a runtime that crashes or hangs takes
only its worker down. Built-in names: ``onnxruntime``, ``onnx-reference`` (onnx's
ReferenceEvaluator), ``onnx-reference+onnx-upsample`` (the same with onnx-upsample's
``Upsample``), ``openvino``, ``tract``, ``tinygrad``, ``tvm`` (Relax, LLVM on the CPU),
``pytorch`` (``torch.nn.functional.interpolate``, as a converter maps the model; see
``_pytorch``). Any other name is:

- ``package.module:callable``, called as ``callable(model_bytes, inputs) -> outputs`` (inputs
  a dict of name -> array; outputs a list, tuple or dict of arrays, or one array);
- a module or class with the onnx backend API, as onnx's backend-test runner takes it:
  ``prepare(model, device)`` returning a rep whose ``run(inputs)`` gives the outputs, or
  ``run_model(model, inputs, device)`` (``onnxruntime.backend``, for one).

**Refused or error.** An exception raised while the runtime loads or runs a model is graded
``refused`` only when it is the runtime's own explicit not-implemented or not-supported
error, recognised per backend by :data:`REFUSALS` (a pattern over ``"ExceptionType:
message"``); Python's ``NotImplementedError`` counts for every backend, custom ones
included. Any other exception is graded ``error``. An adapter that breaks its contract
(returns None, a generator, ...) raises :class:`AdapterError`, graded ``adapter-error``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import UpsampleError
from ._backend_base import (
    BUILTIN,
    NOT_IMPLEMENTED,
    REFUSALS,
    AdapterError,
    Backend,
    BackendUnavailableError,
    Run,
    as_list,
    check_options,
    import_runtime,
    installed_version,
)
from ._pytorch import pytorch

#: onnxruntime's GraphOptimizationLevel by the option's value
_ORT_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
               "extended": "ORT_ENABLE_EXTENDED", "layout": "ORT_ENABLE_LAYOUT",
               "all": "ORT_ENABLE_ALL"}

Settings = dict[str, str]

def _onnxruntime(settings: Settings) -> Backend:
    ort = import_runtime("onnxruntime", "onnxruntime")
    level = getattr(ort.GraphOptimizationLevel,
                    _ORT_LEVELS[settings["graph_optimization_level"]], None)
    if level is None:  # ORT_ENABLE_LAYOUT is newer than some onnxruntime releases
        raise BackendUnavailableError(
            f"backend option graph_optimization_level={settings['graph_optimization_level']}"
            f": onnxruntime {ort.__version__} has no such level")
    provider = settings["execution_provider"]
    if provider not in ort.get_available_providers():
        raise BackendUnavailableError(
            f"backend option execution_provider={provider}: this onnxruntime has "
            f"{', '.join(ort.get_available_providers())}")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.graph_optimization_level = level
        options.intra_op_num_threads = int(settings["intra_op_num_threads"])
        options.inter_op_num_threads = int(settings["inter_op_num_threads"])
        session = ort.InferenceSession(str(path), options, providers=[provider])
        return list(session.run(None, inputs))

    return Backend("onnxruntime", ort.__version__, run, REFUSALS["onnxruntime"], settings)


def _onnx_reference(with_ours: bool) -> Backend:
    name = "onnx-reference+onnx-upsample" if with_ours else "onnx-reference"
    reference = import_runtime("onnx.reference", name)
    new_ops = []
    if with_ours:
        from ..onnx import Upsample

        new_ops = [Upsample]

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        evaluator = reference.ReferenceEvaluator(str(path), new_ops=new_ops)
        return list(evaluator.run(None, inputs))

    version = installed_version("onnx") + (f" + onnx-upsample {installed_version('onnx-upsample')}"
                                  if with_ours else "")
    return Backend(name, version, run, REFUSALS[name])


def _openvino(settings: Settings) -> Backend:
    ov = import_runtime("openvino", "openvino")
    core = ov.Core()
    # the model's own precision by default: on CPUs with bfloat16 support OpenVINO computes
    # in bfloat16 unless told, which would grade its precision setting, not its Upsample
    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": settings["inference_precision"]}
    if settings["num_threads"] != "0":
        config["INFERENCE_NUM_THREADS"] = int(settings["num_threads"])

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        compiled = core.compile_model(core.read_model(str(path)), settings["device"], config)
        results = compiled(list(inputs.values()))
        return [np.asarray(results[output]) for output in compiled.outputs]

    return Backend("openvino", installed_version("openvino"), run, REFUSALS["openvino"],
                   settings)


_TRACT_TYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}


def _tract() -> Backend:
    tract = import_runtime("tract", "tract")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        model = tract.onnx().load(str(path))
        for index, array in enumerate(inputs.values()):
            kind = _TRACT_TYPES.get(array.dtype.name)
            if kind is None:
                raise NotImplementedError(f"no tract element type for {array.dtype}")
            model.set_input_fact(index, ",".join([*map(str, array.shape), kind]))
        typed = model.into_model()
        # tract < 0.22 optimises on request; later versions when made runnable
        if hasattr(typed, "into_optimized"):
            typed = typed.into_optimized()
        runnable = typed.into_runnable()
        return [t.to_numpy() for t in runnable.run(list(inputs.values()))]

    return Backend("tract", installed_version("tract"), run, REFUSALS["tract"])


def _tinygrad(settings: Settings) -> Backend:
    # tinygrad picks the first device that works; name one (the CPU by default) so results
    # do not depend on which accelerators a machine has
    os.environ["DEV"] = settings["device"]
    onnx_frontend = import_runtime("tinygrad.nn.onnx", "tinygrad")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        runner = onnx_frontend.OnnxRunner(str(path))
        outputs = runner(dict(inputs))
        return [np.asarray(value.numpy()) for value in outputs.values()]

    return Backend("tinygrad", installed_version("tinygrad"), run, REFUSALS["tinygrad"],
                   settings)


def _tvm(settings: Settings) -> Backend:
    tvm = import_runtime("tvm", "tvm")
    relax = import_runtime("tvm.relax", "tvm")
    frontend = import_runtime("tvm.relax.frontend.onnx", "tvm")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        import onnx

        module = frontend.from_onnx(onnx.load(str(path)), keep_params_in_input=False)
        module = relax.transform.DecomposeOpsForInference()(module)
        module = relax.transform.LegalizeOps()(module)
        machine = relax.VirtualMachine(relax.build(module, target=settings["target"]), tvm.cpu())
        result = machine["main"](*(tvm.runtime.tensor(v) for v in inputs.values()))
        values = result if isinstance(result, (list, tuple)) else [result]
        return [np.asarray(v.numpy()) for v in values]

    return Backend("tvm", installed_version("apache-tvm"), run, REFUSALS["tvm"], settings)


# top-level package -> the built-in backend whose refusals its errors are
_PACKAGES = {"onnxruntime": "onnxruntime", "openvino": "openvino", "tract": "tract",
             "tinygrad": "tinygrad", "tvm": "tvm", "torch": "pytorch", "onnx": "onnx-reference"}


def _custom(spec: str, settings: Settings) -> Backend:
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise BackendUnavailableError(
            f"backend {spec!r}: cannot import {module_name!r} ({error}); built-in backends "
            f"are {', '.join(BUILTIN)}, others are 'package.module:callable' or a module "
            "with onnx's backend API (prepare or run_model)") from None
    target = getattr(module, attribute, None) if attribute else module
    if target is None:
        raise BackendUnavailableError(f"backend {spec!r}: module {module_name!r} has no "
                                      f"{attribute!r}")
    version = installed_version(module_name.split(".")[0])
    # onnx's backend-test runner needs only prepare(); run_model() alone is the other half
    # of the same API (onnxruntime.backend has both, as module functions)
    # a runtime's own backend module (onnxruntime.backend) refuses as that runtime does
    refusal = REFUSALS.get(_PACKAGES.get(module_name.split(".")[0], ""), NOT_IMPLEMENTED)
    if callable(getattr(target, "prepare", None)) or callable(getattr(target, "run_model",
                                                                        None)):
        return Backend(spec, version, _backend_api(target, settings), refusal, settings)
    if not callable(target):
        raise BackendUnavailableError(
            f"backend {spec!r} is neither callable (model_bytes, inputs) -> outputs nor a "
            "module or class with onnx's backend API (prepare or run_model)")
    function = target

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        return as_list(function(path.read_bytes(), dict(inputs), **settings), "the callable")

    return Backend(spec, version, run, refusal, settings)


def _backend_api(backend: Any, settings: Settings) -> Run:
    # onnx's backend API: the device is an argument of its own, the rest keyword arguments
    options = dict(settings)
    device = options.pop("device", "CPU")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        import onnx

        model = onnx.load(str(path))
        if callable(getattr(backend, "prepare", None)):
            prepared = backend.prepare(model, device, **options)
            if prepared is None or not callable(getattr(prepared, "run", None)):
                raise AdapterError(f"prepare() returned {type(prepared).__name__}, not a rep "
                                   "with run(inputs)")
            return as_list(prepared.run(list(inputs.values())), "rep.run()")
        return as_list(backend.run_model(model, list(inputs.values()), device, **options),
                       "run_model()")

    return run


def load(spec: str, options: Mapping[str, str] | None = None) -> Backend:
    """The backend called ``spec``, with ``options`` (checked by
    :func:`~._backend_base.check_options`, defaults filled in); raises
    :class:`BackendUnavailableError` with the fix."""
    makers: dict[str, Callable[[Settings], Backend]] = {
        "onnxruntime": _onnxruntime,
        "onnx-reference": lambda _: _onnx_reference(False),
        "onnx-reference+onnx-upsample": lambda _: _onnx_reference(True),
        "openvino": _openvino,
        "tract": lambda _: _tract(),
        "tinygrad": _tinygrad,
        "tvm": _tvm,
        "pytorch": lambda _: pytorch(),
    }
    try:
        settings = check_options(spec, options or {})
    except UpsampleError as error:
        raise BackendUnavailableError(str(error)) from None
    if spec in makers:
        return makers[spec](settings)
    if not spec or spec.startswith("-") or " " in spec:
        raise BackendUnavailableError(f"backend {spec!r} is not a backend name; use one of "
                                 f"{', '.join(BUILTIN)} or 'package.module:callable'")
    return _custom(spec, settings)
