"""Every bad input of docs/peers.md §5 and docs/semantics.md §3, for the fast path and the
reference.

Each case checks the exception type and that the message names the argument and the bad
value; ``out=`` cases also check that a failing call leaves ``out`` byte-for-byte untouched.
"""

from __future__ import annotations

import math
import re
import time
import tracemalloc
import warnings
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_upsample
from onnx_upsample import UpsampleError, UpsampleWarning, output_shape
from onnx_upsample import reference as ref

IMPLEMENTATIONS = [
    pytest.param(onnx_upsample.upsample, id="fast"),
    pytest.param(ref.upsample, id="reference"),
]
impl_param = pytest.mark.parametrize("upsample", IMPLEMENTATIONS)

Upsample = Callable[..., np.ndarray]

X4 = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)


def test_exception_classes() -> None:
    assert issubclass(UpsampleError, ValueError)
    assert issubclass(UpsampleWarning, UserWarning)


# ---------------------------------------------------------------------------------------------
# scale values (docs/peers.md §5 rows; docs/semantics.md §2 "scales")
# ---------------------------------------------------------------------------------------------

BAD_SCALE_VALUES = [
    # (scales, message pattern: names scales[axis] and the value)
    ([1, 1, 0.5, 2], r"scales\[2\] is 0\.5\b.*>= 1"),
    ([1, 1, 2, 0.999], r"scales\[3\] is 0\.999\b"),
    ([1, 1, -2, 2], r"scales\[2\] is -2(\.0)?\b"),
    ([1, -1, 2, 2], r"scales\[1\] is -1(\.0)?\b"),
    ([1, 1, 0, 2], r"scales\[2\] is 0(\.0)?\b"),
    ([1, 1, -0.0, 2], r"scales\[2\] is -0(\.0)?\b"),
    ([1, 1, math.nan, 2], r"scales\[2\] is nan\b"),
    ([1, 1, math.inf, 2], r"scales\[2\] is inf\b"),
    ([1, 1, -math.inf, 2], r"scales\[2\] is -inf\b"),
    ([1, 1, 1e39, 2], r"scales\[2\] is 1e\+39\b"),
    ([1, 1, -1e39, 2], r"scales\[2\] is -1e\+39\b"),
    ([1, 1, 10**40, 2], r"scales\[2\] is 1(e\+40|0{40})\b"),
    (np.array([1, 1, np.nan, 2], dtype=np.float32), r"scales\[2\] is nan\b"),
    (np.array([1, 1, 0.5, 2], dtype=np.float64), r"scales\[2\] is 0\.5\b"),
    (np.array([1, 1, -3, 2], dtype=np.int64), r"scales\[2\] is -3(\.0)?\b"),
]


@impl_param
@pytest.mark.parametrize(("scales", "pattern"), BAD_SCALE_VALUES)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_bad_scale_values(upsample: Upsample, scales: object, pattern: str, mode: str) -> None:
    with pytest.raises(UpsampleError, match=pattern):
        upsample(X4, scales, mode)


@impl_param
def test_scale_too_large_for_python_float_is_reported_as_given(upsample: Upsample) -> None:
    """10**400 cannot even become a Python float; the message must not claim it was inf."""
    with pytest.raises(UpsampleError, match=r"scales\[2\] is 1000000000"):
        upsample(X4, [1, 1, 10**400, 2])


BAD_SCALE_COUNTS = [
    (X4, [1, 1, 2], r"scales has 3 value.*rank 4"),
    (X4, [1, 1, 2, 2, 2], r"scales has 5 value.*rank 4"),
    (X4, [], r"scales has 0 value.*rank 4"),
    (X4, np.array([[1, 1, 2]]), r"scales has 3 value.*rank 4"),
    (np.float32(3), [1.0], r"scales has 1 value.*rank 0"),
    (np.array(3.0), [2.0, 2.0], r"scales has 2 value.*rank 0"),
    (np.zeros(3), [2, 2], r"scales has 2 value.*rank 1"),
]


@impl_param
@pytest.mark.parametrize(("x", "scales", "pattern"), BAD_SCALE_COUNTS)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_scale_count_must_equal_rank(upsample: Upsample, x, scales, pattern, mode) -> None:
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, scales, mode)


# ---------------------------------------------------------------------------------------------
# size limits
# ---------------------------------------------------------------------------------------------


