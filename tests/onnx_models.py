"""Helpers shared by the ``test_onnx_*`` files: model builders and runners (no tests here).

``upsample_model`` builds a one-node model for every version and scales source; ``ort_run``
runs a whole model in onnxruntime's CPU provider; ``evaluate`` runs it in onnx's reference
evaluator with onnx-upsample's ``Upsample``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample.onnx._evaluator import reference_evaluator  # noqa: E402

#: How each form/source of an Upsample node gets its scales.
SOURCES = (
    "v1",                # opset 6, height_scale / width_scale attributes
    "v7",                # opset 7, scales attribute
    "v8",                # opset 8, scales attribute
    "v9-raw",            # opset 9, initializer stored as raw_data
    "v9-float_data",     # opset 9, initializer stored as float_data
    "v9-constant",       # opset 9, Constant node with a tensor value
    "v9-input",          # opset 9, graph input fed at run time
    "v10",               # opset 10 (deprecated), initializer
)
OPSET_OF = {"v1": 6, "v7": 7, "v8": 8, "v9-raw": 9, "v9-float_data": 9, "v9-constant": 9,
            "v9-input": 9, "v10": 10}


def elem_type(dtype: np.dtype | type) -> int:
    """The ONNX element type of a numpy dtype."""
    return int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))


def make_model(nodes: Sequence[object], inputs: Sequence[object], outputs: Sequence[object],
               initializers: Sequence[object] = (), opset: int = 9, ir_version: int = 8,
               functions: Sequence[object] = (), extra_opsets: Sequence[object] = (),
               name: str = "g") -> onnx.ModelProto:
    """A model with the given graph parts, importing default-domain ``opset``."""
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                              list(initializers))
    model = helper.make_model(graph, functions=list(functions),
                              opset_imports=[helper.make_opsetid("", opset), *extra_opsets])
    model.ir_version = ir_version
    return model


def scales_tensor(scales: Sequence[float], name: str, float_data: bool = False) -> object:
    values = np.asarray(scales, dtype=np.float32)
    if float_data:
        return helper.make_tensor(name, TensorProto.FLOAT, [len(values)], values.tolist())
    return numpy_helper.from_array(values, name)


def upsample_model(source: str, scales: Sequence[float], mode: str = "nearest",
                   dtype: np.dtype | type = np.float32, rank: int | None = None,
                   shape: Sequence[int | str] | None = None,
                   name: str = "up") -> onnx.ModelProto:
    """``Y = Upsample(X)`` in the form of ``source`` (see :data:`SOURCES`)."""
    rank = len(scales) if rank is None else rank
    dims: list[int | str] = list(shape) if shape is not None else [f"d{a}" for a in range(rank)]
    x = helper.make_tensor_value_info("X", elem_type(dtype), dims)
    y = helper.make_tensor_value_info("Y", elem_type(dtype), [f"o{a}" for a in range(rank)])
    inputs, initializers, nodes = [x], [], []
    opset = OPSET_OF[source]
    if source == "v1":
        assert list(scales[:2]) == [1, 1]
        nodes.append(helper.make_node("Upsample", ["X"], ["Y"], name=name, mode=mode,
                                      height_scale=float(scales[2]),
                                      width_scale=float(scales[3])))
    elif source in ("v7", "v8"):
        nodes.append(helper.make_node("Upsample", ["X"], ["Y"], name=name, mode=mode,
                                      scales=[float(s) for s in scales]))
    else:
        nodes.append(helper.make_node("Upsample", ["X", "scales"], ["Y"], name=name, mode=mode))
        if source in ("v9-raw", "v10"):
            initializers.append(scales_tensor(scales, "scales"))
        elif source == "v9-float_data":
            initializers.append(scales_tensor(scales, "scales", float_data=True))
        elif source == "v9-constant":
            nodes.insert(0, helper.make_node("Constant", [], ["scales"], name="scales_constant",
                                             value=scales_tensor(scales, "value")))
        elif source == "v9-input":
            inputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT,
                                                        [len(scales)]))
        else:
            raise ValueError(source)
    return make_model(nodes, inputs, [y], initializers, opset=opset)


def feeds_for(model: onnx.ModelProto, x: np.ndarray,
              scales: Sequence[float] | None = None) -> dict[str, np.ndarray]:
    """``{"X": x}`` plus the scales where the model takes them as a graph input."""
    feeds = {"X": x}
    if any(value.name == "scales" for value in model.graph.input):
        assert scales is not None
        feeds["scales"] = np.asarray(scales, dtype=np.float32)
    return feeds


@functools.lru_cache(maxsize=4)
def _options(optimization: str) -> object:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    }[optimization]
    return options


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray],
            optimization: str = "all") -> list[np.ndarray]:
    """Run ``model`` in onnxruntime (CPU) and return every output.

    ``optimization`` is ORT's graph optimization level: ``"all"`` (ORT's default),
    ``"extended"`` or ``"disabled"``. At ``"all"`` an Upsample or Resize after a Conv may run
    as ``com.microsoft.nchwc::Upsample``, whose linear results differ from ORT's own Upsample
    kernel in the last bit; from ``"extended"`` down to ``"basic"`` ORT constant-folds
    ``Shape`` with the shapes onnx's inference gives (the float64 size rule for Upsample),
    which can differ from the tensor's real shape.
    """
    session = ort.InferenceSession(model.SerializeToString(), _options(optimization),
                                   providers=["CPUExecutionProvider"])
    return [np.asarray(value) for value in session.run(None, feeds)]


def evaluate(model: onnx.ModelProto, feeds: dict[str, np.ndarray],
             ignore_warnings: bool = True) -> list[np.ndarray]:
    """Run ``model`` in onnx's reference evaluator with onnx-upsample's ``Upsample``."""
    with warnings.catch_warnings():
        if ignore_warnings:
            warnings.simplefilter("ignore")
        return [np.asarray(v) for v in reference_evaluator(model).run(None, feeds)]


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape, same dtype, same bytes (so -0.0 != 0.0 and NaN payloads count)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                               np.ascontiguousarray(b).view(np.uint8)))


def random_input(shape: Sequence[int], dtype: np.dtype | type, seed: int = 0) -> np.ndarray:
    """Random test data of ``dtype``: normal floats, small integers."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(info.min, -1000), min(info.max, 1000)
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    raise ValueError(dtype)


