"""The slow reference of ONNX ``Upsample`` (versions 1, 7, 9, 10): the oracle.

Spec-literal: every rule of docs/semantics.md (§2) is one small function of plain scalars, and
the output is filled one element at a time by a Python loop. Nothing here is shared with the
fast path except argument checking, so each checks the other; the rules themselves are
checked against hand-computed cases from the operator documentation and onnxruntime 1.32.

Use it to check another implementation on small inputs; it is far too slow for real work.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from ._errors import UpsampleWarning
from ._resources import check_fits_in_memory
from ._spec.call import check_call

__all__ = ["upsample"]

EXACT_BELOW = 2**24  # float32 holds every integer below this, and no more


def _f32(value: float | np.floating) -> np.float32:
    return np.float32(value)


def output_length(n_in: int, scale: np.float32) -> int:
    """``trunc(f32(n_in) * f32(scale))``; the exact ``floor(n_in * scale)`` from 2**24 on."""
    product = _f32(n_in) * _f32(scale)
    if n_in < EXACT_BELOW and product < EXACT_BELOW:
        return int(product)
    return math.floor(n_in * Fraction(float(scale)))


def nearest_index(o: int, n_in: int, scale: np.float32) -> int:
    """Input index read by output index ``o`` of one axis (nearest mode)."""
    if o >= EXACT_BELOW:
        index = math.floor(Fraction(o) / Fraction(float(scale)))
    elif scale == 1.0:
        index = o
    else:
        index = int(_f32(o) / _f32(scale))  # float32 division, truncation
    return min(index, n_in - 1)


def linear_taps(o: int, n_in: int, scale: np.float32) -> list[tuple[int, np.float32]]:
    """The two (input index, float32 weight) pairs blended by output index ``o``."""
    coordinate: np.float32 | float
    if o < EXACT_BELOW:
        coordinate = _f32(o) if scale == 1.0 else _f32(o) / _f32(scale)
        coordinate = max(_f32(0), min(coordinate, _f32(n_in - 1)))
    else:
        coordinate = float(Fraction(o) / Fraction(float(scale)))  # correctly rounded f64
        coordinate = max(0.0, min(coordinate, float(n_in - 1)))
    i1 = min(int(coordinate), n_in - 1)
    i2 = min(i1 + 1, n_in - 1)
    if i1 == i2:
        return [(i1, _f32(0.5)), (i2, _f32(0.5))]
    if isinstance(coordinate, np.float32):  # float32 arithmetic below 2**24
        d1, d2 = abs(coordinate - _f32(i1)), abs(coordinate - _f32(i2))
    else:  # float64 distances, rounded once to float32
        d1, d2 = _f32(abs(coordinate - i1)), _f32(abs(coordinate - i2))
    return [(i1, d2), (i2, d1)]


def interpolated_axes(scales: Sequence[np.float32]) -> list[int]:
    """Axes linear mode interpolates: ORT 1.32's kernel table, else the scaled axes."""
    rank = len(scales)
    if rank == 2:
        return [0, 1]
    if rank == 3:
        return [0, 1, 2]
    if rank == 4 and scales[0] == 1 and scales[1] == 1:
        return [2, 3]
    if rank == 4 and scales[0] == 1 and scales[3] == 1:
        return [1, 2]
    if rank == 5 and scales[0] == 1 and scales[1] == 1:
        return [2, 3, 4]
    return [axis for axis in range(rank) if scales[axis] != 1]


def corner_weight(weights: Sequence[np.float32]) -> np.float32:
    """float32 product of per-axis weights given outermost first, multiplied innermost first."""
    product = weights[-1]
    for weight in reversed(weights[:-1]):
        product = _f32(product * weight)
    return product


def _quiet(nan: np.floating) -> np.floating:
    """The NaN with its quiet bit set, as x86 arithmetic returns it."""
    bits = np.array(nan).view(f"u{nan.itemsize}")
    quiet_bit = 1 << (8 * nan.itemsize - (10 if nan.itemsize == 4 else 13))
    # the mask in the bits' own dtype: a Python int would widen a 0-d array to int64 under
    # numpy 1.x's value-based casting, and the view back would then fail
    return (bits | bits.dtype.type(quiet_bit)).view(nan.dtype)[()]


def add(total: np.floating, term: np.floating) -> np.floating:
    """``total + term``; where both are NaN, the running sum's NaN (quieted) is kept.

    IEEE 754 leaves the payload open; x86's add returns its first operand's, which is what
    the compiled kernels give (numpy's scalar add returns the second one's).
    """
    if np.isnan(total) and np.isnan(term):
        return _quiet(total)
    return total + term


