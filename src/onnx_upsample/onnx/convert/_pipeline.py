"""The conversion pipeline shared by ``upgrade`` and ``downgrade``.

Every node whose meaning onnx's version converter would change (or cannot carry) is first
replaced by a *pending* node of a private domain (:func:`set_pending`), which the converter
leaves alone; :func:`convert_rest` then brings every other node to the target opset (the
main graph and its subgraphs; model-local functions one by one, since the converter drops
them); last, :func:`finish_job` turns each pending node into the target node, removes the
private domains, restores the original's metadata and declarations, and checks the result.
What a pending node becomes is the caller's rule (``_upgrade``, ``_downgrade``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TypeProto, helper, numpy_helper, version_converter

from ..._errors import UpsampleError, UpsampleWarning
from ..._spec.modes import LEGACY_LINEAR_NAMES
from ..._spec.versions import DEFAULT_DOMAINS
from .._external import without_data
from .._fixes import Action, Fix, FixableError
from .._graphs import (
    Site,
    all_names,
    default_opset,
    names_read,
    node_label,
    unique_name,
    walk,
)
from .._infer import ort_shapes, rank_of, site_type_maps
from .._node import UpsampleNode, describe
from ._bridge import inputs_to_attributes, moves_down_unchanged
from ._declarations import restore_declarations

__all__ = [
    "COMPATIBLE_DOMAIN", "PENDING_DOMAIN", "Job", "as_text", "attribute_value",
    "convert_rest", "each_node", "finish_job", "newest_opset", "require_opset",
    "scales_input", "set_pending", "start_job", "upsample_info",
]

PENDING_DOMAIN = "onnx_upsample.pending"
# Nodes whose schema at the target opset is the same as at the source (only element types
# differ), which downgrade() moves down unchanged because onnx has no down adapter for them.
COMPATIBLE_DOMAIN = "onnx_upsample.compatible"
_PRIVATE_DOMAINS = (PENDING_DOMAIN, COMPATIBLE_DOMAIN)


def newest_opset() -> int:
    """The newest default-domain opset the installed onnx knows."""
    return int(onnx.defs.onnx_opset_version())


def require_opset(opset: object, low: int, high: int, what: Fix) -> int:
    """``opset`` as an int from ``low`` to ``high``; TypeError or UpsampleError (``what``
    says which opsets the function writes, and what to use for the others)."""
    if isinstance(opset, bool) or not isinstance(opset, int | np.integer):
        raise TypeError(f"opset is {opset!r}; expected an integer from {low} to {high}")
    if not low <= int(opset) <= high:
        raise FixableError(f"{{argument}} is {opset}", what, argument="opset")
    return int(opset)


@dataclass
class Job:
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


def start_job(model: onnx.ModelProto) -> Job:
    """Copy ``model`` and collect the type of every value (for ranks) and every name."""
    work = onnx.ModelProto()
    work.CopyFrom(model)
    try:
        typed = ort_shapes(model)
    except UpsampleError:
        typed = model
    types = [types for _, types in site_type_maps(typed)]
    return Job(work, all_names(work), types)


def attribute_value(node: onnx.NodeProto, name: str, default: object) -> object:
    """The value of ``node``'s attribute ``name``, or ``default`` where it is absent."""
    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def as_text(value: object) -> object:
    """A string attribute's bytes as str (undecodable bytes replaced); other values as given."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def set_pending(node: onnx.NodeProto, op_type: str, inputs: list[str],
                attributes: dict[str, object]) -> None:
    """Turn ``node`` into a pending node in place (name, outputs and doc string kept)."""
    node.op_type = op_type
    node.domain = PENDING_DOMAIN
    del node.input[:]
    node.input.extend(inputs)
    del node.attribute[:]
    for key, value in attributes.items():
        # an empty list has no type to infer (the scales of a rank-0 input): floats it is
        kind = onnx.AttributeProto.FLOATS if isinstance(value, list | tuple) and not value else None
        node.attribute.append(helper.make_attribute(key, value, attr_type=kind))


def each_node(job: Job, visit: Callable[[Site, int, onnx.NodeProto,
                                           dict[str, TypeProto]], None]) -> None:
    """Call ``visit(site, index, node, types)`` for every node of the working copy."""
    sites = list(walk(job.model))
    for site, types in zip(sites, job.types, strict=True):
        for index, node in enumerate(site.owner.node):
            visit(site, index, node, types)


def upsample_info(site: Site, index: int, node: onnx.NodeProto,
                  types: dict[str, TypeProto], doing: str,
                  allow_downscale: bool = False) -> UpsampleNode:
    """The Upsample ``node`` read, or UpsampleError where it cannot be converted (``doing``
    names the conversion in the message; ``allow_downscale``: constant scales below 1 are
    taken as they are)."""
    x_type = types.get(node.input[0]) if node.input else None
    info = describe(node, node_label(site, node, index), site.opset, site.scope,
                    rank_of(x_type), allow_downscale=allow_downscale)
    info.raise_if_blocked(doing)
    if info.mode_name in LEGACY_LINEAR_NAMES and info.mode_name not in info.schema.modes:
        # stacklevel 4: past the visitor and each_node, to the line of upgrade() or
        # downgrade() that walks the nodes
        warnings.warn(f"Upsample node {info.label!r}: mode {info.mode_name!r} is a legacy name "
                      "of 'linear'; the converted node says 'linear'", UpsampleWarning,
                      stacklevel=4)
    return info


def scales_input(job: Job, site: Site, info: UpsampleNode) -> str:
    """The name of a tensor holding the node's scales (a new constant for attribute forms)."""
    if info.schema.scales_from == "scales_input":
        assert info.scales_input is not None
        return info.scales_input
    assert info.scales is not None
    base = f"{info.node.name or info.node.output[0]}_scales"
    return job.add_constant(site, base, info.scales.astype(np.float32))


