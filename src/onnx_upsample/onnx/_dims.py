"""Operators' output sizes as :class:`~._bounds.Bound` s of their input sizes.

Each rule takes the sizes of a node's inputs (a :class:`Bound` per dimension; None where a
dimension, or the whole shape, is not known) and the constants it reads, and gives the sizes
of its output the way onnxruntime computes them, for every input size: a padded Conv's size
is exact, a strided one's lies between a floor and a ceil. ``_shape_bounds`` walks a graph
with them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TypeAlias

import numpy as np
import onnx
from onnx import AttributeProto

from ._bounds import ONE, Bound, Lin

__all__ = ["BROADCAST", "GLOBAL_POOLS", "POOLS", "SAME_SHAPE", "Dims", "broadcast_dims",
           "concat_dims", "conv_dims", "conv_transpose_dims", "int_attribute",
           "ints_attribute", "pad_dims", "pool_dims", "resized_dims", "squeeze_dims"]

# A shape: a Bound per dimension (None: that dimension unknown), or None (the rank unknown).
Dims: TypeAlias = "tuple[Bound | None, ...] | None"

# 2**-23: float32's relative rounding error, doubled: room for the product of a dimension and
# a non-integer float32 scale, as onnxruntime's size rule computes it
_F32_SLACK = Fraction(1, 2 ** 23)

# Operators whose first output has the shape of their first input.
SAME_SHAPE = frozenset({
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BatchNormalization", "Cast",
    "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "CumSum", "Dropout", "Elu", "Erf", "Exp",
    "Floor", "Gelu", "GroupNormalization", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
    "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LayerNormalization", "LeakyRelu", "Log",
    "LogSoftmax", "LpNormalization", "MeanVarianceNormalization", "Mish", "Neg", "Not",
    "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
    "Softmax", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
})
# Operators whose output has the broadcast shape of their inputs.
BROADCAST = frozenset({
    "Add", "And", "BitShift", "Div", "Equal", "Greater", "GreaterOrEqual", "Less",
    "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul", "Or", "PRelu", "Pow", "Sub", "Sum",
    "Where", "Xor",
})
POOLS = frozenset({"AveragePool", "LpPool", "MaxPool"})
GLOBAL_POOLS = frozenset({"GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool"})


def ints_attribute(node: onnx.NodeProto, name: str) -> list[int] | None:
    """The integers of attribute ``name`` (one for an INT attribute); None where absent."""
    for attribute in node.attribute:
        if attribute.name == name and not attribute.ref_attr_name:
            if attribute.type == AttributeProto.INTS:
                return [int(v) for v in attribute.ints]
            if attribute.type == AttributeProto.INT:
                return [int(attribute.i)]
    return None


def int_attribute(node: onnx.NodeProto, name: str, default: int) -> int | None:
    """The INT attribute ``name``, ``default`` where absent, None where it is not an int."""
    for attribute in node.attribute:
        if attribute.name == name:
            if attribute.ref_attr_name or attribute.type != AttributeProto.INT:
                return None
            return int(attribute.i)
    return default


def _text_attribute(node: onnx.NodeProto, name: str, default: str) -> str | None:
    for attribute in node.attribute:
        if attribute.name == name:
            if attribute.ref_attr_name or attribute.type != AttributeProto.STRING:
                return None
            return attribute.s.decode("utf-8", "replace")
    return default


def broadcast_dims(shapes: list[Dims]) -> Dims:
    """The shape of a broadcast of ``shapes``: a dimension 1 takes the other's; different
    sizes that may not be 1 leave it unknown, unless one is a constant (which the others
    must then be, or 1)."""
    if not shapes or any(shape is None for shape in shapes):
        return None
    rank = max(len(shape) for shape in shapes if shape is not None)
    result: list[Bound | None] = []
    for axis in range(rank):
        dims = [shape[len(shape) - rank + axis] for shape in shapes
                if shape is not None and len(shape) - rank + axis >= 0]
        others = [d for d in dims if d is None or d.value() != 1]
        if not others:
            result.append(ONE)
        elif all(d is not None and d == others[0] for d in others):
            result.append(others[0])
        else:
            result.append(next((d for d in others if d is not None and d.value()), None))
    return tuple(result)


def _window(node: onnx.NodeProto, x: tuple[Bound | None, ...], kernel: list[int],
            ceil_mode: bool) -> Dims:
    """The spatial sizes of a convolution or pooling window over ``x``'s axes 2..."""
    spatial = len(x) - 2
    if len(kernel) != spatial:
        return None
    strides = ints_attribute(node, "strides") or [1] * spatial
    dilations = ints_attribute(node, "dilations") or [1] * spatial
    pads = ints_attribute(node, "pads") or [0] * (2 * spatial)
    auto_pad = _text_attribute(node, "auto_pad", "NOTSET")
    if len(strides) != spatial or len(dilations) != spatial or len(pads) != 2 * spatial:
        return None
    result: list[Bound | None] = []
    for axis in range(spatial):
        n, stride = x[axis + 2], strides[axis]
        reach = dilations[axis] * (kernel[axis] - 1) + 1
        if n is None or stride < 1:
            result.append(None)
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            result.append(n.ceil_div(stride))
        elif auto_pad in ("VALID", "NOTSET"):
            padded = pads[axis] + pads[axis + spatial] if auto_pad == "NOTSET" else 0
            # onnxruntime divides in C (toward zero): an input shorter than the window still
            # gives 1 (MaxPool 2x2 over a height of 1)
            span = n + Bound.exact(padded - reach)
            low = span.trunc_div(stride) + ONE
            # with ceil_mode, it rounds up and may then drop a last window that starts in the
            # padding: one below the quotient rounded down, up to it rounded up
            result.append(Bound((low - ONE).lo, (span.ceil_div(stride) + ONE).hi) if ceil_mode
                          else low)
        else:
            result.append(None)
    return tuple(result)