@impl_param
@pytest.mark.parametrize(
    ("x", "scales", "pattern"),
    [
        # docs/peers.md §5 "scale 1e10": [1,1,20000000000,2] float32 is 149 GiB (ORT: bfc_arena)
        (X4, [1, 1, 1e10, 1], r"shape \(1, 1, 20000000000, 2\)"),
        (X4, [1, 1, 1e10, 1e9], r"shape \(1, 1, 20000000000, 2000000000\)"),
        (np.zeros((3, 3), np.uint8), [1e9, 1e9], r"shape \(3000000000, 3000000000\)"),
    ],
)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_output_larger_than_memory(upsample: Upsample, x, scales, pattern, mode) -> None:
    start = time.perf_counter()
    with pytest.raises(UpsampleError, match=pattern) as info:
        upsample(x, scales, mode)
    assert not isinstance(info.value, MemoryError)
    assert time.perf_counter() - start < 2.0  # refused up front, nothing allocated


@impl_param
@pytest.mark.parametrize(
    ("x", "scales", "pattern"),
    [
        # 3 x f32(4e18) = 11999999811680993280 > 2**63 - 1
        (np.zeros(3), [4e18], r"scales\[0\].*11999999811680993280.*2\*\*63-1"),
        (np.zeros((1, 1)), [1, 1e38], r"scales\[1\].*2\*\*63-1"),
        (np.zeros((0, 2)), [1, 1e30], r"scales\[1\].*2\*\*63-1"),  # even with no elements
    ],
)
def test_output_dimension_beyond_int64(upsample: Upsample, x, scales, pattern) -> None:
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, scales)


# ---------------------------------------------------------------------------------------------
# mode
# ---------------------------------------------------------------------------------------------


@impl_param
@pytest.mark.parametrize(
    ("mode", "shown"),
    [
        ("cubic", "'cubic'"),
        ("NEAREST", "'NEAREST'"),
        ("Linear", "'Linear'"),
        (None, "None"),
        ("", "''"),
        (" nearest", "' nearest'"),
        (b"nearest", "b'nearest'"),
        (1, "1"),
    ],
)
def test_bad_mode(upsample: Upsample, mode: object, shown: str) -> None:
    with pytest.raises(UpsampleError, match=rf"mode is {re.escape(shown)}.*'nearest'.*'linear'"):
        upsample(X4, [1, 1, 2, 2], mode)


@impl_param
@pytest.mark.parametrize(
    ("x", "name"),
    [
        (np.array([[True, False]]), "bool"),
        (np.array([["a", "b"]]), "str"),
        (np.array([[b"a", b"b"]]), "bytes"),
        (np.array([[1, "a"]], dtype=object), "object"),
    ],
)
@pytest.mark.parametrize("mode", ["linear", "bilinear"])
def test_linear_on_non_numeric_types(upsample: Upsample, x, name: str, mode: str) -> None:
    with (
        warnings.catch_warnings(),
        pytest.raises(UpsampleError, match=rf"{name}\b.*nearest"),
    ):
        warnings.simplefilter("ignore", UpsampleWarning)
        upsample(x, [1, 2], mode)


@impl_param
@pytest.mark.parametrize(
    "x",
    [
        np.zeros(2, dtype=ml_dtypes.float8_e4m3fn),
        np.zeros(2, dtype=ml_dtypes.float8_e5m2),
        np.zeros(2, dtype=ml_dtypes.int4),
        np.zeros(2, dtype=ml_dtypes.uint4),
        np.zeros(2, dtype=np.longdouble),
        np.zeros(2, dtype="datetime64[s]"),
        np.zeros(2, dtype="timedelta64[ms]"),
        np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]),
        np.zeros(2, dtype="V4"),
    ],
    ids=lambda a: str(a.dtype),
)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_unsupported_element_types(upsample: Upsample, x: np.ndarray, mode: str) -> None:
    if x.dtype == np.dtype(np.float64):  # longdouble is float64 on some platforms
        pytest.skip("longdouble is float64 here")
    with pytest.raises(UpsampleError, match=rf"x has element type .*{re.escape(x.dtype.name)}"):
        upsample(x, [2], mode)


# ---------------------------------------------------------------------------------------------
# wrong kinds: TypeError
# ---------------------------------------------------------------------------------------------

