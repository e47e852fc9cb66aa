"""``fold_scales``: scales computed from constants and static shapes become an initializer.

Exporters compute Upsample-9 scales with small subgraphs (PyTorch's ``size=`` export:
``Shape -> Gather -> Cast -> Div -> Concat``; tf2onnx similar). Static runtimes (TensorRT,
CoreML, ncnn) refuse such nodes although the value is known once the input shapes are.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import AttributeProto, TypeProto, helper, numpy_helper

from .._errors import UpsampleWarning
from .._spec.versions import DEFAULT_DOMAINS
from ._evaluator import Upsample
from ._feeds import check_given, check_input_shapes, graph_inputs
from ._graphs import (
    ModelLike,
    Site,
    all_names,
    is_resize10,
    is_upsample,
    model_of,
    names_read,
    node_label,
    unique_name,
    walk,
)
from ._infer import agree_with_onnx, ort_shapes, site_type_maps, warn_left_unknown

__all__ = ["ScalesNotFolded", "computed_scales", "fold_scales", "from_shapes",
           "scales_position", "static_value"]

# Operators whose value is not a function of their inputs.
_NOT_FOLDABLE = frozenset({
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
    "Bernoulli", "If", "Loop", "Scan", "SequenceMap",
})


def _static_dims(value_type: TypeProto | None) -> list[int] | None:
    if value_type is None or not value_type.HasField("tensor_type"):
        return None
    tensor = value_type.tensor_type
    if not tensor.HasField("shape"):
        return None
    dims = []
    for dim in tensor.shape.dim:
        if not dim.HasField("dim_value"):
            return None
        dims.append(int(dim.dim_value))
    return dims


def _attribute_int(node: onnx.NodeProto, name: str) -> int | None:
    for attribute in node.attribute:
        if attribute.name == name and attribute.type == AttributeProto.INT:
            return int(attribute.i)
    return None


def _shape_value(node: onnx.NodeProto, dims: list[int]) -> np.ndarray:
    if node.op_type == "Size":
        return np.array(int(np.prod(dims, dtype=np.int64)), dtype=np.int64)
    start = _attribute_int(node, "start") or 0
    end = _attribute_int(node, "end")
    return np.array(dims[start:end], dtype=np.int64)


def _size_agreed(site: Site, name: str) -> bool:
    """False where ``name`` is a Resize output whose inferred size may not be onnxruntime's:
    constant scales that are not whole numbers (onnx floors a float64 product, onnxruntime
    truncates a float32 one), or scales computed at run time."""
    producer = site.scope.producers.get(name)
    if producer is None or producer.op_type != "Resize" or producer.domain not in DEFAULT_DOMAINS:
        return True
    position = scales_position(site, producer)
    if position is None:  # sizes: the size is given
        return True
    scales = site.scope.constant(producer.input[position])
    return scales is not None and bool(np.all(np.mod(np.asarray(scales, np.float64), 1) == 0))


def _cone(site: Site, types: dict[str, TypeProto], name: str, any_shape: bool = False
          ) -> tuple[list[onnx.NodeProto], dict[str, np.ndarray], list[onnx.NodeProto]] | None:
    """The nodes computing ``name``, the constants they read and every node involved.

    None if the value is not static (it depends on a graph input's value, on a dimension
    that is not known, or on an operator that is not a function of its inputs); with
    ``any_shape``, shapes count as static whether they are known or not (the leaves are then
    not all filled in: for :func:`from_shapes` only).
    """
    graph = site.owner
    nodes: dict[int, onnx.NodeProto] = {}
    involved: list[onnx.NodeProto] = []
    leaves: dict[str, np.ndarray] = {}
    pending = [name]
    seen: set[str] = set()
    while pending:
        value = pending.pop()
        if not value or value in seen:
            continue
        seen.add(value)
        producer = site.scope.producers.get(value)
        if producer is None:
            if site.scope.is_graph_input(value):
                return None
            constant = site.scope.constant(value)
            if constant is None:
                return None
            leaves[value] = constant
            continue
        if producer.domain not in DEFAULT_DOMAINS or producer.op_type in _NOT_FOLDABLE:
            return None
        if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) or a.ref_attr_name
               for a in producer.attribute):
            return None
        if producer.op_type in ("Shape", "Size") and any_shape:
            involved.append(producer)
            continue
        if producer.op_type in ("Shape", "Size"):
            dims = _static_dims(types.get(producer.input[0])) if producer.input else None
            if dims is None or not _size_agreed(site, producer.input[0]):
                return None
            leaves[value] = _shape_value(producer, dims)
            involved.append(producer)
            continue
        nodes[id(producer)] = producer
        pending.extend(producer.input)
    order = [node for node in graph.node if id(node) in nodes]
    return order, leaves, involved + order


def _evaluate(opset_imports: Sequence[onnx.OperatorSetIdProto], nodes: list[onnx.NodeProto],
              leaves: dict[str, np.ndarray], name: str) -> np.ndarray | None:
    from onnx.reference import ReferenceEvaluator

    graph = helper.make_graph(
        nodes, "fold", [], [onnx.ValueInfoProto(name=name)],
        [numpy_helper.from_array(np.asarray(value), key) for key, value in leaves.items()])
    folded = helper.make_model(graph, opset_imports=list(opset_imports))
    try:
        (value,) = ReferenceEvaluator(folded, new_ops=[Upsample]).run(None, {})
    except Exception:
        return None
    return np.asarray(value)


def _fold_in_functions(model: onnx.ModelProto, names: set[str]) -> list[str]:
    """Fold, inside model-local functions, computed scales that depend on constants only (a
    function's input shapes vary with its calls); returns the nodes left computed."""
    left: list[str] = []
    for site in walk(model):
        function = site.function
        if function is None or site.owner is not function:
            continue
        for index, node in enumerate(list(function.node)):
            at = _computed(site, node)
            if at is None:
                continue
            scales_name = node.input[at]
            cone = _cone(site, {}, scales_name)
            value = None if cone is None else _evaluate(model.opset_import, cone[0], cone[1],
                                                        scales_name)
            label = f"function {function.domain}::{function.name}/{node.name or index}"
            if cone is None or value is None:
                left.append(label)
                continue
            new_name = unique_name(names, f"{node.name or node.output[0]}_scales")
            position = list(function.node).index(node)
            function.node.insert(position, helper.make_node(
                "Constant", [], [new_name], value=numpy_helper.from_array(value, new_name)))
            node.input[at] = new_name
            _remove_dead_in_function(function, cone[2])
    return left


def _remove_dead_in_function(function: onnx.FunctionProto,
                             nodes: list[onnx.NodeProto]) -> None:
    """Remove ``nodes`` whose outputs nothing in ``function`` reads any more (transitively)."""
    candidates = {id(node) for node in nodes}
    while True:
        used = {name for node in function.node for name in node.input} | set(function.output)
        dead = [index for index, node in enumerate(function.node)
                if id(node) in candidates and not any(o in used for o in node.output if o)]
        if not dead:
            return
        for index in reversed(dead):
            candidates.discard(id(function.node[index]))
            del function.node[index]


def _remove_dead(model: onnx.ModelProto, nodes: list[onnx.NodeProto]) -> None:
    """Remove the ``nodes`` whose outputs nothing reads any more (and so on, transitively)."""
    candidates = {id(node) for node in nodes}  # ``nodes`` keeps the wrappers (and ids) alive
    while True:
        used = names_read(model, function_outputs=False)
        removed = False
        for site in walk(model, functions=False):
            owner = site.owner
            dead = [index for index, node in enumerate(owner.node)
                    if id(node) in candidates and not any(o in used for o in node.output if o)]
            for index in reversed(dead):
                outputs = set(owner.node[index].output)
                candidates.discard(id(owner.node[index]))
                del owner.node[index]
                assert isinstance(owner, onnx.GraphProto)
                kept = [v for v in owner.value_info if v.name not in outputs]
                del owner.value_info[:]
                owner.value_info.extend(kept)
                removed = True
        if not removed:
            return


def _fix_inputs(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]]) -> None:
    """Declare each input of ``input_shapes`` (checked by ``_feeds.check_given``) with its
    static shape."""
    inputs = {value.name: value for value in model.graph.input}
    for name, dims in input_shapes.items():
        tensor = inputs[name].type.tensor_type
        tensor.ClearField("shape")
        tensor.shape.SetInParent()
        for dim in dims:
            tensor.shape.dim.add().dim_value = int(dim)


