"""numpy path of ONNX ``Upsample`` nearest for object arrays (ONNX strings).

The C kernels copy bytes and cannot hold Python references, so object arrays take a
fancy-index gather, block by block (a slab of the outermost output axes of about
``BLOCK_ELEMENTS`` elements):
no temporary is larger than a small fraction of the output and no Python runs per element.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .._rules import IndexArray

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
