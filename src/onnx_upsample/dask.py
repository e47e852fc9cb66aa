"""ONNX ``Upsample`` on dask arrays: lazy, chunked, and bit-identical to the in-memory call.

This is the only module of onnx-upsample that imports dask (extra ``dask``); import it
explicitly: ``import onnx_upsample.dask``.

The graph has one task per output chunk. Each task reads only the input chunks that overlap
the input slice its output window needs (for linear mode one more element on each
interpolated axis), cuts that slice out and runs the same kernels as
:func:`onnx_upsample.upsample` on it, every index computed from *global* output indices,
so every chunking gives exactly the whole-array result. Nothing is
rechunked and the graph grows with the number of output chunks only.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import dask.array as da
import numpy as np
import numpy.typing as npt
from dask._task_spec import List, Task, TaskRef
from dask.array.core import normalize_chunks
from dask.highlevelgraph import HighLevelGraph
from dask.tokenize import tokenize

from ._errors import UpsampleError, UpsampleWarning
from ._resources import check_fits_in_memory
from ._spec.call import Call, describe_call, scale_values
from ._spec.dtypes import check_mode_defined, element_type
from ._spec.modes import mode_of
from ._spec.rules import nearest_indices
from ._threads import _check as _check_threads
from ._threads import threads_for_call

__all__ = ["upsample"]

Chunks = tuple[tuple[int, ...], ...]


def upsample(
    array: Any,
    scales: Sequence[float] | npt.NDArray[np.number],
    mode: str = "nearest",
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
        tuple of ints or of tuples, a dict ``{axis: chunks}``). By default the output
        follows the input's chunk boundaries: output chunk ``k`` of an axis holds the
        outputs whose nearest input index lies in input chunk ``k`` (with integer scales,
        input chunks scaled by the scale). Axes missing from a dict keep that default;
        ``-1`` or ``None`` for an axis means one chunk along it.
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
        Wrong values (scales, mode, element type for the mode), unknown chunk sizes, or
        output chunks dask cannot use. Raised here, before anything is computed.

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
    >>> y = onnx_upsample.dask.upsample(x, [2, 1.5])
    >>> y.chunks
    ((2, 2), (3, 1))
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
    values = scale_values(scales)  # kinds first, as the in-memory call (docs/semantics.md §2)
    task_threads = _check_threads(threads, "threads")
    canonical_mode, warning = mode_of(mode)
    check_mode_defined(canonical_mode, element_type(array.dtype))
    in_shape = array.shape
    if any(math.isnan(n) for n in in_shape) or any(
        math.isnan(c) for axis in array.chunks for c in axis
    ):
        raise UpsampleError(
            f"array has unknown chunk sizes (shape {in_shape}); call "
            "array.compute_chunk_sizes() first"
        )
    call = describe_call(values, canonical_mode, array.dtype, tuple(int(n) for n in in_shape))
    if warning is not None:
        warnings.warn(warning, UpsampleWarning, stacklevel=2)
    out_chunks = _output_chunks(call, array.chunks, chunks)
    # each task holds one output chunk (and its input window) in memory
    largest = tuple(max(axis, default=0) for axis in out_chunks)
    check_fits_in_memory(largest, call.out_dtype.itemsize, "the largest output chunk",
                         "pass smaller chunks= (e.g. chunks=256 or 'auto')")
    return _build(array, call, out_chunks, task_threads)


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


# --- output chunks -----------------------------------------------------------------------

# More output chunks than this make a graph too large to build or schedule.
MAX_CHUNKS = 10_000_000


def default_chunks(call: Call, in_chunks: Chunks) -> Chunks:
    """Output chunks that follow the input's chunk boundaries (see :func:`upsample`)."""
    return tuple(
        _follow_axis(n_in, n_out, scale, axis_chunks, call.no_resize)
        for n_in, n_out, scale, axis_chunks in zip(
            call.in_shape, call.out_shape, call.scales, in_chunks, strict=True
        )
    )


