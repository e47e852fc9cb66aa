"""Chunk arithmetic of the chunked path, without dask: which input slice and input chunks
each output chunk reads (whole, or as halo pieces), the output chunks that follow the
input's chunk boundaries and their cuts, the bytes of the largest task, and the assembly
of a task's input window. :mod:`onnx_upsample.dask` builds the graph from these.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._kernels import Window, input_window
from ._spec.call import Call
from ._spec.rules import nearest_indices

__all__ = [
    "AxisPart",
    "Chunks",
    "axis_parts",
    "default_chunks",
    "first",
    "halo_pieces",
    "input_slice",
    "largest_task",
    "split",
    "with_axis",
]

Chunks = tuple[tuple[int, ...], ...]


def default_chunks(call: Call, in_chunks: Chunks) -> Chunks:
    """Output chunks that follow the input's chunk boundaries (see
    :func:`onnx_upsample.dask.upsample`)."""
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


def split(sizes: tuple[int, ...], most: int) -> tuple[int, ...]:
    """Each chunk of ``sizes`` cut into pieces of at most ``most``.

    Regular chunks (all equal but a smaller last one) are cut into pieces of one size that
    divides them, so that the result stays regular (``to_zarr`` needs that), unless that
    size would be less than half of ``most``; other chunks into the fewest near-equal pieces.
    """
    most = max(1, most)
    regular = bool(sizes) and 0 < sizes[0] < 2**40 and sizes[-1] <= sizes[0] and all(
        c == sizes[0] for c in sizes[:-1])
    if regular:
        size = max((d for d in _divisors(sizes[0]) if d <= most), default=1)
        if size * 2 >= most:
            return tuple(min(size, c - start) for c in sizes for start in range(0, c, size))
    result: list[int] = []
    for size in sizes:
        pieces = max(1, -(-size // most))
        result += [size // pieces + (i < size % pieces) for i in range(pieces)]
    return tuple(result)


def with_axis(chunks: Chunks, axis: int, sizes: tuple[int, ...]) -> Chunks:
    """``chunks`` with the sizes of ``axis`` replaced."""
    return (*chunks[:axis], sizes, *chunks[axis + 1:])


def first(low: int, high: int, ok: Callable[[int], bool]) -> int:
    """The smallest ``n`` in ``[low, high)`` with ``ok(n)`` for a monotone ``ok`` (``high``
    if there is none)."""
    while low < high:
        middle = (low + high) // 2
        if ok(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in small]


@dataclass(frozen=True)
class AxisPart:
    """One output chunk along one axis and what it reads.

    ``out_start:out_stop`` is the output range; ``in_start:in_stop`` the input slice it needs
    (global indices); ``blocks`` the input chunk indices overlapping that slice,
    ``block_starts`` their global starts and ``block_sizes`` their lengths.
    """

    out_start: int
    out_stop: int
    in_start: int
    in_stop: int
    blocks: tuple[int, ...]
    block_starts: tuple[int, ...]
    block_sizes: tuple[int, ...]

    def piece(self, k: int) -> tuple[int, int]:
        """The global range of the ``k``-th chunk read that the input slice needs."""
        begin = self.block_starts[k]
        return max(self.in_start, begin), min(self.in_stop, begin + self.block_sizes[k])

    def is_halo(self, k: int) -> bool:
        """Whether less than half of the ``k``-th chunk read is needed (a linear halo, or
        the edge of a neighbour): a task then reads that piece alone, not the chunk."""
        lo, hi = self.piece(k)
        return (hi - lo) * 2 < self.block_sizes[k]


def axis_parts(call: Call, in_chunks: Chunks, out_chunks: Chunks) -> list[list[AxisPart]]:
    """For every axis, the :class:`AxisPart` of each of its output chunks.

    The rules are separable (an axis's input range depends on that axis's output range only),
    so the N-D input window of an output block is the product of its per-axis parts.
    """
    rank = len(call.out_shape)
    parts: list[list[AxisPart]] = []
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
            # the input chunks overlapping [in_start, in_stop), found by bisection: an axis
            # may have many thousands of chunks
            first = max(0, bisect.bisect_right(in_offsets, in_start) - 1)
            last = min(len(in_chunks[axis]), bisect.bisect_left(in_offsets, in_stop))
            blocks = tuple(
                j for j in range(first, last)
                if in_offsets[j] < in_stop and in_offsets[j + 1] > in_start
            )
            axis_parts.append(AxisPart(
                out_start, out_stop, in_start, in_stop, blocks,
                tuple(in_offsets[j] for j in blocks), tuple(in_chunks[axis][j] for j in blocks),
            ))
        parts.append(axis_parts)
    return parts


# Halo pieces (a neighbour's edge, cut out by a task of its own) pay off once moving the whole
# chunk to another worker costs more than scheduling one more task (about a millisecond,
# the time to move a megabyte between processes); below that a task reads whole chunks.
HALO_PIECES_FROM_BYTES = 1 << 20


def halo_pieces(call: Call, in_chunks: Chunks) -> bool:
    """Whether tasks read halo pieces (:meth:`AxisPart.is_halo`) rather than whole
    neighbours: when the input's largest chunk reaches :data:`HALO_PIECES_FROM_BYTES`."""
    largest = math.prod(max(axis, default=0) for axis in in_chunks)
    return largest * call.out_dtype.itemsize >= HALO_PIECES_FROM_BYTES


