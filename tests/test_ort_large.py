"""Large calls against onnxruntime 1.32: the multi-threaded and scratch-splitting kernel paths.

``test_ort.py`` compares outputs of at most 3,000 elements, which the kernels run as a single
work item. Every case here runs with ``set_num_threads(2)`` and with the least work worth
sharing lowered to nothing (so the call is split into several work items over rows and row
segments, whatever its size), and must give ORT's output bytes exactly. Some rows are wide
enough that the linear kernel's per-item scratch limit cuts each row into several segments.

Each case states the kernel path it is meant to take (row kind, repeat factor, block, blended
block, number of blended outer axes, segments); the layout the library actually planned is
recorded and checked first, so a case that drifts off its path fails as a premise, not
silently. The linear kernel's generic sum (4+ blended outer axes, or 3 with four taps) has no
case: no input ORT runs linear on reaches it (at most 3 axes interpolate, one of them the row
or the block).

Data stays clear of the documented differences (docs/semantics.md §2): no int8/uint8 4-D linear with
``s0 == s3 == 1``, int32 linear values far below 2**24 (no overflow, exact in float32), float
magnitudes far from overflow, float16 NaNs only canonical ones (ORT's cast canonicalises others),
and in linear data a single NaN payload: the one ``0 * inf`` and ``inf - inf`` create on this
processor (x86: 0xFFC00000, ARM: 0x7FC00000; ``platform_nan``), so no two different NaNs can
meet in one sum. A second channel-last set uses numpy's NaN (0x7FC00000) with no infinities, so
no other NaN can arise there.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from ort_oracle import bits_of, ort_accepts, ort_upsample, skip_where_linear_bits_differ
from platform_nan import CREATED_NAN16, CREATED_NAN32

import onnx_upsample
from onnx_upsample import _kernels as kernels
from onnx_upsample import _threads, upsample
from onnx_upsample._kernels import _compiled, _layout
from onnx_upsample._kernels._layout import Layout
from onnx_upsample._spec.rules import nearest_indices

THREADS = 2

NUMPY_NAN = np.float32("nan")  # 0x7FC00000
# Nearest copies bytes: every payload, signalling NaNs included, must come through.
F32_NEAREST_SPECIALS = np.array(
    [0x7F800000, 0xFF800000, 0x80000000, 0x00000000, 0x00000001, 0x7F7FFFFF, 0xFFC00000,
     0x7FC00000, 0x7FC00001, 0xFFC12345, 0x7F800001],
    np.uint32,
).view(np.float32)
F32_LINEAR_SPECIALS = np.array([np.inf, -np.inf, -0.0, 0.0, 1e-40, CREATED_NAN32], np.float32)
F16_SPECIALS = np.array([np.inf, -np.inf, -0.0, 0.0, 6e-8, CREATED_NAN16], np.float16)
# The channel-last palettes: the brief's pixel [inf, 1.0, -0.0] and its neighbours.
HWC_PALETTE = np.array([np.inf, 1.0, -0.0, -np.inf, CREATED_NAN32, 0.0, 2.5, -3.0], np.float32)
HWC_QUIET_PALETTE = np.array([NUMPY_NAN, 1.0, -0.0, 0.0, -2.0, 7.25], np.float32)
HWC_U8_PALETTE = np.array([0, 255, 128, 1, 254], np.uint8)


@dataclass(frozen=True)
class Case:
    """One comparison: input shape, scales, mode, type, data kind, and the expected path."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    scales: tuple[float, ...]
    mode: str
    data: str = "random"  # or "hwc" (specials palette), "hwc-quiet" (numpy NaN, no inf)
    path: dict[str, Any] = field(default_factory=dict)


def _n(name: str, dtype: str, shape: tuple[int, ...], scales: tuple[float, ...],
       **path: Any) -> Case:
    return Case(name, dtype, shape, scales, "nearest", path=path)


