"""Walking ONNX models: every graph, subgraph and model-local function, with its opset and scope.

A :class:`Site` is one place that holds nodes (the main graph, a subgraph in an ``If``/
``Loop``/``Scan`` attribute, or a model-local function). Its :class:`Scope` knows which names
are constants (initializers and ``Constant`` node outputs, also from enclosing graphs), which
are graph inputs and which node produces each value.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

from .._spec.versions import DEFAULT_DOMAINS, is_resize10_opset

# What the model tools take: a model, or the path of a .onnx file.
ModelLike: TypeAlias = "onnx.ModelProto | str | os.PathLike[str]"


def model_of(model: object, which: str = "small") -> onnx.ModelProto:
    """``model`` itself, or the model stored at a path, read by ``_external.read`` (every
    problem of the file one line; its small external tensors loaded, or ``which="all"``:
    every one, to run it); TypeError for anything else."""
    if isinstance(model, onnx.ModelProto):
        return model
    if not isinstance(model, str | os.PathLike):
        raise TypeError(f"model is a {type(model).__name__}; expected an onnx.ModelProto or "
                        "the path of a .onnx file")
    from ._external import read

    # large external tensors stay where they are, unless the model is to run
    return read(os.fspath(model), "all" if which == "all" else "small")

__all__ = [
    "Scope",
    "Site",
    "default_opset",
    "element_name",
    "is_resize10",
    "is_upsample",
    "node_label",
    "type_string",
    "unique_name",
    "walk",
]


def element_name(elem_type: int) -> str:
    """An ONNX element type as ONNX names it, in lower case: ``float``, ``string``; a
    number ONNX does not define is ``<unknown type 42>``."""
    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"<unknown type {elem_type}>"


def type_string(elem_type: int) -> str:
    """An ONNX element type as schemas (and ``_spec.versions``) write it:
    ``tensor(float)``."""
    return f"tensor({element_name(elem_type)})"


def default_opset(opset_imports: object) -> int | None:
    """The default-domain (``""`` or ``"ai.onnx"``) opset version in ``opset_imports``."""
    for entry in opset_imports:  # type: ignore[attr-defined]
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    return None


def is_upsample(node: onnx.NodeProto) -> bool:
    """True for an ONNX ``Upsample`` node of the default domain."""
    return node.op_type == "Upsample" and node.domain in DEFAULT_DOMAINS


def is_resize10(node: onnx.NodeProto, opset: int | None) -> bool:
    """True for an ONNX ``Resize`` node of the default domain that is Resize-10 in a place
    importing ``opset`` (X and scales, Upsample's coordinates)."""
    return node.op_type == "Resize" and node.domain in DEFAULT_DOMAINS and is_resize10_opset(
        opset)


def constant_node_value(node: onnx.NodeProto) -> np.ndarray | None:
    """The value of a ``Constant`` node, or None where it is not a plain literal."""
    for attribute in node.attribute:
        if attribute.ref_attr_name:
            return None
        if attribute.name == "value" and attribute.type == AttributeProto.TENSOR:
            try:
                return numpy_helper.to_array(attribute.t)
            except Exception:
                return None
        if attribute.name == "value_float" and attribute.type == AttributeProto.FLOAT:
            return np.array(attribute.f, dtype=np.float32)
        if attribute.name == "value_floats" and attribute.type == AttributeProto.FLOATS:
            return np.array(list(attribute.floats), dtype=np.float32)
        if attribute.name == "value_int" and attribute.type == AttributeProto.INT:
            return np.array(attribute.i, dtype=np.int64)
        if attribute.name == "value_ints" and attribute.type == AttributeProto.INTS:
            return np.array(list(attribute.ints), dtype=np.int64)
    return None


@dataclass
class Scope:
    """Names visible in one graph (or function), chained to the enclosing graph's scope."""

    initializers: dict[str, onnx.TensorProto] = field(default_factory=dict)
    constant_nodes: dict[str, onnx.NodeProto] = field(default_factory=dict)
    producers: dict[str, onnx.NodeProto] = field(default_factory=dict)
    inputs: set[str] = field(default_factory=set)
    parent: Scope | None = None

    @classmethod
    def of(cls, owner: onnx.GraphProto | onnx.FunctionProto,
           parent: Scope | None = None) -> Scope:
        """The scope of a graph or function (functions have no initializers)."""
        scope = cls(parent=parent)
        if isinstance(owner, onnx.GraphProto):
            scope.initializers = {tensor.name: tensor for tensor in owner.initializer}
            scope.inputs = {value.name for value in owner.input}
        else:
            scope.inputs = set(owner.input)
        for node in owner.node:
            for name in node.output:
                if name:
                    scope.producers[name] = node
                    if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS:
                        scope.constant_nodes[name] = node
        return scope

    def _defines(self, name: str) -> bool:
        return name in self.initializers or name in self.producers or name in self.inputs

    def constant(self, name: str) -> np.ndarray | None:
        """The value of ``name`` if it is an initializer or a ``Constant`` output, else None."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.initializers:
                try:
                    return numpy_helper.to_array(scope.initializers[name])
                except Exception:
                    return None
            if name in scope.constant_nodes:
                return constant_node_value(scope.constant_nodes[name])
            if scope._defines(name):
                return None
            scope = scope.parent
        return None

    def origin(self, name: str) -> str:
        """Where ``name`` comes from, in words (for messages)."""
        scope: Scope | None = self
        depth = 0
        while scope is not None:
            outer = " of an enclosing graph" if depth else ""
            if name in scope.initializers:
                also = " (also a graph input, so it can be overridden)" if (
                    name in scope.inputs) else ""
                return f"initializer {name!r}{outer}{also}"
            if name in scope.constant_nodes:
                node = scope.constant_nodes[name]
                return f"Constant node {node.name or name!r}{outer}"
            if name in scope.producers:
                node = scope.producers[name]
                return f"output of {node.op_type} node {node.name or name!r}{outer}"
            if name in scope.inputs:
                return f"graph input {name!r}{outer}"
            scope = scope.parent
            depth += 1
        return f"undefined value {name!r}"

    def is_graph_input(self, name: str) -> bool:
        """True if ``name`` is an input (not an initializer) of this or an enclosing graph."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.initializers or name in scope.producers:
                return False
            if name in scope.inputs:
                return True
            scope = scope.parent
        return False


@dataclass
class Site:
    """One place holding nodes: the main graph, a subgraph, or a model-local function."""

    owner: onnx.GraphProto | onnx.FunctionProto
    path: str
    opset: int | None
    scope: Scope
    function: onnx.FunctionProto | None = None

    @property
    def nodes(self) -> list[onnx.NodeProto]:
        return list(self.owner.node)


def node_label(site: Site, node: onnx.NodeProto, index: int) -> str:
    """A readable name for a node: its name, or ``Op#index`` when unnamed, with its place."""
    own = node.name if node.name else f"{node.op_type}#{index}"
    return f"{site.path}/{own}" if site.path else own


def _subgraph_sites(site: Site) -> Iterator[Site]:
    for index, node in enumerate(site.owner.node):
        for attribute in node.attribute:
            graphs: list[onnx.GraphProto] = []
            if attribute.type == AttributeProto.GRAPH:
                graphs = [attribute.g]
            elif attribute.type == AttributeProto.GRAPHS:
                graphs = list(attribute.graphs)
            for number, graph in enumerate(graphs):
                suffix = f"[{number}]" if attribute.type == AttributeProto.GRAPHS else ""
                path = f"{node_label(site, node, index)}.{attribute.name}{suffix}"
                child = Site(graph, path, site.opset, Scope.of(graph, site.scope), site.function)
                yield child
                yield from _subgraph_sites(child)


def walk(model: onnx.ModelProto, *, functions: bool = True) -> Iterator[Site]:
    """Every site of ``model``: the main graph, its subgraphs (depth first), then functions."""
    main = Site(model.graph, "", default_opset(model.opset_import), Scope.of(model.graph))
    yield main
    yield from _subgraph_sites(main)
    if not functions:
        return
    for function in model.functions:
        opset = default_opset(function.opset_import)
        if opset is None:
            opset = default_opset(model.opset_import)
        site = Site(function, f"function {function.domain}::{function.name}", opset,
                    Scope.of(function), function)
        yield site
        yield from _subgraph_sites(site)


def names_read(model: onnx.ModelProto, *, function_outputs: bool = True) -> set[str]:
    """Every name some node reads or some graph (and, optionally, function) outputs."""
    used: set[str] = set()
    for site in walk(model):
        for node in site.owner.node:
            used.update(node.input)
        if isinstance(site.owner, onnx.GraphProto):
            used.update(value.name for value in site.owner.output)
        elif function_outputs:
            used.update(site.owner.output)
    return used


def unique_name(taken: set[str], base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... whichever is not in ``taken`` (then taken)."""
    name, number = base, 0
    while name in taken:
        number += 1
        name = f"{base}_{number}"
    taken.add(name)
    return name


def all_names(model: onnx.ModelProto) -> set[str]:
    """Every value, initializer, input, output and node name used anywhere in ``model``."""
    names: set[str] = set()
    for site in walk(model):
        owner = site.owner
        if isinstance(owner, onnx.GraphProto):
            names.update(tensor.name for tensor in owner.initializer)
            names.update(value.name for value in owner.input)
            names.update(value.name for value in owner.output)
            names.update(value.name for value in owner.value_info)
        else:
            names.update(owner.input)
            names.update(owner.output)
        for node in owner.node:
            names.update(node.input)
            names.update(node.output)
            if node.name:
                names.add(node.name)
    names.discard("")
    return names
