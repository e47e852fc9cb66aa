"""Differential tests against onnxruntime 1.32: bit-identical wherever ORT has a kernel.

Expected values come from ORT (via ``ort_oracle``), from the slow reference, or from rules
written out by hand here; never from ``onnx_upsample.upsample`` itself. Bits are compared
raw, so NaN payloads and the sign of zero count.

What ORT runs (docs/peers.md §2-§4): float32, float16 (through inserted casts), int8, uint8, int32;
nearest at ranks 1-6 (rank 0 in the v7 attribute form); linear at rank 2, rank 3, rank 4
with ``s0 == s1 == 1`` (NCHW) or ``s0 == s3 == 1`` (NHWC), rank 5 with ``s0 == s1 == 1``.

The documented differences (docs/semantics.md §2) each have a test below that shows ORT differing in
exactly the documented way: sizes and indices at 2**24 and beyond, int32 linear overflow,
and ORT's fixed-point NHWC path for int8/uint8.

Two kinds of NaN bits are kept out of the broad tests and examined on their own:

- float16 data uses only the canonical NaNs (0x7E00, 0xFE00): ORT's float32 -> float16 cast
  keeps other NaN payloads only in the first multiple-of-8 elements of its output and
  canonicalises the rest (``test_float16_nan_payloads``);
- linear data uses only x86's default NaN (0xFFC00000, what ``0 * inf`` gives): which of two
  different NaNs meeting in one sum ORT returns depends on its code path
  (``test_linear_nan_selection``, ``test_linear_nan_next_to_inf``). Nearest data carries
  every NaN payload, signalling NaNs included.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ort_oracle import FORMS, assert_same_bits, ort_accepts, ort_runs, ort_upsample

from onnx_upsample import reference, upsample

F32_LIMIT = 2**24
ORT_DTYPE_NAMES = ("float32", "float16", "int8", "uint8", "int32")
FIXED_SCALES = (2.0, 3.0, 4.0, 1.1, 1.3333334, 1.5, 1.7, 2.7)
# Values that make the float32 rules matter (division vs reciprocal, f32 vs f64 sizes).
SWEEP_SCALES = (
    1.0, 2.0, 3.0, 1.1, 1.3333334, 1.5, 1.7, 2.7, 1.05, 1.25, 1.3, 1.4, 1.6666666,
    1.1666666, 1.2857143, 2.0000002, 3.9999998, 4.9,
)
# Keeps int32 linear results below the point where ORT's float -> int32 conversion wraps
# (the sum of the weights can exceed 1 by a few float32 ulps); overflow has its own test.
INT32_LINEAR_MAX = 2**31 - 4096
# Reference comparisons are per-element Python loops: only for outputs up to this size.
REFERENCE_MAX_ELEMENTS = 400


def _f32_bits(*patterns: int) -> np.ndarray:
    return np.array(patterns, dtype=np.uint32).view(np.float32)


FLOAT32_SPECIALS = _f32_bits(
    0x7F800000,  # inf
    0xFF800000,  # -inf
    0x80000000,  # -0.0
    0x00000000,  # 0.0
    0x00000001,  # smallest denormal
    0x807FFFFF,  # largest negative denormal
    0x00800000,  # smallest normal
    0x7F7FFFFF,  # largest finite
    0xFF7FFFFF,  # most negative finite
    0x4B800001,  # 16777218 (above 2**24)
    0x3F800000,  # 1.0
)
FLOAT32_NANS = _f32_bits(
    0xFFC00000,  # x86's default NaN (what 0 * inf and inf - inf give)
    0x7FC00000,  # numpy's nan
    0x7FC00001,  # nan with payload
    0xFFC12345,  # negative nan with payload
    0x7F800001,  # signalling nan
)
FLOAT16_SPECIALS = np.array(
    [0x7C00, 0xFC00, 0x8000, 0x0000, 0x0001, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0x3555],
    dtype=np.uint16,
).view(np.float16)
FLOAT16_NANS = np.array([0xFE00, 0x7E00], dtype=np.uint16).view(np.float16)


def float_specials(dtype: np.dtype, mode: str) -> np.ndarray:
    """Special values of a float type. Linear data gets only the default NaN: which of
    several different NaNs meeting in one sum ORT returns depends on its code path
    (``test_linear_nan_selection``), so the broad tests keep that question out."""
    if dtype == np.float32:
        nans = FLOAT32_NANS if mode == "nearest" else FLOAT32_NANS[:1]
        return np.concatenate([FLOAT32_SPECIALS, nans])
    nans = FLOAT16_NANS if mode == "nearest" else FLOAT16_NANS[:1]
    return np.concatenate([FLOAT16_SPECIALS, nans])


def _int_specials(dtype: np.dtype, mode: str) -> np.ndarray:
    info = np.iinfo(dtype)
    top = info.max if not (dtype == np.int32 and mode == "linear") else INT32_LINEAR_MAX
    values = [info.min, top, 0, 1, top - 1]
    if info.min < 0:
        values += [-1, info.min + 1]
    if dtype == np.int32:
        values += [2**24 + 1, -(2**24) - 1, 2**24 + 3]
    return np.array(values, dtype=dtype)


def make_values(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...],
                mode: str, special_fraction: float = 0.3) -> np.ndarray:
    """Random values of ``dtype`` mixed with the type's special values."""
    n = math.prod(shape)
    if dtype.kind == "f":
        magnitude = 10.0 ** rng.integers(-3, 4, n)
        values = (rng.standard_normal(n) * magnitude).astype(dtype)
        specials = float_specials(dtype, mode)
    else:
        info = np.iinfo(dtype)
        top = info.max if not (dtype == np.int32 and mode == "linear") else INT32_LINEAR_MAX
        values = rng.integers(info.min, top, n, endpoint=True, dtype=np.int64).astype(dtype)
        specials = _int_specials(dtype, mode)
    replace = rng.random(n) < special_fraction
    values[replace] = rng.choice(specials, int(replace.sum()))
    return values.reshape(shape)


