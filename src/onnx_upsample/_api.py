"""The public entry points of onnx-upsample: ``upsample`` and ``output_shape``."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from ._buffers import new_output
from ._errors import UpsampleError, UpsampleWarning
from ._threads import threads_for_call
from ._validate import Plan, make_plan, scales_of, shape_of

__all__ = ["output_shape", "upsample"]

# A call's checked form, remembered by (x's shape and type, mode, threads, scales as given):
# a repeated call skips the argument checks and the kernel's preparation, straight to the kernel.
Launch = Callable[[np.ndarray, np.ndarray, int], None]
_PREPARED: dict[tuple[object, ...], tuple[Plan, str | None, Launch]] = {}
MAX_PREPARED = 256


def _key(x: object, scales: object, mode: object, threads: int) -> tuple[object, ...] | None:
    """The memo key of a call, or None when its arguments are not of the plain kinds.

    The scales' types are part of the key: 1, 1.0 and True are equal as dictionary keys,
    but True is a TypeError.
    """
    if type(x) is not np.ndarray or type(mode) is not str:
        return None
    if type(scales) is not list and type(scales) is not tuple:
        return None
    try:
        key = (x.shape, x.dtype, mode, threads, *map(type, scales), *scales)
        hash(key)
    except TypeError:
        return None
    return key


def _out_fits(out: object, plan: Plan, x: np.ndarray) -> bool:
    """What check_out checks, quickly; any doubt goes to check_out for the exact error."""
    return (type(out) is np.ndarray and out.shape == plan.out_shape
            and out.dtype == plan.out_dtype and out.flags.c_contiguous
            and out.flags.writeable and out.flags.aligned and not np.may_share_memory(out, x))


def _prepare(plan: Plan, threads: int) -> Launch | None:
    """The kernel call of a checked plan, or None when the plan is a copy or empty."""
    if plan.no_resize or 0 in plan.out_shape:
        return None
    from ._kernels import Window, launcher  # the compiled kernels load on first use

    return launcher(plan.x.shape, plan.out_shape, plan.scales, plan.mode, plan.etype,
                    plan.x.dtype, Window.whole(plan.out_shape), plan.x.shape, threads)


def upsample(
    x: npt.ArrayLike,
    scales: Sequence[float] | npt.NDArray[np.number],
    mode: str = "nearest",
    *,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Apply the ONNX ``Upsample`` operator (versions 7, 9, 10; version 1 is the 4-D case).

    Bit-identical to onnxruntime 1.32 wherever it has a kernel (docs/semantics.md §2), and
    defined for every element type, rank and scale ORT refuses.

    Parameters
    ----------
    x : array_like
        Input of any rank (0 included) and any ONNX element type: bool, (u)int8-64,
        float16/32/64, complex64/128, bfloat16 (``ml_dtypes``), str, bytes or object
        arrays. Any memory layout and byte order.
    scales : sequence of float or array
        One scale per axis of ``x`` (an empty list for a scalar), each finite and >= 1;
        converted to float32 as ONNX stores them. An array of any shape with that many
        elements is accepted.
    mode : {"nearest", "linear"}
        ``"bilinear"`` and ``"trilinear"`` are accepted as ``"linear"`` with an
        :class:`UpsampleWarning`. Linear is defined for numeric element types only.
    out : numpy.ndarray, optional
        C-contiguous, aligned, writable array of exactly the output's shape and native
        dtype, not overlapping ``x``. Left untouched if the call fails its checks; a call
        interrupted by Ctrl-C (``KeyboardInterrupt``) leaves it partly written.

    Returns
    -------
    numpy.ndarray
        A new C-contiguous array (or ``out``). Axis ``a`` has length
        ``trunc(f32(x.shape[a]) * f32(scales[a]))`` (exact ``floor`` from 2**24 on).

    Raises
    ------
    TypeError
        Arguments of the wrong kind (``None``, strings or bools as scales).
    UpsampleError
        Wrong values: scales count or values, mode, element type for the mode, ``out``,
        or an output too large for memory. Raised before anything is allocated.

    Examples
    --------
    >>> import numpy as np
    >>> from onnx_upsample import upsample
    >>> upsample(np.array([[1, 2], [3, 4]]), [2, 1.5]).tolist()
    [[1, 1, 2], [1, 1, 2], [3, 3, 4], [3, 3, 4]]
    """
    threads = threads_for_call()
    key = _key(x, scales, mode, threads)
    prepared = _PREPARED.get(key) if key is not None else None
    if prepared is not None and (out is None or _out_fits(out, prepared[0], x)):  # type: ignore[arg-type]
        checked, warning, known = prepared
        if warning is not None:
            warnings.warn(warning, UpsampleWarning, stacklevel=2)
        result = new_output(checked.out_shape, checked.out_dtype) if out is None else out
        known(x, result, threads)  # type: ignore[arg-type]
        return result
    plan, warning = make_plan(x, scales, mode, out)
    launch = _prepare(plan, threads)
    if key is not None and launch is not None:
        if len(_PREPARED) >= MAX_PREPARED:
            _PREPARED.clear()
        # the memo keeps no input alive: its plan holds an empty stand-in for x
        stand_in = np.empty((0,), plan.x.dtype)
        _PREPARED[key] = (replace(plan, x=stand_in), warning, launch)
    if warning is not None:
        warnings.warn(warning, UpsampleWarning, stacklevel=2)
    result = new_output(plan.out_shape, plan.out_dtype) if out is None else out
    # a subclass (numpy.matrix...) is written as the plain array it is, not by its methods
    target = result if type(result) is np.ndarray else result.view(np.ndarray)
    if plan.no_resize:
        np.copyto(target, plan.x)
    elif launch is not None:  # None: an empty output, nothing to write
        launch(plan.x, target, threads)
    return result


def output_shape(
    shape: Sequence[int], scales: Sequence[float] | npt.NDArray[np.number]
) -> tuple[int, ...]:
    """Output shape of ONNX ``Upsample`` (versions 1, 7, 9, 10) for an input ``shape``.

    ``trunc(f32(n) * f32(s))`` per axis, as onnxruntime 1.32; the exact ``floor(n * s)``
    when the input or the product reaches 2**24, where float32 loses integers.

    Raises
    ------
    TypeError
        For a shape or scales that are not sequences of integers / numbers.
    UpsampleError
        For a negative dimension, a scales count that differs from the rank, a scale
        that is not finite or below 1, or an output dimension above 2**63-1.

    Examples
    --------
    >>> output_shape((1, 1, 5, 10), [1, 1, 1.4, 1.3])
    (1, 1, 7, 13)
    """
    if isinstance(shape, str | bytes) or not isinstance(shape, Sequence | np.ndarray):
        raise TypeError(f"shape is {shape!r}; expected a sequence of non-negative integers")
    dims = []
    for axis, n in enumerate(shape):
        if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer):
            raise TypeError(f"shape[{axis}] is {n!r}; expected a non-negative integer")
        if n < 0:
            raise UpsampleError(f"shape[{axis}] is {n}; dimensions must be >= 0")
        dims.append(int(n))
    return shape_of(tuple(dims), scales_of(scales, tuple(dims), subject="shape"))
