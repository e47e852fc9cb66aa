"""Differential tests against onnxruntime 1.32: bit-identical wherever ORT has a kernel.

Expected values come from ORT (via ``ort_oracle``), from the slow reference, or from rules
written out by hand here; never from ``onnx_upsample.upsample`` itself. Bits are compared
raw, so NaN payloads and the sign of zero count.

What ORT runs (docs/peers.md §2-§4): float32, float16 (through inserted casts), int8, uint8, int32;
nearest at ranks 1-6 (rank 0 in the v7 attribute form); linear at rank 2, rank 3, rank 4
with ``s0 == s1 == 1`` (NCHW) or ``s0 == s3 == 1`` (NHWC), rank 5 with ``s0 == s1 == 1``.

The documented differences (docs/semantics.md §2) each have a test in
``test_ort_differences.py`` that shows ORT differing in exactly the documented way: sizes and
indices at 2**24 and beyond, int32 linear overflow, ORT's fixed-point NHWC path for
int8/uint8. The broad tests here keep clear of them, and of two kinds of NaN bits examined
there on their own:

- float16 data uses only the canonical NaNs (0x7E00, 0xFE00): ORT's float32 -> float16 cast
  keeps other NaN payloads only in the first multiple-of-8 elements of its output and
  canonicalises the rest (``test_float16_nan_payloads``);
- linear data uses only the NaN that ``0 * inf`` creates on this processor (x86: 0xFFC00000,
  ARM: 0x7FC00000; ``platform_nan``): which of two different NaNs meeting in one sum ORT
  returns depends on its code path (``test_linear_nan_selection``,
  ``test_linear_nan_next_to_inf``). Nearest data carries every NaN payload, signalling NaNs
  included.

Drawn cases (hypothesis) against ORT, the reference and the fast path are in
``test_fuzz.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
from ort_cases import REFERENCE_MAX_ELEMENTS, describe, draw_scale, f32_out_len, make_values
from ort_oracle import (
    FORMS,
    assert_same_bits,
    ort_accepts,
    ort_runs,
    ort_upsample,
    skip_where_linear_bits_differ,
)

from onnx_upsample import reference, upsample

ORT_DTYPE_NAMES = ("float32", "float16", "int8", "uint8", "int32")
# Values that make the float32 rules matter (division vs reciprocal, f32 vs f64 sizes).
SWEEP_SCALES = (
    1.0, 2.0, 3.0, 1.1, 1.3333334, 1.5, 1.7, 2.7, 1.05, 1.25, 1.3, 1.4, 1.6666666,
    1.1666666, 1.2857143, 2.0000002, 3.9999998, 4.9,
)














# (mode, configuration) -> rank; the configuration says which scales must stay 1.
CONFIGS = {
    **{("nearest", f"rank{r}"): r for r in range(1, 7)},
    ("linear", "rank2"): 2,
    ("linear", "rank3"): 3,
    ("linear", "rank4-nchw"): 4,
    ("linear", "rank4-nhwc"): 4,
    ("linear", "rank5"): 5,
}
MAX_DIM = {1: 40, 2: 12, 3: 6, 4: 4, 5: 3, 6: 3}
MAX_OUTPUT = 3000


def draw_scales(rng: np.random.Generator, mode: str, config: str) -> list[float]:
    rank = CONFIGS[mode, config]
    scales = [draw_scale(rng) for _ in range(rank)]
    if config in ("rank4-nchw", "rank5") and mode == "linear":
        scales[0] = scales[1] = 1.0
    if config == "rank4-nhwc":
        scales[0] = scales[3] = 1.0
        while scales[1] == 1.0:  # otherwise it is the NCHW path
            scales[1] = draw_scale(rng)
    return scales




def draw_shape(rng: np.random.Generator, scales: list[float]) -> tuple[int, ...]:
    """Small shapes with frequent size-1 axes, output at most MAX_OUTPUT elements."""
    rank = len(scales)
    shape = [1 if rng.random() < 0.25 else int(rng.integers(1, MAX_DIM[rank] + 1))
             for _ in range(rank)]
    while math.prod(f32_out_len(n, s) for n, s in zip(shape, scales, strict=True)) > MAX_OUTPUT:
        shape[int(np.argmax(shape))] -= 1
    return tuple(shape)


def _ort_cases() -> Iterator[object]:
    for (mode, config), _ in CONFIGS.items():
        for dtype in ORT_DTYPE_NAMES:
            if config == "rank4-nhwc" and dtype in ("int8", "uint8"):
                continue  # ORT's fixed-point path: test_int8_uint8_nhwc_fixed_point_differs
            for form in FORMS:
                yield pytest.param(dtype, mode, config, form,
                                   id=f"{mode}-{config}-{dtype}-{form}")




SCALE_VECTORS_PER_CASE = 6
INPUTS_PER_SCALES = 4


@pytest.fixture(scope="module", autouse=True)
def _report_ort_runs(request: pytest.FixtureRequest) -> Iterator[None]:
    """Print how many ORT comparisons this module made (the total is in the final report)."""
    before = ort_runs()
    yield
    plugins = request.config.pluginmanager
    reporter = plugins.getplugin("terminalreporter")
    capture = plugins.getplugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\ntest_ort.py: {ort_runs() - before} ORT runs compared")


@pytest.mark.parametrize(("dtype", "mode", "config", "form"), list(_ort_cases()))
def test_matches_ort(dtype: str, mode: str, config: str, form: str) -> None:
    """Random scales and shapes per (type, mode, rank configuration, form), bit for bit."""
    seed = [ord(c) for c in f"{dtype}/{mode}/{config}/{form}"]
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    skip_where_linear_bits_differ(mode)
    for _ in range(SCALE_VECTORS_PER_CASE):
        scales = draw_scales(rng, mode, config)
        for _ in range(INPUTS_PER_SCALES):
            x = make_values(rng, dt, draw_shape(rng, scales), mode)
            assert ort_accepts(dt, scales, mode, form)  # premise: a case ORT has a kernel for
            expected = ort_upsample(x, scales, mode, form)
            assert_same_bits(upsample(x, scales, mode), expected, describe(x, scales, mode, form))


@pytest.mark.parametrize(("dtype", "mode", "config"), [
    pytest.param(dtype, mode, config, id=f"{mode}-{config}-{dtype}")
    for (mode, config) in CONFIGS
    for dtype in ORT_DTYPE_NAMES
    if not (config == "rank4-nhwc" and dtype in ("int8", "uint8"))
])
def test_reference_matches_ort(dtype: str, mode: str, config: str) -> None:
    """The slow reference is bit-identical to ORT too (small outputs only)."""
    rng = np.random.default_rng([ord(c) for c in f"ref/{dtype}/{mode}/{config}"])
    dt = np.dtype(dtype)
    compared = 0
    for _ in range(500):
        if compared == 6:
            break
        scales = draw_scales(rng, mode, config)
        x = make_values(rng, dt, draw_shape(rng, scales), mode)
        expected = ort_upsample(x, scales, mode)
        if expected.size > REFERENCE_MAX_ELEMENTS:
            continue
        got = reference.upsample(x, scales, mode)
        assert_same_bits(got, expected, "reference: " + describe(x, scales, mode))
        compared += 1
    assert compared == 6, "premise: enough small cases"


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scale", SWEEP_SCALES, ids=[f"s{s}" for s in SWEEP_SCALES])
def test_axis_rule_sweep(scale: float, mode: str) -> None:
    """Every input length 1..40 for one scale: the f32 size, index and coordinate rules.

    Nearest runs 1-D ``[n]``; linear runs 2-D ``[1, n]`` (rank 1 has no ORT linear kernel).
    Distinct values make any index difference visible.
    """
    for n in range(1, 41):
        if mode == "nearest":
            x, scales = np.arange(n, dtype=np.float32) * 1.25 - 7, [scale]
        else:
            x, scales = (np.arange(n, dtype=np.float32) ** 2 * 0.3 - 5)[None, :], [1.0, scale]
        expected = ort_upsample(x, scales, mode)
        assert_same_bits(upsample(x, scales, mode), expected, describe(x, scales, mode))


# --- memory layouts -------------------------------------------------------------------

def _layouts(x: np.ndarray) -> dict[str, np.ndarray]:
    """The same values as ``x`` in other memory layouts (``x`` is C-contiguous)."""
    padded = np.zeros(tuple(2 * n + 1 for n in x.shape), dtype=x.dtype)
    strided = padded[tuple(slice(1, None, 2) for _ in x.shape)]
    strided[...] = x
    flipped = np.flip(x.copy())
    flipped_view = np.flip(flipped)  # negative strides on every axis, values of x
    readonly = x.copy()
    readonly.flags.writeable = False
    return {
        "fortran": np.asfortranarray(x),
        "strided": strided,
        "negative-strides": flipped_view,
        "read-only": readonly,
        "byte-swapped": x.astype(x.dtype.newbyteorder("S")),
    }


LAYOUT_NAMES = ("fortran", "strided", "negative-strides", "read-only", "byte-swapped")
LAYOUT_CALLS = [
    ("nearest", [1.0, 2.0, 1.7, 2.7], "nearest-4d"),
    ("nearest", [1.5, 3.0, 1.3333334], "nearest-3d"),
    ("linear", [1.0, 1.0, 1.7, 2.7], "linear-nchw"),
    ("linear", [1.3333334, 2.0, 1.5], "linear-3d"),
    ("linear", [1.0, 1.0, 2.0, 1.1, 1.5], "linear-5d"),
]


def _layout_cases() -> Iterator[object]:
    """Pairwise, not the full product: a Latin square over (type, layout) picks the call, so
    every type meets every layout, and each of them every call, once. A 1-byte type has no
    byte order (its swapped copy is x itself): a 4-byte type takes its place there."""
    for i, name in enumerate(ORT_DTYPE_NAMES):
        for j, layout in enumerate(LAYOUT_NAMES):
            mode, scales, call = LAYOUT_CALLS[(i + j) % len(LAYOUT_CALLS)]
            dtype = name
            if layout == "byte-swapped" and np.dtype(name).itemsize == 1:
                dtype = "float32" if name == "int8" else "int32"
            yield pytest.param(mode, scales, dtype, layout, id=f"{call}-{dtype}-{layout}")


@pytest.mark.parametrize(("mode", "scales", "dtype", "layout"), list(_layout_cases()))
def test_layouts_match_ort(mode: str, scales: list[float], dtype: str, layout: str) -> None:
    """Any layout and byte order gives ORT's result on the C-contiguous native copy."""
    rng = np.random.default_rng([len(scales), ord(mode[0]), ord(dtype[-1]), len(layout)])
    shape = {3: (3, 2, 4), 4: (2, 3, 4, 3), 5: (1, 2, 3, 2, 3)}[len(scales)]
    x = make_values(rng, np.dtype(dtype), shape, mode)
    expected = ort_upsample(x, scales, mode)
    variant = _layouts(x)[layout]
    assert np.array_equal(variant, x, equal_nan=x.dtype.kind == "f")  # the test's own premise
    assert_same_bits(upsample(variant, scales, mode), expected,
                     f"{layout}: " + describe(x, scales, mode))


