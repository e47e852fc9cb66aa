"""Shape inference with onnxruntime's size rule for ``Upsample``.

The rule is docs/semantics.md §2's; docs/peers.md §1 measures onnx's own, which differs.

onnx (1.22 and later) infers ``floor(double(dim) * double(scale))``, while onnxruntime computes
``trunc(float(dim) * float(scale))``: 5 x 1.4 is 6 for onnx and 7 for ORT, and the wrong value
then spreads downstream. :func:`infer_shapes` hides every ``Upsample`` from onnx's inference
(it becomes a node of a private domain, which onnx skips), writes the output type computed with
:func:`onnx_upsample.output_shape`, and lets onnx infer the rest; it repeats until no Upsample
output changes, so chains of Upsample nodes are inferred too.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import TypeProto, helper

from .._api import output_shape
from .._errors import UpsampleError, UpsampleWarning
from .._spec.rules import output_size
from .._spec.versions import DEFAULT_DOMAINS
from ._fixes import Action, Fix, FixableError
from ._graphs import ModelLike, Site, is_upsample, model_of, walk
from ._node import describe, shrinks

__all__ = ["SURROGATE_DOMAIN", "agree_with_onnx", "infer_literal_shapes", "infer_shapes",
           "ort_shapes", "output_type", "type_map", "warn_left_unknown"]

SURROGATE_DOMAIN = "onnx_upsample.surrogate"


def type_map(site: Site, parent: dict[str, TypeProto] | None = None) -> dict[str, TypeProto]:
    """Every type known in a graph: inputs, initializers, value_info, outputs (and parent's)."""
    types: dict[str, TypeProto] = dict(parent or {})
    owner = site.owner
    if not isinstance(owner, onnx.GraphProto):
        for value in owner.value_info:
            types[value.name] = value.type
        return types
    for tensor in owner.initializer:
        types[tensor.name] = helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
    for value in [*owner.input, *owner.value_info, *owner.output]:
        if value.HasField("type"):
            types[value.name] = value.type
    return types


def site_type_maps(model: onnx.ModelProto) -> list[tuple[Site, dict[str, TypeProto]]]:
    """Each site of ``model`` (graphs and functions) with the types visible in it."""
    maps: dict[int, dict[str, TypeProto]] = {}
    result = []
    for site in walk(model):
        parent_map = None
        if site.scope.parent is not None:
            parent_map = maps.get(id(site.scope.parent))
        types = type_map(site, parent_map)
        maps[id(site.scope)] = types
        result.append((site, types))
    return result


def rank_of(value_type: TypeProto | None) -> int | None:
    """The rank of a tensor type, or None where unknown."""
    if value_type is None or not value_type.HasField("tensor_type"):
        return None
    if not value_type.tensor_type.HasField("shape"):
        return None
    return len(value_type.tensor_type.shape.dim)


def output_type(x_type: TypeProto | None, scales: object, rank_ok: bool = True,
                downscale: bool = False) -> TypeProto:
    """The type of Upsample's Y for X of type ``x_type`` and constant ``scales`` (or None).

    The element type is X's; a dimension is known where X's is and the scale is constant
    (``trunc(f32(n) * f32(s))``), kept symbolic where the scale is 1, and 0 where X's is 0.
    With ``downscale``, a scale that shrinks gives the size of the Resize it literally means
    (onnxruntime's Resize computes it by the same rule); else that dimension is unknown.
    """
    result = TypeProto()
    if x_type is None or not x_type.HasField("tensor_type"):
        return result
    x_tensor = x_type.tensor_type
    result.tensor_type.elem_type = x_tensor.elem_type
    if not x_tensor.HasField("shape") or not rank_ok:
        return result
    dims = list(x_tensor.shape.dim)
    values = None if scales is None else [float(s) for s in scales]  # type: ignore[attr-defined]
    if values is not None and len(values) != len(dims):
        return result
    shape = result.tensor_type.shape
    shape.SetInParent()  # a rank-0 Y has a shape too: the empty one
    for axis, dim in enumerate(dims):
        new = shape.dim.add()
        if dim.HasField("dim_value"):
            if dim.dim_value == 0:
                new.dim_value = 0
            elif values is not None:
                try:
                    new.dim_value = (
                        output_size(int(dim.dim_value), np.float32(values[axis]))
                        if downscale and shrinks(values[axis])
                        else output_shape([int(dim.dim_value)], [values[axis]])[0])
                except (UpsampleError, TypeError):
                    shape.dim.pop()
                    shape.dim.add()
        elif dim.HasField("dim_param") and values is not None and values[axis] == 1.0:
            new.dim_param = dim.dim_param
    return result


def _infer_through_functions(model: onnx.ModelProto, downscale: bool) -> onnx.ModelProto:
    """infer_shapes for a model whose local functions hold Upsample nodes: onnx infers a
    function's body with its own size rule, so the shapes come from the model with its
    functions inlined (call outputs keep their names there) and are written back into the
    main graph of the model as it is."""
    from onnx.inliner import inline_local_functions

    try:
        inlined = inline_local_functions(model)
    except Exception:  # functions onnx cannot inline (another opset...): as graphs only
        return _infer_graphs(model, downscale)
    typed = _infer_graphs(inlined, downscale)
    result = onnx.ModelProto()
    result.CopyFrom(model)
    graph = result.graph
    types = {value.name: value.type for value in [*typed.graph.value_info,
                                                  *typed.graph.output]}
    produced = {name for node in graph.node for name in node.output if name}
    outputs = {value.name for value in graph.output}
    del graph.value_info[:]
    for name in sorted(produced - outputs):
        if name in types:
            graph.value_info.append(helper.make_value_info(name, types[name]))
    for value in graph.output:
        if value.name in types:
            value.type.CopyFrom(types[value.name])
    return result


def _set_type(owner: onnx.GraphProto, name: str, value_type: TypeProto) -> None:
    """Write ``value_type`` for ``name``: on the graph output if it is one, else value_info."""
    for value in owner.output:
        if value.name == name:
            value.type.CopyFrom(value_type)
            return
    for value in owner.value_info:
        if value.name == name:
            value.type.CopyFrom(value_type)
            return
    owner.value_info.append(helper.make_value_info(name, value_type))


def _resize_scales(site: Site, node: onnx.NodeProto) -> list[float] | None:
    """The constant scales of a Resize that gives scales for every axis (no sizes, no axes
    attribute); None for any other node. onnxruntime sizes its output as an Upsample's,
    ``trunc(f32(n) * f32(s))``, where onnx floors a float64 product."""
    if node.op_type != "Resize" or not node.input:  # (hidden: in the surrogate domain)
        return None
    position = 1 if (site.opset or 0) <= 10 else 2
    if (len(node.input) <= position or not node.input[position]
            or (len(node.input) > 3 and node.input[3])
            or any(attribute.name == "axes" for attribute in node.attribute)):
        return None
    scales = site.scope.constant(node.input[position])
    if scales is None or np.asarray(scales).dtype.kind != "f" or not np.asarray(scales).size:
        return None
    return [float(v) for v in np.asarray(scales).reshape(-1)]


def _resize_type(x_type: TypeProto | None, scales: list[float]) -> TypeProto:
    """The type of the output of a Resize with constant ``scales`` on X of ``x_type``."""
    result = TypeProto()
    if x_type is None or not x_type.HasField("tensor_type"):
        return result
    result.tensor_type.elem_type = x_type.tensor_type.elem_type
    dims = list(x_type.tensor_type.shape.dim) if x_type.tensor_type.HasField("shape") else None
    if dims is None or len(dims) != len(scales):
        return result
    shape = result.tensor_type.shape
    shape.SetInParent()
    for dim, scale in zip(dims, scales, strict=True):
        new = shape.dim.add()
        if dim.HasField("dim_value") and np.isfinite(scale) and scale > 0:
            new.dim_value = output_size(int(dim.dim_value), np.float32(scale))
        elif dim.HasField("dim_param") and scale == 1.0:
            new.dim_param = dim.dim_param
    return result


def _hide_upsamples(model: onnx.ModelProto) -> dict[tuple[int, int], str]:
    """Move every Upsample of every graph, and every Resize with constant scales, into the
    surrogate domain; return the old domains."""
    hidden = {}
    for number, site in enumerate(walk(model, functions=False)):
        for index, node in enumerate(site.owner.node):
            if is_upsample(node) or (node.domain in DEFAULT_DOMAINS
                                     and _resize_scales(site, node) is not None):
                hidden[(number, index)] = node.domain
                node.domain = SURROGATE_DOMAIN
    if hidden:
        model.opset_import.append(helper.make_opsetid(SURROGATE_DOMAIN, 1))
    return hidden


def _restore_upsamples(model: onnx.ModelProto, hidden: dict[tuple[int, int], str]) -> None:
    for number, site in enumerate(walk(model, functions=False)):
        for index, node in enumerate(site.owner.node):
            if (number, index) in hidden and node.domain == SURROGATE_DOMAIN:
                node.domain = hidden[(number, index)]
    keep = [entry for entry in model.opset_import if entry.domain != SURROGATE_DOMAIN]
    del model.opset_import[:]
    model.opset_import.extend(keep)


def _upsample_types(model: onnx.ModelProto, hidden: dict[tuple[int, int], str],
                    downscale: bool) -> dict[tuple[int, str], TypeProto]:
    """The output type of every hidden Upsample and Resize, from the types inferred so far."""
    found: dict[tuple[int, str], TypeProto] = {}
    for number, (site, types) in enumerate(site_type_maps_graphs(model)):
        for index, node in enumerate(site.owner.node):
            if (number, index) not in hidden or not node.output or not node.input:
                continue
            x_type = types.get(node.input[0])
            if node.op_type == "Resize":
                resize_scales = _resize_scales(site, node)
                assert resize_scales is not None
                found[(number, node.output[0])] = _resize_type(x_type, resize_scales)
                continue
            info = describe(node, node.name, site.opset, site.scope, rank_of(x_type),
                            allow_downscale=downscale)
            scales = None if info.blocking else info.scales
            rank_ok = not info.blocking and info.schema.rank in (None, rank_of(x_type))
            found[(number, node.output[0])] = output_type(x_type, scales, rank_ok, downscale)
    return found


def site_type_maps_graphs(model: onnx.ModelProto) -> list[tuple[Site, dict[str, TypeProto]]]:
    """:func:`site_type_maps` for the graphs only (no functions), in :func:`walk` order."""
    return [(site, types) for site, types in site_type_maps(model) if site.function is None]


def ort_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Every value's type with onnxruntime's sizes (:func:`infer_shapes` without the step
    that keeps a file valid for onnx): the types the model tools read, never written to a
    file as they are, since onnx's full check rejects a declaration of a size onnx's own
    rule does not give."""
    if any(is_upsample(node) for function in model.functions for node in function.node):
        return _infer_through_functions(model, downscale=False)
    return _infer_graphs(model, downscale=False)


def agree_with_onnx(model: onnx.ModelProto) -> list[str]:
    """Leave unknown, in place, every declared dimension (``value_info`` and graph outputs,
    main graph and subgraphs) to which onnx's own shape inference gives another size.

    onnx infers ``floor(float64(n) * float64(s))`` for Upsample and Resize where onnxruntime
    computes ``trunc(float32(n) * float32(s))`` (20 x 2.3: 45 and 46), and a model declaring
    either size somewhere fails: onnx's full check rejects onnxruntime's ("Inferred shape and
    existing shape differ"), onnxruntime warns at every load ("Error merging shape info") and
    its run gives the other. A dimension left unknown is what both accept. Returns one line
    per dimension left unknown, with both sizes.
    """
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    for site in walk(bare, functions=False):
        graph = site.owner
        assert isinstance(graph, onnx.GraphProto)
        del graph.value_info[:]
        for value in graph.output:
            if value.type.HasField("tensor_type"):
                value.type.tensor_type.ClearField("shape")
    theirs: list[list[dict[str, TypeProto]]] = []
    for data_prop in (False, True):  # onnxruntime propagates shape values as well
        try:
            inferred = onnx.shape_inference.infer_shapes(bare, data_prop=data_prop)
        except Exception:  # what onnx cannot infer, it cannot contradict either
            continue
        theirs.append([{value.name: value.type
                        for value in [*site.owner.value_info, *site.owner.output]}
                       for site in walk(inferred, functions=False)
                       if isinstance(site.owner, onnx.GraphProto)])
    left: list[str] = []
    for number, site in enumerate(walk(model, functions=False)):
        graph = site.owner
        assert isinstance(graph, onnx.GraphProto)
        for value in [*graph.value_info, *graph.output]:
            if (not value.type.HasField("tensor_type")
                    or not value.type.tensor_type.HasField("shape")):
                continue
            dims = value.type.tensor_type.shape.dim
            for maps in theirs:
                other = maps[number].get(value.name) if number < len(maps) else None
                if other is None or rank_of(other) != len(dims):
                    continue
                for axis, (mine, onnx_dim) in enumerate(
                        zip(dims, other.tensor_type.shape.dim, strict=True)):
                    if (mine.HasField("dim_value") and onnx_dim.HasField("dim_value")
                            and mine.dim_value != onnx_dim.dim_value):
                        left.append(f"{value.name!r} axis {axis} (onnxruntime {mine.dim_value}, "
                                    f"onnx {onnx_dim.dim_value})")
                        mine.Clear()
    return left


def warn_left_unknown(left: list[str], what: str, stacklevel: int) -> None:
    """Say which dimensions :func:`agree_with_onnx` left unknown in the model ``what``
    writes."""
    if left:
        warnings.warn(
            f"{what} declares {len(left)} dimension(s) unknown where onnx's shape inference "
            f"(float64) and onnxruntime (float32) give different sizes: {'; '.join(left)}; "
            "declaring onnxruntime's size there fails onnx's full check and makes onnxruntime "
            "warn at every load ('Error merging shape info'), and onnx's is not the size "
            "onnxruntime computes",
            UpsampleWarning, stacklevel=stacklevel + 1)


def infer_shapes(model: ModelLike) -> onnx.ModelProto:
    """Infer types and shapes, with onnxruntime's size rule for every ``Upsample``.

    Fills the output type and shape of every ``Upsample`` node (versions 1, 7, 9, 10, in the
    main graph, in subgraphs and, through their calls, in model-local functions) with the size
    rule of docs/semantics.md,
    ``trunc(f32(n) * f32(s))`` as onnxruntime 1.32 computes it, and leaves every other node to
    :func:`onnx.shape_inference.infer_shapes`, which then sees the right shapes downstream.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of its .onnx file (read safely: external data must lie in
        its folder; tensors over 1 MiB stay on disk).
        Any model; it is not modified.

    Returns
    -------
    onnx.ModelProto
        A new model with inferred ``value_info`` (and output types). A declared shape of an
        Upsample output that disagrees with the size rule is replaced by the right one.
        Where the scales are computed at run time only the element type and rank are known
        (dimensions of length 0 stay 0; a symbolic dimension with scale 1 is kept). Where
        onnx's own rule gives another size (5 x 1.4: 6 where onnxruntime makes 7), that
        dimension is unknown, with an :class:`~onnx_upsample.UpsampleWarning` giving both:
        ``onnx.checker.check_model(full_check=True)`` rejects a model that declares
        onnxruntime's size there, and onnxruntime warns at every load.

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.
    UpsampleError
        If onnx's own shape inference fails on the rest of the model.

    Notes
    -----
    onnx's float64 rule (onnx >= 1.22) gives a different size for about half of the scales
    of the form ``float32(out / in)`` (docs/peers.md §1); downstream of such a dimension,
    onnx's sizes and onnxruntime's differ too, and are left unknown the same way. The
    returned model passes ``onnx.checker.check_model(full_check=True)`` wherever the
    original's nodes do. Model-local functions are left to onnx.

    Examples
    --------
    >>> import warnings
    >>> from onnx import TensorProto, helper
    >>> x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 5, 10])
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    >>> node = helper.make_node("Upsample", ["X"], ["Y"], scales=[1, 1, 1.5, 1.3])
    >>> graph = helper.make_graph([node], "g", [x], [y])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    >>> with warnings.catch_warnings(record=True) as said:
    ...     warnings.simplefilter("always")
    ...     inferred = infer_shapes(model)
    >>> [d.dim_value if d.HasField("dim_value") else "?"
    ...  for d in inferred.graph.output[0].type.tensor_type.shape.dim]
    [1, 1, 7, '?']
    >>> print(str(said[0].message).split(": ")[1].split(";")[0])
    'Y' axis 3 (onnxruntime 13, onnx 12)
    """
    result = ort_shapes(model_of(model))
    warn_left_unknown(agree_with_onnx(result), "the model infer_shapes returns", stacklevel=2)
    return result


def infer_literal_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """:func:`infer_shapes`, where an Upsample whose constant scales shrink (which Upsample
    refuses) has the output of the Resize it literally means, as
    ``upgrade(allow_downscale=True)`` writes it: for the declarations of a converted model."""
    if any(is_upsample(node) for function in model.functions for node in function.node):
        return _infer_through_functions(model, downscale=True)
    return _infer_graphs(model, downscale=True)


def _infer_graphs(model: onnx.ModelProto, downscale: bool) -> onnx.ModelProto:
    """infer_shapes for the main graph and its subgraphs (onnx's rule inside functions)."""
    work = onnx.ModelProto()
    work.CopyFrom(model)
    hidden = _hide_upsamples(work)
    known: dict[tuple[int, str], TypeProto] = {}
    inferred = work
    for _ in range(len(hidden) + 1):
        try:
            inferred = onnx.shape_inference.infer_shapes(work, strict_mode=False)
        except Exception as error:
            raise FixableError(
                f"onnx's shape inference failed on the model: {error}",
                Fix("fix the model (see {0}) and retry", (Action("check"),))) from None
        found = _upsample_types(inferred, hidden, downscale)
        if found == known:
            break
        known = found
        graphs = [site.owner for site in walk(work, functions=False)]
        for (number, name), value_type in known.items():
            owner = graphs[number]
            assert isinstance(owner, onnx.GraphProto)
            _set_type(owner, name, value_type)
    result = inferred
    graphs = [site.owner for site in walk(result, functions=False)]
    for (number, name), value_type in known.items():
        owner = graphs[number]
        assert isinstance(owner, onnx.GraphProto)
        _set_type(owner, name, value_type)
    _restore_upsamples(result, hidden)
    return result

