"""The one-node model of each conformance case, in the form its Upsample version takes.

Forms (docs/semantics.md §2, and the operator's documentation): ``v1`` (opset 1,
``height_scale``/``width_scale`` attributes, ``bilinear`` for linear), ``v7`` (``scales``
attribute), ``v9`` (``scales`` initializer), ``v9-input`` (``scales`` fed at run time as the
second graph input), ``v9-computed`` (``scales = sizes / float(Shape(X))``, the pattern of
PyTorch's ``size=`` export), ``v10`` (deprecated, ``scales`` initializer). A case that
must be refused gets the same model with its invalid scales or mode, and an output without
a shape.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .._api import output_shape
from .._spec.modes import MODES
from .._spec.versions import VERSIONS
from ._cases import Case

# IR 7 (onnx 1.6): loaded by every runtime still in use, and valid for opsets 1-10.
IR_VERSION = 7


def element_type(dtype: str) -> int:
    """The ONNX element type of a case's numpy dtype name (``string`` for ONNX strings)."""
    if dtype == "string":
        return TensorProto.STRING
    return int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))


def _scales_tensor(name: str, scales: tuple[float, ...]) -> onnx.TensorProto:
    return helper.make_tensor(name, TensorProto.FLOAT, [len(scales)],
                              np.asarray(scales, np.float32).tolist())


def output_dims(case: Case) -> tuple[int, ...]:
    return output_shape(case.shape, case.scales)


def computed_sizes(case: Case) -> np.ndarray:
    """The constant sizes of a ``v9-computed`` graph: the case's output shape."""
    return np.asarray(output_dims(case), dtype=np.float32)


def build_model(case: Case) -> onnx.ModelProto:
    """The model of ``case``: ``X`` (static shape) -> Upsample -> ``Y``."""
    elem = element_type(case.dtype)
    rank = len(case.shape)
    inputs = [helper.make_tensor_value_info("X", elem, list(case.shape))]
    # an invalid node has no output shape: the model declares the rank only, so that the
    # model itself is valid and only the node is not
    dims: list[int | str] = [f"Y_{axis}" for axis in range(rank)] \
        if case.must_refuse is not None else list(output_dims(case))
    outputs = [helper.make_tensor_value_info("Y", elem, dims)]
    if rank == 0:  # make_tensor_value_info leaves an empty shape out: say it is a scalar
        for info in (*inputs, *outputs):
            info.type.tensor_type.shape.SetInParent()
    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    mode = case.mode
    if case.form == "v1":
        mode = VERSIONS[1].modes[MODES.index(case.mode)]  # version 1 calls linear bilinear
        nodes.append(helper.make_node("Upsample", ["X"], ["Y"], mode=mode,
                                      height_scale=case.scales[2], width_scale=case.scales[3]))
    elif case.form == "v7":
        node = helper.make_node("Upsample", ["X"], ["Y"], mode=mode)
        # explicit type: an empty list (rank 0) has no element to infer FLOATS from
        node.attribute.append(helper.make_attribute(
            "scales", list(case.scales), attr_type=onnx.AttributeProto.FLOATS))
        nodes.append(node)
    else:
        nodes.append(helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=mode))
        if case.form in ("v9", "v10"):
            initializers.append(_scales_tensor("scales", case.scales))
        elif case.form == "v9-input":
            inputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT,
                                                        [len(case.scales)]))
        else:  # v9-computed
            sizes = computed_sizes(case)
            nodes[:0] = [
                helper.make_node("Constant", [], ["sizes"], value=helper.make_tensor(
                    "sizes_value", TensorProto.FLOAT, [rank], sizes.tolist())),
                helper.make_node("Shape", ["X"], ["x_shape"]),
                helper.make_node("Cast", ["x_shape"], ["x_shape_f"], to=TensorProto.FLOAT),
                helper.make_node("Div", ["sizes", "x_shape_f"], ["scales"]),
            ]
    graph = helper.make_graph(nodes, case.name, inputs, outputs, initializers)
    graph.doc_string = case.description
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)],
                              producer_name="onnx-upsample conformance")
    model.ir_version = IR_VERSION
    model.doc_string = case.description
    return model


def feeds(case: Case, x: np.ndarray) -> list[np.ndarray]:
    """The inputs the model of ``case`` takes, in order."""
    if case.form == "v9-input":
        return [x, np.asarray(case.scales, np.float32)]
    return [x]
