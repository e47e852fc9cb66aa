"""The nodes a model-level diff compares: every ``Upsample`` and ``Resize``, with the
convention its own definition gives it (:func:`compared_nodes`), and the scales it ran with
(:func:`run_scales`), in the explainer's terms.

An Upsample's convention is Upsample's. A Resize's is its attributes':
``coordinate_transformation_mode`` and ``nearest_mode`` (Resize-11 on; Resize-10 is
Upsample-9 without the rule that scales are >= 1), its scales or, with ``sizes``, out/in.
What the explainer cannot name (cubic, ``tf_crop_and_resize``, a mode it does not know) is
said in words instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import onnx

from .._spec.rules import output_size
from .._spec.versions import DEFAULT_DOMAINS
from ..onnx._graphs import Scope, is_upsample, node_label, walk
from ..onnx._node import describe
from ._explain._conventions import LINEAR_TRANSFORMS, NEAREST_MODES, TRANSFORMS, Recipe

__all__ = ["ComparedNode", "compared_nodes", "run_scales"]

# Resize's versions, and the defaults of its attributes from version 11 on
_RESIZE_VERSIONS = (10, 11, 13, 18, 19)
_DEFAULT_TRANSFORM, _DEFAULT_NEAREST = "half_pixel", "round_prefer_floor"
# the explainer's nearest roundings that are Resize's nearest_mode values
_RESIZE_ROUNDINGS = NEAREST_MODES[:4]


@dataclass(frozen=True)
class ComparedNode:
    """One Upsample or Resize of a model, as a diff compares it.

    Attributes
    ----------
    label : str
        The node as messages name it (its name, or ``Op#index``, with its place).
    op : str
        The operator and its version: ``Upsample-9``, ``Resize-13``.
    output, x : str
        Its output Y and its input X.
    index : int or None
        Its place in the main graph; None inside a subgraph or function (not observed).
    where : str
        ``""`` for the main graph, else the subgraph or function holding it.
    mode : str or None
        ``"nearest"`` or ``"linear"``; None where the explainer knows no such mode.
    convention : Recipe or None
        The convention the node's own definition gives it; None where the explainer has
        none (then ``unexplained`` says why).
    words : str
        That convention as its attributes say it (``Resize half_pixel (linear)``).
    unexplained : str
        Why the explainer cannot say what a runtime did with this node (``""`` if it can).
    scales, sizes : str
        The names of its scales and sizes inputs (``""`` where it has none).
    constant_scales : tuple of float or None
        Its scales where the model holds them as constants.
    axes : tuple of int or None
        Resize-18's ``axes``: the axes its scales are given for.
    """

    label: str
    op: str
    output: str
    x: str
    index: int | None
    where: str
    mode: str | None
    convention: Recipe | None
    words: str
    unexplained: str = ""
    scales: str = ""
    sizes: str = ""
    constant_scales: tuple[float, ...] | None = None
    axes: tuple[int, ...] | None = None

    @property
    def reads(self) -> list[str]:
        """The values a run exposes to compare and explain the node: X, Y and the scales or
        sizes that are not constants."""
        computed = [self.scales] if self.scales and self.constant_scales is None else []
        return [self.x, self.output, *computed, *([self.sizes] if self.sizes else [])]

    def conventions_named(self) -> tuple[str, ...]:
        """The explainer's names of the node's own convention (with ``sizes``, out/in, or
        the scale that gives the output's size: one output cannot tell them apart)."""
        if self.convention is None:
            return ()
        if not self.sizes:
            return (self.convention.name,)
        other = "scale" if self.convention.source == "sizes" else "sizes"
        twin = Recipe(self.convention.mode, self.convention.transform, other,
                      rounding=self.convention.rounding)
        return (self.convention.name, twin.name)


def _resize_version(opset: int | None) -> int:
    return max(v for v in _RESIZE_VERSIONS if v <= max(opset or 10, 10))


def _attributes(node: onnx.NodeProto) -> dict[str, object]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _text(value: object, default: str) -> str:
    return value.decode() if isinstance(value, bytes) else default if value is None else str(value)


def _upsample(node: onnx.NodeProto, label: str, opset: int | None, scope: Scope,
              index: int | None, where: str) -> ComparedNode:
    info = describe(node, label, opset, scope, legacy_modes=True)
    op = "Upsample" if info.version is None else f"Upsample-{info.version}"
    constant = None if info.scales is None else tuple(
        float(v) for v in np.asarray(info.scales, np.float32).reshape(-1))
    if info.mode is None:
        return ComparedNode(label, op, node.output[0], node.input[0], index, where, None,
                            None, f"Upsample, mode {info.mode_name!r}",
                            f"mode {info.mode_name!r} is no Upsample mode")
    return ComparedNode(label, op, node.output[0], node.input[0], index, where, info.mode,
                        Recipe(info.mode), f"Upsample {info.mode}",
                        scales=info.scales_input or "", constant_scales=constant)


def _resize(node: onnx.NodeProto, label: str, opset: int | None, scope: Scope,
            index: int | None, where: str) -> ComparedNode:
    version = _resize_version(opset)
    attributes = _attributes(node)
    mode = _text(attributes.get("mode"), "nearest")
    inputs = list(node.input) + [""] * 4
    if version == 10:
        transform, rounding, scales, sizes = "asymmetric", "floor", inputs[1], ""
    else:
        transform = _text(attributes.get("coordinate_transformation_mode"),
                          _DEFAULT_TRANSFORM)
        rounding = _text(attributes.get("nearest_mode"), _DEFAULT_NEAREST)
        scales, sizes = inputs[2], inputs[3]
    words = (f"Resize {transform} + {rounding}" if mode == "nearest"
             else f"Resize {transform} ({mode})") + (" with sizes" if sizes else "")
    listed = attributes.get("axes")
    axes = tuple(int(a) for a in listed) if isinstance(listed, list) else None
    values = scope.constant(scales) if scales else None
    base = ComparedNode(
        label, f"Resize-{version}", node.output[0], node.input[0], index, where,
        mode if mode in ("nearest", "linear") else None, None, words, "", scales, sizes,
        None if values is None else tuple(float(v) for v in np.asarray(values).reshape(-1)),
        axes)
    known = TRANSFORMS if mode == "nearest" else LINEAR_TRANSFORMS
    if base.mode is None:
        return replace(base, unexplained=f"mode {mode!r}: the explainer knows nearest and "
                       "linear")
    if transform not in known:
        return replace(base, unexplained=f"coordinate_transformation_mode {transform!r}: the "
                       f"explainer knows {', '.join(known)} in {mode} mode")
    if mode == "nearest" and rounding not in _RESIZE_ROUNDINGS:
        return replace(base, unexplained=f"nearest_mode {rounding!r} is no Resize nearest mode")
    source = "sizes" if sizes and transform != "align_corners" else "scale"
    recipe = Recipe(mode, transform, source, rounding=rounding if mode == "nearest" else "floor")
    return replace(base, convention=recipe)


def compared_nodes(model: onnx.ModelProto) -> list[ComparedNode]:
    """Every Upsample and Resize (default domain) of ``model``: the main graph's first, in
    order, then those of subgraphs and functions (``index`` None: not observed)."""
    found: list[ComparedNode] = []
    nested: list[ComparedNode] = []
    for site in walk(model):
        main = site.path == "" and site.function is None
        for index, node in enumerate(site.owner.node):
            if not (node.input and node.output and node.input[0] and node.output[0]):
                continue
            resize = node.op_type == "Resize" and node.domain in DEFAULT_DOMAINS
            if not (is_upsample(node) or resize):
                continue
            read = _upsample if is_upsample(node) else _resize
            label = node_label(site, node, index)
            (found if main else nested).append(read(
                node, label, site.opset, site.scope, index if main else None,
                "" if main else site.path))
    return found + nested


def run_scales(node: ComparedNode, values: dict[str, np.ndarray], x_shape: tuple[int, ...],
               y_shape: tuple[int, ...]) -> tuple[float, ...] | str:
    """The scales ``node`` ran with, one per axis of X (float32, as ONNX stores them), or
    why the explainer cannot take them. With ``sizes`` (no scales), the scales that give
    the output's size: out/in, raised by the float32 steps that make Upsample's output
    length (``trunc(in * scale)``, exact past 2**24) reach it."""
    rank = len(x_shape)
    given = node.constant_scales
    if given is None and node.scales and node.scales in values:
        given = tuple(float(v) for v in np.asarray(values[node.scales]).reshape(-1))
    if given:
        if node.axes is not None:
            full = [1.0] * rank
            for axis, scale in zip(node.axes, given, strict=False):
                full[axis % rank] = scale
            given = tuple(full)
        scales = tuple(float(np.float32(s)) for s in given)
    elif len(y_shape) == rank:
        scales = tuple(_sized(n_in, n_out) for n_in, n_out in zip(x_shape, y_shape, strict=True))
    else:
        return f"its output has rank {len(y_shape)}, its input {rank}"
    if len(scales) != rank:
        return f"{len(scales)} scales for an input of rank {rank}"
    if any(not np.isfinite(s) or s < 1 for s in scales):
        return (f"its scales {[round(s, 6) for s in scales]} shrink an axis: the explainer "
                "knows conventions that enlarge")
    return scales


def _sized(n_in: int, n_out: int) -> float:
    """The smallest float32 scale at or above out/in whose output length (Upsample's rule,
    ``_spec.rules.output_size``) reaches ``n_out``."""
    if n_in == 0:
        return 1.0
    scale = np.float32(n_out / n_in)
    while output_size(n_in, scale) < n_out:
        scale = np.nextafter(scale, np.float32(np.inf))
    return float(scale)
