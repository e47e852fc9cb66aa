"""Test helper: how the ORT differential tests draw their cases (no tests here): scales,
values, and the float32 arithmetic the expectations are written in."""

from __future__ import annotations

import math

import numpy as np
from platform_nan import CREATED_NAN16, CREATED_NAN32

F32_LIMIT = 2**24


FIXED_SCALES = (2.0, 3.0, 4.0, 1.1, 1.3333334, 1.5, 1.7, 2.7)


# Reference comparisons are per-element Python loops: only for outputs up to this size.
REFERENCE_MAX_ELEMENTS = 400


def _f32_bits(*patterns: int) -> np.ndarray:
    return np.array(patterns, dtype=np.uint32).view(np.float32)


def make_values(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...],
                mode: str, special_fraction: float = 0.3) -> np.ndarray:
    """Random values of ``dtype`` mixed with the type's special values."""
    n = math.prod(shape)
    if dtype.kind == "f":
        magnitude = 10.0 ** rng.integers(-3, 4, n)
        values = (rng.standard_normal(n) * magnitude).astype(dtype)
        specials = float_specials(dtype, mode)
    else:
        info = np.iinfo(dtype)
        top = info.max if not (dtype == np.int32 and mode == "linear") else INT32_LINEAR_MAX
        values = rng.integers(info.min, top, n, endpoint=True, dtype=np.int64).astype(dtype)
        specials = _int_specials(dtype, mode)
    replace = rng.random(n) < special_fraction
    values[replace] = rng.choice(specials, int(replace.sum()))
    return values.reshape(shape)


def draw_scale(rng: np.random.Generator) -> float:
    """1.0 (often), one of the fixed scales, or a random float32 in [1, 4)."""
    kind = rng.random()
    if kind < 0.35:
        return 1.0
    if kind < 0.8:
        return float(rng.choice(FIXED_SCALES))
    return float(np.float32(rng.uniform(1.0, 4.0)))


def f32_out_len(n: int, s: float) -> int:
    return int(np.float32(n) * np.float32(s))


def describe(x: np.ndarray, scales: list[float], mode: str, form: str = "") -> str:
    text = np.array2string(x.reshape(-1)[:12], threshold=12)
    return f"x {x.dtype}{x.shape} {text}..., scales {scales}, {mode}, {form}"


# Keeps int32 linear results below the point where ORT's float -> int32 conversion wraps
# (the sum of the weights can exceed 1 by a few float32 ulps); overflow has its own test.
INT32_LINEAR_MAX = 2**31 - 4096


def float_specials(dtype: np.dtype, mode: str) -> np.ndarray:
    """Special values of a float type. Linear data gets only the NaN the arithmetic creates
    here: which of several different NaNs meeting in one sum ORT returns depends on its code
    path (``test_linear_nan_selection``), so the broad tests keep that question out."""
    if dtype == np.float32:
        nans = FLOAT32_NANS if mode == "nearest" else np.array([CREATED_NAN32])
        return np.concatenate([FLOAT32_SPECIALS, nans])
    nans = FLOAT16_NANS if mode == "nearest" else np.array([CREATED_NAN16])
    return np.concatenate([FLOAT16_SPECIALS, nans])


def _int_specials(dtype: np.dtype, mode: str) -> np.ndarray:
    info = np.iinfo(dtype)
    top = info.max if not (dtype == np.int32 and mode == "linear") else INT32_LINEAR_MAX
    values = [info.min, top, 0, 1, top - 1]
    if info.min < 0:
        values += [-1, info.min + 1]
    if dtype == np.int32:
        values += [2**24 + 1, -(2**24) - 1, 2**24 + 3]
    return np.array(values, dtype=dtype)


FLOAT32_SPECIALS = _f32_bits(
    0x7F800000,  # inf
    0xFF800000,  # -inf
    0x80000000,  # -0.0
    0x00000000,  # 0.0
    0x00000001,  # smallest denormal
    0x807FFFFF,  # largest negative denormal
    0x00800000,  # smallest normal
    0x7F7FFFFF,  # largest finite
    0xFF7FFFFF,  # most negative finite
    0x4B800001,  # 16777218 (above 2**24)
    0x3F800000,  # 1.0
)


FLOAT32_NANS = _f32_bits(
    0xFFC00000,  # negative quiet nan (what 0 * inf and inf - inf create on x86)
    0x7FC00000,  # numpy's nan (what they create on ARM)
    0x7FC00001,  # nan with payload
    0xFFC12345,  # negative nan with payload
    0x7F800001,  # signalling nan
)


FLOAT16_SPECIALS = np.array(
    [0x7C00, 0xFC00, 0x8000, 0x0000, 0x0001, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0x3555],
    dtype=np.uint16,
).view(np.float16)


FLOAT16_NANS = np.array([0xFE00, 0x7E00], dtype=np.uint16).view(np.float16)
