"""The linear kernel's cache of expanded input rows, both ways it finds them, bit for bit.

An output row blends the input rows of its corners, each expanded once (gathered at the row
taps, converted) into a slot of the worker's cache. Where the input rows of two steps of
the outermost interpolated axis fit in a bounded cache (``LINEAR_DIRECT_CACHE_BYTES`` per
worker), each input row has the one slot its row number gives, so a volume's depth pairs
expand each plane once; elsewhere a few slots are searched. A row found in the wrong slot,
or a slot taken while a corner of the same output row still reads it, changes values.
These cases lie on both sides of the bound (rows long enough that the planes do not fit),
with one, two and three interpolated outer axes, scales that do and do not pair rows, the
expanded rows checked for special values or not, and calls split into work items that
start inside a sweep. Results are compared with onnxruntime where it has a kernel, with
the slow reference elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import dtype_of
from ort_oracle import assert_linear_exact

from onnx_upsample._kernels import _native


def slots_needed(shape: tuple[int, ...], scales: list[float], itemsize: int) -> int:
    """Bytes of the cache found by row number for a call on one work item: two steps of
    the outermost interpolated outer axis, in expanded rows (two row taps, the row's
    output length, float32 or float64 values; the slot count a power of two)."""
    outer = [i for i, s in enumerate(scales[:-1]) if s != 1.0]
    rows_per_step = int(np.prod(shape[outer[0] + 1:-1])) if outer else 1
    slots = 1
    while slots < 2 * rows_per_step:
        slots *= 2
    return slots * (2 * int(shape[-1] * scales[-1]) * itemsize + 64)


# (shape, scales): the cache the first rows of each pair reach is in the comment
CASES = [
    ((1, 1, 6, 16, 16), [1.0, 1.0, 2.0, 2.0, 2.0]),  # a volume: found by number
    ((1, 1, 3, 24, 1400), [1.0, 1.0, 2.0, 2.0, 2.0]),  # long rows: searched
    ((2, 3, 3, 4, 13), [2.0, 2.0, 1.5, 2.0, 2.0]),  # four interpolated axes above the row
    ((3, 40, 700), [2.0, 3.0, 2.0]),  # planes of 40 rows of 1400: searched
    ((9, 31, 12), [1.5, 2.0, 2.0]),  # depth pairs at some positions only
    ((2, 3, 17, 19), [1.0, 1.0, 2.0, 2.0]),  # an image: one interpolated outer axis
]


def test_cases_lie_on_both_sides_of_the_bound() -> None:
    needed = [slots_needed(shape, scales, 4) for shape, scales in CASES]
    assert min(needed) <= _native.LINEAR_DIRECT_CACHE_BYTES < max(needed)


def values(shape: tuple[int, ...], name: str) -> np.ndarray:
    rng = np.random.default_rng(shape[-1] * 3 + len(shape))
    if np.dtype(dtype_of(name)).kind == "u":
        return rng.integers(0, 256, shape).astype(dtype_of(name))
    return (rng.standard_normal(shape) * 50).astype(dtype_of(name))


@pytest.mark.parametrize(("shape", "scales"), CASES)
@pytest.mark.parametrize("name", ["float32", "uint8"])
def test_rows_from_the_cache(shape: tuple[int, ...], scales: list[float], name: str) -> None:
    assert_linear_exact(values(shape, name), scales)


def test_rows_of_double_sums_from_the_cache() -> None:
    # float64 values (double sums, twice the bytes a slot): the reference is the oracle,
    # on one case found by number and one searched
    assert_linear_exact(values((1, 1, 4, 12, 16), "float64"), [1.0, 1.0, 2.0, 2.0, 2.0])
    assert slots_needed((1, 1, 2, 12, 700), [1.0, 1.0, 2.0, 2.0, 2.0], 8) > (
        _native.LINEAR_DIRECT_CACHE_BYTES)
    assert_linear_exact(values((1, 1, 2, 12, 700), "float64"), [1.0, 1.0, 2.0, 2.0, 2.0])


@pytest.mark.parametrize(("shape", "scales"), CASES[:3])
def test_rows_that_are_not_plain_keep_their_mark_in_the_cache(
        shape: tuple[int, ...], scales: list[float]) -> None:
    # an infinity in some input rows: the rows beside it on every axis take every term,
    # wherever in the cache the row lies and however often it is found there
    x = values(shape, "float32")
    x[..., 1::5, 3] = np.inf
    assert_linear_exact(x, scales)


@pytest.mark.usefixtures("split_two_threads")
@pytest.mark.parametrize(("shape", "scales"), CASES[:3])
def test_work_items_that_start_inside_a_sweep(shape: tuple[int, ...],
                                              scales: list[float]) -> None:
    assert_linear_exact(values(shape, "float32"), scales)
