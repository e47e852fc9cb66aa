"""Per-axis rules of ONNX ``Upsample`` (versions 7/9/10; version 1 is the 4-D case), vectorised.

Each function answers one question of docs/semantics.md (§2) for one axis: how long the output is,
which input index an output index reads (nearest), and which two input indices with which
float32 weights it blends (linear). Python uses them for input windows, the object-array path
and the short taps of a blended block; the compiled kernels compute the same rules in C
(``_kernels/_native/axis_rule.h``), and the slow reference in :mod:`onnx_upsample.reference`
re-derives every rule on its own, one element at a time: the differential tests hold the three
together.

Below ``2**24`` the rules reproduce onnxruntime 1.32's float32 arithmetic bit for bit. At and
beyond ``2**24`` float32 cannot hold every integer, ORT's values drift, and the rules switch to
the exact value computed from the float32 scale as the binary fraction it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

# float32 represents every integer below this exactly; ORT's arithmetic is exact only there.
F32_EXACT_LIMIT = 2**24
# The largest dimension numpy (and ONNX's int64 shapes) can describe.
MAX_DIM = 2**63 - 1
# float64 represents every integer up to this: past 2**24 the indices and coordinates of an
# axis are computed in float64 (exact quotients), so no axis that is computed may be longer
# (the kernels refuse such a description too).
MAX_COMPUTED_AXIS = 2**53

IndexArray = npt.NDArray[np.int64]
WeightArray = npt.NDArray[np.float32]


def output_size(n_in: int, scale: np.float32) -> int:
    """Output length of one axis: ``trunc(f32(n_in) * f32(scale))`` as ORT, exact past 2**24."""
    product = np.float32(n_in) * np.float32(scale)
    if n_in < F32_EXACT_LIMIT and product < F32_EXACT_LIMIT:
        return int(product)
    numerator, denominator = float(scale).as_integer_ratio()
    return (n_in * numerator) // denominator


def _exact_floor_quotient(o: IndexArray, scale: np.float32) -> IndexArray:
    """``floor(o / scale)`` with no rounding, for non-negative int64 ``o``.

    A float32 scale >= 1 is ``num / den`` with ``num < 2**24`` whenever ``den > 1``, so the
    split ``o = q*num + r`` keeps every intermediate inside int64.
    """
    numerator, denominator = float(scale).as_integer_ratio()
    if denominator == 1:
        if numerator > MAX_DIM:
            return np.zeros_like(o)
        return o // numerator
    quotient, remainder = np.divmod(o, numerator)
    return quotient * denominator + (remainder * denominator) // numerator


def _output_range(n_out: int, start: int, stop: int | None) -> tuple[int, int, int]:
    """Clip ``[start, stop)`` to the axis and find where it crosses ``2**24``."""
    stop = n_out if stop is None else min(stop, n_out)
    start = min(max(start, 0), stop)
    return start, stop, min(max(start, F32_EXACT_LIMIT), stop)


def nearest_indices(
    n_in: int, n_out: int, scale: np.float32, start: int = 0, stop: int | None = None
) -> IndexArray:
    """Input index read by each output index ``start <= o < stop`` of one axis (nearest).

    ``o`` when the scale is 1, else ``trunc(f32(o) / f32(scale))`` (float32 division, as
    ORT), exact ``floor(o / scale)`` from ``2**24`` on; clamped to ``n_in - 1``.
    """
    start, stop, split = _output_range(n_out, start, stop)
    o = np.arange(start, stop, dtype=np.int64)
    if scale == 1.0:
        idx = o
    else:
        small = split - start
        idx = np.empty(stop - start, dtype=np.int64)
        idx[:small] = (o[:small].astype(np.float32) / np.float32(scale)).astype(np.int64)
        idx[small:] = _exact_floor_quotient(o[small:], scale)
    np.minimum(idx, n_in - 1, out=idx)
    return idx


def linear_taps(
    n_in: int, n_out: int, scale: np.float32, start: int = 0, stop: int | None = None
) -> tuple[IndexArray, IndexArray, WeightArray, WeightArray]:
    """The two input indices and their float32 weights for output indices ``[start, stop)``.

    Returns ``(lo, hi, w_lo, w_hi)``: output ``o`` blends ``x[lo[o]]`` with weight
    ``w_lo[o]`` and ``x[hi[o]]`` with weight ``w_hi[o]``. The coordinate is asymmetric,
    ``c = o / scale`` in float32 (``o`` itself when the scale is 1), clamped to
    ``[0, n_in - 1]``; ``lo = trunc(c)``, ``hi = min(lo + 1, n_in - 1)``; ``lo`` takes the
    distance ``|c - hi|`` and ``hi`` the distance ``|c - lo|``; both take 0.5 where
    ``lo == hi`` (the last index), exactly as ORT 1.32. From ``2**24`` on the coordinate and
    distances are computed in float64 from the exact quotient, then rounded to float32.
    """
    start, stop, split = _output_range(n_out, start, stop)
    length, small = stop - start, split - start
    lo = np.empty(length, dtype=np.int64)
    hi = np.empty(length, dtype=np.int64)
    w_lo = np.empty(length, dtype=np.float32)
    w_hi = np.empty(length, dtype=np.float32)
    if small:
        coord = np.arange(start, split, dtype=np.float32)
        if scale != 1.0:
            coord = coord / np.float32(scale)
        _fill_taps(coord, n_in, lo[:small], hi[:small], w_lo[:small], w_hi[:small])
    if length > small:
        # float64 division of integers below 2**53 is the exact quotient, correctly rounded
        coord64 = np.arange(split, stop, dtype=np.int64).astype(np.float64)
        if scale != 1.0:
            coord64 = coord64 / float(scale)
        _fill_taps(coord64, n_in, lo[small:], hi[small:], w_lo[small:], w_hi[small:])
    return lo, hi, w_lo, w_hi


def _fill_taps(
    coord: npt.NDArray[np.floating],
    n_in: int,
    lo: IndexArray,
    hi: IndexArray,
    w_lo: WeightArray,
    w_hi: WeightArray,
) -> None:
    """Clamp coordinates and derive taps and weights in the coordinates' own precision."""
    ftype = coord.dtype.type
    coord = np.clip(coord, ftype(0), ftype(n_in - 1))
    np.minimum(coord.astype(np.int64), n_in - 1, out=lo)
    np.minimum(lo + 1, n_in - 1, out=hi)
    # distance to the *other* tap is this tap's weight
    w_hi[:] = np.abs(coord - lo.astype(ftype))
    w_lo[:] = np.abs(coord - hi.astype(ftype))
    edge = lo == hi
    w_lo[edge] = 0.5
    w_hi[edge] = 0.5


