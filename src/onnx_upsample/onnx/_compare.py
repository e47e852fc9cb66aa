"""Two arrays compared bit for bit: the rule every verification reports by.

Bytes, not values: NaN payloads and the sign of zero count. The largest difference is
computed in float64 and says by how much, where the bits say whether.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Difference", "bits_equal", "difference", "differing_elements",
           "largest_difference"]


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` have the same shape, element type and bytes.

    Bytes, not values: NaN payloads and the sign of zero count. Arrays of objects or
    strings compare by value.
    """
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "OUS":
        return bool(np.array_equal(a, b))
    return bool(np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                               np.ascontiguousarray(b).view(np.uint8)))


def differing_elements(a: np.ndarray, b: np.ndarray) -> int:
    """How many elements of ``a`` and ``b`` differ in their bytes (NaN payloads and the
    sign of zero count); ``b.size`` for another shape or element type."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return int(b.size)
    if a.dtype.kind in "OUS":
        return int(np.count_nonzero(a != b))
    raw = np.dtype(f"V{a.dtype.itemsize}")
    return int(np.count_nonzero(np.ascontiguousarray(a).view(raw)
                                != np.ascontiguousarray(b).view(raw)))


def largest_difference(a: np.ndarray, b: np.ndarray) -> float:
    """The largest absolute difference between ``a`` and ``b``, computed in float64.

    NaN against NaN counts as 0 and NaN against a number as inf; another shape is inf;
    arrays that are not numbers (or empty) give 0 if equal, else inf.
    """
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0 or a.dtype.kind not in "biufc":
        return 0.0 if np.array_equal(a, b) else float("inf")
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    same_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    diff = np.where(same_nan, 0.0, diff)
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))


@dataclass(frozen=True)
class Difference:
    """How one value of a conversion compares with the original's.

    Attributes
    ----------
    name : str
        The value's name (a graph output, or a node's output).
    shape : tuple of int
        The converted model's shape of it.
    largest : float
        The largest absolute difference (0 where both are NaN; inf for another shape or,
        on values that are not numbers, any difference).
    identical : bool
        True if both have the same shape, element type and bytes.
    differing : int
        How many elements differ in their bytes (all of them for another shape or type).
    size : int
        How many elements the converted value has.
    """

    name: str
    shape: tuple[int, ...]
    largest: float
    identical: bool
    differing: int = 0
    size: int = 0

    def describe(self, what: str = "output") -> str:
        """``output 'Y': 12 of 8192 element(s) differ, largest difference 4.77e-07``."""
        return (f"{what} {self.name!r}: {self.differing} of {self.size} element(s) differ, "
                f"largest difference {self.largest:.3g}")

    def to_dict(self) -> dict[str, object]:
        """The fields as JSON takes them."""
        return {"name": self.name, "shape": list(self.shape),
                "largest_difference": self.largest, "differing_elements": self.differing,
                "elements": self.size, "identical": self.identical}


def difference(name: str, original: object, converted: object) -> Difference:
    """``original`` against ``converted`` (arrays, or what numpy makes one of)."""
    a, b = np.asarray(original), np.asarray(converted)
    return Difference(name, tuple(b.shape), largest_difference(a, b), bits_equal(a, b),
                      differing_elements(a, b), int(b.size))