def _follow_axis(
    n_in: int, n_out: int, scale: np.float32, in_chunks: tuple[int, ...], no_resize: bool
) -> tuple[int, ...]:
    """Map input chunk boundaries ``b`` to the first output index whose nearest source is >= b.

    Empty output chunks (input chunks no output reads, and empty input chunks) are dropped,
    except that an axis keeps one chunk.
    """
    if no_resize or scale == 1.0 or n_out == 0:
        sizes = tuple(c for c in in_chunks if c) or (n_out,)
        return sizes if sum(sizes) == n_out else (n_out,)
    exact = Fraction(float(scale))
    bounds = [0]
    for b in itertools.accumulate(in_chunks[:-1]):
        if b <= 0 or b >= n_in:
            continue
        # the rules may differ from the exact floor(o / s) by one below 2**24: search around,
        # by bisection (the window spans about 2 * scale outputs: no table of that size)
        low = max(0, math.floor((b - 1) * exact) - 1)
        high = min(n_out, math.ceil((b + 1) * exact) + 2)
        bounds.append(bisect.bisect_left(
            range(low, high), b,
            key=lambda o: int(nearest_indices(n_in, n_out, scale, o, o + 1)[0]),
        ) + low)
    bounds.append(n_out)
    sizes = tuple(q - p for p, q in itertools.pairwise(bounds) if q > p)
    return sizes or (n_out,)


def _output_chunks(call: Call, in_chunks: Chunks, chunks: Any) -> Chunks:
    given = chunks  # for messages: as the caller wrote it
    default = default_chunks(call, in_chunks)
    if chunks is None:
        return default
    if isinstance(chunks, Mapping):
        rank = len(call.out_shape)
        bad = [axis for axis in chunks if not isinstance(axis, int) or not -rank <= axis < rank]
        if bad:
            raise UpsampleError(
                f"chunks has axis {bad[0]!r}; the output has rank {rank}, so axes are "
                f"0..{rank - 1} (or negative from the end)"
            )
        per_axis = {axis % rank: value for axis, value in chunks.items()}
        chunks = tuple(per_axis.get(axis, default[axis]) for axis in range(rank))
    _check_chunk_count(call.out_shape, chunks, given)
    try:
        normalized = normalize_chunks(
            chunks, call.out_shape, dtype=call.out_dtype, previous_chunks=default
        )
    except (ValueError, TypeError, NotImplementedError, ZeroDivisionError) as error:
        raise UpsampleError(
            f"chunks is {given!r}; expected output chunks dask accepts for shape "
            f"{call.out_shape} (an int >= 1, a tuple per axis, a dict or 'auto'): {error}"
        ) from None
    return tuple(tuple(int(c) for c in axis) for axis in normalized)


