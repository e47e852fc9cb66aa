"""The compiled kernels check the description of a call completely, once, when it is made.

A description (``_native.nearest_kernel`` / ``linear_kernel``, see ``describe.c``) gives per
axis ``[kind, n_out, in_len, n_in, out_first, in_first, num, den]`` and a float32 scale; the
kernels compute every index from it and clamp it into the input window, and derive strides
from the window's lengths. These tests build kernels from bad descriptions (each must be
refused with a ValueError, never crash) and call good kernels with wrong buffers.
"""

from __future__ import annotations

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import _kernels as kernels
from onnx_upsample import upsample
from onnx_upsample._kernels import _compiled, _native
from onnx_upsample._kernels._tables import Window
from onnx_upsample._spec.call import check_call

GATHER, BLEND, COPY = _native.AXIS_GATHER, _native.AXIS_BLEND, _native.AXIS_COPY


def _axes(*rows: list[int]) -> np.ndarray:
    return np.array(rows, np.int64)


def _nearest_args(**changes: object) -> dict[str, object]:
    """A valid nearest gather of x (4, 6) uint8 into (8, 12), by 2 on both axes: one outer
    axis (rows) and a gathered row."""
    args = {
        "x_elements": 24, "unit": 1, "block": 1,
        "axes": _axes([GATHER, 8, 4, 4, 0, 0, 2, 1], [GATHER, 12, 6, 6, 0, 0, 2, 1]),
        "scales": np.array([2, 2], np.float32),
        "row_kind": _native.ROW_GATHER, "repeat": 1,
        "n_blocks": 1, "n_segments": 1, "segment": 12,
    }
    args.update(changes)
    return args


def _nearest_input() -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(24, dtype=np.uint8).reshape(4, 6)
    return x, x.repeat(2, axis=0).repeat(2, axis=1)


def test_valid_nearest_descriptions() -> None:
    x, expected = _nearest_input()
    for kind, repeat in ((_native.ROW_GATHER, 1), (_native.ROW_REPEAT, 2)):
        kernel = _native.nearest_kernel(**_nearest_args(row_kind=kind, repeat=repeat))
        out = np.zeros((8, 12), np.uint8)
        kernel(x, out, 2)
        assert np.array_equal(out, expected)


def _row(**fields: int) -> np.ndarray:
    """The outer axis of _nearest_args and its row with some fields changed, by the names
    the extension gives them."""
    values = dict(zip(_native.AXIS_FIELDS, [GATHER, 12, 6, 6, 0, 0, 2, 1], strict=True))
    values.update(fields)
    return _axes([GATHER, 8, 4, 4, 0, 0, 2, 1], list(values.values()))


BAD_NEAREST = {
    "input too small": {"x_elements": 23},
    "input too large": {"x_elements": 25},
    "row window longer than its axis": {"axes": _row(in_len=7), "x_elements": 28},
    "axis longer than MAX_AXIS_INPUT": {"axes": _row(n_in=_native.MAX_AXIS_INPUT + 1,
                                                     in_first=_native.MAX_AXIS_INPUT - 5)},
    "row window past the axis' end": {"axes": _row(in_first=1)},
    "negative window start": {"axes": _row(in_first=-1)},
    "negative first output": {"axes": _row(out_first=-1)},
    "first output near 2**63 (first + length wraps)": {"axes": _row(out_first=(1 << 63) - 2)},
    "zero-length row": {"axes": _row(n_out=0)},
    "scale below 1": {"scales": np.array([2, 0.5], np.float32)},
    "NaN scale": {"scales": np.array([2, np.nan], np.float32)},
    "ratio that is not the scale": {"axes": _row(num=3)},
    "denominator not a power of two": {"axes": _row(num=6, den=3)},
    "numerator of 2**24 over 2": {"axes": _row(num=1 << 24, den=2)},
    "unknown axis kind": {"axes": _row(kind=7)},
    "blended axis in a nearest call": {"axes": _row(kind=BLEND)},
    "copied row of another length than its input": {
        "axes": _row(kind=COPY), "row_kind": _native.ROW_COPY},
    "gathered row called a copy": {"row_kind": _native.ROW_COPY},
    "repeat that is not the rule's": {"row_kind": _native.ROW_REPEAT, "repeat": 3},
    "unknown row kind": {"row_kind": 7},
    "unit of 3 bytes": {"unit": 3},
    "int32 axes": {"axes": _row().astype(np.int32)},
    "float64 scales": {"scales": np.array([2, 2], np.float64)},
    "8 fields short": {"axes": _row()[:1]},
    "fields not a multiple of 8": {"axes": _row().reshape(-1)[:15]},
    "empty axes": {"axes": np.zeros(0, np.int64)},
    "scales for another axis count": {"scales": np.array([2, 2, 2], np.float32)},
    "too few segments": {"segment": 4},
    "segment longer than the row": {"segment": 13},
    "row length times block past 2**63": {
        "axes": _axes([COPY, 1, 1, 1, 0, 0, 1, 1], [COPY, (1 << 62) + 1, (1 << 62) + 1,
                                                     (1 << 62) + 1, 0, 0, 1, 1]),
        "scales": np.ones(2, np.float32), "row_kind": _native.ROW_COPY, "block": 4,
        "segment": (1 << 62) + 1, "x_elements": 4},
}


