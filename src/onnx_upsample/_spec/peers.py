"""Other frameworks' nearest rules, per axis: what they read where Upsample reads
:func:`~onnx_upsample._spec.rules.nearest_indices`.

These are not Upsample's semantics; they are here, beside it, so that everything comparing
with a peer (``onnx-upsample compare``'s picture, a convention search) takes them from one
place. Each is the library's own arithmetic, checked against the library where it is
installed (tests/test_compare.py runs PyTorch's ``interpolate``).
"""

from __future__ import annotations

import math

import numpy as np

from .rules import IndexArray


def pytorch_nearest_size(n_in: int, scale: float) -> int:
    """PyTorch ``interpolate(scale_factor=scale, mode="nearest")``: ``floor(n_in * scale)``
    in double (not Upsample's float32 product: 10 x f32(1.3) is 12 rows here, 13 there)."""
    return math.floor(n_in * scale)


def pytorch_nearest_indices(n_in: int, scale: float) -> IndexArray:
    """Input index PyTorch ``interpolate(scale_factor=scale, mode="nearest")`` reads for
    each output index of one axis (ATen's ``nearest_idx``, the 2-D kernel).

    The identity where the length is unchanged; ``o >> 1`` where it doubles; else
    ``min(floor(f32(o) * f32(1 / scale)), n_in - 1)``: a multiply by the float32 reciprocal
    of the double scale, where Upsample divides by the float32 scale.
    """
    n_out = pytorch_nearest_size(n_in, scale)
    o = np.arange(n_out, dtype=np.int64)
    if n_out == n_in:
        return o
    if n_out == 2 * n_in:
        return o >> 1
    factor = np.float32(1.0 / scale)
    idx = np.floor(o.astype(np.float32) * factor).astype(np.int64)
    return np.minimum(idx, n_in - 1)


def opencv_nearest_indices(n_in: int, n_out: int) -> IndexArray:
    """Input index OpenCV ``resize(dsize, interpolation=INTER_NEAREST)`` reads for each of
    ``n_out`` outputs of one axis: ``min(floor(o * (1.0 / (n_out / n_in))), n_in - 1)`` in
    double (the sizes' ratio, not the scale)."""
    step = 1.0 / (n_out / n_in)
    idx = np.floor(np.arange(n_out, dtype=np.float64) * step).astype(np.int64)
    return np.minimum(idx, n_in - 1)
