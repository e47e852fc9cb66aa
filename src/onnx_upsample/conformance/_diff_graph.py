"""Where a difference between two runtimes begins in a model, and where it goes: every
main-graph node's outputs compared in the graph's (topological) order (:func:`trace`), then
the nodes where differences begin and the nodes and outputs each one reaches
(:func:`origins`).

A difference begins at a node whose output differs while every value it reads (inputs, and
what its subgraphs read from the graph) is the same in both runtimes. A node whose input
already differs is downstream of a difference and inherits it; it is not where one begins,
unless it is shown to add one of its own: an Upsample or Resize that, run alone in both
runtimes on one input, still differs (the caller says which, in ``own``). Other nodes are
not run alone (that is one run per node), so a difference of their own behind an inherited
one is reported as inherited. A node one runtime refused is not compared (its output came
from the other runtime); it hands on the differences its inputs carry.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import onnx

from .._spec.versions import DEFAULT_DOMAINS
from ..onnx._compare import bits_equal
from ..onnx._graphs import node_label, walk
from ..onnx._probe import reads
from ._diff_result import Origin
from ._diff_values import ValueDifference, compare

__all__ = ["NodeTrace", "op_words", "origins", "trace"]

Values = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class NodeTrace:
    """One main-graph node's outputs compared between the runtimes.

    Attributes
    ----------
    index : int
        Its place in the main graph.
    label, op : str
        The node as messages name it, and its operator (``Conv``, ``com.microsoft.Gelu``).
    reads : tuple of str
        The values it reads.
    outputs : tuple of ValueDifference
        Each of its outputs that both runs hold, compared.
    inputs_identical : bool
        Whether every value it reads is the same in both runtimes (False where a run did
        not return one of them).
    refused : bool
        Whether a runtime refused it (its outputs came from the other: not compared).
    """

    index: int
    label: str
    op: str
    reads: tuple[str, ...]
    outputs: tuple[ValueDifference, ...]
    inputs_identical: bool
    refused: bool = False

    @property
    def differs(self) -> bool:
        """Whether one of its outputs differs between the runtimes."""
        return any(not output.identical for output in self.outputs)


def op_words(node: onnx.NodeProto) -> str:
    """The operator as a line names it: ``Conv``, or ``com.microsoft.FusedConv``."""
    return node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"


def trace(model: onnx.ModelProto, first: Values, second: Values,
          refused: Collection[str]) -> list[NodeTrace]:
    """Every main-graph node of ``model`` with its outputs compared between the runtimes'
    values ``first`` and ``second`` (a node whose output is in ``refused`` ran in one
    runtime only)."""
    main = next(walk(model, functions=False))
    same: dict[str, bool] = {}

    def identical(name: str) -> bool:
        # a value a run did not return is not known to be the same: a node reading it is
        # not where a difference begins
        if name not in same:
            same[name] = name in first and name in second and bits_equal(
                np.asarray(first[name]), np.asarray(second[name]))
        return same[name]

    found = []
    for index, node in enumerate(model.graph.node):
        read = tuple(reads(node))
        outputs = tuple(compare(name, first[name], second[name]) for name in node.output
                        if name and name in first and name in second)
        for output in outputs:
            same[output.name] = output.identical
        found.append(NodeTrace(index, node_label(main, node, index), op_words(node), read,
                               outputs, all(identical(name) for name in read),
                               any(name in refused for name in node.output)))
    return found


def origins(traces: Sequence[NodeTrace], own: Mapping[int, bool],
            graph_outputs: Sequence[str]) -> tuple[list[Origin], dict[int, tuple[str, ...]]]:
    """The nodes where differences begin, in order, each with the nodes and model outputs
    it reaches; and for each node whose input differs, the origins (labels) its input's
    difference comes from.

    ``own`` says, for a node whose input and output both differ, whether it adds a
    difference of its own (an Upsample or Resize run alone on one input); nodes missing
    from it inherit only.
    """
    carried: dict[str, frozenset[int]] = {}  # a differing value: the origins behind it
    begun: dict[int, frozenset[int]] = {}  # an origin: the origins behind its input
    reached: dict[int, list[str]] = {}
    sources: dict[int, tuple[str, ...]] = {}
    labels = {node.index: node.label for node in traces}
    for node in traces:
        behind = frozenset().union(*(carried.get(name, frozenset()) for name in node.reads))
        if behind:
            sources[node.index] = tuple(labels[index] for index in sorted(behind))
        if not node.differs:
            continue
        for index in behind:
            reached[index].append(node.label)
        begins = not node.refused and (node.inputs_identical or own.get(node.index, False))
        if begins:
            begun[node.index], reached[node.index] = behind, []
        mine = behind | {node.index} if begins else behind
        for output in node.outputs:
            if not output.identical:
                carried[output.name] = mine
    found = []
    for node in traces:
        if node.index not in begun:
            continue
        difference = next(output for output in node.outputs if not output.identical)
        outputs = tuple(name for name in graph_outputs
                        if node.index in carried.get(name, frozenset()))
        found.append(Origin(node.label, node.op, difference,
                            tuple(labels[index] for index in sorted(begun[node.index])),
                            tuple(reached[node.index]), outputs))
    return found, sources