def _l(name: str, dtype: str, shape: tuple[int, ...], scales: tuple[float, ...],
       data: str = "random", **path: Any) -> Case:
    return Case(name, dtype, shape, scales, "linear", data, path)


CASES: list[Case] = [
    # --- nearest: copy rows (a trailing run of >= 32 unchanged elements is the row)
    _n("copy-2d", "float32", (300, 200), (2, 1), row="copy", block=1),
    _n("copy-nhwc-c64", "uint8", (3, 64, 48, 64), (1, 2, 2, 1), row="copy", block=1),
    # --- nearest: repeat rows, block 1 (k = 2, 3, 4 have their own loops; 5 is generic)
    _n("repeat2", "float32", (256, 200), (2, 2), row="gather", repeat=2, block=1),
    _n("repeat2-f16", "float16", (160, 256), (2, 2), row="gather", repeat=2, block=1),
    _n("repeat3", "int8", (100, 150), (3, 3), row="gather", repeat=3, block=1),
    _n("repeat4", "int32", (64, 128), (4, 4), row="gather", repeat=4, block=1),
    _n("repeat5", "uint8", (50, 100), (5, 5), row="gather", repeat=5, block=1),
    _n("repeat2-rank1", "float32", (40000,), (2,), row="gather", repeat=2, segments=2),
    _n("gather-rank1", "int32", (30001,), (1.5,), row="gather", repeat=0, segments=2),
    # --- nearest: gather rows (non-integer scale), consecutive rows reading one input row
    _n("gather", "float32", (200, 300), (1.5, 1.7), row="gather", repeat=0, row_above=True),
    _n("gather-u8", "uint8", (240, 240), (1.3333334, 1.3333334), row="gather", repeat=0,
       row_above=True),
    _n("gather-f16", "float16", (150, 160), (1.7, 2.7), row="gather", repeat=0),
    # --- nearest: a block of channels (NHWC, HWC) along each row position
    _n("repeat2-block3", "uint8", (1, 120, 160, 3), (1, 2, 2, 1), repeat=2, block=3,
       row_above=True),
    _n("repeat3-block16", "int8", (2, 40, 50, 16), (1, 3, 3, 1), repeat=3, block=16,
       row_above=True),
    _n("repeat4-block3-f16", "float16", (1, 64, 80, 3), (1, 4, 4, 1), repeat=4, block=3),
    _n("repeat5-block3", "int32", (1, 60, 70, 3), (1, 5, 5, 1), repeat=5, block=3),
    _n("gather-block4", "float32", (1, 100, 120, 4), (1, 1.5, 1.5, 1), row="gather", repeat=0,
       block=4, row_above=True),
    _n("gather-block3-hwc", "uint8", (100, 120, 3), (1.7, 1.3333334, 1), repeat=0, block=3),
    # --- nearest: several outer axes (copy and gather mixed), ranks 4-6
    _n("outer-rank4", "float32", (2, 3, 40, 50), (1, 2, 1.5, 2), repeat=2, block=1),
    _n("outer-rank5", "uint8", (2, 2, 8, 20, 30), (1, 1.5, 2, 1.7, 3), repeat=3),
    _n("outer-rank6", "int32", (2, 2, 3, 4, 10, 12), (2, 1, 1.5, 2, 3, 1.3333334), repeat=0),
    _n("outer-copy-middle", "float32", (64, 3, 256), (2, 1, 2), repeat=2),
    # more than threads * 4 items: no item holds more than MAX_ITEM_ELEMENTS (1 << 22)
    _n("many-items", "uint8", (2000, 5000), (2, 2), repeat=2, items=9),
    # --- linear rank 2: one blended outer axis, blended row (T = 2)
    _l("r2", "float32", (300, 400), (2, 2), row="blend", interp=1, block=1),
    _l("r2-u8", "uint8", (200, 300), (1.5, 1.7), row="blend", interp=1),
    _l("r2-i8", "int8", (150, 150), (3, 3), row="blend", interp=1),
    _l("r2-i32", "int32", (128, 200), (1.3333334, 4), row="blend", interp=1),
    _l("r2-f16-chunks", "float16", (5000, 128), (2, 2), row="blend", interp=1),
    # wide rows: the scratch limit cuts every row into segments (with at least 8 rows the
    # work split alone makes no segments: each "segments" premise below comes from scratch)
    _l("r2-wide", "float32", (4, 60000), (2, 2), row="blend", interp=1, segments=4),
    _l("r2-wide-f16", "float16", (16, 30000), (2, 2), row="blend", interp=1, segments=2),
    _l("r2-many-items", "uint8", (2000, 2500), (2, 4), row="blend", interp=1, items=9),
    # short last axis: a blended block, the other axis is the row (no outer axis, T = 4)
    _l("r2-short-w", "float32", (20000, 10), (2, 1.5), row="blend", interp=0, block=15,
       block_blend=True, segments=9),  # one row: 8 segments from the split, more: scratch
    _l("r2-short-w-s1", "uint8", (20000, 5), (1.5, 1), row="blend", interp=0, block=5,
       block_blend=True),
    _l("r2-short-w-i32", "int32", (3000, 14), (2, 1.5), row="blend", interp=0, block=21,
       block_blend=True),
    _l("r2-w30-i32", "int32", (3000, 20), (2, 1.5), row="blend", interp=1, block=1,
       block_blend=False),  # a blended last axis of 30: the row
    # --- linear rank 3, channels last (H, W, C): ORT interpolates C even at scale 1
    *(
        _l(f"hwc-c{c}-s{s[0]}-{dt}", dt, (128, 160, c), s, "hwc", row="blend", interp=1,
           block=c, block_blend=True)
        for dt in ("float32", "uint8")
        for c in (1, 3, 4)
        for s in ((2, 2, 1), (1.5, 1.5, 1))
    ),
    _l("hwc-quiet-c3", "float32", (128, 160, 3), (2, 2, 1), "hwc-quiet", block=3,
       block_blend=True),
    _l("hwc-quiet-c4", "float32", (128, 160, 4), (1.5, 1.5, 1), "hwc-quiet", block=4,
       block_blend=True),
    _l("hwc-f16", "float16", (128, 160, 3), (2, 2, 1), "hwc", block=3, block_blend=True),
    _l("hwc-i32", "int32", (100, 120, 4), (1.3333334, 1.7, 1), block=4, block_blend=True),
    _l("hwc-wide", "float32", (4, 20000, 3), (2, 2, 1), "hwc", row="blend", interp=1,
       block=3, block_blend=True, segments=2),
    # --- linear rank 3, long last axis: two blended outer axes (T = 2)
    _l("r3", "float32", (8, 64, 128), (2, 2, 2), row="blend", interp=2, block=1),
    _l("r3-i32", "int32", (6, 50, 100), (1.5, 1.7, 1.3333334), row="blend", interp=2),
    _l("r3-wide", "float32", (2, 2, 50000), (1.5, 2, 2), row="blend", interp=2, segments=4),
    _l("r3-c40-s1", "uint8", (64, 64, 40), (2, 2, 1), row="blend", interp=2, block=1),
    # --- linear rank 4 NCHW (s0 == s1 == 1)
    _l("nchw", "float32", (2, 3, 64, 80), (1, 1, 2, 2), row="blend", interp=1, block=1),
    _l("nchw-i8", "int8", (1, 3, 100, 120), (1, 1, 1.5, 1.7), row="blend", interp=1),
    _l("nchw-short-w", "uint8", (1, 4, 2000, 8), (1, 1, 2, 2.5), row="blend", interp=0,
       block=20, block_blend=True),
    _l("nchw-w26", "float32", (1, 256, 13, 13), (1, 1, 2, 2), row="blend", interp=1,
       block=1, block_blend=False),  # a YOLO head: a blended axis of 26 is the row
    _l("nchw-w24-u8", "uint8", (1, 4, 2000, 8), (1, 1, 2, 3), row="blend", interp=1,
       block=1, block_blend=False),
    _l("nchw-w-s1", "float32", (1, 3, 200, 64), (1, 1, 2, 1), row="blend", interp=1),
    # --- linear rank 4 NHWC (s0 == s3 == 1, s1 != 1; not int8/uint8: ORT's fixed point)
    _l("nhwc-c3", "float32", (1, 64, 64, 3), (1, 2, 2, 1), row="blend", interp=1, block=3,
       block_blend=False),
    _l("nhwc-c64", "int32", (2, 50, 40, 64), (1, 1.5, 1.7, 1), row="copy", interp=2, block=1),
    _l("nhwc-c64-f16", "float16", (1, 40, 50, 64), (1, 2, 2, 1), row="copy", interp=2),
    _l("nhwc-short-w", "float32", (1, 1000, 3, 4), (1, 2, 2, 1), row="blend", interp=0,
       block=24, block_blend=True),
    _l("nhwc-wide", "int32", (1, 2, 30000, 4), (1, 2, 2, 1), row="blend", interp=1, block=4,
       block_blend=False, segments=4),
    # --- linear rank 5 (s0 == s1 == 1)
    _l("r5", "float32", (1, 2, 8, 32, 48), (1, 1, 2, 2, 2), row="blend", interp=2, block=1),
    _l("r5-u8", "uint8", (1, 1, 10, 40, 50), (1, 1, 1.5, 1.5, 1.5), row="blend", interp=2),
    _l("r5-short-w", "int32", (1, 1, 16, 200, 6), (1, 1, 2, 2, 2), row="blend", interp=1,
       block=12, block_blend=True),
    _l("r5-wide", "float32", (1, 1, 2, 2, 40000), (1, 1, 2, 2, 1.5), row="blend", interp=2,
       segments=4),
]
BY_NAME = {case.name: case for case in CASES}
assert len(BY_NAME) == len(CASES), "case names must be unique"

