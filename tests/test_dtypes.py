"""The element-type table (``onnx_upsample._spec.dtypes``): one row per type is everything.

Each row is recognised from its dtype (numpy's by name, ml_dtypes' by package and name, text
and objects by kind at any width), listed in the types' message with its note, and answers
the ONNX-side questions (names of a schema's type list, whether linear is defined).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from onnx_upsample._spec.dtypes import (
    SUPPORTED_NAMES,
    TYPES,
    element_type,
    find_element_type,
    linear_defined_for_onnx,
    onnx_type_names,
)
from onnx_upsample._spec.versions import VERSIONS

DTYPES = {
    "uint8": ["u1", "B"], "uint16": ["u2", ">u2"], "uint32": ["u4"], "uint64": ["u8"],
    "int8": ["i1"], "int16": ["i2"], "int32": ["i4", "i"], "int64": ["i8", "q"],
    "float16": ["f2", ">f2"], "float32": ["f4", ">f4"], "float64": ["f8", "d"],
    "str": ["U1", "U300"], "bytes": ["S1", "S9"], "object": ["O"], "bool": ["?"],
    "complex64": ["c8"], "complex128": ["c16", ">c16"], "bfloat16": [ml_dtypes.bfloat16],
}
# C's long: 8 bytes on Linux and macOS, 4 on Windows (numpy names it int64 or int32 there)
DTYPES[np.dtype("l").name].append("l")


def test_every_row_is_recognised_from_its_dtypes() -> None:
    assert set(DTYPES) == {t.name for t in TYPES}
    for name, dtypes in DTYPES.items():
        for dtype in dtypes:
            assert element_type(np.dtype(dtype)).name == name, dtype


@pytest.mark.parametrize("dtype", [
    "M8[s]", "m8[ms]", "V4", [("a", "f4")], ml_dtypes.float8_e4m3fn, ml_dtypes.int4,
], ids=["datetime", "timedelta", "void", "structured", "float8", "int4"])
def test_types_without_a_row_are_not_recognised(dtype: object) -> None:
    assert find_element_type(np.dtype(dtype)) is None


def test_long_double_has_a_row_only_where_it_is_a_double() -> None:
    """x86 Linux's long double (80-bit, 'float128' to numpy) has no row; where the compiler
    makes it a double (MSVC, Apple's arm64) numpy's dtype is float64, bytes and all."""
    longdouble = np.dtype("g")
    row = find_element_type(longdouble)
    if longdouble.itemsize > 8:
        assert row is None
    else:
        assert row is not None and row.name == "float64"


def test_the_message_lists_every_row_once_with_its_note() -> None:
    listed = SUPPORTED_NAMES.split(", ")
    assert len(listed) == len(TYPES)
    assert "bfloat16 (ml_dtypes)" in listed and "object (ONNX strings)" in listed
    assert [entry.split(" (")[0] for entry in listed] == [t.name for t in TYPES]


def test_onnx_type_strings_name_the_rows() -> None:
    """Upsample-1's schema allows bool, int32, int64, float16, float and double."""
    assert onnx_type_names(VERSIONS[1].element_types) == (
        "bool", "int32", "int64", "float16", "float32", "float64")
    assert onnx_type_names(("tensor(string)",)) == ("str",)


@pytest.mark.parametrize(("onnx_type", "defined"), [
    ("tensor(float)", True), ("tensor(int64)", True), ("tensor(complex64)", True),
    ("tensor(bfloat16)", True), ("tensor(bool)", False), ("tensor(string)", False),
])
def test_linear_is_defined_for_numeric_onnx_types(onnx_type: str, defined: bool) -> None:
    assert linear_defined_for_onnx(onnx_type) is defined