def scales_position(site: Site, node: onnx.NodeProto) -> int | None:
    """Where ``node`` reads scales that :func:`fold_scales` may fold: input 1 of an Upsample
    of the version-9/10 form and of a Resize-10, input 2 of a later Resize that gives scales
    (not sizes); None for any other node."""
    if is_upsample(node) or is_resize10(node, site.opset):
        return 1 if len(node.input) == 2 and node.input[1] else None
    if node.op_type != "Resize" or node.domain not in DEFAULT_DOMAINS:
        return None
    if len(node.input) < 3 or not node.input[2] or (len(node.input) > 3 and node.input[3]):
        return None
    return 2


def _computed(site: Site, node: onnx.NodeProto) -> int | None:
    """:func:`scales_position` where no constant holds those scales."""
    position = scales_position(site, node)
    if position is None or site.scope.constant(node.input[position]) is not None:
        return None
    return position


def computed_scales(model: onnx.ModelProto) -> int:
    """How many Upsample and Resize nodes (in any graph or function) read scales that no
    constant holds: those :func:`fold_scales` tries to fold."""
    return sum(1 for site in walk(model) for node in site.owner.node
               if _computed(site, node) is not None)


def from_shapes(site: Site, name: str) -> bool:
    """Whether the value ``name`` of ``site`` depends only on constants and on shapes (known
    or not): what :func:`fold_scales` folds once the shapes are given."""
    return _cone(site, {}, name, any_shape=True) is not None


