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
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._errors import UpsampleError
from .._spec.dtypes import ElementType
from . import _native
from ._layout import Axis, Layout, axis_fields, blend_taps, element_axis, plan_layout

# float16/bfloat16 linear results are rounded from a float32 scratch of at most this size.
HALF_SCRATCH_BYTES = 1 << 22
ISA_VAR = "ONNX_UPSAMPLE_ISA"
ISAS = {"baseline": _native.ISA_BASELINE, "avx2": _native.ISA_AVX2}
# Outputs of at least this many bytes are written with streaming stores (whole cache lines
# straight to memory, _native/stream.h): beyond the caches, an ordinary store first reads
# the line it writes, so the output would cost its size twice in memory traffic.
STREAM_MIN_BYTES = 16 << 20
STREAM_VAR = "ONNX_UPSAMPLE_STREAMING_STORES"
STREAM_CHOICES = ("auto", "always", "never")

ROW_COPY, ROW_REPEAT, ROW_GATHER = _native.ROW_COPY, _native.ROW_REPEAT, _native.ROW_GATHER
# A gathered row's input positions are computed per work item into a table of this many
# entries at most (8 bytes each, per thread): longer rows are cut into more segments.
MAX_GATHER_SEGMENT = 1 << 16

Run = Callable[[np.ndarray, np.ndarray, int], None]


@dataclass(frozen=True, slots=True)
class Launcher:
    """A prepared kernel call: ``run(x_window, out, threads)`` fills ``out``.

    ``worth`` is the most threads its work is worth, whatever count is asked for: at 1 the
    call runs on the caller alone, so a caller need not work out a thread count at all.
    """

    run: Run
    worth: int

    def __call__(self, x: np.ndarray, out: np.ndarray, threads: int) -> None:
        self.run(x, out, threads)


@functools.cache
def isa() -> int:
    """The kernels' instruction set (linear loops, nearest row loops): AVX2 where the CPU
    has it, unless ONNX_UPSAMPLE_ISA=baseline (or =avx2) forces one (results are the same
    bits)."""
    wanted = os.environ.get(ISA_VAR, "").strip().lower()
    if not wanted:
        return ISAS["avx2"] if _native.cpu_has_avx2() else ISAS["baseline"]
    if wanted not in ISAS:
        raise UpsampleError(
            f"the environment variable {ISA_VAR} is {wanted!r}; expected 'baseline' or 'avx2' "
            "(or unset it: the best one this CPU runs is chosen)"
        )
    if wanted == "avx2" and not _native.cpu_has_avx2():
        raise UpsampleError(f"{ISA_VAR} is 'avx2' but this CPU has no AVX2; unset it")
    return ISAS[wanted]


def _streaming_choice() -> str:
    """ONNX_UPSAMPLE_STREAMING_STORES as given, lower case; "auto" where it is unset."""
    return os.environ.get(STREAM_VAR, "").strip().lower() or "auto"


# Read once, when the kernels load (the first call that needs one), as the instruction set
# is: a lookup in os.environ costs a microsecond, a tenth of a small call
_stream_choice = _streaming_choice()


def streaming(out_bytes: int) -> bool:
    """Whether an output of ``out_bytes`` is written with streaming stores: from
    STREAM_MIN_BYTES on, unless ONNX_UPSAMPLE_STREAMING_STORES says ``always`` or ``never``
    (read when the kernels load; the bits written are the same either way)."""
    wanted = _stream_choice
    if wanted == "auto":
        return out_bytes >= STREAM_MIN_BYTES
    if wanted not in STREAM_CHOICES:
        raise UpsampleError(
            f"the environment variable {STREAM_VAR} is {wanted!r}; expected 'auto', 'always' "
            "or 'never' (or unset it: outputs from 16 MiB on are streamed)"
        )
    return wanted == "always"


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
    # the signalling NaNs among the patterns raise 'invalid' where the CPU converts them
    # (aarch64), and numpy would warn the caller of the first float16 call; errstate changes
    # no value, only that warning
    with np.errstate(invalid="ignore"):
        return bits.astype(np.uint16).view(np.float16).astype(np.float32)


