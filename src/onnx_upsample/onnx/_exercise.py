"""Inputs under which every Upsample enlarges, for a verification, and what to give where
none do.

A verification on inputs under which a computed scale comes to 1 compares copies: PyTorch
exports scales as ``size / Shape(x)``, and random inputs whose symbolic dimensions all get
one size make every such scale 1. Distinct symbolic dimensions get distinct sizes here (N,
H, W, H2, W2 are five sizes), in a few patterns a verification tries in order until every
Upsample enlarges (:func:`shape_candidates`); a node that never did is named with the inputs
its scales come from (:func:`inputs_behind`) and the option that gives them
(:func:`shape_hint`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx
from onnx import ValueInfoProto

from ._feeds import FREE_DIMENSION

__all__ = ["declared_dims", "inputs_behind", "shape_candidates", "shape_hint"]

# The largest size a pattern gives a symbolic dimension (2**6): enough to enlarge, small
# enough to run a real network in a verification.
_LARGEST = 64


def declared_dims(value: ValueInfoProto) -> list[int | str]:
    """The declared dimensions of graph input ``value``: numbers, and for each symbolic one
    its name (an unnamed one gets a name of its own: it is a size of its own)."""
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not tensor.HasField("shape"):
        return []
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or f"{value.name}:{axis}")
            for axis, d in enumerate(tensor.shape.dim)]


def shape_candidates(inputs: Sequence[ValueInfoProto],
                     fixed: Mapping[str, Sequence[int]]) -> list[dict[str, list[int]]]:
    """Shapes to make up the inputs with, in the order to try them.

    Parameters
    ----------
    inputs : sequence of ValueInfoProto
        The graph inputs to make up.
    fixed : mapping of str to sequence of int
        Shapes already known (arrays given, shapes asked for): their symbolic dimensions
        take the sizes found there, for every input that shares the name.

    Returns
    -------
    list of dict
        One shape per input of ``inputs`` (those with a declared shape) in each. Where
        every size is known, one entry; else the symbolic dimensions in order of first
        appearance get distinct powers of two ascending (2, 4, 8, ...: a later input is
        larger, as a route input beside a feature map), then descending, then all
        :data:`FREE_DIMENSION`.
    """
    bound: dict[str, int] = {}
    for value in inputs:
        dims = declared_dims(value)
        shape = fixed.get(value.name)
        if shape is not None and len(shape) == len(dims):
            bound.update((d, int(n)) for d, n in zip(dims, shape, strict=True)
                         if isinstance(d, str))
    free = list(dict.fromkeys(d for value in inputs if value.name not in fixed
                              for d in declared_dims(value)
                              if isinstance(d, str) and d not in bound))
    ascending = [min(2 ** (1 + i), _LARGEST) for i in range(len(free))]
    patterns = [ascending, ascending[::-1], [FREE_DIMENSION] * len(free)] if free else [[]]
    candidates: list[dict[str, list[int]]] = []
    for sizes in patterns:
        sized = {**bound, **dict(zip(free, sizes, strict=True))}
        shapes = {value.name: list(fixed[value.name]) if value.name in fixed else
                  [d if isinstance(d, int) else sized[d] for d in declared_dims(value)]
                  for value in inputs if value.name in fixed or declared_dims(value)}
        if shapes not in candidates:
            candidates.append(shapes)
    return candidates


def inputs_behind(model: onnx.ModelProto, name: str) -> list[str]:
    """The graph inputs (not initializers) that main-graph value ``name`` is computed from."""
    producers = {out: node for node in model.graph.node for out in node.output if out}
    initializers = {tensor.name for tensor in model.graph.initializer}
    inputs = {value.name for value in model.graph.input} - initializers
    found, seen, todo = [], set(), [name]
    while todo:
        current = todo.pop()
        if current in seen or not current:
            continue
        seen.add(current)
        if current in inputs:
            found.append(current)
        elif current in producers:
            todo.extend(producers[current].input)
    return sorted(found)


def shape_hint(values: Sequence[ValueInfoProto], options: bool) -> str:
    """How to give ``values``: ``--input-shape feat=N,16,H,W (or --input NAME=FILE.npy)``
    on the command line, ``input_shapes={'feat': ['N', 16, 'H', 'W']} (or inputs=...)`` in
    Python (symbolic dimensions named, for the user to fill)."""
    if options:
        return " ".join(f"--input-shape {value.name}="
                        f"{','.join(str(d) for d in declared_dims(value)) or 'D0,D1,...'}"
                        for value in values) + " (or --input NAME=FILE.npy)"
    shapes = {value.name: declared_dims(value) for value in values}
    return f"input_shapes={shapes!r} (or inputs={{NAME: array}})"
