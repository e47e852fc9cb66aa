"""Going down one opset where onnx has no down adapter: which nodes can move unchanged, and
which can be written in the lower opset's form by hand.

onnx's version converter has few down adapters: going from opset 13 to 12 fails on a Relu
("No Adapter To Version $12 for Relu") although Relu-13 and Relu-6 differ only in element
types. :func:`moves_down_unchanged` says whether a node means the same at the lower opset
(same inputs, outputs and attributes, its element types allowed there); the pipeline then
hides it from the converter for that step. Where an operator's attributes became inputs
(Slice at opset 10, Clip and Pad at 11), onnx's converter takes it up but not down
("No Adapter To Version $9 for Slice"): :func:`inputs_to_attributes` writes such a node in the
older form where those inputs are constants, which is how the converter wrote them going up.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TypeProto, helper

from ..._errors import UpsampleError
from ..._spec.versions import DEFAULT_DOMAINS
from .._graphs import Site, node_label, type_string

__all__ = ["inputs_to_attributes", "moves_down_unchanged"]


def _signature(schema: onnx.defs.OpSchema) -> tuple[object, ...]:
    """Everything about a schema except its element types and documentation."""
    def parameters(items: Sequence[onnx.defs.OpSchema.FormalParameter]) -> tuple[object, ...]:
        return tuple((p.name, p.option, p.is_homogeneous, p.min_arity) for p in items)

    attributes = tuple(sorted(
        (name, a.type, a.required, a.default_value.SerializeToString())
        for name, a in schema.attributes.items()))
    return (parameters(schema.inputs), parameters(schema.outputs), attributes,
            schema.min_input, schema.max_input, schema.min_output, schema.max_output)


# Operators whose later versions only added optional attributes that, when absent, keep the
# earlier meaning (checked against the ONNX changelog; RoiAlign-16, for one, is not: its new
# coordinate_transformation_mode defaults to another mapping than version 10's).
_NEW_ATTRIBUTES_KEEP_OLD_MEANING = frozenset({
    "ArgMax", "ArgMin", "AveragePool", "Cast", "CastLike", "Constant", "DepthToSpace",
    "GatherND", "Loop", "LpPool", "MaxPool", "Reshape", "ScatterElements", "ScatterND",
    "Shape", "TopK",
})


def _compatible_use(node: onnx.NodeProto, new: onnx.defs.OpSchema,
                    old: onnx.defs.OpSchema) -> bool:
    """Whether ``node`` (valid for ``new``) means the same under ``old``.

    Same inputs and outputs (a variadic one may have a smaller minimum arity in ``new``, as
    Loop-11's loop-carried values, when the node's count fits ``old``); every attribute the
    node sets exists in ``old`` with the same type; attributes both versions have keep their
    defaults; ``old``'s required ones are set.
    """
    def parameters(items: Sequence[onnx.defs.OpSchema.FormalParameter]) -> tuple[object, ...]:
        return tuple((p.name, p.option, p.is_homogeneous) for p in items)  # not min_arity

    if (parameters(new.inputs) != parameters(old.inputs)
            or parameters(new.outputs) != parameters(old.outputs)):
        return False
    if not (old.min_input <= len(node.input) <= old.max_input
            and old.min_output <= len(node.output) <= old.max_output):
        return False
    used = {attribute.name for attribute in node.attribute}
    for name in used:
        if name not in old.attributes or old.attributes[name].type != new.attributes[name].type:
            return False
    for name, attribute in old.attributes.items():
        if attribute.required and name not in used:
            return False
        if name in new.attributes and (attribute.default_value.SerializeToString()
                                       != new.attributes[name].default_value.SerializeToString()):
            return False
    return True


def moves_down_unchanged(site: Site, index: int, node: onnx.NodeProto,
                         types: dict[str, TypeProto], source: int, target: int) -> bool:
    """Whether ``node`` can go from opset ``source`` down to ``target`` unchanged.

    Parameters
    ----------
    site : Site
        The graph or function holding the node.
    index : int
        The node's position in it (for the message).
    node : onnx.NodeProto
        The node; it is not modified.
    types : dict of str to onnx.TypeProto
        The known type of each value, to check its element types against ``target``.
    source, target : int
        The opsets; only ``source > target`` (one step down) can give True.

    Returns
    -------
    bool
        True if the node's schema at ``target`` differs from the one at ``source`` only in
        element types (or in optional attributes the node does not set), so that it means
        the same there; False for the nodes the converter itself carries or must adapt
        (Upsample and Resize always: the conversion writes those itself).

    Raises
    ------
    UpsampleError
        If an input has an element type the node's schema at ``target`` does not allow.
    """
    if source <= target or node.domain not in DEFAULT_DOMAINS:
        return False
    if node.op_type in ("Upsample", "Resize"):
        return False
    try:
        new = onnx.defs.get_schema(node.op_type, source)
        old = onnx.defs.get_schema(node.op_type, target)
    except onnx.defs.SchemaError:
        return False
    if new.since_version == old.since_version:
        return False  # the converter carries it without an adapter
    if _signature(new) != _signature(old) and not (
            node.op_type in _NEW_ATTRIBUTES_KEEP_OLD_MEANING
            and _compatible_use(node, new, old)):
        return False
    constraints = {c.type_param_str: c.allowed_type_strs for c in old.type_constraints}
    for position, name in enumerate(node.input):
        if not name or name not in types or not old.inputs:
            continue
        parameter = old.inputs[min(position, len(old.inputs) - 1)]
        allowed = constraints.get(parameter.type_str, [parameter.type_str])
        value_type = types[name]
        if not value_type.HasField("tensor_type"):
            continue
        elem = value_type.tensor_type.elem_type
        if elem == onnx.TensorProto.UNDEFINED:
            continue
        type_name = type_string(elem)
        if type_name not in allowed:
            raise UpsampleError(
                f"node {node_label(site, node, index)!r} ({node.op_type}) has input {name!r} "
                f"of type {type_name}, which {node.op_type}-{old.since_version} (opset "
                f"{target}) does not allow; a model with it cannot be brought to opset "
                f"{target}")
    return True


# For each operator whose attributes became inputs: the first version with the inputs, and
# each such input (position, the older attribute's name, whether it is a float there).
_NOW_INPUTS: dict[str, tuple[int, tuple[tuple[int, str, bool], ...]]] = {
    "Slice": (10, ((1, "starts", False), (2, "ends", False), (3, "axes", False))),
    "Clip": (11, ((1, "min", True), (2, "max", True))),
    "Pad": (11, ((1, "pads", False), (2, "value", True))),
}


def inputs_to_attributes(site: Site, node: onnx.NodeProto, types: dict[str, TypeProto],
                         source: int, target: int) -> list[str] | None:
    """Write ``node`` in the form it had before its attributes became inputs, in place,
    where going from opset ``source`` down to ``target`` crosses that change.

    Parameters
    ----------
    site : Site
        The graph or function holding the node (for its constants).
    node : onnx.NodeProto
        The node; rewritten only where the result is returned.
    types : dict of str to onnx.TypeProto
        The known type of each value: the older Clip and Pad take float32 bounds and pad
        values, which must hold the constants exactly.
    source, target : int
        The opsets of one step down.

    Returns
    -------
    list of str or None
        The inputs the node no longer reads (constants the caller may drop), or None where
        the node is left as it was: another operator, a step that does not cross the change,
        an input that is not a constant, a Slice with steps other than 1, a Pad with axes, a
        float the attribute cannot hold.
    """
    if node.domain not in DEFAULT_DOMAINS or node.op_type not in _NOW_INPUTS:
        return None
    since, moved = _NOW_INPUTS[node.op_type]
    try:
        at_source = onnx.defs.get_schema(node.op_type, source).since_version
        at_target = onnx.defs.get_schema(node.op_type, target).since_version
    except onnx.defs.SchemaError:
        return None
    if not at_target < since <= at_source:
        return None
    extra = len(node.input) > 1 + len(moved) and any(node.input[1 + len(moved):])
    if node.op_type == "Slice" and extra:
        steps = site.scope.constant(node.input[4])
        if steps is None or np.any(np.asarray(steps) != 1):
            return None
    elif extra:
        return None  # Pad-18's axes: no older form
    attributes: dict[str, object] = {}
    for position, name, is_float in moved:
        if len(node.input) <= position or not node.input[position]:
            continue
        value = site.scope.constant(node.input[position])
        if value is None:
            return None
        array = np.asarray(value)
        if is_float:
            if array.size != 1 or not _held_by_float32(array):
                return None
            attributes[name] = float(array.reshape(-1)[0])
        else:
            attributes[name] = [int(v) for v in array.reshape(-1)]
    if node.op_type == "Slice" and ("starts" not in attributes or "ends" not in attributes):
        return None
    if node.op_type in ("Clip", "Pad") and not _float_data(types.get(node.input[0])):
        return None  # the older Clip and Pad are for float types
    dropped = [name for name in node.input[1:] if name]
    del node.input[1:]
    for name, written in attributes.items():
        node.attribute.append(helper.make_attribute(name, written))
    return dropped


def _held_by_float32(array: np.ndarray) -> bool:
    if array.dtype.kind != "f":
        return False
    return bool(np.all(array.astype(np.float32).astype(array.dtype) == array))


def _float_data(value_type: TypeProto | None) -> bool:
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE)
    return (value_type is not None and value_type.HasField("tensor_type")
            and value_type.tensor_type.elem_type in floats)
