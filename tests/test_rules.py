"""Hand-computed cases for the per-axis rules (docs/semantics.md §2; docs/peers.md §1-3).

Both sets of rules are checked against the same expectations: the vectorised ones of the fast
path (``onnx_upsample._spec.rules``) and the scalar ones of the slow reference
(``onnx_upsample.reference``). Every expected value below comes from the documentation (the
peers' measured ORT 1.32 values) or is derived by hand from the contract's formulas, never from
the library's own output.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from onnx_upsample import reference as ref
from onnx_upsample._spec import rules as fast

f32 = np.float32


# ---------------------------------------------------------------------------------------------
# output size (docs/peers.md §1 table; docs/semantics.md §2 "output size")
# ---------------------------------------------------------------------------------------------

OUTPUT_SIZES = [
    # (n_in, scale, expected): ORT's float32 product truncated, below 2**24 ...
    (5, 1.4, 7),  # 5 * 1.39999998 = 6.9999999 rounds to 7.0 in float32; floor(f64) is 6
    (10, 1.3, 13),
    (3, 1.6666666, 5),
    (6, 1.1666666, 7),
    (7, 1.2857143, 9),
    (20, 1.05, 21),
    (4, 1.25, 5),
    (3, 1.3333334, 4),
    (1, 1.0, 1),
    (0, 3.0, 0),
    (2, 1.4, 2),  # 2.8 -> 2
    (3, 1.1, 3),  # 3.3000002 -> 3 (the no-resize case of docs/peers.md §2)
    # ... and the exact floor(n * s) once the input or the product reaches 2**24
    (16777217, 1.0, 16777217),  # ORT: 16777216 (documented difference)
    (16777217, 2.0, 33554434),  # ORT: 33554432
    (16777215, 3.0, 50331645),  # float32 product rounds down to 50331644
    (10000001, 3.0, 30000003),  # float32 product rounds up to 30000004
    (2**23, 2.0, 2**24),
    (2**23, 3.0, 3 * 2**23),
    (3, 1e10, 30000000000),  # 1e10 is exact in float32 (9765625 * 2**10)
]


@pytest.mark.parametrize(("n_in", "scale", "expected"), OUTPUT_SIZES)
def test_output_size_fast(n_in: int, scale: float, expected: int) -> None:
    assert fast.output_size(n_in, f32(scale)) == expected


@pytest.mark.parametrize(("n_in", "scale", "expected"), OUTPUT_SIZES)
def test_output_length_reference(n_in: int, scale: float, expected: int) -> None:
    assert ref.output_length(n_in, f32(scale)) == expected


def test_output_size_float32_products_really_differ_from_float64() -> None:
    """The table's first rows are cases where f32 and f64 disagree (else they test nothing)."""
    for n_in, scale, expected in OUTPUT_SIZES[:6]:
        assert int(np.floor(n_in * float(f32(scale)))) == expected - 1, (n_in, scale)


def test_output_size_exact_rows_differ_from_float32() -> None:
    """Past 2**24 the exact rule differs from ORT's float32 product (documented difference)."""
    for n_in, scale, ort in [
        (16777217, 1.0, 16777216),
        (16777217, 2.0, 33554432),
        (16777215, 3.0, 50331644),
        (10000001, 3.0, 30000004),
    ]:
        assert int(f32(n_in) * f32(scale)) == ort
        assert fast.output_size(n_in, f32(scale)) != ort
        assert ref.output_length(n_in, f32(scale)) != ort


def test_output_size_exact_rule_uses_the_float32_scale() -> None:
    """The exact rule takes the float32 scale as the binary fraction it is, not its decimal."""
    scale = f32(1.1)  # 1.10000002384185791015625
    n_in = 2**25
    expected = math.floor(n_in * Fraction(float(scale)))
    assert expected != int(n_in * Fraction("1.1"))
    assert fast.output_size(n_in, scale) == expected
    assert ref.output_length(n_in, scale) == expected


# ---------------------------------------------------------------------------------------------
# nearest index (docs/peers.md §2; docs/semantics.md §2 "nearest index")
# ---------------------------------------------------------------------------------------------


def ref_nearest(n_in: int, n_out: int, scale: float) -> list[int]:
    return [ref.nearest_index(o, n_in, f32(scale)) for o in range(n_out)]


