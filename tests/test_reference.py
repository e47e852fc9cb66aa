"""The slow reference (and the fast path, on the same cases) against hand-computed arrays.

The documented examples, integer results, the no-resize copy, rank 0 and empty axes, legacy
mode names and kinds of input; each element type's own rules (half floats, complex numbers,
signed zeros and NaN, strings and objects) are in ``test_reference_types.py``.

Expected arrays come from the ONNX operator page (spec/Upsample.md), ORT 1.32's own Upsample
tests and the measured values of docs/peers.md §2-3, or are worked out by hand from the contract's
formulas (docs/semantics.md §2). Comparisons are bitwise wherever bit-identity is promised.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from reference_checks import (
    Upsample,
    assert_bits,
    impl_param,
    ort_bilinear_2d,
)

import onnx_upsample
from onnx_upsample import UpsampleWarning
from onnx_upsample import reference as ref

# ---------------------------------------------------------------------------------------------
# documented examples
# ---------------------------------------------------------------------------------------------

X22 = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)


@impl_param
def test_spec_nearest_example_2x2_to_4x6(upsample: Upsample) -> None:
    """ONNX test_upsample_nearest: scales [1, 1, 2, 3]."""
    expected = np.array(
        [[[[1, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4], [3, 3, 3, 4, 4, 4]]]],
        dtype=np.float32,
    )
    assert_bits(upsample(X22, [1, 1, 2, 3], "nearest"), expected)
    assert_bits(upsample(X22, [1, 1, 2, 3]), expected)  # nearest is the default


@impl_param
def test_spec_v1_example_2x2_to_4x4(upsample: Upsample) -> None:
    """Upsample-1's doc example: height_scale = width_scale = 2."""
    expected = np.array(
        [[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]], dtype=np.float32
    )
    assert_bits(upsample(X22, [1, 1, 2, 2]), expected)


BILINEAR_X = np.array([[[[1, 3], [3, 5]]], [[[3, 5], [7, 9]]]], dtype=np.float32)
# ORT UpsampleOp4DBilinearTest's expected rows; by hand: x coordinate o/4 = 0 .25 .5 .75 then
# clamped to 1; y coordinate o/2 = 0 .5 then clamped to 1 (the last row repeats).
BILINEAR_ROWS = [
    [1, 1.5, 2, 2.5, 3, 3, 3, 3], [2, 2.5, 3, 3.5, 4, 4, 4, 4],
    [3, 3.5, 4, 4.5, 5, 5, 5, 5], [3, 3.5, 4, 4.5, 5, 5, 5, 5],
    [3, 3.5, 4, 4.5, 5, 5, 5, 5], [5, 5.5, 6, 6.5, 7, 7, 7, 7],
    [7, 7.5, 8, 8.5, 9, 9, 9, 9], [7, 7.5, 8, 8.5, 9, 9, 9, 9],
]


def _lerp_rows(image: np.ndarray) -> np.ndarray:
    """Hand formula for scales [2, 4] on a 2x2 image: values are exact binary fractions."""
    (a, b), (c, d) = image.tolist()
    wx = [0, 0.25, 0.5, 0.75, 1, 1, 1, 1]
    wy = [0, 0.5, 1, 1]
    return np.array(
        [[(1 - v) * ((1 - u) * a + u * b) + v * ((1 - u) * c + u * d) for u in wx] for v in wy],
        dtype=np.float32,
    )


def test_bilinear_rows_agree_with_the_hand_formula() -> None:
    derived = np.stack([_lerp_rows(BILINEAR_X[n, 0]) for n in range(2)]).reshape(8, 8)
    assert np.array_equal(derived, np.array(BILINEAR_ROWS, dtype=np.float32))


@impl_param
def test_ort_bilinear_4d_float32(upsample: Upsample) -> None:
    expected = np.array(BILINEAR_ROWS, dtype=np.float32).reshape(2, 1, 4, 8)
    got = upsample(BILINEAR_X, [1, 1, 2, 4], "linear")
    assert_bits(got, expected)
    for n in range(2):
        assert_bits(got[n, 0], ort_bilinear_2d(BILINEAR_X[n, 0], 2, 4))


@impl_param
def test_ort_bilinear_4d_int32_truncates(upsample: Upsample) -> None:
    expected = np.array(
        [[int(v) for v in row] for row in BILINEAR_ROWS], dtype=np.int32
    ).reshape(2, 1, 4, 8)
    assert expected[0, 0, 0, 1] == 1  # 1.5 -> 1
    got = upsample(BILINEAR_X.astype(np.int32), [1, 1, 2, 4], "linear")
    assert_bits(got, expected)