BAD_SCALE_KINDS = [
    (None, r"scales is None"),
    ("1 1 2 2", r"scales is '1 1 2 2'"),
    (b"\x01\x01\x02\x02", r"scales is b'"),
    (2.0, r"scales is 2\.0"),
    (2, r"scales is 2\b"),
    (np.float32(2), r"scales is .*2\.0"),
    ([1, 1, None, 2], r"scales\[2\] is None"),
    ([1, 1, True, 2], r"scales\[2\] is True"),
    ([1, 1, np.True_, 2], r"scales\[2\] is .*True"),
    ([1, 1, "2", 2], r"scales\[2\] is '2'"),
    ([1, 1, 2 + 0j, 2], r"scales\[2\] is \(2\+0j\)"),
    ([1, 1, [2], 2], r"scales\[2\] is \[2\]"),
    (np.array([True, True, True, True]), r"scales .*bool"),
    (np.array([1, 1, 2, 2], dtype=np.complex64), r"scales .*complex64"),
    (np.array(["1", "1", "2", "2"]), r"scales .*(str|<U1)"),
    (np.array([1, 1, None, 2], dtype=object), r"scales\[2\] is None"),
]


@impl_param
@pytest.mark.parametrize(("scales", "pattern"), BAD_SCALE_KINDS)
def test_scales_of_the_wrong_kind(upsample: Upsample, scales: object, pattern: str) -> None:
    with pytest.raises(TypeError, match=pattern):
        upsample(X4, scales)


@impl_param
def test_x_none(upsample: Upsample) -> None:
    with pytest.raises(TypeError, match=r"x is None"):
        upsample(None, [])


@impl_param
@pytest.mark.parametrize("x", [[[1, 2], [3]], [[1, 2], 3], [[[1]], [2, 3]]])
def test_ragged_x(upsample: Upsample, x: object) -> None:
    with pytest.raises(UpsampleError, match=r"\bx\b"):
        upsample(x, [2, 2])


# ---------------------------------------------------------------------------------------------
# out=
# ---------------------------------------------------------------------------------------------

SENTINEL = np.float32(-12345.5)
OUT_SHAPE = (1, 1, 4, 4)


def _sentinel(shape=OUT_SHAPE, dtype=np.float32, order="C") -> np.ndarray:
    return np.full(shape, SENTINEL, dtype=dtype, order=order)


def _readonly() -> np.ndarray:
    out = _sentinel()
    out.flags.writeable = False
    return out


def _noncontiguous() -> np.ndarray:
    return _sentinel((1, 1, 4, 8))[..., ::2]


def _raw_bytes(array: np.ndarray) -> bytes:
    return np.asarray(array).tobytes(order="A")


BAD_OUTS = [
    pytest.param(lambda: _sentinel((1, 1, 4, 5)), UpsampleError, r"out has shape \(1, 1, 4, 5\)",
                 id="shape"),
    pytest.param(lambda: _sentinel((4, 4)), UpsampleError, r"out has shape \(4, 4\)",
                 id="rank"),
    pytest.param(lambda: _sentinel(dtype=np.float64), UpsampleError, r"out has element type",
                 id="dtype"),
    pytest.param(lambda: _sentinel(dtype=">f4"), UpsampleError, r"out has element type .*>f4",
                 id="byte-order"),
    pytest.param(lambda: _sentinel(order="F"), UpsampleError, r"out is not C-contiguous",
                 id="fortran"),
    pytest.param(_noncontiguous, UpsampleError, r"out is not C-contiguous", id="strided"),
    pytest.param(_readonly, UpsampleError, r"out is read-only", id="readonly"),
    pytest.param(lambda: [[0.0] * 4] * 4, TypeError, r"out is a list", id="list"),
    pytest.param(lambda: "out", TypeError, r"out is a str", id="str"),
]


@pytest.mark.parametrize(("make_out", "error", "pattern"), BAD_OUTS)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_bad_out_is_refused_and_left_untouched(make_out, error, pattern, mode) -> None:
    out = make_out()
    # the whole buffer behind out (for a strided view, also the elements it skips)
    whole = out if not isinstance(out, np.ndarray) or out.base is None else out.base
    before = np.array(whole, copy=True) if isinstance(whole, np.ndarray) else None
    with pytest.raises(error, match=pattern):
        onnx_upsample.upsample(X4, [1, 1, 2, 2], mode, out=out)
    if before is not None:
        assert _raw_bytes(whole) == _raw_bytes(before)