def static_value(site: Site, types: dict[str, TypeProto], name: str) -> np.ndarray | None:
    """The value ``name`` of ``site`` where it depends only on constants and on shapes that
    ``types`` (inferred) gives statically: what :func:`fold_scales` stores as a constant;
    None elsewhere."""
    cone = _cone(site, types, name)
    if cone is None:
        return None
    imports = site.owner.opset_import if isinstance(site.owner, onnx.FunctionProto) else [
        helper.make_opsetid("", site.opset or onnx.defs.onnx_opset_version())]
    return _evaluate(list(imports), cone[0], cone[1], name)


class ScalesNotFolded(UpsampleWarning):
    """The warning of :func:`fold_scales` for the scales it left computed; ``nodes`` names
    those Upsample nodes (for tools that word the fix their own way)."""

    def __init__(self, message: str, nodes: Sequence[str]) -> None:
        super().__init__(message)
        self.nodes = list(nodes)


def fold_scales(model: ModelLike, *,
                input_shapes: Mapping[str, Sequence[int]] | None = None) -> onnx.ModelProto:
    """Store computed ``Upsample`` and ``Resize`` scales as initializers where they are static.

    For every ``Upsample`` of the version-9/10 form and every ``Resize`` that takes scales
    (main graph and subgraphs) whose scales input is computed by nodes that depend only on
    constants (initializers, ``Constant``) and
    on static input shapes (``Shape``, ``Size`` of tensors whose shape is known), the
    computation (``Shape``, ``Gather``, ``Slice``, ``Cast``, ``Div``, ``Mul``, ``Concat``,
    ``Unsqueeze``, ... any deterministic ONNX operator) is evaluated with onnx's reference
    evaluator and the node reads the result from a new float32 initializer; nodes that then
    compute nothing used are removed. Shapes come from :func:`infer_shapes`, so the size of
    an Upsample output is onnxruntime's. Inside model-local functions, scales computed from
    constants only become a ``Constant`` node (a function's input shapes depend on its calls).
    Scales left computed are named in an :class:`~onnx_upsample.UpsampleWarning`.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of its .onnx file (read safely: external data must lie in
        its folder; tensors over 1 MiB stay on disk); it is not modified.
    input_shapes : mapping of str to sequence of int, optional
        Fixed shapes for graph inputs with symbolic dimensions. The returned model declares
        these shapes where it folded scales of the main graph or its subgraphs, since those
        hold for them only; where it folded none, its inputs stay as declared.

    Returns
    -------
    onnx.ModelProto
        A new model. Scales that depend on a graph input's value or on a dimension that is
        not static are left as they are (``check`` reports them).

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``, or ``input_shapes`` not a mapping of
        names to sequences of ints.
    UpsampleError
        For ``input_shapes`` that name no input, have sizes below 0, another rank or another
        static size than declared, or if shape inference fails.

    Notes
    -----
    Upsample versions 9 and 10 (versions 1 and 7 have constant scales by construction);
    Resize versions 10 and later with a scales input (a Resize given sizes is left as it is).
    A ``Shape`` or ``Size`` of a Resize output counts as static only where the Resize's
    constant scales are whole numbers (or it is given sizes): elsewhere onnx's inferred size
    (``floor`` of a float64 product) may not be onnxruntime's (``trunc`` of a float32 one).
    The shape of an Upsample output is its real one (5 x 1.4 gives 7). onnxruntime 1.32 with
    its default graph optimizations folds ``Shape`` of such an output into onnx's inferred
    size (6) instead, so where a scales computation reads the shape of an Upsample output
    whose size onnx infers differently, the original model's results under onnxruntime's
    default optimizations differ from its results without them; the folded model gives the
    latter.
    """
    model = model_of(model)
    shapes = check_input_shapes(input_shapes)
    check_given(graph_inputs(model), {}, shapes)
    work = onnx.ModelProto()
    work.CopyFrom(model)
    if shapes:
        _fix_inputs(work, shapes)
    inferred = ort_shapes(work)
    maps = [types for site, types in site_type_maps(inferred) if site.function is None]
    names = all_names(work)
    folded_nodes: list[onnx.NodeProto] = []
    folded = 0
    not_folded: list[str] = []
    for site, types in zip(walk(work, functions=False), maps, strict=True):
        owner = site.owner
        assert isinstance(owner, onnx.GraphProto)
        for index, node in enumerate(owner.node):
            at = _computed(site, node)
            if at is None:
                continue
            scales_name = node.input[at]
            cone = _cone(site, types, scales_name)
            value = None if cone is None else _evaluate(work.opset_import, cone[0], cone[1],
                                                        scales_name)
            if cone is None or value is None:
                not_folded.append(node_label(site, node, index))
                continue
            involved = cone[2]
            new_name = unique_name(names, f"{node.name or node.output[0]}_scales")
            owner.initializer.append(numpy_helper.from_array(value, new_name))
            node.input[at] = new_name
            folded_nodes.extend(involved)
            folded += 1
    if shapes and not folded:
        # the shapes were given to fold scales with; none folded, none to hold for them
        del work.graph.input[:]
        work.graph.input.extend(model.graph.input)
    _remove_dead(work, folded_nodes)
    not_folded += _fold_in_functions(work, names)
    if not_folded:
        # never silently: say which scales stay computed, and what would fold them
        warnings.warn(ScalesNotFolded(
            f"fold_scales left the computed scales of {len(not_folded)} node(s) "
            f"{not_folded}: they depend on values known only at run time (data, or input "
            "dimensions that are symbolic); pass input_shapes={name: [d0, d1, ...]} if they "
            "come from input shapes", not_folded), stacklevel=2)
    warn_left_unknown(agree_with_onnx(work), "the model fold_scales returns", stacklevel=2)
    return work