NEAREST_CASES = [
    # (n_in, n_out, scale, expected indices)
    (4, 5, 1.3333334, [0, 0, 1, 2, 3]),  # docs/peers.md §2: ORT's last index is 3 (float64 gives 2)
    (2, 4, 2.0, [0, 0, 1, 1]),
    (2, 6, 3.0, [0, 0, 0, 1, 1, 1]),
    (2, 3, 1.5, [0, 0, 1]),  # ORT UpsampleOpNearest15XTest
    (3, 5, 1.6666666, [0, 0, 1, 1, 2]),  # o / (5/3): 0, .6, 1.2, 1.8, 2.4
    (3, 4, 1.3333334, [0, 0, 1, 2]),  # 0, .75, 1.5, 2.25
    (5, 7, 1.4, [0, 0, 1, 2, 2, 3, 4]),  # o / 1.4: 0 .71 1.43 2.14 2.86 3.57 4.29
    (3, 3, 1.0, [0, 1, 2]),  # scale 1: identity
    (1, 4, 4.0, [0, 0, 0, 0]),
    # the clamp to n_in - 1 (the rule applies it whatever n_out the caller asks for)
    (2, 6, 2.0, [0, 0, 1, 1, 1, 1]),
    (3, 5, 1.0, [0, 1, 2, 2, 2]),
]


@pytest.mark.parametrize(("n_in", "n_out", "scale", "expected"), NEAREST_CASES)
def test_nearest_indices_fast(n_in: int, n_out: int, scale: float, expected: list[int]) -> None:
    got = fast.nearest_indices(n_in, n_out, f32(scale))
    assert got.dtype == np.int64
    assert got.tolist() == expected


@pytest.mark.parametrize(("n_in", "n_out", "scale", "expected"), NEAREST_CASES)
def test_nearest_index_reference(n_in: int, n_out: int, scale: float, expected: list[int]) -> None:
    assert ref_nearest(n_in, n_out, scale) == expected


def test_nearest_float64_would_differ_on_the_peers_example() -> None:
    """d=4, s=1.3333334: float64 floor(o/s) gives 2 at o=4, ORT (f32 division) gives 3."""
    s = f32(1.3333334)
    assert int(np.floor(4 / float(s))) == 2
    assert int(f32(4) / s) == 3


def _division_vs_reciprocal() -> tuple[int, int, int]:
    """An output index where f32 division and f32 reciprocal multiply disagree for s=1.7."""
    s = f32(1.7)
    reciprocal = f32(1) / s
    for o in range(1, 200):
        by_division = int(f32(o) / s)
        by_reciprocal = int(np.floor(f32(o) * reciprocal))
        if by_division != by_reciprocal:
            return o, by_division, by_reciprocal
    raise AssertionError("no difference found for s=1.7")  # docs/peers.md §2 says there is one


def test_nearest_uses_float32_division_not_the_reciprocal() -> None:
    o, by_division, by_reciprocal = _division_vs_reciprocal()
    assert by_division != by_reciprocal
    # docs/peers.md §2: the reciprocal differs from ORT from d >= 11; o=17 -> 10 (division) vs 9
    assert (o, by_division, by_reciprocal) == (17, 10, 9)
    n_in = 11
    n_out = int(f32(n_in) * f32(1.7))  # 18.7 -> 18
    assert n_out == 18
    assert fast.nearest_indices(n_in, n_out, f32(1.7))[o] == by_division
    assert ref.nearest_index(o, n_in, f32(1.7)) == by_division


def test_nearest_full_axis_s17_matches_float32_division() -> None:
    n_in, s = 40, f32(1.7)
    n_out = int(f32(n_in) * s)
    expected = [min(int(f32(o) / s), n_in - 1) for o in range(n_out)]
    assert fast.nearest_indices(n_in, n_out, s).tolist() == expected
    assert ref_nearest(n_in, n_out, 1.7) == expected


def test_nearest_reference_past_2_24_is_exact_and_clamped() -> None:
    # docs/peers.md §2: in=10000001, s=3; o=30000003 maps to 10000001 = in, clamped to in-1
    assert ref.nearest_index(30000003, 10000001, f32(3)) == 10000000
    assert ref.nearest_index(30000002, 10000001, f32(3)) == 10000000  # floor(10000000.67)
    # in=2**23, s=3: exact floor(o/3); f32(16777223) = 16777224 would give 5592408
    assert ref.nearest_index(16777223, 2**23, f32(3)) == 16777223 // 3 == 5592407
    assert int(f32(16777223) / f32(3)) == 5592408
    assert ref.nearest_index(2**24, 2**23, f32(3)) == 2**24 // 3
    # exact with a non-integer scale: floor(o * den / num) for s = num / den
    s = f32(1.5)
    assert ref.nearest_index(2**24 + 1, 2**24, s) == ((2**24 + 1) * 2) // 3


