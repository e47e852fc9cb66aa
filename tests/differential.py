"""Test helper: what the differential tests share (no tests here): the element types they
draw, the special values, and the bit-for-bit comparisons of two results."""

from __future__ import annotations

import ml_dtypes
import numpy as np

NUMERIC_TYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "bfloat16",
)
TEXT_TYPES = ("str", "bytes", "object")
ALL_TYPES = NUMERIC_TYPES + TEXT_TYPES
LINEAR_TYPES = tuple(name for name in NUMERIC_TYPES if name != "bool")


# Bit patterns of each float width worth forcing into the data.
FLOAT_SPECIAL_BITS = {
    16: [0x7E00, 0xFE00, 0x7E01, 0xFE23, 0x7C01, 0x7C00, 0xFC00, 0x8000, 0x0000, 0x0001,
         0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00],
    32: [0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFC12345, 0x7F800001, 0x7F800000, 0xFF800000,
         0x80000000, 0x00000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
         0x4B800001, 0x3F800000],
    64: [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000001, 0xFFF0000000000001,
         0x7FF0000000000000, 0xFFF0000000000000, 0x8000000000000000, 0x0000000000000001,
         0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x0010000000000000, 0x4340000000000001],
}


BFLOAT16_SPECIAL_BITS = [0x7FC0, 0xFFC0, 0x7FC1, 0x7F81, 0x7F80, 0xFF80, 0x8000, 0x0000,
                         0x0001, 0x7F7F, 0xFF7F, 0x3F80, 0x4B80]


def dtype_of(name: str) -> np.dtype:
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({"str": "<U4", "bytes": "S3", "object": "O"}.get(name, name))


def assert_identical(got: np.ndarray, expected: np.ndarray, context: str) -> None:
    """Same dtype, shape and raw bytes; for object arrays, the same objects."""
    assert isinstance(got, np.ndarray), f"result is a {type(got).__name__} [{context}]"
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype} [{context}]"
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape} [{context}]"
    if got.dtype.kind == "O":
        for index in np.ndindex(got.shape):
            assert got[index] is expected[index], (
                f"object at {index}: got {got[index]!r}, expected the object "
                f"{expected[index]!r} [{context}]")
        return
    if got.tobytes() == expected.tobytes():
        return
    width = got.dtype.itemsize
    got_rows = np.frombuffer(got.tobytes(), np.uint8).reshape(-1, width)
    expected_rows = np.frombuffer(expected.tobytes(), np.uint8).reshape(-1, width)
    differ = np.flatnonzero((got_rows != expected_rows).any(axis=1))
    first = np.unravel_index(int(differ[0]), got.shape)
    raise AssertionError(
        f"{differ.size} of {got.size} elements differ [{context}]; first at {first}: got "
        f"{got[first]!r} ({got_rows[differ[0]].tobytes().hex()}), expected "
        f"{expected[first]!r} ({expected_rows[differ[0]].tobytes().hex()})"
    )


def assert_identical_but_nan_payloads(got: np.ndarray, expected: np.ndarray,
                                      context: str) -> None:
    """Bit-identical, except that where both results are NaN the payloads may differ.

    Where different NaNs meet in one linear sum, which payload survives depends on the
    operand order the compiler picked (IEEE 754 leaves it open; see the README): NaN
    positions must match, and every other bit.
    """
    if got.dtype.kind not in "fcV" or got.shape != expected.shape:
        assert_identical(got, expected, context)
        return
    g, e = _float_parts(got), _float_parts(expected)
    both_nan = np.isnan(g) & np.isnan(e)
    if not both_nan.any():
        assert_identical(got, expected, context)
        return
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype} [{context}]"
    same = np.frombuffer(g.tobytes(), np.uint8).reshape(g.size, -1) == np.frombuffer(
        e.tobytes(), np.uint8).reshape(e.size, -1)
    differ = np.flatnonzero(~(same.all(axis=1) | both_nan))
    assert differ.size == 0, (
        f"{differ.size} values differ beyond NaN payloads [{context}]; first part "
        f"{int(differ[0])}: got {g[differ[0]]!r}, expected {e[differ[0]]!r}")


def _object_array(items: list[object]) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item  # element by element: numpy would unpack lists and arrays
    return array


def _float_parts(a: np.ndarray) -> np.ndarray:
    """Real-valued view of a float, complex or bfloat16 array (one value per part)."""
    if a.dtype.kind == "c":
        return a.reshape(-1).view(f"f{a.dtype.itemsize // 2}")
    if a.dtype.kind == "V":  # bfloat16: exact in float32
        return a.reshape(-1).astype(np.float32)
    return a.reshape(-1)
