"""The chunked path's graph: one task per output chunk, in dask's public form.

Each task reads only the input chunks that overlap the input slice its output window needs
(for linear mode one more element on each interpolated axis, cut out of a neighbour by a
small task of its own), and runs the same kernels as :func:`onnx_upsample.upsample` on it,
every index computed from *global* output indices, so every chunking gives exactly the
whole-array result.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass
from typing import Any

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .._buffers import new_output
from .._chunking import AxisPart, Chunks, halo_pieces, input_slice
from .._kernels import Window, execute
from .._spec.call import Call
from .._threads import threads_for_call


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


def build(
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
