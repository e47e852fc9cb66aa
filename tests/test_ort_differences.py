"""onnxruntime 1.32's documented differences (docs/semantics.md §2), each shown against ORT.

Every test here runs ORT on the input where the difference shows and checks that ORT differs
from the library in exactly the documented way (and nowhere else): sizes and indices at
2**24 and beyond, int32 linear overflow, ORT's fixed-point NHWC path for int8/uint8, float16
NaN payloads through ORT's casts, and which NaN payload a linear sum returns. The expected
values are ORT's, the reference's, or the rules written out by hand; never the library's
own output. ``test_ort.py`` holds the broad comparisons, which keep clear of these cases.
The explainer must name the int32 one (x86's conversion).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ort_cases import (
    F32_LIMIT,
    FIXED_SCALES,
    REFERENCE_MAX_ELEMENTS,
    _f32_bits,
    describe,
    draw_scale,
    f32_out_len,
    make_values,
)
from ort_oracle import assert_same_bits, ort_upsample

from onnx_upsample import reference, upsample
from onnx_upsample.conformance._explain import explain

# --- NaN selection in linear sums -----------------------------------------------------

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
    """numpy's nan beside an inf: 0 * inf creates this processor's NaN, which on x86
    (0xFFC00000) differs from the input's 0x7FC00000 in the same sum; on these paths ORT
    returns the first NaN term's bits, and so do the fast path and the reference. (On ARM
    the created NaN is 0x7FC00000 too: the same comparison, with nothing to choose.)"""
    arr = np.array(x, dtype=np.float32)
    expected = ort_upsample(arr, scales, "linear")
    assert_same_bits(upsample(arr, scales, "linear"), expected, describe(arr, scales, "linear"))
    assert_same_bits(reference.upsample(arr, scales, "linear"), expected,
                     "reference: " + describe(arr, scales, "linear"))


# --- at 2**24 and beyond (outputs of 16-30 million elements: marked slow) ---------------

@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- integer results -------------------------------------------------------------------

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
    # the explainer names the rule (it used to call this noise or a bug): 10 to 28 elements,
    # each departing, enough to name it
    found = explain(x, ort_y, scales, "linear")
    assert found.verdict == "convention", found.summary
    assert found.best == ("Upsample, integers beyond the type's range wrapped to its minimum "
                          "(x86's conversion, onnxruntime's x86-64 build)")
    assert_same_bits(reference.upsample(x, scales, "linear"), ours, "reference saturates too")
    # below the wrap point ORT and we agree exactly
    y = x - 4096
    assert_same_bits(upsample(y, scales, "linear"), ort_upsample(y, scales, "linear"),
                     describe(y, scales, "linear"))


def test_int32_linear_overflow_is_the_minimum_not_a_wrap_modulo_2_32() -> None:
    """One sum here is 2**31 + 256 (float32's next value after 2**31): ORT makes it -2**31
    too, as x86's conversion makes every result beyond the range (a wrap modulo 2**32 would
    give -2**31 + 256); the explainer's rule is that conversion."""
    x = np.full((2, 3), 2**31 - 1, dtype=np.int32)
    scales = [2.2, 3.85]
    sums = ort_upsample(x.astype(np.float32), scales, "linear").astype(np.float64)
    # ORT's float sums: 2**31 - 128 (in range), 2**31 and 2**31 + 256 (beyond)
    assert sorted(set(sums.reshape(-1))) == [2.0**31 - 128, 2.0**31, 2.0**31 + 256]
    ort_y = ort_upsample(x, scales, "linear")
    minimum = np.iinfo(np.int32).min
    assert np.array_equal(ort_y, np.where(sums >= 2.0**31, minimum, sums).astype(np.int32))
    found = explain(x, ort_y, scales, "linear")
    assert found.verdict == "convention", found.summary
    assert found.best.startswith("Upsample, integers beyond the type's range wrapped to its "
                                 "minimum"), found.summary


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


# --- float16 NaN payloads through ORT's casts ------------------------------------------

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