def test_out_overlapping_x_is_refused_and_left_untouched() -> None:
    buffer = np.full(20, SENTINEL, dtype=np.float32)
    x = buffer[:4].reshape(1, 1, 2, 2)
    out = buffer[2:18].reshape(OUT_SHAPE)
    before = buffer.copy()
    with pytest.raises(UpsampleError, match=r"out overlaps x"):
        onnx_upsample.upsample(x, [1, 1, 2, 2], out=out)
    assert np.array_equal(buffer.view(np.uint8), before.view(np.uint8))


def test_out_is_x_itself_under_no_resize() -> None:
    x = _sentinel()
    before = x.copy()
    with pytest.raises(UpsampleError, match=r"out overlaps x"):
        onnx_upsample.upsample(x, [1, 1, 1, 1], out=x)
    assert np.array_equal(x.view(np.uint8), before.view(np.uint8))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_good_out_is_filled_and_returned(mode: str) -> None:
    out = _sentinel()
    got = onnx_upsample.upsample(X4, [1, 1, 2, 2], mode, out=out)
    assert got is out
    assert not np.any(out == SENTINEL)
    expected = onnx_upsample.upsample(X4, [1, 1, 2, 2], mode)
    assert np.array_equal(out, expected)


def test_out_for_a_byte_swapped_x_is_native() -> None:
    x = X4.astype(">f4")
    out = _sentinel(dtype="=f4")
    assert onnx_upsample.upsample(x, [1, 1, 2, 2], out=out) is out


@pytest.mark.parametrize(
    ("scales", "mode", "error"),
    [
        ([1, 1, 0.5, 2], "nearest", UpsampleError),
        ([1, 1, 2, 2], "cubic", UpsampleError),
        ([1, 1, 2], "nearest", UpsampleError),
        ([1, 1, None, 2], "nearest", TypeError),
        ([1, 1, 1e10, 1], "nearest", UpsampleError),
    ],
)
def test_other_errors_leave_a_good_out_untouched(scales, mode, error) -> None:
    out = _sentinel()
    before = out.copy()
    with pytest.raises(error):
        onnx_upsample.upsample(X4, scales, mode, out=out)
    assert np.array_equal(out.view(np.uint8), before.view(np.uint8))


def test_linear_on_bool_leaves_out_untouched() -> None:
    x = np.array([[True, False]])
    out = np.zeros((1, 4), dtype=bool)
    with pytest.raises(UpsampleError, match="nearest"):
        onnx_upsample.upsample(x, [1, 2], "linear", out=out)
    assert not out.any()


# ---------------------------------------------------------------------------------------------
# check order (docs/semantics.md §2 "checks first")
# ---------------------------------------------------------------------------------------------


def test_bad_mode_bad_scales_bad_out_raises_without_touching_out() -> None:
    out = _sentinel((3, 3))
    before = out.copy()
    with pytest.raises(UpsampleError, match=r"mode is 'cubic'"):
        onnx_upsample.upsample(X4, [1, 1, 0.5, 2], "cubic", out=out)
    assert np.array_equal(out.view(np.uint8), before.view(np.uint8))


@impl_param
@pytest.mark.parametrize(
    ("mode", "scales"),
    [("cubic", [64, 64]), ("cubic", [0.5, 64]), ("NEAREST", [64, 1e10]), ("linear", [64, 0.5])],
)
def test_bad_call_never_allocates(upsample: Upsample, mode: str, scales) -> None:
    """A valid call would allocate a 64 MiB output; the failing one allocates nothing."""
    x = np.zeros((64, 64), np.float32)
    upsample(np.ones((1, 1), np.float32), [2, 2], "linear")  # lazy imports happen here
    tracemalloc.start()
    try:
        with pytest.raises(UpsampleError):
            upsample(x, scales, mode)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20


