"""``out=`` and the order of the checks (docs/semantics.md §3 "checks first").

A bad ``out=`` is refused with a message that names it, and a failing call, whatever fails,
leaves ``out`` byte-for-byte untouched; every check runs before anything is allocated, in
the documented order. The fast path's checks only: the reference takes no ``out=``, and its
argument checks are the same function (``test_errors.py``).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import UpsampleError
from onnx_upsample import reference as ref

upsample = onnx_upsample.upsample
X4 = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)


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
    # numpy's names, not the type codes (<f8, <f4) people do not read
    pytest.param(lambda: _sentinel(dtype=np.float64), UpsampleError,
                 r"out has element type float64; expected float32 ", id="dtype"),
    pytest.param(lambda: _sentinel(dtype=">f4"), UpsampleError,
                 r"out has element type float32 \(big-endian\); expected float32 ",
                 id="byte-order"),
    pytest.param(lambda: _sentinel(order="F"), UpsampleError, r"out is not C-contiguous",
                 id="fortran"),
    pytest.param(_noncontiguous, UpsampleError, r"out is not C-contiguous", id="strided"),
    pytest.param(_readonly, UpsampleError, r"out is read-only", id="readonly"),
    pytest.param(lambda: [[0.0] * 4] * 4, TypeError, r"out is a list", id="list"),
    pytest.param(lambda: "out", TypeError, r"out is a str", id="str"),
]


@pytest.mark.parametrize(("make_out", "error", "pattern"), BAD_OUTS)
@pytest.mark.parametrize("prepared", [True, False], ids=["prepared-call", "new-call"])
def test_bad_out_is_refused_and_left_untouched(make_out, error, pattern, prepared) -> None:
    """Whether the call was prepared before (then ``upsample`` takes its remembered kernel
    once out= passes a quick check) or not (every check runs), a bad out= is refused."""
    scales = [1, 1, 2, 2] if prepared else [1, 1, 2, 2.0000002]  # the latter never succeeds
    if prepared:
        onnx_upsample.upsample(X4, scales)
    out = make_out()
    # the whole buffer behind out (for a strided view, also the elements it skips)
    whole = out if not isinstance(out, np.ndarray) or out.base is None else out.base
    before = np.array(whole, copy=True) if isinstance(whole, np.ndarray) else None
    with pytest.raises(error, match=pattern):
        onnx_upsample.upsample(X4, scales, out=out)
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
    assert out.tobytes() == ref.upsample(X4, [1, 1, 2, 2], mode).tobytes()


def test_out_for_a_byte_swapped_x_is_native() -> None:
    x = X4.astype(">f4")
    out = _sentinel(dtype="=f4")
    assert onnx_upsample.upsample(x, [1, 1, 2, 2], out=out) is out


def test_bfloat16_out_is_named_by_its_name() -> None:
    """bfloat16's code is the opaque '<V2'; the message says 'bfloat16', both ways round."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = X4.astype(ml_dtypes.bfloat16)
    with pytest.raises(UpsampleError, match=r"out has element type float32; expected bfloat16 "):
        onnx_upsample.upsample(x, [1, 1, 2, 2], out=_sentinel())
    wrong = np.zeros((1, 1, 4, 4), ml_dtypes.bfloat16)
    with pytest.raises(UpsampleError, match=r"out has element type bfloat16; expected float32 "):
        onnx_upsample.upsample(X4, [1, 1, 2, 2], out=wrong)


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


@pytest.mark.parametrize(
    ("mode", "scales"),
    [("cubic", [64, 64]), ("cubic", [0.5, 64]), ("NEAREST", [64, 1e10]), ("linear", [64, 0.5])],
)
def test_bad_call_never_allocates(mode: str, scales) -> None:
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
def test_bad_arguments_with_a_no_resize_shape(x, scales, mode, pattern) -> None:
    with pytest.raises(UpsampleError, match=pattern):
        upsample(x, scales, mode)


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
def test_check_order(x, scales, mode, error, pattern) -> None:
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