@impl_param
def test_ort_nearest_15x(upsample: Upsample) -> None:
    """ORT UpsampleOpNearest15XTest: width 2 x 1.5 = 3, columns 0, 0, 1."""
    x = np.array([[[[1, 3], [3, 5]]]], dtype=np.float32)
    plane = [[1, 1, 3], [1, 1, 3], [3, 3, 5], [3, 3, 5]]
    expected = np.array([[plane]], dtype=np.float32)
    assert_bits(upsample(x, [1, 1, 2, 1.5]), expected)
    # a batch scale of 2 is accepted (ORT's nearest too): both images are the same
    assert_bits(upsample(x, [2, 1, 2, 1.5]), np.array([[plane], [plane]], dtype=np.float32))
    for dtype in (np.int32, np.int8, np.uint8, np.float64, np.int64):
        assert_bits(upsample(x.astype(dtype), [1, 1, 2, 1.5]), expected.astype(dtype))


# ---------------------------------------------------------------------------------------------
# integer linear: truncation toward zero, then saturation
# ---------------------------------------------------------------------------------------------

UINT8_ROW = [0, 63, 127, 191, 255, 193, 132, 71, 10, 10, 10, 10, 11, 11, 11, 11]  # docs/peers.md §3


@impl_param
def test_uint8_example_rank2(upsample: Upsample) -> None:
    """Peers §3: [0, 255, 10, 11] x4 (ORT truncates: 63.75 -> 63, 193.75 -> 193)."""
    x = np.array([[0, 255, 10, 11]], dtype=np.uint8)
    got = upsample(x, [1, 4], "linear")
    assert_bits(got, np.array([UINT8_ROW], dtype=np.uint8))


@impl_param
def test_uint8_example_rank1(upsample: Upsample) -> None:
    """Rank 1 (no ORT kernel) interpolates the scaled axis only: the same row, by hand."""
    x = np.array([0, 255, 10, 11], dtype=np.uint8)
    assert_bits(upsample(x, [4], "linear"), np.array(UINT8_ROW, dtype=np.uint8))


@impl_param
def test_int8_truncates_toward_zero(upsample: Upsample) -> None:
    # [0, -13] x4: 0, -3.25, -6.5, -9.75, -13, ... -> 0, -3, -6, -9 (floor would give -4 ...)
    x = np.array([[0, -13]], dtype=np.int8)
    got = upsample(x, [1, 4], "linear")
    assert_bits(got, np.array([[0, -3, -6, -9, -13, -13, -13, -13]], dtype=np.int8))


@impl_param
def test_int32_saturates_instead_of_wrapping(upsample: Upsample) -> None:
    """f32(2147483647) = 2**31; ORT wraps it to -2**31, the contract saturates."""
    top, bottom = np.iinfo(np.int32).max, np.iinfo(np.int32).min
    x = np.array([[top, top], [bottom, bottom]], dtype=np.int32)
    got = upsample(x, [1, 2], "linear")
    expected = np.array([[top] * 4, [bottom] * 4], dtype=np.int32)
    assert_bits(got, expected)


@impl_param
def test_int32_accumulates_in_float32(upsample: Upsample) -> None:
    """Peers §3: 16777217 -> 16777216 at exact sample points (ORT's float32 arithmetic)."""
    x = np.array([[16777217, 16777217]], dtype=np.int32)
    got = upsample(x, [1, 2], "linear")
    assert_bits(got, np.full((1, 4), 16777216, dtype=np.int32))


@impl_param
@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.uint64, np.float64])
def test_wide_types_accumulate_in_float64(upsample: Upsample, dtype: type) -> None:
    x = np.array([[16777217, 16777217]], dtype=dtype)
    got = upsample(x, [1, 2], "linear")
    assert_bits(got, np.full((1, 4), 16777217, dtype=dtype))


@impl_param
def test_uint64_saturates(upsample: Upsample) -> None:
    top = np.iinfo(np.uint64).max  # float64(2**64 - 1) = 2**64, out of range
    x = np.array([[top, top]], dtype=np.uint64)
    assert_bits(upsample(x, [1, 2], "linear"), np.full((1, 4), top, dtype=np.uint64))


# ---------------------------------------------------------------------------------------------
# the global no-resize copy, rank 0, empty axes
# ---------------------------------------------------------------------------------------------


