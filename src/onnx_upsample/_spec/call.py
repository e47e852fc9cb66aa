"""The checked call of ONNX ``Upsample``: every argument check, in the order of
docs/semantics.md §3, with every message, before anything is allocated.

Wrong kinds of argument raise ``TypeError``; wrong values raise :class:`UpsampleError` with a
message that names the argument, the value, what was expected and the fix. A :class:`Call`
is what the checks produce: shapes, float32 scales, canonical mode and element type, no data;
the kernels, the chunked path and the reference all start from it.
"""

from __future__ import annotations

import functools
import math
import numbers
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import UpsampleError
from .dtypes import ElementType, check_mode_defined, element_type, type_name
from .modes import Mode, mode_of
from .rules import MAX_DIM, interpolated_axes, output_size
from .spelling import PYTHON, Spelling


@dataclass(frozen=True)
class Call:
    """A fully checked call: shapes, float32 scales, canonical mode, element types.

    Holds no data, so it is hashable and small: the kernels cache their preparation by it,
    and the chunked path ships it to every task.
    """

    in_shape: tuple[int, ...]
    scales: tuple[np.float32, ...]
    mode: Mode
    etype: ElementType
    out_shape: tuple[int, ...]
    out_dtype: np.dtype  # x's dtype in native byte order

    @property
    def no_resize(self) -> bool:
        """ORT's global rule: when no axis changes length, the output is a copy of x."""
        return self.out_shape == self.in_shape


EXPECTED_SCALES = "expected a sequence or array of numbers, one per axis of x"
# A message about a wrong count shows this many of the values given (a mistake such as
# passing an image as the scales gives millions).
SHOWN_SCALES = 8


class ScaleItems:
    """Scales whose kinds are checked: numbers, one per element, not converted yet.

    Converting waits until the count is known to be right, so that an array of a million
    scales costs its wrong-count message microseconds, not seconds.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Sequence[Any] | np.ndarray) -> None:
        self._items = items  # a flat numeric array, or a sequence of real numbers

    def __len__(self) -> int:
        return len(self._items)

    def values(self, count: int | None = None) -> list[float | int]:
        """The first ``count`` values (all by default) as Python floats; an integer too
        large for a float stays an int, for the message that refuses it."""
        items = self._items[:count] if count is not None else self._items
        if isinstance(items, np.ndarray):
            items = items.tolist()
        values: list[float | int] = []
        for item in items:
            try:
                values.append(float(item))
            except OverflowError:  # an integer beyond float: kept as given, for the message
                values.append(int(item))
        return values


_PLAIN_NUMBERS = {float, int}


def scale_items(scales: object, shape: Sequence[int] | None = None) -> ScaleItems:
    """Check that ``scales`` is a sequence or array of real numbers (a ``TypeError`` if not);
    ``shape``, where known, words the fix for a single number."""
    _refuse_containers(scales, shape)
    if not isinstance(scales, np.ndarray | list | tuple) and any(
            hasattr(scales, name) for name in ("__dlpack__", "__array__", "tolist")):
        scales = _numbers_of(scales)
    if isinstance(scales, np.ndarray):
        if scales.dtype.kind in "iuf":
            return ScaleItems(scales.reshape(-1))  # numbers by their type: nothing to check
        if scales.dtype.kind != "O":
            raise TypeError(f"scales has element type {scales.dtype.name}; {EXPECTED_SCALES}")
        scales = scales.reshape(-1).tolist()
    if not isinstance(scales, Sequence):
        _refuse_containers(scales, shape)  # what tolist() gave
        raise TypeError(f"scales is a {type(scales).__name__}; {EXPECTED_SCALES}")
    if set(map(type, scales)) <= _PLAIN_NUMBERS:  # the common case, at C speed
        return ScaleItems(scales)
    for position, item in enumerate(scales):
        if type(item) in _PLAIN_NUMBERS:
            continue
        if isinstance(item, np.ndarray) and item.ndim == 0:
            item = item.item()
        if isinstance(item, bool | np.bool_) or not isinstance(item, numbers.Real):
            raise TypeError(f"scales[{position}] is {item!r}; {EXPECTED_SCALES}")
    return ScaleItems(scales)


def _refuse_containers(scales: object, shape: Sequence[int] | None) -> None:
    """A TypeError that says what to write, for the kinds that are not scales: None, text,
    a single number, and containers whose order or contents are not one number per axis."""
    if scales is None or isinstance(scales, str | bytes | bytearray | memoryview):
        raise TypeError(f"scales is {scales!r}; {EXPECTED_SCALES}"
                        f"{_one_per_axis(2, shape)}")
    if isinstance(scales, numbers.Number | np.generic):
        raise TypeError(f"scales is {scales!r}; {EXPECTED_SCALES}{_one_per_axis(scales, shape)}")
    if isinstance(scales, Mapping):
        raise TypeError(f"scales is a {type(scales).__name__} ({_short(scales)}); "
                        f"{EXPECTED_SCALES}, in axis order{_from_mapping(scales, shape)}")
    if isinstance(scales, Set):
        raise TypeError(f"scales is a {type(scales).__name__} ({_short(scales)}), which has "
                        f"no order; {EXPECTED_SCALES}, in axis order: write a list")
    if isinstance(scales, Iterator):
        raise TypeError(f"scales is a {type(scales).__name__}, which can be read only once; "
                        f"{EXPECTED_SCALES}: pass a list of its values")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _one_per_axis(scale: object, shape: Sequence[int] | None) -> str:
    """The fix for one number given where x needs one per axis: the number on the axes an
    image or volume of x's shape is usually scaled on."""
    try:
        value = float(scale)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        value = 2.0
    if shape is None:
        return " (one per axis: for a 4-D NCHW x, such as [1, 1, 2, 2])"
    if len(shape) == 0:
        return " (x is a scalar: write [])"
    return f" ({_suggested(value, tuple(shape))})"


