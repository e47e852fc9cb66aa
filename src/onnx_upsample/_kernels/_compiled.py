"""Glue between checked calls and the compiled kernels: element views, layouts, scratch.

Every fixed-size element type runs on the C extension ``_native`` (built with the package,
no JIT). Nearest is a byte gather, so each element is viewed as unsigned integers (1, 2, 4
or 8 bytes, with a trailing axis for wider items such as complex128 or fixed-width strings).
Linear reads float16 and bfloat16 through a 65536-entry table to float32, views complex
numbers as (real, imaginary) pairs computed separately, and converts results with truncation
and saturation for integers.

``prepare_nearest`` and ``prepare_linear`` do all the per-call work that depends only on
shapes, scales and types, and return a launcher; the caller caches launchers, so a repeated
call costs one dictionary lookup plus the kernel.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import numpy as np

from .._dtypes import ElementType
from .._errors import UpsampleError
from .._rules import IndexArray
from . import _native
from ._layout import Axis, Layout, element_axis, outer_arrays, plan_layout
from ._tables import LinearAxis

# float16/bfloat16 linear results are rounded from a float32 scratch of at most this size.
HALF_SCRATCH_BYTES = 1 << 22
ISA_VAR = "ONNX_UPSAMPLE_ISA"
ISAS = {"baseline": 0, "avx2": 1}

# Element type codes of the linear kernel (kernels.h): what it reads and writes.
_LINEAR_CODES = {
    "int8": 0, "uint8": 1, "int16": 2, "uint16": 3, "int32": 4, "float32": 5,
    "float16": 6, "bfloat16": 6, "int64": 7, "uint64": 8, "uint32": 9, "float64": 10,
    "complex64": 5, "complex128": 10,
}
_FLOAT32, _HALF = 5, 6
ROW_COPY, ROW_REPEAT, ROW_GATHER = 0, 1, 2

# A prepared kernel call: ``launcher(x_window, out, threads)`` fills ``out``.
Launcher = Callable[[np.ndarray, np.ndarray, int], None]


@functools.cache
def isa() -> int:
    """The linear kernels' instruction set: AVX2 where the CPU has it, unless
    ONNX_UPSAMPLE_ISA=baseline (or =avx2) forces one (results are the same bits)."""
    wanted = os.environ.get(ISA_VAR, "").strip().lower()
    if not wanted:
        return 1 if _native.cpu_has_avx2() else 0
    if wanted not in ISAS:
        raise UpsampleError(
            f"the environment variable {ISA_VAR} is {wanted!r}; expected 'baseline' or 'avx2' "
            "(or unset it: the best one this CPU runs is chosen)"
        )
    if ISAS[wanted] == 1 and not _native.cpu_has_avx2():
        raise UpsampleError(f"{ISA_VAR} is 'avx2' but this CPU has no AVX2; unset it")
    return ISAS[wanted]


def native_contiguous(x: np.ndarray) -> np.ndarray:
    """x as the kernels read it: C-contiguous, aligned, in native byte order."""
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    if not x.flags.aligned:  # a view at an odd byte offset: typed C loads need alignment
        return x.copy(order="C")
    return np.ascontiguousarray(x)


def _unsigned(dtype: np.dtype) -> tuple[np.dtype, int]:
    """The unsigned integer type that tiles ``dtype``'s items, and how many per item."""
    unit = next(u for u in (8, 4, 2, 1) if dtype.itemsize % u == 0)
    return np.dtype(f"u{unit}"), dtype.itemsize // unit


@functools.cache
def _to_float32_table(name: str) -> np.ndarray:
    """float32 value of every 16-bit pattern of float16 or bfloat16 (exact conversions)."""
    bits = np.arange(1 << 16, dtype=np.uint32)
    if name == "bfloat16":
        return (bits << 16).view(np.float32)
    return bits.astype(np.uint16).view(np.float16).astype(np.float32)


