"""Vectorised numpy path of ONNX ``Upsample``: any element type, any rank, any layout.

The output is produced block by block (a block is a slab of the outermost output axes of
about ``BLOCK_ELEMENTS`` elements), so no temporary is larger than a small fraction of the
output. Each block is one fancy-index gather per corner of the interpolation cell; no Python
runs per element.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

from .._dtypes import ElementType
from .._rules import IndexArray
from ._tables import LinearAxis

BLOCK_ELEMENTS = 1 << 16

Region = tuple[slice, ...]


def regions(shape: tuple[int, ...], target: int = BLOCK_ELEMENTS) -> Iterator[Region]:
    """Cover ``shape`` with C-order slabs of about ``target`` elements each."""
    rank = len(shape)
    split = 0
    while split < rank - 1 and math.prod(shape[split + 1 :]) > target:
        split += 1
    inner = max(1, math.prod(shape[split + 1 :]))
    step = max(1, target // inner)
    full = (slice(None),) * (rank - split - 1)
    for outer in np.ndindex(*shape[:split]):
        lead = tuple(slice(i, i + 1) for i in outer)
        for start in range(0, shape[split], step):
            yield (*lead, slice(start, min(start + step, shape[split])), *full)


def _axis_indices(table: IndexArray | None, region: slice, length: int) -> IndexArray:
    if table is None:
        return np.arange(length, dtype=np.int64)[region]
    return table[region]


def nearest(x: np.ndarray, out: np.ndarray, tables: list[IndexArray | None]) -> None:
    """``out[o0, o1, ...] = x[idx0[o0], idx1[o1], ...]`` for every output index."""
    for region in regions(out.shape):
        index = [
            _axis_indices(table, sl, n)
            for table, sl, n in zip(tables, region, out.shape, strict=True)
        ]
        out[region] = x[np.ix_(*index)]


def _to_result(acc: np.ndarray, dtype: np.dtype, etype: ElementType) -> np.ndarray:
    """Convert accumulated values to the element type: integers truncate, then saturate."""
    if not etype.is_integer:
        return acc.astype(dtype)
    info = np.iinfo(dtype)
    truncated = np.trunc(acc)
    # info.max is not representable in float32/float64 for wide types; 2**bits is.
    too_high = truncated >= acc.dtype.type(float(info.max) + 1.0)
    too_low = truncated < acc.dtype.type(info.min)
    result = np.where(too_high | too_low, 0, truncated).astype(dtype)
    result[too_high] = info.max
    result[too_low] = info.min
    return result


def linear(x: np.ndarray, out: np.ndarray, axes: list[LinearAxis], etype: ElementType) -> None:
    """Sum over the 2**k corners of each output's cell, in ORT 1.32's order (contract §2).

    Corners are enumerated innermost axis fastest; a corner's weight is the float32 product
    of its per-axis weights innermost first; the sum starts from the first term and adds
    left to right in the accumulation type.
    """
    assert etype.accumulator is not None
    acc_type = etype.accumulator
    rank = out.ndim
    position_of = {a.axis: position for position, a in enumerate(axes)}
    part_views = [lambda v: v] if etype.parts == 1 else [lambda v: v.real, lambda v: v.imag]
    to_float = etype.name == "bfloat16"
    for region in regions(out.shape):
        lengths = [len(range(*sl.indices(n))) for sl, n in zip(region, out.shape, strict=True)]
        taps: dict[int, tuple[tuple[IndexArray, IndexArray], tuple[np.ndarray, np.ndarray]]] = {}
        for a in axes:
            sl = region[a.axis]
            shape = [1] * rank
            shape[a.axis] = lengths[a.axis]
            taps[a.axis] = (
                (a.lo[sl], a.hi[sl]),
                (a.w_lo[sl].reshape(shape), a.w_hi[sl].reshape(shape)),
            )
        identity = {
            axis: np.arange(n, dtype=np.int64)[region[axis]]
            for axis, n in enumerate(out.shape)
            if axis not in position_of
        }
        sums: list[np.ndarray | None] = [None] * etype.parts
        for corner in itertools.product((0, 1), repeat=len(axes)):
            index = [
                taps[axis][0][corner[position_of[axis]]] if axis in position_of
                else identity[axis]
                for axis in range(rank)
            ]
            weight = taps[axes[-1].axis][1][corner[-1]]
            for position in range(len(axes) - 2, -1, -1):
                weight = weight * taps[axes[position].axis][1][corner[position]]
            gathered = x[np.ix_(*index)]
            if to_float:
                gathered = gathered.astype(np.float32)
            weight = weight.astype(acc_type)
            for part, view in enumerate(part_views):
                term = weight * view(gathered).astype(acc_type)
                previous = sums[part]
                sums[part] = term if previous is None else previous + term
        block = out[region]
        if etype.parts == 1:
            assert sums[0] is not None
            block[...] = _to_result(sums[0], out.dtype, etype)
        else:
            block.real[...] = sums[0]
            block.imag[...] = sums[1]
