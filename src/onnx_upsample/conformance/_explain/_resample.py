"""Each convention's output: per-axis index and weight tables, then gathers and blends.

A convention's output is computed at some output positions only (a sample, or every one),
from per-axis tables: for nearest, the input index each output index reads; for linear, the
two input indices and their weights. Where a convention computes Upsample's own coordinate
the tables are :func:`onnx_upsample._spec.rules.nearest_indices` and
:func:`~onnx_upsample._spec.rules.linear_taps`; the other coordinates follow onnxruntime's
``Resize`` (float32), PyTorch's ``area_pixel_compute_source_index`` (reciprocal multiply)
and the ONNX reference evaluator (float64).
"""

from __future__ import annotations

import hashlib
import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._spec.dtypes import ElementType
from ..._spec.rules import interpolated_axes, linear_taps, nearest_indices
from ._conventions import Recipe

__all__ = ["Case", "Positions", "fma32", "open_mesh", "to_integer"]

Array = npt.NDArray[Any]
Positions = tuple[Array, ...]
Tables = tuple[Any, ...]  # per axis: None (identity), an index array, or (lo, hi, w_lo, w_hi)


# ---------------------------------------------------------------------------------------------
# Per-axis tables
# ---------------------------------------------------------------------------------------------


def _coordinates(recipe: Recipe, n_in: int, n_out: int, scale: np.float32) -> Array:
    """Source coordinate of every output index of one axis, unclamped, in the recipe's
    arithmetic (for every coordinate but Upsample's own, which comes from the spec)."""
    wide = recipe.arithmetic == "float64" or recipe.combination == "float64"
    ftype: type[np.floating[Any]] = np.float64 if wide else np.float32
    reciprocal = recipe.arithmetic == "reciprocal" and not wide
    o = np.arange(n_out, dtype=ftype)
    if n_out == 0 or n_in == 0:
        return o
    half, one = ftype(0.5), ftype(1)
    if recipe.transform == "align_corners":
        length = ftype(scale) * ftype(n_in) if recipe.source == "scaled_length" else ftype(n_out)
        if length == one:
            return np.zeros(n_out, dtype=ftype)
        if reciprocal:
            return o * (ftype(n_in - 1) / (length - one))
        return (o * ftype(n_in - 1)) / (length - one)
    if recipe.source == "sizes":
        divisor = ftype(n_out) / ftype(n_in)
        factor = np.float32(n_in) / np.float32(n_out)
    else:
        divisor = ftype(scale)
        factor = np.float32(1.0 / float(scale))  # PyTorch: (float)(1.0 / (double)scale)

    def resized(v: Array) -> Array:
        return v * factor if reciprocal else v / divisor

    if recipe.transform == "asymmetric":
        return resized(o)
    if recipe.transform == "tf_half_pixel_for_nn":
        return resized(o + half)
    if recipe.transform == "pytorch_half_pixel" and n_out == 1:
        return np.zeros(1, dtype=ftype)
    if recipe.transform == "half_pixel_symmetric":
        width = divisor * ftype(n_in)
        offset = (ftype(n_in) / ftype(2)) * (one - ftype(n_out) / width)
        if ftype is np.float32 and not reciprocal:
            # ORT 1.32 computes the offset in float32 but the rest in double (its literal 0.5
            # is a double), and rounds the coordinate to float32 once
            double = np.float64(offset) + (o.astype(np.float64) + 0.5) / np.float64(divisor)
            return (double - 0.5).astype(np.float32)
        return (offset + resized(o + half)) - half
    return resized(o + half) - half


def nearest_table(recipe: Recipe, n_in: int, n_out: int, scale: np.float32) -> Array:
    """Input index read by each output index (clamped to [0, n_in-1])."""
    if recipe.upsample_coordinates:
        return nearest_indices(n_in, n_out, scale)
    if (recipe.arithmetic == "reciprocal" and recipe.transform == "asymmetric"
            and recipe.rounding == "floor" and n_out in (n_in, 2 * n_in)):
        # PyTorch's nearest (ATen's nearest_idx) skips its arithmetic where the length is
        # unchanged (identity) or doubled (o >> 1)
        o = np.arange(n_out, dtype=np.int64)
        return o if n_out == n_in else o >> 1
    c = _coordinates(recipe, n_in, n_out, scale)
    if recipe.rounding == "ceil":
        index = np.ceil(c)
    elif recipe.rounding == "round_half_even":
        index = np.rint(c)
    else:
        index = np.floor(c)
        fraction = c - index  # exact: both are floats of the same type
        if recipe.rounding == "round_prefer_floor":
            index += fraction > 0.5
        elif recipe.rounding == "round_prefer_ceil":
            index += fraction >= 0.5
    return np.clip(index, 0, max(n_in - 1, 0)).astype(np.int64)


