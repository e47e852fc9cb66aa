"""The explainer on conventions built here from their definitions (PyTorch's reciprocal
multiply, TVM's round, integer rounding, a separable lerp, complex half-pixel), and on
narrowed element types (wide types computed in float32, round half to even, int64 through
int32): each checked first to differ from Upsample, so that no test passes because the
convention happens to coincide with it."""

from __future__ import annotations

import numpy as np
import pytest
from explain_inputs import RNG_SEED, differs_from_upsample, random_array

import onnx_upsample
from onnx_upsample.conformance._explain import _search, explain

f32 = np.float32
# ---------------------------------------------------------------------------------------------
# Conventions built here from their definitions
# ---------------------------------------------------------------------------------------------


def _find_reciprocal_case(departures: int) -> tuple[float, int, np.ndarray]:
    """A float32 scale and input length where PyTorch's floor(o * f32(1/s)) reads another
    input index than Upsample's trunc(f32(o) / f32(s)) at ``departures`` output indices or
    more, and differs from the exact floor(o / s) and from a division by f32(out) / f32(in)."""
    for scale in np.arange(1.1, 3.0, 0.01, dtype=np.float64).astype(np.float32):
        for n_in in range(2, 301):
            n_out = int(f32(n_in) * scale)
            o = np.arange(n_out)
            clamp = n_in - 1
            pytorch = np.minimum(np.floor(o.astype(f32) * f32(1.0 / float(scale))), clamp)
            upsample = np.minimum(np.trunc(o.astype(f32) / scale), clamp)
            exact = np.minimum(np.floor(o / float(scale)), clamp)
            sizes = np.minimum(np.trunc(o.astype(f32) / (f32(n_out) / f32(n_in))), clamp)
            if (np.count_nonzero(pytorch != upsample) >= departures
                    and all(not np.array_equal(pytorch, other) for other in (exact, sizes))):
                return float(scale), n_in, pytorch.astype(np.int64)
    raise AssertionError("no float32 scale in [1.1, 3.0) where the reciprocal differs")


PYTORCH = "Resize asymmetric + floor, reciprocal multiply (PyTorch)"


def test_reciprocal_multiply_pytorch_nearest() -> None:
    scale, n_in, index = _find_reciprocal_case(_search.MIN_DEPARTURES)
    x = random_array((1, 3, n_in), seed=3)
    scales = [1, 1, scale]
    theirs = x[:, :, index]
    assert differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == PYTORCH


def test_reciprocal_multiply_at_one_index_only_coincides() -> None:
    # the first length where PyTorch's rule reads another index than Upsample does so at one
    # output index: in three channels, but one choice of index, which an off-by-one would
    # make in the same direction half the time
    scale, n_in, index = _find_reciprocal_case(1)
    x = random_array((1, 3, n_in), seed=3)
    theirs = x[:, :, index]
    assert differs_from_upsample(x, theirs, [1, 1, scale], "nearest")
    result = explain(x, theirs, [1, 1, scale], "nearest")
    assert result.verdict == "coincides", result.summary
    assert result.best == PYTORCH and "(1 output index read from another" in result.summary


def test_pytorch_nearest_keeps_an_unchanged_length() -> None:
    # ATen's nearest_idx copies an axis whose length does not change (9 x 1.1 -> 9), where
    # Upsample reads floor(o / 1.1) = 0, 0, 1, ..., 7 once another axis resizes (here the
    # doubled one, which both read as o // 2): 8 rows and 8 columns read one off
    x = random_array((1, 3, 9, 9), seed=5)
    scales = [1, 2, 1.1, 1.1]
    theirs = np.repeat(x, 2, axis=1)
    assert differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert PYTORCH in result.matches


