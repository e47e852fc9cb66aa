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

import itertools
import math
import operator
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

try:
    import dask
    import dask.array as da
    from dask.array.core import normalize_chunks
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph
    from dask.utils import parse_bytes
except ModuleNotFoundError as missing:  # the extra is not installed: one line naming it
    if (missing.name or "").split(".")[0] != "dask":
        raise
    raise ModuleNotFoundError(
        "onnx_upsample.dask needs dask, which is not installed: "
        "pip install 'onnx-upsample[dask]'", name=missing.name,
    ) from None

from ._buffers import new_output
from ._chunking import (
    AxisPart,
    Chunks,
    axis_parts,
    default_chunks,
    first,
    halo_pieces,
    input_slice,
    largest_task,
    split,
    with_axis,
)
from ._errors import UpsampleError, UpsampleWarning
from ._first_use import first_use
from ._resources import check_fits_in_memory, format_bytes
from ._spec.call import Call, check_kinds, describe_call
from ._spec.dtypes import check_mode_defined, element_type
from ._threads import _check as _check_threads
from ._threads import threads_for_call

__all__ = ["upsample"]

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
        output chunks dask cannot use, or a task larger than this machine's memory (with a
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
    # kinds first, as the in-memory call
    values, canonical_mode, warning = check_kinds(scales, mode, array.shape)
    task_threads = _check_threads(threads, "threads")
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
    workers = client_workers()  # once per call: it asks the scheduler
    worker = worker_memory(workers)
    out_chunks = _output_chunks(call, array.chunks, chunks, worker)
    parts = axis_parts(call, array.chunks, out_chunks)
    _check_task_memory(call, array.chunks, parts, chunks, worker)
    # outputs are built in reused buffers (page faults cost as much as nearest's copying),
    # but not on distributed workers, whose memory accounting cannot see a buffer pool
    return _build(array, call, out_chunks, parts, task_threads, pool=workers is None)


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

# On a distributed worker, one task's output chunk plus input window may take this fraction
# of a worker thread's share of the worker's memory_limit by default: the rest holds the
# input chunks tasks read, finished chunks waiting for their consumer, and the worker
# process itself.
WORKER_TASK_FRACTION = 0.25


def client_workers() -> dict[str, Any] | None:
    """The workers of the active ``distributed`` client, as its scheduler describes them;
    ``None`` without a client.

    ``distributed`` is looked up, never imported: a process that has not imported it has
    no client, and importing it would cost every local user a second.
    """
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return dict(distributed.get_client().scheduler_info().get("workers", {}))
    except (ValueError, RuntimeError, OSError, AttributeError):  # no client, or closed
        return None


def worker_memory(workers: Mapping[str, Any] | None) -> tuple[int, str] | None:
    """The memory one thread of the smallest of ``workers`` has (``memory_limit /
    nthreads``) and its description; ``None`` without workers or limits."""
    if not workers:
        return None
    shares = [
        (int(w["memory_limit"]) // max(1, int(w.get("nthreads") or 1)),
         int(w["memory_limit"]), int(w.get("nthreads") or 1))
        for w in workers.values() if w.get("memory_limit")
    ]
    if not shares:
        return None
    share, limit, nthreads = min(shares)
    return share, (f"the {format_bytes(share)} a distributed worker thread has (memory_limit "
                   f"{format_bytes(limit)} / {nthreads} thread{'s' if nthreads > 1 else ''})")


def task_budget(worker: tuple[int, str] | None) -> int:
    """Bytes one task's output chunk plus input window may take by default: dask's
    ``array.chunk-size``, and a quarter of a worker thread's memory (``worker``, from
    :func:`worker_memory`) where that is less."""
    budget = int(parse_bytes(dask.config.get("array.chunk-size")))
    if worker is not None:
        budget = min(budget, int(worker[0] * WORKER_TASK_FRACTION))
    return max(1, budget)


def _output_chunks(
    call: Call, in_chunks: Chunks, chunks: Any, worker: tuple[int, str] | None
) -> Chunks:
    given = chunks  # for messages: as the caller wrote it
    rank = len(call.out_shape)
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        chunks = ("auto",) * rank
    elif isinstance(chunks, Mapping):
        bad = [axis for axis in chunks if not isinstance(axis, int) or not -rank <= axis < rank]
        if bad:
            raise UpsampleError(
                f"chunks has axis {bad[0]!r}; the output has rank {rank}, so axes are "
                f"0..{rank - 1} (or negative from the end)"
            )
        per_axis = {axis % rank: value for axis, value in chunks.items()}
        chunks = tuple(per_axis.get(axis, "auto") for axis in range(rank))
    _check_chunk_count(call.out_shape, chunks, given)
    try:
        normalized = _auto_within_budget(call, in_chunks, chunks, task_budget(worker))
    except (ValueError, TypeError, NotImplementedError, ZeroDivisionError) as error:
        raise UpsampleError(
            f"chunks is {given!r}; expected output chunks dask accepts for shape "
            f"{call.out_shape} (an int >= 1, a tuple per axis, a dict or 'auto'): {error}"
        ) from None
    return tuple(tuple(int(c) for c in axis) for axis in normalized)