def linear_table(
    recipe: Recipe, n_in: int, n_out: int, scale: np.float32
) -> tuple[Array, Array, Array, Array]:
    """``(lo, hi, w_lo, w_hi)`` of each output index: the taps and weights of ORT's Resize.

    The coordinate is clamped to ``[0, n_in-1]``; ``lo = trunc(c)``, ``hi = min(lo+1,
    n_in-1)``; ``lo`` weighs ``|c - hi|``, ``hi`` weighs ``|c - lo|``, both 0.5 where they
    coincide (Upsample's rule, :func:`~onnx_upsample._spec.rules.linear_taps`, applied to
    another coordinate). Weights are float32 (computed in the coordinate's type, then
    rounded) except for float64 throughout.
    """
    if recipe.upsample_coordinates:
        return linear_taps(n_in, n_out, scale)
    c = _coordinates(recipe, n_in, n_out, scale)
    ftype = c.dtype.type
    c = np.clip(c, ftype(0), ftype(max(n_in - 1, 0)))
    lo = np.minimum(c.astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    d_lo = np.abs(c - lo.astype(ftype))
    d_hi = np.abs(c - hi.astype(ftype))
    edge = lo == hi
    d_lo[edge] = 0.5
    d_hi[edge] = 0.5
    wtype = np.float64 if recipe.combination == "float64" else np.float32
    return lo, hi, d_hi.astype(wtype), d_lo.astype(wtype)


# ---------------------------------------------------------------------------------------------
# Evaluation of one convention at some output positions
# ---------------------------------------------------------------------------------------------


def to_integer(values: Array, dtype: np.dtype, rule: str) -> Array:
    """Round float results by ``rule``, then saturate to the integer type's range (for
    ``"x86"``: truncate, and put the type's minimum where a result is beyond its range)."""
    if rule in ("trunc", "x86"):
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
    if rule == "x86":
        # info.max + 1 and info.min are powers of two: exact as floats
        beyond = (wide >= float(info.max + 1)) | (wide < float(info.min)) | np.isnan(wide)
        result[beyond] = info.min
    return result


def fma32(a: Array, b: Array, c: Array) -> Array:
    """``a*b + c`` rounded once to float32 (a fused multiply-add), for float32 arrays.

    The product is exact in float64 (24 + 24 significant bits); the sum ``s`` and its exact
    error (Knuth's TwoSum) give ``a*b + c`` exactly, and ``s`` stepped one ULP towards the
    error where it is inexact and even is the sum rounded to odd in float64, whose rounding
    to float32 is the correctly rounded result (53 >= 24 + 2 bits: Boldo and Melquiond).
    Signed zeros follow float64's, which are fma's; infinities and NaN pass through.
    """
    wide_a = np.asarray(a, dtype=np.float32).astype(np.float64)
    wide_b = np.asarray(b, dtype=np.float32).astype(np.float64)
    wide_c = np.asarray(c, dtype=np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        product = wide_a * wide_b
        total = np.asarray(product + wide_c)
        virtual = total - product
        error = (product - (total - virtual)) + (wide_c - virtual)
        inexact_even = np.isfinite(error) & (error != 0) & ((total.view(np.int64) & 1) == 0)
        if inexact_even.any():
            towards = np.where(error > 0, np.inf, -np.inf)
            total = np.where(inexact_even, np.nextafter(total, towards), total)
        return total.astype(np.float32)


def open_mesh(shape: tuple[int, ...]) -> Positions:
    """Per-axis index arrays that broadcast to every position of ``shape``."""
    rank = len(shape)
    return tuple(
        np.arange(n, dtype=np.int64).reshape([n if a == axis else 1 for a in range(rank)])
        for axis, n in enumerate(shape)
    )


class Case:
    """One call of :func:`explain`: the arrays, the per-axis facts, and the caches."""

    def __init__(self, x: Array, theirs: Array, scales: tuple[np.float32, ...], mode: str,
                 etype: ElementType) -> None:
        self.x = x
        self.theirs = theirs
        self.scales = scales
        self.mode = mode
        self.etype = etype
        self.floating = etype.is_float
        self.shape: tuple[int, ...] = theirs.shape
        self.linear_axes = set(interpolated_axes(scales)) if mode == "linear" else set()
        self.linear_axes |= {a for a, (i, o) in enumerate(zip(x.shape, self.shape, strict=True))
                             if i != o}
        self._table_ids: dict[bytes, int] = {}
        self._tables: dict[tuple[int, int], Any] = {}
        self._partial: dict[tuple[object, ...], list[Array]] = {}
        self._by_choices: dict[tuple[object, ...], tuple[tuple[int, ...], Tables]] = {}

    def _active(self, recipe: Recipe, axis: int) -> bool:
        n_in, n_out = self.x.shape[axis], self.shape[axis]
        if self.mode == "linear":
            return axis in self.linear_axes
        # Resize and Upsample map a scale-1 axis one to one, without the coordinate formula
        if recipe.source == "sizes":
            return n_in != n_out
        return n_in != n_out or float(self.scales[axis]) != 1.0

    def tables(self, recipe: Recipe) -> tuple[tuple[int, ...], Tables]:
        """The recipe's per-axis tables, and ids equal for equal tables (to evaluate once)."""
        # only the choices of the coordinate and its rounding make the tables
        key = (recipe.transform, recipe.source, recipe.arithmetic, recipe.rounding,
               recipe.combination == "float64", recipe.upsample_coordinates)
        made = self._by_choices.get(key)
        if made is None:
            made = self._by_choices[key] = self._make_tables(recipe)
        return made

    def _make_tables(self, recipe: Recipe) -> tuple[tuple[int, ...], Tables]:
        ids: list[int] = []
        tables: list[Any] = []
        for axis, (n_in, n_out) in enumerate(zip(self.x.shape, self.shape, strict=True)):
            if not self._active(recipe, axis):
                ids.append(-1)
                tables.append(None)
                continue
            scale = self.scales[axis]
            table: Any
            if self.mode == "nearest":
                table = nearest_table(recipe, n_in, n_out, scale)
                digest = hashlib.blake2b(table.tobytes(), digest_size=16)
            else:
                table = linear_table(recipe, n_in, n_out, scale)
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

    def evaluate(self, recipe: Recipe, ids: tuple[int, ...], tables: Tables,
                 positions: Positions, where: str) -> Array:
        """The recipe's output at ``positions`` (per-axis index arrays that broadcast)."""
        with np.errstate(all="ignore"):
            if self.mode == "nearest" or all(table is None for table in tables):
                index = tuple(
                    pos if table is None else table[pos]
                    for pos, table in zip(positions, tables, strict=True)
                )
                return self.x[index]
            # float results are shared by the integer rounding variants
            key = (where, ids, recipe.combination)
            parts = self._partial.get(key)
            if parts is None:
                parts = [self._blend(part, recipe.combination, tables, positions)
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
                return to_integer(parts[0], self.x.dtype, recipe.integers)
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

        if combination in ("corner", "fma"):
            # Upsample's order (ORT 1.32): corners innermost axis fastest, each weight the
            # float32 product of per-axis weights innermost first, summed left to right
            terms = []
            for corner in itertools.product(*(((taps[a][0], taps[a][2]), (taps[a][1], taps[a][3]))
                                              for a in axes)):
                chosen = {a: index for a, (index, _) in zip(axes, corner, strict=True)}
                weight = corner[-1][1] if corner else np.float32(1)
                for _, w in reversed(corner[:-1]):
                    weight = weight * w
                terms.append((np.asarray(weight).astype(acc), gather(chosen)))
            if combination == "fma":
                # GCC's aarch64 contraction: the first product fused into the first addition
                # (the second product rounded), each later one fused into the running sum
                assert acc == np.float32 and len(terms) >= 2
                (w1, v1), (w2, v2) = terms[:2]
                total = fma32(w1, v1, w2 * v2)
                for weight, value in terms[2:]:
                    total = fma32(weight, value, total)
                return total
            total = terms[0][0] * terms[0][1]
            for weight, value in terms[1:]:
                total = total + weight * value
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
