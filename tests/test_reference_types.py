"""Each element type's own rules, for the slow reference and the fast path, against
hand-computed arrays: float16 and bfloat16 computed in float32 and rounded once, complex
parts computed separately, signed zeros and NaN through the linear sum, and nearest on
bool, str, bytes and object arrays (the very same objects). Expected values as in
``test_reference.py``: from ORT's formulas and the contract's, worked out by hand.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from reference_checks import (
    Upsample,
    _axis_taps,
    assert_bits,
    f32,
    impl_param,
    ort_bilinear_2d,
    same_bits,
)

from onnx_upsample import reference
from onnx_upsample._spec.dtypes import TYPES, ElementType

# ---------------------------------------------------------------------------------------------
# float16 / bfloat16: computed in float32, rounded once
# ---------------------------------------------------------------------------------------------


def _low_precision_case(dtype: type, bits: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    row = np.array([list(bits)], dtype=np.uint16).view(dtype)
    expected = ort_bilinear_2d(row.astype(np.float32), 1, 3).astype(dtype)
    return row, expected


def _low_precision_arithmetic(row: np.ndarray, dtype: type) -> np.ndarray:
    """The wrong way: weights and sums in the narrow type itself."""
    values = row.astype(np.float32)
    out = []
    for x1, x2, d1, d2 in _axis_taps(2, 6, f32(3)):
        half = dtype(0.5)
        lo = dtype(dtype(d2) * half) * dtype(values[0, x1])
        hi = dtype(dtype(d1) * half) * dtype(values[0, x2])
        out.append(dtype(dtype(dtype(lo + hi) + lo) + hi))
    return np.array([out], dtype=dtype)


@impl_param
@pytest.mark.parametrize(
    ("dtype", "bits"),
    [
        (np.float16, (12294, 45114)),  # 0.1257, -0.1321
        (ml_dtypes.bfloat16, (16164, 15831)),  # 0.640625, 0.10498
    ],
    ids=["float16", "bfloat16"],
)
def test_half_types_round_once_from_float32(upsample: Upsample, dtype: type, bits) -> None:
    row, expected = _low_precision_case(dtype, bits)
    # the case discriminates: arithmetic in the narrow type would give another result
    assert not same_bits(_low_precision_arithmetic(row, dtype), expected)
    got = upsample(row, [1, 3], "linear")
    assert got.dtype == np.dtype(dtype)
    assert_bits(got, expected)


@impl_param
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_half_types_nearest(upsample: Upsample, dtype: type) -> None:
    x = np.array([[1.5, -2.25]], dtype=dtype)
    expected = np.array([[1.5, 1.5, -2.25, -2.25]] * 2, dtype=dtype)
    assert_bits(upsample(x, [2, 2]), expected)


# ---------------------------------------------------------------------------------------------
# complex, signed zero, NaN
# ---------------------------------------------------------------------------------------------


@impl_param
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_parts_are_computed_separately(upsample: Upsample, dtype: type) -> None:
    """X = [1+0j, 2+inf*j] x2: o=0 blends with weights 1 and 0.

    Real part: 1*1 + 0*2 = 1 (a complex multiply would give 0*inf = NaN here);
    imaginary part: 1*0 + 0*inf = NaN (the real rule on that part, as ORT on a float).
    """
    x = np.array([1 + 0j, complex(2, np.inf)], dtype=dtype)
    got = upsample(x, [2], "linear")
    assert got.dtype == np.dtype(dtype)
    real = np.array([1, 1.5, 2, 2], dtype=x.real.dtype)
    assert_bits(np.ascontiguousarray(got.real), real)
    assert np.isnan(got.imag[0])
    assert np.array_equal(got.imag[1:], np.full(3, np.inf))


@impl_param
def test_complex_nearest(upsample: Upsample) -> None:
    x = np.array([1 + 2j, -3 - 4j], dtype=np.complex64)
    expected = np.array([1 + 2j, 1 + 2j, -3 - 4j, -3 - 4j], dtype=np.complex64)
    assert_bits(upsample(x, [2]), expected)


@impl_param
@pytest.mark.parametrize(
    ("shape", "scales"), [((1, 2), [1, 2]), ((2,), [2]), ((1, 1, 2, 2), [1, 1, 2, 2])]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_negative_zero_stays_negative(upsample: Upsample, shape, scales, dtype) -> None:
    """The sum starts from the first term: -0.0 + -0.0 = -0.0 (a 0.0 seed would give +0.0)."""
    x = np.full(shape, -0.0, dtype=dtype)
    got = upsample(x, scales, "linear")
    assert got.size > 0
    assert np.all(got == 0)
    assert np.all(np.signbit(got))


@impl_param
def test_nan_through_zero_weight_of_an_s1_axis(upsample: Upsample) -> None:
    """Rank 2 interpolates the s == 1 axis too; row 0 gives X[1,0] = inf weight 0: NaN.

    By hand (scales [1, 2]): row 0 has y weights 1 (row 0) and 0 (row 1); columns 0 and 1
    read X[:, 0], so 0*inf = NaN there; columns 2, 3 read only X[:, 1] (finite). Row 1 is the
    last index (0.5/0.5 of row 1 with itself). Interpolating only the scaled axis would give
    row 0 = [1, 1.5, 2, 2].
    """
    x = np.array([[1, 2], [np.inf, 4]], dtype=np.float32)
    got = upsample(x, [1, 2], "linear")
    expected = np.array([[np.nan, np.nan, 2, 2], [np.inf, np.inf, 4, 4]], dtype=np.float32)
    assert got.shape == expected.shape
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.array_equal(got[~np.isnan(got)], expected[~np.isnan(expected)])
    # and the formula of docs/peers.md §3, applied literally, agrees
    with np.errstate(invalid="ignore"):
        literal = ort_bilinear_2d(x, 1, 2)
    assert np.array_equal(np.isnan(literal), np.isnan(expected))


@impl_param
def test_s1_axis_of_rank2_changes_last_bits(upsample: Upsample) -> None:
    """Rank 2 with scales [1, 3]: the size-2 axis with s == 1 is interpolated (weights 1/0 and
    0.5/0.5), ORT's order of float32 operations; the result is ORT's formula bit for bit."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    expected = ort_bilinear_2d(x, 1, 3)
    assert_bits(upsample(x, [1, 3], "linear"), expected)


