"""Output rows summed without the corners of weight +0, bit for bit.

Where an output row falls on an input row along an interpolated outer axis (weights 1 and
+0: every other row at x2, every third at x3, each at scale 1), the linear kernel leaves out
the corners of that axis's high tap: their terms are +0 times a value. Two rows that read the
same input rows are still summed in one pass where the first leaves out the corners of one
more axis than the second (rows 2k and 2k + 1 at x2). That is exact only
where the value is finite and the sum's sign of zero cannot change: integer values (never
-0, and a zero converts to 0 either way), or float rows that the kernel has checked plain
(no infinity, NaN, -0 or value below 2**-100 but +0; the rows of an (H, W, C) image, which
are checked for the identity block). These cases mix rows that collapse on some axes and not
on others (every set of collapsing axes among three), scales whose weights are never 1 and
+0, and special values in the rows left out, which must take every term. Results are
compared with onnxruntime where it has a kernel, with the slow reference elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import dtype_of
from ort_oracle import assert_linear_exact

# (shape, scales): which outer axes collapse at which rows is in the comment
INTEGER_CASES = [
    ((2, 3, 9, 21), [1.0, 1.0, 2.0, 2.0]),  # an image: every other row
    ((1, 7, 11, 3), [1.0, 2.0, 2.0, 1.0]),  # channel-last: every other row
    ((13, 10, 3), [2.0, 2.0, 1.0]),  # (H, W, C): every other row, identity block
    ((9, 14), [3.0, 2.0]),  # grey at x3: every third row
    ((8, 6, 19), [4.0, 1.5, 2.0]),  # depth every fourth, height every third
    ((3, 5, 4, 17), [2.0, 3.0, 1.5, 2.0]),  # three outer axes: every set of them
    ((3, 4, 5, 18), [2.0, 2.0, 2.0, 2.0]),  # x2 on three: pairs nested on each of them
    ((1, 4, 4, 4, 16), [1.0, 2.0, 2.0, 2.0, 1.0]),  # the same, no row taps: nested beside
    # axes both rows leave out
    ((7, 12, 3), [1.0, 2.0, 1.0]),  # scale 1 on an interpolated axis: all rows but the last
    ((6, 9, 10), [1.7, 2.0, 2.0]),  # 1.7: only the first depth falls on a row
]

INTEGER_TYPES = ["int8", "uint8", "int16", "uint16", "int32"]


def integer_values(shape: tuple[int, ...], name: str) -> np.ndarray:
    rng = np.random.default_rng(sum(shape))
    info = np.iinfo(dtype_of(name))  # int32 beyond 2**24 too: rounded when converted
    return rng.integers(max(int(info.min), -(2**30)), min(int(info.max), 2**30), shape,
                        dtype=dtype_of(name), endpoint=True)


@pytest.mark.parametrize(("shape", "scales"), INTEGER_CASES)
@pytest.mark.parametrize("name", INTEGER_TYPES)
def test_integer_rows_collapse(shape: tuple[int, ...], scales: list[float], name: str) -> None:
    assert_linear_exact(integer_values(shape, name), scales)


@pytest.mark.parametrize("name", ["int8", "uint8"])
def test_integer_zero_sums(name: str) -> None:
    # sums of zero from terms of both signs: whatever the sign of a float zero, 0 is written
    x = np.zeros((2, 12, 16, 3), dtype_of(name))
    x[:, 1::2] = -1 if name == "int8" else 1  # rows left out at even output rows
    assert_linear_exact(x, [1.0, 2.0, 2.0, 1.0])
    assert_linear_exact(x.reshape(24, 16, 3), [2.0, 2.0, 1.0])


def special_rows(shape: tuple[int, ...], name: str, value: float) -> np.ndarray:
    """A float (H, W, C) image whose odd rows, which even output rows at x2 read at weight
    +0, hold `value` in some places: those rows are not plain."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 10).astype(dtype_of(name))
    x[1::4, 2::5, 1] = value
    x[3::4, 1::3, -1] = value
    return x


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan, -0.0, -1e-39, 1e-31])
@pytest.mark.parametrize("name", ["float32", "float16"])
def test_float_rows_left_out_hold_special_values(value: float, name: str) -> None:
    assert_linear_exact(special_rows((18, 13, 3), name, value), [2.0, 2.0, 1.0])
    assert_linear_exact(special_rows((10, 7, 3), name, value), [3.0, 2.0, 1.0])


