"""Channel-last images of rank 3, ``(H, W, C)`` at scale 1 on the channels, bit for bit.

ORT's rank-3 linear kernel interpolates every axis, the channels too: channel c blends
itself (weight 1) and channel c + 1 (weight 0), the last channel itself twice (0.5 and
0.5). The compiled kernel reads such a block as an identity and adds the weight-0 taps only
where they can change a bit; these cases are built to catch every place where they can: an
infinite or NaN neighbour (0 x inf is NaN), a sum of zeros whose sign the weight-0 tap
decides (channel 0 all -0, or all the smallest negative subnormal, whose halves round to -0),
halved subnormals in the last channel, and magnitudes next to the ones the kernel's check of
a row treats as plain. The special values sit in some rows only, so that the other rows take
the fast sum in the same call. Results are compared with onnxruntime where it has a kernel,
with the slow reference elsewhere, serially and split over two threads into row segments.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from differential import assert_identical_but_nan_payloads, dtype_of
from ort_oracle import assert_same_bits, ort_accepts, ort_upsample

from onnx_upsample import reference, upsample

FLOAT_TYPES = ("float32", "float16", "bfloat16", "float64", "complex64", "complex128")
INT_TYPES = ("uint8", "int8", "int32", "int16", "uint16", "int64", "uint32", "uint64")

# (shape, scales): scale 1 on the last axis; integer scales (the row axis repeated), others
# (gathered), 1 on the outer axis, rows shorter than a vector, 1 to 5 channels
CASES = [
    ((24, 9, 3), [2.0, 2.0, 1.0]),
    ((24, 7, 4), [1.5, 1.7, 1.0]),
    ((24, 5, 1), [3.0, 2.0, 1.0]),
    ((24, 6, 2), [1.0, 2.0, 1.0]),
    ((24, 11, 5), [2.0, 1.0, 1.0]),
    ((24, 2, 1), [1.5, 1.5, 1.0]),
    ((24, 13), [2.0, 1.0]),  # rank 2: the second axis is the block, at scale 1
]


def _tiny(dtype: np.dtype) -> np.ndarray:
    """The type's smallest positive subnormal (of one part, for complex types)."""
    if dtype == dtype_of("bfloat16"):
        return np.array([1], np.uint16).view(dtype)
    part = ml_dtypes.finfo(dtype).dtype
    return np.array([ml_dtypes.finfo(part).smallest_subnormal], part)


def special_image(shape: tuple[int, ...], name: str, seed: int = 0) -> np.ndarray:
    """Random values of type ``name`` with the cases of the module docstring in rows 1-14
    (floating types), the rows below plain; integers over the type's whole range (int32: to
    2**30)."""
    rng = np.random.default_rng(seed)
    dtype = dtype_of(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = info.min, info.max
        if name == "int32":  # sums near 2**31 round up to it, where ORT wraps (semantics.md)
            low, high = -(2**30), 2**30
        x = rng.integers(low, high, shape, dtype=dtype, endpoint=True)
        x.reshape(-1)[:2] = [low, high]
        return x
    work = (rng.standard_normal(shape) * 10).astype(np.float64)
    if dtype.kind == "c":
        work = work + 1j * (rng.standard_normal(shape) * 10)
    x = work.astype(dtype)
    if x.ndim == 2:
        x = x[:, :, None]  # the last axis is the block: one image row's "channels"
    width, channels = x.shape[1:]
    other = min(1, channels - 1)
    tiny = _tiny(dtype)[0]
    x[1:4, 1:4, 0] = -0.0
    x[1:4, 1:4, other] = 1.0 if other else -0.0
    x[5:8, 1:4, 0] = -tiny
    x[5:8, 1:4, other] = 1.0 if other else -tiny
    x[9, 1, other] = np.inf
    x[9, 3 % width, other] = -np.inf
    x[10, 2 % width, other] = np.nan
    x[11:13, :, channels - 1] = tiny
    x[11, ::2, channels - 1] = -tiny
    x[12, 1::3, channels - 1] = -0.0
    x[12, 2::3, channels - 1] = 3 * tiny
    if ml_dtypes.finfo(dtype).minexp < -101:  # float32, bfloat16, float64 and their complex types
        x[13, :, 0] = -(2.0 ** -100)  # the least magnitude of a plain row, and just below
        x[14, :, 0] = -(2.0 ** -101)
        x[13:15, :, other] = 2.0 ** -100
    if dtype.kind == "c":  # the same along the imaginary parts, of other pixels
        x.imag[1:15] = np.roll(x.real[1:15], 1, axis=1)
    return x.reshape(shape)


def expected_of(x: np.ndarray, scales: list[float]) -> np.ndarray:
    if ort_accepts(x.dtype, scales, "linear"):
        return ort_upsample(x, scales, "linear")
    return reference.upsample(x, scales, "linear")


def check(x: np.ndarray, scales: list[float]) -> None:
    context = f"{x.dtype}{x.shape}, scales {scales}"
    expected = expected_of(x, scales)
    if ort_accepts(x.dtype, scales, "linear"):
        assert_same_bits(upsample(x, scales, "linear"), expected, context)
    else:  # the reference: NaN payloads may differ where two NaNs meet (differential.py)
        assert_identical_but_nan_payloads(upsample(x, scales, "linear"), expected, context)
    if x.dtype == np.float32:  # output rows at every alignment of a 4-byte element
        size = expected.size
        for shift in (1, 3, 7):
            out = np.empty(size + 8, np.float32)[shift:shift + size].reshape(expected.shape)
            upsample(x, scales, "linear", out=out)
            assert_same_bits(out, expected, f"out= shifted by {shift}, {context}")


@pytest.mark.parametrize(("shape", "scales"), CASES)
@pytest.mark.parametrize("name", FLOAT_TYPES)
def test_float_channels_with_special_values(shape, scales, name) -> None:
    check(special_image(shape, name), scales)


@pytest.mark.parametrize(("shape", "scales"), CASES)
@pytest.mark.parametrize("name", INT_TYPES)
def test_integer_channels(shape, scales, name) -> None:
    check(special_image(shape, name), scales)


@pytest.mark.parametrize("scales", [[2.0, 2.0, 1.0], [1.5, 1.25, 1.0]])
@pytest.mark.parametrize("name", ["float32", "uint8", "float16", "bfloat16", "float64"])
def test_split_over_threads(name, scales, split_two_threads) -> None:
    x = special_image((40, 120, 3), name, seed=1)
    x[30:33, 100:103] = special_image((24, 9, 3), name)[1:4, 1:4]  # -0 in a later segment
    check(x, scales)


# (dtype, scales): where every product and sum is exact in float32 (small integers, weights
# of few binary digits) the last channel's sum is made once and doubled; at the edge of
# exactness and past it (16-bit values at x8, x16; 1/3 weights at x3) every tap is added
@pytest.mark.parametrize(("name", "scales"), [
    ("uint8", [4.0, 4.0, 1.0]),
    ("uint8", [3.0, 2.0, 1.0]),
    ("int8", [8.0, 2.0, 1.0]),
    ("uint16", [8.0, 8.0, 1.0]),
    ("int16", [8.0, 16.0, 1.0]),
    ("uint16", [16.0, 16.0, 1.0]),
])
def test_integer_channels_at_the_edge_of_exact_sums(name: str, scales: list[float]) -> None:
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype_of(name))
    x = rng.integers(info.min, info.max, (5, 4, 3), dtype=dtype_of(name), endpoint=True)
    x[0, 0] = info.max
    x[1, 1] = info.min
    check(x, scales)