def _suggested(value: float, shape: tuple[int, ...]) -> str:
    """``value`` on the axes usually scaled for x's shape, as a list to write."""
    axes, unscaled = spatial_axes(shape)
    suggested = [value if axis in axes else 1 for axis in range(len(shape))]
    kept = f" to keep {unscaled} unscaled" if unscaled else ""
    return (f"x has shape {shape}: write one per axis, such as "
            f"{PYTHON.set_scales(suggested).removeprefix('scales=')}{kept}")


def _from_mapping(scales: Mapping[Any, Any], shape: Sequence[int] | None) -> str:
    """A dict of axis -> scale, written as the list it stands for, where its keys are axes."""
    if shape is None:
        return ": write a list"
    rank = len(shape)
    values = [scales.get(axis, 1) for axis in range(rank)]
    if not all(type(k) is int and 0 <= k < rank for k in scales) or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        return f" ({_suggested(2.0, tuple(shape))})"
    return f": write {PYTHON.set_scales(values).removeprefix('scales=')}"


def spatial_axes(shape: tuple[int, ...]) -> tuple[range, str]:
    """The axes an image or volume of this shape is usually scaled on, and the others' name:
    before a short last axis (channels last: HWC, NHWC), else after the batch and channels
    (NCHW, NCDHW; CHW for rank 3); every axis for rank 1 and 2."""
    rank = len(shape)
    if rank <= 2:
        return range(rank), ""
    if shape[-1] <= 4 and shape[-1] < shape[-2]:
        return (range(rank - 1), "the channels") if rank == 3 else \
            (range(1, rank - 1), "batch and channels")
    return (range(1, rank), "the channels") if rank == 3 else (range(2, rank), "batch and channels")


def scale_values(scales: object, shape: Sequence[int] | None = None) -> list[float | int]:
    """``scales`` as Python floats, rejecting anything that is not real numbers (``shape``,
    where known, words the fix for a single number)."""
    return scale_items(scales, shape).values()