def largest_task(
    call: Call, parts: list[list[AxisPart]], halos: bool
) -> tuple[int, int, int]:
    """Bytes of the largest output chunk, input window and input read by one task.

    The rules are separable, so each is the product of its per-axis maxima. A chunk is read
    whole, or (``halos``) only its piece where that is a halo on some axis; counting the
    piece on its halo axes and the whole chunk on the others bounds both.
    """
    out_max = [max((p.out_stop - p.out_start for p in axis), default=0) for axis in parts]
    window_max = [max((p.in_stop - p.in_start for p in axis), default=0) for axis in parts]
    read_max = [
        max((sum(p.piece(k)[1] - p.piece(k)[0] if halos and p.is_halo(k) else p.block_sizes[k]
                 for k in range(len(p.blocks))) for p in axis), default=0)
        for axis in parts
    ]
    itemsize = call.out_dtype.itemsize  # the input's too: only the byte order may differ
    return (math.prod(out_max) * itemsize, math.prod(window_max) * itemsize,
            math.prod(read_max) * itemsize)


def input_slice(
    per_axis: tuple[AxisPart, ...], pieces: list[np.ndarray], sliced: tuple[bool, ...]
) -> np.ndarray:
    """The input window ``[in_start, in_stop)`` per axis, assembled from the pieces read
    (whole chunks, or halo pieces that start where the window enters their chunk).

    A view of the chunk when one chunk holds it all (the usual case for nearest); otherwise
    one buffer the size of the window, filled piece by piece (no whole-chunk concatenation).
    """
    positions = list(itertools.product(*(range(len(p.blocks)) for p in per_axis)))
    if len(pieces) == 1:
        (piece,), (position,) = pieces, positions
        return piece[tuple(
            slice(p.in_start - begin, p.in_stop - begin)
            for p, begin in zip(per_axis, _piece_starts(per_axis, position, sliced[0]), strict=True)
        )]
    shape = tuple(p.in_stop - p.in_start for p in per_axis)
    buffer = np.empty(shape, dtype=pieces[0].dtype)
    for position, piece, cut in zip(positions, pieces, sliced, strict=True):
        source, target = [], []
        for p, begin, n in zip(per_axis, _piece_starts(per_axis, position, cut), piece.shape,
                               strict=True):
            lo, hi = max(p.in_start, begin), min(p.in_stop, begin + n)
            source.append(slice(lo - begin, hi - begin))
            target.append(slice(lo - p.in_start, hi - p.in_start))
        buffer[tuple(target)] = piece[tuple(source)]
    return buffer


def _piece_starts(
    per_axis: tuple[AxisPart, ...], position: tuple[int, ...], sliced: bool
) -> tuple[int, ...]:
    """Global start, per axis, of the piece read at ``position``."""
    return tuple(p.piece(k)[0] if sliced else p.block_starts[k]
                 for p, k in zip(per_axis, position, strict=True))