def test_tracemalloc_sees_numpy_allocations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control for the test above: the same measurement does see a real output (with the
    reuse of released output buffers off, which would otherwise serve it from memory
    allocated before the measurement)."""
    monkeypatch.setenv("ONNX_UPSAMPLE_REUSE_OUTPUTS", "0")
    x = np.zeros((64, 64), np.float32)
    onnx_upsample.upsample(np.ones((1, 1), np.float32), [2, 2])
    tracemalloc.start()
    try:
        onnx_upsample.upsample(x, [32, 32])  # 2048 x 2048 float32: 16 MiB
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak >= 16 * 2**20


@impl_param
@pytest.mark.parametrize(
    ("x", "scales", "mode", "pattern"),
    [
        # the output shape would equal x's shape (the no-resize copy), the scale is still bad
        (np.zeros((0, 3)), [0.5, 1], "nearest", r"scales\[0\] is 0\.5"),
        (np.zeros((0,)), [math.nan], "nearest", r"scales\[0\] is nan"),
        (np.zeros((0,)), [math.inf], "linear", r"scales\[0\] is inf"),
        (np.zeros((2, 0)), [1, -1], "linear", r"scales\[1\] is -1"),
        # element type for the mode comes before the no-resize copy too
        (np.zeros((2, 2), bool), [1, 1], "linear", r"bool.*nearest"),
        (np.zeros((2, 2), "U1"), [1.1, 1.1], "linear", r"str.*nearest"),
        (np.zeros((2, 2), "M8[s]"), [1, 1], "nearest", r"x has element type"),
        # scale count is checked although all scales are 1
        (np.zeros((2, 2)), [1], "nearest", r"scales has 1 value"),
    ],
)
def test_bad_arguments_with_a_no_resize_shape(upsample: Upsample, x, scales, mode, pattern):
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, scales, mode)


@impl_param
@pytest.mark.parametrize(
    ("x", "scales", "mode", "error", "pattern"),
    [
        # kinds before everything
        (X4, None, "cubic", TypeError, r"scales is None"),
        (X4, [1, 1, "2", 0.5], "cubic", TypeError, r"scales\[2\]"),
        # mode before element type, scales and size
        (np.zeros(2, "M8[s]"), [0.5], "cubic", UpsampleError, r"mode is 'cubic'"),
        (X4, [1, 1, 1e10, 1], "cubic", UpsampleError, r"mode is 'cubic'"),
        # element type for the mode before scales
        (np.array([True]), [0.5], "linear", UpsampleError, r"bool.*nearest"),
        # scales before size
        (X4, [1, 0.5, 1e10, 1], "nearest", UpsampleError, r"scales\[1\] is 0\.5"),
    ],
)
def test_check_order(upsample: Upsample, x, scales, mode, error, pattern) -> None:
    with pytest.raises(error, match=pattern):
        upsample(x, scales, mode)


def test_scales_are_checked_before_out() -> None:
    out = _sentinel((9, 9))
    with pytest.raises(UpsampleError, match=r"scales\[2\] is 0\.5"):
        onnx_upsample.upsample(X4, [1, 1, 0.5, 2], out=out)


def test_out_is_checked_before_size() -> None:
    """With out= given nothing is allocated, so the size check is out's shape check."""
    out = _sentinel()
    with pytest.raises(UpsampleError, match=r"out has shape"):
        onnx_upsample.upsample(X4, [1, 1, 1e10, 1], out=out)


# ---------------------------------------------------------------------------------------------
# output_shape
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "scales", "expected"),
    [
        ((1, 1, 5, 10), [1, 1, 1.4, 1.3], (1, 1, 7, 13)),
        ((3, 6, 7, 20), [1.6666666, 1.1666666, 1.2857143, 1.05], (5, 7, 9, 21)),
        ((4, 3), [1.25, 1.3333334], (5, 4)),
        ((16777217,), [1.0], (16777217,)),
        ((16777217,), [2.0], (33554434,)),
        ((16777215, 10000001), [3, 3], (50331645, 30000003)),
        ((1, 1, 2, 2), [1, 1, 1e10, 1], (1, 1, 20000000000, 2)),  # only > 2**63-1 raises
        ((2**62 - 1,), [2], (2**63 - 2,)),
        ((), [], ()),
        ([2, 3], np.array([[2, 2]], dtype=np.float32), (4, 6)),
        (np.array([5]), [1.4], (7,)),
        ((np.int64(5),), (np.float32(1.4),), (7,)),
        ((0, 3), [5, 1], (0, 3)),
    ],
)
def test_output_shape_values(shape, scales, expected) -> None:
    got = output_shape(shape, scales)
    assert got == expected
    assert isinstance(got, tuple)
    assert all(type(n) is int for n in got)


