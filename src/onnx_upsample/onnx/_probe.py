"""Looking inside a model as it runs: values exposed as graph outputs, and a model run in
pieces around the nodes a runtime cannot run.

Both tools know no runtime; the runtime comes in as a function (:data:`Runner`: a model and
its feeds in, its outputs out, in order):

- :func:`expose`: a copy of a model whose main graph also outputs the values named (each
  declared with its element type), so that one run returns what a node computed.
- :func:`run_pieces`: run a model on feeds in consecutive pieces: the nodes between the *cut*
  nodes as one sub-model each (``run_model``), every cut node alone (``run_node``, which may
  be another runtime), the values passing from piece to piece as arrays. Without cut nodes
  the model runs whole, exposed.

The verification of ``upgrade`` compares each Upsample with the Resize that replaced it this
way and runs only the nodes onnxruntime refuses in another runtime; a comparison of two
runtimes on one model can do the same.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper

from .._errors import UpsampleError
from .._spec.versions import DEFAULT_DOMAINS
from ._infer import ort_shapes

__all__ = ["Runner", "element_types", "expose", "node_model", "piece_words", "reads",
           "run_pieces"]

# A runtime, as these tools use it: run ``model`` on ``feeds``, return its outputs in order.
Runner = Callable[[onnx.ModelProto, dict[str, np.ndarray]], Sequence[np.ndarray]]


def element_types(model: onnx.ModelProto) -> dict[str, int]:
    """The element type of every main-graph value that inference or a declaration knows."""
    try:
        typed = ort_shapes(model)
    except UpsampleError:
        try:
            typed = onnx.shape_inference.infer_shapes(model)
        except Exception:  # no inference at all: the declarations alone
            typed = model
    graph = typed.graph
    found = {tensor.name: tensor.data_type for tensor in graph.initializer}
    for value in [*graph.input, *graph.value_info, *graph.output]:
        if value.type.HasField("tensor_type") and value.type.tensor_type.elem_type:
            found[value.name] = value.type.tensor_type.elem_type
    return found


def expose(model: onnx.ModelProto, names: Iterable[str]) -> onnx.ModelProto:
    """A copy of ``model`` whose main graph also outputs each value of ``names``.

    A name already a graph output stays as it is; a new output is declared with its element
    type where inference knows it, without a shape (a value is exposed to be read, not to
    restate its shape), and without a type where nothing knows it (onnxruntime takes that).
    The outputs the model had come first, in their order.
    """
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    present = {value.name for value in copy.graph.output}
    wanted = [name for name in dict.fromkeys(names) if name and name not in present]
    if not wanted:
        return copy
    types = element_types(model)
    for name in wanted:
        value = copy.graph.output.add()
        value.name = name
        if name in types:
            value.type.tensor_type.elem_type = types[name]
    return copy


def reads(node: onnx.NodeProto) -> list[str]:
    """Every value ``node`` reads: its inputs, and the names its subgraphs take from
    enclosing graphs (those they read but do not define)."""
    names = [name for name in node.input if name]
    for attribute in node.attribute:
        graphs = [attribute.g] if attribute.type == AttributeProto.GRAPH else (
            list(attribute.graphs) if attribute.type == AttributeProto.GRAPHS else [])
        for graph in graphs:
            defined = {value.name for value in graph.input}
            defined |= {tensor.name for tensor in graph.initializer}
            for inner in graph.node:
                names += [name for name in reads(inner) if name not in defined]
                defined.update(inner.output)
    return list(dict.fromkeys(names))


def _typed_input(name: str, array: np.ndarray) -> onnx.ValueInfoProto:
    kind = np.asarray(array).dtype
    elem = onnx.TensorProto.STRING if kind.kind in "OUS" else helper.np_dtype_to_tensor_dtype(kind)
    return helper.make_tensor_value_info(name, elem, list(np.shape(array)))


def _sub_model(model: onnx.ModelProto, nodes: Sequence[onnx.NodeProto],
               values: Mapping[str, np.ndarray], constants: Collection[str],
               outputs: Sequence[str],
               types: Mapping[str, int]) -> tuple[onnx.ModelProto, list[str]]:
    """The nodes as a model of their own: what they read from before comes in as inputs
    typed by their arrays (constants as initializers, so that a runtime still sees them as
    constants); the names they must hand on are its outputs (with their element type where
    ``types`` knows it). Also the names of its inputs."""
    produced: set[str] = set()
    needed: list[str] = []
    for node in nodes:
        needed += [name for name in reads(node) if name not in produced]
        produced.update(name for name in node.output if name)
    needed = [name for name in dict.fromkeys(needed) if name in values or name in constants]
    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    # a Constant node's output that no run recorded: the node comes along, still a constant
    makers = [node for node in model.graph.node if node.op_type == "Constant"
              and node.domain in DEFAULT_DOMAINS and len(node.output) == 1
              and node.output[0] in needed and node.output[0] not in initializers
              and node.output[0] not in values]
    needed = [name for name in needed if all(name != node.output[0] for node in makers)]
    nodes = [*makers, *nodes]
    # an initializer listed as a graph input stays listed: from IR 4 on that makes it an
    # input with a default, which runtimes do not fold as a constant (and IR 3 lists all)
    listed = {value.name: value for value in model.graph.input if value.name in initializers}
    inputs, tensors, fed = [], [], []
    for name in needed:
        if name in initializers or name in constants:
            tensor = initializers[name] if name in initializers else (
                numpy_helper.from_array(np.asarray(values[name]), name))
            tensors.append(tensor)
            if name in listed:
                inputs.append(listed[name])
            elif model.ir_version < 4:
                inputs.append(_typed_input(name, numpy_helper.to_array(tensor)))
        else:
            inputs.append(_typed_input(name, values[name]))
            fed.append(name)
    declared = [helper.make_tensor_value_info(name, types[name], None) if name in types
                else onnx.ValueInfoProto(name=name) for name in outputs]
    graph = helper.make_graph(list(nodes), model.graph.name or "piece", inputs, declared,
                              tensors)
    sub = helper.make_model(graph, opset_imports=list(model.opset_import),
                            functions=list(model.functions))
    sub.ir_version = model.ir_version
    return sub, fed


def node_model(model: onnx.ModelProto, index: int,
               values: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """Main-graph node ``index`` of ``model`` as a model of its own, its inputs typed by
    ``values`` (the arrays it reads), its constant inputs still constants."""
    node = model.graph.node[index]
    sub, _ = _sub_model(model, [node], values, _constants(model), list(node.output),
                        element_types(model))
    return sub


def _constants(model: onnx.ModelProto) -> set[str]:
    names = {tensor.name for tensor in model.graph.initializer}
    names |= {node.output[0] for node in model.graph.node if node.op_type == "Constant"
              and node.domain in DEFAULT_DOMAINS and len(node.output) == 1}
    return names


def piece_words(piece: onnx.ModelProto) -> str:
    """A piece of a cut run (a model :func:`run_pieces` hands a runner), as a progress line
    names it: the node it runs, or how many and the first and last."""
    nodes = piece.graph.node
    if len(nodes) == 1:
        return f"running {nodes[0].op_type} {nodes[0].name or nodes[0].output[0]!r}"
    first, last = (node.name or node.op_type for node in (nodes[0], nodes[-1]))
    return f"running {len(nodes)} nodes ({first!r} to {last!r})"


def run_pieces(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
               outputs: Sequence[str], cut: Collection[int], run_model: Runner,
               run_node: Runner) -> dict[str, np.ndarray]:
    """Run ``model`` on ``feeds`` and return the values named in ``outputs``.

    Parameters
    ----------
    model : onnx.ModelProto
        The model (its main graph is cut; subgraphs and functions travel with their nodes).
    feeds : mapping of str to numpy.ndarray
        A value for each graph input.
    outputs : sequence of str
        The values to return: graph outputs or any value of the main graph.
    cut : collection of int
        Indices of main-graph nodes that run alone, with ``run_node``.
    run_model, run_node : Runner
        The runtimes: ``run_model`` for the pieces between the cut nodes (and the whole
        model, exposed, when nothing is cut), ``run_node`` for each cut node, given as a
        model of one node.

    Returns
    -------
    dict of str to numpy.ndarray
        Each name of ``outputs`` and its value.
    """
    if not cut:
        exposed = expose(model, outputs)
        names = [value.name for value in exposed.graph.output]
        ran = dict(zip(names, run_model(exposed, dict(feeds)), strict=True))
        return {name: np.asarray(ran[name]) for name in outputs}
    nodes = list(model.graph.node)
    pieces: list[tuple[bool, list[onnx.NodeProto]]] = []
    for index, node in enumerate(nodes):
        alone = index in cut
        if alone or not pieces or pieces[-1][0]:
            pieces.append((alone, [node]))
        else:
            pieces[-1][1].append(node)
    # what each piece must hand on: what later pieces read, and what was asked for
    later: list[set[str]] = [set(outputs)]
    for _, members in reversed(pieces[1:]):
        later.append(later[-1] | {name for node in members for name in reads(node)})
    later.reverse()
    constants, types = _constants(model), element_types(model)
    values: dict[str, np.ndarray] = {tensor.name: numpy_helper.to_array(tensor)
                                     for tensor in model.graph.initializer
                                     if tensor.name in outputs}
    values.update(feeds)
    for (alone, members), handed_on in zip(pieces, later, strict=True):
        made = [name for node in members for name in node.output if name in handed_on]
        if not made:
            continue
        sub, fed = _sub_model(model, members, values, constants, made, types)
        results = (run_node if alone else run_model)(sub, {name: values[name] for name in fed})
        values.update((name, np.asarray(value)) for name, value in zip(made, results,
                                                                         strict=True))
    return {name: values[name] for name in outputs}