def draw_scale(rng: np.random.Generator) -> float:
    """1.0 (often), one of the fixed scales, or a random float32 in [1, 4)."""
    kind = rng.random()
    if kind < 0.35:
        return 1.0
    if kind < 0.8:
        return float(rng.choice(FIXED_SCALES))
    return float(np.float32(rng.uniform(1.0, 4.0)))


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


def f32_out_len(n: int, s: float) -> int:
    return int(np.float32(n) * np.float32(s))


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


def describe(x: np.ndarray, scales: list[float], mode: str, form: str = "") -> str:
    text = np.array2string(x.reshape(-1)[:12], threshold=12)
    return f"x {x.dtype}{x.shape} {text}..., scales {scales}, {mode}, {form}"


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


def _one_scale() -> st.SearchStrategy[float]:
    return st.one_of(
        st.just(1.0),
        st.sampled_from(FIXED_SCALES),
        st.floats(1.0, 4.0, width=32, exclude_max=True),
    )


@st.composite
def ort_cases(draw: st.DrawFn) -> tuple[np.ndarray, list[float], str, str]:
    dtype = np.dtype(draw(st.sampled_from(ORT_DTYPE_NAMES)))
    mode, config = draw(st.sampled_from(sorted(CONFIGS)))
    if config == "rank4-nhwc" and dtype in (np.int8, np.uint8):
        config = "rank4-nchw"
    rank = CONFIGS[mode, config]
    scales = [draw(_one_scale()) for _ in range(rank)]
    if mode == "linear" and config in ("rank4-nchw", "rank5"):
        scales[0] = scales[1] = 1.0
    if config == "rank4-nhwc":
        scales[0] = scales[3] = 1.0
    shape = [draw(st.integers(1, MAX_DIM[rank])) for _ in range(rank)]
    while math.prod(f32_out_len(n, s) for n, s in zip(shape, scales, strict=True)) > MAX_OUTPUT:
        shape[int(np.argmax(shape))] -= 1
    n = math.prod(shape)
    if dtype.kind == "f":
        values = draw(st.lists(st.floats(width=8 * dtype.itemsize, allow_nan=False),
                               min_size=n, max_size=n))
        specials = float_specials(dtype, mode)
        x = np.array(values, dtype=np.float64).astype(dtype)
    else:
        info = np.iinfo(dtype)
        top = info.max if not (dtype == np.int32 and mode == "linear") else INT32_LINEAR_MAX
        values = draw(st.lists(st.integers(int(info.min), int(top)), min_size=n, max_size=n))
        specials = _int_specials(dtype, mode)
        x = np.array(values, dtype=np.int64).astype(dtype)
    # special values are placed by index so that float32 NaN payloads survive intact
    picks = draw(st.lists(st.integers(-1, len(specials) - 1), min_size=n, max_size=n))
    chosen = np.array(picks, dtype=np.int64)
    x[chosen >= 0] = specials[chosen[chosen >= 0]]
    form = draw(st.sampled_from(FORMS))
    return x.reshape(shape), scales, mode, form