@pytest.mark.parametrize(
    ("shape", "scales", "error", "pattern"),
    [
        ((2**62,), [2], UpsampleError, r"scales\[0\].*2\*\*63-1"),
        ((3,), [4e18], UpsampleError, r"scales\[0\].*2\*\*63-1"),
        ((-1, 2), [1, 1], UpsampleError, r"shape\[0\] is -1"),
        ((2, 2), [1, 0.5], UpsampleError, r"scales\[1\] is 0\.5"),
        ((2, 2), [1, math.nan], UpsampleError, r"scales\[1\] is nan"),
        ((2, 2), [1, 1e39], UpsampleError, r"scales\[1\] is 1e\+39"),
        ((2, 2), [1, 2, 3], UpsampleError, r"scales has 3 value"),
        ((), [1.0], UpsampleError, r"scales has 1 value"),
        ((2, 2), None, TypeError, r"scales is None"),
        ((2, 2), [1, True], TypeError, r"scales\[1\] is True"),
        ((2, 2), "12", TypeError, r"scales is '12'"),
        ("ab", [2, 2], TypeError, r"shape is 'ab'"),
        (5, [2], TypeError, r"shape is 5"),
        (None, [2], TypeError, r"shape is None"),
        ((2.0, 2), [2, 2], TypeError, r"shape\[0\] is 2\.0"),
        ((True, 2), [2, 2], TypeError, r"shape\[0\] is True"),
        ((2, None), [2, 2], TypeError, r"shape\[1\] is None"),
    ],
)
def test_output_shape_errors(shape, scales, error, pattern) -> None:
    with pytest.raises(error, match=pattern):
        output_shape(shape, scales)


# ---------------------------------------------------------------------------------------------
# nothing but TypeError / UpsampleError escapes (hypothesis)
# ---------------------------------------------------------------------------------------------

WEIRD_X = [
    None, [], [[1, 2], [3]], 1.5, "abc", b"ab", object(), {"a": 1},
    np.zeros((2, 2)), np.zeros((0, 2)), np.array([1 + 1j, 2]), np.zeros(2, "M8[s]"),
    np.zeros(2, ml_dtypes.float8_e4m3fn), np.zeros(2, ml_dtypes.bfloat16),
    [[1, 2], [3, 4]], np.array(["a", "b"]), np.zeros((1, 1, 2, 2), np.uint8),
    np.array([True, False]), np.array([None, 1], dtype=object), np.zeros(2, ">i4"),
    np.zeros((2, 2), np.float16)[:, ::-1],
]
WEIRD_SCALES = [
    None, "1 2", 2.0, [], [1], [1, 2], [2, 2], [1, 1, 2, 2], [0.5, 1], [math.nan, 1],
    [math.inf, 2], [1e39, 1], [1e30, 1e30], [1e10, 1e10], [True, 1], [None, 1], [1 + 1j, 1],
    np.array([2, 2]), np.array([[2, 2]]), np.array([True]), {1: 2}, [[2], [2]],
    [10**400, 1], np.array(["2"]), object(), [np.float64(3.5)], np.array([2.0, 1.5], ">f8"),
]
WEIRD_MODES = ["nearest", "linear", "bilinear", "trilinear", "cubic", None, "", 3, b"nearest"]
WEIRD_OUTS = [None, None, [1, 2], "x", np.zeros(3), np.zeros((4, 4)), np.zeros((2, 4), bool)]

small_floats = st.one_of(
    st.floats(min_value=-2, max_value=4, allow_nan=False),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e39, 1e20, -0.0]),
    st.integers(min_value=-3, max_value=4),
)
scales_strategy = st.one_of(
    st.sampled_from(WEIRD_SCALES),
    st.lists(small_floats, max_size=4),
)


@settings(max_examples=120, deadline=None)
@given(
    x=st.sampled_from(WEIRD_X),
    scales=scales_strategy,
    mode=st.sampled_from(WEIRD_MODES),
    out=st.sampled_from(WEIRD_OUTS),
    use_reference=st.booleans(),
)
def test_only_documented_exceptions_escape(x, scales, mode, out, use_reference) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if use_reference:
                ref.upsample(x, scales, mode)
            else:
                onnx_upsample.upsample(x, scales, mode, out=out)
        except (TypeError, UpsampleError):
            pass
