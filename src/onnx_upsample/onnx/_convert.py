"""``upgrade`` (Upsample -> Resize) and ``downgrade`` (Resize -> Upsample), outputs unchanged.

Both work the same way. Every node whose meaning onnx's version converter would change (or
cannot carry) is first replaced by a *pending* node of a private domain, which the converter
leaves alone; the converter then brings every other node to the target opset (the main graph
and its subgraphs; model-local functions one by one, since the converter drops them); last,
each pending node becomes the target node. The converter's 10->11 Resize adapter would give
an Upsample-equivalent Resize the new defaults (``half_pixel``, ``round_prefer_floor``) and
change its results (docs/peers.md §6); nodes written here carry ``coordinate_transformation_mode =
"asymmetric"`` and ``nearest_mode = "floor"`` instead, which onnxruntime runs bit-identically.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TypeProto, helper, numpy_helper, version_converter

from .._errors import UpsampleError, UpsampleWarning
from ._external import without_data
from ._graphs import (
    ModelLike,
    Site,
    all_names,
    default_opset,
    is_upsample,
    model_of,
    names_read,
    node_label,
    unique_name,
    walk,
)
from ._infer import infer_shapes, rank_of, site_type_maps
from ._node import UpsampleNode, case_variant, describe
from ._versions import DEFAULT_DOMAINS

__all__ = ["DEFAULT_UPGRADE_OPSET", "downgrade", "newest_opset", "upgrade"]

PENDING_DOMAIN = "onnx_upsample.pending"
# Nodes whose schema at the target opset is the same as at the source (only element types
# differ), which downgrade() moves down unchanged because onnx has no down adapter for them.
COMPATIBLE_DOMAIN = "onnx_upsample.compatible"
_PRIVATE_DOMAINS = (PENDING_DOMAIN, COMPATIBLE_DOMAIN)
_RESIZE_SINCE = (10, 11, 13, 18, 19)


def newest_opset() -> int:
    """The newest default-domain opset the installed onnx knows."""
    return int(onnx.defs.onnx_opset_version())





def _require_opset(opset: object, low: int, high: int, what: str) -> int:
    if isinstance(opset, bool) or not isinstance(opset, int | np.integer):
        raise TypeError(f"opset is {opset!r}; expected an integer from {low} to {high}")
    if not low <= int(opset) <= high:
        raise UpsampleError(f"opset is {opset}; {what}")
    return int(opset)


@dataclass
class _Job:
    """The state of one conversion: the working copy, names in use, deferred insertions."""

    model: onnx.ModelProto
    names: set[str]
    types: list[dict[str, TypeProto]]
    inserts: dict[int, list[onnx.NodeProto]] = field(default_factory=dict)
    owners: dict[int, onnx.GraphProto | onnx.FunctionProto] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    orphans: set[str] = field(default_factory=set)

    def add_constant(self, site: Site, base: str, array: np.ndarray) -> str:
        """A new constant visible to ``site``: an initializer, or a Constant node in a function."""
        name = unique_name(self.names, base)
        tensor = numpy_helper.from_array(array, name)
        owner = site.owner
        if isinstance(owner, onnx.GraphProto):
            owner.initializer.append(tensor)
        else:
            node = helper.make_node("Constant", [], [name], value=tensor,
                                    name=unique_name(self.names, f"{base}_constant"))
            key = id(owner)
            if key not in self.owners:
                self.owners[key] = owner
                self.order.append(key)
            self.inserts.setdefault(key, []).append(node)
        return name

    def flush(self) -> None:
        """Put the deferred Constant nodes first in their functions (deepest owners first)."""
        for key in reversed(self.order):
            owner = self.owners[key]
            for position, node in enumerate(self.inserts[key]):
                owner.node.insert(position, node)
        self.inserts.clear()
        self.owners.clear()
        self.order.clear()


def _start(model: onnx.ModelProto) -> _Job:
    """Copy ``model`` and collect the type of every value (for ranks) and every name."""
    work = onnx.ModelProto()
    work.CopyFrom(model)
    try:
        typed = infer_shapes(model)
    except UpsampleError:
        typed = model
    types = [types for _, types in site_type_maps(typed)]
    return _Job(work, all_names(work), types)


def _attribute(node: onnx.NodeProto, name: str, default: object) -> object:
    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _text(value: object) -> object:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _set_pending(node: onnx.NodeProto, op_type: str, inputs: list[str],
                 attributes: dict[str, object]) -> None:
    """Turn ``node`` into a pending node in place (name, outputs and doc string kept)."""
    node.op_type = op_type
    node.domain = PENDING_DOMAIN
    del node.input[:]
    node.input.extend(inputs)
    del node.attribute[:]
    for key, value in attributes.items():
        node.attribute.append(helper.make_attribute(key, value))


def _each_node(job: _Job, visit: Callable[[Site, int, onnx.NodeProto,
                                             dict[str, TypeProto]], None]) -> None:
    sites = list(walk(job.model))
    for site, types in zip(sites, job.types, strict=True):
        for index, node in enumerate(site.owner.node):
            visit(site, index, node, types)


def _upsample_info(site: Site, index: int, node: onnx.NodeProto,
                   types: dict[str, TypeProto], doing: str) -> UpsampleNode:
    x_type = types.get(node.input[0]) if node.input else None
    info = describe(node, node_label(site, node, index), site.opset, site.scope,
                    rank_of(x_type))
    info.raise_if_blocked(doing)
    if info.mode_name in ("bilinear", "trilinear") and info.form != 1:
        warnings.warn(f"Upsample node {info.label!r}: mode {info.mode_name!r} is a legacy name "
                      "of 'linear'; the converted node says 'linear'", UpsampleWarning,
                      stacklevel=4)
    return info


def _scales_input(job: _Job, site: Site, info: UpsampleNode) -> str:
    """The name of a tensor holding the node's scales (a new constant for attribute forms)."""
    if info.form == 9:
        assert info.scales_input is not None
        return info.scales_input
    assert info.scales is not None
    base = f"{info.node.name or info.node.output[0]}_scales"
    return job.add_constant(site, base, info.scales.astype(np.float32))