@given(ort_cases())
def test_hypothesis_matches_ort(case: tuple[np.ndarray, list[float], str, str]) -> None:
    """Hypothesis-drawn type, mode, rank, scales, shape, values and form; also the reference
    when the output is small."""
    x, scales, mode, form = case
    assert ort_accepts(x.dtype, scales, mode, form)  # premise: a case ORT has a kernel for
    expected = ort_upsample(x, scales, mode, form)
    assert_same_bits(upsample(x, scales, mode), expected, describe(x, scales, mode, form))
    if expected.size <= REFERENCE_MAX_ELEMENTS:
        got = reference.upsample(x, scales, mode)
        assert_same_bits(got, expected, "reference: " + describe(x, scales, mode, form))


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
        "big-endian": x.astype(x.dtype.newbyteorder(">")),
        "little-endian": x.astype(x.dtype.newbyteorder("<")),
        "transposed-back": np.ascontiguousarray(x.T).T,
    }


LAYOUT_NAMES = ("fortran", "strided", "negative-strides", "read-only", "big-endian",
                "little-endian", "transposed-back")


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", ORT_DTYPE_NAMES)
@pytest.mark.parametrize(("mode", "scales"), [
    pytest.param("nearest", [1.0, 2.0, 1.7, 2.7], id="nearest-4d"),
    pytest.param("nearest", [1.5, 3.0, 1.3333334], id="nearest-3d"),
    pytest.param("linear", [1.0, 1.0, 1.7, 2.7], id="linear-nchw"),
    pytest.param("linear", [1.3333334, 2.0, 1.5], id="linear-3d"),
    pytest.param("linear", [1.0, 1.0, 2.0, 1.1, 1.5], id="linear-5d"),
])
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


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("scales", [
    pytest.param([1.0, 1.0, 2.7, 1.0], id="1-1-h-1"),
    pytest.param([1.0, 1.0, 1.3333334, 1.0], id="1-1-1.33-1"),
    pytest.param([1.0, 1.0, 1.7, 1.0], id="1-1-1.7-1"),
])
def test_int8_uint8_nchw_height_only_matches_ort(dtype: str, scales: list[float]) -> None:
    """``[1,1,h,1]`` has s0 == s1 == 1, so ORT takes its NCHW float path and we match it."""
    rng = np.random.default_rng(11)
    for shape in [(1, 3, 5, 4), (2, 2, 7, 3), (1, 1, 9, 1)]:
        x = make_values(rng, np.dtype(dtype), shape, "linear")
        assert_same_bits(upsample(x, scales, "linear"), ort_upsample(x, scales, "linear"),
                         describe(x, scales, "linear"))


# --- NaN selection in linear sums --------------------------------------------------------

