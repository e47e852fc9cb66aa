"""Test helper: the inputs the explainer's tests share (no tests here)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onnx_upsample

RNG_SEED = 20240611

# (shape, scales) of the outputs explained as Upsample's own, in every element type
UPSAMPLE_CASES = [
    ((1, 2, 5, 7), [1, 1, 1.5, 1.7]),
    ((3, 4, 5), [1.5, 2, 1.3333334]),
    ((1, 3, 4, 2), [1, 2.5, 1.5, 1]),
]


RNG_SEED = 20240611


def random_array(shape: tuple[int, ...], dtype: object = np.float32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(RNG_SEED + seed)
    return rng.standard_normal(shape).astype(dtype)


def any_type(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Random values of an element type named as numpy (or ml_dtypes, for bfloat16) names it."""
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def onnx_resize(x: np.ndarray, scales: list[float], mode: str, transform: str,
                 nearest_mode: str | None = None, opset: int = 18) -> np.ndarray:
    """ONNX Resize as onnx's reference evaluator computes it (float32 in and out)."""
    attributes: dict[str, str] = {"mode": mode, "coordinate_transformation_mode": transform}
    if nearest_mode is not None:
        attributes["nearest_mode"] = nearest_mode
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **attributes)
    graph = helper.make_graph(
        [node], "resize",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape)),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, [len(scales)])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    feeds = {"X": x, "scales": np.asarray(scales, dtype=np.float32)}
    return np.asarray(ReferenceEvaluator(model).run(None, feeds)[0])


def differs_from_upsample(x: np.ndarray, theirs: np.ndarray, scales: list[float],
                           mode: str) -> bool:
    ours = onnx_upsample.upsample(x, scales, mode)
    return ours.shape != theirs.shape or not np.array_equal(ours, theirs)