# Cases also run on one thread: the bytes must not depend on the thread count.
THREAD_CASES = ("repeat2-block3", "gather", "r2-wide", "r2-wide-f16", "hwc-wide",
                "nhwc-short-w", "r5-wide")


# ---------------------------------------------------------------------------------- data


def _flat_runs(rng: np.random.Generator, flat: np.ndarray, fraction: float) -> np.ndarray:
    """Repeat the previous element at a ``fraction`` of positions: flat (constant) runs."""
    keep = rng.random(flat.size) >= fraction
    keep[0] = True
    source = np.maximum.accumulate(np.where(keep, np.arange(flat.size), 0))
    return flat[source]


def _random(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...],
            mode: str) -> np.ndarray:
    n = math.prod(shape)
    if dtype.kind == "f":
        flat = (rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3, n)).astype(dtype)
        if dtype == np.float16:
            specials = F16_SPECIALS
        else:
            specials = F32_NEAREST_SPECIALS if mode == "nearest" else F32_LINEAR_SPECIALS
        replace = rng.random(n) < 0.02
        flat[replace] = rng.choice(specials, int(replace.sum()))
    else:
        info = np.iinfo(dtype)
        low, high = (info.min, info.max)
        if dtype == np.int32 and mode == "linear":
            low, high = -(2**20), 2**20  # exact in float32, no overflow
        flat = rng.integers(low, high, n, endpoint=True, dtype=np.int64).astype(dtype)
    return _flat_runs(rng, flat, 0.3).reshape(shape)


