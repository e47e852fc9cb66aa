"""Inputs under which every Upsample enlarges, for a verification (``verify_upgrade``) and
a comparison of runtimes (``conformance.diff``), and what to give where none do.

A verification on inputs under which a computed scale comes to 1 compares copies: PyTorch
exports scales as ``size / Shape(x)``, and random inputs whose symbolic dimensions all get
one size make every such scale 1. Distinct symbolic dimensions get distinct sizes here (N,
H, W, H2, W2 are five sizes), in a few patterns a verification tries in order until every
Upsample enlarges (:func:`shape_candidates`, tried by :func:`search`, the one search both
callers run with a runtime of their own). A node is exercised when it changed the size of X
and its output has elements (:func:`exercised`); one that copies X whatever the inputs
(:func:`copies`) is no gap. A node never exercised is named with the inputs its scales come
from (:func:`inputs_behind`) and the option that gives them (:func:`shape_hint`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, NamedTuple, TypeVar

import numpy as np
import onnx
from onnx import ValueInfoProto

from .._spec.spelling import Spelling
from ._feeds import FREE_DIMENSION, check_feeds, check_tensor_sizes, random_feeds
from ._report import shape_words

__all__ = ["Probe", "Search", "copies", "declared_dims", "declared_shapes", "empty_output",
           "exercised", "inputs_behind", "search", "shape_candidates", "shape_hint"]

T = TypeVar("T")

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


class Probe(NamedTuple):
    """A node the search watches: its input X, its output Y, and whether it copies X whatever
    the inputs (constant scales all 1), so that not resizing is no gap."""

    x: str
    output: str
    copies: bool


def copies(constant: Sequence[float] | None) -> bool:
    """Whether a node with these constant scales (None where they are computed) copies X
    whatever the inputs (all 1, or none at rank 0): not resizing is then no gap."""
    return constant is not None and all(scale == 1 for scale in constant)


def exercised(x_shape: Sequence[int], y_shape: Sequence[int]) -> bool:
    """Whether a node's run exercised it: it changed the size of X (enlarged it; or shrank
    it, as the literal meaning of scales below 1: scales that came to 1 copy X) and its
    output has elements to compare."""
    return tuple(x_shape) != tuple(y_shape) and math.prod(y_shape) > 0


def empty_output(label: str, x_shape: Sequence[int], y_shape: Sequence[int]) -> str:
    """The warning for a node not exercised because its output has no element."""
    return (f"node {label!r} was not exercised: its output is empty (X {shape_words(x_shape)} "
            f"-> {shape_words(y_shape)}), so no element of it was compared; give inputs "
            "whose sizes are not 0")


class Search(NamedTuple, Generic[T]):
    """What :func:`search` found: the inputs, what ``attempt`` made of them, how many sets
    of shapes were tried, and whether any of them ran (else the first set's)."""

    feeds: dict[str, np.ndarray]
    result: T
    tried: int
    ran: bool


def search(model: onnx.ModelProto, declared: Sequence[ValueInfoProto],
           given: Mapping[str, np.ndarray], fixed: Mapping[str, Sequence[int]],
           scales: Mapping[str, int], seed: int, probes: Sequence[Probe],
           attempt: Callable[[dict[str, np.ndarray]],
                             tuple[T, Mapping[str, np.ndarray] | None]]) -> Search[T]:
    """The inputs under which the most ``probes`` are exercised (the first set of
    :func:`shape_candidates` under which all are), made up with ``seed``.

    ``attempt`` runs the model on a set of inputs: what it keeps of the run, and the values
    it computed (None where it did not run, and the next set is tried). The result is the
    best set's; where none ran, the first's, with ``ran`` False (the caller says why).
    """
    best: tuple[dict[str, np.ndarray], T, int] | None = None
    first: tuple[dict[str, np.ndarray], T] | None = None
    tried = 0
    for candidate in shape_candidates([v for v in declared if v.name not in given], fixed):
        feeds = random_feeds(declared, given, scales, seed, candidate)
        check_feeds(declared, feeds)
        check_tensor_sizes(model, feeds)
        tried += 1
        kept, values = attempt(feeds)
        first = first or (feeds, kept)
        if values is None:
            continue
        idle = sum(1 for probe in probes if not probe.copies and not exercised(
            np.shape(values[probe.x]), np.shape(values[probe.output])))
        if best is None or idle < best[2]:
            best = (feeds, kept, idle)
        if idle == 0:
            break
    if best is not None:
        return Search(best[0], best[1], tried, True)
    assert first is not None
    return Search(first[0], first[1], tried, False)


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


def declared_shapes(values: Sequence[ValueInfoProto]) -> dict[str, list[int | str]]:
    """Each of ``values`` by name, with its :func:`declared_dims`: what :func:`shape_hint`
    says to give."""
    return {value.name: declared_dims(value) for value in values}


def shape_hint(shapes: Mapping[str, Sequence[int | str]], spelling: Spelling) -> str:
    """How to give inputs of these shapes (:func:`declared_shapes`): ``--input-shape
    feat=N,16,H,W (or --input NAME=FILE.npy)`` on the command line, ``input_shapes={'feat':
    ['N', 16, 'H', 'W']} (or inputs=...)`` in Python (symbolic dimensions named, for the user
    to fill)."""
    if spelling.options:
        return " ".join(f"{spelling.argument('input_shapes')} {name}="
                        f"{','.join(str(d) for d in dims) or 'D0,D1,...'}"
                        for name, dims in shapes.items()) + (
                            f" (or {spelling.argument('inputs')} NAME=FILE.npy)")
    return f"input_shapes={dict(shapes)!r} (or inputs={{NAME: array}})"
