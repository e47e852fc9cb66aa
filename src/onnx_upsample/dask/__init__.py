"""ONNX ``Upsample`` on dask arrays: lazy, chunked, and bit-identical to the in-memory call.

This is the only module of onnx-upsample that imports dask (extra ``dask``); import it
explicitly: ``import onnx_upsample.dask``.

The graph has one task per output chunk. Each task reads only the input chunks that overlap
the input slice its output window needs (for linear mode one more element on each
interpolated axis), cuts that slice out and runs the same kernels as
:func:`onnx_upsample.upsample` on it, every index computed from *global* output indices,
so every chunking gives exactly the whole-array result. Nothing is
rechunked and the graph grows with the number of output chunks only. The graph is built
from dask's public API only: a ``HighLevelGraph`` layer of plain tuple tasks.

Default output chunks follow dask's ``"auto"`` convention (``array.chunk-size``), cut at the
input's chunk boundaries, and keep each task's output chunk plus input window within that
size, and within a quarter of a worker thread's memory when a ``distributed`` client is
active (see docs/dask.md).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

try:
    import dask.array as da
except ModuleNotFoundError as missing:  # the extra is not installed: one line naming it
    if (missing.name or "").split(".")[0] != "dask":
        raise
    raise ModuleNotFoundError(
        "onnx_upsample.dask needs dask, which is not installed: "
        "pip install 'onnx-upsample[dask]'", name="dask",
    ) from None

from .._chunking import axis_parts
from .._errors import UpsampleError, UpsampleWarning
from .._spec.call import check_described
from .._spec.modes import ModeName
from .._threads import _check as _check_threads
from ._chunks import (
    MAX_CHUNKS,
    check_task_memory,
    client_workers,
    output_chunks,
    task_budget,
    worker_memory,
)
from ._graph import build

__all__ = ["MAX_CHUNKS", "client_workers", "task_budget", "upsample", "worker_memory"]


def upsample(
    array: Any,
    scales: Sequence[float] | npt.NDArray[np.number],
    mode: ModeName = "nearest",
    *,
    chunks: Any = None,
    threads: int = 1,
) -> da.Array:
    """Apply the ONNX ``Upsample`` operator (versions 7, 9, 10) lazily to a dask array.

    The computed result is bit-identical to
    ``onnx_upsample.upsample(array.compute(), scales, mode)`` for every chunking, element
    type and mode (docs/semantics.md §2), including the exact rule for axes of ``2**24`` elements
    and more and the global no-resize copy.

    Parameters
    ----------
    array : dask.array.Array
        Input of any rank and any ONNX element type (see :func:`onnx_upsample.upsample`).
        Chunk sizes must be known. Other arrays are wrapped with ``dask.array.from_array``
        first, in their own chunks where they have them (zarr, h5py) and in dask's
        ``"auto"`` chunks otherwise (numpy). For an xarray ``DataArray`` pass ``.data``.
    scales : sequence of float or array
        One scale per axis, each finite and >= 1; converted to float32 as ONNX stores them.
    mode : {"nearest", "linear"}
        ``"bilinear"`` and ``"trilinear"`` are accepted as ``"linear"`` with an
        :class:`~onnx_upsample.UpsampleWarning`.
    chunks : optional
        Chunks of the output, in any form ``dask.array`` accepts (``"auto"``, an int, a
        tuple of ints or of tuples, a dict ``{axis: chunks}``). By default (``None``, the
        same as ``"auto"``) dask's ``"auto"`` chunking picks them from the chunks that
        follow the input's boundaries (output chunk ``k`` of an axis holds the outputs
        whose nearest input index lies in input chunk ``k``): whole input chunks are
        grouped, or cut into near-equal pieces, so that each task's output chunk plus
        input window stays within ``dask.config.get("array.chunk-size")``, and within a
        quarter of ``memory_limit / nthreads`` of the smallest worker when a
        ``distributed`` client is active. Axes missing from a dict are ``"auto"``; ``-1``
        or ``None`` for an axis means one chunk along it.
    threads : int, default 1
        Threads each task's kernel uses. dask already runs one task per worker thread, so
        the default of 1 keeps ``dask workers x kernel threads`` at the core count; raise
        it only for schedulers that run fewer tasks than cores at once (e.g. the
        synchronous scheduler). Results do not depend on it.

    Returns
    -------
    dask.array.Array
        Lazy output, C order and native byte order per chunk, of the shape
        :func:`onnx_upsample.output_shape` gives.

    Raises
    ------
    TypeError
        Arguments of the wrong kind (``None`` or strings as scales).
    UpsampleError
        Wrong values (scales, mode, element type for the mode), unknown chunk sizes,
        output chunks dask cannot use, or a task larger than the memory this process can
        take now (the machine's available memory, its cgroup's and address-space limits; with a
        ``distributed`` client: than the spill target, 60%, of a worker thread's share of
        its ``memory_limit``).
        Raised here, before anything is computed or submitted.

    Notes
    -----
    ONNX ``ai.onnx@7/9/10::Upsample`` as onnxruntime 1.32 computes it. Each output chunk
    depends only on the input chunks it reads (one per axis for nearest with the default
    chunks; one more where a linear halo crosses a boundary).

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> import onnx_upsample.dask
    >>> x = da.from_array(np.arange(6).reshape(2, 3), chunks=(1, 2))
    >>> y = onnx_upsample.dask.upsample(x, [2, 1.5], chunks=2)
    >>> y.chunks
    ((2, 2), (2, 2))
    >>> y.compute().tolist()
    [[0, 0, 1, 2], [0, 0, 1, 2], [3, 3, 4, 5], [3, 3, 4, 5]]
    """
    if array is None:
        raise TypeError("array is None; expected a dask array")
    if not isinstance(array, da.Array):
        if not hasattr(array, "shape") or not hasattr(array, "dtype"):
            raise TypeError(
                f"array is a {type(array).__name__}; expected a dask array (or an array with "
                "shape and dtype, such as a numpy or zarr array)"
            )
        array = _as_dask(array)
    in_shape = array.shape
    if any(math.isnan(n) for n in in_shape) or any(
        math.isnan(c) for axis in array.chunks for c in axis
    ):
        raise UpsampleError(
            f"array has unknown chunk sizes (shape {in_shape}); call "
            "array.compute_chunk_sizes() first"
        )
    # the in-memory call's checks, in its order; then this entry's own
    call, warning = check_described(tuple(int(n) for n in in_shape), array.dtype, scales, mode)
    task_threads = _check_threads(threads, "threads")
    if warning is not None:
        warnings.warn(warning, UpsampleWarning, stacklevel=2)
    workers = client_workers()  # once per call: it asks the scheduler
    worker = worker_memory(workers)
    out_chunks = output_chunks(call, array.chunks, chunks, worker)
    parts = axis_parts(call, array.chunks, out_chunks)
    check_task_memory(call, array.chunks, parts, chunks, worker)
    # outputs are built in reused buffers (page faults cost as much as nearest's copying),
    # but not on distributed workers, whose memory accounting cannot see a buffer pool
    return build(array, call, out_chunks, parts, task_threads, pool=workers is None)


def _as_dask(array: Any) -> da.Array:
    """Wrap a numpy, zarr, h5py... array, keeping its own chunks where it has them."""
    chunks = getattr(array, "chunks", None)
    if (isinstance(chunks, tuple) and len(chunks) == len(array.shape)
            and all(isinstance(c, int) and c > 0 for c in chunks)):
        return da.from_array(array, chunks=chunks)
    try:
        return da.from_array(array, chunks="auto")
    except (NotImplementedError, ValueError):  # object arrays: dask cannot size them
        return da.from_array(array, chunks=-1)