# ---------------------------------------------------------------------------- conversion


def _convert_rest(job: _Job, source: int, target: int) -> onnx.ModelProto:
    """Bring everything but the pending nodes to ``target`` (functions one by one)."""
    model = job.model
    _add_pending_domain(model)
    # Under IR 3 every initializer must also be a graph input, so the scales initializers
    # this conversion adds would be undefined to onnx's converter: the model takes the IR
    # version it will have in the end (max of its own and the target opset's minimum) now.
    minimum = helper.find_min_ir_version_for([helper.make_opsetid("", target)])
    if model.ir_version < 4 <= minimum:
        model.ir_version = minimum
    functions = list(model.functions)
    del model.functions[:]
    types = {name: value for site_types in job.types for name, value in site_types.items()}
    converted = _convert_model(model, source, target, types, "the model")
    converted_functions = [_convert_function(function, target, source, types)
                           for function in functions]
    del converted.functions[:]
    converted.functions.extend(converted_functions)
    return converted


def _run_converter(model: onnx.ModelProto, source: int, target: int, what: str) -> onnx.ModelProto:
    try:
        return version_converter.convert_version(model, target)
    except Exception as error:
        raise UpsampleError(_converter_message(model, source, target, error, what)) from None


def _convert_model(model: onnx.ModelProto, source: int, target: int,
                   types: dict[str, TypeProto], what: str) -> onnx.ModelProto:
    """onnx's version converter, one opset at a time downwards.

    onnx has few down adapters: going from opset 13 to 9 fails on a Relu ("No Adapter To
    Version $12 for Relu") although Relu-13 and Relu-6 differ only in element types. Going
    down, each step moves such nodes (same inputs, outputs and attributes at both versions)
    unchanged and leaves the others to the converter.
    """
    if source == target:
        return model
    if source < target:
        return _run_converter(model, source, target, what)
    current = model
    for version in range(source, target, -1):

        for site in walk(current, functions=False):
            for index, node in enumerate(site.owner.node):
                _bridge_compatible(site, index, node, types, version, version - 1)
        converted = _run_converter(current, version, version - 1,
                                   f"{what} (on its way from opset {source} to {target})")
        for site in walk(converted, functions=False):
            for node in site.owner.node:
                if node.domain == COMPATIBLE_DOMAIN:
                    node.domain = ""
        current = converted
    return current