def _auto_within_budget(call: Call, in_chunks: Chunks, chunks: Any, budget: int) -> Chunks:
    """Resolve ``"auto"`` axes as dask does (``normalize_chunks``, from the chunks that follow
    the input's boundaries), then shrink dask's byte limit until the largest task's output
    chunk plus input window fits :func:`task_budget` (dask's limit counts the output only)."""
    followed = default_chunks(call, in_chunks)
    autos = [a for a, c in enumerate(chunks) if isinstance(c, str) and c == "auto"] \
        if isinstance(chunks, tuple) else []
    if not autos:
        return normalize_chunks(chunks, call.out_shape, dtype=call.out_dtype,
                                previous_chunks=followed)
    total = math.prod(call.out_shape) * call.out_dtype.itemsize
    # dask cannot size objects, nor an empty output (its sizing divides by the largest
    # block); and an output that chunks of the budget would cut into more pieces than a
    # graph holds keeps the input's boundaries (the memory check then words what is too
    # large) rather than listing billions of chunks
    if call.out_dtype.hasobject or total == 0 or total > budget * (MAX_CHUNKS >> len(autos)):
        chunks = tuple(followed[a] if a in autos else c for a, c in enumerate(chunks))
        return normalize_chunks(chunks, call.out_shape, previous_chunks=followed)
    limit = budget

    def need(candidate: Chunks) -> int:
        out_bytes, window_bytes, _ = largest_task(
            call, axis_parts(call, in_chunks, candidate), halo_pieces(call, in_chunks))
        return out_bytes + window_bytes

    for _ in range(12):
        result = normalize_chunks(chunks, call.out_shape, limit=limit, dtype=call.out_dtype,
                                  previous_chunks=followed)
        # dask shrinks an axis to any size; split the followed chunks instead, so that a
        # task still reads one input chunk (plus a linear halo) and not two or more
        result = tuple(
            split(followed[a], max(sizes)) if a in autos and max(sizes) < max(followed[a])
            else sizes
            for a, sizes in enumerate(result)
        )
        needed = need(result)
        if needed <= budget or limit == 1:
            break
        limit = max(1, math.floor(limit * budget / needed * 0.97))
    # dask spreads a shrink or a growth over every axis, rounding each one down: cut the
    # followed chunks into fewer pieces, or group more of them, where the budget allows,
    # last axes first (long contiguous rows read and write fastest)
    for a in reversed(autos):
        current, largest = result, max(followed[a], default=0)
        pieces = -(-largest // max(max(current[a], default=1), 1))
        if pieces > 1:  # the fewest pieces that fit, by bisection: need shrinks with more

            def cut(count: int, a: int = a, current: Chunks = current,
                    largest: int = largest) -> Chunks:
                return with_axis(current, a, split(followed[a], -(-largest // count)))

            def cut_fits(n: int, cut: Callable[[int], Chunks] = cut) -> bool:
                return need(cut(n)) <= budget

            result = cut(first(1, pieces, cut_fits))
            continue

        def group(size: int, a: int = a, current: Chunks = current) -> Chunks:
            sizes = current[a]  # whole chunks, grouped `size` at a time
            return with_axis(current, a, tuple(sum(sizes[i:i + size])
                                                for i in range(0, len(sizes), size)))

        def too_large(n: int, group: Callable[[int], Chunks] = group) -> bool:
            return need(group(n)) > budget

        size = first(1, len(current[a]) + 1, too_large)
        if size - 1 > 1 and need(group(size - 1)) <= budget:
            result = group(size - 1)
    return result


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


def _check_task_memory(
    call: Call, in_chunks: Chunks, parts: list[list[AxisPart]], given: Any,
    worker: tuple[int, str] | None,
) -> None:
    """Refuse, before anything is submitted, a task that cannot fit where it will run: a
    distributed worker thread's share of its ``memory_limit`` when a client is active,
    else this machine's memory."""
    out_bytes, window_bytes, read_bytes = largest_task(call, parts,
                                                       halo_pieces(call, in_chunks))
    if worker is None:
        largest = tuple(max((p.out_stop - p.out_start for p in axis), default=0)
                        for axis in parts)
        check_fits_in_memory(largest, call.out_dtype.itemsize, "the largest output chunk",
                             "pass smaller chunks= (e.g. chunks=256 or 'auto')",
                             working_bytes=window_bytes + read_bytes)
        return
    share, what = worker
    # beyond the worker's spill target (distributed's config, 60% by default) one task alone
    # makes the worker spill, pause and, past its limit, restart until the computation fails
    target = float(dask.config.get("distributed.worker.memory.target", None) or 0.6)
    allowed = int(share * target)
    spill = f"more than {target:.0%} (the spill target) of {what}"
    largest_in = tuple(max(axis, default=0) for axis in in_chunks)
    in_bytes = math.prod(largest_in) * call.out_dtype.itemsize
    fix = "rechunk the input smaller (array.rechunk(...)) or give the workers a larger " \
        "memory_limit"
    if in_bytes > allowed:  # a worker holds each input chunk whole, whatever reads it
        raise UpsampleError(
            f"array has chunks up to {largest_in} ({format_bytes(in_bytes)}), {spill}; {fix}"
        )
    need = out_bytes + window_bytes + read_bytes
    if need <= allowed:
        return
    held = (f"{format_bytes(need)} (output chunk {format_bytes(out_bytes)}, input window "
            f"{format_bytes(window_bytes)}, input read {format_bytes(read_bytes)}), {spill}")
    if given is None or isinstance(given, str):  # the default chunks are already the least
        raise UpsampleError(
            f"array has chunks up to {largest_in}, too large for the workers: a task reading "
            f"them holds {held}; {fix}"
        )
    raise UpsampleError(
        f"chunks is {given!r}: the largest task would hold {held}; pass smaller chunks= (or "
        "leave chunks=None: the default fits the workers)"
    )


@dataclass(frozen=True)
class _Block:
    """What one task needs besides its input pieces: one small picklable argument.
    ``sliced[i]`` says that piece ``i`` is a halo piece, not a whole input chunk; ``pool``
    that the output may be built in a reused buffer."""

    call: Call
    threads: int
    parts: tuple[AxisPart, ...]
    sliced: tuple[bool, ...] = ()
    pool: bool = False


def _build(
    array: da.Array, call: Call, out_chunks: Chunks, parts: list[list[AxisPart]],
    threads: int, pool: bool,
) -> da.Array:
    """The graph, in dask's public form: a ``HighLevelGraph`` layer of plain tuple tasks
    ``(function, block, [input keys])``, one per output chunk, and ``(getitem, chunk,
    slices)`` for each halo piece, so that a worker receives a neighbour's edge rather than
    the whole neighbour chunk."""
    token = tokenize(array.name, [float(s) for s in call.scales], call.mode, out_chunks)
    name, halo = f"upsample-{token}", f"upsample-halo-{token}"
    halos = halo_pieces(call, array.chunks)
    layer: dict[Any, Any] = {}
    for block_index in itertools.product(*(range(len(c)) for c in out_chunks)):
        per_axis = tuple(parts[axis][i] for axis, i in enumerate(block_index))
        if any(p.out_stop == p.out_start for p in per_axis):
            layer[(name, *block_index)] = (_empty_block, _Block(call, threads, per_axis))
            continue
        refs: list[tuple[Any, ...]] = []
        sliced: list[bool] = []
        for ks in itertools.product(*(range(len(p.blocks)) for p in per_axis)):
            pairs = list(zip(per_axis, ks, strict=True))
            key: tuple[Any, ...] = (array.name, *(p.blocks[k] for p, k in pairs))
            sliced.append(halos and any(p.is_halo(k) for p, k in pairs))
            if sliced[-1]:
                ranges = [p.piece(k) for p, k in pairs]
                local = tuple(slice(lo - p.block_starts[k], hi - p.block_starts[k])
                              for (lo, hi), (p, k) in zip(ranges, pairs, strict=True))
                piece_key = (halo, *key[1:], *itertools.chain.from_iterable(ranges))
                layer[piece_key] = (operator.getitem, key, local)
                key = piece_key
            refs.append(key)
        block = _Block(call, threads, per_axis, tuple(sliced), pool)
        layer[(name, *block_index)] = (_compute_block, block, refs)
    graph = HighLevelGraph.from_collections(
        name, layer, dependencies=[array]  # type: ignore[list-item]
    )
    meta = np.empty((0,) * len(call.out_shape), dtype=call.out_dtype)
    return da.Array(graph, name, out_chunks, meta=meta)


def _empty_block(block: _Block) -> np.ndarray:
    """An output chunk with no elements (it reads nothing)."""
    return np.empty(tuple(p.out_stop - p.out_start for p in block.parts), block.call.out_dtype)


def _compute_block(block: _Block, pieces: list[np.ndarray]) -> np.ndarray:
    """One output chunk: exactly the values the whole-array call gives for that window."""
    with first_use():  # a fork (a process pool's worker) waits for the kernels to load
        from ._kernels import Window, execute

    call, threads, per_axis = block.call, block.threads, block.parts
    x_window = input_slice(per_axis, [np.asarray(piece) for piece in pieces], block.sliced)
    shape = tuple(p.out_stop - p.out_start for p in per_axis)
    out = new_output(shape, call.out_dtype) if block.pool else np.empty(shape, call.out_dtype)
    if call.no_resize:
        out[...] = x_window
    elif out.size:
        window = Window(
            tuple(p.out_start for p in per_axis), tuple(p.out_stop for p in per_axis)
        )
        execute(call, x_window, out, min(threads, threads_for_call()), window)
    return out