@impl_param
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_no_resize_copy_is_global(upsample: Upsample, mode: str) -> None:
    """d=3, s=1.1: 3 x 1.1 = 3.3 -> 3; X comes back unchanged (the formula would be [0,0,1])."""
    x = np.array([10, 20, 30], dtype=np.float32)
    got = upsample(x, [1.1], mode)
    assert_bits(got, x)
    assert not np.shares_memory(got, x)
    x2 = np.arange(9, dtype=np.float32).reshape(3, 3)
    got2 = upsample(x2, [1.1, 1.1], mode)
    assert_bits(got2, x2)
    assert not np.shares_memory(got2, x2)


@impl_param
def test_no_resize_copy_does_not_apply_when_another_axis_grows(upsample: Upsample) -> None:
    """X[3,2] with scales [1.1, 2]: rows trunc(o/1.1) = 0, 0, 1."""
    x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    expected = np.array([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4]], dtype=np.float32)
    assert_bits(upsample(x, [1.1, 2]), expected)


@impl_param
@pytest.mark.parametrize(("scales", "mode"), [
    ([], "nearest"), ((), "linear"), (np.array([], dtype=np.float32), "nearest"),
])
def test_rank0_with_empty_scales(upsample: Upsample, mode: str, scales: object) -> None:
    x = np.array(2.5, dtype=np.float32)
    got = upsample(x, scales, mode)
    assert isinstance(got, np.ndarray)
    assert_bits(got, np.array(2.5, dtype=np.float32))
    assert not np.shares_memory(got, x)


@impl_param
def test_python_scalar_input(upsample: Upsample) -> None:
    got = upsample(7, [])
    assert got.shape == ()
    assert got == 7


@impl_param
@pytest.mark.parametrize(
    ("shape", "scales", "mode", "out_shape"),
    [  # an empty output is nothing to compute, in either mode
        ((1, 0, 2, 2), [1, 1, 2, 2], "nearest", (1, 0, 4, 4)),
        ((1, 1, 0, 2), [1, 1, 2, 2], "linear", (1, 1, 0, 4)),
        ((0,), [3], "nearest", (0,)),
        ((0, 3), [2, 2], "linear", (0, 6)),
    ],
)
def test_zero_size_axes(upsample: Upsample, shape, scales, mode: str, out_shape) -> None:
    got = upsample(np.zeros(shape, np.float32), scales, mode)
    assert got.shape == out_shape
    assert got.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# legacy mode names, layouts, byte order
# ---------------------------------------------------------------------------------------------


@impl_param
@pytest.mark.parametrize("alias", ["bilinear", "trilinear"])
def test_legacy_linear_names_warn_and_run_linear(upsample: Upsample, alias: str) -> None:
    expected = np.array(BILINEAR_ROWS, dtype=np.float32).reshape(2, 1, 4, 8)
    with pytest.warns(UpsampleWarning, match=alias):
        got = upsample(BILINEAR_X, [1, 1, 2, 4], alias)
    assert_bits(got, expected)


@impl_param
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_canonical_modes_do_not_warn(upsample: Upsample, mode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        upsample(BILINEAR_X, [1, 1, 2, 4], mode)


@impl_param
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_byte_swapped_and_strided_input(upsample: Upsample, mode: str) -> None:
    x = BILINEAR_X.astype(BILINEAR_X.dtype.newbyteorder("S"))
    assert not x.dtype.isnative
    got = upsample(x, [1, 1, 2, 4], mode)
    assert got.dtype == np.dtype("=f4")
    assert got.flags.c_contiguous
    if mode == "linear":
        expected = np.array(BILINEAR_ROWS, dtype=np.float32).reshape(2, 1, 4, 8)
    else:  # integer scales: input index o // s on each axis
        expected = np.repeat(np.repeat(BILINEAR_X, 2, axis=2), 4, axis=3)
    assert_bits(got, expected)
    # a transposed (non-contiguous) view: what the other implementation gives for its copy
    t = np.arange(12, dtype=np.float32).reshape(3, 4).T
    other = onnx_upsample.upsample if upsample is ref.upsample else ref.upsample
    assert_bits(upsample(t, [2, 1.5], mode), other(np.ascontiguousarray(t), [2, 1.5], mode))


@impl_param
def test_list_input(upsample: Upsample) -> None:
    got = upsample([[1, 2], [3, 4]], [2, 1.5])
    assert got.tolist() == [[1, 1, 2], [1, 1, 2], [3, 3, 4], [3, 3, 4]]


@impl_param
def test_scales_as_a_1x4_array(upsample: Upsample) -> None:
    """Contract §3: scales may be an array of any shape with rank-many elements (ORT: [1, 4])."""
    expected = np.array(
        [[[[1, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4], [3, 3, 3, 4, 4, 4]]]],
        dtype=np.float32,
    )
    assert_bits(upsample(X22, np.array([[1, 1, 2, 3]], dtype=np.float32)), expected)