@pytest.mark.parametrize("change", BAD_NEAREST.values(), ids=BAD_NEAREST.keys())
def test_nearest_kernel_refuses_inconsistent_descriptions(change: dict) -> None:
    with pytest.raises(ValueError, match=r"kernel table|inconsistent kernel description"):
        _native.nearest_kernel(**_nearest_args(**change))


def test_indices_are_clamped_into_the_input_window() -> None:
    """A window that claims to start later than the rule reads: the kernel clamps every index
    into its input instead of reading before it (the result is then meaningless, but no
    memory outside the input is ever touched)."""
    x = np.arange(12, dtype=np.uint8).reshape(2, 6)  # claims rows 2..3 of a 4-row input
    args = _nearest_args(x_elements=12, axes=_axes([GATHER, 8, 2, 4, 0, 2, 2, 1],
                                                   [GATHER, 12, 6, 6, 0, 0, 2, 1]))
    out = np.zeros((8, 12), np.uint8)
    _native.nearest_kernel(**args)(x, out, 1)
    assert set(np.unique(out)) <= set(range(12))
    assert np.array_equal(out[:4], np.repeat(x[:1].repeat(2, axis=1), 4, axis=0))


def _linear_kernel(shape: tuple[int, ...], scales: list[float]) -> kernels.Launcher:
    _, call, _ = check_call(np.empty(shape, np.float32), scales, "linear", None)
    return kernels.launcher.__wrapped__(call, Window.whole(call.out_shape), shape, 2)


def test_prepared_kernels_refuse_wrong_buffer_sizes() -> None:
    x, _ = _nearest_input()
    kernel = _native.nearest_kernel(**_nearest_args())
    for bad_x, bad_out in [
        (x.reshape(-1)[:23], np.zeros((8, 12), np.uint8)),
        (np.zeros(25, np.uint8), np.zeros((8, 12), np.uint8)),
        (x.astype(np.uint16), np.zeros((8, 12), np.uint8)),
        (x, np.zeros((8, 11), np.uint8)),
        (x, np.zeros((7, 12), np.uint8)),
        (x, np.zeros((8, 12), np.uint16)),
    ]:
        with pytest.raises(ValueError, match="kernel called with"):
            kernel(bad_x, bad_out, 2)

    shape, scales = (2, 5, 6), [1, 2, 1.5]
    launch = _linear_kernel(shape, scales)
    xf = np.arange(60, dtype=np.float32).reshape(shape)
    out = np.zeros(onnx_upsample.output_shape(shape, scales), np.float32)
    launch(xf, out, 2)
    assert out.tobytes() == upsample(xf, scales, "linear").tobytes()
    for bad_x, bad_out in [
        (xf[:, :4], out),
        (np.zeros((2, 5, 7), np.float32), out),
        (xf.astype(np.float64), out),
        (xf, np.zeros((2, 10, 10), np.float32)),
        (xf, np.zeros(out.size + 1, np.float32)),
    ]:
        with pytest.raises(ValueError, match="kernel called with"):
            launch(bad_x, bad_out, 2)