def _add_pending_domain(model: onnx.ModelProto) -> None:
    for owner in [model, *model.functions]:
        for domain in _PRIVATE_DOMAINS:
            if all(entry.domain != domain for entry in owner.opset_import):
                owner.opset_import.append(helper.make_opsetid(domain, 1))


def _convert_function(function: onnx.FunctionProto, target: int, model_opset: int,
                      types: dict[str, TypeProto]) -> onnx.FunctionProto:
    """A model-local function with its default-domain nodes brought to ``target``."""
    result = onnx.FunctionProto()
    result.CopyFrom(function)
    source = default_opset(function.opset_import)
    if source is None:
        if not any(node.domain in DEFAULT_DOMAINS for node in function.node):
            return result
        source = model_opset
    if source != target:
        graph = helper.make_graph(
            list(function.node), f"{function.domain}::{function.name}",
            [onnx.ValueInfoProto(name=name) for name in function.input],
            [onnx.ValueInfoProto(name=name) for name in function.output])
        imports = [entry for entry in function.opset_import if entry.domain not in DEFAULT_DOMAINS]
        wrapper = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", source), *imports])
        converted = _convert_model(wrapper, source, target, types,
                                   f"function {function.domain}::{function.name}")
        del result.node[:]
        result.node.extend(converted.graph.node)
    imports = [entry for entry in result.opset_import if entry.domain not in DEFAULT_DOMAINS]
    del result.opset_import[:]
    result.opset_import.extend([helper.make_opsetid("", target), *imports])
    return result


def _converter_message(model: onnx.ModelProto, source: int, target: int,
                       error: Exception, what: str = "the model") -> str:
    """Say which nodes onnx's converter could not bring to ``target``, and why."""
    suspects = []
    for site in walk(model, functions=False):
        for index, node in enumerate(site.owner.node):
            if node.domain not in DEFAULT_DOMAINS:
                continue
            try:
                at_source = onnx.defs.get_schema(node.op_type, source).since_version
                at_target = onnx.defs.get_schema(node.op_type, target).since_version
            except onnx.defs.SchemaError:
                suspects.append(f"{node_label(site, node, index)!r} ({node.op_type})")
                continue
            if at_source != at_target:
                suspects.append(
                    f"{node_label(site, node, index)!r} ({node.op_type}-{at_source})")
    where = f" (nodes that change between the two opsets: {', '.join(suspects[:8])})" if (
        suspects) else ""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (f"onnx's version converter cannot bring {what} from opset {source} to "
            f"{target}{where}: {first}; convert or remove those nodes first")


def _finish(job_model: onnx.ModelProto, original: onnx.ModelProto, target: int,
            build: Callable[[Site, onnx.NodeProto, _Job], None], job: _Job) -> onnx.ModelProto:
    """Turn pending nodes into their final form, clean up, restore metadata, check."""
    job.model = job_model
    job.names = all_names(job_model)
    for site in list(walk(job_model)):
        for node in site.owner.node:
            if node.domain == PENDING_DOMAIN:
                build(site, node, job)
            elif node.domain == COMPATIBLE_DOMAIN:
                node.domain = ""
    job.flush()
    _drop_unused_constants(job_model, job.orphans)
    for owner in [job_model, *job_model.functions]:
        keep = [entry for entry in owner.opset_import if entry.domain not in _PRIVATE_DOMAINS]
        for entry in keep:
            if entry.domain in DEFAULT_DOMAINS:
                entry.version = target
        del owner.opset_import[:]
        owner.opset_import.extend(keep)
    _restore_metadata(job_model, original, target)
    try:
        onnx.checker.check_model(without_data(job_model))
    except onnx.checker.ValidationError as error:
        first = str(error).strip().splitlines()[0]
        raise UpsampleError(
            f"the converted model fails onnx.checker.check_model: {first}; run "
            "onnx_upsample.onnx.check(model) on the original and fix what it reports") from None
    return job_model


