"""Output rows blended in pairs by the linear kernel, bit for bit.

Two output rows that read the same input rows (at x2 on an outer axis, rows 2k and 2k + 1)
are blended in one pass over those rows, each with its own outer weights, and two whole
sweeps of the innermost outer axis pair up the same way when the axis above it reads the
same input rows at two neighbouring positions (a volume at x2 on depth). A pair that took a
weight from the wrong row, the wrong axis or the wrong sweep changes values; these cases
mix rows that pair with rows that do not (scales 1.5 and 1, odd counts, a copied axis
between, work items that end inside a sweep), with rows whose length is no multiple of the
vector width, and with the output at unaligned addresses. Results are compared with
onnxruntime where it has a kernel, with the slow reference elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import assert_identical_but_nan_payloads, dtype_of
from ort_oracle import assert_same_bits, ort_accepts, ort_upsample

from onnx_upsample import reference, upsample

# (shape, scales): which rows pair is in the comment
CASES = [
    ((6, 10, 37), [2.0, 2.0, 2.0]),  # every row, and every sweep, in a pair
    ((7, 9, 20), [1.5, 2.0, 2.0]),  # sweeps pair at some depths only; an odd last row
    ((5, 8, 19), [2.0, 1.5, 2.0]),  # rows pair at some heights only
    ((4, 6, 24), [1.0, 2.0, 2.0]),  # scale 1 on depth: positions read different rows
    ((1, 2, 4, 6, 20), [1.0, 1.0, 2.0, 2.0, 2.0]),  # a copied axis above the volume
    ((1, 3, 9, 21), [1.0, 1.0, 2.0, 2.0]),  # an image: rows pair, channels do not
    ((2, 2, 3, 4, 17), [1.0, 2.0, 2.0, 1.5, 2.0]),  # three interpolated outer axes
    ((40, 11), [2.0, 2.0]),  # grey image
    ((12, 9, 3), [2.0, 2.0, 1.0]),  # an (H, W, C) image: rows pair, the identity block
]

TYPES = ["float32", "uint8", "float16", "float64"]  # int16, int32 take the uint8 path


def values(shape: tuple[int, ...], name: str) -> np.ndarray:
    rng = np.random.default_rng(len(shape) * 7 + shape[-1])
    dtype = dtype_of(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        high = min(int(info.max), 2**30)
        low = max(int(info.min), -(2**30))
        return rng.integers(low, high, shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def check(x: np.ndarray, scales: list[float]) -> None:
    context = f"{x.dtype}{x.shape}, scales {scales}"
    if ort_accepts(x.dtype, scales, "linear"):
        expected = ort_upsample(x, scales, "linear")
        assert_same_bits(upsample(x, scales, "linear"), expected, context)
        compare = assert_same_bits
    else:
        expected = reference.upsample(x, scales, "linear")
        assert_identical_but_nan_payloads(upsample(x, scales, "linear"), expected, context)
        compare = assert_identical_but_nan_payloads  # type: ignore[assignment]
    size = expected.size
    for shift in (1, 3):  # the two rows of a pair at other alignments than a lone row's
        out = np.empty(size + 4, expected.dtype)[shift:shift + size].reshape(expected.shape)
        upsample(x, scales, "linear", out=out)
        compare(out, expected, f"out= shifted by {shift} elements, {context}")


@pytest.mark.parametrize(("shape", "scales"), CASES)
@pytest.mark.parametrize("name", TYPES)
def test_pairs_match(shape: tuple[int, ...], scales: list[float], name: str) -> None:
    check(values(shape, name), scales)


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "scales"), CASES)
@pytest.mark.parametrize("name", ["float32", "uint8"])
def test_pairs_split_over_threads(shape: tuple[int, ...], scales: list[float], name: str,
                                  split_two_threads: None) -> None:
    check(values(shape, name), scales)


@pytest.mark.parametrize("name", ["float32", "float16"])
def test_pairs_with_special_values(name: str) -> None:
    """Infinities and NaNs in some input rows: a pair's rows take each its own NaN (0 x inf
    where a weight is 0) and keep the payload of their own first NaN term."""
    x = values((6, 10, 37), name)
    x[1, 3, 5] = np.inf
    x[2, 4, 6] = -np.inf
    x[3, 5, 7:9] = np.nan
    check(x, [2.0, 2.0, 2.0])
