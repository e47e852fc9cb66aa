"""Name the resampling convention behind another runtime's ONNX ``Upsample`` output.

Runtimes disagree with ``Upsample`` (versions 7, 9, 10; version 1 is the 4-D case) silently:
many turn the node into a ``Resize`` (opset 10/11/13/18) with some
``coordinate_transformation_mode`` and ``nearest_mode``, compute the source coordinate by
multiplying with a reciprocal (PyTorch), in float64 (the ONNX reference evaluator), blend
axis by axis instead of summing corners, round the output size (TVM) or round integer
results. :func:`explain` takes the input, the runtime's output, the scales and the mode, and
names the convention that reproduces the output exactly, bit for bit.

Each convention is evaluated first on a small sample of output positions (per-axis index and
weight tables, then gathers), and only the ones that survive are computed in full, so that
outputs of about a million elements take well under a few seconds. Conventions whose
per-axis tables coincide are computed once.

numpy only: no onnx, no onnxruntime; Upsample itself comes from :func:`onnx_upsample.upsample`.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import UpsampleError
from .._spec.dtypes import ElementType, element_type
from .._spec.rules import interpolated_axes
from ._grade import equal_elements, max_ulp

__all__ = ["Convention", "Explanation", "conventions", "explain"]

Array = npt.NDArray[Any]

# ---------------------------------------------------------------------------------------------
# The space of conventions
# ---------------------------------------------------------------------------------------------

# Order is preference: among conventions with as many departures, the earlier names win.
SIZE_RULES = ("trunc", "floor", "round", "ceil")
TRANSFORMS = (
    "asymmetric",
    "half_pixel",
    "align_corners",
    "pytorch_half_pixel",
    "half_pixel_symmetric",
    "tf_half_pixel_for_nn",
)
# tf_half_pixel_for_nn is defined by Resize for nearest only
LINEAR_TRANSFORMS = TRANSFORMS[:-1]
# the four of Resize, and round half to even (numpy's and TVM's `round`, not a Resize mode)
NEAREST_MODES = ("floor", "round_prefer_floor", "round_prefer_ceil", "ceil", "round_half_even")
# "scale": the given float32 scale (for align_corners: the integer output length, as ORT);
# "sizes": out/in, what a runtime uses after turning Upsample into Resize with `sizes`;
# "scaled_length": align_corners with the length in*scale (the ONNX reference evaluator).
SOURCES = ("scale", "sizes", "scaled_length")
ARITHMETICS = ("float32", "float64", "reciprocal")
COMBINATIONS = ("corner", "separable", "lerp", "float64")
INTEGER_RULES = ("trunc", "half_even", "half_away")
# (arithmetic, combination) pairs tried in linear mode: float64 throughout computes the
# coordinate in float64 too, and separable blends are paired with the arithmetics that
# separable kernels use (float32 division, PyTorch's reciprocal).
LINEAR_KERNELS = (
    ("float32", "corner"),
    ("float64", "corner"),
    ("reciprocal", "corner"),
    ("float32", "separable"),
    ("reciprocal", "separable"),
    ("float32", "lerp"),
    ("reciprocal", "lerp"),
    ("float64", "float64"),
)

_SIZE_WORDS = {
    "floor": "output size by exact floor (ONNX reference)",
    "round": "output size by round (TVM)",
    "ceil": "output size by ceil",
}
_SOURCE_WORDS = {
    "sizes": "scale out/in (Resize with sizes)",
    "scaled_length": "resized length in*scale (ONNX reference)",
}
_ARITHMETIC_WORDS = {"float64": "float64 arithmetic", "reciprocal": "reciprocal multiply (PyTorch)"}
_COMBINATION_WORDS = {
    "separable": "separable sum",
    "lerp": "separable lerp",
    "float64": "float64 throughout",
}
_INTEGER_WORDS = {
    "half_even": "integers rounded half to even instead of truncated",
    "half_away": "integers rounded half away from zero instead of truncated",
}

# A sample this large catches a convention that differs in one output of a few thousand with
# high probability; a miss costs only time (the full comparison rejects it).
SAMPLE_SIZE = 4096
EDGE_SAMPLES = 64
CLOSE_ULP = 32  # a different order or formula of the float sum; coordinates differ by far more
# Conventions computed in full when looking for the closest one (sorted by sampled gap).
CLOSE_CANDIDATES = 8
DEFAULT_MAX_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class Convention:
    """One way of computing ``Upsample``, named for people.

    Attributes
    ----------
    name : str
        Human words, e.g. ``"Resize half_pixel + round_prefer_floor"`` (an ONNX ``Resize``
        with that ``coordinate_transformation_mode`` and ``nearest_mode``), or ``"Upsample"``
        (ONNX ``Upsample`` 7/9/10 as onnxruntime 1.32 computes it).
    departures : tuple of str
        Short tags of what differs from ``Upsample`` (``"coordinate:half_pixel"``,
        ``"nearest_mode:round_prefer_floor"``, ``"arithmetic:reciprocal"``, ...); empty for
        ``Upsample`` itself.
    """

    name: str
    departures: tuple[str, ...]


@dataclass(frozen=True)
class Explanation:
    """What reproduces a runtime's ``Upsample`` output.

    Attributes
    ----------
    verdict : str
        ``"upsample"`` (equal to ONNX ``Upsample`` bit for bit), ``"convention"`` (another
        convention reproduces it exactly), ``"close"`` (no convention exact, the best within
        a few ULP) or ``"none"``.
    matches : tuple of str
        Names of the conventions that reproduce the output exactly, simplest first.
    best : str or None
        The convention to report: the first of ``matches``, or the closest for ``"close"``.
    max_ulp : int or None
        For ``"close"``: the largest gap, in units in the last place of the output type,
        between ``best`` and the runtime's output.
    summary : str
        One line for people.
    """

    verdict: str
    matches: tuple[str, ...]
    best: str | None
    max_ulp: int | None
    summary: str

    def to_dict(self) -> dict[str, Any]:
        """The explanation as plain JSON-able values (lists, strings, ints, None)."""
        return {
            "verdict": self.verdict,
            "matches": list(self.matches),
            "best": self.best,
            "max_ulp": self.max_ulp,
            "summary": self.summary,
        }


@dataclass(frozen=True)
class _Spec:
    """One convention as the choices that make it (defaults are Upsample's)."""

    mode: str
    transform: str = "asymmetric"
    source: str = "scale"
    arithmetic: str = "float32"
    rounding: str = "floor"
    combination: str = "corner"
    integers: str = "trunc"
    size: str = "trunc"

    @property
    def is_upsample(self) -> bool:
        return not self.departures

    @property
    def departures(self) -> tuple[str, ...]:
        tags = []
        if self.size != "trunc":
            tags.append(f"size:{self.size}")
        if self.transform != "asymmetric":
            tags.append(f"coordinate:{self.transform}")
        if self.mode == "nearest" and self.rounding != "floor":
            tags.append(f"nearest_mode:{self.rounding}")
        if self.source == "sizes":
            tags.append("scale:out/in")
        elif self.source == "scaled_length":
            tags.append("length:in*scale")
        if self.combination == "float64":
            # one choice: coordinate, weights and sum all in float64
            tags.append("float64-throughout")
        else:
            if self.arithmetic != "float32":
                tags.append(f"arithmetic:{self.arithmetic}")
            if self.combination != "corner":
                tags.append(f"sum:{self.combination}")
        if self.integers != "trunc":
            tags.append(f"integers:{self.integers.replace('_', '-')}")
        return tuple(tags)

    @property
    def rank(self) -> tuple[int, ...]:
        return (
            len(self.departures),
            SIZE_RULES.index(self.size),
            TRANSFORMS.index(self.transform),
            NEAREST_MODES.index(self.rounding),
            SOURCES.index(self.source),
            ARITHMETICS.index(self.arithmetic),
            COMBINATIONS.index(self.combination),
            INTEGER_RULES.index(self.integers),
        )

    @property
    def name(self) -> str:
        coordinate_details = []
        if self.source in _SOURCE_WORDS:
            coordinate_details.append(_SOURCE_WORDS[self.source])
        if self.combination != "float64" and self.arithmetic in _ARITHMETIC_WORDS:
            coordinate_details.append(_ARITHMETIC_WORDS[self.arithmetic])
        if self.combination in _COMBINATION_WORDS:
            coordinate_details.append(_COMBINATION_WORDS[self.combination])
        other_details = []
        if self.integers in _INTEGER_WORDS:
            other_details.append(_INTEGER_WORDS[self.integers])
        if self.size in _SIZE_WORDS:
            other_details.append(_SIZE_WORDS[self.size])
        # Upsample's coordinate is defined by a division; a reciprocal multiply is another
        # formula (PyTorch's), so it is named as the Resize it amounts to.
        upsample_like = (
            self.transform == "asymmetric"
            and (self.mode == "linear" or self.rounding == "floor")
            and (self.arithmetic != "reciprocal" or self.combination == "float64")
        )
        if upsample_like:
            only_coordinates = coordinate_details and not other_details
            base = "Upsample coordinates" if only_coordinates else "Upsample"
        elif self.mode == "nearest":
            base = f"Resize {self.transform} + {self.rounding}"
        else:
            base = f"Resize {self.transform} (linear)"
        return ", ".join([base, *coordinate_details, *other_details])

    def convention(self) -> Convention:
        return Convention(self.name, self.departures)


def _sources(transform: str) -> tuple[str, ...]:
    # align_corners does not use the scale; its second variant is the length it divides by
    return ("scale", "scaled_length") if transform == "align_corners" else ("scale", "sizes")


def _specs(mode: str, size: str, integer_output: bool) -> list[_Spec]:
    """Every convention tried for one size rule, simplest first."""
    specs = []
    if mode == "nearest":
        for transform in TRANSFORMS:
            for source in _sources(transform):
                for arithmetic in ARITHMETICS:
                    for rounding in NEAREST_MODES:
                        specs.append(_Spec(mode, transform, source, arithmetic, rounding,
                                           size=size))
    else:
        integer_rules = INTEGER_RULES if integer_output else ("trunc",)
        for transform in LINEAR_TRANSFORMS:
            for source in _sources(transform):
                for arithmetic, combination in LINEAR_KERNELS:
                    for integers in integer_rules:
                        specs.append(_Spec(mode, transform, source, arithmetic,
                                           combination=combination, integers=integers,
                                           size=size))
    specs.sort(key=lambda spec: spec.rank)
    return specs


def _mode_of(mode: object) -> str:
    if isinstance(mode, str) and mode in ("nearest", "linear"):
        return mode
    if isinstance(mode, str) and mode in ("bilinear", "trilinear"):  # legacy exporters' names
        return "linear"
    raise UpsampleError(
        f"mode is {mode!r}; expected 'nearest' or 'linear' ('bilinear' and 'trilinear' are "
        "read as 'linear')"
    )


def conventions(mode: str) -> tuple[Convention, ...]:
    """Every convention :func:`explain` can name for ONNX ``Upsample`` in ``mode``, simplest first.

    The conventions are combinations of: the output size rule (``trunc`` of the float32
    product as Upsample 7/9/10 in onnxruntime 1.32, ``floor`` of the exact product as the
    ONNX reference, ``round`` as TVM, ``ceil``); the ONNX ``Resize``
    ``coordinate_transformation_mode`` (``asymmetric`` is Upsample's, ``half_pixel``,
    ``align_corners``, ``pytorch_half_pixel``, ``half_pixel_symmetric``, and for nearest
    ``tf_half_pixel_for_nn``); the scale used in the coordinate (the given one or out/in, as
    after a conversion to ``Resize`` with ``sizes``; for ``align_corners`` the output length
    or in*scale); the coordinate arithmetic (float32 division as ORT, a reciprocal multiply
    as PyTorch, float64); for nearest, the ``nearest_mode`` (floor, round_prefer_floor,
    round_prefer_ceil, ceil); for linear, how the two-tap weights are combined (Upsample's
    float32 corner sum, separable ``a*w1 + b*w2`` innermost axis first, separable lerp
    ``a + (b-a)*t``, float64 throughout rounded once) and how integer results are rounded
    (truncated as Upsample, half to even, half away from zero).

    One call of :func:`explain` tries only the size rule that gives the output's shape and
    integer rounding only for integer types: at most 144 nearest and 240 linear conventions.

    Parameters
    ----------
    mode : {"nearest", "linear"}

    Returns
    -------
    tuple of Convention
        ``Upsample`` first.

    Raises
    ------
    UpsampleError
        For any other mode.
    """
    canonical = _mode_of(mode)
    specs = [spec for size in SIZE_RULES for spec in _specs(canonical, size, True)]
    specs.sort(key=lambda spec: spec.rank)
    return tuple(spec.convention() for spec in specs)


# ---------------------------------------------------------------------------------------------
# Output sizes
# ---------------------------------------------------------------------------------------------


def _size(rule: str, n_in: int, scale: np.float32) -> int:
    """One axis' output length under a size rule (trunc is Upsample's: see output_shape)."""
    if rule == "floor":
        numerator, denominator = float(scale).as_integer_ratio()
        return (n_in * numerator) // denominator
    product = float(np.float32(n_in) * scale)
    if rule == "round":  # half away from zero; the product is never negative
        return math.floor(product + 0.5)
    return math.ceil(product)


def _size_rule(
    x_shape: tuple[int, ...], scales: tuple[np.float32, ...], shape: tuple[int, ...]
) -> str | None:
    """The simplest size rule giving ``shape``, or None."""
    from .. import output_shape

    if len(shape) != len(x_shape):
        return None
    for rule in SIZE_RULES:
        if rule == "trunc":
            sizes = output_shape(x_shape, [float(s) for s in scales])
        else:
            sizes = tuple(_size(rule, n, s) for n, s in zip(x_shape, scales, strict=True))
        if sizes == shape:
            return rule
    return None


# ---------------------------------------------------------------------------------------------
# Per-axis tables
# ---------------------------------------------------------------------------------------------


def _coordinates(spec: _Spec, n_in: int, n_out: int, scale: np.float32) -> Array:
    """Source coordinate of every output index of one axis, unclamped, in the spec's arithmetic.

    Formulas and operation order follow onnxruntime's Resize (float32), PyTorch's
    ``area_pixel_compute_source_index`` (reciprocal) and the ONNX reference (float64).
    """
    wide = spec.arithmetic == "float64" or spec.combination == "float64"
    ftype: type[np.floating[Any]] = np.float64 if wide else np.float32
    reciprocal = spec.arithmetic == "reciprocal" and not wide
    o = np.arange(n_out, dtype=ftype)
    if n_out == 0 or n_in == 0:
        return o
    half, one = ftype(0.5), ftype(1)
    if spec.transform == "align_corners":
        length = ftype(scale) * ftype(n_in) if spec.source == "scaled_length" else ftype(n_out)
        if length == one:
            return np.zeros(n_out, dtype=ftype)
        if reciprocal:
            return o * (ftype(n_in - 1) / (length - one))
        return (o * ftype(n_in - 1)) / (length - one)
    if spec.source == "sizes":
        divisor = ftype(n_out) / ftype(n_in)
        factor = np.float32(n_in) / np.float32(n_out)
    else:
        divisor = ftype(scale)
        factor = np.float32(1.0 / float(scale))  # PyTorch: (float)(1.0 / (double)scale)

    def resized(v: Array) -> Array:
        return v * factor if reciprocal else v / divisor

    if spec.transform == "asymmetric":
        return resized(o)
    if spec.transform == "tf_half_pixel_for_nn":
        return resized(o + half)
    if spec.transform == "pytorch_half_pixel" and n_out == 1:
        return np.zeros(1, dtype=ftype)
    if spec.transform == "half_pixel_symmetric":
        width = divisor * ftype(n_in)
        offset = (ftype(n_in) / ftype(2)) * (one - ftype(n_out) / width)
        if ftype is np.float32 and not reciprocal:
            # ORT 1.32 computes the offset in float32 but the rest in double (its literal 0.5
            # is a double), and rounds the coordinate to float32 once
            double = np.float64(offset) + (o.astype(np.float64) + 0.5) / np.float64(divisor)
            return (double - 0.5).astype(np.float32)
        return (offset + resized(o + half)) - half
    return resized(o + half) - half


def _nearest_table(spec: _Spec, n_in: int, n_out: int, scale: np.float32) -> Array:
    """Input index read by each output index (clamped to [0, n_in-1])."""
    c = _coordinates(spec, n_in, n_out, scale)
    if spec.rounding == "ceil":
        index = np.ceil(c)
    elif spec.rounding == "round_half_even":
        index = np.rint(c)
    else:
        index = np.floor(c)
        fraction = c - index  # exact: both are floats of the same type
        if spec.rounding == "round_prefer_floor":
            index += fraction > 0.5
        elif spec.rounding == "round_prefer_ceil":
            index += fraction >= 0.5
    return np.clip(index, 0, max(n_in - 1, 0)).astype(np.int64)


def _linear_table(
    spec: _Spec, n_in: int, n_out: int, scale: np.float32
) -> tuple[Array, Array, Array, Array]:
    """``(lo, hi, w_lo, w_hi)`` of each output index: ORT Resize's taps and weights.

    The coordinate is clamped to ``[0, n_in-1]``; ``lo = trunc(c)``, ``hi = min(lo+1,
    n_in-1)``; ``lo`` weighs ``|c - hi|``, ``hi`` weighs ``|c - lo|``, both 0.5 where they
    coincide. Weights are float32 (computed in the coordinate's type, then rounded) except
    for float64 throughout.
    """
    c = _coordinates(spec, n_in, n_out, scale)
    ftype = c.dtype.type
    c = np.clip(c, ftype(0), ftype(max(n_in - 1, 0)))
    lo = np.minimum(c.astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    d_lo = np.abs(c - lo.astype(ftype))
    d_hi = np.abs(c - hi.astype(ftype))
    edge = lo == hi
    d_lo[edge] = 0.5
    d_hi[edge] = 0.5
    wtype = np.float64 if spec.combination == "float64" else np.float32
    return lo, hi, d_hi.astype(wtype), d_lo.astype(wtype)


# ---------------------------------------------------------------------------------------------
# Comparison: bits, NaN, ULP
# ---------------------------------------------------------------------------------------------


def _is_float(etype: ElementType) -> bool:
    return etype.name in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _same(a: Array, b: Array, floating: bool) -> Array:
    """Elementwise equality: bitwise, except that any NaN equals any NaN (-0.0 != +0.0)."""
    if not floating:
        with np.errstate(all="ignore"):
            return np.asarray(a == b, dtype=bool)
    return equal_elements(a, b)


# ---------------------------------------------------------------------------------------------
# Evaluation of one convention at some output positions
# ---------------------------------------------------------------------------------------------

Positions = tuple[Array, ...]
Tables = tuple[Any, ...]  # per axis: None (identity), an index array, or (lo, hi, w_lo, w_hi)


def _to_integer(values: Array, dtype: np.dtype, rule: str) -> Array:
    """Round float results by ``rule``, then saturate to the integer type's range."""
    if rule == "trunc":
        rounded = np.trunc(values)
    elif rule == "half_even":
        rounded = np.rint(values)
    else:
        magnitude = np.abs(values)
        whole = np.floor(magnitude)
        # floor(|v| + 0.5) would round 0.49999997 up in float32: compare the fraction instead
        rounded = np.copysign(whole + (magnitude - whole >= 0.5), values)
    wide = rounded.astype(np.float64)
    info = np.iinfo(dtype)
    # float(info.max) can round up (2**63 for int64): ">=" catches every value beyond range
    high = wide >= float(info.max)
    low = wide <= float(info.min)
    result = np.where(high | low | np.isnan(wide), 0.0, wide).astype(dtype)
    result[high] = info.max
    result[low] = info.min
    return result


class _Case:
    """One call of :func:`explain`: the arrays, the per-axis facts, and the caches."""

    def __init__(self, x: Array, theirs: Array, scales: tuple[np.float32, ...], mode: str,
                 etype: ElementType) -> None:
        self.x = x
        self.theirs = theirs
        self.scales = scales
        self.mode = mode
        self.etype = etype
        self.floating = _is_float(etype)
        self.shape: tuple[int, ...] = theirs.shape
        self.linear_axes = set(interpolated_axes(scales)) if mode == "linear" else set()
        self.linear_axes |= {a for a, (i, o) in enumerate(zip(x.shape, self.shape, strict=True))
                             if i != o}
        self._table_ids: dict[bytes, int] = {}
        self._tables: dict[tuple[int, int], Any] = {}
        self._partial: dict[tuple[object, ...], list[Array]] = {}
        self.groups: list[_Group] = []

    def _active(self, spec: _Spec, axis: int) -> bool:
        n_in, n_out = self.x.shape[axis], self.shape[axis]
        if self.mode == "linear":
            return axis in self.linear_axes
        # Resize and Upsample map a scale-1 axis one to one, without the coordinate formula
        if spec.source == "sizes":
            return n_in != n_out
        return n_in != n_out or float(self.scales[axis]) != 1.0

    def tables(self, spec: _Spec) -> tuple[tuple[int, ...], Tables]:
        """The spec's per-axis tables, and ids equal for equal tables (to evaluate once)."""
        ids: list[int] = []
        tables: list[Any] = []
        for axis, (n_in, n_out) in enumerate(zip(self.x.shape, self.shape, strict=True)):
            if not self._active(spec, axis):
                ids.append(-1)
                tables.append(None)
                continue
            scale = self.scales[axis]
            table: Any
            if self.mode == "nearest":
                table = _nearest_table(spec, n_in, n_out, scale)
                digest = hashlib.blake2b(table.tobytes(), digest_size=16)
            else:
                table = _linear_table(spec, n_in, n_out, scale)
                digest = hashlib.blake2b(digest_size=16)
                for part in table:
                    digest.update(part.dtype.str.encode())
                    digest.update(part.tobytes())
            key = digest.digest() + axis.to_bytes(4, "little")
            table_id = self._table_ids.setdefault(key, len(self._table_ids))
            self._tables.setdefault((axis, table_id), table)
            ids.append(table_id)
            tables.append(self._tables[(axis, table_id)])
        return tuple(ids), tuple(tables)

    def evaluate(self, spec: _Spec, ids: tuple[int, ...], tables: Tables,
                 positions: Positions, where: str) -> Array:
        """The spec's output at ``positions`` (per-axis index arrays that broadcast)."""
        with np.errstate(all="ignore"):
            if self.mode == "nearest" or all(table is None for table in tables):
                index = tuple(
                    pos if table is None else table[pos]
                    for pos, table in zip(positions, tables, strict=True)
                )
                return self.x[index]
            # float results are shared by the integer rounding variants
            key = (where, ids, spec.combination)
            parts = self._partial.get(key)
            if parts is None:
                parts = [self._blend(part, spec.combination, tables, positions)
                         for part in self._real_parts()]
                if where != "sample":
                    # full-size results are large: keep only the latest one
                    self._partial = {k: v for k, v in self._partial.items() if k[0] == "sample"}
                self._partial[key] = parts
            if self.etype.parts == 2:
                result = np.empty(parts[0].shape, dtype=self.x.dtype)
                result.real = parts[0]
                result.imag = parts[1]
                return result
            if self.etype.is_integer:
                return _to_integer(parts[0], self.x.dtype, spec.integers)
            return parts[0].astype(self.x.dtype)

    def _real_parts(self) -> list[Array]:
        if self.etype.parts == 2:
            return [self.x.real, self.x.imag]
        return [self.x]

    def _blend(self, x: Array, combination: str, tables: Tables, positions: Positions) -> Array:
        """Linear blend of one real array: corner sum, separable sums, or lerp."""
        accumulator = self.etype.accumulator
        assert accumulator is not None
        acc = np.dtype(np.float64) if combination == "float64" else accumulator
        axes = [axis for axis, table in enumerate(tables) if table is not None]
        taps = {
            axis: tuple(part[positions[axis]] for part in tables[axis]) for axis in axes
        }
        base = list(positions)

        def gather(chosen: dict[int, Array]) -> Array:
            index = tuple(chosen.get(axis, pos) for axis, pos in enumerate(base))
            return x[index].astype(acc)

        if combination == "corner":
            # Upsample's order (ORT 1.32): corners innermost axis fastest, each weight the
            # float32 product of per-axis weights innermost first, summed left to right
            total: Array | None = None
            for corner in itertools.product(*(((taps[a][0], taps[a][2]), (taps[a][1], taps[a][3]))
                                              for a in axes)):
                chosen = {a: index for a, (index, _) in zip(axes, corner, strict=True)}
                weight = corner[-1][1] if corner else np.float32(1)
                for _, w in reversed(corner[:-1]):
                    weight = weight * w
                term = np.asarray(weight).astype(acc) * gather(chosen)
                total = term if total is None else total + term
            assert total is not None
            return total
        # Separable kernels (PyTorch, TF) blend the innermost axis first; the ONNX reference
        # goes axis by axis from the outermost. The axis blended last is the top of the
        # recursion.
        order = list(reversed(axes)) if combination == "float64" else axes

        def blend(level: int, chosen: dict[int, Array]) -> Array:
            if level == len(order):
                return gather(chosen)
            axis = order[level]
            lo, hi, w_lo, w_hi = taps[axis]
            a = blend(level + 1, {**chosen, axis: lo})
            b = blend(level + 1, {**chosen, axis: hi})
            if combination == "lerp":
                return a + (b - a) * w_hi.astype(acc)
            return a * w_lo.astype(acc) + b * w_hi.astype(acc)

        return blend(0, {})


def _sample(shape: tuple[int, ...]) -> tuple[Array, Positions]:
    """Flat indices of a sample of output positions, and the per-axis indices of each.

    Random positions plus positions on the first and the last index of every axis, where
    the conventions' clamps and edge weights differ.
    """
    size = math.prod(shape)
    if not shape:
        return np.zeros(1, dtype=np.int64), ()
    if size <= SAMPLE_SIZE:
        flat = np.arange(size, dtype=np.int64)
    else:
        rng = np.random.default_rng(0)
        chunks = [rng.integers(0, size, SAMPLE_SIZE), np.array([0, size - 1])]
        for axis, n in enumerate(shape):
            for edge in (0, n - 1):
                multi = list(np.unravel_index(rng.integers(0, size, EDGE_SAMPLES), shape))
                multi[axis] = np.full(EDGE_SAMPLES, edge)
                chunks.append(np.ravel_multi_index(tuple(multi), shape))
        flat = np.unique(np.concatenate(chunks).astype(np.int64))
    return flat, tuple(np.asarray(p, dtype=np.int64) for p in np.unravel_index(flat, shape))


def _open_mesh(shape: tuple[int, ...]) -> Positions:
    rank = len(shape)
    return tuple(
        np.arange(n, dtype=np.int64).reshape([n if a == axis else 1 for a in range(rank)])
        for axis, n in enumerate(shape)
    )


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------


def _array(value: object, name: str) -> Array:
    if value is None:
        raise TypeError(f"{name} is None; expected an array (anything numpy.asarray accepts)")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise UpsampleError(f"{name} cannot be read as an array ({error}); expected an "
                            "array of one element type") from None
    if array.dtype.kind not in "USO" and array.dtype.byteorder not in "=|":
        array = array.astype(array.dtype.newbyteorder("="))
    # not np.ascontiguousarray: it turns a rank-0 array into rank 1
    return array if array.flags.c_contiguous else array.copy(order="C")


def _scales(scales: object, rank: int) -> tuple[np.float32, ...]:
    if isinstance(scales, np.ndarray):
        values = list(scales.reshape(-1))
    elif isinstance(scales, Sequence) and not isinstance(scales, str | bytes):
        values = list(scales)
    else:
        raise TypeError(f"scales is {scales!r}; expected a sequence of numbers, one per axis "
                        "of x")
    if len(values) != rank:
        raise UpsampleError(f"scales has {len(values)} value(s) {values} but x has rank {rank};"
                            " expected one scale per axis of x")
    result = []
    for axis, value in enumerate(values):
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise TypeError(f"scales[{axis}] is {value!r}; expected a number >= 1")
        with np.errstate(over="ignore"):
            as_f32 = np.float32(float(value))
        if not np.isfinite(as_f32) or as_f32 < 1:
            raise UpsampleError(f"scales[{axis}] is {value!r}; expected a finite number >= 1 "
                                "(Upsample only enlarges)")
        result.append(as_f32)
    return tuple(result)


def _max_elements(value: object) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"max_elements is {value!r}; expected an integer >= 0")
    if value < 0:
        raise UpsampleError(f"max_elements is {value!r}; expected an integer >= 0")
    return int(value)


def _check_types(x: Array, theirs: Array, mode: str) -> ElementType:
    etype = element_type(x.dtype)
    # text compares by value: runtimes return ONNX strings as str, bytes or object arrays
    text = x.dtype.kind in "USO" and theirs.dtype.kind in "USO"
    if theirs.dtype != x.dtype and not text:
        raise UpsampleError(
            f"theirs has element type {theirs.dtype.name!r} but x has {x.dtype.name!r}; "
            "expected the runtime's output in x's element type (Upsample keeps it)"
        )
    if mode == "linear" and not etype.linear_ok:
        raise UpsampleError(f"mode is 'linear' but x has element type {etype.name}, for which "
                            "Upsample defines nearest only; expected mode='nearest'")
    return etype


# ---------------------------------------------------------------------------------------------
# explain
# ---------------------------------------------------------------------------------------------


def _shape_summary(shape: tuple[int, ...], scales: tuple[np.float32, ...],
                   theirs: tuple[int, ...]) -> str:
    """Why no size rule gives ``theirs``; names the axes a runtime left unresized, the
    usual cause (Resize kernels that treat the first two axes as batch and channel)."""
    expected = tuple(_size("trunc", n, s) for n, s in zip(shape, scales, strict=True))
    if len(theirs) == len(shape):
        kept = [a for a, (n, t, e) in enumerate(zip(shape, theirs, expected, strict=True))
                if t == n != e]
        resized_as_expected = all(t == e or (a in kept)
                                  for a, (t, e) in enumerate(zip(theirs, expected, strict=True)))
        if kept and resized_as_expected:
            why = (" (a Resize kernel that resizes only spatial axes, taking the first ones "
                   "for batch and channel)" if kept == list(range(len(kept))) else "")
            return (f"output shape {theirs} leaves axes {kept} at the input's length: the "
                    f"runtime does not resize them{why}")
    return (f"output shape {theirs} matches no size rule tried ({', '.join(SIZE_RULES)}) for "
            f"input shape {shape} and scales {[float(s) for s in scales]}")


def explain(
    x: npt.ArrayLike,
    theirs: npt.ArrayLike,
    scales: Sequence[float] | npt.NDArray[np.number[Any]],
    mode: str = "nearest",
    *,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> Explanation:
    """Name the convention that reproduces a runtime's ONNX ``Upsample`` output.

    ``theirs`` is compared with ONNX ``Upsample`` (versions 7, 9, 10) as onnxruntime 1.32
    computes it (:func:`onnx_upsample.upsample`), then with the conventions of
    :func:`conventions`: ONNX ``Resize`` coordinate transformations and nearest modes,
    PyTorch's reciprocal multiply, float64 arithmetic, separable blends, other output-size
    and integer-rounding rules. Only the size rule that gives ``theirs.shape`` is tried.

    Equality is bitwise, except that any NaN equals any NaN (-0.0 and +0.0 differ); complex
    numbers compare real and imaginary parts; strings, bools and objects compare with ``==``.

    Parameters
    ----------
    x : array_like
        The input given to the runtime.
    theirs : array_like
        The runtime's output, in x's element type.
    scales : sequence of float or array
        One scale per axis of x, each finite and >= 1 (converted to float32, as ONNX stores
        them).
    mode : {"nearest", "linear"}
        ``"bilinear"`` and ``"trilinear"`` are read as ``"linear"``.
    max_elements : int, optional
        Outputs with more elements are not explained (verdict ``"none"``).

    Returns
    -------
    Explanation
        ``verdict`` is ``"upsample"`` when ``theirs`` equals Upsample, ``"convention"`` when
        another convention reproduces it exactly, ``"close"`` when none does but one is within
        4 ULP (floating types), else ``"none"``.

    Raises
    ------
    TypeError
        For arguments of the wrong kind: None for an array, scales that are not a sequence
        of numbers (bools and text included), a ``max_elements`` that is not an integer.
    UpsampleError
        For wrong values: arrays numpy cannot read, an element type
        Upsample does not define, ``theirs`` of another element type, a mode other than
        nearest/linear (or linear for bool, str, bytes, object), scales that are not one
        finite number >= 1 per axis, a negative ``max_elements``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(20, dtype=np.float32).reshape(4, 5)
    >>> theirs = x[[0, 0, 1, 2, 2, 3]][:, [0, 0, 1, 2, 2, 3, 3, 4]]
    >>> explain(x, theirs, [1.5, 1.7]).summary
    'matches Resize half_pixel + round_prefer_floor, not Upsample'
    """
    x_array = _array(x, "x")
    theirs_array = _array(theirs, "theirs")
    canonical_mode = _mode_of(mode)
    f32_scales = _scales(scales, x_array.ndim)
    limit = _max_elements(max_elements)
    etype = _check_types(x_array, theirs_array, canonical_mode)

    if theirs_array.size > limit:
        return Explanation("none", (), None, None,
                           f"output has {theirs_array.size} elements, more than max_elements="
                           f"{limit}: too large to explain; pass a crop or a larger "
                           "max_elements")
    rule = _size_rule(x_array.shape, f32_scales, theirs_array.shape)
    if rule is None:
        return Explanation("none", (), None, None, _shape_summary(
            x_array.shape, f32_scales, theirs_array.shape))
    if theirs_array.size == 0:
        # nothing to compare: every convention with this size rule gives the same output
        names = tuple(spec.name for spec in _specs(canonical_mode, rule, etype.is_integer))
        verdict = "upsample" if rule == "trunc" else "convention"
        summary = ("matches Upsample (onnxruntime 1.32) bit for bit (empty output)"
                   if rule == "trunc" else f"matches {names[0]}, not Upsample (empty output)")
        return Explanation(verdict, names, names[0], None, summary)
    case = _Case(x_array, theirs_array, f32_scales, canonical_mode, etype)
    ours: Array | None = None
    if rule == "trunc":
        from .. import upsample

        ours = upsample(x_array, [float(s) for s in f32_scales], canonical_mode)
        if _same(ours, theirs_array, case.floating).all():
            names = _exact_matches(case, rule, ours)
            return Explanation("upsample", names, names[0], None,
                               "matches Upsample (onnxruntime 1.32) bit for bit")
    names = _exact_matches(case, rule, ours)
    if names:
        return Explanation("convention", names, names[0], None,
                           f"matches {names[0]}, not Upsample")
    narrowed = _narrowed_to_float32(case, rule)
    if narrowed is not None:
        return Explanation("convention", (narrowed,), narrowed, None,
                           f"matches {narrowed}, not Upsample")
    if case.floating:
        close = _closest(case, rule, ours)
        if close is not None:
            name, gap = close
            return Explanation("close", (), name, gap,
                               f"closest to {name}, within {gap} ULP; no convention tried "
                               "reproduces it exactly")
    return Explanation("none", (), None, None, "matches no convention tried (noise or a bug)")


NARROWED = "Upsample on the input rounded to float32 (the element type narrowed)"
# wider than float32: a runtime that computes them in float32 loses digits
_NARROWABLE = frozenset("float64 int32 int64 uint32 uint64".split())


NARROWED_INT32 = ("Upsample on the input cast to int32 (wrapping), then to float32 (the "
                  "element type narrowed)")


def _narrowed_to_float32(case: _Case, rule: str) -> str | None:
    """Runtimes without kernels for wide types convert them to float32 and back; some
    first squeeze 64-bit integers into int32 (as TensorRT and OpenVINO do)."""
    if rule != "trunc" or case.x.dtype.name not in _NARROWABLE:
        return None
    routes = [(NARROWED, case.x)]
    if case.x.dtype.itemsize == 8 and case.x.dtype.kind in "iu":
        routes.append((NARROWED_INT32, case.x.astype(np.int32)))
    for name, source in routes:
        if _same(_through_float32(source, case), case.theirs, case.floating).all():
            return name
    return None


def _through_float32(source: Array, case: _Case) -> Array:
    from .. import upsample

    with np.errstate(invalid="ignore", over="ignore"):
        narrow = upsample(source.astype(np.float32), [float(s) for s in case.scales],
                          case.mode)
        if case.x.dtype.kind in "iu":
            info = np.iinfo(case.x.dtype)
            # float32 cannot hold the type's max: clip below 2**bits, then convert
            top = np.nextafter(np.float32(info.max), np.float32(0))
            narrow = np.clip(narrow, np.float32(info.min), top)
        return narrow.astype(case.x.dtype)


@dataclass
class _Group:
    """Conventions whose tables and blend coincide: they give the same output."""

    specs: list[_Spec]
    ids: tuple[int, ...]
    tables: Tables
    sample_gap: int | None = None
    sample_exact: bool = False


def _groups(case: _Case, rule: str) -> list[_Group]:
    groups: dict[tuple[object, ...], _Group] = {}
    for spec in _specs(case.mode, rule, case.etype.is_integer):
        ids, tables = case.tables(spec)
        key: tuple[object, ...] = (ids,) if case.mode == "nearest" else (
            ids, spec.combination, spec.integers)
        if key in groups:
            groups[key].specs.append(spec)
        else:
            groups[key] = _Group([spec], ids, tables)
    return list(groups.values())  # in order of each group's simplest spec


def _result(case: _Case, group: _Group, positions: Positions, where: str,
            ours: Array | None, flat: Array | None) -> Array:
    """A group's output: Upsample's own result for Upsample's group, else evaluated."""
    if ours is not None and any(spec.is_upsample for spec in group.specs):
        return ours if flat is None else ours.reshape(-1)[flat]
    return case.evaluate(group.specs[0], group.ids, group.tables, positions, where)


def _sampled_groups(case: _Case, rule: str, ours: Array | None) -> list[_Group]:
    """Every group, with whether it is exact on the sample and its sampled ULP gap."""
    groups = _groups(case, rule)
    flat, positions = _sample(case.shape)
    expected = case.theirs.reshape(-1)[flat]
    for group in groups:
        got = _result(case, group, positions, "sample", ours, flat)
        group.sample_exact = bool(_same(got, expected, case.floating).all())
        if case.floating:
            group.sample_gap = 0 if group.sample_exact else max_ulp(got, expected)
    return groups


def _exact_matches(case: _Case, rule: str, ours: Array | None) -> tuple[str, ...]:
    """Names of every convention tried that reproduces ``theirs`` exactly, simplest first."""
    groups = _sampled_groups(case, rule, ours)
    case.groups = groups
    mesh = _open_mesh(case.shape)
    names: list[_Spec] = []
    # groups that differ only in integer rounding share one blend: evaluate them in a row
    passing = sorted((g for g in groups if g.sample_exact),
                     key=lambda g: (g.ids, g.specs[0].combination))
    for group in passing:
        got = _result(case, group, mesh, "full", ours, None)
        if _same(got, case.theirs, case.floating).all():
            names.extend(group.specs)
        elif case.floating:
            group.sample_gap = max_ulp(got, case.theirs)  # now the full gap
            group.sample_exact = False
    names.sort(key=lambda spec: spec.rank)
    return tuple(spec.name for spec in names)


def _closest(case: _Case, rule: str, ours: Array | None) -> tuple[str, int] | None:
    """The convention with the smallest full ULP gap, if it is at most CLOSE_ULP."""
    candidates = [g for g in case.groups if g.sample_gap is not None and g.sample_gap <= CLOSE_ULP]
    candidates.sort(key=lambda g: (g.sample_gap, g.specs[0].rank))
    mesh = _open_mesh(case.shape)
    best: tuple[int, tuple[int, ...], str] | None = None
    for group in candidates[:CLOSE_CANDIDATES]:
        got = _result(case, group, mesh, "full", ours, None)
        gap = max_ulp(got, case.theirs)
        choice = (gap, group.specs[0].rank, group.specs[0].name)
        if gap <= CLOSE_ULP and (best is None or choice < best):
            best = choice
    return None if best is None else (best[2], best[0])

