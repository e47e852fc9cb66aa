"""Kernel dispatch: fill an output (or one window of it) for a checked call.

``run`` serves :func:`onnx_upsample.upsample`; ``input_window`` and ``run_window`` serve the
chunked path, which computes one output window at a time from the input window it needs.
Both produce exactly the values of the whole-array call: tables are built from global
output indices.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import ElementType
from .._validate import Mode, Plan
from . import _compiled, _numpy
from ._tables import Window, linear_tables, nearest_tables

__all__ = ["Window", "input_window", "run", "run_window"]


def run(plan: Plan, out: np.ndarray) -> None:
    """Fill ``out`` (already checked: shape, dtype, C order) with Upsample(plan.x)."""
    run_window(
        plan.x, plan.x.shape, plan.out_shape, plan.scales, plan.mode, plan.etype,
        Window.whole(plan.out_shape), out,
    )


def input_window(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    mode: Mode,
    window: Window,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(start, stop)`` of the input slice that output ``window`` reads (global indices).

    Assumes the call is not a global no-resize copy (the caller copies in that case).
    """
    build = nearest_tables if mode == "nearest" else linear_tables
    _, start, stop = build(in_shape, out_shape, scales, window)
    return start, stop


def run_window(
    x_window: np.ndarray,
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    mode: Mode,
    etype: ElementType,
    window: Window,
    out: np.ndarray,
) -> None:
    """Fill ``out`` (the output ``window``) from ``x_window``, the slice given by
    :func:`input_window` for that window. Arguments must already be checked.
    """
    with np.errstate(all="ignore"):
        if out.size == 0:
            return
        if mode == "nearest":
            tables, _, _ = nearest_tables(in_shape, out_shape, scales, window)
            if etype.name == "object":  # references: numpy gathers them, numba cannot
                _numpy.nearest(x_window, out, tables)
            else:
                _compiled.nearest(x_window, out, tables)
        else:
            axes, _, _ = linear_tables(in_shape, out_shape, scales, window)
            _compiled.linear(x_window, out, axes, etype)
