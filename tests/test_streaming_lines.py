"""Streaming stores at every placement of the output in its cache lines, bit for bit.

With streaming stores (outputs of 16 MiB and more, or ``ONNX_UPSAMPLE_STREAMING_STORES=always``)
a row's whole cache lines are written a line at a time, and the parts of lines it shares
with the rows beside it an element (or a 4-byte word) at a time: the float32 vector sums
compute a vector over those few outputs and store only their own lanes; the other rows are
assembled first and copied (whole words, and bytes beside them for 1- and 2-byte
elements). Where a row starts in its line decides how long those parts are, so each case
runs with the output at every element offset in a cache line, inside a larger buffer whose
bytes before and after must stay as they were. Results are the ordinary stores' bits, and
onnxruntime's where it has a kernel (the slow reference's elsewhere; NaN payloads aside,
where two NaNs meet); calls run on the default thread count, so two workers write the two
sides of some shared lines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from differential import assert_identical_but_nan_payloads
from ort_oracle import assert_same_bits, ort_accepts, ort_upsample

from onnx_upsample import output_shape, reference, upsample
from onnx_upsample._kernels import _compiled

GUARD = 128  # bytes before and after the output, each 0xA5

# (shape, scales, mode, dtype, what the rows reach)
CASES = [
    ((1, 1, 4, 5, 24), [1, 1, 2, 2, 2], "linear", "float32"),  # depth pairs, rows alike in lines
    ((1, 2, 3, 6, 37), [1, 1, 2, 2, 2], "linear", "float32"),  # depth pairs apart: assembled
    ((1, 3, 7, 29), [1, 1, 2, 2], "linear", "float32"),  # an image: row pairs, every tail
    ((1, 2, 5, 11), [1, 1, 1.5, 2.5], "linear", "float32"),  # rows of 27: one line and a part
    ((6, 31, 3), [2, 2, 1], "linear", "float32"),  # (H, W, C): the identity block
    ((5, 23, 3), [1.5, 2, 1], "linear", "float32-special"),  # its exact sum (inf, NaN, -0)
    ((2, 5, 45), [1, 2, 1.5], "linear", "float16"),  # rounded from float32: 2-byte elements
    ((4, 37), [2, 2], "linear", "uint8"),  # integer blend, 1-byte elements
    ((3, 4, 41), [1, 2, 2], "nearest", "int16"),
    ((3, 4, 21), [1, 1.5, 2], "nearest", "float64"),
    ((2, 6, 35), [1, 2, 3], "nearest", "uint8"),
]


def make_input(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    if dtype == "float32-special":
        x = rng.standard_normal(shape).astype(np.float32)
        x.flat[::7] = np.inf
        x.flat[3::11] = np.nan
        x.flat[5::13] = -0.0
        return x
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 120, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def expected(x: np.ndarray, scales: Sequence[float], mode: str) -> np.ndarray:
    if ort_accepts(x.dtype, scales, mode):
        return ort_upsample(x, scales, mode)
    return reference.upsample(x, list(scales), mode)


def placed(shape: tuple[int, ...], dtype: np.dtype, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """An output array that starts `offset` bytes into a cache line, inside guard bytes; and
    the whole buffer."""
    n_bytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.full(n_bytes + 2 * GUARD + 64, 0xA5, np.uint8)
    start = GUARD + (-(raw.ctypes.data + GUARD) % 64) + offset
    return raw[start:start + n_bytes].view(dtype).reshape(shape), raw


@pytest.mark.parametrize(("shape", "scales", "mode", "dtype"), CASES,
                         ids=[f"{c[3]}-{c[2]}-{'x'.join(map(str, c[0]))}" for c in CASES])
def test_streamed_output_at_every_offset_in_a_line(shape, scales, mode, dtype,
                                                   monkeypatch) -> None:
    x = make_input(shape, dtype)
    # what ONNX_UPSAMPLE_STREAMING_STORES sets when the kernels load
    monkeypatch.setattr(_compiled, "_stream_choice", "never")
    want = upsample(x, scales, mode)
    assert_identical_but_nan_payloads(want, expected(x, scales, mode), "ordinary stores")
    monkeypatch.setattr(_compiled, "_stream_choice", "always")
    for offset in range(0, 64, x.dtype.itemsize):
        out, raw = placed(output_shape(x.shape, scales), x.dtype, offset)
        upsample(x, scales, mode, out=out)
        assert_same_bits(out, want, f"output {offset} bytes into a cache line")
        start = out.ctypes.data - raw.ctypes.data
        outside = np.concatenate([raw[:start], raw[start + out.nbytes:]])
        assert (outside == 0xA5).all(), f"bytes outside the output written (offset {offset})"


def test_cases_reach_every_part_length() -> None:
    """The float32 vector cases start a row's whole lines at every float of a line (offsets
    times row lengths), so the parts before and after them take every length 0-15."""
    heads, tails = set(), set()
    for shape, scales, _, dtype in CASES:
        if dtype != "float32":
            continue
        width = output_shape(shape, scales)[-1]
        for offset in range(0, 64, 4):
            for row in range(16):
                start = (offset // 4 + row * width) % 16
                head = (16 - start) % 16
                heads.add(head)
                tails.add((width - head) % 16 if width > head else -1)
    assert set(range(16)) <= heads and set(range(16)) <= tails
