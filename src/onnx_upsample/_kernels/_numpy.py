"""numpy path of ONNX ``Upsample`` nearest for object arrays (ONNX strings).

The C kernels copy bytes and cannot hold Python references, so object arrays take a
fancy-index gather, block by block (a slab of the outermost output axes of about
``BLOCK_ELEMENTS`` elements), with each block's indices computed for that block only: no
temporary is larger than a small fraction of the output and no Python runs per element.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .._spec.rules import IndexArray, nearest_indices
from ._tables import Window

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
    full = tuple(slice(0, n) for n in shape[split + 1 :])
    for outer in np.ndindex(*shape[:split]):
        lead = tuple(slice(i, i + 1) for i in outer)
        for start in range(0, shape[split], step):
            yield (*lead, slice(start, min(start + step, shape[split])), *full)


def _axis_indices(n_in: int, n_out: int, scale: np.float32, out_first: int,
                  region: slice) -> IndexArray:
    """Whole-axis input indices of a region of the window starting at ``out_first``."""
    start, stop = out_first + region.start, out_first + region.stop
    if scale == 1.0:
        return np.arange(start, stop, dtype=np.int64)
    return nearest_indices(n_in, n_out, scale, start, stop)


def nearest(x: np.ndarray, out: np.ndarray, in_shape: tuple[int, ...],
            out_shape: tuple[int, ...], scales: tuple[np.float32, ...], window: Window) -> None:
    """``out[o0, o1, ...] = x[i0(o0), i1(o1), ...]`` for every output index of ``window``,
    where ``x`` is the input slice that starts at the window's first input index."""
    first = [int(_axis_indices(n_in, n_out, s, o, slice(0, 1))[0]) if stop > o else 0
             for n_in, n_out, s, o, stop in zip(in_shape, out_shape, scales, window.out_start,
                                                window.out_stop, strict=True)]
    for region in regions(out.shape):
        index = [
            _axis_indices(n_in, n_out, s, o, sl) - f
            for n_in, n_out, s, o, sl, f in zip(in_shape, out_shape, scales, window.out_start,
                                                region, first, strict=True)
        ]
        out[region] = x[np.ix_(*index)]