# The arguments of _native.linear_kernel, as its C source names them (describe_linear.c),
# and those given only where they apply: a 16-bit float's table, a blended block's taps, an
# integer's bounds.
LINEAR_ARGS = (
    "x_elements", "src", "dst", "block", "block_in", "axes", "scales", "n_blocks",
    "n_segments", "segment", "isa", "row_repeat",
)
LINEAR_OPTIONAL_ARGS = ("lut", "block_taps", "bounds")


def _linear_args(monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...],
                 scales: list[float]) -> dict[str, object]:
    """The arguments prepare_linear passes to _native.linear_kernel for a float32 call."""
    captured: list[dict[str, object]] = []

    class Spy:
        def __getattr__(self, name: str) -> object:
            return getattr(_native, name)

        def linear_kernel(self, **description: object) -> object:
            captured.append(description)
            return _native.linear_kernel(**description)

    monkeypatch.setattr(_compiled, "_native", Spy())
    _linear_kernel(shape, scales)
    assert len(captured) == 1, captured
    assert set(LINEAR_ARGS) <= set(captured[0]) <= {*LINEAR_ARGS, *LINEAR_OPTIONAL_ARGS}
    return captured[0]


def _changed(args: dict[str, object], **changes: object) -> dict[str, object]:
    args = dict(args)
    for name, change in changes.items():
        args[name] = change(args[name]) if callable(change) else change
    return args


def _set(index: tuple[int, ...] | int, value: int) -> object:
    def change(table: np.ndarray) -> np.ndarray:
        table = table.copy()
        table[index] = value
        return table
    return change


