"""Per-axis index and weight tables of an output window, from :mod:`.._rules`.

The compiled kernels compute their indices themselves; these tables serve to find the input
window an output window reads (built for its first and last output index only, see
``input_window``). Tables are expressed relative to an input window: an index ``i`` in a
table means ``x_window[i]``, where the window starts at ``window_start`` in the whole input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._spec.rules import IndexArray, WeightArray, interpolated_axes, linear_taps, nearest_indices


@dataclass(frozen=True)
class LinearAxis:
    """Taps of one interpolated axis: output o blends x[lo[o]]*w_lo[o] and x[hi[o]]*w_hi[o]."""

    axis: int
    lo: IndexArray
    hi: IndexArray
    w_lo: WeightArray
    w_hi: WeightArray


@dataclass(frozen=True)
class Window:
    """The part of the output being computed, ``[out_start, out_stop)`` per axis."""

    out_start: tuple[int, ...]
    out_stop: tuple[int, ...]

    @classmethod
    def whole(cls, out_shape: tuple[int, ...]) -> Window:
        return cls((0,) * len(out_shape), tuple(out_shape))


def nearest_tables(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    window: Window,
) -> tuple[list[IndexArray | None], tuple[int, ...], tuple[int, ...]]:
    """Index tables for ``window`` and the input window they read, as (tables, start, stop).

    A table is None where the axis is copied unchanged (scale 1): output ``o`` reads input
    ``o``, so the input window equals the output window there.
    """
    tables: list[IndexArray | None] = []
    in_start, in_stop = [], []
    for axis, (n_in, n_out, scale) in enumerate(zip(in_shape, out_shape, scales, strict=True)):
        start, stop = window.out_start[axis], window.out_stop[axis]
        if scale == 1.0 or start >= stop:
            tables.append(None)
            in_start.append(start)
            in_stop.append(stop)
            continue
        idx = nearest_indices(n_in, n_out, scale, start, stop)
        first = int(idx[0])
        tables.append(idx - first)
        in_start.append(first)
        in_stop.append(int(idx[-1]) + 1)
    return tables, tuple(in_start), tuple(in_stop)


def linear_tables(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    window: Window,
) -> tuple[list[LinearAxis], tuple[int, ...], tuple[int, ...]]:
    """Taps of every interpolated axis (outermost first) for ``window``, and the input window.

    Non-interpolated axes have scale 1 and are copied unchanged.
    """
    axes = []
    in_start, in_stop = list(window.out_start), list(window.out_stop)
    for axis in interpolated_axes(scales):
        start, stop = window.out_start[axis], window.out_stop[axis]
        lo, hi, w_lo, w_hi = linear_taps(in_shape[axis], out_shape[axis], scales[axis], start, stop)
        first = int(lo[0]) if lo.size else 0
        axes.append(LinearAxis(axis, lo - first, hi - first, w_lo, w_hi))
        in_start[axis] = first
        in_stop[axis] = int(hi.max()) + 1 if hi.size else first
    return axes, tuple(in_start), tuple(in_stop)
