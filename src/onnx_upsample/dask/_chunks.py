"""Output chunks of the chunked path, and the memory one task may take where it runs.

Default chunks follow dask's ``"auto"`` convention (``array.chunk-size``), cut at the
input's chunk boundaries, and keep each task's output chunk plus input window within that
size, and within a quarter of a worker thread's memory when a ``distributed`` client is
active (the arithmetic that needs no dask is ``onnx_upsample._chunking``'s).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

import dask
from dask.array.core import normalize_chunks
from dask.utils import parse_bytes

from .._chunking import (
    AxisPart,
    Chunks,
    axis_parts,
    default_chunks,
    first,
    halo_pieces,
    largest_task,
    split,
    with_axis,
)
from .._errors import UpsampleError
from .._resources import check_fits_in_memory, format_bytes
from .._spec.call import Call

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


def output_chunks(
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


def check_task_memory(
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