NAN_PATHS = {
    "2d": ((2, 2), [1.5, 1.5]),
    "nchw": ((1, 1, 2, 2), [1.0, 1.0, 1.5, 1.5]),
    "3d": ((2, 2, 2), [1.5, 1.5, 1.5]),
    "5d": ((1, 1, 2, 2, 2), [1.0, 1.0, 1.5, 1.5, 1.5]),
    "nhwc-c1": ((1, 2, 2, 1), [1.0, 1.5, 1.5, 1.0]),
    "nhwc-c3": ((1, 2, 2, 3), [1.0, 1.5, 1.5, 1.0]),
}


def _assert_same_up_to_nan_payload(ours: np.ndarray, ort: np.ndarray, context: str) -> None:
    """Bit-identical except that where both are NaN the payloads may differ."""
    assert ours.shape == ort.shape, context
    ours_nan, ort_nan = np.isnan(ours), np.isnan(ort)
    assert np.array_equal(ours_nan, ort_nan), f"NaN positions differ: {context}"
    assert np.array_equal(ours.view(np.uint32)[~ours_nan], ort.view(np.uint32)[~ort_nan]), context


@pytest.mark.parametrize("path", sorted(NAN_PATHS))
def test_linear_nan_selection(path: str) -> None:
    """Documented difference: which NaN payload a sum returns where two NaNs meet.

    IEEE 754 leaves the payload open and x86 returns the first operand's, so the result
    depends on the operand order a compiler picked: ORT's first NaN wins on its 2-D/NCHW
    paths, other orders on its trilinear and NHWC paths; the same holds for our compiled
    loops. Every pair of input elements gets two distinct NaN payloads: NaN positions and
    every other bit must equal ORT's (and the reference's), and the payloads must differ
    from ORT's somewhere on the paths that order differently (else the documented
    difference is stale).
    """
    shape, scales = NAN_PATHS[path]
    size = math.prod(shape)
    nan_a, nan_b = _f32_bits(0x7FC00001, 0x7FC00002)
    payloads_differ = False
    for i in range(size):
        for j in range(i + 1, size):
            x = np.arange(1, size + 1, dtype=np.float32)
            x[i], x[j] = nan_a, nan_b
            x = x.reshape(shape)
            expected = ort_upsample(x, scales, "linear")
            context = f"{path}: NaN 0x7FC00001 at flat {i}, 0x7FC00002 at flat {j}"
            ours = upsample(x, scales, "linear")
            _assert_same_up_to_nan_payload(ours, expected, context)
            _assert_same_up_to_nan_payload(reference.upsample(x, scales, "linear"), ours,
                                           "reference vs fast: " + context)
            payloads_differ |= ours.tobytes() != expected.tobytes()
    if path in ("2d", "nchw"):
        assert not payloads_differ, "ORT's first-NaN paths must match bit for bit"
    else:
        assert payloads_differ, "documented NaN-payload difference no longer shows"


@pytest.mark.parametrize(("x", "scales"), [
    pytest.param([[np.nan, np.inf], [1.0, 2.0]], [2.0, 2.5], id="2d-nan-next-to-inf"),
    pytest.param([[1.0, np.inf], [np.nan, 2.0]], [2.0, 1.0], id="2d-inf-above-nan"),
    pytest.param([[[[np.nan, -np.inf], [3.0, np.inf]]]], [1.0, 1.0, 1.5, 2.0],
                 id="nchw-nan-inf"),
])
def test_linear_nan_next_to_inf(x: list[object], scales: list[float]) -> None:
    """numpy's nan beside an inf: 0 * inf is x86's default NaN (0xFFC00000), which meets
    the input's 0x7FC00000 in the same sum; on these paths ORT returns the first NaN
    term's bits, and so do the fast path and the reference."""
    arr = np.array(x, dtype=np.float32)
    expected = ort_upsample(arr, scales, "linear")
    assert_same_bits(upsample(arr, scales, "linear"), expected, describe(arr, scales, "linear"))
    assert_same_bits(reference.upsample(arr, scales, "linear"), expected,
                     "reference: " + describe(arr, scales, "linear"))


# --- documented differences (docs/semantics.md §2) ----------------------------------------------