def weighted_sum(terms: Sequence[tuple[np.float32, float]], acc: type) -> np.floating:
    """Sum of weight*value in the accumulation type: first term first, left to right."""
    total = None
    for weight, value in terms:
        term = acc(weight) * acc(value)
        total = term if total is None else add(total, term)
    assert total is not None
    return total


def to_integer(value: np.floating, dtype: np.dtype) -> int:
    """Truncate toward zero, then saturate to the integer type's range."""
    info = np.iinfo(dtype)
    return max(info.min, min(info.max, math.trunc(float(value))))


# The real type linear mode computes in, per element type: the oracle's own reading of
# docs/semantics.md ("accumulation type"), written out here instead of taken from the
# package's element-type table, so that a wrong row there cannot pass for right on both sides
# (tests/test_reference_types.py compares the two tables row by row). float32 wherever
# onnxruntime 1.32 computes in float32, even for int32; float64 for the rest.
_ACCUMULATORS: dict[str, type[np.floating]] = {
    "float16": np.float32, "bfloat16": np.float32, "float32": np.float32,
    "int8": np.float32, "uint8": np.float32, "int16": np.float32, "uint16": np.float32,
    "int32": np.float32,
    "float64": np.float64, "int64": np.float64, "uint32": np.float64, "uint64": np.float64,
}
# Complex numbers blend their real and imaginary parts apart, each by its real type's rule.
_COMPLEX_PARTS = {"complex64": "float32", "complex128": "float64"}


def linear_arithmetic(dtype: np.dtype) -> tuple[type[np.floating], int, bool]:
    """How linear mode computes on ``dtype``: the accumulation type of each real part, the
    number of parts, and whether results are truncated and saturated to an integer type.
    KeyError for a type linear mode is not defined for (the call's checks refuse it first)."""
    real = _COMPLEX_PARTS.get(dtype.name, dtype.name)
    return _ACCUMULATORS[real], 2 if dtype.name in _COMPLEX_PARTS else 1, dtype.kind in "iu"


def _linear_element(x: np.ndarray, o: tuple[int, ...], scales: Sequence[np.float32]) -> object:
    axes = interpolated_axes(scales)
    taps = [linear_taps(o[axis], x.shape[axis], scales[axis]) for axis in axes]
    acc, n_parts, integer = linear_arithmetic(x.dtype)
    parts: list[list[tuple[np.float32, float]]] = [[] for _ in range(n_parts)]
    for corner in itertools.product(*taps):  # last axis varies fastest: innermost first
        index = list(o)
        for axis, (input_index, _) in zip(axes, corner, strict=True):
            index[axis] = input_index
        weight = corner_weight([w for _, w in corner])
        value = x[tuple(index)]
        if n_parts == 1:
            parts[0].append((weight, value))
        else:
            parts[0].append((weight, value.real))
            parts[1].append((weight, value.imag))
    sums = [weighted_sum(terms, acc) for terms in parts]
    if n_parts == 2:
        return complex(float(sums[0]), float(sums[1]))
    if integer:
        return to_integer(sums[0], x.dtype)
    return sums[0]


def upsample(
    x: npt.ArrayLike,
    scales: Sequence[float] | npt.NDArray[np.number],
    mode: str = "nearest",
) -> np.ndarray:
    """ONNX ``Upsample`` (versions 1, 7, 9, 10), one output element at a time.

    Same arguments, result and errors as :func:`onnx_upsample.upsample` (without ``out``).
    """
    source, call, warning = check_call(x, scales, mode, None)
    check_fits_in_memory(call.out_shape, call.out_dtype.itemsize)
    if warning is not None:
        warnings.warn(warning, UpsampleWarning, stacklevel=2)
    f32_scales = call.scales
    shape = tuple(output_length(n, s) for n, s in zip(source.shape, f32_scales, strict=True))
    out = np.empty(shape, source.dtype.newbyteorder("="))
    if shape == source.shape:  # ORT's global no-resize rule: a copy, whatever the scales
        out[...] = source
        return out
    if out.size == 0:  # nothing to loop over (and an axis may be astronomically long)
        return out
    with np.errstate(all="ignore"):
        for o in itertools.product(*(range(n) for n in shape)):
            if call.mode == "nearest":
                index = tuple(
                    nearest_index(o[a], source.shape[a], f32_scales[a]) for a in range(len(o))
                )
                out[o] = source[index]
            else:
                out[o] = _linear_element(source, o, f32_scales)
    return out
