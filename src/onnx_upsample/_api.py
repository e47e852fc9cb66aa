"""The public entry points of onnx-upsample: ``upsample`` and ``output_shape``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, overload

import numpy as np
import numpy.typing as npt

from ._buffers import new_output
from ._errors import UpsampleError, UpsampleWarning
from ._interop import PLAIN, chunked, is_dask_array, source_of
from ._kernels import Launcher, Window, launcher  # loaded with the package (_first_use.py)
from ._resources import (
    allocation_failed,
    check_fits_in_memory,
    checked_from,
    kernel_working_bytes,
)
from ._spec.call import Call, check_call, shape_of
from ._spec.modes import ModeName
from ._spec.scales import scales_of
from ._spec.spelling import Spelling
from ._threads import thread_variable_is_bad, threads_for_call

__all__ = ["output_shape", "upsample"]


class _Prepared:
    """A call's checked form and kernels, remembered by the arguments as given (x's shape
    and type, mode, scales): a repeated call skips the argument checks, straight to the
    kernel the kernels' own cache prepared. A call too small to share between threads has
    one kernel, ``serial``, and needs no thread count (reading one costs a system call);
    the others have one per thread count."""

    __slots__ = ("by_threads", "call", "checked", "serial", "warning")

    def __init__(self, call: Call, warning: str | None) -> None:
        self.call = call
        self.warning = warning
        self.serial: Launcher | None = None
        self.by_threads: dict[int, Launcher] = {}
        # an output large enough that each new one is checked against the memory left
        self.checked = call.out_dtype.itemsize * math.prod(call.out_shape) >= checked_from()

    def add(self, launch: Launcher, threads: int) -> None:
        if launch.worth == 1:
            self.serial = launch
        else:
            self.by_threads[threads] = launch


_PREPARED: dict[tuple[object, ...], _Prepared] = {}
MAX_PREPARED = 256


def _key(x: object, scales: object, mode: object) -> tuple[object, ...] | None:
    """The memo key of a call, or None when its arguments are not of the plain kinds.

    The scales' types are part of the key: 1, 1.0 and True are equal as dictionary keys,
    but True is a TypeError.
    """
    if type(x) is not np.ndarray or type(mode) is not str:
        return None
    if (type(scales) is not list and type(scales) is not tuple) or len(scales) != x.ndim:
        return None  # a wrong count is an error: nothing to remember (and no long key)
    try:
        key = (x.shape, x.dtype, mode, *map(type, scales), *scales)
        hash(key)
    except TypeError:
        return None
    return key


def _out_fits(out: object, call: Call, x: np.ndarray) -> bool:
    """What check_out checks, quickly; any doubt goes to check_out for the exact error."""
    return (type(out) is np.ndarray and out.shape == call.out_shape
            and out.dtype == call.out_dtype and out.flags.c_contiguous
            and out.flags.writeable and out.flags.aligned and not np.may_share_memory(out, x))


def _prepare(call: Call, threads: int) -> Launcher | None:
    """The kernel of a checked call, or None when the call is a copy or empty."""
    if call.no_resize or 0 in call.out_shape:
        return None
    return launcher(call, Window.whole(call.out_shape), call.in_shape, threads)


_S = TypeVar("_S", bound=np.generic)
_Out = TypeVar("_Out", bound="np.ndarray[Any, Any]")
_Scales = Sequence[float] | npt.NDArray[np.number]


class _ArrayAPI(Protocol):
    """An array of the array API standard (jax, cupy, array_api_strict...)."""

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any: ...


_A = TypeVar("_A", bound=_ArrayAPI)


@overload
def upsample(x: npt.NDArray[_S], scales: _Scales, mode: ModeName = ..., *,
             out: None = None) -> npt.NDArray[_S]: ...
@overload
def upsample(x: object, scales: _Scales, mode: ModeName = ..., *, out: _Out) -> _Out: ...
@overload
def upsample(x: _A, scales: _Scales, mode: ModeName = ..., *, out: None = None) -> _A: ...
@overload
def upsample(x: _S | Sequence[Any] | complex | str | bytes, scales: _Scales,
             mode: ModeName = ..., *, out: None = None) -> npt.NDArray[Any]: ...
@overload
def upsample(x: object, scales: _Scales, mode: ModeName = ..., *,
             out: None = None) -> Any: ...


def upsample(x: Any, scales: Any, mode: Any = "nearest", *, out: Any = None) -> Any:
    """Apply the ONNX ``Upsample`` operator (versions 7, 9, 10; version 1 is the 4-D case).

    Bit-identical to onnxruntime 1.32 wherever it has a kernel (docs/semantics.md §2), and
    defined for every element type, rank and scale ORT refuses.

    Parameters
    ----------
    x : array_like, tensor, dask array or image
        Input of any rank (0 included) and any ONNX element type: bool, (u)int8-64,
        float16/32/64, complex64/128, bfloat16 (``ml_dtypes``), str, bytes or object
        arrays. Any memory layout and byte order. Other libraries' arrays come back as
        theirs: a dask array goes to :func:`onnx_upsample.dask.upsample` and its lazy
        result comes back (nothing is computed); torch tensors and array-API arrays
        (``__array_namespace__``: jax, ``array_api_strict``...) on the CPU are read
        without a copy (DLPack; torch's bfloat16 too) and the result comes back in their
        namespace the same way; a Pillow image is read as the command line reads it
        (palette images as RGB, or RGBA with transparency; 1-bit as L; other colour
        spaces as RGB) and comes back as an image of that mode, so scales are per axis of
        its (height, width[, channels]) array, with 1 for the channels. A tensor on
        another device, or one that requires grad, is an :class:`UpsampleError` (pass
        ``x.cpu()``, ``x.detach()``); an xarray ``DataArray`` is a ``TypeError`` naming
        :func:`onnx_upsample.xarray.upsample`, which keeps its coordinates. Anything else
        (lists, numpy subclasses, objects with ``__array__``) gives a numpy array.
    scales : sequence of float or array
        One scale per axis of ``x`` (an empty list for a scalar), each finite and >= 1;
        converted to float32 as ONNX stores them. An array of any shape with that many
        elements is accepted, a tensor too (anything with ``__dlpack__``, ``__array__``
        or ``tolist``).
    mode : {"nearest", "linear"}
        ``"bilinear"`` and ``"trilinear"`` are accepted as ``"linear"`` with an
        :class:`UpsampleWarning`. Linear is defined for numeric element types only.
    out : numpy.ndarray, optional
        C-contiguous, aligned, writable array of exactly the output's shape and native
        dtype, not overlapping ``x``; a memory-mapped one
        (``numpy.lib.format.open_memmap``) holds an output larger than memory. The result
        is ``out`` whatever ``x`` is (a dask ``x`` refuses it: its result is lazy, stored
        with ``result.store(out)``). Left untouched if the call fails its checks; a call
        interrupted by Ctrl-C (``KeyboardInterrupt``) leaves it partly written.

    Returns
    -------
    numpy.ndarray, or x's own kind
        A new C-contiguous array (or ``out``), of ``x``'s element type in native byte
        order; for the inputs above, their own kind. Axis ``a`` has length
        ``trunc(f32(x.shape[a]) * f32(scales[a]))`` (exact ``floor`` from 2**24 on).

    Raises
    ------
    TypeError
        ``x`` or ``scales`` of the wrong kind (``x=None``, an xarray ``DataArray``;
        ``None``, strings or bools as scales), or an ``out`` that is not an ndarray.
    UpsampleError
        Wrong values: scales count or values, any ``mode`` that is not a mode name whatever
        its type (``None`` included), element type for the mode, ``out``, or an output
        beyond the memory this process can take now (the machine's available memory, its
        cgroup's limit, its address-space limit; docs/threads.md), raised before anything
        is allocated. An allocation that fails all the same is an ``UpsampleError`` with
        the same words, never a ``MemoryError``.

    Examples
    --------
    >>> import numpy as np
    >>> from onnx_upsample import upsample
    >>> upsample(np.array([[1, 2], [3, 4]]), [2, 1.5]).tolist()
    [[1, 1, 2], [1, 1, 2], [3, 3, 4], [3, 3, 4]]
    """
    threads = 0  # not read yet: a call worth one thread needs no count (a system call)
    key = _key(x, scales, mode)
    prepared = _PREPARED.get(key) if key is not None else None
    if prepared is not None and (out is None or _out_fits(out, prepared.call, x)):
        known = prepared.serial
        if known is None or thread_variable_is_bad():
            threads = threads_for_call()  # raises for a bad ONNX_UPSAMPLE_NUM_THREADS
            known = known or prepared.by_threads.get(threads)
        if known is not None:
            if prepared.warning is not None:
                warnings.warn(prepared.warning, UpsampleWarning, stacklevel=2)
            checked = prepared.call
            if out is not None:
                known.run(x, out, threads or 1)
                return out
            if prepared.checked:  # a large output: the memory left now
                check_fits_in_memory(checked.out_shape, checked.out_dtype.itemsize,
                                     working_bytes=kernel_working_bytes(x, threads or 1))
            try:
                result = new_output(checked.out_shape, checked.out_dtype)
                known.run(x, result, threads or 1)
            except MemoryError:
                raise allocation_failed(checked.out_shape, checked.out_dtype.itemsize,
                                        working_bytes=kernel_working_bytes(x, threads or 1)
                                        ) from None
            return result
    # another library's array: read as numpy, the result given back as its own kind
    source = PLAIN
    if type(x) is not np.ndarray:
        if is_dask_array(x):
            return chunked(x, scales, mode, out)  # lazy: dask's own, computed by chunks
        source = source_of(x)
        scales = source.scales(x, scales)
    if not threads:  # read once per call, a system call (on a miss above, it was read)
        threads = threads_for_call()
    array, call, warning = check_call(x, scales, mode, out, read=source.read)
    working = kernel_working_bytes(array, threads)
    if out is None:
        source.check(call.out_shape)  # what cannot go back as x's kind
        check_fits_in_memory(call.out_shape, call.out_dtype.itemsize, working_bytes=working)
    launch = _prepare(call, threads)
    if key is not None and launch is not None:
        if key not in _PREPARED and len(_PREPARED) >= MAX_PREPARED:
            _PREPARED.clear()
        # keeps no input alive: a call holds no data
        _PREPARED.setdefault(key, _Prepared(call, warning)).add(launch, threads)
    if warning is not None:
        warnings.warn(warning, UpsampleWarning, stacklevel=2)
    try:
        result = new_output(call.out_shape, call.out_dtype) if out is None else out
        # a subclass (numpy.matrix...) is written as the plain array it is, not by its methods
        target = result if type(result) is np.ndarray else result.view(np.ndarray)
        if call.no_resize:
            np.copyto(target, array)
        elif launch is not None:  # None: an empty output, nothing to write
            launch(array, target, threads)
    except MemoryError:  # numpy's, or the kernels' scratch: one line, with the fixes
        raise allocation_failed(call.out_shape, call.out_dtype.itemsize,
                                working_bytes=working) from None
    return result if out is not None else source.back(result)


# output_shape's messages name its first argument, not x
_SHAPE = Spelling(x="shape")


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
    return shape_of(tuple(dims), scales_of(scales, tuple(dims), _SHAPE))