def test_output_size_by_round_tvm() -> None:
    # 5 * 1.5 = 7.5: Upsample truncates to 7, TVM rounds to 8
    x = random_array((1, 1, 5, 4), seed=4)
    scales = [1, 1, 1.5, 2]
    rows = np.minimum(np.trunc(np.arange(8, dtype=f32) / f32(1.5)), 4).astype(np.int64)
    cols = np.arange(8) // 2
    theirs = x[:, :, rows][:, :, :, cols]
    assert onnx_upsample.output_shape(x.shape, scales) == (1, 1, 7, 8)
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample, output size by round (TVM)"


def test_swapped_scales_are_named() -> None:
    # height's scale applied to the width and the width's to the height: another shape
    x = random_array((1, 1, 5, 7), seed=26)
    scales = [1, 1, 1.5, 2.5]
    rows = np.minimum(np.trunc(np.arange(12, dtype=f32) / f32(2.5)), 4).astype(np.int64)
    cols = np.minimum(np.trunc(np.arange(10, dtype=f32) / f32(1.5)), 6).astype(np.int64)
    theirs = x[:, :, rows][:, :, :, cols]
    assert onnx_upsample.output_shape(x.shape, scales) == (1, 1, 7, 17)
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample, scales of the last two axes swapped"


def test_swapped_scales_of_the_same_shape_are_named() -> None:
    # 8 x 2 and 8 x 2.1 are both 16: the shape cannot tell, the rows and columns read can
    # (floor(o / 2) and floor(o / 2.1) differ at o = 2, 4, ..., 14 on each axis)
    x = random_array((1, 2, 8, 8), seed=27)
    scales = [1, 1, 2, 2.1]
    halves = np.arange(16) // 2
    by_2p1 = np.minimum(np.trunc(np.arange(16, dtype=f32) / f32(2.1)), 7).astype(np.int64)
    theirs = x[:, :, by_2p1][:, :, :, halves]
    assert differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample, scales of the last two axes swapped"


def test_reversed_scales_are_named() -> None:
    # [1.5, 2, 3] applied as [3, 2, 1.5] on a 3-D input (rank 3: ORT interpolates all three)
    x = random_array((2, 3, 4), seed=28)
    theirs = onnx_upsample.upsample(x, [3, 2, 1.5], "linear")
    result = explain(x, theirs, [1.5, 2, 3], "linear")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample, scales in reverse axis order"


