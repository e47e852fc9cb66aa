"""One node that onnxruntime refuses, run elsewhere: what a verification does with it.

A node arrives as a model of its own (``_probe.node_model``), its inputs as arrays:

- an Upsample runs in onnx-upsample's kernel (:func:`run_upsample`: ``onnx_upsample.upsample``
  through the evaluator's op), bit-identical to onnxruntime's Upsample wherever that has a
  kernel;
- an Upsample whose constant scales shrink has no runtime at all (Upsample refuses them); its
  literal meaning is the Resize-10 of the same inputs (:func:`literal_resize`);
- a Resize that means exactly an Upsample (``downgrade``'s rule) runs as that Upsample
  (:func:`as_upsample`), any other in onnx's reference evaluator (:func:`run_reference`),
  whose Resize is an implementation of its own (it interpolates in float64).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .._errors import UpsampleError, UpsampleWarning
from ._evaluator import reference_evaluator
from ._graphs import Scope, default_opset, is_upsample
from ._node import describe, shrinks
from .convert import downgrade

__all__ = ["KERNEL", "LITERAL", "REFERENCE", "as_upsample", "literal_resize", "run_reference",
           "run_upsample"]

# What ran a node, as the reports name it (onnxruntime itself is "onnxruntime").
KERNEL = "onnx-upsample"
REFERENCE = "onnx reference"
LITERAL = "onnxruntime (Resize-10)"  # an Upsample that shrinks, as the Resize it means


def run_upsample(model: onnx.ModelProto, feeds: dict[str, np.ndarray], *,
                 legacy_modes: bool = False, quiet: bool = True) -> Sequence[np.ndarray]:
    """Run a one-node Upsample model in onnx-upsample's kernel (UpsampleError if it cannot:
    scales below 1, for one). ``legacy_modes``: a mode in the case old converters wrote runs
    as its lower-case name (``Upsample.with_legacy_modes``); ``quiet``: the node's
    UpsampleWarnings (a deprecated version, for one) are dropped, as a verification words
    them itself, else they are issued as the evaluator issues them."""
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore", UpsampleWarning)
        return list(reference_evaluator(model, legacy_modes=legacy_modes).run(None, feeds))


def run_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
    """Run a one-node model in onnx's reference evaluator, with its own operators."""
    from onnx.reference import ReferenceEvaluator

    return list(ReferenceEvaluator(model).run(None, feeds))


def as_upsample(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A one-node Resize model as the Upsample-9 model it equals (``downgrade``), or None
    where the Resize is no Upsample."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UpsampleWarning)
            return downgrade(model, opset=9)
    except UpsampleError:
        return None


def literal_resize(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A one-node Upsample model whose constant scales shrink, as the Resize-10 model of the
    same inputs (Resize-10 is Upsample-9 without the rule that scales are >= 1); None for
    any other model."""
    node = model.graph.node[0]
    if not is_upsample(node):
        return None
    opset = default_opset(model.opset_import)
    info = describe(node, node.name or "Upsample", opset, Scope.of(model.graph))
    if info.scales is None or info.mode is None or not any(
            shrinks(float(value)) for value in info.scales):
        return None
    graph = onnx.GraphProto()
    graph.CopyFrom(model.graph)
    scales = info.scales_input or f"{node.output[0]}_literal_scales"
    if not info.scales_input:
        graph.initializer.append(numpy_helper.from_array(
            np.asarray(info.scales, np.float32), scales))
    resize = helper.make_node("Resize", [node.input[0], scales], list(node.output),
                              name=node.name, mode=info.mode)
    del graph.node[:]
    graph.node.append(resize)
    literal = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])
    literal.ir_version = max(model.ir_version, 5)
    return literal
