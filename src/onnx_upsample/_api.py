"""The public entry points of onnx-upsample: ``upsample`` and ``output_shape``."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._buffers import new_output
from ._errors import UpsampleError, UpsampleWarning
from ._first_use import first_use
from ._resources import check_fits_in_memory, kernel_working_bytes
from ._spec.call import Call, check_call, shape_of
from ._spec.scales import scales_of
from ._spec.spelling import Spelling
from ._threads import thread_variable_is_bad, threads_for_call

if TYPE_CHECKING:
    from ._kernels import Launcher  # the compiled kernels load on first use, not here

__all__ = ["output_shape", "upsample"]


class _Prepared:
    """A call's checked form and kernels, remembered by the arguments as given (x's shape
    and type, mode, scales): a repeated call skips the argument checks, straight to the
    kernel the kernels' own cache prepared. A call too small to share between threads has
    one kernel, ``serial``, and needs no thread count (reading one costs a system call);
    the others have one per thread count."""

    __slots__ = ("by_threads", "call", "serial", "warning")

    def __init__(self, call: Call, warning: str | None) -> None:
        self.call = call
        self.warning = warning
        self.serial: Launcher | None = None
        self.by_threads: dict[int, Launcher] = {}

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
    with first_use():  # the compiled kernels load at the first call; a fork waits for them
        from ._kernels import Window, launcher

    return launcher(call, Window.whole(call.out_shape), call.in_shape, threads)


# DLPack's device type of main memory (kDLCPU): every other device is one the kernels
# cannot read (torch reports pinned host memory as CPU too).
DLPACK_CPU = 1


def _read_x(x: object) -> np.ndarray:
    """x as a numpy array, without a copy where x allows one.

    Tensors (torch, and any array with ``__dlpack__``: jax, cupy, array-API arrays) are
    read through DLPack, which shares their memory; torch's bfloat16, which DLPack cannot
    hand to numpy, as its 16-bit patterns viewed as ml_dtypes' bfloat16 (no copy either).
    What the CPU cannot read is one UpsampleError line: another device, a tensor that
    requires grad (upsample returns a numpy array, so gradients would stop here silently:
    ``.detach()`` says so explicitly), a sparse tensor, an element type numpy lacks.
    """
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return np.asarray(x)
    kind = f"{type(x).__module__.split('.')[0]}.{type(x).__name__}"
    device = getattr(x, "__dlpack_device__", None)
    if device is not None and int(device()[0]) != DLPACK_CPU:
        where = getattr(x, "device", None) or f"DLPack device type {int(device()[0])}"
        raise UpsampleError(f"x is a {kind} on {where}; upsample runs on the CPU: pass "
                            "x.cpu() (or copy x to host memory)")
    if getattr(x, "requires_grad", False) is True:
        raise UpsampleError(f"x is a {kind} that requires grad; upsample is not differentiable "
                            "and returns a numpy array: pass x.detach()")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _read_torch(x, torch)
    try:
        return np.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError, ValueError):
        return np.asarray(x)  # through __array__, or check_call words why not


def _read_torch(x: Any, torch: Any) -> np.ndarray:
    """A CPU torch tensor that needs no grad, as a numpy array sharing its memory."""
    if x.layout != torch.strided:
        raise UpsampleError(f"x is a torch tensor of layout {x.layout}; pass x.to_dense()")
    x = x.resolve_conj().resolve_neg()  # a copy only where a conjugation is still pending
    if x.dtype == torch.bfloat16:
        try:
            with first_use():
                import ml_dtypes
        except ImportError:
            raise UpsampleError("x is a torch.bfloat16 tensor; numpy holds bfloat16 through "
                                "ml_dtypes: pip install ml_dtypes (or pass x.float())") from None
        return np.from_dlpack(x.view(torch.int16)).view(ml_dtypes.bfloat16)
    try:
        return np.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError) as error:
        raise UpsampleError(f"x is a torch tensor of element type {x.dtype}, which numpy "
                            f"cannot hold ({error}); convert it first, e.g. x.float()") from None


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
        arrays. Any memory layout and byte order. CPU tensors (torch, and anything with
        ``__dlpack__``) are read without a copy, torch's bfloat16 included; a tensor on
        another device, or one that requires grad, is an :class:`UpsampleError` (pass
        ``x.cpu()``, ``x.detach()``). The result is a numpy array in every case.
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
        ``x`` or ``scales`` of the wrong kind (``x=None``; ``None``, strings or bools as
        scales), or an ``out`` that is not an ndarray.
    UpsampleError
        Wrong values: scales count or values, any ``mode`` that is not a mode name whatever
        its type (``None`` included), element type for the mode, ``out``, or an output too
        large for memory. Raised before anything is allocated.

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
    if prepared is not None and (out is None or _out_fits(out, prepared.call, x)):  # type: ignore[arg-type]
        known = prepared.serial
        if known is None or thread_variable_is_bad():
            threads = threads_for_call()  # raises for a bad ONNX_UPSAMPLE_NUM_THREADS
            known = known or prepared.by_threads.get(threads)
        if known is not None:
            if prepared.warning is not None:
                warnings.warn(prepared.warning, UpsampleWarning, stacklevel=2)
            checked = prepared.call
            result = new_output(checked.out_shape, checked.out_dtype) if out is None else out
            known.run(x, result, threads or 1)  # type: ignore[arg-type]
            return result
    if not threads:  # read once per call, a system call (on a miss above, it was read)
        threads = threads_for_call()
    array, call, warning = check_call(x, scales, mode, out, read=_read_x)
    if out is None:
        check_fits_in_memory(call.out_shape, call.out_dtype.itemsize,
                             working_bytes=kernel_working_bytes(array, threads))
    launch = _prepare(call, threads)
    if key is not None and launch is not None:
        if key not in _PREPARED and len(_PREPARED) >= MAX_PREPARED:
            _PREPARED.clear()
        # keeps no input alive: a call holds no data
        _PREPARED.setdefault(key, _Prepared(call, warning)).add(launch, threads)
    if warning is not None:
        warnings.warn(warning, UpsampleWarning, stacklevel=2)
    result = new_output(call.out_shape, call.out_dtype) if out is None else out
    # a subclass (numpy.matrix...) is written as the plain array it is, not by its methods
    target = result if type(result) is np.ndarray else result.view(np.ndarray)
    if call.no_resize:
        np.copyto(target, array)
    elif launch is not None:  # None: an empty output, nothing to write
        launch(array, target, threads)
    return result


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
