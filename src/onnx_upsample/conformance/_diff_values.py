"""One value compared between two runtimes, and how large its difference is
(:func:`compare`, :class:`ValueDifference`).

Whether a value differs is decided bit for bit (``onnx._compare``: NaN payloads and the sign
of zero count): two runtimes' convolutions commonly differ in the last bits, and a
tolerance would hide where a difference begins. How large it is comes beside it: the
share of elements, the largest absolute difference, and for floating-point values the
largest distance in units in the last place (ULP: how many representable numbers lie
between). Values of another shape or element type are no element-wise difference: they
say so instead ("shape 1x3x8x8 vs 1x3x9x9").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..onnx._compare import Difference, difference
from ..onnx._report import shape_words

__all__ = ["ValueDifference", "compare", "ulp_distance"]


def ulp_distance(a: np.ndarray, b: np.ndarray) -> int | None:
    """The largest distance in units in the last place between ``a`` and ``b``, element by
    element: 0 for the same number (+0 and -0 included), 1 for neighbours. None for arrays
    that are not IEEE floating point (16, 32 or 64 bits) of one shape and type, where a
    NaN stands against a number (which has no distance), and where two elements have
    opposite signs (every float of the smallest magnitudes between them would count: the
    absolute difference says more). Two NaNs count as 0 apart."""
    if a.shape != b.shape or a.dtype != b.dtype or a.dtype.kind != "f" or a.size == 0:
        return None
    if a.dtype.itemsize not in (2, 4, 8):
        return None
    signed = np.dtype(f"i{a.dtype.itemsize}")
    low = np.int64(np.iinfo(signed).min)

    def ordered(values: np.ndarray) -> np.ndarray:
        # the bits as an integer that grows with the value: negative floats count down
        # from -0 (whose bits are the smallest integer), which lands on +0's 0
        bits = np.ascontiguousarray(values).reshape(-1).view(signed).astype(np.int64)
        return np.where(bits < 0, low - bits, bits)

    nan_a, nan_b = np.isnan(a).reshape(-1), np.isnan(b).reshape(-1)
    if (nan_a != nan_b).any():
        return None
    keep = ~nan_a
    if not keep.any():
        return 0
    x, y = a.reshape(-1)[keep], b.reshape(-1)[keep]
    if ((np.signbit(x) != np.signbit(y)) & (x != 0) & (y != 0)).any():
        return None  # across zero every float between counts: no useful distance
    first, second = ordered(a)[keep], ordered(b)[keep]
    # two float64 orderings can lie more than 2**63 apart: the gap is taken in uint64
    top, bottom = np.maximum(first, second), np.minimum(first, second)
    return int((top.astype(np.uint64) - bottom.astype(np.uint64)).max())


@dataclass(frozen=True)
class ValueDifference(Difference):
    """A :class:`~onnx_upsample.onnx._compare.Difference` between two runtimes' values,
    with both shapes and element types and the largest ULP distance.

    Attributes
    ----------
    shapes : tuple of tuple of int
        The value's shape in each runtime (``shape`` is the second's).
    dtypes : tuple of str
        Its element type in each runtime.
    max_ulp : int or None
        The largest distance in units in the last place, for floating-point values of one
        shape and type (None otherwise, or where a NaN stands against a number or two
        elements have opposite signs).
    """

    shapes: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    dtypes: tuple[str, str] = ("", "")
    max_ulp: int | None = None

    @property
    def mismatch(self) -> str:
        """``shape 1x3x8x8 vs 1x3x9x9`` (or ``float32 vs float64``) where the two values
        cannot be compared element by element, else ``""``."""
        if self.shapes[0] != self.shapes[1]:
            return f"shape {shape_words(self.shapes[0])} vs {shape_words(self.shapes[1])}"
        if self.dtypes[0] != self.dtypes[1]:
            return f"{self.dtypes[0]} vs {self.dtypes[1]}"
        return ""

    def amount(self) -> str:
        """How large the difference is, in the table's words: ``12 of 256`` or the
        mismatch."""
        return self.mismatch or f"{self.differing} of {self.size}"

    def count_words(self) -> str:
        """``12 of 256 elements``, or the mismatch."""
        return self.mismatch or f"{self.differing} of {self.size} elements"

    def size_words(self) -> str:
        """``12 of 256 elements differ (4.7%), by up to 1.19e-07 (1 ULP)``, or the
        mismatch."""
        if self.mismatch:
            return f"its {self.mismatch}"
        share = 100 * self.differing / self.size if self.size else 0.0
        ulps = "" if self.max_ulp is None else (
            f" ({self.max_ulp} ULP{'s' if self.max_ulp != 1 else ''})")
        return (f"{self.differing} of {self.size} elements differ ({share:.3g}%), by up to "
                f"{self.largest:.3g}{ulps}")

    def describe(self, what: str = "output") -> str:
        """``output 'Y': 12 of 8192 element(s) differ, largest difference 4.77e-07``, or
        ``output 'Y': shape 1x3x8x8 vs 1x3x9x9``."""
        if self.mismatch:
            return f"{what} {self.name!r}: {self.mismatch}"
        return super().describe(what)

    def to_dict(self) -> dict[str, object]:
        """The fields as JSON takes them."""
        return {**super().to_dict(), "shapes": [list(shape) for shape in self.shapes],
                "dtypes": list(self.dtypes), "max_ulp": self.max_ulp,
                "mismatch": self.mismatch}


def compare(name: str, first: object, second: object) -> ValueDifference:
    """The value ``name`` in the first runtime against the second (arrays, or what numpy
    makes one of)."""
    a, b = np.asarray(first), np.asarray(second)
    base = difference(name, a, b)
    return ValueDifference(**vars(base), shapes=(tuple(a.shape), tuple(b.shape)),
                           dtypes=(str(a.dtype), str(b.dtype)),
                           max_ulp=None if base.identical else ulp_distance(a, b))
