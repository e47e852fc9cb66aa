"""Per-axis index and weight tables for one call, built once from :mod:`.._rules`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._rules import IndexArray, WeightArray, interpolated_axes, linear_taps, nearest_indices


@dataclass(frozen=True)
class LinearAxis:
    """Taps of one interpolated axis: output o blends x[lo[o]]*w_lo[o] and x[hi[o]]*w_hi[o]."""

    axis: int
    lo: IndexArray
    hi: IndexArray
    w_lo: WeightArray
    w_hi: WeightArray


def nearest_tables(
    in_shape: tuple[int, ...], out_shape: tuple[int, ...], scales: tuple[np.float32, ...]
) -> list[IndexArray | None]:
    """One input-index array per axis; None where the axis is copied unchanged (scale 1)."""
    return [
        None if s == 1.0 else nearest_indices(n_in, n_out, s)
        for n_in, n_out, s in zip(in_shape, out_shape, scales, strict=True)
    ]


def linear_tables(
    in_shape: tuple[int, ...], out_shape: tuple[int, ...], scales: tuple[np.float32, ...]
) -> list[LinearAxis]:
    """Taps of every interpolated axis, outermost first (contract §2 axis table)."""
    return [
        LinearAxis(axis, *linear_taps(in_shape[axis], out_shape[axis], scales[axis]))
        for axis in interpolated_axes(scales)
    ]