# ---------------------------------------------------------------------------------------------
# non-numeric element types in nearest
# ---------------------------------------------------------------------------------------------


@impl_param
def test_bool_nearest(upsample: Upsample) -> None:
    x = np.array([[True, False]])
    expected = np.array([[True, True, False, False]] * 2)
    assert_bits(upsample(x, [2, 2]), expected)


@impl_param
def test_str_nearest(upsample: Upsample) -> None:
    x = np.array(["a", "bcd"])
    got = upsample(x, [2])
    assert got.dtype == x.dtype
    assert got.tolist() == ["a", "a", "bcd", "bcd"]


@impl_param
def test_bytes_nearest(upsample: Upsample) -> None:
    x = np.array([[b"x"], [b"yz"]])
    got = upsample(x, [1.5, 3])
    assert got.dtype == x.dtype
    assert got.tolist() == [[b"x"] * 3, [b"x"] * 3, [b"yz"] * 3]


@impl_param
def test_object_nearest_gathers_references(upsample: Upsample) -> None:
    first, second = ["not", "inspected"], {"k": 1}
    x = np.empty(2, dtype=object)
    x[0], x[1] = first, second
    got = upsample(x, [2])
    assert got.dtype == object
    assert got[0] is first and got[1] is first
    assert got[2] is second and got[3] is second


# ---------------------------------------------------------------------------------------------
# the oracle's arithmetic per type: its own table, the same as the package's
# ---------------------------------------------------------------------------------------------


def _numpy_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("etype", [t for t in TYPES if t.linear_ok], ids=lambda t: t.name)
def test_the_oracle_and_the_element_table_read_the_same_arithmetic(etype: ElementType) -> None:
    """The oracle keeps its own accumulation types (reference.py), not the element table's
    (_spec/dtypes.py, which the fast path reads): a wrong row in either one fails here, where
    a shared row would have passed the differential tests on both sides."""
    acc, parts, integer = reference.linear_arithmetic(_numpy_dtype(etype.name))
    assert (np.dtype(acc), parts, integer) == (etype.accumulator, etype.parts, etype.is_integer)


def test_the_oracle_computes_linear_mode_on_exactly_the_element_tables_types() -> None:
    for etype in TYPES:
        if etype.name in ("str", "bytes", "object"):
            continue  # numpy needs a length for these; nearest-only in both tables
        dtype = _numpy_dtype(etype.name)
        if etype.linear_ok:
            reference.linear_arithmetic(dtype)
        else:
            with pytest.raises(KeyError):
                reference.linear_arithmetic(dtype)
