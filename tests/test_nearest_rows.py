"""The nearest kernel's row loops on the shapes that choose between them.

A row is repeated by vector moves whose last register overlaps the one before it, and
x2 on two axes expands a whole plane in one loop (``nearest_isa.h``); short rows, odd
widths, work items that start or end between the two rows of a pair, segments of a row,
every element size and both instruction sets each take another branch. The kernels are
built here from descriptions (``describe.c``), so that the work split is chosen rather than
whatever a call's size would give, and compared with numpy's own repeat.
"""

from __future__ import annotations

import numpy as np
import pytest

from onnx_upsample._kernels import _native

GATHER, COPY = _native.AXIS_GATHER, _native.AXIS_COPY
CHANNELS, HEIGHT = 2, 3

# (element dtype the kernel moves, positions per element): plain words of 1, 2, 4 and 8
# bytes, and blocks of 2, 3, 8 and 16 bytes (two bytes, RGB, complex64, complex128)
ELEMENTS = [("u1", 1), ("u2", 1), ("u4", 1), ("u8", 1), ("u1", 2), ("u1", 3), ("u4", 2),
            ("u8", 2)]


def _description(width: int, num: int, den: int, unit: int, block: int, n_blocks: int,
                 n_segments: int, gather: bool,
                 height: tuple[int, int] | None = None) -> dict[str, object]:
    """(CHANNELS, HEIGHT, width) elements scaled by num / den on the last two axes (the
    height by ``height``'s num / den where given)."""
    scale = num / den
    h_num, h_den = height or (num, den)
    h_out, w_out = int(HEIGHT * h_num / h_den), int(width * scale)
    repeat = 0 if gather or den != 1 else num
    segment = -(-w_out // n_segments)
    if repeat:
        segment = -(-segment // repeat) * repeat
    return {
        "x_elements": CHANNELS * HEIGHT * width * block, "unit": unit, "block": block,
        "axes": np.array([[COPY, CHANNELS, CHANNELS, CHANNELS, 0, 0, 1, 1],
                          [GATHER, h_out, HEIGHT, HEIGHT, 0, 0, h_num, h_den],
                          [GATHER, w_out, width, width, 0, 0, num, den]], np.int64),
        "scales": np.array([1, h_num / h_den, scale], np.float32),
        "row_kind": _native.ROW_REPEAT if repeat else _native.ROW_GATHER,
        "repeat": max(repeat, 1), "n_blocks": n_blocks, "n_segments": -(-w_out // segment),
        "segment": segment,
    }


def _expected(x: np.ndarray, num: int, den: int,
              height: tuple[int, int] | None = None) -> np.ndarray:
    h_num, h_den = height or (num, den)
    h_out, w_out = int(x.shape[1] * h_num / h_den), int(x.shape[2] * num / den)
    rows = np.arange(h_out) * h_den // h_num
    cols = np.arange(w_out) * den // num
    return np.ascontiguousarray(x[:, rows][:, :, cols])


@pytest.mark.parametrize(("dtype", "block"), ELEMENTS)
@pytest.mark.parametrize(("num", "den", "gather"), [(2, 1, False), (2, 1, True), (3, 1, False),
                                                    (3, 2, True)])
def test_rows_of_every_width_split_every_way(dtype: str, block: int, num: int, den: int,
                                             gather: bool) -> None:
    rng = np.random.default_rng(7)
    isas = (0, 1) if _native.cpu_has_avx2() else (0,)
    for width in range(1, 41):
        x = rng.integers(0, np.iinfo(dtype).max, (CHANNELS, HEIGHT, width, block),
                         dtype=dtype, endpoint=True)
        expected = _expected(x, num, den)
        for n_blocks in (1, 2, 5):
            for n_segments in (1, 2):
                args = _description(width, num, den, x.itemsize, block, n_blocks,
                                    n_segments, gather)
                for isa in isas:
                    kernel = _native.nearest_kernel(**args, isa=isa)
                    for stream in (0, 1):
                        out = np.zeros_like(expected)
                        kernel(x, out, 2, stream=stream)
                        assert np.array_equal(out, expected), (
                            width, n_blocks, n_segments, isa, stream)


@pytest.mark.parametrize(("dtype", "block"), ELEMENTS)
@pytest.mark.parametrize("height", [(3, 1), (3, 2), (5, 2)])
def test_x2_rows_under_another_height_scale(dtype: str, block: int,
                                            height: tuple[int, int]) -> None:
    """x2 on the row but not on the axis above: output rows come in pairs (and singles) that
    read one input row, written two at a time outside the plane loop."""
    rng = np.random.default_rng(5)
    isas = (0, 1) if _native.cpu_has_avx2() else (0,)
    for width in range(1, 41):
        x = rng.integers(0, np.iinfo(dtype).max, (CHANNELS, HEIGHT, width, block),
                         dtype=dtype, endpoint=True)
        expected = _expected(x, 2, 1, height)
        for n_blocks in (1, 2, 5):
            args = _description(width, 2, 1, x.itemsize, block, n_blocks, 1, False, height)
            for isa in isas:
                out = np.zeros_like(expected)
                _native.nearest_kernel(**args, isa=isa)(x, out, 2)
                assert np.array_equal(out, expected), (width, n_blocks, isa)


def test_instruction_set_is_checked() -> None:
    args = _description(8, 2, 1, 1, 1, 1, 1, False)
    for bad in (-1, 2, 7):
        with pytest.raises(ValueError, match="instruction set"):
            _native.nearest_kernel(**args, isa=bad)


@pytest.mark.parametrize(("dtype", "block"), [("u1", 1), ("u4", 1), ("u8", 1), ("u4", 2),
                                              ("u1", 3)])
@pytest.mark.parametrize(("num", "den", "gather"), [(2, 1, False), (3, 2, True)])
def test_streamed_rows_longer_than_the_buffer(dtype: str, block: int, num: int, den: int,
                                              gather: bool) -> None:
    """Streamed rows are made a buffer's worth (16 KiB) at a time: pieces that end the row
    with fewer positions than a vector chunk, or with more, and pieces split by segments."""
    rng = np.random.default_rng(11)
    isas = (0, 1) if _native.cpu_has_avx2() else (0,)
    per_buffer = 16384 // (np.dtype(dtype).itemsize * block)
    for width in {per_buffer * den // num + extra for extra in (0, 1, 3, 9, 30)}:
        x = rng.integers(0, np.iinfo(dtype).max, (CHANNELS, HEIGHT, width, block),
                         dtype=dtype, endpoint=True)
        expected = _expected(x, num, den)
        for n_segments in (1, 3):
            args = _description(width, num, den, x.itemsize, block, 2, n_segments, gather)
            for isa in isas:
                kernel = _native.nearest_kernel(**args, isa=isa)
                for stream in (0, 1):
                    out = np.zeros_like(expected)
                    kernel(x, out, 2, stream=stream)
                    assert np.array_equal(out, expected), (width, n_segments, isa, stream)
