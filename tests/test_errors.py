"""Every bad argument of docs/peers.md §5 and docs/semantics.md §3, and ``output_shape``'s.

Each case checks the exception type and that the message names the argument and the bad
value. ``out=`` and the order of the checks are in ``test_errors_out.py``; mixtures of every
wrong kind are drawn in ``test_fuzz.py``.

The fast path and the reference check their arguments with one function
(``onnx_upsample._spec.call.check_call``), so the tables run through the fast path, and
``test_reference_checks_its_arguments_the_same_way`` takes one case of every kind of check
through the reference (with those placed around its own no-resize copy); the memory limit,
which each applies on its own, runs through both.
"""

from __future__ import annotations

import math
import re
import tracemalloc
import warnings
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import UpsampleError, UpsampleWarning, output_shape
from onnx_upsample import reference as ref

upsample = onnx_upsample.upsample
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


@pytest.mark.parametrize(("scales", "pattern"), BAD_SCALE_VALUES)
def test_bad_scale_values(scales: object, pattern: str) -> None:
    with pytest.raises(UpsampleError, match=pattern):
        upsample(X4, scales)


def test_scale_too_large_for_python_float_is_reported_as_given() -> None:
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


@pytest.mark.parametrize(("x", "scales", "pattern"), BAD_SCALE_COUNTS)
def test_scale_count_must_equal_rank(x, scales, pattern) -> None:
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, scales)


# ---------------------------------------------------------------------------------------------
# size limits
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("upsample", [
    pytest.param(onnx_upsample.upsample, id="fast"),  # the output and the kernels' scratch
    pytest.param(ref.upsample, id="reference"),  # the output alone, checked on its own
])
@pytest.mark.parametrize(
    ("x", "scales", "pattern"),
    [
        # docs/peers.md §5 "scale 1e10": [1,1,20000000000,2] float32 is 149 GiB (ORT: bfc_arena)
        (X4, [1, 1, 1e10, 1], r"shape \(1, 1, 20000000000, 2\)"),
        (X4, [1, 1, 1e10, 1e9], r"shape \(1, 1, 20000000000, 2000000000\)"),
        (np.zeros((3, 3), np.uint8), [1e9, 1e9], r"shape \(3000000000, 3000000000\)"),
    ],
)
def test_output_larger_than_memory(upsample: Upsample, x, scales, pattern) -> None:
    """Refused up front: nothing of the output's size, nor any table of its length, is
    allocated first (numpy's allocations are traced by tracemalloc)."""
    tracemalloc.start()
    try:
        with pytest.raises(UpsampleError, match=pattern) as info:
            upsample(x, scales, "linear")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not isinstance(info.value, MemoryError)
    assert peak < 2**20, f"{peak} bytes allocated before the refusal"


@pytest.mark.parametrize(
    ("x", "scales", "pattern"),
    [
        # 3 x f32(4e18) = 11999999811680993280 > 2**63 - 1
        (np.zeros(3), [4e18], r"scales\[0\].*11999999811680993280.*2\*\*63-1"),
        (np.zeros((1, 1)), [1, 1e38], r"scales\[1\].*2\*\*63-1"),
        (np.zeros((0, 2)), [1, 1e30], r"scales\[1\].*2\*\*63-1"),  # even with no elements
    ],
)
def test_output_dimension_beyond_int64(x, scales, pattern) -> None:
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, scales)


# ---------------------------------------------------------------------------------------------
# mode
# ---------------------------------------------------------------------------------------------


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
def test_bad_mode(mode: object, shown: str) -> None:
    with pytest.raises(UpsampleError, match=rf"mode is {re.escape(shown)}.*'nearest'.*'linear'"):
        upsample(X4, [1, 1, 2, 2], mode)


@pytest.mark.parametrize("mode", [None, 1, b"nearest", ["nearest"]])
def test_a_mode_of_another_type_is_an_upsample_error_not_a_type_error(mode: object) -> None:
    """The documented promise: any mode value that is not a mode name, None included, is an
    UpsampleError (a ValueError), never a TypeError, through both implementations."""
    for implementation in (upsample, ref.upsample):
        with pytest.raises(UpsampleError) as raised:
            implementation(X4, [1, 1, 2, 2], mode)
        assert not isinstance(raised.value, TypeError)


@pytest.mark.parametrize(
    ("shape", "scales", "suggested"),
    [
        ((4, 5, 3), [2, 2], [2, 2, 1]),  # HWC: channels last, unscaled
        ((1, 3, 4, 5), [2, 2], [1, 1, 2, 2]),  # NCHW
        ((1, 6, 5, 3), [2, 1.5], [1, 2, 1.5, 1]),  # NHWC
        ((4, 5), [2], [1, 2]),
    ],
)
def test_too_few_scales_suggest_the_full_call(shape, scales, suggested) -> None:
    """The message writes the call with the missing axes at scale 1, and that call runs."""
    written = "scales=[" + ", ".join(f"{s:g}" for s in suggested) + "]"
    with pytest.raises(UpsampleError, match=re.escape(f"such as {written} (")):
        upsample(np.zeros(shape, np.uint8), scales)
    assert upsample(np.zeros(shape, np.uint8), suggested).ndim == len(shape)


