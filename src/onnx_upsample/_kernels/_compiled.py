"""Glue between checked calls and the numba kernels: element views, layouts, scratch.

Every fixed-size element type runs on the compiled kernels. Nearest is a byte gather, so
each element is viewed as unsigned integers (1, 2, 4 or 8 bytes, with a trailing axis for
wider items such as complex128 or fixed-width strings). Linear reads float16 and bfloat16
through a 65536-entry table to float32, views complex numbers as (real, imaginary) pairs
computed separately, and converts results with truncation and saturation for integers.

``prepare_nearest`` and ``prepare_linear`` do all the per-call work that depends only on
shapes, scales and types, and return a launcher (a function); the caller caches launchers, so a
repeated call costs one dictionary lookup plus the kernel.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable

import numpy as np

from .._dtypes import ElementType
from .._rules import IndexArray
from .._threads import num_threads
from ._layout import Axis, Layout, element_axis, outer_arrays, plan_layout
from ._tables import LinearAxis

# float16/bfloat16 linear results are rounded from a float32 scratch of at most this size.
HALF_SCRATCH_BYTES = 1 << 22

_launch_lock = threading.Lock()


def _native_contiguous(x: np.ndarray) -> np.ndarray:
    """x as the kernels read it: C-contiguous, native byte order, typed as writable.

    numba compiles a separate kernel for read-only arrays (seconds per element type); the
    kernels never write their input, so a read-only x is handed over as a writable alias
    of the same memory, which the caller keeps alive for the duration of the call.
    """
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    x = np.ascontiguousarray(x)
    if x.flags.writeable or x.size == 0:
        return x
    memory = (ctypes.c_char * x.nbytes).from_address(x.ctypes.data)
    return np.frombuffer(memory, dtype=x.dtype).reshape(x.shape)  # type: ignore[call-overload]


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


def _launch(parallel: bool, kernel_parallel, kernel_serial, *args) -> None:  # type: ignore[no-untyped-def]
    from . import _numba

    if not parallel:
        kernel_serial(*args)
        return
    threads = num_threads()
    if _numba.needs_launch_lock():
        with _launch_lock:
            _numba.set_threads(threads)
            kernel_parallel(*args)
    else:
        _numba.set_threads(threads)
        kernel_parallel(*args)


# A prepared kernel call: ``launcher(x_window, out)`` fills ``out``.
Launcher = Callable[[np.ndarray, np.ndarray], None]


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
    from . import _numba

    unit, parts = _unsigned(dtype)
    axes = [
        Axis(n_in, n_out, "copy") if table is None else Axis(n_in, n_out, "gather", table=table)
        for n_in, n_out, table in zip(in_shape, out_shape, tables, strict=True)
    ] + element_axis(parts)
    layout = plan_layout(axes, threads)
    row = layout.row
    row_table = row.table if row.kind == "gather" else np.zeros(1, np.int64)
    assert row_table is not None
    repeat = _repeat_factor(row_table) if row.kind == "gather" and layout.block == 1 else 0
    if repeat:
        row_kind = _numba.ROW_REPEAT
        layout.segment = -(-layout.segment // repeat) * repeat
        layout.n_segments = -(-row.n_out // layout.segment)
    else:
        row_kind = _numba.ROW_COPY if row.kind == "copy" else _numba.ROW_GATHER
    arrays = outer_arrays(layout)
    parallel = layout.n_blocks * layout.n_segments > 1
    fixed = (
        layout.rows, arrays["sizes"], arrays["lo"], arrays["starts"],
        row_table, row_kind, max(repeat, 1), layout.block,
        layout.n_blocks, layout.n_segments, layout.segment,
    )

    def run(x: np.ndarray, out: np.ndarray) -> None:
        source = _native_contiguous(x).reshape(-1).view(unit)
        _launch(parallel, _numba.nearest_parallel, _numba.nearest_serial,
                source, out.reshape(-1).view(unit), *fixed)

    return run


def _row_taps(row: Axis) -> tuple[np.ndarray, ...]:
    if row.kind == "blend":
        assert row.taps is not None
        return row.taps.lo, row.taps.hi, row.taps.w_lo, row.taps.w_hi
    identity = np.arange(row.n_out, dtype=np.int64)
    unused = np.zeros(1, np.float32)
    return identity, identity, unused, unused


def prepare_linear(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    dtype: np.dtype,
    axes: list[LinearAxis],
    etype: ElementType,
    threads: int,
) -> Launcher:
    """Compiled linear blend of the 2**k corners of every output's cell (contract §2)."""
    from . import _numba

    assert etype.accumulator is not None
    acc = etype.accumulator
    half = etype.name in ("float16", "bfloat16")
    lut = _to_float32_table(etype.name) if half else np.zeros(0, np.float32)
    parts = etype.parts
    blends = {a.axis: a for a in axes}
    canonical_axes = [
        Axis(n_in, n_out, "blend", taps=blends[i]) if i in blends else Axis(n_in, n_out, "copy")
        for i, (n_in, n_out) in enumerate(zip(in_shape, out_shape, strict=True))
    ] + element_axis(parts)
    slots = 2 << len(axes)
    layout = plan_layout(canonical_axes, threads, (2 * slots + 1) * acc.itemsize + 4)
    arrays = outer_arrays(layout)
    row = layout.row
    row_lo, row_hi, row_w_lo, row_w_hi = _row_taps(row)
    row_w_elem_lo = np.repeat(row_w_lo, layout.block) if row.kind == "blend" else row_w_lo
    row_w_elem_hi = np.repeat(row_w_hi, layout.block) if row.kind == "blend" else row_w_hi
    # an integer scale of 2 on the row axis expands input rows without a gather
    repeat = 2 if row.kind == "blend" and _repeat_factor(row_lo) == 2 else 0
    if repeat:
        layout.segment += layout.segment % 2
        layout.n_segments = -(-row.n_out // layout.segment)
    saturate = etype.is_integer
    result_type = np.dtype(np.float32) if half else (acc if parts == 2 else dtype)
    if saturate:
        info = np.iinfo(dtype)
        low_bound, high_bound = float(info.min), float(info.max) + 1.0
        low_value, high_value = result_type.type(info.min), result_type.type(info.max)
    else:
        low_bound = high_bound = 0.0
        low_value = high_value = result_type.type(0)
    acc_proto = np.zeros(1, acc)

    def launch(source: np.ndarray, into: np.ndarray, row_base: int, layout: Layout) -> None:
        _launch(
            layout.n_blocks * layout.n_segments > 1,
            _numba.linear_parallel, _numba.linear_serial,
            source, into, lut, acc_proto,
            arrays["sizes"], arrays["blend"],
            arrays["lo"], arrays["hi"], arrays["w_lo"], arrays["w_hi"], arrays["starts"],
            row_lo, row_hi, row_w_lo, row_w_hi, row.kind == "blend", layout.block,
            max(1, min(into.shape[0], layout.n_blocks)), layout.n_segments, layout.segment,
            saturate, low_bound, high_bound, low_value, high_value, row_base, repeat,
            row_w_elem_lo, row_w_elem_hi,
        )

    def run(x: np.ndarray, out: np.ndarray) -> None:
        source = _native_contiguous(x).reshape(-1)
        if half:
            source = source.view(np.uint16)
        elif parts == 2:
            source = source.view(acc)
        flat = out.reshape(-1).view(acc) if parts == 2 else out.reshape(-1)
        target = flat.reshape(layout.rows, -1)
        if not half:
            launch(source, target, 0, layout)
            return
        width = target.shape[1]
        chunk = max(1, HALF_SCRATCH_BYTES // (4 * width))
        scratch = np.empty((min(chunk, layout.rows), width), np.float32)
        for start in range(0, layout.rows, chunk):
            stop = min(layout.rows, start + chunk)
            part = scratch[: stop - start]
            launch(source, part, start, layout)
            target[start:stop] = part  # float32 -> float16/bfloat16, round to nearest even

    return run