def _bilinear_scale2(x: np.ndarray) -> np.ndarray:
    """Upsample linear with scales [1, 1, 2, 2], exactly: weights are 0, 0.5 or 1, so every
    blend of integers is exact in float64 (ties at .5 included)."""
    def taps(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        o = np.arange(2 * n)
        lo = np.minimum(o // 2, n - 1)
        hi = np.minimum(lo + 1, n - 1)
        return lo, hi, np.where(lo == hi, 0.0, (o % 2) / 2)

    rows_lo, rows_hi, ty = taps(x.shape[2])
    cols_lo, cols_hi, tx = taps(x.shape[3])
    v = x.astype(np.float64)
    ty, tx = ty[:, None], tx[None, :]
    top = v[:, :, rows_lo][:, :, :, cols_lo] * (1 - tx) + v[:, :, rows_lo][:, :, :, cols_hi] * tx
    bottom = (v[:, :, rows_hi][:, :, :, cols_lo] * (1 - tx)
              + v[:, :, rows_hi][:, :, :, cols_hi] * tx)
    return top * (1 - ty) + bottom * ty


def test_integers_rounded_instead_of_truncated_uint8_linear() -> None:
    rng = np.random.default_rng(RNG_SEED + 5)
    x = rng.integers(0, 256, (1, 2, 5, 6)).astype(np.uint8)
    scales = [1, 1, 2, 2]
    exact = _bilinear_scale2(x)
    assert np.array_equal(np.trunc(exact).astype(np.uint8),
                          onnx_upsample.upsample(x, scales, "linear"))  # the formula is right
    half_even = np.clip(np.rint(exact), 0, 255).astype(np.uint8)
    half_away = np.clip(np.floor(exact + 0.5), 0, 255).astype(np.uint8)
    assert not np.array_equal(half_even, half_away)  # .5 ties are there to tell them apart
    for theirs, expected in [
        (half_even, "Upsample, integers rounded half to even instead of truncated"),
        (half_away, "Upsample, integers rounded half away from zero instead of truncated"),
    ]:
        assert differs_from_upsample(x, theirs, scales, "linear")
        result = explain(x, theirs, scales, "linear")
        assert result.verdict == "convention", result.summary
        assert result.best == expected


def test_separable_lerp() -> None:
    # TF's order: each row blended along the inner axis with a + (b - a) * t, then the rows
    x = random_array((6, 7), seed=6)
    scales = [1.5, 1.7]

    def taps(n: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n_out = int(f32(n) * f32(scale))
        c = np.clip(np.arange(n_out, dtype=f32) / f32(scale), f32(0), f32(n - 1))
        lo = c.astype(np.int64)
        return lo, np.minimum(lo + 1, n - 1), c - lo.astype(f32)

    rows_lo, rows_hi, ty = taps(6, 1.5)
    cols_lo, cols_hi, tx = taps(7, 1.7)

    def row(r: np.ndarray) -> np.ndarray:
        a, b = x[r][:, cols_lo], x[r][:, cols_hi]
        return a + (b - a) * tx[None, :]

    top, bottom = row(rows_lo), row(rows_hi)
    theirs = top + (bottom - top) * ty[:, None]
    assert theirs.dtype == np.float32
    assert differs_from_upsample(x, theirs, scales, "linear")
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample coordinates, separable lerp"


def test_complex_half_pixel_nearest() -> None:
    rng = np.random.default_rng(RNG_SEED + 7)
    x = (rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))).astype(np.complex64)
    scales = [1.5, 1.7]

    def index(n: int, scale: float) -> np.ndarray:
        o = np.arange(int(f32(n) * f32(scale)), dtype=f32)
        c = (o + f32(0.5)) / f32(scale) - f32(0.5)
        floor = np.floor(c)
        return np.clip(floor + (c - floor > 0.5), 0, n - 1).astype(np.int64)

    theirs = x[index(4, 1.5)][:, index(5, 1.7)]
    assert differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.best == "Resize half_pixel + round_prefer_floor"


# ---------------------------------------------------------------------------------------------
# Narrowed element types, TVM's rounding of indices
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64])
def test_wide_types_computed_in_float32_are_named(dtype: type) -> None:
    rng = np.random.default_rng(RNG_SEED)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal((4, 5)).astype(dtype) * 100
    else:
        x = rng.integers(-(2**30), 2**30, (4, 5)).astype(dtype)
    theirs = onnx_upsample.upsample(x.astype(np.float32), [1.5, 2.5]).astype(dtype)
    assert not np.array_equal(theirs, onnx_upsample.upsample(x, [1.5, 2.5]))
    result = explain(x, theirs, [1.5, 2.5])
    assert result.verdict == "convention" and result.best == _search.NARROWED


def test_round_half_to_even_nearest_is_named() -> None:
    # TVM's resize rounds nearest indices half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = np.rint(np.arange(6) / f32(2)).astype(np.int64).clip(0, 2)
    cols = np.rint(np.arange(12) / f32(3)).astype(np.int64).clip(0, 3)
    theirs = x[rows][:, cols]
    assert not np.array_equal(theirs, onnx_upsample.upsample(x, [2, 3]))
    result = explain(x, theirs, [2, 3])
    assert result.best == "Resize asymmetric + round_half_even", result


def test_int64_squeezed_through_int32_is_named() -> None:
    x = (np.arange(12, dtype=np.int64).reshape(3, 4) - 6) * (2**40 + 12345)
    theirs = onnx_upsample.upsample(x.astype(np.int32).astype(np.float32), [1.5, 2]).astype(
        np.int64)
    result = explain(x, theirs, [1.5, 2])
    assert result.best == _search.NARROWED_INT32, result