def _tap(which: int, change: object) -> object:
    """A change of one table of block_taps (lo, hi, w_lo, w_hi)."""
    def apply(taps: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        assert callable(change)
        return tuple(change(t) if i == which else t for i, t in enumerate(taps))
    return apply


def test_linear_kernel_refuses_inconsistent_descriptions(monkeypatch) -> None:
    # (2, 5, 6) by (2, 1.5, 1.5): outer axis 2 -> 4, row 5 -> 7 (blended), block 6 -> 9
    args = _linear_args(monkeypatch, (2, 5, 6), [2, 1.5, 1.5])
    axes = args["axes"]
    assert isinstance(axes, np.ndarray) and axes[-1, 0] == BLEND and axes[-1, 1] == 7, axes
    _native.linear_kernel(**args)  # the unchanged arguments are accepted
    n_x = args["x_elements"]
    assert isinstance(n_x, int)
    bad = {
        "input too small": {"x_elements": n_x - 1},
        "row window longer than the input row": {"axes": _set((-1, 2), 6)},
        "row ratio that is not the scale": {"axes": _set((-1, 6), 5)},
        "gathered row in a linear call": {"axes": _set((-1, 0), GATHER)},
        "block tap beyond the block": {"block_taps": _tap(1, _set(-1, 6))},
        "negative block tap": {"block_taps": _tap(0, _set(0, -1))},
        "block taps for another block": {"block_taps": _tap(2, lambda t: t[:-1])},
        "block taps that are not four tables": {"block_taps": lambda taps: taps[:3]},
        "no block taps for a block wider than its input": {"block_taps": None},
        "unknown element type": {"src": 99},
        # each store reads its own accumulator: another pair would read or write past them
        "float32 source written as float16": {"dst": _native.T_HALF},
        "int8 source written as uint64": {"src": _native.T_INT8, "dst": _native.T_UINT64},
        # a segment longer than the row made the scratch size wrap (heap corruption)
        "segment of 2**62": {"segment": 1 << 62},
        "segment longer than the row": {"segment": 8},
        "row repeat on a fractional scale": {"row_repeat": 2},
        "half without its table": {"src": _native.T_HALF},
        # 16-bit floats are summed into float32 results: 2-byte outputs would be overrun
        "float16 source written as float16": {
            "src": _native.T_HALF, "dst": _native.T_HALF, "lut": np.zeros(65536, np.float32)},
        "half with a short table": {"src": _native.T_HALF, "lut": np.zeros(256, np.float32)},
        "a table for float32": {"lut": np.zeros(65536, np.float32)},
    }
    wrong = []
    for why, change in bad.items():
        try:
            _native.linear_kernel(**_changed(args, **change))
        except ValueError:
            continue
        wrong.append(why)
    assert not wrong, f"accepted: {wrong}"


def test_linear_kernel_call_refuses_rows_and_positions_outside_the_output(monkeypatch) -> None:
    """row_base + rows wrapped past int64 and passed the bounds check (then segfaulted); a
    column range must lie on segment boundaries inside the row."""
    args = _linear_args(monkeypatch, (3, 64, 256), [1, 2, 2])
    kernel = _native.linear_kernel(**args)
    x = np.zeros((3, 64, 256), np.float32)
    rows, width = 3 * 128, 512
    out = np.zeros((200, width), np.float32)
    for row_base in ((1 << 63) - 100, (1 << 63) - 1, rows - 199):
        with pytest.raises(ValueError, match="kernel called with"):
            kernel(x, out, 1, row_base)
    segment = args["segment"]
    assert isinstance(segment, int)
    for first, count in ((1, 10), (0, width + 1), (width, 1), (-segment, segment),
                         (0, 0), (0, segment + 1) if segment + 1 < width else (0, -2)):
        with pytest.raises(ValueError, match="row positions"):
            kernel(x, np.zeros((rows, max(count, 1)), np.float32), 1, 0, first, count)
    kernel(x, np.zeros((rows, width), np.float32), 1, 0)  # the whole output is fine


def test_repeat_factor_is_the_rule_of_integer_scales() -> None:
    def factor(n_out: int, in_len: int, n_in: int, out_first: int, in_first: int,
               scale: float) -> int:
        num, den = float(np.float32(scale)).as_integer_ratio()
        fields = np.array([GATHER, n_out, in_len, n_in, out_first, in_first, num, den],
                          np.int64)
        return _native.repeat_factor(fields, float(np.float32(scale)))

    assert factor(12, 6, 6, 0, 0, 2) == 2
    assert factor(9, 3, 3, 0, 0, 3) == 3
    assert factor(6, 3, 6, 6, 3, 2) == 2  # a window from output 6 (input 3)
    assert factor(6, 3, 6, 5, 2, 2) == 0  # a window starting inside a group
    assert factor(5, 3, 6, 0, 0, 2) == 0  # a window ending inside a group
    assert factor(7, 5, 5, 0, 0, 1.5) == 0
    with pytest.raises(ValueError):
        factor(12, 7, 6, 0, 0, 2)


def test_kernel_call_refuses_misaligned_buffers() -> None:
    """Typed loads need their elements' alignment: a buffer that lacks it is refused by the
    C side, whatever Python checked before."""
    args = _nearest_args(unit=4, x_elements=24)
    kernel = _native.nearest_kernel(**args)
    raw = np.zeros(24 * 4 + 1, np.uint8)
    x = np.frombuffer(raw.data, np.uint32, 24, offset=1)
    assert not x.flags.aligned, "premise: a misaligned view"
    with pytest.raises(ValueError, match="not aligned"):
        kernel(x, np.zeros((8, 12), np.uint32), 1)
    kernel(np.zeros(24, np.uint32), np.zeros((8, 12), np.uint32), 1)  # aligned: fine


def test_a_description_by_name_refuses_unknown_and_missing_names() -> None:
    with pytest.raises(TypeError):
        _native.nearest_kernel(**_nearest_args(), colour=1)
    args = _nearest_args()
    del args["segment"]
    with pytest.raises(TypeError):
        _native.nearest_kernel(**args)


def test_kernels_are_made_only_by_their_constructors() -> None:
    """The Kernel type is created from a spec (the limited API has no static types), which by
    default would inherit object's constructor: an empty kernel, whose call divides by its
    zero segment length. It refuses to be called instead."""
    kernel = _native.nearest_kernel(**_nearest_args())
    assert type(kernel) is _native.Kernel
    with pytest.raises(TypeError, match="cannot create"):
        _native.Kernel()