def _numbers_of(scales: Any) -> object:
    """A tensor or array-API array of scales (torch, cupy, jax...) as a numpy array or a
    list: through DLPack without a copy where it allows, else ``__array__``, else
    ``tolist()`` (which copies a GPU tensor's few numbers to the host)."""
    if hasattr(scales, "__dlpack__"):
        try:
            return np.from_dlpack(scales)
        except (BufferError, RuntimeError, TypeError, ValueError):
            pass  # another device, an element type numpy lacks, a tensor that needs grad
    if hasattr(scales, "__array__"):
        try:
            return np.asarray(scales)
        except (RuntimeError, TypeError, ValueError):
            pass
    if hasattr(scales, "tolist"):
        try:
            return scales.tolist()
        except (RuntimeError, TypeError, ValueError):
            pass
    raise TypeError(f"scales is a {type(scales).__name__} that gives no numbers; "
                    f"{EXPECTED_SCALES}")


def check_scale_count(
    items: ScaleItems, shape: tuple[int, ...], spelling: Spelling = PYTHON
) -> list[float | int]:
    """The scales' values, once there is one per axis of x (an UpsampleError otherwise,
    which shows the count and the first few values)."""
    count = len(items)
    if count == len(shape):
        return items.values()
    if count < len(shape):  # fewer than x's rank: all of them, and the hint pads them
        head = items.values()
        hint = _padded_hint(head, shape, spelling)
    else:
        head, hint = items.values(SHOWN_SCALES), ""
    raise UpsampleError(
        f"{spelling.scales} has {count} value(s) {spelling.shown(head, more=count > len(head))}"
        f" but {spelling.x} has rank {len(shape)} (shape {shape}); give exactly one scale per "
        f"axis of {spelling.x}{hint}"
    )


def _checked_values(values: list[float | int], spelling: Spelling) -> tuple[np.float32, ...]:
    """One scale per axis, as float32; an UpsampleError for the first that is not finite
    and >= 1."""
    as_f32, problems = scale_value_problems(values)
    if problems:
        axis, problem, fix = problems[0]
        raise UpsampleError(f"{spelling.scale(axis)} is {problem}; {fix}")
    return tuple(as_f32)


def scales_of(
    scales: object, shape: tuple[int, ...], spelling: Spelling = PYTHON
) -> tuple[np.float32, ...]:
    """Check ``scales`` against x's shape and convert them to float32 as ONNX stores them."""
    return _checked_values(check_scale_count(scale_items(scales, shape), shape, spelling),
                           spelling)


def _padded_hint(values: list[float | int], shape: tuple[int, ...], spelling: Spelling) -> str:
    """For too few scales, the same scales with the missing axes unscaled: after a last axis
    of 1-4 (an image's channels: HWC, NHWC) or else before the given ones (NCHW)."""
    if not shape:
        return f" (an empty list for a scalar {spelling.x})"
    missing = len(shape) - len(values)
    if missing <= 0 or not values:
        return ""
    channels_last = len(shape) >= 2 and shape[-1] <= 4 and shape[-1] < shape[-2]
    if channels_last and missing == 1:
        padded, kept = [*values, 1], "the channels unscaled"
    elif channels_last and missing == 2 and len(shape) == 4:
        padded, kept = [1, *values, 1], "batch and channels unscaled"
    else:
        padded, kept = [1] * missing + values, "the leading axes unscaled"
    return f", such as {spelling.set_scales(padded)} ({kept})"


def scale_value_problems(
    values: list[float | int],
) -> tuple[np.ndarray, list[tuple[int, str, str]]]:
    """The values as float32, and (axis, "<value> ; what is wrong", fix) for each scale that
    is not a finite float32 >= 1: the one rule every entry point (calls, CLI, model checks)
    words its messages from."""
    finite_or_inf = [v if isinstance(v, float) or abs(v) < 2**1000 else math.inf for v in values]
    with np.errstate(over="ignore"):
        as_f32 = np.array(finite_or_inf, dtype=np.float64).astype(np.float32)
    problems = []
    for axis in np.flatnonzero(~np.isfinite(as_f32) | (as_f32 < 1)).tolist():
        value = values[axis]
        text = repr(value)
        shown = text if len(text) <= 40 else f"{text[:12]}... ({len(text)} digits)"
        if not np.isfinite(as_f32[axis]):
            given_finite = not isinstance(value, float) or math.isfinite(value)
            beyond = " (beyond float32's range)" if given_finite else ""
            problems.append((axis, f"{shown}{beyond}", "each scale must be a finite number >= 1"))
        else:
            problems.append((axis, shown, "Upsample only enlarges (each scale must be >= 1); "
                                          "use Resize to shrink"))
    return as_f32, problems