def test_the_mode_rules_word_python_and_the_command_line() -> None:
    """One owner words each rule; the Python call and the command line differ in names only."""
    from onnx_upsample._spec.call import describe_call
    from onnx_upsample._spec.modes import mode_of
    from onnx_upsample._spec.spelling import PYTHON, command_line

    cli = command_line("in.npy")
    assert mode_of("bilinear", PYTHON)[1].endswith("write mode='linear'")
    assert mode_of("bilinear", cli)[1].endswith("write --mode linear")
    with pytest.raises(UpsampleError, match=r"use mode='nearest'$"):
        describe_call([2], "linear", np.dtype(bool), (3,), PYTHON)
    with pytest.raises(UpsampleError, match=r"^--mode linear is not .* use --mode nearest$"):
        describe_call([2], "linear", np.dtype(bool), (3,), cli)
    with pytest.raises(UpsampleError, match=r"^value 2 of --scales is 0\.5; "):
        describe_call([2, 0.5], "nearest", np.dtype(np.uint8), (3, 3), cli)


def test_dask_missing_is_one_line_naming_the_install() -> None:
    """`import onnx_upsample.dask` without dask: one line naming the extra to install, still
    a ModuleNotFoundError (dask hidden from a fresh interpreter through sys.modules)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['dask'] = None\n"
        "try:\n"
        "    import onnx_upsample.dask\n"
        "except ModuleNotFoundError as error:\n"
        "    print(type(error).__name__, error.name, '|', error, sep=' ')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "ModuleNotFoundError dask | onnx_upsample.dask needs dask, which is not installed: "
        "pip install 'onnx-upsample[dask]'\n"
    )


@pytest.mark.parametrize(
    ("x", "name", "mode"),
    [
        (np.array([[True, False]]), "bool", "linear"),
        (np.array([["a", "b"]]), "str", "bilinear"),  # the legacy name is linear too
        (np.array([[b"a", b"b"]]), "bytes", "linear"),
        (np.array([[1, "a"]], dtype=object), "object", "trilinear"),
    ],
)
def test_linear_on_non_numeric_types(x, name: str, mode: str) -> None:
    with (
        warnings.catch_warnings(),
        pytest.raises(UpsampleError, match=rf"{name}\b.*nearest"),
    ):
        warnings.simplefilter("ignore", UpsampleWarning)
        upsample(x, [1, 2], mode)


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
def test_unsupported_element_types(x: np.ndarray) -> None:
    """The element type is checked before the mode's needs: the same error for linear."""
    if x.dtype == np.dtype(np.float64):  # longdouble is float64 on some platforms
        pytest.skip("longdouble is float64 here")
    pattern = rf"x has element type .*{re.escape(x.dtype.name)}"
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, [2])
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, [2], "linear")


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


@pytest.mark.parametrize(("scales", "pattern"), BAD_SCALE_KINDS)
def test_scales_of_the_wrong_kind(scales: object, pattern: str) -> None:
    with pytest.raises(TypeError, match=pattern):
        upsample(X4, scales)


def test_x_none() -> None:
    with pytest.raises(TypeError, match=r"x is None"):
        upsample(None, [])


@pytest.mark.parametrize("x", [[[1, 2], [3]], [[1, 2], 3], [[[1]], [2, 3]]])
def test_ragged_x(x: object) -> None:
    with pytest.raises(UpsampleError, match=r"\bx\b"):
        upsample(x, [2, 2])


# ---------------------------------------------------------------------------------------------
# the reference: the same checks, in the same order
# ---------------------------------------------------------------------------------------------

REFERENCE_CASES = [
    # (x, scales, mode, error, pattern): one of each kind of check above
    (X4, [1, 1, 0.5, 2], "nearest", UpsampleError, r"scales\[2\] is 0\.5\b"),
    (X4, [1, 1, 10**400, 2], "nearest", UpsampleError, r"scales\[2\] is 1000000000"),
    (X4, [1, 1, 2], "linear", UpsampleError, r"scales has 3 value.*rank 4"),
    (np.zeros(3), [4e18], "nearest", UpsampleError, r"scales\[0\].*2\*\*63-1"),
    (X4, [1, 1, 2, 2], "Linear", UpsampleError, r"mode is 'Linear'.*'nearest'.*'linear'"),
    (np.array([[b"a", b"b"]]), [1, 2], "linear", UpsampleError, r"bytes\b.*nearest"),
    (np.zeros(2, "m8[ms]"), [2], "nearest", UpsampleError, r"x has element type .*timedelta"),
    (X4, np.array([1, 1, 2, 2], dtype=np.complex64), "nearest", TypeError, r"scales .*complex"),
    (X4, [1, 1, True, 2], "nearest", TypeError, r"scales\[2\] is True"),
    (None, [], "nearest", TypeError, r"x is None"),
    ([[1, 2], [3]], [2, 2], "nearest", UpsampleError, r"\bx\b"),
    (np.ma.array(X4), [1, 1, 2, 2], "nearest", TypeError, r"x is a masked array"),
    # the reference's own no-resize copy comes after the checks too
    (np.zeros((0, 3)), [0.5, 1], "nearest", UpsampleError, r"scales\[0\] is 0\.5"),
    (np.zeros((2, 2), "U1"), [1.1, 1.1], "linear", UpsampleError, r"str.*nearest"),
    # check order
    (np.zeros(2, "M8[s]"), [0.5], "cubic", UpsampleError, r"mode is 'cubic'"),
    (X4, [1, 0.5, 1e10, 1], "nearest", UpsampleError, r"scales\[1\] is 0\.5"),
]


@pytest.mark.parametrize(("x", "scales", "mode", "error", "pattern"), REFERENCE_CASES)
def test_reference_checks_its_arguments_the_same_way(x, scales, mode, error, pattern) -> None:
    """The reference raises the fast path's exception with the fast path's message."""
    with pytest.raises(error, match=pattern) as fast:
        onnx_upsample.upsample(x, scales, mode)
    with pytest.raises(error, match=pattern) as slow:
        ref.upsample(x, scales, mode)
    assert str(slow.value) == str(fast.value)


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
