"""Python and the compiled kernels agree by name, not by position.

The extension exports the constants its descriptions are made of (element codes and what each
code reads, accumulates in and writes; axis kinds and the names of an axis' fields; limits).
Python reads them by name where it can, and where Python has a copy of its own (the
semantics' element table, the argument checks' limits, the rules' float32 limit, the
oracle's), the copy is held to the extension's here: changing either side alone fails.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from onnx_upsample import reference
from onnx_upsample._kernels import _compiled, _layout, _native
from onnx_upsample._spec import rules
from onnx_upsample._spec.call import MAX_INTERPOLATED_AXES
from onnx_upsample._spec.dtypes import TYPES, ElementType

LINEAR = [t for t in TYPES if t.linear_ok]


def _dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("etype", LINEAR, ids=lambda t: t.name)
def test_each_element_code_accumulates_as_the_element_table_says(etype: ElementType) -> None:
    """The accumulator of each type (docs/semantics.md) is the element table's row in Python
    and the code's line in linear_types.h in C; the two agree for every type, by name."""
    assert etype.kernel is not None and etype.accumulator is not None
    code, stored_bytes, acc_bytes, out = _native.LINEAR_TYPES[etype.kernel]
    assert code == getattr(_native, f"T_{etype.kernel}")
    assert acc_bytes == etype.accumulator.itemsize
    assert stored_bytes == _dtype(etype.name).itemsize // etype.parts
    # 16-bit floats are summed into float32 results (rounded by the caller), the rest into
    # their own type
    half = etype.name in ("float16", "bfloat16")
    assert out == (_native.T_FLOAT32 if half else code)


def test_every_element_code_is_some_types_and_codes_are_distinct() -> None:
    assert set(_native.LINEAR_TYPES) == {t.kernel for t in LINEAR}
    codes = sorted(code for code, *_ in _native.LINEAR_TYPES.values())
    assert codes == list(range(len(codes)))


def test_a_code_is_written_as_a_code_with_the_same_accumulator() -> None:
    """A code's store reads the accumulator of the source: the code it writes must sum in
    the same type."""
    by_code = {code: acc for code, _, acc, _ in _native.LINEAR_TYPES.values()}
    for name, (_, _, acc_bytes, out) in _native.LINEAR_TYPES.items():
        assert by_code[out] == acc_bytes, name


def test_the_oracle_accumulates_as_the_kernels_do() -> None:
    for etype in LINEAR:
        assert etype.kernel is not None
        acc, _, _ = reference.linear_arithmetic(_dtype(etype.name))
        assert np.dtype(acc).itemsize == _native.LINEAR_TYPES[etype.kernel][2], etype.name


def test_axis_kinds_and_fields_by_name() -> None:
    assert _compiled.AXIS_KINDS == {"copy": _native.AXIS_COPY, "gather": _native.AXIS_GATHER,
                                    "blend": _native.AXIS_BLEND}
    assert len(set(_compiled.AXIS_KINDS.values())) == 3
    # the layout names every field but the kind, which the glue adds by the kind's name
    axis = _layout.Axis(4, 8, "blend", _layout.Rule(4, 0, 0, np.float32(2)))
    assert {"kind", *_layout.axis_fields(axis)} == set(_native.AXIS_FIELDS)
    assert len(_native.AXIS_FIELDS) == 8
    # the order the tests' hand-written rows (and the description's docs) assume
    assert _native.AXIS_FIELDS == ("kind", "n_out", "in_len", "n_in", "out_first", "in_first",
                                   "num", "den")


def test_a_row_is_built_from_the_fields_by_name() -> None:
    axis = _layout.Axis(5, 7, "blend", _layout.Rule(9, 3, 2, np.float32(1.5)))
    row = dict(zip(_native.AXIS_FIELDS, _compiled._axis_row(axis), strict=True))
    assert row == {"kind": _native.AXIS_BLEND, "n_out": 7, "in_len": 5, "n_in": 9,
                   "out_first": 3, "in_first": 2, "num": 3, "den": 2}


def test_the_interpolated_axes_limit_is_one() -> None:
    assert _native.MAX_INTERP == MAX_INTERPOLATED_AXES


def test_float32s_exact_limit_is_one() -> None:
    """Below 2**24 float32 holds every integer: the rules (Python and C) and the oracle switch
    to exact arithmetic there."""
    exact = 2 ** (np.finfo(np.float32).nmant + 1)
    assert _native.F32_EXACT_LIMIT == rules.F32_EXACT_LIMIT == reference.EXACT_BELOW == exact


def test_the_longest_resized_axis_is_float64s_exact_limit() -> None:
    """The kernels compute coordinates past 2**24 in float64, exact for indices up to 2**53:
    they refuse a longer input axis (test_kernel_description) and accept one that long."""
    exact = 2 ** (np.finfo(np.float64).nmant + 1)
    assert _native.MAX_AXIS_INPUT == rules.MAX_COMPUTED_AXIS == exact
    limit = _native.MAX_AXIS_INPUT
    rows = np.array([[_native.AXIS_GATHER, 8, 4, 4, 0, 0, 2, 1],
                     [_native.AXIS_GATHER, 12, 6, limit, 2 * (limit - 6), limit - 6, 2, 1]],
                    np.int64)
    kernel = _native.nearest_kernel(
        x_elements=24, unit=1, block=1, axes=rows, scales=np.array([2, 2], np.float32),
        row_kind=_native.ROW_GATHER, repeat=1, n_blocks=1, n_segments=1, segment=12)
    x = np.arange(24, dtype=np.uint8).reshape(4, 6)
    out = np.zeros((8, 12), np.uint8)
    kernel(x, out, 1)
    assert np.array_equal(out, x.repeat(2, axis=0).repeat(2, axis=1))
