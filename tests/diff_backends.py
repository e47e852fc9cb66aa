"""Models and backends for the model-level diff's tests (``tests/test_diff*.py``), loaded
by the diff's worker processes as ``diff_backends:NAME``.

``chain`` builds a long chain of cheap nodes (Conv, Relu, Add, Mul) with a few Upsample-9
nodes in it. The backends run onnxruntime with its graph optimizations off (so that a model
cut in pieces computes the same bits as the model whole): ``ort`` as it is, ``conv_ulp``
with the first Conv's output one ULP larger (a difference that begins in a Conv),
``conv_ulp_half_pixel`` the same and every Upsample under half-pixel centres as well (a
difference of the Upsample's own behind one it inherits). ``ceil_size`` is onnx's reference
evaluator with a nearest Upsample whose output size rounds up (another shape).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from conformance_backends import as_half_pixel_resize
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from onnx_upsample.onnx._probe import run_pieces


def chain(nodes: int = 100, upsamples: int = 3, channels: int = 4, size: int = 4,
          mode: str = "nearest", at: Sequence[int] | None = None) -> onnx.ModelProto:
    """A chain of ``nodes`` nodes on x[1, channels, size, size]: ``upsamples`` Upsample-9 x2
    (at the places ``at``, else spread evenly), the others Conv 1x1, Relu, Add and Mul with
    constants in turn by place (node ``conv0`` first)."""
    rng = np.random.default_rng(0)
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    every = max(nodes // (upsamples + 1), 1)
    places = set(at) if at is not None else {every * (k + 1) - 1 for k in range(upsamples)}
    tensors, made, current = [scales], [], "x"
    kinds = ("Conv", "Relu", "Add", "Mul")
    for index in range(nodes):
        out = f"v{index}"
        if index in places:
            made.append(helper.make_node("Upsample", [current, "scales"], [out],
                                         name=f"up{index}", mode=mode))
        else:
            kind = kinds[index % len(kinds)]
            inputs = [current]
            if kind == "Conv":
                # near the identity: values neither vanish nor grow along the chain
                weight = np.eye(channels)[:, :, None, None] + rng.standard_normal(
                    (channels, channels, 1, 1)) * 0.1
                tensors.append(numpy_helper.from_array(weight.astype(np.float32), f"w{index}"))
                inputs.append(f"w{index}")
            elif kind in ("Add", "Mul"):
                constant = rng.uniform(0.5, 1.5, (1, channels, 1, 1)).astype(np.float32)
                tensors.append(numpy_helper.from_array(constant, f"c{index}"))
                inputs.append(f"c{index}")
            made.append(helper.make_node(kind, inputs, [out], name=f"{kind.lower()}{index}"))
        current = out
    graph = helper.make_graph(
        made, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                      [1, channels, size, size])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, None)], tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    return model


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return list(session.run(None, feeds))


def ort(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return _ort(onnx.load_from_string(model_bytes), inputs)


def _first_conv_ulp(model: onnx.ModelProto,
                    inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """``model`` in onnxruntime, the first Conv's output one ULP larger everywhere."""
    convs = [i for i, node in enumerate(model.graph.node) if node.op_type == "Conv"]
    if not convs:
        return _ort(model, inputs)

    def bumped(piece: onnx.ModelProto, fed: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        return [np.nextafter(value, np.float32(np.inf)) for value in _ort(piece, fed)]

    names = [value.name for value in model.graph.output]
    found = run_pieces(model, inputs, names, {convs[0]}, _ort, bumped)
    return [found[name] for name in names]


def conv_ulp(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return _first_conv_ulp(onnx.load_from_string(model_bytes), inputs)


def conv_ulp_half_pixel(model_bytes: bytes,
                        inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """As ``conv_ulp``, every Upsample-9 computed as a Resize with half-pixel centres."""
    model = as_half_pixel_resize(onnx.load_from_string(model_bytes))
    return _first_conv_ulp(model, inputs)


class CeilUpsample(OpRun):
    """Nearest Upsample whose output size rounds up: ceil(in * scale) (the evaluator takes
    the operator's name from the class's, set below)."""

    op_domain = ""

    def _run(self, x: np.ndarray, scales: np.ndarray,
             mode: str | None = None) -> tuple[np.ndarray]:
        out = x
        for axis, scale in enumerate(np.asarray(scales, np.float32)):
            n = x.shape[axis]
            size = int(np.ceil(np.float32(n) * scale))
            index = np.minimum(np.floor(np.arange(size) / scale).astype(np.int64), n - 1)
            out = np.take(out, index, axis=axis)
        return (out,)


CeilUpsample.__name__ = "Upsample"


def ceil_size(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    model = onnx.load_from_string(model_bytes)
    return list(ReferenceEvaluator(model, new_ops=[CeilUpsample]).run(None, inputs))