def _drop_unused_constants(model: onnx.ModelProto, candidates: set[str]) -> None:
    """Remove the initializers and Constant nodes in ``candidates`` that nothing reads now."""
    if not candidates:
        return
    unused = candidates - names_read(model)
    if not unused:
        return
    for site in reversed(list(walk(model))):
        owner = site.owner
        if isinstance(owner, onnx.GraphProto):
            kept_tensors = [t for t in owner.initializer if t.name not in unused]
            if len(kept_tensors) != len(owner.initializer):
                del owner.initializer[:]
                owner.initializer.extend(kept_tensors)
        dead = [index for index, node in enumerate(owner.node)
                if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS
                and len(node.output) == 1 and node.output[0] in unused]
        for index in reversed(dead):
            del owner.node[index]


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


def _bridge_compatible(site: Site, index: int, node: onnx.NodeProto,
                       types: dict[str, TypeProto], source: int, target: int) -> bool:
    """Move a node down unchanged if its schema at ``target`` differs only in types."""
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
        type_name = f"tensor({onnx.TensorProto.DataType.Name(elem).lower()})"
        if type_name not in allowed:
            raise UpsampleError(
                f"node {node_label(site, node, index)!r} ({node.op_type}) has input {name!r} "
                f"of type {type_name}, which {node.op_type}-{old.since_version} (opset "
                f"{target}) does not allow; a model with it cannot be brought to opset "
                f"{target}")
    node.domain = COMPATIBLE_DOMAIN
    return True


def _has_shape(value_type: TypeProto | None) -> bool:
    if value_type is None or not value_type.HasField("tensor_type"):
        return value_type is not None and not value_type.HasField("tensor_type")
    return value_type.tensor_type.HasField("shape")


def _restore_metadata(result: onnx.ModelProto, original: onnx.ModelProto, target: int) -> None:
    for name in ("producer_name", "producer_version", "domain", "model_version", "doc_string"):
        setattr(result, name, getattr(original, name))
    del result.metadata_props[:]
    result.metadata_props.extend(original.metadata_props)
    result.graph.name = original.graph.name
    result.graph.doc_string = original.graph.doc_string
    minimum = helper.find_min_ir_version_for([helper.make_opsetid("", target)])
    result.ir_version = max(original.ir_version, minimum)
    # Keep the declarations of the main graph as they were: the converter adds inferred
    # types (from one branch of an If, for example) that the original did not claim.
    # onnx's checker wants a shape on every graph output: where the original declares none,
    # write the one inferred with onnxruntime's Upsample size rule.
    declared = {value.name: value for value in original.graph.output}
    inferred: dict[str, TypeProto] = {}
    if any(not _has_shape(value.type) for value in declared.values()):
        try:
            inferred = {value.name: value.type for value in infer_shapes(original).graph.output}
        except UpsampleError:
            inferred = {}
    for value in result.graph.output:
        if value.name in declared:
            value.CopyFrom(declared[value.name])
            if not _has_shape(value.type) and _has_shape(inferred.get(value.name)):
                value.type.CopyFrom(inferred[value.name])
    originals = {value.name for value in original.graph.value_info}
    kept = [value for value in result.graph.value_info if value.name in originals]
    del result.graph.value_info[:]
    result.graph.value_info.extend(kept)


# ---------------------------------------------------------------------------- upgrade


def _resize10_nearest_mode(site: Site, node: onnx.NodeProto, label: str) -> str:
    """``floor`` or ``ceil``: how onnxruntime's Resize-10 picks nearest pixels here."""
    scales = site.scope.constant(node.input[1]) if len(node.input) > 1 else None
    if scales is None:
        raise UpsampleError(
            f"cannot upgrade Resize-10 node {label!r}: its scales are computed at run time, "
            "and onnxruntime's Resize-10 rounds nearest indices down when a scale is >= 1 and "
            "up when it is below 1, which no single nearest_mode of Resize-11 expresses "
            "without knowing the scales; fix: fold the scales into a constant "
            "(onnx_upsample.onnx.fold_scales handles Upsample only) or convert this node by "
            "hand")
    values = [float(v) for v in np.asarray(scales).reshape(-1)]
    if all(v >= 1 for v in values):
        return "floor"
    if all(v <= 1 for v in values):
        return "ceil"
    raise UpsampleError(
        f"cannot upgrade Resize-10 node {label!r}: its scales {values} enlarge some axes and "
        "shrink others; onnxruntime's Resize-10 rounds nearest indices down on the first and "
        "up on the second, which no single nearest_mode of Resize-11 expresses; fix: split it "
        "into two Resize nodes (one enlarging, one shrinking) first")