@pytest.mark.parametrize("name", ["float32", "float16"])
def test_float_zero_sums_keep_their_sign(name: str) -> None:
    # -0 everywhere: every term is -0, so ORT's sums are -0; a plain row of +0 beside rows
    # of -0 gives +0 where a +0 term is taken
    x = np.full((8, 9, 3), -0.0, dtype_of(name))
    assert_linear_exact(x, [2.0, 2.0, 1.0])
    x[::2] = 0.0
    assert_linear_exact(x, [2.0, 2.0, 1.0])


@pytest.mark.parametrize(("shape", "scales"), INTEGER_CASES)
@pytest.mark.parametrize("name", ["float32", "float16"])
def test_plain_float_rows_collapse(shape: tuple[int, ...], scales: list[float], name: str) -> None:
    rng = np.random.default_rng(sum(shape) + 1)
    assert_linear_exact((rng.standard_normal(shape) * 100).astype(dtype_of(name)), scales)


# values that make a row not plain, each where leaving out a term would change a bit: an
# infinity or NaN times +0 is NaN; -0 and the least subnormal (whose products underflow to
# -0) give a sum of -0 that a +0 term makes +0; and the values about the least plain
# magnitude, 2**-100, on both sides
NOT_PLAIN = [np.inf, -np.inf, np.nan, -0.0, -1e-45, -1e-39, 1e-31, -(2.0**-100),
             -np.nextafter(np.float32(2.0**-100), np.float32(0))]


def special_planes(shape: tuple[int, ...], name: str, value: float, rows: slice) -> np.ndarray:
    """Values of mixed sign with `value` in some places of the input rows `rows` of each
    plane (the axis before the last): the rows that rows on an input row leave out."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 10).astype(dtype_of(name))
    x[..., rows, 1::5] = value
    return x


@pytest.mark.parametrize("value", NOT_PLAIN)
@pytest.mark.parametrize("name", ["float32", "float16"])
def test_float_rows_that_are_not_plain_take_every_term(value: float, name: str) -> None:
    # an image, and a volume at x2 on depth, height and width; odd rows not plain, then
    # the rows of one depth (the high taps of every even output depth)
    assert_linear_exact(special_planes((1, 2, 10, 19), name, value, slice(1, None, 4)),
                        [1.0, 1.0, 2.0, 2.0])
    assert_linear_exact(special_planes((1, 1, 5, 8, 21), name, value, slice(3, None, 4)),
                        [1.0, 1.0, 2.0, 2.0, 2.0])
    volume = special_planes((1, 1, 5, 8, 21), name, 1.0, slice(0, 0))
    volume[:, :, 3] = value
    assert_linear_exact(volume, [1.0, 1.0, 2.0, 2.0, 2.0])


@pytest.mark.parametrize("name", ["float32", "float16"])
def test_float_zero_sums_of_planes_keep_their_sign(name: str) -> None:
    # the sums of -0 of an image and a volume, then with rows of +0 in between
    for shape, scales in [((1, 2, 8, 17), [1.0, 1.0, 2.0, 2.0]),
                          ((1, 1, 4, 6, 17), [1.0, 1.0, 2.0, 2.0, 2.0])]:
        x = np.full(shape, -0.0, dtype_of(name))
        assert_linear_exact(x, scales)
        x[..., ::2, :] = 0.0
        assert_linear_exact(x, scales)
        x[..., ::3, :] = 1e-45 if name == "float32" else 6e-8
        assert_linear_exact(x, scales)