def test_size_at_2_24_ort_drops_an_element() -> None:
    """1-D length 16777217, scale 1.0: ORT's float32 product is 16777216 (one element
    dropped); ours is the exact 16777217, so the result is a copy of x (as the reference)."""
    n = F32_LIMIT + 1
    x = (np.arange(n, dtype=np.int64) % 251).astype(np.uint8)
    ort_y = ort_upsample(x, [1.0])
    assert ort_y.shape == (F32_LIMIT,)  # ORT: f32(16777217) * 1.0 = 16777216
    assert np.array_equal(ort_y, x[:-1])  # ... and it keeps the first 16777216 elements
    ours = upsample(x, [1.0])
    assert_same_bits(ours, x, "exact size floor(16777217 * 1.0), the no-resize copy")
    assert_same_bits(reference.upsample(x, [1.0]), x, "reference")


def test_size_at_2_24_ort_adds_an_element() -> None:
    """10000001 * 3: ORT's float32 product rounds up to 30000004 (one extra element, whose
    index is clamped); the exact size is 30000003 and every index is floor(o / 3)."""
    n = 10_000_001
    x = (np.arange(n, dtype=np.int64) % 253).astype(np.uint8)
    ort_y = ort_upsample(x, [3.0])
    assert ort_y.shape == (30_000_004,)
    assert int(np.float32(n) * np.float32(3.0)) == 30_000_004  # ORT's documented rule
    ours = upsample(x, [3.0])
    assert_same_bits(ours, np.repeat(x, 3), "exact: floor(o / 3) for o < 30000003")


def test_nearest_indices_beyond_2_24() -> None:
    """in = 2**23, s = 3: ORT computes ``trunc(f32(o) / 3)`` in float32, which is wrong once
    o > 2**24; ours is the exact ``floor(o / 3)``, i.e. ``np.repeat(x, 3)``."""
    n = 2**23
    x = (np.arange(n, dtype=np.int64) % 251).astype(np.uint8)
    ort_y = ort_upsample(x, [3.0])
    assert ort_y.shape == (3 * n,)
    o = np.arange(3 * n, dtype=np.int64)
    f32_index = np.minimum((o.astype(np.float32) / np.float32(3.0)).astype(np.int64), n - 1)
    assert np.array_equal(ort_y, x[f32_index])  # ORT is exactly the float32 rule
    exact = np.repeat(x, 3)
    assert np.count_nonzero(ort_y != exact) > 1_000_000  # ... which differs a lot past 2**24
    assert np.array_equal(ort_y[:F32_LIMIT], exact[:F32_LIMIT])  # and nowhere below it
    assert_same_bits(upsample(x, [3.0]), exact, "exact floor(o / 3)")