class OrtLinearKernel(NamedTuple):
    """One case onnxruntime 1.32 has a linear Upsample kernel for: inputs of ``rank`` whose
    ``unscaled`` axes have scale 1; it interpolates ``axes`` (scale-1 axes included)."""

    rank: int
    unscaled: tuple[int, ...]
    axes: tuple[int, ...]

    @property
    def words(self) -> str:
        if not self.unscaled:
            return f"{self.rank}-D"
        ones = " and ".join(f"scales[{a}]" for a in self.unscaled)
        return f"{self.rank}-D with {ones} 1"


#: ORT's linear kernels, the first that fits wins (NCHW before NHWC for [1, 1, h, 1]).
ORT_LINEAR_KERNELS = (
    OrtLinearKernel(2, (), (0, 1)),
    OrtLinearKernel(3, (), (0, 1, 2)),
    OrtLinearKernel(4, (0, 1), (2, 3)),
    OrtLinearKernel(4, (0, 3), (1, 2)),
    OrtLinearKernel(5, (0, 1), (2, 3, 4)),
)


def ort_linear_axes(scales: Sequence[np.float32 | float]) -> tuple[int, ...] | None:
    """The axes onnxruntime 1.32's linear kernel interpolates for these scales (scale-1 axes
    included), or None where ORT has no linear kernel (it refuses the node)."""
    for kernel in ORT_LINEAR_KERNELS:
        if len(scales) == kernel.rank and all(float(scales[a]) == 1.0 for a in kernel.unscaled):
            return kernel.axes
    return None


def interpolated_axes(scales: Sequence[np.float32]) -> tuple[int, ...]:
    """The axes linear mode interpolates (docs/semantics.md §2, "which axes interpolate").

    Where ORT 1.32 has a linear kernel these are the axes that kernel interpolates, including
    axes whose scale is 1 (weights 1 and 0, and 0.5/0.5 at the last index: that changes the
    last bit of some results, so it matters for bit-identity). Everywhere else, exactly the
    axes whose scale is not 1.
    """
    ort = ort_linear_axes(scales)
    if ort is not None:
        return ort
    return tuple(axis for axis, scale in enumerate(scales) if float(scale) != 1.0)
