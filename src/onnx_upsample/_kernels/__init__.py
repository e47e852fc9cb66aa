"""The one entry into the kernels: fill an output, or one window of it, for a checked call.

:func:`execute` serves both :func:`onnx_upsample.upsample` (the whole output is one window)
and the chunked path, which computes one output window at a time from the input slice
:func:`input_window` names. Every window gets exactly the values of the whole-array call:
the kernels compute every index from whole-axis output indices. :func:`launcher` is the one
cache: a call's prepared kernel per (call, window, input slice shape, threads), so a
repeated call pays for its preparation once.
"""

from __future__ import annotations

import functools

import numpy as np

from .._spec.call import Call
from .._spec.modes import Mode
from .._spec.rules import interpolated_axes
from . import _numpy
from ._compiled import Launcher, prepare_linear, prepare_nearest
from ._layout import Axis, Rule
from ._tables import Window, linear_tables, nearest_tables

__all__ = ["Launcher", "Window", "execute", "input_window", "launcher"]


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
def launcher(call: Call, window: Window, window_shape: tuple[int, ...], threads: int) -> Launcher:
    """The prepared kernel for output ``window`` of ``call``, reading an input slice of
    ``window_shape`` (cached: it holds no table that grows with the output, only the
    window's description)."""
    if call.mode == "nearest" and call.etype.name == "object":
        # references: numpy gathers them (the C kernels copy bytes)
        return Launcher(lambda x, out, threads: _numpy.nearest(
            x, out, call.in_shape, call.out_shape, call.scales, window), worth=1)
    axes = _axes(call.in_shape, call.out_shape, call.scales, call.mode, window, window_shape)
    if call.mode == "nearest":
        return prepare_nearest(window_shape, axes, call.out_dtype, threads)
    return prepare_linear(window_shape, axes, call.out_dtype, call.etype, threads)


def execute(
    call: Call, x: np.ndarray, out: np.ndarray, threads: int, window: Window | None = None
) -> None:
    """Fill ``out`` with output ``window`` of ``call`` (default: the whole output) from
    ``x``, the input slice :func:`input_window` names for that window (the whole input for
    the whole output), on ``threads`` threads. ``call`` must not be a no-resize copy."""
    if out.size == 0:
        return
    if window is None:
        window = Window.whole(call.out_shape)
    launcher(call, window, x.shape, threads)(x, out, threads)
