"""How onnxruntime's Resize-10 rounds nearest indices, for every input size: what ``upgrade``
writes for a Resize-10 node, and what ``check`` says where it cannot.

onnxruntime's Resize-10 maps output pixel o of an axis to input ``o / scale`` and rounds it
down where that axis' scale is >= 1 and up where it is below 1 (docs/peers.md §6). Resize-11
and later have one ``nearest_mode`` for every axis and every run, so a Resize-10 keeps its
outputs there only where each scale is on one side of 1 for every input size: ``floor`` where
none is below 1, ``ceil`` where none is above 1 (a scale of exactly 1 maps every pixel to
itself either way). For constant scales that is read off; for scales computed from shapes,
``_bounds`` proves it where it can (PyTorch's ``size=`` export divides sizes that never fall
below the input's by the input's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import onnx
from onnx import TypeProto

from ._bounds import Side, rounding_of, side_of
from ._fixes import Action, Fix
from ._fold import from_shapes, static_value
from ._graphs import Site
from ._shape_bounds import ShapeBounds, scale_sides

__all__ = ["Resize10Rounding", "resize10_rounding"]

_SIDE_WORDS = {"up": ">= 1", "down": "<= 1", "one": "1", None: "not known"}


@dataclass(frozen=True)
class Resize10Rounding:
    """How a Resize-10 with computed scales rounds nearest indices for every input size.

    Attributes
    ----------
    rounding : {"floor", "ceil"} or None
        The ``nearest_mode`` of the Resize-11 (and later) with the same outputs; None where
        there is none.
    problem : str
        Where ``rounding`` is None: why, with the scales' side of 1 on each axis.
    fix : Fix or None
        Where ``rounding`` is None: what makes the node convertible.
    """

    rounding: Literal["floor", "ceil"] | None
    problem: str = ""
    fix: Fix | None = None


def _sides_words(sides: Sequence[Side] | None) -> str:
    if sides is None:
        return "not followed"
    return ", ".join(f"axis {axis}: {_SIDE_WORDS[side]}" for axis, side in enumerate(sides))


def resize10_rounding(site: Site, node: onnx.NodeProto, label: str, bounds: ShapeBounds,
                      types: dict[str, TypeProto]) -> Resize10Rounding:
    """How the nearest Resize-10 ``node``, whose scales are computed, rounds for every input
    size (``bounds``: what is known of its site's values; ``types``: its inferred types, for
    whether ``fold_scales`` can store the scales as a constant)."""
    scales = node.input[1]
    sides = scale_sides(bounds, scales)
    rounding = rounding_of(sides)
    if rounding is not None:
        return Resize10Rounding(rounding)
    mixed = sides is not None and "up" in sides and "down" in sides
    if mixed:
        what = "enlarge some axes and shrink others"
    else:
        what = ("are not shown by the graph to be >= 1 (or <= 1) on every axis for every "
                "input size")
    problem = (
        f"Resize-10 node {label!r} has nearest scales computed at run time "
        f"({site.scope.origin(scales)}) that {what} ({_sides_words(sides)}); onnxruntime's "
        "Resize-10 rounds nearest indices down on an axis whose scale is >= 1 and up below 1, "
        "which no single nearest_mode of Resize-11 and later does for every input size")
    value = None if mixed else static_value(site, types, scales)
    if value is not None and rounding_of([side_of(float(v)) for v in value.reshape(-1)]):
        fix = Fix("{0} stores the scales as a constant (they depend on constants and static "
                  "shapes only), which upgrade then converts", (Action("fold_scales"),))
    else:
        # no command converts it: its rounding depends on the input's size
        also = "" if mixed or value is not None or not from_shapes(site, scales) else (
            "; where the input always has one size, give it to fold (--input-shape "
            "NAME=D0,D1,..., input_shapes= in Python) and upgrade the folded model")
        fix = Fix(f"keep the model at opset 10, where Resize-10 rounds so by itself{also}")
    return Resize10Rounding(None, problem, fix)