def _kernel(node: onnx.NodeProto, w: tuple[Bound | None, ...]) -> list[int] | None:
    kernel = ints_attribute(node, "kernel_shape")
    if kernel is not None:
        return kernel
    values = [d.value() if d is not None else None for d in w[2:]]
    return None if any(v is None for v in values) else [int(v) for v in values if v is not None]


def conv_dims(node: onnx.NodeProto, x: Dims, w: Dims) -> Dims:
    """Conv's output: (N, M, spatial sizes) for X (N, C, ...) and W (M, C/group, k...)."""
    if x is None or w is None or len(w) != len(x) or len(x) < 3:
        return None
    kernel = _kernel(node, w)
    spatial = None if kernel is None else _window(node, x, kernel, False)
    return None if spatial is None else (x[0], w[0], *spatial)


def pool_dims(node: onnx.NodeProto, x: Dims) -> Dims:
    """MaxPool's, AveragePool's, LpPool's output (and MaxPool's indices)."""
    kernel = ints_attribute(node, "kernel_shape")
    if x is None or kernel is None or len(x) < 3:
        return None
    spatial = _window(node, x, kernel, bool(int_attribute(node, "ceil_mode", 0)))
    return None if spatial is None else (x[0], x[1], *spatial)


def conv_transpose_dims(node: onnx.NodeProto, x: Dims, w: Dims) -> Dims:
    """ConvTranspose's output, where no output_shape or auto_pad sets it otherwise."""
    if x is None or w is None or len(w) != len(x) or len(x) < 3:
        return None
    if (ints_attribute(node, "output_shape") is not None
            or _text_attribute(node, "auto_pad", "NOTSET") != "NOTSET"):
        return None
    spatial = len(x) - 2
    kernel = _kernel(node, w)
    strides = ints_attribute(node, "strides") or [1] * spatial
    dilations = ints_attribute(node, "dilations") or [1] * spatial
    pads = ints_attribute(node, "pads") or [0] * (2 * spatial)
    extra = ints_attribute(node, "output_padding") or [0] * spatial
    group, channels = int_attribute(node, "group", 1), w[1]
    if kernel is None or len(kernel) != spatial or group is None or channels is None:
        return None
    result: list[Bound | None] = []
    for axis in range(spatial):
        n = x[axis + 2]
        reach = dilations[axis] * (kernel[axis] - 1) + 1
        result.append(None if n is None else (n - ONE).times(Fraction(strides[axis]))
                      + Bound.exact(extra[axis] + reach - pads[axis] - pads[axis + spatial]))
    return (x[0], channels.times(Fraction(group)), *result)


def concat_dims(node: onnx.NodeProto, shapes: list[Dims]) -> Dims:
    """Concat's output: the sizes along ``axis`` added."""
    axis = int_attribute(node, "axis", 0)
    if not shapes or axis is None or any(s is None for s in shapes):
        return None
    rank = len(shapes[0] or ())
    if any(len(s or ()) != rank for s in shapes) or not -rank <= axis < rank:
        return None
    axis %= rank
    total: Bound | None = Bound.exact(0)
    for shape in shapes:
        assert shape is not None
        part = shape[axis]
        total = None if total is None or part is None else total + part
    first = shapes[0]
    assert first is not None
    return tuple(total if index == axis else first[index] for index in range(rank))


def resized_dims(x: Dims, scales: list[float] | None) -> Dims:
    """Upsample's or Resize's output for constant ``scales``: ``trunc(float(n) * scale)``,
    onnxruntime's rule (exact for a whole scale, within float32's rounding otherwise)."""
    if x is None or scales is None or len(scales) != len(x):
        return None
    result: list[Bound | None] = []
    for n, scale in zip(x, scales, strict=True):
        exact = Fraction(float(np.float32(scale)))
        if n is None or exact < 0:
            result.append(None)
        elif exact.denominator == 1:
            result.append(n.times(exact))
        else:
            low, high = n.times(exact * (1 - _F32_SLACK)), n.times(exact * (1 + _F32_SLACK))
            result.append(Bound(None if low.lo is None else low.lo - Lin.of(1), high.hi))
    return tuple(result)


def pad_dims(x: Dims, pads: list[int] | None) -> Dims:
    """Pad's output for constant ``pads`` (begins, then ends)."""
    if x is None or pads is None or len(pads) != 2 * len(x):
        return None
    rank = len(x)
    return tuple(None if n is None else n + Bound.exact(pads[a] + pads[a + rank])
                 for a, n in enumerate(x))


def squeeze_dims(op: str, x: Dims, axes: list[int] | None) -> Dims:
    """Squeeze's or Unsqueeze's output for constant ``axes``."""
    if x is None or axes is None:
        return None
    if op == "Squeeze":
        rank = len(x)
        drop = {a % rank for a in axes if -rank <= a < rank}
        return tuple(d for a, d in enumerate(x) if a not in drop)
    rank = len(x) + len(axes)
    insert = {a % rank for a in axes if -rank <= a < rank}
    rest = iter(x)
    return tuple(ONE if a in insert else next(rest) for a in range(rank))