@pytest.mark.slow  # whole axes of 16-30 million indices
def test_nearest_fast_past_2_24_clamp_fires() -> None:
    """ORT's output length for 10000001 x 3 is 30000004; its last index clamps to in-1."""
    idx = fast.nearest_indices(10000001, 30000004, f32(3))
    assert idx[30000003] == 10000000
    assert idx[30000002] == 10000000
    assert idx[30000000] == 10000000
    assert idx[29999999] == 9999999
    assert idx.max() == 10000000


@pytest.mark.slow  # whole axes of 16-30 million indices
def test_nearest_fast_past_2_24_is_an_exact_repeat_for_integer_scale() -> None:
    """in=2**23, s=3: every index is floor(o/3) (ORT differs at 1,398,101 places,
    docs/peers.md §2)."""
    n_in = 2**23
    n_out = 3 * n_in
    idx = fast.nearest_indices(n_in, n_out, f32(3))
    assert idx[16777223] == 5592407
    assert np.array_equal(idx, np.arange(n_out, dtype=np.int64) // 3)


# ---------------------------------------------------------------------------------------------
# linear taps (docs/peers.md §3; docs/semantics.md §2 "linear coordinate")
# ---------------------------------------------------------------------------------------------

# (n_in, scale, n_out, lo, hi, w_lo, w_hi): all values exact binary fractions, by hand
LINEAR_CASES = [
    # c = o/4: 0 .25 .5 .75 1 (clamped from 1.25 1.5 1.75)
    (2, 4.0, 8, [0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1],
     [1, 0.75, 0.5, 0.25, 0.5, 0.5, 0.5, 0.5], [0, 0.25, 0.5, 0.75, 0.5, 0.5, 0.5, 0.5]),
    # c = o/2: 0 .5 1 1.5 2 2(2.5 clamped)
    (3, 2.0, 6, [0, 0, 1, 1, 2, 2], [1, 1, 2, 2, 2, 2],
     [1, 0.5, 1, 0.5, 0.5, 0.5], [0, 0.5, 0, 0.5, 0.5, 0.5]),
    # scale 1: weights 1/0, and 0.5/0.5 at the last index
    (3, 1.0, 3, [0, 1, 2], [1, 2, 2], [1, 1, 0.5], [0, 0, 0.5]),
    # a single input element: always the last index
    (1, 1.0, 1, [0], [0], [0.5], [0.5]),
    (1, 3.0, 3, [0, 0, 0], [0, 0, 0], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
    # scale 4 on 4 elements: c = 0 .25 .5 .75 1 1.25 ...
    (4, 4.0, 16,
     [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3],
     [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3],
     [1, .75, .5, .25, 1, .75, .5, .25, 1, .75, .5, .25, .5, .5, .5, .5],
     [0, .25, .5, .75, 0, .25, .5, .75, 0, .25, .5, .75, .5, .5, .5, .5]),
]


def ref_taps(n_in: int, n_out: int, scale: float) -> tuple[list, list, list, list]:
    lo, hi, w_lo, w_hi = [], [], [], []
    for o in range(n_out):
        taps = ref.linear_taps(o, n_in, f32(scale))
        assert len(taps) == 2
        (i1, w1), (i2, w2) = taps
        assert isinstance(w1, np.float32)
        assert isinstance(w2, np.float32)
        lo.append(i1)
        hi.append(i2)
        w_lo.append(w1)
        w_hi.append(w2)
    return lo, hi, w_lo, w_hi


def _bits(values: object) -> list[int]:
    return np.asarray(values, dtype=np.float32).view(np.uint32).tolist()


@pytest.mark.parametrize(("n_in", "scale", "n_out", "lo", "hi", "w_lo", "w_hi"), LINEAR_CASES)
def test_linear_taps_fast(n_in, scale, n_out, lo, hi, w_lo, w_hi) -> None:
    got_lo, got_hi, got_w_lo, got_w_hi = fast.linear_taps(n_in, n_out, f32(scale))
    assert got_lo.tolist() == lo
    assert got_hi.tolist() == hi
    assert got_w_lo.dtype == np.float32
    assert got_w_hi.dtype == np.float32
    assert _bits(got_w_lo) == _bits(w_lo)
    assert _bits(got_w_hi) == _bits(w_hi)


@pytest.mark.parametrize(("n_in", "scale", "n_out", "lo", "hi", "w_lo", "w_hi"), LINEAR_CASES)
def test_linear_taps_reference(n_in, scale, n_out, lo, hi, w_lo, w_hi) -> None:
    got_lo, got_hi, got_w_lo, got_w_hi = ref_taps(n_in, n_out, scale)
    assert got_lo == lo
    assert got_hi == hi
    assert _bits(got_w_lo) == _bits(w_lo)
    assert _bits(got_w_hi) == _bits(w_hi)


def _non_dyadic_expectation() -> tuple[list, list, list, list]:
    """n_in=5, s=1.4, n_out=7, weights in float32 arithmetic worked out term by term."""
    s = f32(1.4)
    c1 = f32(1) / s  # 0.71428573
    c5 = f32(5) / s  # 3.5714285
    lo = [0, 0, 1, 2, 2, 3, 4]
    hi = [1, 1, 2, 3, 3, 4, 4]
    # o=0: c=0 -> lo weight |0-1| = 1, hi weight 0; o=6: c=4.29 clamps to 4 -> 0.5/0.5
    w_lo = [f32(1), f32(1) - c1, None, None, None, f32(4) - c5, f32(0.5)]
    w_hi = [f32(0), c1, None, None, None, c5 - f32(3), f32(0.5)]
    for o, low in ((2, 1), (3, 2), (4, 2)):
        c = f32(o) / s
        w_lo[o] = abs(c - f32(low + 1))
        w_hi[o] = abs(c - f32(low))
    return lo, hi, w_lo, w_hi


def test_linear_taps_non_dyadic_scale_float32_arithmetic() -> None:
    lo, hi, w_lo, w_hi = _non_dyadic_expectation()
    # the two weights of o=1 are not 2/7 and 5/7 rounded: they are float32 quantities
    assert w_hi[1] == f32(1) / f32(1.4)
    got = fast.linear_taps(5, 7, f32(1.4))
    assert got[0].tolist() == lo
    assert got[1].tolist() == hi
    assert _bits(got[2]) == _bits(w_lo)
    assert _bits(got[3]) == _bits(w_hi)
    got_ref = ref_taps(5, 7, 1.4)
    assert got_ref[0] == lo
    assert got_ref[1] == hi
    assert _bits(got_ref[2]) == _bits(w_lo)
    assert _bits(got_ref[3]) == _bits(w_hi)


def _exact_taps_past_2_24(
    o: int, n_in: int, scale: float
) -> tuple[int, int, np.float32, np.float32]:
    """Contract: c = exact o/s rounded to float64; distances in float64, then to float32."""
    c = float(Fraction(o) / Fraction(float(f32(scale))))
    c = max(0.0, min(c, float(n_in - 1)))
    i1 = min(int(c), n_in - 1)
    i2 = min(i1 + 1, n_in - 1)
    if i1 == i2:
        return i1, i2, f32(0.5), f32(0.5)
    return i1, i2, f32(abs(c - i2)), f32(abs(c - i1))


def test_linear_taps_reference_past_2_24() -> None:
    n_in, s = 2**23, 3.0
    o = 2**24 + 1  # 16777217 / 3 = 5592405.667; float32(o) = 2**24 would give 5592405.5
    i1, i2, w1, w2 = _exact_taps_past_2_24(o, n_in, s)
    assert (i1, i2) == (5592405, 5592406)
    assert abs(float(w1) - 1 / 3) < 1e-6  # lo's weight is the distance to hi, about 1/3
    assert abs(float(w2) - 2 / 3) < 1e-6
    got = ref.linear_taps(o, n_in, f32(s))
    assert [i for i, _ in got] == [i1, i2]
    assert _bits([w for _, w in got]) == _bits([w1, w2])
    # the clamp at the far end of the axis still gives 0.5/0.5 at in-1
    last = ref.linear_taps(3 * n_in - 1, n_in, f32(s))
    assert [i for i, _ in last] == [n_in - 1, n_in - 1]
    assert _bits([w for _, w in last]) == _bits([0.5, 0.5])


@pytest.mark.slow  # whole axes of 16-30 million indices
def test_linear_taps_fast_past_2_24() -> None:
    n_in, s = 2**23, 3.0
    n_out = 2**24 + 4
    lo, hi, w_lo, w_hi = fast.linear_taps(n_in, n_out, f32(s))
    for o in (2**24, 2**24 + 1, 2**24 + 2, 2**24 + 3):
        i1, i2, w1, w2 = _exact_taps_past_2_24(o, n_in, s)
        assert (lo[o], hi[o]) == (i1, i2), o
        assert _bits([w_lo[o], w_hi[o]]) == _bits([w1, w2]), o
    # below 2**24 the float32 rule: o = 2**24 - 1 = 16777215, exactly 3 * 5592405
    o = 2**24 - 1
    assert (lo[o], hi[o]) == (5592405, 5592406)
    assert _bits([w_lo[o], w_hi[o]]) == _bits([1.0, 0.0])


# ---------------------------------------------------------------------------------------------
# which axes interpolate (docs/semantics.md §2 table, row by row)
# ---------------------------------------------------------------------------------------------

AXIS_TABLE = [
    # rank 2: both axes, even with scale 1
    ([1, 1], (0, 1)),
    ([1, 2], (0, 1)),
    ([2, 1], (0, 1)),
    # rank 3: all three
    ([1, 1, 1], (0, 1, 2)),
    ([1, 2, 1], (0, 1, 2)),
    ([2, 2, 2], (0, 1, 2)),
    # rank 4 with s0 == s1 == 1: axes 2, 3
    ([1, 1, 2, 2], (2, 3)),
    ([1, 1, 1, 3], (2, 3)),
    ([1, 1, 1, 1], (2, 3)),
    ([1, 1, 2, 1], (2, 3)),  # also matches the NHWC row: the first row wins
    # rank 4 with s0 == s3 == 1 (NHWC): axes 1, 2
    ([1, 2, 2, 1], (1, 2)),
    ([1, 2, 1, 1], (1, 2)),
    # rank 5 with s0 == s1 == 1: axes 2, 3, 4
    ([1, 1, 2, 2, 2], (2, 3, 4)),
    ([1, 1, 1, 1, 1], (2, 3, 4)),
    ([1, 1, 1, 2, 1], (2, 3, 4)),
    # everywhere else: exactly the scaled axes
    ([2, 1, 2, 2], (0, 2, 3)),  # scaled batch axis, rank 4
    ([2, 1, 1, 1], (0,)),
    ([1, 2, 2, 2], (1, 2, 3)),  # s1 != 1 and s3 != 1
    ([2, 2, 1, 1, 1], (0, 1)),  # rank 5, batch and channel scaled
    ([1, 2, 1, 1, 2], (1, 4)),
    ([2], (0,)),  # rank 1
    ([1], ()),
    ([1, 1, 2, 2, 1, 1], (2, 3)),  # rank 6
    ([1, 1, 1, 1, 1, 1], ()),
    ([2, 1, 1, 1, 1, 1, 3], (0, 6)),  # rank 7
    ([], ()),  # rank 0
    ([1, 1, 1.0000001, 1], (2, 3)),
    ([1, 1.0000001, 1, 1], (1, 2)),  # f32(1.0000001) != 1: NHWC row
]


@pytest.mark.parametrize(("scales", "expected"), AXIS_TABLE)
def test_interpolated_axes_fast(scales: list[float], expected: tuple[int, ...]) -> None:
    assert tuple(fast.interpolated_axes([f32(s) for s in scales])) == expected


@pytest.mark.parametrize(("scales", "expected"), AXIS_TABLE)
def test_interpolated_axes_reference(scales: list[float], expected: tuple[int, ...]) -> None:
    assert tuple(ref.interpolated_axes([f32(s) for s in scales])) == expected


# ---------------------------------------------------------------------------------------------
# corner weight (docs/semantics.md §2 "linear sum": innermost axis first, (wx*wy)*wz)
# ---------------------------------------------------------------------------------------------


def _order_sensitive_triple() -> tuple[np.float32, np.float32, np.float32]:
    """Weights (outermost first) for which (w2*w1)*w0 != w2*(w1*w0) in float32."""
    rng = np.random.default_rng(1234)
    for _ in range(10000):
        w0, w1, w2 = (f32(v) for v in rng.random(3))
        if f32(f32(w2 * w1) * w0) != f32(w2 * f32(w1 * w0)):
            return w0, w1, w2
    raise AssertionError("no order-sensitive triple found")


def test_corner_weight_multiplies_innermost_first() -> None:
    w0, w1, w2 = _order_sensitive_triple()
    expected = f32(f32(w2 * w1) * w0)
    got = ref.corner_weight([w0, w1, w2])
    assert isinstance(got, np.float32)
    assert got.view(np.uint32) == expected.view(np.uint32)
    assert got != f32(w2 * f32(w1 * w0))


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ([0.5], 0.5),
        ([0.25, 0.5], 0.125),
        ([0.75, 0.5, 0.5], 0.1875),
        ([1.0, 0.0], 0.0),
    ],
)
def test_corner_weight_simple_products(weights: list[float], expected: float) -> None:
    assert ref.corner_weight([f32(w) for w in weights]) == f32(expected)
