"""What a converted model keeps of its original: metadata, the declarations of the main
graph, and (from IR 3) which initializers are really inputs.

onnx's version converter rewrites the graph's declarations (it adds types inferred from one
branch of an If, for example); the converted model declares what the original declared,
except where the original's declaration of an output is wrong: a rank or a size that
contradicts the Upsample computing it (OpenVINO's test models declare a rank-4 output
``shape { }``), which onnx's full check rejects. That declaration is replaced by the
inferred one, with a warning.
"""

from __future__ import annotations

import warnings

import onnx
from onnx import TypeProto, helper

from ..._errors import UpsampleError, UpsampleWarning
from .._graphs import is_upsample
from .._infer import agree_with_onnx, infer_literal_shapes, warn_left_unknown

__all__ = ["restore_declarations"]


def _has_shape(value_type: TypeProto | None) -> bool:
    """Whether a declaration says enough for onnx's checker: a tensor's shape, or a type of
    another kind (a sequence, a map); an output declared with no type at all does not."""
    if value_type is None or value_type.WhichOneof("value") is None:
        return False
    if not value_type.HasField("tensor_type"):
        return True
    return value_type.tensor_type.HasField("shape")


def _dims(value_type: TypeProto) -> list[int | str] | None:
    if not value_type.HasField("tensor_type") or not value_type.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or "?"
            for d in value_type.tensor_type.shape.dim]


def _shown(value_type: TypeProto) -> str:
    dims = _dims(value_type)
    return "(none)" if dims is None else f"[{', '.join(map(str, dims))}]"


def _contradicts(declared: TypeProto, inferred: TypeProto) -> bool:
    """Whether a declared shape contradicts the inferred one: another rank, or another size
    where both say a number."""
    mine, right = _dims(declared), _dims(inferred)
    if mine is None or right is None:
        return False
    return len(mine) != len(right) or any(
        isinstance(a, int) and isinstance(b, int) and a != b
        for a, b in zip(mine, right, strict=True))


def _fed_at_run_time(value: onnx.ValueInfoProto, tensor: onnx.TensorProto) -> bool:
    """Whether graph input ``value`` declares that a run may feed it: a dimension that is
    symbolic, unknown or other than its initializer's (a constant has one shape only). No
    declared shape says nothing either way: the input is taken for the constant IR 3 meant."""
    if not value.type.HasField("tensor_type") or not value.type.tensor_type.HasField("shape"):
        return False
    dims = value.type.tensor_type.shape.dim
    return len(dims) != len(tensor.dims) or any(
        not dim.HasField("dim_value") or dim.dim_value != size
        for dim, size in zip(dims, tensor.dims, strict=True))


def _unlist_ir3_initializers(result: onnx.GraphProto, original: onnx.GraphProto) -> None:
    """Drop from ``result``'s inputs the initializers IR 3 made the original list there.

    IR 3 required every initializer to be a graph input too, and runtimes read the pair as a
    constant; from IR 4 on the pair means an input with a default that a run may override,
    so onnxruntime stops treating it as a constant (no constant folding, other kernels;
    "Initializer ... appears in graph inputs and will not be treated as constant"). An input
    whose declaration shows it is fed (a shape the initializer does not have) stays.
    """
    tensors = {tensor.name: tensor for tensor in original.initializer}
    listed = {value.name for value in original.input if value.name in tensors
              and not _fed_at_run_time(value, tensors[value.name])}
    kept = [value for value in result.input if value.name not in listed]
    if len(kept) != len(result.input):
        del result.input[:]
        result.input.extend(kept)


def restore_declarations(result: onnx.ModelProto, original: onnx.ModelProto,
                         target: int) -> None:
    """Give ``result`` the metadata, IR version and main-graph declarations of ``original``."""
    for name in ("producer_name", "producer_version", "domain", "model_version", "doc_string"):
        setattr(result, name, getattr(original, name))
    del result.metadata_props[:]
    result.metadata_props.extend(original.metadata_props)
    result.graph.name = original.graph.name
    result.graph.doc_string = original.graph.doc_string
    minimum = helper.find_min_ir_version_for([helper.make_opsetid("", target)])
    result.ir_version = max(original.ir_version, minimum)
    if original.ir_version < 4 <= result.ir_version:
        _unlist_ir3_initializers(result.graph, original.graph)
    # Keep the declarations of the main graph as they were: the converter adds inferred
    # types (from one branch of an If, for example) that the original did not claim.
    # onnx's checker wants a shape on every graph output: where the original declares none,
    # write the one inferred with onnxruntime's Upsample size rule (after an Upsample that
    # shrinks, which only upgrade(allow_downscale=True) lets through, the Resize it became).
    # Where the original declares an Upsample's output with a rank or size it does not have,
    # write the inferred one, and say so.
    declared = {value.name: value for value in original.graph.output}
    upsampled = {node.output[0] for node in original.graph.node
                 if is_upsample(node) and node.output and node.output[0] in declared}
    inferred: dict[str, TypeProto] = {}
    if upsampled or any(not _has_shape(value.type) for value in declared.values()):
        try:
            inferred = {value.name: value.type
                        for value in infer_literal_shapes(original).graph.output}
        except UpsampleError:
            inferred = {}
    for value in result.graph.output:
        if value.name not in declared:
            continue
        value.CopyFrom(declared[value.name])
        right = inferred.get(value.name)
        if not _has_shape(value.type) and _has_shape(right):
            assert right is not None
            value.type.CopyFrom(right)
        elif value.name in upsampled and right is not None and _contradicts(value.type, right):
            # stacklevel 3: past finish_job, to the line of upgrade() or downgrade()
            warnings.warn(
                f"output {value.name!r} is declared with shape {_shown(value.type)}, but the "
                f"Upsample computing it gives shape {_shown(right)} (onnx's full check rejects "
                f"the declaration): the converted model declares {_shown(right)}",
                UpsampleWarning, stacklevel=3)
            value.type.CopyFrom(right)
    originals = {value.name for value in original.graph.value_info}
    kept = [value for value in result.graph.value_info if value.name in originals]
    del result.graph.value_info[:]
    result.graph.value_info.extend(kept)
    # onnxruntime's sizes where onnx's own rule gives others would fail onnx's full check
    warn_left_unknown(agree_with_onnx(result), "the converted model", stacklevel=3)
