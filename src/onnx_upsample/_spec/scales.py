"""What ``scales`` may be, and every check of them: their kinds (a ``TypeError`` that says what
to write), their count against x's rank, and their values (finite, float32, >= 1).

A scale enters as a Python number, a numpy number, or an element of an array or tensor; it
leaves as the float32 an ONNX file would hold. Messages name the arguments as the
:class:`~onnx_upsample._spec.spelling.Spelling` they are given says.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from typing import Any

import numpy as np

from .._errors import UpsampleError
from .spelling import PYTHON, Spelling

EXPECTED_SCALES = "expected a sequence or array of numbers, one per axis of x"
# A message about a wrong count shows this many of the values given (a mistake such as
# passing an image as the scales gives millions).
SHOWN_SCALES = 8
# The most axes a numpy array has (64 since numpy 2.0; 32 before): more scales than this
# are the wrong count for any x, so they are counted and only the few a message shows are
# read (a million Fractions took seconds to check one by one before the count refused them).
MAX_RANK = 64


class ScaleItems:
    """Scales whose kinds are checked: numbers, one per element, not converted yet.

    Converting waits until the count is known to be right, so that an array of a million
    scales costs its wrong-count message microseconds, not seconds. Scales too many for
    any x are only counted (``unread``): their kinds are checked as they are read, the
    few a message shows, or all of them if all are read after all.
    """

    __slots__ = ("_count", "_items", "_unread")

    def __init__(self, items: Sequence[Any] | np.ndarray, count: int | None = None,
                 unread: bool = False) -> None:
        # a flat numeric array, or a sequence of real numbers; unread: the sequence as given
        # (nested, maybe) or a flat object array, of ``count`` numbers
        self._items = items
        self._count = len(items) if count is None else count
        self._unread = unread

    def __len__(self) -> int:
        return self._count

    def values(self, count: int | None = None) -> list[float | int]:
        """The first ``count`` values (all by default) as Python floats; an integer too
        large for a float stays an int, for the message that refuses it."""
        if self._unread:
            if count is None or count >= self._count:
                self._items, self._unread = _checked_sequence(self._items), False
            else:
                return _floats(_read_head(self._items, count))
        items: Iterable[Any] = self._items
        if isinstance(items, np.ndarray):
            items = (items if count is None else items[:count]).tolist()
        elif count is not None:
            items = _first(items, count)  # a deque cannot be sliced
        return _floats(items)


def _floats(items: Iterable[Any]) -> list[float | int]:
    values: list[float | int] = []
    for item in items:
        try:
            values.append(float(item))
        except OverflowError:  # an integer beyond float: kept as given, for the message
            values.append(int(item))
    return values


_PLAIN_NUMBERS = {float, int}


def is_masked(array: object) -> bool:
    """True for numpy masked arrays (checked without importing numpy.ma)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(array, ma.MaskedArray)


def scale_items(scales: object, shape: Sequence[int] | None = None) -> ScaleItems:
    """Check that ``scales`` is a sequence or array of real numbers (a ``TypeError`` if not);
    ``shape``, where known, words the fix for a single number. More scales than x has axes
    (than any x has, where x's shape is not known yet) are counted, not read."""
    _refuse_containers(scales, shape)
    if not isinstance(scales, np.ndarray | list | tuple) and any(
            hasattr(scales, name) for name in ("__dlpack__", "__array__", "tolist")):
        scales = _numbers_of(scales)
    if is_masked(scales):
        scales = _unmasked(scales)
    if isinstance(scales, np.ndarray):
        if scales.dtype.kind in "iuf":
            return ScaleItems(scales.reshape(-1))  # numbers by their type: nothing to check
        if scales.dtype.kind != "O":
            raise TypeError(f"scales has element type {scales.dtype.name}; {EXPECTED_SCALES}")
        if _too_many(scales.size, shape):
            return ScaleItems(scales.reshape(-1), scales.size, unread=True)
        scales = scales.reshape(-1).tolist()
    if not isinstance(scales, Sequence):
        _refuse_containers(scales, shape)  # what tolist() gave
        raise TypeError(f"scales is a {type(scales).__name__}; {EXPECTED_SCALES}")
    count = _nested_count(scales)
    if _too_many(count, shape):
        return ScaleItems(scales, count, unread=True)
    return ScaleItems(_checked_sequence(scales))


def _too_many(count: int, shape: Sequence[int] | None) -> bool:
    """Whether ``count`` scales are the wrong count whatever their kinds: more than any
    array has axes, and not x's rank where x's shape is known."""
    return count > MAX_RANK and (shape is None or count != len(shape))


def _nested_count(scales: Sequence[Any]) -> int:
    """How many numbers a sequence holds, nested as an array's rows are ([[2, 2]]), counted
    along its first items (a ragged nesting, refused once read, counts as its first row
    says)."""
    count, item = len(scales), scales
    while isinstance(item, list | tuple) and len(item):
        item = item[0]
        if isinstance(item, list | tuple):
            count *= len(item)
    return count