# ---------------------------------------------------------------------------- conversion


def convert_rest(job: Job, source: int, target: int) -> onnx.ModelProto:
    """Bring everything but the pending nodes to ``target`` (functions one by one)."""
    model = job.model
    _add_private_domains(model)
    # Under IR 3 every initializer must also be a graph input, so the scales initializers
    # this conversion adds would be undefined to onnx's converter: the model takes the IR
    # version it will have in the end (max of its own and the target opset's minimum) now.
    minimum = helper.find_min_ir_version_for([helper.make_opsetid("", target)])
    if model.ir_version < 4 <= minimum:
        model.ir_version = minimum
    functions = list(model.functions)
    del model.functions[:]
    types = {name: value for site_types in job.types for name, value in site_types.items()}
    converted = _convert_model(model, source, target, types, "the model", job.orphans)
    converted_functions = [_convert_function(function, target, source, types, job.orphans)
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
                   types: dict[str, TypeProto], what: str,
                   orphans: set[str]) -> onnx.ModelProto:
    """onnx's version converter, one opset at a time downwards.

    onnx has few down adapters; going down, each step moves the nodes that mean the same
    at the lower opset unchanged, writes those whose constant inputs were attributes there
    in that form (``_bridge``; the constants they no longer read go to ``orphans``) and
    leaves the others to the converter.
    """
    if source == target:
        return model
    if source < target:
        return _run_converter(model, source, target, what)
    current = model
    for version in range(source, target, -1):

        for site in walk(current, functions=False):
            for index, node in enumerate(site.owner.node):
                dropped = inputs_to_attributes(site, node, types, version, version - 1)
                if dropped is not None:
                    orphans.update(dropped)
                    node.domain = COMPATIBLE_DOMAIN
                elif moves_down_unchanged(site, index, node, types, version, version - 1):
                    node.domain = COMPATIBLE_DOMAIN  # hidden from the converter
        converted = _run_converter(current, version, version - 1,
                                   f"{what} (on its way from opset {source} to {target})")
        for site in walk(converted, functions=False):
            for node in site.owner.node:
                if node.domain == COMPATIBLE_DOMAIN:
                    node.domain = ""
        current = converted
    return current


def _add_private_domains(model: onnx.ModelProto) -> None:
    for owner in [model, *model.functions]:
        for domain in _PRIVATE_DOMAINS:
            if all(entry.domain != domain for entry in owner.opset_import):
                owner.opset_import.append(helper.make_opsetid(domain, 1))


def _convert_function(function: onnx.FunctionProto, target: int, model_opset: int,
                      types: dict[str, TypeProto], orphans: set[str]) -> onnx.FunctionProto:
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
                                   f"function {function.domain}::{function.name}", orphans)
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


# ---------------------------------------------------------------------------- finishing


def finish_job(job_model: onnx.ModelProto, original: onnx.ModelProto, target: int,
               build: Callable[[Site, onnx.NodeProto, Job], None], job: Job) -> onnx.ModelProto:
    """Turn pending nodes into their final form (``build``), clean up, restore metadata,
    check."""
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
    restore_declarations(job_model, original, target)
    try:
        onnx.checker.check_model(without_data(job_model))
    except onnx.checker.ValidationError as error:
        first = str(error).strip().splitlines()[0]
        raise FixableError(
            f"the converted model fails onnx.checker.check_model: {first}",
            Fix("run {0} on the original and fix what it reports", (Action("check"),))
        ) from None
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