# --- edge shapes ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ORT_DTYPE_NAMES)
def test_rank0_v7(dtype: str) -> None:
    """A scalar with ``scales=[]``: ORT (v7 attribute form) copies it."""
    x = make_values(np.random.default_rng(5), np.dtype(dtype), (), "nearest", 0.5)
    assert_same_bits(upsample(x, []), ort_upsample(x, [], "nearest", "v7"), describe(x, [], ""))


@pytest.mark.parametrize(("shape", "scales", "mode"), [
    pytest.param((1, 0, 2, 2), [1, 1, 2, 2], "nearest", id="nearest-empty-channel"),
    pytest.param((0, 3), [2, 1.5], "nearest", id="nearest-empty-rows"),
    pytest.param((1, 1, 0, 2), [1, 1, 2, 2], "linear", id="linear-empty-height"),
    pytest.param((0, 3), [2.5, 1.5], "linear", id="linear-empty-rows"),
    pytest.param((2, 0, 3), [1, 3, 2], "linear", id="linear-3d-empty"),
])
@pytest.mark.parametrize("form", FORMS)
def test_zero_size_axes(shape: tuple[int, ...], scales: list[float], mode: str,
                        form: str) -> None:
    x = np.zeros(shape, np.float32)
    assert_same_bits(upsample(x, scales, mode), ort_upsample(x, scales, mode, form),
                     describe(x, scales, mode, form))


