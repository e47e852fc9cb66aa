"""The checked call of ONNX ``Upsample``: every argument check, in the order of
docs/semantics.md §3, with every message, before anything is allocated.

Wrong kinds of argument raise ``TypeError``; wrong values raise :class:`UpsampleError` with a
message that names the argument, the value, what was expected and the fix. A :class:`Call`
is what the checks produce: shapes, float32 scales, canonical mode and element type, no data;
the kernels, the chunked path and the reference all start from it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .._errors import UpsampleError
from .dtypes import ElementType, check_mode_defined, element_type, type_name
from .modes import Mode, mode_of
from .rules import MAX_COMPUTED_AXIS, MAX_DIM, interpolated_axes, output_size
from .scales import ScaleItems, check_scale_count, checked_values, is_masked, scale_items
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
    if is_masked(out):
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
    f32_scales = checked_values(list(values), spelling)
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
    _check_computable(shape, out_shape, spelling)
    return Call(shape, f32_scales, mode, etype, out_shape, dtype.newbyteorder("="))


def _check_computable(shape: tuple[int, ...], out_shape: tuple[int, ...],
                      spelling: Spelling) -> None:
    """Refuse an axis longer than MAX_COMPUTED_AXIS, in or out, whose indices float64 could
    not compute exactly (only a lazy, chunked array can be that long)."""
    for axis, (n_in, n_out) in enumerate(zip(shape, out_shape, strict=True)):
        if max(n_in, n_out) > MAX_COMPUTED_AXIS:
            raise UpsampleError(
                f"axis {axis} of {spelling.x} has {n_in} elements and would have {n_out}; "
                f"indices are computed exactly for axes of up to {MAX_COMPUTED_AXIS} (2**53) "
                "elements: upsample the array in pieces along that axis"
            )


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
    if is_masked(x):
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