def _checked_sequence(scales: Sequence[Any] | np.ndarray) -> Sequence[Any]:
    """A sequence (or flat object array) of scales, flattened from a regular nesting, each
    item checked to be a real number (a ``TypeError`` naming the first that is not)."""
    if isinstance(scales, np.ndarray):
        scales = scales.reshape(-1).tolist()
    if set(map(type, scales)) <= _PLAIN_NUMBERS:  # the common case, at C speed
        return scales
    if any(isinstance(item, list | tuple) for item in scales):
        nested = np.array(scales, dtype=object)  # a regular nesting, as an array has: [[2, 2]]
        if nested.ndim > 1:
            scales = nested.reshape(-1).tolist()  # its items checked below, one by one
    for position, item in enumerate(scales):
        if type(item) not in _PLAIN_NUMBERS:
            _checked_item(position, item)
    return scales


def _read_head(scales: Sequence[Any] | np.ndarray, count: int) -> list[Any]:
    """The first ``count`` numbers of scales that were only counted, each checked (the
    message of a wrong count shows them), without reading the others."""
    if isinstance(scales, np.ndarray):
        head = scales[:count].tolist()
    else:
        head = _first(_leaves(scales), count)
    return [_checked_item(position, item) for position, item in enumerate(head)]


def _first(items: Iterable[Any], count: int) -> list[Any]:
    """The first ``count`` of ``items``, reading no more of them."""
    head: list[Any] = []
    if count > 0:
        for item in items:
            head.append(item)
            if len(head) == count:
                break
    return head


def _leaves(scales: Sequence[Any]) -> Iterator[Any]:
    for item in scales:
        if isinstance(item, list | tuple):
            yield from _leaves(item)
        else:
            yield item


def _checked_item(position: int, item: Any) -> Any:
    """``item``, a real number (a 0-d array as its number), or the error for
    ``scales[position]``."""
    if isinstance(item, np.ndarray) and item.ndim == 0:
        if is_masked(item) and bool(np.ma.getmaskarray(item)):
            raise UpsampleError(f"scales[{position}] is masked (numpy.ma.masked); a scale "
                                "cannot be missing: give its number (1 leaves the axis "
                                "unscaled)")
        item = item.item()
    if isinstance(item, bool | np.bool_) or not isinstance(item, numbers.Real):
        raise TypeError(f"scales[{position}] is {item!r}; {EXPECTED_SCALES}")
    return item


def _unmasked(scales: Any) -> np.ndarray:
    """A masked array of scales as its data, where no scale is masked (a mask that hides
    nothing drops nothing); an :class:`UpsampleError` naming the masked ones otherwise."""
    mask = np.ma.getmaskarray(scales).reshape(-1)
    if mask.any():
        where = np.flatnonzero(mask).tolist()
        others = ", ".join(f"scales[{i}]" for i in where[1:SHOWN_SCALES])
        others = "" if len(where) == 1 else \
            f" (and {others}{', ...' if len(where) > SHOWN_SCALES else ''})"
        raise UpsampleError(
            f"scales[{where[0]}] is masked{others}; a scale cannot be missing: pass "
            "scales.filled(s) with the scale s for the masked axes (1 leaves them unscaled), "
            "or numpy.ma.getdata(scales) for the values under the mask")
    return np.asarray(np.ma.getdata(scales))


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
        value = float(scale) if isinstance(scale, numbers.Real) else 2.0
    except (ValueError, OverflowError):
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


def _channels_last(shape: tuple[int, ...]) -> bool:
    """Whether the last axis looks like an image's channels: 1 to 4, and shorter than the
    one before it (HWC, NHWC)."""
    return len(shape) >= 2 and shape[-1] <= 4 and shape[-1] < shape[-2]


def spatial_axes(shape: tuple[int, ...]) -> tuple[range, str]:
    """The axes an image or volume of this shape is usually scaled on, and the others' name:
    before a short last axis (channels last: HWC, NHWC), else after the batch and channels
    (NCHW, NCDHW; CHW for rank 3); every axis for rank 1 and 2."""
    rank = len(shape)
    if rank <= 2:
        return range(rank), ""
    if _channels_last(shape):
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


def checked_values(values: list[float | int], spelling: Spelling) -> tuple[np.float32, ...]:
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
    return checked_values(check_scale_count(scale_items(scales, shape), shape, spelling),
                           spelling)


def _padded_hint(values: list[float | int], shape: tuple[int, ...], spelling: Spelling) -> str:
    """For too few scales, the same scales with the missing axes unscaled: after a last axis
    of 1-4 (an image's channels: HWC, NHWC) or else before the given ones (NCHW)."""
    if not shape:
        return f" (an empty list for a scalar {spelling.x})"
    missing = len(shape) - len(values)
    if missing <= 0 or not values:
        return ""
    channels_last = _channels_last(shape)
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