def shape_of(
    shape: tuple[int, ...], scales: tuple[np.float32, ...], spelling: Spelling = PYTHON
) -> tuple[int, ...]:
    """The output shape, or :class:`UpsampleError` if a dimension exceeds int64."""
    result = tuple(output_size(n, s) for n, s in zip(shape, scales, strict=True))
    for axis, n_out in enumerate(result):
        if n_out > MAX_DIM:
            raise UpsampleError(
                f"{spelling.scale(axis)} is {float(scales[axis])!r}: axis {axis} of length "
                f"{shape[axis]} would become {n_out}, more than the largest dimension "
                f"{MAX_DIM} (2**63-1); use a smaller scale"
            )
    return result


def _is_masked(array: object) -> bool:
    """True for numpy masked arrays (checked without importing numpy.ma)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(array, ma.MaskedArray)


# Linear mode blends 2**k corners per output for k interpolated axes: past this many the
# work is beyond any use (and beyond the kernels' corner tables).
MAX_INTERPOLATED_AXES = 20


def check_interpolated_count(
    scales: tuple[np.float32, ...], spelling: Spelling = PYTHON
) -> None:
    """Refuse linear mode over more interpolated axes than MAX_INTERPOLATED_AXES."""
    count = len(interpolated_axes(scales))
    if count > MAX_INTERPOLATED_AXES:
        raise UpsampleError(
            f"{spelling.mode} {spelling.value('linear')} would interpolate {count} axes (every "
            f"axis whose scale is not 1, 2**{count} corners per output); at most "
            f"{MAX_INTERPOLATED_AXES} are supported: upsample fewer axes at a time, or use "
            f"{spelling.set_mode('nearest')}"
        )


def check_out(out: object, shape: tuple[int, ...], dtype: np.dtype, x: np.ndarray) -> None:
    """``out=`` must be C-contiguous, writable, the exact shape and dtype, and not overlap x.

    Other ndarray subclasses (numpy.matrix...) are written as plain arrays, never through
    their own methods; masked arrays are refused: Upsample has no meaning for a mask.
    """
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out is a {type(out).__name__}; expected a numpy.ndarray or None")
    if _is_masked(out):
        raise TypeError("out is a masked array; Upsample writes every element and has no "
                        "meaning for a mask: pass a plain numpy.ndarray (e.g. out.data)")
    if out.shape != shape:
        raise UpsampleError(f"out has shape {out.shape}; the output has shape {shape}")
    if out.dtype != dtype:
        raise UpsampleError(
            f"out has element type {type_name(out.dtype)}; expected {type_name(dtype)} (x's "
            "type, in native byte order): pass numpy.empty(shape, dtype) with that type"
        )
    if not out.flags.c_contiguous:
        raise UpsampleError("out is not C-contiguous; pass a C-contiguous array such as "
                            "numpy.empty(shape, dtype)")
    if not out.flags.writeable:
        raise UpsampleError("out is read-only; pass a writable array")
    if not out.flags.aligned:
        raise UpsampleError("out is not aligned to its element size (a view at an odd byte "
                            "offset); pass an array such as numpy.empty(shape, dtype)")
    try:
        overlap = np.shares_memory(out, x, max_work=1_000_000)  # type: ignore[arg-type]
    except np.exceptions.TooHardError:
        overlap = True
    if overlap:
        raise UpsampleError("out overlaps x; pass an output array that does not share memory "
                            "with the input")


@functools.lru_cache(maxsize=256)
def _checked_scales_and_shape(
    values: tuple[float | int, ...], shape: tuple[int, ...], spelling: Spelling
) -> tuple[tuple[np.float32, ...], tuple[int, ...]]:
    """The float32 scales and the output shape, remembered: calls repeat the same scales
    and shapes."""
    f32_scales = _checked_values(list(values), spelling)
    return f32_scales, shape_of(shape, f32_scales, spelling)


def describe_call(
    values: Sequence[float | int] | ScaleItems, mode: Mode, dtype: np.dtype,
    shape: tuple[int, ...], spelling: Spelling = PYTHON,
) -> Call:
    """The checks after the kinds: element type for the mode, scales, output shape (worded
    for the Python call, or with ``spelling`` for the command line's options)."""
    etype = element_type(dtype, spelling)
    check_mode_defined(mode, etype, spelling)
    items = values if isinstance(values, ScaleItems) else ScaleItems(values)
    checked = check_scale_count(items, shape, spelling)
    f32_scales, out_shape = _checked_scales_and_shape(tuple(checked), shape, spelling)
    if mode == "linear":
        check_interpolated_count(f32_scales, spelling)
    return Call(shape, f32_scales, mode, etype, out_shape, dtype.newbyteorder("="))


def check_kinds(
    scales: object, mode: object, shape: Sequence[int] | None = None,
    spelling: Spelling = PYTHON,
) -> tuple[ScaleItems, Mode, str | None]:
    """The first checks of every call: the scales' kinds (a ``TypeError``), then the mode
    (an :class:`UpsampleError`; a legacy name gives the warning returned). ``shape``, where
    x's is known, words the fix for a single number given as the scales."""
    items = scale_items(scales, shape)
    canonical_mode, warning = mode_of(mode, spelling)
    return items, canonical_mode, warning


def check_described(
    shape: tuple[int, ...], dtype: np.dtype, scales: object, mode: object,
    spelling: Spelling = PYTHON,
) -> tuple[Call, str | None]:
    """Every check of a call whose input is known by its shape and element type (a file's
    header, a model's declared input, an array not read yet), in the order ``upsample``
    makes them: scales' kinds, mode, element type for the mode, scales, output shape. The
    messages name the arguments as ``spelling`` says (the Python call, or the command
    line's options). Returns the call and the mode's warning, if any."""
    items, canonical_mode, warning = check_kinds(scales, mode, shape, spelling)
    return describe_call(items, canonical_mode, dtype, shape, spelling), warning


def check_call(
    x: object, scales: object, mode: object, out: object,
    read: Callable[[object], np.ndarray] = np.asarray,
) -> tuple[np.ndarray, Call, str | None]:
    """Check every argument of ``upsample`` in the order of docs/semantics.md §3; return x as
    an array, the call and any warning to give. The last check, whether a new output fits
    in memory, is the caller's (it knows the kernels' working memory):
    :func:`onnx_upsample._resources.check_fits_in_memory`. ``read`` turns x into an array
    where the kinds are checked (the public call reads tensors with it); an
    :class:`UpsampleError` it raises is its own one-line message."""
    if x is None:
        raise TypeError("x is None; expected an array (anything numpy.asarray accepts)")
    if _is_masked(x):
        raise TypeError("x is a masked array; ONNX tensors have no mask and it would be "
                        "dropped silently: pass x.filled(value) or x.data")
    # kinds first: scales that are not numbers are a TypeError whatever else is wrong; x
    # is read after them and the mode
    shape = getattr(x, "shape", None)  # where x is an array already: the fix for one number
    values, canonical_mode, warning = check_kinds(
        scales, mode, shape if isinstance(shape, tuple) else None)
    try:
        array = read(x)
    except UpsampleError:
        raise
    except (ValueError, TypeError) as error:
        raise UpsampleError(f"x cannot be read as an array: {error}") from None
    call = describe_call(values, canonical_mode, array.dtype, array.shape)
    if out is not None:
        check_out(out, call.out_shape, call.out_dtype, array)
    return array, call, warning
