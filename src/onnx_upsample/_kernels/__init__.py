"""Kernel dispatch: fill an output (or one window of it) for a checked call.

``launcher`` serves :func:`onnx_upsample.upsample` (the whole output is one window);
``input_window`` and ``run_window`` serve the chunked path, which computes one output window
at a time from the input window it needs.
Both produce exactly the values of the whole-array call: the kernels compute every index
from whole-axis output indices. Prepared kernel calls are cached per (shapes, scales, mode,
type, window, threads), so a repeated call pays for its preparation once.
"""

from __future__ import annotations

import functools

import numpy as np

from .._dtypes import ElementType
from .._rules import interpolated_axes
from .._threads import threads_for_call
from .._validate import Mode
from . import _numpy
from ._compiled import Launcher, prepare_linear, prepare_nearest
from ._layout import Axis, Rule
from ._tables import Window, linear_tables, nearest_tables

__all__ = ["Launcher", "Window", "input_window", "launcher", "run_window"]


def input_window(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    mode: Mode,
    window: Window,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(start, stop)`` of the input slice that output ``window`` reads (global indices).

    Assumes the call is not a global no-resize copy (the caller copies in that case). The
    indices and taps grow with the output index, so only the window's first and last
    output index per axis are evaluated: the cost does not grow with the window.
    """
    build = nearest_tables if mode == "nearest" else linear_tables
    if any(b <= a for a, b in zip(window.out_start, window.out_stop, strict=True)):
        _, start, stop = build(in_shape, out_shape, scales, window)
        return start, stop
    first = Window(window.out_start, tuple(a + 1 for a in window.out_start))
    last = Window(tuple(b - 1 for b in window.out_stop), window.out_stop)
    _, start, _ = build(in_shape, out_shape, scales, first)
    _, _, stop = build(in_shape, out_shape, scales, last)
    return start, stop


def _axes(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    mode: Mode,
    window: Window,
    window_shape: tuple[int, ...],
) -> list[Axis]:
    """Each axis of a window as the kernels take it: copied, or resized by its rule."""
    in_start, _ = input_window(in_shape, out_shape, scales, mode, window)
    resized = set(interpolated_axes(scales) if mode == "linear"
                  else (a for a, s in enumerate(scales) if s != 1.0))
    kind = "blend" if mode == "linear" else "gather"
    axes = []
    for a, (n_in, scale) in enumerate(zip(in_shape, scales, strict=True)):
        n_out = window.out_stop[a] - window.out_start[a]
        if a in resized:
            rule = Rule(n_in, window.out_start[a], in_start[a], np.float32(scale))
            axes.append(Axis(window_shape[a], n_out, kind, rule))
        else:
            axes.append(Axis(window_shape[a], n_out, "copy"))
    return axes


@functools.lru_cache(maxsize=64)
def launcher(
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    mode: Mode,
    etype: ElementType,
    dtype: np.dtype,
    window: Window,
    window_shape: tuple[int, ...],
    threads: int,
) -> Launcher:
    """The prepared kernel call for a window (cached: it holds no table that grows with
    the output, only the window's description)."""
    dtype = dtype.newbyteorder("=")
    if mode == "nearest" and etype.name == "object":
        # references: numpy gathers them (the C kernels copy bytes)
        return lambda x, out, threads: _numpy.nearest(x, out, in_shape, out_shape, scales,
                                                       window)
    axes = _axes(in_shape, out_shape, scales, mode, window, window_shape)
    if mode == "nearest":
        return prepare_nearest(window_shape, axes, dtype, threads)
    return prepare_linear(window_shape, axes, dtype, etype, threads)


def run_window(
    x_window: np.ndarray,
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scales: tuple[np.float32, ...],
    mode: Mode,
    etype: ElementType,
    window: Window,
    out: np.ndarray,
    threads: int | None = None,
) -> None:
    """Fill ``out`` (the output ``window``) from ``x_window``, the slice given by
    :func:`input_window` for that window, on ``threads`` threads (default: the configured
    count). Arguments must already be checked.
    """
    if out.size == 0:
        return
    threads = threads_for_call() if threads is None else min(threads, threads_for_call())
    launch = launcher(in_shape, out_shape, scales, mode, etype, x_window.dtype, window,
                      x_window.shape, threads)
    launch(x_window, out, threads)
