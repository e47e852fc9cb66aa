"""What ``scales`` may be, and the fix each wrong kind is told.

Accepted: sequences and arrays of real numbers, one per axis of x, in axis order (an array
of any shape with that many elements, a range, a deque). Refused with a ``TypeError`` that
says what to write: containers whose order or contents are not one number per axis (a dict
was read by its keys, a set in hash order, a generator consumed by the first look), text,
None, and a single number (the fix names one scale per axis of *this* x). A wrong count shows
the count and the first few values, however many were given.
"""

from __future__ import annotations

import array
import collections

import numpy as np
import pytest

from onnx_upsample import UpsampleError, output_shape, upsample
from onnx_upsample._spec.scales import SHOWN_SCALES

X2 = np.arange(4, dtype=np.float32).reshape(2, 2)


@pytest.mark.parametrize("scales", [
    [2, 1.5], (2, 1.5), np.array([2, 1.5]), np.array([[2, 1.5]]), range(2, 4),
    collections.deque([2, 1.5]), array.array("d", [2, 1.5]), [np.float32(2), np.int64(2)],
    [[2, 1.5]], ((2,), (1.5,)),
], ids=["list", "tuple", "array", "array-1x2", "range", "deque", "array.array", "numpy-items",
        "nested-1x2", "nested-2x1"])
def test_sequences_and_arrays_of_numbers_are_scales(scales: object) -> None:
    expected = [float(v) for v in np.asarray(list(np.asarray(scales).reshape(-1)))]
    assert np.array_equal(upsample(X2, scales), upsample(X2, expected))


def test_a_dict_is_refused_not_read_by_its_keys() -> None:
    """{1: 2.0, 2: 2.0} was the scales [1, 2] (its keys): a (2, 4) result, silently."""
    with pytest.raises(TypeError, match=r"scales is a dict .*in axis order"):
        upsample(X2, {1: 2.0, 2: 2.0})


def test_a_dict_of_axes_is_told_the_list_it_stands_for() -> None:
    """{0: 2.0} complained about a scale of 0.0 that was never passed; its fix is the list."""
    with pytest.raises(TypeError, match=r"write \[2, 1\]$"):
        upsample(X2, {0: 2.0})
    with pytest.raises(TypeError, match=r"write \[2, 3\]$"):
        upsample(X2, {0: 2, 1: 3})


@pytest.mark.parametrize(("scales", "pattern"), [
    ({2.0, 3.0}, r"scales is a set .*no order.*write a list"),
    (frozenset({2.0}), r"scales is a frozenset .*no order"),
    ((v for v in [2.0, 2.0]), r"scales is a generator, which can be read only once.*pass a "
                              r"list"),
    (iter([2.0, 2.0]), r"scales is a list_iterator, which can be read only once"),
    (map(float, [2, 2]), r"scales is a map, which can be read only once"),
    (b"\x02\x02", r"scales is b'\\x02\\x02'.*such as \[2, 2\]"),
    (bytearray(b"\x02\x02"), r"scales is bytearray"),
    ("2 2", r"scales is '2 2'.*such as \[2, 2\]"),
    (None, r"scales is None.*such as \[2, 2\]"),
])
def test_containers_that_are_not_scales_are_told_what_to_write(scales: object,
                                                               pattern: str) -> None:
    with pytest.raises(TypeError, match=pattern):
        upsample(X2, scales)


@pytest.mark.parametrize(("shape", "fix"), [
    ((1, 3, 8, 8), "[1, 1, 3, 3] to keep batch and channels unscaled"),  # NCHW
    ((1, 8, 8, 3), "[1, 3, 3, 1] to keep batch and channels unscaled"),  # NHWC
    ((8, 8, 3), "[3, 3, 1] to keep the channels unscaled"),  # an RGB image
    ((3, 8, 8), "[1, 3, 3] to keep the channels unscaled"),
    ((1, 1, 4, 4, 4), "[1, 1, 3, 3, 3] to keep batch and channels unscaled"),  # a volume
    ((8, 8), "[3, 3]"),
    ((5,), "[3]"),
])
def test_one_number_is_told_one_scale_per_axis_of_this_x(shape: tuple[int, ...],
                                                        fix: str) -> None:
    """The fix was "write [3] for one axis" whatever x's rank."""
    with pytest.raises(TypeError, match=rf"x has shape {shape!r}".replace("(", r"\(")
                       .replace(")", r"\)")) as error:
        upsample(np.zeros(shape, np.float32), 3)
    assert str(error.value).endswith(f"such as {fix})")
    with pytest.raises(TypeError, match="x is a scalar: write \\[\\]"):
        upsample(np.float32(1), 3)


@pytest.mark.parametrize("scales", [np.ones(1_000_000), [1.0] * 1_000_000],
                         ids=["array", "list"])
def test_a_million_scales_are_counted_and_a_few_shown(scales: object) -> None:
    """Every value used to be listed: a 5 MB message, built in seconds."""
    with pytest.raises(UpsampleError) as error:
        upsample(X2, scales)
    message = str(error.value)
    assert message.startswith("scales has 1000000 value(s) [1.0, 1.0,")
    assert ", ...] but x has rank 2" in message
    assert message.count("1.0") == SHOWN_SCALES and len(message) < 300
    with pytest.raises(UpsampleError, match=r"^scales has 1000000 value\(s\) \[1\.0, "):
        output_shape((2, 2), scales)  # type: ignore[arg-type]


def test_a_few_scales_too_many_are_all_shown() -> None:
    with pytest.raises(UpsampleError, match=r"scales has 3 value\(s\) \[1\.0, 2\.0, 3\.0\] "):
        upsample(X2, [1, 2, 3])


@pytest.mark.parametrize(("scales", "pattern"), [
    ([[2, True]], r"scales\[1\] is True"),  # not the 1 an array of it would hold
    ([[2], [2, 3]], r"scales\[0\] is \[2\]"),  # ragged: not one number per axis
])
def test_nested_sequences_hold_numbers_or_are_refused(scales: object, pattern: str) -> None:
    with pytest.raises(TypeError, match=pattern):
        upsample(X2, scales)