# The layout's axis kinds, as the extension's codes (by name: the values are its own).
AXIS_KINDS = {"copy": _native.AXIS_COPY, "gather": _native.AXIS_GATHER,
              "blend": _native.AXIS_BLEND}


def _axis_row(axis: Axis) -> list[int]:
    """One axis as a row of the extension's description, its fields in the extension's
    order (``_native.AXIS_FIELDS``)."""
    fields = {"kind": AXIS_KINDS[axis.kind], **axis_fields(axis)}
    return [fields[name] for name in _native.AXIS_FIELDS]


def describe_axes(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """The outer axes (a single unit axis where there is none) and the row axis, as the
    kernels' int64 description (one row of :func:`_axis_row` each) and float32 scales."""
    axes = (layout.outer or [Axis(1, 1, "copy")]) + [layout.row]
    fields = np.array([_axis_row(a) for a in axes], dtype=np.int64)
    scales = np.array([a.rule.scale if a.rule else 1.0 for a in axes], dtype=np.float32)
    return fields, scales


def _repeat_factor(axis: Axis) -> int:
    """k when the axis reads input ``o // k`` at every output o of its window, else 0
    (the kernels' own rule, asked of them so that segments can be aligned to it)."""
    if axis.rule is None:
        return 0
    return int(_native.repeat_factor(np.array(_axis_row(axis), np.int64),
                                     float(axis.rule.scale)))


def prepare_nearest(
    window_shape: tuple[int, ...],
    axes: list[Axis],
    dtype: np.dtype,
    threads: int,
) -> Launcher:
    """Compiled nearest gather: ``out[o...] = x[i0(o0), i1(o1), ...]`` over ``axes`` (one per
    axis of the input window ``window_shape``, copy or gather)."""
    streaming(0)  # a bad setting is an error before anything is allocated
    unit, parts = _unsigned(dtype)
    layout = plan_layout(axes + element_axis(parts), threads, unit.itemsize)
    row = layout.row
    repeat = _repeat_factor(row) if row.kind == "gather" else 0
    if repeat:
        row_kind = ROW_REPEAT
        layout.segment = -(-layout.segment // repeat) * repeat
        layout.n_segments = -(-row.n_out // layout.segment)
    else:
        row_kind = ROW_COPY if row.kind == "copy" else ROW_GATHER
        if row_kind == ROW_GATHER and layout.segment > MAX_GATHER_SEGMENT:
            # each item computes its segment's input positions into a table: keep it small
            layout.segment = MAX_GATHER_SEGMENT
            layout.n_segments = -(-row.n_out // layout.segment)
    fields, scales = describe_axes(layout)
    x_elements = math.prod(window_shape) * parts
    kernel = _native.nearest_kernel(
        x_elements=x_elements, unit=unit.itemsize, block=layout.block, axes=fields,
        scales=scales, row_kind=row_kind, repeat=max(repeat, 1), n_blocks=layout.n_blocks,
        n_segments=layout.n_segments, segment=layout.segment, isa=isa(),
    )

    # numpy exports its own types' buffers directly; others (bfloat16) as unsigned words
    direct = dtype.isbuiltin == 1

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        threads = min(threads, layout.threads)
        stream = streaming(out.nbytes)
        if direct and x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative:
            kernel(x, out, threads, stream=stream)
        else:
            kernel(native_contiguous(x).view(unit), out.view(unit), threads, stream=stream)

    return Launcher(run, layout.worth)


def _block_taps(layout: Layout) -> tuple[np.ndarray, ...] | None:
    """Offsets (inside one input row position) and weights of the block's blended axis,
    flat over (channel, part); None when the block has no blended axis."""
    blend = layout.block_blend
    if blend is None:
        return None
    lo, hi, w_lo, w_hi = blend_taps(blend)
    parts = layout.block // blend.n_out
    part = np.arange(parts, dtype=np.int64)
    lo = (lo[:, None] * parts + part).reshape(-1)
    hi = (hi[:, None] * parts + part).reshape(-1)
    return lo, hi, np.repeat(w_lo, parts), np.repeat(w_hi, parts)


def prepare_linear(
    window_shape: tuple[int, ...],
    axes: list[Axis],
    dtype: np.dtype,
    etype: ElementType,
    threads: int,
) -> Launcher:
    """Compiled linear blend of the 2**k corners of every output's cell (docs/semantics.md §2)
    over ``axes`` (one per axis of the input window ``window_shape``, copy or blend)."""
    assert etype.accumulator is not None and etype.kernel is not None
    streaming(0)  # a bad setting is an error before anything is allocated
    acc = etype.accumulator
    # the extension's element code, by name, and the code its results are written as:
    # float16 and bfloat16 (T_HALF) give float32 results, rounded here afterwards
    src_code, _, _, out_code = _native.LINEAR_TYPES[etype.kernel]
    half = out_code != src_code
    optional: dict[str, object] = {}
    if src_code == _native.T_HALF:
        optional["lut"] = _to_float32_table(etype.name)
    parts = etype.parts
    blended = sum(axis.kind == "blend" for axis in axes)
    # scratch per output element (the kernels' own formula, for the most taps and streaming
    # stores), and the float32 results of float16/bfloat16
    per_element = _native.linear_scratch_per_element(
        4, blended, acc.itemsize == 8, True) + 4 * half
    layout = plan_layout(axes + element_axis(parts), threads, (1 << blended) * acc.itemsize,
                         per_element)
    row = layout.row
    block_taps = _block_taps(layout)
    if block_taps is not None:
        optional["block_taps"] = block_taps
    # an integer scale on the row axis expands input rows without a gather (where the block
    # is copied, or an identity: the kernel decides, from the block's taps)
    repeat = _repeat_factor(row) if row.kind == "blend" else 0
    if repeat:
        layout.segment = -(-layout.segment // repeat) * repeat
        layout.n_segments = -(-row.n_out // layout.segment)
    if etype.is_integer:  # results saturate to the type's range
        info = np.iinfo(dtype)
        optional["bounds"] = (float(info.min), float(info.max) + 1.0)
    fields, scales = describe_axes(layout)
    kernel = _native.linear_kernel(
        x_elements=math.prod(window_shape) * parts, src=src_code, dst=out_code,
        block=layout.block, block_in=layout.block_in, axes=fields, scales=scales,
        n_blocks=layout.n_blocks, n_segments=layout.n_segments, segment=layout.segment,
        isa=isa(), row_repeat=repeat, **optional,
    )
    source_view = np.dtype(np.uint16) if half else (acc if parts == 2 else None)
    # float16/bfloat16: float32 results, a bounded piece at a time (whole rows, or whole
    # segments of one row when a row alone is larger), each rounded into the output
    row_elements = row.n_out * layout.block
    piece_rows = max(1, HALF_SCRATCH_BYTES // (4 * row_elements))
    piece_segments = max(1, HALF_SCRATCH_BYTES // (4 * layout.segment * layout.block))

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        threads = min(threads, layout.threads)
        src = native_contiguous(x)
        if source_view is not None:
            src = src.view(source_view)
        if not half:
            kernel(src, out.view(acc) if parts == 2 else out, threads,
                   stream=streaming(out.nbytes))
            return
        target = out.reshape(layout.rows, row.n_out, layout.block)
        if piece_rows > 1 or layout.n_segments == 1:
            scratch = np.empty((min(piece_rows, layout.rows), row.n_out, layout.block), np.float32)
            pieces = [(start, min(layout.rows, start + piece_rows), 0, row.n_out)
                      for start in range(0, layout.rows, piece_rows)]
        else:
            width = piece_segments * layout.segment
            scratch = np.empty((1, min(width, row.n_out), layout.block), np.float32)
            pieces = [(r, r + 1, c, min(row.n_out, c + width))
                      for r in range(layout.rows) for c in range(0, row.n_out, width)]
        for r0, r1, c0, c1 in pieces:
            part = scratch[: r1 - r0, : c1 - c0]
            kernel(src, part, threads, r0, c0, c1 - c0)
            with np.errstate(over="ignore"):  # beyond float16's range is inf, as in ORT
                target[r0:r1, c0:c1] = part  # float32 -> float16/bfloat16, nearest even

    return Launcher(run, layout.worth)