# The default target of upgrade(): an opset that the runtimes in use load (onnxruntime since
# 1.14, TensorRT 8.6+, OpenVINO 2023+), not the newest one onnx knows.
DEFAULT_UPGRADE_OPSET = 18


def upgrade(model: ModelLike, opset: int | None = DEFAULT_UPGRADE_OPSET) -> onnx.ModelProto:
    """Replace every ``Upsample`` by a ``Resize`` with the same outputs, at opset ``opset``.

    Every ``Upsample`` node (versions 1, 7, 9, 10; in the main graph, in ``If``/``Loop``/
    ``Scan`` subgraphs and in model-local functions) becomes a ``Resize`` node that
    onnxruntime runs bit-identically: ``coordinate_transformation_mode="asymmetric"``,
    ``nearest_mode="floor"`` for nearest, ``mode="linear"`` for linear (also for version 1's
    ``bilinear``), the scales copied bit for bit (attribute scales become a float32
    initializer; a scales input stays as it is, constant or computed). Every other node goes
    through onnx's version converter. ``Resize-10`` nodes already in an opset-10 model get the
    same treatment (the converter's 10->11 step would change their results, docs/peers.md §6).

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of its .onnx file (read safely: external data must lie in
        its folder; tensors over 1 MiB stay on disk).
        The model; it is not modified.
    opset : int, optional
        The target default-domain opset, from 10 to the newest onnx knows; 18 by default
        (loaded by the runtimes in use), None for the newest.

    Returns
    -------
    onnx.ModelProto
        A new model at ``opset`` that passes ``onnx.checker.check_model``, with the names,
        doc strings, metadata and declared graph outputs of the original.

    Raises
    ------
    TypeError
        If ``model`` is not a ModelProto or ``opset`` not an integer.
    UpsampleError
        If an Upsample cannot be expressed as a Resize with the same outputs (no inputs,
        missing attributes, an unknown mode, constant scales below 1 or not finite, version
        1 on input that is not 4-D), if ``opset`` is below 10, above the newest opset onnx
        knows or below the model's, or if onnx's converter fails on another node. The
        message names the node and says why.

    Notes
    -----
    ``ai.onnx`` Resize, versions 10, 11, 13, 18 and 19; Upsample versions 1, 7, 9, 10.
    Scales computed at run time are kept: Resize takes them too, but where they fall below
    1 at run time Resize shrinks while Upsample fails.

    Examples
    --------
    >>> from onnx import TensorProto, helper
    >>> x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 4, 4])
    >>> node = helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, 2, 2])
    >>> old = helper.make_model(helper.make_graph([node], "g", [x], [y]),
    ...                         opset_imports=[helper.make_opsetid("", 7)])
    >>> new = upgrade(old, opset=13)
    >>> [(n.op_type, n.input[1] == "") for n in new.graph.node]
    [('Resize', True)]
    """
    model = _normalise_mode_case(model_of(model))
    newest = newest_opset()
    target = newest if opset is None else _require_opset(
        opset, 10, newest,
        f"upgrade() writes Resize, which needs opset 10 or later, and the installed onnx "
        f"knows opsets up to {newest}; use downgrade() for opsets 7-9")
    source = default_opset(model.opset_import)
    if source is None:
        raise UpsampleError("the model imports no default-domain ('' or 'ai.onnx') opset; "
                            "add one with onnx.helper.make_opsetid('', N)")
    if source > target:
        raise UpsampleError(
            f"the model imports opset {source}, above the target opset {target}; upgrade() "
            f"never lowers the opset: use opset={source} or later")
    job = _start(model)

    def visit(site: Site, index: int, node: onnx.NodeProto,
              types: dict[str, TypeProto]) -> None:
        if is_upsample(node):
            info = _upsample_info(site, index, node, types, f"upgrade to opset {target}")
            if info.scales is not None and info.scales.size == 0:
                # a rank-0 X: Upsample copies it, and Resize cannot say so (ORT refuses an
                # empty scales tensor at run time): an Identity is the same, at any opset
                del node.input[1:]
                del node.attribute[:]
                node.op_type, node.domain = "Identity", ""
                return
            if info.form == 1 and rank_of(types.get(node.input[0])) is None:
                warnings.warn(
                    f"Upsample node {info.label!r}: the rank of X is unknown; Upsample-1 is "
                    "4-D only, so the Resize gets the scales [1, 1, height_scale, "
                    "width_scale]", UpsampleWarning, stacklevel=3)
            scales = _scales_input(job, site, info)
            assert info.mode is not None
            _set_pending(node, "Resize", [node.input[0], scales],
                         {"mode": info.mode, "nearest_mode": "floor"})
        elif (node.op_type == "Resize" and node.domain in DEFAULT_DOMAINS
              and site.opset == 10 and target > 10):
            label = node_label(site, node, index)
            mode = _text(_attribute(node, "mode", b"nearest"))
            if mode not in ("nearest", "linear") or len(node.input) != 2:
                return  # invalid Resize-10: let the converter report it
            nearest_mode = "floor" if mode == "linear" else _resize10_nearest_mode(
                site, node, label)
            _set_pending(node, "Resize", list(node.input),
                         {"mode": mode, "nearest_mode": nearest_mode})

    _each_node(job, visit)
    job.flush()
    converted = _convert_rest(job, source, target)
    roi_names: dict[int, str] = {}

    def build(site: Site, node: onnx.NodeProto, job: _Job) -> None:
        mode = _text(_attribute(node, "mode", b"nearest"))
        nearest_mode = _text(_attribute(node, "nearest_mode", b"floor"))
        x, scales = node.input[0], node.input[1]
        if target == 10:
            inputs = [x, scales]
            attributes: dict[str, object] = {"mode": mode}
        else:
            if target >= 13:
                roi = ""
            else:
                key = id(site.owner)
                if key not in roi_names:
                    roi_names[key] = job.add_constant(site, "upsample_roi",
                                                      np.zeros(0, np.float32))
                roi = roi_names[key]
            inputs = [x, roi, scales]
            attributes = {"mode": mode, "coordinate_transformation_mode": "asymmetric"}
            if mode == "nearest":
                attributes["nearest_mode"] = nearest_mode
        _set_pending(node, "Resize", inputs, attributes)
        node.domain = ""

    return _finish(converted, model, target, build, job)