@pytest.mark.parametrize(("mode", "shape", "scales"), [
    pytest.param(mode, shape, scales, id=f"{mode}-{case_id}")
    for shape, scales, case_id in [
        ((3,), [1.1], "1d"),
        ((4, 3), [1.1, 1.3], "2d"),
        ((2, 5, 3), [1.4999999, 1.1, 1.3], "3d"),
        ((1, 1, 6, 10), [1, 1, 1.1, 1.05], "4d"),
    ]
    for mode in ("nearest", "linear")
    if not (mode == "linear" and len(shape) == 1)  # ORT has no rank-1 linear kernel
])
def test_no_resize_copy(shape: tuple[int, ...], scales: list[float], mode: str) -> None:
    """Scales != 1 that change no axis length: ORT copies x (docs/peers.md §2 global rule)."""
    x = make_values(np.random.default_rng(len(shape)), np.dtype(np.float32), shape, mode)
    expected = ort_upsample(x, scales, mode)
    assert expected.shape == x.shape  # premise: no axis changes length
    assert_same_bits(upsample(x, scales, mode), expected, describe(x, scales, mode))
    assert_same_bits(expected, x, "ORT copies x")


@pytest.mark.parametrize(("n", "scale", "length"), [
    (5, 1.4, 7), (10, 1.3, 13), (3, 1.6666666, 5), (6, 1.1666666, 7), (7, 1.2857143, 9),
    (20, 1.05, 21), (4, 1.25, 5), (3, 1.3333334, 4),
])
def test_output_length_table(n: int, scale: float, length: int) -> None:
    """docs/peers.md §1's table, by hand: ``trunc(f32(n) * f32(s))`` (not float64's floor)."""
    x = np.arange(n, dtype=np.float32)
    assert ort_upsample(x, [scale]).shape == (length,)
    assert upsample(x, [scale]).shape == (length,)
    assert_same_bits(upsample(x, [scale]), ort_upsample(x, [scale]), f"{n} x {scale}")