def _hwc(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...],
         palette: np.ndarray) -> np.ndarray:
    """An (H, W, C) image of 8x8 tiles: flat tiles (one pixel of palette values, mostly
    finite), palette patterns that put different specials next to each other along C, and
    noise; pixel (0, 0) is the palette's first C values (HWC_PALETTE: [inf, 1.0, -0.0]).
    Specials spread (``0 * inf`` is NaN), so they are kept to a minority of the tiles."""
    h, w, c = shape
    i, j, k = np.meshgrid(np.arange(h), np.arange(w), np.arange(c), indexing="ij")
    pattern = palette[(i + 2 * j + k) % palette.size]
    if dtype.kind == "f":
        noise = (rng.standard_normal(shape) * 4).astype(dtype)
    else:
        noise = rng.integers(0, 256, shape).astype(dtype)
    tiles = ((h + 7) // 8, (w + 7) // 8)
    tile_kind = rng.choice(3, tiles, p=[0.3, 0.1, 0.6])  # flat, pattern, noise
    weight = np.where(np.isfinite(palette.astype(np.float32)), 1.0, 0.15)
    tile_value = rng.choice(palette.size, (*tiles, c), p=weight / weight.sum())
    kind = tile_kind[i // 8, j // 8]
    flat = palette[tile_value[i // 8, j // 8, k]]
    image = np.where(kind == 0, flat, np.where(kind == 1, pattern, noise)).astype(dtype)
    image[0, 0, :] = palette[:c]
    image[1, 1, :] = palette[1 : c + 1]
    return np.ascontiguousarray(image)


def make_input(case: Case) -> np.ndarray:
    rng = np.random.default_rng([ord(ch) for ch in case.name])
    dtype = np.dtype(case.dtype)
    if case.data == "random":
        return _random(rng, dtype, case.shape, case.mode)
    if case.data == "hwc-quiet":
        return _hwc(rng, dtype, case.shape, HWC_QUIET_PALETTE)
    assert case.data == "hwc"
    palette = HWC_U8_PALETTE if dtype.kind == "u" else HWC_PALETTE.astype(dtype)
    return _hwc(rng, dtype, case.shape, palette)


# ------------------------------------------------------------------------- kernel paths


def _path_of(layout: Layout) -> dict[str, Any]:
    """What a planned layout says about the kernel path a call takes."""
    row = layout.row
    repeat = _compiled._repeat_factor(row) if row.kind == "gather" else 0
    innermost = layout.outer[-1] if layout.outer else None
    row_above = False
    if innermost is not None and innermost.kind == "gather":
        rule = innermost.rule
        assert rule is not None
        read = nearest_indices(rule.n_in, rule.out_first + innermost.n_out, rule.scale,
                               rule.out_first)
        row_above = bool(np.any(read[1:] == read[:-1]))
    return {
        "items": layout.n_blocks * layout.n_segments,
        "segments": layout.n_segments,
        "row": row.kind,
        "repeat": repeat,
        "block": layout.block,
        "block_blend": layout.block_blend is not None,
        "interp": sum(axis.kind == "blend" for axis in layout.outer),
        "row_above": row_above,
    }


def run_recorded(case: Case, x: np.ndarray, monkeypatch: pytest.MonkeyPatch,
                 threads: int) -> tuple[np.ndarray, list[Layout]]:
    """``upsample`` on ``threads`` threads, with the layouts it planned (kernel cache
    cleared, so the call plans afresh; a large call may plan twice, the same way)."""
    layouts: list[Layout] = []
    plan = _compiled.plan_layout

    def recording(*args: Any, **kwargs: Any) -> Layout:
        layout = plan(*args, **kwargs)
        layouts.append(layout)
        return layout

    with monkeypatch.context() as patch:
        patch.setattr(_compiled, "plan_layout", recording)
        kernels.launcher.cache_clear()
        onnx_upsample.set_num_threads(threads)
        try:
            # scales as an array: upsample's memo of repeated calls (keyed by list or tuple
            # scales) is bypassed, so the kernel call is prepared for this thread count
            result = upsample(x, np.array(case.scales, np.float32), case.mode)
        finally:
            onnx_upsample.set_num_threads(THREADS)
            kernels.launcher.cache_clear()
    return result, layouts


def check_path(case: Case, layouts: list[Layout]) -> None:
    assert layouts, "premise: the call planned a kernel layout"
    paths = [_path_of(layout) for layout in layouts]
    assert all(p == paths[0] for p in paths), f"premise: one plan per call: {paths}"
    path = paths[0]
    assert path["items"] >= 2, f"premise: several work items (multi-threaded path): {path}"
    for key, wanted in case.path.items():
        got = path[key]
        at_least = key in ("segments", "items")
        ok = got >= wanted if at_least else got == wanted
        assert ok, f"premise: {key} {'>=' if at_least else '=='} {wanted}: {path}"


def assert_same_bytes(ours: np.ndarray, ort: np.ndarray, case: Case, x: np.ndarray) -> None:
    where = (f"{case.name}: {case.mode} {case.dtype}{case.shape} scales {case.scales} "
             f"-> {ort.shape}")
    assert ours.dtype == ort.dtype and ours.shape == ort.shape, (
        f"{where}: ours {ours.dtype}{ours.shape}, ORT {ort.dtype}{ort.shape}")
    if ours.tobytes() == ort.tobytes():
        return
    differ = bits_of(ours) != bits_of(ort)
    first = tuple(int(i) for i in np.argwhere(differ)[0])
    raise AssertionError(
        f"{where}: {int(differ.sum())} of {ours.size} elements differ; first at {first}: "
        f"ours {ours[first]!r} (bits {bits_of(ours)[first]:#x}), "
        f"ORT {ort[first]!r} (bits {bits_of(ort)[first]:#x}); input starts "
        f"{np.array2string(x.reshape(-1)[:8])}"
    )


# ------------------------------------------------------------------------------- tests


@pytest.fixture(scope="module", autouse=True)
def _two_threads() -> Iterator[None]:
    """Run the module with set_num_threads(2), then restore the previous setting."""
    previous = _threads._requested  # None: the environment variable or the core count
    onnx_upsample.set_num_threads(THREADS)
    cores, share = _threads.available_cores, _layout.MIN_SHARE_WORK
    _threads.available_cores = lambda: max(THREADS, cores())  # type: ignore[assignment]
    _layout.MIN_SHARE_WORK = 1  # every call is worth splitting: the multi-item paths run
    try:
        yield
    finally:
        _threads._requested = previous
        _threads.available_cores, _layout.MIN_SHARE_WORK = cores, share  # type: ignore[assignment]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_large_matches_ort(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two threads, several work items (and row segments): ORT's bytes exactly."""
    skip_where_linear_bits_differ(case.mode)
    assert ort_accepts(case.dtype, case.scales, case.mode), "premise: ORT has a kernel"
    if case.mode == "linear" and len(case.shape) == 4 and case.dtype in ("int8", "uint8"):
        assert case.scales[1] == 1, "premise: not ORT's fixed-point NHWC path"
    x = make_input(case)
    ours, layouts = run_recorded(case, x, monkeypatch, THREADS)
    check_path(case, layouts)
    assert_same_bytes(ours, ort_upsample(x, case.scales, case.mode), case, x)


@pytest.mark.parametrize("name", THREAD_CASES)
def test_one_thread_same_bytes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """set_num_threads(1) (a single work sequence) gives the bytes of two threads."""
    case = BY_NAME[name]
    x = make_input(case)
    two, _ = run_recorded(case, x, monkeypatch, THREADS)
    one, layouts = run_recorded(case, x, monkeypatch, 1)
    assert layouts, "premise: the one-thread call planned its own layout"
    assert one.tobytes() == two.tobytes(), f"{name}: one thread differs from two"
    assert _threads.num_threads() == THREADS
