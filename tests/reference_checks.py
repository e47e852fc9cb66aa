"""Test helper: what the reference's tests share (no tests here): the implementations under
test, bit comparisons, and ORT's bilinear formula written out."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import reference as ref

f32 = np.float32


IMPLEMENTATIONS = [
    pytest.param(ref.upsample, id="reference"),
    pytest.param(onnx_upsample.upsample, id="fast"),
]

impl_param = pytest.mark.parametrize("upsample", IMPLEMENTATIONS)


Upsample = Callable[..., np.ndarray]


def same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    """Same shape, same dtype, same bytes (so -0.0 != 0.0 and NaN payloads count)."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if got.dtype.kind in "biufc" or got.dtype.name == "bfloat16":
        return bool(
            np.array_equal(
                np.ascontiguousarray(got).view(np.uint8),
                np.ascontiguousarray(expected).view(np.uint8),
            )
        )
    return got.tolist() == expected.tolist()


def assert_bits(got: np.ndarray, expected: np.ndarray) -> None:
    assert same_bits(got, expected), f"\ngot      {got!r}\nexpected {expected!r}"


Tap = tuple[int, int, np.float32, np.float32]


def _axis_taps(n_in: int, n_out: int, s: np.float32) -> list[Tap]:
    """Peers §3 pseudo-code for one axis: (i1, i2, d1, d2), all float32."""
    taps = []
    for o in range(n_out):
        c = f32(o) if s == 1.0 else f32(o) / s
        c = max(f32(0), min(c, f32(n_in - 1)))
        i1 = min(int(c), n_in - 1)
        i2 = min(i1 + 1, n_in - 1)
        d1, d2 = abs(c - f32(i1)), abs(c - f32(i2))
        if i1 == i2:
            d1 = d2 = f32(0.5)
        taps.append((i1, i2, d1, d2))
    return taps


def ort_bilinear_2d(x: np.ndarray, sy: float, sx: float) -> np.ndarray:
    """ORT 1.32's 2-D bilinear literally (docs/peers.md §3), in float32, one element at a time.

    Y = ((dx2*dy2)*X11 + (dx1*dy2)*X21) + (dx2*dy1)*X12 + (dx1*dy1)*X22, X11 = X[y1, x1],
    X21 = X[y1, x2], X12 = X[y2, x1].
    """
    x = np.asarray(x, dtype=np.float32)
    h, w = x.shape
    oh, ow = int(f32(h) * f32(sy)), int(f32(w) * f32(sx))
    ty, tx = _axis_taps(h, oh, f32(sy)), _axis_taps(w, ow, f32(sx))
    y = np.empty((oh, ow), np.float32)
    for r, (y1, y2, dy1, dy2) in enumerate(ty):
        for c, (x1, x2, dx1, dx2) in enumerate(tx):
            total = f32(dx2 * dy2) * x[y1, x1] + f32(dx1 * dy2) * x[y1, x2]
            total = f32(total) + f32(dx2 * dy1) * x[y2, x1]
            y[r, c] = f32(total) + f32(dx1 * dy1) * x[y2, x2]
    return y


