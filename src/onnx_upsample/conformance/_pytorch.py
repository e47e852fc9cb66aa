"""The ``pytorch`` backend: a model mapped onto ``torch.nn.functional.interpolate``.

This is the mapping a hand port or a model converter (onnx2torch and the like) uses: it
reads the ONNX ``Upsample`` node (versions 1, 7, 9, 10) or, for the upgraded form, the
``Resize`` node, takes its mode and constant scales from its attributes, initializers or
``Constant`` nodes, and calls ``interpolate(x, scale_factor=<the spatial scales>,
mode=..., align_corners=...)`` on the CPU. ``Upsample`` maps to mode ``nearest``, or to
``linear``/``bilinear``/``trilinear`` by rank with ``align_corners=False``.

What such a converter cannot map it refuses, with :class:`NotImplementedError` (the
grader's "refused"): ranks other than 3-5, scales other than 1 on N or C, element types other
than float16/32/64, scales fed or computed at run time, other modes, and ``Resize``
coordinate modes that ``interpolate`` has no equivalent for. torch's own not-supported
errors are refusals too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .._spec.versions import DEFAULT_DOMAINS
from ._backend_base import REFUSALS, Backend, import_runtime, installed_version

_FLOATS = ("float16", "float32", "float64")
_LINEAR = {3: "linear", 4: "bilinear", 5: "trilinear"}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _opset(model: Any) -> int:
    for entry in model.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    raise NotImplementedError("the model imports no ai.onnx opset")


def _constant(model: Any, name: str) -> np.ndarray | None:
    """The value of tensor ``name`` when the graph holds it as a constant, else None."""
    from onnx import helper, numpy_helper

    for tensor in model.graph.initializer:
        if tensor.name == name:
            return np.asarray(numpy_helper.to_array(tensor))
    for node in model.graph.node:
        if node.op_type == "Constant" and name in node.output:
            for attribute in node.attribute:
                if attribute.name == "value":
                    return np.asarray(numpy_helper.to_array(attribute.t))
                if attribute.name in ("value_float", "value_floats"):
                    return np.asarray(helper.get_attribute_value(attribute), np.float32)
    return None


def _the_node(model: Any) -> Any:
    """The one Upsample or Resize node; Constant nodes may feed it, nothing else."""
    nodes = [n for n in model.graph.node if n.op_type != "Constant"]
    if len(nodes) != 1 or nodes[0].op_type not in ("Upsample", "Resize"):
        kinds = ", ".join(n.op_type for n in nodes)
        raise NotImplementedError(f"the pytorch mapping handles one Upsample or Resize node "
                                  f"fed by constants, not a graph of {kinds}")
    return nodes[0]


def _input_constant(model: Any, node: Any, index: int, what: str) -> np.ndarray | None:
    if len(node.input) <= index or not node.input[index]:
        return None
    value = _constant(model, node.input[index])
    if value is None:
        raise NotImplementedError(f"{what} are given or computed at run time; "
                                  "interpolate's scale_factor must be constant")
    return value


def _upsample(model: Any, node: Any, rank: int) -> tuple[str, list[float], bool | None]:
    from onnx import helper

    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    mode = _text(attributes.get("mode", b"nearest"))
    if _opset(model) < 7:
        scales = [1.0, 1.0, float(attributes.get("height_scale", 1.0)),
                  float(attributes.get("width_scale", 1.0))]
    elif "scales" in attributes:
        scales = [float(s) for s in attributes["scales"]]
    else:
        value = _input_constant(model, node, 1, "Upsample's scales")
        if value is None:
            raise NotImplementedError("Upsample has no scales")
        scales = [float(s) for s in value.reshape(-1)]
    if mode == "nearest":
        return "nearest", scales, None
    if mode in ("linear", "bilinear") and rank in _LINEAR:
        return _LINEAR[rank], scales, False
    raise NotImplementedError(f"Upsample mode {mode!r} at rank {rank} has no interpolate "
                              "mode")


def _resize(model: Any, node: Any, rank: int,
            shape: tuple[int, ...]) -> tuple[str, list[float], bool | None]:
    from onnx import helper

    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if _opset(model) < 11:
        raise NotImplementedError("Resize-10 is not mapped onto interpolate (opset 11 or "
                                  "later)")
    for name in ("antialias", "axes", "exclude_outside"):
        if attributes.get(name):
            raise NotImplementedError(f"Resize attribute {name} has no interpolate "
                                      "equivalent")
    mode = _text(attributes.get("mode", b"nearest"))
    coordinates = _text(attributes.get("coordinate_transformation_mode", b"half_pixel"))
    rounding = _text(attributes.get("nearest_mode", b"round_prefer_floor"))
    scales_value = _input_constant(model, node, 2, "Resize's scales")
    sizes = _input_constant(model, node, 3, "Resize's sizes")
    if scales_value is not None and scales_value.size:
        scales = [float(s) for s in scales_value.reshape(-1)]
    elif sizes is not None:
        # interpolate(size=) would be the mapping; scale_factor keeps one call: out / in
        scales = [int(o) / i if i else 1.0 for o, i in zip(sizes.reshape(-1), shape,
                                                            strict=True)]
    else:
        raise NotImplementedError("Resize has neither scales nor sizes")
    if mode == "nearest" and coordinates == "asymmetric" and rounding == "floor":
        return "nearest", scales, None
    if mode == "nearest" and coordinates == "half_pixel" and rounding == "round_prefer_ceil":
        return "nearest-exact", scales, None
    if mode == "linear" and rank in _LINEAR and coordinates in ("half_pixel",
                                                                 "pytorch_half_pixel"):
        return _LINEAR[rank], scales, False
    if mode == "linear" and rank in _LINEAR and coordinates == "align_corners":
        return _LINEAR[rank], scales, True
    rounding = f" and nearest_mode {rounding!r}" if mode == "nearest" else ""
    raise NotImplementedError(f"Resize mode {mode!r} with coordinate_transformation_mode "
                              f"{coordinates!r}{rounding} has no interpolate equivalent")


def pytorch() -> Backend:
    """The backend; torch's CPU build is enough."""
    torch = import_runtime("torch", "pytorch")
    functional = import_runtime("torch.nn.functional", "pytorch")

    def run(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        import onnx

        model = onnx.load(str(path))
        node = _the_node(model)
        x = inputs.get(node.input[0])
        if x is None:
            raise NotImplementedError(f"the {node.op_type} input {node.input[0]!r} is not a "
                                      "graph input")
        if x.dtype.name not in _FLOATS:
            raise NotImplementedError(f"element type {x.dtype.name}: interpolate takes "
                                      f"{', '.join(_FLOATS)} here")
        if x.ndim not in _LINEAR:
            raise NotImplementedError(f"rank {x.ndim}: interpolate takes (N, C, spatial...) "
                                      "inputs of rank 3, 4 or 5")
        if node.op_type == "Upsample":
            mode, scales, align_corners = _upsample(model, node, x.ndim)
        else:
            mode, scales, align_corners = _resize(model, node, x.ndim, x.shape)
        if len(scales) != x.ndim:
            raise NotImplementedError(f"{len(scales)} scales for a rank-{x.ndim} input")
        if scales[0] != 1 or scales[1] != 1:
            raise NotImplementedError(f"scales {scales[:2]} on N and C: interpolate resizes "
                                      "the spatial axes only")
        output = functional.interpolate(torch.from_numpy(x), scale_factor=scales[2:],
                                        mode=mode, align_corners=align_corners)
        return [output.numpy()]

    return Backend("pytorch", installed_version("torch"), run, REFUSALS["pytorch"])