def _repeat_factor(table: IndexArray) -> int:
    """k if ``table[j] == j // k`` for every j (an integer scale from index 0), else 0."""
    n_in = int(table[-1]) + 1
    if table.size % n_in or int(table[0]) != 0:
        return 0
    k = table.size // n_in
    if k < 2 or not np.array_equal(table, np.arange(table.size, dtype=np.int64) // k):
        return 0
    return k


def prepare_nearest(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    dtype: np.dtype,
    tables: list[IndexArray | None],
    threads: int,
) -> Launcher:
    """Compiled nearest gather: ``out[o...] = x[table0[o0], table1[o1], ...]``."""
    unit, parts = _unsigned(dtype)
    axes = [
        Axis(n_in, n_out, "copy") if table is None else Axis(n_in, n_out, "gather", table=table)
        for n_in, n_out, table in zip(in_shape, out_shape, tables, strict=True)
    ] + element_axis(parts)
    layout = plan_layout(axes, threads, unit.itemsize)
    row = layout.row
    row_table = row.table if row.kind == "gather" else np.zeros(1, np.int64)
    assert row_table is not None
    repeat = _repeat_factor(row_table) if row.kind == "gather" else 0
    if repeat:
        row_kind = ROW_REPEAT
        layout.segment = -(-layout.segment // repeat) * repeat
        layout.n_segments = -(-row.n_out // layout.segment)
    else:
        row_kind = ROW_COPY if row.kind == "copy" else ROW_GATHER
    arrays = outer_arrays(layout)
    x_elements = int(np.prod(in_shape, dtype=np.int64)) * parts
    kernel = _native.nearest_kernel(
        x_elements, unit.itemsize, row.n_out, layout.block, arrays["sizes"], arrays["lo"],
        arrays["starts"], np.ascontiguousarray(row_table, np.int64), row_kind, max(repeat, 1),
        layout.n_blocks, layout.n_segments, layout.segment,
    )

    # numpy exports its own types' buffers directly; others (bfloat16) as unsigned words
    direct = dtype.isbuiltin == 1

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        threads = min(threads, layout.threads)
        if direct and x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative:
            kernel(x, out, threads)
        else:
            kernel(native_contiguous(x).view(unit), out.view(unit), threads)

    return run


def _row_taps(row: Axis) -> tuple[np.ndarray, ...]:
    if row.kind == "blend":
        assert row.taps is not None
        return row.taps.lo, row.taps.hi, row.taps.w_lo, row.taps.w_hi
    unused_index = np.zeros(1, np.int64)
    unused = np.zeros(1, np.float32)
    return unused_index, unused_index, unused, unused


def _block_taps(layout: Layout) -> tuple[np.ndarray, ...]:
    """Offsets (inside one input row position) and weights of the block's blended axis,
    flat over (channel, part); dummies when the block has no blended axis."""
    blend = layout.block_blend
    if blend is None:
        return np.zeros(1, np.int64), np.zeros(1, np.int64), *([np.zeros(1, np.float32)] * 2)
    assert blend.taps is not None
    parts = layout.block // blend.n_out
    part = np.arange(parts, dtype=np.int64)
    lo = (blend.taps.lo[:, None] * parts + part).reshape(-1)
    hi = (blend.taps.hi[:, None] * parts + part).reshape(-1)
    return lo, hi, np.repeat(blend.taps.w_lo, parts), np.repeat(blend.taps.w_hi, parts)


def prepare_linear(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    dtype: np.dtype,
    axes: list[LinearAxis],
    etype: ElementType,
    threads: int,
) -> Launcher:
    """Compiled linear blend of the 2**k corners of every output's cell (docs/semantics.md §2)."""
    assert etype.accumulator is not None
    acc = etype.accumulator
    half = etype.name in ("float16", "bfloat16")
    lut = _to_float32_table(etype.name) if half else np.zeros(1, np.float32)
    parts = etype.parts
    blends = {a.axis: a for a in axes}
    canonical_axes = [
        Axis(n_in, n_out, "blend", taps=blends[i]) if i in blends else Axis(n_in, n_out, "copy")
        for i, (n_in, n_out) in enumerate(zip(in_shape, out_shape, strict=True))
    ] + element_axis(parts)
    slots = 2 << len(axes)
    # scratch per output element, for at most 4 taps: tap tables, cached rows, accumulator
    per_element = 4 * (8 + 4) + slots * 4 * acc.itemsize + acc.itemsize
    corners = 1 << len(axes)
    layout = plan_layout(canonical_axes, threads, corners * acc.itemsize, per_element)
    arrays = outer_arrays(layout)
    row = layout.row
    row_lo, row_hi, row_w_lo, row_w_hi = _row_taps(row)
    blk_lo, blk_hi, blk_w_lo, blk_w_hi = _block_taps(layout)
    # an integer scale on the row axis expands input rows without a gather
    repeat = _repeat_factor(row_lo) if row.kind == "blend" and layout.block_blend is None else 0
    if repeat:
        layout.segment = -(-layout.segment // repeat) * repeat
        layout.n_segments = -(-row.n_out // layout.segment)
    source = _LINEAR_CODES[etype.name]
    target = _FLOAT32 if half else source
    if etype.is_integer:
        info = np.iinfo(dtype)
        low_bound, high_bound = float(info.min), float(info.max) + 1.0
    else:
        low_bound = high_bound = 0.0
    x_elements = int(np.prod(in_shape, dtype=np.int64)) * parts
    kernel = _native.linear_kernel(
        x_elements, source, target, lut, row.n_out, layout.block, layout.block_in,
        arrays["sizes"], arrays["blend"].astype(np.uint8), arrays["lo"], arrays["hi"],
        arrays["w_lo"], arrays["w_hi"], arrays["starts"],
        int(row.kind == "blend"), row_lo, row_hi, row_w_lo, row_w_hi,
        int(layout.block_blend is not None), blk_lo, blk_hi, blk_w_lo, blk_w_hi,
        layout.n_blocks, layout.n_segments, layout.segment, low_bound, high_bound, isa(),
        repeat,
    )
    source_view = np.dtype(np.uint16) if half else (acc if parts == 2 else None)

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        threads = min(threads, layout.threads)
        src = native_contiguous(x)
        if source_view is not None:
            src = src.view(source_view)
        if not half:
            kernel(src, out.view(acc) if parts == 2 else out, threads)
            return
        target = out.reshape(layout.rows, -1)
        width = target.shape[1]
        chunk = max(1, HALF_SCRATCH_BYTES // (4 * width))
        scratch = np.empty((min(chunk, layout.rows), width), np.float32)
        for start in range(0, layout.rows, chunk):
            stop = min(layout.rows, start + chunk)
            part = scratch[: stop - start]
            kernel(src, part, threads, start)
            with np.errstate(over="ignore"):  # beyond float16's range is inf, as in ORT
                target[start:stop] = part  # float32 -> float16/bfloat16, round to nearest even

    return run
