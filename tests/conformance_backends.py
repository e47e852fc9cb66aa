"""Backends for the conformance tests, loaded by the grader's worker processes.

``exact`` runs a model with onnx's ReferenceEvaluator and onnx-upsample's operator;
``misbehaving`` does the same but, by case name, crashes, hangs, raises, answers with the
wrong shape or one ULP off; ``contract`` breaks the adapter's contract or the expected
type in each way the grader names; ``ReferenceBackend`` is the same evaluator behind
``onnx.backend.base.Backend``. For the model-level diff: ``half_pixel`` computes every
Upsample as a Resize with opset 11's defaults (half-pixel centres), ``perturbed`` runs exactly
on an input ``x`` one ULP off, ``no_upsample`` refuses any model holding an Upsample,
``crash_on_upsample`` dies on one, and ``refuse_all`` refuses every model.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep
from onnx.reference import ReferenceEvaluator

from onnx_upsample.onnx import Upsample


def _evaluate(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return list(ReferenceEvaluator(model, new_ops=[Upsample]).run(None, inputs))


def exact(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return _evaluate(onnx.load_from_string(model_bytes), inputs)


#: case ID -> how ``misbehaving`` answers it (every other case: exactly)
BEHAVIOUR = {"rank1_nearest": "crash", "rank2_nearest": "hang", "rank3_nearest": "raise",
             "rank4_nearest": "shape", "rank5_nearest": "ulp", "rank6_nearest": "wrong",
             "rank3_linear": "objects"}


def misbehaving(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> Any:
    model = onnx.load_from_string(model_bytes)
    behaviour = BEHAVIOUR.get(model.graph.name.removeprefix("test_upsample_"), "exact")
    if behaviour == "crash":
        os.abort()
    if behaviour == "hang":
        time.sleep(600)
    if behaviour == "raise":
        raise NotImplementedError("Upsample with this scale is not supported")
    if behaviour == "objects":
        return [_Opaque()]
    (output,) = _evaluate(model, inputs)
    if behaviour == "shape":
        return output[..., :-1]
    if behaviour == "wrong":
        return output + np.float32(0.5)
    if behaviour == "ulp":
        bits = output.view(np.uint32).copy()
        bits.reshape(-1)[0] += 1
        return {"Y": bits.view(np.float32)}
    return (output,)


class _Opaque:
    """Not an array: the grader's worker must refuse to send it back."""


class _Rep(BackendRep):
    def __init__(self, model: onnx.ModelProto) -> None:
        self.evaluator = ReferenceEvaluator(model, new_ops=[Upsample])

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        names = self.evaluator.input_names
        return tuple(self.evaluator.run(None, dict(zip(names, inputs, strict=True))))


class ReferenceBackend(Backend):
    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> _Rep:
        return _Rep(model)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


#: case ID -> how ``contract`` answers it, for the grader's contract tests (every other
#: case: exactly)
CONTRACT = {"none": "none", "generator": "generator", "value_error": "value_error",
            "big_endian": "big_endian", "float64": "float64", "float64_off": "float64_off",
            "invalid_accepted": "zeros", "invalid_refused": "value_error",
            "not_supported": "not_implemented"}


def contract(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> Any:
    model = onnx.load_from_string(model_bytes)
    behaviour = CONTRACT.get(model.graph.name.removeprefix("test_upsample_"), "exact")
    if behaviour == "none":
        return None
    if behaviour == "value_error":
        raise ValueError("my port cannot read these scales")
    if behaviour == "not_implemented":
        raise NotImplementedError("linear mode at this rank")
    if behaviour == "zeros":
        (x,) = inputs.values()
        return [np.zeros_like(x)]
    (output,) = _evaluate(model, inputs)
    if behaviour == "generator":
        return (value for value in [output])
    if behaviour == "big_endian":
        return [output.astype(output.dtype.newbyteorder(">"))]
    if behaviour == "float64":
        return [output.astype(np.float64)]
    if behaviour == "float64_off":
        return [output.astype(np.float64) + 0.25]
    return [output]


def as_half_pixel_resize(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` (changed in place) with every Upsample-9 the Resize a converter with opset
    11's defaults writes (``half_pixel``, nearest ``round_prefer_floor``), at opset 13."""
    for node in model.graph.node:
        if node.op_type == "Upsample":
            modes = [a.s.decode() for a in node.attribute if a.name == "mode"] or ["nearest"]
            node.op_type = "Resize"
            node.input[:] = [node.input[0], "", node.input[1]]
            del node.attribute[:]
            node.attribute.extend([
                onnx.helper.make_attribute("mode", modes[0]),
                onnx.helper.make_attribute("coordinate_transformation_mode", "half_pixel"),
                onnx.helper.make_attribute("nearest_mode", "round_prefer_floor")])
    del model.opset_import[:]
    model.opset_import.append(onnx.helper.make_opsetid("", 13))
    return model


def half_pixel(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Every Upsample-9 computed as the Resize a converter with opset 11's defaults writes
    (``half_pixel``, nearest ``round_prefer_floor``), in onnx's reference evaluator."""
    return _evaluate(as_half_pixel_resize(onnx.load_from_string(model_bytes)), inputs)


def perturbed(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Exactly, but with a graph input named ``x`` one ULP larger (noise before a node)."""
    if "x" in inputs:
        inputs = {**inputs, "x": np.nextafter(inputs["x"], np.float32(np.inf))}
    return exact(model_bytes, inputs)


def no_upsample(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Exactly, refusing every model that holds an Upsample."""
    model = onnx.load_from_string(model_bytes)
    if any(node.op_type == "Upsample" for node in model.graph.node):
        raise NotImplementedError("Upsample is not supported by this runtime")
    return _evaluate(model, inputs)


def refuse_all(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    raise NotImplementedError("this runtime runs no model")


def crash_on_upsample(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Exactly, but the process dies on any model that holds an Upsample."""
    if any(node.op_type == "Upsample" for node in onnx.load_from_string(model_bytes).graph.node):
        os.abort()
    return exact(model_bytes, inputs)
