"""The ``apply`` job: ONNX ``Upsample`` from a file into a file.

:func:`apply` runs the operator in memory when the output is small and cheap, and through
:mod:`onnx_upsample.dask` chunk by chunk otherwise (always for zarr). It checks everything it
can before it reads or writes anything (formats, scales, the output's room on disk and in
memory), and every file it writes goes through :mod:`.atomic`.

dask is imported inside the functions of the chunked path only.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from .._errors import UpsampleError, UpsampleWarning
from .._interop import with_channel_scale
from .atomic import check_output_path
from .chunked import computing, store_npy, store_zarr
from .formats import (
    DEFAULT_JPEG_QUALITY,
    IMAGE_FORMATS,
    Kind,
    Source,
    check_image_output,
    kind_of,
    read,
    reason,
    save_image,
    save_npy,
    slow_step,
)

if TYPE_CHECKING:
    import dask.array as da

    from .._spec.modes import Mode

__all__ = [
    "CHUNKED_ABOVE_BYTES", "TARGET_CHUNK_BYTES", "ZARR_CHUNK_BYTES", "Result", "apply",
    "check_resources", "output_chunks", "resolve_scales", "summary",
]

# .npy inputs are upsampled in memory below this output size, chunk by chunk above it
CHUNKED_ABOVE_BYTES = 256 * 2**20
# output chunks aimed at when neither --chunks nor the input's chunks say otherwise
TARGET_CHUNK_BYTES = 64 * 2**20
ZARR_CHUNK_BYTES = 8 * 2**20  # zarr stores prefer smaller chunks (each one is a file)
# the fix for an output computed in memory (an image's) beyond what this process can take
MEMORY_FIX = "use smaller --scales, or a .zarr output (written chunk by chunk)"


# --- scales and chunks --------------------------------------------------------------------


def resolve_scales(source: Source, scales: Sequence[float]) -> list[float]:
    """Scales per axis of the data; images take (height, width) or (height, width, channels).

    Two scales on a colour image leave the channels as they are.

    Raises
    ------
    UpsampleError
        A 0-d input, or a number of scales an image cannot take.
    """
    scales = list(scales)
    if not source.shape:
        raise UpsampleError(
            f"{source.path!r} holds a 0-d array (a scalar), which Upsample returns unchanged "
            "and --scales cannot describe (it takes one scale per axis, and a scalar has "
            "none); copy the file as it is, or save the value with shape (1,) and pass "
            "--scales S"
        )
    if source.kind != "image":
        return scales
    shape = source.shape
    if len(shape) == 2:
        if len(scales) != 2:
            raise UpsampleError(
                f"--scales has {len(scales)} values but {source.path!r} is a grayscale image "
                f"{shape}; give two scales: height width"
            )
        return scales
    scales = list(with_channel_scale(shape, scales))
    if len(scales) != 3:
        raise UpsampleError(
            f"--scales has {len(scales)} values but {source.path!r} is an image of shape "
            f"{shape} (height, width, channels); give two scales (height width) or three "
            "(height width channels)"
        )
    return scales


def output_chunks(
    chunks: Sequence[int] | None,
    out_shape: tuple[int, ...],
) -> tuple[int, ...] | None:
    """``--chunks``: one size for every axis or one per axis; -1 means the whole axis.

    Raises
    ------
    UpsampleError
        The wrong number of sizes, or a size below 1 (other than -1).
    """
    if chunks is None:
        return None
    if len(chunks) == 1:
        chunks = list(chunks) * len(out_shape)
    if len(chunks) != len(out_shape):
        raise UpsampleError(
            f"--chunks has {len(chunks)} values but the output has rank {len(out_shape)} "
            f"(shape {out_shape}); give one chunk size, or one per axis"
        )
    result = []
    for axis, (size, n) in enumerate(zip(chunks, out_shape, strict=True)):
        if size == -1:
            size = n
        if size < 1:
            raise UpsampleError(
                f"value {axis + 1} of --chunks is {size}; chunk sizes must be >= 1 (or -1 "
                "for a whole axis)"
            )
        result.append(max(1, min(size, n)))
    return tuple(result)


def _auto_chunks(
    out_shape: tuple[int, ...], dtype: np.dtype, target: int
) -> tuple[int, ...]:
    """Regular output chunks of about ``target`` bytes, last axes kept whole."""
    itemsize = max(1, dtype.itemsize)
    budget = max(1, target // itemsize)
    chunks = list(out_shape)
    for axis in range(len(chunks)):
        rest = math.prod(chunks[axis + 1:]) or 1
        if math.prod(chunks[axis:]) <= budget:
            break
        chunks[axis] = max(1, budget // rest)
    return tuple(max(1, c) for c in chunks)


def _input_chunks(
    out_chunks: tuple[int, ...], scales: Sequence[np.float32], in_shape: tuple[int, ...]
) -> tuple[int, ...]:
    """Input chunks that give about ``out_chunks`` once upsampled (checked float32 scales)."""
    return tuple(
        max(1, min(n, math.ceil(c / float(s))))
        for c, s, n in zip(out_chunks, scales, in_shape, strict=True)
    )


# --- apply ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """What :func:`apply` did, for the one-line summary and ``--json``."""

    in_shape: tuple[int, ...]
    in_dtype: np.dtype
    out_shape: tuple[int, ...]
    chunked: bool
    mode: str = "nearest"  # canonical (a legacy name as the mode it runs as)
    scales: tuple[float, ...] = ()  # one per axis of the data (an image's channels included)
    replaced: bool = False  # an existing output was replaced
    seconds: float = 0.0


def apply(
    input_path: str,
    output_path: str,
    scales: Sequence[float],
    mode: str,
    *,
    chunks: Sequence[int] | None = None,
    zarr_format: int = 3,
    progress: TextIO | None = sys.stderr,
    overwrite: bool = False,
    jpeg_quality: int | None = None,
) -> Result:
    """Upsample the array in ``input_path`` and write it to ``output_path`` (ONNX Upsample).

    Parameters
    ----------
    input_path, output_path : str
        ``.npy``, ``.png``, ``.jpg``/``.jpeg``, ``.tif``/``.tiff`` or ``.zarr``; formats may
        differ (an image to a zarr store, a ``.npy`` to a PNG, ...).
    scales : sequence of float
        One per axis; for an image input two (height, width: channels stay) or three.
    mode : str
        ``nearest`` or ``linear`` (see :func:`onnx_upsample.upsample`); a legacy name
        (``bilinear``) runs as ``linear`` with an :class:`UpsampleWarning`.
    chunks : sequence of int, optional
        Output chunk sizes (one for all axes or one per axis); forces the chunked path.
    zarr_format : {2, 3}
        Format of a zarr output.
    progress : text stream or None
        Where the progress bar of a chunked run, and a line for every other step that takes
        more than a second, go; None: quiet.
    overwrite : bool
        Allow ``output_path`` to be the input itself (under any path); without it that is
        refused before anything is read.
    jpeg_quality : int, optional
        1 to 100 (Pillow's scale), for a ``.jpg``/``.jpeg`` output only; default
        :data:`~onnx_upsample.io.formats.DEFAULT_JPEG_QUALITY`.

    Returns
    -------
    Result
        Shapes, input element type and whether the chunked path ran.

    Raises
    ------
    UpsampleError
        Unknown formats, unreadable inputs, impossible scales, outputs the format cannot
        hold, an output that is the input; nothing is left at ``output_path`` then. The
        messages name the command line's options (``--mode linear``), whose job this is.
    """
    from .._spec.call import check_described
    from .._spec.spelling import command_line

    started = time.perf_counter()
    words = command_line(input_path)
    # the options that need no file first; the call's own checks once the input is known
    out_kind = kind_of(output_path, "output")
    _check_jpeg_quality(output_path, jpeg_quality)
    replaced = check_output_path(output_path, input_path, overwrite,
                                 written="the upsampled array", store=out_kind == "zarr")
    with slow_step(progress, f"reading {input_path}"):
        source = read(input_path)
    full_scales = resolve_scales(source, scales)
    call, legacy = check_described(source.shape, source.dtype, full_scales, mode, words)
    canonical, out_shape = call.mode, call.out_shape
    if out_kind == "image":  # what the format cannot hold
        check_image_output(output_path, out_shape, source.dtype)
    if legacy is not None:  # once the call is known to run, as upsample() warns
        warnings.warn(legacy, UpsampleWarning, stacklevel=2)
    requested = output_chunks(chunks, out_shape)
    out_bytes = math.prod(out_shape) * source.dtype.itemsize
    chunked = (
        source.kind == "zarr" or out_kind == "zarr" or requested is not None
        or (source.kind == "npy" and out_bytes > CHUNKED_ABOVE_BYTES and out_kind == "npy")
    )
    check_resources(output_path, out_shape, source.dtype, in_memory=not chunked
                    or out_kind == "image")
    if not chunked:
        from .._api import upsample
        from .._resources import AllocationError, allocation_failed

        with slow_step(progress, f"upsampling to {out_shape}"):
            try:
                result = upsample(np.asarray(source.data), full_scales, canonical)
            except AllocationError as failed:  # past the check: said as the check says it
                raise allocation_failed(failed.shape, failed.itemsize, f"output {output_path!r}",
                                        MEMORY_FIX, failed.working_bytes) from None
        with slow_step(progress, f"writing {output_path}"):
            _write_memory(output_path, out_kind, result, jpeg_quality)
    else:
        lazy = _lazy(source, full_scales, canonical, requested, out_kind)
        try:
            _write_lazy(output_path, out_kind, lazy, source, zarr_format, progress,
                        jpeg_quality)
        except (UpsampleError, ModuleNotFoundError):  # an extra missing: one line by the CLI
            raise
        except (OSError, MemoryError):
            raise
        except Exception as error:  # a corrupt chunk, a codec failure: one line, exit 2
            raise UpsampleError(
                f"cannot upsample {input_path!r} into {output_path!r}: "
                f"{type(error).__name__}: {reason(error)}"
            ) from None
    return Result(source.shape, source.dtype, out_shape, chunked, canonical,
                  tuple(full_scales), replaced, time.perf_counter() - started)


def _check_jpeg_quality(output_path: str, quality: int | None) -> None:
    """``jpeg_quality`` is 1 to 100 and only for a JPEG output (each message worded for the
    Python argument and for the command line's ``--jpeg-quality``)."""
    from .._spec.spelling import spelled

    if quality is None:
        return
    image_format = IMAGE_FORMATS.get(Path(output_path).suffix.lower())
    if image_format != "JPEG":
        raise spelled(lambda s: (
            f"{s.argument('jpeg_quality')} is for .jpg/.jpeg outputs, and {output_path!r} is "
            f"not one; leave {s.argument('jpeg_quality')} out"))
    if not 1 <= quality <= 100:
        raise spelled(lambda s: (
            f"{s.argument('jpeg_quality')} is {quality}; expected 1 (smallest file) to 100 "
            "(best; above 95 the file grows for little gain); the default is "
            f"{DEFAULT_JPEG_QUALITY}"))


def check_resources(
    output_path: str, out_shape: tuple[int, ...], dtype: np.dtype, in_memory: bool
) -> None:
    """Refuse, before anything is read or written, an output that cannot fit.

    The output must fit on the disk that will hold it (free space as statvfs reports it; a
    compressed zarr store is counted uncompressed) and, when it is computed whole, in the
    memory this process may use.

    Raises
    ------
    UpsampleError
        The output does not fit; the message says where and what to do.
    """
    from .._resources import check_fits_in_memory, format_bytes

    n_bytes = math.prod(out_shape) * dtype.itemsize
    folder = Path(output_path).resolve().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:  # no statvfs there: the write itself will say what is wrong
        free = None
    if free is not None and n_bytes > free:
        raise UpsampleError(
            f"output {output_path!r} would have shape {out_shape} ({dtype.name}) and take "
            f"{format_bytes(n_bytes)}, more than the {format_bytes(free)} free on its disk; "
            "use smaller --scales or write it where there is room"
        )
    if in_memory:
        check_fits_in_memory(out_shape, dtype.itemsize, f"output {output_path!r}", MEMORY_FIX)


def _lazy(
    source: Source,
    scales: list[float],
    mode: Mode,
    requested: tuple[int, ...] | None,
    out_kind: Kind,
) -> da.Array:
    """The upsampled input as a dask array, in the output chunks chosen for ``out_kind``."""
    import dask.array as da

    from .. import dask as ou_dask
    from .._api import output_shape
    from .._spec.scales import scales_of

    out_shape = output_shape(source.shape, scales)
    checked = scales_of(list(scales), tuple(source.shape))  # float32, as ONNX stores them
    if source.kind == "zarr":
        array = da.from_zarr(source.data)
        if requested is None and out_kind == "zarr":
            # zarr chunks must be regular: the input's chunks, scaled
            first = tuple(c[0] if c else 1 for c in array.chunks)
            requested = tuple(
                max(1, min(n, math.ceil(c * float(s))))
                for c, s, n in zip(first, checked, out_shape, strict=True)
            )
    else:
        if requested is None:
            target = ZARR_CHUNK_BYTES if out_kind == "zarr" else TARGET_CHUNK_BYTES
            requested = _auto_chunks(out_shape, source.dtype, target)
        array = da.from_array(
            source.data, chunks=_input_chunks(requested, checked, source.shape),
            asarray=True, inline_array=True,
        )
    return ou_dask.upsample(array, scales, mode, chunks=requested)


def _write_memory(path: str, kind: Kind, array: np.ndarray, jpeg_quality: int | None) -> None:
    """Write a computed array in the format of ``kind``."""
    if kind == "npy":
        save_npy(path, array)
    elif kind == "image":
        save_image(path, array, jpeg_quality=jpeg_quality)
    else:  # pragma: no cover - zarr outputs always take the chunked path
        raise AssertionError(kind)


def _write_lazy(
    path: str,
    kind: Kind,
    lazy: da.Array,
    source: Source,
    zarr_format: int,
    progress: TextIO | None,
    jpeg_quality: int | None,
) -> None:
    """Compute and write a dask array; an image is computed whole first (Pillow needs it)."""
    if kind == "image":
        with computing(progress):
            array = lazy.compute()
        with slow_step(progress, f"writing {path}"):
            save_image(path, array, jpeg_quality=jpeg_quality)
    elif kind == "npy":
        store_npy(path, lazy, progress)
    else:
        store_zarr(path, lazy, source.attrs, zarr_format, progress,
                   dimension_names=source.dimension_names)


def summary(input_path: str, output_path: str, result: Result) -> str:
    """The line ``apply`` prints on success."""
    how = ", chunked" if result.chunked else ""
    replaced = ", replaced the existing output" if result.replaced else ""
    return (
        f"{input_path} {result.in_shape} {result.in_dtype.name} -> {output_path} "
        f"{result.out_shape} ({result.mode}{how}{replaced}, {result.seconds:.2f} s)"
    )
