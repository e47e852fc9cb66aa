"""Grading one runtime output against the expected ``Upsample`` output (numpy only).

Grades, best first: ``exact`` (bitwise; any NaN equals any NaN, ``-0.0 != +0.0``),
``1-ulp`` (every float element within one unit in the last place, the two zeros counted as
neighbours; not counted as exact), ``wrong`` (with the largest difference, the share of
differing elements and the first differing index), ``wrong-shape`` (shape or element type),
and, from the runner, ``refused`` (the runtime raised an error), ``crashed`` (its process
died) and ``timeout``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

EXACT, ULP1, WRONG, WRONG_SHAPE = "exact", "1-ulp", "wrong", "wrong-shape"
REFUSED, CRASHED, TIMEOUT = "refused", "crashed", "timeout"
GRADES = (EXACT, ULP1, WRONG, WRONG_SHAPE, REFUSED, CRASHED, TIMEOUT)
GRADE_WORDS = {EXACT: "exact", ULP1: "within 1 ULP", WRONG: "wrong",
               WRONG_SHAPE: "wrong shape", REFUSED: "refused", CRASHED: "crashed",
               TIMEOUT: "timed out"}


@dataclass(frozen=True)
class Grade:
    """How one output compares with the expected one; ``detail`` is one line for people."""

    kind: str
    detail: str = ""
    max_ulp: int | None = None
    max_difference: float | None = None
    share: float | None = None
    first_index: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in asdict(self).items() if value is not None}
        if "first_index" in data:
            data["first_index"] = list(data["first_index"])
        return data


def _type_name(array: np.ndarray) -> str:
    if array.dtype.kind in "OUS":
        return "string"
    return array.dtype.name


def _as_text(array: np.ndarray) -> np.ndarray:
    flat = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
            for v in array.reshape(-1)]
    return np.array(flat, dtype=object).reshape(array.shape)


def _float_parts(array: np.ndarray) -> np.ndarray:
    """A float view of ``array``: complex split into (real, imag) on a last axis."""
    if array.dtype.kind == "c":
        part = np.float32 if array.dtype == np.complex64 else np.float64
        return np.ascontiguousarray(array).view(part).reshape(*array.shape, 2)
    if array.dtype.name == "bfloat16":
        return array.astype(np.float32)  # exact: bfloat16 is a prefix of float32
    return array


def _ordered(values: np.ndarray) -> np.ndarray:
    """Float bits as integers in value order (-0.0 just below +0.0), as float64."""
    width = values.dtype.itemsize
    signed = np.dtype(f"i{width}")
    bits = np.ascontiguousarray(values).view(signed).astype(np.float64)
    magnitude = np.ascontiguousarray(values).view(signed) & np.array(
        np.iinfo(signed).max, signed)
    return np.where(bits < 0, -magnitude.astype(np.float64) - 1, bits)


def _bits_equal(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Elementwise: same bits, or both NaN."""
    if expected.dtype.kind == "O":
        return np.asarray(_as_text(expected) == _as_text(actual), dtype=bool)
    if expected.dtype.kind in "fc" or expected.dtype.name == "bfloat16":
        e, a = _float_parts(expected), _float_parts(actual)
        width = e.dtype.itemsize
        same = np.ascontiguousarray(e).view(f"u{width}") == np.ascontiguousarray(a).view(
            f"u{width}")
        same |= np.isnan(e) & np.isnan(a)
        return same.all(axis=-1) if expected.dtype.kind == "c" else same
    return np.asarray(expected == actual)


def same_bits(expected: np.ndarray, actual: np.ndarray) -> bool:
    """Whether two arrays of one shape and type are equal bit for bit (NaN equals NaN)."""
    return expected.shape == actual.shape and bool(_bits_equal(expected, actual).all())


def _show(value: Any) -> str:
    return repr(value.item() if hasattr(value, "item") else value)


def compare(expected: np.ndarray, actual: Any) -> Grade:
    """Grade a runtime's output ``actual`` against ``expected``."""
    actual = np.asarray(actual)
    if expected.dtype.kind in "OUS":
        expected = _as_text(expected)
        if actual.dtype.kind in "OUS":
            actual = _as_text(actual)
    if actual.shape != expected.shape:
        return Grade(WRONG_SHAPE, f"shape {list(actual.shape)}, expected "
                                  f"{list(expected.shape)}")
    if _type_name(actual) != _type_name(expected):
        return Grade(WRONG_SHAPE, f"element type {_type_name(actual)}, expected "
                                  f"{_type_name(expected)}")
    equal = _bits_equal(expected, actual)
    if equal.all():
        return Grade(EXACT)
    wrong = ~equal
    first = tuple(int(i) for i in np.unravel_index(int(np.argmax(wrong)), wrong.shape))
    share = float(wrong.mean())
    floating = expected.dtype.kind in "fc" or expected.dtype.name == "bfloat16"
    if floating:
        e, a = _float_parts(expected), _float_parts(actual)
        gap = np.abs(_ordered(e) - _ordered(a))
        gap[np.isnan(e) & np.isnan(a)] = 0
        gap[np.isnan(e) != np.isnan(a)] = np.inf
        largest = float(gap.max())
        if largest <= 1:
            return Grade(ULP1, f"{share:.1%} of elements 1 ULP apart (first at {list(first)})",
                         max_ulp=1, share=share, first_index=first)
        with np.errstate(invalid="ignore", over="ignore"):
            difference = np.abs(e.astype(np.float64) - a.astype(np.float64))
        # only where the bits differ (inf - inf is NaN); NaN against a number stays NaN
        difference[gap == 0] = 0
        max_difference = float(difference.max())
        ulp = int(largest) if np.isfinite(largest) else None
    elif expected.dtype.kind in "iub":
        max_difference = float(np.max(np.abs(expected.astype(np.float64)[wrong]
                                              - actual.astype(np.float64)[wrong])))
        ulp = None
    else:
        max_difference, ulp = None, None
    got, want = _show(actual[first]), _show(expected[first])
    words = f"{share:.1%} of elements differ; first at {list(first)}: {got}, expected {want}"
    if max_difference is not None:
        words += f"; largest difference {max_difference:.4g}"
    return Grade(WRONG, words, max_ulp=ulp, max_difference=max_difference, share=share,
                 first_index=first)