def dims(value_type: object) -> list[int | str | None]:
    """The dimensions of a tensor type (values, symbols, or None)."""
    shape = value_type.tensor_type.shape  # type: ignore[attr-defined]
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in shape.dim]


def value_type(model: onnx.ModelProto, name: str) -> object:
    """The declared or inferred type of ``name`` in the main graph."""
    for value in [*model.graph.value_info, *model.graph.output, *model.graph.input]:
        if value.name == name:
            return value.type
    raise KeyError(name)


def declared_as(value: onnx.ValueInfoProto, declared: str) -> onnx.ValueInfoProto:
    """``value`` declared with its element type and no shape, or with no type at all."""
    if declared == "no shape":
        return helper.make_tensor_value_info(value.name, TensorProto.FLOAT, None)
    return onnx.ValueInfoProto(name=value.name)


def tf2onnx_shrinking(scale: float, declared: str) -> onnx.ModelProto:
    """tf.image.resize as tf2onnx wrote it at opset 9 (NHWC, Transpose -> Upsample with
    scales below 1 -> Transpose), X 1x10x10x3, the output declared as ``declared``."""
    nodes = [helper.make_node("Transpose", ["X"], ["nchw"], perm=[0, 3, 1, 2], name="to_nchw"),
             helper.make_node("Upsample", ["nchw", "scales"], ["small"], name="Resize__5",
                              mode="nearest"),
             helper.make_node("Transpose", ["small"], ["Y"], perm=[0, 2, 3, 1], name="to_nhwc")]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 10, 10, 3])
    y = declared_as(helper.make_tensor_value_info("Y", TensorProto.FLOAT, None), declared)
    return make_model(nodes, [x], [y], [scales_tensor([1, 1, scale, scale], "scales")],
                      opset=9, ir_version=4)