def _normalise_mode_case(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model``, or a copy whose Upsample modes written in the case old converters wrote
    ('NEAREST', 'BILINEAR') are in lower case, with a warning for each."""
    found = [(site, index, node, attribute)
             for site in walk(model) for index, node in enumerate(site.owner.node)
             if is_upsample(node) for attribute in node.attribute
             if attribute.name == "mode" and attribute.type == onnx.AttributeProto.STRING
             and case_variant(attribute.s.decode("utf-8", "replace")) is not None]
    if not found:
        return model
    for site, index, node, attribute in found:
        name = attribute.s.decode("utf-8", "replace")
        warnings.warn(
            f"Upsample node {node_label(site, node, index)!r}: mode {name!r} (the case old "
            f"converters wrote, which onnx's checker and onnxruntime refuse) is written "
            f"{case_variant(name)!r}", UpsampleWarning, stacklevel=3)
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for site in walk(copy):
        for node in site.owner.node:
            if not is_upsample(node):
                continue
            for attribute in node.attribute:
                if attribute.name == "mode" and attribute.type == onnx.AttributeProto.STRING:
                    lower = case_variant(attribute.s.decode("utf-8", "replace"))
                    if lower is not None:
                        attribute.s = lower.encode()
    return copy


# ---------------------------------------------------------------------------- downgrade


def _constant_or_none(site: Site, node: onnx.NodeProto, position: int) -> np.ndarray | None:
    if len(node.input) <= position or not node.input[position]:
        return None
    return site.scope.constant(node.input[position])


def _resize_as_upsample(site: Site, node: onnx.NodeProto, label: str) -> tuple[str, str]:
    """Mode and scales name of a Resize that means exactly Upsample, or UpsampleError."""
    opset = site.opset or 10

    def refuse(why: str, fix: str) -> UpsampleError:
        return UpsampleError(f"Resize node {label!r} is not an Upsample: {why}; {fix}")

    mode = _text(_attribute(node, "mode", b"nearest"))
    if mode not in ("nearest", "linear"):
        raise refuse(f"mode is {mode!r} (Upsample has nearest and linear)",
                     "keep this model at its opset")
    if opset == 10:
        if len(node.input) != 2 or not node.input[1]:
            raise refuse("Resize-10 needs inputs X and scales", "fix the node")
        scales_position = 1
    else:
        ctm = _text(_attribute(node, "coordinate_transformation_mode", b"half_pixel"))
        if ctm != "asymmetric":
            raise refuse(f"coordinate_transformation_mode is {ctm!r}; Upsample maps output "
                         "pixel o to input o / scale ('asymmetric')",
                         "only Resize nodes with coordinate_transformation_mode='asymmetric' "
                         "become Upsample")
        if mode == "nearest":
            nearest_mode = _text(_attribute(node, "nearest_mode", b"round_prefer_floor"))
            if nearest_mode != "floor":
                raise refuse(f"nearest_mode is {nearest_mode!r}; Upsample rounds down "
                             "('floor')", "only nearest_mode='floor' becomes Upsample")
        for name, default in (("antialias", 0), ("exclude_outside", 0)):
            value = _attribute(node, name, default)
            if value != default:
                raise refuse(f"{name} is {value!r}", f"set {name} to {default}")
        if _attribute(node, "axes", None) is not None:
            raise refuse("it has the axes attribute", "give one scale per axis instead")
        if len(node.input) > 3 and node.input[3]:
            sizes = _constant_or_none(site, node, 3)
            if sizes is None or sizes.size:
                raise refuse("it takes output sizes; Upsample takes scales",
                             "compute the scales (fold them into a constant) first")
        if len(node.input) < 3 or not node.input[2]:
            raise refuse("it has no scales input", "give the scales")
        scales_position = 2
    scales = _constant_or_none(site, node, scales_position)
    if scales is not None:
        values = [float(v) for v in np.asarray(scales).reshape(-1)]
        if not values:
            raise refuse("its scales are empty", "give one scale per axis")
        for axis, value in enumerate(values):
            if not math.isfinite(value) or value < 1:
                raise refuse(f"scales[{axis}] is {value!r}; Upsample only enlarges "
                             "(scales must be finite and >= 1)", "keep this model at its opset")
        if np.asarray(scales).dtype != np.float32:
            raise refuse(f"its scales have element type {np.asarray(scales).dtype}",
                         "store the scales as float32")
    return mode, node.input[scales_position]


def _check_ops_exist(model: onnx.ModelProto, target: int) -> None:
    for site in walk(model):
        for index, node in enumerate(site.owner.node):
            if node.domain not in DEFAULT_DOMAINS:
                continue
            try:
                onnx.defs.get_schema(node.op_type, target)
            except onnx.defs.SchemaError:
                raise UpsampleError(
                    f"node {node_label(site, node, index)!r} is a {node.op_type}, which opset "
                    f"{target} does not have; a model with it cannot be brought to opset "
                    f"{target}") from None


def downgrade(model: ModelLike, opset: int = 9) -> onnx.ModelProto:
    """Turn every Upsample-equivalent ``Resize`` into ``Upsample``, in a model at opset 9.

    For runtimes that know ``Upsample`` but not ``Resize`` (old TensorRT, OpenVINO, ncnn,
    CoreML converters). A ``Resize`` means exactly Upsample when it gives scales (no sizes, no
    axes), scales that are >= 1 where constant, mode ``nearest`` with
    ``coordinate_transformation_mode="asymmetric"`` and ``nearest_mode="floor"`` or mode
    ``linear`` with ``asymmetric`` (Resize-10 always is), no antialias. Every ``Upsample``
    already in the model (versions 1, 7, 9, 10) is rewritten in the target's form too, and
    every other node goes through onnx's version converter.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of its .onnx file (read safely: external data must lie in
        its folder; tensors over 1 MiB stay on disk).
        The model; it is not modified.
    opset : {9, 8, 7}
        The target opset: 9 writes Upsample-9 (scales as an input); 7 and 8 write
        Upsample-7 (a scales attribute, so the scales must be constant).

    Returns
    -------
    onnx.ModelProto
        A new model at ``opset`` that passes ``onnx.checker.check_model``; onnxruntime gives
        bit-identical outputs.

    Raises
    ------
    TypeError
        If ``model`` is not a ModelProto or ``opset`` not an integer.
    UpsampleError
        Naming the node: a Resize that is not Upsample-equivalent, scales computed at run
        time into opset 7 or 8, a node that does not exist at ``opset`` or that onnx's
        converter cannot bring there.

    Examples
    --------
    >>> import numpy as np
    >>> from onnx import TensorProto, helper, numpy_helper
    >>> x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 4, 4])
    >>> s = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")
    >>> node = helper.make_node("Resize", ["X", "", "s"], ["Y"], mode="nearest",
    ...                         coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    >>> new = downgrade(helper.make_model(helper.make_graph([node], "g", [x], [y], [s]),
    ...                                   opset_imports=[helper.make_opsetid("", 13)]))
    >>> [(n.op_type, list(n.input)) for n in new.graph.node], new.opset_import[0].version
    ([('Upsample', ['X', 's'])], 9)
    """
    model = model_of(model)
    target = _require_opset(opset, 7, 9, "downgrade() writes Upsample-7 (opsets 7 and 8) or "
                            "Upsample-9 (opset 9); use upgrade() for Resize")
    source = default_opset(model.opset_import)
    if source is None:
        raise UpsampleError("the model imports no default-domain ('' or 'ai.onnx') opset; "
                            "add one with onnx.helper.make_opsetid('', N)")
    job = _start(model)

    def pending_upsample(site: Site, node: onnx.NodeProto, label: str, mode: str,
                         scales_name: str, constant: np.ndarray | None) -> None:
        if target >= 9:
            _set_pending(node, "Upsample", [node.input[0], scales_name], {"mode": mode})
            return
        if constant is None:
            raise UpsampleError(
                f"cannot downgrade node {label!r} to opset {target}: its scales are computed "
                f"at run time ({site.scope.origin(scales_name)}) and Upsample-7 takes them as "
                "an attribute; fix: onnx_upsample.onnx.fold_scales(model) first, or use "
                "opset=9")
        values = np.asarray(constant, dtype=np.float32).reshape(-1)
        job.orphans.update(name for name in node.input[1:] if name)
        _set_pending(node, "Upsample", [node.input[0]],
                     {"mode": mode, "scales": [float(v) for v in values]})

    def visit(site: Site, index: int, node: onnx.NodeProto,
              types: dict[str, TypeProto]) -> None:
        label = node_label(site, node, index)
        if is_upsample(node):
            info = _upsample_info(site, index, node, types, f"downgrade to opset {target}")
            assert info.mode is not None
            if target >= 9:
                scales_name = _scales_input(job, site, info)
                pending_upsample(site, node, label, info.mode, scales_name, info.scales)
            else:
                pending_upsample(site, node, label, info.mode, info.scales_input or "",
                                 info.scales)
        elif node.op_type == "Resize" and node.domain in DEFAULT_DOMAINS:
            mode, scales_name = _resize_as_upsample(site, node, label)
            constant = site.scope.constant(scales_name)
            pending_upsample(site, node, label, mode, scales_name, constant)

    _each_node(job, visit)
    job.flush()
    _check_ops_exist(job.model, target)
    converted = _convert_rest(job, source, target)

    def build(site: Site, node: onnx.NodeProto, job: _Job) -> None:
        node.domain = ""

    return _finish(converted, model, target, build, job)