def _check_chunk_count(out_shape: tuple[int, ...], chunks: Any, given: Any) -> None:
    """Refuse, before dask lists them, sizes below 1 (but -1, a whole axis) and regular
    chunks that would cut the output into more pieces than a graph can hold (the list
    alone would fill memory)."""
    sizes = (chunks,) * len(out_shape) if isinstance(chunks, int) else chunks
    if not isinstance(sizes, tuple) or len(sizes) != len(out_shape):
        return
    for size in sizes:
        if isinstance(size, int) and not isinstance(size, bool) and size < 1 and size != -1:
            raise UpsampleError(
                f"chunks is {given!r}; chunk sizes must be >= 1 (or -1 for a whole axis)"
            )
    count = 1
    for n, size in zip(out_shape, sizes, strict=True):
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            count *= max(1, -(-n // size))
    if count > MAX_CHUNKS:
        raise UpsampleError(
            f"chunks is {given!r}: the output of shape {out_shape} would have {count:.3g} "
            f"chunks, more than the {MAX_CHUNKS:,} a dask graph can hold; use larger chunks"
        )


# --- graph ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _AxisPart:
    """One output chunk along one axis and what it reads.

    ``out_start:out_stop`` is the output range; ``in_start:in_stop`` the input slice it needs
    (global indices); ``blocks`` the input chunk indices overlapping that slice and
    ``block_starts`` their global starts.
    """

    out_start: int
    out_stop: int
    in_start: int
    in_stop: int
    blocks: tuple[int, ...]
    block_starts: tuple[int, ...]


def _axis_parts(call: Call, in_chunks: Chunks, out_chunks: Chunks) -> list[list[_AxisPart]]:
    """For every axis, the :class:`_AxisPart` of each of its output chunks.

    The rules are separable (an axis's input range depends on that axis's output range only),
    so the N-D input window of an output block is the product of its per-axis parts.
    """
    from ._kernels import Window, input_window  # lazy: loads the kernels only when used

    rank = len(call.out_shape)
    parts: list[list[_AxisPart]] = []
    for axis in range(rank):
        in_offsets = [0, *itertools.accumulate(in_chunks[axis])]
        axis_parts = []
        for out_start, out_stop in itertools.pairwise(
            [0, *itertools.accumulate(out_chunks[axis])]
        ):
            if out_stop <= out_start or 0 in call.out_shape:
                in_start = in_stop = 0  # an empty output block reads nothing
            elif call.no_resize:
                in_start, in_stop = out_start, out_stop
            else:
                # a window that is this chunk on `axis` and one element on every other axis
                starts = [0] * rank
                stops = [1] * rank
                starts[axis], stops[axis] = out_start, out_stop
                window = Window(tuple(starts), tuple(stops))
                lo, hi = input_window(call.in_shape, call.out_shape, call.scales, call.mode,
                                      window)
                in_start, in_stop = lo[axis], hi[axis]
            blocks = tuple(
                j for j in range(len(in_chunks[axis]))
                if in_offsets[j] < in_stop and in_offsets[j + 1] > in_start
            )
            axis_parts.append(_AxisPart(
                out_start, out_stop, in_start, in_stop, blocks,
                tuple(in_offsets[j] for j in blocks),
            ))
        parts.append(axis_parts)
    return parts


def _build(array: da.Array, call: Call, out_chunks: Chunks, threads: int) -> da.Array:
    token = tokenize(array.name, [float(s) for s in call.scales], call.mode, out_chunks)
    name = f"upsample-{token}"
    parts = _axis_parts(call, array.chunks, out_chunks)
    layer: dict[Any, Any] = {}
    for block_index in itertools.product(*(range(len(c)) for c in out_chunks)):
        per_axis = tuple(parts[axis][i] for axis, i in enumerate(block_index))
        key = (name, *block_index)
        if any(p.out_stop == p.out_start for p in per_axis):
            shape = tuple(p.out_stop - p.out_start for p in per_axis)
            layer[key] = Task(key, np.empty, shape, call.out_dtype)
            continue
        refs = [
            TaskRef((array.name, *in_index))
            for in_index in itertools.product(*(p.blocks for p in per_axis))
        ]
        layer[key] = Task(key, _compute_block, call, threads, per_axis, List(*refs))
    graph = HighLevelGraph.from_collections(
        name, layer, dependencies=[array]  # type: ignore[list-item]
    )
    meta = np.empty((0,) * len(call.out_shape), dtype=call.out_dtype)
    return da.Array(graph, name, out_chunks, meta=meta)


def _input_slice(per_axis: tuple[_AxisPart, ...], pieces: list[np.ndarray]) -> np.ndarray:
    """The input window ``[in_start, in_stop)`` per axis, assembled from the chunks read.

    A view of the chunk when one chunk holds it all (the usual case for nearest); otherwise
    one buffer the size of the window, filled piece by piece (no whole-chunk concatenation).
    """
    if len(pieces) == 1:
        (piece,) = pieces
        return piece[tuple(
            slice(p.in_start - p.block_starts[0], p.in_stop - p.block_starts[0])
            for p in per_axis
        )]
    shape = tuple(p.in_stop - p.in_start for p in per_axis)
    buffer = np.empty(shape, dtype=pieces[0].dtype)
    positions = itertools.product(*(range(len(p.blocks)) for p in per_axis))
    for position, piece in zip(positions, pieces, strict=True):
        source, target = [], []
        for p, j, n in zip(per_axis, position, piece.shape, strict=True):
            begin = p.block_starts[j]
            lo, hi = max(p.in_start, begin), min(p.in_stop, begin + n)
            source.append(slice(lo - begin, hi - begin))
            target.append(slice(lo - p.in_start, hi - p.in_start))
        buffer[tuple(target)] = piece[tuple(source)]
    return buffer


def _compute_block(
    call: Call, threads: int, per_axis: tuple[_AxisPart, ...], pieces: list[np.ndarray]
) -> np.ndarray:
    """One output chunk: exactly the values the whole-array call gives for that window."""
    from ._kernels import Window, execute

    x_window = _input_slice(per_axis, [np.asarray(piece) for piece in pieces])
    out = np.empty(tuple(p.out_stop - p.out_start for p in per_axis), dtype=call.out_dtype)
    if call.no_resize:
        out[...] = x_window
    elif out.size:
        window = Window(
            tuple(p.out_start for p in per_axis), tuple(p.out_stop for p in per_axis)
        )
        execute(call, x_window, out, min(threads, threads_for_call()), window)
    return out