def test_linear_coordinates_beyond_2_24() -> None:
    """[1, 2**22] uint8 with scales [1, 4.5]: past output index 2**24 ORT's coordinate
    ``f32(o) / 4.5`` is inexact; ours is the exact ``o / 4.5`` rounded to float64 with
    distances rounded once to float32 (docs/semantics.md §2, linear coordinate)."""
    n = 2**22
    s = np.float32(4.5)
    x = ((np.arange(n, dtype=np.int64) * 37) % 256).astype(np.uint8)[None, :]
    n_out = int(np.float32(n) * s)
    ort_y = ort_upsample(x, [1.0, 4.5], "linear")
    ours = upsample(x, [1.0, 4.5], "linear")
    assert ort_y.shape == ours.shape == (1, n_out)
    assert_same_bits(ours[:, :F32_LIMIT], ort_y[:, :F32_LIMIT], "below 2**24: ORT's values")

    row = x[0].astype(np.float32)
    half = np.float32(0.5)  # axis 0 has length 1: both of its taps weigh 0.5

    def blend(i1: np.ndarray, i2: np.ndarray, d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
        # corners (y1,x1), (y1,x2), (y2,x1), (y2,x2); weight (wx * wy); summed left to right
        w1, w2 = (d2 * half).astype(np.float32), (d1 * half).astype(np.float32)
        a, b = w1 * row[i1], w2 * row[i2]
        return np.trunc(((a + b) + a) + b).astype(np.uint8)

    o = np.arange(F32_LIMIT, n_out, dtype=np.int64)
    # ORT: float32 coordinate from f32(o)
    c32 = np.minimum(o.astype(np.float32) / s, np.float32(n - 1))
    i1 = np.minimum(c32.astype(np.int64), n - 1)
    i2 = np.minimum(i1 + 1, n - 1)
    d1, d2 = np.abs(c32 - i1.astype(np.float32)), np.abs(c32 - i2.astype(np.float32))
    d1[i1 == i2] = d2[i1 == i2] = 0.5
    ort_rule = blend(i1, i2, d1, d2)
    assert np.array_equal(ort_y[0, F32_LIMIT:], ort_rule)  # ORT is the float32 rule ...
    # exact: o / 4.5 = 2*o / 9, correctly rounded to float64 (both exact in float64)
    c64 = np.minimum((2 * o).astype(np.float64) / 9.0, float(n - 1))
    j1 = np.minimum(c64.astype(np.int64), n - 1)
    j2 = np.minimum(j1 + 1, n - 1)
    e1 = np.abs(c64 - j1).astype(np.float32)
    e2 = np.abs(c64 - j2).astype(np.float32)
    e1[j1 == j2] = e2[j1 == j2] = 0.5
    exact_rule = blend(j1, j2, e1, e2)
    assert np.count_nonzero(ort_rule != exact_rule) > 1000  # ... which the exact rule isn't
    assert_same_bits(ours[0, F32_LIMIT:], exact_rule, "exact coordinate past 2**24")


@pytest.mark.parametrize("shape", [(1, 2), (2, 3), (1, 3, 2)])
def test_int32_linear_overflow_saturates(shape: tuple[int, ...]) -> None:
    """int32 2147483647 is 2**31 in float32: ORT's conversion wraps it to -2147483648, we
    saturate to 2147483647 (docs/semantics.md §2, integer results of linear)."""
    x = np.full(shape, 2**31 - 1, dtype=np.int32)
    scales = [2.0, 2.5] if len(shape) == 2 else [1.5, 2.0, 1.7]
    ort_y = ort_upsample(x, scales, "linear")
    ours = upsample(x, scales, "linear")
    assert ort_y.shape == ours.shape
    assert np.all(ort_y == np.iinfo(np.int32).min)  # ORT wraps every element
    assert np.all(ours == np.iinfo(np.int32).max)  # by hand: trunc(2**31) saturated
    assert_same_bits(reference.upsample(x, scales, "linear"), ours, "reference saturates too")
    # below the wrap point ORT and we agree exactly
    y = x - 4096
    assert_same_bits(upsample(y, scales, "linear"), ort_upsample(y, scales, "linear"),
                     describe(y, scales, "linear"))


def _fixed_point_taps(n_in: int, scale: float) -> tuple[np.ndarray, ...]:
    """ORT's NHWC integer taps (docs/peers.md §3): c10 = int(c * 1024), distances in 1/1024."""
    s = np.float32(scale)
    o = np.arange(f32_out_len(n_in, scale), dtype=np.float32)
    c = o if s == 1 else o / s
    c = np.clip(c, np.float32(0), np.float32(n_in - 1))
    i1 = np.minimum(c.astype(np.int64), n_in - 1)
    i2 = np.minimum(i1 + 1, n_in - 1)
    c10 = (c * np.float32(1024)).astype(np.int64)
    d1, d2 = np.abs(c10 - i1 * 1024), np.abs(c10 - i2 * 1024)
    d1[i1 == i2] = d2[i1 == i2] = 512
    return i1, i2, d1, d2


def _ort_fixed_point(x: np.ndarray, scales: list[float]) -> np.ndarray:
    """ORT's ``NhwcUpsampleBilinearInteger``: integer weights, C division by 2**20."""
    yi1, yi2, dy1, dy2 = _fixed_point_taps(x.shape[1], scales[1])
    xi1, xi2, dx1, dx2 = _fixed_point_taps(x.shape[2], scales[2])
    v = x.astype(np.int64)

    def corner(yi: np.ndarray, xi: np.ndarray) -> np.ndarray:
        return v[:, yi][:, :, xi]

    def wy(d: np.ndarray) -> np.ndarray:
        return d[None, :, None, None]

    def wx(d: np.ndarray) -> np.ndarray:
        return d[None, None, :, None]

    total = ((wx(dx2) * wy(dy2)) * corner(yi1, xi1) + (wx(dx1) * wy(dy2)) * corner(yi1, xi2)
             + (wx(dx2) * wy(dy1)) * corner(yi2, xi1) + (wx(dx1) * wy(dy1)) * corner(yi2, xi2))
    return (np.sign(total) * (np.abs(total) // 2**20)).astype(x.dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_int8_uint8_nhwc_fixed_point_differs(dtype: str) -> None:
    """4-D ``[1, s1, s2, 1]`` with s1 != 1: ORT runs a fixed-point formula that differs from
    its own float formula by exactly 1 in a few % of elements; we follow the float formula
    (= the reference)."""
    rng = np.random.default_rng(3 if dtype == "int8" else 4)
    info = np.iinfo(dtype)
    elements = differing = 0
    for _ in range(30):
        scales = [1.0, float(rng.choice(FIXED_SCALES)), draw_scale(rng), 1.0]
        shape = (int(rng.integers(1, 3)), int(rng.integers(2, 7)), int(rng.integers(1, 7)),
                 int(rng.integers(1, 4)))
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
        ort_y = ort_upsample(x, scales, "linear")
        ours = upsample(x, scales, "linear")
        context = describe(x, scales, "linear")
        assert ort_y.shape == ours.shape, context
        if ort_y.shape == x.shape:  # the global no-resize copy: ORT and we copy x
            assert_same_bits(ort_y, x, context)
        else:
            assert np.array_equal(ort_y, _ort_fixed_point(x, scales)), context
        if ours.size <= REFERENCE_MAX_ELEMENTS:
            assert_same_bits(reference.upsample(x, scales, "linear"), ours, context)
        gap = np.abs(ort_y.astype(np.int64) - ours.astype(np.int64))
        assert gap.max(initial=0) <= 1, context
        elements += ours.size
        differing += int(np.count_nonzero(gap))
    assert 0.005 < differing / elements < 0.15, (differing, elements)


def test_float16_nan_payloads() -> None:
    """ORT's inserted float32 -> float16 casts canonicalise NaN payloads past the last
    multiple of 8 output elements (and quiet signalling NaNs); we keep nearest's payloads
    (a gather, as the reference). Everything else, NaN signs included, is identical."""
    bits = np.array([0x7E01, 0xFE23, 0x7C05, 0x3C00, 0x7E00, 0xFC01, 0xC000, 0x7D00, 0x1234],
                    dtype=np.uint16)
    x = bits.view(np.float16)
    for scales in ([1.5], [2.0], [2.7]):
        ort_y, ours = ort_upsample(x, scales), upsample(x, scales)
        assert_same_bits(reference.upsample(x, scales), ours, "reference")
        index = np.minimum((np.arange(ours.size, dtype=np.float32) / np.float32(scales[0]))
                           .astype(np.int64), x.size - 1)
        assert np.array_equal(ours.view(np.uint16), bits[index])  # payloads kept
        o_bits, y_bits = ort_y.view(np.uint16), ours.view(np.uint16)
        is_nan = np.isnan(ours)
        assert np.array_equal(np.isnan(ort_y), is_nan)
        assert np.array_equal(o_bits[~is_nan], y_bits[~is_nan])
        assert np.array_equal(o_bits[is_nan] & 0x8000, y_bits[is_nan] & 0x8000)  # signs
        tail = np.arange(ours.size) >= ours.size // 8 * 8
        assert np.all(o_bits[is_nan & tail] & 0x7FFF == 0x7E00)  # ORT: canonical in the tail


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
